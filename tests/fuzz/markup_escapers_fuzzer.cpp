// What a report's values become in summary.md and junit.xml: any bytes a program or a peer put
// there come out as text with no tag or entity of their own, no escape sequence, and nothing
// XML 1.0 forbids.
#include <cstdlib>
#include <string_view>

#include "faultline/core/printable_text.hpp"
#include "faultline/reports/formats.hpp"
#include "fuzz_input.hpp"

namespace {

bool is_text(std::string_view text) {
  if (faultline::valid_utf8(text) != text) return false;
  for (char c : text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return false;
  return text.find("\xEF\xBF\xBE") == std::string_view::npos &&
         text.find("\xEF\xBF\xBF") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string value = faultline::fuzz::as_text(data, size);
  const nlohmann::json scenario = {{"id", value},
                                   {"verdict", "fail"},
                                   {"observed", value},
                                   {"evidence", value},
                                   {"hint", value},
                                   {"expected", value},
                                   {"duration_ms", 1.0},
                                   {"source", value},
                                   {"agents", {{"initiator", "a"}, {"responder", "b"}}}};
  const nlohmann::json report = {
      {"schema_version", 1},
      {"run", {{"suite", value}, {"host", value}, {"started_at", value}, {"complete", true}}},
      {"summary", {{"total", 1}, {"finished", 1}}},
      {"scenarios", {scenario}}};
  const std::string markdown = faultline::reports::to_markdown(report);
  const std::string junit = faultline::reports::to_junit(report);
  if (!is_text(markdown) || !is_text(junit)) std::abort();
  // The value's own '<' never opens a tag in the Markdown: only the <br> it writes itself.
  for (size_t at = markdown.find('<'); at != std::string::npos; at = markdown.find('<', at + 1)) {
    const std::string_view rest = std::string_view(markdown).substr(at + 1);
    const bool opens = !rest.empty() && (std::isalpha(static_cast<unsigned char>(rest[0])) ||
                                         rest[0] == '/' || rest[0] == '!' || rest[0] == '?');
    if (opens && rest.substr(0, 3) != "br>") std::abort();
  }
  return 0;
}
