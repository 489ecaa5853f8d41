#include "faultline/protocols/receive_slots.hpp"

namespace faultline::protocols {

Result<ReceiveSlots> ReceiveSlots::create(transports::Device& device, size_t count, size_t bytes) {
  if (count == 0 || bytes == 0) {
    return Error{ErrorCode::kInvalidArgument, "receive slots need a count and a size"};
  }
  auto buffer =
      transports::RegisteredBuffer::allocate(device, count * bytes, transports::kAccessLocalWrite);
  if (!buffer.ok()) return std::move(buffer).take_error();
  ReceiveSlots slots;
  slots.buffer_ = std::move(buffer).value();
  slots.count_ = count;
  slots.bytes_ = bytes;
  return slots;
}

Status ReceiveSlots::post(size_t index, transports::Endpoint& endpoint, CompletionTracker& tracker,
                          uint32_t kind) {
  const transports::Segment segment = buffer_.segment(index * bytes_, bytes_);
  const uint64_t wr_id = tracker.post({kind, index});
  Status posted = endpoint.post_recv({wr_id, {&segment, 1}});
  if (!posted.ok()) tracker.cancel(wr_id);
  return posted;
}

}  // namespace faultline::protocols
