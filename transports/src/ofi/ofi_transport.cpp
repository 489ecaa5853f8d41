#include "faultline/transports/ofi/ofi_transport.hpp"

#include "faultline/transports/target.hpp"

#include <algorithm>
#include <set>

#include "faultline/transports/ofi/shm_stale_regions.hpp"
#include "ofi_common.hpp"
#include "ofi_device.hpp"

namespace faultline::transports::ofi {

namespace {

// Socket-based providers default to the loopback domain, so nothing leaves the host unasked.
std::string default_device(const std::string& provider) {
  return (provider == "tcp" || provider == "sockets" || provider == "udp") ? "lo" : "";
}

struct InfoList {
  InfoPtr head;
  Status status;
};

InfoList get_info(const std::string& provider) {
  if (const std::string& why = api::load_error(); !why.empty()) {
    return {nullptr, Error{ErrorCode::kUnsupported, why}.with_hint(
                         "faultline loads libfabric.so.1 from the library path "
                         "(LD_LIBRARY_PATH, then the system's): is another file of that name "
                         "ahead of Debian's libfabric1?")};
  }
  InfoPtr hints = make_hints(provider);
  fi_info* info = nullptr;
  int rc = api::getinfo(kOfiApiVersion, nullptr, nullptr, 0, hints.get(), &info);
  if (rc == -FI_ENODATA) return {nullptr, {}};
  if (rc != 0) return {nullptr, ofi_call_error("fi_getinfo", rc, nullptr)};
  return {InfoPtr{info}, {}};
}

std::string join(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

class OfiTransport final : public Transport {
 public:
  std::string_view name() const override { return "ofi"; }

  Result<std::vector<DeviceInfo>> list_devices() const override {
    InfoList list = get_info("");
    if (!list.status.ok()) return list.status;
    std::vector<DeviceInfo> devices;
    std::set<std::pair<std::string, std::string>> seen;
    for (fi_info* info = list.head.get(); info != nullptr; info = info->next) {
      DeviceInfo device = device_info_from(*info);
      // The first entry of a (provider, domain) pair is its IPv4 address where there is one.
      if (seen.emplace(device.provider, device.name).second) devices.push_back(std::move(device));
    }
    return devices;
  }

  Result<std::unique_ptr<Device>> open(const DeviceSelector& selector) const override {
    const std::string provider =
        selector.provider.empty() ? kOfiDefaultProvider : selector.provider;
    const std::string device_name =
        selector.device.empty() ? default_device(provider) : selector.device;
    InfoList list = get_info("");
    if (!list.status.ok()) return list.status;

    std::set<std::string> providers;
    std::set<std::string> devices_of_provider;
    fi_info* chosen = nullptr;
    for (fi_info* info = list.head.get(); info != nullptr; info = info->next) {
      const std::string short_name = short_provider_name(info->fabric_attr->prov_name);
      providers.insert(short_name);
      if (short_name != provider && info->fabric_attr->prov_name != provider) continue;
      const std::string domain = info->domain_attr->name != nullptr ? info->domain_attr->name : "";
      devices_of_provider.insert(domain);
      if (chosen == nullptr && (device_name.empty() || domain == device_name)) chosen = info;
    }
    if (devices_of_provider.empty()) {
      return Error{
          ErrorCode::kNotFound,
          "ofi provider '" + provider + "' is not present; providers present: " + join(providers)}
          .with_hint("`faultline devices --transport ofi` lists providers and devices");
    }
    if (chosen == nullptr) {
      return Error{ErrorCode::kNotFound, "ofi provider '" + provider + "' has no device '" +
                                             device_name +
                                             "'; devices present: " + join(devices_of_provider)}
          .with_hint(
              "an ofi device is a libfabric domain: a network interface for tcp and "
              "sockets, 'shm' for shm");
    }
    if (short_provider_name(chosen->fabric_attr->prov_name) == "shm")
      remove_own_stale_shm_regions_once();
    InfoPtr single{api::dupinfo(chosen)};
    auto device = OfiDevice::open(std::move(single));
    if (!device.ok()) return std::move(device).take_error();
    return std::unique_ptr<Device>(std::move(device).value());
  }
};

}  // namespace

std::unique_ptr<Transport> make_ofi_transport() { return std::make_unique<OfiTransport>(); }

}  // namespace faultline::transports::ofi
