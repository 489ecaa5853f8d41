#include "faultline/transports/registry.hpp"

#if FAULTLINE_WITH_OFI
#include "faultline/transports/ofi/ofi_transport.hpp"
#endif
#if FAULTLINE_WITH_VERBS
#include "faultline/transports/verbs/verbs_transport.hpp"
#endif

namespace faultline::transports {

std::vector<std::unique_ptr<Transport>> registered_transports() {
  std::vector<std::unique_ptr<Transport>> transports;
#if FAULTLINE_WITH_OFI
  transports.push_back(ofi::make_ofi_transport());
#endif
#if FAULTLINE_WITH_VERBS
  transports.push_back(verbs::make_verbs_transport());
#endif
  return transports;
}

Result<std::unique_ptr<Transport>> find_transport(std::string_view name) {
  std::string present;
  for (auto& transport : registered_transports()) {
    if (transport->name() == name) return std::move(transport);
    present += (present.empty() ? "" : ", ") + std::string(transport->name());
  }
  return Error{ErrorCode::kNotFound, "transport '" + std::string(name) +
                                         "' is not in this build; transports built: " +
                                         (present.empty() ? "none" : present)}
      .with_hint(
          "transports are chosen at configure time with FAULTLINE_WITH_OFI and "
          "FAULTLINE_WITH_VERBS");
}

}  // namespace faultline::transports
