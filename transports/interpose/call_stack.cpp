#include "call_stack.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "function_names.hpp"

namespace faultline::transports::interpose {

namespace {

constexpr size_t kMostFrames = 8;

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

std::string hex(size_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%zx", value);
  return text;
}

// The functions at `address`, innermost first: libdw's names, else the dynamic symbol dladdr
// found (a host without libdw).
std::vector<std::string> names_at(const void* address, const Dl_info& info) {
  std::vector<std::string> names = function_names_at(address);
  if (names.empty() && info.dli_sname != nullptr)
    names.push_back(readable_function(info.dli_sname));
  return names;
}

}  // namespace

int libc_backtrace(void** frames, int size) {
  using Backtrace = int(void**, int);
  static auto* libc = reinterpret_cast<Backtrace*>(dlvsym(RTLD_NEXT, "backtrace", "GLIBC_2.2.5"));
  return libc != nullptr ? libc(frames, size) : backtrace(frames, size);
}

std::string CallerFrame::text() const {
  if (function.empty()) return object + "+" + hex(offset);
  return object + "(" + function + ")" + (inlined ? " inlined" : "+" + hex(offset));
}

std::string CallerFrame::identity() const {
  const size_t slash = object.rfind('/');
  const std::string file = slash == std::string::npos ? object : object.substr(slash + 1);
  return file + "(" + (function.empty() ? "+" + hex(offset) : function) + ")";
}

std::vector<CallerFrame> caller_frames() {
  void* frames[40];
  const int count = libc_backtrace(frames, 40);
  Dl_info own{};
  dladdr(reinterpret_cast<void*>(&caller_frames), &own);
  std::vector<CallerFrame> stack;
  for (int i = 0; i < count && stack.size() < kMostFrames; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr) continue;
    if (info.dli_fbase == own.dli_fbase) continue;  // this library's own frames
    // A return address points after the call: one byte back is inside the calling line.
    const char* address = static_cast<char*>(frames[i]) - 1;
    const std::string object = object_path(info.dli_fname);
    const auto offset = static_cast<size_t>(address - static_cast<char*>(info.dli_fbase));
    const std::vector<std::string> names = names_at(address, info);
    for (size_t n = 0; n < names.size() && stack.size() < kMostFrames; ++n)
      stack.push_back({object, names[n], offset, n + 1 < names.size()});
    if (names.empty()) stack.push_back({object, "", offset, false});
  }
  return stack;
}

nlohmann::json caller_stack() {
  nlohmann::json stack = nlohmann::json::array();
  for (const auto& frame : caller_frames()) stack.push_back(frame.text());
  return stack;
}

}  // namespace faultline::transports::interpose
