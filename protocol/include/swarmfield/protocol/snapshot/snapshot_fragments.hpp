#pragma once
// Fragmentation of delta snapshot payloads into datagrams, and their bounded reassembly. A
// fragment is the whole body of one server -> client data packet (packet.hpp), so with the
// packet's header and authentication tag (kPacketOverheadBytes) every datagram is at most
// kMaxDatagramBytes (1200). A snapshot is delivered whole or not at all: a lost fragment
// costs that snapshot only, since the next one is encoded against an acknowledged baseline
// (protocol/SNAPSHOTS.md, "Fragments"). No sockets, no clocks: age is counted in sequences.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/packet.hpp"

namespace swarmfield::protocol {

/// Fragment header: snapshot sequence (u32 LE), fragment index (u8), fragment count (u8).
inline constexpr std::size_t kFragmentHeaderBytes = 6;
/// Snapshot bytes per fragment; every fragment but the last carries exactly this many.
inline constexpr std::size_t kFragmentPayloadBytes = kMaxPacketBodyBytes - kFragmentHeaderBytes;
/// Fragments per snapshot at most, and so the largest snapshot payload sent over UDP.
inline constexpr std::size_t kMaxFragmentsPerSnapshot = 128;
inline constexpr std::size_t kMaxFragmentedSnapshotBytes = kMaxFragmentsPerSnapshot * kFragmentPayloadBytes;
static_assert(kMaxFragmentedSnapshotBytes == kMaxSnapshotPayloadBytes,
              "a snapshot too large for UDP must be too large for TCP too (one budget for both)");
/// Reassembly bounds: snapshots in progress at once, and how many sequences behind the newest
/// fragment seen a partial snapshot may fall before it is abandoned.
inline constexpr std::size_t kMaxAssembling = 4;
inline constexpr std::uint32_t kMaxFragmentAgeSequences = 8;

/// Splits `payload` (1..kMaxFragmentedSnapshotBytes bytes) of snapshot `sequence` into fragments
/// (header + bytes), written into `out` (its vectors reused). Returns the fragment count, 0 if
/// the payload is empty or too large.
std::size_t split_snapshot(std::span<const std::uint8_t> payload, std::uint32_t sequence,
                           std::vector<std::vector<std::uint8_t>>& out);

/// Reassembles fragments into snapshot payloads. Memory is fixed: kMaxAssembling buffers of
/// kMaxFragmentedSnapshotBytes, allocated at construction.
/// Rules: a fragment shorter than its header, with count 0 or > kMaxFragmentsPerSnapshot, index
/// >= count, an empty body, a body over kFragmentPayloadBytes, or a non-last body of any other
/// size is malformed; a fragment whose count disagrees with earlier ones of its sequence is
/// malformed; sequences <= the newest completed one, or more than kMaxFragmentAgeSequences behind
/// the newest fragment seen, are stale; a repeated fragment is a duplicate. When all slots are
/// busy the oldest partial snapshot is abandoned for a newer one (a fragment older than all of
/// them is dropped instead). Completing a snapshot abandons every older partial one.
class FragmentAssembler {
 public:
  FragmentAssembler();
  /// Adds one fragment; returns the whole payload when this fragment completed it (a view into
  /// the assembler, valid until the next add()).
  std::optional<std::span<const std::uint8_t>> add(std::span<const std::uint8_t> fragment);
  void reset() noexcept;

  [[nodiscard]] std::uint64_t malformed() const noexcept { return malformed_; }
  [[nodiscard]] std::uint64_t stale() const noexcept { return stale_; }
  [[nodiscard]] std::uint64_t duplicates() const noexcept { return duplicates_; }
  [[nodiscard]] std::uint64_t abandoned() const noexcept { return abandoned_; }
  [[nodiscard]] std::size_t assembling() const noexcept;

 private:
  struct Slot {
    bool used = false;
    std::uint32_t sequence = 0;
    std::uint8_t count = 0;
    std::uint8_t received = 0;
    std::size_t last_bytes = 0;
    std::array<std::uint64_t, kMaxFragmentsPerSnapshot / 64> have{};
    std::vector<std::uint8_t> bytes;  // kMaxFragmentedSnapshotBytes, allocated once
  };
  void abandon_older_than(std::uint32_t sequence) noexcept;
  std::array<Slot, kMaxAssembling> slots_;
  std::uint32_t newest_complete_ = 0;
  std::uint32_t newest_seen_ = 0;
  std::uint64_t malformed_ = 0, stale_ = 0, duplicates_ = 0, abandoned_ = 0;
};

}  // namespace swarmfield::protocol
