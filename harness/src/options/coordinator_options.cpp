#include "options/coordinator_options.hpp"

#include "faultline/harness/control/pair_schedule.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

void add_step_timeout(CLI::App* command, harness::CoordinatorOptions& options) {
  command
      ->add_option_function<double>(
          "--step-timeout",
          [&options](double seconds) {
            options.step_deadline = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
          },
          "Seconds one scenario step may take before the run is a timeout (default 30)")
      ->check(seconds_up_to(86400));
}

void add_pairs(CLI::App* command, harness::CoordinatorOptions& options) {
  command
      ->add_option_function<std::string>(
          "--pairs",
          [&options](const std::string& text) {
            auto plan = harness::parse_pair_plan(text);
            if (!plan.ok()) throw CLI::ValidationError(plan.error().message);
            options.pairs = plan.value();
          },
          "Pairs a pair scenario runs on: all (default), ring (each agent with the next), rail "
          "(within each --rail label), sample:N (N rounds of random partners, seeded)")
      ->type_name("MODE");
}

}  // namespace faultline::cli
