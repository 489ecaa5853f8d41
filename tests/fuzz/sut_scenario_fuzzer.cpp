// A SUT scenario file as `sut run`, `coordinator --suite sut` and an agent's --sut-scenarios
// read it, then placed as a program job and each role's command expanded with values that hold
// placeholders themselves (expanded once, never again).
#include <cstdlib>

#include "faultline/harness/sut/sut_jobs.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::harness::sut;
  const auto scenario = parse_sut_scenario("s.json", faultline::fuzz::as_text(data, size));
  if (!scenario.ok()) return 0;
  (void)program_job(scenario.value());
  Placeholders values;
  values.port = "{port}{address}";
  values.address = "{address}";
  values.bin = "{bin}";
  for (const auto& role : scenario->roles) {
    const auto expanded = expand(role.command, values);
    if (expanded.size() != role.command.size()) std::abort();
  }
  return 0;
}
