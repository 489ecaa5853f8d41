// A suspect is named once it has held for the last K rounds (`faultline monitor --confirm K`):
// a host busy for one round, or one lost probe, pages no one; until then it is watched.
#pragma once

#include <map>
#include <string>

#include "faultline/harness/monitor/localization.hpp"

namespace faultline::harness::monitor {

class SuspectConfirmation {
 public:
  /// `rounds`: how many consecutive rounds a suspect must hold (1: named at once).
  explicit SuspectConfirmation(size_t rounds) : rounds_(rounds == 0 ? 1 : rounds) {}

  /// Counts each of this round's suspects (by kind, name and reason; a round without it starts
  /// it over) and moves those held for fewer than `rounds` rounds to `found.watching`.
  void confirm(Localization& found);

  size_t rounds() const { return rounds_; }

 private:
  size_t rounds_;
  std::map<std::string, size_t> held_;  ///< "kind name reason" -> consecutive rounds
};

}  // namespace faultline::harness::monitor
