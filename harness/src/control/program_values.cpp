// The typed values of program jobs: a peer's port and address, checked before they go anywhere
// near a program's arguments (SECURITY.md: what a token holder can make an agent do).
#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/program_jobs.hpp"

namespace faultline::harness {

Result<ProgramValues> program_values_from(const nlohmann::json& values) {
  const auto refused = [](const std::string& field, const nlohmann::json& held,
                          const std::string& expected) {
    const std::string shown =
        printable(held.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return Error{ErrorCode::kProtocolViolation,
                 "values/" + field + " " + shown.substr(0, 120) + ": expected " + expected};
  };
  if (!values.is_object()) return refused("", values, "an object of port and address");
  const auto port = values.find("port");
  if (port == values.end() || !port->is_number_unsigned() || port->get<uint64_t>() < 1 ||
      port->get<uint64_t>() > 65535)
    return refused("port", port == values.end() ? nlohmann::json() : *port,
                   "a whole number from 1 to 65535");
  const auto address = values.find("address");
  if (address == values.end() || !address->is_string() ||
      !is_host_address(address->get<std::string>()))
    return refused("address", address == values.end() ? nlohmann::json() : *address,
                   "an IP address or a host name");
  return ProgramValues{port->get<uint16_t>(), address->get<std::string>()};
}

}  // namespace faultline::harness
