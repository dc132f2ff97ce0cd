#pragma once
// UDP datagrams: session token + sequence + ack header, payload an Input or a fragment of a
// zstd-compressed Snapshot. Every datagram is <= kMaxDatagramBytes. No sockets.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/messages.hpp"

namespace swarmfield::protocol {

inline constexpr std::size_t kMaxDatagramBytes = 1200;
inline constexpr std::size_t kMaxSnapshotFragments = 4096;
inline constexpr std::size_t kMaxSnapshotBytes = 8u << 20;  ///< decompressed limit

struct DatagramHeader {
  std::uint64_t session_token = 0;
  std::uint32_t sequence = 0;  ///< per-sender, increasing
  std::uint32_t ack = 0;       ///< newest sequence received from the peer
};

/// Client -> server input datagram.
[[nodiscard]] std::vector<std::uint8_t> encode_input_datagram(const DatagramHeader& header, const Input& input);

/// Server -> client: compresses the snapshot (zstd `level`) and splits it into datagrams of at
/// most kMaxDatagramBytes. Each gets sequence = header.sequence + i. Returns the datagrams.
[[nodiscard]] std::vector<std::vector<std::uint8_t>> encode_snapshot_datagrams(
    const DatagramHeader& header, const Snapshot& snapshot, int zstd_level = 3);

/// One verified datagram.
struct DecodedDatagram {
  DatagramHeader header;
  std::optional<Input> input;  ///< set for input datagrams
  // Snapshot fragment fields (set when !input):
  std::uint32_t snapshot_tick = 0;
  std::uint16_t fragment_index = 0;
  std::uint16_t fragment_count = 0;
  std::vector<std::uint8_t> fragment;
};

/// Verifies a received datagram (size limit, FlatBuffers verifier, ranges). nullopt + `error`
/// on anything malformed.
[[nodiscard]] std::optional<DecodedDatagram> decode_datagram(std::span<const std::uint8_t> bytes,
                                                             std::string* error = nullptr);

/// Reassembles snapshot fragments. Keeps at most a few snapshots in flight; a newer complete
/// snapshot discards older partial ones. Bounded memory.
class SnapshotReassembler {
 public:
  /// Adds a fragment; returns the decoded Snapshot when its last fragment arrived and the
  /// whole verified and decompressed. Bad fragments are dropped (counted in dropped()).
  std::optional<Snapshot> add(const DecodedDatagram& datagram);
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  struct Pending {
    std::uint32_t tick = 0;
    std::uint16_t count = 0;
    std::uint16_t received = 0;
    std::vector<std::vector<std::uint8_t>> parts;
  };
  std::vector<Pending> pending_;
  std::uint32_t newest_complete_ = 0;
  std::uint64_t dropped_ = 0;
};

/// Compresses / verifies+decompresses a whole snapshot (the payload that fragments carry).
[[nodiscard]] std::vector<std::uint8_t> compress_snapshot(const Snapshot& snapshot, int zstd_level = 3);
[[nodiscard]] std::optional<Snapshot> decompress_snapshot(std::span<const std::uint8_t> bytes,
                                                          std::string* error = nullptr);

/// zstd helpers for the map transfer. decompress fails (nullopt) above `max_bytes`.
[[nodiscard]] std::vector<std::uint8_t> zstd_compress(std::span<const std::uint8_t> bytes, int level = 3);
[[nodiscard]] std::optional<std::vector<std::uint8_t>> zstd_decompress(std::span<const std::uint8_t> bytes,
                                                                       std::size_t max_bytes);

}  // namespace swarmfield::protocol
