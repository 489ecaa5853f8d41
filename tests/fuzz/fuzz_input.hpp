#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The libFuzzer entry point every target defines; replay_main.cpp calls it where libFuzzer is
// not linked (g++ builds).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace faultline::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace faultline::fuzz
