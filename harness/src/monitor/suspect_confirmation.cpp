#include "suspect_confirmation.hpp"

#include <utility>
#include <vector>

namespace faultline::harness::monitor {

void SuspectConfirmation::confirm(Localization& found) {
  std::map<std::string, size_t> held;
  std::vector<Suspect> named;
  for (auto& suspect : found.suspects) {
    const std::string key = suspect.kind + " " + suspect.name + " " + suspect.reason;
    const auto before = held_.find(key);
    suspect.rounds = (before != held_.end() ? before->second : 0) + 1;
    held[key] = suspect.rounds;
    (suspect.rounds >= rounds_ ? named : found.watching).push_back(std::move(suspect));
  }
  found.suspects = std::move(named);
  held_ = std::move(held);
}

}  // namespace faultline::harness::monitor
