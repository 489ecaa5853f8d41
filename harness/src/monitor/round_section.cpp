#include "round_section.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "faultline/core/printable_text.hpp"

namespace faultline::harness::monitor {

namespace {

using nlohmann::json;

std::optional<double> seconds_at(const json& side, const std::string& path) {
  const json::json_pointer at("/details/probe/" + path);
  if (!side.is_object() || !side.contains(at) || !side.at(at).is_number()) return std::nullopt;
  // A peer's number: a round trip of an hour or more (1e308) is no measurement, and would make
  // the round's median infinite.
  const double value = side.at(at).get<double>();
  return std::isfinite(value) && value >= 0 && value < 3600 ? std::optional(value) : std::nullopt;
}

std::optional<size_t> count_at(const json& side, const std::string& path, size_t most) {
  const json::json_pointer at("/details/probe/" + path);
  if (!side.contains(at) || !side.at(at).is_number_integer()) return std::nullopt;
  const auto value = side.at(at).get<int64_t>();
  return value >= 0 && static_cast<uint64_t>(value) <= most
             ? std::optional<size_t>(static_cast<size_t>(value))
             : std::nullopt;
}

// The probe's split of its round trips (probe_timing.hpp), when it made one and every number
// in it is one.
std::optional<PairResult::HostSplit> host_split(const json& initiator) {
  if (!initiator.is_object() ||
      !initiator.contains(json::json_pointer("/details/probe/host_wait_seconds")))
    return std::nullopt;
  PairResult::HostSplit split;
  const auto round_trips = count_at(initiator, "round_trips", 1'000'000);
  if (!round_trips) return std::nullopt;
  split.round_trips = *round_trips;
  const auto clean = count_at(initiator, "fabric_rtt_seconds/round_trips", split.round_trips);
  const auto a_wait = seconds_at(initiator, "host_wait_seconds/initiator/p50");
  const auto b_wait = seconds_at(initiator, "host_wait_seconds/responder/p50");
  const auto a_disturbed =
      count_at(initiator, "host_wait_seconds/initiator/disturbed_round_trips", split.round_trips);
  const auto b_disturbed =
      count_at(initiator, "host_wait_seconds/responder/disturbed_round_trips", split.round_trips);
  if (!clean || !a_wait || !b_wait || !a_disturbed || !b_disturbed) return std::nullopt;
  split.clean = *clean;
  split.a_wait = *a_wait;
  split.b_wait = *b_wait;
  split.a_disturbed = *a_disturbed;
  split.b_disturbed = *b_disturbed;
  split.fabric_p10 = seconds_at(initiator, "fabric_rtt_seconds/p10");
  split.fabric_p50 = seconds_at(initiator, "fabric_rtt_seconds/p50");
  split.residual_p10 = seconds_at(initiator, "fabric_rtt_seconds/residual_p10");
  return split;
}

// Adds what one side's device showed to `agent`: error completions and counters that grew.
void add_device_evidence(MonitoredAgent& agent, const json& side) {
  const json::json_pointer completions("/details/traffic/completions");
  if (side.contains(completions) && side.at(completions).is_object()) {
    for (const auto& [status, count] : side.at(completions).items())
      if (status != "SUCCESS" && count.is_number_unsigned() && count.get<uint64_t>() > 0)
        agent.completion_errors[printable(status)] += count.get<uint64_t>();  // a peer's words
  }
  const json::json_pointer grown("/details/port_counters/grown");
  if (side.contains(grown) && side.at(grown).is_object()) {
    for (const auto& [counter, count] : side.at(grown).items())
      if (count.is_number_unsigned() && count.get<uint64_t>() > 0)
        agent.counters_grown[printable(counter)] += count.get<uint64_t>();
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

json pair_entries(const RoundInput& input, const Localization& found) {
  json pairs = json::array();
  for (size_t i = 0; i < input.pairs.size(); ++i) {
    const PairResult& pair = input.pairs[i];
    json entry = {{"a", pair.a},
                  {"b", pair.b},
                  {"verdict", pair.verdict},
                  {"state", to_string(found.states[i])}};
    if (pair.rtt_p50) entry["rtt_p50_seconds"] = *pair.rtt_p50;
    if (pair.rtt_p99) entry["rtt_p99_seconds"] = *pair.rtt_p99;
    if (pair.rtt_p10) entry["rtt_p10_seconds"] = *pair.rtt_p10;
    if (pair.host) {
      entry["clean_round_trips"] = pair.host->clean;
      entry["round_trips"] = pair.host->round_trips;
      entry["host_wait_seconds"] = {{"a", pair.host->a_wait}, {"b", pair.host->b_wait}};
      if (pair.host->fabric_p10) entry["fabric_rtt_p10_seconds"] = *pair.host->fabric_p10;
      if (pair.host->fabric_p50) entry["fabric_rtt_p50_seconds"] = *pair.host->fabric_p50;
      if (pair.host->residual_p10) entry["fabric_residual_p10_seconds"] = *pair.host->residual_p10;
    }
    pairs.push_back(std::move(entry));
  }
  return pairs;
}

// An agent's health: its pairs by state, its round trips, whether it is named or its host busy.
json agent_entry(const MonitoredAgent& agent, const RoundInput& input, const Localization& found) {
  std::map<PairState, size_t> states;
  size_t tested = 0;
  std::vector<double> p50s;
  double p99 = 0;
  for (size_t i = 0; i < input.pairs.size(); ++i) {
    const PairResult& pair = input.pairs[i];
    if (pair.a != agent.name && pair.b != agent.name) continue;
    ++tested;
    ++states[found.states[i]];
    if (pair.rtt_p50) p50s.push_back(*pair.rtt_p50);
    if (pair.rtt_p99) p99 = std::max(p99, *pair.rtt_p99);
  }
  const bool suspect = std::any_of(found.suspects.begin(), found.suspects.end(), [&](auto& one) {
    return one.kind == "agent" && one.name == agent.name;
  });
  json entry = {{"name", agent.name},
                {"rail", agent.rail},
                {"switch", agent.switch_label},
                {"host", agent.host},
                {"pairs", tested},
                {"failed", states[PairState::kFailed]},
                {"slow", states[PairState::kSlow]},
                {"host_busy", states[PairState::kHostBusy]},
                {"suspect", suspect},
                {"completion_errors", agent.completion_errors},
                {"counters_grown", agent.counters_grown}};
  if (!p50s.empty()) {
    entry["rtt_p50_seconds"] = median(p50s);
    entry["rtt_p99_seconds"] = p99;
  }
  for (const auto& busy : found.busy)
    if (busy.agent == agent.name) entry["host_wait_seconds"] = busy.wait;
  return entry;
}

json suspect_entries(const std::vector<Suspect>& all) {
  json list = json::array();
  for (const auto& suspect : all) {
    list.push_back({{"kind", suspect.kind},
                    {"name", suspect.name},
                    {"reason", suspect.reason},
                    {"evidence", suspect.evidence},
                    {"agents", suspect.agents},
                    {"rounds", suspect.rounds}});
  }
  return list;
}

json busy_entries(const std::vector<BusyHost>& all) {
  json list = json::array();
  for (const auto& busy : all) {
    list.push_back({{"agent", busy.agent},
                    {"host", busy.host},
                    {"pairs", busy.pairs},
                    {"of", busy.of},
                    {"wait_seconds", busy.wait}});
  }
  return list;
}

}  // namespace

RoundInput round_input(const std::vector<AgentRecord>& agents,
                       const std::vector<ScenarioRun>& runs) {
  RoundInput input;
  std::map<std::string, size_t> index;  // agent id -> its place in input.agents
  // An agent lost during the round stays in it: its pairs' errors say so.
  for (const auto& record : agents) {
    index[record.id] = input.agents.size();
    input.agents.push_back(
        {record.name, record.rail, record.hello.value("switch", ""), record.host, {}, {}});
  }
  for (const auto& run : runs) {
    if (run.agents.size() != 2 || !index.contains(run.initiator) || !index.contains(run.responder))
      continue;  // a ring
    PairResult pair;
    pair.a = input.agents[index.at(run.initiator)].name;
    pair.b = input.agents[index.at(run.responder)].name;
    pair.verdict = std::string(to_string(run.verdict));
    pair.observed = run.observed;
    const json initiator = run.sides.value(run.initiator, json());
    pair.rtt_p50 = seconds_at(initiator, "rtt_seconds/p50");
    pair.rtt_p99 = seconds_at(initiator, "rtt_seconds/p99");
    pair.rtt_p10 = seconds_at(initiator, "rtt_seconds/p10");
    pair.host = host_split(initiator);
    for (const auto& id : run.agents)
      add_device_evidence(input.agents[index.at(id)], run.sides.value(id, json()));
    input.pairs.push_back(std::move(pair));
  }
  return input;
}

json round_section(uint64_t round, const std::string& started_at, double seconds,
                   const RoundInput& input, const Localization& found,
                   const LocalizationSettings& settings, double interval_seconds) {
  json agents = json::array();
  for (const auto& agent : input.agents) agents.push_back(agent_entry(agent, input, found));
  json section = {{"round", round},
                  {"started_at", started_at},
                  {"duration_seconds", seconds},
                  {"interval_seconds", interval_seconds},
                  {"slow_factor", settings.slow_factor},
                  {"confirm_rounds", settings.confirm_rounds},
                  {"median_rtt_seconds", found.median_rtt},
                  {"agents", agents},
                  {"pairs", pair_entries(input, found)},
                  {"suspects", suspect_entries(found.suspects)},
                  {"watching", suspect_entries(found.watching)},
                  {"host_busy", busy_entries(found.busy)}};
  if (input.agents.size() < 2) section["note"] = "fewer than 2 agents connected: nothing probed";
  return section;
}

}  // namespace faultline::harness::monitor
