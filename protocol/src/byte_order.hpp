#pragma once
// Internal to swarmfield_protocol: the wire's one byte order, little-endian, for the u32 fields
// written byte by byte (UDP packet headers and nonces, TCP frame lengths, snapshot fragment
// headers, snapshot payload fields). Byte by byte, so any host order and any alignment work.
#include <cstdint>

namespace swarmfield::protocol::detail {

/// Writes `v` to p[0..3], least significant byte first.
constexpr void store_u32_le(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Reads the u32 at p[0..3], least significant byte first.
[[nodiscard]] constexpr std::uint32_t load_u32_le(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

}  // namespace swarmfield::protocol::detail
