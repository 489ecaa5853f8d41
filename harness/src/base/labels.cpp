#include "faultline/harness/base/labels.hpp"

#include <algorithm>
#include <cctype>

namespace faultline::harness {

namespace {

bool allowed_in_label(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == ':' ||
         c == '@' || c == '+' || c == '-';
}

}  // namespace

bool is_agent_label(const std::string& text) {
  return !text.empty() && text.size() <= 64 &&
         std::all_of(text.begin(), text.end(), allowed_in_label);
}

std::string agent_name_from_host(const std::string& host) {
  std::string name = host.substr(0, 64);
  for (char& c : name) c = allowed_in_label(c) ? c : '-';
  return name.empty() ? "agent" : name;
}

bool label_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (!digit(a[i]) || !digit(b[j])) {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
      continue;
    }
    // Two numbers: the shorter without its leading zeros is the smaller, else the first digit
    // that differs decides.
    const size_t a_start = i;
    const size_t b_start = j;
    while (i < a.size() && digit(a[i])) ++i;
    while (j < b.size() && digit(b[j])) ++j;
    const std::string x = a.substr(a_start, i - a_start);
    const std::string y = b.substr(b_start, j - b_start);
    const auto x_value = x.substr(std::min(x.find_first_not_of('0'), x.size()));
    const auto y_value = y.substr(std::min(y.find_first_not_of('0'), y.size()));
    if (x_value.size() != y_value.size()) return x_value.size() < y_value.size();
    if (x_value != y_value) return x_value < y_value;
    if (x.size() != y.size()) return x.size() < y.size();
  }
  return a.size() - i < b.size() - j;
}

}  // namespace faultline::harness
