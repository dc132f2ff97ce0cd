// Connection against an in-process fake server on 127.0.0.1 (same io_context, single thread):
// handshake + map transfer, UDP address confirmation (challenge), TCP then sealed UDP snapshots,
// RTT, forged and foreign datagrams, keep-alives, and every error path.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// After a standard header: Asio decides whether to use std::aligned_alloc from a libstdc++ macro
// that only a standard header defines (doctest.h includes none). Included first, this file's
// Asio freed with operator delete what the client library's Asio had allocated with
// aligned_alloc (ASan: alloc-dealloc-mismatch).
#include <asio.hpp>

#include "swarmfield/client/connection.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"

namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;
using asio::ip::tcp;
using asio::ip::udp;

namespace {

enum class Mode { kNormal, kError, kCloseInHandshake, kSilent, kBadMap };

// A tiny scripted server. Everything runs on the test's io_context.
struct FakeServer {
  asio::io_context& io;
  Mode mode;
  tcp::acceptor acceptor;
  udp::socket udp_socket;
  std::shared_ptr<tcp::socket> peer;
  std::array<std::uint8_t, 4096> tcp_buf{};
  std::array<std::uint8_t, 2048> udp_buf{};
  udp::endpoint udp_from;
  protocol::FrameDecoder decoder;
  std::optional<protocol::Hello> hello;
  std::vector<protocol::Input> inputs;
  std::vector<std::vector<std::uint8_t>> outbox;  // keeps async buffers alive
  std::uint32_t next_tick = 2;
  bool got_bye = false;
  // UDP session: the server end of the packet channel, the address that answered a challenge.
  protocol::SessionCredentials credentials = protocol::make_session_credentials();
  protocol::PacketChannel channel{protocol::PacketChannel::Side::kServer, credentials};
  protocol::Challenge challenge{};
  std::optional<udp::endpoint> confirmed;
  int connect_requests = 0;
  int keepalives = 0;
  bool udp_muted = false;  ///< counts what arrives, sends nothing back
  bool peer_closed = false;  ///< the client's TCP socket closed (read error / EOF)
  std::vector<std::uint8_t> costs;
  // Delta snapshots with the real codec: the first over TCP, the rest over UDP against what the
  // client acknowledged.
  protocol::SnapshotSender sender{1u << 14};
  std::vector<std::uint32_t> baseline_distances;  ///< of every snapshot sent
  int acks = 0;                                   ///< ack-only datagrams received
  // What the server says in words (a hostile server's terminal escapes, in the tests below).
  std::string error_reason = "server full (2 of 2 clients)";
  std::string map_name = "fake";
  std::optional<protocol::MapDelta> delta_before_map;  ///< sent between Welcome and the map chunks

  FakeServer(asio::io_context& context, Mode m)
      : io(context), mode(m), acceptor(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        udp_socket(context, udp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    // 40 x 30 map: a wall column at x = 10 and one cell of cost 3.
    costs.assign(40 * 30, 1);
    for (int y = 0; y < 30; ++y) costs[static_cast<std::size_t>(y * 40 + 10)] = 255;
    costs[5 * 40 + 20] = 3;
    acceptor.async_accept([this](const asio::error_code& ec, tcp::socket s) {
      if (ec) return;
      peer = std::make_shared<tcp::socket>(std::move(s));
      read();
    });
    receive_udp();
  }
  std::uint16_t tcp_port() const { return acceptor.local_endpoint().port(); }

  void send(const protocol::TcpMessage& m) {
    std::vector<std::uint8_t> frame;
    REQUIRE(protocol::append_frame(protocol::encode_tcp_message(m), frame));
    outbox.push_back(std::move(frame));
    asio::error_code ec;
    asio::write(*peer, asio::buffer(outbox.back()), ec);  // small: fits the socket buffer
  }

  /// Three agents moving right by 0.5 per tick, at y = 1, one player.
  std::vector<std::uint8_t> snapshot(std::uint32_t tick, std::uint64_t echo) { return snapshot_of(sender, tick, echo); }
  std::vector<std::uint8_t> snapshot_of(protocol::SnapshotSender& by, std::uint32_t tick, std::uint64_t echo) {
    protocol::SnapshotHeader h;
    h.tick = tick;
    h.echo_client_time_us = echo;
    h.total_agents = 3;
    h.players.push_back({9, 2.5f, 3.5f, 4});
    protocol::AgentCandidates candidates;
    for (std::uint32_t id = 1; id <= 3; ++id) {
      const float x = static_cast<float>(id) + 0.5f * static_cast<float>(tick);
      candidates.push_back({id, protocol::quantize_agent_position(x, 1.0f), protocol::quantize_agent_position(1.0f, 1.0f),
                            0, static_cast<std::uint8_t>(id - 1), 1});
    }
    std::vector<std::uint8_t> payload;
    REQUIRE(by.encode(h, candidates, protocol::DensityGrid{}, payload));
    if (&by == &sender) baseline_distances.push_back(h.baseline_distance);
    return payload;
  }
  /// One snapshot of `by` as sealed UDP packets of `from`'s session.
  std::vector<std::vector<std::uint8_t>> snapshot_packets(protocol::PacketChannel& from, protocol::SnapshotSender& by,
                                                          std::uint32_t tick, std::uint64_t echo) {
    std::vector<std::vector<std::uint8_t>> fragments, packets;
    const auto payload = snapshot_of(by, tick, echo);
    REQUIRE(protocol::split_snapshot(payload, by.next_sequence() - 1, fragments) > 0);
    for (const auto& f : fragments) packets.push_back(from.seal(protocol::PacketType::kData, f));
    return packets;
  }

  void on_hello() {
    switch (mode) {
      case Mode::kError: send(protocol::Error{protocol::ErrorCode::kServerFull, error_reason}); return;
      case Mode::kCloseInHandshake: peer->close(); return;
      case Mode::kSilent: return;
      case Mode::kNormal:
      case Mode::kBadMap: break;
    }
    protocol::Welcome w;
    w.client_id = 5;
    w.udp = credentials;
    w.tick_hz = 30;
    w.snapshot_hz = 20;
    w.udp_port = udp_socket.local_endpoint().port();
    w.player_id = 9;
    w.map.width = 40;
    w.map.height = 30;
    w.map.cell_size = 1.0f;
    w.map.name = map_name;
    w.kinds.push_back({map_name, 0.35f, 0xd01010});
    auto chunks = protocol::make_map_chunks(costs, w.map);
    send(w);
    if (delta_before_map) send(*delta_before_map);
    if (mode == Mode::kBadMap) {
      // Right sizes, wrong bytes: zstd must refuse them.
      for (auto& c : chunks) std::fill(c.bytes.begin(), c.bytes.end(), std::uint8_t{0x5A});
    }
    for (const auto& c : chunks) send(c);
    if (mode == Mode::kNormal) {  // before UDP is known: over TCP
      sender.set_reliable(true);
      send(protocol::SnapshotData{snapshot(1, 0)});
      sender.set_reliable(false);
    }
  }

  void read() {
    peer->async_read_some(asio::buffer(tcp_buf), [this](const asio::error_code& ec, std::size_t n) {
      if (ec) {
        peer_closed = true;
        return;
      }
      decoder.feed(std::span<const std::uint8_t>(tcp_buf.data(), n));
      std::vector<std::uint8_t> frame;
      while (decoder.next(frame) == protocol::FrameDecoder::Status::kFrame) {
        auto m = protocol::decode_tcp_message(frame);
        REQUIRE(m);
        if (auto* h = std::get_if<protocol::Hello>(&*m)) {
          hello = *h;
          on_hello();
        } else if (std::holds_alternative<protocol::Bye>(*m)) {
          got_bye = true;
        } else if (auto* in = std::get_if<protocol::Input>(&*m)) {
          inputs.push_back(*in);
        }
      }
      if (peer->is_open()) read();
    });
  }

  void send_udp(std::vector<std::uint8_t> datagram) {
    outbox.push_back(std::move(datagram));
    asio::error_code ignored;
    udp_socket.send_to(asio::buffer(outbox.back()), udp_from, 0, ignored);
  }

  void receive_udp() {
    udp_socket.async_receive_from(asio::buffer(udp_buf), udp_from, [this](const asio::error_code& ec, std::size_t n) {
      if (ec) return;
      on_udp(std::span<const std::uint8_t>(udp_buf.data(), n));
      receive_udp();
    });
  }

  void on_udp(std::span<const std::uint8_t> datagram) {
    protocol::PacketHeader h;
    std::vector<std::uint8_t> body;
    if (channel.open(datagram, h, body) != protocol::PacketChannel::OpenResult::kOk) return;
    if (h.type == protocol::PacketType::kConnectRequest) {
      ++connect_requests;
      if (udp_muted) return;
      protocol::random_bytes(challenge);
      send_udp(channel.seal(protocol::PacketType::kChallenge, challenge));
      return;
    }
    if (h.type == protocol::PacketType::kChallengeResponse) {
      if (body.size() == challenge.size() && std::equal(body.begin(), body.end(), challenge.begin())) {
        confirmed = udp_from;
        send_udp(channel.seal(protocol::PacketType::kData, {}));  // "you are confirmed"
      }
      return;
    }
    if (!confirmed || *confirmed != udp_from) return;
    if (body.empty()) {
      ++keepalives;
      return;
    }
    auto d = protocol::decode_datagram(body);
    if (!d) return;
    if (d->ack) {
      ++acks;
      CHECK(sender.on_ack(*d->ack));
      return;
    }
    inputs.push_back(*d->input);
    CHECK(sender.on_ack(d->input->snapshot_ack));
    // Answer every input with one snapshot (fragmented), a garbage datagram, a packet of another
    // session, a forged one (right token, wrong key) and a replay of the first fragment.
    std::vector<std::vector<std::uint8_t>> out = snapshot_packets(channel, sender, next_tick, d->input->client_time_us);
    next_tick += 2;
    const auto replay = out.front();
    out.push_back({1, 2, 3, 4, 5});
    protocol::PacketChannel foreign(protocol::PacketChannel::Side::kServer, protocol::make_session_credentials());
    protocol::SnapshotSender elsewhere(1024);  // what another server's session would send
    out.push_back(snapshot_packets(foreign, elsewhere, next_tick + 100, 0).front());
    protocol::SessionCredentials forged = protocol::make_session_credentials();
    forged.token = credentials.token;
    protocol::PacketChannel forger(protocol::PacketChannel::Side::kServer, forged);
    for (int i = 0; i < 1000; ++i) static_cast<void>(forger.seal(protocol::PacketType::kData, {}));
    out.push_back(snapshot_packets(forger, elsewhere, next_tick + 200, 0).front());
    out.push_back(replay);
    for (auto& dg : out) send_udp(std::move(dg));
  }
};

// Drives the context until `done` or the time limit (bounded loop).
bool run_until(asio::io_context& io, const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < end) {
    io.run_for(std::chrono::milliseconds(5));
    if (io.stopped()) io.restart();
  }
  return done();
}

client::ConnectionOptions options_for(std::uint16_t port) {
  client::ConnectionOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.role = protocol::Role::kPlayer;
  o.name = "tester";
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.handshake_timeout = std::chrono::milliseconds(3000);
  return o;
}

}  // namespace

TEST_CASE("handshake, map, TCP then UDP snapshots, RTT and bad datagrams") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  client::Connection c(io, options_for(server.tcp_port()));
  CHECK(c.state() == client::ConnectionState::kIdle);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(server.hello);
  CHECK(server.hello->role == protocol::Role::kPlayer);
  CHECK(server.hello->name == "tester");
  CHECK(server.hello->protocol_version == protocol::kProtocolVersion);
  CHECK(c.welcome().player_id == 9);
  CHECK(c.welcome().udp == server.credentials);
  REQUIRE(c.map().width() == 40);
  REQUIRE(c.map().height() == 30);
  CHECK(c.map().cost(10, 7) == 255);
  CHECK(c.map().cost(20, 5) == 3);
  CHECK(c.map().cost(0, 0) == 1);

  // The TCP snapshot sent right after the map.
  REQUIRE(run_until(io, [&] { return c.latest() != nullptr; }, std::chrono::milliseconds(2000)));
  CHECK(c.latest()->snapshot.tick == 1);
  CHECK(c.stats().snapshots_tcp == 1);

  // The UDP address is confirmed by the challenge; from then on inputs go over UDP.
  REQUIRE(run_until(io, [&] { return c.udp_confirmed(); }, std::chrono::milliseconds(2000)));
  CHECK(server.connect_requests >= 1);
  CHECK(c.stats().udp_confirmations == 1);

  // Inputs over UDP; each is answered by a snapshot over UDP.
  for (int i = 0; i < 5; ++i) {
    protocol::Input in;
    in.move_x = 1.0f;
    in.view_x1 = 40.0f;
    in.view_y1 = 30.0f;
    c.send_input(in);
    const auto before = c.stats().snapshots_received;
    REQUIRE(run_until(io, [&] { return c.stats().snapshots_received > before; }, std::chrono::milliseconds(2000)));
  }
  const auto& stats = c.stats();
  CHECK(stats.snapshots_received == 6);
  CHECK(stats.snapshots_tcp == 1);
  CHECK(stats.inputs_sent == 5);
  CHECK(stats.rtt_samples == 5);
  CHECK(stats.rtt_ms > 0.0);
  CHECK(stats.rtt_ms < 1000.0);
  // Garbage, a foreign session, a forgery and a replay per answered input (some may still be in
  // flight); none of them made a snapshot.
  CHECK(stats.bad_datagrams >= 15);
  CHECK(stats.bytes_received > 0);
  // Inputs carry sequence, the snapshot ack and client time; every UDP snapshot decoded was
  // acknowledged at once too, so each was a delta against the one before (the TCP snapshot
  // sequence 1 first).
  REQUIRE(server.inputs.size() == 5);
  CHECK(server.inputs[4].sequence == server.inputs[0].sequence + 4);
  CHECK(server.inputs[0].snapshot_ack.latest == 1);
  CHECK(server.inputs[4].snapshot_ack.latest > 1);
  CHECK(server.acks >= 4);
  CHECK(stats.acks_sent == 5);
  CHECK(stats.snapshots_no_baseline == 0);
  REQUIRE(server.baseline_distances.size() >= 4);
  CHECK(server.baseline_distances[0] == 0);  // the first, full
  CHECK(server.baseline_distances[1] == 1);  // against the TCP one, acknowledged by the first input
  // The decoded agents, within quantization, with their kinds.
  const client::SnapshotState& last = c.latest()->snapshot;
  REQUIRE(last.agents.size() == 3);
  for (std::uint32_t id = 1; id <= 3; ++id) {
    const client::RenderAgent& a = last.agents[id - 1];
    CHECK(a.id == id);
    CHECK(a.x == doctest::Approx(static_cast<float>(id) + 0.5f * static_cast<float>(last.tick)).epsilon(0.001));
    CHECK(a.y == doctest::Approx(1.0f));
    CHECK(a.kind == id - 1);
  }
  REQUIRE(last.players.size() == 1);
  CHECK(last.players[0].contacts == 4);
  CHECK(server.inputs[4].client_time_us > 0);
  CHECK(server.inputs[0].move_x == 1.0f);

  // Bad caller values are cleaned up rather than rejected by the server.
  protocol::Input bad;
  bad.move_x = 3.0f;
  bad.move_y = 4.0f;
  bad.view_x0 = std::numeric_limits<float>::quiet_NaN();
  bad.view_x1 = 1e30f;
  c.send_input(bad);
  REQUIRE(run_until(io, [&] { return server.inputs.size() == 6; }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs[5].move_x == doctest::Approx(0.6));
  CHECK(server.inputs[5].move_y == doctest::Approx(0.8));
  CHECK(server.inputs[5].view_x0 == 0.0f);
  CHECK(server.inputs[5].view_x1 == protocol::kMaxWireCoordinate);
  CHECK_FALSE(server.inputs[5].fire);
  // Fire and aim reach the server; a trigger with no aim is sent as no fire and not counted.
  CHECK(c.stats().inputs_firing == 0);
  protocol::Input shot;
  shot.fire = true;
  shot.aim_x = -2.0f;
  shot.aim_y = 0.5f;
  c.send_input(shot);
  shot.aim_x = std::numeric_limits<float>::quiet_NaN();
  c.send_input(shot);
  REQUIRE(run_until(io, [&] { return server.inputs.size() == 8; }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs[6].fire);
  CHECK(server.inputs[6].aim_x == -2.0f);
  CHECK(server.inputs[6].aim_y == 0.5f);
  CHECK_FALSE(server.inputs[7].fire);
  CHECK(c.stats().inputs_firing == 1);
  CHECK(c.stats().inputs_sent == 8);
  // Snapshot history is in tick order with the newest last.
  const auto& h = c.snapshots();
  REQUIRE(h.size() >= 2);
  for (std::size_t i = 1; i < h.size(); ++i) CHECK(h[i - 1].snapshot.tick < h[i].snapshot.tick);

  c.close();
  CHECK(c.state() == client::ConnectionState::kClosed);
  CHECK(c.error().empty());
  REQUIRE(run_until(io, [&] { return server.got_bye; }, std::chrono::milliseconds(2000)));
}

TEST_CASE("MapDeltas change the connection's map and barricades; old revisions and cells off the map are skipped") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  o.use_udp = false;
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  const std::uint32_t revision = c.map().revision();
  CHECK(c.barricades().empty());
  CHECK(c.map_delta_revision() == 0);

  // On the 40 x 30 map: a barricade built, one damaged, the cost-3 cell made a road, one cell
  // beyond the map's right edge.
  server.send(protocol::MapDelta{5, {{3, 4, 255, 255}, {39, 29, 255, 128}, {20, 5, 1, 0}, {40, 0, 255, 255}}});
  REQUIRE(run_until(io, [&] { return c.stats().map_deltas == 1; }, std::chrono::milliseconds(2000)));
  CHECK(c.connected());
  CHECK(c.map().cost(3, 4) == 255);
  CHECK(c.map().cost(39, 29) == 255);
  CHECK(c.map().cost(20, 5) == 1);
  CHECK(c.map().revision() > revision);
  CHECK(c.barricades() == client::Barricades{{4 * 40 + 3, 255}, {29 * 40 + 39, 128}});
  CHECK(c.map_delta_revision() == 5);
  CHECK(c.stats().map_cells_skipped == 1);

  // Revision 5 again: ignored. Revision 6: the damaged barricade destroyed.
  server.send(protocol::MapDelta{5, {{3, 4, 1, 0}}});
  server.send(protocol::MapDelta{6, {{39, 29, 1, 0}}});
  REQUIRE(run_until(io, [&] { return c.stats().map_deltas == 2; }, std::chrono::milliseconds(2000)));
  CHECK(c.stats().map_deltas_ignored == 1);
  CHECK(c.map().cost(3, 4) == 255);
  CHECK(c.map().cost(39, 29) == 1);
  CHECK(c.barricades() == client::Barricades{{4 * 40 + 3, 255}});
  CHECK(c.map_delta_revision() == 6);
  c.close();
}

TEST_CASE("a MapDelta that comes before the map is complete is applied once the map is") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  server.delta_before_map = protocol::MapDelta{3, {{12, 6, 255, 200}}};
  client::Connection c(io, options_for(server.tcp_port()));
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  CHECK(c.map().cost(12, 6) == 255);
  CHECK(c.barricades() == client::Barricades{{6 * 40 + 12, 200}});
  CHECK(c.stats().map_deltas == 1);
  c.close();
}

TEST_CASE("build requests: numbered, carried by every input until the next one (each at least kBuildRepeats times)") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  o.use_udp = false;  // over TCP every input arrives, in order
  client::Connection c(io, o);
  CHECK(c.request_build(1, 1) == 0);  // not connected yet
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  c.send_input(protocol::Input{});  // no request yet: build_id 0
  CHECK(c.request_build(40, 0) == 0);  // outside the 40 x 30 map
  CHECK(c.request_build(0, 30) == 0);
  CHECK(c.request_build(-1, 2) == 0);
  CHECK(c.request_build(7, 8) == 1);
  CHECK(c.request_build(9, 10) == 2);  // before any input carried the first: it waits
  CHECK(c.stats().build_requests == 2);
  protocol::Input in;
  in.build_id = 77;  // the caller's build fields are not what is sent
  in.build_x = -4;
  const std::uint32_t repeats = client::Connection::kBuildRepeats;
  for (std::uint32_t i = 0; i < 2 * repeats + 2; ++i) c.send_input(in);
  const std::size_t want = 2 * repeats + 3;
  REQUIRE(run_until(io, [&] { return server.inputs.size() >= want; }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs[0].build_id == 0);
  for (std::size_t i = 1; i <= repeats; ++i) {
    CAPTURE(i);
    CHECK(server.inputs[i].build_id == 1);
    CHECK(server.inputs[i].build_x == 7);
    CHECK(server.inputs[i].build_y == 8);
  }
  for (std::size_t i = repeats + 1; i < want; ++i) {  // the newest, repeated until the next request
    CAPTURE(i);
    CHECK(server.inputs[i].build_id == 2);
    CHECK(server.inputs[i].build_x == 9);
    CHECK(server.inputs[i].build_y == 10);
  }
  // A third request replaces the second at once: it was carried kBuildRepeats times already.
  CHECK(c.request_build(39, 29) == 3);
  c.send_input(in);
  REQUIRE(run_until(io, [&] { return server.inputs.size() >= want + 1; }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs[want].build_id == 3);
  CHECK(server.inputs[want].build_x == 39);
  CHECK(server.inputs[want].build_y == 29);
  // The queue is bounded.
  std::uint32_t last = 3;
  for (std::size_t i = 0; i < client::Connection::kMaxPendingBuilds; ++i) last = c.request_build(1, 1);
  CHECK(last == 3 + client::Connection::kMaxPendingBuilds);
  CHECK(c.request_build(1, 1) == 0);
  CHECK(c.stats().build_requests == 3 + client::Connection::kMaxPendingBuilds);
  c.close();
}

TEST_CASE("build requests travel in sealed UDP inputs too") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  client::Connection c(io, options_for(server.tcp_port()));
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(run_until(io, [&] { return c.udp_confirmed(); }, std::chrono::milliseconds(5000)));
  REQUIRE(c.request_build(5, 6) == 1);
  c.send_input(protocol::Input{});
  REQUIRE(run_until(io, [&] { return !server.inputs.empty(); }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs[0].build_id == 1);
  CHECK(server.inputs[0].build_x == 5);
  CHECK(server.inputs[0].build_y == 6);
  c.close();
}

TEST_CASE("clean_input: aim finite and within the wire's limit, direction kept; no fire without an aim") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float limit = protocol::kMaxWireCoordinate;
  const auto cleaned = [](bool fire, float ax, float ay) {
    protocol::Input in;
    in.fire = fire;
    in.aim_x = ax;
    in.aim_y = ay;
    return client::clean_input(in);
  };
  protocol::Input out = cleaned(true, 3.0f, -4.0f);  // a direction of any length is kept as it is
  CHECK(out.fire);
  CHECK(out.aim_x == 3.0f);
  CHECK(out.aim_y == -4.0f);
  out = cleaned(true, 4.0e6f, -2.0e6f);  // beyond the limit: scaled, not clamped per axis
  CHECK(out.fire);
  CHECK(out.aim_x == limit);
  CHECK(out.aim_y == doctest::Approx(-0.5 * limit));
  out = cleaned(true, -1.0e30f, 1.0e30f);
  CHECK(out.aim_x == -limit);
  CHECK(out.aim_y == limit);
  for (const auto& [ax, ay] : {std::pair{nan, 1.0f}, std::pair{1.0f, inf}, std::pair{-inf, -inf}, std::pair{0.0f, 0.0f},
                               std::pair{-0.0f, 0.0f}}) {
    CAPTURE(ax);
    CAPTURE(ay);
    out = cleaned(true, ax, ay);
    CHECK_FALSE(out.fire);
    CHECK(out.aim_x == 0.0f);
    CHECK(out.aim_y == 0.0f);
  }
  out = cleaned(false, 7.0f, nan);  // no trigger: the aim is still made a value the server accepts
  CHECK_FALSE(out.fire);
  CHECK(out.aim_x == 0.0f);
  CHECK(out.aim_y == 0.0f);
  out = cleaned(false, 7.0f, 1.0f);
  CHECK_FALSE(out.fire);
  CHECK(out.aim_x == 7.0f);
  // A build cell no map has is sent as no request (the decoder would refuse the whole input).
  protocol::Input build;
  build.build_id = 4;
  build.build_x = 12;
  build.build_y = protocol::kMaxMapSide - 1;
  CHECK(client::clean_input(build).build_id == 4);
  for (const auto& [x, y] : {std::pair{-1, 0}, std::pair{0, protocol::kMaxMapSide}, std::pair{1 << 30, 3}}) {
    build.build_x = x;
    build.build_y = y;
    CAPTURE(x);
    CAPTURE(y);
    const protocol::Input b = client::clean_input(build);
    CHECK(b.build_id == 0);
    CHECK(b.build_x == 0);
    CHECK(b.build_y == 0);
  }
  // Everything clean_input returns decodes (the decoder's own bounds).
  for (const float v : {nan, inf, 2.0e6f, -1.0e38f, 0.5f}) {
    protocol::Input in;
    in.fire = true;
    in.aim_x = v;
    in.aim_y = -v;
    in.move_x = v;
    in.view_y1 = v;
    CAPTURE(v);
    CHECK(protocol::decode_datagram(protocol::encode_input_datagram(client::clean_input(in))).has_value());
  }
}

TEST_CASE("connect refused names host and port") {
  asio::io_context io;
  std::uint16_t port = 0;
  {
    // Bind then close to find a port where nothing listens.
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }
  client::Connection c(io, options_for(port));
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.state() == client::ConnectionState::kFailed);
  CHECK(c.error().rfind("could not connect to 127.0.0.1:" + std::to_string(port) + ": ", 0) == 0);
}

TEST_CASE("server error during the handshake is reported with its reason") {
  asio::io_context io;
  FakeServer server(io, Mode::kError);
  client::Connection c(io, options_for(server.tcp_port()));
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.error() == "server error: server full (2 of 2 clients)");
}

TEST_CASE("a server's words reach the client's messages without control characters") {
  // ESC sequences (clear the screen, set the window title), BEL, CR: a hostile server must not
  // write them to the user's terminal through error() or the map and kind names.
  const std::string hostile = "\x1b[2J\x1b]0;pwned\x07 ok\rx\x7f";
  {
    asio::io_context io;
    FakeServer server(io, Mode::kError);
    server.error_reason = hostile;
    client::Connection c(io, options_for(server.tcp_port()));
    CHECK_FALSE(c.connect_blocking());
    CHECK(c.error() == "server error: ?[2J?]0;pwned? ok?x?");
  }
  {
    // Names (map, kinds) with control characters: the Welcome is refused by the decoder.
    asio::io_context io;
    FakeServer server(io, Mode::kNormal);
    server.map_name = hostile;
    client::Connection c(io, options_for(server.tcp_port()));
    CHECK_FALSE(c.connect_blocking());
    CHECK(c.error().find("contains control characters") != std::string::npos);
    for (const char ch : c.error()) CHECK((static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f));
  }
}

TEST_CASE("server closing during the handshake is reported") {
  asio::io_context io;
  FakeServer server(io, Mode::kCloseInHandshake);
  client::Connection c(io, options_for(server.tcp_port()));
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.error().rfind("server closed the connection during handshake", 0) == 0);
}

TEST_CASE("a silent server hits the handshake timeout") {
  asio::io_context io;
  FakeServer server(io, Mode::kSilent);
  auto o = options_for(server.tcp_port());
  o.handshake_timeout = std::chrono::milliseconds(300);
  client::Connection c(io, o);
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.error().find("timed out after 300 ms") != std::string::npos);  // this timeout, no other rule
}

TEST_CASE("a map that does not decompress fails the handshake cleanly") {
  asio::io_context io;
  FakeServer server(io, Mode::kBadMap);
  client::Connection c(io, options_for(server.tcp_port()));
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.error().rfind("server sent a bad map: ", 0) == 0);
}

TEST_CASE("a map above max_map_cells is refused at Welcome, before it is allocated; one at the limit is taken") {
  {
    asio::io_context io;
    FakeServer server(io, Mode::kNormal);
    auto options = options_for(server.tcp_port());
    options.max_map_cells = 40 * 30 - 1;
    client::Connection c(io, options);
    CHECK_FALSE(c.connect_blocking());
    CHECK(c.error().find("40x30 = 1200 cells, more than --max-map-cells 1199") != std::string::npos);
  }
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto options = options_for(server.tcp_port());
  options.max_map_cells = 40 * 30;
  client::Connection c(io, options);
  CHECK(c.connect_blocking());
  CHECK(client::kDefaultMaxMapCells == 4096u * 4096u);
}

TEST_CASE("without UDP, inputs go over TCP, snapshots keep coming over TCP, keep-alives repeat the input") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  o.use_udp = false;
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  protocol::Input in;
  in.move_y = -1.0f;
  c.send_input(in);
  c.send_input(in);
  REQUIRE(run_until(io, [&] { return server.inputs.size() >= 2; }, std::chrono::milliseconds(2000)));
  CHECK(server.inputs.back().move_y == -1.0f);
  REQUIRE(run_until(io, [&] { return c.latest() != nullptr; }, std::chrono::milliseconds(2000)));
  CHECK(c.stats().snapshots_tcp == c.stats().snapshots_received);
  // The application sends nothing more: the connection repeats its last input once a second
  // (the server closes clients that send nothing for --idle-timeout).
  const std::size_t sent = server.inputs.size();
  REQUIRE(run_until(io, [&] { return server.inputs.size() >= sent + 1; }, std::chrono::milliseconds(10000)));
  CHECK(c.stats().keepalives_sent >= 1);
  CHECK(server.inputs.back().move_y == -1.0f);
  for (std::size_t i = 1; i < server.inputs.size(); ++i) CHECK(server.inputs[i].sequence == server.inputs[i - 1].sequence + 1);
  CHECK(server.connect_requests == 0);
  CHECK_FALSE(c.udp_confirmed());
}

TEST_CASE("a connection destroyed mid-handshake leaves the io_context safe to run") {
  asio::io_context io;
  FakeServer server(io, Mode::kSilent);
  {
    client::Connection c(io, options_for(server.tcp_port()));
    c.start();
    (void)run_until(io, [&] { return c.state() == client::ConnectionState::kHandshake; }, std::chrono::milliseconds(2000));
  }
  // Handlers of the destroyed connection complete (cancelled) without touching freed memory
  // (ASan builds catch it), and the server sees the socket go away.
  CHECK(run_until(io, [&] { return server.peer_closed; }, std::chrono::milliseconds(2000)));
}

TEST_CASE("a server that accepts but never answers fails within the connect timeout") {
  asio::io_context io;
  FakeServer server(io, Mode::kSilent);
  auto o = options_for(server.tcp_port());
  o.connect_timeout = std::chrono::milliseconds(300);
  o.handshake_timeout = std::chrono::milliseconds(10000);  // must not be what ends it
  client::Connection c(io, o);
  CHECK_FALSE(c.connect_blocking());
  CHECK(c.state() == client::ConnectionState::kFailed);
  // The connect timeout ended it (its message), not the 10 s handshake timeout.
  CHECK(c.error().find("did not answer within 300 ms") != std::string::npos);
}

TEST_CASE("a server that stops sending (hung) ends the session after the data timeout") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);  // after the map + one TCP snapshot it only answers inputs
  auto o = options_for(server.tcp_port());
  o.data_timeout = std::chrono::milliseconds(300);
  // A connect timeout far beyond the wait below: if the watchdog waited for it before its first
  // check (the bug this guards against), the session would not end within the wait. No
  // wall-clock bound on the 0.3 s itself: a busy machine may take longer.
  o.connect_timeout = std::chrono::milliseconds(60000);
  o.handshake_timeout = std::chrono::milliseconds(60000);
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(run_until(io, [&] { return c.finished(); }, std::chrono::milliseconds(20000)));
  CHECK(c.state() == client::ConnectionState::kClosed);
  CHECK_FALSE(c.ended_by_bye());
  CHECK(c.error().rfind("no data from the server for 0.3 s", 0) == 0);
  // The socket was closed: the server sees it go.
  CHECK(run_until(io, [&] { return server.peer_closed; }, std::chrono::milliseconds(2000)));
}

TEST_CASE("a server that keeps sending (UDP snapshots) never trips the data timeout") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  // 1 s: a stall of the test process longer than that is what it would take to trip it by
  // accident (300 ms did on a busy 2-core machine).
  o.data_timeout = std::chrono::milliseconds(1000);
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(run_until(io, [&] { return c.udp_confirmed(); }, std::chrono::milliseconds(5000)));
  // 3 s (three timeouts) of inputs every 50 ms, each answered by a UDP snapshot only.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < end && !c.finished()) {
    c.send_input(protocol::Input{});
    (void)run_until(io, [] { return false; }, std::chrono::milliseconds(50));
  }
  CHECK_MESSAGE(c.connected(), c.error());
  CHECK(c.stats().snapshots_received > 5);
  CHECK(c.stats().snapshots_tcp == 1);  // the rest came over UDP
  c.close();
}

TEST_CASE("keep-alives: an idle client still sends (UDP once confirmed), carrying its ack") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  client::Connection c(io, options_for(server.tcp_port()));
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(run_until(io, [&] { return c.udp_confirmed(); }, std::chrono::milliseconds(5000)));
  // The application sends nothing; the connection sends keep-alives on its own (every 100 ms).
  REQUIRE(run_until(io, [&] { return server.keepalives >= 3; }, std::chrono::milliseconds(10000)));
  CHECK(c.stats().keepalives_sent >= 3);
  CHECK(server.channel.peer_ack() >= 1);  // they acknowledge what the server sent
  CHECK(server.inputs.empty());
}


TEST_CASE("a confirmed client whose server falls silent on UDP asks for its address to be confirmed again") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  o.data_timeout = std::chrono::milliseconds(0);  // the fake server sends nothing else meanwhile
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  REQUIRE(run_until(io, [&] { return c.udp_confirmed(); }, std::chrono::milliseconds(5000)));
  const int requests = server.connect_requests;
  server.udp_muted = true;  // e.g. the server dropped the address after its ack timeout
  REQUIRE(run_until(io, [&] { return server.connect_requests > requests; }, std::chrono::milliseconds(10000)));
  CHECK_FALSE(c.udp_confirmed());
  CHECK(c.connected());  // the session goes on over TCP
}

TEST_CASE("data timeout 0 disables the check") {
  asio::io_context io;
  FakeServer server(io, Mode::kNormal);
  auto o = options_for(server.tcp_port());
  o.data_timeout = std::chrono::milliseconds(0);
  client::Connection c(io, o);
  REQUIRE_MESSAGE(c.connect_blocking(), c.error());
  CHECK_FALSE(run_until(io, [&] { return c.finished(); }, std::chrono::milliseconds(500)));
  CHECK(c.connected());
}
