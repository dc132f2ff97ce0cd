// Delta snapshots through the real server binary on 127.0.0.1: a viewer that acknowledges every
// snapshot decodes every one against an acknowledged baseline, and what it holds matches a
// replica World (same map, params and seed: the world is deterministic without players) within
// the quantization at every tick it decoded; a whole-map viewer of a big crowd decodes nearly
// every snapshot the server sent it. Asserts on counts and sequences, never on wall-clock time
// (waits are bounded only so that a broken server fails instead of hanging).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "loopback_support.hpp"
#include "swarmfield/server/map_source.hpp"
#include "swarmfield/server/server.hpp"
#include "swarmfield/server/config/server_config.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::RawClient;
using test::ServerProcess;

namespace {

// "key=1.234" in the summary line (summary_value reads integers only), -1 if missing.
double summary_double(const std::string& text, const std::string& key) {
  return test::summary_number(text, key).value_or(-1.0);
}

// The World the server runs for these flags, built the way main.cpp builds it.
sim::World replica_world(const std::vector<std::string>& flags) {
  std::vector<const char*> argv{"swarmfield-server"};
  for (const auto& f : flags) argv.push_back(f.c_str());
  server::ConfigParseResult parsed = server::parse_server_config(static_cast<int>(argv.size()), argv.data());
  REQUIRE(parsed.action == server::ConfigParseResult::Action::kRun);
  sim::GridMap map;
  std::string name, error;
  REQUIRE_MESSAGE(server::load_map(parsed.config, map, name, error), error);
  parsed.config.field_budget = server::resolve_field_budget(parsed.config, map.cell_count());
  const server::Server reference(parsed.config, map, name);  // for its WorldParams only: never opened
  return sim::World(std::move(map), reference.world().params());
}

protocol::Input whole_view(std::uint32_t sequence, const protocol::SnapshotAck& ack, float side) {
  protocol::Input in;
  in.sequence = sequence;
  in.view_x1 = side;
  in.view_y1 = side;
  in.snapshot_ack = ack;
  in.client_time_us = test::now_us();
  return in;
}

}  // namespace

TEST_CASE("snapshot loopback: acked deltas over UDP; the viewer's agents match the world within quantization") {
  // --ack-timeout 60: this viewer reads UDP only; acks stalled 3 s on a loaded machine would move
  // the stream to TCP, which it does not read, and the deltas after it to frames it never decoded
  // (a flaky no_baseline count).
  const std::vector<std::string> flags =
      test::small_city({"--agents", "3000", "--seed", "11", "--threads", "1", "--ack-timeout", "60"});
  ServerProcess server(flags);
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  RawClient viewer;
  const auto welcome = test::join(viewer, ports->tcp, protocol::Role::kViewer);
  REQUIRE(welcome.has_value());
  REQUIRE(viewer.udp_open());
  REQUIRE(viewer.udp_confirm(ports->udp, 5s));
  std::uint32_t sequence = 1;
  REQUIRE(viewer.udp_send_input(ports->udp, whole_view(sequence, viewer.snapshot_ack(), 64.0f)));

  // Decode 60 snapshots, acknowledging each at once (as the client library does).
  std::map<std::uint32_t, test::RawSnapshot> decoded;  // by tick
  std::uint32_t last_sequence = 0;
  std::size_t deltas = 0;
  for (int attempts = 0; decoded.size() < 60 && attempts < 400; ++attempts) {
    auto s = viewer.udp_snapshot(1s);
    if (!s) continue;
    CHECK(s->sequence > last_sequence);  // never an old or repeated one
    last_sequence = s->sequence;
    if (s->baseline_distance != 0) ++deltas;
    REQUIRE(viewer.udp_send_ack(ports->udp));
    if (decoded.size() % 10 == 0) {  // inputs carry acks too
      REQUIRE(viewer.udp_send_input(ports->udp, whole_view(++sequence, viewer.snapshot_ack(), 64.0f)));
    }
    const std::uint32_t tick = s->tick;
    decoded.emplace(tick, std::move(*s));
  }
  REQUIRE(decoded.size() == 60);
  CHECK(viewer.no_baseline() == 0);
  // After the first snapshot every one is a delta against an acknowledged frame.
  CHECK(deltas >= decoded.size() - 2);
  const std::string out = test::stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(test::summary_value(out, "snapshots_sent") >= static_cast<long long>(decoded.size()));
  CHECK(test::summary_value(out, "max_datagram") <= static_cast<long long>(protocol::kMaxDatagramBytes));
  CHECK(test::summary_value(out, "max_datagram") > 0);
  CHECK(summary_double(out, "bytes_per_agent") > 0.0);

  // The replica World, stepped to each decoded tick: the viewer holds every agent once its frame
  // has filled (the budget adds them over the first snapshots), and every agent the snapshot
  // updated sits within half a step of the view's precision of the world's position.
  sim::World world = replica_world(flags);
  const float cell = world.map().cell_size();
  const float dt = 1.0f / 30.0f;
  std::size_t full_frames = 0, agents_checked = 0;
  for (const auto& [tick, s] : decoded) {
    while (world.tick() < tick) world.step(dt);
    REQUIRE(world.tick() == tick);
    const sim::Swarm& swarm = world.swarm();
    CHECK(s.total_agents == swarm.size());
    if (s.frame.agents.size() == swarm.size()) ++full_frames;
    for (const protocol::AgentState& a : s.frame.agents) {
      const std::size_t i = swarm.index_of(a.id);
      REQUIRE(i != sim::Swarm::kNoIndex);
      CHECK(a.kind == swarm.kinds()[i]);
      if (a.tick != tick) continue;  // not updated in this snapshot: it keeps older values
      // Within half a step of the view's precision (steps of 2^s / 64 cell; s = 1 for this
      // 64-cell view) of the world's position rounded to 1/64 cell.
      const float half_step =
          (s.precision_shift == 0 ? 0.5f : static_cast<float>(1u << (s.precision_shift - 1)) + 0.5f) * cell / 64.0f +
          1e-4f;
      CHECK(s.precision_shift <= 1);
      CHECK(std::fabs(protocol::dequantize_agent_position(a.x, cell) - swarm.xs()[i]) <= half_step);
      CHECK(std::fabs(protocol::dequantize_agent_position(a.y, cell) - swarm.ys()[i]) <= half_step);
      ++agents_checked;
    }
  }
  MESSAGE(decoded.size() << " snapshots decoded, " << deltas << " deltas, " << full_frames << " with every agent, "
                         << agents_checked << " agent positions checked");
  CHECK(full_frames >= decoded.size() / 2);
  CHECK(agents_checked > 3000);
}

TEST_CASE("snapshot loopback: a whole-map viewer of a big crowd decodes nearly every snapshot sent") {
  // 40,000 agents on a 256 x 256 city: full snapshots would be ~200 kB each; the budget keeps
  // them near 6 kB (1 Mbit/s at 20 Hz), so none is lost to a full socket or a missing fragment.
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--city-size", "256", "--agents", "40000"});
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  RawClient viewer;
  REQUIRE(test::join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
  REQUIRE(viewer.udp_open());
  REQUIRE(viewer.udp_confirm(ports->udp, 5s));
  std::uint32_t sequence = 1;
  REQUIRE(viewer.udp_send_input(ports->udp, whole_view(sequence, viewer.snapshot_ack(), 256.0f)));
  std::size_t received = 0, largest_frame = 0, with_grid = 0;
  std::uint32_t first_sequence = 0, last_sequence = 0;
  for (int attempts = 0; received < 100 && attempts < 400; ++attempts) {
    auto s = viewer.udp_snapshot(1s);
    if (!s) continue;
    if (first_sequence == 0) first_sequence = s->sequence;
    last_sequence = s->sequence;
    ++received;
    largest_frame = std::max(largest_frame, s->frame.agents.size());
    if (!s->frame.grid.empty()) ++with_grid;
    REQUIRE(viewer.udp_send_ack(ports->udp));
    if (received % 20 == 0) REQUIRE(viewer.udp_send_input(ports->udp, whole_view(++sequence, viewer.snapshot_ack(), 256.0f)));
  }
  REQUIRE(received == 100);
  // Sequences the server sent between the first and the last decoded: nearly all decoded.
  const std::uint32_t sent = last_sequence - first_sequence + 1;
  MESSAGE("decoded " << received << " of " << sent << " snapshots sent; frame up to " << largest_frame
                     << " agents; density grid in " << with_grid);
  CHECK(received * 100 >= sent * 95);
  CHECK(largest_frame == 16384);  // the tracked cap: the rest is density
  CHECK(with_grid >= received / 2);
  const std::string out = test::stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(test::summary_value(out, "max_datagram") <= static_cast<long long>(protocol::kMaxDatagramBytes));
  CHECK(test::summary_value(out, "drop_kernel_overflow") == 0);
}
