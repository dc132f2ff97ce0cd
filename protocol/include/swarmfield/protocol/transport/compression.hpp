#pragma once
// zstd with bounded decompression, for the map transfer (map_transfer.hpp). No sockets.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace swarmfield::protocol {

/// compress writes the content size and a checksum (checked when present). decompress fails
/// (nullopt) above `max_bytes` (streaming with a capped output, so a frame lying about its size
/// costs at most `max_bytes`), on corrupt or truncated input, on trailing bytes, and on empty
/// input (not a zstd frame).
[[nodiscard]] std::vector<std::uint8_t> zstd_compress(std::span<const std::uint8_t> bytes, int level = 3);
[[nodiscard]] std::optional<std::vector<std::uint8_t>> zstd_decompress(std::span<const std::uint8_t> bytes,
                                                                       std::size_t max_bytes);

}  // namespace swarmfield::protocol
