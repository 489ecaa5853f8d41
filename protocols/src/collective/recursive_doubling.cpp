#include "faultline/protocols/collective/recursive_doubling.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace faultline::protocols::collective {

namespace {

size_t largest_power_of_two_at_most(size_t n) {
  size_t power = 1;
  while (power * 2 <= n) power *= 2;
  return power;
}

// A run of whole elements of the message.
struct Window {
  size_t begin = 0;
  size_t count = 0;
};

// The part of `whole` a rank keeps at a step of halving-doubling and the part it gives its
// partner: the lower part (the smaller one for an odd count) to the rank whose bit of the step
// is 0, the upper to the other, so both sides agree on every size without telling each other.
std::pair<Window, Window> split(Window whole, bool upper) {
  const Window low{whole.begin, whole.count / 2};
  const Window high{whole.begin + low.count, whole.count - low.count};
  return upper ? std::pair{high, low} : std::pair{low, high};
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

RecursiveDoubling::RecursiveDoubling(size_t rank, size_t size, DoublingExchange exchange,
                                     std::vector<std::unique_ptr<Ring>> pairs)
    : rank_(rank), size_(size), exchange_(exchange), pairs_(std::move(pairs)) {}
RecursiveDoubling::~RecursiveDoubling() = default;

Result<std::unique_ptr<RecursiveDoubling>> RecursiveDoubling::create(DoublingLink link,
                                                                     RingOptions options,
                                                                     DoublingExchange exchange) {
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
      new RecursiveDoubling(link.rank, link.size, exchange, std::move(pairs)));
}

Status RecursiveDoubling::allreduce(std::span<std::byte> data, DataType type) {
  const size_t core = largest_power_of_two_at_most(size_);
  if (rank_ >= core) {
    // An extra rank: its data to rank - core, which sums it in; the whole sum back.
    FAULTLINE_RETURN_IF_ERROR(pairs_[0]->exchange(data, {}));
    return pairs_[0]->exchange({}, data);
  }
  const bool has_extra = rank_ + core < size_;
  if (has_extra) FAULTLINE_RETURN_IF_ERROR(pairs_[0]->exchange_reduce({}, data, type));
  const size_t first = has_extra ? 1 : 0;
  FAULTLINE_RETURN_IF_ERROR(exchange_ == DoublingExchange::kHalving
                                ? halving(data, type, first)
                                : whole_message(data, type, first));
  if (has_extra) return pairs_[0]->exchange(data, {});
  return {};
}

Status RecursiveDoubling::whole_message(std::span<std::byte> data, DataType type, size_t first) {
  for (size_t pair = first; pair < pairs_.size(); ++pair)
    FAULTLINE_RETURN_IF_ERROR(pairs_[pair]->exchange_reduce(data, data, type));
  return {};
}

Status RecursiveDoubling::halving(std::span<std::byte> data, DataType type, size_t first) {
  const size_t element = element_size(type);
  const auto bytes = [&](Window window) {
    return data.subspan(window.begin * element, window.count * element);
  };
  // wholes[k]: the window this rank sums before step k (the whole message at first).
  std::vector<Window> wholes{{0, data.size() / element}};
  for (size_t pair = first; pair < pairs_.size(); ++pair) {
    const auto [kept, given] = split(wholes.back(), (rank_ & (size_t{1} << (pair - first))) != 0);
    FAULTLINE_RETURN_IF_ERROR(pairs_[pair]->exchange_reduce(bytes(given), bytes(kept), type));
    wholes.push_back(kept);
  }
  // Back up the same steps: the summed part this rank kept to the partner, the partner's into
  // the part it gave.
  for (size_t pair = pairs_.size(); pair-- > first;) {
    wholes.pop_back();
    const auto [kept, given] = split(wholes.back(), (rank_ & (size_t{1} << (pair - first))) != 0);
    FAULTLINE_RETURN_IF_ERROR(pairs_[pair]->exchange(bytes(kept), bytes(given)));
  }
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
