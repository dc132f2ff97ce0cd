// Barricades in the World: the build rules, the two maps, the attack-through path cost (a horde
// walks round a barricade dearer than the detour and breaks one cheaper than it), the fall and
// the field's repair, and a fight with barricades replaying bit for bit with any thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;

namespace {

constexpr float kDt = 1.0f / 30.0f;

// A bordered room `w` x `h`, open inside.
std::vector<std::uint8_t> room_costs(std::int32_t w, std::int32_t h) {
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(w) * h, 1);
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1) costs[static_cast<std::size_t>(y) * w + x] = kBlockedCost;
    }
  }
  return costs;
}

GridMap open_room(std::int32_t side) { return GridMap::from_costs(side, side, room_costs(side, side)); }

// 80 x 60: a wall down x = 40 with a 1-cell door at y = 10 and a 3-cell opening at y = 49..51.
// From the west side's (12, 10) to the player at (70, 10) the door is the straight way; the
// opening is about 45 cells longer.
constexpr std::int32_t kDoorX = 40, kDoorY = 10;
GridMap wall_with_door() {
  constexpr std::int32_t w = 80, h = 60;
  std::vector<std::uint8_t> costs = room_costs(w, h);
  for (std::int32_t y = 0; y < h; ++y) {
    if (y == kDoorY || (y >= 49 && y <= 51)) continue;
    costs[static_cast<std::size_t>(y) * w + kDoorX] = kBlockedCost;
  }
  return GridMap::from_costs(w, h, std::move(costs));
}

AgentKind walker() {
  AgentKind k;
  k.name = "walker";
  k.damage = 6.0f;
  k.health = 40.0f;
  k.max_speed = 3.0f;
  return k;
}

WorldParams barricade_params() {
  WorldParams p;
  p.combat.enabled = true;
  p.combat.player_health = 1.0e6f;  // the player outlives every scene here
  p.max_agents = 1000;
  p.kinds = {walker()};
  return p;
}

}  // namespace

TEST_CASE("barricades: the path cost is the walk the horde could make while breaking it") {
  const HordeReference ref{6.0f, 3.0f};
  // 4 walkers break 40 hp in 40 / 24 s, walking 5 cells meanwhile: 1 + 5 = 6.
  CHECK(barricade_path_cost(40.0f, 4.0f, ref, 1.0f) == 6);
  CHECK(barricade_path_cost(80.0f, 4.0f, ref, 1.0f) == 11);
  CHECK(barricade_path_cost(80.0f, 8.0f, ref, 1.0f) == 6);   // twice the attackers, half the time
  CHECK(barricade_path_cost(80.0f, 4.0f, ref, 2.0f) == 6);   // cells twice as long
  CHECK(barricade_path_cost(0.0f, 4.0f, ref, 1.0f) == 2);    // never as cheap as open road
  CHECK(barricade_path_cost(1.0e6f, 4.0f, ref, 1.0f) == 254);
  CHECK(barricade_path_cost(40.0f, 4.0f, {0.0f, 3.0f}, 1.0f) == 254);  // a harmless horde
  // Monotone in health.
  std::uint8_t last = 0;
  for (float hp = 0.0f; hp < 3000.0f; hp += 7.0f) {
    const std::uint8_t c = barricade_path_cost(hp, 4.0f, ref, 1.0f);
    CHECK(c >= last);
    last = c;
  }
  // Spawn-weighted means.
  AgentKind a = walker(), b = walker();
  b.damage = 12.0f;
  b.max_speed = 6.0f;
  b.spawn_weight = 3.0f;
  const AgentKind kinds[] = {a, b};
  const HordeReference r = horde_reference(kinds);
  CHECK(r.damage == doctest::Approx(10.5f));
  CHECK(r.speed == doctest::Approx(5.25f));
  // Health steps: the cost is reckoned from the health rounded up to a quarter of full.
  CHECK(barricade_cost_health(100.0f, 100.0f) == 100.0f);
  CHECK(barricade_cost_health(99.0f, 100.0f) == 100.0f);
  CHECK(barricade_cost_health(75.0f, 100.0f) == 75.0f);
  CHECK(barricade_cost_health(30.0f, 100.0f) == 50.0f);
  CHECK(barricade_cost_health(0.5f, 100.0f) == 25.0f);
  CHECK(barricade_cost_health(0.0f, 100.0f) == 0.0f);
}

TEST_CASE("barricades: the build rules (reach, walls, occupied cells, budget, the dead, no combat)") {
  WorldParams p = barricade_params();
  p.combat.barricade.per_player = 2;
  p.combat.barricade.build_range = 3.0f;
  World w(open_room(24), p);
  const std::uint32_t pid = w.add_player({12.5f, 12.5f});
  const std::uint32_t other = w.add_player({12.5f, 14.5f});
  (void)w.swarm_mutable().add({13.5f, 10.5f});
  CHECK(w.build_barricade(99, {12, 10}) == BuildResult::kUnknownPlayer);
  CHECK(w.build_barricade(pid, {-1, 10}) == BuildResult::kOffMap);
  CHECK(w.build_barricade(pid, {12, 24}) == BuildResult::kOffMap);
  CHECK(w.build_barricade(pid, {12, 16}) == BuildResult::kOutOfReach);  // 3.5 away
  CHECK(w.build_barricade(pid, {12, 14}) == BuildResult::kOccupied);    // the other player
  CHECK(w.build_barricade(pid, {12, 12}) == BuildResult::kOccupied);    // itself
  CHECK(w.build_barricade(pid, {13, 10}) == BuildResult::kOccupied);    // an agent
  CHECK(w.build_barricade(pid, {14, 10}) == BuildResult::kBuilt);
  CHECK(w.build_barricade(pid, {14, 10}) == BuildResult::kNotWalkable);  // a barricade already
  CHECK(w.build_barricade(pid, {10, 10}) == BuildResult::kBuilt);
  CHECK(w.build_barricade(pid, {11, 10}) == BuildResult::kOverBudget);
  CHECK(w.build_barricade(other, {11, 12}) == BuildResult::kBuilt);  // the budget is per player
  CHECK(w.barricades_built() == 3);
  REQUIRE(w.barricades().size() == 3);
  // Ordered by cell index; blocked in the physical map, passable at the path cost in the path map.
  CHECK(w.barricades()[0].cell.x == 10);
  CHECK(w.barricades()[1].cell.x == 14);
  CHECK(w.barricades()[2].cell.y == 12);
  const std::uint8_t cost = barricade_path_cost(p.combat.barricade.health, p.combat.barricade.attackers,
                                                horde_reference(p.kinds), 1.0f);
  CHECK(w.map().cost(14, 10) == kBlockedCost);
  CHECK(w.path_map().cost(14, 10) == cost);
  CHECK(w.path_map().cost(13, 10) == 1);
  CHECK(w.find_barricade({14, 10}) != nullptr);
  CHECK(w.find_barricade({13, 10}) == nullptr);
  REQUIRE(w.barricade_changes().size() == 3);
  CHECK(w.barricade_changes()[0].health == 255);
  CHECK(w.barricade_changes()[0].cost == kBlockedCost);
  w.clear_barricade_changes();
  CHECK(w.barricade_changes().empty());
  // A wall on the cell takes the barricade away (reported as gone).
  w.set_cell_cost({14, 10}, kBlockedCost);
  CHECK(w.barricades().size() == 2);
  REQUIRE(w.barricade_changes().size() == 1);
  CHECK(w.barricade_changes()[0].health == 0);
  CHECK(w.path_map().cost(14, 10) == kBlockedCost);
  // Walls can not be built on.
  CHECK(w.build_barricade(other, {12, 15}) == BuildResult::kBuilt);
  CHECK(w.build_barricade(other, {12, 16}) == BuildResult::kOverBudget);

  WorldParams off = barricade_params();
  off.combat.enabled = false;
  World quiet(open_room(24), off);
  const std::uint32_t q = quiet.add_player({12.5f, 12.5f});
  CHECK(quiet.build_barricade(q, {12, 10}) == BuildResult::kNoCombat);
  CHECK(quiet.barricades().empty());
  CHECK(&quiet.path_map() == &quiet.map());
  CHECK(build_result_name(BuildResult::kOutOfReach) == "out of reach");
}

TEST_CASE("barricades: a player's barricades fall when it leaves, so rejoining gives no extra budget") {
  // A client that built its per_player barricades, left and joined again (a new player id) could
  // build per_player more each round while the old ones stood: 17 standing from one client with
  // per_player 8 in a hostile trial of the server.
  WorldParams p = barricade_params();
  p.combat.barricade.per_player = 2;
  World w(open_room(24), p);
  std::uint32_t pid = w.add_player({12.5f, 12.5f});
  const std::uint32_t other = w.add_player({5.5f, 5.5f});
  REQUIRE(w.build_barricade(other, {5, 7}) == BuildResult::kBuilt);
  for (int round = 0; round < 3; ++round) {
    REQUIRE(w.build_barricade(pid, {10, 10}) == BuildResult::kBuilt);
    REQUIRE(w.build_barricade(pid, {14, 10}) == BuildResult::kBuilt);
    CHECK(w.build_barricade(pid, {12, 10}) == BuildResult::kOverBudget);
    w.clear_barricade_changes();
    REQUIRE(w.remove_player(pid));
    // Only the other player's barricade stands; the two are reported gone and their cells open.
    CHECK(w.barricades().size() == 1);
    CHECK(w.barricades()[0].owner == other);
    CHECK(w.barricade_changes().size() == 2);
    for (const BarricadeChange& c : w.barricade_changes()) CHECK(c.health == 0);
    CHECK(w.map().cost(10, 10) == 1);
    CHECK(w.path_map().cost(14, 10) == 1);
    pid = w.add_player({12.5f, 12.5f});
  }
  CHECK_FALSE(w.remove_player(9999));
  CHECK(w.barricades().size() == 1);
}

TEST_CASE("barricades: a dead player cannot build; walls block building") {
  WorldParams p = barricade_params();
  p.combat.player_health = 1.0f;
  p.combat.respawn_seconds = 100.0f;
  std::vector<std::uint8_t> costs = room_costs(16, 16);
  costs[8 * 16 + 10] = kBlockedCost;
  World w(GridMap::from_costs(16, 16, std::move(costs)), p);
  const std::uint32_t pid = w.add_player({8.5f, 8.5f});
  CHECK(w.build_barricade(pid, {10, 8}) == BuildResult::kNotWalkable);
  (void)w.swarm_mutable().add({9.2f, 8.5f});
  for (int t = 0; t < 10 && w.find_player(pid)->alive; ++t) w.step(kDt);
  REQUIRE_FALSE(w.find_player(pid)->alive);
  CHECK(w.build_barricade(pid, {8, 6}) == BuildResult::kDeadPlayer);
}

namespace {

struct DoorRun {
  bool fell = false;
  float health_left = 0.0f;   // of the barricade, when it stands
  int passed = 0;             // agents east of the wall at the end
  int went_south = 0;         // agents that were ever south of y = 30 (the long way)
  std::uint64_t fell_at = 0;  // tick
};

// 20 walkers west of the wall, the player east of the door, a barricade of `health` in the door.
DoorRun run_door(float health, int seconds) {
  WorldParams p = barricade_params();
  p.combat.barricade.health = health;
  p.combat.barricade.build_range = 100.0f;
  World w(wall_with_door(), p);
  const std::uint32_t pid = w.add_player({41.5f, 10.5f});
  REQUIRE(w.build_barricade(pid, {kDoorX, kDoorY}) == BuildResult::kBuilt);
  REQUIRE(w.teleport_player(pid, {70.5f, 10.5f}));
  for (int i = 0; i < 20; ++i) {
    (void)w.swarm_mutable().add({8.5f + static_cast<float>(i % 5), 8.5f + static_cast<float>(i / 5)});
  }
  DoorRun r;
  std::vector<std::uint8_t> south(64, 0);
  const int ticks = seconds * 30;
  for (int t = 0; t < ticks; ++t) {
    w.step(kDt);
    const auto ids = w.swarm().ids();
    const auto ys = w.swarm().ys();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ys[i] > 30.0f && ids[i] < south.size()) south[ids[i]] = 1;
    }
    if (!r.fell && w.barricades_fallen() > 0) {
      r.fell = true;
      r.fell_at = w.tick();
      // The field repaired: the door is open road again in both maps.
      CHECK(w.map().cost(kDoorX, kDoorY) == 1);
      CHECK(w.path_map().cost(kDoorX, kDoorY) == 1);
    }
  }
  if (const Barricade* b = w.find_barricade({kDoorX, kDoorY})) r.health_left = b->health;
  for (const float x : w.swarm().xs()) r.passed += x > static_cast<float>(kDoorX + 1) ? 1 : 0;
  for (const std::uint8_t s : south) r.went_south += s;
  return r;
}

}  // namespace

TEST_CASE("barricades: a horde breaks a barricade cheaper than the detour and walks round a dearer one") {
  const HordeReference ref = horde_reference(std::vector<AgentKind>{walker()});
  // The detour through the far opening is ~45 cells longer than the door.
  SUBCASE("weak: 40 hp is a 6-cell cost, the horde breaks through the door") {
    REQUIRE(barricade_path_cost(40.0f, 4.0f, ref, 1.0f) == 6);
    const DoorRun r = run_door(40.0f, 40);
    MESSAGE("fell at tick " << r.fell_at << ", passed " << r.passed << ", went south " << r.went_south);
    CHECK(r.fell);
    CHECK(r.passed >= 18);
    CHECK(r.went_south == 0);
  }
  SUBCASE("strong: 3000 hp is a 254-cell cost, the horde walks round through the far opening") {
    REQUIRE(barricade_path_cost(3000.0f, 4.0f, ref, 1.0f) == 254);
    const DoorRun r = run_door(3000.0f, 60);
    MESSAGE("health left " << r.health_left << ", passed " << r.passed << ", went south " << r.went_south);
    CHECK_FALSE(r.fell);
    CHECK(r.health_left > 0.9f * 3000.0f);
    CHECK(r.passed >= 18);
    CHECK(r.went_south >= 18);
  }
}

TEST_CASE("barricades: a fight with barricades replays bit for bit with 1, 2 and 3 threads, whole and hierarchical") {
  const GridMap city = generate_city({64, 64, 5});
  for (const FieldMode mode : {FieldMode::kWhole, FieldMode::kHierarchical}) {
    std::vector<std::vector<std::uint64_t>> hashes;
    std::vector<std::uint64_t> built, fallen;
    for (std::uint32_t threads : {1u, 2u, 3u}) {
      WorldParams p;
      p.seed = 9;
      p.worker_threads = threads;
      p.field_mode = mode;
      p.max_agents = 800;
      p.kinds = default_agent_kinds();  // runners, walkers and brutes (a size class of 2)
      p.spawner.initial_agents = 500;
      p.spawner.min_player_distance = 8.0f;
      p.combat.enabled = true;
      p.combat.player_health = 1.0e5f;
      p.combat.barricade.health = 60.0f;
      p.combat.barricade.per_player = 24;
      World w(city, p);
      const std::uint32_t pid = w.add_player({32.0f, 32.0f});
      hashes.emplace_back();
      for (std::uint64_t t = 0; t < 450; ++t) {
        // A ring of barricades round the player, rebuilt where they fell.
        if (t % 15 == 0) {
          const Player* pl = w.find_player(pid);
          const CellCoord c = w.map().world_to_cell(pl->position);
          for (int dy = -2; dy <= 2; ++dy) {
            for (int dx = -2; dx <= 2; ++dx) {
              if (std::max(std::abs(dx), std::abs(dy)) == 2) (void)w.build_barricade(pid, {c.x + dx, c.y + dy});
            }
          }
        }
        const float a = static_cast<float>(t) * 0.05f;
        REQUIRE(w.set_player_fire(pid, true, {std::cos(a), std::sin(a)}));
        w.step(kDt);
        hashes.back().push_back(w.state_hash());
      }
      built.push_back(w.barricades_built());
      fallen.push_back(w.barricades_fallen());
    }
    CHECK(hashes[0] == hashes[1]);
    CHECK(hashes[0] == hashes[2]);
    CHECK(built[0] > 10);
    CHECK(fallen[0] > 0);
    MESSAGE(std::string(mode == FieldMode::kWhole ? "whole" : "hierarchical") << ": built " << built[0] << ", fallen " << fallen[0]);
  }
}

namespace {

struct LineRun {
  std::uint64_t fallen = 0;
  float weakest = 0.0f;  // lowest health left among the standing barricades, fraction of full
  int passed = 0;        // agents east of the line at the end
  int went_round = 0;    // agents that were ever more than `round` cells off the line's middle row
};

// 30 walkers west, the player east, a barricade line of 2h+1 cells down x = 30 between them.
LineRun run_line(int h, float health, int seconds) {
  WorldParams p = barricade_params();
  p.combat.barricade.health = health;
  p.combat.barricade.build_range = 100.0f;
  p.combat.barricade.per_player = 100;
  World w(GridMap::from_costs(60, 61, room_costs(60, 61)), p);
  const std::uint32_t pid = w.add_player({52.5f, 30.5f});
  for (int y = 30 - h; y <= 30 + h; ++y) REQUIRE(w.build_barricade(pid, {30, y}) == BuildResult::kBuilt);
  for (int i = 0; i < 30; ++i) {
    (void)w.swarm_mutable().add({6.5f + static_cast<float>(i % 6), 27.5f + static_cast<float>(i / 6)});
  }
  LineRun r;
  std::vector<std::uint8_t> round(64, 0);
  for (int t = 0; t < seconds * 30; ++t) {
    w.step(kDt);
    const auto ids = w.swarm().ids();
    const auto xs = w.swarm().xs();
    const auto ys = w.swarm().ys();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      // Off the line's span, level with the line: walking round its end.
      if (std::abs(xs[i] - 30.5f) < 3.0f && std::abs(ys[i] - 30.5f) > static_cast<float>(h) + 1.5f && ids[i] < round.size()) {
        round[ids[i]] = 1;
      }
    }
  }
  r.fallen = w.barricades_fallen();
  r.weakest = 1.0f;
  for (const Barricade& b : w.barricades()) r.weakest = std::min(r.weakest, b.health / b.full_health);
  for (const float x : w.swarm().xs()) r.passed += x > 31.5f ? 1 : 0;
  for (const std::uint8_t s : round) r.went_round += s;
  return r;
}

}  // namespace

TEST_CASE("barricades: the same barricades, short, are walked round; long, broken through") {
  // 80 hp against 4 walkers of 6 hp/s at 3 units/s: a cost of 11 cells.
  REQUIRE(barricade_path_cost(80.0f, 4.0f, horde_reference(std::vector<AgentKind>{walker()}), 1.0f) == 11);
  SUBCASE("3 cells: the detour round an end is a cell or two, cheaper than 11: walked round, standing") {
    const LineRun r = run_line(1, 80.0f, 30);
    MESSAGE("fallen " << r.fallen << ", weakest " << r.weakest << ", passed " << r.passed << ", went round " << r.went_round);
    CHECK(r.fallen == 0);  // worn where the crowd queues along it (30% left here), not broken
    CHECK(r.weakest > 0.0f);
    CHECK(r.passed >= 27);
  }
  SUBCASE("41 cells: the detour is ~15 cells, dearer than 11: broken through the middle") {
    const LineRun r = run_line(20, 80.0f, 40);
    MESSAGE("fallen " << r.fallen << ", passed " << r.passed << ", went round " << r.went_round);
    CHECK(r.fallen >= 1);
    CHECK(r.passed >= 27);
    CHECK(r.went_round <= 3);
  }
}

TEST_CASE("combat: a player with a gun holds a corridor against a wave; without firing it falls") {
  // A corridor 3 cells high and 60 long; a wave of 30 walkers comes from its west end.
  std::vector<std::uint8_t> costs(60 * 5, kBlockedCost);
  for (int y = 1; y <= 3; ++y) {
    for (int x = 1; x < 59; ++x) costs[static_cast<std::size_t>(y) * 60 + x] = 1;
  }
  const GridMap corridor = GridMap::from_costs(60, 5, costs);
  for (const bool fire : {true, false}) {
    WorldParams p = barricade_params();
    p.combat.player_health = 100.0f;
    p.combat.respawn_seconds = 100.0f;
    WaveSpec wave;
    wave.groups = {{0, 30}};
    wave.zone = SpawnZone{{1, 1}, {8, 3}};
    wave.duration_seconds = 3.0f;
    p.waves = {wave};
    World w(corridor, p);
    const std::uint32_t pid = w.add_player({56.5f, 2.5f});
    if (fire) REQUIRE(w.set_player_fire(pid, true, {-1.0f, 0.0f}));
    for (int t = 0; t < 40 * 30; ++t) w.step(kDt);
    MESSAGE((fire ? "firing" : "not firing") << ": kills " << w.kills() << ", player deaths " << w.player_death_count()
                                             << ", health " << w.find_player(pid)->health);
    if (fire) {
      CHECK(w.kills() == 30);
      CHECK(w.player_death_count() == 0);
      CHECK(w.find_player(pid)->health > 50.0f);
    } else {
      CHECK(w.player_death_count() == 1);
    }
  }
}
