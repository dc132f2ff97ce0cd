#pragma once
// Bodies of UDP data packets (packet.hpp seals them): an Input or a fragment of a
// zstd-compressed Snapshot, as a FlatBuffers Datagram. Every body is <= kMaxPacketBodyBytes, so
// every sealed datagram is <= kMaxDatagramBytes. No sockets.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/messages.hpp"
#include "swarmfield/protocol/packet.hpp"

namespace swarmfield::protocol {

inline constexpr std::size_t kMaxSnapshotFragments = 4096;
inline constexpr std::size_t kMaxSnapshotBytes = 8u << 20;  ///< decompressed limit
/// Compressed snapshot bytes per fragment: what is left of kMaxPacketBodyBytes after the body's
/// FlatBuffers tables (about 60 bytes; 20 spare). Tests check every body's size.
inline constexpr std::size_t kSnapshotFragmentBytes = kMaxPacketBodyBytes - 80;
/// SnapshotReassembler bounds: snapshots being assembled at once, and their buffered bytes.
inline constexpr std::size_t kMaxPendingSnapshots = 4;
inline constexpr std::size_t kMaxPendingSnapshotBytes = 8u << 20;

/// Client -> server: the body of an input packet.
[[nodiscard]] std::vector<std::uint8_t> encode_input_datagram(const Input& input);

/// Server -> client: compresses the snapshot (zstd `level`) and splits it into bodies of at
/// most kMaxPacketBodyBytes (kSnapshotFragmentBytes of compressed bytes each), one data packet
/// each. Empty if the compressed snapshot would need more than kMaxSnapshotFragments (cannot
/// happen within kMaxAgentsPerSnapshot).
[[nodiscard]] std::vector<std::vector<std::uint8_t>> encode_snapshot_datagrams(const Snapshot& snapshot,
                                                                             int zstd_level = 3);

/// One verified datagram body.
struct DecodedDatagram {
  std::optional<Input> input;  ///< set for input datagrams
  // Snapshot fragment fields (set when !input):
  std::uint32_t snapshot_tick = 0;
  std::uint16_t fragment_index = 0;
  std::uint16_t fragment_count = 0;
  std::vector<std::uint8_t> fragment;
};

/// Verifies the opened body of a data packet: size <= kMaxPacketBodyBytes, FlatBuffers verifier
/// (identifier "SWFD"), a known payload type; an Input passes the same checks as in
/// decode_tcp_message; a fragment has 1 <= count <= kMaxSnapshotFragments, index < count and
/// 1..kMaxPacketBodyBytes bytes. nullopt + `error` (a short sentence) on anything malformed.
/// Authentication is the packet layer's job (PacketChannel::open), before this runs.
[[nodiscard]] std::optional<DecodedDatagram> decode_datagram(std::span<const std::uint8_t> bytes,
                                                             std::string* error = nullptr);

/// Reassembles snapshot fragments. Keeps at most a few snapshots in flight; a newer complete
/// snapshot discards older partial ones. Bounded memory.
/// Rules: at most kMaxPendingSnapshots partial snapshots and kMaxPendingSnapshotBytes buffered
/// (the oldest partial one is abandoned to make room; a fragment older than every pending one
/// is dropped instead); fragments of a tick <= the newest completed one are dropped; a
/// fragment whose count disagrees with earlier fragments of its tick is dropped; a repeated
/// fragment is ignored. The fields of the datagram are re-checked (it may not come from
/// decode_datagram). Ticks are compared as plain integers (no wrap-around: 2^32 ticks at
/// 30 Hz is 4.5 years).
class SnapshotReassembler {
 public:
  /// Adds a fragment; returns the decoded Snapshot when its last fragment arrived and the
  /// whole verified and decompressed. Bad fragments are dropped (counted in dropped()).
  std::optional<Snapshot> add(const DecodedDatagram& datagram);
  /// Fragments dropped: malformed, input datagrams, stale, inconsistent count, no room; plus one
  /// per completed snapshot that failed to decompress or verify.
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  /// Fragments received twice (normal on UDP; not counted in dropped()).
  [[nodiscard]] std::uint64_t duplicates() const noexcept { return duplicates_; }
  /// Partial snapshots given up (overtaken by a newer complete one, or evicted for room).
  [[nodiscard]] std::uint64_t abandoned() const noexcept { return abandoned_; }
  /// Partial snapshots currently held (<= kMaxPendingSnapshots) and their bytes.
  [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return pending_bytes_; }
  /// Forgets everything, including the newest completed tick (e.g. after a reconnect).
  void reset() noexcept;

 private:
  struct Pending {
    std::uint32_t tick = 0;
    std::uint16_t count = 0;
    std::uint16_t received = 0;
    std::vector<std::vector<std::uint8_t>> parts;
    std::size_t bytes = 0;
  };
  void erase_pending(std::size_t i);
  std::vector<Pending> pending_;
  std::uint32_t newest_complete_ = 0;
  bool have_complete_ = false;
  std::size_t pending_bytes_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t abandoned_ = 0;
};

/// Compresses / verifies+decompresses a whole snapshot (the payload that fragments carry): a
/// FlatBuffers Snapshot (identifier "SWFS") in one zstd frame with content size and checksum.
/// decompress_snapshot refuses a frame that does not state its content size, states more than
/// kMaxSnapshotBytes, has no checksum or a wrong one, has trailing bytes, or whose content fails
/// the checks of decode_tcp_message (nullopt + `error`).
[[nodiscard]] std::vector<std::uint8_t> compress_snapshot(const Snapshot& snapshot, int zstd_level = 3);
[[nodiscard]] std::optional<Snapshot> decompress_snapshot(std::span<const std::uint8_t> bytes,
                                                          std::string* error = nullptr);

/// zstd helpers for the map transfer. compress writes the content size and a checksum (checked
/// when present). decompress fails (nullopt) above `max_bytes` (streaming
/// with a capped output, so a frame lying about its size costs at most `max_bytes`), on
/// corrupt or truncated input, on trailing bytes, and on empty input (not a zstd frame).
[[nodiscard]] std::vector<std::uint8_t> zstd_compress(std::span<const std::uint8_t> bytes, int level = 3);
[[nodiscard]] std::optional<std::vector<std::uint8_t>> zstd_decompress(std::span<const std::uint8_t> bytes,
                                                                       std::size_t max_bytes);

}  // namespace swarmfield::protocol
