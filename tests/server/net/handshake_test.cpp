#include <doctest/doctest.h>

#include "swarmfield/server/net/handshake.hpp"

using namespace swarmfield;

TEST_CASE("handshake: the right version joins") {
  protocol::Hello hello;
  hello.protocol_version = protocol::kProtocolVersion;
  hello.role = protocol::Role::kPlayer;
  CHECK_FALSE(server::check_hello(hello, false).has_value());
}

TEST_CASE("handshake: a wrong version is refused with both versions named") {
  protocol::Hello hello;
  hello.protocol_version = 7;
  const auto e = server::check_hello(hello, true);  // version wins over "full"
  REQUIRE(e.has_value());
  CHECK(e->code == protocol::ErrorCode::kVersionMismatch);
  CHECK(e->reason == "protocol version 7 not supported: server speaks " + std::to_string(protocol::kProtocolVersion));
}

TEST_CASE("handshake: a full server says so") {
  protocol::Hello hello;
  const auto e = server::check_hello(hello, true);
  REQUIRE(e.has_value());
  CHECK(e->code == protocol::ErrorCode::kServerFull);
}
