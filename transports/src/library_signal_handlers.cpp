#include "faultline/transports/library_signal_handlers.hpp"

#include <csignal>
#include <initializer_list>

namespace faultline::transports {

void restore_default_signal_actions() {
  for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM}) {
    std::signal(signal_number, SIG_DFL);
  }
}

}  // namespace faultline::transports
