// A suspect is named once it has held for the last K rounds (`faultline monitor --confirm K`):
// a host busy for one round, or one lost probe, pages no one; until then it is watched.
#pragma once

#include <string>
#include <vector>

#include "faultline/harness/monitor/localization.hpp"

namespace faultline::harness::monitor {

class SuspectConfirmation {
 public:
  /// `rounds`: how many consecutive rounds a suspect must hold (1: named at once).
  explicit SuspectConfirmation(size_t rounds) : rounds_(rounds == 0 ? 1 : rounds) {}

  /// Counts each of this round's suspects and moves those held for fewer than `rounds` rounds
  /// to `found.watching`. A suspect holds on from the last round's suspects of the same reason
  /// that share an agent with it: one fault may be localized at another level from round to
  /// round (a link n3<->n4 one round, rail1 of n3 and n4 the next, as a busy host hides some
  /// pairs); a round without any starts it over.
  void confirm(Localization& found);

  size_t rounds() const { return rounds_; }

 private:
  struct Held {
    std::string reason;
    std::vector<std::string> agents;
    size_t rounds = 0;
  };
  size_t rounds_;
  std::vector<Held> last_;  ///< the last round's suspects, named or watched
};

}  // namespace faultline::harness::monitor
