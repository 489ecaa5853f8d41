// A scenario file as a user (or a scenario catalog someone else wrote) may give it.
#include "faultline/harness/scenario/scenario_loader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<faultline::harness::LoadProblem> problems;
  const faultline::harness::LoaderOptions options{FAULTLINE_DEVICES_DIR};
  const auto scenario = faultline::harness::load_scenario_text(
      "fuzz.json", faultline::fuzz::as_text(data, size), options, problems);
  for (const auto& problem : problems) (void)problem.describe();
  return 0;
}
