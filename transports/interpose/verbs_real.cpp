#include "verbs_real.hpp"

#include <dlfcn.h>
#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

void* libc_dlsym_function() {
  // glibc 2.34 moved dlsym into libc (GLIBC_2.34); older ones have only GLIBC_2.2.5.
  static void* const found = [] {
    void* function = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    return function != nullptr ? function : dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  }();
  return found;
}

void* real_dlsym(void* handle, const char* name) {
  using Dlsym = void*(void*, const char*);
  auto* dlsym_of_libc = reinterpret_cast<Dlsym*>(libc_dlsym_function());
  return dlsym_of_libc != nullptr ? dlsym_of_libc(handle, name) : nullptr;
}

void* real_verbs_symbol(const char* name) {
  // RTLD_NOLOAD: only a libibverbs the program already has (linked, or dlopen'ed privately:
  // the handle then still finds it, where RTLD_NEXT would not).
  void* verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (verbs == nullptr) return nullptr;
  void* found = real_dlsym(verbs, name);
  dlclose(verbs);
  return found;
}

const char* device_name(ibv_device* device) {
  static auto* real = real_verbs<decltype(ibv_get_device_name)>("ibv_get_device_name");
  const char* name = real != nullptr ? real(device) : nullptr;
  return name != nullptr ? name : "?";
}

}  // namespace faultline::transports::interpose
