// A program's output as `sut exec` reads it: bytes in chunks of any size, lines to the checker
// and the report. Every line kept is valid UTF-8 (sut.json can hold it) and within the length
// limit; nothing read is lost from the count.
#include <cstdlib>

#include "faultline/core/printable_text.hpp"
#include "fuzz_input.hpp"
#include "sut/output_checker.hpp"
#include "sut/output_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::harness::sut;
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;  // how the pipe happened to deliver it
  const std::string bytes = faultline::fuzz::as_text(data + 1, size - 1);
  auto checker = OutputChecker::compile({"ok", "(?i)wrong.*data", "error|fail"});
  if (!checker.ok()) std::abort();
  const OutputLimits limits{64, 256, 4, 4};
  OutputReader reader(
      -1,
      [&](const OutputLine& line) {
        if (line.text.size() > 3 * limits.longest_watched_line) std::abort();
        checker->watch(line);
      },
      limits);
  for (size_t at = 0; at < bytes.size(); at += chunk)
    reader.feed(std::string_view(bytes).substr(at, chunk), static_cast<int64_t>(at));
  reader.finish(0);
  if (reader.bytes() != bytes.size()) std::abort();
  for (const auto& line : reader.kept()) {
    if (faultline::valid_utf8(line.text) != line.text) std::abort();
    if (line.text.size() > 3 * limits.longest_line + 64) std::abort();
    (void)nlohmann::json(line.text).dump();
  }
  (void)checker->first_error_since(0);
  return 0;
}
