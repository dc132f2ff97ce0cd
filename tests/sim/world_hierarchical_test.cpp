// World with hierarchical fields (size class 1): the swarm closes in on the player through the
// sector fields about as well as with the whole-map field, only occupied sectors get fields,
// and the mode follows the map size with kAuto.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/map/tiled_map.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;

namespace {

constexpr float kDt = 1.0f / 30.0f;

WorldParams params(FieldMode mode) {
  WorldParams p;
  p.seed = 5;
  p.max_agents = 2000;
  p.spawner.initial_agents = 2000;
  p.spawner.min_player_distance = 40.0f;
  p.field_mode = mode;
  p.field_rebuild_budget = 60000;
  return p;
}

/// params(mode) with 1200 agents of two kinds: "small" (default radius) and "big" (radius 0.8,
/// a 2 x 2 block: size class 2, whose planning grid and graph follow map changes too).
WorldParams small_and_big_params(FieldMode mode) {
  WorldParams p = params(mode);
  p.max_agents = 1200;
  p.spawner.initial_agents = 1200;
  AgentKind small, big;
  small.name = "small";
  big.name = "big";
  big.radius = 0.8f;
  p.kinds = {small, big};
  return p;
}

/// Mean true cost (cells) from the agents (of kind `kind`, or all with -1) to the player, by the
/// whole-map field.
double mean_cost(const World& w, const IntegrationField& truth, int kind = -1) {
  double sum = 0.0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < w.swarm().size(); ++i) {
    if (kind >= 0 && w.swarm().kinds()[i] != kind) continue;
    const CellCoord c = w.map().world_to_cell({w.swarm().xs()[i], w.swarm().ys()[i]});
    if (!truth.reachable(c.x, c.y)) continue;
    sum += static_cast<double>(truth.raw(c.x, c.y)) / kOrthogonalStep;
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

}  // namespace

TEST_CASE("world, hierarchical fields: the swarm closes in on the player like with the whole-map field") {
  const GridMap city = generate_city({512, 512, 9});
  const Vec2 player{256.5f, 256.5f};
  double closed[2] = {0.0, 0.0};
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    CAPTURE(static_cast<int>(mode));
    World w(city, params(mode));
    w.add_player(player);
    const Vec2 at = w.players()[0].position;  // moved onto a walkable cell if needed
    IntegrationField truth;
    const CellCoord goal[1] = {city.world_to_cell(at)};
    truth.build(city, goal);
    w.step(kDt);
    REQUIRE(w.swarm().size() == 2000);
    const double before = mean_cost(w, truth);
    for (int t = 0; t < 600; ++t) w.step(kDt);
    const double after = mean_cost(w, truth);
    MESSAGE(field_mode_name(mode) << ": mean cost to the player " << before << " -> " << after << " cells");
    CHECK(w.navigation().hierarchical() == (mode == FieldMode::kHierarchical));
    closed[mode == FieldMode::kHierarchical ? 1 : 0] = before - after;
    if (mode == FieldMode::kHierarchical) {
      const HierarchicalFields& h = w.navigation().hierarchical_fields();
      CHECK(w.fields().integration().width() == 0);  // no whole-map field
      CHECK(h.fields().build_count() > 0);
      CHECK(h.fields().field_count() <= h.graph().sector_count());
      CHECK(h.route_builds() >= 1);
    }
  }
  CHECK(closed[0] > 20.0);
  // Through sector fields the swarm gets at least 85% as far as through the whole-map field.
  CHECK(closed[1] >= 0.85 * closed[0]);
}

TEST_CASE("world, hierarchical fields: big agents (size class 2) close in through their class's sector fields") {
  const GridMap city = generate_city({384, 384, 4});
  double closed[2] = {0.0, 0.0};
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    CAPTURE(static_cast<int>(mode));
    WorldParams p = params(mode);
    AgentKind small, big;
    small.name = "small";
    big.name = "big";
    big.radius = 0.8f;  // size class 2
    big.max_speed = 2.5f;
    p.kinds = {small, big};
    World w(city, p);
    w.add_player({192.5f, 192.5f});
    IntegrationField truth;
    const CellCoord goal[1] = {city.world_to_cell(w.players()[0].position)};
    truth.build(city, goal);
    w.step(kDt);
    const double before = mean_cost(w, truth, 1);
    for (int t = 0; t < 450; ++t) w.step(kDt);
    const double after = mean_cost(w, truth, 1);
    MESSAGE(field_mode_name(mode) << ": big agents' mean cost to the player " << before << " -> " << after);
    closed[mode == FieldMode::kHierarchical ? 1 : 0] = before - after;
    if (mode == FieldMode::kHierarchical) {
      CHECK(w.navigation().has_class(2));
      CHECK(w.navigation().fields(2).integration().width() == 0);
      CHECK(w.navigation().hierarchical_fields(2).fields().build_count() > 0);
      CHECK(w.navigation().hierarchical_fields(2).route_builds() >= 1);
    }
  }
  CHECK(closed[0] > 15.0);
  CHECK(closed[1] >= 0.85 * closed[0]);
}

TEST_CASE("world, hierarchical fields: a new wall is followed locally (no whole graph build) and the swarm goes around it") {
  double closed[2] = {0.0, 0.0};
  std::size_t crossed[2] = {0, 0};
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    CAPTURE(static_cast<int>(mode));
    World w(GridMap(192, 192), small_and_big_params(mode));
    w.add_player({170.5f, 150.5f});
    w.step(kDt);
    // A wall across the map on a sector border (x = 127 | 128) and through a sector (x = 96),
    // joined, with a 6-cell gap at the top: agents west of it must go round by the gap.
    for (std::int32_t y = 14; y < 192; ++y) w.set_cell_cost({96, y}, kBlockedCost);
    for (std::int32_t x = 96; x < 128; ++x) w.set_cell_cost({x, 14}, kBlockedCost);
    for (std::int32_t y = 0; y < 14; ++y) w.set_cell_cost({127 + (y % 2), y}, y < 8 ? kBlockedCost : 5);
    IntegrationField truth;
    const CellCoord goal[1] = {w.map().world_to_cell(w.players()[0].position)};
    truth.build(w.map(), goal);
    std::vector<std::uint8_t> west(w.swarm().size(), 0);
    for (std::size_t i = 0; i < w.swarm().size(); ++i) west[i] = w.swarm().xs()[i] < 96.0f ? 1 : 0;
    w.step(kDt);
    const double before = mean_cost(w, truth);
    for (int t = 0; t < 900; ++t) w.step(kDt);
    const double after = mean_cost(w, truth);
    const int k = mode == FieldMode::kHierarchical ? 1 : 0;
    for (std::size_t i = 0; i < w.swarm().size() && i < west.size(); ++i) crossed[k] += west[i] != 0 && w.swarm().xs()[i] > 97.0f ? 1 : 0;
    MESSAGE(field_mode_name(mode) << ": mean cost to the player " << before << " -> " << after << ", crossed " << crossed[k]);
    closed[k] = before - after;
    if (mode == FieldMode::kHierarchical) {
      const NavigationSet& nav = w.navigation();
      for (const int n : {1, 2}) {
        CAPTURE(n);
        CHECK(nav.hierarchical_fields(n).graph_builds() == 1);
        CHECK(nav.hierarchical_fields(n).graph_updates() >= 1);
        CHECK(nav.hierarchical_fields(n).route_builds() >= 2);
      }
      ClearanceMap fresh;
      fresh.build(w.map());
      CHECK(nav.clearance().values() == fresh.values());
      GridMap class2;
      update_class_map(w.map(), fresh, 2, class2);
      CHECK(nav.class_grid(2).costs() == class2.costs());
      SectorGraph graph2;
      graph2.build(class2);
      CHECK(nav.hierarchical_fields(2).graph().edge_count() == graph2.edge_count());
    }
  }
  CHECK(closed[0] > 20.0);
  CHECK(crossed[0] > 20);
  CHECK(closed[1] >= 0.85 * closed[0]);
  CHECK(crossed[1] >= crossed[0] * 8 / 10);
}

TEST_CASE("world, hierarchical fields: kAuto is hierarchical from 4096 cells a side") {
  CHECK(resolve_field_mode(FieldMode::kAuto, 4095, 4095) == FieldMode::kWhole);
  CHECK(resolve_field_mode(FieldMode::kAuto, 4096, 64) == FieldMode::kHierarchical);
  CHECK(resolve_field_mode(FieldMode::kWhole, 8192, 8192) == FieldMode::kWhole);
  CHECK(resolve_field_mode(FieldMode::kHierarchical, 64, 64) == FieldMode::kHierarchical);
  CHECK(parse_field_mode("hierarchical") == FieldMode::kHierarchical);
  CHECK_FALSE(parse_field_mode("Whole").has_value());
  WorldParams p;
  p.max_agents = 10;
  p.spawner.initial_agents = 10;
  World small(generate_city({256, 256, 1}), p);
  small.add_player({128.5f, 128.5f});
  small.step(kDt);
  CHECK_FALSE(small.navigation().hierarchical());
  // A 4096 map (a 1024 city tiled 4 x 4): hierarchical by default.
  World big(tiled_map(generate_city({1024, 1024, 2}), 4), p);
  // The graph is built by the constructor (before a server listens), not by the first tick.
  CHECK(big.navigation().hierarchical_fields().graph_builds() == 1);
  CHECK(big.navigation().hierarchical_fields().route_builds() == 0);
  big.add_player({2048.5f, 2048.5f});
  big.step(kDt);
  CHECK(big.navigation().hierarchical_fields().graph_builds() == 1);
  CHECK(big.navigation().hierarchical_fields().route_builds() == 1);
  CHECK(big.navigation().hierarchical());
  CHECK(big.fields().integration().width() == 0);
  CHECK(big.navigation().hierarchical_fields().graph().sector_count() == 64 * 64);
}

TEST_CASE("world, hierarchical fields: right of way round the player follows the path distance") {
  // Agents near the player are ordered by their exact path distance (the near field), not all
  // equal as when hierarchical mode read priorities from the (absent) whole-map field.
  const GridMap city = generate_city({512, 512, 9});
  World w(city, params(FieldMode::kHierarchical));
  w.add_player({256.5f, 256.5f});
  IntegrationField truth;
  const CellCoord goal[1] = {city.world_to_cell(w.players()[0].position)};
  truth.build(city, goal);
  for (int t = 0; t < 300; ++t) w.step(kDt);
  REQUIRE(w.navigation().hierarchical());
  std::vector<std::uint32_t> near_values;
  std::size_t far = 0;
  for (std::size_t i = 0; i < w.swarm().size(); ++i) {
    const CellCoord c = city.world_to_cell({w.swarm().xs()[i], w.swarm().ys()[i]});
    const std::uint32_t prio = w.navigation().priority(1, c);
    if (prio == NearFields::kFarPriority) {
      ++far;
      continue;
    }
    CHECK(prio == truth.raw(c.x, c.y));
    near_values.push_back(prio);
  }
  std::sort(near_values.begin(), near_values.end());
  const auto distinct = static_cast<std::size_t>(std::unique(near_values.begin(), near_values.end()) - near_values.begin());
  MESSAGE(near_values.size() << " agents with a near-field priority (" << distinct << " distinct values), " << far
                             << " beyond it");
  CHECK(near_values.size() > 100);
  CHECK(distinct > 50);
}

namespace {

/// Open map of side `n` with a closed square ring (1 cell thick) from `lo` to `hi`: its inside
/// is walkable but no path enters it.
GridMap map_with_pocket(std::int32_t n, std::int32_t lo, std::int32_t hi) {
  GridMap m(n, n);
  for (std::int32_t i = lo; i <= hi; ++i) {
    m.set_cost(i, lo, kBlockedCost);
    m.set_cost(i, hi, kBlockedCost);
    m.set_cost(lo, i, kBlockedCost);
    m.set_cost(hi, i, kBlockedCost);
  }
  return m;
}

struct SpawnCount {
  std::size_t spawned = 0, in_pocket = 0, near_player = 0;
};

SpawnCount spawn_around_pocket(const GridMap& m, FieldMode mode, std::int32_t lo, std::int32_t hi, Vec2 player,
                               std::size_t agents) {
  WorldParams p;
  p.seed = 11;
  p.max_agents = static_cast<std::uint32_t>(agents);
  p.spawner.min_player_distance = 30.0f;
  p.field_mode = mode;
  p.field_rebuild_budget = 0;
  World w(m, p);
  w.add_player(player);
  SpawnCount out;
  out.spawned = w.spawn_agents(agents);
  for (std::size_t i = 0; i < w.swarm().size(); ++i) {
    const float x = w.swarm().xs()[i], y = w.swarm().ys()[i];
    if (x > static_cast<float>(lo) && x < static_cast<float>(hi + 1) && y > static_cast<float>(lo) &&
        y < static_cast<float>(hi + 1)) {
      ++out.in_pocket;
    }
    // The distance rule holds for the cell's centre; the agent is within 0.71 cells of it.
    const Vec2 d = Vec2{x, y} - player;
    if (dot(d, d) < 29.25f * 29.25f) ++out.near_player;
  }
  return out;
}

}  // namespace

TEST_CASE("world: the spawner puts no agent where no path leads to the player (hierarchical; whole mode on a big map)") {
  struct Case {
    const char* what;
    FieldMode mode;
    std::int32_t side, lo, hi;
    Vec2 player;
    std::size_t agents;
  };
  const Case cases[] = {
      // The pocket is ~10% of the map: drawn blindly, ~300 of 3000 agents would land inside.
      {"hierarchical, 512", FieldMode::kHierarchical, 512, 300, 460, {100.5f, 100.5f}, 3000},
      // 2048 x 2048: the spawner draws cells instead of scanning all 4M; the whole-map field
      // says what is reachable. The pocket is ~25% of the map.
      {"whole, 2048", FieldMode::kWhole, 2048, 1000, 2000, {200.5f, 200.5f}, 4000},
  };
  for (const Case& k : cases) {
    CAPTURE(k.what);
    const GridMap m = map_with_pocket(k.side, k.lo, k.hi);
    const SpawnCount c = spawn_around_pocket(m, k.mode, k.lo, k.hi, k.player, k.agents);
    CHECK(c.spawned == k.agents);
    CHECK(c.in_pocket == 0);
    CHECK(c.near_player == 0);
  }
}

TEST_CASE("world, hierarchical fields: spawning keeps the seed's replay and the swarm's capacity") {
  const GridMap m = map_with_pocket(512, 300, 460);
  WorldParams p;
  p.seed = 3;
  p.max_agents = 500;
  p.field_mode = FieldMode::kHierarchical;
  p.field_rebuild_budget = 0;
  World a(m, p), b(m, p);
  a.add_player({50.5f, 50.5f});
  b.add_player({50.5f, 50.5f});
  CHECK(a.spawn_agents(400) == 400);
  CHECK(b.spawn_agents(400) == 400);
  CHECK(a.spawn_agents(400) == 100);  // full at 500
  CHECK(b.spawn_agents(400) == 100);
  REQUIRE(a.swarm().size() == b.swarm().size());
  for (std::size_t i = 0; i < a.swarm().size(); ++i) {
    CHECK(a.swarm().xs()[i] == b.swarm().xs()[i]);
    CHECK(a.swarm().ys()[i] == b.swarm().ys()[i]);
  }
}

namespace {

/// A map of 1-cell streets every 4 cells (no 2 x 2 block of walkable cells anywhere) with a
/// wall across it at x = 40 whose only opening is a 1-cell gap, plus an open square east of the
/// wall; `open_west`: the west part gets an open square too (where brutes fit but cannot reach
/// the player in the east through the 1-cell gap).
GridMap streets_with_gap(bool open_west) {
  GridMap m(96, 64, kBlockedCost);
  for (std::int32_t y = 2; y < 62; ++y)
    for (std::int32_t x = 2; x < 94; ++x)
      if (x % 4 == 2 || y % 4 == 2) m.set_cost(x, y, kDefaultCost);
  for (std::int32_t y = 0; y < 64; ++y) m.set_cost(40, y, kBlockedCost);
  m.set_cost(40, 30, kDefaultCost);  // the gap (row 30 is a street)
  for (std::int32_t y = 20; y < 40; ++y)
    for (std::int32_t x = 60; x < 80; ++x) m.set_cost(x, y, kDefaultCost);
  if (open_west)
    for (std::int32_t y = 20; y < 40; ++y)
      for (std::int32_t x = 10; x < 30; ++x) m.set_cost(x, y, kDefaultCost);
  return m;
}

/// Deepest overlap (cells) of an agent's disc with a blocked cell.
float deepest_wall_overlap(const World& w) {
  float worst = 0.0f;
  const std::span<const AgentKind> kinds = w.swarm().kind_table();
  for (std::size_t i = 0; i < w.swarm().size(); ++i) {
    const float x = w.swarm().xs()[i], y = w.swarm().ys()[i], r = kinds[w.swarm().kinds()[i]].radius;
    for (auto cy = static_cast<std::int32_t>(std::floor(y - r)); cy <= static_cast<std::int32_t>(std::floor(y + r)); ++cy)
      for (auto cx = static_cast<std::int32_t>(std::floor(x - r)); cx <= static_cast<std::int32_t>(std::floor(x + r)); ++cx) {
        if (w.map().walkable(cx, cy)) continue;
        const float nx = std::clamp(x, static_cast<float>(cx), static_cast<float>(cx + 1));
        const float ny = std::clamp(y, static_cast<float>(cy), static_cast<float>(cy + 1));
        worst = std::max(worst, r - std::hypot(x - nx, y - ny));
      }
  }
  return worst;
}

}  // namespace

TEST_CASE("world: wide kinds spawn only where their block fits and their class reaches the player (both modes)") {
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    for (const bool open_west : {false, true}) {
      CAPTURE(static_cast<int>(mode));
      CAPTURE(open_west);
      WorldParams p;
      p.seed = 11;
      p.max_agents = 600;
      p.field_mode = mode;
      p.field_rebuild_budget = 0;
      p.kinds = default_agent_kinds();  // runner, walker, brute (radius 0.8: a 2 x 2 block)
      World w(streets_with_gap(open_west), p);
      w.add_player({70.5f, 30.5f});  // in the east square
      w.step(1.0f / 30.0f);  // fields for every spawnable class
      const std::size_t spawned = w.spawn_agents(600);
      std::size_t brutes = 0, brutes_west = 0, small_west = 0;
      const std::span<const AgentKind> kinds = w.swarm().kind_table();
      for (std::size_t i = 0; i < w.swarm().size(); ++i) {
        const bool brute = kinds[w.swarm().kinds()[i]].name == "brute";
        const bool west = w.swarm().xs()[i] < 40.0f;
        brutes += brute ? 1 : 0;
        brutes_west += brute && west ? 1 : 0;
        small_west += !brute && west ? 1 : 0;
      }
      MESSAGE("spawned " << spawned << ", brutes " << brutes << " (west of the 1-cell gap " << brutes_west
                         << "), smaller kinds west " << small_west << ", held back " << w.spawns_held_back());
      CHECK(deepest_wall_overlap(w) <= 1e-3f);  // before: brutes in 1-cell streets, 0.3 cells deep
      CHECK(brutes > 30);                       // they fit in the east square
      CHECK(brutes_west == 0);                  // the west square is out of their reach
      CHECK(small_west > 50);                   // smaller kinds pass the gap: they spawn there too
      CHECK(spawned + w.spawns_held_back() == 600);
      CHECK(w.spawns_held_back() == 0);
    }
  }
  // No 2 x 2 block anywhere: brutes are not spawned (held back), the others are.
  GridMap m = streets_with_gap(false);
  for (std::int32_t y = 20; y < 40; ++y)
    for (std::int32_t x = 60; x < 80; ++x)
      if (x % 4 != 2 && y % 4 != 2) m.set_cost(x, y, kBlockedCost);
  WorldParams p;
  p.seed = 5;
  p.max_agents = 300;
  p.field_rebuild_budget = 0;
  p.kinds = default_agent_kinds();
  World w(m, p);
  w.add_player({70.5f, 30.5f});
  w.step(1.0f / 30.0f);
  const std::size_t spawned = w.spawn_agents(300);
  std::size_t brutes = 0;
  for (std::size_t i = 0; i < w.swarm().size(); ++i) brutes += w.swarm().kind_table()[w.swarm().kinds()[i]].name == "brute";
  CHECK(brutes == 0);
  CHECK(spawned > 150);
  CHECK(spawned + w.spawns_held_back() == 300);
  CHECK(deepest_wall_overlap(w) <= 1e-3f);
}


TEST_CASE("world: walls dropped on big agents push them clear; the clearance they are repaired by follows each wall (both modes)") {
  // The swarm's repair of discs of half a cell or more reads the NavigationSet's clearance map
  // (followed cell by cell, not rebuilt) once the World's fields are updated for the new walls.
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    CAPTURE(static_cast<int>(mode));
    World w(GridMap(192, 192), small_and_big_params(mode));
    w.add_player({170.5f, 150.5f});
    w.step(kDt);
    std::uint64_t state = 99;
    std::size_t walled = 0;
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      // A wall cell under (or beside) a few big agents, and now and then a wall reopened.
      for (std::size_t i = 0; i < w.swarm().size(); ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if (w.swarm().kind_table()[w.swarm().kinds()[i]].name != "big" || (state >> 60) != 0) continue;
        const CellCoord c = w.map().world_to_cell({w.swarm().xs()[i] + static_cast<float>((state >> 40) % 3) - 1.0f,
                                                   w.swarm().ys()[i] + static_cast<float>((state >> 30) % 3) - 1.0f});
        if (w.map().walkable(c)) ++walled;
        w.set_cell_cost(c, round % 4 == 3 && !w.map().walkable(c) ? kDefaultCost : kBlockedCost);
      }
      w.step(kDt);
      CHECK(deepest_wall_overlap(w) <= 1e-3f);
      ClearanceMap fresh;
      fresh.build(w.map());
      REQUIRE(w.navigation().clearance().values() == fresh.values());
    }
    MESSAGE(field_mode_name(mode) << ": walls dropped under big agents " << walled);
    CHECK(walled > 100);
  }
}
