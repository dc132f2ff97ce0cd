// C6. Player unreachable (shut in a room): one integration per goal change whatever the agent
// count; cells outside marked unreachable; agents take a defined fallback (hold: no move, heading
// kept, never NaN); when a wall of the room is removed at run time they re-route after the next
// rebuild.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr const char* kMap =
    "##########\n"
    "#A.......#\n"
    "#..####..#\n"
    "#..#P.#..#\n"
    "#..####..#\n"
    "#........#\n"
    "##########\n";

/// The scenario's walled room (cells (3..6, 2..4), player cells (4,3) and (5,3)) inside a
/// `side` x `side` field with a wall round it: with 10000 agents the scenario's own 28 outside
/// cells would hold 350 agents each, and the test would time the neighbour search instead of
/// counting integrations.
GridMap room_in_field(std::int32_t side) {
  GridMap map(side, side);
  for (std::int32_t i = 0; i < side; ++i) {
    map.set_cost(i, 0, kBlockedCost);
    map.set_cost(i, side - 1, kBlockedCost);
    map.set_cost(0, i, kBlockedCost);
    map.set_cost(side - 1, i, kBlockedCost);
  }
  for (std::int32_t x = 3; x <= 6; ++x) {
    map.set_cost(x, 2, kBlockedCost);
    map.set_cost(x, 4, kBlockedCost);
  }
  map.set_cost(3, 3, kBlockedCost);
  map.set_cost(6, 3, kBlockedCost);
  return map;
}

/// Runs a fixed script of goal changes (the player steps between the room's two cells every
/// other tick) in a world with `agents` agents spread outside the room, and returns the world's
/// rebuild count after each tick.
std::vector<std::uint64_t> rebuilds_for(const GridMap& map, std::size_t agents, int ticks) {
  WorldParams params;
  params.max_agents = static_cast<std::uint32_t>(agents);
  World world(map, params);
  const std::uint32_t player = world.add_player(map.cell_center({4, 3}));
  // Agents on a lattice over the field outside the room (the spawner would put them in the
  // room: it prefers cells that can reach a player).
  const auto per_row = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(agents))));
  const float step = static_cast<float>(map.width() - 4) / static_cast<float>(per_row);
  for (std::size_t i = 0; i < agents; ++i) {
    const Vec2 p{2.0f + step * (0.5f + static_cast<float>(i % per_row)),
                 2.0f + step * (0.5f + static_cast<float>(i / per_row))};
    REQUIRE(world.swarm_mutable().add(p) != Swarm::kInvalidAgent);
  }
  std::vector<std::uint64_t> counts;
  for (int t = 0; t < ticks; ++t) {
    if (t % 2 == 1) {
      const CellCoord c = world.map().world_to_cell(world.find_player(player)->position);
      REQUIRE(world.teleport_player(player, map.cell_center({c.x == 4 ? 5 : 4, 3})));
    }
    world.step(kDt);
    counts.push_back(world.rebuild_count());
    REQUIRE(!world.fields().integration().reachable(1, 1));  // still shut in
  }
  REQUIRE(all_finite(world.swarm()));
  REQUIRE(agents_in_walls(world.map(), world.swarm()) == 0);
  return counts;
}

}  // namespace

TEST_CASE("C6: one integration per goal change, whatever the agent count") {
  const GridMap map = room_in_field(120);
  constexpr int kTicks = 8;  // goal changes on ticks 1, 3, 5, 7 plus the first build
  const std::vector<std::uint64_t> one = rebuilds_for(map, 1, kTicks);
  const std::vector<std::uint64_t> many = rebuilds_for(map, 10000, kTicks);
  MESSAGE("C6: rebuilds after each tick with 1 agent and with 10000 agents: " << one.back() << " / " << many.back());
  CHECK(one == many);
  // The first build, then one per change.
  CHECK(one.back() == 1 + kTicks / 2);
}

TEST_CASE("C6: outside the room is unreachable; agents hold without NaN, then re-route when a wall opens") {
  const Scene scene(kMap);
  const CellCoord start = scene.one('A');
  const CellCoord room = scene.one('P');
  World world(scene.map, WorldParams{});
  const std::uint32_t player = world.add_player(scene.map.cell_center(room));
  constexpr float kHeading = 0.7f;
  const std::uint32_t a = world.swarm_mutable().add(scene.map.cell_center(start), kHeading);
  // A second agent right outside the room's east wall.
  const std::uint32_t b = world.swarm_mutable().add(scene.map.cell_center({7, 3}), -2.0f);
  world.step(kDt);
  REQUIRE(world.rebuild_count() == 1);

  // Every walkable cell outside the room is unreachable; the two room cells are reachable.
  const IntegrationField& field = world.fields().integration();
  int outside = 0;
  for (std::int32_t y = 0; y < scene.map.height(); ++y) {
    for (std::int32_t x = 0; x < scene.map.width(); ++x) {
      if (!scene.map.walkable(x, y)) continue;
      const bool in_room = y == 3 && (x == 4 || x == 5);
      CAPTURE(x);
      CAPTURE(y);
      CHECK(field.reachable(x, y) == in_room);
      if (in_room) continue;
      ++outside;
      CHECK(world.fields().flow().at(x, y) == FlowDirection::kNone);
    }
  }
  CHECK(outside == 28);

  // Fallback: hold. Position, heading and zero velocity exactly kept; never NaN.
  const Vec2 a0 = position_of(world.swarm(), a);
  for (int t = 0; t < 60; ++t) {
    world.step(kDt);
    REQUIRE(all_finite(world.swarm()));
    REQUIRE(agents_in_walls(world.map(), world.swarm()) == 0);
  }
  const std::size_t ia = world.swarm().index_of(a);
  CHECK(position_of(world.swarm(), a) == a0);
  CHECK(world.swarm().headings()[ia] == kHeading);
  CHECK(velocity_of(world.swarm(), a) == Vec2{});
  const Vec2 vb = velocity_of(world.swarm(), b);
  CHECK(length(vb) < 1e-3f);  // at rest too (pressed toward the room at most)
  CHECK(world.rebuild_count() == 1);  // nothing changed: no rebuild

  // Remove the room's west wall (3,3): exactly one rebuild on the next tick, and then A walks in.
  world.set_cell_cost({3, 3}, kDefaultCost);
  world.step(kDt);
  CHECK(world.rebuild_count() == 2);
  REQUIRE(world.fields().integration().reachable(start.x, start.y));
  const double optimal = world.fields().integration().cost_to_goal(start.x, start.y);
  const double optimal_ticks = ticks_for(optimal, world.params().swarm.max_speed);
  int arrival = -1;
  for (int t = 2; t <= static_cast<int>(3.0 * optimal_ticks) && arrival < 0; ++t) {
    world.step(kDt);
    REQUIRE(all_finite(world.swarm()));
    if (arrived_at_player(world, a, player)) arrival = t;
  }
  MESSAGE("C6: after the wall opened A reached the player on tick " << arrival << " (optimal " << optimal_ticks
                                                                            << " ticks)");
  CHECK(arrival > 0);
  CHECK(static_cast<double>(arrival) <= 1.5 * optimal_ticks);
  CHECK(world.rebuild_count() == 2);
}
