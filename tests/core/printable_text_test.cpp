// Bytes from programs and peers as text: valid UTF-8 kept, the rest replaced, nothing a terminal
// or XML 1.0 would take as more than text.
#include <catch2/catch.hpp>

#include "faultline/core/printable_text.hpp"

using faultline::printable;
using faultline::valid_utf8;

TEST_CASE("valid UTF-8 passes as it is, and each byte of an invalid sequence becomes U+FFFD",
          "[unit]") {
  CHECK(valid_utf8("ok é € 𝄞") == "ok é € 𝄞");
  CHECK(valid_utf8("ok \xFF\n") == "ok \xEF\xBF\xBD\n");
  CHECK(valid_utf8("\xC3") == "\xEF\xBF\xBD");                  // truncated
  CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  CHECK(valid_utf8("\xED\xA0\x80").size() == 9);                // a surrogate: three bytes
  CHECK(valid_utf8("\xF4\x90\x80\x80").size() == 12);           // above U+10FFFF
  CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("printable text has no escape sequence and no character XML 1.0 forbids: each is shown",
          "[unit]") {
  CHECK(printable("step \x1B[2J\x1B]0;owned\x07 done") == "step \\e[2J\\e]0;owned\\x07 done");
  CHECK(printable("a\tb\nc\rd\x7F") == "a\tb\nc\\rd\\x7f");
  CHECK(printable(std::string("nul\0", 4)) == "nul\\x00");
  CHECK(printable("\xC2\x9B"
                  "31m") == "\\u009b31m");                                 // C1 CSI
  CHECK(printable("x\xEF\xBF\xBEy\xEF\xBF\xBFz") == "x\\ufffey\\uffffz");  // U+FFFE, U+FFFF
  CHECK(printable("ünïcödé") == "ünïcödé");
  CHECK(printable("bad \xFF byte") == "bad \xEF\xBF\xBD byte");
}

TEST_CASE("bytes that are not UTF-8 are kept as \\xNN, valid text as it is", "[unit]") {
  CHECK(faultline::escape_invalid_utf8("/tmp/prog\xFF\xFE arg é") == "/tmp/prog\\xff\\xfe arg é");
  CHECK(faultline::escape_invalid_utf8("tab\tesc\x1B") == "tab\tesc\x1B");
}
