// The probe's split of its round trips: a round trip during which a side waited for a CPU
// says nothing of the fabric; a peer's waits are taken only when they are waits.
#include "scenario/probe_timing.hpp"

#include <catch2/catch.hpp>

using namespace faultline::harness;
using nlohmann::json;

TEST_CASE("round trips a host's wait delayed are left out of the fabric's", "[unit]") {
  RoundTripTimes times;
  for (int i = 0; i < 50; ++i) {
    const bool busy = i % 2 == 0;  // every other round trip waited 900 us for a CPU
    times.rtts.push_back(busy ? 1.9e-3 : 20e-6 + i * 1e-7);
    times.own_waits.push_back(busy ? 900e-6 : 0);
  }
  times.peer_waits = std::vector<double>(50, 1e-6);  // 1 us: 5% of a 20 us round trip
  const json measured = round_trip_measurements(times);
  CHECK(measured.at("round_trips") == 50);
  CHECK(measured.at("fabric_rtt_seconds").at("round_trips") == 25);
  CHECK(measured.at("fabric_rtt_seconds").at("p10").get<double>() < 25e-6);
  CHECK(measured.at("fabric_rtt_seconds").at("p50").get<double>() < 25e-6);
  CHECK(measured.at("rtt_seconds").at("p50").get<double>() > 1e-3);
  CHECK(measured.at("host_wait_seconds").at("initiator").at("disturbed_round_trips") == 25);
  CHECK(measured.at("host_wait_seconds").at("responder").at("disturbed_round_trips") == 0);
  CHECK(measured.at("host_wait_seconds").at("initiator").at("max") == Approx(900e-6));
  // Every round trip less its waits: the busy ones' 1.9 ms less 0.9 ms is 1 ms.
  CHECK(measured.at("fabric_rtt_seconds").at("residual_p10").get<double>() < 25e-6);
  for (auto& rtt : times.rtts) rtt += 12e-3;  // a NIC 12 ms late on every round trip
  CHECK(round_trip_measurements(times).at("fabric_rtt_seconds").at("residual_p10").get<double>() >
        12e-3);
}

TEST_CASE("too few clean round trips judge nothing of the fabric", "[unit]") {
  RoundTripTimes times;
  times.rtts = std::vector<double>(50, 2e-3);
  times.own_waits = std::vector<double>(50, 0);
  times.peer_waits = std::vector<double>(50, 950e-6);
  for (int i = 0; i < 4; ++i) (*times.peer_waits)[i] = 0;  // four clean: fewer than five
  json fabric = round_trip_measurements(times).at("fabric_rtt_seconds");
  CHECK(fabric.at("round_trips") == 4);
  CHECK_FALSE(fabric.contains("p10"));
  (*times.peer_waits)[4] = 0;
  fabric = round_trip_measurements(times).at("fabric_rtt_seconds");
  CHECK(fabric.at("p10") == Approx(2e-3));
}

TEST_CASE("without the peer's waits the probe makes no split", "[unit]") {
  RoundTripTimes times;
  times.rtts = {20e-6, 30e-6};
  times.own_waits = {0, 0};
  const json measured = round_trip_measurements(times);
  CHECK_FALSE(measured.contains("host_wait_seconds"));
  CHECK_FALSE(measured.contains("fabric_rtt_seconds"));
  CHECK(measured.at("rtt_seconds").at("min") == Approx(20e-6));
}

TEST_CASE("a peer's waits are taken only as one non-negative integer per round trip", "[unit]") {
  const auto sent = waits_message({1e-6, 2.5e-3}, true);
  const auto taken = peer_waits(sent, 2);
  REQUIRE(taken);
  CHECK(taken->at(1) == Approx(2.5e-3));
  CHECK_FALSE(peer_waits(waits_message({}, false), 2));
  CHECK_FALSE(peer_waits(sent, 3));
  CHECK_FALSE(peer_waits(json{{"run_queue_waits_ns", {1, -2}}}, 2));
  CHECK_FALSE(peer_waits(json{{"run_queue_waits_ns", {1, 2.5}}}, 2));
  CHECK_FALSE(peer_waits(json{{"run_queue_waits_ns", "1,2"}}, 2));
  CHECK_FALSE(peer_waits(json::array(), 2));
}
