#pragma once

#include <string>

namespace faultline::testing {

/// A TCP port on 127.0.0.1 that nothing listens on right now.
int free_port();
/// "127.0.0.1:PORT".
std::string local_address(int port);

}  // namespace faultline::testing
