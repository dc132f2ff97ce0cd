// The UDP packet layer: sealing and opening both ways, sizes of the handshake packets, every
// changed byte caught, wrong keys and sessions refused, replays and far jumps refused before
// and independently of authentication, forged packets leave no trace, acks.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/packet.hpp"

namespace sp = swarmfield::protocol;
using Result = sp::PacketChannel::OpenResult;
using sp::PacketType;

namespace {

struct Pair {
  sp::SessionCredentials credentials = sp::make_session_credentials();
  sp::PacketChannel client{sp::PacketChannel::Side::kClient, credentials};
  sp::PacketChannel server{sp::PacketChannel::Side::kServer, credentials};
};

std::vector<std::uint8_t> bytes_of(std::size_t n, std::uint8_t fill) { return std::vector<std::uint8_t>(n, fill); }

}  // namespace

TEST_CASE("credentials: 128-bit tokens and 256-bit keys, fresh every time") {
  std::set<sp::SessionToken> tokens;
  std::set<sp::SessionKey> keys;
  for (int i = 0; i < 1000; ++i) {
    const auto c = sp::make_session_credentials();
    CHECK(std::any_of(c.token.begin(), c.token.end(), [](std::uint8_t b) { return b != 0; }));
    CHECK(c.client_to_server != c.server_to_client);
    tokens.insert(c.token);
    keys.insert(c.client_to_server);
    keys.insert(c.server_to_client);
  }
  CHECK(tokens.size() == 1000);
  CHECK(keys.size() == 2000);
  CHECK(sp::kSessionTokenBytes * 8 >= 128);
}

TEST_CASE("packets seal and open both ways; handshake packets have fixed sizes") {
  Pair p;
  sp::PacketHeader h;
  std::vector<std::uint8_t> body;

  const auto request = p.client.seal(PacketType::kConnectRequest, {});
  CHECK(request.size() == sp::kConnectRequestBytes);
  REQUIRE(p.server.open(request, h, body) == Result::kOk);
  CHECK(h.type == PacketType::kConnectRequest);
  CHECK(h.token == p.credentials.token);

  const sp::Challenge challenge{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const auto sealed_challenge = p.server.seal(PacketType::kChallenge, challenge);
  CHECK(sealed_challenge.size() == sp::kChallengePacketBytes);
  CHECK(sealed_challenge.size() * 20 <= request.size());  // no amplification
  REQUIRE(p.client.open(sealed_challenge, h, body) == Result::kOk);
  CHECK(std::equal(body.begin(), body.end(), challenge.begin(), challenge.end()));
  // The challenge is not readable in the clear.
  CHECK(std::search(sealed_challenge.begin(), sealed_challenge.end(), challenge.begin(), challenge.end()) ==
        sealed_challenge.end());

  const auto response = p.client.seal(PacketType::kChallengeResponse, body);
  CHECK(response.size() == sp::kChallengePacketBytes);
  REQUIRE(p.server.open(response, h, body) == Result::kOk);
  CHECK(h.type == PacketType::kChallengeResponse);

  const auto input_body = sp::encode_input_datagram(sp::Input{3, 0.5f, 0, 0, 0, 10, 10, 0, 42});
  const auto data = p.client.seal(PacketType::kData, input_body);
  CHECK(data.size() == input_body.size() + sp::kPacketOverheadBytes);
  REQUIRE(p.server.open(data, h, body) == Result::kOk);
  CHECK(body == input_body);

  const auto keepalive = p.client.seal(PacketType::kData, {});
  CHECK(keepalive.size() == sp::kPacketOverheadBytes);
  REQUIRE(p.server.open(keepalive, h, body) == Result::kOk);
  CHECK(body.empty());

  // The largest body fits one datagram; one more byte does not.
  CHECK(p.server.seal(PacketType::kData, bytes_of(sp::kMaxPacketBodyBytes, 1)).size() == sp::kMaxDatagramBytes);
  CHECK(p.server.seal(PacketType::kData, bytes_of(sp::kMaxPacketBodyBytes + 1, 1)).empty());
}

TEST_CASE("read_packet_header refuses wrong sizes, types and versions") {
  Pair p;
  auto request = p.client.seal(PacketType::kConnectRequest, {});
  CHECK(sp::read_packet_header(request).has_value());
  auto short_request = request;
  short_request.pop_back();  // a smaller request could earn a reply as large as itself
  CHECK_FALSE(sp::read_packet_header(short_request));
  auto big = request;
  big.push_back(0);
  CHECK_FALSE(sp::read_packet_header(big));
  CHECK_FALSE(sp::read_packet_header(bytes_of(sp::kPacketOverheadBytes - 1, 4)));
  auto data = p.client.seal(PacketType::kData, {});
  data[0] = 9;
  CHECK_FALSE(sp::read_packet_header(data));
  data[0] = static_cast<std::uint8_t>(PacketType::kData);
  data[1] = sp::kPacketVersion + 1;
  CHECK_FALSE(sp::read_packet_header(data));
}

TEST_CASE("any changed byte, a wrong key, a wrong direction or a foreign session fails") {
  Pair p;
  const auto body = sp::encode_input_datagram(sp::Input{9, 1, 0, 0, 0, 5, 5, 1, 2});
  const auto good = p.client.seal(PacketType::kData, body);
  sp::PacketHeader h;
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const std::uint8_t bit : {std::uint8_t{1}, std::uint8_t{0x80}}) {
      auto bad = good;
      bad[i] ^= bit;
      const Result r = p.server.open(bad, h, out);
      CAPTURE(i);
      // Type/version/token bytes fail before the tag; the rest fail the tag (or, for the
      // sequence bytes, the window when the new value lands far away).
      CHECK(r != Result::kOk);
      CHECK(out.empty());
    }
  }
  REQUIRE(p.server.open(good, h, out) == Result::kOk);  // the genuine one still works afterwards

  // Sealed with another session's key (same token): the tag fails.
  Pair other;
  sp::SessionCredentials stolen = other.credentials;
  stolen.token = p.credentials.token;  // knows the token, not the key
  sp::PacketChannel forger(sp::PacketChannel::Side::kClient, stolen);
  for (int i = 0; i < 5; ++i) static_cast<void>(forger.seal(PacketType::kData, body));  // past the genuine sequences
  CHECK(p.server.open(forger.seal(PacketType::kData, body), h, out) == Result::kBadAuth);
  // The server's own direction can not be replayed back to it (different key and nonce).
  const auto from_server = p.server.seal(PacketType::kData, body);
  CHECK(p.server.open(from_server, h, out) != Result::kOk);
  // Another session's token.
  CHECK(p.server.open(other.client.seal(PacketType::kData, body), h, out) == Result::kWrongSession);
  // A client does not take requests; a server does not take challenges.
  CHECK(p.client.open(p.client.seal(PacketType::kConnectRequest, {}), h, out) == Result::kMalformed);
  const sp::Challenge c{};
  CHECK(p.server.open(p.server.seal(PacketType::kChallenge, c), h, out) == Result::kMalformed);
}

TEST_CASE("replays, late and far-ahead packets; forged packets leave the window untouched") {
  Pair p;
  sp::PacketHeader h;
  std::vector<std::uint8_t> out;
  std::vector<std::vector<std::uint8_t>> sent;
  for (int i = 0; i < 10; ++i) sent.push_back(p.client.seal(PacketType::kData, bytes_of(20, static_cast<std::uint8_t>(i))));
  REQUIRE(p.server.open(sent[5], h, out) == Result::kOk);
  CHECK(p.server.open(sent[5], h, out) == Result::kDuplicate);
  REQUIRE(p.server.open(sent[2], h, out) == Result::kOk);  // late is fine once
  CHECK(p.server.open(sent[2], h, out) == Result::kDuplicate);
  CHECK(p.server.newest_received() == 6);

  // A forged packet far ahead (within the jump bound) with a bad tag: refused, and the genuine
  // next packet is still accepted (a forgery must not move the window).
  sp::PacketHeader fake;
  fake.type = PacketType::kData;
  fake.token = p.credentials.token;
  sp::SessionKey wrong{};
  const auto forged = sp::seal_packet(fake, 5000, bytes_of(20, 1), wrong, sp::Direction::kClientToServer);
  CHECK(p.server.open(forged, h, out) == Result::kBadAuth);
  CHECK(p.server.newest_received() == 6);
  CHECK(p.server.open(sent[6], h, out) == Result::kOk);
  CHECK(p.server.open(sent[3], h, out) == Result::kOk);

  // A genuine packet from beyond the jump bound (a broken or replaying peer): refused before
  // any crypto.
  const std::uint64_t far = 7 + sp::ReplayWindow::kDefaultMaxJump + 1;
  const auto ahead = sp::seal_packet(fake, far, bytes_of(20, 1), p.credentials.client_to_server,
                                     sp::Direction::kClientToServer);
  CHECK(p.server.open(ahead, h, out) == Result::kTooFarAhead);
  CHECK(p.server.open(sent[9], h, out) == Result::kOk);
}

TEST_CASE("acks: the peer's newest received sequence, from authenticated packets, never beyond what was sent") {
  Pair p;
  sp::PacketHeader h;
  std::vector<std::uint8_t> out;
  CHECK(p.server.peer_ack() == 0);
  for (int i = 0; i < 4; ++i) REQUIRE(p.client.open(p.server.seal(PacketType::kData, {}), h, out) == Result::kOk);
  CHECK(p.client.newest_received() == 4);
  REQUIRE(p.server.open(p.client.seal(PacketType::kData, {}), h, out) == Result::kOk);
  CHECK(h.ack == 4);
  CHECK(p.server.peer_ack() == 4);
  // An ack for a sequence never sent (sealed by the genuine key, so authentic but wrong) is ignored.
  sp::PacketHeader lie;
  lie.type = PacketType::kData;
  lie.token = p.credentials.token;
  lie.ack = 999;
  REQUIRE(p.server.open(sp::seal_packet(lie, 50, {}, p.credentials.client_to_server, sp::Direction::kClientToServer),
                        h, out) == Result::kOk);
  CHECK(p.server.peer_ack() == 4);
}
