#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// What a libfabric program posted on each context, and which CQs it bound for transmits and
/// for receives, so a completion of a CQ whose entries carry no flags (FI_CQ_FORMAT_CONTEXT, as
/// fi_pingpong's) still matches a fault's `side` and `opcode`: the post or the binding says
/// which, and a completion's site is its post's. Kept only while a completion fault filters by
/// side, opcode or site, or the sweep maps sites; each post is taken at its
/// completion (posts of one context and side complete in order; programs that post with a
/// NULL context, as fi_pingpong does, are told apart by the CQ's binding).
class PostedOperations {
 public:
  struct Operation {
    Side side = Side::kAny;
    std::optional<transports::Opcode> opcode;
    std::string site;  ///< the post's call site (site_of), where sites are mapped or filtered
  };

  static PostedOperations& get();
  /// Whether posts are recorded at all (the plan filters completions by side, opcode or site,
  /// or maps sites).
  static bool wanted();

  void record(uint64_t queue, uintptr_t context, Operation operation);
  /// The operation posted on `context` of `queue`, forgotten: of `side` when it is known, else
  /// the only side with one; nullopt when none (or both) was recorded.
  std::optional<Operation> take(uint64_t queue, uintptr_t context, Side side);
  /// An endpoint bound `cq` with `flags` (FI_TRANSMIT, FI_RECV).
  void bound(const void* cq, uint64_t flags);
  /// What a CQ holds: kSend when bound for transmits only, kRecv for receives only, else kAny.
  Side side_of_cq(const void* cq);

 private:
  std::mutex mutex_;
  std::map<std::tuple<uint64_t, uintptr_t, Side>, std::deque<Operation>> posted_;
  std::map<const void*, uint64_t> bindings_;
};

}  // namespace faultline::transports::interpose
