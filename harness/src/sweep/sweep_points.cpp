// Which fault points a sweep tries: each family that applies at each call site, at its first, a
// middle and its last occurrence (or every one), and each target limit the program exceeds.
#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "faultline/harness/port_check/port_check.hpp"
#include "faultline/harness/sweep/sweep.hpp"

namespace faultline::harness::sweep {

namespace {

using nlohmann::json;

// A middle occurrence of [2, count - 1], the same for a site and family under one seed whatever
// else the program does.
uint64_t middle_of(uint64_t count, const std::string& site, const std::string& family,
                   uint64_t seed) {
  uint64_t hash = 0xcbf29ce484222325ULL ^ seed;
  for (const char c : site + "/" + family) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  std::mt19937_64 random(hash);
  return std::uniform_int_distribution<uint64_t>(2, count - 1)(random);
}

void add_site_points(const sut::CallSite& site, const SweepOptions& options,
                     std::vector<sut::FaultPoint>& points) {
  for (const std::string& family : sut::families_at(site)) {
    if (family == "inline_off") {
      points.push_back(sut::point_at(site, family, 0, "every"));
      continue;
    }
    // Counted over the site's matching events: for inline posts, those posted inline.
    const uint64_t count = site.count;
    if (options.every_occurrence) {
      for (uint64_t nth = 1; nth <= count; ++nth)
        points.push_back(sut::point_at(site, family, nth, "n" + std::to_string(nth)));
      continue;
    }
    points.push_back(sut::point_at(site, family, 1, "first"));
    if (count >= 3)
      points.push_back(
          sut::point_at(site, family, middle_of(count, site.site, family, options.seed), "middle"));
    if (count >= 2) points.push_back(sut::point_at(site, family, count, "last"));
  }
}

// The program on `profile`'s NIC (every cap it knows), then one point per limit the clean
// run's requests exceed: only that cap, with the target driver's errno and inline behaviour.
void add_limit_points(const std::vector<json>& requests, const DeviceProfile& profile,
                      std::vector<sut::FaultPoint>& points) {
  points.push_back(sut::limits_point(profile.name, profile.limits_fault()));
  const port_check::TargetOutcome outcome = port_check::judge_target(requests, profile);
  std::set<std::string> limits;
  for (const auto& refusal : outcome.refusals) {
    if (!limits.insert(refusal.limit).second) continue;
    json fault = profile.one_limit_fault(refusal.limit);
    if (!fault.is_null())
      points.push_back(sut::limits_point(profile.name + "." + refusal.limit, std::move(fault)));
  }
}

}  // namespace

std::vector<sut::FaultPoint> choose_points(const std::vector<sut::CallSite>& sites,
                                           const std::vector<json>& requests,
                                           const SweepOptions& options) {
  // Sites by rank and id, whichever process wrote its sites first: the same list from every
  // run of the program.
  std::vector<const sut::CallSite*> in_order;
  in_order.reserve(sites.size());
  for (const auto& site : sites) in_order.push_back(&site);
  const auto key = [](const sut::CallSite* site) {
    return std::tie(site->rank, site->site, site->call, site->side, site->opcode, site->layer,
                    site->outermost);
  };
  std::sort(in_order.begin(), in_order.end(),
            [&](const sut::CallSite* a, const sut::CallSite* b) { return key(a) < key(b); });
  std::vector<sut::FaultPoint> found;
  for (const auto* site : in_order) add_site_points(*site, options, found);
  for (const auto& profile : options.profiles) add_limit_points(requests, profile, found);
  // One point an id (a profile named twice, a site seen twice): junit follows points by it.
  std::set<std::string> ids;
  found.erase(
      std::remove_if(found.begin(), found.end(),
                     [&](const sut::FaultPoint& point) { return !ids.insert(point.id).second; }),
      found.end());
  // Families taken in turn, each's points first occurrences first: a sweep cut short (by
  // --max-points or a budget) has tried every family at as many sites as it could.
  const auto occurrence_rank = [](const sut::FaultPoint& point) {
    return point.occurrence == "first" || point.occurrence == "every" ? 0
           : point.occurrence == "last"                               ? 1
                                                                      : 2;
  };
  std::vector<std::vector<sut::FaultPoint>> by_family(sut::sweep_families().size());
  for (auto& point : found) {
    const auto& families = sut::sweep_families();
    const auto family = std::find(families.begin(), families.end(), point.family);
    by_family[static_cast<size_t>(family - families.begin())].push_back(std::move(point));
  }
  for (auto& points : by_family)
    std::stable_sort(points.begin(), points.end(), [&](const auto& a, const auto& b) {
      return occurrence_rank(a) < occurrence_rank(b);
    });
  std::vector<sut::FaultPoint> ordered;
  for (size_t turn = 0; ordered.size() < found.size(); ++turn)
    for (auto& points : by_family)
      if (turn < points.size()) ordered.push_back(std::move(points[turn]));
  return ordered;
}

}  // namespace faultline::harness::sweep
