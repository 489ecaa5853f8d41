#include "faultline/harness/base/strict_json.hpp"

#include <set>
#include <vector>

namespace faultline::harness {

namespace {

using nlohmann::json;

// "line L column C" of byte `offset` of `text`.
std::string line_and_column(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + " column " + std::to_string(column);
}

// Walks the text without building it, keeping the path, to find what a DOM parse hides.
class StrictnessCheck final : public nlohmann::json_sax<json> {
 public:
  StrictnessCheck(std::string_view text, JsonTextProblem& problem)
      : text_(text), problem_(problem) {}

  bool null() override { return value(); }
  bool boolean(bool /*value*/) override { return value(); }
  bool number_integer(number_integer_t /*value*/) override { return value(); }
  bool number_unsigned(number_unsigned_t /*value*/) override { return value(); }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return value(); }
  bool string(string_t& /*value*/) override { return value(); }
  bool binary(binary_t& /*value*/) override { return value(); }
  bool start_object(std::size_t /*elements*/) override {
    frames_.push_back({true, {}, "", 0});
    return true;
  }
  bool key(string_t& key) override {
    Frame& frame = frames_.back();
    const bool repeated = !frame.keys.insert(key).second;
    frame.key = key;
    if (repeated) {
      problem_ = {path(), "each key once in an object; \"" + key +
                              "\" appears twice (the last would "
                              "win without a word)"};
      return false;
    }
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return value();
  }
  bool start_array(std::size_t /*elements*/) override {
    frames_.push_back({false, {}, "", 0});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return value();
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) override {
    const std::string where = line_and_column(text_, position == 0 ? 0 : position - 1);
    if (error.id == 406) {  // out_of_range: a number overflow
      problem_ = {path(), "a number a double can hold; got " + last_token + " at " + where};
    } else {
      problem_ = {"", "a JSON document; it does not parse at " + where + " (" + error.what() + ")"};
    }
    return false;
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;   // object: the key of the value being read
    size_t index = 0;  // array: the index of the value being read
  };

  // A value ended: an array moves on to its next index.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }

  std::string path() const {
    std::vector<std::string> tokens;
    for (const Frame& frame : frames_)
      tokens.push_back(frame.object ? frame.key : std::to_string(frame.index));
    return json_pointer(tokens);
  }

  std::string_view text_;
  JsonTextProblem& problem_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string json_pointer(const std::vector<std::string>& tokens) {
  std::string pointer;
  for (const auto& token : tokens) {
    pointer += '/';
    for (char c : token) {
      if (c == '~') {
        pointer += "~0";
      } else if (c == '/') {
        pointer += "~1";
      } else {
        pointer += c;
      }
    }
  }
  return pointer;
}

std::optional<json> parse_json_strictly(std::string_view text, JsonTextProblem& problem) {
  StrictnessCheck check(text, problem);
  if (!json::sax_parse(text, &check)) return std::nullopt;
  return json::parse(text);
}

std::string text_at(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace faultline::harness
