#pragma once
// The fixed session the packet fuzzer and its seed corpus share (not secret: a fuzzer must be
// able to produce packets that authenticate, so that it reaches past the tag check).
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

}  // namespace swarmfield::protocol
