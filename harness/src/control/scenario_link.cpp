#include "faultline/harness/control/scenario_link.hpp"

#include "faultline/harness/control/messages.hpp"

namespace faultline::harness {

Result<nlohmann::json> CoordinatorLink::await(std::string_view type, const std::string& name) {
  using namespace std::chrono_literals;
  const auto give_up = std::chrono::steady_clock::now() + deadline_;
  auto message = channel_.receive(progress_ ? 2ms : deadline_);
  while (progress_ && !message.ok() && message.error().code == ErrorCode::kTimeout &&
         std::chrono::steady_clock::now() < give_up) {
    progress_();
    message = channel_.receive(2ms);
  }
  if (!message.ok()) return std::move(message).take_error();
  FAULTLINE_RETURN_IF_ERROR(control::validate_message(message.value(), {type}));
  if (message->at("run_id") != run_id_ || (!name.empty() && message->at("name") != name)) {
    return Error{ErrorCode::kProtocolViolation,
                 "expected " + std::string(type) + " for run " + std::to_string(run_id_) +
                     (name.empty() ? "" : " '" + name + "'") + ", got " + message->dump()};
  }
  return std::move(message).value();
}

Result<nlohmann::json> CoordinatorLink::exchange(const nlohmann::json& info) {
  FAULTLINE_RETURN_IF_ERROR(
      channel_.send_message("endpoint_info", {{"run_id", run_id_}, {"info", info}}));
  auto peer = await("peer_info", "");
  if (!peer.ok()) return std::move(peer).take_error();
  return peer->at("info");
}

Status CoordinatorLink::barrier(const std::string& name) {
  FAULTLINE_RETURN_IF_ERROR(
      channel_.send_message("barrier", {{"run_id", run_id_}, {"name", name}}));
  auto released = await("barrier_release", name);
  if (!released.ok()) return std::move(released).take_error();
  return {};
}

void CoordinatorLink::step(const std::string& name) {
  (void)channel_.send_message("step", {{"run_id", run_id_}, {"name", name}});
}

}  // namespace faultline::harness
