#include "sut_runs.hpp"

namespace faultline::testing {

std::vector<nlohmann::json> SutRun::events(const std::string& kind) const {
  std::vector<nlohmann::json> found;
  if (!report.is_object()) return found;
  for (const auto& event : report.at("events"))
    if (event.value("event", "") == kind) found.push_back(event);
  return found;
}

std::string SutRun::output() const {
  std::string text;
  if (!report.is_object()) return text;
  for (const auto& line : report.at("output")) text += line.get<std::string>() + "\n";
  return text;
}

std::string ofi_sum_line(int bytes) {
  unsigned long long sum = 0;
  for (int m = 0; m < 32; ++m)
    for (int b = 0; b < bytes; ++b) sum += static_cast<unsigned char>(m * 7 + b + 1);
  return "sum=" + std::to_string(sum);
}

SutRun sut_exec(const std::string& dir, const std::string& arguments) {
  SutRun run;
  run.command = run_command(std::string(FAULTLINE_BINARY) + " sut exec --report-dir " + dir + " " +
                            arguments);
  run.command.out += run.command.err;
  const std::string text = read_text_file(dir + "/sut.json");
  run.report = nlohmann::json::parse(text.empty() ? "null" : text);
  return run;
}

}  // namespace faultline::testing
