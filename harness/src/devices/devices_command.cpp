#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/devices/measured_profile.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/verbs/verbs_transport.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

struct DevicesOptions {
  harness::DeviceFilter filter;
  bool json = false;
  std::string save_profile;
  std::string compare_profile;
};

template <typename T>
std::string or_dash(const std::optional<T>& value) {
  return value ? std::to_string(*value) : "-";
}

std::string capability_list(const transports::Capabilities& caps) {
  std::string text;
  auto add = [&](bool present, const char* name) {
    if (present) text += (text.empty() ? "" : ",") + std::string(name);
  };
  add(caps.send_recv, "send");
  add(caps.rdma_write, "write");
  add(caps.write_with_imm, "write_imm");
  add(caps.send_with_imm, "send_imm");
  add(caps.rdma_read, "read");
  add(caps.inline_send, "inline");
  add(caps.atomics, "atomics");
  return text;
}

void print_table(const std::vector<transports::DeviceInfo>& devices) {
  std::ostringstream out;
  out << std::left << std::setw(7) << "TRANS" << std::setw(10) << "PROVIDER" << std::setw(10)
      << "DEVICE" << std::setw(8) << "STATE" << std::right << std::setw(10) << "max_qp_wr"
      << std::setw(10) << "max_rwr" << std::setw(9) << "max_cqe" << std::setw(9) << "sge s/r"
      << std::setw(8) << "inline" << std::setw(7) << "mtu"
      << "  capabilities\n";
  for (const auto& device : devices) {
    const auto& limits = device.limits;
    out << std::left << std::setw(7) << device.transport << std::setw(10) << device.provider
        << std::setw(10) << device.name << std::setw(8) << device.state << std::right
        << std::setw(10) << limits.max_qp_wr << std::setw(10) << limits.max_recv_wr << std::setw(9)
        << or_dash(limits.max_cqe) << std::setw(9)
        << (std::to_string(limits.max_send_sge) + "/" + std::to_string(limits.max_recv_sge))
        << std::setw(8) << limits.max_inline_data << std::setw(7) << or_dash(limits.active_mtu)
        << "  " << capability_list(device.capabilities) << "\n";
  }
  if (devices.empty()) out << "(no devices)\n";
  std::cout << out.str();
}

// The one device --save-profile and --compare-profile are about; a usage error naming those
// that match when not exactly one does.
const transports::DeviceInfo* the_one_device(const std::vector<transports::DeviceInfo>& devices,
                                             const char* option) {
  if (devices.size() == 1) return &devices.front();
  std::string names;
  for (const auto& device : devices)
    names +=
        (names.empty() ? "" : ", ") + device.transport + "/" + device.provider + "/" + device.name;
  std::cerr << "faultline devices: " << option << " needs exactly one device; " << devices.size()
            << " match (" << (names.empty() ? "none" : names)
            << "): narrow with --transport, --provider and --device\n";
  return nullptr;
}

// Its QP types, measured by creating one of each (verbs only).
Result<std::map<std::string, bool>> measured_qp_types(const transports::DeviceInfo& device) {
  if (device.transport != "verbs") return std::map<std::string, bool>{};
  return transports::verbs::probe_qp_types(device.name);
}

// A device profile for `limits` faults and port-check (scenarios/devices/): what one real
// device grants, each value with where and when it was measured.
int save_profile(const transports::DeviceInfo& device, const std::string& path) {
  auto types = measured_qp_types(device);
  if (!types.ok()) {
    std::cerr << "faultline devices: " << types.error().describe_with_hint() << "\n";
    return harness::kExitHarnessError;
  }
  const nlohmann::json profile =
      harness::measured_profile(device, std::filesystem::path(path).stem().string(), types.value());
  if (auto written = reports::write_user_file(path, profile.dump(2) + "\n"); !written.ok()) {
    std::cerr << "faultline devices: " << written.error().describe() << "\n";
    return harness::kExitUsage;
  }
  std::cout << "saved the profile of " << device.transport << "/" << device.provider << "/"
            << device.name << " to " << path << "\n";
  return harness::kExitPass;
}

// A library profile (a name in scenarios/devices, or a file) against this device, value by
// value: exit 1 when the library should change.
int compare_profile(const transports::DeviceInfo& device, const std::string& wanted) {
  const bool is_file = wanted.find('/') != std::string::npos || wanted.ends_with(".json");
  auto profile =
      is_file
          ? harness::load_device_profile(wanted)
          : harness::load_device_profile(harness::default_devices_dir() + "/" + wanted + ".json");
  if (!profile.ok() && !is_file) {
    // An unknown name: the selection's error lists the profiles there are.
    auto listed = harness::select_device_profiles(wanted, harness::default_devices_dir());
    if (!listed.ok()) profile = std::move(listed).take_error();
  }
  if (!profile.ok()) {
    std::cerr << "faultline devices: --compare-profile: " << profile.error().describe() << "\n";
    return harness::kExitUsage;
  }
  auto types = measured_qp_types(device);
  if (!types.ok()) {
    std::cerr << "faultline devices: " << types.error().describe_with_hint() << "\n";
    return harness::kExitHarnessError;
  }
  const auto values = harness::compare_profiles(
      profile->document, harness::measured_profile(device, profile->name, types.value()));
  std::cout << "profile " << profile->name << " against " << device.transport << "/"
            << device.provider << "/" << device.name << "\n"
            << std::left << std::setw(22) << "value" << std::setw(24) << "library" << std::setw(24)
            << "here"
            << "\n";
  for (const auto& value : values)
    std::cout << std::setw(22) << value.name << std::setw(24) << value.library << std::setw(24)
              << value.here << value.verdict << "\n";
  if (!harness::has_differences(values)) {
    std::cout << "no difference: the library's " << profile->name << " holds for this device\n";
    return harness::kExitPass;
  }
  std::cout << "the library's " << profile->name
            << " differs from this device: save a measured profile with --save-profile and send "
               "it with its ibv_devinfo -v output (docs/porting-to-a-new-nic.md)\n";
  return harness::kExitConformanceFailure;
}

int run_devices(const DevicesOptions& options) {
  auto devices = harness::list_devices(options.filter);
  if (!devices.ok()) {
    std::cerr << "faultline devices: " << devices.error().describe_with_hint() << "\n";
    // What the host lacks or cannot load (a device, a provider, libfabric itself) is the
    // environment's to fix, not faultline's fault.
    const bool environment = devices.error().code == ErrorCode::kNotFound ||
                             devices.error().code == ErrorCode::kUnsupported;
    return environment ? harness::kExitUsage : harness::kExitHarnessError;
  }
  if (!options.save_profile.empty() || !options.compare_profile.empty()) {
    const char* option = options.save_profile.empty() ? "--compare-profile" : "--save-profile";
    const auto* device = the_one_device(devices.value(), option);
    if (device == nullptr) return harness::kExitUsage;
    return options.save_profile.empty() ? compare_profile(*device, options.compare_profile)
                                        : save_profile(*device, options.save_profile);
  }
  if (options.json) {
    std::cout << nlohmann::json{{"devices", devices.value()}}.dump(2) << "\n";
  } else {
    print_table(devices.value());
  }
  return harness::kExitPass;
}

}  // namespace

void add_devices_command(CLI::App& app, CommandAction& run) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* command = app.add_subcommand(
      "devices", "List transports, providers and devices with their limits and capabilities");
  command->add_option("--transport", options->filter.transport, "Only this transport (ofi, verbs)");
  command->add_option("--provider", options->filter.provider,
                      "Only this provider (ofi: tcp, shm, sockets, ...)");
  command->add_option("--device", options->filter.device, "Only this device (lo, shm, rxe0, ...)");
  command->add_flag("--json", options->json, "Print JSON for machines");
  command
      ->add_option("--save-profile", options->save_profile,
                   "Write the limits of the one selected device as a profile for `limits` "
                   "faults (scenarios/devices/)")
      ->check(user_file());
  command
      ->add_option("--compare-profile", options->compare_profile,
                   "Hold a library profile (a name, or a .json file) against the one selected "
                   "device, value by value; exit 1 when they differ")
      ->excludes(command->get_option("--save-profile"));
  command->footer(
      "Examples:\n  faultline devices\n  faultline devices --transport ofi --provider shm --json\n"
      "  faultline devices --transport verbs --device rxe0 --save-profile "
      "scenarios/devices/rxe-linux-6.1.json\n"
      "  faultline devices --transport verbs --device hns_0 --compare-profile hns_roce-hip09\n"
      "Limits a device does not advertise show as '-' (null in JSON).");
  command->callback([&run, options] { run = [options] { return run_devices(*options); }; });
}

}  // namespace faultline::cli
