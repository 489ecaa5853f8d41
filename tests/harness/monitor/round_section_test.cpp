// A monitor round from its runs: what a peer reports as its round trips and its hosts' waits
// is taken only when it is a measurement, so the round's report always holds a median.
#include "monitor/round_section.hpp"

#include <catch2/catch.hpp>

using namespace faultline::harness;
using nlohmann::json;

namespace {

// `count` agents that joined: agent-1 named n1, and on.
std::vector<AgentRecord> named_agents(size_t count) {
  std::vector<AgentRecord> agents(count);
  for (size_t i = 0; i < count; ++i) {
    agents[i].id = "agent-" + std::to_string(i + 1);
    agents[i].name = "n" + std::to_string(i + 1);
    agents[i].hello = json::object();
  }
  return agents;
}

}  // namespace

TEST_CASE("a round trip of 1e308 seconds is no measurement: the round keeps a finite median",
          "[unit]") {
  const std::vector<AgentRecord> agents = named_agents(3);
  const auto probe = [](double seconds) {
    return json{
        {"details",
         {{"probe", {{"rtt_seconds", {{"p10", seconds}, {"p50", seconds}, {"p99", seconds}}}}}}}};
  };
  std::vector<ScenarioRun> runs;
  for (const auto& [a, b, rtt] :
       std::vector<std::tuple<int, int, double>>{{0, 1, 40e-6}, {0, 2, 1e308}, {1, 2, 1e308}}) {
    ScenarioRun run;
    run.agents = {agents[a].id, agents[b].id};
    run.initiator = agents[a].id;
    run.responder = agents[b].id;
    run.sides[agents[a].id] = probe(rtt);
    runs.push_back(run);
  }
  const monitor::RoundInput input = monitor::round_input(agents, runs);
  REQUIRE(input.pairs.size() == 3);
  CHECK(input.pairs[0].rtt_p50 == 40e-6);
  CHECK_FALSE(input.pairs[1].rtt_p50.has_value());
  CHECK_FALSE(input.pairs[2].rtt_p10.has_value());
  const monitor::LocalizationSettings settings;
  const auto found = monitor::localize(input.agents, input.pairs, settings);
  const json section = monitor::round_section(1, "t", 1.0, input, found, settings, 2.0);
  CHECK(section.at("median_rtt_seconds").is_number());
}

TEST_CASE("a probe's host split is taken whole or not at all", "[unit]") {
  const std::vector<AgentRecord> agents = named_agents(2);
  const json side = {{"p50", 930e-6}, {"max", 2e-3}, {"disturbed_round_trips", 48}};
  json probe = {{"round_trips", 50},
                {"rtt_seconds", {{"p10", 2e-3}, {"p50", 2e-3}, {"p99", 3e-3}}},
                {"host_wait_seconds", {{"initiator", side}, {"responder", side}}},
                {"fabric_rtt_seconds", {{"round_trips", 2}}}};
  const auto input_with = [&](const json& measured) {
    ScenarioRun run;
    run.agents = {agents[0].id, agents[1].id};
    run.initiator = agents[0].id;
    run.responder = agents[1].id;
    run.sides[agents[0].id] = json{{"details", {{"probe", measured}}}};
    return monitor::round_input(agents, {run});
  };
  auto input = input_with(probe);
  REQUIRE(input.pairs.at(0).host);
  CHECK(input.pairs[0].host->a_disturbed == 48);
  CHECK(input.pairs[0].host->b_wait == 930e-6);
  CHECK_FALSE(input.pairs[0].judged_rtt());
  const monitor::LocalizationSettings settings;
  const auto found = monitor::localize(input.agents, input.pairs, settings);
  const json section = monitor::round_section(1, "t", 1.0, input, found, settings, 2.0);
  CHECK(section.at("pairs").at(0).at("state") == "host busy");
  CHECK(section.at("host_busy").size() == 2);
  CHECK(section.at("agents").at(0).at("host_busy") == 1);
  // More disturbed round trips than round trips, a negative wait, an hour's wait: no split.
  for (const auto& [pointer, value] : std::vector<std::pair<std::string, json>>{
           {"/host_wait_seconds/initiator/disturbed_round_trips", 51},
           {"/host_wait_seconds/responder/p50", -1.0},
           {"/host_wait_seconds/responder/p50", 1e308},
           {"/fabric_rtt_seconds/round_trips", "2"}}) {
    json bad = probe;
    bad[json::json_pointer(pointer)] = value;
    CHECK_FALSE(input_with(bad).pairs.at(0).host);
  }
}

TEST_CASE("a peer's completion statuses and counters reach a suspect's evidence only as text",
          "[unit]") {
  const std::vector<AgentRecord> agents = named_agents(2);
  ScenarioRun run;
  run.agents = {agents[0].id, agents[1].id};
  run.initiator = agents[0].id;
  run.responder = agents[1].id;
  run.verdict = Verdict::kFail;
  // The terminal's title and colours, where a device's status and counter names go.
  run.sides[agents[0].id] =
      json{{"details",
            {{"traffic", {{"completions", {{"\x1b]0;owned\x07WR_FLUSH_ERR", 3u}}}}},
             {"port_counters", {{"grown", {{"\x1b[31mport_rcv_errors", 2u}}}}}}}};
  const monitor::RoundInput input = monitor::round_input(agents, {run});
  const auto& seen = input.agents.at(0);
  REQUIRE(seen.completion_errors.size() == 1);
  CHECK(seen.completion_errors.begin()->first == "\\e]0;owned\\x07WR_FLUSH_ERR");
  REQUIRE(seen.counters_grown.size() == 1);
  CHECK(seen.counters_grown.begin()->first == "\\e[31mport_rcv_errors");
  const monitor::LocalizationSettings settings;
  const auto found = monitor::localize(input.agents, input.pairs, settings);
  const json section = monitor::round_section(1, "t", 1.0, input, found, settings, 2.0);
  CHECK(section.dump().find("\\u001b") == std::string::npos);
}
