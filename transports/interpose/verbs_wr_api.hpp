#pragma once

#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

/// Puts the plan's post faults into an extended QP's `ibv_wr_*` entries (a QP created with
/// send ops flags): the opcode of each request is kept (the faults' opcode filters); inline
/// (`ibv_wr_set_inline_data`, `ibv_wr_set_sge`), segment_count and data faults
/// (`ibv_wr_set_sge`, `ibv_wr_set_sge_list`) as for `ibv_post_send`; a limit or `fail_post`
/// refuses the batch at `ibv_wr_complete`.
void wrap_qp_ex(ibv_qp* qp);

}  // namespace faultline::transports::interpose
