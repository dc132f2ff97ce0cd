// Connect tokens (connect_token.hpp) and sealed TCP frames (frame_seal.hpp): a token opens only
// under its key, for its protocol, before its expiry, with every byte as issued; its text form
// round-trips and refuses junk; a sealed frame stream refuses injected, changed, replayed,
// dropped and reordered frames.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/frame_seal.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace sp = swarmfield::protocol;

namespace {

constexpr std::uint64_t kNow = 1'800'000'000;

sp::TokenGrant grant() {
  sp::TokenGrant g;
  g.client_id = 4242;
  g.role = sp::Role::kPlayer;
  g.name = "alice";
  g.server_addresses = {"10.0.0.7:7300", "127.0.0.1:7300"};
  g.timeout_s = 12;
  return g;
}

}  // namespace

TEST_CASE("a connect token opens under its key and carries the grant and the keys the client holds") {
  const sp::TokenKey key = sp::make_token_key();
  const auto token = sp::issue_connect_token(key, grant(), kNow, 60);
  REQUIRE(token);
  CHECK(token->expire_unix_s == kNow + 60);
  CHECK(token->client_to_server != token->server_to_client);

  std::string error;
  const auto read = sp::decode_connect_token(sp::encode_connect_token(*token), &error);
  REQUIRE_MESSAGE(read, error);
  CHECK(*read == *token);

  const auto opened = sp::open_hello_token(sp::hello_token_bytes(*read), key, kNow + 59);
  REQUIRE_MESSAGE(opened.token, opened.error);
  CHECK(opened.token->grant.client_id == 4242);
  CHECK(opened.token->grant.role == sp::Role::kPlayer);
  CHECK(opened.token->grant.name == "alice");
  CHECK(opened.token->grant.server_addresses == grant().server_addresses);
  CHECK(opened.token->grant.timeout_s == 12);
  CHECK(opened.token->client_to_server == token->client_to_server);
  CHECK(opened.token->server_to_client == token->server_to_client);

  // The public text holds no copy of the private plaintext: a second token for the same grant
  // shares no keys and no tag.
  const auto other = sp::issue_connect_token(key, grant(), kNow, 60);
  REQUIRE(other);
  CHECK(other->client_to_server != token->client_to_server);
  CHECK(other->nonce != token->nonce);
  CHECK(sp::open_hello_token(sp::hello_token_bytes(*other), key, kNow).token->tag != opened.token->tag);
}

TEST_CASE("expired, forged, wrong-key and wrong-protocol tokens are refused, each for its reason") {
  const sp::TokenKey key = sp::make_token_key();
  const auto token = sp::issue_connect_token(key, grant(), kNow, 60);
  REQUIRE(token);
  const auto bytes = sp::hello_token_bytes(*token);
  REQUIRE(bytes.size() == sp::kHelloTokenBytes);

  auto refusal = [&](std::span<const std::uint8_t> b, const sp::TokenKey& k, std::uint64_t now) {
    const auto r = sp::open_hello_token(b, k, now);
    CHECK_FALSE(r.token);
    CHECK_FALSE(r.error.empty());
    return r.refusal;
  };
  CHECK(refusal(bytes, key, kNow + 60) == sp::TokenRefusal::kExpired);
  CHECK(refusal(bytes, sp::make_token_key(), kNow) == sp::TokenRefusal::kForged);

  // Every single changed byte is caught: the expiry and protocol id are associated data, the
  // rest is nonce or sealed.
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= 0x01;
    const auto r = sp::open_hello_token(bad, key, kNow);
    REQUIRE_FALSE(r.token);
    if (i < 8) {
      CHECK(r.refusal == sp::TokenRefusal::kWrongProtocol);
    } else if (i >= 16) {
      CHECK(r.refusal == sp::TokenRefusal::kForged);
    }
  }
  // Extending the expiry in the public part does not carry over to the seal.
  auto later = *token;
  later.expire_unix_s += 3600;
  CHECK(refusal(sp::hello_token_bytes(later), key, kNow + 120) == sp::TokenRefusal::kForged);

  const auto foreign = sp::issue_connect_token(key, grant(), kNow, 60, nullptr, sp::kConnectProtocolId + 1);
  REQUIRE(foreign);
  CHECK(refusal(sp::hello_token_bytes(*foreign), key, kNow) == sp::TokenRefusal::kWrongProtocol);

  CHECK(refusal(std::span(bytes).first(bytes.size() - 1), key, kNow) == sp::TokenRefusal::kMalformed);
  CHECK(refusal({}, key, kNow) == sp::TokenRefusal::kMalformed);
}

TEST_CASE("a token's grant is checked when it is issued and its text when it is read") {
  const sp::TokenKey key = sp::make_token_key();
  std::string error;
  auto g = grant();
  g.server_addresses.clear();
  CHECK_FALSE(sp::issue_connect_token(key, g, kNow, 60, &error));
  CHECK(error.find("servers") != std::string::npos);
  g = grant();
  g.server_addresses.assign(sp::kMaxTokenServers + 1, "h:1");
  CHECK_FALSE(sp::issue_connect_token(key, g, kNow, 60, &error));
  g = grant();
  g.server_addresses = {"no-port"};
  CHECK_FALSE(sp::issue_connect_token(key, g, kNow, 60, &error));
  // A port no server can have (a token good for nothing), or none after the last ':'.
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:", "127.0.0.1:7x", ":7300", "[::1]"}) {
    g.server_addresses = {bad};
    CHECK_FALSE(sp::issue_connect_token(key, g, kNow, 60, &error));
    CHECK(error.find("a port 1..65535") != std::string::npos);
  }
  g.server_addresses = {"[::1]:7300", "game.example:65535"};
  CHECK(sp::issue_connect_token(key, g, kNow, 60, &error));
  g = grant();
  g.name = "bad\x1b[2Jname";
  CHECK_FALSE(sp::issue_connect_token(key, g, kNow, 60, &error));
  CHECK_FALSE(sp::issue_connect_token(key, grant(), kNow, 0, &error));

  const std::string text = sp::encode_connect_token(*sp::issue_connect_token(key, grant(), kNow, 60));
  CHECK(sp::decode_connect_token(text + "\n"));  // a file's line end is fine
  CHECK_FALSE(sp::decode_connect_token("hello world", &error));
  CHECK(error.find("swft1:") != std::string::npos);
  CHECK_FALSE(sp::decode_connect_token("swft1:!!!!", &error));
  CHECK_FALSE(sp::decode_connect_token(text.substr(0, text.size() - 8), &error));
  CHECK_FALSE(sp::decode_connect_token(text + "AAAA", &error));
  CHECK_FALSE(sp::decode_connect_token("swft1:" + std::string(100000, 'A'), &error));
  for (std::size_t cut = 0; cut < text.size(); cut += 7) (void)sp::decode_connect_token(text.substr(0, cut));

  const sp::TokenKey k = sp::make_token_key();
  const auto parsed = sp::parse_token_key("  " + sp::format_token_key(k) + "\n");
  REQUIRE(parsed);
  CHECK(*parsed == k);
  CHECK_FALSE(sp::parse_token_key(sp::format_token_key(k).substr(2)));
  CHECK_FALSE(sp::parse_token_key(std::string(64, 'g')));
}

TEST_CASE("Hello carries a token of the exact size or none") {
  sp::Hello hello;
  hello.name = "bob";
  hello.connect_token.assign(sp::kHelloTokenBytes, 0xab);
  const auto wire = sp::encode_tcp_message(hello);
  const auto back = sp::decode_tcp_message(wire, nullptr, sp::MessageSet::kFromClient);
  REQUIRE(back);
  CHECK(std::get<sp::Hello>(*back) == hello);

  hello.connect_token.resize(sp::kHelloTokenBytes - 1);
  std::string error;
  CHECK_FALSE(sp::decode_tcp_message(sp::encode_tcp_message(hello), &error, sp::MessageSet::kFromClient));
  CHECK(error.find("connect_token") != std::string::npos);
}

TEST_CASE("a sealed frame stream refuses injected, changed, replayed, dropped and reordered frames") {
  const sp::SessionCredentials keys = sp::make_session_credentials();
  auto stream_of = [&](int frames) {
    sp::FrameSeal sender(keys.client_to_server, sp::Direction::kTcpClientToServer);
    std::vector<std::vector<std::uint8_t>> out;
    for (int i = 0; i < frames; ++i) {
      std::vector<std::uint8_t> frame;
      const std::vector<std::uint8_t> payload(static_cast<std::size_t>(i * 10), static_cast<std::uint8_t>(i));
      REQUIRE(sender.seal(payload, frame));
      REQUIRE(frame.size() == 4 + payload.size() + sp::kFrameTagBytes);
      out.push_back(std::vector<std::uint8_t>(frame.begin() + 4, frame.end()));  // what FrameDecoder yields
    }
    return out;
  };
  const auto frames = stream_of(4);
  auto receiver = [&] { return sp::FrameSeal(keys.client_to_server, sp::Direction::kTcpClientToServer); };
  std::vector<std::uint8_t> plain;
  {
    auto r = receiver();
    for (int i = 0; i < 4; ++i) {
      REQUIRE(r.open(frames[static_cast<std::size_t>(i)], plain));
      CHECK(plain == std::vector<std::uint8_t>(static_cast<std::size_t>(i * 10), static_cast<std::uint8_t>(i)));
    }
    CHECK_FALSE(r.open(frames[3], plain));  // replayed
  }
  {
    auto r = receiver();
    CHECK_FALSE(r.open(frames[1], plain));  // the first was dropped
    auto r2 = receiver();
    REQUIRE(r2.open(frames[0], plain));
    CHECK_FALSE(r2.open(frames[2], plain));  // reordered
  }
  {
    auto r = receiver();
    auto changed = frames[2];
    REQUIRE(r.open(frames[0], plain));
    REQUIRE(r.open(frames[1], plain));
    changed[3] ^= 0x80;
    CHECK_FALSE(r.open(changed, plain));
    CHECK(plain.empty());
  }
  {
    // A clear message, or one sealed the other way or with the UDP direction, never opens.
    auto r = receiver();
    sp::Input input;
    CHECK_FALSE(r.open(sp::encode_tcp_message(input), plain));
    sp::FrameSeal wrong_way(keys.client_to_server, sp::Direction::kTcpServerToClient);
    sp::FrameSeal udp_way(keys.client_to_server, sp::Direction::kClientToServer);
    std::vector<std::uint8_t> a, b;
    REQUIRE(wrong_way.seal(sp::encode_tcp_message(input), a));
    REQUIRE(udp_way.seal(sp::encode_tcp_message(input), b));
    CHECK_FALSE(r.open(std::span(a).subspan(4), plain));
    CHECK_FALSE(r.open(std::span(b).subspan(4), plain));
    CHECK_FALSE(r.open(std::span(b).first(3), plain));
  }
  std::vector<std::uint8_t> huge(sp::kMaxFrameBytes), out;
  sp::FrameSeal s(keys.server_to_client, sp::Direction::kTcpServerToClient);
  CHECK_FALSE(s.seal(huge, out));
  CHECK(out.empty());
  CHECK(s.frames() == 0);
}
