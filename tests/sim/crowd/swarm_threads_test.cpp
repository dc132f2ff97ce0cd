// Swarm::step over a WorkerPool: 1, 2 and 3 threads (and different chunk sizes) give
// bit-identical agent arrays on every tick, on a real street map with thousands of agents and on
// small crowd scenes built like the scenarios C3-C8 (stacks, chokepoint, dead end, unreachable
// pocket, agents set into walls, a goal that alternates).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/worker_pool.hpp"
#include "swarmfield/sim/world.hpp"

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

/// One way of stepping: worker threads (1 = no pool at all, the inline path) and agents per
/// chunk. None may change any result.
struct Config {
  std::size_t threads;
  std::uint32_t chunk;
};

template <class T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

/// First index where two swarms' state differs (bitwise), or -1.
long first_difference(const Swarm& a, const Swarm& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = a.ids()[i] == b.ids()[i] && same_bits(a.xs().subspan(i, 1), b.xs().subspan(i, 1)) &&
                      same_bits(a.ys().subspan(i, 1), b.ys().subspan(i, 1)) &&
                      same_bits(a.vxs().subspan(i, 1), b.vxs().subspan(i, 1)) &&
                      same_bits(a.vys().subspan(i, 1), b.vys().subspan(i, 1)) &&
                      same_bits(a.headings().subspan(i, 1), b.headings().subspan(i, 1));
    if (!same) return static_cast<long>(i);
  }
  return -1;
}

/// A scene: a map, props, the goal cells per tick, how to fill the swarm, and what to do to it
/// before a tick (teleports, additions).
struct Scene {
  GridMap map;
  std::vector<Obstacle> props;
  std::size_t capacity = 0;
  int ticks = 0;
  std::function<std::vector<CellCoord>(int tick)> goals;
  std::function<void(Swarm&)> fill;
  std::function<void(int tick, Swarm&)> before_tick = [](int, Swarm&) {};
};

/// Steps one swarm per config in lockstep (sharing the fields, which depend only on the goals)
/// and requires every swarm to equal the first, bit for bit, after every tick. Returns the
/// number of agents that ended more than a cell from where they started (the scene must move).
std::size_t run_identical(const Scene& scene, std::span<const Config> configs) {
  struct Run {
    std::unique_ptr<WorkerPool> pool;
    std::unique_ptr<Swarm> swarm;
  };
  std::vector<Run> runs;
  for (const Config& c : configs) {
    SwarmParams params;
    params.parallel_chunk_agents = c.chunk;
    Run r;
    if (c.threads > 1) r.pool = std::make_unique<WorkerPool>(c.threads);
    r.swarm = std::make_unique<Swarm>(params, scene.capacity);
    r.swarm->set_environment(scene.map, scene.props);
    scene.fill(*r.swarm);
    runs.push_back(std::move(r));
  }
  std::vector<Vec2> start(runs[0].swarm->size());
  for (std::size_t i = 0; i < start.size(); ++i) start[runs[0].swarm->ids()[i]] = {runs[0].swarm->xs()[i], runs[0].swarm->ys()[i]};

  NavigationFields nav;
  for (int t = 0; t < scene.ticks; ++t) {
    const std::vector<CellCoord> goals = scene.goals(t);
    nav.update(scene.map, goals);
    for (Run& r : runs) {
      scene.before_tick(t, *r.swarm);
      r.swarm->step(scene.map, nav.flow(), nav.integration(), kDt, r.pool.get());
    }
    for (std::size_t k = 1; k < runs.size(); ++k) {
      const long diff = first_difference(*runs[0].swarm, *runs[k].swarm);
      INFO("tick " << t << ", config " << k << " (" << configs[k].threads << " threads, chunk " << configs[k].chunk
                   << "), first differing slot " << diff);
      REQUIRE(diff == -1);
    }
  }
  const Swarm& s = *runs[0].swarm;
  CHECK(all_finite(s));
  CHECK(agents_in_walls(scene.map, s) == 0);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::uint32_t id = s.ids()[i];
    if (id < start.size() && length(Vec2{s.xs()[i], s.ys()[i]} - start[id]) > 1.0f) ++moved;
  }
  return moved;
}

}  // namespace

TEST_CASE("threads: 1, 2 and 3 threads give bit-identical swarms every tick on Boston_0_512, 4000 agents") {
  const std::uint64_t seed = test_seed(31337);
  Scene scene;
  scene.map = load_map("street/Boston_0_512.map");
  const GridMap& map = scene.map;
  // Two players: one still, one walking round a square, so the field rebuilds and flows flip.
  const CellCoord a = map.world_to_cell(move_out_of_walls(map, {256.0f, 256.0f}, 0.4f));
  const CellCoord b = map.world_to_cell(move_out_of_walls(map, {180.0f, 300.0f}, 0.4f));
  scene.goals = [a, b, &map](int t) {
    const std::int32_t phase = (t / 25) % 4;
    CellCoord c{b.x + (phase == 1 || phase == 2 ? 6 : 0), b.y + (phase >= 2 ? 6 : 0)};
    if (!map.walkable(c)) c = b;
    return std::vector<CellCoord>{a, c};
  };
  SplitMix rng{seed};
  for (int k = 0; k < 40; ++k) scene.props.push_back({{rng.uniform(200.0f, 310.0f), rng.uniform(200.0f, 310.0f)}, 0.5f});
  scene.capacity = 4200;
  scene.ticks = 240;
  scene.fill = [&map, seed](Swarm& s) {
    SplitMix r{seed + 1};
    // Agents on random walkable cells within ~90 cells of the centre, a stack of 60 agents on one
    // point (burst), and a few at garbage positions (repair).
    while (s.size() < 3900) {
      const std::int32_t x = 166 + r.below(181), y = 166 + r.below(181);
      if (!map.walkable(x, y)) continue;
      s.add({static_cast<float>(x) + r.uniform(0.2f, 0.8f), static_cast<float>(y) + r.uniform(0.2f, 0.8f)},
            r.uniform(-3.0f, 3.0f));
    }
    const Vec2 stack = move_out_of_walls(map, {240.5f, 250.5f}, 0.35f);
    for (int i = 0; i < 60; ++i) s.add(stack);
    s.add({-5.0f, 1e9f});
    s.add({std::numeric_limits<float>::quiet_NaN(), 3.0f});
  };
  scene.before_tick = [&map, seed](int t, Swarm& s) {
    if (t == 100) {
      // Teleports into walls and more agents mid-run (repair on a later tick).
      SplitMix r{seed + 2};
      for (int k = 0; k < 50; ++k) {
        const std::int32_t x = r.below(512), y = r.below(512);
        if (!map.walkable(x, y)) s.set_position(static_cast<std::size_t>(r.below(static_cast<std::int32_t>(s.size()))), {x + 0.5f, y + 0.5f});
      }
      for (int k = 0; k < 100; ++k) s.add({250.0f + r.uniform(-20.0f, 20.0f), 250.0f + r.uniform(-20.0f, 20.0f)});
    }
  };
  const Config configs[] = {{1, 512}, {2, 512}, {3, 97}};
  const std::size_t moved = run_identical(scene, configs);
  MESSAGE(moved << " agents moved more than a cell");
  CHECK(moved > 1000);
}

TEST_CASE("threads: identical on scenario-like scenes (stacks, chokepoint, dead end, pocket, alternating goal)") {
  // Small scenes: tiny chunks so even 200 agents are split over the threads.
  const Config configs[] = {{1, 512}, {2, 16}, {3, 5}};

  SUBCASE("C8-like chokepoint with a packed room and a coincident stack (C3)") {
    Scene scene;
    scene.map = AsciiScene("#########################\n"
                           "#aaaaaaaa#..............#\n"
                           "#aaaaaaaa...............#\n"
                           "#aaaaaaaa...........P...#\n"
                           "#aaaaaaaa#..............#\n"
                           "#########################\n")
                    .map;
    scene.goals = [](int) { return std::vector<CellCoord>{{20, 3}}; };
    scene.capacity = 240;
    scene.ticks = 400;
    scene.fill = [](Swarm& s) {
      for (int j = 0; j < 10; ++j) {
        for (int i = 0; i < 20; ++i) s.add({1.0f + 0.4f * (static_cast<float>(i) + 0.5f), 1.0f + 0.4f * (static_cast<float>(j) + 0.5f)});
      }
      for (int i = 0; i < 30; ++i) s.add({14.5f, 2.5f});  // a stack in the open room
    };
    CHECK(run_identical(scene, configs) > 100);
  }

  SUBCASE("C4-like dead-end queue and C7-like agents set into walls, with props") {
    Scene scene;
    scene.map = AsciiScene("##################\n"
                           "#................#\n"
                           "#.######.#######.#\n"
                           "#.#....#.#.......#\n"
                           "#.#.##.#.#.#######\n"
                           "#...##...#......P#\n"
                           "##################\n")
                    .map;
    scene.props = {{{8.5f, 1.5f}, 0.3f}, {{12.0f, 3.5f}, 0.4f}};
    scene.goals = [](int) { return std::vector<CellCoord>{{16, 5}}; };
    scene.capacity = 150;
    scene.ticks = 300;
    scene.fill = [](Swarm& s) {
      SplitMix r{77};
      while (s.size() < 120) {
        const float x = r.uniform(1.0f, 17.0f), y = r.uniform(1.0f, 6.0f);
        s.add({x, y}, r.uniform(-3.0f, 3.0f));  // some land in walls: repaired on the first step
      }
    };
    scene.before_tick = [](int t, Swarm& s) {
      if (t % 40 == 20) {
        s.set_position(static_cast<std::size_t>(t) % s.size(), {4.5f, 4.5f});  // inside a wall block
        s.set_position((static_cast<std::size_t>(t) * 7) % s.size(), {2.0f, 3.0f});  // on a wall edge
      }
    };
    CHECK(run_identical(scene, configs) > 30);
  }

  SUBCASE("a mixed crowd of kinds (runner, walker, big brute) through a door, with a stack") {
    Scene scene;
    scene.map = AsciiScene("####################\n"
                           "#.........#........#\n"
                           "#.........#........#\n"
                           "#.....#............#\n"
                           "#.........#........#\n"
                           "#.........#........#\n"
                           "####################\n")
                    .map;
    scene.goals = [](int) { return std::vector<CellCoord>{{17, 3}}; };
    scene.capacity = 200;
    scene.ticks = 300;
    scene.fill = [](Swarm& s) {
      std::vector<AgentKind> kinds = default_agent_kinds();
      kinds[2].radius = 0.45f;
      REQUIRE(s.set_kinds(kinds));
      SplitMix r{8};
      while (s.size() < 150) {
        s.add({r.uniform(1.0f, 9.0f), r.uniform(1.0f, 6.0f)}, 0.0f, static_cast<std::uint8_t>(r.below(3)));
      }
      for (int i = 0; i < 12; ++i) s.add({4.5f, 2.5f}, 0.0f, static_cast<std::uint8_t>(i % 3));  // a mixed stack
    };
    CHECK(run_identical(scene, configs) > 40);
  }

  SUBCASE("C6-like unreachable pocket and C5-like alternating goal") {
    Scene scene;
    scene.map = AsciiScene("####################\n"
                           "#..................#\n"
                           "#..................#\n"
                           "#....#####.........#\n"
                           "#....#...#.........#\n"
                           "#....#...#.........#\n"
                           "#....#####.........#\n"
                           "#..................#\n"
                           "####################\n")
                    .map;
    // The goal flips between two cells every 10 ticks (route commitment, flipping flows).
    scene.goals = [](int t) { return std::vector<CellCoord>{(t / 10) % 2 == 0 ? CellCoord{2, 1} : CellCoord{17, 7}}; };
    scene.capacity = 200;
    scene.ticks = 300;
    scene.fill = [](Swarm& s) {
      SplitMix r{5};
      for (int i = 0; i < 12; ++i) s.add({r.uniform(6.1f, 8.9f), r.uniform(4.1f, 5.9f)});  // sealed pocket
      while (s.size() < 180) s.add({r.uniform(1.0f, 19.0f), r.uniform(1.0f, 8.0f)});
    };
    CHECK(run_identical(scene, configs) > 30);
  }
}

namespace {

/// Worlds of worker_threads 1, 2 and 3 (`params(threads)`), two players walking (one round a
/// circle, one back and forth along x), stepped `ticks` times; the state hashes and swarms must
/// agree every tick. Returns the worlds; `changed` counts the ticks whose hash differed from the
/// tick before.
std::vector<std::unique_ptr<World>> walk_on_1_2_3_threads(const GridMap& map, WorldParams (*params)(std::uint32_t),
                                                          int ticks, int& changed) {
  std::vector<std::unique_ptr<World>> worlds;
  for (std::uint32_t threads : {1u, 2u, 3u}) worlds.push_back(std::make_unique<World>(map, params(threads)));
  for (auto& w : worlds) {
    w->add_player({128.0f, 128.0f});
    w->add_player({60.0f, 190.0f});
  }
  std::uint64_t previous = 0;
  changed = 0;
  for (int t = 0; t < ticks; ++t) {
    // Players walk (the fields rebuild as they change cell).
    const float a = 0.05f * static_cast<float>(t);
    for (auto& w : worlds) {
      REQUIRE(w->set_player_intent(w->players()[0].id, {std::cos(a), std::sin(a)}));
      REQUIRE(w->set_player_intent(w->players()[1].id, {t % 60 < 30 ? 1.0f : -1.0f, 0.0f}));
      w->step(kDt);
    }
    INFO("tick " << t);
    REQUIRE(worlds[1]->state_hash() == worlds[0]->state_hash());
    REQUIRE(worlds[2]->state_hash() == worlds[0]->state_hash());
    REQUIRE(first_difference(worlds[0]->swarm(), worlds[2]->swarm()) == -1);
    if (worlds[0]->state_hash() != previous) ++changed;
    previous = worlds[0]->state_hash();
  }
  return worlds;
}

}  // namespace

TEST_CASE("threads: a World with worker_threads 1, 2 and 3 has the same state hash every tick") {
  const GridMap map = load_map("street/Boston_0_256.map");
  auto params = [](std::uint32_t threads) {
    WorldParams p;
    p.seed = 99;
    p.max_agents = 4000;
    p.spawner.initial_agents = 3000;
    p.spawner.wave_size = 200;
    p.spawner.wave_interval_ticks = 50;
    p.spawner.min_player_distance = 10.0f;
    p.worker_threads = threads;
    return p;
  };
  int changed = 0;
  const auto worlds = walk_on_1_2_3_threads(map, params, 200, changed);
  CHECK(changed == 200);
  CHECK(worlds[0]->swarm().size() == 3000 + 3 * 200);  // waves at ticks 50, 100, 150
  CHECK(worlds[0]->rebuild_count() > 3);
}

TEST_CASE("threads: a mixed crowd surrounding and settling round a standing player hashes the same on 1, 2, 3 threads") {
  GridMap map(48, 48);
  for (std::int32_t i = 0; i < 48; ++i) {
    for (const std::int32_t e : {0, 47}) {
      map.set_cost(i, e, kBlockedCost);
      map.set_cost(e, i, kBlockedCost);
    }
  }
  auto params = [](std::uint32_t threads) {
    WorldParams p;
    p.seed = 5;
    p.max_agents = 400;
    p.spawner.initial_agents = 300;
    p.spawner.min_player_distance = 8.0f;
    p.kinds = default_agent_kinds();
    p.worker_threads = threads;
    p.swarm.parallel_chunk_agents = 37;  // many chunks for 300 agents
    return p;
  };
  std::vector<std::unique_ptr<World>> worlds;
  for (std::uint32_t threads : {1u, 2u, 3u}) {
    worlds.push_back(std::make_unique<World>(map, params(threads)));
    worlds.back()->add_player({24.0f, 24.0f});
  }
  for (int t = 0; t < 300; ++t) {
    for (auto& w : worlds) w->step(kDt);
    INFO("tick " << t);
    REQUIRE(worlds[1]->state_hash() == worlds[0]->state_hash());
    REQUIRE(worlds[2]->state_hash() == worlds[0]->state_hash());
  }
  CHECK(worlds[0]->swarm().size() == 300);
}

TEST_CASE("threads: hierarchical mode with two size classes (their fields updated side by side) hashes the same on 1, 2, 3 threads") {
  const GridMap map = load_map("street/Boston_0_256.map");
  auto params = [](std::uint32_t threads) {
    WorldParams p;
    p.seed = 17;
    p.max_agents = 3000;
    p.spawner.initial_agents = 2500;
    p.spawner.min_player_distance = 10.0f;
    p.kinds = default_agent_kinds();  // runners and walkers: class 1; brutes: class 2
    p.field_mode = FieldMode::kHierarchical;
    p.field_rebuild_budget = 20000;  // sliced routes and a few sector fields a tick
    p.worker_threads = threads;
    return p;
  };
  int changed = 0;
  const auto worlds = walk_on_1_2_3_threads(map, params, 150, changed);
  CHECK(changed == 150);
  CHECK(worlds[0]->navigation().hierarchical());
  CHECK(worlds[0]->navigation().has_class(1));
  CHECK(worlds[0]->navigation().has_class(2));
  CHECK(worlds[0]->navigation().hierarchical_fields(2).route_builds() > 3);
}
