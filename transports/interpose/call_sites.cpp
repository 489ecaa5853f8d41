#include "call_sites.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "call_stack.hpp"
#include "event_log.hpp"
#include "exit_hooks.hpp"
#include "post_attempt.hpp"

namespace faultline::transports::interpose {

namespace {

struct SiteKey {
  std::string site;
  std::string call;
  Side side;
  std::optional<transports::Opcode> opcode;
  std::string layer;
  bool outermost;
  auto tie() const { return std::tie(site, call, side, opcode, layer, outermost); }
  bool operator<(const SiteKey& other) const { return tie() < other.tie(); }
};

struct SiteCount {
  uint64_t count = 0;
  uint64_t inline_posts = 0;
  int max_segments = 0;
  nlohmann::json stack = nlohmann::json::array();
};

std::mutex sites_mutex;
std::map<SiteKey, SiteCount>* sites = nullptr;  // never destroyed: written at exit
std::unordered_map<uint64_t, std::string>* ids_by_stack = nullptr;  // raw stack -> site id

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

uint64_t fnv1a(uint64_t hash, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hex_id(uint64_t hash) {
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(hash));
  return id;
}

std::string side_name(Side side) {
  return side == Side::kSend ? "send" : side == Side::kRecv ? "recv" : "any";
}

void write_sites() {
  std::lock_guard lock(sites_mutex);
  if (sites == nullptr) return;
  for (const auto& [key, counted] : *sites) {
    nlohmann::json event = {{"event", "site"},
                            {"site", key.site},
                            {"call", key.call},
                            {"side", side_name(key.side)},
                            {"layer", key.layer.empty() ? "verbs" : key.layer},
                            {"outermost", key.outermost},
                            {"count", counted.count},
                            {"inline_posts", counted.inline_posts},
                            {"max_segments", counted.max_segments},
                            {"stack", counted.stack}};
    if (key.opcode) event["opcode"] = std::string(transports::to_string(*key.opcode));
    log_event(std::move(event));
  }
}

}  // namespace

std::string current_site() {
  // The frames as addresses, for this process: a stack seen before is found without naming
  // its frames again (dladdr and the text of each frame cost far more than the walk, and a
  // program polled slower widens its own races).
  void* frames[32];
  const int depth = libc_backtrace(frames, 32);
  const uint64_t raw = fnv1a(kFnvBasis, frames, sizeof(void*) * static_cast<size_t>(depth));
  {
    std::lock_guard lock(sites_mutex);
    if (ids_by_stack == nullptr) ids_by_stack = new std::unordered_map<uint64_t, std::string>();
    if (auto found = ids_by_stack->find(raw); found != ids_by_stack->end()) return found->second;
  }
  // The frames outside this library as their objects' file names and their functions: the
  // same stack has the same id in every run, in every checkout, and in another build of the
  // same source (optimized or not, with ASan or without).
  uint64_t hash = kFnvBasis;
  for (const auto& frame : caller_frames()) {
    const std::string text = frame.identity() + "\n";
    hash = fnv1a(hash, text.data(), text.size());
  }
  std::lock_guard lock(sites_mutex);
  return (*ids_by_stack)[raw] = hex_id(hash);
}

std::string site_of(const Event& event) {
  if (!event.site.empty()) return std::string(event.site);
  if (event.outermost) return current_site();
  const std::string beneath = "beneath the program: " + std::string(event.layer);
  return hex_id(fnv1a(kFnvBasis, beneath.data(), beneath.size()));
}

void note_site(const Event& event, const char* call, bool posted_inline, int segments) {
  SiteKey key{site_of(event),           call,           event.side, event.opcode,
              std::string(event.layer), event.outermost};
  std::lock_guard lock(sites_mutex);
  if (sites == nullptr) {
    sites = new std::map<SiteKey, SiteCount>();
    at_process_exit(write_sites);
  }
  SiteCount& counted = (*sites)[key];
  if (counted.count++ == 0) counted.stack = caller_stack();
  counted.inline_posts += posted_inline ? 1 : 0;
  counted.max_segments = std::max(counted.max_segments, segments);
  // A post the provider refuses (-FI_EAGAIN) is no occurrence of its site: the retry is.
  if (PostAttempt* attempt = PostAttempt::current())
    attempt->on_refused([key = std::move(key), posted_inline] {
      std::lock_guard undo_lock(sites_mutex);
      auto found = sites->find(key);
      if (found == sites->end()) return;
      found->second.inline_posts -= posted_inline ? 1 : 0;
      if (--found->second.count == 0) sites->erase(found);
    });
}

}  // namespace faultline::transports::interpose
