#pragma once

#include <string>

namespace faultline::testing {

/// A TCP port on 127.0.0.1 that nothing listens on right now.
int free_port();
/// "127.0.0.1:PORT".
std::string local_address(int port);
/// The port a coordinator wrote to its `--port-file`, once it did (waits up to 10 s; "" if not).
std::string wait_for_port_file(const std::string& path);

}  // namespace faultline::testing
