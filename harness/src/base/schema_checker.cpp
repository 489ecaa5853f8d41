#include "schema_checker.hpp"

#include <locale>
#include <mutex>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

namespace faultline::harness {

namespace {

// The schemas' "pattern"s compile a std::regex on every validation, whose scanner reads the
// global locale's ctype<char>::narrow table, which libstdc++ fills lazily, one character at a
// time, without a lock: two threads validating at once (the coordinator's connections) race
// on it (ThreadSanitizer). Filled once here, before any validation, it is only read after.
void fill_narrow_table_once() {
  static std::once_flag filled;
  std::call_once(filled, [] {
    const auto& ctype = std::use_facet<std::ctype<char>>(std::locale());
    for (int c = 0; c < 256; ++c) (void)ctype.narrow(static_cast<char>(c), '\0');
  });
}

}  // namespace

SchemaChecker::SchemaChecker(const char* schema_text)
    : document_(nlohmann::json::parse(schema_text)), schema_(std::make_unique<valijson::Schema>()) {
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter adapter(document_);
  parser.populateSchema(adapter, *schema_);
}

SchemaChecker::~SchemaChecker() = default;

std::vector<ExplainedProblem> SchemaChecker::check(const nlohmann::json& document) const {
  fill_narrow_table_once();
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  if (validator.validate(*schema_, adapter, &results)) return {};
  std::vector<SchemaError> errors;
  for (const auto& error : results) errors.push_back({error.context, error.description});
  return explain_schema_errors(document_, document, errors);
}

std::vector<std::string> SchemaChecker::problem_lines(const nlohmann::json& document) const {
  std::vector<std::string> lines;
  for (const auto& problem : check(document))
    lines.push_back((problem.pointer.empty() ? "/" : problem.pointer) + ": expected " +
                    problem.expected);
  return lines;
}

}  // namespace faultline::harness
