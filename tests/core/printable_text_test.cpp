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

TEST_CASE("printable text has no escape sequence and no character XML 1.0 forbids", "[unit]") {
  CHECK(printable("step \x1B[2J\x1B]0;owned\x07 done") == "step ?[2J?]0;owned? done");
  CHECK(printable("a\tb\nc\rd\x7F") == "a\tb\nc?d?");
  CHECK(printable("\xC2\x9B"
                  "31m") == "?31m");                           // C1 CSI
  CHECK(printable("x\xEF\xBF\xBEy\xEF\xBF\xBFz") == "x?y?z");  // U+FFFE, U+FFFF
  CHECK(printable("ünïcödé") == "ünïcödé");
}
