#include "faultline/transports/registered_buffer.hpp"

#include "faultline/transports/memory_provider.hpp"

namespace faultline::transports {

Result<RegisteredBuffer> RegisteredBuffer::allocate(Device& device, size_t bytes, uint32_t access) {
  HostMemoryProvider host;
  auto memory = host.allocate(bytes, 4096);
  if (!memory.ok()) return std::move(memory).take_error();
  RegisteredBuffer buffer;
  buffer.memory = memory.value();
  buffer.length = bytes;
  auto region = device.register_memory(buffer.memory.get(), bytes, access);
  if (!region.ok()) return std::move(region).take_error();
  buffer.region = std::move(region).value();
  return buffer;
}

}  // namespace faultline::transports
