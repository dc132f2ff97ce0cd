#pragma once
// Map transfer over TCP: the server zstd-compresses the cost bytes (one byte per cell, row
// major), announces sizes in Welcome.map (MapInfo) and sends the compressed bytes as MapChunk
// messages of kMapChunkBytes. These helpers keep both ends agreeing on that split. No sockets.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::protocol {

/// Compresses `cost_bytes` (width*height cells) and fills the transfer fields of `info`
/// (raw_bytes, compressed_bytes, chunk_count); width, height, cell_size and name are left to the
/// caller. Returns the chunks to send after Welcome, each with index and count set.
[[nodiscard]] std::vector<MapChunk> make_map_chunks(std::span<const std::uint8_t> cost_bytes, MapInfo& info,
                                                    int zstd_level = 3);

/// Client side: collects MapChunks (any order, duplicates ignored) for the MapInfo of Welcome
/// (already range-checked by decode_tcp_message), then decompresses them.
class MapAssembler {
 public:
  /// An `info` whose sizes disagree (not from decode_tcp_message) makes an assembler that
  /// refuses every chunk.
  explicit MapAssembler(const MapInfo& info);
  /// Takes one chunk. false + `error` when it does not belong to this map (index >= chunk_count,
  /// count disagreeing, wrong size: every chunk but the last is exactly kMapChunkBytes).
  bool add(const MapChunk& chunk, std::string* error = nullptr);
  [[nodiscard]] bool complete() const noexcept { return valid_ && received_ == info_.chunk_count; }
  [[nodiscard]] std::uint32_t received() const noexcept { return received_; }
  /// Once complete(): the width*height cost bytes, or nullopt + `error` if they do not
  /// decompress to exactly raw_bytes.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> finish(std::string* error = nullptr) const;

 private:
  MapInfo info_;
  std::vector<std::uint8_t> compressed_;
  std::vector<bool> have_;
  std::uint32_t received_ = 0;
  bool valid_ = false;
};

}  // namespace swarmfield::protocol
