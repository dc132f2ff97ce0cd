#include <doctest/doctest.h>

#include <set>

#include "swarmfield/server/net/ack_tracker.hpp"
#include "swarmfield/server/net/client_registry.hpp"

using namespace swarmfield;
using server::ClientRegistry;
using server::ClientState;

TEST_CASE("client_registry: unique ids, unique 128-bit tokens and keys from libsodium, bounded size") {
  ClientRegistry reg(3);
  std::set<protocol::SessionToken> tokens;
  std::set<std::uint32_t> ids;
  for (int i = 0; i < 3; ++i) {
    ClientState* c = reg.add(protocol::Role::kViewer, "v");
    REQUIRE(c != nullptr);
    CHECK(c->id != 0);
    CHECK(c->credentials.client_to_server != c->credentials.server_to_client);
    tokens.insert(c->token());
    ids.insert(c->id);
    CHECK(reg.find_by_token(c->token()) == c);
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

TEST_CASE("client_registry: a removed client's token stops working at once; unknown tokens find nothing") {
  ClientRegistry reg(4);
  ClientState* c = reg.add(protocol::Role::kPlayer, "p", 5);
  REQUIRE(c != nullptr);
  const protocol::SessionToken token = c->token();
  protocol::SessionToken other = token;
  other[15] ^= 1;
  CHECK(reg.find_by_token(other) == nullptr);
  CHECK(reg.find_by_token(protocol::SessionToken{}) == nullptr);
  CHECK_FALSE(c->udp_endpoint.has_value());  // no address until one answers a challenge
  CHECK(reg.remove(c->id));
  CHECK(reg.find_by_token(token) == nullptr);
}

TEST_CASE("ack_tracker: stalled once the oldest unacknowledged send is older than the timeout") {
  using Clock = server::AckTracker::Clock;
  using namespace std::chrono_literals;
  server::AckTracker acks;
  const auto t0 = Clock::now();
  CHECK_FALSE(acks.stalled(t0 + 1h, 1s));  // nothing sent: nothing to acknowledge
  acks.on_sent(10, t0);
  acks.on_sent(20, t0 + 500ms);
  CHECK_FALSE(acks.stalled(t0 + 900ms, 1s));
  CHECK(acks.stalled(t0 + 1100ms, 1s));
  acks.on_ack(15);  // the first is in: the oldest unacknowledged is now the second
  CHECK_FALSE(acks.stalled(t0 + 1100ms, 1s));
  CHECK(acks.stalled(t0 + 1600ms, 1s));
  acks.on_ack(25);
  CHECK(acks.unacknowledged() == 0);
  CHECK_FALSE(acks.stalled(t0 + 1h, 1s));
  acks.on_sent(30, t0);
  acks.reset();
  CHECK_FALSE(acks.stalled(t0 + 1h, 1s));
  // Bounded: a client that never acks costs a fixed amount of memory.
  for (std::uint64_t s = 0; s < 10 * server::AckTracker::kMaxTracked; ++s) acks.on_sent(s, t0);
  CHECK(acks.unacknowledged() == server::AckTracker::kMaxTracked);
}
