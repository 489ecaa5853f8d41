#include "faultline/transports/verbs/verbs_transport.hpp"

#include <set>

#include "verbs_common.hpp"
#include "verbs_device.hpp"
#include "verbs_device_query.hpp"

namespace faultline::transports::verbs {

namespace {

struct OpenedContext {
  ContextPtr context;
  PdPtr pd;
};

Result<OpenedContext> open_context(ibv_device* device) {
  DeviceInfo where;
  where.name = ibv_get_device_name(device);
  OpenedContext opened;
  opened.context.reset(ibv_open_device(device));
  if (!opened.context) return verbs_call_error("ibv_open_device", errno, where);
  opened.pd.reset(ibv_alloc_pd(opened.context.get()));
  if (!opened.pd) return verbs_call_error("ibv_alloc_pd", errno, where);
  return opened;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

class VerbsTransport final : public Transport {
 public:
  std::string_view name() const override { return "verbs"; }

  Result<std::vector<DeviceInfo>> list_devices() const override {
    int count = 0;
    DeviceListPtr list{ibv_get_device_list(&count)};
    std::vector<DeviceInfo> devices;
    if (!list) return devices;  // no RDMA subsystem here: no devices, not an error
    for (int i = 0; i < count; ++i) {
      auto opened = open_context(list.get()[i]);
      if (!opened.ok()) return std::move(opened).take_error();
      ibv_device_attr attr{};
      if (int rc = ibv_query_device(opened->context.get(), &attr); rc != 0) {
        DeviceInfo where;
        where.name = ibv_get_device_name(list.get()[i]);
        return verbs_call_error("ibv_query_device", rc, where);
      }
      for (uint32_t port = 1; port <= attr.phys_port_cnt; ++port) {
        auto info = query_port(opened->context.get(), opened->pd.get(), port);
        if (!info.ok()) return std::move(info).take_error();
        info->gid_index = choose_gid(info->gids, info->gid_choice);
        devices.push_back(std::move(info).value());
      }
    }
    return devices;
  }

  Result<std::unique_ptr<Device>> open(const DeviceSelector& selector) const override {
    int count = 0;
    DeviceListPtr list{ibv_get_device_list(&count)};
    std::vector<std::string> names;
    for (int i = 0; list && i < count; ++i) names.emplace_back(ibv_get_device_name(list.get()[i]));
    if (names.empty()) {
      return Error{ErrorCode::kNotFound, "no verbs devices present"}.with_hint(
          "load a driver (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev "
          "IFACE) and check `ibv_devices`");
    }
    std::vector<std::string> tried;
    for (int i = 0; i < count; ++i) {
      const std::string name = names[static_cast<size_t>(i)];
      if (!selector.device.empty() && name != selector.device) continue;
      auto opened = open_context(list.get()[i]);
      if (!opened.ok()) return std::move(opened).take_error();
      auto info = pick_port(*opened, selector);
      if (!info.ok()) {
        if (!selector.device.empty()) return std::move(info).take_error();
        tried.push_back(name + " (" + info.error().message + ")");
        continue;
      }
      return std::unique_ptr<Device>(std::make_unique<VerbsDevice>(
          std::move(opened->context), std::move(opened->pd), std::move(info).value()));
    }
    if (!selector.device.empty()) {
      return Error{ErrorCode::kNotFound, "unknown verbs device '" + selector.device +
                                             "'; devices present: " + join(names)};
    }
    return Error{ErrorCode::kNotFound, "no verbs device has an active port; tried " + join(tried)}
        .with_hint("check the link (ibv_devinfo) and the cable or the netdev under it");
  }

 private:
  // The asked-for port (or the first active one) with its GID chosen.
  static Result<DeviceInfo> pick_port(const OpenedContext& opened, const DeviceSelector& selector) {
    ibv_device_attr attr{};
    DeviceInfo where;
    where.name = ibv_get_device_name(opened.context->device);
    if (int rc = ibv_query_device(opened.context.get(), &attr); rc != 0) {
      return verbs_call_error("ibv_query_device", rc, where);
    }
    if (selector.port > attr.phys_port_cnt) {
      return Error{ErrorCode::kNotFound, "device " + where.name + " has no port " +
                                             std::to_string(selector.port) + " (ports 1.." +
                                             std::to_string(attr.phys_port_cnt) + ")"};
    }
    std::string states;
    for (uint32_t port = 1; port <= attr.phys_port_cnt; ++port) {
      if (selector.port != 0 && port != selector.port) continue;
      auto info = query_port(opened.context.get(), opened.pd.get(), port);
      if (!info.ok()) return info;
      if (info->state != "active") {
        states +=
            (states.empty() ? "" : ", ") + ("port " + std::to_string(port) + " " + info->state);
        continue;
      }
      if (selector.gid_index) {
        bool present = false;
        for (const auto& gid : info->gids) present = present || gid.index == *selector.gid_index;
        if (!present) {
          return Error{ErrorCode::kNotFound,
                       "device " + where.name + " port " + std::to_string(port) +
                           " has no valid GID at index " + std::to_string(*selector.gid_index)}
              .with_hint("`faultline devices --transport verbs --json` lists the GID table");
        }
        info->gid_index = selector.gid_index;
        info->gid_choice = "gid " + std::to_string(*selector.gid_index) + ": asked for";
      } else {
        info->gid_index = choose_gid(info->gids, info->gid_choice);
        if (!info->gid_index && info->link_layer == "Ethernet") {
          return Error{ErrorCode::kNotFound, "device " + where.name + " port " +
                                                 std::to_string(port) + ": " + info->gid_choice}
              .with_hint("RoCE GIDs come from the addresses of the netdev under the device");
        }
      }
      return info;
    }
    return Error{ErrorCode::kNotFound, "no active port (" + states + ")"};
  }
};

}  // namespace

std::unique_ptr<Transport> make_verbs_transport() { return std::make_unique<VerbsTransport>(); }

Result<std::map<std::string, bool>> probe_qp_types(const std::string& device) {
  int count = 0;
  DeviceListPtr list{ibv_get_device_list(&count)};
  std::vector<std::string> present;
  for (int i = 0; list && i < count; ++i) {
    present.emplace_back(ibv_get_device_name(list.get()[i]));
    if (present.back() != device) continue;
    auto opened = open_context(list.get()[i]);
    if (!opened.ok()) return std::move(opened).take_error();
    return probe_qp_types(opened->context.get(), opened->pd.get());
  }
  return Error{ErrorCode::kNotFound,
               "no verbs device '" + device + "'; devices present: " + join(present)};
}

}  // namespace faultline::transports::verbs
