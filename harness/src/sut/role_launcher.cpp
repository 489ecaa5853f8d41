// An agent's launcher of SUT roles: reads the body its coordinator wrote (sut_job.cpp), checked
// as peer data, and starts the role under `faultline sut exec`.
#include <algorithm>

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sut/sut_jobs.hpp"
#include "faultline/harness/sut/sut_role.hpp"

namespace faultline::harness::sut {

using nlohmann::json;

namespace {

constexpr uint64_t kLongestDeadlineMs = 3600000;

Error bad_body(const std::string& what) {
  return Error{ErrorCode::kProtocolViolation, "the coordinator's run_program: " + what};
}

// The command, each argument a string, at least one.
Result<std::vector<std::string>> command_of(const json& body) {
  const json command = body.value("command", json());
  if (!command.is_array() || command.empty()) return bad_body("\"command\" is not a list of words");
  std::vector<std::string> words;
  for (const auto& word : command) {
    if (!word.is_string()) return bad_body("a command argument is not a string");
    words.push_back(word.get<std::string>());
  }
  return words;
}

}  // namespace

SutRoleLauncher::SutRoleLauncher(std::string faultline_binary)
    : faultline_binary_(std::move(faultline_binary)) {}

std::vector<std::string> SutRoleLauncher::kinds() const {
  std::vector<std::string> kinds;
  for (const char* needs : {"ofi", "verbs", "mpi"})
    if (missing_for_needs(needs).empty()) kinds.emplace_back(needs);
  return kinds;
}

Result<pid_t> SutRoleLauncher::start(const json& body, const std::string& port,
                                     const std::string& address, const std::string& dir) {
  auto command = command_of(body);
  if (!command.ok()) return std::move(command).take_error();
  const json faults = body.value("faults", json());
  const json deadline = body.value("deadline_ms", json());
  const json checker = body.value("checker", json::object());
  if (!faults.is_array()) return bad_body("\"faults\" is not a list");
  if (!deadline.is_number_unsigned()) return bad_body("\"deadline_ms\" is not a count");
  const Placeholders values =
      local_placeholders(text_at(body, "needs"), faultline_binary_, port, address);
  RoleLaunch launch{
      faultline_binary_,
      dir,
      expand(command.value(), values),
      faults,
      static_cast<double>(std::min(deadline.get<uint64_t>(), kLongestDeadlineMs)) / 1000,
      {text_at(checker, "ok"), text_at(checker, "wrong"), text_at(checker, "error")}};
  return start_role(launch);
}

json SutRoleLauncher::summary(const std::string& dir) { return read_role_summary(dir); }

}  // namespace faultline::harness::sut
