#include "faultline/transports/local_pair.hpp"

#include <algorithm>

namespace faultline::transports {

Result<std::unique_ptr<LocalPair>> LocalPair::open(const DeviceOpener& opener,
                                                   const ConfigFor& config_for) {
  std::unique_ptr<LocalPair> pair(new LocalPair());
  for (End& end : pair->sides_) {
    auto device = opener();
    if (!device.ok()) return std::move(device).take_error();
    end.device = std::move(device).value();
    auto endpoint = end.device->create_endpoint(config_for(end.device->info()));
    if (!endpoint.ok()) return std::move(endpoint).take_error();
    end.endpoint = std::move(endpoint).value();
  }
  Endpoint& a = *pair->sides_[kA].endpoint;
  Endpoint& b = *pair->sides_[kB].endpoint;
  FAULTLINE_RETURN_IF_ERROR(a.connect(b.address()));
  FAULTLINE_RETURN_IF_ERROR(b.connect(a.address()));
  return pair;
}

Result<std::unique_ptr<LocalPair>> LocalPair::open(const DeviceOpener& opener,
                                                   const EndpointConfig& config_a,
                                                   const EndpointConfig& config_b) {
  bool first = true;
  return open(opener, [&](const DeviceInfo&) {
    const EndpointConfig& config = first ? config_a : config_b;
    first = false;
    return config;
  });
}

LocalPair::~LocalPair() {
  for (End& end : sides_) end.endpoint.reset();
  for (End& end : sides_) end.buffers.clear();
}

Result<RegisteredBuffer*> LocalPair::buffer(Side side, size_t length, uint32_t access) {
  auto buffer = RegisteredBuffer::allocate(device(side), std::max<size_t>(length, 1), access);
  if (!buffer.ok()) return std::move(buffer).take_error();
  auto& buffers = sides_[side].buffers;
  buffers.push_back(std::make_unique<RegisteredBuffer>(std::move(buffer).value()));
  buffers.back()->length = length;
  return buffers.back().get();
}

Status LocalPair::progress(Side side, std::chrono::milliseconds wait) {
  Completion batch[8];
  for (Side polled : {side, side == kA ? kB : kA}) {
    auto count = endpoint(polled).poll(batch, polled == side ? wait : std::chrono::milliseconds(0));
    if (!count.ok()) return std::move(count).take_error();
    auto& backlog = sides_[polled].backlog;
    backlog.insert(backlog.end(), batch, batch + count.value());
  }
  return {};
}

Result<std::optional<Completion>> LocalPair::next(Side side, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto& backlog = sides_[side].backlog;
  while (backlog.empty()) {
    if (std::chrono::steady_clock::now() > deadline) return std::optional<Completion>();
    FAULTLINE_RETURN_IF_ERROR(progress(side, std::chrono::milliseconds(1)));
  }
  Completion first = backlog.front();
  backlog.pop_front();
  return std::optional<Completion>(first);
}

Result<std::vector<Completion>> LocalPair::drain(Side side, std::chrono::milliseconds quiet) {
  std::vector<Completion> drained;
  auto& backlog = sides_[side].backlog;
  auto last_arrival = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - last_arrival < quiet) {
    FAULTLINE_RETURN_IF_ERROR(progress(side, std::chrono::milliseconds(0)));
    if (!backlog.empty()) {
      drained.insert(drained.end(), backlog.begin(), backlog.end());
      backlog.clear();
      last_arrival = std::chrono::steady_clock::now();
    }
  }
  return drained;
}

}  // namespace faultline::transports
