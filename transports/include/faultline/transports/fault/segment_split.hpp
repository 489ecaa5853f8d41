#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace faultline::transports::fault {

/// The same bytes as `pieces`, in `into` pieces (segment_count split): the longest piece is
/// cut in two until there are `into`, or none is left longer than a byte. Any piece type (an
/// SGE, an iovec, a Segment): `length(piece)` is its byte count, `cut(piece, n)` the pair of
/// its first n bytes and the rest.
template <typename Piece, typename Length, typename Cut>
std::vector<Piece> split_pieces(std::span<const Piece> pieces, size_t into, Length length,
                                Cut cut) {
  std::vector<Piece> split(pieces.begin(), pieces.end());
  while (split.size() < into) {
    auto longest =
        std::max_element(split.begin(), split.end(),
                         [&](const Piece& a, const Piece& b) { return length(a) < length(b); });
    if (longest == split.end() || length(*longest) < 2) break;
    auto [first, rest] = cut(*longest, length(*longest) / 2);
    *longest = first;
    split.insert(longest + 1, rest);
  }
  return split;
}

}  // namespace faultline::transports::fault
