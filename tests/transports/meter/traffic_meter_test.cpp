// The traffic meter over a real transport (libfabric tcp): what it counts of sends, receives,
// writes and reads, and of an error completion the fault decorator makes.
#include "faultline/transports/meter/traffic_meter.hpp"

#include <catch2/catch.hpp>

#include "faultline/transports/fault/fault_device.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline;
using namespace faultline::transports;
using faultline::testing::make_buffer;
using faultline::testing::ofi_tcp;
using faultline::testing::open_device;
using namespace std::chrono_literals;

namespace {

// Two metered devices with one connected endpoint each; `plan` applies under A's meter.
struct MeteredPair {
  std::shared_ptr<meter::TrafficCounts> counts_a = std::make_shared<meter::TrafficCounts>();
  std::shared_ptr<meter::TrafficCounts> counts_b = std::make_shared<meter::TrafficCounts>();
  std::unique_ptr<Device> device_a;
  std::unique_ptr<Device> device_b;
  std::unique_ptr<Endpoint> a;
  std::unique_ptr<Endpoint> b;
  faultline::transports::RegisteredBuffer buffer_a;
  faultline::transports::RegisteredBuffer buffer_b;

  explicit MeteredPair(fault::FaultPlan plan = {})
      : device_a(meter::meter_device(fault::wrap_device(open_device(ofi_tcp()), std::move(plan),
                                                        std::make_shared<fault::FaultLog>()),
                                     counts_a)),
        device_b(meter::meter_device(open_device(ofi_tcp()), counts_b)) {
    auto made_a = device_a->create_endpoint({});
    auto made_b = device_b->create_endpoint({});
    REQUIRE_OK(made_a);
    REQUIRE_OK(made_b);
    a = std::move(made_a).value();
    b = std::move(made_b).value();
    REQUIRE_OK(a->connect(b->address()));
    REQUIRE_OK(b->connect(a->address()));
    buffer_a = make_buffer(*device_a, 4096, kAccessAll);
    buffer_b = make_buffer(*device_b, 4096, kAccessAll);
  }

  // Polls both sides until `a_wanted` completions came on A and `b_wanted` on B.
  void complete(size_t a_wanted, size_t b_wanted) {
    size_t on_a = 0;
    size_t on_b = 0;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while ((on_a < a_wanted || on_b < b_wanted) && std::chrono::steady_clock::now() < deadline) {
      Completion got[4];
      auto polled = a->poll(got, 1ms);
      REQUIRE_OK(polled);
      on_a += polled.value();
      polled = b->poll(got, 1ms);
      REQUIRE_OK(polled);
      on_b += polled.value();
    }
    REQUIRE(on_a == a_wanted);
    REQUIRE(on_b == b_wanted);
  }
};

uint64_t latency_count(const meter::TrafficCounts& counts, const std::string& op) {
  auto found = counts.latency.find(op);
  return found == counts.latency.end() ? 0 : found->second.count;
}

}  // namespace

TEST_CASE("the meter counts completions, bytes and latency of sends and receives",
          "[integration][ofi]") {
  MeteredPair pair;
  for (uint64_t i = 0; i < 3; ++i) {
    Segment into = pair.buffer_b.segment(i * 100, 100);
    REQUIRE_OK(pair.b->post_recv({i, {&into, 1}}));
    Segment from = pair.buffer_a.segment(i * 100, 64);
    REQUIRE_OK(pair.a->post_send({.wr_id = i, .op = Opcode::kSend, .segments = {&from, 1}}));
  }
  pair.complete(3, 3);
  CHECK(pair.counts_a->completions == std::map<std::string, uint64_t>{{"SUCCESS", 3}});
  CHECK(pair.counts_a->bytes_sent == 3 * 64);
  CHECK(pair.counts_a->bytes_received == 0);
  CHECK(latency_count(*pair.counts_a, "SEND") == 3);
  const auto& send = pair.counts_a->latency.at("SEND");
  CHECK(send.sum_seconds > 0);
  CHECK(send.max_seconds < 10);
  uint64_t in_buckets = 0;
  for (const uint64_t bucket : send.buckets) in_buckets += bucket;
  CHECK(in_buckets == 3);
  // The receiver counts what arrived (byte_len), not the size of its buffers.
  CHECK(pair.counts_b->completions == std::map<std::string, uint64_t>{{"SUCCESS", 3}});
  CHECK(pair.counts_b->bytes_received == 3 * 64);
  CHECK(pair.counts_b->latency.empty());
}

TEST_CASE("the meter counts a write as sent and a read as received by the initiator",
          "[integration][ofi]") {
  MeteredPair pair;
  Segment from = pair.buffer_a.segment(0, 128);
  REQUIRE_OK(pair.a->post_send({.wr_id = 7,
                                .op = Opcode::kRdmaWrite,
                                .segments = {&from, 1},
                                .remote = pair.buffer_b.region->remote(0, 128)}));
  Segment into = pair.buffer_a.segment(1024, 32);
  REQUIRE_OK(pair.a->post_send({.wr_id = 8,
                                .op = Opcode::kRdmaRead,
                                .segments = {&into, 1},
                                .remote = pair.buffer_b.region->remote(2048, 32)}));
  pair.complete(2, 0);
  CHECK(pair.counts_a->bytes_sent == 128);
  CHECK(pair.counts_a->bytes_received == 32);
  CHECK(latency_count(*pair.counts_a, "RDMA_WRITE") == 1);
  CHECK(latency_count(*pair.counts_a, "RDMA_READ") == 1);
  CHECK(pair.counts_b->completions.empty());
}

TEST_CASE("an error completion is counted by status, without bytes or latency",
          "[integration][ofi]") {
  auto rewrite = fault::parse_fault(
      {{"kind", "rewrite_status"}, {"opcode", "SEND"}, {"nth", 2}, {"status", "REM_ACCESS_ERR"}},
      fault::kDecorator, "test");
  REQUIRE(rewrite.ok());
  fault::FaultPlan plan{0, {rewrite.value()}};
  MeteredPair pair(plan);
  for (uint64_t i = 0; i < 3; ++i) {
    Segment into = pair.buffer_b.segment(i * 64, 64);
    REQUIRE_OK(pair.b->post_recv({i, {&into, 1}}));
    Segment from = pair.buffer_a.segment(i * 64, 64);
    REQUIRE_OK(pair.a->post_send({.wr_id = i, .op = Opcode::kSend, .segments = {&from, 1}}));
  }
  pair.complete(3, 3);
  CHECK(pair.counts_a->completions ==
        std::map<std::string, uint64_t>{{"SUCCESS", 2}, {"REM_ACCESS_ERR", 1}});
  CHECK(pair.counts_a->bytes_sent == 2 * 64);
  CHECK(latency_count(*pair.counts_a, "SEND") == 2);
  const auto json = pair.counts_a->to_json();
  CHECK(json.at("completions").at("REM_ACCESS_ERR") == 1);
  CHECK(json.at("bytes").at("sent") == 128);
  CHECK(json.at("latency").at("SEND").at("buckets").size() == latency_bounds_seconds().size() + 1);
}

TEST_CASE("latency buckets are upper bounds, the last one unbounded", "[unit]") {
  meter::LatencyHistogram histogram;
  const auto& bounds = latency_bounds_seconds();
  histogram.observe(bounds.front());  // on a bound: that bucket (le)
  histogram.observe(bounds.back() * 2);
  CHECK(histogram.buckets.front() == 1);
  CHECK(histogram.buckets.back() == 1);
  CHECK(histogram.count == 2);
  CHECK(histogram.max_seconds == Approx(bounds.back() * 2));
}
