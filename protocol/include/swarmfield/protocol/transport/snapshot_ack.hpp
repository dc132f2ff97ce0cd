#pragma once
// Snapshot acknowledgements, after yojimbo's packet acks: the client reports the newest snapshot
// sequence it decoded and a 32-bit field of the 32 before it (bit i = sequence latest - 1 - i),
// resent with every input so a lost ack costs nothing. Sequences are per client, start at 1
// (0 = none) and are compared as plain integers: 2^32 snapshots at 20 Hz is 6.8 years of one
// connection.
#include <cstdint>

namespace swarmfield::protocol {

struct SnapshotAck {
  std::uint32_t latest = 0;    ///< newest decoded sequence, 0 = none yet
  std::uint32_t received = 0;  ///< bit i set: latest - 1 - i decoded too

  /// True if this ack reports `sequence` as decoded.
  [[nodiscard]] constexpr bool has(std::uint32_t sequence) const noexcept {
    if (latest == 0 || sequence == 0 || sequence > latest) return false;
    if (sequence == latest) return true;
    const std::uint32_t back = latest - sequence;  // 1..
    return back <= 32 && ((received >> (back - 1)) & 1u) != 0;
  }
  /// Records `sequence` as decoded (older than latest - 32 is forgotten).
  constexpr void add(std::uint32_t sequence) noexcept {
    if (sequence == 0) return;
    if (latest == 0 || sequence > latest) {
      const std::uint32_t shift = latest == 0 ? 33 : sequence - latest;
      // The old latest becomes bit shift - 1; shifting by >= 32 clears everything.
      received = shift > 32 ? 0 : shift == 32 ? (1u << 31) : ((received << shift) | (1u << (shift - 1)));
      latest = sequence;
    } else if (sequence < latest && latest - sequence <= 32) {
      received |= 1u << (latest - sequence - 1);
    }
  }
  /// Records every sequence `other` reports within [from, below) (older than latest - 32 is
  /// forgotten, as by add()).
  constexpr void merge(const SnapshotAck& other, std::uint32_t from = 1, std::uint32_t below = 0xFFFFFFFFu) noexcept {
    for (std::uint32_t back = 0; back <= 32 && back < other.latest; ++back) {
      const std::uint32_t s = other.latest - back;
      if (s >= from && s < below && other.has(s)) add(s);
    }
  }
  friend constexpr bool operator==(const SnapshotAck&, const SnapshotAck&) = default;
};

/// The sequences both `a` and `b` report as decoded (within 32 before the older latest): what a
/// stream shared by several clients may use as a baseline (server/app's shared spectator streams).
[[nodiscard]] constexpr SnapshotAck common_acks(const SnapshotAck& a, const SnapshotAck& b) noexcept {
  SnapshotAck out;
  const std::uint32_t top = a.latest < b.latest ? a.latest : b.latest;
  for (std::uint32_t back = 0; back <= 32 && back < top; ++back) {
    const std::uint32_t s = top - back;
    if (a.has(s) && b.has(s)) out.add(s);
  }
  return out;
}

}  // namespace swarmfield::protocol
