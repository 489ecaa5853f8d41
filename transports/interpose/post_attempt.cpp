#include "post_attempt.hpp"

#include "event_log.hpp"

namespace faultline::transports::interpose {

namespace {
thread_local PostAttempt* running = nullptr;
}  // namespace

PostAttempt::PostAttempt() : outer_(running) { running = this; }

PostAttempt::~PostAttempt() {
  running = outer_;
  if (refused_) return;
  for (auto& event : held_) log_event(std::move(event));
}

PostAttempt* PostAttempt::current() { return running; }

PostAttempt::Outside::Outside() : attempt_(running) { running = nullptr; }
PostAttempt::Outside::~Outside() { running = attempt_; }

void PostAttempt::on_refused(std::function<void()> undo) { undo_.push_back(std::move(undo)); }

void PostAttempt::hold(nlohmann::json event) { held_.push_back(std::move(event)); }

void PostAttempt::refused() {
  if (refused_) return;
  refused_ = true;
  for (auto undo = undo_.rbegin(); undo != undo_.rend(); ++undo) (*undo)();
  undo_.clear();
  held_.clear();
}

}  // namespace faultline::transports::interpose
