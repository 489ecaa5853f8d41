#include "support/transport_pair.hpp"

#include <catch2/catch.hpp>

#include "faultline/transports/registry.hpp"
#include "faultline/transports/target.hpp"

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

RegisteredBuffer make_buffer(Device& device, size_t length, uint32_t access) {
  auto buffer = RegisteredBuffer::allocate(device, length == 0 ? 1 : length, access);
  INFO((buffer.ok() ? std::string() : buffer.error().describe_with_hint()));
  REQUIRE(buffer.ok());
  buffer.value().length = length;
  return std::move(buffer).value();
}

TransportPair::TransportPair(const Target& target, const EndpointConfig& config_a,
                             const EndpointConfig& config_b) {
  auto pair = LocalPair::open([&target] { return open_target_device(target); }, config_a, config_b);
  INFO((pair.ok() ? std::string() : pair.error().describe_with_hint()));
  REQUIRE(pair.ok());
  pair_ = std::move(pair).value();
}

RegisteredBuffer TransportPair::buffer_a(size_t length, uint32_t access) {
  return make_buffer(device_a(), length, access);
}
RegisteredBuffer TransportPair::buffer_b(size_t length, uint32_t access) {
  return make_buffer(device_b(), length, access);
}

Completion TransportPair::wait(LocalPair::Side side, std::chrono::milliseconds timeout) {
  auto next = pair_->next(side, timeout);
  if (!next.ok()) FAIL(next.error().describe_with_hint());
  INFO("no completion within " << timeout.count() << " ms");
  REQUIRE(next.value().has_value());
  return *next.value();
}

std::vector<Completion> TransportPair::drain(LocalPair::Side side,
                                             std::chrono::milliseconds quiet) {
  auto drained = pair_->drain(side, quiet);
  if (!drained.ok()) FAIL(drained.error().describe_with_hint());
  return std::move(drained).value();
}

Completion TransportPair::wait_a(std::chrono::milliseconds timeout) {
  return wait(LocalPair::kA, timeout);
}
Completion TransportPair::wait_b(std::chrono::milliseconds timeout) {
  return wait(LocalPair::kB, timeout);
}
std::vector<Completion> TransportPair::drain_a(std::chrono::milliseconds quiet) {
  return drain(LocalPair::kA, quiet);
}
std::vector<Completion> TransportPair::drain_b(std::chrono::milliseconds quiet) {
  return drain(LocalPair::kB, quiet);
}

}  // namespace faultline::testing
