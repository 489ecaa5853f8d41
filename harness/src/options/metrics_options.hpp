#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/reports/metrics.hpp"

namespace faultline::cli {

/// --metrics-port, --metrics-linger and (for commands that end) --pushgateway.
struct MetricsOptions {
  std::string listen;
  std::string pushgateway;
  int linger_seconds = 0;

  void add_to(CLI::App* app, bool with_push);
  /// The metrics of this process, serving if asked; nullptr when neither flag was given.
  Result<std::unique_ptr<reports::Metrics>> start() const;
  /// Sets the last success (a passing `code`), pushes (if asked) and lingers; a failed push
  /// turns a passing run into a harness error.
  int finish(const char* command, reports::Metrics* metrics, int code) const;
};

}  // namespace faultline::cli
