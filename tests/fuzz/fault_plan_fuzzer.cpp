// A fault plan as `sut exec --plan` reads it (depth, strict JSON, the fault language for the
// interposers), and the same text as one compact `--fault`.
#include "faultline/harness/sut/exec_plan.hpp"
#include "faultline/transports/fault/fault_spec.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline;
  const std::string text = fuzz::as_text(data, size);
  if (auto plan = harness::sut::plan_from_text(text, "--plan fuzz"); plan.ok())
    (void)plan->dump();  // what is taken can be written back
  if (auto fault = harness::sut::parse_fault_spec(text); fault.ok()) {
    (void)transports::fault::parse_fault(*fault, transports::fault::kInterposer, "--fault");
  }
  return 0;
}
