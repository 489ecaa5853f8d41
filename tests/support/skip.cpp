#include "support/skip.hpp"

namespace faultline::testing {

namespace {
std::string& reasons() {
  static std::string text;
  return text;
}
}  // namespace

void mark_skipped(std::string reason) { reasons() += (reasons().empty() ? "" : "; ") + reason; }

const std::string& skip_reasons() { return reasons(); }

}  // namespace faultline::testing
