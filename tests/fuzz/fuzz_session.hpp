#pragma once
// The fixed session the packet fuzzer and its seed corpus share (not secret: a fuzzer must be
// able to produce packets that authenticate, so that it reaches past the tag check).
#include <array>

#include "swarmfield/protocol/transport/packet.hpp"

namespace swarmfield::protocol {

inline SessionCredentials fuzz_session() {
  SessionCredentials s;
  for (std::size_t i = 0; i < s.token.size(); ++i) s.token[i] = static_cast<std::uint8_t>(0xA0 + i);
  for (std::size_t i = 0; i < s.client_to_server.size(); ++i) {
    s.client_to_server[i] = static_cast<std::uint8_t>(i * 7 + 1);
    s.server_to_client[i] = static_cast<std::uint8_t>(i * 11 + 3);
  }
  return s;
}

/// The fixed connect-token key of the token fuzzer and its seeds (connect_token_fuzz.cpp).
inline std::array<std::uint8_t, 32> fuzz_token_key() {
  std::array<std::uint8_t, 32> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i * 13 + 5);
  return k;
}

}  // namespace swarmfield::protocol
