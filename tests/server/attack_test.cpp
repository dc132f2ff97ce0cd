// The attacks of issue 8, each against the real swarmfield-server binary on 127.0.0.1. Other
// 127/8 addresses stand in for other hosts (a victim whose address is forged, an attacker with
// many addresses). Assertions are on what the server counts (summary line) and on bytes and
// messages received, not on wall-clock bounds; every wait is bounded.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

#include "loopback_support.hpp"
#include "skip.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/packet.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::join;
using test::RawClient;
using test::ServerProcess;
using test::small_city;
using test::summary_value;
using test::stop_and_summarize;
using test::wait_listening;

namespace {

// A server on the small city with one client that joined (Hello, Welcome, the map) and, with
// `udp`, has its UDP address confirmed.
struct Joined {
  Joined(std::vector<std::string> flags, protocol::Role role, bool udp) : server(small_city(std::move(flags))) {
    const auto listening = wait_listening(server);
    REQUIRE_MESSAGE(listening.has_value(), server.err());
    ports = *listening;
    const auto joined = join(client, ports.tcp, role);
    REQUIRE(joined.has_value());
    welcome = *joined;
    if (udp) {
      REQUIRE(client.udp_open());
      REQUIRE(client.udp_confirm(ports.udp, 5s));
    }
  }
  ServerProcess server;
  test::Ports ports;
  RawClient client;
  protocol::Welcome welcome;
};

// Every datagram that arrives within `window`, total bytes.
std::size_t drain_bytes(RawClient& c, std::chrono::milliseconds window, std::vector<std::vector<std::uint8_t>>* keep = nullptr) {
  std::size_t bytes = 0;
  const auto end = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < end) {
    auto d = c.udp_receive(std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    if (!d) break;
    bytes += d->size();
    if (keep) keep->push_back(std::move(*d));
  }
  return bytes;
}

}  // namespace

TEST_CASE("attack: reflection - a forged source address gets one small challenge per request, never the stream") {
  // Before: one handshake plus one datagram with the victim's source address bound the session
  // to the victim, and snapshots streamed there for as long as the TCP connection lived
  // (~196,000x amplification). The attacker here holds a real session (keys and all).
  Joined joined({"--agents", "2000"}, protocol::Role::kViewer, false);
  auto& server = joined.server;
  const auto* ports = &joined.ports;
  RawClient& attacker = joined.client;
  RawClient victim;  // stands in for the forged source: the server only sees the address
  REQUIRE(victim.udp_open("127.0.0.3"));
  test::Inputs inputs;
  std::size_t forged_bytes = 0;
  for (int i = 0; i < 5; ++i) {
    const auto request = attacker.channel().seal(protocol::PacketType::kConnectRequest, {});
    const auto input = attacker.channel().seal(protocol::PacketType::kData,
                                               protocol::encode_input_datagram(inputs.make(0, 0, 64.0f, 1)));
    forged_bytes += request.size() + input.size();
    REQUIRE(victim.udp_send(ports->udp, request));
    REQUIRE(victim.udp_send(ports->udp, input));  // "subscribe": a view of the whole map
  }
  // The attacker's view is the whole map (~20 kB snapshots at 20 Hz if they streamed anywhere).
  REQUIRE(attacker.send(inputs.make(0, 0, 64.0f, 2)));
  const std::size_t victim_bytes = drain_bytes(victim, 2000ms);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  MESSAGE("reflection: the victim's address sent " << forged_bytes << " bytes (forged) and received " << victim_bytes);
  CHECK(victim_bytes <= 5 * protocol::kChallengePacketBytes);  // at most the 5 challenges
  CHECK(victim_bytes * 20 <= forged_bytes);
  CHECK(summary_value(out, "udp_confirmed") == 0);
  CHECK(summary_value(out, "udp_challenge_bytes") <= static_cast<long long>(victim_bytes));
  CHECK(summary_value(out, "drop_unconfirmed_address") == 5);
}

TEST_CASE("attack: session theft - the token alone, forged or replayed packets never take a session over") {
  // Before: tokens came from mt19937_64 and the first datagram showing one bound the session,
  // so a predicted token sent first took the player and its snapshots.
  Joined joined({"--agents", "200"}, protocol::Role::kPlayer, false);
  auto& server = joined.server;
  const auto* ports = &joined.ports;
  const auto* welcome = &joined.welcome;
  RawClient& victim = joined.client;
  REQUIRE(victim.udp_open());
  RawClient thief;  // another host; knows the token (it travels in the clear) but not the keys
  REQUIRE(thief.udp_open("127.0.0.4"));
  protocol::SessionCredentials guessed = protocol::make_session_credentials();
  guessed.token = welcome->udp.token;
  protocol::PacketChannel forger(protocol::PacketChannel::Side::kClient, guessed);
  test::Inputs thief_inputs;
  // First, before the genuine client has sent anything at all: request, response, inputs.
  std::size_t thief_sent = 0;
  for (int i = 0; i < 5; ++i) {
    for (const auto& packet : {forger.seal(protocol::PacketType::kConnectRequest, {}),
                               forger.seal(protocol::PacketType::kChallengeResponse, protocol::Challenge{}),
                               forger.seal(protocol::PacketType::kData, protocol::encode_input_datagram(
                                                                            thief_inputs.make(1, 0, 64.0f, 666)))}) {
      REQUIRE(thief.udp_send(ports->udp, packet));
      thief_sent += packet.size();
    }
  }
  // The genuine client confirms its address and plays.
  REQUIRE(victim.udp_confirm(ports->udp, 5s));
  test::Inputs inputs;
  REQUIRE(victim.udp_send_input(ports->udp, inputs.make(0, 0, 64.0f, 1000)));
  // Its packets, captured and replayed: an input (from the thief's address, and again from the
  // victim's: a duplicate), and a connect request the genuine client sealed but the server has
  // not seen yet (the thief got it there first).
  const auto captured_input = victim.channel().seal(protocol::PacketType::kData,
                                                    protocol::encode_input_datagram(inputs.make(0, 0, 64.0f, 1500)));
  const auto captured_request = victim.channel().seal(protocol::PacketType::kConnectRequest, {});
  REQUIRE(victim.udp_send(ports->udp, captured_input));
  REQUIRE(thief.udp_send(ports->udp, captured_input));
  REQUIRE(victim.udp_send(ports->udp, captured_input));
  REQUIRE(thief.udp_send(ports->udp, captured_request));
  std::vector<std::vector<std::uint8_t>> at_thief;
  drain_bytes(thief, 500ms, &at_thief);
  // Whatever reached the thief is at most a challenge it can not read (sealed with a key it
  // lacks), answered by nothing it can produce.
  for (const auto& d : at_thief) {
    const auto h = protocol::read_packet_header(d);
    REQUIRE(h.has_value());
    CHECK(h->type == protocol::PacketType::kChallenge);
    protocol::PacketChannel thief_side(protocol::PacketChannel::Side::kClient, guessed);
    protocol::PacketHeader opened;
    std::vector<std::uint8_t> body;
    CHECK(thief_side.open(d, opened, body) == protocol::PacketChannel::OpenResult::kBadAuth);
  }
  CHECK(at_thief.size() <= 1);
  // The genuine client still gets its snapshots, which echo its own inputs, never the thief's.
  REQUIRE(victim.udp_send_input(ports->udp, inputs.make(0, 0, 64.0f, 2000)));
  bool echoed = false;
  for (int i = 0; i < 40 && !echoed; ++i) {
    auto s = victim.udp_snapshot(500ms);
    if (!s) continue;
    CHECK(s->echo_client_time_us != 666);
    echoed = s->echo_client_time_us == 2000;
  }
  CHECK(echoed);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "udp_confirmed") == 1);  // the genuine client's address only
  CHECK(summary_value(out, "drop_bad_auth") + summary_value(out, "drop_unconfirmed_address") >= 15);
  CHECK(summary_value(out, "drop_duplicate") >= 1);
}

TEST_CASE("attack: lock-out - clients that say Hello and go quiet do not keep real clients out") {
  // Before: 64 connections from four addresses that said Hello and stayed idle filled every
  // slot; real clients got "server full" until the idle timeout, and again as soon as the
  // attacker reconnected. Now an address holds at most its share of the slots (--auth open:
  // max-clients / 8), and idle squatters are cut after --idle-timeout.
  ServerProcess server(small_city({"--agents", "10", "--max-clients", "64", "--idle-timeout", "2"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  // 64 squatters, 16 from each of four addresses (the per-address connection limit's default).
  std::vector<std::unique_ptr<RawClient>> squatters;
  int admitted = 0;
  int refused_share = 0;
  for (int i = 0; i < 64; ++i) {
    squatters.push_back(std::make_unique<RawClient>());
    const std::string from = "127.0.0." + std::to_string(2 + i / 16);
    REQUIRE(squatters.back()->connect(ports->tcp, 0, from.c_str()));
    REQUIRE(squatters.back()->send(test::hello(protocol::Role::kPlayer)));
    const auto answer = squatters.back()->read(5s);
    REQUIRE(answer.has_value());
    if (std::holds_alternative<protocol::Welcome>(*answer)) {
      ++admitted;
    } else if (const auto* e = std::get_if<protocol::Error>(&*answer)) {
      CHECK(e->code == protocol::ErrorCode::kServerFull);
      if (e->reason.find("server full for your address") != std::string::npos) ++refused_share;
    }
  }
  CHECK(admitted == 32);  // 8 per address
  CHECK(refused_share == 32);
  // A 17th connection from one of their addresses is refused by the per-address connection limit.
  RawClient extra;
  REQUIRE(extra.connect(ports->tcp, 0, "127.0.0.2"));
  const auto refused = extra.read_until<protocol::Error>(5s);
  REQUIRE(refused.has_value());
  CHECK(refused->reason.find("too many connections from your address") != std::string::npos);
  // A real client gets in at once: half the slots are still free.
  {
    RawClient real;
    REQUIRE(real.connect(ports->tcp));
    REQUIRE(real.send(test::hello(protocol::Role::kPlayer)));
    const auto answer = real.read(5s);
    REQUIRE(answer.has_value());
    CHECK(std::holds_alternative<protocol::Welcome>(*answer));
  }
  // And the squatters' slots free up after --idle-timeout.
  for (auto& q : squatters) CHECK(q->wait_closed(10s));
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "idle_timeouts") >= 32);
  CHECK(summary_value(out, "refused_address_share") == 32);
  CHECK(summary_value(out, "refused_per_address") >= 1);
}

TEST_CASE("attack: squatting - a trickle of inputs does not hold a slot, a client's keep-alives do") {
  // Before: a squatter that sent one Input every 3 s reset the idle clock (--idle-timeout 4)
  // and held its slot for ever. Now a client must send one valid message per 2 s on average over
  // the timeout; real clients send keep-alives every second over TCP (0.1 s over UDP).
  ServerProcess server(small_city({"--agents", "10", "--max-clients", "4", "--max-clients-per-address", "4",
                                   "--idle-timeout", "4"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  RawClient honest;
  REQUIRE(join(honest, ports->tcp, protocol::Role::kPlayer).has_value());
  std::vector<std::unique_ptr<RawClient>> squatters;
  for (int i = 0; i < 3; ++i) {
    squatters.push_back(std::make_unique<RawClient>());
    REQUIRE(squatters.back()->connect(ports->tcp, 0, "127.0.0.2"));
    REQUIRE(squatters.back()->send(test::hello(protocol::Role::kPlayer)));
    REQUIRE(squatters.back()->read_until<protocol::Welcome>(5s).has_value());
  }
  test::Inputs honest_inputs;
  std::vector<test::Inputs> trickle(squatters.size());
  const auto start = std::chrono::steady_clock::now();
  auto last_trickle = start;
  bool joined = false;
  // Bounded: 14 s. The honest client sends an Input every 0.5 s, the squatters one every 3 s.
  while (std::chrono::steady_clock::now() - start < 14s && !joined) {
    std::this_thread::sleep_for(500ms);
    CHECK(honest.send(honest_inputs.make(0.0f, 0.0f, 4.0f, test::now_us())));
    if (std::chrono::steady_clock::now() - last_trickle >= 3s) {
      last_trickle = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < squatters.size(); ++i) {
        (void)squatters[i]->send(trickle[i].make(0.0f, 0.0f, 4.0f, test::now_us()));
      }
    }
    if (std::chrono::steady_clock::now() - start >= 5s) {
      RawClient real;
      REQUIRE(real.connect(ports->tcp, 0, "127.0.0.3"));
      REQUIRE(real.send(test::hello(protocol::Role::kViewer)));
      const auto answer = real.read(2s);
      joined = answer && std::holds_alternative<protocol::Welcome>(*answer);
    }
  }
  CHECK(joined);
  CHECK(honest.read_snapshot(3s).has_value());  // the honest client still has its slot
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "trickle_timeouts") >= 1);
}

TEST_CASE("attack: input flood over TCP - a connection hands over at most 64 frames a tick, the rest waits") {
  // Before: one connection sending valid Inputs as fast as its socket took them had every one
  // decoded on the tick thread (1.5-2.5 million a second), and a loaded machine skipped up to 82
  // ticks in 20 s. Now a session stops reading after TcpSession::kFramesPerTick frames until the
  // next tick, and TCP's flow control slows the sender.
  ServerProcess server(small_city({"--agents", "200"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  RawClient flooder, viewer;
  REQUIRE(join(flooder, ports->tcp, protocol::Role::kPlayer).has_value());
  REQUIRE(join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
  test::Inputs inputs;
  std::vector<std::uint8_t> frame;
  REQUIRE(protocol::append_frame(protocol::encode_tcp_message(inputs.make(1.0f, 0.0f, 32.0f, test::now_us())), frame));
  std::size_t flooded = 0;
  std::thread flood([&] { flooded = flooder.flood(frame, 3000ms); });
  // The other client's stream goes on meanwhile.
  int snapshots = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 3s) {
    if (viewer.read_snapshot(1s).has_value()) ++snapshots;
  }
  flood.join();
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  INFO(flooded << " Input frames written, " << snapshots << " snapshots to the other client during the flood");
  const long long ticks = summary_value(out, "ticks");
  CHECK(flooded > 0);
  CHECK(summary_value(out, "tcp_budget_stops") >= 1);
  // Every tick handled at most 64 of the flooder's frames (and a few of the viewer's).
  CHECK(summary_value(out, "tcp_inputs") <= 64 * (ticks + 2) + 100);
  CHECK(snapshots >= 10);
}

TEST_CASE("attack: input freeze - an input ~2^31 ahead does not make later genuine inputs look old") {
  // Before: one input whose sequence was ~2^31 ahead was "newer" than everything, and every later
  // real input was ignored as old. Over TCP (a client's own session; over UDP the packet window
  // refuses such jumps before authentication even runs).
  Joined joined({"--agents", "10"}, protocol::Role::kPlayer, false);
  auto& server = joined.server;
  const auto* ports = &joined.ports;
  const auto* welcome = &joined.welcome;
  RawClient& player = joined.client;
  test::Inputs inputs;
  REQUIRE(player.send(inputs.make(0, 0, 64.0f, 100)));
  protocol::Input hostile = inputs.make(0, 0, 64.0f, 555);
  hostile.sequence = inputs.sequence + 0x7FFFFFF0u;
  REQUIRE(player.send(hostile));
  // The snapshots echo the client time of the newest input applied: the genuine ones win.
  bool applied = false;
  for (int i = 0; i < 60 && !applied; ++i) {
    REQUIRE(player.send(inputs.make(0, 0, 64.0f, 1000 + static_cast<std::uint64_t>(i))));
    if (auto s = player.read_snapshot(500ms)) applied = s->echo_client_time_us >= 1000;
  }
  CHECK(applied);
  // The same over UDP: a sealed input whose Input.sequence jumps, and a packet whose packet
  // sequence jumps (refused by the window).
  REQUIRE(player.udp_open());
  REQUIRE(player.udp_confirm(ports->udp, 5s));
  protocol::Input udp_hostile = inputs.make(0, 0, 64.0f, 556);
  udp_hostile.sequence = inputs.sequence + 0x7FFFFFF0u;
  REQUIRE(player.udp_send_input(ports->udp, udp_hostile));
  protocol::PacketHeader far;
  far.type = protocol::PacketType::kData;
  far.token = player.channel().token();
  REQUIRE(player.udp_send(ports->udp, protocol::seal_packet(far, player.channel().next_send_sequence() + (1u << 30), {},
                                                           welcome->udp.client_to_server,
                                                           protocol::Direction::kClientToServer)));
  bool udp_applied = false;
  for (int i = 0; i < 60 && !udp_applied; ++i) {
    REQUIRE(player.udp_send_input(ports->udp, inputs.make(0, 0, 64.0f, 5000 + static_cast<std::uint64_t>(i))));
    if (auto s = player.udp_snapshot(500ms)) udp_applied = s->echo_client_time_us >= 5000;
  }
  CHECK(udp_applied);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "drop_sequence_jump") == 1);
}

TEST_CASE("attack: trickle - a frame sent byte by byte is cut off by the frame timeout, before and after Hello") {
  // Before: once Hello was done, a client trickling a frame a byte at a time was never cut off.
  Joined session({"--agents", "10", "--frame-timeout", "1", "--hello-timeout", "30"}, protocol::Role::kViewer, false);
  auto& server = session.server;
  const auto* ports = &session.ports;
  RawClient& joined = session.client;
  RawClient fresh;  // trickles its Hello itself
  REQUIRE(fresh.connect(ports->tcp));
  std::vector<std::uint8_t> frame;
  REQUIRE(protocol::append_frame(protocol::encode_tcp_message(test::hello(protocol::Role::kViewer)), frame));
  // One byte every 100 ms, for at most 10 s; the server's frame timeout is 1 s (checked once a
  // second), so it must cut both off long before the frame is complete... were it 4 KiB long.
  std::vector<std::uint8_t> slow(4 + 3000, 0x20);
  slow[0] = 0xB8;
  slow[1] = 0x0B;  // a 3000-byte frame
  slow[2] = slow[3] = 0;
  bool joined_cut = false, fresh_cut = false;
  for (std::size_t i = 0; i < 100 && !(joined_cut && fresh_cut); ++i) {
    if (!joined_cut) joined_cut = !joined.send_raw(std::span<const std::uint8_t>(&slow[i], 1)) || joined.wait_closed(50ms);
    if (!fresh_cut) fresh_cut = !fresh.send_raw(std::span<const std::uint8_t>(&slow[i], 1)) || fresh.wait_closed(50ms);
  }
  CHECK(joined_cut);
  CHECK(fresh_cut);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "frame_timeouts") == 2);
}

TEST_CASE("attack: unfinished 1 MiB frames - refused at the length prefix, memory bounded and freed") {
  // Before: 128 connections that each began a 1 MiB frame made the server hold ~1.3 MiB each
  // (the read buffer doubled to 2 MiB for some), and after they closed glibc kept ~50-129 MiB:
  // its dynamic mmap threshold rose to the first freed buffer's size, so later buffers came
  // from the heap and were never returned. A client frame is now at most 4 KiB.
  ServerProcess server(small_city({"--agents", "10", "--max-clients", "200", "--max-connections-per-address", "200",
                                   "--max-clients-per-address", "200"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const double rss_before = server.rss_mib();
  REQUIRE(rss_before > 0);
  std::vector<std::unique_ptr<RawClient>> clients;
  const std::vector<std::uint8_t> body((1u << 20) - 1, 0x11);
  int refused = 0;
  for (int i = 0; i < 128; ++i) {
    clients.push_back(std::make_unique<RawClient>());
    REQUIRE(clients.back()->connect(ports->tcp));
    REQUIRE(clients.back()->send(test::hello(protocol::Role::kViewer)));
    const std::uint8_t prefix[4] = {0, 0, 0x10, 0};  // 1 MiB
    static_cast<void>(clients.back()->send_raw(prefix));
    // The server reads and discards the rest while it closes (or resets us: both are fine).
    static_cast<void>(clients.back()->send_raw(body));
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;  // for all of them together
  for (auto& c : clients) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (auto e = c->read_until<protocol::Error>(std::max(left, 1ms)); e && e->code == protocol::ErrorCode::kFrameTooLarge) ++refused;
  }
  const double rss_open = server.rss_mib();
  for (auto& c : clients) c->close_tcp();
  clients.clear();
  std::this_thread::sleep_for(500ms);
  const double rss_after = server.rss_mib();
  const std::string out = stop_and_summarize(server);
  MESSAGE("unfinished frames: RSS " << rss_before << " MiB before, " << rss_open << " with 128 connections, "
                                    << rss_after << " after they closed");
  CHECK(refused == 128);
  // An ASan build's server keeps freed blocks in its quarantine and pads every allocation with
  // redzones (~17 MiB here), so only the order of magnitude is checked there: the bug this
  // guards against held 50-129 MiB.
#if defined(__SANITIZE_ADDRESS__)
  constexpr double kRssBoundMib = 48.0;
#else
  constexpr double kRssBoundMib = 16.0;
#endif
  CHECK(rss_open - rss_before < kRssBoundMib);
  CHECK(rss_after - rss_before < kRssBoundMib);
  CHECK(summary_value(out, "bad_frames") == 128);
}

TEST_CASE("attack: --status-interval 1e10 is refused (it overflowed into a busy loop that ignored SIGTERM)") {
  for (const char* value : {"1e10", "0.001", "nan"}) {
    INFO("--status-interval " << value);
    (void)test::expect_exit(small_city({"--status-interval", value}), 2, {"--status-interval"});
  }
  // The largest value accepted runs and stops on SIGTERM like any other.
  ServerProcess server(small_city({"--status-interval", "86400", "--agents", "10"}));
  REQUIRE(wait_listening(server).has_value());
  std::this_thread::sleep_for(300ms);
  const std::string out = stop_and_summarize(server);
  CHECK(summary_value(out, "ticks") >= 1);
}

TEST_CASE("attack: SIGTERM during a big map load exits cleanly with the summary line") {
  // Before: the default action killed the process during the load (no summary, status 143).
  // A 4096 x 4096 city takes about a second to generate; the signal comes 50 ms after the
  // server catches SIGTERM (a signal sent before main installed its handler, as happened once on
  // a loaded machine, meets the default action and says nothing about the load).
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--city-size", "4096", "--agents", "1000"});
  REQUIRE(server.started());
  REQUIRE(server.wait_catching(SIGTERM, 30s));
  std::this_thread::sleep_for(50ms);
  server.signal(SIGTERM);
  const auto code = server.wait_exit(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const std::string out = server.out();
  const std::string err = server.err();
  INFO("stderr: " << err);
  CHECK(out.rfind("ticks=0 rebuilds=0 ", 0) == 0);
  CHECK(err.find("listening") == std::string::npos);  // stopped before serving
  CHECK(err.find("SIGTERM during") != std::string::npos);
}

TEST_CASE("attack: SIGTERM during the world set-up of a big map ends it at once, with the summary line") {
  // Before: the navigation set-up of a 4096 city (~9 s here) ran to its end first: a stop asked
  // 2 s into it took the rest of those seconds. Now the set-up runs on its own thread and a stop
  // during it ends the process at once (nothing is held yet).
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--city-size", "4096", "--agents", "1000"});
  REQUIRE(server.started());
  REQUIRE_MESSAGE(server.wait_for_log("navigation fields:", 60s).has_value(), server.err());  // the set-up starts
  std::this_thread::sleep_for(500ms);
  server.signal(SIGTERM);
  const auto code = server.wait_exit(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  INFO("stderr: " << server.err());
  // Ended while the set-up ran (not after it: that path says the set-up without "left unfinished").
  CHECK(server.err().find("SIGTERM during the world set-up (left unfinished)") != std::string::npos);
  CHECK(server.err().find("listening") == std::string::npos);
  CHECK(server.out().rfind("ticks=0 rebuilds=0 ", 0) == 0);
}

TEST_CASE("attack: UDP flood - the receive buffer holds a burst and the real input behind it survives") {
  // Before: the kernel default (~208 KiB) overflowed in a flood (22k datagrams dropped, real
  // inputs among them). The server is stopped (SIGSTOP) while 4000 junk datagrams and one real
  // input arrive, so everything sits in the kernel buffer at once.
  // The buffer needs root (SO_RCVBUFFORCE) or net.core.rmem_max >= 16 MiB. Without either this
  // machine can not grant it to anyone: nothing to measure, so this case (a ctest entry of its
  // own, server_attack_flood_test) reports itself skipped. With either, the server must get it.
  long long rmem_max = 0;
  std::ifstream("/proc/sys/net/core/rmem_max") >> rmem_max;
  if (geteuid() != 0 && rmem_max < (16ll << 20)) {
    test::skip_test("not root and net.core.rmem_max is " + std::to_string(rmem_max) +
                    " bytes (a 16 MiB UDP buffer needs one)");
  }
  Joined joined({"--agents", "10", "--udp-receive-buffer-kb", "16384"}, protocol::Role::kPlayer, true);
  auto& server = joined.server;
  const auto* ports = &joined.ports;
  RawClient& player = joined.client;
  const auto listening = server.wait_for_log("listening tcp=", 1s);
  REQUIRE(listening.has_value());
  REQUIRE_MESSAGE(listening->find("udp_rcvbuf_kb=32768") != std::string::npos, *listening);
  RawClient flooder;
  REQUIRE(flooder.udp_open("127.0.0.5"));
  constexpr int kFlood = 4000;
  server.signal(SIGSTOP);
  int sent = 0;
  for (int i = 0; i < kFlood; ++i) sent += flooder.udp_send(ports->udp, std::vector<std::uint8_t>(200, 0x5A)) ? 1 : 0;
  test::Inputs inputs;
  REQUIRE(player.udp_send_input(ports->udp, inputs.make(0, 0, 64.0f, 4242)));
  server.signal(SIGCONT);
  bool echoed = false;
  for (int i = 0; i < 40 && !echoed; ++i) {
    if (auto s = player.udp_snapshot(500ms)) echoed = s->echo_client_time_us == 4242;
  }
  CHECK(echoed);  // the real input, queued behind the flood, was applied
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(sent == kFlood);
  CHECK(summary_value(out, "drop_kernel_overflow") == 0);
  CHECK(summary_value(out, "drop_malformed") == kFlood);
  CHECK(summary_value(out, "udp_rcvbuf_kb") == 32768);
}

TEST_CASE("attack: every dropped datagram is counted by its reason in the exit summary") {
  Joined joined({"--agents", "10"}, protocol::Role::kPlayer, true);
  auto& server = joined.server;
  const auto* ports = &joined.ports;
  const auto* welcome = &joined.welcome;
  RawClient& player = joined.client;
  test::Inputs inputs;
  RawClient other;
  REQUIRE(other.udp_open("127.0.0.6"));
  const auto port = ports->udp;
  REQUIRE(other.udp_send(port, std::vector<std::uint8_t>{1, 2, 3}));  // malformed
  protocol::PacketChannel stranger(protocol::PacketChannel::Side::kClient, protocol::make_session_credentials());
  REQUIRE(other.udp_send(port, stranger.seal(protocol::PacketType::kData, {})));  // unknown token
  protocol::SessionCredentials forged = protocol::make_session_credentials();
  forged.token = welcome->udp.token;
  protocol::PacketChannel forger(protocol::PacketChannel::Side::kClient, forged);
  protocol::PacketHeader h;
  h.type = protocol::PacketType::kConnectRequest;
  h.token = welcome->udp.token;
  REQUIRE(other.udp_send(port, protocol::seal_packet(h, 500, std::vector<std::uint8_t>(protocol::kConnectRequestBytes - protocol::kPacketOverheadBytes, 0),
                                                     forged.client_to_server, protocol::Direction::kClientToServer)));  // bad auth
  const auto input = player.channel().seal(protocol::PacketType::kData, protocol::encode_input_datagram(inputs.make(0, 0, 10, 1)));
  REQUIRE(player.udp_send(port, input));
  REQUIRE(player.udp_send(port, input));  // duplicate
  REQUIRE(other.udp_send(port, player.channel().seal(protocol::PacketType::kData, {})));  // unconfirmed address
  h.type = protocol::PacketType::kData;
  REQUIRE(player.udp_send(port, protocol::seal_packet(h, player.channel().next_send_sequence() + (1u << 25), {},
                                                      welcome->udp.client_to_server, protocol::Direction::kClientToServer)));  // jump
  REQUIRE(player.udp_send(port, player.channel().seal(protocol::PacketType::kData, std::vector<std::uint8_t>(30, 0xEE))));  // bad payload
  std::vector<std::vector<std::uint8_t>> fragments;  // what only the server sends: a bad payload from a client
  REQUIRE(protocol::split_snapshot(std::vector<std::uint8_t>(50, 0xD1), 1, fragments) == 1);
  REQUIRE(player.udp_send(port, player.channel().seal(protocol::PacketType::kData, fragments.front())));
  REQUIRE(player.udp_send(port, player.channel().seal(protocol::PacketType::kChallengeResponse, protocol::Challenge{})));  // bad challenge
  for (int i = 0; i < 12; ++i) REQUIRE(player.udp_send(port, player.channel().seal(protocol::PacketType::kConnectRequest, {})));
  std::this_thread::sleep_for(300ms);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "drop_malformed") == 1);
  CHECK(summary_value(out, "drop_unknown_token") == 1);
  CHECK(summary_value(out, "drop_bad_auth") == 1);
  CHECK(summary_value(out, "drop_duplicate") == 1);
  CHECK(summary_value(out, "drop_unconfirmed_address") == 1);
  CHECK(summary_value(out, "drop_sequence_jump") == 1);
  CHECK(summary_value(out, "drop_bad_payload") == 2);
  CHECK(summary_value(out, "drop_unexpected") == 0);  // every well-formed client body is an input or an ack
  CHECK(summary_value(out, "drop_bad_challenge") == 1);
  CHECK(summary_value(out, "drop_rate_limited") >= 2);  // 12 requests + confirm()'s, 10 a second
  CHECK(summary_value(out, "drop_kernel_overflow") == 0);
  long long total = 0;
  for (const char* reason : {"malformed", "unknown_token", "duplicate", "too_old", "sequence_jump", "bad_auth",
                             "unconfirmed_address", "bad_challenge", "rate_limited", "bad_payload", "unexpected",
                             "kernel_overflow"}) {
    total += summary_value(out, std::string("drop_") + reason);
  }
  CHECK(summary_value(out, "bad_datagrams") == total);
}

TEST_CASE("attack: a snapshot before Hello is refused by its type, never read") {
  // Version 2 fully decompressed a CompressedSnapshot (up to 8 MiB from a few KiB) before
  // saying "expected Hello first"; a server now refuses every message type a client never
  // sends by its type alone.
  ServerProcess server(small_city({"--agents", "10"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const auto envelope = protocol::encode_tcp_message(protocol::SnapshotData{std::vector<std::uint8_t>(3000, 0xD1)});
  REQUIRE(envelope.size() <= protocol::kMaxClientFrameBytes);
  RawClient c;
  REQUIRE(c.connect(ports->tcp));
  std::vector<std::uint8_t> frame;
  REQUIRE(protocol::append_frame(envelope, frame));
  REQUIRE(c.send_raw(frame));
  const auto error = c.read_until<protocol::Error>(5s);
  REQUIRE(error.has_value());
  CHECK(error->code == protocol::ErrorCode::kBadMessage);
  CHECK(error->reason == "bad message: message type SnapshotData is not accepted here");
  const std::string out = stop_and_summarize(server);
  CHECK(summary_value(out, "bad_frames") == 1);
}

TEST_CASE("attack: a client whose acks stop is no longer streamed to; TCP takes over") {
  // A confirmed address that stops acknowledging (the client left it, or it never wanted the
  // stream) stops receiving after --ack-timeout; the session itself lives on over TCP.
  Joined joined({"--agents", "300", "--ack-timeout", "1", "--idle-timeout", "60"}, protocol::Role::kViewer, true);
  auto& server = joined.server;
  RawClient& viewer = joined.client;
  test::Inputs inputs;
  REQUIRE(viewer.send(inputs.make(0, 0, 64.0f, 1)));  // over TCP: no UDP ack from here on
  REQUIRE(viewer.udp_snapshot(5s).has_value());       // streaming over UDP
  // Silence on UDP: snapshots move to TCP once the server gives up on the address.
  bool over_tcp = false;
  for (int i = 0; i < 100 && !over_tcp; ++i) {
    REQUIRE(viewer.send(inputs.make(0, 0, 64.0f, 2)));  // TCP keeps the session (not the address) alive
    over_tcp = viewer.read_snapshot(200ms).has_value();
  }
  CHECK(over_tcp);
  std::this_thread::sleep_for(200ms);
  drain_bytes(viewer, 100ms);  // what was in flight
  CHECK(drain_bytes(viewer, 500ms) == 0);  // nothing more over UDP
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "udp_unbound") == 1);
}

TEST_CASE("attack: acks over TCP do not keep a UDP address streamed to; only the confirmed address's acks do") {
  // The client acknowledges every snapshot it decodes, but over TCP only: the server can not
  // tell from those that its UDP address still receives (an on-path reader of the TCP stream,
  // or a client that moved), so the ack timeout must still move the stream to TCP. Before,
  // a TCP ack of a snapshot sent over UDP counted as the address's evidence and the server
  // streamed to it forever.
  Joined joined({"--agents", "300", "--ack-timeout", "1", "--idle-timeout", "60"}, protocol::Role::kViewer, true);
  auto& server = joined.server;
  RawClient& viewer = joined.client;
  test::Inputs inputs;
  REQUIRE(viewer.udp_snapshot(5s).has_value());  // streaming over UDP
  bool over_tcp = false;
  std::size_t udp_snapshots = 0;
  for (int i = 0; i < 100 && !over_tcp; ++i) {
    while (viewer.udp_snapshot(20ms)) ++udp_snapshots;  // every one that came: the acks keep up
    protocol::Input in = inputs.make(0, 0, 64.0f, static_cast<std::uint64_t>(i + 2));
    in.snapshot_ack = viewer.snapshot_ack();  // everything decoded, acknowledged over TCP
    REQUIRE(viewer.send(in));
    over_tcp = viewer.read_snapshot(100ms).has_value();
  }
  CHECK(udp_snapshots > 0);
  CHECK(over_tcp);
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "udp_unbound") == 1);
}

TEST_CASE("attack: refused connections are closed at once and take no slot, so a flood from one address keeps nobody out") {
  // One address opens 300 connections and never closes any. Two are accepted (the per-address
  // limit); the rest are refused. Before, each refused connection stayed a session while the
  // server waited for the peer to close (the closing timeout), counted against the server's
  // connection limit (max clients + 144): a real player from another address got "server full".
  ServerProcess server(small_city({"--agents", "10", "--max-clients", "4", "--max-connections-per-address", "2"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 300; ++i) {
    flood.push_back(std::make_unique<RawClient>());
    REQUIRE(flood.back()->connect(ports->tcp, 0, "127.0.0.2"));
  }
  // A refused one hears why, at once.
  const auto refused = flood.back()->read_until<protocol::Error>(3s);
  REQUIRE(refused.has_value());
  CHECK(refused->code == protocol::ErrorCode::kServerFull);
  CHECK(refused->reason.find("too many connections from your address") != std::string::npos);
  RawClient real;
  REQUIRE(real.connect(ports->tcp));
  REQUIRE(real.send(test::hello(protocol::Role::kPlayer)));
  const auto answer = real.read(5s);
  REQUIRE(answer.has_value());
  CHECK(std::holds_alternative<protocol::Welcome>(*answer));
  const std::string out = stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(summary_value(out, "refused_per_address") >= 290);
}

TEST_CASE("attack: log flood - a client joining and leaving in a loop writes a bounded number of session lines") {
  // --auth open lets anyone join: connect, Hello, Bye, again. Each cycle wrote three info lines
  // (joined, says bye, left): 6,100 cycles and 1.9 MB of log a second from one address. The
  // session lines now have a budget (a burst of 256, then 16 a second); the rest are counted.
  ServerProcess server(small_city({"--agents", "10"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  constexpr int kCycles = 1000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCycles; ++i) {
    RawClient c;
    REQUIRE(c.connect(ports->tcp));
    REQUIRE(c.send(test::hello(protocol::Role::kPlayer)));
    REQUIRE(c.read_until<protocol::Welcome>(5s).has_value());
    REQUIRE(c.send(protocol::Bye{"again"}));
    CHECK(c.wait_closed(5s));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::this_thread::sleep_for(1500ms);  // the once-a-second report of the lines held back
  const std::string out = stop_and_summarize(server);
  const std::string err = server.err();
  std::size_t joined = 0;
  for (std::size_t at = err.find(" joined as "); at != std::string::npos; at = err.find(" joined as ", at + 1)) ++joined;
  INFO("cycles took " << seconds << " s; 'joined' lines: " << joined);
  CHECK(joined <= static_cast<std::size_t>(256 + 16 * (seconds + 3)));
  CHECK(joined < static_cast<std::size_t>(kCycles));
  CHECK(err.find("client session line(s) held back") != std::string::npos);
}

TEST_CASE("attack: log flood - with --shutdown-when-empty, the empty/joined lines share the session lines' budget") {
  // With --shutdown-when-empty, each tick that finds the last player gone wrote "every player has
  // left; stopping in ..." and the next that finds one back "a player joined; the server stays
  // up", outside the budget of the session lines: a join-and-Bye loop that lets a tick see each
  // state wrote them on top of the 16 a second the budget lets through (this run: 414 session
  // lines, 75 of them these, where the budget allows 362; now 338, 11 of them these). Now they
  // take from the same budget. First a fast loop spends the burst of 256, then a slow one (a tick sees the player
  // and then no player) runs for 5 s.
  ServerProcess server(small_city({"--agents", "10", "--shutdown-when-empty", "600", "--reconnect-grace", "0"}));
  const auto ports = wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const auto cycle = [&](std::chrono::milliseconds pause) {
    RawClient c;
    REQUIRE(c.connect(ports->tcp));
    REQUIRE(c.send(test::hello(protocol::Role::kPlayer)));
    REQUIRE(c.read_until<protocol::Welcome>(5s).has_value());
    std::this_thread::sleep_for(pause);  // a tick (33 ms) sees the player
    REQUIRE(c.send(protocol::Bye{"again"}));
    CHECK(c.wait_closed(5s));
    std::this_thread::sleep_for(pause);  // ... and then none
  };
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 300; ++i) cycle(0ms);
  int slow_cycles = 0;
  for (const auto slow_end = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < slow_end; ++slow_cycles) {
    cycle(70ms);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string out = stop_and_summarize(server);
  const std::string err = server.err();
  const auto count = [&](const char* text) {
    std::size_t n = 0;
    for (std::size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++n;
    return n;
  };
  const std::size_t empty_lines = count("every player has left; stopping in") + count("a player joined; the server stays up");
  const std::size_t session_lines = count(" joined as ") + count(" says bye: ") + count("' left (") + empty_lines;
  INFO("cycles took " << seconds << " s (" << slow_cycles << " slow); session lines " << session_lines << ", of them "
                      << empty_lines << " empty/joined lines");
  CHECK(slow_cycles >= 10);
  // The budget's bound over the run (a second to spare: the clocks of this process and the
  // server's ticks differ by up to a tick).
  CHECK(session_lines <= static_cast<std::size_t>(256 + 16 * (seconds + 1)));
  CHECK(err.find("client session line(s) held back") != std::string::npos);
}
