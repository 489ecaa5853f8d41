// report.json -> JUnit XML, the dialect Jenkins, GitLab and junitparser read: testsuites >
// testsuite > testcase with failure / error / skipped children.
#include <sstream>

#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_view.hpp"
#include "markup_escape.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

std::string text_of(const json& scenario, const char* field) {
  return scenario.value(field, std::string());
}

// expected / observed / evidence / hint, one per line, as a failure's body.
std::string failure_body(const json& scenario) {
  std::string body;
  for (const char* field : {"expected", "observed", "evidence", "hint"}) {
    const std::string text = text_of(scenario, field);
    if (!text.empty()) body += (body.empty() ? "" : "\n") + std::string(field) + ": " + text;
  }
  return body;
}

// Named by the scenario and the agents' names, never their join-order ids: the same testcase
// from run to run, so a CI's test history follows a pair.
void write_testcase(std::ostringstream& xml, const json& scenario, const std::string& suite,
                    const std::map<std::string, std::string>& names) {
  const std::string verdict = text_of(scenario, "verdict");
  const std::string id = text_of(scenario, "id");
  xml << "    <testcase classname=\"" << escape_markup(suite + "." + id) << "\" name=\""
      << escape_markup(id + " [" + agents_label(scenario, names) + "]") << "\" time=\""
      << seconds(scenario) << "\"";
  const auto programs = program_lines(scenario);
  if (verdict == "pass" && programs.empty()) {
    xml << "/>\n";
    return;
  }
  xml << ">\n";
  if (verdict == "pass") {  // a SUT scenario: how each program ended is the finding
    std::string out = "verdict " + verdict_label(scenario);
    for (const auto& [role, text] : programs) out += "\n" + role + ": " + text;
    xml << "      <system-out>" << escape_markup(out) << "</system-out>\n    </testcase>\n";
    return;
  }
  const std::string observed = escape_markup(text_of(scenario, "observed"));
  if (verdict == "fail") {
    xml << "      <failure type=\"fail\" message=\"" << observed << "\">"
        << escape_markup(failure_body(scenario)) << "</failure>\n";
  } else if (verdict == "skip") {
    xml << "      <skipped message=\"" << observed << "\"/>\n";
  } else if (verdict == "xfail") {
    xml << "      <system-out>" << escape_markup("known failure (xfail): " + failure_body(scenario))
        << "</system-out>\n";
  } else {  // error, crashed, timeout
    xml << "      <error type=\"" << escape_markup(verdict) << "\" message=\"" << observed << "\">"
        << escape_markup(failure_body(scenario)) << "</error>\n";
  }
  xml << "    </testcase>\n";
}

}  // namespace

std::string to_junit(const json& report) {
  const std::string suite = suite_name(report);
  const json run = report.value("run", json::object());
  const auto counts = verdict_counts(report);
  auto count = [&](const char* verdict) {
    auto found = counts.find(verdict);
    return found == counts.end() ? 0 : found->second;
  };
  const int failures = count("fail");
  // A run that did not finish (interrupted, or this file written while it was running) is an
  // error of its own: a CI reading only passing testcases would take it for a green run.
  const bool incomplete = !run.value("complete", true);
  const int errors = count("error") + count("crashed") + count("timeout") + (incomplete ? 1 : 0);
  const int skipped = count("skip");
  const size_t tests = report.value("scenarios", json::array()).size() + (incomplete ? 1 : 0);
  double total_seconds = 0;
  for (const auto& scenario : report.value("scenarios", json::array()))
    total_seconds += scenario.value("duration_ms", 0.0) / 1000;

  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"faultline\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << total_seconds
      << "\">\n";
  xml << "  <testsuite name=\"" << escape_markup(suite) << "\" tests=\"" << tests
      << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped
      << "\" time=\"" << total_seconds << "\" timestamp=\""
      << escape_markup(run.value("started_at", std::string())) << "\" hostname=\""
      << escape_markup(run.value("host", std::string())) << "\">\n";
  xml << "    <properties>\n";
  auto property = [&](const std::string& name, const std::string& value) {
    xml << "      <property name=\"" << escape_markup(name) << "\" value=\"" << escape_markup(value)
        << "\"/>\n";
  };
  property("faultline_version", report.value("faultline_version", std::string()));
  property("target", target_label(report));
  property("kernel", run.value("kernel", std::string()));
  property("seed", std::to_string(run.value("seed", uint64_t{0})));
  xml << "    </properties>\n";
  const auto names = agent_names(report);
  for (const auto& scenario : report.value("scenarios", json::array()))
    write_testcase(xml, scenario, suite, names);
  if (incomplete) {
    const json summary = report.value("summary", json::object());
    const std::string message =
        run.contains("not_run")
            ? "nothing ran: " + run.value("not_run", std::string())
            : "the run did not finish: " + summary.value("finished", json(0)).dump() + " of " +
                  summary.value("total", json(0)).dump() +
                  " scenario runs have a verdict (interrupted, or still running when this was "
                  "written)";
    xml << "    <testcase classname=\"" << escape_markup(suite) << ".run\" name=\"the run "
        << "finished\" time=\"0\">\n      <error type=\"incomplete\" message=\""
        << escape_markup(message) << "\">" << escape_markup(message)
        << "</error>\n    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

}  // namespace faultline::reports
