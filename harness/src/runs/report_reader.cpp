#include "faultline/harness/runs/report_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/schema_checker.hpp"
#include "base/schema_texts.hpp"
#include "faultline/core/json_depth.hpp"
#include "faultline/harness/base/strict_json.hpp"

namespace faultline::harness {

std::vector<std::string> report_schema_problems(const nlohmann::json& report) {
  static const SchemaChecker checker(report_schema_text());
  return checker.problem_lines(report);
}

Result<nlohmann::json> read_report(const std::string& path) {
  auto text = read_input_file(path);
  if (!text.ok()) return std::move(text).take_error();
  return parse_report(path, text.value());
}

Result<nlohmann::json> parse_report(const std::string& name, const std::string& text) {
  auto parsed = parse_json_text(name, text);
  if (!parsed.ok()) return std::move(parsed).take_error();
  nlohmann::json report = std::move(parsed).value();
  const auto problems = report_schema_problems(report);
  if (!problems.empty()) {
    std::string text_of_problems;
    const size_t shown = std::min<size_t>(problems.size(), 10);
    for (size_t i = 0; i < shown; ++i) text_of_problems += "\n  " + problems[i];
    if (problems.size() > shown)
      text_of_problems += "\n  ... and " + std::to_string(problems.size() - shown) + " more";
    return Error{
        ErrorCode::kInvalidArgument,
        name + ": not a faultline report (reports/schema/report.schema.json):" + text_of_problems};
  }
  return report;
}

}  // namespace faultline::harness
