#include "libfabric_api.hpp"

#include <dlfcn.h>
#include <link.h>
#include <rdma/fi_errno.h>

#include <csignal>
#include <iterator>
#include <string>

namespace faultline::transports::ofi::api {

namespace {

struct Libfabric {
  decltype(&::fi_getinfo) getinfo = nullptr;
  decltype(&::fi_fabric) fabric = nullptr;
  decltype(&::fi_dupinfo) dupinfo = nullptr;
  decltype(&::fi_freeinfo) freeinfo = nullptr;
  decltype(&::fi_strerror) strerror = nullptr;
  std::string why_not;  ///< set when libfabric.so.1 or one of its symbols is missing
};

// Debian's libfabric links libpsm2 and libpsm_infinipath, whose load-time constructors take
// over SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM (a backtrace, a .btr file in the
// working directory, exit(1)): a crash would look like an ordinary exit, and SIGTERM would run
// exit handlers under live threads. dlopen runs them; the actions the process had before are
// put back after it (HFI_NO_BACKTRACE would have to be set before the process started).
void* open_keeping_signal_actions(const char* file) {
  constexpr int kTaken[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM};
  struct sigaction before[std::size(kTaken)] = {};
  for (size_t i = 0; i < std::size(kTaken); ++i) sigaction(kTaken[i], nullptr, &before[i]);
  void* library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; i < std::size(kTaken); ++i) sigaction(kTaken[i], &before[i], nullptr);
  return library;
}

template <typename Function>
bool resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

// Loaded once (a thread-safe static), kept for the process's life: its objects may outlive
// any one caller. dlsym gives each symbol's default version, the one linking would have bound.
const Libfabric& libfabric() {
  static const Libfabric loaded = [] {
    Libfabric api;
    void* library = open_keeping_signal_actions("libfabric.so.1");
    if (library == nullptr) {
      const char* error = dlerror();
      api.why_not = "libfabric.so.1 cannot be loaded: " +
                    std::string(error != nullptr ? error : "dlopen failed");
      return api;
    }
    const char* missing = !resolve(library, "fi_getinfo", api.getinfo)     ? "fi_getinfo"
                          : !resolve(library, "fi_fabric", api.fabric)     ? "fi_fabric"
                          : !resolve(library, "fi_dupinfo", api.dupinfo)   ? "fi_dupinfo"
                          : !resolve(library, "fi_freeinfo", api.freeinfo) ? "fi_freeinfo"
                          : !resolve(library, "fi_strerror", api.strerror) ? "fi_strerror"
                                                                           : nullptr;
    if (missing != nullptr) {
      link_map* map = nullptr;
      const bool named = dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr;
      api = Libfabric{};
      api.why_not = "libfabric.so.1" +
                    (named ? " (" + std::string(map->l_name) + ")" : std::string()) + " lacks " +
                    missing + ", a function faultline calls: is it libfabric 1.x?";
    }
    return api;
  }();
  return loaded;
}

}  // namespace

const std::string& load_error() { return libfabric().why_not; }

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) {
  const Libfabric& api = libfabric();
  return api.getinfo != nullptr ? api.getinfo(version, node, service, flags, hints, info)
                                : -FI_ENOSYS;
}

int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  const Libfabric& api = libfabric();
  return api.fabric != nullptr ? api.fabric(attr, fabric, context) : -FI_ENOSYS;
}

fi_info* dupinfo(const fi_info* info) {
  const Libfabric& api = libfabric();
  return api.dupinfo != nullptr ? api.dupinfo(info) : nullptr;
}

void freeinfo(fi_info* info) {
  const Libfabric& api = libfabric();
  if (api.freeinfo != nullptr && info != nullptr) api.freeinfo(info);
}

const char* strerror(int errnum) {
  const Libfabric& api = libfabric();
  return api.strerror != nullptr ? api.strerror(errnum) : api.why_not.c_str();
}

}  // namespace faultline::transports::ofi::api
