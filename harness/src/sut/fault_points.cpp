// A program's fault space as a sweep sees it: the call sites a run under `observe` mapped, the
// families that apply at each, and the points (a family at one occurrence of a site), each
// with an id that names it from run to run.
#include "faultline/harness/sut/fault_points.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string_view>

#include "faultline/harness/base/strict_json.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;

bool is_one_of(const std::string& value, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* name) { return value == name; });
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

// The filters that put a fault at `site`: its stack, its side and opcode, its layer, its rank.
json site_filters(const CallSite& site, const char* side_key) {
  json fault = {{"site", site.site}};
  if (site.side != "any") fault[side_key] = site.side;
  if (!site.opcode.empty()) fault["opcode"] = site.opcode;
  if (!site.outermost) fault["layer"] = site.layer;
  if (site.rank) fault["rank"] = *site.rank;
  return fault;
}

// The fault of `family` at `site` without its firing rule.
json family_fault(const CallSite& site, const std::string& family) {
  const bool post_kind = is_one_of(family, {"fail_post", "segment_fewer"});
  json fault = site_filters(site, post_kind ? "post" : "side");
  if (family == "status") {
    fault.update({{"kind", "rewrite_status"}, {"status", "REM_ACCESS_ERR"}});
  } else if (family == "qp_error") {
    fault.update({{"kind", "rewrite_status"}, {"status", "RETRY_EXC_ERR"}, {"qp_error", true}});
  } else if (family == "drop") {
    fault["kind"] = "drop_completion";
  } else if (family == "corrupt_data") {
    fault.update({{"kind", "corrupt_data"}, {"data", "scribble"}});
  } else if (family == "fail_post") {
    fault.update({{"kind", "fail_post"}, {"errno", ENOMEM}});
  } else if (family == "segment_fewer") {
    fault.update({{"kind", "segment_count"}, {"mode", "fewer"}});
  } else if (family == "inline_off") {
    fault.update({{"kind", "inline"}, {"mode", "off"}});
  }
  return fault;
}

std::string id_of(const CallSite& site, const std::string& family, uint64_t nth) {
  return family + ":" + site.site + ":" + site.call + ":" + site.side + ":" +
         (site.opcode.empty() ? "-" : site.opcode) + ":" + (site.outermost ? "-" : site.layer) +
         ":r" + (site.rank ? std::to_string(*site.rank) : "-") + ":n" + std::to_string(nth);
}

}  // namespace

bool CallSite::completes() const {
  return call.find("poll") != std::string::npos || call.find("cq_read") != std::string::npos;
}

StackFrame parse_frame(std::string_view text) {
  constexpr std::string_view kInlined = ") inlined";
  StackFrame frame;
  const size_t open = text.find('(');
  frame.inlined = text.ends_with(kInlined);
  const size_t close = frame.inlined ? text.size() - kInlined.size() : text.rfind(")+0x");
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    frame.object = text.substr(0, open);
    frame.function = text.substr(open + 1, close - open - 1);
    if (!frame.inlined) frame.offset = text.substr(close + 2);
    return frame;
  }
  frame.inlined = false;
  const size_t plus = text.rfind("+0x");
  frame.object = text.substr(0, plus);
  if (plus != std::string_view::npos) frame.offset = text.substr(plus + 1);
  return frame;
}

std::string CallSite::label() const {
  // Named by the first function that is the program's: past the API's own inline wrappers
  // (fi_send, ibv_post_send from their headers).
  for (const std::string& text : stack) {
    StackFrame frame = parse_frame(text);
    const std::string offset = frame.offset.empty() ? "" : "+" + frame.offset;
    if (frame.function.empty()) {
      const size_t slash = frame.object.rfind('/');
      return (slash == std::string::npos ? frame.object : frame.object.substr(slash + 1)) + offset;
    }
    const bool api_wrapper =
        frame.function.rfind("fi_", 0) == 0 || frame.function.rfind("ibv_", 0) == 0;
    if (frame.inlined && api_wrapper) continue;
    // gloo::transport::ibverbs::Pair::send, without its parameters.
    if (const size_t parameters = frame.function.find('('); parameters != std::string::npos)
      frame.function.resize(parameters);
    return frame.function + offset;
  }
  return site;
}

std::string CallSite::what() const {
  return call + " " + (opcode.empty() ? side : opcode) + (outermost ? "" : " at " + layer);
}

std::vector<CallSite> call_sites(const std::vector<json>& events) {
  std::vector<CallSite> sites;
  // A site is a fault filter: two processes of one program without a rank to tell them apart
  // report the same site, which one point reaches in both. One entry each, the larger counts.
  const auto same_filter = [](const CallSite& a, const CallSite& b) {
    return a.site == b.site && a.call == b.call && a.side == b.side && a.opcode == b.opcode &&
           a.layer == b.layer && a.outermost == b.outermost && a.rank == b.rank;
  };
  for (const json& event : events) {
    if (!event.is_object() || text_at(event, "event") != "site") continue;
    CallSite site;
    site.site = text_at(event, "site");
    site.call = text_at(event, "call");
    site.side = text_at(event, "side");
    site.opcode = text_at(event, "opcode");
    site.layer = text_at(event, "layer");
    site.outermost = event.value("outermost", true);
    if (event.contains("rank") && event.at("rank").is_number_integer())
      site.rank = event.at("rank").get<int>();
    site.count = event.value("count", uint64_t{0});
    site.inline_posts = event.value("inline_posts", uint64_t{0});
    site.max_segments = event.value("max_segments", 0);
    for (const json& frame : event.value("stack", json::array()))
      if (frame.is_string()) site.stack.push_back(frame.get<std::string>());
    if (site.site.size() != 16 || site.call.empty() || site.count == 0) continue;
    const auto seen = std::find_if(sites.begin(), sites.end(),
                                   [&](const CallSite& other) { return same_filter(site, other); });
    if (seen == sites.end()) {
      sites.push_back(std::move(site));
      continue;
    }
    seen->count = std::max(seen->count, site.count);
    seen->inline_posts = std::max(seen->inline_posts, site.inline_posts);
    seen->max_segments = std::max(seen->max_segments, site.max_segments);
  }
  return sites;
}

const std::vector<std::string>& sweep_families() {
  static const std::vector<std::string> families = {"status",       "qp_error",  "drop",
                                                    "corrupt_data", "fail_post", "segment_fewer",
                                                    "inline_off",   "limits"};
  return families;
}

std::string check_allowed_verdicts(const std::vector<std::string>& verdicts) {
  for (const auto& verdict : verdicts) {
    if (verdict != "hang" && verdict != "undetected" && verdict != "silent-corruption" &&
        verdict != "crashed" && verdict != "fail")
      return "\"" + verdict +
             "\" is not a verdict to allow: hang, undetected, silent-corruption, crashed or fail";
  }
  return "";
}

std::vector<std::string> families_at(const CallSite& site) {
  std::vector<std::string> families;
  const bool verbs = site.layer == "verbs";
  if (site.completes()) {
    families = {"status", "drop"};
    if (verbs) families.insert(families.begin() + 1, "qp_error");
    // What a receive or read delivered (a write with immediate's receive holds no data).
    if (site.side == "recv" && site.opcode != "RECV_RDMA_WITH_IMM")
      families.emplace_back("corrupt_data");
    if (verbs && site.opcode == "RDMA_READ") families.emplace_back("corrupt_data");
    return families;
  }
  // The ibv_wr_* API builds a request's data in one call and posts the batch in another.
  if (site.call == "ibv_wr_complete") return {"fail_post"};
  const bool builds = site.call.rfind("ibv_wr_set", 0) == 0;
  const bool injects = site.call.find("inject") != std::string::npos;
  const bool sends_bytes =
      site.side == "send" &&
      is_one_of(site.opcode, {"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM"});
  if (verbs && sends_bytes) families.emplace_back("corrupt_data");
  if (!builds) families.emplace_back("fail_post");
  if (site.max_segments >= 1 && !injects && site.call != "ibv_wr_set_inline_data")
    families.emplace_back("segment_fewer");
  if (site.side == "send" && site.inline_posts > 0) families.emplace_back("inline_off");
  return families;
}

std::string FaultPoint::row() const {
  if (!site) return "limits " + target;
  return (site->rank ? "rank " + std::to_string(*site->rank) + " " : std::string()) +
         site->label() + " [" + site->site.substr(0, 8) + "] " + site->what();
}

std::string FaultPoint::name() const {
  return site ? row() + ": " + family + " (" + occurrence + ")" : row();
}

FaultPoint point_at(const CallSite& site, const std::string& family, uint64_t nth,
                    const std::string& occurrence) {
  FaultPoint point;
  point.family = family;
  point.site = site;
  point.occurrence = occurrence;
  point.fault = family_fault(site, family);
  // inline applies to every match: one point per site.
  point.nth = family == "inline_off" ? 0 : nth;
  if (point.nth != 0) point.fault["nth"] = point.nth;
  point.id = id_of(site, family, point.nth);
  return point;
}

FaultPoint limits_point(const std::string& target, json fault) {
  FaultPoint point;
  point.family = "limits";
  point.occurrence = "every";
  point.target = target;
  point.fault = std::move(fault);
  point.id = "limits:" + target;
  return point;
}

Result<FaultPoint> point_from_id(const std::string& id) {
  const std::string form =
      "a point id: FAMILY:SITE:CALL:SIDE:OPCODE:LAYER:rRANK:nNTH (as a sweep's report names "
      "it) or limits:PROFILE[.LIMIT]";
  const auto bad = [&](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument, "--point " + id + ": " + why + "; expected " + form};
  };
  const std::vector<std::string> parts = split(id, ':');
  if (parts.size() == 2 && parts[0] == "limits") {
    if (parts[1].empty() || parts[1].front() == '.' || parts[1].back() == '.')
      return bad("no profile, or nothing after its dot");
    return limits_point(parts[1], json::object());
  }
  if (parts.size() != 8) return bad(std::to_string(parts.size()) + " fields");
  const auto& families = sweep_families();
  if (std::find(families.begin(), families.end(), parts[0]) == families.end())
    return bad("unknown family " + parts[0]);
  CallSite site;
  site.site = parts[1];
  site.call = parts[2];
  site.side = parts[3];
  site.opcode = parts[4] == "-" ? "" : parts[4];
  site.outermost = parts[5] == "-";
  site.layer = site.outermost ? (site.call.rfind("ibv_", 0) == 0 ? "verbs" : "") : parts[5];
  if (site.site.size() != 16 ||
      site.site.find_first_not_of("0123456789abcdef") != std::string::npos)
    return bad("the site is not 16 hex digits");
  if (!is_one_of(site.side, {"send", "recv", "any"})) return bad("side " + site.side);
  if (parts[6].size() < 2 || parts[6][0] != 'r') return bad("no rank field");
  if (parts[6] != "r-") {
    // A rank as the sweep names it: digits, after a '-' for a rank below 0.
    const std::string rank = parts[6].substr(1);
    const std::string digits = rank.substr(rank.starts_with('-') ? 1 : 0);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return bad("rank " + rank);
    site.rank = std::stoi(rank);
  }
  if (parts[7].size() < 2 || parts[7].size() > 19 || parts[7][0] != 'n' ||
      parts[7].find_first_not_of("0123456789", 1) != std::string::npos)
    return bad("no occurrence field");
  const uint64_t nth = std::stoull(parts[7].substr(1));
  if (nth == 0 && parts[0] != "inline_off") return bad("occurrence n0 of a counted family");
  return point_at(site, parts[0], nth, "n" + std::to_string(nth));
}

}  // namespace faultline::harness::sut
