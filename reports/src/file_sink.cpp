#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_sink.hpp"

namespace faultline::reports {

FileSink::FileSink(std::string path, ReportFormatter format)
    : path_(std::move(path)), format_(std::move(format)) {}

Status FileSink::write(const nlohmann::json& report) const {
  return write_file_atomically(path_, format_(report));
}

Status FileSink::on_run_started(const nlohmann::json& report) { return write(report); }

Status FileSink::on_scenario_finished(const nlohmann::json& /*scenario*/,
                                      const nlohmann::json& report) {
  return write(report);
}

Status FileSink::on_run_finished(const nlohmann::json& report) { return write(report); }

std::vector<std::unique_ptr<ReportSink>> report_directory_sinks(const std::string& directory) {
  std::vector<std::unique_ptr<ReportSink>> sinks;
  for (const ReportFormat& format : report_formats()) {
    if (format.in_report_folder)
      sinks.push_back(
          std::make_unique<FileSink>(directory + "/" + std::string(format.file), format.write));
  }
  return sinks;
}

}  // namespace faultline::reports
