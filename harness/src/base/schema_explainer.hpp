#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace faultline::harness {

/// One schema failure as valijson reports it: where (its context path) and what.
struct SchemaError {
  std::vector<std::string> context;  ///< ["<root>", "[steps]", "[2]", "[op]"]
  std::string description;
};

/// A problem a person can act on: the JSON pointer of the field and what the schema expects
/// there (its type, allowed values, pattern, range), with what the file has.
struct ExplainedProblem {
  std::string pointer;
  std::string expected;
};

/// Turns valijson's errors into one problem per field: enclosing schemas that failed only
/// because of an inner failure are left out; a missing or unknown field is named by its own
/// pointer.
std::vector<ExplainedProblem> explain_schema_errors(const nlohmann::json& schema,
                                                    const nlohmann::json& document,
                                                    const std::vector<SchemaError>& errors);

}  // namespace faultline::harness
