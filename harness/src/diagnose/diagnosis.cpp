#include "faultline/harness/diagnose/diagnosis.hpp"

#include <chrono>
#include <iomanip>
#include <iostream>

#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "layers.hpp"

namespace faultline::harness::diagnose {

namespace {

// --inject KIND: one fault of the decorator, as a scenario `faults` entry (without a role).
const std::map<std::string, nlohmann::json>& inject_faults_by_kind() {
  static const std::map<std::string, nlohmann::json> faults = {
      {"inline-above-limit", {{"kind", "inline"}, {"mode", "above_limit"}}},
      {"inline-off", {{"kind", "inline"}, {"mode", "off"}}},
      {"write-status",
       {{"kind", "rewrite_status"},
        {"opcode", "RDMA_WRITE"},
        {"every", 1},
        {"status", "REM_ACCESS_ERR"}}},
      {"kv-missing-lens",
       {{"kind", "drop_segment"}, {"message", "PushRequest"}, {"segment", "lens"}}},
      {"kv-extra-segment", {{"kind", "add_segment"}, {"message", "PushRequest"}}},
      {"clamp-max-qp-wr", {{"kind", "limits"}, {"max_qp_wr", 64}, {"max_recv_wr", 64}}},
  };
  return faults;
}

const std::vector<std::string> kErrorScenarios = {"natural.*"};
const std::vector<std::string> kProtocolScenarios = {
    "kv.push-pull", "kv.push-pull-inline-off", "collective.allreduce", "tagged.per-tag-order"};

Status write_reports(const Diagnosis& diagnosis) {
  const std::string& dir = diagnosis.options.report_dir;
  if (auto written = reports::write_file_atomically(dir + "/diagnose.json",
                                                    diagnosis.to_json().dump(2) + "\n");
      !written.ok())
    return written;
  return reports::write_file_atomically(dir + "/diagnose.md", diagnosis.to_markdown());
}

}  // namespace

const char* to_string(ProbeVerdict verdict) {
  switch (verdict) {
    case ProbeVerdict::kPass: return "pass";
    case ProbeVerdict::kFail: return "fail";
    case ProbeVerdict::kSkip: return "skip";
  }
  return "fail";
}

const std::vector<std::pair<std::string, std::string>>& inject_kinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"inline-above-limit", "every send and write is posted inline, above the granted limit too"},
      {"inline-off", "endpoints get max_inline 0 and posts lose the inline flag (a workaround)"},
      {"write-status", "every RDMA_WRITE completion is rewritten to REM_ACCESS_ERR"},
      {"kv-missing-lens", "the kv PushRequest loses its lens segment (StepMesh on Ascend)"},
      {"kv-extra-segment",
       "the kv PushRequest gains a fourth segment: its inline announce outgrows the plan"},
      {"clamp-max-qp-wr", "the device advertises max_qp_wr and max_recv_wr 64"},
  };
  return kinds;
}

const ProbeResult* LayerResult::first_failure() const {
  for (const auto& probe : probes)
    if (probe.verdict == ProbeVerdict::kFail) return &probe;
  return nullptr;
}

std::string LayerResult::counts() const {
  size_t passed = 0;
  size_t skipped = 0;
  for (const auto& probe : probes) {
    passed += probe.verdict == ProbeVerdict::kPass;
    skipped += probe.verdict == ProbeVerdict::kSkip;
  }
  const std::string total = std::to_string(probes.size());
  if (skipped == 0) return std::to_string(passed) + "/" + total + " passed";
  return std::to_string(passed) + " passed, " + std::to_string(skipped) + " skipped of " + total;
}

const LayerResult* Diagnosis::first_failing_layer() const {
  for (const auto& layer : layers)
    if (layer.first_failure() != nullptr) return &layer;
  return nullptr;
}

namespace {

// The probe context of `options`: its target, with the faults --inject names.
Result<ProbeContext> probe_context(const DiagnoseOptions& options) {
  ProbeContext context{options.target, nlohmann::json::array()};
  for (const auto& kind : options.inject) {
    auto fault = inject_faults_by_kind().find(kind);
    if (fault == inject_faults_by_kind().end()) {
      std::string known;
      for (const auto& [name, what] : inject_kinds()) known += (known.empty() ? "" : ", ") + name;
      return Error{ErrorCode::kInvalidArgument,
                   "--inject " + kind + ": unknown fault kind; known: " + known};
    }
    context.inject_faults.push_back(fault->second);
  }
  return context;
}

// The agents L3 and L4 share, started on first use (a remote one joins once).
Result<LocalAgents*> shared_agents(const DiagnoseOptions& options, std::ostream& progress,
                                   std::unique_ptr<LocalAgents>& agents) {
  if (agents) return agents.get();
  LocalRun run;
  run.agents = options.peer.empty() ? 2 : 1;
  run.remote_agents = options.peer.empty() ? 0 : 1;
  run.options.listen = options.peer;
  run.options.token = options.token;
  if (!options.peer.empty()) {
    run.join_timeout = std::chrono::seconds(120);
    progress << "   waiting up to 120 s for the remote agent: faultline agent --coordinator "
             << options.peer << " (same FAULTLINE_TOKEN)\n";
  }
  auto started = LocalAgents::start(run, options.target);
  if (!started.ok()) return started.error();
  agents = std::move(started).value();
  return agents.get();
}

// One line of progress for a layer that ran, or did not.
void print_layer(std::ostream& progress, const LayerResult& layer) {
  const ProbeResult* failure = layer.first_failure();
  progress << layer.id << " " << std::left << std::setw(18) << layer.title << " ";
  if (!layer.ran) {
    progress << "not run (an earlier layer failed; --all runs it)\n";
    return;
  }
  progress << (failure ? "FAIL" : "pass") << "  probes " << layer.counts() << ", " << std::fixed
           << std::setprecision(1) << layer.seconds << " s"
           << (failure ? "  first failure: " + failure->name : "") << "\n";
}

}  // namespace

Result<Diagnosis> run_diagnosis(const DiagnoseOptions& options, std::ostream& progress) {
  Diagnosis diagnosis{options, {}, {}};
  // Two diagnoses in one directory would mix their files: the second is refused.
  std::optional<reports::DirectoryLock> lock;
  if (!options.report_dir.empty()) {
    auto acquired = reports::DirectoryLock::acquire(options.report_dir);
    if (!acquired.ok()) return acquired.error();
    lock = std::move(acquired).value();
  }
  auto made = probe_context(options);
  if (!made.ok()) return made.error();
  const ProbeContext& context = made.value();
  std::optional<Workload> workload;
  if (!options.limits_file.empty()) {
    auto loaded = load_workload(options.limits_file);
    if (!loaded.ok()) return loaded.error();
    workload = std::move(loaded).value();
  }
  std::unique_ptr<LocalAgents> agents;
  const AgentSource agent_source = [&] { return shared_agents(options, progress, agents); };
  using Runner = std::function<std::vector<ProbeResult>()>;
  const std::vector<std::tuple<std::string, std::string, Runner>> layers = {
      {"L0", "environment", [&] { return probe_environment(context); }},
      {"L1", "limits", [&] { return probe_limits(context, workload); }},
      {"L2", "data path", [&] { return probe_data_path(context); }},
      {"L3", "error semantics",
       [&] {
         return probe_scenarios(options, context.inject_faults, kErrorScenarios, "L3",
                                agent_source);
       }},
      {"L4", "protocol contract",
       [&] {
         return probe_scenarios(options, context.inject_faults, kProtocolScenarios, "L4",
                                agent_source);
       }},
  };
  bool stopped = false;
  for (const auto& [id, title, runner] : layers) {
    LayerResult layer{id, title, false, {}, 0};
    if (!stopped) {
      const auto started = std::chrono::steady_clock::now();
      layer.probes = runner();
      layer.ran = true;
      layer.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    diagnosis.layers.push_back(layer);
    print_layer(progress, layer);
    if (layer.first_failure() && !options.all) stopped = true;
    if (options.report_dir.empty()) continue;
    // Said once; the files keep their last good version, and a later write may still succeed.
    auto written = write_reports(diagnosis);
    if (!written.ok() && diagnosis.write_error.empty())
      std::cerr << "faultline diagnose: cannot write the diagnosis: "
                << written.error().describe_with_hint() << "\n";
    diagnosis.write_error = written.ok() ? "" : written.error().describe();
  }
  return diagnosis;
}

}  // namespace faultline::harness::diagnose
