#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schema_explainer.hpp"

namespace valijson {
class Schema;
}

namespace faultline::harness {

/// A JSON Schema parsed once, checking documents with one problem per field at fault (its
/// pointer and what the schema expects there).
class SchemaChecker {
 public:
  explicit SchemaChecker(const char* schema_text);
  ~SchemaChecker();
  SchemaChecker(const SchemaChecker&) = delete;
  SchemaChecker& operator=(const SchemaChecker&) = delete;

  std::vector<ExplainedProblem> check(const nlohmann::json& document) const;
  /// The same problems as "pointer: expected ..." lines.
  std::vector<std::string> problem_lines(const nlohmann::json& document) const;

 private:
  nlohmann::json document_;
  std::unique_ptr<valijson::Schema> schema_;
};

}  // namespace faultline::harness
