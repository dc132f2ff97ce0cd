// Swarm: repair, coincident spawn (C3), agent in a wall (C7), unreachable goal
// (C6), and long runs on a real street map (no NaN, never in a wall, closing in on the goal).
#include "swarmfield/sim/crowd/swarm.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

namespace {

constexpr float kDt = 1.0f / 30.0f;

GridMap load_map(const std::string& relative) {
  GridMap map;
  MapError error;
  const std::string path = std::string(SWARMFIELD_MAPS_DIR) + "/" + relative;
  REQUIRE_MESSAGE(swarmfield::io::read_map_file(path, map, error), error.to_string());
  return map;
}

float min_pairwise_distance(const Swarm& s) {
  float best = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      best = std::min(best, std::hypot(s.xs()[i] - s.xs()[j], s.ys()[i] - s.ys()[j]));
    }
  }
  return best;
}

/// Bit patterns of every agent's state, to compare runs exactly.
std::vector<std::uint32_t> state_bits(const Swarm& s) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    out.push_back(s.ids()[i]);
    out.push_back(std::bit_cast<std::uint32_t>(s.xs()[i]));
    out.push_back(std::bit_cast<std::uint32_t>(s.ys()[i]));
    out.push_back(std::bit_cast<std::uint32_t>(s.headings()[i]));
  }
  return out;
}

}  // namespace

TEST_CASE("C3: agents spawned on one point spread without NaN, within the speed limit, and replay") {
  // Open 20 x 20 map, 50 agents at the bit-identical point (10.5, 10.5), player at (18, 10).
  GridMap map(20, 20);
  NavigationFields nav;
  const CellCoord goal[1] = {{18, 10}};
  REQUIRE(nav.update(map, goal));
  const SwarmParams params;  // defaults: radius 0.35, max_speed 3
  const float limit = 1.05f * params.max_speed * kDt;

  auto run = [&](std::vector<std::vector<std::uint32_t>>& trace, std::vector<float>& min_dist) {
    Swarm swarm(params, 64);
    swarm.set_environment(map, {});
    for (int i = 0; i < 50; ++i) REQUIRE(swarm.add({10.5f, 10.5f}) != Swarm::kInvalidAgent);
    float max_step = 0.0f;
    for (int t = 1; t <= 90; ++t) {
      // Positions by id (step() reorders agents).
      std::vector<Vec2> before(swarm.size());
      for (std::size_t i = 0; i < swarm.size(); ++i) before[swarm.ids()[i]] = {swarm.xs()[i], swarm.ys()[i]};
      swarm.step(map, nav.flow(), nav.integration(), kDt);
      REQUIRE(all_finite(swarm));
      REQUIRE(agents_in_walls(map, swarm) == 0);
      for (std::size_t i = 0; i < swarm.size(); ++i) {
        const Vec2 b = before[swarm.ids()[i]];
        max_step = std::max(max_step, std::hypot(swarm.xs()[i] - b.x, swarm.ys()[i] - b.y));
      }
      trace.push_back(state_bits(swarm));
      min_dist.push_back(min_pairwise_distance(swarm));
    }
    CHECK(max_step <= limit);
    CHECK(max_step > 0.5f * limit);  // they do move
  };
  std::vector<std::vector<std::uint32_t>> a, b;
  std::vector<float> da, db;
  run(a, da);
  run(b, db);
  CHECK(a == b);  // bit-identical replay

  const float diameter = 2.0f * params.radius;
  MESSAGE("min pairwise distance / diameter at ticks 1, 20, 40, 60, 80: " << da[0] / diameter << " "
                                                                          << da[19] / diameter << " " << da[39] / diameter
                                                                          << " " << da[59] / diameter << " "
                                                                          << da[79] / diameter);
  CHECK(da[0] > 0.0f);                      // the stack is broken up on the first tick
  CHECK(da[19] >= 0.4f * diameter);         // spreading fast ...
  CHECK(da[59] >= 0.7f * diameter);         // ... and keeps spreading while chasing the player
  CHECK(da[19] > 5.0f * da[0]);
}

TEST_CASE("coincident pair splits by id, deterministically") {
  GridMap map(10, 10);
  NavigationFields nav;
  const CellCoord goal[1] = {{5, 5}};
  REQUIRE(nav.update(map, goal));
  Swarm s(SwarmParams{}, 4);
  s.set_environment(map, {});
  s.add({2.5f, 2.5f});
  s.add({2.5f, 2.5f});
  s.step(map, nav.flow(), nav.integration(), kDt);
  REQUIRE(all_finite(s));
  CHECK(std::hypot(s.xs()[0] - s.xs()[1], s.ys()[0] - s.ys()[1]) > 0.01f);
}

TEST_CASE("C7: an agent set inside a wall is moved out that tick and has a valid direction next") {
  AsciiScene scene(
      "############\n"
      "#..........#\n"
      "#....##....#\n"
      "#....##...P#\n"
      "#..........#\n"
      "############\n");
  const CellCoord player = scene.cells_of('P').at(0);
  NavigationFields nav;
  const CellCoord goal[1] = {player};
  REQUIRE(nav.update(scene.map, goal));
  Swarm s(SwarmParams{}, 8);
  s.set_environment(scene.map, {});
  s.add({2.5f, 1.5f});
  s.add({2.5f, 4.5f});
  s.set_position(0, {5.99f, 2.5f});  // x.99 of the blocked pillar cell (5, 2)
  s.set_position(1, {0.5f, 0.5f});   // in the outer wall corner
  REQUIRE_FALSE(scene.map.walkable_at({5.99f, 2.5f}));

  s.step(scene.map, nav.flow(), nav.integration(), kDt);
  REQUIRE(all_finite(s));
  CHECK(agents_in_walls(scene.map, s) == 0);
  // Moved to the nearest free cell: (5,1) above or (4,2) west of the pillar cell. (step()
  // reorders agents, so look the agent up by id.)
  const std::size_t a0 = s.index_of(0);
  REQUIRE(a0 != Swarm::kNoIndex);
  const CellCoord c0 = scene.map.world_to_cell({s.xs()[a0], s.ys()[a0]});
  CHECK(std::abs(c0.x - 5) + std::abs(c0.y - 2) == 1);
  CHECK(std::hypot(s.xs()[a0] - 5.99f, s.ys()[a0] - 2.5f) < 1.0f);

  s.step(scene.map, nav.flow(), nav.integration(), kDt);
  REQUIRE(all_finite(s));
  CHECK(agents_in_walls(scene.map, s) == 0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const float speed = std::hypot(s.vxs()[i], s.vys()[i]);
    CAPTURE(i);
    CHECK(speed > 0.5f * s.params().max_speed);  // moving along the flow, not frozen
    CHECK(speed <= s.params().max_speed * 1.001f);
  }
}

TEST_CASE("C6: agents that cannot reach the player hold without NaN, and re-route when a wall opens") {
  AsciiScene scene(
      "##########\n"
      "#A.......#\n"
      "#..####..#\n"
      "#..#P.#..#\n"
      "#..####..#\n"
      "#........#\n"
      "##########\n");
  GridMap map = scene.map;
  const CellCoord player = scene.cells_of('P').at(0);
  NavigationFields nav;
  const CellCoord goal[1] = {player};
  REQUIRE(nav.update(map, goal));
  Swarm s(SwarmParams{}, 8);
  s.set_environment(map, {});
  s.add({1.5f, 1.5f});
  s.add({8.5f, 5.5f});
  for (int t = 0; t < 30; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  REQUIRE(all_finite(s));
  std::size_t a = s.index_of(0);
  CHECK(s.xs()[a] == doctest::Approx(1.5f));  // held
  CHECK(s.ys()[a] == doctest::Approx(1.5f));
  CHECK(s.vxs()[a] == 0.0f);

  // Open the room's west wall (3,3): one rebuild, then the agents walk in.
  map.set_cost(3, 3, kDefaultCost);
  CHECK(nav.update(map, goal));
  const double before = nav.integration().cost_to_goal(1, 1);
  REQUIRE(std::isfinite(before));
  for (int t = 0; t < 120; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  REQUIRE(all_finite(s));
  a = s.index_of(0);
  const CellCoord now = map.world_to_cell({s.xs()[a], s.ys()[a]});
  CHECK(nav.integration().cost_to_goal(now.x, now.y) < before - 2.0);
}

TEST_CASE("an agent in an unreachable pocket next to reachable cells stays valid") {
  // (5,1) touches the rest only diagonally past two blocked cells: unreachable, and walls keep
  // the agent from cutting that corner; it steers at the reachable cell but must stay put.
  AsciiScene scene(
      "#######\n"
      "#...#.#\n"
      "#....##\n"
      "#....P#\n"
      "#######\n");
  NavigationFields nav;
  const CellCoord goal[1] = {scene.cells_of('P').at(0)};
  REQUIRE(nav.update(scene.map, goal));
  REQUIRE_FALSE(nav.integration().reachable(5, 1));
  REQUIRE(nav.integration().reachable(4, 2));
  Swarm s(SwarmParams{}, 2);
  s.set_environment(scene.map, {});
  s.add({5.5f, 1.5f});
  for (int t = 0; t < 30; ++t) {
    s.step(scene.map, nav.flow(), nav.integration(), kDt);
    REQUIRE(all_finite(s));
    REQUIRE(scene.map.world_to_cell({s.xs()[0], s.ys()[0]}) == CellCoord{5, 1});
  }
  CHECK(wall_overlap(scene.map, {s.xs()[0], s.ys()[0]}, s.params().radius) <= 1e-4f);
}

TEST_CASE("an agent on the goal cell holds") {
  GridMap map(10, 10);
  NavigationFields nav;
  const CellCoord goal[1] = {{5, 5}};
  REQUIRE(nav.update(map, goal));
  Swarm s(SwarmParams{}, 2);
  s.set_environment(map, {});
  s.add({5.3f, 5.6f}, 1.0f);
  for (int t = 0; t < 10; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  CHECK(s.xs()[0] == 5.3f);
  CHECK(s.ys()[0] == 5.6f);
  CHECK(s.headings()[0] == 1.0f);
}

TEST_CASE("swarm on Boston_0_256: never NaN, never in a wall, closes in on a static player") {
  const GridMap map = load_map("street/Boston_0_256.map");
  const std::uint64_t seed = test_seed(4242);
  SplitMix rng{seed};
  // The player: the walkable cell nearest the map centre.
  const CellCoord player = map.world_to_cell(move_out_of_walls(map, {128.0f, 128.0f}, 0.4f));
  NavigationFields nav;
  const CellCoord goal[1] = {player};
  REQUIRE(nav.update(map, goal));
  const IntegrationField& field = nav.integration();

  SwarmParams params;
  Swarm s(params, 3000);
  s.set_environment(map, {});
  // Agents on random reachable cells within ~60 cells of the player.
  while (s.size() < 2000) {
    const std::int32_t x = player.x - 60 + rng.below(121), y = player.y - 60 + rng.below(121);
    if (!field.reachable(x, y)) continue;
    s.add({static_cast<float>(x) + rng.uniform(0.36f, 0.64f), static_cast<float>(y) + rng.uniform(0.36f, 0.64f)},
          rng.uniform(-3.0f, 3.0f));
  }
  auto mean_cost = [&] {
    double sum = 0.0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const CellCoord c = map.world_to_cell({s.xs()[i], s.ys()[i]});
      sum += field.cost_to_goal(c.x, c.y);
    }
    return sum / static_cast<double>(s.size());
  };
  auto mean_distance = [&] {
    double sum = 0.0;
    const Vec2 p = map.cell_center(player);
    for (std::size_t i = 0; i < s.size(); ++i) sum += std::hypot(s.xs()[i] - p.x, s.ys()[i] - p.y);
    return sum / static_cast<double>(s.size());
  };
  const double cost0 = mean_cost(), dist0 = mean_distance();
  float worst_overlap = 0.0f;
  for (int t = 0; t < 300; ++t) {
    s.step(map, nav.flow(), nav.integration(), kDt);
    REQUIRE(all_finite(s));
    REQUIRE(agents_in_walls(map, s) == 0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      worst_overlap = std::max(worst_overlap, wall_overlap(map, {s.xs()[i], s.ys()[i]}, params.radius));
    }
  }
  const double cost1 = mean_cost(), dist1 = mean_distance();
  MESSAGE("mean path cost " << cost0 << " -> " << cost1 << ", mean distance " << dist0 << " -> " << dist1
                            << ", worst disc/wall overlap " << worst_overlap);
  CHECK(worst_overlap <= 1e-3f);
  // 10 s at 3 cells/s: without crowding the mean would fall by 30; the crowd converging on one
  // cell queues in the streets (measured ~59 -> ~39 with no agent stuck on a wall).
  CHECK(cost1 < 0.75 * cost0);
  CHECK(dist1 < 0.8 * dist0);
}

TEST_CASE("swarm capacity, bad parameters, bad dt and non-finite positions") {
  GridMap map(10, 10);
  NavigationFields nav;
  const CellCoord goal[1] = {{8, 8}};
  REQUIRE(nav.update(map, goal));
  SwarmParams bad;
  bad.radius = std::nanf("");
  bad.max_speed = -1.0f;
  bad.separation_radius = 0.0f;
  bad.flow_weight = std::numeric_limits<float>::infinity();
  bad.overlap_stiffness = std::nanf("");
  bad.contact_stiffness = -3.0f;
  bad.max_turn_rate = std::nanf("");
  Swarm s(bad, 3);
  s.set_environment(map, {});
  CHECK(s.add({1.5f, 1.5f}) == 0);
  CHECK(s.add({std::nanf(""), 1.0f}) == 1);
  CHECK(s.add({1.5f, 1.5f}) == 2);
  CHECK(s.add({1.5f, 1.5f}) == Swarm::kInvalidAgent);  // at capacity
  const std::vector<std::uint32_t> before = state_bits(s);
  s.step(map, nav.flow(), nav.integration(), 0.0f);
  s.step(map, nav.flow(), nav.integration(), std::nanf(""));
  CHECK(state_bits(s) == before);  // bad dt: no-op
  for (int t = 0; t < 20; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  CHECK(all_finite(s));
  CHECK(agents_in_walls(map, s) == 0);
  s.clear();
  CHECK(s.size() == 0);
  CHECK(s.add({1.5f, 1.5f}) == 3);  // ids keep counting

  Swarm none;  // default-constructed: capacity 0
  CHECK(none.add({1.0f, 1.0f}) == Swarm::kInvalidAgent);
  none.step(map, nav.flow(), kDt);
}

TEST_CASE("remove_agents: the others keep their order, state and ids; a bad list stops where it goes wrong") {
  GridMap map(40, 40);
  NavigationFields nav;
  const CellCoord goal[1] = {{20, 20}};
  REQUIRE(nav.update(map, goal));
  Swarm s(SwarmParams{}, 16);
  s.set_environment(map, {});
  std::vector<AgentKind> kinds = default_agent_kinds();
  REQUIRE(s.set_kinds(kinds));
  for (int i = 0; i < 10; ++i) {
    REQUIRE(s.add({2.5f + 3.0f * static_cast<float>(i), 5.5f + static_cast<float>(i % 3)}, 0.1f * static_cast<float>(i),
                  static_cast<std::uint8_t>(i % 3)) == static_cast<std::uint32_t>(i));
  }
  for (int t = 0; t < 5; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  struct Row {
    std::uint32_t id;
    float x, y, vx, vy, h;
    std::uint8_t kind;
    bool operator==(const Row&) const = default;
  };
  const auto rows = [&] {
    std::vector<Row> out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      out.push_back({s.ids()[i], s.xs()[i], s.ys()[i], s.vxs()[i], s.vys()[i], s.headings()[i], s.kinds()[i]});
    }
    return out;
  };
  std::vector<Row> expect = rows();
  const std::size_t dead[] = {1, 4, 9};
  CHECK(s.remove_agents(dead) == 3);
  expect.erase(expect.begin() + 9);
  expect.erase(expect.begin() + 4);
  expect.erase(expect.begin() + 1);
  CHECK(rows() == expect);
  std::uint32_t per_kind[3] = {};
  for (const Row& r : expect) ++per_kind[r.kind];
  for (std::uint8_t k = 0; k < 3; ++k) CHECK(s.kind_count(k) == per_kind[k]);
  // Out of order: only the first is removed; out of range or empty: nothing.
  const std::size_t unordered[] = {3, 2};
  CHECK(s.remove_agents(unordered) == 1);
  expect.erase(expect.begin() + 3);
  CHECK(rows() == expect);
  const std::size_t past[] = {100};
  CHECK(s.remove_agents(past) == 0);
  CHECK(s.remove_agents({}) == 0);
  CHECK(rows() == expect);
  // The swarm steps on, and a new agent gets a new id.
  for (int t = 0; t < 5; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  CHECK(s.size() == 6);
  CHECK(all_finite(s));
  CHECK(s.add({10.5f, 10.5f}) == 10);
}

TEST_CASE("step reorders agents spatially but ids follow them") {
  GridMap map(40, 40);
  NavigationFields nav;
  const CellCoord goal[1] = {{20, 20}};
  REQUIRE(nav.update(map, goal));
  Swarm s(SwarmParams{}, 8);
  s.set_environment(map, {});
  // Added bottom-right first, top-left last: the hash order is the reverse.
  s.add({35.5f, 35.5f});
  s.add({20.5f, 30.5f});
  s.add({4.5f, 4.5f});
  s.step(map, nav.flow(), nav.integration(), kDt);
  CHECK(s.ids()[0] == 2);
  CHECK(s.index_of(2) == 0);
  CHECK(s.index_of(0) == 2);
  CHECK(s.index_of(77) == Swarm::kNoIndex);
  // Each id moved a single step from where it was added.
  CHECK(std::hypot(s.xs()[s.index_of(0)] - 35.5f, s.ys()[s.index_of(0)] - 35.5f) < 0.11f);
  CHECK(std::hypot(s.xs()[s.index_of(2)] - 4.5f, s.ys()[s.index_of(2)] - 4.5f) < 0.11f);
}

TEST_CASE("obstacles push agents away and are clamped") {
  GridMap map(20, 10);
  NavigationFields nav;
  const CellCoord goal[1] = {{18, 5}};
  REQUIRE(nav.update(map, goal));
  const Obstacle props[1] = {{{10.0f, 5.5f}, 1.0f}};
  Swarm with(SwarmParams{}, 2), without(SwarmParams{}, 2);
  with.set_environment(map, props);
  without.set_environment(map, {});
  with.add({8.5f, 5.4f});
  without.add({8.5f, 5.4f});
  float closest = std::numeric_limits<float>::infinity();
  for (int t = 0; t < 60; ++t) {
    with.step(map, nav.flow(), nav.integration(), kDt);
    without.step(map, nav.flow(), nav.integration(), kDt);
    REQUIRE(all_finite(with));
    closest = std::min(closest, std::hypot(with.xs()[0] - 10.0f, with.ys()[0] - 5.5f));
  }
  CHECK(closest > 0.8f);  // steered round the prop (straight through it passes 0.1 from its centre)
  CHECK(with.ys()[0] != without.ys()[0]);
}

namespace {

/// Largest overlap of two agents' discs as a fraction of their contact distance (r_i + r_j),
/// over the pairs whose kinds are `a` and `b` (either order).
float worst_overlap(const Swarm& s, std::uint8_t a, std::uint8_t b) {
  float worst = 0.0f;
  const auto kinds = s.kinds();
  const auto table = s.kind_table();
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      if (!((kinds[i] == a && kinds[j] == b) || (kinds[i] == b && kinds[j] == a))) continue;
      const float contact = table[kinds[i]].radius + table[kinds[j]].radius;
      const float d = std::hypot(s.xs()[i] - s.xs()[j], s.ys()[i] - s.ys()[j]);
      worst = std::max(worst, (contact - d) / contact);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("kinds: each agent keeps to its kind's speed, and runners outpace walkers outpace brutes") {
  // Three corridors, one kind in each, so no kind waits behind another.
  GridMap map(80, 13);
  for (std::int32_t x = 0; x < 80; ++x) {
    for (const std::int32_t y : {0, 4, 8, 12}) map.set_cost(x, y, kBlockedCost);
  }
  NavigationFields nav;
  const CellCoord goals[3] = {{78, 2}, {78, 6}, {78, 10}};
  REQUIRE(nav.update(map, goals));
  std::vector<AgentKind> kinds = default_agent_kinds();
  for (AgentKind& k : kinds) k.radius = 0.3f;  // same size: only speed differs
  Swarm s(SwarmParams{}, 100);
  s.set_environment(map, {});
  REQUIRE(s.set_kinds(kinds));
  for (int i = 0; i < 10; ++i) {
    for (std::uint8_t k = 0; k < 3; ++k) {
      REQUIRE(s.add({2.5f + 1.0f * static_cast<float>(i), 2.5f + 4.0f * k}, 0.0f, k) != Swarm::kInvalidAgent);
    }
  }
  std::vector<Vec2> before, after;
  std::vector<std::uint8_t> kind_of(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) kind_of[s.ids()[i]] = s.kinds()[i];
  std::vector<Vec2> start;
  positions_by_id(s, start);
  float worst_ratio = 0.0f;
  for (int t = 0; t < 60; ++t) {
    positions_by_id(s, before);
    s.step(map, nav.flow(), nav.integration(), kDt);
    positions_by_id(s, after);
    for (std::size_t id = 0; id < after.size(); ++id) {
      const float limit = kinds[kind_of[id]].max_speed * kDt;
      worst_ratio = std::max(worst_ratio, length(after[id] - before[id]) / limit);
    }
  }
  double progress[3] = {0, 0, 0};
  for (std::size_t id = 0; id < after.size(); ++id) progress[kind_of[id]] += (after[id].x - start[id].x) / 10.0;
  MESSAGE("mean progress in 2 s: runner " << progress[0] << ", walker " << progress[1] << ", brute " << progress[2]
                                          << "; largest step / own max step " << worst_ratio);
  CHECK(worst_ratio <= 1.001f);
  CHECK(progress[0] > 0.8 * 4.5 * 2.0);
  CHECK(progress[1] > 0.8 * 3.0 * 2.0);
  CHECK(progress[1] < 1.01 * 3.0 * 2.0);
  CHECK(progress[2] > 0.8 * 2.0 * 2.0);
  CHECK(progress[2] < 1.01 * 2.0 * 2.0);
  CHECK(all_finite(s));
}

TEST_CASE("kinds: a mixed crowd keeps each pair of kinds apart at the sum of their radii") {
  // A crowd of walkers (r 0.35) and big agents (r 1.5) pressing into a closed room's far end:
  // a walker must be pushed off a big agent at 1.85, not at the walkers' own 0.7. With the
  // neighbour hash sized for the walkers alone (R 0.9), walkers would not even see a big agent
  // until their centres were within 0.9 of each other.
  GridMap map(30, 30);
  for (std::int32_t i = 0; i < 30; ++i) {
    map.set_cost(i, 0, kBlockedCost);
    map.set_cost(i, 29, kBlockedCost);
    map.set_cost(0, i, kBlockedCost);
    map.set_cost(29, i, kBlockedCost);
  }
  NavigationFields nav;
  const CellCoord goal[1] = {{15, 15}};
  REQUIRE(nav.update(map, goal));
  std::vector<AgentKind> kinds = default_agent_kinds();
  kinds[2].radius = 1.5f;
  Swarm s(SwarmParams{}, 200);
  s.set_environment(map, {});
  REQUIRE(s.set_kinds(kinds));
  SplitMix rng{11};
  for (int i = 0; i < 150; ++i) {
    const std::uint8_t k = i % 10 == 0 ? 2 : 1;
    REQUIRE(s.add({rng.uniform(3.0f, 27.0f), rng.uniform(3.0f, 27.0f)}, 0.0f, k) != Swarm::kInvalidAgent);
  }
  for (int t = 0; t < 300; ++t) s.step(map, nav.flow(), nav.integration(), kDt);
  const float walker_brute = worst_overlap(s, 1, 2), walkers = worst_overlap(s, 1, 1), brutes = worst_overlap(s, 2, 2);
  MESSAGE("worst overlap / contact distance after 10 s: walker-walker " << walkers << ", walker-big " << walker_brute
                                                                         << ", big-big " << brutes);
  CHECK(walkers < 0.3f);
  CHECK(walker_brute < 0.3f);
  CHECK(brutes < 0.3f);
  CHECK(all_finite(s));
}

TEST_CASE("kinds: one kind given by set_kinds steps bit-identically to the swarm's own; bad tables are refused") {
  AsciiScene scene(
      "############\n"
      "#..........#\n"
      "#..####....#\n"
      "#.....#..P.#\n"
      "#..........#\n"
      "############\n");
  NavigationFields nav;
  REQUIRE(nav.update(scene.map, scene.cells_of('P')));
  Swarm plain(SwarmParams{}, 64), kinded(SwarmParams{}, 64);
  for (Swarm* s : {&plain, &kinded}) s->set_environment(scene.map, {});
  AgentKind same;
  same.name = "same";  // radius, speed and turn rate are SwarmParams' defaults, weight 1
  REQUIRE(kinded.set_kinds(std::vector<AgentKind>{same}));
  SplitMix rng{3};
  for (int i = 0; i < 40; ++i) {
    const Vec2 p{rng.uniform(1.0f, 11.0f), rng.uniform(1.0f, 5.0f)};
    plain.add(p);
    kinded.add(p);
  }
  for (int t = 0; t < 90; ++t) {
    plain.step(scene.map, nav.flow(), nav.integration(), kDt);
    kinded.step(scene.map, nav.flow(), nav.integration(), kDt);
  }
  CHECK(state_bits(plain) == state_bits(kinded));

  // Refused: empty, too long, or leaving an agent without its kind; unknown kinds on add.
  CHECK_FALSE(kinded.set_kinds({}));
  CHECK_FALSE(kinded.set_kinds(std::vector<AgentKind>(kMaxAgentKinds + 1)));
  CHECK(kinded.add({2.5f, 1.5f}, 0.0f, 1) == Swarm::kInvalidAgent);
  REQUIRE(kinded.set_kinds(default_agent_kinds()));
  CHECK(kinded.add({2.5f, 1.5f}, 0.0f, 2) != Swarm::kInvalidAgent);
  CHECK_FALSE(kinded.set_kinds(std::vector<AgentKind>{same}));  // an agent of kind 2 exists
  CHECK(kinded.kind_table().size() == 3);
}

TEST_CASE("big agents (radius 0.75 to 2 cells) in corridors and corners never overlap a wall") {
  // An L of 2-cell corridors, a 3-cell corridor, a 5-cell hall, a 1-cell slot, and pillars.
  AsciiScene scene(
      "##############################\n"
      "#..........#.................#\n"
      "#..........#.................#\n"
      "#..........#....##...........#\n"
      "#..........#....##.......P...#\n"
      "#..........#.................#\n"
      "#....................#########\n"
      "#....................#########\n"
      "######..##############.......#\n"
      "######..##############.......#\n"
      "######..........#.....#......#\n"
      "######..........#.....#......#\n"
      "################..............\n"
      "################...#######.###\n"
      "################...#.........#\n"
      "##############################\n");
  NavigationFields nav;
  REQUIRE(nav.update(scene.map, scene.cells_of('P')));
  std::vector<AgentKind> kinds(4);
  const float radii[4] = {0.75f, 0.95f, 1.45f, 2.0f};
  for (std::size_t k = 0; k < 4; ++k) {
    kinds[k].name = std::string("k").append(std::to_string(k));  // not "k" + ...: GCC 12 -O3 false -Wrestrict
    kinds[k].radius = radii[k];
  }
  Swarm s(SwarmParams{}, 200);
  s.set_environment(scene.map, {});
  REQUIRE(s.set_kinds(kinds));
  SplitMix rng{test_seed(5150)};
  for (int i = 0; i < 120; ++i) {
    // Anywhere, walls included: the first step's repair must find each a place it fits.
    s.add({rng.uniform(0.0f, 30.0f), rng.uniform(0.0f, 16.0f)}, 0.0f, static_cast<std::uint8_t>(i % 4));
  }
  float worst = 0.0f;
  std::size_t moved = 0;
  std::vector<Vec2> start;
  for (int t = 0; t < 300; ++t) {
    s.step(scene.map, nav.flow(), nav.integration(), kDt);
    if (t == 0) positions_by_id(s, start);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const float r = kinds[s.kinds()[i]].radius;
      const Vec2 p{s.xs()[i], s.ys()[i]};
      const float overlap = wall_overlap(scene.map, p, r);
      if (overlap > worst) {
        worst = overlap;
        INFO("tick " << t << " agent " << s.ids()[i] << " r " << r << " at " << p.x << "," << p.y);
        CHECK(overlap <= 2e-4f);
      }
    }
  }
  std::vector<Vec2> end;
  positions_by_id(s, end);
  for (std::size_t id = 0; id < end.size(); ++id) moved += length(end[id] - start[id]) > 2.0f ? 1 : 0;
  MESSAGE("deepest wall overlap over 10 s: " << worst << "; " << moved << " of " << s.size() << " agents moved > 2 cells");
  CHECK(worst <= 2e-4f);
  CHECK(moved > 20);  // they do walk (with the one-cell field, some wait at gaps too narrow for them)
  CHECK(all_finite(s));
}

TEST_CASE("map edits under the swarm: following the change log steps bit-identically to a swarm rebuilt whole") {
  // The open-cell table and the big kinds' clearance follow a run-time blocker locally (a whole
  // pass is ~0.4 s on an 8192 map); a swarm handed a copy of the map with no change log rebuilds
  // both whole every tick. Walls dropped on and beside agents (repair of small and big discs),
  // reopened cells, a burst of many edits at once, and edits at the map's edge.
  GridMap map = load_map("street/Boston_0_256.map");
  std::vector<AgentKind> kinds(2);
  kinds[0].name = "small";
  kinds[0].radius = 0.3f;
  kinds[1].name = "big";
  kinds[1].radius = 0.8f;
  const CellCoord goal[1] = {map.world_to_cell({128.5f, 128.5f})};
  const auto make = [&](const GridMap& m) {
    Swarm s(SwarmParams{}, 600);
    s.set_environment(m, {});
    REQUIRE(s.set_kinds(kinds));
    SplitMix rng{test_seed(77)};
    for (int i = 0; i < 500; ++i) {
      s.add({rng.uniform(96.0f, 160.0f), rng.uniform(96.0f, 160.0f)}, 0.0f, static_cast<std::uint8_t>(i % 5 == 0));
    }
    return s;
  };
  Swarm followed = make(map), rebuilt = make(map);
  NavigationFields nav_followed, nav_rebuilt;
  SplitMix edits{test_seed(78)};
  std::size_t walls_on_agents = 0;
  for (int t = 0; t < 120; ++t) {
    CAPTURE(t);
    if (t % 3 == 1) {
      // Walls on a few agents' cells and their neighbours, or reopenings.
      const int count = t % 30 == 16 ? 300 : 4;
      for (int k = 0; k < count; ++k) {
        const std::size_t i = static_cast<std::size_t>(edits.uniform(0.0f, static_cast<float>(followed.size() - 1)));
        CellCoord c = map.world_to_cell({followed.xs()[i], followed.ys()[i]});
        c.x += static_cast<std::int32_t>(edits.uniform(-1.5f, 1.5f));
        c.y += static_cast<std::int32_t>(edits.uniform(-1.5f, 1.5f));
        if (k == 0 && t % 9 == 4) c = {0, static_cast<std::int32_t>(edits.uniform(0.0f, 255.0f))};  // the edge
        if (map.walkable(c)) ++walls_on_agents;
        map.set_cost(c.x, c.y, map.walkable(c) && (k % 3 != 2) ? kBlockedCost : kDefaultCost);
      }
    }
    GridMap fresh = map;
    fresh.set_change_log(false);  // nothing to follow: the swarm's tables are built whole
    (void)nav_followed.update(map, goal);  // true only when the field changed
    (void)nav_rebuilt.update(fresh, goal);
    followed.step(map, nav_followed.flow(), nav_followed.integration(), kDt);
    rebuilt.step(fresh, nav_rebuilt.flow(), nav_rebuilt.integration(), kDt);
    REQUIRE(state_bits(followed) == state_bits(rebuilt));
  }
  CHECK(walls_on_agents > 200);
  // Every agent stands clear of the walls it got (both repair paths ran).
  for (std::size_t i = 0; i < followed.size(); ++i) {
    const float r = kinds[followed.kinds()[i]].radius;
    CHECK(wall_overlap(map, {followed.xs()[i], followed.ys()[i]}, r) <= 2e-4f);
  }
}

// Pursuit (Swarm::step's goal_velocities): an agent in sight of a goal on the move heads for
// the point on the goal's way where they can meet, else the point ahead of it by the goal's speed
// times the agent's time to reach it; at most twice its distance, never past the goal's clear
// run ahead (a wall 9.5 cells ahead of the goal here).
TEST_CASE("pursuit: an agent in sight of a walking goal heads for where it is going, short of the wall ahead") {
  GridMap map(64, 32);
  for (std::int32_t y = 0; y < 32; ++y) map.set_cost(40, y, kBlockedCost);
  const Vec2 goal{30.5f, 16.5f};
  NavigationSet nav;
  REQUIRE(nav.update(map, std::span<const Vec2>(&goal, 1), size_class_bit(1)));
  // The steering of one walker (3 cells/s) at `at` with the goal's velocity `v`.
  const auto steer_at = [&](Vec2 at, Vec2 v) {
    Swarm swarm(SwarmParams{}, 1);
    swarm.set_environment(map, {});
    swarm.add(at);
    swarm.step(map, nav, kDt, nullptr, nullptr, std::span<const Vec2>(&v, 1));
    return Vec2{swarm.step_view().steer_x[0], swarm.step_view().steer_y[0]};
  };
  const auto unit = [](Vec2 d) { return d * (1.0f / length(d)); };
  const Vec2 agent{30.5f, 6.5f};  // 10 cells from the goal, straight up from it
  // Standing: straight at the goal.
  const Vec2 standing = steer_at(agent, {});
  CHECK(std::abs(standing.x) < 1e-4f);
  CHECK(standing.y == doctest::Approx(1.0f).epsilon(1e-4));
  // Walking toward the wall at 5 cells/s: the lead would be 5 x 10 / 3 = 16.7 cells; the clear
  // run is 9.25 cells (quarter steps up to x = 40) less half a cell.
  const Vec2 to_wall = steer_at(agent, {5.0f, 0.0f});
  const Vec2 expect_wall = unit(goal + Vec2{8.75f, 0.0f} - agent);
  CHECK(to_wall.x == doctest::Approx(expect_wall.x).epsilon(1e-3));
  CHECK(to_wall.y == doctest::Approx(expect_wall.y).epsilon(1e-3));
  // Walking away from the wall: the run to the map's edge is 30 cells, twice the distance 20, so
  // the lead is the full 16.7 cells.
  const Vec2 away = steer_at(agent, {-5.0f, 0.0f});
  const Vec2 expect_away = unit(goal + Vec2{-16.6667f, 0.0f} - agent);
  CHECK(away.x == doctest::Approx(expect_away.x).epsilon(1e-3));
  CHECK(away.y == doctest::Approx(expect_away.y).epsilon(1e-3));
  // Slowly (1 cell/s, slower than the walker): they meet where |(0, 10) + (-1, 0) t| = 3 t,
  // t = 10 / sqrt(8) s, so the lead is 3.54 cells.
  const Vec2 slow = steer_at(agent, {-1.0f, 0.0f});
  const Vec2 expect_slow = unit(goal + Vec2{-10.0f / std::sqrt(8.0f), 0.0f} - agent);
  CHECK(slow.x == doctest::Approx(expect_slow.x).epsilon(1e-3));
  CHECK(slow.y == doctest::Approx(expect_slow.y).epsilon(1e-3));
  // Close by (1.5 cells away), a goal at 8 cells/s: the lead would be 8 x 1.5 / 3 = 4 cells; at
  // most twice the distance, 3.
  const Vec2 near_agent{30.5f, 15.0f};
  const Vec2 close = steer_at(near_agent, {-8.0f, 0.0f});
  const Vec2 expect_close = unit(goal + Vec2{-3.0f, 0.0f} - near_agent);
  CHECK(close.x == doctest::Approx(expect_close.x).epsilon(1e-3));
  CHECK(close.y == doctest::Approx(expect_close.y).epsilon(1e-3));
  // Coming at the agent at 5 cells/s: they meet 6.25 cells short of the goal (t = 1.25 s), so the
  // agent goes on at it (the lead alone, 16.7 cells, would point past the agent: it would turn
  // and run ahead of the goal).
  const Vec2 head_on = steer_at(agent, {0.0f, -5.0f});
  CHECK(std::abs(head_on.x) < 1e-4f);
  CHECK(head_on.y == doctest::Approx(1.0f).epsilon(1e-4));
  // Coming at it slantwise (from the side): the meeting point is on the goal's way, between.
  const Vec2 slant_v{-3.0f, -4.0f};
  const Vec2 slant = steer_at(agent, slant_v);
  {
    // |r + V t| = 3 t with r = (0, 10): (25 - 9) t^2 + 2 (-40) t + 100 = 0,
    // t = 100 / (40 + sqrt(1600 - 1600)) = 2.5 s.
    const Vec2 meet = goal + slant_v * 2.5f;
    const Vec2 expect = unit(meet - agent);
    CHECK(slant.x == doctest::Approx(expect.x).epsilon(1e-3));
    CHECK(slant.y == doctest::Approx(expect.y).epsilon(1e-3));
  }
}
