#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/harness/sut/sut_exec.hpp"
#include "output_checker.hpp"
#include "process_group.hpp"

namespace faultline::harness::sut {

/// The faults judged among the interposers' `fault` events of a run under `plan`: every one
/// but those of a kind only its `standing` list has (inline off beneath the fault judged).
class JudgedFaults {
 public:
  explicit JudgedFaults(const nlohmann::json& plan);
  bool judged(const nlohmann::json& event) const;

 private:
  std::vector<std::string> standing_only_;
};

/// Sets `result`'s verdict, evidence, hint and first error line from how the run ended, the
/// faults its events say fired, and what `checker` saw of its output.
void judge(ExecResult& result, const GroupRun& run, const ExecOptions& options,
           const OutputChecker& checker);

}  // namespace faultline::harness::sut
