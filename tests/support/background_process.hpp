#pragma once

#include <sys/types.h>
#include <chrono>
#include <optional>
#include <string>

namespace faultline::testing {

/// A process started through /bin/sh that runs while the test goes on; its standard output
/// and error go to files the test can read at any time. Killed (SIGKILL) when destroyed.
/// Start commands with `exec` when the test needs the pid of the program itself.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::string& command);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;
  /// Waits until `text` appears in stdout or stderr; false after `timeout`.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout) const;
  /// The exit code (128 + signal when killed), or nullopt if still running after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void kill(int signal_number);

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string out_path_;
  std::string err_path_;
};

/// A fresh directory under /tmp, removed with its contents when destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The whole content of a file, or "" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace faultline::testing
