#pragma once
// What the collective tests do on every rank at once: one thread per rank, as one agent each.

#include <catch2/catch.hpp>
#include <future>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::testing {

/// Runs `work(rank)` for ranks 0 .. ranks-1 at once; their statuses in rank order.
template <typename Work>
std::vector<Status> on_every_rank(size_t ranks, Work work) {
  std::vector<std::future<Status>> running;
  for (size_t i = 0; i < ranks; ++i)
    running.push_back(std::async(std::launch::async, [&work, i] { return work(i); }));
  std::vector<Status> statuses;
  for (auto& future : running) statuses.push_back(future.get());
  return statuses;
}

/// REQUIREs every rank's status ok, naming the first that is not.
inline void require_all_ok(const std::vector<Status>& statuses) {
  for (size_t i = 0; i < statuses.size(); ++i) {
    INFO("rank " << i << ": " << (statuses[i].ok() ? "ok" : statuses[i].error().describe()));
    REQUIRE(statuses[i].ok());
  }
}

}  // namespace faultline::testing
