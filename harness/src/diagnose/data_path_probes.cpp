// L2: data moves, every byte checked, over the sizes where paths change: around the inline
// limit and the MTU, inline on and off, for send/recv, write, write with immediate and read.
#include <set>

#include "faultline/transports/data_pattern.hpp"
#include "layers.hpp"

namespace faultline::harness::diagnose {

using transports::Opcode;

namespace {

constexpr auto kTimeout = std::chrono::seconds(5);
constexpr size_t kLargest = 1 << 20;
constexpr unsigned kSeed = 0xd1a9;

std::vector<size_t> sizes_to_try(const transports::DeviceLimits& limits, uint32_t inline_limit) {
  const size_t mtu = limits.active_mtu.value_or(4096);
  std::set<size_t> sizes = {1, mtu - 1, mtu, mtu + 1, 4 * mtu + 3};
  if (inline_limit > 0)
    sizes.insert({inline_limit - 1 + (inline_limit == 1), inline_limit, inline_limit + 1});
  std::vector<size_t> chosen;
  for (size_t size : sizes)
    if (size > 0 && size <= std::min<uint64_t>(limits.max_msg_size, kLargest))
      chosen.push_back(size);
  return chosen;
}

// One RDMA operation from A on B's buffer, checked: a write (with immediate or not) lands in
// B's memory, a read brings B's bytes to A.
Status rdma_checked(ProbePair& pair, Opcode op, size_t length, bool inline_data) {
  auto local = pair.buffer(ProbePair::kA, length);
  if (!local.ok()) return local.error();
  auto remote = pair.buffer(ProbePair::kB, length);
  if (!remote.ok()) return remote.error();
  const bool read = op == Opcode::kRdmaRead;
  transports::RegisteredBuffer& source = read ? *remote.value() : *local.value();
  transports::RegisteredBuffer& target = read ? *local.value() : *remote.value();
  transports::fill_pattern(source.data(), length, kSeed);
  const bool with_imm = op == Opcode::kRdmaWriteWithImm;
  const bool imm_needs_recv =
      pair.device(ProbePair::kB).info().capabilities.write_imm_consumes_recv;
  if (with_imm && imm_needs_recv) {
    if (Status posted = pair.endpoint(ProbePair::kB).post_recv({7, {}}); !posted.ok())
      return posted;
  }
  transports::Segment segment = local.value()->segment(0, length);
  transports::WorkRequest request{.wr_id = 7,
                                  .op = op,
                                  .segments = {&segment, 1},
                                  .inline_data = inline_data,
                                  .remote = remote.value()->region->remote(0, length)};
  if (with_imm) request.imm = 0x1234;
  if (Status posted = pair.endpoint(ProbePair::kA).post_send(request); !posted.ok()) return posted;
  auto done =
      next_completion(pair, ProbePair::kA, kTimeout, std::string(transports::to_string(op)));
  if (!done.ok()) return done.error();
  if (!done->ok()) {
    return Error{ErrorCode::kNativeError, "completion " + done->describe()}.with_hint(
        "the device rejected the RDMA operation; the status and native code say why");
  }
  if (with_imm) {
    auto arrived =
        next_completion(pair, ProbePair::kB, kTimeout, "the immediate data at the target");
    if (!arrived.ok()) return arrived.error();
    if (!arrived->ok() || arrived->imm != 0x1234u) {
      return Error{ErrorCode::kProtocolViolation,
                   "target completion " + arrived->describe() + ", expected immediate 0x1234"};
    }
  }
  const size_t wrong = transports::first_pattern_mismatch(target.data(), length, kSeed);
  if (wrong != length) {
    return Error{ErrorCode::kProtocolViolation,
                 std::string(transports::to_string(op)) + " of " + std::to_string(length) +
                     " B completed but the data differs at byte " + std::to_string(wrong)}
        .with_hint(
            "the completion came before the data was placed, or the wrong key or "
            "address was used");
  }
  return {};
}

// One data path probe: `op` of `size` bytes, inline or not, moved and checked.
ProbeResult probe_one(ProbePair& pair, Opcode op, size_t size, bool inline_data,
                      const transports::DeviceInfo& info,
                      const transports::EndpointConfig& config) {
  ProbeResult probe{std::string(transports::to_string(op)) + " " + std::to_string(size) +
                        " B inline " + (inline_data ? "on" : "off"),
                    ProbeVerdict::kPass,
                    "completes with SUCCESS and every byte arrives",
                    "",
                    "",
                    ""};
  Status moved = op == Opcode::kSend ? send_checked(pair, size, inline_data)
                                     : rdma_checked(pair, op, size, inline_data);
  if (moved.ok()) {
    probe.observed = "ok";
    return probe;
  }
  probe = failed_probe(probe.name, probe.expected, moved.error());
  if (!inline_data && moved.error().message.find("inline") != std::string::npos) {
    probe.hint =
        "this post asked for no inline, yet it went inline above the endpoint's limit: "
        "something between the application and the device forces inline "
        "(IBV_SEND_INLINE, FI_INJECT); cap payloads posted inline at max_inline, or "
        "turn inline off";
  }
  probe.evidence =
      "endpoint max_inline " + std::to_string(config.max_inline) + ", active MTU " +
      (info.limits.active_mtu ? std::to_string(*info.limits.active_mtu) : std::string("n/a"));
  return probe;
}

}  // namespace

std::vector<ProbeResult> probe_data_path(const ProbeContext& context) {
  std::vector<ProbeResult> probes;
  auto opened = context.device_info();
  if (!opened.ok()) {
    probes.push_back(failed_probe("device opens", "the device opens", opened.error()));
    return probes;
  }
  const transports::DeviceInfo& info = opened.value();
  const transports::EndpointConfig config = workload_config(info.limits);
  auto pair = open_probe_pair(context, config);
  if (!pair.ok()) {
    probes.push_back(failed_probe("endpoint pair", "two connected endpoints", pair.error()));
    return probes;
  }
  struct Path {
    Opcode op;
    bool supported;
  };
  const auto& capabilities = info.capabilities;
  const std::vector<Path> paths = {{Opcode::kSend, true},
                                   {Opcode::kRdmaWrite, capabilities.rdma_write},
                                   {Opcode::kRdmaWriteWithImm, capabilities.write_with_imm},
                                   {Opcode::kRdmaRead, capabilities.rdma_read}};
  for (const auto& path : paths) {
    if (!path.supported) {
      probes.push_back({std::string(transports::to_string(path.op)), ProbeVerdict::kSkip,
                        "completes with SUCCESS and every byte arrives",
                        info.transport + "/" + info.provider + " lacks it", "", ""});
      continue;
    }
    for (size_t size : sizes_to_try(info.limits, config.max_inline)) {
      const bool can_inline = path.op != Opcode::kRdmaRead && size <= config.max_inline;
      for (bool inline_data : {false, true}) {
        if (inline_data && !can_inline) continue;
        probes.push_back(probe_one(*pair.value(), path.op, size, inline_data, info, config));
        // The pair may be in error: the first failure is the finding.
        if (probes.back().verdict != ProbeVerdict::kPass) return probes;
      }
    }
  }
  return probes;
}

}  // namespace faultline::harness::diagnose
