#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness::sut {

/// A fault in compact form, keys of the fault language: "status=REM_ACCESS_ERR,nth=5,side=recv"
/// (numbers and true/false as JSON's, the rest as strings). Not yet checked as a fault.
Result<nlohmann::json> parse_fault_spec(const std::string& spec);

/// A plan's text as the fault language reads it for the interposers: nested no deeper than 64
/// levels, each key once, every fault checked; errors start with `where` and name the place.
Result<nlohmann::json> plan_from_text(std::string_view text, const std::string& where);

/// The plan a program runs under: the faults of every `--plan` file (a file of at most 16 MiB,
/// parsed strictly: a key twice, nesting deeper than 64 levels refused) with its `seed`, then of
/// every `--fault`, each checked by the fault language's parser for the interposers and named by
/// its option in an error (`--fault status=X,rnak=1: rnak: expected ...`), and every `--with`
/// (a standing fault: a condition of the run, such as inline off, not the fault judged) into
/// the plan's `standing` list beside the files' own.
Result<nlohmann::json> plan_from_options(const std::vector<std::string>& plan_files,
                                         const std::vector<std::string>& faults,
                                         const std::vector<std::string>& standing = {});

}  // namespace faultline::harness::sut
