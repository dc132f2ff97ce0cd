#include "swarmfield/server/net/handshake.hpp"

#include <string>

namespace swarmfield::server {

std::optional<protocol::Error> check_hello(const protocol::Hello& hello, bool server_full) {
  if (hello.protocol_version != protocol::kProtocolVersion) {
    return protocol::Error{protocol::ErrorCode::kVersionMismatch,
                           "protocol version " + std::to_string(hello.protocol_version) +
                               " not supported: server speaks " + std::to_string(protocol::kProtocolVersion)};
  }
  if (hello.role != protocol::Role::kViewer && hello.role != protocol::Role::kPlayer) {
    return protocol::Error{protocol::ErrorCode::kBadMessage, "unknown role"};
  }
  if (server_full) return protocol::Error{protocol::ErrorCode::kServerFull, "server full"};
  return std::nullopt;
}

}  // namespace swarmfield::server
