#pragma once

#include <string>

namespace faultline {

/// The items of `items` (strings, any container) one after another, separated by ", ": what
/// an error message lists as the allowed or present ones.
template <typename Strings>
std::string join(const Strings& items) {
  std::string text;
  for (const auto& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

}  // namespace faultline
