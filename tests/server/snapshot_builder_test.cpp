#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "swarmfield/server/snapshot_builder.hpp"
#include "swarmfield/sim/map/city_generator.hpp"

using namespace swarmfield;
using server::AgentArrays;
using server::SnapshotMeta;
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

}  // namespace

TEST_CASE("snapshot_builder: only agents inside the view rectangle + margin, sorted by id") {
  Agents a;
  a.add(1, 10.0f, 10.0f);
  a.add(2, 50.0f, 50.0f);   // far outside
  a.add(3, 21.5f, 10.0f);   // outside the view, inside the 2-unit margin
  a.add(4, 22.5f, 10.0f);   // outside the margin
  a.add(5, 0.0f, 0.0f, 3.14159265f);  // exactly on the view corner
  const ViewRect view = ViewRect::from_corners(20.0f, 20.0f, 0.0f, 0.0f);  // corners in any order
  SnapshotMeta meta;
  meta.tick = 77;
  meta.rebuilds = 3;
  meta.echo_client_time_us = 123456789;
  protocol::Snapshot snap;
  std::vector<std::uint32_t> scratch;
  server::build_snapshot(a.view(), {}, view, 2.0f, meta, 1000, snap, scratch);
  CHECK(snap.tick == 77);
  CHECK(snap.rebuilds == 3);
  CHECK(snap.echo_client_time_us == 123456789);
  CHECK(snap.total_agents == 5);
  CHECK(snap.agents.ids == std::vector<std::uint32_t>{1, 3, 5});
  REQUIRE(snap.agents.xs.size() == 3);
  REQUIRE(snap.agents.ys.size() == 3);
  REQUIRE(snap.agents.headings.size() == 3);
  CHECK(snap.agents.xs[0] == protocol::quantize_position(10.0f));
  CHECK(snap.agents.xs[1] == protocol::quantize_position(21.5f));
  CHECK(snap.agents.headings[2] == protocol::quantize_heading(3.14159265f));
}

TEST_CASE("snapshot_builder: an empty view means no agents but all players") {
  Agents a;
  for (std::uint32_t i = 0; i < 50; ++i) a.add(i, static_cast<float>(i), 5.0f);
  std::vector<sim::Player> players(3);
  players[0].id = 9;
  players[0].position = {1.0f, 2.0f};
  players[1].id = 4;
  players[1].position = {3.0f, 4.0f};
  players[1].contacts = 6;
  players[2].id = 7;
  protocol::Snapshot snap;
  std::vector<std::uint32_t> scratch;
  server::build_snapshot(a.view(), players, ViewRect{}, 4.0f, SnapshotMeta{}, 1000, snap, scratch);
  CHECK(snap.agents.ids.empty());
  CHECK(snap.total_agents == 50);
  REQUIRE(snap.players.size() == 3);
  CHECK(snap.players[0].id == 4);  // sorted by id
  CHECK(snap.players[0].x == 3.0f);
  CHECK(snap.players[0].contacts == 6);
  CHECK(snap.players[1].id == 7);
  CHECK(snap.players[2].id == 9);
}

TEST_CASE("snapshot_builder: unsorted ids are sorted, the cap keeps the lowest ids, results match a brute force") {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> pos(0.0f, 100.0f);
  Agents a;
  std::vector<std::uint32_t> ids(2000);
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = i * 3 + 1;
  std::shuffle(ids.begin(), ids.end(), rng);
  for (auto id : ids) a.add(id, pos(rng), pos(rng));
  const ViewRect view = ViewRect::from_corners(30.0f, 40.0f, 60.0f, 70.0f);
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    if (a.xs[i] >= 28.0f && a.xs[i] <= 62.0f && a.ys[i] >= 38.0f && a.ys[i] <= 72.0f) expected.push_back(a.ids[i]);
  }
  std::sort(expected.begin(), expected.end());
  REQUIRE(expected.size() > 100);

  protocol::Snapshot snap;
  std::vector<std::uint32_t> scratch;
  server::build_snapshot(a.view(), {}, view, 2.0f, SnapshotMeta{}, 1000000, snap, scratch);
  CHECK(snap.agents.ids == expected);

  server::build_snapshot(a.view(), {}, view, 2.0f, SnapshotMeta{}, 10, snap, scratch);
  CHECK(snap.agents.ids == std::vector<std::uint32_t>(expected.begin(), expected.begin() + 10));
  CHECK(snap.agents.xs.size() == 10);
}

TEST_CASE("snapshot_builder: from a World (agents spawned on the first step)") {
  sim::CityParams city;
  city.width = 64;
  city.height = 64;
  sim::WorldParams params;
  params.spawner.initial_agents = 200;
  sim::World world(sim::generate_city(city), params);
  world.add_player({32.0f, 32.0f});
  world.step(1.0f / 30.0f);
  REQUIRE(world.swarm().size() > 0);
  protocol::Snapshot snap;
  std::vector<std::uint32_t> scratch;
  server::build_snapshot(world, ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f), 5, 100000, snap, scratch);
  CHECK(snap.total_agents == world.swarm().size());
  CHECK(snap.agents.ids.size() == world.swarm().size());  // the whole map is in view
  CHECK(std::is_sorted(snap.agents.ids.begin(), snap.agents.ids.end()));
  CHECK(snap.players.size() == 1);
  CHECK(snap.tick == world.tick());
  CHECK(snap.echo_client_time_us == 5);
  // A small window sees a strict subset.
  server::build_snapshot(world, ViewRect::from_corners(0.0f, 0.0f, 8.0f, 8.0f), 5, 100000, snap, scratch);
  CHECK(snap.agents.ids.size() < world.swarm().size());
}

TEST_CASE("snapshot_builder: each agent's kind travels with it; Welcome's kind table from the world's") {
  sim::CityParams city;
  city.width = 64;
  city.height = 64;
  sim::WorldParams params;
  params.spawner.initial_agents = 300;
  params.kinds = sim::default_agent_kinds();
  sim::World world(sim::generate_city(city), params);
  world.add_player({32.0f, 32.0f});
  world.step(1.0f / 30.0f);
  protocol::Snapshot snap;
  std::vector<std::uint32_t> scratch;
  server::build_snapshot(world, ViewRect::from_corners(0.0f, 0.0f, 64.0f, 64.0f), 5, 100000, snap, scratch);
  const sim::Swarm& swarm = world.swarm();
  REQUIRE(snap.agents.kinds.size() == snap.agents.ids.size());
  std::size_t seen[3] = {0, 0, 0};
  for (std::size_t k = 0; k < snap.agents.ids.size(); ++k) {
    const std::size_t i = swarm.index_of(snap.agents.ids[k]);
    REQUIRE(i != sim::Swarm::kNoIndex);
    CHECK(snap.agents.kinds[k] == swarm.kinds()[i]);
    ++seen[snap.agents.kinds[k]];
  }
  CHECK(seen[0] > 0);
  CHECK(seen[1] > 0);
  CHECK(seen[2] > 0);

  const std::vector<protocol::KindInfo> infos = server::kind_infos(swarm.kind_table());
  REQUIRE(infos.size() == 3);
  CHECK(infos[2].name == "brute");
  CHECK(infos[2].radius == params.kinds[2].radius);
  CHECK(infos[2].colour == params.kinds[2].colour);
  // Arrays without kinds give a snapshot without kinds (all kind 0).
  Agents a;
  a.add(1, 1.0f, 1.0f);
  server::build_snapshot(a.view(), {}, ViewRect::from_corners(0.0f, 0.0f, 8.0f, 8.0f), 0.0f, {}, 10, snap, scratch);
  CHECK(snap.agents.ids.size() == 1);
  CHECK(snap.agents.kinds.empty());
}
