// The verbs interposer (LD_PRELOAD=libfaultline-verbs.so): libibverbs' data path is inline
// calls through each context's ops table, so the library takes the calls that open a context
// and swaps the table's entries (verbs_context.cpp); the calls that create queues apply the
// plan's limits. `dlsym` is replaced too (verbs_dlsym.cpp).
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include "event_log.hpp"
#include "verbs_context.hpp"
#include "verbs_inline.hpp"
#include "verbs_limits.hpp"
#include "verbs_objects.hpp"
#include "verbs_real.hpp"
#include "verbs_sent_data.hpp"

namespace faultline::transports::interpose {
namespace {

// Direct-verbs entry points: queues made through them are driven without libibverbs' ops
// table, so the interposer cannot fault them; the log says the program went around it.
void note_bypass(const char* call) {
  log_event({{"event", "bypass"},
             {"call", call},
             {"hint", "direct-verbs queues are not interposed: faults there never fire"}});
}

void* real_provider_symbol(const char* library, const char* name) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* found = real_dlsym(handle, name);
  dlclose(handle);
  return found;
}

// A memory registration, through any of its entry points: refused above the plan's
// max_mr_size, observed for port-check.
template <typename Register>
ibv_mr* register_memory(ibv_pd* pd, size_t length, Register&& real_registration) {
  if (refuse_mr_length(length, "ibv_reg_mr", pd->context) != 0) return nullptr;
  if (refuse_one_more(VerbsObject::kMr, "ibv_reg_mr", pd->context) != 0) return nullptr;
  ibv_mr* mr = real_registration();
  observe_mr_request(length, "ibv_reg_mr", pd->context, mr != nullptr);
  if (mr != nullptr) note_created(VerbsObject::kMr, "ibv_reg_mr", pd->context);
  remember_registration(mr);
  return mr;
}

// A destroy through `real`: one fewer of `object` held when it succeeded.
template <typename Destroy, typename Object>
int destroy_counted(VerbsObject object, Destroy* real, Object* handle) {
  const int destroyed = real(handle);
  if (destroyed == 0) note_destroyed(object);
  return destroyed;
}

}  // namespace
}  // namespace faultline::transports::interpose

using namespace faultline::transports::interpose;  // NOLINT(google-build-using-namespace)

extern "C" {

__attribute__((visibility("default"))) ibv_context* ibv_open_device(ibv_device* device) {
  static auto* real = real_verbs<decltype(ibv_open_device)>("ibv_open_device");
  ibv_context* context = real != nullptr ? real(device) : nullptr;
  if (context != nullptr) instrument_context(context, "ibv_open_device");
  return context;
}

__attribute__((visibility("default"))) ibv_context* ibv_import_device(int cmd_fd) {
  static auto* real = real_verbs<decltype(ibv_import_device)>("ibv_import_device");
  ibv_context* context = real != nullptr ? real(cmd_fd) : nullptr;
  if (context != nullptr) instrument_context(context, "ibv_import_device");
  return context;
}

__attribute__((visibility("default"))) ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  static auto* real = real_verbs<decltype(ibv_create_qp)>("ibv_create_qp");
  if (refuse_qp_caps(attr->cap, attr->qp_type, "ibv_create_qp", pd->context) != 0) return nullptr;
  if (refuse_one_more(VerbsObject::kQp, "ibv_create_qp", pd->context) != 0) return nullptr;
  const ibv_qp_cap asked = attr->cap;
  ibv_qp* qp = create_with_inline_room(attr->cap, "ibv_create_qp", [&] { return real(pd, attr); });
  observe_qp_request(asked, attr->qp_type, "ibv_create_qp", pd->context, qp != nullptr);
  if (qp == nullptr) return nullptr;
  note_created(VerbsObject::kQp, "ibv_create_qp", pd->context);
  clamp_qp_caps(attr->cap, "ibv_create_qp");
  remember_qp(qp);
  return qp;
}

__attribute__((visibility("default"))) int ibv_destroy_qp(ibv_qp* qp) {
  static auto* real = real_verbs<decltype(ibv_destroy_qp)>("ibv_destroy_qp");
  forget_qp(qp);
  forget_inline_room(qp);
  const auto copies = take_sent_copies(qp);  // released after the QP is gone
  return destroy_counted(VerbsObject::kQp, real, qp);
}

__attribute__((visibility("default"))) int ibv_dereg_mr(ibv_mr* mr) {
  static auto* real = real_verbs<decltype(ibv_dereg_mr)>("ibv_dereg_mr");
  forget_registration(mr);
  return destroy_counted(VerbsObject::kMr, real, mr);
}

__attribute__((visibility("default"))) ibv_pd* ibv_alloc_pd(ibv_context* context) {
  static auto* real = real_verbs<decltype(ibv_alloc_pd)>("ibv_alloc_pd");
  if (refuse_one_more(VerbsObject::kPd, "ibv_alloc_pd", context) != 0) return nullptr;
  ibv_pd* pd = real(context);
  if (pd != nullptr) note_created(VerbsObject::kPd, "ibv_alloc_pd", context);
  return pd;
}

__attribute__((visibility("default"))) int ibv_dealloc_pd(ibv_pd* pd) {
  static auto* real = real_verbs<decltype(ibv_dealloc_pd)>("ibv_dealloc_pd");
  return destroy_counted(VerbsObject::kPd, real, pd);
}

__attribute__((visibility("default"))) int ibv_destroy_cq(ibv_cq* cq) {
  static auto* real = real_verbs<decltype(ibv_destroy_cq)>("ibv_destroy_cq");
  return destroy_counted(VerbsObject::kCq, real, cq);
}

__attribute__((visibility("default"))) int ibv_destroy_srq(ibv_srq* srq) {
  static auto* real = real_verbs<decltype(ibv_destroy_srq)>("ibv_destroy_srq");
  return destroy_counted(VerbsObject::kSrq, real, srq);
}

__attribute__((visibility("default"))) int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr,
                                                         int attr_mask) {
  static auto* real = real_verbs<decltype(ibv_modify_qp)>("ibv_modify_qp");
  if (int refused = refuse_qp_modify(qp, *attr, attr_mask); refused != 0) return refused;
  const int modified = real(qp, attr, attr_mask);
  observe_qp_modify(qp, *attr, attr_mask, modified == 0);
  return modified;
}

__attribute__((visibility("default"))) ibv_srq* ibv_create_srq(ibv_pd* pd,
                                                               ibv_srq_init_attr* attr) {
  static auto* real = real_verbs<decltype(ibv_create_srq)>("ibv_create_srq");
  if (refuse_srq_attr(attr->attr, pd->context) != 0) return nullptr;
  if (refuse_one_more(VerbsObject::kSrq, "ibv_create_srq", pd->context) != 0) return nullptr;
  const ibv_srq_attr asked = attr->attr;
  ibv_srq* srq = real(pd, attr);
  observe_srq_request(asked, pd->context, srq != nullptr);
  if (srq != nullptr) note_created(VerbsObject::kSrq, "ibv_create_srq", pd->context);
  return srq;
}

// verbs.h makes ibv_reg_mr and ibv_reg_mr_iova macros choosing among the exported
// registrations.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr(ibv_pd* pd, void* address, size_t length,
                                                          int access) {
  static auto* real = real_verbs<decltype(ibv_reg_mr)>("ibv_reg_mr");
  return register_memory(pd, length, [&] { return real(pd, address, length, access); });
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* address,
                                                               size_t length, uint64_t iova,
                                                               int access) {
  static auto* real = real_verbs<decltype(ibv_reg_mr_iova)>("ibv_reg_mr_iova");
  return register_memory(pd, length, [&] { return real(pd, address, length, iova, access); });
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* address,
                                                                size_t length, uint64_t iova,
                                                                unsigned int access) {
  static auto* real = real_verbs<decltype(ibv_reg_mr_iova2)>("ibv_reg_mr_iova2");
  return register_memory(pd, length, [&] { return real(pd, address, length, iova, access); });
}

__attribute__((visibility("default"))) ibv_cq* ibv_create_cq(ibv_context* context, int cqe,
                                                             void* cq_context,
                                                             ibv_comp_channel* channel,
                                                             int comp_vector) {
  static auto* real = real_verbs<decltype(ibv_create_cq)>("ibv_create_cq");
  if (refuse_cq_size(cqe, "ibv_create_cq", context) != 0) return nullptr;
  if (refuse_one_more(VerbsObject::kCq, "ibv_create_cq", context) != 0) return nullptr;
  ibv_cq* cq = real(context, cqe, cq_context, channel, comp_vector);
  observe_cq_request(cqe, "ibv_create_cq", context, cq != nullptr);
  if (cq != nullptr) note_created(VerbsObject::kCq, "ibv_create_cq", context);
  return cq;
}

__attribute__((visibility("default"))) int ibv_query_device(ibv_context* context,
                                                            ibv_device_attr* attr) {
  static auto* real = real_verbs<decltype(ibv_query_device)>("ibv_query_device");
  const int queried = real(context, attr);
  if (queried == 0) clamp_device_attr(*attr, "ibv_query_device", context);
  return queried;
}

// What the program reads back of a QP or an SRQ agrees with its create under the limits in
// force: a device that granted less says so on every later query too.
__attribute__((visibility("default"))) int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr,
                                                        int attr_mask,
                                                        ibv_qp_init_attr* init_attr) {
  static auto* real = real_verbs<decltype(ibv_query_qp)>("ibv_query_qp");
  const int queried = real(qp, attr, attr_mask, init_attr);
  if (queried != 0) return queried;
  if (init_attr != nullptr) clamp_qp_caps(init_attr->cap);
  if (attr != nullptr && (attr_mask & IBV_QP_CAP) != 0) clamp_qp_caps(attr->cap);
  return queried;
}

__attribute__((visibility("default"))) int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  static auto* real = real_verbs<decltype(ibv_query_srq)>("ibv_query_srq");
  const int queried = real(srq, attr);
  if (queried == 0) clamp_srq_attr(*attr);
  return queried;
}

#define FAULTLINE_BYPASS(library, name, Return, Params, Args)                        \
  __attribute__((visibility("default"))) Return name Params {                        \
    using Fn = Return Params;                                                        \
    static auto* real = reinterpret_cast<Fn*>(real_provider_symbol(library, #name)); \
    note_bypass(#name);                                                              \
    return real Args;                                                                \
  }

FAULTLINE_BYPASS("libmlx5.so.1", mlx5dv_init_obj, int, (void* obj, uint64_t type), (obj, type))
FAULTLINE_BYPASS("libmlx5.so.1", mlx5dv_create_qp, ibv_qp*,
                 (ibv_context * context, void* qp_attr, void* mlx5_attr),
                 (context, qp_attr, mlx5_attr))
FAULTLINE_BYPASS("libefa.so.1", efadv_create_qp_ex, ibv_qp*,
                 (ibv_context * context, void* attr, void* efa_attr, uint32_t size),
                 (context, attr, efa_attr, size))

}  // extern "C"
