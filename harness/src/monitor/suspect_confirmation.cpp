#include "suspect_confirmation.hpp"

#include <algorithm>
#include <utility>

namespace faultline::harness::monitor {

namespace {

bool share_an_agent(const std::vector<std::string>& some, const std::vector<std::string>& others) {
  return std::any_of(some.begin(), some.end(), [&](const std::string& agent) {
    return std::find(others.begin(), others.end(), agent) != others.end();
  });
}

}  // namespace

void SuspectConfirmation::confirm(Localization& found) {
  std::vector<Held> held;
  std::vector<Suspect> named;
  for (auto& suspect : found.suspects) {
    size_t before = 0;
    for (const Held& last : last_)
      if (last.reason == suspect.reason && share_an_agent(last.agents, suspect.agents))
        before = std::max(before, last.rounds);
    suspect.rounds = before + 1;
    held.push_back({suspect.reason, suspect.agents, suspect.rounds});
    (suspect.rounds >= rounds_ ? named : found.watching).push_back(std::move(suspect));
  }
  found.suspects = std::move(named);
  last_ = std::move(held);
}

}  // namespace faultline::harness::monitor
