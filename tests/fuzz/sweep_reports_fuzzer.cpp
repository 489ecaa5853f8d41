// A sweep's report.json as --baseline and --collect read it (read_report: the schema first),
// then what they do with its sweep: merged as a shard with itself, compared as a baseline,
// scored, and each point as the scenario junit.xml and summary.md get.
#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/harness/sweep/sweep.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::harness;
  const auto report = parse_report("report.json", faultline::fuzz::as_text(data, size));
  if (!report.ok() || !report->contains("sweep")) return 0;
  const nlohmann::json& section = report->at("sweep");
  auto merged = sweep::merge_sections({section, section}, {"a", "b"});
  if (merged.ok()) (void)sweep::changes_since(section, merged.value());
  (void)sweep::score_line(section);
  (void)sweep::sweep_outcome(section);
  size_t run_id = 0;
  for (const auto& point : section.at("points"))
    (void)sweep::point_scenario(point, section, run_id++);
  return 0;
}
