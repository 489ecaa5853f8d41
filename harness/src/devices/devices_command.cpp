#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/transports/json.hpp"
#include "options/commands.hpp"

namespace faultline::cli {

namespace {

struct DevicesOptions {
  harness::DeviceFilter filter;
  bool json = false;
  std::string save_profile;
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

// A device profile for `limits` faults (scenarios/devices/): what one real device advertises,
// with where and when it was captured.
int save_profile(const std::vector<transports::DeviceInfo>& devices, const std::string& path) {
  if (devices.size() != 1) {
    std::string names;
    for (const auto& device : devices)
      names += (names.empty() ? "" : ", ") + device.transport + "/" + device.provider + "/" +
               device.name;
    std::cerr << "faultline devices: --save-profile needs exactly one device; " << devices.size()
              << " match (" << (names.empty() ? "none" : names)
              << "): narrow with --transport, --provider and --device\n";
    return harness::kExitUsage;
  }
  const auto& device = devices.front();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  utsname system{};
  uname(&system);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string kernel = std::string(system.sysname) + " " + system.release;
  // Every value measured here: its source says where and when. What the device does not
  // report (null) is left out: unknown, never guessed.
  nlohmann::json limits = nlohmann::json::object();
  nlohmann::json sources = nlohmann::json::object();
  const nlohmann::json measured = device.limits;
  for (const auto& [name, value] : measured.items()) {
    if (value.is_null()) continue;
    limits[name] = value;
    sources[name] = {{"kind", "measured"},
                     {"ref", "faultline devices --save-profile on " + std::string(host) + " (" +
                                 kernel + ", firmware " + device.firmware + ", " + date + ")"}};
  }
  const nlohmann::json profile = {
      {"profile_version", 2},
      {"name", std::filesystem::path(path).stem().string()},
      {"description", device.transport + "/" + device.provider + " " + device.name +
                          ", measured with faultline devices --save-profile"},
      {"confidence", "measured"},
      {"captured",
       {{"host", host},
        {"kernel", kernel},
        {"date", date},
        {"faultline_version", FAULTLINE_VERSION}}},
      {"transport", device.transport},
      {"provider", device.provider},
      {"native_provider", device.native_provider},
      {"device", device.name},
      {"firmware", device.firmware},
      {"limits", limits},
      {"sources", sources},
      {"capabilities", device.capabilities}};
  if (auto written = reports::write_file_atomically(path, profile.dump(2) + "\n"); !written.ok()) {
    std::cerr << "faultline devices: " << written.error().describe() << "\n";
    return harness::kExitUsage;
  }
  std::cout << "saved the profile of " << device.transport << "/" << device.provider << "/"
            << device.name << " to " << path << "\n";
  return harness::kExitPass;
}

int run_devices(const DevicesOptions& options) {
  auto devices = harness::list_devices(options.filter);
  if (!devices.ok()) {
    std::cerr << "faultline devices: " << devices.error().describe_with_hint() << "\n";
    return devices.error().code == ErrorCode::kNotFound ? harness::kExitUsage
                                                        : harness::kExitHarnessError;
  }
  if (!options.save_profile.empty()) return save_profile(devices.value(), options.save_profile);
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
  command->add_option("--save-profile", options->save_profile,
                      "Write the limits of the one selected device as a profile for `limits` "
                      "faults (scenarios/devices/)");
  command->footer(
      "Examples:\n  faultline devices\n  faultline devices --transport ofi --provider shm --json\n"
      "  faultline devices --transport verbs --device rxe0 --save-profile "
      "scenarios/devices/rxe-linux-6.1.json\n"
      "Limits a device does not advertise show as '-' (null in JSON).");
  command->callback([&run, options] { run = [options] { return run_devices(*options); }; });
}

}  // namespace faultline::cli
