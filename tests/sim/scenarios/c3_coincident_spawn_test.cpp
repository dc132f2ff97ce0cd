// C3. Agents spawned on exactly the same point: 50 agents at the bit-identical (10.5, 10.5) of an
// open 20 x 20 map, player at (18, 10). No NaN or infinity anywhere; within 20 ticks the smallest
// pairwise distance is at least 0.8 x (2 x radius); no agent moves more than 1.05 x max_speed x dt
// in one tick; the same seed replays bit-identically.
//
// Radius: the scenario fixes none; both the default 0.35 and 0.25 are run. The bound is tight
// at 0.35: 50 discs 0.56 apart need circles of radius 0.28 packed in a circle, which takes one of
// radius 7.947 x 0.28 = 2.225 (best known packing of 50 equal circles), so some agent must end
// 1.945 cells from the start point: 19.45 ticks at 3 cells/s in a straight line from the first
// tick. The swarm bursts a stack along a relaxed pattern (burst_pattern.hpp) whose spacing for
// 50 points is 98% of that packing's: 0.56 / 0.282 / 0.1 = 19.9 ticks, within the 20 asked.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr int kAgents = 50;
constexpr Vec2 kSpawn{10.5f, 10.5f};
constexpr Vec2 kPlayer{18.0f, 10.0f};

float min_pairwise_distance(const Swarm& s) {
  float best = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      best = std::min(best, std::hypot(s.xs()[i] - s.xs()[j], s.ys()[i] - s.ys()[j]));
    }
  }
  return best;
}

bool fields_finite(const World& w) {
  for (const Player& p : w.players()) {
    if (!std::isfinite(p.position.x) || !std::isfinite(p.position.y) || !std::isfinite(p.velocity.x) ||
        !std::isfinite(p.velocity.y)) {
      return false;
    }
  }
  const Swarm& s = w.swarm();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Vec2 d = sample_flow(w.map(), w.fields().flow(), {s.xs()[i], s.ys()[i]});
    if (!std::isfinite(d.x) || !std::isfinite(d.y)) return false;
  }
  return all_finite(s);
}

struct Trace {
  std::vector<std::uint64_t> hashes;    // world state hash after each tick
  std::vector<float> min_distance;      // smallest pairwise distance after each tick
  float max_step = 0.0f;                // largest displacement of one agent in one tick
  bool finite = true;
  std::size_t in_walls = 0;
};

/// Runs the scenario; `nudge` moves the last agent's spawn by that much in x (0: none).
Trace run(const WorldParams& params, int ticks, float nudge = 0.0f) {
  World world(GridMap(20, 20), params);
  world.add_player(kPlayer);
  for (int i = 0; i < kAgents; ++i) REQUIRE(world.swarm_mutable().add(kSpawn) != Swarm::kInvalidAgent);
  // Bit-identical start.
  for (std::size_t i = 0; i < world.swarm().size(); ++i) {
    REQUIRE(std::bit_cast<std::uint32_t>(world.swarm().xs()[i]) == std::bit_cast<std::uint32_t>(kSpawn.x));
    REQUIRE(std::bit_cast<std::uint32_t>(world.swarm().ys()[i]) == std::bit_cast<std::uint32_t>(kSpawn.y));
  }
  if (nudge != 0.0f) world.swarm_mutable().set_position(world.swarm().size() - 1, kSpawn + Vec2{nudge, 0.0f});
  Trace trace;
  std::vector<Vec2> before, after;
  for (int t = 1; t <= ticks; ++t) {
    positions_by_id(world.swarm(), before);
    world.step(kDt);
    positions_by_id(world.swarm(), after);
    for (std::size_t id = 0; id < after.size(); ++id) {
      trace.max_step = std::max(trace.max_step, length(after[id] - before[id]));
    }
    trace.finite = trace.finite && fields_finite(world);
    trace.in_walls += agents_in_walls(world.map(), world.swarm());
    trace.hashes.push_back(world.state_hash());
    trace.min_distance.push_back(min_pairwise_distance(world.swarm()));
  }
  return trace;
}

}  // namespace

TEST_CASE("C3: 50 agents on one point spread to 0.8 diameters within 20 ticks, within the speed limit, and replay") {
  WorldParams params;
  params.seed = 20240603;
  params.max_agents = 64;
  params.swarm.radius = 0.25f;  // see the file comment; max_speed stays the default 3 cells/s
  const float diameter = 2.0f * params.swarm.radius;
  const float limit = 1.05f * params.swarm.max_speed * kDt;

  const Trace a = run(params, 60);
  const Trace b = run(params, 60);
  const float after20 = *std::min_element(a.min_distance.begin() + 19, a.min_distance.end());
  MESSAGE("C3 radius " << params.swarm.radius << ": min distance / diameter at ticks 1, 10, 20, 30, 60: "
                       << a.min_distance[0] / diameter << " " << a.min_distance[9] / diameter << " "
                       << a.min_distance[19] / diameter << " " << a.min_distance[29] / diameter << " "
                       << a.min_distance[59] / diameter << " (smallest from tick 20 on " << after20 / diameter
                       << "); largest step " << a.max_step << " (limit " << limit << ")");
  CHECK(a.finite);
  CHECK(a.in_walls == 0);
  CHECK(a.min_distance[0] > 0.0f);  // the stack breaks up on the first tick
  CHECK(a.min_distance[19] >= 0.8f * diameter);
  CHECK(after20 >= 0.8f * diameter);  // and it stays spread while chasing the player
  CHECK(a.max_step <= limit);
  CHECK(a.max_step > 0.9f * params.swarm.max_speed * kDt);  // it does spread at full speed
  CHECK(a.hashes == b.hashes);  // bit-identical replay, tick by tick

  // The comparison can fail: one agent spawned 1e-3 off the stack gives another run.
  const Trace c = run(params, 5, 1e-3f);
  CHECK(c.hashes[4] != a.hashes[4]);
}

TEST_CASE("C3 at the default radius 0.35: the spread reaches 0.8 diameters within the 20 ticks asked") {
  // 19.45 ticks is the bound from the best packing (file comment): the burst pattern of 50
  // points has spacing 0.282 in the unit disc, which grows by max_speed * dt = 0.1 a tick and
  // reaches 0.56 at tick 19.9. (The golden-angle spiral used before spaced them 0.219 apart and
  // took 25.6 ticks.)
  WorldParams params;
  params.max_agents = 64;
  const float diameter = 2.0f * params.swarm.radius;
  const Trace a = run(params, 40);
  int reached = -1;
  for (std::size_t t = 0; t < a.min_distance.size(); ++t) {
    if (a.min_distance[t] >= 0.8f * diameter) {
      reached = static_cast<int>(t) + 1;
      break;
    }
  }
  MESSAGE("C3 radius 0.35: min distance / diameter at tick 20 " << a.min_distance[19] / diameter
                                                                 << ", 0.8 reached at tick " << reached
                                                                 << ", largest step " << a.max_step);
  CHECK(a.finite);
  CHECK(a.max_step <= 1.05f * params.swarm.max_speed * kDt);
  CHECK(reached > 0);
  CHECK(reached <= 20);
  CHECK(a.min_distance[19] >= 0.8f * diameter);
}
