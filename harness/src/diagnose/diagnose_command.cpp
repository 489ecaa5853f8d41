// faultline diagnose: which layer breaks (environment, limits, data path, error semantics,
// protocol contract), the evidence, and the likely cause.
#include <iostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/diagnose/diagnosis.hpp"
#include "faultline/harness/diagnose/workload_targets.hpp"
#include "options/commands.hpp"
#include "options/metrics_options.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

struct DiagnoseCommand {
  harness::diagnose::DiagnoseOptions options;
  bool json = false;
  std::string profiles;
  MetricsOptions metrics_options;

  // --limits FILE --profile NAMES: the workload's values against each target, no device needed.
  int check_targets() const {
    if (options.limits_file.empty())
      return usage("--profile needs --limits FILE: the workload to hold against the targets");
    auto workload = harness::diagnose::load_workload(options.limits_file);
    if (!workload.ok()) return usage(workload.error().describe());
    auto targets = harness::select_device_profiles(profiles, harness::default_devices_dir());
    if (!targets.ok()) return usage(targets.error().describe());
    const auto checks = harness::diagnose::check_workload_against(workload.value(), *targets);
    bool refused = false;
    std::cout << workload->name << " (" << workload->source << ")\n";
    for (const auto& check : checks) {
      refused = refused || check.verdict == "refused";
      std::cout << "  " << check.target << ": " << check.verdict << ": "
                << (check.endpoint.empty() ? "" : check.endpoint + ".") << check.field << " = "
                << check.derivation
                << (check.derivation == std::to_string(check.value)
                        ? ""
                        : " = " + std::to_string(check.value));
      if (check.allowed) {
        std::cout << (check.verdict == "fits" ? " <= " : " > ") << check.limit << " "
                  << *check.allowed << " (" << check.source << ")";
      } else {
        std::cout << "; " << check.limit << " not known for this target";
      }
      std::cout << "\n";
    }
    return refused ? harness::kExitConformanceFailure : harness::kExitPass;
  }

  static int usage(const std::string& text) {
    std::cerr << "faultline diagnose: " << text << "\n";
    return harness::kExitUsage;
  }

  int run() {
    if (!profiles.empty()) return check_targets();
    auto& target = options.target;
    target = target.with_defaults();
    // A device that is not there is still diagnosed: L0 says what the machine has and why
    // the device may be missing (no driver, no RDMA core), then the exit is a usage error.
    auto present = harness::list_devices({target.transport, target.provider, target.device});
    const bool device_missing = !present.ok() || present->empty();
    if (device_missing) options.all = false;
    if (!options.peer.empty()) {
      auto token = harness::control::load_token("");
      if (!token.ok()) {
        std::cerr << "faultline diagnose: --peer " << options.peer
                  << " needs FAULTLINE_TOKEN, the token the remote agent holds too\n";
        return harness::kExitUsage;
      }
      options.token = token.value();
    }
    auto metrics = metrics_options.start();
    if (!metrics.ok()) {
      std::cerr << "faultline diagnose: " << metrics.error().describe_with_hint() << "\n";
      return harness::kExitUsage;
    }
    options.metrics = metrics->get();
    std::ostream& progress = json ? std::cerr : std::cout;
    auto diagnosis = harness::diagnose::run_diagnosis(options, progress);
    if (!diagnosis.ok()) {
      std::cerr << "faultline diagnose: " << diagnosis.error().describe_with_hint() << "\n";
      return harness::kExitUsage;
    }
    if (json) {
      std::cout << diagnosis->to_json().dump(2) << "\n";
    } else {
      std::cout << "\n" << diagnosis->conclusion() << "\n";
      if (const auto* layer = diagnosis->first_failing_layer()) {
        const auto& probe = *layer->first_failure();
        if (!probe.evidence.empty()) std::cout << "  evidence: " << probe.evidence << "\n";
        if (!probe.hint.empty()) std::cout << "  hint: " << probe.hint << "\n";
      }
      std::cout << "diagnosis: " << options.report_dir << "/diagnose.md\n";
    }
    if (!diagnosis->write_error.empty()) {
      std::cerr << "faultline diagnose: the diagnosis files are incomplete (exit 3): "
                << diagnosis->write_error << "\n";
      return metrics_options.finish("diagnose", metrics->get(), harness::kExitHarnessError);
    }
    if (device_missing) {
      std::cerr << "faultline diagnose: "
                << (present.ok() ? "no " + target.transport + " device on this host"
                                 : present.error().describe_with_hint())
                << "\n";
      return metrics_options.finish("diagnose", metrics->get(), harness::kExitUsage);
    }
    return metrics_options.finish("diagnose", metrics->get(),
                                  diagnosis->first_failing_layer() == nullptr
                                      ? harness::kExitPass
                                      : harness::kExitConformanceFailure);
  }
};

}  // namespace

void add_diagnose_command(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<DiagnoseCommand>();
  command->options.report_dir = "faultline-diagnose";
  std::string kinds;
  for (const auto& [name, what] : harness::diagnose::inject_kinds())
    kinds += "\n  " + name + ": " + what;
  CLI::App* d = app.add_subcommand(
      "diagnose",
      "Find which layer breaks: environment, limits, data path, error semantics, "
      "protocol contract");
  auto& options = command->options;
  d->add_option("--transport", options.target.transport, "Transport (ofi, verbs)")
      ->capture_default_str();
  d->add_option("--provider", options.target.provider, "ofi provider (tcp, shm, ...)");
  d->add_option("--device", options.target.device, "Device (lo, shm, rxe0, ...)");
  d->add_option("--limits", options.limits_file,
                "A workload's endpoint configuration (JSON, formulas over inputs) to check "
                "against the device in L1")
      ->check(CLI::ExistingFile);
  d->add_option("--inject", options.inject,
                "Run with this fault of the decorator active (repeatable):" + kinds);
  d->add_option("--peer", options.peer,
                "Run L3 and L4 against a remote agent: listen on HOST:PORT for it (it runs "
                "faultline agent --coordinator HOST:PORT with the same FAULTLINE_TOKEN)");
  d->add_flag("--all", options.all, "Run every layer, not only up to the first that fails");
  d->add_option("--report-dir", options.report_dir, "Where diagnose.json and diagnose.md go")
      ->check(report_dir())
      ->capture_default_str();
  d->add_option("--scenario-dir", options.scenario_dir, "Scenario catalog of L3 and L4");
  d->add_flag("--json", command->json, "Print diagnose.json instead of the summary");
  d->add_option("--profile", command->profiles,
                "With --limits: hold the workload against these target profiles "
                "(hns_roce,mlx5-cx7; a prefix; all) instead of this machine's device");
  command->metrics_options.add_to(d, true);
  d->footer(
      "Examples:\n  faultline diagnose\n  faultline diagnose --transport verbs --device rxe0\n"
      "  faultline diagnose --limits examples/limits/deepep.json\n"
      "  faultline diagnose --limits examples/limits/deepep.json --profile hns_roce,mlx5-cx7\n"
      "  faultline diagnose --inject inline-above-limit --inject kv-missing-lens\n"
      "  FAULTLINE_TOKEN=... faultline diagnose --transport verbs --peer 0.0.0.0:7400\n"
      "Exit codes: 0 every layer passed, 1 a layer failed, 2 a usage error.");
  d->callback([command, &run] { run = [command] { return command->run(); }; });
}

}  // namespace faultline::cli
