// A monitor round from its runs: what a peer reports as its round trips is taken only when it
// is a measurement, so the round's report always holds a median.
#include "monitor/round_section.hpp"

#include <catch2/catch.hpp>

using namespace faultline::harness;
using nlohmann::json;

TEST_CASE("a round trip of 1e308 seconds is no measurement: the round keeps a finite median",
          "[unit]") {
  std::vector<AgentRecord> agents(3);
  for (size_t i = 0; i < agents.size(); ++i) {
    agents[i].id = "agent-" + std::to_string(i + 1);
    agents[i].name = "n" + std::to_string(i + 1);
    agents[i].hello = json::object();
  }
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
