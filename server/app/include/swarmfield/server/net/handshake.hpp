#pragma once
// The Hello check of the TCP handshake, pure so it can be unit-tested.
#include <optional>

#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::server {

/// nullopt when `hello` may join; otherwise the Error to send before closing:
/// kVersionMismatch ("protocol version 7 not supported: server speaks 1") or kServerFull.
/// The version is checked first, so an old client learns why even on a full server.
[[nodiscard]] std::optional<protocol::Error> check_hello(const protocol::Hello& hello, bool server_full);

}  // namespace swarmfield::server
