#include "faultline/harness/base/process.hpp"

#include <csignal>
#include <filesystem>

namespace faultline::harness {

std::string own_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("faultline") : path.string();
}

namespace {

volatile sig_atomic_t stop_flag = 0;
volatile sig_atomic_t stop_signal = 0;

}  // namespace

void request_stop() { stop_flag = 1; }

bool stop_requested() { return stop_flag != 0; }

void stop_on_signals() {
  struct sigaction action {};
  action.sa_handler = [](int signal) {
    stop_signal = signal;
    request_stop();
  };
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaction(signal, &action, nullptr);
}

std::string stop_signal_name() {
  if (stop_signal == 0) return "";
  switch (stop_signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(stop_signal);
  }
}

}  // namespace faultline::harness
