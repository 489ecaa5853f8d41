#include "schema_explainer.hpp"

#include "faultline/harness/base/strict_json.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "faultline/core/join.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

// valijson's context ["<root>", "[steps]", "[2]", "[op]"] as the tokens {"steps", "2", "op"}.
std::vector<std::string> tokens_of(const std::vector<std::string>& context) {
  std::vector<std::string> tokens;
  for (const auto& part : context) {
    if (part == "<root>") continue;
    tokens.push_back(part.size() >= 2 && part.front() == '[' && part.back() == ']'
                         ? part.substr(1, part.size() - 2)
                         : part);
  }
  return tokens;
}

const json* value_at(const json& document, const std::vector<std::string>& tokens) {
  const json* value = &document;
  for (const auto& token : tokens) {
    if (value->is_object() && value->contains(token)) {
      value = &value->at(token);
    } else if (value->is_array() && !token.empty() &&
               std::all_of(token.begin(), token.end(), ::isdigit) &&
               std::stoul(token) < value->size()) {
      value = &value->at(std::stoul(token));
    } else {
      return nullptr;
    }
  }
  return value;
}

class SchemaWalker {
 public:
  explicit SchemaWalker(const json& root) : root_(root) {}

  // Every subschema that applies to the value at `tokens`, following $ref, allOf, oneOf and
  // the if/then branches whose `if` holds for the document.
  std::vector<const json*> at(const json& document, const std::vector<std::string>& tokens) const {
    std::vector<const json*> current;
    expand(&root_, &document, current);
    std::vector<std::string> path;
    for (const auto& token : tokens) {
      path.push_back(token);
      const json* value = value_at(document, path);
      std::vector<const json*> next;
      for (const json* schema : current) {
        const json* child = nullptr;
        if (schema->contains("properties") && schema->at("properties").contains(token)) {
          child = &schema->at("properties").at(token);
        } else if (schema->contains("items") && schema->at("items").is_object()) {
          child = &schema->at("items");
        } else if (schema->contains("additionalProperties") &&
                   schema->at("additionalProperties").is_object()) {
          child = &schema->at("additionalProperties");
        }
        if (child != nullptr) expand(child, value, next);
      }
      current = std::move(next);
    }
    return current;
  }

 private:
  const json* resolve(const json* schema) const {
    while (schema->is_object() && schema->contains("$ref")) {
      const std::string ref = schema->at("$ref");
      if (ref.rfind("#/", 0) != 0) break;
      schema = &root_.at(json::json_pointer(ref.substr(1)));
    }
    return schema;
  }

  static bool holds(const json& condition, const json* value) {
    if (value == nullptr || !value->is_object() || !condition.contains("properties")) return false;
    for (const auto& [name, rule] : condition.at("properties").items()) {
      if (!value->contains(name)) return false;
      const json& actual = value->at(name);
      if (rule.contains("const") && rule.at("const") != actual) return false;
      if (rule.contains("enum")) {
        const auto& options = rule.at("enum");
        if (std::find(options.begin(), options.end(), actual) == options.end()) return false;
      }
    }
    return true;
  }

  void expand(const json* schema, const json* value, std::vector<const json*>& out) const {
    schema = resolve(schema);
    if (!schema->is_object()) return;
    out.push_back(schema);
    for (const char* key : {"allOf", "oneOf", "anyOf"}) {
      if (!schema->contains(key)) continue;
      for (const auto& part : schema->at(key)) expand(&part, value, out);
    }
    if (schema->contains("if") && schema->contains("then") && holds(schema->at("if"), value)) {
      expand(&schema->at("then"), value, out);
    }
  }

  const json& root_;
};

std::string list(const json& values, const std::string& conjunction = ", ") {
  std::string text;
  for (const auto& value : values)
    text += (text.empty() ? "" : conjunction) +
            (value.is_string() ? value.get<std::string>() : value.dump());
  return text;
}

// What the schemas together ask of a value, in words.
std::string describe(const std::vector<const json*>& schemas) {
  std::vector<std::string> parts;
  auto add = [&](std::string part) {
    if (std::find(parts.begin(), parts.end(), part) == parts.end())
      parts.push_back(std::move(part));
  };
  for (const json* schema : schemas) {
    if (schema->contains("enum")) add("one of " + list(schema->at("enum")));
    if (schema->contains("const")) add("exactly " + schema->at("const").dump());
    if (schema->contains("type")) {
      const json& type = schema->at("type");
      add(std::string("a") +
          (type == "integer" || type == "object" || type == "array" ? "n " : " ") +
          (type.is_string() ? type.get<std::string>() : list(type, " or ")));
    }
    if (schema->contains("pattern")) add("matching " + schema->at("pattern").get<std::string>());
    if (schema->contains("minimum")) add(">= " + schema->at("minimum").dump());
    if (schema->contains("maximum")) add("<= " + schema->at("maximum").dump());
    if (schema->contains("minItems")) add("at least " + schema->at("minItems").dump() + " items");
    if (schema->contains("minProperties") && schema->contains("maxProperties") &&
        schema->at("minProperties") == schema->at("maxProperties")) {
      add("exactly " + schema->at("minProperties").dump() + " entries");
    }
  }
  if (parts.empty()) return "a value the schema allows";
  return join(parts);
}

// The fields of the schemas that close the object (additionalProperties: false).
std::set<std::string> allowed_fields(const std::vector<const json*>& schemas) {
  std::set<std::string> fields;
  for (const json* schema : schemas) {
    if (!schema->contains("properties") || schema->value("additionalProperties", true) != false)
      continue;
    for (const auto& [name, _] : schema->at("properties").items()) fields.insert(name);
  }
  return fields;
}

// The last 'quoted' name in a valijson description: "... constraints: 'bogus'." -> bogus.
std::string quoted_field(const std::string& description) {
  const auto close = description.rfind('\'');
  if (close == std::string::npos || close == 0) return "";
  const auto open = description.rfind('\'', close - 1);
  return open == std::string::npos ? "" : description.substr(open + 1, close - open - 1);
}

// A oneOf of alternatives that each require one field ("exactly one of nth, every or
// probability"), with the ones the value has.
std::string exactly_one_of(const std::vector<const json*>& schemas, const json* value) {
  std::vector<std::string> fields;
  for (const json* schema : schemas) {
    if (!schema->contains("oneOf")) continue;
    for (const auto& part : schema->at("oneOf")) {
      if (part.size() == 1 && part.contains("required") && part.at("required").size() == 1)
        fields.push_back(part.at("required").at(0));
    }
  }
  if (fields.empty()) return "exactly one of the alternatives the schema allows";
  std::string text = "exactly one of the fields ";
  std::string present;
  for (size_t i = 0; i < fields.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == fields.size() ? " or " : ", ") + fields[i];
    if (value != nullptr && value->is_object() && value->contains(fields[i]))
      present += (present.empty() ? "" : " and ") + fields[i];
  }
  return text + (present.empty() ? "; got none" : "; got " + present);
}

std::string got(const json* value) {
  if (value == nullptr) return "";
  std::string text = value->dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return "; got " + text;
}

}  // namespace

std::vector<ExplainedProblem> explain_schema_errors(const json& schema, const json& document,
                                                    const std::vector<SchemaError>& errors) {
  const SchemaWalker walker(schema);
  // parent pointer -> its tokens and the fields missing there
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> missing;
  std::vector<ExplainedProblem> problems;
  auto add = [&](ExplainedProblem problem) {
    for (const auto& existing : problems) {
      if (existing.pointer == problem.pointer) return;  // one problem per field
    }
    problems.push_back(std::move(problem));
  };
  for (const auto& error : errors) {
    const auto tokens = tokens_of(error.context);
    const std::string pointer = json_pointer(tokens);
    // valijson also reports every enclosing schema that failed because of an inner failure.
    const bool enclosing = std::any_of(errors.begin(), errors.end(), [&](const SchemaError& other) {
      const std::string inner = json_pointer(tokens_of(other.context));
      return inner.size() > pointer.size() && inner.compare(0, pointer.size(), pointer) == 0 &&
             inner[pointer.size()] == '/';
    });
    if (enclosing) continue;
    if (error.description == "Failed to validate against exactly one child schema.") {
      add({pointer, exactly_one_of(walker.at(document, tokens), value_at(document, tokens))});
      continue;
    }
    if (error.description.rfind("Failed to validate against", 0) == 0) continue;
    const std::string& text = error.description;
    if (text.rfind("Missing required property", 0) == 0) {
      missing[pointer].first = tokens;
      missing[pointer].second.push_back(quoted_field(text));
      continue;
    }
    if (text.find("could not be validated using 'properties'") != std::string::npos) {
      const std::string field = quoted_field(text);
      std::string allowed;
      for (const auto& name : allowed_fields(walker.at(document, tokens)))
        allowed += (allowed.empty() ? "" : ", ") + name;
      add({pointer + "/" + field, "no field \"" + field + "\" here; fields allowed: " + allowed});
      continue;
    }
    add({pointer, describe(walker.at(document, tokens)) + got(value_at(document, tokens))});
  }
  for (const auto& [parent, where] : missing) {
    const auto& fields = where.second;
    if (fields.size() == 1) {
      std::vector<std::string> field_tokens = where.first;
      field_tokens.push_back(fields.front());
      add({parent + "/" + fields.front(),
           describe(walker.at(document, field_tokens)) + " (required, missing)"});
    } else {
      std::string names;
      for (const auto& field : fields) names += (names.empty() ? "" : " or ") + field;
      add({parent, "the field " + names + " (missing)"});
    }
  }
  // Never "valid" for a document the validator refused: name the innermost failure as it is.
  if (problems.empty() && !errors.empty()) {
    const SchemaError* innermost = &errors.front();
    for (const auto& error : errors)
      if (error.context.size() > innermost->context.size()) innermost = &error;
    add({json_pointer(tokens_of(innermost->context)),
         "a value the schema allows (" + innermost->description + ")"});
  }
  return problems;
}

}  // namespace faultline::harness
