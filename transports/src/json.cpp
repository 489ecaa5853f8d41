#include "faultline/transports/json.hpp"

namespace faultline::transports {

namespace {

template <typename T>
nlohmann::json optional_to_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_from_json(const nlohmann::json& json, const char* key) {
  if (!json.contains(key) || json.at(key).is_null()) return std::nullopt;
  return json.at(key).get<T>();
}

// A limit as JSON: a required one as its value, an optional one as its value or null.
template <typename T>
nlohmann::json limit_to_json(const T& value) {
  return value;
}

template <typename T>
nlohmann::json limit_to_json(const std::optional<T>& value) {
  return optional_to_json(value);
}

template <typename T>
void limit_from_json(const nlohmann::json& json, const char* key, T& value) {
  json.at(key).get_to(value);
}

template <typename T>
void limit_from_json(const nlohmann::json& json, const char* key, std::optional<T>& value) {
  value = optional_from_json<T>(json, key);
}

}  // namespace

void to_json(nlohmann::json& json, const DeviceLimits& limits) {
  json = nlohmann::json::object();
#define FAULTLINE_LIMIT_TO_JSON(name, type, interposer) json[#name] = limit_to_json(limits.name);
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_LIMIT_TO_JSON)
#undef FAULTLINE_LIMIT_TO_JSON
}

void from_json(const nlohmann::json& json, DeviceLimits& limits) {
#define FAULTLINE_LIMIT_FROM_JSON(name, type, interposer) limit_from_json(json, #name, limits.name);
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_LIMIT_FROM_JSON)
#undef FAULTLINE_LIMIT_FROM_JSON
}

void to_json(nlohmann::json& json, const Capabilities& caps) {
  json = {{"send_recv", caps.send_recv},
          {"rdma_write", caps.rdma_write},
          {"rdma_read", caps.rdma_read},
          {"write_with_imm", caps.write_with_imm},
          {"send_with_imm", caps.send_with_imm},
          {"inline_send", caps.inline_send},
          {"atomics", caps.atomics},
          {"write_imm_consumes_recv", caps.write_imm_consumes_recv},
          {"flushes_sends_on_error", caps.flushes_sends_on_error}};
}

void from_json(const nlohmann::json& json, Capabilities& caps) {
  json.at("send_recv").get_to(caps.send_recv);
  json.at("rdma_write").get_to(caps.rdma_write);
  json.at("rdma_read").get_to(caps.rdma_read);
  json.at("write_with_imm").get_to(caps.write_with_imm);
  json.at("send_with_imm").get_to(caps.send_with_imm);
  json.at("inline_send").get_to(caps.inline_send);
  json.at("atomics").get_to(caps.atomics);
  json.at("write_imm_consumes_recv").get_to(caps.write_imm_consumes_recv);
  json.at("flushes_sends_on_error").get_to(caps.flushes_sends_on_error);
}

void to_json(nlohmann::json& json, const GidEntry& gid) {
  json = {{"index", gid.index}, {"gid", gid.gid}, {"type", gid.type}};
}

void from_json(const nlohmann::json& json, GidEntry& gid) {
  json.at("index").get_to(gid.index);
  json.at("gid").get_to(gid.gid);
  json.at("type").get_to(gid.type);
}

void to_json(nlohmann::json& json, const DeviceInfo& device) {
  json = {{"transport", device.transport},
          {"provider", device.provider},
          {"native_provider", device.native_provider},
          {"name", device.name},
          {"fabric", device.fabric},
          {"firmware", device.firmware},
          {"vendor_id", optional_to_json(device.vendor_id)},
          {"vendor_part_id", optional_to_json(device.vendor_part_id)},
          {"port", device.port},
          {"state", device.state},
          {"link_layer", device.link_layer},
          {"gids", device.gids},
          {"wire_protocols", device.wire_protocols},
          {"gid_index", optional_to_json(device.gid_index)},
          {"gid_choice", device.gid_choice},
          {"limits", device.limits},
          {"capabilities", device.capabilities},
          {"qp_types", device.qp_types}};
}

void from_json(const nlohmann::json& json, DeviceInfo& device) {
  json.at("transport").get_to(device.transport);
  json.at("provider").get_to(device.provider);
  json.at("native_provider").get_to(device.native_provider);
  json.at("name").get_to(device.name);
  json.at("fabric").get_to(device.fabric);
  json.at("firmware").get_to(device.firmware);
  device.vendor_id = optional_from_json<uint32_t>(json, "vendor_id");
  device.vendor_part_id = optional_from_json<uint32_t>(json, "vendor_part_id");
  json.at("port").get_to(device.port);
  json.at("state").get_to(device.state);
  json.at("link_layer").get_to(device.link_layer);
  json.at("gids").get_to(device.gids);
  // Absent from an older peer's hello; only strings taken.
  const nlohmann::json protocols = json.value("wire_protocols", nlohmann::json::array());
  for (const auto& protocol : protocols)
    if (protocol.is_string()) device.wire_protocols.push_back(protocol.get<std::string>());
  device.gid_index = optional_from_json<uint32_t>(json, "gid_index");
  json.at("gid_choice").get_to(device.gid_choice);
  json.at("limits").get_to(device.limits);
  json.at("capabilities").get_to(device.capabilities);
  // Absent from an older peer's hello; only booleans taken.
  const nlohmann::json qp_types = json.value("qp_types", nlohmann::json::object());
  for (const auto& [type, created] : qp_types.items())
    if (created.is_boolean()) device.qp_types[type] = created.get<bool>();
}

void to_json(nlohmann::json& json, const RemoteBuffer& buffer) {
  json = {{"addr", buffer.addr}, {"key", buffer.key}, {"length", buffer.length}};
}

void from_json(const nlohmann::json& json, RemoteBuffer& buffer) {
  json.at("addr").get_to(buffer.addr);
  json.at("key").get_to(buffer.key);
  json.at("length").get_to(buffer.length);
}

void to_json(nlohmann::json& json, const Completion& completion) {
  json = {{"wr_id", completion.wr_id},
          {"status", to_string(completion.status)},
          {"op", to_string(completion.op)},
          {"byte_len", completion.byte_len},
          {"imm", optional_to_json(completion.imm)},
          {"qp_num", completion.qp_num},
          {"native_status", completion.native_status},
          {"vendor_err", completion.vendor_err},
          {"native_text", completion.native_text}};
}

}  // namespace faultline::transports
