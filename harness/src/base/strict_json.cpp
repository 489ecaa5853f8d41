#include "faultline/harness/base/strict_json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "faultline/core/json_depth.hpp"

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
  if (const size_t depth = json_nesting_depth(text); depth > kMaxJsonDepth) {
    problem = {"", "at most " + std::to_string(kMaxJsonDepth) + " levels of nesting; it nests " +
                       std::to_string(depth)};
    return std::nullopt;
  }
  StrictnessCheck check(text, problem);
  if (!json::sax_parse(text, &check)) return std::nullopt;
  return json::parse(text);
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, size_t max_bytes) {
  const auto refused = [&path](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument, path + ": " + why};
  };
  // Without O_NONBLOCK, opening a FIFO waits for a writer that may never come.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return refused(std::string("cannot be read: ") + std::strerror(errno));
  struct stat info {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &info) != 0) {
    problem = std::string("cannot be read: ") + std::strerror(errno);
  } else if (!S_ISREG(info.st_mode)) {
    problem = kind_of(info.st_mode) + ", not a file";
  } else if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    problem = "larger than " + std::to_string(max_bytes >> 20) + " MiB (" +
              std::to_string(info.st_size) + " bytes)";
  } else {
    text.resize(static_cast<size_t>(info.st_size));
    size_t got = 0;
    while (got < text.size()) {  // a file that grows while read is cut at the size it had
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) problem = std::string("cannot be read: ") + std::strerror(errno);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (!problem.empty()) return refused(problem);
  return text;
}

Result<json> parse_json_text(const std::string& name, std::string_view text) {
  JsonTextProblem problem;
  auto parsed = parse_json_strictly(text, problem);
  if (!parsed) {
    return Error{ErrorCode::kInvalidArgument,
                 name + ": " + (problem.pointer.empty() ? "" : problem.pointer + ": ") +
                     "expected " + problem.expected};
  }
  return std::move(*parsed);
}

Result<json> read_json_file(const std::string& path, size_t max_bytes) {
  auto text = read_input_file(path, max_bytes);
  if (!text.ok()) return std::move(text).take_error();
  return parse_json_text(path, text.value());
}

std::string text_at(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace faultline::harness
