#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

namespace faultline::transports::fault {

static_assert(std::endian::native == std::endian::little,
              "a field's bytes are read as the low bytes of a little-endian word");

/// rewrite_field: one field of a posted message, as the protocol lays it out, holds another
/// value (a sender that built its header wrong: StepMesh's rendezvous with `data_num` 2 for
/// PushRequest's 3). The field is `width` bytes at byte `offset` of the message (its segments
/// taken as one run of bytes), in the host's byte order, as a C struct holds it.
struct FieldRewrite {
  uint64_t offset = 0;
  uint32_t width = 0;              ///< 1, 2, 4 or 8
  std::optional<uint64_t> value;   ///< the value written; or
  bool minus_one = false;          ///< one less than the value found (wrapping at the width)
  std::optional<uint64_t> equals;  ///< filter: only a message whose field holds this
  std::optional<uint64_t> length;  ///< filter: only a message of exactly this many bytes

  /// The largest value the width holds.
  uint64_t maximum() const { return width >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * width)) - 1; }

  /// Whether a message of `message_length` bytes whose field reads `current` (nullopt: the
  /// field lies past its end) is one this rewrite matches.
  bool matches(uint64_t message_length, std::optional<uint64_t> current) const {
    if (length && *length != message_length) return false;
    if (!current) return false;
    return !equals || *equals == *current;
  }

  /// What the field holds after the rewrite of `current`.
  uint64_t rewritten(uint64_t current) const {
    return minus_one ? (current - 1) & maximum() : value.value_or(0) & maximum();
  }
};

/// Calls `visit(byte)` on each of the field's bytes in the message held in `pieces` (SGEs,
/// iovecs, segments: `address(piece)` a `std::byte*`, `length(piece)` its bytes), in order;
/// returns how many it found (fewer than the width when the message ends before the field).
template <typename Piece, typename Address, typename Length, typename Visit>
uint32_t visit_field(const FieldRewrite& field, std::span<const Piece> pieces, Address address,
                     Length length, Visit visit) {
  uint64_t start = 0;
  uint32_t found = 0;
  for (const Piece& piece : pieces) {
    const uint64_t size = length(piece);
    for (uint64_t at = field.offset + found; found < field.width && at < start + size;
         at = field.offset + found)
      visit(address(piece)[at - start], found++);
    start += size;
  }
  return found;
}

/// The field's value in the message held in `pieces`; nullopt when the message ends before it.
template <typename Piece, typename Address, typename Length>
std::optional<uint64_t> read_field(const FieldRewrite& field, std::span<const Piece> pieces,
                                   Address address, Length length) {
  std::byte bytes[8] = {};
  if (visit_field(field, pieces, address, length,
                  [&](std::byte& at, uint32_t i) { bytes[i] = at; }) < field.width)
    return std::nullopt;
  uint64_t value = 0;
  std::memcpy(&value, bytes, field.width);  // host order: the low bytes of a little-endian word
  return value;
}

/// Writes `value` into the field of the message held in `pieces` (each byte where it lies).
template <typename Piece, typename Address, typename Length>
void write_field(const FieldRewrite& field, std::span<const Piece> pieces, Address address,
                 Length length, uint64_t value) {
  std::byte bytes[8] = {};
  std::memcpy(bytes, &value, field.width);
  visit_field(field, pieces, address, length, [&](std::byte& at, uint32_t i) { at = bytes[i]; });
}

/// The field of the message in `pieces` rewritten: the values it held and holds, or nullopt
/// (nothing written) when the message ends before the field.
template <typename Piece, typename Address, typename Length>
std::optional<std::pair<uint64_t, uint64_t>> rewrite_field(const FieldRewrite& field,
                                                           std::span<const Piece> pieces,
                                                           Address address, Length length) {
  const auto before = read_field(field, pieces, address, length);
  if (!before) return std::nullopt;
  const uint64_t after = field.rewritten(*before);
  write_field(field, pieces, address, length, after);
  return std::pair{*before, after};
}

}  // namespace faultline::transports::fault
