#include "faultline/protocols/collective/recursive_doubling.hpp"

#include <algorithm>
#include <thread>

namespace faultline::protocols::collective {

namespace {

size_t largest_power_of_two_at_most(size_t n) {
  size_t power = 1;
  while (power * 2 <= n) power *= 2;
  return power;
}

}  // namespace

std::vector<size_t> doubling_partners(size_t rank, size_t size) {
  const size_t core = largest_power_of_two_at_most(size);
  if (rank >= core) return {rank - core};
  std::vector<size_t> partners;
  if (rank + core < size) partners.push_back(rank + core);
  for (size_t mask = 1; mask < core; mask <<= 1) partners.push_back(rank ^ mask);
  return partners;
}

RecursiveDoubling::RecursiveDoubling(size_t rank, size_t size,
                                     std::vector<std::unique_ptr<Ring>> pairs)
    : rank_(rank), size_(size), pairs_(std::move(pairs)) {}
RecursiveDoubling::~RecursiveDoubling() = default;

Result<std::unique_ptr<RecursiveDoubling>> RecursiveDoubling::create(DoublingLink link,
                                                                     RingOptions options) {
  const std::vector<size_t> expected = link.size == 0 || link.rank >= link.size
                                           ? std::vector<size_t>{}
                                           : doubling_partners(link.rank, link.size);
  if (link.size < 2 || link.rank >= link.size || link.partners.size() != expected.size()) {
    return Error{ErrorCode::kInvalidArgument,
                 "recursive doubling: rank " + std::to_string(link.rank) + " of " +
                     std::to_string(link.size) + " needs " + std::to_string(expected.size()) +
                     " partner link(s), got " + std::to_string(link.partners.size())};
  }
  // A pair is a ring of two, but the ranks that share this host's cores are all of them.
  options.yield_when_idle = options.yield_when_idle.value_or(
      link.size > std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::unique_ptr<Ring>> pairs;
  for (size_t i = 0; i < expected.size(); ++i) {
    const PartnerLink& partner = link.partners[i];
    if (partner.rank != expected[i]) {
      return Error{ErrorCode::kInvalidArgument,
                   "recursive doubling: rank " + std::to_string(link.rank) + "'s partner " +
                       std::to_string(i) + " is rank " + std::to_string(partner.rank) +
                       ", expected rank " + std::to_string(expected[i])};
    }
    auto ring = Ring::create(
        {link.device, partner.to_peer, partner.from_peer, link.rank < partner.rank ? 0U : 1U, 2,
         "rank " + std::to_string(link.rank) + " with rank " + std::to_string(partner.rank)},
        options);
    if (!ring.ok()) return std::move(ring).take_error();
    pairs.push_back(std::move(ring).value());
  }
  return std::unique_ptr<RecursiveDoubling>(
      new RecursiveDoubling(link.rank, link.size, std::move(pairs)));
}

Status RecursiveDoubling::allreduce(std::span<std::byte> data, DataType type) {
  const size_t core = largest_power_of_two_at_most(size_);
  if (rank_ >= core) {
    // An extra rank: its data to rank - core, which sums it in; the whole sum back.
    FAULTLINE_RETURN_IF_ERROR(pairs_[0]->exchange(data, {}));
    return pairs_[0]->exchange({}, data);
  }
  const bool has_extra = rank_ + core < size_;
  size_t pair = 0;
  if (has_extra) FAULTLINE_RETURN_IF_ERROR(pairs_[pair++]->exchange_reduce({}, data, type));
  for (; pair < pairs_.size(); ++pair)
    FAULTLINE_RETURN_IF_ERROR(pairs_[pair]->exchange_reduce(data, data, type));
  if (has_extra) return pairs_[0]->exchange(data, {});
  return {};
}

Status RecursiveDoubling::drive() {
  for (auto& pair : pairs_) FAULTLINE_RETURN_IF_ERROR(pair->drive());
  return {};
}

RingStats RecursiveDoubling::stats() const {
  RingStats total;
  for (const auto& pair : pairs_) {
    const RingStats& one = pair->stats();
    total.chunks_sent += one.chunks_sent;
    total.chunks_received += one.chunks_received;
    total.most_receives_in_flight =
        std::max(total.most_receives_in_flight, one.most_receives_in_flight);
    total.receives_beyond_expected += one.receives_beyond_expected;
    total.ignored_errors.insert(total.ignored_errors.end(), one.ignored_errors.begin(),
                                one.ignored_errors.end());
  }
  return total;
}

}  // namespace faultline::protocols::collective
