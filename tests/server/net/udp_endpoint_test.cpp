// UdpEndpoint on 127.0.0.1: address confirmation by challenge (a forged source earns at most one
// small challenge, never the stream), sealed inputs from the confirmed address only, every drop
// counted by reason, kernel receive-buffer overflows counted, and every waiting datagram read
// at once even when the io_context is kept busy by a tick timer that is always due.
#include <doctest/doctest.h>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/server/net/client_registry.hpp"
#include "swarmfield/server/net/udp_endpoint.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using server::UdpDrop;
using udp = asio::ip::udp;

namespace {

// Few enough that they fit the receive buffer even at the kernel default.
constexpr std::uint32_t kInputs = 64;

// A UDP socket on a 127/8 address (127.0.0.3 stands in for a victim whose address is forged).
struct Peer {
  asio::io_context& io;
  udp::socket socket;
  Peer(asio::io_context& context, const char* address)
      : io(context), socket(context, udp::endpoint(asio::ip::make_address(address), 0)) {
    socket.non_blocking(true);
  }
  void send(const std::vector<std::uint8_t>& bytes, std::uint16_t port) {
    socket.send_to(asio::buffer(bytes), udp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  // Every datagram waiting now (non-blocking).
  std::vector<std::vector<std::uint8_t>> receive_all() {
    std::vector<std::vector<std::uint8_t>> out;
    std::array<std::uint8_t, 2048> buffer{};
    for (;;) {
      std::error_code ec;
      udp::endpoint from;
      const std::size_t n = socket.receive_from(asio::buffer(buffer), from, 0, ec);
      if (ec) break;
      out.emplace_back(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
    }
    return out;
  }
  [[nodiscard]] udp::endpoint endpoint() const { return socket.local_endpoint(); }
};

struct Fixture {
  asio::io_context io;
  server::ClientRegistry clients{4};
  server::ClientState* client = clients.add(protocol::Role::kPlayer, "p", 1);
  std::vector<std::uint32_t> seen;  // input sequences in the order the handler got them
  server::UdpEndpoint udp_endpoint{io, clients, [this](server::ClientState&, const protocol::Input& in) {
                                     seen.push_back(in.sequence);
                                   }};
  asio::io_context client_io;
  Peer real{client_io, "127.0.0.1"};
  protocol::PacketChannel channel{protocol::PacketChannel::Side::kClient, client->credentials};

  explicit Fixture(std::size_t receive_buffer = 1u << 20) {
    std::string error;
    REQUIRE_MESSAGE(udp_endpoint.open("127.0.0.1", 0, receive_buffer, error), error);
  }
  void send(const std::vector<std::uint8_t>& bytes) { real.send(bytes, udp_endpoint.port()); }
  // Loopback delivers synchronously, but give the kernel a moment to queue every datagram.
  static void settle() { std::this_thread::sleep_for(20ms); }
  std::size_t drain() {
    settle();
    return udp_endpoint.drain();
  }
  // Request -> challenge -> response from the real socket; true once confirmed.
  bool confirm() {
    send(channel.seal(protocol::PacketType::kConnectRequest, {}));
    drain();
    settle();
    for (const auto& d : real.receive_all()) {
      protocol::PacketHeader h;
      std::vector<std::uint8_t> body;
      if (channel.open(d, h, body) == protocol::PacketChannel::OpenResult::kOk &&
          h.type == protocol::PacketType::kChallenge) {
        send(channel.seal(protocol::PacketType::kChallengeResponse, body));
      }
    }
    drain();
    settle();
    // The server's "you are confirmed" (an empty data packet) arrives at once.
    bool told = false;
    for (const auto& d : real.receive_all()) {
      protocol::PacketHeader h;
      std::vector<std::uint8_t> body;
      told = told || (channel.open(d, h, body) == protocol::PacketChannel::OpenResult::kOk &&
                      h.type == protocol::PacketType::kData && body.empty());
    }
    return told && client->udp_endpoint.has_value() && *client->udp_endpoint == real.endpoint();
  }
  std::vector<std::uint8_t> input_packet(std::uint32_t sequence) {
    protocol::Input in;
    in.sequence = sequence;
    in.move_x = 1.0f;
    return channel.seal(protocol::PacketType::kData, protocol::encode_input_datagram(in));
  }
  [[nodiscard]] std::uint64_t drops(UdpDrop reason) const { return udp_endpoint.counters().drops(reason); }
};

bool strictly_increasing_from_1(const std::vector<std::uint32_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != i + 1) return false;
  return true;
}

}  // namespace

TEST_CASE("udp_endpoint: the challenge confirms the address; only then inputs count") {
  Fixture f;
  // Inputs before confirmation: dropped, nothing sent back.
  f.send(f.input_packet(1));
  f.drain();
  CHECK(f.drops(UdpDrop::kUnconfirmedAddress) == 1);
  CHECK(f.seen.empty());
  REQUIRE(f.confirm());
  CHECK(f.udp_endpoint.counters().challenges_sent == 1);
  CHECK(f.udp_endpoint.counters().challenge_bytes_sent == protocol::kChallengePacketBytes);
  CHECK(f.udp_endpoint.counters().confirmed == 1);
  for (std::uint32_t s = 1; s <= 5; ++s) f.send(f.input_packet(s));
  f.drain();
  CHECK(strictly_increasing_from_1(f.seen));
  CHECK(f.seen.size() == 5);
  // The server's data reaches the client and opens with its key.
  REQUIRE(f.udp_endpoint.send_data(*f.client, protocol::encode_input_datagram(protocol::Input{})));
  Fixture::settle();
  const auto got = f.real.receive_all();
  REQUIRE(got.size() == 1);
  protocol::PacketHeader h;
  std::vector<std::uint8_t> body;
  CHECK(f.channel.open(got[0], h, body) == protocol::PacketChannel::OpenResult::kOk);
  CHECK(h.type == protocol::PacketType::kData);
}

TEST_CASE("udp_endpoint: a forged source gets one small challenge per big request and never the stream") {
  Fixture f;
  asio::io_context victim_io;
  Peer victim(victim_io, "127.0.0.3");  // the address an attacker (holding a session) forges
  std::size_t forged_bytes = 0;
  for (int i = 0; i < 5; ++i) {
    const auto request = f.channel.seal(protocol::PacketType::kConnectRequest, {});
    forged_bytes += request.size();
    victim.send(request, f.udp_endpoint.port());
  }
  f.drain();
  Fixture::settle();
  const auto at_victim = victim.receive_all();
  std::size_t victim_bytes = 0;
  for (const auto& d : at_victim) victim_bytes += d.size();
  CHECK(at_victim.size() == 5);
  CHECK(victim_bytes * 20 <= forged_bytes);  // 58 bytes per 1200
  CHECK_FALSE(f.client->udp_endpoint.has_value());  // the victim never answers: nothing confirmed
  // The server streams to confirmed addresses only: nothing to send to.
  CHECK_FALSE(f.udp_endpoint.send_data(*f.client, std::vector<std::uint8_t>(100, 1)));
  // The challenge bytes, were they known, do not confirm a different address.
  std::vector<std::uint8_t> challenge;
  protocol::PacketHeader h;
  REQUIRE(f.channel.open(at_victim.back(), h, challenge) == protocol::PacketChannel::OpenResult::kOk);
  f.send(f.channel.seal(protocol::PacketType::kChallengeResponse, challenge));  // from 127.0.0.1
  f.drain();
  CHECK(f.drops(UdpDrop::kBadChallenge) == 1);
  CHECK_FALSE(f.client->udp_endpoint.has_value());
  // Answered from the victim's address it would confirm it: the proof is receiving there.
  victim.send(f.channel.seal(protocol::PacketType::kChallengeResponse, challenge), f.udp_endpoint.port());
  f.drain();
  REQUIRE(f.client->udp_endpoint.has_value());
  CHECK(*f.client->udp_endpoint == victim.endpoint());
}

TEST_CASE("udp_endpoint: every kind of bad datagram is dropped and counted by its reason") {
  Fixture f;
  REQUIRE(f.confirm());
  const auto port = f.udp_endpoint.port();
  // malformed: garbage, a short request, a datagram over the size limit
  f.send({1, 2, 3});
  auto short_request = f.channel.seal(protocol::PacketType::kConnectRequest, {});
  short_request.resize(600);
  f.send(short_request);
  f.send(std::vector<std::uint8_t>(1500, 4));
  // unknown token
  const auto stranger = protocol::make_session_credentials();
  protocol::PacketChannel other(protocol::PacketChannel::Side::kClient, stranger);
  f.send(other.seal(protocol::PacketType::kData, {}));
  // bad auth: the right token, a key of our own making
  protocol::SessionCredentials forged = stranger;
  forged.token = f.client->token();
  protocol::PacketChannel forger(protocol::PacketChannel::Side::kClient, forged);
  for (int i = 0; i < 50; ++i) static_cast<void>(forger.seal(protocol::PacketType::kData, {}));
  f.send(forger.seal(protocol::PacketType::kData, {}));
  f.send(forger.seal(protocol::PacketType::kConnectRequest, {}));
  // duplicate: a replayed input
  const auto input = f.input_packet(1);
  f.send(input);
  f.send(input);
  // sequence jump: a genuine packet 2^21 ahead
  protocol::PacketHeader header;
  header.type = protocol::PacketType::kData;
  header.token = f.client->token();
  f.send(protocol::seal_packet(header, f.channel.next_send_sequence() + (1u << 21), {},
                               f.client->credentials.client_to_server, protocol::Direction::kClientToServer));
  // bad payload: an authenticated garbage body, and a snapshot fragment (what only the server
  // sends) from a client
  f.send(f.channel.seal(protocol::PacketType::kData, std::vector<std::uint8_t>(40, 0xEE)));
  std::vector<std::vector<std::uint8_t>> fragments;
  REQUIRE(protocol::split_snapshot(std::vector<std::uint8_t>(100, 0xD1), 1, fragments) == 1);
  f.send(f.channel.seal(protocol::PacketType::kData, fragments.front()));
  // unconfirmed address: a genuine input from another socket
  asio::io_context other_io;
  Peer elsewhere(other_io, "127.0.0.2");
  elsewhere.send(f.input_packet(2), port);
  // rate limited: the 11th challenge request within a second
  for (int i = 0; i < 11; ++i) f.send(f.channel.seal(protocol::PacketType::kConnectRequest, {}));
  f.drain();

  CHECK(f.drops(UdpDrop::kMalformed) == 3);
  CHECK(f.drops(UdpDrop::kUnknownToken) == 1);
  CHECK(f.drops(UdpDrop::kBadAuth) == 2);
  CHECK(f.drops(UdpDrop::kDuplicate) == 1);
  CHECK(f.drops(UdpDrop::kSequenceJump) == 1);
  CHECK(f.drops(UdpDrop::kBadPayload) == 2);
  CHECK(f.drops(UdpDrop::kUnexpected) == 0);  // every well-formed client body is an input or an ack
  CHECK(f.drops(UdpDrop::kUnconfirmedAddress) == 1);
  // confirm() used 1 of the 10 challenges this second: 9 more pass, 2 are refused.
  CHECK(f.drops(UdpDrop::kRateLimited) == 2);
  CHECK(f.seen == std::vector<std::uint32_t>{1});  // only the genuine input, once
  const auto& c = f.udp_endpoint.counters();
  CHECK(c.total_dropped() == 13);
  CHECK(c.received == c.total_dropped() + 1 /*input*/ + 9 /*challenged requests*/ + 2 /*confirm()*/);
}

TEST_CASE("udp_endpoint: datagrams the kernel dropped for want of buffer are counted") {
  Fixture f(64 * 1024);  // small on purpose
  REQUIRE(f.confirm());
  constexpr int kFlood = 3000;
  int sent = 0;
  for (int i = 0; i < kFlood; ++i) {
    std::error_code ec;
    f.real.socket.send_to(asio::buffer(std::vector<std::uint8_t>(600, 7)),
                          udp::endpoint(asio::ip::make_address("127.0.0.1"), f.udp_endpoint.port()), 0, ec);
    if (!ec) ++sent;
  }
  Fixture::settle();
  const auto before = f.udp_endpoint.counters().received;
  while (f.udp_endpoint.drain() > 0) {
  }
  const auto& c = f.udp_endpoint.counters();
  const std::uint64_t read = c.received - before;
  CHECK(c.drops(UdpDrop::kKernelOverflow) > 0);
  CHECK(read + c.drops(UdpDrop::kKernelOverflow) == static_cast<std::uint64_t>(sent));
  CHECK(c.drops(UdpDrop::kMalformed) == read);
}

TEST_CASE("udp_endpoint: a loop whose tick timer is always due still gets every waiting input") {
  Fixture f;
  REQUIRE(f.confirm());
  for (std::uint32_t s = 1; s <= kInputs; ++s) f.send(f.input_packet(s));
  Fixture::settle();
  // The overloaded server: the timer is already expired every time it is armed and each
  // "tick" takes 2 ms. Reading one datagram per io_context pass got ~1 input per tick here, so
  // inputs queued up in the kernel and were applied seconds late.
  asio::steady_timer tick(f.io);
  int ticks = 0;
  std::function<void()> arm = [&] {
    tick.expires_at(Clock::now() - 1ms);
    tick.async_wait([&](std::error_code ec) {
      if (ec) return;
      ++ticks;
      std::this_thread::sleep_for(2ms);
      if (ticks < 5) {
        arm();
      } else {
        f.io.stop();
      }
    });
  };
  arm();
  f.io.run_for(2s);  // bounded even if the stop above never happens
  CHECK(ticks == 5);
  CHECK(f.seen.size() == kInputs);
  CHECK(strictly_increasing_from_1(f.seen));  // arrival order: the newest is the last applied
}

TEST_CASE("udp_endpoint: drain() reads what waits without the io_context, bounded by its cap") {
  Fixture f;
  REQUIRE(f.confirm());
  const auto received_before = f.udp_endpoint.counters().received;
  for (std::uint32_t s = 1; s <= 10; ++s) f.send(f.input_packet(s));
  f.send({1, 2, 3});  // garbage
  Fixture::settle();
  CHECK(f.udp_endpoint.drain(4) == 4);  // the cap holds
  CHECK(f.seen.size() == 4);
  CHECK(f.udp_endpoint.drain() == 7);  // the rest, in one call
  CHECK(f.udp_endpoint.drain() == 0);  // nothing waits: returns at once instead of blocking
  CHECK(f.seen.size() == 10);
  CHECK(strictly_increasing_from_1(f.seen));
  CHECK(f.udp_endpoint.counters().received - received_before == 11);
  CHECK(f.drops(UdpDrop::kMalformed) == 1);
  f.udp_endpoint.close();
  CHECK(f.udp_endpoint.drain() == 0);  // closed: nothing, no error
}
