#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// Where a report document breaks its schema (reports/schema/report.schema.json): one
/// "pointer: expected ..." line per field at fault; empty when it conforms.
std::vector<std::string> report_schema_problems(const nlohmann::json& report);

/// Reads a report.json written by `faultline run`: it must parse and conform to the schema.
/// An error names the file, and the line and column or the pointer and what was expected.
Result<nlohmann::json> read_report(const std::string& path);

/// The same for a document already in memory (fuzzing); `name` stands for the file.
Result<nlohmann::json> parse_report(const std::string& name, const std::string& text);

}  // namespace faultline::harness
