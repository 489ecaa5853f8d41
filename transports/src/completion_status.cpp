#include "faultline/transports/completion_status.hpp"

namespace faultline::transports {

// The table is in declaration order: a status's value is its row.
static_assert([] {
  for (size_t i = 0; i < kCompletionStatusTable.size(); ++i)
    if (static_cast<size_t>(kCompletionStatusTable[i].status) != i) return false;
  return kCompletionStatusTable.back().status == CompletionStatus::kTmRndvIncomplete;
}());

std::string_view to_string(CompletionStatus status) { return completion_status_row(status).name; }

std::optional<CompletionStatus> completion_status_from_string(std::string_view name) {
  for (const auto& row : kCompletionStatusTable) {
    if (row.name == name) return row.status;
  }
  return std::nullopt;
}

}  // namespace faultline::transports
