// Swarm::step allocates nothing once warm. Replaces the global operator new with a counting
// one, which is why this test is an executable of its own.
#include <doctest/doctest.h>

#include <span>
#include <vector>

#include "allocation_counter.hpp"
#include "swarm_test_support.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/worker_pool.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

TEST_CASE("the allocation counter sees allocations") {
  const std::size_t before = g_allocations.load();
  auto* v = new std::vector<int>(100);
  const std::size_t after = g_allocations.load();
  delete v;
  CHECK(after - before >= 2);  // the vector object and its buffer
}

TEST_CASE("Swarm::step allocates nothing once warm") {
  const std::uint64_t seed = test_seed(99);
  SplitMix rng{seed};
  // 128 x 128 with scattered walls, props, a goal; agents everywhere, some inside walls.
  GridMap map(128, 128);
  for (int k = 0; k < 2500; ++k) map.set_cost(rng.below(128), rng.below(128), kBlockedCost);
  map.set_cost(64, 64, kDefaultCost);
  map.set_cost(10, 10, kBlockedCost);
  NavigationFields nav;
  const CellCoord goal[1] = {{64, 64}};
  REQUIRE(nav.update(map, goal));
  std::vector<Obstacle> props;
  for (int k = 0; k < 50; ++k) props.push_back({{rng.uniform(0.0f, 128.0f), rng.uniform(0.0f, 128.0f)}, 0.5f});

  Swarm swarm(SwarmParams{}, 6000);
  swarm.set_environment(map, props);
  for (int i = 0; i < 5000; ++i) swarm.add({rng.uniform(0.0f, 128.0f), rng.uniform(0.0f, 128.0f)});
  for (int i = 0; i < 20; ++i) swarm.add({32.5f, 32.5f});  // a stack on one point
  constexpr float dt = 1.0f / 30.0f;
  for (int t = 0; t < 3; ++t) swarm.step(map, nav.flow(), nav.integration(), dt);  // warm up

  const std::size_t before = g_allocations.load();
  for (int t = 0; t < 60; ++t) {
    if (t == 30) {
      swarm.set_position(7, {10.5f, 10.5f});  // inside a wall: repair path
      for (int i = 0; i < 10; ++i) swarm.add({40.5f, 40.5f});  // more agents, within capacity
    }
    swarm.step(map, nav.flow(), nav.integration(), dt);
  }
  const std::size_t allocations = g_allocations.load() - before;
  CHECK(allocations == 0);
  CHECK(swarm.size() == 5030);
  CHECK(all_finite(swarm));
  CHECK(agents_in_walls(map, swarm) == 0);
}

TEST_CASE("Swarm::step over a 2-thread WorkerPool allocates nothing once warm") {
  const std::uint64_t seed = test_seed(123);
  SplitMix rng{seed};
  GridMap map(96, 96);
  for (int k = 0; k < 1200; ++k) map.set_cost(rng.below(96), rng.below(96), kBlockedCost);
  map.set_cost(48, 48, kDefaultCost);
  NavigationFields nav;
  const CellCoord goal[1] = {{48, 48}};
  REQUIRE(nav.update(map, goal));
  std::vector<Obstacle> props;
  for (int k = 0; k < 20; ++k) props.push_back({{rng.uniform(0.0f, 96.0f), rng.uniform(0.0f, 96.0f)}, 0.5f});

  WorkerPool pool(2);  // threads start here, before counting
  SwarmParams params;
  params.parallel_chunk_agents = 64;  // many chunks, so both threads work
  Swarm swarm(params, 12000);
  swarm.set_environment(map, props);
  // Over 4096 agents, so the hash's item chunks split too.
  for (int i = 0; i < 10000; ++i) swarm.add({rng.uniform(0.0f, 96.0f), rng.uniform(0.0f, 96.0f)});
  for (int i = 0; i < 20; ++i) swarm.add({30.5f, 30.5f});
  constexpr float dt = 1.0f / 30.0f;
  for (int t = 0; t < 3; ++t) swarm.step(map, nav.flow(), nav.integration(), dt, &pool);

  const std::size_t before = g_allocations.load();
  for (int t = 0; t < 60; ++t) {
    if (t == 30) {
      swarm.set_position(7, {-3.0f, 50.0f});  // off the map: repair path
      for (int i = 0; i < 10; ++i) swarm.add({40.5f, 40.5f});
    }
    swarm.step(map, nav.flow(), nav.integration(), dt, &pool);
  }
  const std::size_t allocations = g_allocations.load() - before;
  CHECK(allocations == 0);
  CHECK(swarm.size() == 10030);
  CHECK(all_finite(swarm));
  CHECK(agents_in_walls(map, swarm) == 0);
}

TEST_CASE("Swarm::step with a NavigationSet (World's path: kinds, size classes, rest, big discs) allocates nothing once warm") {
  const std::uint64_t seed = test_seed(321);
  SplitMix rng{seed};
  GridMap map(96, 96);
  for (int k = 0; k < 600; ++k) map.set_cost(rng.below(96), rng.below(96), kBlockedCost);
  map.set_cost(48, 48, kDefaultCost);
  NavigationSet nav;
  const Vec2 goal[1] = {{48.5f, 48.5f}};
  SizeClassMask classes = 0;
  for (const AgentKind& k : default_agent_kinds()) classes |= size_class_bit(size_class_of_radius(k.radius, 1.0f));
  REQUIRE(nav.update(map, goal, classes));

  WorkerPool pool(2);
  SwarmParams params;
  params.parallel_chunk_agents = 64;
  Swarm swarm(params, 6000);
  swarm.set_environment(map, {});
  REQUIRE(swarm.set_kinds(default_agent_kinds()));
  for (int i = 0; i < 5000; ++i) {
    swarm.add({rng.uniform(0.0f, 96.0f), rng.uniform(0.0f, 96.0f)}, 0.0f, static_cast<std::uint8_t>(rng.below(3)));
  }
  for (int i = 0; i < 20; ++i) swarm.add({30.5f, 30.5f});  // a stack: the burst patterns
  constexpr float dt = 1.0f / 30.0f;
  // The goal stands (World passes one velocity per player, zero while standing), then walks
  // from tick 60 (the pursuit: the goal's clear run).
  const Vec2 standing[1] = {{0.0f, 0.0f}};
  const Vec2 walking[1] = {{4.0f, -3.0f}};
  for (int t = 0; t < 3; ++t) swarm.step(map, nav, dt, &pool, nullptr, standing);

  const std::size_t before = g_allocations.load();
  for (int t = 0; t < 90; ++t) {
    if (t == 30) {
      swarm.set_position(7, {-3.0f, 50.0f});  // off the map: repair path (big kinds: clearance)
      for (int i = 0; i < 10; ++i) swarm.add({40.5f, 40.5f}, 0.0f, 2);  // a new stack of brutes
    }
    swarm.step(map, nav, dt, &pool, nullptr, t >= 60 ? walking : standing);
  }
  const std::size_t allocations = g_allocations.load() - before;
  CHECK(allocations == 0);
  CHECK(swarm.size() == 5030);
  CHECK(all_finite(swarm));
}
