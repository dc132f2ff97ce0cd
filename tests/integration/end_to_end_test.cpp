// End-to-end: the real swarmfield-server on street/Boston_0_512.map with 2000 agents, a scripted
// swarmfield-bot walking a loop near the centre, a headless swarmfield-viewer taking a
// screenshot, a second viewer that stays until shutdown, and this test as an observing viewer
// (swarmfield::client::Connection, view = the whole map) plus a hostile raw client. Checks:
//  a. the swarm closes in: mean integration-field distance of the agents to the player falls;
//  b. field rebuilds follow the player's cell changes (per snapshot, at snapshot_hz = tick_hz);
//  c. the screenshot shows walls, roads and agents in plausible proportions;
//  d. garbage UDP/TCP leaves the server ticking and the observer receiving; no UDP reply;
//  e. a Hello with a wrong protocol version gets an Error naming both versions;
//  f. SIGTERM: exit 0 within 2 s with the summary line; bot and viewer end on the server's Bye.
// Every wait is bounded; the run takes ~15 s. On failure the logs of every process are printed.
// Seed of the garbage generator: SWARMFIELD_E2E_SEED (environment), printed either way.
#include <doctest/doctest.h>

#include <asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_environment.hpp"
#include "png_image.hpp"
#include "raw_socket.hpp"
#include "subprocess.hpp"
#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/scene_renderer.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;
namespace sim = swarmfield::sim;
namespace st = swarmfield::testing;

constexpr int kAgents = 2000;
constexpr int kTickHz = 30;
constexpr std::size_t kDistanceSamples = 5;  // snapshots averaged at the start and at the end

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---- what the observer records -----------------------------------------------------------------

/// One observed snapshot, reduced to what the checks need.
struct SnapshotRecord {
  std::uint32_t tick = 0;
  std::uint64_t rebuilds = 0;
  std::uint32_t total_agents = 0;
  std::size_t agents_sent = 0;
  std::size_t players = 0;
  bool has_player = false;
  sim::CellCoord player_cell;
};

/// Agent positions (world units, dequantized) and the player's cell of one snapshot.
struct DistanceSample {
  std::uint32_t tick = 0;
  sim::CellCoord player_cell;
  sim::Vec2 player_position;
  std::vector<sim::Vec2> agents;
};

/// Mean distances of one sample: along the integration field from the player's cell (cost units
/// = cells on Boston's unit-cost map) and straight-line (world units).
struct SampleDistances {
  double field_mean = 0.0;
  double straight_mean = 0.0;
  std::size_t unreachable = 0;  // agents whose cell the player can not reach (not averaged)
};

SampleDistances measure(const sim::GridMap& map, const DistanceSample& s, sim::IntegrationField& field) {
  const sim::CellCoord goal[] = {s.player_cell};
  field.build(map, goal);
  SampleDistances d;
  double field_sum = 0.0, straight_sum = 0.0;
  std::size_t reachable = 0;
  for (const sim::Vec2& a : s.agents) {
    straight_sum += std::hypot(a.x - s.player_position.x, a.y - s.player_position.y);
    const sim::CellCoord c = map.world_to_cell(a);
    const double cost = field.cost_to_goal(c.x, c.y);
    if (std::isfinite(cost)) {
      field_sum += cost;
      ++reachable;
    } else {
      ++d.unreachable;
    }
  }
  d.field_mean = reachable ? field_sum / static_cast<double>(reachable) : 0.0;
  d.straight_mean = s.agents.empty() ? 0.0 : straight_sum / static_cast<double>(s.agents.size());
  return d;
}

/// The test's own viewer: a Connection asking for the whole map, pumped in short slices.
class Observer {
 public:
  Observer(std::uint16_t port) : connection_(io_, options(port)) {}

  bool connect() { return connection_.connect_blocking(); }
  client::Connection& connection() { return connection_; }

  /// Drives the connection for `d` (also sends the view-rectangle input every 100 ms) and
  /// records every new snapshot.
  void pump(std::chrono::milliseconds d) {
    const auto deadline = Clock::now() + d;
    do {
      if (connection_.finished()) {
        // Nothing left to drive (run_for would return at once): just let the time pass.
        std::this_thread::sleep_until(std::min(deadline, Clock::now() + 5ms));
      } else {
        io_.run_for(std::min<Clock::duration>(5ms, std::max<Clock::duration>(deadline - Clock::now(), 0ms)));
        if (io_.stopped()) io_.restart();
      }
      if (connection_.connected() && Clock::now() >= next_input_) {
        next_input_ = Clock::now() + 100ms;
        protocol::Input input;
        const auto& m = connection_.map();
        input.view_x1 = static_cast<float>(m.width()) * m.cell_size();
        input.view_y1 = static_cast<float>(m.height()) * m.cell_size();
        connection_.send_input(input);
      }
      record_new();
    } while (Clock::now() < deadline);
  }

  const std::vector<SnapshotRecord>& records() const { return records_; }
  const std::vector<DistanceSample>& first_samples() const { return first_samples_; }
  const std::deque<DistanceSample>& last_samples() const { return last_samples_; }
  std::uint32_t newest_tick() const { return records_.empty() ? 0 : records_.back().tick; }

 private:
  static client::ConnectionOptions options(std::uint16_t port) {
    client::ConnectionOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.role = protocol::Role::kViewer;
    o.name = "e2e-observer";
    o.connect_timeout = 5000ms;
    o.handshake_timeout = 15000ms;
    o.snapshot_history = 64;  // never lose one between two pumps, even under load
    return o;
  }

  void record_new() {
    (void)connection_.take_new_snapshot_count();
    const sim::GridMap& map = connection_.map();
    for (const auto& r : connection_.snapshots()) {
      const client::SnapshotState& s = r.snapshot;
      if (!records_.empty() && s.tick <= records_.back().tick) continue;
      SnapshotRecord rec;
      rec.tick = s.tick;
      rec.rebuilds = s.rebuilds;
      rec.total_agents = s.total_agents;
      rec.agents_sent = s.agents.size();
      rec.players = s.players.size();
      rec.has_player = s.players.size() == 1;  // the bot is the only player
      if (rec.has_player) rec.player_cell = map.world_to_cell({s.players[0].x, s.players[0].y});
      records_.push_back(rec);
      if (rec.has_player && rec.agents_sent > 0 && rec.agents_sent == rec.total_agents) {
        DistanceSample sample;
        sample.tick = s.tick;
        sample.player_cell = rec.player_cell;
        sample.player_position = {s.players[0].x, s.players[0].y};
        sample.agents.reserve(rec.agents_sent);
        for (const client::RenderAgent& a : s.agents) sample.agents.push_back({a.x, a.y});
        if (first_samples_.size() < kDistanceSamples) first_samples_.push_back(sample);
        last_samples_.push_back(std::move(sample));
        if (last_samples_.size() > kDistanceSamples) last_samples_.pop_front();
      }
    }
  }

  asio::io_context io_;
  client::Connection connection_;
  Clock::time_point next_input_{};
  std::vector<SnapshotRecord> records_;
  std::vector<DistanceSample> first_samples_;
  std::deque<DistanceSample> last_samples_;
};

// ---- hostile inputs ----------------------------------------------------------------------------

/// Frames decoded from what a raw TCP peer received (decode failures counted).
struct ReceivedFrames {
  std::vector<protocol::TcpMessage> messages;
  std::size_t undecodable = 0;
};

ReceivedFrames decode_frames(const std::vector<std::uint8_t>& bytes) {
  ReceivedFrames out;
  protocol::FrameDecoder decoder;
  decoder.feed(bytes);
  std::vector<std::uint8_t> frame;
  for (int i = 0; i < 10000 && decoder.next(frame) == protocol::FrameDecoder::Status::kFrame; ++i) {
    if (auto m = protocol::decode_tcp_message(frame)) {
      out.messages.push_back(std::move(*m));
    } else {
      ++out.undecodable;
    }
  }
  return out;
}

const protocol::Error* find_error(const ReceivedFrames& f) {
  for (const auto& m : f.messages) {
    if (const auto* e = std::get_if<protocol::Error>(&m)) return e;
  }
  return nullptr;
}

std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

/// Every unsigned integer written in `text` (to check that a reason names both versions).
std::set<unsigned long> integers_in(const std::string& text) {
  std::set<unsigned long> out;
  for (std::size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      std::size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      out.insert(std::stoul(text.substr(i, std::min<std::size_t>(j - i, 9))));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

std::uint64_t garbage_seed() {
  if (const char* s = std::getenv("SWARMFIELD_E2E_SEED"); s && *s) return std::strtoull(s, nullptr, 10);
  return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
}

/// Prints every process log once per failing run (doctest evaluates INFO lazily, on failure).
struct LogDump {
  std::vector<const st::Subprocess*> processes;
  mutable bool printed = false;
};
std::ostream& operator<<(std::ostream& os, const LogDump& d) {
  if (d.printed) return os << "(process logs printed above)";
  d.printed = true;
  os << "process logs:\n";
  for (const auto* p : d.processes) {
    if (p) os << p->log_tail(60) << "\n";
  }
  return os;
}

}  // namespace

TEST_CASE("end to end on Boston_0_512: swarm, rebuilds, screenshot, hostile input, shutdown") {
  const auto t_start = Clock::now();
  const std::filesystem::path run_dir = st::make_run_dir("end_to_end");
  const std::filesystem::path map_path = st::maps_dir() / "street" / "Boston_0_512.map";
  REQUIRE_MESSAGE(std::filesystem::exists(map_path), "map not found: " << map_path << " (set SWARMFIELD_MAPS_DIR)");
  const std::string script_path = std::string(SWARMFIELD_E2E_SOURCE_DIR) + "/boston_centre_loop.bot";
  const std::uint64_t seed = garbage_seed();
  std::cout << "end_to_end: run dir " << run_dir.string() << ", garbage seed " << seed
            << " (rerun with SWARMFIELD_E2E_SEED=" << seed << ")\n";

  LogDump logs;
  INFO(logs);

  // ---- server ------------------------------------------------------------------------------------
  std::string error;
  // snapshot_hz = tick_hz: one snapshot per tick, so every tick's rebuild count is observable.
  auto server = st::start_server({"--map", map_path.string(), "--agents", std::to_string(kAgents), "--tick-hz",
                                  std::to_string(kTickHz), "--snapshot-hz", std::to_string(kTickHz), "--seed", "7",
                                  "--bind", "127.0.0.1"},
                                 (run_dir / "server.log").string(), 15000ms, error);
  REQUIRE_MESSAGE(server.has_value(), error);
  logs.processes.push_back(server->process.get());
  const std::uint16_t port = server->ports.tcp;
  std::cout << "end_to_end: server listening tcp=" << port << " udp=" << server->ports.udp << "\n";

  // ---- the observer connects first, so it sees the bot's player join ---------------------------
  Observer observer(port);
  REQUIRE_MESSAGE(observer.connect(), "observer could not connect: " << observer.connection().error());
  const sim::GridMap& map = observer.connection().map();
  REQUIRE(map.width() == 512);
  REQUIRE(map.height() == 512);

  // ---- clients -----------------------------------------------------------------------------------
  const std::string port_s = std::to_string(port);
  const std::string shot_path = (run_dir / "headless.png").string();
  constexpr int kShotSeconds = 8;
  st::Subprocess bot({st::program_path("swarmfield-bot"), "--host", "127.0.0.1", "--port", port_s, "--script",
                      script_path, "--seconds", "0", "--name", "e2e-bot", "--seed", "3"},
                     (run_dir / "bot.log").string());
  st::Subprocess shot_viewer({st::program_path("swarmfield-viewer"), "--headless", "--host", "127.0.0.1", "--port",
                              port_s, "--seconds", std::to_string(kShotSeconds), "--fps", "15", "--name", "e2e-shot",
                              "--screenshot", shot_path},
                             (run_dir / "viewer_shot.log").string());
  // Stays connected until the server shuts down (small frame, low fps: it only has to be there).
  st::Subprocess stay_viewer({st::program_path("swarmfield-viewer"), "--headless", "--host", "127.0.0.1", "--port",
                              port_s, "--seconds", "120", "--fps", "5", "--width", "160", "--height", "120", "--name",
                              "e2e-stay"},
                             (run_dir / "viewer_stay.log").string());
  logs.processes.insert(logs.processes.end(), {&bot, &shot_viewer, &stay_viewer});
  REQUIRE_MESSAGE(bot.started(), "could not start " << bot.command_line());
  REQUIRE_MESSAGE(shot_viewer.started(), "could not start " << shot_viewer.command_line());
  REQUIRE_MESSAGE(stay_viewer.started(), "could not start " << stay_viewer.command_line());

  // ---- phase 1: the bot walks, the swarm chases ---------------------------------------------------
  const auto clients_started = Clock::now();
  {
    const auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline && observer.first_samples().empty() && bot.running()) observer.pump(50ms);
  }
  REQUIRE_MESSAGE(!observer.first_samples().empty(),
                  "no snapshot with the bot's player and all agents within 10 s; snapshots seen: "
                      << observer.records().size());
  while (seconds_since(clients_started) < 10.0) observer.pump(100ms);
  // The screenshot viewer ends on its own after kShotSeconds.
  {
    const auto deadline = Clock::now() + std::chrono::seconds(kShotSeconds + 15);
    while (Clock::now() < deadline && shot_viewer.running()) observer.pump(50ms);
  }
  const auto shot_status = shot_viewer.wait_for(0ms);
  CHECK_MESSAGE(shot_status == std::optional<int>(0), "screenshot viewer: status "
                                                          << (shot_status ? std::to_string(*shot_status) : "still running"));
  const std::string shot_summary = st::last_line_starting_with(shot_viewer.log(), "viewer: ");
  std::cout << "end_to_end: screenshot viewer: " << shot_summary << "\n";
  CHECK(st::summary_number(shot_summary, "connected") == std::optional<double>(1));
  CHECK(st::summary_number(shot_summary, "frames").value_or(0) > 0);
  CHECK(st::summary_number(shot_summary, "snapshots").value_or(0) > 0);

  // ---- d: hostile input -------------------------------------------------------------------------------
  const std::uint32_t tick_before_garbage = observer.newest_tick();
  const std::size_t records_before_garbage = observer.records().size();
  std::mt19937_64 rng(seed);
  std::size_t udp_sent = 0, udp_locally_invalid = 0, udp_wrong_token = 0, udp_replies = 0, udp_send_failures = 0;
  {
    st::RawUdp fuzz;
    REQUIRE_MESSAGE(fuzz.open(), fuzz.error());
    // Valid-looking bases: sealed packets of sessions that do not exist, forgeries of the
    // observer's session (its token, a key of our own making), and a server-to-client packet.
    const protocol::SessionToken own_token = observer.connection().welcome().udp.token;
    std::vector<std::vector<std::uint8_t>> bases;
    for (int i = 0; i < 8; ++i) {
      protocol::SessionCredentials credentials = protocol::make_session_credentials();
      if (i % 2 == 0) credentials.token = own_token;
      protocol::PacketChannel channel(protocol::PacketChannel::Side::kClient, credentials);
      protocol::Input in;
      in.sequence = static_cast<std::uint32_t>(i);
      in.move_x = 0.5f;
      in.view_x1 = 100.0f;
      in.view_y1 = 100.0f;
      bases.push_back(channel.seal(protocol::PacketType::kData, protocol::encode_input_datagram(in)));
      bases.push_back(channel.seal(protocol::PacketType::kConnectRequest, {}));
    }
    {
      // Snapshot fragments (what only a server sends), sealed by some server's session.
      protocol::SnapshotSender sender(1024);
      protocol::SnapshotHeader header;
      header.tick = 5;
      header.players.push_back({1, 10.0f, 10.0f, 0});
      protocol::AgentCandidates agents;
      for (std::uint32_t id = 1; id <= 2000; ++id) agents.push_back({id, id * 64, id * 32, 0, 0, 1});
      std::vector<std::uint8_t> payload;
      REQUIRE(sender.encode(header, agents, protocol::DensityGrid{}, payload));
      std::vector<std::vector<std::uint8_t>> fragments;
      REQUIRE(protocol::split_snapshot(payload, header.sequence, fragments) > 0);
      protocol::PacketChannel server_side(protocol::PacketChannel::Side::kServer, protocol::make_session_credentials());
      for (auto& d : fragments) bases.push_back(server_side.seal(protocol::PacketType::kData, d));
    }
    constexpr int kDatagrams = 3000;
    const auto deadline = Clock::now() + 15s;
    for (int i = 0; i < kDatagrams && Clock::now() < deadline; ++i) {
      std::vector<std::uint8_t> d;
      const auto& base = bases[rng() % bases.size()];
      switch (i % 5) {
        case 0: d = random_bytes(rng, rng() % 1500); break;  // some above the 1200-byte limit
        case 1: d.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(rng() % base.size())); break;
        case 2: {
          d = base;
          const int flips = 1 + static_cast<int>(rng() % 8);
          for (int k = 0; k < flips; ++k) d[rng() % d.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
          break;
        }
        case 3: d = base; break;  // well-formed: unknown session, forged, or the wrong direction
        default: {
          d = random_bytes(rng, 42 + rng() % 200);  // random bytes behind a plausible header
          d[0] = static_cast<std::uint8_t>(1 + rng() % 4);
          d[1] = protocol::kPacketVersion;
          break;
        }
      }
      if (!protocol::read_packet_header(d)) ++udp_locally_invalid;
      if (protocol::read_packet_header(d) && d.size() > 100) ++udp_wrong_token;
      if (fuzz.send_to(server->ports.udp, d)) {
        ++udp_sent;
      } else {
        ++udp_send_failures;
      }
      if (i % 25 == 24) {
        // Paced so the server's socket buffer is not simply overrun; the observer keeps reading.
        observer.pump(4ms);
        while (fuzz.receive(0ms)) ++udp_replies;
      }
    }
    while (fuzz.receive(200ms)) ++udp_replies;
  }
  std::cout << "end_to_end: UDP garbage: sent " << udp_sent << " (" << udp_locally_invalid << " fail read_packet_header, "
            << udp_wrong_token << " well-formed packets of other or forged sessions), send failures " << udp_send_failures
            << ", replies " << udp_replies << "\n";
  CHECK(udp_sent >= 2900);
  CHECK(udp_replies == 0);
  {
    // A fresh socket: garbage, then ~200 ms for any reply.
    st::RawUdp probe;
    REQUIRE_MESSAGE(probe.open(), probe.error());
    for (int i = 0; i < 10; ++i) CHECK(probe.send_to(server->ports.udp, random_bytes(rng, 1 + rng() % 600)));
    const auto reply = probe.receive(200ms);
    CHECK_MESSAGE(!reply.has_value(), "the server answered garbage UDP with " << (reply ? reply->size() : 0) << " bytes");
  }

  // Garbage TCP connections. Each must be closed by the server within a bounded time.
  struct TcpCase {
    const char* what;
    std::vector<std::uint8_t> bytes;
    bool hang_up = false;       // connect-and-close: we close at once, nothing to read
    bool half_close = false;    // we send EOF after the bytes (unframed garbage may just wait)
    bool expect_error = false;  // the server must answer with an Error frame
    std::optional<protocol::ErrorCode> code;
  };
  std::vector<TcpCase> tcp_cases;
  {
    auto framed = random_bytes(rng, 4096);  // a well-formed frame holding random bytes
    const std::uint32_t len = 4092;
    for (int k = 0; k < 4; ++k) framed[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(len >> (8 * k));
    tcp_cases.push_back({"a frame of random bytes", framed, false, false, true, std::nullopt});
    tcp_cases.push_back({"a huge length prefix", {0xF0, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4}, false, false, true,
                         protocol::ErrorCode::kFrameTooLarge});
    tcp_cases.push_back({"random bytes then EOF", random_bytes(rng, 3000), false, true, false, std::nullopt});
    tcp_cases.push_back({"connect and close", {}, true, false, false, std::nullopt});
  }
  for (const auto& c : tcp_cases) {
    st::RawTcp tcp;
    REQUIRE_MESSAGE(tcp.connect(port, 3000ms), c.what << ": " << tcp.error());
    if (c.hang_up) {
      tcp.close();
      observer.pump(20ms);
      continue;
    }
    CHECK_MESSAGE(tcp.send_all(c.bytes, 3000ms), c.what << ": " << tcp.error());
    if (c.half_close) tcp.shutdown_write();
    std::vector<std::uint8_t> got;
    // Read in slices so the observer keeps up meanwhile.
    bool closed = false;
    for (int k = 0; k < 60 && !closed; ++k) {
      closed = tcp.read_until_closed(got, 50ms);
      observer.pump(5ms);
    }
    const ReceivedFrames frames = decode_frames(got);
    const protocol::Error* e = find_error(frames);
    std::cout << "end_to_end: TCP garbage '" << c.what << "': closed by server " << (closed ? "yes" : "NO") << ", "
              << got.size() << " bytes back"
              << (e ? ", Error code " + std::to_string(static_cast<int>(e->code)) + " '" + e->reason + "'" : "") << "\n";
    CHECK_MESSAGE(closed, "the server did not close a connection that sent " << c.what << " within 3 s");
    if (c.expect_error) CHECK_MESSAGE(e != nullptr, "no Error frame after " << c.what);
    if (c.code && e) CHECK(e->code == *c.code);
  }

  // ---- e: wrong protocol version ----------------------------------------------------------------------
  {
    const std::uint16_t wrong = static_cast<std::uint16_t>(protocol::kProtocolVersion + 41);
    st::RawTcp tcp;
    REQUIRE_MESSAGE(tcp.connect(port, 3000ms), tcp.error());
    std::vector<std::uint8_t> frame;
    REQUIRE(protocol::append_frame(
        protocol::encode_tcp_message(protocol::Hello{wrong, protocol::Role::kViewer, "e2e-old-client", {}, {}}), frame));
    CHECK(tcp.send_all(frame, 3000ms));
    std::vector<std::uint8_t> got;
    bool closed = false;
    for (int k = 0; k < 60 && !closed; ++k) {
      closed = tcp.read_until_closed(got, 50ms);
      observer.pump(5ms);
    }
    const ReceivedFrames frames = decode_frames(got);
    const protocol::Error* e = find_error(frames);
    REQUIRE_MESSAGE(e != nullptr, "no Error answer to a Hello with protocol version " << wrong << " ("
                                                                                         << got.size() << " bytes back)");
    std::cout << "end_to_end: version " << wrong << " Hello -> Error code " << static_cast<int>(e->code) << " '"
              << e->reason << "', closed " << (closed ? "yes" : "NO") << "\n";
    CHECK(e->code == protocol::ErrorCode::kVersionMismatch);
    const auto numbers = integers_in(e->reason);
    CHECK_MESSAGE(numbers.count(wrong) == 1, "reason '" << e->reason << "' does not name the client's version " << wrong);
    CHECK_MESSAGE(numbers.count(protocol::kProtocolVersion) == 1,
                  "reason '" << e->reason << "' does not name the server's version " << protocol::kProtocolVersion);
    CHECK(closed);
    CHECK(frames.messages.size() == 1);  // no Welcome, no map
  }

  // ---- d (continued): still ticking, still receiving ----------------------------------------------
  const std::uint32_t tick_after_garbage = observer.newest_tick();
  const std::size_t records_after_garbage = observer.records().size();
  // Counted, not timed: 90 more ticks and 30 more snapshots (3 s at 30 Hz / 20 Hz) within a
  // generous bound that only a stalled server misses, however busy the machine.
  {
    const auto deadline = Clock::now() + 30s;
    while (Clock::now() < deadline && !(observer.newest_tick() >= tick_after_garbage + 90 &&
                                         observer.records().size() >= records_after_garbage + 30)) {
      observer.pump(50ms);
    }
  }
  const std::uint32_t tick_later = observer.newest_tick();
  const std::size_t records_later = observer.records().size();
  std::cout << "end_to_end: observer ticks " << tick_before_garbage << " before garbage, " << tick_after_garbage
            << " after, " << tick_later << " later; snapshots " << records_before_garbage << " -> "
            << records_after_garbage << " -> " << records_later << "\n";
  CHECK(observer.connection().connected());
  CHECK(tick_after_garbage > tick_before_garbage);
  CHECK(tick_later >= tick_after_garbage + 90);
  CHECK(records_later >= records_after_garbage + 30);
  CHECK(bot.running());
  CHECK(stay_viewer.running());

  // ---- f: SIGTERM --------------------------------------------------------------------------------------
  server->process->signal(SIGTERM);
  const auto term_sent = Clock::now();
  std::optional<int> server_status;
  while (!server_status && seconds_since(term_sent) < 5.0) {
    observer.pump(10ms);
    server_status = server->process->wait_for(0ms);
  }
  const double exit_seconds = seconds_since(term_sent);
  std::cout << "end_to_end: server exit status " << (server_status ? std::to_string(*server_status) : "none")
            << " after " << exit_seconds << " s\n";
  REQUIRE_MESSAGE(server_status.has_value(), "the server did not exit within 5 s of SIGTERM");
  CHECK(*server_status == 0);
  // It ended because its work was done (every connection closed, or every Bye written), not at
  // the flush timeout: the server's own log says which (no wall-clock assertion here).
  CHECK(server->process->log().find("stopped: every ") != std::string::npos);
  CHECK(server->process->log().find("stopped: flush timeout") == std::string::npos);
  const std::string summary = st::last_line_starting_with(server->process->log(), "ticks=");
  std::cout << "end_to_end: server summary: " << summary << "\n";
  REQUIRE_MESSAGE(!summary.empty(), "no 'ticks=.. rebuilds=..' summary line in the server's output");
  const auto summary_ticks = st::summary_number(summary, "ticks");
  const auto summary_rebuilds = st::summary_number(summary, "rebuilds");  // all size classes
  // Class 1's, what the snapshots count (rebuilds_by_class lists class 1 first).
  const auto summary_class1_rebuilds = st::summary_number(summary, "rebuilds_by_class");
  const auto summary_bad_datagrams = st::summary_number(summary, "bad_datagrams");
  REQUIRE(summary_ticks.has_value());
  REQUIRE(summary_rebuilds.has_value());
  REQUIRE(summary_class1_rebuilds.has_value());
  CHECK(*summary_rebuilds >= *summary_class1_rebuilds);
  REQUIRE(summary_bad_datagrams.has_value());

  // The clients end on the server's Bye: an orderly end is exit 0 with the Bye's reason printed
  // and the summary line.
  {
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline && (!observer.connection().finished() || bot.running() || stay_viewer.running())) {
      observer.pump(20ms);
    }
  }
  const auto bot_status = bot.wait_for(0ms);
  const auto stay_status = stay_viewer.wait_for(0ms);
  const std::string bot_log = bot.log();
  const std::string stay_log = stay_viewer.log();
  std::cout << "end_to_end: bot status " << (bot_status ? std::to_string(*bot_status) : "running") << ", "
            << st::last_line_starting_with(bot_log, "bots=") << "\n";
  std::cout << "end_to_end: stay viewer status " << (stay_status ? std::to_string(*stay_status) : "running") << ", "
            << st::last_line_starting_with(stay_log, "viewer: ") << "\n";
  std::cout << "end_to_end: observer: " << observer.connection().error() << "\n";
  CHECK_MESSAGE(bot_status.has_value(), "the bot did not end within 5 s of the server's shutdown");
  CHECK_MESSAGE(stay_status.has_value(), "the viewer did not end within 5 s of the server's shutdown");
  CHECK(bot_status == 0);
  CHECK(stay_status == 0);
  CHECK(bot_log.find("server closed the session") != std::string::npos);
  CHECK(stay_log.find("server closed the session") != std::string::npos);
  CHECK(!st::last_line_starting_with(bot_log, "bots=1 connected=1").empty());
  CHECK(!st::last_line_starting_with(stay_log, "viewer: connected=1").empty());
  CHECK(observer.connection().finished());
  CHECK(observer.connection().error().find("server closed the session") != std::string::npos);
  // Every hostile datagram is dropped and counted, by the server or by the kernel (its drops
  // count too): none of them is valid, and only the observer's, the bot's and the viewers'
  // packets are not. The TCP garbage frames count as bad frames.
  CHECK(summary_bad_datagrams.value_or(0) >= static_cast<double>(udp_sent + 10));
  CHECK(st::summary_number(summary, "bad_frames").value_or(0) >= 2);
  std::cout << "end_to_end: server counted " << *summary_bad_datagrams << " bad datagrams of " << udp_locally_invalid
            << " locally invalid sent\n";

  // ---- a: the swarm closes in ----------------------------------------------------------------------
  {
    REQUIRE(observer.first_samples().size() == kDistanceSamples);
    REQUIRE(observer.last_samples().size() == kDistanceSamples);
    sim::IntegrationField field;
    auto mean_of = [&](const auto& samples, std::uint32_t& tick, SampleDistances& sum) {
      for (const auto& s : samples) {
        const SampleDistances d = measure(map, s, field);
        sum.field_mean += d.field_mean / static_cast<double>(samples.size());
        sum.straight_mean += d.straight_mean / static_cast<double>(samples.size());
        sum.unreachable = std::max(sum.unreachable, d.unreachable);
        tick = s.tick;
      }
    };
    SampleDistances first, last;
    std::uint32_t first_tick = 0, last_tick = 0;
    mean_of(observer.first_samples(), first_tick, first);
    mean_of(observer.last_samples(), last_tick, last);
    std::cout << "end_to_end: a. mean field distance " << first.field_mean << " (ticks up to " << first_tick << ") -> "
              << last.field_mean << " (tick " << last_tick << "), ratio " << last.field_mean / first.field_mean
              << "; straight-line " << first.straight_mean << " -> " << last.straight_mean << "; unreachable agents "
              << first.unreachable << " / " << last.unreachable << "\n";
    CHECK(last_tick >= first_tick + 10 * kTickHz);  // at least 10 s of chasing between the samples
    CHECK(first.field_mean > 0.0);
    CHECK(last.field_mean < 0.9 * first.field_mean);
    CHECK(first.unreachable < kAgents / 10);  // the mean covers nearly the whole swarm
  }

  // ---- b: rebuilds follow the player's cell changes --------------------------------------------------
  {
    const auto& recs = observer.records();
    std::size_t exact_intervals = 0, exact_changes = 0, exact_mismatches = 0;
    std::size_t gap_intervals = 0, gap_changes = 0, gap_violations = 0, changes_seen = 0;
    std::uint64_t ticks_missing = 0;  // ticks with no snapshot between two observed ones
    std::uint64_t first_player_rebuilds = 0;
    bool seen_player = false;
    std::string first_mismatch;
    std::size_t all_agents_sent = 0;
    bool respawn_pending = false;  // the last interval was a respawn whose rebuild comes next tick
    std::size_t respawns = 0;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const auto& r = recs[i];
      if (r.agents_sent == r.total_agents && r.total_agents == static_cast<std::uint32_t>(kAgents)) ++all_agents_sent;
      if (r.has_player && !seen_player) {
        seen_player = true;
        first_player_rebuilds = r.rebuilds;
      }
      if (i == 0) continue;
      const auto& p = recs[i - 1];
      if (!p.has_player || !r.has_player) continue;
      const bool changed = !(p.player_cell == r.player_cell);
      const std::uint64_t d = r.rebuilds - p.rebuilds;
      const std::uint32_t gap = r.tick - p.tick;
      changes_seen += changed ? 1 : 0;
      // A respawn (combat is on: a bot the horde catches dies and comes back at a spawn point)
      // moves the player after the tick's rebuild: its rebuild comes with the next tick. A jump
      // of more than two cells in one tick is one (the bot walks at most ~0.3 cells a tick).
      const bool jump = std::max(std::abs(r.player_cell.x - p.player_cell.x), std::abs(r.player_cell.y - p.player_cell.y)) > 2;
      const bool respawn_rebuilt_late = gap == 1 && ((jump && d == 0) || (respawn_pending && !changed && d == 1));
      respawn_pending = gap == 1 && jump && d == 0;
      respawns += jump ? 1 : 0;
      if (gap == 1 && respawn_rebuilt_late) {
        ++exact_intervals;
      } else if (gap == 1) {
        ++exact_intervals;
        exact_changes += changed ? 1 : 0;
        if (d != (changed ? 1u : 0u)) {
          ++exact_mismatches;
          if (first_mismatch.empty()) {
            first_mismatch = "tick " + std::to_string(p.tick) + "->" + std::to_string(r.tick) + ": cell (" +
                             std::to_string(p.player_cell.x) + "," + std::to_string(p.player_cell.y) + ")->(" +
                             std::to_string(r.player_cell.x) + "," + std::to_string(r.player_cell.y) + "), rebuilds +" +
                             std::to_string(d);
          }
        }
      } else {
        ++gap_intervals;
        ticks_missing += gap - 1;
        gap_changes += changed ? 1 : 0;
        if (d > gap || (changed && d == 0)) ++gap_violations;
      }
    }
    const auto& last = recs.back();
    std::cout << "end_to_end: b. " << recs.size() << " snapshots observed (" << all_agents_sent
              << " with all agents); player cell changes seen " << changes_seen << "; consecutive-tick intervals "
              << exact_intervals << " (" << exact_changes << " with a cell change, " << exact_mismatches
              << " mismatches" << (first_mismatch.empty() ? "" : ", first " + first_mismatch) << "); skipped-tick intervals "
              << gap_intervals << " (" << gap_changes << " with a change, " << gap_violations
              << " violations); respawns " << respawns << "; rebuilds at the player's first snapshot " << first_player_rebuilds
              << ", in the last snapshot " << last.rebuilds << " (tick " << last.tick << "), server summary class 1 "
              << *summary_class1_rebuilds << ", all classes " << *summary_rebuilds << " (ticks " << *summary_ticks << ")\n";
    CHECK(exact_mismatches == 0);
    CHECK(gap_violations == 0);
    CHECK(exact_changes >= 10);  // the bot walked: enough exact evidence
    CHECK(exact_intervals >= recs.size() / 2);
    // Rebuilds after the player's first snapshot = its cell changes (no other goal changed),
    // less a respawn in the last interval, whose rebuild no snapshot showed.
    CHECK(last.rebuilds - first_player_rebuilds + (respawn_pending ? 1 : 0) >= changes_seen);
    // ... and at most one more per tick that no snapshot showed.
    CHECK(last.rebuilds - first_player_rebuilds <= changes_seen + ticks_missing);
    CHECK(*summary_class1_rebuilds > 1);
    CHECK(*summary_class1_rebuilds >= static_cast<double>(last.rebuilds));
    CHECK(*summary_class1_rebuilds >= static_cast<double>(changes_seen));
    CHECK(*summary_ticks >= static_cast<double>(last.tick));
    CHECK(*summary_class1_rebuilds - static_cast<double>(last.rebuilds) <= *summary_ticks - static_cast<double>(last.tick));
    CHECK(all_agents_sent >= recs.size() / 2);  // whole-map view: the observer gets every agent
  }

  // ---- c: the screenshot ---------------------------------------------------------------------------
  {
    std::string png_error;
    const auto image = st::load_png_rgb(shot_path, png_error);
    REQUIRE_MESSAGE(image.has_value(), png_error);
    std::set<std::uint8_t> costs(map.costs().begin(), map.costs().end());
    std::vector<client::Rgb> walk_colors;
    for (const std::uint8_t c : costs) {
      if (c != sim::kBlockedCost) walk_colors.push_back(client::cost_color(c));
    }
    // Agents are drawn in their kind's colour (the server's default kinds).
    std::vector<client::Rgb> kind_colors;
    for (const sim::AgentKind& k : sim::default_agent_kinds()) {
      kind_colors.push_back({static_cast<std::uint8_t>(k.colour >> 16), static_cast<std::uint8_t>(k.colour >> 8),
                             static_cast<std::uint8_t>(k.colour)});
    }
    std::size_t wall = 0, walk = 0, agent = 0, player = 0, background = 0, other = 0;
    for (std::size_t i = 0; i + 2 < image->rgb.size(); i += 3) {
      const client::Rgb px{image->rgb[i], image->rgb[i + 1], image->rgb[i + 2]};
      if (px == client::kWallColor) {
        ++wall;
      } else if (std::find(walk_colors.begin(), walk_colors.end(), px) != walk_colors.end()) {
        ++walk;
      } else if (px == client::kAgentColor || std::find(kind_colors.begin(), kind_colors.end(), px) != kind_colors.end()) {
        ++agent;
      } else if (px == client::kPlayerColor || px == client::kOwnPlayerColor) {
        ++player;
      } else if (px == client::kBackgroundColor) {
        ++background;
      } else {
        ++other;
      }
    }
    const double total = static_cast<double>(image->width) * image->height;
    const double map_px = static_cast<double>(wall + walk + agent + player);
    const double blocked_cells =
        static_cast<double>(map.cell_count() - map.walkable_count()) / static_cast<double>(map.cell_count());
    const double wall_share = map_px > 0 ? static_cast<double>(wall) / map_px : 0.0;
    std::cout << "end_to_end: c. screenshot " << image->width << "x" << image->height << ": wall " << wall << ", road "
              << walk << ", agent " << agent << ", player " << player << ", background " << background
              << ", other (HUD) " << other << "; wall share of the map " << wall_share << " (blocked cells "
              << blocked_cells << "), map share of the image " << map_px / total << "\n";
    CHECK(image->width == 1024);
    CHECK(image->height == 768);
    CHECK(std::abs(wall_share - blocked_cells) < 0.06);
    CHECK(map_px / total > 0.5);   // the fitted 512x512 map covers 768x768 of 1024x768 (75%)
    CHECK(map_px / total < 0.85);
    CHECK(walk > wall);
    CHECK(agent >= 200);           // 2000 agents as >= 2x2 squares, even if crowded together
    CHECK(static_cast<double>(agent) < 0.2 * total);
  }

  const double runtime = seconds_since(t_start);
  std::cout << "end_to_end: total " << runtime << " s\n";
}
