#include "faultline/core/closest_names.hpp"

#include <algorithm>
#include <numeric>

namespace faultline {

namespace {

// Levenshtein distance, one row at a time.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(const std::string& wanted,
                                       const std::vector<std::string>& known, size_t count) {
  struct Candidate {
    bool contains;
    size_t distance;
    std::string name;
  };
  const size_t furthest = std::max<size_t>(2, wanted.size() / 3);
  std::vector<Candidate> candidates;
  for (const auto& name : known) {
    const bool contains = !wanted.empty() && name.find(wanted) != std::string::npos;
    const size_t distance = edit_distance(wanted, name);
    if (contains || distance <= furthest) candidates.push_back({contains, distance, name});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.contains != b.contains) return a.contains;
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.name < b.name;
  });
  std::vector<std::string> names;
  for (size_t i = 0; i < candidates.size() && i < count; ++i) names.push_back(candidates[i].name);
  return names;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string text = "did you mean " + names[0];
  for (size_t i = 1; i < names.size(); ++i)
    text += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return text + "?";
}

}  // namespace faultline
