#include <doctest/doctest.h>

#include <set>

#include "swarmfield/server/client_registry.hpp"

using namespace swarmfield;
using server::ClientRegistry;
using server::ClientState;

namespace {
asio::ip::udp::endpoint ep(unsigned short port) { return {asio::ip::make_address("127.0.0.1"), port}; }
}  // namespace

TEST_CASE("client_registry: unique non-zero tokens and ids, bounded size") {
  ClientRegistry reg(3, server::TokenGenerator(7));
  std::set<std::uint64_t> tokens;
  std::set<std::uint32_t> ids;
  for (int i = 0; i < 3; ++i) {
    ClientState* c = reg.add(protocol::Role::kViewer, "v");
    REQUIRE(c != nullptr);
    CHECK(c->token != 0);
    CHECK(c->id != 0);
    tokens.insert(c->token);
    ids.insert(c->id);
  }
  CHECK(tokens.size() == 3);
  CHECK(ids.size() == 3);
  CHECK(reg.full());
  CHECK(reg.add(protocol::Role::kPlayer, "p") == nullptr);
  CHECK(reg.remove(*ids.begin()));
  CHECK_FALSE(reg.full());
  CHECK(reg.add(protocol::Role::kPlayer, "p", 12) != nullptr);
  CHECK(reg.total_added() == 4);
}

TEST_CASE("client_registry: per-process random seeding gives different tokens") {
  ClientRegistry a(1), b(1);
  // Two generators seeded from std::random_device agree with probability 2^-64.
  CHECK(a.add(protocol::Role::kViewer, "")->token != b.add(protocol::Role::kViewer, "")->token);
}

TEST_CASE("client_registry: UDP accepted only with a known token, bound to the first endpoint") {
  ClientRegistry reg(4, server::TokenGenerator(1));
  ClientState* c = reg.add(protocol::Role::kPlayer, "p", 5);
  REQUIRE(c != nullptr);
  const std::uint64_t token = c->token;
  ClientState* out = nullptr;
  CHECK(reg.check_udp(token + 1, ep(4000), out) == ClientRegistry::UdpCheck::kUnknownToken);
  CHECK(out == nullptr);
  CHECK(reg.check_udp(0, ep(4000), out) == ClientRegistry::UdpCheck::kUnknownToken);
  CHECK_FALSE(c->udp_endpoint.has_value());  // an unknown token binds nothing
  CHECK(reg.check_udp(token, ep(4000), out) == ClientRegistry::UdpCheck::kAccepted);
  CHECK(out == c);
  REQUIRE(c->udp_endpoint.has_value());
  CHECK(*c->udp_endpoint == ep(4000));
  CHECK(reg.check_udp(token, ep(4001), out) == ClientRegistry::UdpCheck::kWrongEndpoint);
  CHECK(reg.check_udp(token, ep(4000), out) == ClientRegistry::UdpCheck::kAccepted);
  // A removed client's token stops working at once.
  CHECK(reg.remove(c->id));
  CHECK(reg.check_udp(token, ep(4000), out) == ClientRegistry::UdpCheck::kUnknownToken);
  CHECK(reg.find_by_token(token) == nullptr);
}

TEST_CASE("client_registry: sequence_newer handles wrap-around") {
  using server::sequence_newer;
  CHECK(sequence_newer(2, 1));
  CHECK_FALSE(sequence_newer(1, 2));
  CHECK_FALSE(sequence_newer(5, 5));
  CHECK(sequence_newer(0, 0xFFFFFFFFu));
  CHECK(sequence_newer(3, 0xFFFFFFF0u));
  CHECK_FALSE(sequence_newer(0xFFFFFFF0u, 3));
}
