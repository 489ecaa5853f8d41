// The control channel's byte stream as a peer may send it: frames split at arbitrary points,
// each decoded and validated as every receiver state would.
#include "faultline/harness/control/frame.hpp"
#include "faultline/harness/control/messages.hpp"
#include "fuzz_input.hpp"

using faultline::harness::control::FrameDecoder;
using faultline::harness::control::validate_message;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte decides how the rest arrives: in reads of 1 to 64 bytes.
  const size_t read_size = 1 + data[0] % 64;
  FrameDecoder decoder;
  for (size_t offset = 1; offset < size; offset += read_size) {
    const size_t length = std::min(read_size, size - offset);
    decoder.feed(reinterpret_cast<const std::byte*>(data + offset), length);
    for (;;) {
      auto frame = decoder.next();
      if (!frame.ok()) return 0;  // the connection would be closed
      if (!frame.value()) break;
      const nlohmann::json& message = *frame.value();
      (void)validate_message(message, {"auth"});
      (void)validate_message(message,
                             {"heartbeat", "endpoint_info", "barrier", "step", "scenario_result"});
      (void)validate_message(message, {"run_scenario", "abort_scenario", "run_result", "peer_info",
                                       "barrier_release", "shutdown"});
    }
  }
  return 0;
}
