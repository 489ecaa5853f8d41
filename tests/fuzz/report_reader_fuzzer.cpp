// A report.json as `faultline report` reads it, and every format rendered from it when it
// conforms to the schema.
#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/reports/formats.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto report =
      faultline::harness::parse_report("report.json", faultline::fuzz::as_text(data, size));
  if (!report.ok()) return 0;
  (void)faultline::reports::to_markdown(report.value());
  (void)faultline::reports::to_junit(report.value());
  (void)faultline::reports::to_html(report.value());
  return 0;
}
