#include "call_sites.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "call_stack.hpp"
#include "event_log.hpp"

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
  nlohmann::json stack;
};

std::mutex sites_mutex;
std::map<SiteKey, SiteCount>* sites = nullptr;  // never destroyed: written at exit

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
  // FNV-1a over the frames: the same stack gives the same id in every run.
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const auto& frame : caller_stack()) {
    for (const char c : frame.get<std::string>()) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
    hash ^= '\n';
    hash *= 0x100000001b3ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

void note_site(const Event& event, const char* call, bool posted_inline, int segments) {
  SiteKey key{current_site(),           call,           event.side, event.opcode,
              std::string(event.layer), event.outermost};
  std::lock_guard lock(sites_mutex);
  if (sites == nullptr) {
    sites = new std::map<SiteKey, SiteCount>();
    std::atexit(write_sites);
  }
  SiteCount& counted = (*sites)[key];
  if (counted.count++ == 0) counted.stack = caller_stack();
  counted.inline_posts += posted_inline ? 1 : 0;
  counted.max_segments = std::max(counted.max_segments, segments);
}

}  // namespace faultline::transports::interpose
