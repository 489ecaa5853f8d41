#pragma once

#include <nlohmann/json.hpp>

#include "faultline/transports/transport.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports {

// nlohmann::json conversions of the transport vocabulary, used by `faultline devices --json`,
// the control channel (agent hello, endpoint info) and reports. Limits a device does not
// advertise are null. from_json throws nlohmann::json::exception on a malformed document.

void to_json(nlohmann::json& json, const DeviceLimits& limits);
void from_json(const nlohmann::json& json, DeviceLimits& limits);
void to_json(nlohmann::json& json, const Capabilities& capabilities);
void from_json(const nlohmann::json& json, Capabilities& capabilities);
void to_json(nlohmann::json& json, const GidEntry& gid);
void from_json(const nlohmann::json& json, GidEntry& gid);
void to_json(nlohmann::json& json, const DeviceInfo& device);
void from_json(const nlohmann::json& json, DeviceInfo& device);
void to_json(nlohmann::json& json, const RemoteBuffer& buffer);
void from_json(const nlohmann::json& json, RemoteBuffer& buffer);
void to_json(nlohmann::json& json, const Completion& completion);

}  // namespace faultline::transports
