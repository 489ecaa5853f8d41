#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "faultline/core/status.hpp"

// Formulas over named inputs, and the derivations that show them with their values: a
// scenario's `derivations` and diagnose's workload files both read them.
namespace faultline::harness {

/// Evaluates "3 * max_tokens_per_rank + 1" over `inputs` (integers, + - * / and parentheses).
/// The derivation shows it with the inputs' values: "3 x max_tokens_per_rank 65536 + 1".
struct Evaluated {
  uint64_t value = 0;
  std::string derivation;
};
Result<Evaluated> evaluate_formula(const std::string& formula,
                                   const std::map<std::string, uint64_t>& inputs);

/// The value of a derivation as evaluate_formula renders it: "3 x max_tokens_per_rank 65536
/// + 1" (each name followed by its value; x or * multiplies). A scenario's `derivations` are
/// held against the config values they explain with it.
Result<uint64_t> evaluate_derivation(const std::string& derivation);

}  // namespace faultline::harness
