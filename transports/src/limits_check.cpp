#include "faultline/transports/limits_check.hpp"

namespace faultline::transports {

std::string LimitViolation::describe() const {
  std::string text = field + " " + std::to_string(requested);
  if (!derivation.empty()) text += " (= " + derivation + ")";
  return text + " exceeds device " + limit_name + " " + std::to_string(limit);
}

std::vector<LimitViolation> find_limit_violations(const EndpointConfig& config,
                                                  const DeviceLimits& limits) {
  std::vector<LimitViolation> violations;
  auto check = [&](const char* field, uint64_t requested, const char* limit_name, uint64_t limit) {
    if (requested <= limit) return;
    auto derivation = config.derivations.find(field);
    violations.push_back({field, requested, limit_name, limit,
                          derivation == config.derivations.end() ? "" : derivation->second});
  };
  check("send_depth", config.send_depth, "max_qp_wr", limits.max_qp_wr);
  check("recv_depth", config.recv_depth, "max_recv_wr", limits.max_recv_wr);
  if (limits.max_cqe) check("cq_depth", config.effective_cq_depth(), "max_cqe", *limits.max_cqe);
  check("max_send_sge", config.max_send_sge, "max_send_sge", limits.max_send_sge);
  check("max_recv_sge", config.max_recv_sge, "max_recv_sge", limits.max_recv_sge);
  check("max_inline", config.max_inline, "max_inline_data", limits.max_inline_data);
  return violations;
}

Status check_endpoint_config(const EndpointConfig& config, const DeviceLimits& limits) {
  auto violations = find_limit_violations(config, limits);
  if (violations.empty()) return {};
  Error error;
  error.code = ErrorCode::kLimitExceeded;
  for (const auto& violation : violations) {
    if (!error.message.empty()) error.message += "; ";
    error.message += violation.describe();
  }
  error.hint =
      "lower the requested value to the device limit, or check the workload's sizing "
      "formula; `faultline devices` shows every limit";
  return error;
}

namespace {

uint64_t total_bytes(std::span<const Segment> segments) {
  uint64_t bytes = 0;
  for (const Segment& segment : segments) bytes += segment.length;
  return bytes;
}

Status check_segments(std::string_view op, size_t count, const char* limit_name, uint32_t limit,
                      size_t max_segments) {
  if (count <= limit && count <= max_segments) return {};
  const bool device_limit = limit <= max_segments;
  return Error{ErrorCode::kLimitExceeded,
               std::string(op) + " with " + std::to_string(count) + " segments exceeds " +
                   (device_limit ? std::string(limit_name) + " " + std::to_string(limit)
                                 : "the " + std::to_string(max_segments) +
                                       " segments one work request of this endpoint holds")};
}

Status check_size(std::string_view op, uint64_t bytes, uint64_t max_msg_size) {
  if (max_msg_size == 0 || bytes <= max_msg_size) return {};
  return Error{ErrorCode::kLimitExceeded, std::string(op) + " of " + std::to_string(bytes) +
                                              " bytes exceeds device max_msg_size " +
                                              std::to_string(max_msg_size)};
}

bool carries_imm(Opcode op) {
  return op == Opcode::kSendWithImm || op == Opcode::kRdmaWriteWithImm;
}

}  // namespace

Status check_send(const WorkRequest& request, const PostLimits& limits) {
  const std::string_view op = to_string(request.op);
  if (!is_send_side(request.op)) {
    return Error{ErrorCode::kInvalidArgument, "post_send with opcode " + std::string(op)};
  }
  if (carries_imm(request.op) && !request.imm) {
    return Error{ErrorCode::kInvalidArgument, std::string(op) + " without immediate data"};
  }
  if (carries_imm(request.op) && !limits.immediate_data) {
    return Error{ErrorCode::kUnsupported, "the device carries no immediate data"};
  }
  // An RDMA read's segments count against both the queue's max_send_sge and the device's
  // max_sge_rd; the lower one is named.
  const bool read = request.op == Opcode::kRdmaRead;
  const bool read_limited = read && limits.max_sge_rd < limits.max_send_sge;
  FAULTLINE_RETURN_IF_ERROR(
      check_segments(op, request.segments.size(), read_limited ? "max_sge_rd" : "max_send_sge",
                     read_limited ? limits.max_sge_rd : limits.max_send_sge, limits.max_segments));
  const uint64_t bytes = total_bytes(request.segments);
  if (request.inline_data) {
    if (read) return Error{ErrorCode::kInvalidArgument, "RDMA_READ cannot be inline"};
    if (bytes > limits.max_inline) {
      return Error{ErrorCode::kLimitExceeded,
                   "inline payload of " + std::to_string(bytes) +
                       " bytes exceeds the granted max_inline " +
                       std::to_string(limits.max_inline) + " (the endpoint asked for " +
                       std::to_string(limits.asked_inline) + ", the driver reported " +
                       std::to_string(limits.driver_inline) + ", device max_inline_data " +
                       std::to_string(limits.device_inline) + ")"};
    }
  }
  return check_size(op, bytes, limits.max_msg_size);
}

Status check_recv(const RecvRequest& request, const PostLimits& limits) {
  FAULTLINE_RETURN_IF_ERROR(check_segments("RECV", request.segments.size(), "max_recv_sge",
                                           limits.max_recv_sge, limits.max_segments));
  return check_size("RECV", total_bytes(request.segments), limits.max_msg_size);
}

}  // namespace faultline::transports
