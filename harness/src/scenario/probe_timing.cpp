#include "probe_timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace faultline::harness {

namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at = static_cast<size_t>(std::lround(q * static_cast<double>(values.size() - 1)));
  return values[std::min(at, values.size() - 1)];
}

bool disturbed(double wait, double rtt) { return wait > kHostShareOfCleanRoundTrip * rtt; }

nlohmann::json side_waits(const std::vector<double>& waits, const std::vector<double>& rtts) {
  size_t count = 0;
  for (size_t i = 0; i < waits.size(); ++i) count += disturbed(waits[i], rtts[i]) ? 1 : 0;
  return {{"p50", quantile(waits, 0.5)},
          {"max", *std::max_element(waits.begin(), waits.end())},
          {"disturbed_round_trips", count}};
}

}  // namespace

nlohmann::json waits_message(const std::vector<double>& waits, bool measured) {
  if (!measured) return {{"run_queue_waits_ns", nullptr}};
  nlohmann::json nanoseconds = nlohmann::json::array();
  for (const double wait : waits) nanoseconds.push_back(static_cast<uint64_t>(wait * 1e9));
  return {{"run_queue_waits_ns", std::move(nanoseconds)}};
}

std::optional<std::vector<double>> peer_waits(const nlohmann::json& message, size_t round_trips) {
  const auto found = message.find("run_queue_waits_ns");
  if (found == message.end() || !found->is_array() || found->size() != round_trips)
    return std::nullopt;
  std::vector<double> waits;
  for (const auto& wait : *found) {
    if (!wait.is_number_unsigned()) return std::nullopt;
    waits.push_back(static_cast<double>(wait.get<uint64_t>()) * 1e-9);
  }
  return waits;
}

nlohmann::json round_trip_measurements(const RoundTripTimes& times) {
  const auto& rtts = times.rtts;
  nlohmann::json measured = {{"round_trips", rtts.size()},
                             {"rtt_seconds",
                              {{"p10", quantile(rtts, 0.1)},
                               {"p50", quantile(rtts, 0.5)},
                               {"p99", quantile(rtts, 0.99)},
                               {"min", *std::min_element(rtts.begin(), rtts.end())},
                               {"max", *std::max_element(rtts.begin(), rtts.end())}}}};
  if (!times.peer_waits || times.own_waits.size() != rtts.size()) return measured;
  const auto& peer = *times.peer_waits;
  measured["host_wait_seconds"] = {{"initiator", side_waits(times.own_waits, rtts)},
                                   {"responder", side_waits(peer, rtts)}};
  std::vector<double> clean;
  std::vector<double> residuals;  // every round trip less both sides' waits
  for (size_t i = 0; i < rtts.size(); ++i) {
    const double waits = times.own_waits[i] + peer[i];
    if (!disturbed(waits, rtts[i])) clean.push_back(rtts[i]);
    residuals.push_back(std::max(0.0, rtts[i] - waits));
  }
  nlohmann::json fabric = {{"round_trips", clean.size()},
                           {"residual_p10", quantile(residuals, 0.1)}};
  if (clean.size() >= std::max(std::min<size_t>(rtts.size(), 5), rtts.size() / 10)) {
    fabric["p10"] = quantile(clean, 0.1);
    fabric["p50"] = quantile(clean, 0.5);
  }
  measured["fabric_rtt_seconds"] = std::move(fabric);
  return measured;
}

}  // namespace faultline::harness
