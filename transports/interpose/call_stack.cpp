#include "call_stack.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace faultline::transports::interpose {

namespace {

// The main program's dli_fname is argv[0] as it was run ("ib_send_lat"): its real path instead,
// so the frame can be looked up with addr2line afterwards.
std::string object_path(const char* name) {
  if (std::strchr(name, '/') != nullptr) return name;
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return name;
  path[length] = '\0';
  return path;
}

std::string frame_text(void* address, const Dl_info& info) {
  char text[64];
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    std::snprintf(
        text, sizeof text, "+0x%zx)",
        static_cast<size_t>(static_cast<char*>(address) - static_cast<char*>(info.dli_saddr)));
    return std::string(info.dli_fname) + "(" + info.dli_sname + text;
  }
  std::snprintf(
      text, sizeof text, "+0x%zx",
      static_cast<size_t>(static_cast<char*>(address) - static_cast<char*>(info.dli_fbase)));
  return object_path(info.dli_fname) + text;
}

}  // namespace

nlohmann::json caller_stack() {
  void* frames[40];
  const int count = backtrace(frames, 40);
  Dl_info own{};
  dladdr(reinterpret_cast<void*>(&caller_stack), &own);
  nlohmann::json stack = nlohmann::json::array();
  for (int i = 0; i < count && stack.size() < 8; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr) continue;
    if (info.dli_fbase == own.dli_fbase) continue;  // this library's own frames
    // A return address points after the call: one byte back is inside the calling line.
    stack.push_back(frame_text(static_cast<char*>(frames[i]) - 1, info));
  }
  return stack;
}

}  // namespace faultline::transports::interpose
