#pragma once

struct ibv_device;

namespace faultline::transports::interpose {

/// glibc's own dlsym function (this library replaces the program's), found once.
void* libc_dlsym_function();

/// A lookup through it.
void* real_dlsym(void* handle, const char* name);

/// libibverbs' own definition of `name` (looked up in libibverbs, never in this library), or
/// nullptr when libibverbs is not loaded.
void* real_verbs_symbol(const char* name);

/// The same, as a pointer to `Function` (`decltype(ibv_modify_qp)`: naming the function in
/// decltype takes no address, so nothing here needs libibverbs at load time).
template <typename Function>
Function* real_verbs(const char* name) {
  return reinterpret_cast<Function*>(real_verbs_symbol(name));
}

/// ibv_get_device_name through the lookup above: this library does not link libibverbs (a
/// program that dlopen's it privately has no global definition to bind to).
const char* device_name(ibv_device* device);

}  // namespace faultline::transports::interpose
