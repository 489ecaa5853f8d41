#include "faultline/transports/meter/traffic_meter.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <unordered_map>

#include "faultline/transports/completion_status.hpp"

namespace faultline::transports::meter {

namespace {

using Clock = std::chrono::steady_clock;

bool is_receive(Opcode op) { return op == Opcode::kRecv || op == Opcode::kRecvRdmaWithImm; }

size_t total_length(std::span<const Segment> segments) {
  size_t bytes = 0;
  for (const auto& segment : segments) bytes += segment.length;
  return bytes;
}

class MeterEndpoint : public Endpoint {
 public:
  MeterEndpoint(std::unique_ptr<Endpoint> inner, std::shared_ptr<TrafficCounts> counts)
      : inner_(std::move(inner)), counts_(std::move(counts)) {}

  std::vector<std::byte> address() const override { return inner_->address(); }
  Status connect(std::span<const std::byte> peer_address) override {
    return inner_->connect(peer_address);
  }

  Status post_send(const WorkRequest& request) override {
    const auto posted = Clock::now();
    Status status = inner_->post_send(request);
    if (!status.ok()) return status;
    const size_t bytes = total_length(request.segments);
    if (request.signaled) {
      pending_[request.wr_id].push_back({request.op, posted, bytes});
    } else if (request.op != Opcode::kRdmaRead) {
      counts_->bytes_sent += bytes;  // no completion will come: counted as it leaves
    }
    return status;
  }

  Status post_recv(const RecvRequest& request) override { return inner_->post_recv(request); }

  Result<size_t> poll(std::span<Completion> out, std::chrono::milliseconds timeout) override {
    auto polled = inner_->poll(out, timeout);
    if (!polled.ok()) return polled;
    const auto now = Clock::now();
    for (size_t i = 0; i < polled.value(); ++i) count(out[i], now);
    return polled;
  }

  Status modify_to_error() override { return inner_->modify_to_error(); }
  uint32_t qp_num() const override { return inner_->qp_num(); }
  const EndpointConfig& config() const override { return inner_->config(); }

 private:
  struct Pending {
    Opcode op;
    Clock::time_point posted;
    size_t bytes;
  };

  void count(const Completion& completion, Clock::time_point now) {
    ++counts_->completions[std::string(to_string(completion.status))];
    if (is_receive(completion.op)) {
      if (completion.ok()) counts_->bytes_received += completion.byte_len;
      return;
    }
    // A send-side completion answers the oldest outstanding post of its wr_id.
    auto found = pending_.find(completion.wr_id);
    if (found == pending_.end()) return;  // stale, duplicated or replayed: nothing posted
    const Pending post = found->second.front();
    found->second.pop_front();
    if (found->second.empty()) pending_.erase(found);
    if (!completion.ok()) return;
    if (post.op == Opcode::kRdmaRead) {
      counts_->bytes_received += post.bytes;
    } else {
      counts_->bytes_sent += post.bytes;
    }
    counts_->latency[std::string(to_string(post.op))].observe(
        std::chrono::duration<double>(now - post.posted).count());
  }

  std::unique_ptr<Endpoint> inner_;
  std::shared_ptr<TrafficCounts> counts_;
  std::unordered_map<uint64_t, std::deque<Pending>> pending_;
};

class MeterDevice : public Device {
 public:
  MeterDevice(std::unique_ptr<Device> inner, std::shared_ptr<TrafficCounts> counts)
      : inner_(std::move(inner)), counts_(std::move(counts)) {}

  const DeviceInfo& info() const override { return inner_->info(); }
  Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                        uint32_t access) override {
    return inner_->register_memory(addr, length, access);
  }
  Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) override {
    auto endpoint = inner_->create_endpoint(config);
    if (!endpoint.ok()) return endpoint;
    return std::unique_ptr<Endpoint>(
        std::make_unique<MeterEndpoint>(std::move(endpoint).value(), counts_));
  }

 private:
  std::unique_ptr<Device> inner_;
  std::shared_ptr<TrafficCounts> counts_;
};

}  // namespace

void LatencyHistogram::observe(double seconds) {
  const auto& bounds = latency_bounds_seconds();
  const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
  ++buckets[static_cast<size_t>(bucket)];
  ++count;
  sum_seconds += seconds;
  max_seconds = std::max(max_seconds, seconds);
}

nlohmann::json TrafficCounts::to_json() const {
  nlohmann::json latencies = nlohmann::json::object();
  for (const auto& [op, histogram] : latency) {
    latencies[op] = {{"count", histogram.count},
                     {"sum_seconds", histogram.sum_seconds},
                     {"max_seconds", histogram.max_seconds},
                     {"buckets", histogram.buckets}};
  }
  return {{"completions", completions},
          {"bytes", {{"sent", bytes_sent}, {"received", bytes_received}}},
          {"latency", latencies}};
}

std::unique_ptr<Device> meter_device(std::unique_ptr<Device> device,
                                     std::shared_ptr<TrafficCounts> counts) {
  return std::make_unique<MeterDevice>(std::move(device), std::move(counts));
}

}  // namespace faultline::transports::meter
