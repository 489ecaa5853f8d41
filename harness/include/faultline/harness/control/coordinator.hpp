#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/base/event_queue.hpp"
#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/base/verdict.hpp"
#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/control/pair_schedule.hpp"
#include "faultline/harness/control/program_jobs.hpp"
#include "faultline/transports/target.hpp"

namespace faultline::harness {

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:7300";  ///< HOST:PORT; port 0 picks a free one
  std::string token;
  size_t agents = 2;
  std::chrono::milliseconds heartbeat{1000};         ///< what agents are told to send
  std::chrono::milliseconds agent_lost_after{5000};  ///< silence that makes an agent lost
  std::chrono::milliseconds handshake_timeout{5000};
  /// Longest one step of a scenario side may take (a hung poll, a barrier the peer never
  /// reaches); the run's own deadline (`timeout_ms`) bounds the whole run.
  std::chrono::milliseconds step_deadline{30000};
  /// Which pairs a pair scenario runs on (--pairs).
  PairPlan pairs;
  /// Agents join and leave at any time (`faultline monitor`): up to `agents` live at once, a
  /// lost agent's place is free again, and an agent that comes back takes its name back.
  bool open_membership = false;
  /// The most runs under way at once (0: every run of a round of disjoint pairs): agents that
  /// share a host's cores measure each other's latency less when fewer run together.
  size_t max_concurrent_runs = 0;
};

/// An authenticated agent, as its hello described it.
struct AgentRecord {
  std::string id;    ///< "agent-1", in the order agents joined
  std::string name;  ///< its --name or host name, unique among the agents ("node7", "node7-2")
  std::string rail;  ///< its --rail label
  transports::Target target;  ///< what it runs scenarios on
  std::string host;
  uint64_t pid = 0;
  std::string remote;  ///< the peer address of its connection
  nlohmann::json hello;
  bool lost = false;
  std::string lost_reason;
  std::chrono::steady_clock::time_point last_seen;
};

/// One scenario on one pair of agents, and how it ended.
struct ScenarioRun {
  uint64_t run_id = 0;
  std::string scenario;
  std::vector<std::string> tags;
  std::string source;  ///< scenario file or "builtin"
  std::string sha256;  ///< of the scenario file
  uint64_t seed = 0;
  size_t round = 0;
  std::vector<std::string> agents;   ///< every participant in rank order
  std::vector<std::string> targets;  ///< each participant's target ("ofi/tcp eth0"), rank order
  std::string initiator;             ///< agents[0]
  std::string responder;             ///< agents[1]
  Verdict verdict = Verdict::kPass;
  std::string expected;
  std::string observed;
  std::string evidence;
  std::string hint;
  double duration_ms = 0;
  nlohmann::json sides = nlohmann::json::object();  ///< each agent's own scenario_result
};

/// How a suite runs, the same for every scenario.
struct RunSettings {
  uint64_t seed = 0;    ///< mixed into every side's fault seed
  bool strict = false;  ///< a skip is a failure
  std::string suite;    ///< told to the agents with each run's verdict, for their metrics
};

/// Told about every run as it starts, progresses and finishes (progress output, reports).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void run_started(const ScenarioRun& /*run*/) {}
  virtual void step(const ScenarioRun& /*run*/, const std::string& /*agent*/,
                    const std::string& /*step*/) {}
  virtual void run_finished(const ScenarioRun& /*run*/) {}
  /// An agent's connection dropped or went silent.
  virtual void agent_lost(const AgentRecord& /*agent*/) {}
};

/// The coordinator: accepts and authenticates agents, schedules each scenario over every
/// pair of agents in rounds of disjoint pairs, relays endpoint info and barriers, and owns
/// every deadline (a heartbeat per agent, a deadline per run). One thread per connection
/// reads and validates; one thread (the caller of `run`) decides. A malformed, oversized,
/// truncated or out-of-order frame closes that one connection with a logged reason.
class Coordinator {
 public:
  explicit Coordinator(CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  /// Binds and starts accepting. kInvalidArgument for a bad address, kIoError when busy.
  Status listen();
  uint16_t port() const { return port_; }
  /// Until `options.agents` agents are in; kTimeout says how many came.
  Status wait_for_agents(std::chrono::milliseconds timeout);
  const std::vector<AgentRecord>& agents() const { return agents_; }
  /// What the agents run on, as the report's run states it: each field the agents' common
  /// value, "mixed" where they differ (each run then names its ranks' targets), all empty
  /// before any agent joined.
  transports::Target agents_target() const;
  /// How many runs `run` makes of `scenarios` with the agents here (the report's total).
  size_t planned_runs(const std::vector<ScenarioSpec>& scenarios, uint64_t seed) const;
  /// Runs each scenario over the pairs of `options.pairs` (or once over the ring of all
  /// agents), round by round.
  std::vector<ScenarioRun> run(const std::vector<ScenarioSpec>& scenarios,
                               const RunSettings& settings, RunObserver& observer);
  /// Runs a program job's roles on the agents (role i on live agent i mod n), each started by
  /// its agent's launcher; the first role's port and address go to the others. A role left
  /// running once the judged one ended gets the grace period, then is stopped.
  ProgramJobOutcome run_programs(const ProgramJob& job);
  /// Tells every live agent to exit.
  void shutdown_agents();
  /// Handles joins, messages and losses for `duration`, no run under way (a monitor between
  /// its rounds).
  void idle(std::chrono::milliseconds duration, RunObserver& observer);
  /// Drops the records of lost agents (a monitor, before a round): what comes back is new.
  void forget_lost_agents();

 private:
  enum class EventKind { kJoined, kMessage, kLost };
  struct Event {
    EventKind kind;
    std::string agent_id;
    nlohmann::json message;
    std::string reason;
  };
  struct Connection {
    /// Shared with channels_ and the decision thread's sends; reset when the connection ends,
    /// so the acceptor can collect its thread.
    std::shared_ptr<control::Channel> channel;
    std::string remote;
    std::thread thread;
    /// Refused with the token of a running scenario's deliberate join (kScenarioWrongToken).
    bool scenario_join = false;
  };
  struct ActiveRun {
    ScenarioRun result;
    const ScenarioSpec* spec = nullptr;
    bool strict = false;
    std::string exclude_reason;  ///< of the known failure that applies to every member's target
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point deadline;
    std::optional<std::chrono::steady_clock::time_point> grace_until;
    std::map<std::string, nlohmann::json> infos;
    std::map<std::string, std::set<std::string>> barriers;
    std::map<std::string, std::string> last_step;
    std::map<std::string, std::chrono::steady_clock::time_point> step_started;
    std::set<std::string> heard_from;  ///< sides that sent a step, endpoint info or a barrier
    std::optional<std::chrono::steady_clock::time_point> first_heard;  ///< from any side
    bool finished = false;
    bool deliberate_join = false;  ///< has a control.join step with the wrong token
    bool involves(const std::string& agent_id) const {
      return std::find(result.agents.begin(), result.agents.end(), agent_id) != result.agents.end();
    }
  };

  /// The pairs of `options.pairs` over the agents, in rounds of disjoint pairs.
  PairRounds pair_rounds(uint64_t seed) const;
  /// How many rounds `scenario` takes: the pair plan's rounds, or one ring over every agent.
  size_t round_count(const ScenarioSpec& scenario, const PairRounds& pairs) const;
  /// The runs of round `round`, each the agents' indices in rank order.
  std::vector<std::vector<size_t>> round_members(const ScenarioSpec& scenario,
                                                 const PairRounds& pairs, size_t round) const;
  ActiveRun new_run(const ScenarioSpec& scenario, const RunSettings& settings, size_t round,
                    const std::vector<size_t>& members);
  /// Tells each agent of `run` its part, or finishes the run when one was lost earlier.
  void launch(ActiveRun& run, const RunSettings& settings, RunObserver& observer);
  void accept_loop();
  void serve_connection(Connection& connection);
  Result<std::string> handshake(Connection& connection);
  void handle(const Event& event, RunObserver& observer);
  void joined(const Event& event);
  /// `asked`, or `asked`-2, -3, ... when another agent has that name already.
  std::string unique_name(const std::string& asked) const;
  /// A pair gets the other side's endpoint info, a ring every rank's, once all have sent.
  void relay_endpoint_info(ActiveRun& run, const std::string& agent_id, const nlohmann::json& info);
  /// Releases the barrier `name` once every agent of the run reached it.
  void reach_barrier(ActiveRun& run, const std::string& agent_id, const std::string& name);
  /// Releases every barrier of `run` that each side reached, or left by dying as asked.
  void release_barriers(ActiveRun& run);
  /// One side's result; the run finishes when all are in (or one crashed), else after a grace.
  void take_result(ActiveRun& run, const std::string& agent_id, const nlohmann::json& message,
                   RunObserver& observer);
  void mark_lost(const std::string& agent_id, const std::string& reason, RunObserver& observer);
  /// Waits up to `wait` for an event, handles it and every one already queued, then judges the
  /// deadlines.
  void handle_events(std::chrono::milliseconds wait, RunObserver& observer);
  void lose_agents_whose_sends_failed(RunObserver& observer);
  void check_deadlines(RunObserver& observer);
  /// The side of `run` past the step deadline (in its step, or saying none while a peer ran)
  /// and why; nullopt when none is.
  std::optional<std::pair<std::string, std::string>> stuck_side(
      const ActiveRun& run, std::chrono::steady_clock::time_point now) const;
  void finish(ActiveRun& run, RunObserver& observer);
  void finish_with(ActiveRun& run, Verdict verdict, std::string observed, std::string evidence,
                   std::string hint, RunObserver& observer);
  // Program jobs (coordinator_programs.cpp).
  struct ProgramRun;
  /// Role i on live agent i mod n; false (the outcome says why) when one cannot run it.
  bool place_roles(ProgramRun& run);
  /// Sends each role its run_program, the later ones with the first one's port and address.
  void start_roles(ProgramRun& run);
  /// Processes events until `done` or `until`: the run's program messages go into it,
  /// everything else as always; a role on a lost agent ends as an error.
  bool wait_programs(ProgramRun& run, const std::function<bool()>& done,
                     std::chrono::steady_clock::time_point until);
  void take_program_message(ProgramRun& run, const std::string& agent_id,
                            const nlohmann::json& message);
  AgentRecord* agent(const std::string& id);
  /// How texts for people name an agent: by its name, stable from run to run (its id is its
  /// place in the join order); the id for one unknown.
  std::string name_of(const std::string& id) const;
  std::shared_ptr<control::Channel> channel_of(const std::string& agent_id);
  void send_to(const std::string& agent_id, std::string_view type, nlohmann::json body);
  ActiveRun* active_run(uint64_t run_id, const std::string& agent_id);

  CoordinatorOptions options_;
  uint16_t port_ = 0;
  int listen_fd_ = -1;
  /// Runs under way whose scenario joins with kScenarioWrongToken on purpose.
  std::atomic<int> deliberate_joins_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> released_{false};
  /// Agents lost before the first run: their places are free for others to join.
  std::atomic<size_t> freed_places_{0};
  bool runs_started_ = false;  // the event loop's: after it, a lost agent's place stays lost
  std::atomic<int> handshakes_under_way_{
      0};  // agents told to shut down: their goodbyes are not news
  std::thread acceptor_;
  std::mutex connections_mutex_;
  std::list<Connection> connections_;
  std::map<std::string, std::shared_ptr<control::Channel>>
      channels_;           // agent id -> channel of a live connection; connections_mutex_
  size_t registered_ = 0;  // connections_mutex_
  EventQueue<Event> events_;
  std::vector<AgentRecord> agents_;                   // decision thread only
  std::vector<ActiveRun> active_;                     // decision thread only
  std::map<std::string, std::string> send_failures_;  // agent id -> why; decision thread only
  std::string suite_;                                 // of the suite being run
  uint64_t next_run_id_ = 1;
};

}  // namespace faultline::harness
