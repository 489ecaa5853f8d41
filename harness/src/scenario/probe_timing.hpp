// The probe's round trips, split into the host's part and the fabric's (docs/monitoring.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace faultline::harness {

/// A round trip says something of the fabric only when its two sides together waited for a CPU
/// (RunQueueClock) at most this share of it.
inline constexpr double kHostShareOfCleanRoundTrip = 0.1;

/// What the initiator measured: each round trip's time, and each side's run-queue wait during
/// it (seconds; the responder's from its exchange, absent where either side could not tell).
struct RoundTripTimes {
  std::vector<double> rtts;
  std::vector<double> own_waits;
  std::optional<std::vector<double>> peer_waits;
};

/// The waits a side sends its peer (nanoseconds, one per round trip).
nlohmann::json waits_message(const std::vector<double>& waits, bool measured);
/// The peer's waits from its message: none when it measured none, or when the message is not
/// `round_trips` non-negative integers (a peer's word is checked, never trusted).
std::optional<std::vector<double>> peer_waits(const nlohmann::json& message, size_t round_trips);

/// The probe's `rtt_seconds` (every round trip), `host_wait_seconds` (each side's wait: its p50,
/// max and the round trips it disturbed) and `fabric_rtt_seconds` (the clean round trips: how
/// many, and their p10 and p50 when there are enough to judge, at least five or a tenth).
nlohmann::json round_trip_measurements(const RoundTripTimes& times);

}  // namespace faultline::harness
