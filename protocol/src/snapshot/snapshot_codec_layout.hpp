#pragma once
// Internal to swarmfield_protocol: constants of the delta snapshot layout shared by the encoder
// and the decoder (protocol/SNAPSHOTS.md describes them).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "byte_order.hpp"
#include "swarmfield/protocol/snapshot/agent_prediction.hpp"

namespace swarmfield::protocol::detail {

// Byte offset of the echoed client time in the header (after format, flags, sequence, tick and
// baseline distance: write_header), read by the decoder and rewritten by set_snapshot_echo.
inline constexpr std::size_t kEchoOffset = 11;

// Header flags.
inline constexpr std::uint8_t kFlagPredicted = 0x01;
inline constexpr std::uint8_t kFlagGrid = 0x02;
// Bits 2..4: the precision shift (SnapshotHeader::precision_shift, <= kMaxPrecisionShift).
inline constexpr unsigned kShiftFlagPos = 2;
inline constexpr std::uint8_t kFlagShiftMask = 0x1C;
inline constexpr std::uint8_t kKnownFlags = kFlagPredicted | kFlagGrid | kFlagShiftMask;

// Position residual symbols: (rx, ry) both in [-3, 3], turned into the baseline velocity's frame
// (a, b) = to_velocity_frame(...), as (a + 3) * 7 + (b + 3), else escape.
inline constexpr std::int32_t kPosRange = 3;
inline constexpr std::size_t kPosSide = 2 * kPosRange + 1;
inline constexpr std::size_t kPosEscape = kPosSide * kPosSide;  // 49
inline constexpr std::size_t kPosAlphabet = kPosEscape + 1;
// Heading residual symbols: dh in [-7, 7] as dh + 7, else escape (the heading in 8 bits).
inline constexpr std::int32_t kHeadRange = 7;
inline constexpr std::size_t kHeadEscape = 2 * kHeadRange + 1;  // 15
inline constexpr std::size_t kHeadAlphabet = kHeadEscape + 1;

// Exp-Golomb orders and field widths.
inline constexpr unsigned kCountOrder = 4;       // removed / added counts
inline constexpr unsigned kEscapeOrder = 2;      // escaped residuals (signed, zigzag)
inline constexpr unsigned kKindGapOrder = 2;     // kind changes: gap between updated indices
inline constexpr unsigned kOrderFieldBits = 5;   // an adaptive order (0..kMaxExpGolombOrder)
inline constexpr unsigned kBitsFieldBits = 5;    // a bit width 0..20 (added positions)

/// Section 3's order of the kept agents: the longest since its last update first (age = the
/// snapshot's tick - the agent's tick, clamped to 255), ties by id. The server sends the agents
/// it has not refreshed for longest first (priority accumulator), so in this order the updated
/// ones come in long runs: on the crowded whole-map view 1,478 -> 473 bytes a snapshot against
/// id order. run_order_key() is the agent's key (0 = oldest); run_order_offsets() gives each
/// key's first position for the kept agents' keys (in id order), so that a stable scatter
/// (position = offsets[key]++, in id order) places every kept agent at both ends alike.
[[nodiscard]] inline std::uint8_t run_order_key(std::uint32_t agent_tick, std::uint32_t tick) noexcept {
  const std::uint32_t age = tick - agent_tick;
  return static_cast<std::uint8_t>(255u - (age < 255u ? age : 255u));
}
[[nodiscard]] inline std::array<std::uint32_t, 256> run_order_offsets(std::span<const std::uint8_t> keys) noexcept {
  std::array<std::uint32_t, 256> offsets{};
  for (const std::uint8_t key : keys) ++offsets[key];
  std::uint32_t at = 0;
  for (std::uint32_t& c : offsets) {
    const std::uint32_t n = c;
    c = at;
    at += n;
  }
  return offsets;
}

/// Exp-Golomb order for values whose mean is sum / n: floor(log2(mean)), 0 for a mean below 2.
[[nodiscard]] inline unsigned order_for_mean(std::uint64_t sum, std::size_t n) noexcept {
  if (n == 0) return 0;
  const std::uint64_t mean = sum / n;
  const auto w = static_cast<unsigned>(std::bit_width(mean));
  const unsigned k = w > 0 ? w - 1 : 0;
  return k > kMaxExpGolombOrder ? kMaxExpGolombOrder : k;
}

inline void put_u8(std::vector<std::uint8_t>& out, std::uint8_t v) { out.push_back(v); }
inline void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  std::uint8_t bytes[4];
  store_u32_le(bytes, v);
  out.insert(out.end(), bytes, bytes + 4);
}
inline void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void put_f32(std::vector<std::uint8_t>& out, float f) { put_u32(out, std::bit_cast<std::uint32_t>(f)); }
[[nodiscard]] inline std::uint32_t get_u32(std::span<const std::uint8_t> b, std::size_t at) noexcept {
  return load_u32_le(b.subspan(at, 4).data());
}
[[nodiscard]] inline std::uint64_t get_u64(std::span<const std::uint8_t> b, std::size_t at) noexcept {
  return std::uint64_t{get_u32(b, at)} | (std::uint64_t{get_u32(b, at + 4)} << 32);
}

}  // namespace swarmfield::protocol::detail
