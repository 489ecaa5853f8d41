// How many QPs, CQs, MRs, PDs and SRQs the process holds at once: held to the plan's counts,
// and the most observed for port-check.
#include "verbs_objects.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "event_log.hpp"
#include "exit_hooks.hpp"
#include "process_plan.hpp"
#include "verbs_limits.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

constexpr size_t kKinds = 5;

struct Kind {
  const char* limit;  ///< the device profiles' name of its count
  const char* call;   ///< the create the at-exit request is logged under
};

constexpr std::array<Kind, kKinds> kKindsOf{{{"max_qp", "ibv_create_qp"},
                                             {"max_cq", "ibv_create_cq"},
                                             {"max_mr", "ibv_reg_mr"},
                                             {"max_pd", "ibv_alloc_pd"},
                                             {"max_srq", "ibv_create_srq"}}};

struct Counts {
  std::array<std::atomic<uint64_t>, kKinds> held{};
  std::mutex mutex;  // the most held and what was logged of it
  std::array<uint64_t, kKinds> most{};
  std::array<uint64_t, kKinds> logged{};
  std::string device;  // of the last create, for the at-exit requests
};

Counts& counts() {
  static auto* instance = new Counts();  // never destroyed: read at exit
  return *instance;
}

size_t index_of(VerbsObject object) { return static_cast<size_t>(object); }

bool worth_logging(uint64_t most) { return most <= 16 || (most & (most - 1)) == 0; }

// The exact most held of each kind whose last request logged less.
void log_most_at_exit() {
  Counts& all = counts();
  const std::lock_guard lock(all.mutex);
  for (size_t kind = 0; kind < kKinds; ++kind) {
    if (all.most[kind] == all.logged[kind]) continue;
    log_event({{"event", "request"},
               {"call", kKindsOf[kind].call},
               {"device", all.device},
               {"asked", {{"held", all.most[kind]}}},
               {"granted", true},
               {"at_exit", true},
               {"stack", nlohmann::json::array()}});
  }
}

}  // namespace

int refuse_one_more(VerbsObject object, const char* call, ibv_context* context) {
  const auto cap = Plan::get().caps().cap(kKindsOf[index_of(object)].limit);
  if (!cap) return 0;
  const uint64_t asked = counts().held[index_of(object)].load() + 1;
  if (asked <= *cap) return 0;
  const int refusal = Plan::get().caps().refusal_errno;
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", call},
             {"device", device_name(context->device)},
             {"field", kKindsOf[index_of(object)].limit},
             {"asked", asked},
             {"cap", *cap},
             {"errno", refusal},
             {"error", std::strerror(refusal)}});
  errno = refusal;
  return refusal;
}

void note_created(VerbsObject object, const char* call, ibv_context* context) {
  Counts& all = counts();
  const size_t kind = index_of(object);
  const uint64_t held = all.held[kind].fetch_add(1) + 1;
  if (!Plan::get().has(FaultKind::kObserve)) return;
  const std::lock_guard lock(all.mutex);
  if (held <= all.most[kind]) return;
  all.most[kind] = held;
  all.device = device_name(context->device);
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { at_process_exit(log_most_at_exit); });
  if (!worth_logging(held)) return;
  all.logged[kind] = held;
  log_observed_request(call, context, {{"held", held}}, true);
}

void note_destroyed(VerbsObject object) {
  auto& held = counts().held[index_of(object)];
  uint64_t now = held.load();
  while (now > 0 && !held.compare_exchange_weak(now, now - 1)) {
  }
}

}  // namespace faultline::transports::interpose
