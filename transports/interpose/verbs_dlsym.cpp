// The verbs interposer's dlsym: a program that dlopen's libibverbs and looks up its functions
// by name (NCCL's and RCCL's ibvwrap do) reaches the interposer's definitions as well.
//
// RTLD_NEXT means "after the caller", and glibc takes the caller from dlsym's return address:
// called from a wrapper, it would search after this library. On x86-64 the wrapper jumps to
// glibc's dlsym for RTLD_NEXT (a tail jump: the return address is still the caller's, and
// glibc's answer is exact). Nothing else runs there: a sanitizer's runtime looks up what it
// intercepts that way while the program starts, before any constructor (measured: an ASan
// program under the old wrapper, which walked the objects itself, died by SIGSEGV in glibc's
// do_lookup_x; looking each object up through dlopen ran their constructors early and failed
// ASan's own check). Elsewhere the objects after the caller's are searched in load order.
#include <dlfcn.h>
#include <link.h>

#include <string_view>

#include "verbs_real.hpp"

using faultline::transports::interpose::libc_dlsym_function;
using faultline::transports::interpose::real_dlsym;

namespace {

// Lookups by name in libibverbs (and the direct-verbs libraries) return this library's
// definitions; everything else is glibc's own answer.
void* by_handle(void* handle, const char* name) {
  void* found = real_dlsym(handle, name);
  if (found == nullptr || handle == RTLD_DEFAULT) return found;
  static constexpr std::string_view kOurs[] = {
      "ibv_open_device",   "ibv_import_device", "ibv_create_qp",    "ibv_destroy_qp",
      "ibv_dereg_mr",      "ibv_modify_qp",     "ibv_create_srq",   "ibv_destroy_srq",
      "ibv_reg_mr",        "ibv_reg_mr_iova",   "ibv_reg_mr_iova2", "ibv_create_cq",
      "ibv_destroy_cq",    "ibv_alloc_pd",      "ibv_dealloc_pd",   "ibv_query_device",
      "ibv_query_qp",      "ibv_query_srq",     "mlx5dv_init_obj",  "mlx5dv_create_qp",
      "efadv_create_qp_ex"};
  for (std::string_view ours : kOurs) {
    if (ours == name) return real_dlsym(RTLD_DEFAULT, name);
  }
  return found;
}

}  // namespace

extern "C" {

#if defined(__x86_64__)

__attribute__((visibility("hidden"))) void* faultline_libc_dlsym = nullptr;

__attribute__((visibility("hidden"), used)) void* faultline_dlsym_by_handle(void* handle,
                                                                            const char* name) {
  return by_handle(handle, name);
}

// glibc's dlsym itself, kept for the jump.
__attribute__((visibility("hidden"), used)) void* faultline_find_libc_dlsym() {
  faultline_libc_dlsym = libc_dlsym_function();
  return faultline_libc_dlsym;
}

// dlsym(handle, name): RTLD_NEXT ((void*)-1) jumps to glibc's, found first if need be (the
// arguments kept across the call, the stack 16-byte aligned at it); any other handle is
// by_handle's.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  cmpq $-1, %rdi
  jne faultline_dlsym_by_handle
  movq faultline_libc_dlsym(%rip), %rax
  testq %rax, %rax
  jnz 1f
  pushq %rdi
  pushq %rsi
  subq $8, %rsp
  call faultline_find_libc_dlsym
  addq $8, %rsp
  popq %rsi
  popq %rdi
1:
  jmpq *%rax
  .size dlsym, .-dlsym
)");

#else

namespace {

void* next_definition(const void* caller_address, const char* name) {
  Dl_info info{};
  link_map* caller = nullptr;
  if (dladdr1(caller_address, &info, reinterpret_cast<void**>(&caller), RTLD_DL_LINKMAP) == 0 ||
      caller == nullptr)
    return nullptr;
  for (link_map* object = caller->l_next; object != nullptr; object = object->l_next) {
    if (void* found = real_dlsym(object, name)) return found;
  }
  return nullptr;
}

}  // namespace

__attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  if (handle == RTLD_NEXT) return next_definition(__builtin_return_address(0), name);
  return by_handle(handle, name);
}

#endif

}  // extern "C"
