#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::reports {

/// Receives a run as it goes (Catch2's reporter design). Every payload is part of the report
/// document (reports/schema/report.schema.json), so a sink needs nothing of the harness: the
/// same sinks serve `faultline run` and `faultline report`.
class ReportSink {
 public:
  virtual ~ReportSink() = default;
  /// The report before any scenario ran: run metadata, agents, an empty scenario list.
  virtual Status on_run_started(const nlohmann::json& report) = 0;
  virtual void on_scenario_started(const nlohmann::json& /*scenario*/) {}
  virtual void on_step_finished(const nlohmann::json& /*scenario*/, const std::string& /*agent*/,
                                const std::string& /*step*/) {}
  /// `scenario` just finished; `report` holds it and every one before.
  virtual Status on_scenario_finished(const nlohmann::json& scenario,
                                      const nlohmann::json& report) = 0;
  virtual Status on_run_finished(const nlohmann::json& report) = 0;
};

/// Turns a whole report document into one file's text.
using ReportFormatter = std::function<std::string(const nlohmann::json& report)>;

/// Rewrites one file atomically from the whole report at the start, after every scenario and
/// at the end, so a run killed at any point leaves a complete file of what finished.
class FileSink final : public ReportSink {
 public:
  FileSink(std::string path, ReportFormatter format);
  Status on_run_started(const nlohmann::json& report) override;
  Status on_scenario_finished(const nlohmann::json& scenario,
                              const nlohmann::json& report) override;
  Status on_run_finished(const nlohmann::json& report) override;
  const std::string& path() const { return path_; }

 private:
  Status write(const nlohmann::json& report) const;
  std::string path_;
  ReportFormatter format_;
};

/// The file sinks of a report directory: report.json, junit.xml and summary.md.
std::vector<std::unique_ptr<ReportSink>> report_directory_sinks(const std::string& directory);

}  // namespace faultline::reports
