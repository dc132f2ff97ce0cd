#pragma once
// Internal to swarmfield_protocol: the ChaCha20-Poly1305-IETF nonce of everything sealed with a
// session key (UDP packets, packet.cpp; TCP frames, frame_seal.cpp).
#include <sodium.h>

#include <array>
#include <cstdint>

#include "byte_order.hpp"
#include "swarmfield/protocol/transport/packet.hpp"

namespace swarmfield::protocol::detail {

using Nonce = std::array<std::uint8_t, crypto_aead_chacha20poly1305_ietf_NPUBBYTES>;

/// Direction word then the sender's full 64-bit counter: unique per (key, message) for the life
/// of a session, across both transports (each has its own direction words).
inline Nonce make_nonce(std::uint64_t counter, Direction direction) noexcept {
  Nonce n{};
  store_u32_le(n.data(), static_cast<std::uint32_t>(direction));
  for (int i = 0; i < 8; ++i) n[static_cast<std::size_t>(4 + i)] = static_cast<std::uint8_t>(counter >> (8 * i));
  return n;
}

}  // namespace swarmfield::protocol::detail
