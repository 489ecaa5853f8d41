// The monitor's localization on pair matrices whose answer is known: one bad NIC among six,
// a slow one, two under one rail, one bad link, a fabric that is bad all over, noise.
#include "faultline/harness/monitor/localization.hpp"

#include <catch2/catch.hpp>

using namespace faultline::harness::monitor;

namespace {

std::vector<MonitoredAgent> agents(size_t count, const std::vector<std::string>& rails = {}) {
  std::vector<MonitoredAgent> all;
  for (size_t i = 0; i < count; ++i)
    all.push_back(
        {"n" + std::to_string(i + 1), i < rails.size() ? rails[i] : "", "", "host", {}, {}});
  return all;
}

// All pairs, every round trip 40 us but those `adjust` changes.
std::vector<PairResult> all_pairs(const std::vector<MonitoredAgent>& of) {
  std::vector<PairResult> pairs;
  for (size_t i = 0; i < of.size(); ++i)
    for (size_t j = i + 1; j < of.size(); ++j)
      pairs.push_back({of[i].name, of[j].name, "pass", "", 40e-6, 60e-6, std::nullopt});
  return pairs;
}

bool touches(const PairResult& pair, const std::string& agent) {
  return pair.a == agent || pair.b == agent;
}

std::vector<std::string> named(const Localization& found) {
  std::vector<std::string> names;
  for (const auto& suspect : found.suspects) names.push_back(suspect.kind + " " + suspect.name);
  return names;
}

}  // namespace

TEST_CASE("a NIC whose pairs all fail is the one suspect", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) {
    if (!touches(pair, "n3")) continue;
    pair.verdict = "fail";
    // Long, as a real probe's are: its end names the host and device, and is kept.
    pair.observed =
        "n3 (responder): qp 0x11 wr_id 0x2 op RDMA_WRITE status REM_ACCESS_ERR "
        "(native 10) vendor_err 0x0 on host c07 device mlx5_1 port 1";
  }
  const Localization found = localize(six, pairs, {});
  REQUIRE(named(found) == std::vector<std::string>{"agent n3"});
  CHECK(found.suspects[0].reason == "failed");
  CHECK_THAT(found.suspects[0].evidence, Catch::Contains("5 of 5") &&
                                             Catch::Contains("REM_ACCESS_ERR") &&
                                             Catch::Contains("host c07 device mlx5_1 port 1") &&
                                             Catch::Contains("0 of 10 pairs bad"));
  CHECK(std::count(found.states.begin(), found.states.end(), PairState::kFailed) == 5);
}

TEST_CASE("a slow NIC is named against the fabric's own median, with its NIC's counters",
          "[unit]") {
  auto six = agents(6);
  six[4].counters_grown["hw_counters/rcvd_seq_err"] = 12;
  auto pairs = all_pairs(six);
  for (auto& pair : pairs)
    if (touches(pair, "n5")) pair.rtt_p50 = 5e-3;
  const Localization found = localize(six, pairs, {});
  REQUIRE(named(found) == std::vector<std::string>{"agent n5"});
  CHECK(found.suspects[0].reason == "slow");
  CHECK(found.median_rtt == Approx(40e-6));
  CHECK_THAT(found.suspects[0].evidence,
             Catch::Contains("5.00 ms") && Catch::Contains("rcvd_seq_err +12"));
}

TEST_CASE("the same slowness everywhere is no suspect: thresholds are relative", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) pair.rtt_p50 = 5e-3;
  CHECK(localize(six, pairs, {}).suspects.empty());
}

TEST_CASE("two bad NICs under one rail name the rail", "[unit]") {
  const auto six = agents(6, {"rail0", "rail0", "rail1", "rail1", "rail2", "rail2"});
  auto pairs = all_pairs(six);
  for (auto& pair : pairs)
    if (touches(pair, "n3") || touches(pair, "n4")) pair.verdict = "timeout";
  const auto names = named(localize(six, pairs, {}));
  CHECK(names == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("one bad pair between healthy agents is their link", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  pairs[7].verdict = "fail";  // n2 <-> n5
  const auto names = named(localize(six, pairs, {}));
  CHECK(names == std::vector<std::string>{"link n2<->n5"});
}

TEST_CASE("a fabric bad all over names no NIC", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (size_t i = 0; i < pairs.size(); i += 2) pairs[i].verdict = "error";
  for (size_t i = 1; i < pairs.size(); i += 4) pairs[i].verdict = "error";
  const auto found = localize(six, pairs, {});
  CHECK(named(found) == std::vector<std::string>{"fabric fabric"});
}

TEST_CASE("two agents cannot tell which end is bad, and one slow pair of six agents is no NIC",
          "[unit]") {
  const auto two = agents(2);
  auto pairs = all_pairs(two);
  pairs[0].verdict = "fail";
  CHECK(named(localize(two, pairs, {})) == std::vector<std::string>{"link n1<->n2"});
  const auto six = agents(6);
  auto six_pairs = all_pairs(six);
  six_pairs[0].rtt_p50 = 100e-6;  // 2.5 times the median: noise, not slow
  CHECK(localize(six, six_pairs, {}).suspects.empty());
}

TEST_CASE("two slow NICs of six are most pairs but not the fabric's median", "[unit]") {
  const auto six = agents(6, {"rail0", "rail0", "rail1", "rail1", "rail2", "rail2"});
  auto pairs = all_pairs(six);
  for (auto& pair : pairs)
    if (touches(pair, "n3") || touches(pair, "n4")) pair.rtt_p50 = 4e-3;
  const auto found = localize(six, pairs, {});
  CHECK(found.median_rtt == Approx(40e-6));
  CHECK(named(found) == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("slowness is judged on a pair's fastest tenth: a busy moment is no slow NIC", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) {
    pair.rtt_p10 = 30e-6;
    if (touches(pair, "n2")) pair.rtt_p50 = 3e-3;  // a host busy half of the time
  }
  CHECK(localize(six, pairs, {}).suspects.empty());
  for (auto& pair : pairs)
    if (touches(pair, "n2")) pair.rtt_p10 = 2e-3;  // slow on every round trip
  CHECK(named(localize(six, pairs, {})) == std::vector<std::string>{"agent n2"});
}

namespace {

// A pair whose hosts kept both its sides waiting for a CPU on every round trip: no fabric
// round trip left to judge.
void busy_hosts(PairResult& pair) {
  pair.rtt_p10 = 2e-3;
  pair.host = PairResult::HostSplit{50, 0, std::nullopt, std::nullopt, 930e-6, 930e-6, 48, 49};
}

void clean(PairResult& pair, double fabric) {
  pair.rtt_p10 = fabric;
  pair.host = PairResult::HostSplit{50, 49, fabric, fabric, 0, 0, 1, 1};
}

// Six agents, two to a rail, every pair clean at `fabric` but those of rail1's n3 and n4, two
// NICs that answer late: `late` with the others, `both_late` with each other (as measured).
struct Rail1Late {
  std::vector<MonitoredAgent> six =
      agents(6, {"rail0", "rail0", "rail1", "rail1", "rail2", "rail2"});
  std::vector<PairResult> pairs = all_pairs(six);

  Rail1Late(double fabric, double late, double both_late) {
    for (auto& pair : pairs) {
      const bool n3 = touches(pair, "n3");
      const bool n4 = touches(pair, "n4");
      clean(pair, n3 && n4 ? both_late : n3 || n4 ? late : fabric);
    }
  }
};

}  // namespace

TEST_CASE("pairs whose hosts kept them waiting for a CPU are host busy, never slow", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) {
    clean(pair, 17e-6);
    if (touches(pair, "n2") || (pair.a == "n5" && pair.b == "n6")) busy_hosts(pair);
  }
  const auto found = localize(six, pairs, {});
  CHECK(found.suspects.empty());
  CHECK(found.median_rtt == Approx(17e-6));
  CHECK(std::count(found.states.begin(), found.states.end(), PairState::kHostBusy) == 6);
  CHECK(std::count(found.states.begin(), found.states.end(), PairState::kSlow) == 0);
  REQUIRE(found.busy.size() == 6);  // both sides waited: each end of each busy pair
  const auto n2 = std::find_if(found.busy.begin(), found.busy.end(),
                               [](const BusyHost& busy) { return busy.agent == "n2"; });
  REQUIRE(n2 != found.busy.end());
  CHECK(n2->pairs == 5);
  CHECK(n2->of == 5);
  CHECK(n2->wait == Approx(930e-6));
  // Without the split the same round trips would have named n2 and a link slow.
  for (auto& pair : pairs) pair.host.reset();
  CHECK(named(localize(six, pairs, {})) == std::vector<std::string>{"agent n2", "link n5<->n6"});
}

TEST_CASE("a slow NIC is named on its fabric round trips while busy hosts leave few judged",
          "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) {
    clean(pair, 17e-6);
    if (touches(pair, "n4")) clean(pair, 4.1e-3);
    // n6 keeps two judged pairs: its slow one with n4 and a fine one with n1.
    if (touches(pair, "n6") && !touches(pair, "n4") && !touches(pair, "n1")) busy_hosts(pair);
    if ((pair.a == "n2" && pair.b == "n3") || (pair.a == "n4" && pair.b == "n5")) busy_hosts(pair);
  }
  const auto found = localize(six, pairs, {});
  CHECK(named(found) == std::vector<std::string>{"agent n4"});
  CHECK(found.median_rtt == Approx(17e-6));
  CHECK_THAT(found.suspects.at(0).evidence, Catch::Contains("4 of 4 of its pairs slow"));
}

TEST_CASE("a healthy agent left one judged pair, with a slow NIC, does not move the median",
          "[unit]") {
  // Measured beside stress-ng and the soak: n3 and n4 answer 12 ms late; n2's host was so busy
  // that its one judged pair was with n4. Three agents' fastest pairs were 12 ms, three 11 us:
  // their midpoint, 6 ms, took n3's and n4's pairs with the others for fine.
  Rail1Late round(11e-6, 12.3e-3, 24e-3);
  for (auto& pair : round.pairs) {
    const bool n2_busy = touches(pair, "n2") && !touches(pair, "n4");
    const bool measured_busy = (pair.a == "n4" && pair.b == "n5") ||
                               (pair.a == "n3" && pair.b == "n5") ||
                               (pair.a == "n1" && pair.b == "n4");
    if (n2_busy || measured_busy) busy_hosts(pair);
  }
  const auto found = localize(round.six, round.pairs, {});
  CHECK(found.median_rtt == Approx(11e-6));
  CHECK(named(found) == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("a healthy agent whose only judged pairs are with slow NICs is not named with them",
          "[unit]") {
  // Measured beside stress-ng: n1's busy host left it two judged pairs, with n3 and n4 (12 ms
  // late): 2 of 2 bad, as n3 and n4 are 5 of 5. Taken first (by name), it was named too.
  Rail1Late round(13e-6, 12.2e-3, 26e-3);
  for (auto& pair : round.pairs) {
    const bool healthy = !touches(pair, "n3") && !touches(pair, "n4");
    if (healthy && (touches(pair, "n1") || (pair.a == "n2" && pair.b == "n5"))) busy_hosts(pair);
  }
  const auto found = localize(round.six, round.pairs, {});
  CHECK(named(found) == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("healthy agents whose fast pairs all waited do not set the fabric's median", "[unit]") {
  // Measured beside stress-ng (ctest -L ofi, run 2 of three): n3 and n4 answer 12 ms late,
  // and the busy hosts left n1 and n6 judged only with them, while their pairs with the healthy
  // agents waited and left under a millisecond less their waits. Four of six agents' fastest
  // judged pairs were 12 ms: the fabric's median was 12 ms and nothing was slow.
  Rail1Late round(11e-6, 12.3e-3, 24e-3);
  for (auto& pair : round.pairs) {
    const bool healthy = !touches(pair, "n3") && !touches(pair, "n4");
    if (!healthy || !(touches(pair, "n1") || touches(pair, "n6"))) continue;
    busy_hosts(pair);
    pair.host->residual_p10 = 0.4e-3;
  }
  const auto found = localize(round.six, round.pairs, {});
  CHECK(found.median_rtt == Approx(11e-6));
  CHECK(named(found) == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("a healthy loaded round keeps every agent in the fabric's median", "[unit]") {
  // The same busy pairs without a slow NIC: no agent's fastest judged pair is far from the
  // round's fastest, so none is left out, and nothing is named.
  Rail1Late round(11e-6, 14e-6, 16e-6);
  for (auto& pair : round.pairs) {
    if (!(touches(pair, "n1") || touches(pair, "n6")) || touches(pair, "n3")) continue;
    busy_hosts(pair);
    pair.host->residual_p10 = 0.0;
  }
  const auto found = localize(round.six, round.pairs, {});
  CHECK(found.suspects.empty());
  CHECK(found.median_rtt == Approx(14e-6));
}

TEST_CASE("a slow NIC's busy pairs are judged against the healthy busy pairs, not between",
          "[unit]") {
  // Measured beside stress-ng: n3's pairs with n1, n2 and n6 waited too often to judge, and
  // left 8 to 10 ms less their waits; the healthy busy pairs left nothing. Halfway between, 4 ms
  // made those 8 to 10 ms no slower than the rest: n3 was left 2 of 2 judged, after n4.
  Rail1Late round(12e-6, 12.3e-3, 24e-3);
  for (auto& pair : round.pairs) {
    const bool slow_end = touches(pair, "n3") || touches(pair, "n4");
    const bool busy = (touches(pair, "n3") && !touches(pair, "n4") && !touches(pair, "n5")) ||
                      (pair.a == "n2" && pair.b == "n4") || (pair.a == "n1" && pair.b == "n5") ||
                      (pair.a == "n1" && pair.b == "n6");
    if (!busy) continue;
    busy_hosts(pair);
    pair.host->residual_p10 = slow_end ? 9e-3 : 0.0;
  }
  const auto found = localize(round.six, round.pairs, {});
  CHECK(named(found) == std::vector<std::string>{"agent n3", "agent n4", "rail rail1"});
}

TEST_CASE("a pair with few clean round trips is host busy: the few are no fabric measure",
          "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) clean(pair, 40e-6);
  // Measured beside stress-ng: 6 of 50 round trips escaped a measured wait, and even those
  // were slow.
  pairs.at(3).rtt_p10 = 1.3e-3;
  pairs.at(3).host = PairResult::HostSplit{50, 6, 1.3e-3, 1.9e-3, 410e-6, 380e-6, 30, 27};
  auto found = localize(six, pairs, {});
  CHECK(found.suspects.empty());
  CHECK(found.states.at(3) == PairState::kHostBusy);
  CHECK(found.busy.size() == 2);
  // Half clean is enough to judge: then the same fabric round trips are slow.
  pairs.at(3).host->clean = 25;
  found = localize(six, pairs, {});
  CHECK(found.states.at(3) == PairState::kSlow);
}

TEST_CASE("when every pair waited, busy pairs are judged against each other, less their waits",
          "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  // Measured beside stress-ng and a build: every round trip waited 1-4 ms for a CPU; less
  // those waits, healthy pairs keep 0.8-1.6 ms, pairs with n4 (answering 12 ms late) 13 ms.
  double spread = 0.8e-3;
  for (auto& pair : pairs) {
    busy_hosts(pair);
    pair.host->residual_p10 = spread;
    spread = spread >= 1.6e-3 ? 0.8e-3 : spread + 0.2e-3;
  }
  auto found = localize(six, pairs, {});
  CHECK(found.suspects.empty());  // the same everywhere: a busy machine, no NIC
  CHECK(std::count(found.states.begin(), found.states.end(), PairState::kHostBusy) == 15);
  CHECK(found.busy_median_residual > 0.7e-3);
  for (auto& pair : pairs)
    if (touches(pair, "n4")) pair.host->residual_p10 = 13e-3;
  found = localize(six, pairs, {});
  REQUIRE(named(found) == std::vector<std::string>{"agent n4"});
  CHECK(std::count(found.states.begin(), found.states.end(), PairState::kSlow) == 5);
  CHECK_THAT(found.suspects.at(0).evidence,
             Catch::Contains("5 of 5 of its pairs slow: round trips 13.00 ms") &&
                 Catch::Contains("busy hosts' pairs, less their waits for a CPU"));
  // Above 3 times the busy median, but less than its own waits: the hosts' part is the larger,
  // and the pair stays busy.
  for (auto& pair : pairs)
    if (touches(pair, "n4")) pair.host->residual_p10 = 1e-3;
  pairs.at(0).host->residual_p10 = 4e-3;
  pairs.at(0).host->a_wait = pairs.at(0).host->b_wait = 3e-3;
  found = localize(six, pairs, {});
  CHECK(found.states.at(0) == PairState::kHostBusy);
  CHECK(found.suspects.empty());
  // Two agents' busy pairs are no population to judge against: their one pair stays busy.
  auto few = all_pairs(six);
  for (auto& pair : few) clean(pair, 40e-6);
  busy_hosts(few.at(0));
  few.at(0).host->residual_p10 = 13e-3;
  CHECK(localize(six, few, {}).states.at(0) == PairState::kHostBusy);
}

TEST_CASE("a busy host names the side that waited, not its peer", "[unit]") {
  const auto six = agents(6);
  auto pairs = all_pairs(six);
  for (auto& pair : pairs) {
    clean(pair, 17e-6);
    if (pair.a == "n1" && pair.b == "n2") {
      busy_hosts(pair);
      pair.host->b_wait = 0;
      pair.host->b_disturbed = 2;
    }
  }
  const auto found = localize(six, pairs, {});
  REQUIRE(found.busy.size() == 1);
  CHECK(found.busy[0].agent == "n1");
  CHECK(found.busy[0].pairs == 1);
}
