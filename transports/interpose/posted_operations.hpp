#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// What a libfabric program posted on each context, so a completion of a CQ whose entries
/// carry no flags (FI_CQ_FORMAT_CONTEXT, as fi_pingpong's) still matches a fault's `side` and
/// `opcode`: the post said which. Kept only while a completion fault filters by either; each
/// entry is taken at its completion (posts of one context complete in order).
class PostedOperations {
 public:
  struct Operation {
    Side side = Side::kAny;
    std::optional<transports::Opcode> opcode;
  };

  static PostedOperations& get();
  /// Whether posts are recorded at all (the plan filters completions by side or opcode).
  static bool wanted();

  void record(uint64_t queue, uintptr_t context, Operation operation);
  /// The operation posted on `context` of `queue`, forgotten; nullopt when none was recorded.
  std::optional<Operation> take(uint64_t queue, uintptr_t context);

 private:
  std::mutex mutex_;
  std::map<std::pair<uint64_t, uintptr_t>, std::deque<Operation>> posted_;
};

}  // namespace faultline::transports::interpose
