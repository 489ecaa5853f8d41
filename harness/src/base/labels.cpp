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

}  // namespace faultline::harness
