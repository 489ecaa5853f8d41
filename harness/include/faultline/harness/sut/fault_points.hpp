#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness::sut {

/// A frame of an interposer's call stack, read back from its text ("OBJECT(FUNCTION)+0xOFFSET",
/// "OBJECT(FUNCTION) inlined", "OBJECT+0xOFFSET": transports/interpose/call_stack.hpp).
struct StackFrame {
  std::string object;
  std::string function;  ///< empty when nothing named it
  std::string offset;    ///< "0x12c3", into the object; empty for an inlined call
  bool inlined = false;
};

/// `text` as a frame; one in no form above is its object alone.
StackFrame parse_frame(std::string_view text);

/// One place a program posts or polls, as a run under `observe` with `sites: true` mapped it
/// (the interposers' `site` events): its call stack's id, the call, what it posts or completes
/// there and how often.
struct CallSite {
  std::string site;       ///< 16 hex digits: the call stack's id, the same from run to run
  std::string call;       ///< ibv_post_send, ibv_post_recv, ibv_poll_cq, fi_send, fi_cq_read, ...
  std::string side;       ///< send, recv or any
  std::string opcode;     ///< SEND, RDMA_WRITE_WITH_IMM, RECV, ...; empty when the event has none
  std::string layer;      ///< verbs, or the libfabric provider
  bool outermost = true;  ///< the program's own call, not a utility provider's beneath it
  std::optional<int> rank;
  uint64_t count = 0;         ///< how many posts (work requests) or completions
  uint64_t inline_posts = 0;  ///< of them, posted inline (or injected)
  int max_segments = 0;       ///< the most SGEs or iovs of one post
  std::vector<std::string> stack;

  /// A completion site (a poll or CQ read), not a post.
  bool completes() const;
  /// Where in the program, short: the first function of the program's own (past the API's
  /// inline wrappers) without parameters, with its offset where it was called
  /// ("Pair::send+0x1f4"), else the object's name and offset.
  std::string label() const;
  /// What it does there: "ibv_post_send RDMA_WRITE_WITH_IMM", "fi_cq_read recv".
  std::string what() const;
};

/// The sites of a run, from its interposer events; a site reported by several processes of
/// one rank is counted once per process, in the order first seen.
std::vector<CallSite> call_sites(const std::vector<nlohmann::json>& events);

/// The families a sweep tries, each a fault of the language: `status` (REM_ACCESS_ERR),
/// `qp_error` (RETRY_EXC_ERR with the QP moved to the error state, verbs), `drop` (a lost
/// completion), `corrupt_data` (scribbled bytes: a receive's or read's, or a verbs send's or
/// write's), `fail_post` (ENOMEM), `segment_fewer` (one SGE or iov left out), `inline_off`
/// (sends posted inline, or injected, posted without), and `limits` (a target NIC's caps).
const std::vector<std::string>& sweep_families();

/// The verdicts a sweep can be told to allow (--allow, a sweep block's `allow`): hang,
/// undetected, silent-corruption, crashed, fail. "" when `verdicts` are all of them, else
/// which one is not.
std::string check_allowed_verdicts(const std::vector<std::string>& verdicts);

/// The families that apply at `site`, in sweep_families' order.
std::vector<std::string> families_at(const CallSite& site);

/// One fault point: a family at one occurrence of a site, or a target's limit.
struct FaultPoint {
  std::string id;  ///< stable from run to run; `faultline sut exec --point ID`
  std::string family;
  std::string occurrence;        ///< first, middle, last, nK (every occurrence), every (inline)
  uint64_t nth = 0;              ///< the site's matching post or completion it fires on (0: every)
  std::optional<CallSite> site;  ///< none for a limits point
  std::string target;  ///< limits: "PROFILE" (every cap) or "PROFILE.LIMIT" (one it exceeds)
  nlohmann::json fault = nlohmann::json::object();  ///< the plan's one fault
  /// Its row of a sweep's matrix: rank, site and call ("limits PROFILE[.LIMIT]" for limits).
  std::string row() const;
  /// The junit name: its row, family and occurrence, without the run's numbers.
  std::string name() const;
};

/// The point of `family` at the `nth` matching event of `site` (`occurrence` names it).
FaultPoint point_at(const CallSite& site, const std::string& family, uint64_t nth,
                    const std::string& occurrence);

/// A limits point: `fault` (a `limits` fault) as `target` ("hns_roce-hip08", every cap of the
/// profile; "hns_roce-hip08.max_qp_wr", one).
FaultPoint limits_point(const std::string& target, nlohmann::json fault);

/// The site, family and occurrence an id names (limits ids name the target only: their fault
/// comes from its profile, limits_point). Errors say what an id looks like.
Result<FaultPoint> point_from_id(const std::string& id);

}  // namespace faultline::harness::sut
