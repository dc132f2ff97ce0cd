// C8. Chokepoint: 200 agents of radius 0.35 leave a room through the 2-cell opening at x = 9.
// Expected: no deadlock; throughput at least 50% of (opening width / agent diameter) x max speed
// agents per second; no agent pinned against a door post for more than 2 s.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr const char* kMap =
    "#########################\n"
    "#aaaaaaaa#..............#\n"
    "#aaaaaaaa...............#\n"
    "#aaaaaaaa...........P...#\n"
    "#aaaaaaaa#..............#\n"
    "#########################\n";

constexpr int kAgents = 200;
constexpr int kMaxTicks = 1800;  // 60 s
constexpr float kOpeningWidth = 2.0f;

/// Where the 200 agents start: the block (x 1..9, y 1..5) on a 20 x 10 lattice 0.4 apart, or
/// uniformly at random (seeded) inside it. Either way 200 agents in 32 cells start packed well
/// past contact (full hexagonal packing holds ~75) and must stream out as they untangle.
enum class Placement { kLattice, kRandom };

void run(Placement placement, Steering steering) {
  const Scene scene(kMap);
  const std::vector<CellCoord> block = scene.cells_of('a');
  REQUIRE(block.size() == 32);
  const CellCoord post_n{9, 1}, post_s{9, 4};
  REQUIRE_FALSE(scene.map.walkable(post_n));
  REQUIRE_FALSE(scene.map.walkable(post_s));
  REQUIRE(scene.map.walkable(9, 2));
  REQUIRE(scene.map.walkable(9, 3));
  const SwarmParams params;  // radius 0.35, max_speed 3 cells/s
  // A legitimate dense crowd: within the map's density limit (the hexagonal packing bound).
  REQUIRE(density_limit(scene.map.walkable_count(), scene.map.cell_size(), params.radius) >= kAgents);
  ScenarioRun scenario(scene.map, scene.one('P'), steering, kAgents, params);
  Swarm& swarm = scenario.swarm();
  if (placement == Placement::kLattice) {
    for (int j = 0; j < 10; ++j) {
      for (int i = 0; i < 20; ++i) {
        const Vec2 p{1.0f + 0.4f * (static_cast<float>(i) + 0.5f), 1.0f + 0.4f * (static_cast<float>(j) + 0.5f)};
        REQUIRE(swarm.add(p) != Swarm::kInvalidAgent);
      }
    }
  } else {
    std::uint64_t state = 12345;  // SplitMix64
    auto unit = [&state] {
      std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return static_cast<float>((z ^ (z >> 31)) >> 40) * (1.0f / 16777216.0f);
    };
    for (int i = 0; i < kAgents; ++i) {
      const float x = 1.35f + 7.3f * unit();
      const float y = 1.35f + 3.3f * unit();
      REQUIRE(swarm.add({x, y}) != Swarm::kInvalidAgent);
    }
  }

  const float ideal = kOpeningWidth / (2.0f * params.radius) * params.max_speed;  // agents per second
  std::vector<int> crossed_at(kAgents, -1);  // tick each agent first reached x >= 10
  std::vector<int> pinned_for(kAgents, 0);   // current run of ticks pinned on a post
  int worst_pinned = 0, crossings = 0;
  std::uint32_t worst_pinned_id = 0;
  float worst_overlap = 0.0f;
  int t = 1;
  // Until 120 agents are through: about what the far side holds before the pile round the
  // player backs up to the door (14 x 4 cells, ~130 agents at full packing).
  for (; t <= kMaxTicks && crossings < 120; ++t) {
    scenario.step();
    REQUIRE(all_finite(swarm));
    REQUIRE(agents_in_walls(scene.map, swarm) == 0);
    for (std::size_t i = 0; i < swarm.size(); ++i) {
      const std::uint32_t id = swarm.ids()[i];
      const Vec2 p{swarm.xs()[i], swarm.ys()[i]};
      const Vec2 v{swarm.vxs()[i], swarm.vys()[i]};
      worst_overlap = std::max(worst_overlap, wall_overlap(scene.map, p, params.radius));
      if (crossed_at[id] < 0 && p.x >= 10.0f) {
        crossed_at[id] = t;
        ++crossings;
      }
      // Pinned: disc touching a post (within 0.02 of it) and slower than 10% of max speed,
      // while the stream still flows (up to the 100th agent through; later the far side is
      // full and everyone waits, post or no post).
      const float gap = std::min(wall_gap(p, post_n), wall_gap(p, post_s));
      const bool pinned = gap <= params.radius + 0.02f && length(v) < 0.1f * params.max_speed;
      pinned_for[id] = pinned ? pinned_for[id] + 1 : 0;
      if (crossings < 100 && pinned_for[id] > worst_pinned) {
        worst_pinned = pinned_for[id];
        worst_pinned_id = id;
      }
    }
  }
  std::vector<int> times;
  for (const int c : crossed_at) {
    if (c >= 0) times.push_back(c);
  }
  std::sort(times.begin(), times.end());
  // Throughput between the 10th and the 60th agent through (the flow is steady there: before,
  // the crowd is still untangling; later the far side fills up).
  REQUIRE(times.size() >= 60);
  const double throughput = 50.0 / (static_cast<double>(times[59] - times[9]) * static_cast<double>(kDt));
  int longest_pause = 0;
  for (std::size_t k = 1; k < std::min<std::size_t>(times.size(), 100); ++k) {
    longest_pause = std::max(longest_pause, times[k] - times[k - 1]);
  }
  const std::string name =
      std::string(placement == Placement::kLattice ? "lattice" : "random") + ", " + steering_name(steering);
  MESSAGE("C8 (" << name << "): " << times.size()
                 << " agents through in " << t - 1 << " ticks; first at tick " << times.front()
                 << "; throughput (10th..60th) " << throughput << " agents/s vs ideal " << ideal << " (ratio "
                 << throughput / ideal << "); longest pause between crossings (first 100) " << longest_pause
                 << " ticks; longest pinned on a post " << worst_pinned << " ticks (agent " << worst_pinned_id
                 << "); worst disc/wall overlap " << worst_overlap);
  CHECK(times.size() >= 100);   // no deadlock: the stream keeps going until the far side fills
  CHECK(longest_pause <= 60);   // ... with no stall of 2 s
  CHECK(throughput >= 0.5 * ideal);
  CHECK(worst_pinned <= 60);
  CHECK(worst_overlap <= 2e-4f);  // wall sliding's touching tolerance (see C7)
}

}  // namespace

TEST_CASE("C8: 200 agents (lattice start) through a 2-cell opening: no deadlock, throughput, nobody pinned") {
  run(Placement::kLattice, Steering::kFlowField);
}

TEST_CASE("C8: 200 agents (random start) through a 2-cell opening: no deadlock, throughput, nobody pinned") {
  run(Placement::kRandom, Steering::kFlowField);
}

TEST_CASE("C8 (World: NavigationSet, any-angle): 200 agents (lattice start) through the opening") {
  run(Placement::kLattice, Steering::kWorld);
}

TEST_CASE("C8 (World: NavigationSet, any-angle): 200 agents (random start) through the opening") {
  run(Placement::kRandom, Steering::kWorld);
}
