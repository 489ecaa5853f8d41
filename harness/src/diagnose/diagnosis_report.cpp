// diagnose.json and diagnose.md, and the conclusion both end with.
#include <iomanip>
#include <sstream>

#include "base/schema_checker.hpp"
#include "base/schema_texts.hpp"
#include "faultline/harness/diagnose/diagnosis.hpp"

namespace faultline::harness::diagnose {

namespace {

const ProbeResult* find_probe(const LayerResult& layer, const std::string& name) {
  for (const auto& probe : layer.probes)
    if (probe.name == name) return &probe;
  return nullptr;
}

// How a kv probe failed, by the error its failing side reported: refused at the post (a limit
// or an argument the transport would not take), or by the peer's contract check.
enum class KvFailure { kNone, kAtPost, kContract, kOther };

KvFailure kv_failure(const ProbeResult& probe) {
  if (probe.verdict != ProbeVerdict::kFail) return KvFailure::kNone;
  const auto says = [&](ErrorCode code) {
    return probe.observed.find(to_string(code)) != std::string::npos;
  };
  if (says(ErrorCode::kProtocolViolation)) return KvFailure::kContract;
  if (says(ErrorCode::kLimitExceeded) || says(ErrorCode::kInvalidArgument))
    return KvFailure::kAtPost;
  return KvFailure::kOther;
}

// What the kv pair (inline on, inline off) says about inline, when the contract failed: not
// only whether each failed, but how (the StepMesh sequence: the post fails first; with inline
// off the receiver names the real cause).
std::string inline_verdict(const LayerResult& layer) {
  const ProbeResult* with_inline = find_probe(layer, "kv.push-pull");
  const ProbeResult* without = find_probe(layer, "kv.push-pull-inline-off");
  if (with_inline == nullptr || without == nullptr) return "";
  const KvFailure on = kv_failure(*with_inline);
  const KvFailure off = kv_failure(*without);
  const std::string how_off = without->observed.substr(without->observed.find(": ") + 2);
  if (on == KvFailure::kNone) return "";
  if (off == KvFailure::kNone)
    return " With inline off the kv exchange passes: the inline path, not the protocol.";
  if (on == KvFailure::kAtPost && off == KvFailure::kContract)
    return " With inline off the same exchange fails differently, at the peer's contract check (" +
           how_off +
           "): the protocol contract, not inline. The failed inline post was the first symptom "
           "of a message that breaks its contract.";
  if (on == off)
    return " The kv exchange fails the same way with inline off: inline makes no difference; "
           "the protocol contract is what breaks.";
  return " With inline off it fails differently (" + how_off +
         "): look at both before blaming inline or the protocol.";
}

nlohmann::json probe_json(const ProbeResult& probe) {
  return {{"name", probe.name},         {"verdict", to_string(probe.verdict)},
          {"expected", probe.expected}, {"observed", probe.observed},
          {"evidence", probe.evidence}, {"hint", probe.hint}};
}

}  // namespace

std::vector<std::string> diagnose_schema_problems(const nlohmann::json& diagnosis) {
  static const SchemaChecker checker(diagnose_schema_text());
  return checker.problem_lines(diagnosis);
}

std::string Diagnosis::conclusion() const {
  const LayerResult* layer = first_failing_layer();
  if (layer == nullptr) {
    size_t ran = 0;
    for (const auto& each : layers) ran += each.ran;
    return "Every layer passed (" + std::to_string(ran) + " of " + std::to_string(layers.size()) +
           " run): environment, limits, data path, error semantics and protocol contract "
           "conform.";
  }
  const ProbeResult& probe = *layer->first_failure();
  std::string text =
      layer->id + " " + layer->title + " fails first, at '" + probe.name + "': " + probe.observed;
  if (!probe.expected.empty()) text += " (expected: " + probe.expected + ")";
  text += ".";
  if (layer->id == "L4") text += inline_verdict(*layer);
  return text;
}

nlohmann::json Diagnosis::to_json() const {
  nlohmann::json layer_list = nlohmann::json::array();
  for (const auto& layer : layers) {
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& probe : layer.probes) probes.push_back(probe_json(probe));
    const ProbeResult* failure = layer.first_failure();
    layer_list.push_back({{"id", layer.id},
                          {"title", layer.title},
                          {"verdict", !layer.ran ? "not_run"
                                      : failure  ? "fail"
                                                 : "pass"},
                          {"seconds", layer.seconds},
                          {"probes", probes}});
  }
  nlohmann::json diagnosis = {{"conclusion", conclusion()}};
  if (const LayerResult* layer = first_failing_layer()) {
    const ProbeResult& probe = *layer->first_failure();
    diagnosis["layer"] = layer->id;
    diagnosis["probe"] = probe.name;
    diagnosis["evidence"] = probe.evidence;
    diagnosis["hint"] = probe.hint;
  }
  return {{"schema_version", 1},
          {"target",
           {{"transport", options.target.transport},
            {"provider", options.target.provider},
            {"device", options.target.device}}},
          {"injected", options.inject},
          {"limits_file", options.limits_file},
          {"layers", layer_list},
          {"diagnosis", diagnosis}};
}

std::string Diagnosis::to_markdown() const {
  std::ostringstream md;
  md << "# faultline diagnose: " << options.target.transport
     << (options.target.provider.empty() ? "" : "/" + options.target.provider)
     << (options.target.device.empty() ? "" : " on " + options.target.device) << "\n\n";
  if (!options.inject.empty()) {
    md << "Injected:";
    for (const auto& kind : options.inject) md << " `" << kind << "`";
    md << "\n\n";
  }
  md << "**Diagnosis:** " << conclusion() << "\n";
  if (const LayerResult* layer = first_failing_layer()) {
    const ProbeResult& probe = *layer->first_failure();
    if (!probe.evidence.empty()) md << "\n- evidence: " << probe.evidence << "\n";
    if (!probe.hint.empty()) md << "- hint: " << probe.hint << "\n";
  }
  md << "\n| layer | verdict | probes | seconds |\n|---|---|---:|---:|\n";
  for (const auto& layer : layers) {
    md << "| " << layer.id << " " << layer.title << " | "
       << (!layer.ran              ? "not run"
           : layer.first_failure() ? "fail"
                                   : "pass")
       << " | " << layer.counts() << " | " << std::fixed << std::setprecision(2) << layer.seconds
       << " |\n";
  }
  for (const auto& layer : layers) {
    if (!layer.ran) continue;
    md << "\n## " << layer.id << " " << layer.title << "\n\n| probe | verdict | observed |\n"
       << "|---|---|---|\n";
    for (const auto& probe : layer.probes) {
      std::string observed = probe.observed;
      for (size_t at = observed.find('|'); at != std::string::npos; at = observed.find('|', at + 2))
        observed.replace(at, 1, "\\|");
      md << "| " << probe.name << " | " << to_string(probe.verdict) << " | " << observed << " |\n";
    }
  }
  return md.str();
}

}  // namespace faultline::harness::diagnose
