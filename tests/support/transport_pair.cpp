#include "support/transport_pair.hpp"

#include <catch2/catch.hpp>

#include "faultline/transports/memory_provider.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::testing {

using namespace transports;

std::unique_ptr<Device> open_device(const Target& target) {
  auto transport = find_transport(target.transport);
  INFO((transport.ok() ? std::string() : transport.error().describe_with_hint()));
  REQUIRE(transport.ok());
  auto device = transport.value()->open({target.provider, target.device});
  INFO((device.ok() ? std::string() : device.error().describe_with_hint()));
  REQUIRE(device.ok());
  return std::move(device).value();
}

TestBuffer make_buffer(Device& device, size_t length, uint32_t access) {
  HostMemoryProvider host;
  auto memory = host.allocate(length, 4096);
  REQUIRE(memory.ok());
  TestBuffer buffer;
  buffer.memory = memory.value();
  buffer.length = length;
  auto region = device.register_memory(buffer.memory.get(), length == 0 ? 1 : length, access);
  INFO((region.ok() ? std::string() : region.error().describe_with_hint()));
  REQUIRE(region.ok());
  buffer.region = std::move(region).value();
  return buffer;
}

TransportPair::TransportPair(const Target& target, const EndpointConfig& config_a,
                             const EndpointConfig& config_b)
    : device_a_(open_device(target)), device_b_(open_device(target)) {
  auto a = device_a_->create_endpoint(config_a);
  INFO((a.ok() ? std::string() : a.error().describe_with_hint()));
  REQUIRE(a.ok());
  auto b = device_b_->create_endpoint(config_b);
  INFO((b.ok() ? std::string() : b.error().describe_with_hint()));
  REQUIRE(b.ok());
  a_ = std::move(a).value();
  b_ = std::move(b).value();
  const auto address_a = a_->address();
  const auto address_b = b_->address();
  Status connect_a = a_->connect(address_b);
  INFO((connect_a.ok() ? std::string() : connect_a.error().describe_with_hint()));
  REQUIRE(connect_a.ok());
  Status connect_b = b_->connect(address_a);
  INFO((connect_b.ok() ? std::string() : connect_b.error().describe_with_hint()));
  REQUIRE(connect_b.ok());
}

TestBuffer TransportPair::buffer_a(size_t length, uint32_t access) {
  return make_buffer(*device_a_, length, access);
}
TestBuffer TransportPair::buffer_b(size_t length, uint32_t access) {
  return make_buffer(*device_b_, length, access);
}

void TransportPair::progress_both() {
  for (auto [endpoint, pending] :
       {std::pair{a_.get(), &pending_a_}, std::pair{b_.get(), &pending_b_}}) {
    Completion batch[8];
    auto polled = endpoint->poll(batch, 0ms);
    if (!polled.ok()) FAIL(polled.error().describe_with_hint());
    pending->insert(pending->end(), batch, batch + polled.value());
  }
}

Completion TransportPair::wait(std::vector<Completion>& pending,
                               std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pending.empty() && std::chrono::steady_clock::now() < deadline) progress_both();
  INFO("no completion within " << timeout.count() << " ms");
  REQUIRE(!pending.empty());
  Completion first = pending.front();
  pending.erase(pending.begin());
  return first;
}

std::vector<Completion> TransportPair::drain(std::vector<Completion>& pending,
                                             std::chrono::milliseconds quiet) {
  std::vector<Completion> drained;
  auto last_arrival = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - last_arrival < quiet) {
    progress_both();
    if (!pending.empty()) {
      drained.insert(drained.end(), pending.begin(), pending.end());
      pending.clear();
      last_arrival = std::chrono::steady_clock::now();
    }
  }
  return drained;
}

Completion TransportPair::wait_a(std::chrono::milliseconds timeout) {
  return wait(pending_a_, timeout);
}
Completion TransportPair::wait_b(std::chrono::milliseconds timeout) {
  return wait(pending_b_, timeout);
}
std::vector<Completion> TransportPair::drain_a(std::chrono::milliseconds quiet) {
  return drain(pending_a_, quiet);
}
std::vector<Completion> TransportPair::drain_b(std::chrono::milliseconds quiet) {
  return drain(pending_b_, quiet);
}

}  // namespace faultline::testing
