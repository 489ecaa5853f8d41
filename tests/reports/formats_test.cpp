// The report formats on a hand-made report: JUnit counts and mapping of verdicts, escaping,
// the Markdown table and pair matrix, and a self-contained HTML file.
#include "faultline/reports/formats.hpp"

#include <catch2/catch.hpp>

#include "faultline/reports/report_view.hpp"

using namespace faultline::reports;
using nlohmann::json;

namespace {

json scenario(const std::string& id, const std::string& verdict, const std::string& a,
              const std::string& b, std::string observed = "") {
  return {{"id", id},
          {"verdict", verdict},
          {"agents", {{"initiator", a}, {"responder", b}, {"ranks", {a, b}}}},
          {"expected", "completion status SUCCESS"},
          {"observed", std::move(observed)},
          {"evidence", "step 3 poll"},
          {"hint", verdict == "fail" ? "check the <rkey> & retry" : ""},
          {"duration_ms", 1250.0},
          {"source", "scenarios/x.json"}};
}

json sample_report() {
  return {{"schema_version", 1},
          {"faultline_version", "9.9.9"},
          {"run",
           {{"suite", "faults"},
            {"started_at", "2026-01-01T00:00:00Z"},
            {"updated_at", "2026-01-01T00:01:00Z"},
            {"complete", true},
            {"host", "node-1"},
            {"kernel", "Linux 6.1"},
            {"transport", "ofi"},
            {"provider", "tcp"},
            {"device", "lo"},
            {"seed", 7}}},
          {"summary", {{"total", 6}, {"finished", 6}}},
          {"scenarios",
           {scenario("a.pass", "pass", "agent-1", "agent-2"),
            scenario("a.fail", "fail", "agent-1", "agent-3", "status REM_ACCESS_ERR | qp 0x1a"),
            scenario("a.skip", "skip", "agent-2", "agent-3", "needs verbs"),
            scenario("a.xfail", "xfail", "agent-1", "agent-2", "known: tcp ignores keys"),
            scenario("a.crash", "crashed", "agent-2", "agent-3", "killed by SIGSEGV"),
            scenario("a.timeout", "timeout", "agent-1", "agent-3", "no completion in 5 s")}}};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("JUnit maps each verdict and counts them on the suite", "[unit]") {
  const std::string xml = to_junit(sample_report());
  CHECK_THAT(xml, Catch::Contains("<testsuite name=\"faults\" tests=\"6\" failures=\"1\" "
                                  "errors=\"2\" skipped=\"1\""));
  CHECK(count(xml, "<testcase ") == 6);
  CHECK(count(xml, "<failure ") == 1);
  CHECK(count(xml, "<error type=\"crashed\"") == 1);
  CHECK(count(xml, "<error type=\"timeout\"") == 1);
  CHECK(count(xml, "<skipped message=\"needs verbs\"/>") == 1);
  CHECK_THAT(xml, Catch::Contains("<system-out>known failure (xfail)"));
  CHECK_THAT(xml, Catch::Contains("<property name=\"seed\" value=\"7\"/>"));
  CHECK_THAT(xml, Catch::Contains("name=\"a.fail [agent-1 &lt;-&gt; agent-3]\" time=\"1.25\""));
}

TEST_CASE("JUnit escapes markup in every text it carries", "[unit]") {
  json report = sample_report();
  report["scenarios"][1]["observed"] = "<bad> & \"quoted\" 'x'\x01";
  const std::string xml = to_junit(report);
  CHECK_THAT(xml, Catch::Contains("&lt;bad&gt; &amp; &quot;quoted&quot; &apos;x&apos;\\x01"));
  CHECK_THAT(xml, Catch::Contains("hint: check the &lt;rkey&gt; &amp; retry"));
  CHECK(xml.find('\x01') == std::string::npos);
}

TEST_CASE("JUnit holds what a program printed as text XML 1.0 takes", "[unit]") {
  json report = sample_report();
  // U+FFFE, U+FFFF and a byte that is not UTF-8, as a program may print them.
  report["scenarios"][1]["observed"] = "a\xEF\xBF\xBE b\xEF\xBF\xBF c\xFF d";
  const std::string xml = to_junit(report);
  CHECK_THAT(xml, Catch::Contains("a\\ufffe b\\uffff c\xEF\xBF\xBD d"));
  CHECK(xml.find("\xEF\xBF\xBE") == std::string::npos);
}

TEST_CASE("the Markdown summary carries no HTML and no escape sequence of a report's values",
          "[unit]") {
  json report = sample_report();
  report["scenarios"][1]["observed"] = "<script>alert(1)</script>";
  report["scenarios"][1]["evidence"] = "<img src=x onerror=alert(1)> step \x1B[31mred\x1B[0m";
  report["scenarios"][1]["id"] = "<svg onload=alert(1)>";
  report["run"]["host"] = "<b>host</b>";
  const std::string md = to_markdown(report);
  for (const char* raw : {"<script", "<img", "<svg", "<b>", "\x1B"})
    CHECK(md.find(raw) == std::string::npos);
  CHECK_THAT(md, Catch::Contains("&lt;script>alert(1)&lt;/script>"));
  CHECK_THAT(md, Catch::Contains("step \\e[31mred\\e[0m"));
}

TEST_CASE("the Markdown summary lists runs, explains what did not pass, and a pair matrix",
          "[unit]") {
  const std::string md = to_markdown(sample_report());
  CHECK_THAT(md, Catch::Contains("# faultline: faults"));
  CHECK_THAT(md, Catch::Contains("- target: ofi/tcp on lo"));
  CHECK_THAT(md, Catch::Contains("| a.pass | agent-1 <-> agent-2 | pass | 1.25 |"));
  CHECK_THAT(md, Catch::Contains("### a.fail (agent-1 <-> agent-3): fail"));
  CHECK_THAT(md, Catch::Contains("- observed: status REM_ACCESS_ERR \\| qp 0x1a"));
  CHECK_THAT(md, Catch::Contains("- hint: check the &lt;rkey> & retry"));
  CHECK(count(md, "### ") == 5);  // every run but the pass
  // 3 agents: the matrix, symmetric; agent-1/agent-2 ran pass and xfail, agent-2/agent-3 a
  // skip and a crash: a skip or an xfail is no failure, and is counted apart.
  CHECK_THAT(md, Catch::Contains("| | agent-1 | agent-2 | agent-3 |"));
  CHECK_THAT(md, Catch::Contains("| agent-1 |  | pass, 1 xfail (2) | 2 (2) |"));
  CHECK_THAT(md, Catch::Contains("| agent-3 | 2 (2) | 1, 1 skip (2) |  |"));
}

TEST_CASE("an unfinished run says so, and two agents get no matrix", "[unit]") {
  json report = sample_report();
  report["run"]["complete"] = false;
  report["scenarios"] = json::array({scenario("a.pass", "pass", "agent-1", "agent-2")});
  const std::string md = to_markdown(report);
  CHECK_THAT(md, Catch::Contains("INCOMPLETE"));
  CHECK_THAT(md, Catch::Contains("1 of 6 scenario runs: 1 pass"));
  CHECK(md.find("## Pairs") == std::string::npos);
  CHECK(md.find("## Not passed") == std::string::npos);
}

TEST_CASE("the HTML report is one self-contained file", "[unit]") {
  const std::string html = to_html(sample_report());
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(html, Catch::Contains("<style>"));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  // Links only within the page: each run's row to its details.
  CHECK(count(html, "href=") == count(html, "href=\"#run-"));
  CHECK(count(html, "href=\"#run-") > 0);
  CHECK_THAT(html, Catch::Contains("check the &lt;rkey&gt; &amp; retry"));
  CHECK_THAT(html, Catch::Contains("<span class=\"crashed\">crashed</span>"));
}

TEST_CASE("the HTML report puts failures first, errors of one cause in one row, then passes",
          "[unit]") {
  json report = sample_report();
  json runs = json::array({scenario("a.pass", "pass", "agent-1", "agent-2")});
  for (int i = 0; i < 3; ++i) {
    json lost = scenario("b.lost", "error", "agent-1", "agent-" + std::to_string(3 + i));
    lost["observed"] = "agent lost: agent-" + std::to_string(3 + i) + " was lost earlier";
    runs.push_back(lost);
  }
  runs.push_back(scenario("c.fail", "fail", "agent-2", "agent-3"));
  runs.push_back(scenario("d.xfail", "xfail", "agent-2", "agent-4"));
  for (size_t i = 0; i < runs.size(); ++i) runs[i]["run_id"] = i + 1;
  report["scenarios"] = runs;
  const std::string html = to_html(report);
  const auto at = [&html](const std::string& text) { return html.find(text); };
  CHECK(at(">c.fail</a>") < at("3 errors</span>: agent lost: AGENT was lost earlier"));
  CHECK(at("3 errors</span>") < at(">d.xfail</a>"));
  CHECK(at(">d.xfail</a>") < at(">a.pass</a>"));
  CHECK(count(html, "<tr class=\"group\">") == 1);
  CHECK_THAT(html, Catch::Contains("<section class=\"run\" id=\"run-5\">"));
}

TEST_CASE("a ring run is labelled by its size and ends", "[unit]") {
  const json ring = {{"agents",
                      {{"initiator", "agent-1"},
                       {"responder", "agent-2"},
                       {"ranks", {"agent-1", "agent-2", "agent-3", "agent-4"}}}}};
  CHECK(agents_label(ring, {}) == "ring of 4 (agent-1..agent-4)");
  CHECK(agents_label(ring, {{"agent-1", "rack1-a"}, {"agent-4", "rack2-b"}}) ==
        "ring of 4 (rack1-a..rack2-b)");
  CHECK(suite_name(json::object()) == "selection");
}

TEST_CASE("every format names pairs by the agents' names, junit by the names alone", "[unit]") {
  json report = sample_report();
  // Join order differs from run to run (agent-1 was flnode.1 in one job, flnode.0 in the
  // next); the names do not, and the hosts may.
  report["run"]["agents"] = {{{"id", "agent-1"}, {"name", "flnode.1"}, {"host", "c07"}},
                             {{"id", "agent-2"}, {"name", "flnode.0"}, {"host", "c03"}},
                             {{"id", "agent-3"}, {"name", "flnode.2"}, {"host", "node-1"}}};
  const std::string xml = to_junit(report);
  CHECK_THAT(xml, Catch::Contains("name=\"a.fail [flnode.1 &lt;-&gt; flnode.2]\""));
  CHECK_THAT(xml, !Catch::Contains("agent-1"));
  const std::string md = to_markdown(report);
  CHECK_THAT(md, Catch::Contains("| a.pass | flnode.1 (c07) <-> flnode.0 (c03) | pass |"));
  CHECK_THAT(md, Catch::Contains("### a.fail (flnode.1 (c07) <-> flnode.2): fail"));
  const std::string html = to_html(report);
  CHECK_THAT(html, Catch::Contains("<span title=\"agent-1 &lt;-&gt; agent-3\">flnode.1 (c07) "
                                   "&lt;-&gt; flnode.2</span>"));
}

TEST_CASE("a run not passed shows its completion errors and the port counters that grew",
          "[unit]") {
  json report = sample_report();
  json& failed = report["scenarios"][1];
  failed["sides"] = {
      {"agent-1",
       {{"verdict", "fail"},
        {"details",
         {{"traffic", {{"completions", {{"SUCCESS", 4}, {"RNR_RETRY_EXC_ERR", 1}}}}},
          {"port_counters",
           {{"host", "h"},
            {"device", "rxe0"},
            {"port", 1},
            {"grown", {{"hw_counters/rcvd_rnr_err", 1}, {"hw_counters/sent_pkts", 3}}}}}}}}},
      {"agent-3", {{"verdict", "pass"}, {"details", {{"port_counters", nullptr}}}}}};
  const std::string md = to_markdown(report);
  CHECK_THAT(md, Catch::Contains("- completion errors (agent-1): RNR_RETRY_EXC_ERR 1\n"));
  CHECK_THAT(md, Catch::Contains("- port counters (agent-1: rxe0 port 1): "
                                 "hw_counters/rcvd_rnr_err +1, hw_counters/sent_pkts +3\n"));
  CHECK(md.find("agent-3:") == std::string::npos);
  CHECK_THAT(to_html(report), Catch::Contains("<dt>completion errors (agent-1)</dt>"));
}

namespace {

// A SUT scenario as `faultline sut run` records it: the client detected the fault, the server
// was left waiting (a hang, with its stacks).
json sut_report() {
  json report = sample_report();
  report["schema_version"] = 2;
  report["scenarios"] = json::array();
  json program = scenario("sut.pingpong", "pass", "server", "client", "client: detected");
  program["tags"] = {"sut"};
  program["sut"] = {{"expect", "detected"},
                    {"verdict", "detected"},
                    {"judged", "client"},
                    {"roles",
                     {{"server",
                       {{"verdict", "hang"},
                        {"seconds", 3.5},
                        {"faults_applied", 0},
                        {"evidence", "still running when it was stopped"},
                        {"stacks", "Thread 1 <main>"}}},
                      {"client",
                       {{"verdict", "detected"},
                        {"exit_code", 13},
                        {"seconds", 0.5},
                        {"faults_applied", 1},
                        {"fault_to_error_ms", 2.5},
                        {"evidence", "exit code 13; cq_readerr: completion error"},
                        {"bypass", {"mlx5dv_init_obj"}}}}}}};
  report["scenarios"].push_back(program);
  return report;
}

}  // namespace

TEST_CASE("a SUT scenario shows its program's verdict and how each program ended", "[unit]") {
  const json report = sut_report();
  const std::string md = to_markdown(report);
  CHECK_THAT(md, Catch::Contains("| sut.pingpong | server, client | pass (detected) |"));
  CHECK_THAT(md, Catch::Contains("## Programs under faults"));
  CHECK_THAT(md, Catch::Contains("- server: hang: after 3.50 s, 0 fault(s) applied"));
  CHECK_THAT(md, Catch::Contains("- client: detected: exit 13 after 0.50 s, 1 fault(s) applied, "
                                 "its first error line 2.5 ms after the fault"));
  CHECK_THAT(md, Catch::Contains("went around the interposer: [\"mlx5dv_init_obj\"]"));
  const std::string xml = to_junit(report);
  CHECK_THAT(xml, Catch::Contains("<system-out>verdict pass (detected)\nserver: hang"));
  CHECK(count(xml, "<error ") == 0);
  const std::string html = to_html(report);
  CHECK_THAT(html, Catch::Contains("<details><summary>stacks</summary>Thread 1 &lt;main&gt;"));
  CHECK_THAT(html, Catch::Contains("pass (detected)</span>"));
}
