#include "schema_checker.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
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

// Whether `value` holds an unsigned number above INT64_MAX: valijson reads integers as int64_t,
// so 2^63 and above would fail ">= 0" although in range.
bool has_huge_unsigned(const nlohmann::json& value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!value.is_structured()) return false;
  return std::any_of(value.begin(), value.end(), has_huge_unsigned);
}

// The same document with each of those as INT64_MAX, for validation only: no schema here bounds
// a count between the two.
void clamp_huge_unsigned(nlohmann::json& value) {
  if (value.is_number_unsigned() && has_huge_unsigned(value)) {
    value = std::numeric_limits<int64_t>::max();
  } else if (value.is_structured()) {
    for (auto& element : value) clamp_huge_unsigned(element);
  }
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
  nlohmann::json clamped;
  if (has_huge_unsigned(document)) {
    clamped = document;
    clamp_huge_unsigned(clamped);
  }
  valijson::adapters::NlohmannJsonAdapter adapter(clamped.is_null() ? document : clamped);
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
