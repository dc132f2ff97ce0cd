#pragma once
// Byte codecs for Tiled layer data: base64, and zlib / gzip / zstd decompression into a buffer
// of a known size. Internal to swarmfield::io (tiled_map_read.cpp, tiled_map_write.cpp).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace swarmfield::io::detail {

/// Decodes standard base64 (RFC 4648 alphabet, '=' padding optional; ASCII whitespace, which
/// Tiled may write around the data, is skipped). False with a reason naming the offending byte
/// offset when a character is outside the alphabet, padding is misplaced or the length is
/// impossible. Decodes at most `max_bytes` bytes (false beyond: the caller knows the size).
[[nodiscard]] bool base64_decode(std::string_view text, std::size_t max_bytes, std::vector<std::uint8_t>& out,
                                 std::string& error);

/// Standard base64 with '=' padding.
[[nodiscard]] std::string base64_encode(const std::vector<std::uint8_t>& bytes);

/// Inflates a zlib or gzip stream (told apart by its header) into exactly `size` bytes at `out`
/// (the caller's buffer, e.g. the layer's GID array: no second copy of the layer). False with a
/// reason when the stream is corrupt, ends early, or holds more than `size` bytes (never writes
/// past `size`: a small bomb can not grow memory).
[[nodiscard]] bool inflate_exact(const std::vector<std::uint8_t>& in, std::uint8_t* out, std::size_t size,
                                 std::string& error);

/// Decompresses zstd data into exactly `size` bytes at `out`, same rules as inflate_exact.
[[nodiscard]] bool zstd_exact(const std::vector<std::uint8_t>& in, std::uint8_t* out, std::size_t size,
                              std::string& error);

/// zlib stream (default level) of `in`.
[[nodiscard]] std::vector<std::uint8_t> zlib_compress(const std::vector<std::uint8_t>& in);

/// zlib stream (default level) of `count` GIDs, `gid_at(i)` for i = 0..count-1, as little-endian
/// 32-bit words, compressed a slice at a time: the uncompressed layer (256 MiB at 8192 x 8192)
/// is never held.
[[nodiscard]] std::vector<std::uint8_t> zlib_compress_gids(std::size_t count,
                                                           const std::function<std::uint32_t(std::size_t)>& gid_at);

}  // namespace swarmfield::io::detail
