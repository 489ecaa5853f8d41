// L0: what the machine offers before any traffic.
#include <sys/resource.h>
#include <unistd.h>

#include "faultline/harness/devices/device_listing.hpp"
#include "kernel_rdma.hpp"
#include "layers.hpp"

namespace faultline::harness::diagnose {

namespace {

constexpr rlim_t kEnoughLockedMemory = 64ULL << 20;

std::string kib(rlim_t bytes) {
  return bytes == RLIM_INFINITY ? "unlimited" : std::to_string(bytes / 1024) + " KiB";
}

ProbeResult locked_memory(const std::string& transport) {
  ProbeResult probe{
      "locked memory (ulimit -l)", ProbeVerdict::kPass, "enough to register buffers", "", "", ""};
  rlimit limit{};
  getrlimit(RLIMIT_MEMLOCK, &limit);
  probe.observed = "ulimit -l " + kib(limit.rlim_cur);
  if (geteuid() == 0) {
    probe.observed += " (root: not enforced)";
  } else if (transport == "verbs" && limit.rlim_cur != RLIM_INFINITY &&
             limit.rlim_cur < kEnoughLockedMemory) {
    probe.verdict = ProbeVerdict::kFail;
    probe.expected = "at least " + kib(kEnoughLockedMemory) + " for verbs memory registration";
    probe.hint =
        "ibv_reg_mr pins memory against this limit and fails with ENOMEM past it: raise it "
        "(ulimit -l unlimited, /etc/security/limits.conf, or LimitMEMLOCK= in a systemd unit)";
  }
  return probe;
}

ProbeResult port_state(const transports::DeviceInfo& info) {
  ProbeResult port{"port state", ProbeVerdict::kPass, "active", "", "", ""};
  if (info.state.empty()) {
    port.verdict = ProbeVerdict::kSkip;
    port.observed = info.transport + " reports no port state";
  } else {
    port.observed = "port " + std::to_string(info.port) + " " + info.state +
                    (info.link_layer.empty() ? "" : ", link layer " + info.link_layer);
    if (info.state != "active") {
      port.verdict = ProbeVerdict::kFail;
      port.hint =
          "the link is not up: check the cable, the switch port, or for Soft-RoCE that "
          "the rxe device is attached to an interface that is up";
    }
  }
  return port;
}

ProbeResult gid_table(const transports::DeviceInfo& info) {
  ProbeResult gids{"GID table", ProbeVerdict::kPass, "a usable GID (RoCE v2 preferred)", "", "",
                   ""};
  if (info.transport != "verbs") {
    gids.verdict = ProbeVerdict::kSkip;
    gids.observed = "no GIDs on " + info.transport;
  } else if (info.gids.empty()) {
    gids.verdict = ProbeVerdict::kFail;
    gids.observed = "the GID table of port " + std::to_string(info.port) + " is empty";
    gids.hint = "RoCE needs an IP address on the network interface the device is bound to";
  } else {
    gids.observed = std::to_string(info.gids.size()) + " GIDs";
    for (const auto& gid : info.gids)
      gids.evidence += (gids.evidence.empty() ? "" : ", ") + std::to_string(gid.index) + ": " +
                       gid.gid + " " + gid.type;
    if (info.gid_index) gids.observed += ", using index " + std::to_string(*info.gid_index);
    if (!info.gid_choice.empty()) gids.observed += " (" + info.gid_choice + ")";
  }
  return gids;
}

ProbeResult active_mtu(const transports::DeviceInfo& info) {
  ProbeResult mtu{"MTU", ProbeVerdict::kPass, "an active MTU", "", "", ""};
  if (!info.limits.active_mtu) {
    mtu.verdict = ProbeVerdict::kSkip;
    mtu.observed = info.transport + " reports no MTU";
  } else {
    mtu.observed =
        "active " + std::to_string(*info.limits.active_mtu) + " B" +
        (info.limits.max_mtu ? ", max " + std::to_string(*info.limits.max_mtu) + " B" : "");
  }
  return mtu;
}

}  // namespace

std::vector<ProbeResult> probe_environment(const ProbeContext& context) {
  std::vector<ProbeResult> probes;
  const transports::Target& target = context.target;
  auto devices = list_devices({target.transport, target.provider, target.device});
  if (!devices.ok() || devices->empty()) {
    // No device to probe: say what the machine has instead, and the likely reason.
    ProbeResult missing =
        !devices.ok()
            ? failed_probe("device present", "the device of --transport/--provider/--device",
                           devices.error())
            : ProbeResult{"device present",
                          ProbeVerdict::kFail,
                          "the device of --transport/--provider/--device",
                          "no " + target.transport + " device on this host",
                          "",
                          ""};
    if (target.transport == "verbs") {
      const KernelRdmaState kernel = kernel_rdma_state();
      missing.evidence = kernel.evidence;
      missing.hint = kernel.hint;
    }
    probes.push_back(std::move(missing));
    return probes;
  }
  // The device the probes open (the transport's default when none was named).
  auto opened = context.open();
  const std::string opened_name = opened.ok() ? opened.value()->info().name : target.device;
  const transports::DeviceInfo* chosen = &devices->front();
  for (const auto& device : devices.value())
    if (device.name == opened_name) chosen = &device;
  const transports::DeviceInfo& info = *chosen;
  probes.push_back({"device present", ProbeVerdict::kPass, "the device exists",
                    info.transport + "/" + info.provider + " device " + info.name +
                        (info.native_provider.empty() ? "" : " (" + info.native_provider + ")") +
                        (info.firmware.empty() ? "" : ", firmware " + info.firmware),
                    std::to_string(devices->size()) + " matching device(s)", ""});

  probes.push_back(port_state(info));

  probes.push_back(gid_table(info));

  probes.push_back(active_mtu(info));
  probes.push_back(locked_memory(info.transport));

  ProbeResult opens{"device opens", ProbeVerdict::kPass, "the device opens", "", "", ""};
  if (!opened.ok()) {
    probes.push_back(failed_probe("device opens", "the device opens", opened.error()));
  } else {
    const auto& capabilities = opened.value()->info().capabilities;
    opens.observed = "opened " + opened.value()->info().name;
    opens.evidence = std::string("capabilities:") + (capabilities.rdma_write ? " write" : "") +
                     (capabilities.rdma_read ? " read" : "") +
                     (capabilities.write_with_imm ? " write_imm" : "") +
                     (capabilities.inline_send ? " inline" : "");
    probes.push_back(opens);
  }
  return probes;
}

ProbeResult failed_probe(std::string name, std::string expected, const Error& error) {
  return {std::move(name), ProbeVerdict::kFail, std::move(expected), error.describe(), "",
          error.hint};
}

}  // namespace faultline::harness::diagnose
