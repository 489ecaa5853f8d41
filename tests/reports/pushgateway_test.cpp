// A process's metrics against a real Pushgateway (Debian `prometheus-pushgateway`) on
// 127.0.0.1: each process continues the counters its group holds, so they grow from run to
// run as counters must; groups of other instances stay apart; what the gateway holds in
// another shape is not taken; an unreachable gateway is named.
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "faultline/reports/metrics.hpp"
#include "faultline/reports/pushgateway.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"

using namespace faultline::reports;
using faultline::testing::BackgroundProcess;
using faultline::testing::free_port;
using faultline::testing::local_address;
using nlohmann::json;

namespace {

// A real gateway; `prefix` serves it under a path, as behind a reverse proxy. Its metrics in
// memory only: Debian's build persists them to /var/lib/prometheus/pushgateway.data by
// default, so each gateway would start with what the last one (any test's) held.
struct Pushgateway {
  int port = free_port();
  std::string prefix;
  BackgroundProcess process;
  explicit Pushgateway(std::string route_prefix = "")
      : prefix(std::move(route_prefix)),
        process("exec prometheus-pushgateway --persistence.file= --web.listen-address=" +
                local_address(port) + (prefix.empty() ? "" : " --web.route-prefix=" + prefix)) {
    REQUIRE(process.wait_for_output("Listening on", std::chrono::seconds(20)));
  }
  std::string url() const { return "http://" + local_address(port) + prefix; }
};

MetricsPlan links_plan() {
  MetricsPlan plan;
  plan.suite = "links";
  plan.scenarios = {"pingpong"};
  plan.transport = "ofi/tcp";
  plan.device = "lo";
  plan.label_values = {{"verdict", {"pass", "fail"}}, {"op", {"SEND"}}};
  return plan;
}

// One run of a fresh process as `instance`: the failing pingpong counted once.
void one_failing_run(const std::string& url, const std::string& instance) {
  Metrics metrics;
  metrics.push_to(url, instance);
  metrics.start_run(links_plan());
  metrics.count_scenario({{"id", "pingpong"}, {"verdict", "fail"}, {"duration_ms", 300.0}}, "links",
                         "ofi/tcp", "lo");
  metrics.end_run();
  REQUIRE(metrics.finish(false).ok());
}

// The value the gateway holds for `family` in the group of `instance`, where its labels
// include `labels`; -1 when there is none.
double held(const std::string& url, const std::string& instance, const std::string& family,
            const json& labels = json::object()) {
  const PushGroup group{url, "faultline", {{"instance", instance}, {"suite", "links"}}};
  auto families = read_push_group(group, std::chrono::seconds(5));
  REQUIRE(families.ok());
  if (!families->contains(family)) return -1;
  for (const auto& metric : families->at(family).at("metrics")) {
    bool matches = true;
    for (const auto& [name, value] : labels.items())
      matches = matches && metric.at("labels").value(name, "") == value;
    if (!matches) continue;
    if (metric.contains("count")) return std::stod(metric.at("count").get<std::string>());
    return std::stod(metric.at("value").get<std::string>());
  }
  return -1;
}

}  // namespace

TEST_CASE("pushed counters continue from run to run in their own group", "[integration]") {
  Pushgateway gateway;
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 1);
  // Pre-created at 0 in the first push: a dashboard's increase() sees the first failure.
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "pass"}}) == 0);
  one_failing_run(gateway.url(), "node7");
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 3);
  CHECK(held(gateway.url(), "node7", "faultline_scenario_duration_seconds") == 3);
  // Another node's pushes are a group of their own: nothing overwritten, nothing added.
  one_failing_run(gateway.url(), "node8");
  CHECK(held(gateway.url(), "node8", "faultline_scenarios_total", {{"verdict", "fail"}}) == 1);
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 3);
  // A finished run leaves no agent up in the gateway.
  {
    Metrics metrics;
    metrics.push_to(gateway.url(), "node7");
    metrics.start_run(links_plan());
    metrics.set_agent_up("node7", true);
    metrics.end_run();
    REQUIRE(metrics.finish(true).ok());
  }
  CHECK(held(gateway.url(), "node7", "faultline_agent_up", {{"agent", "node7"}}) == 0);
  const double succeeded = held(gateway.url(), "node7", "faultline_last_success_timestamp_seconds");
  CHECK(succeeded > 0);
  // A failing run keeps the last success it found.
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_last_success_timestamp_seconds") == succeeded);
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 4);
}

TEST_CASE("a gateway behind a path prefix is pushed to and read there", "[integration]") {
  Pushgateway gateway("/pushgateway");
  one_failing_run(gateway.url() + "/", "node7");
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 1);
}

TEST_CASE("a Pushgateway URL is taken as curl parses it: a port and a path when given", "[unit]") {
  CHECK(pushgateway_base("http://pushgateway").value() == "http://pushgateway");
  CHECK(pushgateway_base("http://127.0.0.1:9091/").value() == "http://127.0.0.1:9091");
  CHECK(pushgateway_base("https://gw.example/metrics-in/").value() ==
        "https://gw.example/metrics-in");
  for (const char* wrong : {"pushgateway:9091", "ftp://gw:21", "http://:9091", "http://gw:0",
                            "http://gw:70000", "http://gw/?x=1", "http://user@gw:9091", ""}) {
    const auto base = pushgateway_base(wrong);
    INFO(wrong);
    REQUIRE_FALSE(base.ok());
    CHECK_THAT(base.error().message, Catch::StartsWith("expected http://HOST[:PORT][/PATH]"));
  }
}

TEST_CASE("what a gateway holds in another shape is not taken", "[integration]") {
  Pushgateway gateway;
  // Another version's series: other labels, other latency buckets.
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("faultline_scenarios_total")
      .Register(*registry)
      .Add({{"scenario", "pingpong"}, {"verdict", "fail"}})
      .Increment(7);
  prometheus::BuildHistogram()
      .Name("faultline_operation_latency_seconds")
      .Register(*registry)
      .Add({{"op", "SEND"}}, prometheus::Histogram::BucketBoundaries{0.001, 0.01})
      .Observe(0.005);
  REQUIRE(push_group({gateway.url(), "faultline", {{"instance", "node7"}, {"suite", "links"}}},
                     registry, std::chrono::seconds(5))
              .ok());
  Metrics metrics;
  metrics.push_to(gateway.url(), "node7");
  metrics.start_run(links_plan());
  for (const auto& family : metrics.registry().Collect()) {
    if (family.name == "faultline_scenarios_total") {
      for (const auto& metric : family.metric) CHECK(metric.counter.value == 0);
    }
    if (family.name == "faultline_operation_latency_seconds") {
      for (const auto& metric : family.metric) CHECK(metric.histogram.sample_count == 0);
    }
  }
}

TEST_CASE("an unreachable Pushgateway is named, and the run goes on", "[integration]") {
  const std::string url = "http://" + local_address(free_port());
  Metrics metrics;
  metrics.push_to(url, "node7");
  metrics.start_run(links_plan());  // said on stderr; nothing thrown
  metrics.count_scenario({{"id", "pingpong"}, {"verdict", "pass"}}, "links", "ofi/tcp", "lo");
  const auto pushed = metrics.finish(true);
  REQUIRE_FALSE(pushed.ok());
  CHECK_THAT(pushed.error().describe(), Catch::Contains(url));
}

namespace {

// Not a Pushgateway: on 127.0.0.1, it accepts each connection, reads the request and answers
// `answer` (nothing at all when empty), then holds the connection until it is gone.
class OddServer {
 public:
  explicit OddServer(std::string answer) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0);
    REQUIRE(listen(fd_, 4) == 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OddServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  OddServer(const OddServer&) = delete;
  OddServer& operator=(const OddServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      const int client = accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      char request[65536];
      (void)!read(client, request, sizeof request);
      for (size_t sent = 0; sent < answer_.size() && !stop_;) {
        const ssize_t n = send(client, answer_.data() + sent, answer_.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      close(client);
    }
  }

  std::string answer_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("a gateway that never answers, redirects or answers too much is an error in time",
          "[integration]") {
  auto registry = std::make_shared<prometheus::Registry>();
  const PushGroup group{"", "faultline", {{"instance", "node7"}}};
  {
    OddServer silent("");
    PushGroup at = group;
    at.url = silent.url();
    const auto started = std::chrono::steady_clock::now();
    const faultline::Status pushed = push_group(at, registry, std::chrono::seconds(1));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    REQUIRE_FALSE(pushed.ok());
    CHECK_THAT(pushed.error().describe_with_hint(), Catch::Contains("within 1000 ms"));
  }
  {
    OddServer redirect(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/\r\n"
        "Content-Length: 0\r\n\r\n");
    PushGroup at = group;
    at.url = redirect.url();
    const faultline::Status pushed = push_group(at, registry, std::chrono::seconds(5));
    REQUIRE_FALSE(pushed.ok());
    CHECK_THAT(pushed.error().describe_with_hint(),
               Catch::Contains("HTTP 302") && Catch::Contains("a redirect is not followed"));
  }
  {
    const size_t huge = 20u << 20;
    OddServer flood("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(huge) + "\r\n\r\n" +
                    std::string(huge, ' '));
    PushGroup at = group;
    at.url = flood.url();
    const auto held = read_push_group(at, std::chrono::seconds(10));
    REQUIRE_FALSE(held.ok());
    CHECK_THAT(held.error().message, Catch::Contains("larger than 16 MiB"));
  }
}
