// A device profile as --profile, --compare-profile and port-check --enforce read it, then used:
// its limits as a fault, each limit alone, and a request held against it.
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/port_check/port_check.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::harness;
  const auto profile = parse_device_profile("profile.json", faultline::fuzz::as_text(data, size));
  if (!profile.ok()) return 0;
  const nlohmann::json all = profile->limits_fault();
  for (const auto& [limit, value] : profile->limits) (void)profile->one_limit_fault(limit);
  const std::vector<nlohmann::json> requests = {{{"event", "request"},
                                                 {"call", "ibv_create_qp"},
                                                 {"qp_type", "RC"},
                                                 {"max_send_wr", 256},
                                                 {"max_recv_wr", 256},
                                                 {"max_send_sge", 3},
                                                 {"max_recv_sge", 1},
                                                 {"max_inline_data", 256}}};
  (void)port_check::judge_target(requests, profile.value());
  (void)all;
  return 0;
}
