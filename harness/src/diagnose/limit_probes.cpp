// L1: what the device really takes, found by bisection of real creates and posts, against
// what it advertises; and whether a workload's configuration fits.
#include <functional>

#include "faultline/transports/fault/fault_spec.hpp"
#include "faultline/transports/limits_check.hpp"
#include "layers.hpp"

namespace faultline::harness::diagnose {

using transports::EndpointConfig;

namespace {

// The device's limits with a workload's device_limits in their place (names checked when the
// workload file was read).
transports::DeviceLimits profile_limits(transports::DeviceLimits limits,
                                        const std::map<std::string, uint64_t>& device_limits) {
  nlohmann::json fault(device_limits);
  fault["kind"] = "limits";
  auto parsed =
      transports::fault::parse_fault(fault, transports::fault::kDecorator, "device_limits");
  return parsed.ok() ? parsed->caps.applied_to(limits) : limits;
}

// Registering more than this, or creating deeper queues, is not tried: a probe must not take
// the machine's memory (rxe advertises queues of 2^20 entries).
constexpr uint64_t kLargestRegistration = 64ULL << 20;
constexpr uint64_t kLargestDepth = 65536;

struct LimitProbe {
  std::string name;        ///< "inline size"
  std::string limit_name;  ///< "max_inline_data"
  uint64_t advertised = 0;
  std::function<Status(uint64_t)> attempt;  ///< a real create (and post) with this value
  std::string hint;                         ///< what a smaller real limit means
  uint64_t largest_tried = UINT64_MAX;
};

// "advertises N, works up to N" or "advertises N, fails above M" (bisection between a value
// that works and one that fails; the probes are monotone).
ProbeResult bisect(const LimitProbe& probe) {
  ProbeResult result{
      probe.name, ProbeVerdict::kPass, "works up to the advertised " + probe.limit_name, "", "",
      ""};
  if (probe.advertised == 0) {
    result.verdict = ProbeVerdict::kSkip;
    result.observed = "advertises " + probe.limit_name + " 0: nothing to try";
    return result;
  }
  const uint64_t tried = std::min(probe.advertised, probe.largest_tried);
  Status at_limit = probe.attempt(tried);
  if (at_limit.ok()) {
    result.observed = "advertised " + probe.limit_name + " " + std::to_string(probe.advertised) +
                      ", works up to " + std::to_string(tried) +
                      (tried < probe.advertised ? " (larger not tried)" : "");
    return result;
  }
  result.verdict = ProbeVerdict::kFail;
  Status at_one = probe.attempt(1);
  if (!at_one.ok()) {
    result.observed = "advertises " + probe.limit_name + " " + std::to_string(probe.advertised) +
                      ", fails even at 1";
    result.evidence = at_one.error().describe();
    result.hint = at_one.error().hint.empty() ? probe.hint : at_one.error().hint;
    return result;
  }
  uint64_t works = 1;
  uint64_t fails = tried;
  std::string failure = at_limit.error().describe();
  while (fails - works > 1) {
    const uint64_t middle = works + (fails - works) / 2;
    Status at_middle = probe.attempt(middle);
    if (at_middle.ok()) {
      works = middle;
    } else {
      fails = middle;
      failure = at_middle.error().describe();
    }
  }
  result.observed = "advertises " + probe.limit_name + " " + std::to_string(probe.advertised) +
                    ", fails above " + std::to_string(works);
  result.evidence = "at " + std::to_string(fails) + ": " + failure;
  result.hint = probe.hint;
  return result;
}

// A pair created with `config` moves one checked message of `length` (in `segments` pieces).
Status pair_works(const ProbeContext& context, EndpointConfig config, size_t length,
                  bool inline_data, size_t segments = 1) {
  config.raw = true;  // the device decides, not faultline's check
  auto pair = open_probe_pair(context, config);
  if (!pair.ok()) return pair.error();
  std::vector<size_t> pieces(segments, length / segments);
  pieces.back() += length % segments;
  if (segments == 1) return send_checked(*pair.value(), length, inline_data);
  return send_checked(*pair.value(), length, inline_data, pieces);
}

std::vector<LimitProbe> limit_probes(const ProbeContext& context,
                                     const transports::DeviceLimits& limits) {
  std::vector<LimitProbe> probes;
  // Every probe but the inline one moves small messages with the workload's configuration,
  // so it measures its own limit, not the inline path.
  const EndpointConfig base = workload_config(limits);
  const size_t small = std::max<size_t>(1, std::min<size_t>(base.max_inline, 64));
  // A deep queue still gets a completion queue the device can make.
  const auto within_cq = [&limits](EndpointConfig config) {
    if (limits.max_cqe)
      config.cq_depth = std::min<uint32_t>(config.send_depth + config.recv_depth, *limits.max_cqe);
    return config;
  };
  probes.push_back({"inline size", "max_inline_data", limits.max_inline_data,
                    [&context](uint64_t value) {
                      EndpointConfig config;
                      config.max_inline = static_cast<uint32_t>(value);
                      return pair_works(context, config, value, true);
                    },
                    "posting inline payloads above the real limit fails or corrupts data: "
                    "cap max_inline at the value that works"});
  probes.push_back({"send depth", "max_qp_wr", limits.max_qp_wr,
                    [&context, base, small, within_cq](uint64_t value) {
                      EndpointConfig config = base;
                      config.send_depth = static_cast<uint32_t>(value);
                      return pair_works(context, within_cq(config), small, false);
                    },
                    "queue pairs deeper than the real limit cannot be created: size the send "
                    "queue from what works, not from the advertised max_qp_wr",
                    kLargestDepth});
  probes.push_back({"receive depth", "max_recv_wr", limits.max_recv_wr,
                    [&context, base, small, within_cq](uint64_t value) {
                      EndpointConfig config = base;
                      config.recv_depth = static_cast<uint32_t>(value);
                      return pair_works(context, within_cq(config), small, false);
                    },
                    "size the receive queue from what works", kLargestDepth});
  probes.push_back({"send segments", "max_send_sge", limits.max_send_sge,
                    [&context, base](uint64_t value) {
                      EndpointConfig config = base;
                      config.max_send_sge = static_cast<uint32_t>(value);
                      return pair_works(context, config, value, false, value);  // 1 B each
                    },
                    "a send with more segments than really work fails: gather fewer pieces"});
  if (limits.max_cqe) {
    probes.push_back({"completion queue size", "max_cqe", *limits.max_cqe,
                      [&context, base, small](uint64_t value) {
                        EndpointConfig config = base;
                        config.send_depth = 16;
                        config.recv_depth = 16;
                        config.cq_depth = static_cast<uint32_t>(value);
                        return pair_works(context, config, small, false);
                      },
                      "size completion queues from what works", kLargestDepth});
  }
  return probes;
}

ProbeResult memory_registration(const ProbeContext& context,
                                const transports::DeviceLimits& limits) {
  const uint64_t advertised = limits.max_mr_size.value_or(kLargestRegistration);
  const uint64_t tried = std::min(advertised, kLargestRegistration);
  ProbeResult probe{"memory registration size",
                    ProbeVerdict::kPass,
                    "a region of " + std::to_string(tried) + " B registers",
                    "",
                    "",
                    ""};
  auto device = context.open();
  if (!device.ok()) return failed_probe(probe.name, probe.expected, device.error());
  std::vector<std::byte> memory(tried);
  auto region =
      device.value()->register_memory(memory.data(), memory.size(), transports::kAccessAll);
  if (!region.ok()) {
    ProbeResult failed = failed_probe(probe.name, probe.expected, region.error());
    if (failed.hint.empty())
      failed.hint = "registration pins memory: check ulimit -l and the device's max_mr_size";
    return failed;
  }
  probe.observed =
      "registered " + std::to_string(tried >> 20) + " MiB" +
      (limits.max_mr_size ? " (advertised max_mr_size " + std::to_string(*limits.max_mr_size) +
                                " B" + (tried < advertised ? "; larger not tried)" : ")")
                          : " (no max_mr_size advertised)");
  return probe;
}

ProbeResult fits(const std::string& name, const EndpointConfig& config,
                 const transports::DeviceLimits& limits, const std::string& limits_from) {
  ProbeResult probe{name,
                    ProbeVerdict::kPass,
                    "every queue depth, SGE count and inline size "
                    "within the device limits",
                    "",
                    "",
                    ""};
  const auto violations = transports::find_limit_violations(config, limits);
  if (violations.empty()) {
    probe.observed = "send_depth " + std::to_string(config.send_depth) + ", recv_depth " +
                     std::to_string(config.recv_depth) + ", max_send_sge " +
                     std::to_string(config.max_send_sge) + ", max_inline " +
                     std::to_string(config.max_inline) + " fit " + limits_from;
    return probe;
  }
  probe.verdict = ProbeVerdict::kFail;
  for (const auto& violation : violations)
    probe.observed += (probe.observed.empty() ? "" : "; ") + violation.describe();
  probe.evidence = "limits from " + limits_from;
  probe.hint =
      "creating these endpoints fails on this device (ibv_create_qp EINVAL, "
      "fi_endpoint -FI_EINVAL): derive the depths from the device limits, or lower "
      "the inputs of the formula";
  return probe;
}

}  // namespace

EndpointConfig workload_config(const transports::DeviceLimits& limits) {
  EndpointConfig config;  // send and receive depth 128
  config.max_inline = std::min<uint32_t>(limits.max_inline_data, 64);
  return config;
}

std::vector<ProbeResult> probe_limits(const ProbeContext& context,
                                      const std::optional<Workload>& workload) {
  std::vector<ProbeResult> probes;
  auto opened = context.device_info();
  if (!opened.ok()) {
    probes.push_back(failed_probe("device opens", "the device opens", opened.error()));
    return probes;
  }
  const transports::DeviceInfo& info = opened.value();
  for (const auto& probe : limit_probes(context, info.limits)) probes.push_back(bisect(probe));
  probes.push_back(memory_registration(context, info.limits));
  const std::string device_limits =
      info.name + "'s limits" + (context.inject_faults.empty() ? "" : " (with --inject)");
  probes.push_back(
      fits("diagnosis workload fits", workload_config(info.limits), info.limits, device_limits));
  if (workload) {
    const bool profile = !workload->device_limits.empty();
    for (const auto& endpoint : workload->endpoints) {
      probes.push_back(
          fits("workload " + workload->name + (endpoint.name.empty() ? "" : " " + endpoint.name) +
                   " fits",
               endpoint.config,
               profile ? profile_limits(info.limits, workload->device_limits) : info.limits,
               profile ? "the device_limits of " + workload->source : device_limits));
    }
  }
  return probes;
}

}  // namespace faultline::harness::diagnose
