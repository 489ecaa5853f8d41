#include "faultline/transports/target.hpp"

#include "faultline/transports/registry.hpp"

namespace faultline::transports {

Target Target::with_defaults() const {
  Target filled = *this;
  if (filled.transport == "ofi" && filled.provider.empty()) filled.provider = kOfiDefaultProvider;
  return filled;
}

std::string Target::label() const {
  return transport + "/" + (provider.empty() ? device : provider);
}

std::string Target::text() const {
  const bool said = device.empty() || provider.empty() || device == provider;  // "verbs/rxe0"
  return label() + (said ? "" : " " + device);
}

Result<std::unique_ptr<Device>> open_target_device(const Target& target) {
  auto transport = find_transport(target.transport);
  if (!transport.ok()) return transport.error();
  return transport.value()->open({target.provider, target.device});
}

}  // namespace faultline::transports
