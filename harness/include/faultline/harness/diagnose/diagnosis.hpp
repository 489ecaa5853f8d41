#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/reports/metrics.hpp"

namespace faultline::harness::diagnose {

enum class ProbeVerdict { kPass, kFail, kSkip };
const char* to_string(ProbeVerdict verdict);

/// One probe of a layer: what a conformant setup gives, what this one gave, and why.
struct ProbeResult {
  std::string name;  ///< "inline size", "SEND 257 B inline off", "kv.push-pull"
  ProbeVerdict verdict = ProbeVerdict::kPass;
  std::string expected;
  std::string observed;
  std::string evidence;  ///< calls, errno, statuses, counters
  std::string hint;
};

/// L0 environment, L1 limits, L2 data path, L3 error semantics, L4 protocol contract.
struct LayerResult {
  std::string id;     ///< "L2"
  std::string title;  ///< "data path"
  bool ran = false;   ///< false when an earlier layer failed (without --all)
  std::vector<ProbeResult> probes;
  double seconds = 0;

  const ProbeResult* first_failure() const;
  /// "3/3 passed", or with skips apart: "2 passed, 1 skipped of 3" (a skipped probe is
  /// neither a pass nor a failure).
  std::string counts() const;
};

struct DiagnoseOptions {
  transports::Target target;
  std::vector<std::string> inject;      ///< fault kinds (inject_kinds()), active in every layer
  std::string limits_file;              ///< a workload's configuration to check in L1
  bool all = false;                     ///< run every layer even after one failed
  std::string report_dir;               ///< diagnose.json, diagnose.md and the scenario reports
  std::string scenario_dir;             ///< where L3 and L4 find their scenarios
  reports::Metrics* metrics = nullptr;  ///< L3's and L4's scenario runs are counted here
  /// L3 and L4 against a remote agent: listen here (HOST:PORT) for it, beside one local
  /// agent; `token` is what both hold (FAULTLINE_TOKEN). Empty: two local agents.
  std::string peer;
  std::string token;
};

/// The bisection: each layer's probes, the first failing layer and probe, and a conclusion.
struct Diagnosis {
  DiagnoseOptions options;
  std::vector<LayerResult> layers;
  /// Why the last write of diagnose.json or diagnose.md failed; empty when it succeeded.
  std::string write_error;

  const LayerResult* first_failing_layer() const;
  /// "L2 data path fails at 'SEND 257 B inline off': ...", or that every layer passed.
  std::string conclusion() const;
  /// diagnose.json (reports/schema/diagnose.schema.json).
  nlohmann::json to_json() const;
  /// diagnose.md, for people.
  std::string to_markdown() const;
};

/// Where a diagnose.json breaks its schema: "pointer: expected ..." lines; empty when it
/// conforms.
std::vector<std::string> diagnose_schema_problems(const nlohmann::json& diagnosis);

/// The fault kinds `--inject` knows, with what each does.
const std::vector<std::pair<std::string, std::string>>& inject_kinds();

/// Runs the layers in order, printing one line per layer to `progress`, and writes
/// diagnose.json and diagnose.md to the report directory after each layer. An unknown
/// --inject kind or a bad --limits file is kInvalidArgument naming it, before any probe.
Result<Diagnosis> run_diagnosis(const DiagnoseOptions& options, std::ostream& progress);

}  // namespace faultline::harness::diagnose
