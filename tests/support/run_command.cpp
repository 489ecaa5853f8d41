#include "support/run_command.hpp"

#include <sys/wait.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace faultline::testing {

CommandResult run_command(const std::string& command) {
  char err_path[] = "/tmp/faultline-test-stderr-XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  close(err_fd);
  CommandResult result;
  FILE* pipe = popen((command + " 2>" + err_path).c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for: " + command);
  char chunk[4096];
  size_t read = 0;
  while ((read = fread(chunk, 1, sizeof chunk, pipe)) > 0) result.out.append(chunk, read);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err_file(err_path);
  std::stringstream err_text;
  err_text << err_file.rdbuf();
  result.err = err_text.str();
  unlink(err_path);
  return result;
}

}  // namespace faultline::testing
