// The values a coordinator relays between a job's roles (a peer's run_program or
// program_started): what passes is a port from 1 to 65535 and a host address, and expanded
// into a role's arguments it is exactly that text, in one argument.
#include <cstdlib>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/control/program_jobs.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::harness;
  const auto document = parse_json_text("values", faultline::fuzz::as_text(data, size));
  if (!document.ok()) return 0;
  const auto values = program_values_from(document.value());
  if (!values.ok()) return 0;
  if (values->port == 0 || !is_host_address(values->address)) std::abort();
  if (values->address.find_first_of(" ;&|$`'\"\\(){}<>*?!#\n") != std::string::npos) std::abort();
  sut::Placeholders placeholders;
  placeholders.port = std::to_string(values->port);
  placeholders.address = values->address;
  const auto expanded = sut::expand({"-p", "{port}", "{address}:{port}"}, placeholders);
  if (expanded.size() != 3 || expanded[2] != values->address + ":" + placeholders.port)
    std::abort();
  return 0;
}
