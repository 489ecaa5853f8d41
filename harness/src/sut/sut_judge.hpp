#pragma once

#include "faultline/harness/sut/sut_exec.hpp"
#include "output_checker.hpp"
#include "process_group.hpp"

namespace faultline::harness::sut {

/// Sets `result`'s verdict, evidence, hint and first error line from how the run ended, the
/// faults its events say fired, and what `checker` saw of its output.
void judge(ExecResult& result, const GroupRun& run, const ExecOptions& options,
           const OutputChecker& checker);

}  // namespace faultline::harness::sut
