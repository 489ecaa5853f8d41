#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// The plan's data fault for one send or RDMA write of `qp` (`event`, `wr_id`) about to post
/// `sges` (`call`), counted and logged: the SGEs to post instead (into a changed copy kept
/// until release_sent_copies; none for `suppress`), or nullopt when none fired.
std::optional<std::vector<ibv_sge>> changed_sent_data(ibv_qp* qp, const Event& event,
                                                      uint64_t wr_id, std::span<const ibv_sge> sges,
                                                      const char* call);

/// A chain of the program's sends and RDMA writes with the plan's data faults applied where
/// the bytes can still be changed: at the sender (a receive of a write with immediate holds
/// only the immediate; the written bytes are wherever the writer put them). A faulted work
/// request is posted from a copy of its bytes registered in the QP's protection domain, its
/// SGEs pointing into the copy as they pointed into the program's memory: `scribble` changes
/// every byte of the copy, `suppress` posts no bytes (the target keeps what it held; the
/// receiver's completion says 0 bytes). Each change is logged with the bytes it changed. The
/// program's SGE lists come back when this ends; the copies stay until release_sent_copies.
class SentDataChange {
 public:
  SentDataChange(ibv_qp* qp, ibv_send_wr* chain);
  ~SentDataChange();
  SentDataChange(const SentDataChange&) = delete;
  SentDataChange& operator=(const SentDataChange&) = delete;

 private:
  std::vector<std::tuple<ibv_send_wr*, ibv_sge*, int>> original_;
  std::deque<std::vector<ibv_sge>> lists_;  // the changed requests' SGEs, into their copies
};

/// A successful send-queue completion of QP `qp_num` polled: the copies of its data-faulted
/// work requests up to the one `wr_id` names are released (a send queue completes in posting
/// order). A copy of a request posted unsignaled is released with a later one, or with its QP.
void release_sent_copies(const ibv_context* context, uint32_t qp_num, uint64_t wr_id);

/// The bytes a data-faulted work request is posted from, with their registration (both go
/// when this does).
struct SentCopy {
  struct Deregistration {
    void operator()(ibv_mr* mr) const;
  };
  uint64_t wr_id = 0;
  std::unique_ptr<std::byte[]> bytes;
  std::unique_ptr<ibv_mr, Deregistration> mr;
};

/// The copies of a QP about to be destroyed, taken out: the caller drops them after the QP is
/// gone (until then the device may still read them).
std::deque<SentCopy> take_sent_copies(const ibv_qp* qp);

}  // namespace faultline::transports::interpose
