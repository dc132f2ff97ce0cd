// World -> delta snapshot payloads per client (snapshot_builder.hpp): what a client's decoder
// ends up holding (relevance by view rectangle + margin, players, kinds, counts), budgets, and
// baselines by transport (acknowledged frames over UDP, the previous snapshot over TCP).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/server/recent_deaths.hpp"
#include "swarmfield/server/snapshot_builder.hpp"
#include "swarmfield/sim/map/city_generator.hpp"

using namespace swarmfield;
using server::AgentArrays;
using server::ClientSnapshotParams;
using server::ClientSnapshotStream;
using server::SnapshotWorldState;
using server::ViewRect;

namespace {

struct Agents {
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, headings;
  void add(std::uint32_t id, float x, float y, float h = 0.0f) {
    ids.push_back(id);
    xs.push_back(x);
    ys.push_back(y);
    headings.push_back(h);
  }
  [[nodiscard]] AgentArrays view() const { return {ids, xs, ys, headings}; }
};

std::vector<std::uint32_t> frame_ids(const protocol::AgentFrame& frame) {
  std::vector<std::uint32_t> ids;
  for (const protocol::AgentState& a : frame.agents) ids.push_back(a.id);
  return ids;
}

/// Builds one snapshot and decodes it; the decoded header and frame stay in `receiver`.
void build_and_decode(ClientSnapshotStream& stream, SnapshotWorldState& world, const ViewRect& view,
                      std::uint64_t echo, protocol::SnapshotReceiver& receiver, std::vector<std::uint8_t>& payload) {
  REQUIRE(stream.build(world, view, echo, payload));
  std::string error;
  REQUIRE_MESSAGE(receiver.receive(payload, &error) == protocol::SnapshotReceiver::Result::kDecoded, error);
}

sim::World small_world(std::uint32_t agents) {
  sim::CityParams city;
  city.width = 64;
  city.height = 64;
  sim::WorldParams params;
  params.spawner.initial_agents = agents;
  params.kinds = sim::default_agent_kinds();
  sim::World world(sim::generate_city(city), params);
  world.add_player({32.0f, 32.0f});
  world.step(1.0f / 30.0f);
  return world;
}

}  // namespace

TEST_CASE("snapshot_builder: the client holds the agents inside the view rectangle + margin, within quantization") {
  Agents a;
  a.add(1, 10.0f, 10.0f);
  a.add(2, 50.0f, 50.0f);   // far outside
  a.add(3, 21.5f, 10.0f);   // outside the view, inside the 2-unit margin
  a.add(4, 22.5f, 10.0f);   // outside the margin
  a.add(5, 0.0f, 0.0f, 3.14159265f);  // exactly on the view corner
  SnapshotWorldState world;
  world.assign(a.view(), {}, 77, 3, 1.0f);
  ClientSnapshotParams params;
  params.margin = 2.0f;
  ClientSnapshotStream stream(params);
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  build_and_decode(stream, world, ViewRect::from_corners(20.0f, 20.0f, 0.0f, 0.0f), 123456789, receiver, payload);
  const protocol::SnapshotHeader& h = receiver.header();
  CHECK(h.tick == 77);
  CHECK(h.rebuilds == 3);
  CHECK(h.echo_client_time_us == 123456789);
  CHECK(h.total_agents == 5);
  const protocol::AgentFrame& f = receiver.frame();
  REQUIRE(frame_ids(f) == std::vector<std::uint32_t>{1, 3, 5});
  CHECK(std::fabs(protocol::dequantize_agent_position(f.agents[1].x, 1.0f) - 21.5f) <= 1.0f / 128.0f);
  CHECK(std::fabs(protocol::dequantize_agent_position(f.agents[0].y, 1.0f) - 10.0f) <= 1.0f / 128.0f);
  CHECK(f.agents[2].heading == protocol::quantize_heading(3.14159265f));
  CHECK(stream.last_stats().added == 3);
}

TEST_CASE("snapshot_builder: an empty view means no agents but all players, sorted by id") {
  Agents a;
  for (std::uint32_t i = 0; i < 50; ++i) a.add(i, static_cast<float>(i), 5.0f);
  std::vector<sim::Player> players(3);
  players[0].id = 9;
  players[0].position = {1.0f, 2.0f};
  players[1].id = 4;
  players[1].position = {3.0f, 4.0f};
  players[1].contacts = 6;
  players[2].id = 7;
  SnapshotWorldState world;
  world.assign(a.view(), players, 1, 0, 1.0f);
  ClientSnapshotStream stream(ClientSnapshotParams{});
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  build_and_decode(stream, world, ViewRect{}, 0, receiver, payload);
  CHECK(receiver.frame().agents.empty());
  CHECK(receiver.header().total_agents == 50);
  const auto& p = receiver.header().players;
  REQUIRE(p.size() == 3);
  CHECK(p[0].id == 4);
  CHECK(p[0].x == 3.0f);
  CHECK(p[0].contacts == 6);
  CHECK(p[1].id == 7);
  CHECK(p[2].id == 9);
}

TEST_CASE("snapshot_builder: unsorted ids; the decoded frame matches a brute-force filter") {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> pos(0.0f, 100.0f);
  Agents a;
  std::vector<std::uint32_t> ids(2000);
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = i * 3 + 1;
  std::shuffle(ids.begin(), ids.end(), rng);
  for (auto id : ids) a.add(id, pos(rng), pos(rng));
  // Inside [28, 62) x [38, 72) at 1/64 cell, away from the edges by more than the quantization.
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    if (a.xs[i] >= 28.01f && a.xs[i] < 61.99f && a.ys[i] >= 38.01f && a.ys[i] < 71.99f) expected.push_back(a.ids[i]);
  }
  std::sort(expected.begin(), expected.end());
  REQUIRE(expected.size() > 100);
  SnapshotWorldState world;
  world.assign(a.view(), {}, 5, 0, 1.0f);
  ClientSnapshotParams params;
  params.margin = 2.0f;
  ClientSnapshotStream stream(params);
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  build_and_decode(stream, world, ViewRect::from_corners(30.0f, 40.0f, 60.0f, 70.0f), 0, receiver, payload);
  std::vector<std::uint32_t> got = frame_ids(receiver.frame());
  for (std::uint32_t id : expected) CHECK(std::binary_search(got.begin(), got.end(), id));
  for (std::uint32_t id : got) {
    const std::size_t i = static_cast<std::size_t>(std::find(a.ids.begin(), a.ids.end(), id) - a.ids.begin());
    CHECK(a.xs[i] >= 27.99f);
    CHECK(a.xs[i] <= 62.01f);
  }
}

TEST_CASE("snapshot_builder: from a World, every agent with its kind; Welcome's kind table from the world's") {
  sim::World w = small_world(300);
  const sim::Swarm& swarm = w.swarm();
  REQUIRE(swarm.size() > 0);
  SnapshotWorldState world;
  world.assign(w);
  CHECK(world.tick == w.tick());
  CHECK(world.players.size() == 1);
  ClientSnapshotStream stream(ClientSnapshotParams{});
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  build_and_decode(stream, world, ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f), 5, receiver, payload);
  const protocol::AgentFrame& f = receiver.frame();
  CHECK(receiver.header().total_agents == swarm.size());
  REQUIRE(f.agents.size() == swarm.size());  // the whole map is in view
  std::size_t seen[3] = {0, 0, 0};
  for (const protocol::AgentState& agent : f.agents) {
    const std::size_t i = swarm.index_of(agent.id);
    REQUIRE(i != sim::Swarm::kNoIndex);
    CHECK(agent.kind == swarm.kinds()[i]);
    CHECK(std::fabs(protocol::dequantize_agent_position(agent.x, 1.0f) - swarm.xs()[i]) <= 1.0f / 128.0f + 1e-4f);
    ++seen[agent.kind < 3 ? agent.kind : 0];
  }
  CHECK(seen[0] > 0);
  CHECK(seen[1] > 0);
  CHECK(seen[2] > 0);
  const std::vector<protocol::KindInfo> infos = server::kind_infos(swarm.kind_table());
  REQUIRE(infos.size() == 3);
  CHECK(infos[2].name == "brute");
  CHECK(infos[2].colour == sim::default_agent_kinds()[2].colour);
}

TEST_CASE("snapshot_builder: UDP baselines are acknowledged frames, TCP's the previous snapshot") {
  sim::World w = small_world(2000);
  const ViewRect all = ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f);
  ClientSnapshotStream stream(ClientSnapshotParams{});
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  SnapshotWorldState world;
  // UDP, nothing acknowledged: every snapshot is full.
  for (int i = 0; i < 3; ++i) {
    w.step(1.0f / 30.0f);
    world.assign(w);
    build_and_decode(stream, world, all, 0, receiver, payload);
    CHECK(receiver.header().baseline_distance == 0);
  }
  CHECK_FALSE(stream.on_ack(protocol::SnapshotAck{4, 0}));  // never sent
  CHECK(stream.on_ack(receiver.ack()));
  w.step(1.0f / 30.0f);
  world.assign(w);
  build_and_decode(stream, world, all, 0, receiver, payload);
  CHECK(receiver.header().baseline_distance == 1);  // against sequence 3, acknowledged
  // TCP: no acks needed, each snapshot is a delta against the one before.
  stream.set_reliable(true);
  for (int i = 0; i < 3; ++i) {
    w.step(1.0f / 30.0f);
    world.assign(w);
    build_and_decode(stream, world, all, 0, receiver, payload);
    if (i > 0) CHECK(receiver.header().baseline_distance == 1);
  }
  // The same tick twice is refused, nothing consumed.
  const std::uint32_t last = stream.last_sequence();
  CHECK_FALSE(stream.build(world, all, 0, payload));
  CHECK(stream.last_sequence() == last);
}

TEST_CASE("snapshot_builder: the budget bounds each snapshot; the client's frame still fills up over TCP") {
  sim::World w = small_world(3000);
  const ViewRect all = ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f);
  ClientSnapshotParams params;
  params.bits_per_second = 64'000;  // 400 bytes per snapshot at 20 Hz
  ClientSnapshotStream stream(params);
  stream.set_reliable(true);
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  SnapshotWorldState world;
  std::size_t largest = 0;
  for (int i = 0; i < 200; ++i) {
    w.step(1.0f / 30.0f);
    world.assign(w);
    build_and_decode(stream, world, all, 0, receiver, payload);
    largest = std::max(largest, payload.size());
  }
  MESSAGE("largest payload " << largest << " bytes; client holds " << receiver.frame().agents.size() << " of "
                             << w.swarm().size());
  CHECK(largest <= 3 * 400);  // two snapshots' worth of bucket plus the header
  CHECK(receiver.frame().agents.size() >= w.swarm().size() * 9 / 10);
}

TEST_CASE("snapshot_builder: clients with the same view share one relevance per tick; others get their own") {
  sim::World w = small_world(2000);
  SnapshotWorldState world;
  world.assign(w);
  std::vector<std::unique_ptr<ClientSnapshotStream>> streams;
  for (int i = 0; i < 5; ++i) streams.push_back(std::make_unique<ClientSnapshotStream>(ClientSnapshotParams{}));
  const ViewRect all = ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f);
  const ViewRect corner = ViewRect::from_corners(0.0f, 0.0f, 16.0f, 16.0f);
  std::vector<std::uint8_t> payload;
  for (int i = 0; i < 4; ++i) REQUIRE(streams[i]->build(world, all, 0, payload));
  CHECK(world.relevances_computed() == 1);
  REQUIRE(streams[4]->build(world, corner, 0, payload));
  CHECK(world.relevances_computed() == 2);
  // Every whole-map client holds the same agents.
  CHECK(streams[0]->last_relevance().tracked == streams[3]->last_relevance().tracked);
  CHECK(streams[4]->last_relevance().tracked < streams[0]->last_relevance().tracked);
  // The next tick starts afresh.
  w.step(1.0f / 30.0f);
  world.assign(w);
  CHECK(world.relevances_computed() == 0);
  streams[0]->prepare(world, all);
  streams[1]->prepare(world, all);
  CHECK(world.relevances_computed() == 1);
}

namespace {

// A horde converging on a player's view (issue 10's 10-minute run, in miniature): 6000 agents
// on a circle of radius 200 around the view's centre walk straight in over 150 snapshots and
// then mill about inside the 40 x 30 view. Snapshots go over UDP, each acknowledged, so every
// one is a delta against a frame of the history. Returns the history's entries allocated after
// the first snapshot with agents in view and after the last, and the agents tracked then.
struct ConvergeResult {
  std::size_t first_allocated = 0, last_allocated = 0, first_tracked = 0, last_tracked = 0;
};

ConvergeResult converge(const ClientSnapshotParams& params) {
  constexpr std::uint32_t kAgents = 6000;
  constexpr float kCx = 256.0f, kCy = 256.0f;
  const ViewRect view = ViewRect::from_corners(kCx - 20.0f, kCy - 15.0f, kCx + 20.0f, kCy + 15.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> angle(kAgents), end_x(kAgents), end_y(kAgents);
  for (std::uint32_t i = 0; i < kAgents; ++i) {
    angle[i] = 6.2831853f * unit(rng);
    end_x[i] = kCx + (unit(rng) - 0.5f) * 36.0f;  // their resting places, inside the view
    end_y[i] = kCy + (unit(rng) - 0.5f) * 26.0f;
  }
  ClientSnapshotStream stream(params);
  protocol::SnapshotReceiver receiver;
  std::vector<std::uint8_t> payload;
  SnapshotWorldState world;
  ConvergeResult r;
  for (std::uint32_t k = 0; k < 300; ++k) {
    const float t = std::min(1.0f, static_cast<float>(k) / 150.0f);
    Agents a;
    for (std::uint32_t i = 0; i < kAgents; ++i) {
      const float sx = kCx + 200.0f * std::cos(angle[i]), sy = kCy + 200.0f * std::sin(angle[i]);
      const float jitter = k >= 150 ? 0.3f * std::sin(0.1f * static_cast<float>(k + i)) : 0.0f;
      a.add(i + 1, sx + (end_x[i] - sx) * t + jitter, sy + (end_y[i] - sy) * t - jitter, angle[i]);
    }
    world.assign(a.view(), {}, k + 1, 0, 1.0f);
    build_and_decode(stream, world, view, 0, receiver, payload);
    REQUIRE(stream.on_ack(receiver.ack()));
    if (r.first_tracked == 0 && stream.last_relevance().tracked > 0) {  // the first agents in view
      r.first_allocated = stream.sender().history_allocated();
      r.first_tracked = stream.last_relevance().tracked;
    }
  }
  r.last_allocated = stream.sender().history_allocated();
  r.last_tracked = stream.last_relevance().tracked;
  CHECK(receiver.frame().agents.size() == kAgents);  // the client ends up holding the whole horde
  return r;
}

}  // namespace

TEST_CASE("snapshot_builder: a horde converging on the view does not grow the client's memory (issue 10)") {
  const ConvergeResult fixed = converge(ClientSnapshotParams{});  // the server's default: kFixed
  MESSAGE("tracked " << fixed.first_tracked << " -> " << fixed.last_tracked << "; history entries "
                     << fixed.first_allocated << " -> " << fixed.last_allocated);
  REQUIRE(fixed.first_tracked > 0);
  CHECK(fixed.last_tracked >= 10 * fixed.first_tracked);
  CHECK(fixed.first_allocated == ClientSnapshotParams{}.history_agents);
  CHECK(fixed.last_allocated == fixed.first_allocated);
  // The same scene with the history on demand grows it as the view fills: what the default avoids.
  ClientSnapshotParams on_demand;
  on_demand.history_pool = protocol::HistoryPool::kOnDemand;
  const ConvergeResult grown = converge(on_demand);
  MESSAGE("on demand: history entries " << grown.first_allocated << " -> " << grown.last_allocated);
  CHECK(grown.first_allocated < 4 * grown.first_tracked + 64);  // a few agents in view
  CHECK(grown.last_allocated >= 16 * 6000);  // most of the ring's frames of the whole horde
}

TEST_CASE("recent deaths: held for the horizon, capped, listed sorted; the horizon covers the snapshot history") {
  server::RecentDeaths deaths(10, 5);
  const sim::AgentDeath a[] = {{30, 1, 0, {}}, {4, 1, 0, {}}};
  const sim::AgentDeath b[] = {{17, 2, 0, {}}};
  deaths.add(100, a);
  deaths.add(105, b);
  std::vector<std::uint32_t> ids;
  deaths.sorted_ids(ids);
  CHECK(ids == std::vector<std::uint32_t>{4, 17, 30});
  deaths.add(110, {});
  CHECK(deaths.size() == 3);  // 10 ticks old: still held
  deaths.add(111, {});
  deaths.sorted_ids(ids);
  CHECK(ids == std::vector<std::uint32_t>{17});
  const sim::AgentDeath many[] = {{1, 0, 0, {}}, {2, 0, 0, {}}, {3, 0, 0, {}}, {5, 0, 0, {}}, {6, 0, 0, {}}};
  deaths.add(112, many);
  CHECK(deaths.size() == 5);  // the cap: 17, the oldest, went first
  deaths.sorted_ids(ids);
  CHECK(ids == std::vector<std::uint32_t>{1, 2, 3, 5, 6});
  // 30 Hz ticks, 20 Hz snapshots: 2 ticks a snapshot, 33 snapshots, twice over.
  CHECK(server::death_horizon_ticks(30, 20) == 132);
  CHECK(server::death_horizon_ticks(60, 60) == 66);
}

namespace {

// 3000 agents spread over a 256-cell square (seeded), one tick.
Agents scattered_agents(std::uint32_t count, float side, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, side);
  Agents a;
  for (std::uint32_t i = 0; i < count; ++i) a.add(i * 3 + 1, u(rng), u(rng));
  return a;
}

// The ids of the agents whose quantized position lies inside `r`.
std::vector<std::uint32_t> ids_inside(const SnapshotWorldState& world, const protocol::QuantizedRect& r) {
  std::vector<std::uint32_t> ids;
  for (std::size_t i = 0; i < world.agents.size(); ++i) {
    const std::int64_t x = world.agents.xs[i], y = world.agents.ys[i];
    if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) ids.push_back(world.agents.ids[i]);
  }
  return ids;
}

// A client's own rectangle: its view grown by the margin, quantized.
protocol::QuantizedRect own_area(const SnapshotWorldState& world, const ViewRect& view) {
  return protocol::quantize_view(view.x0, view.y0, view.x1, view.y1, server::kAoiMarginWorld, world.cell_size);
}

}  // namespace

TEST_CASE("snapshot_builder: 60 views one cell apart share a few relevances; each client still gets its whole view") {
  // Issue 22, item 4: rectangles that differ by a cell must not multiply the shared work.
  const Agents a = scattered_agents(3000, 1024.0f, 11);
  SnapshotWorldState world;
  world.assign(a.view(), {}, 1, 0, 1.0f);
  world.set_map_size(1024, 1024);  // as assign(World) does
  ClientSnapshotParams params;
  params.bits_per_second = 100e6;  // everything in view fits in the first snapshot
  constexpr int kViewers = 60;
  // Whole-map views (as the load test's viewers), viewer v shifted right by v cells; and views
  // inside the map (300 cells a side), shifted alike.
  for (const float side : {1024.0f, 300.0f}) {
    const float at = side == 1024.0f ? 0.0f : 300.0f;
    std::vector<std::unique_ptr<ClientSnapshotStream>> streams;
    std::vector<ViewRect> views;
    for (int v = 0; v < kViewers; ++v) {
      streams.push_back(std::make_unique<ClientSnapshotStream>(params));
      const float x = at + static_cast<float>(v);
      views.push_back(ViewRect::from_corners(x, at, x + side, at + side));
    }
    world.assign(a.view(), {}, 1, 0, 1.0f);
    for (int v = 0; v < kViewers; ++v) streams[v]->prepare(world, views[v]);
    MESSAGE("views of " << side << " cells one cell apart: " << world.relevances_computed() << " relevances");
    // Was 60: one per distinct rectangle. Snapping steps: 128 cells for the whole map clipped
    // to it (every view snaps to the map: 1 relevance), 32 cells for the 308-cell ones (60 cells
    // of shift cross 2 steps per edge: 5 rectangles at most).
    const std::size_t most = side == 1024.0f ? 1 : 5;
    CHECK(world.relevances_computed() <= most);
    std::vector<std::uint8_t> payload;
    for (int v = 0; v < kViewers; ++v) {
      protocol::SnapshotReceiver receiver;
      build_and_decode(*streams[v], world, views[v], 0, receiver, payload);
      const std::vector<std::uint32_t> held = frame_ids(receiver.frame());
      const std::vector<std::uint32_t> own = ids_inside(world, own_area(world, views[v]));
      // None of its own rectangle + margin missing; nothing beyond what sent_area() allows (its
      // own rectangle inside the map: exactly its own agents).
      CHECK_MESSAGE(std::includes(held.begin(), held.end(), own.begin(), own.end()), "viewer " << v);
      CHECK_MESSAGE(held == ids_inside(world, world.sent_area(own_area(world, views[v]))), "viewer " << v);
      if (side == 300.0f) CHECK_MESSAGE(held == own, "viewer " << v);
    }
    CHECK(world.relevances_computed() <= most);  // build() only looked up
  }
}

TEST_CASE("snapshot_builder: views chosen to differ cost at most a bounded number of relevances per tick") {
  // Adversarial rectangles: random corners and sizes (seeded), most of them large, so that no
  // two snap to the same shared rectangle. The tick's relevances stop once they visited
  // kRelevanceWorkPerTick x (agents + tiles) (+ the last one started); later views take the
  // computed relevance that covers them best.
  const Agents a = scattered_agents(3000, 256.0f, 12);
  SnapshotWorldState world;
  world.assign(a.view(), {}, 1, 0, 1.0f);
  world.set_map_size(256, 256);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> corner(-8.0f, 264.0f);
  std::vector<std::unique_ptr<ClientSnapshotStream>> streams;
  std::vector<ViewRect> views;
  for (int v = 0; v < 200; ++v) {
    streams.push_back(std::make_unique<ClientSnapshotStream>(ClientSnapshotParams{}));
    views.push_back(ViewRect::from_corners(corner(rng), corner(rng), corner(rng), corner(rng)));
    streams.back()->prepare(world, views.back());
  }
  const std::size_t unit = world.agents.size() + std::size_t{world.agents.tiles_x} * world.agents.tiles_y;
  MESSAGE("200 adversarial views: " << world.relevances_computed() << " relevances, work " << world.relevance_work()
                                    << " (agents + tiles: " << unit << ")");
  CHECK(world.relevances_computed() <= SnapshotWorldState::kMaxRelevancesPerTick);
  CHECK(world.relevance_work() <= (SnapshotWorldState::kRelevanceWorkPerTick + 1) * unit);
  // The bound did the work: the views snap to more rectangles than were computed.
  std::vector<std::array<std::int64_t, 4>> distinct;
  for (const ViewRect& v : views) {
    const protocol::QuantizedRect r =
        protocol::snap_view(own_area(world, v), world.agents.tile_shift, world.map_bounds);
    distinct.push_back({r.x0, r.y0, r.x1, r.y1});
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  MESSAGE(distinct.size() << " distinct snapped rectangles");
  CHECK(world.relevances_computed() < distinct.size());
  // Every stream still builds; build() computes nothing more.
  const std::size_t computed = world.relevances_computed();
  std::vector<std::uint8_t> payload;
  for (int v = 0; v < 200; ++v) REQUIRE(streams[v]->build(world, views[v], 0, payload));
  CHECK(world.relevances_computed() == computed);
  // The next tick starts afresh.
  world.assign(a.view(), {}, 2, 0, 1.0f);
  CHECK(world.relevances_computed() == 0);
  CHECK(world.relevance_work() == 0);
}

TEST_CASE("snapshot_builder: positions as precise as the view needs: 1/32 cell for a follow camera, 1/8 for a whole 256 map") {
  // 4,000 agents weaving across a 256 x 256 map (curving paths: the velocity predictor misses by
  // a few 1/64 cells, as in a crowd); one client watches it all, one a 60 x 34 window, one the
  // whole map with view precision off.
  Agents a;
  for (std::uint32_t i = 0; i < 4000; ++i) {
    a.add(i + 1, 8.0f + static_cast<float>(i % 80) * 3.0f, 8.0f + static_cast<float>(i / 80) * 4.5f);
  }
  const ViewRect whole = ViewRect::from_corners(0.0f, 0.0f, 256.0f, 256.0f);
  const ViewRect window = ViewRect::from_corners(100.0f, 100.0f, 160.0f, 134.0f);
  ClientSnapshotParams exact_params;
  exact_params.view_precision = false;
  ClientSnapshotStream whole_stream{ClientSnapshotParams{}}, window_stream{ClientSnapshotParams{}}, exact_stream{exact_params};
  protocol::SnapshotReceiver whole_rx, window_rx, exact_rx;
  std::vector<std::uint8_t> payload;
  std::size_t whole_bytes = 0, exact_bytes = 0, whole_entries = 0, exact_entries = 0;
  SnapshotWorldState world;
  for (std::uint32_t tick = 1; tick <= 60; ++tick) {
    for (std::size_t i = 0; i < a.xs.size(); ++i) {
      const float phase = static_cast<float>(i) * 0.37f + static_cast<float>(tick) * 0.21f;
      a.xs[i] += 0.1f * std::cos(phase);  // 3 cells per second, turning
      a.ys[i] += 0.1f * std::sin(phase);
    }
    world.assign(a.view(), {}, tick, 1, 1.0f);
    world.set_map_size(256, 256);
    whole_stream.prepare(world, whole);
    window_stream.prepare(world, window);
    exact_stream.prepare(world, whole);
    build_and_decode(whole_stream, world, whole, 0, whole_rx, payload);
    static_cast<void>(whole_stream.on_ack(whole_rx.ack()));
    if (tick > 20) {  // past the first snapshots, which add the agents
      whole_bytes += payload.size();
      whole_entries += whole_stream.last_stats().updated + whole_stream.last_stats().added;
    }
    build_and_decode(window_stream, world, window, 0, window_rx, payload);
    static_cast<void>(window_stream.on_ack(window_rx.ack()));
    build_and_decode(exact_stream, world, whole, 0, exact_rx, payload);
    static_cast<void>(exact_stream.on_ack(exact_rx.ack()));
    if (tick > 20) {
      exact_bytes += payload.size();
      exact_entries += exact_stream.last_stats().updated + exact_stream.last_stats().added;
    }
    CHECK(whole_rx.header().precision_shift == 3);
    CHECK(window_rx.header().precision_shift == 1);  // 60 cells and the margin: 64..128
    CHECK(exact_rx.header().precision_shift == 0);
    // Every agent updated this tick is within half a step (4/64 cell) of where it is.
    for (const protocol::AgentState& s : whole_rx.frame().agents) {
      if (s.tick != tick) continue;
      CHECK(std::fabs(protocol::dequantize_agent_position(s.x, 1.0f) - a.xs[s.id - 1]) <= 4.0f / 64.0f + 1.0f / 128.0f);
      CHECK(std::fabs(protocol::dequantize_agent_position(s.y, 1.0f) - a.ys[s.id - 1]) <= 4.0f / 64.0f + 1.0f / 128.0f);
    }
    for (const protocol::AgentState& s : window_rx.frame().agents) {
      if (s.tick != tick) continue;
      CHECK(std::fabs(protocol::dequantize_agent_position(s.x, 1.0f) - a.xs[s.id - 1]) <= 1.0f / 64.0f + 1.0f / 128.0f);
      CHECK(std::fabs(protocol::dequantize_agent_position(s.y, 1.0f) - a.ys[s.id - 1]) <= 1.0f / 64.0f + 1.0f / 128.0f);
    }
    for (const protocol::AgentState& s : exact_rx.frame().agents) {
      if (s.tick != tick) continue;
      CHECK(std::fabs(protocol::dequantize_agent_position(s.x, 1.0f) - a.xs[s.id - 1]) <= 1.0f / 128.0f);
      CHECK(std::fabs(protocol::dequantize_agent_position(s.y, 1.0f) - a.ys[s.id - 1]) <= 1.0f / 128.0f);
    }
  }
  const double whole_per = static_cast<double>(whole_bytes) / static_cast<double>(std::max<std::size_t>(whole_entries, 1));
  const double exact_per = static_cast<double>(exact_bytes) / static_cast<double>(std::max<std::size_t>(exact_entries, 1));
  INFO("bytes per entry: whole-map view " << whole_per << " (" << whole_entries << " entries), exact " << exact_per
                                          << " (" << exact_entries << ")");
  CHECK(whole_per < 0.9 * exact_per);
}
