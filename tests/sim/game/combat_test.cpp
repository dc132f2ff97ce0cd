// Combat's pure parts: the parameter check, the line of sight and the shot's target search.
#include "swarmfield/sim/game/combat.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "swarm_test_support.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

namespace {

// Agents as parallel arrays, as the swarm holds them.
struct Agents {
  std::vector<float> xs, ys;
  std::vector<std::uint8_t> kinds;
  std::vector<std::uint32_t> ids;
  void add(float x, float y, std::uint8_t kind = 0) {
    xs.push_back(x);
    ys.push_back(y);
    kinds.push_back(kind);
    ids.push_back(static_cast<std::uint32_t>(ids.size()));
  }
};

std::vector<std::uint32_t> shoot(const GridMap& map, Vec2 origin, Vec2 aim, const CombatParams& p, const Agents& a,
                                 std::span<const AgentKind> kinds) {
  std::vector<ShotCandidate> scratch;
  std::vector<std::uint32_t> hits;
  pick_shot_targets(map, origin, aim, p, a.xs, a.ys, a.kinds, kinds, a.ids, scratch, hits);
  return hits;
}

}  // namespace

TEST_CASE("combat params: the defaults pass, each field out of range is named") {
  CHECK(check_combat_params(CombatParams{}).empty());
  const auto refused = [](auto set, const char* name) {
    CombatParams p;
    set(p);
    const std::string msg = check_combat_params(p);
    CHECK_MESSAGE(msg.find(name) != std::string::npos, msg);
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  refused([](CombatParams& p) { p.player_health = 0.0f; }, "player_health");
  refused([&](CombatParams& p) { p.player_health = nan; }, "player_health");
  refused([](CombatParams& p) { p.respawn_seconds = -1.0f; }, "respawn_seconds");
  refused([](CombatParams& p) { p.fire_range = 0.0f; }, "fire_range");
  refused([](CombatParams& p) { p.fire_range = 1000.0f; }, "fire_range");
  refused([](CombatParams& p) { p.fire_cone = 2.0f; }, "fire_cone");
  refused([](CombatParams& p) { p.fire_damage = -1.0f; }, "fire_damage");
  refused([](CombatParams& p) { p.fire_interval = 0.0f; }, "fire_interval");
  refused([](CombatParams& p) { p.max_hits_per_shot = 0; }, "max_hits_per_shot");
  refused([](CombatParams& p) { p.max_hits_per_shot = kMaxHitsPerShot + 1; }, "max_hits_per_shot");
}

TEST_CASE("segment_clear: walls, diagonal squeezes and the map's edge block a shot") {
  AsciiScene scene(
      "##########\n"
      "#........#\n"
      "#....#...#\n"
      "#........#\n"
      "#...#....#\n"
      "#....#...#\n"
      "##########\n");
  const GridMap& m = scene.map;
  CHECK(segment_clear(m, {1.5f, 1.5f}, {8.5f, 1.5f}));   // along an open row
  CHECK(segment_clear(m, {1.5f, 1.5f}, {1.5f, 1.5f}));   // a point
  CHECK_FALSE(segment_clear(m, {1.5f, 2.5f}, {8.5f, 2.5f}));  // through the wall at (5, 2)
  CHECK_FALSE(segment_clear(m, {8.5f, 2.5f}, {1.5f, 2.5f}));  // either way
  CHECK(segment_clear(m, {1.5f, 3.5f}, {8.5f, 3.5f}));
  // Through the corner between the walls at (4, 4) and (5, 5): exactly diagonal.
  CHECK_FALSE(segment_clear(m, {4.5f, 5.5f}, {5.5f, 4.5f}));
  CHECK(segment_clear(m, {4.5f, 5.5f}, {4.5f, 4.9f}) == false);  // (4, 4) is a wall
  CHECK(segment_clear(m, {6.5f, 4.5f}, {7.5f, 3.5f}));           // an open diagonal
  // A slanted line that clips the wall cell (5, 2) from (2.5, 1.2) to (8.5, 2.6).
  CHECK_FALSE(segment_clear(m, {2.5f, 1.2f}, {8.5f, 2.6f}));
  CHECK(segment_clear(m, {2.5f, 1.2f}, {8.5f, 1.9f}));
  CHECK_FALSE(segment_clear(m, {1.5f, 1.5f}, {-3.0f, 1.5f}));  // off the map
  CHECK_FALSE(segment_clear(m, {1.5f, 1.5f}, {std::nanf(""), 1.5f}));
  // Against a brute-force walk of fine samples along random segments: the traversal never
  // says clear where a sample lies in a wall (it may be stricter only at exact corners).
  SplitMix rng{7};
  int clear = 0, blocked = 0;
  for (int t = 0; t < 4000; ++t) {
    const Vec2 a{rng.uniform(1.0f, 9.0f), rng.uniform(1.0f, 6.0f)};
    const Vec2 b{rng.uniform(1.0f, 9.0f), rng.uniform(1.0f, 6.0f)};
    bool sampled_clear = true;
    for (int s = 0; s <= 2000; ++s) {
      const float f = static_cast<float>(s) / 2000.0f;
      if (!m.walkable_at(a + (b - a) * f)) sampled_clear = false;
    }
    const bool traversal = segment_clear(m, a, b);
    if (traversal) {
      ++clear;
      CHECK_MESSAGE(sampled_clear, "a (" << a.x << "," << a.y << ") b (" << b.x << "," << b.y << ")");
    } else {
      ++blocked;
    }
  }
  CHECK(clear > 500);
  CHECK(blocked > 500);
}

TEST_CASE("pick_shot_targets: nearest first in the cone, in range, in sight, at most max_hits") {
  AsciiScene scene(
      "####################\n"
      "#..................#\n"
      "#..................#\n"
      "#..................#\n"
      "#..........#.......#\n"
      "#..................#\n"
      "####################\n");
  const std::vector<AgentKind> kinds(1);  // radius 0.35
  CombatParams p;
  p.fire_range = 8.0f;
  p.fire_cone = 0.2f;
  p.max_hits_per_shot = 2;
  const Vec2 origin{2.5f, 2.5f};
  Agents a;
  a.add(6.5f, 2.5f);   // 0: 4 ahead
  a.add(4.5f, 2.5f);   // 1: 2 ahead (nearest)
  a.add(8.5f, 2.5f);   // 2: 6 ahead (third)
  a.add(2.5f, 4.5f);   // 3: beside, out of the cone
  a.add(1.5f, 2.5f);   // 4: behind
  a.add(11.0f, 2.5f);  // 5: 8.5 ahead: its disc's near edge at 8.15, out of range
  a.add(5.5f, 3.2f);   // 6: 3 ahead, 0.7 off the axis: outside the 0.2 rad cone (0.6 at 3)
  std::vector<std::uint32_t> hits = shoot(scene.map, origin, {1.0f, 0.0f}, p, a, kinds);
  CHECK(hits == std::vector<std::uint32_t>{1, 0});
  p.max_hits_per_shot = 10;
  hits = shoot(scene.map, origin, {3.0f, 0.0f}, p, a, kinds);  // the aim's length does not matter
  CHECK(hits == std::vector<std::uint32_t>{1, 0, 2});
  p.fire_range = 8.2f;  // now agent 5's disc is in reach
  hits = shoot(scene.map, origin, {1.0f, 0.0f}, p, a, kinds);
  CHECK(hits == std::vector<std::uint32_t>{1, 0, 2, 5});
  // Aimed down: agent 3 only.
  hits = shoot(scene.map, origin, {0.0f, 1.0f}, p, a, kinds);
  CHECK(hits == std::vector<std::uint32_t>{3});
  // No aim, a non-finite aim: nothing.
  CHECK(shoot(scene.map, origin, {0.0f, 0.0f}, p, a, kinds).empty());
  CHECK(shoot(scene.map, origin, {std::nanf(""), 1.0f}, p, a, kinds).empty());

  // An agent pressed against the muzzle, its centre off the cone but its disc on the ray.
  Agents close;
  close.add(2.9f, 2.8f);
  CHECK(shoot(scene.map, origin, {1.0f, 0.0f}, p, close, kinds) == std::vector<std::uint32_t>{0});

  // Behind the wall at (11, 4): hidden; the one in front of it is hit.
  Agents walled;
  walled.add(13.5f, 4.5f);  // 0: behind the wall
  walled.add(9.5f, 4.5f);   // 1: before it
  const Vec2 low{3.5f, 4.5f};
  CHECK(shoot(scene.map, low, {1.0f, 0.0f}, p, walled, kinds) == std::vector<std::uint32_t>{1});

  // Ties in distance go to the lower id, whatever the order in the arrays.
  Agents tie;
  tie.add(4.5f, 2.5f);
  tie.add(4.5f, 2.5f);
  tie.ids = {9, 4};
  p.max_hits_per_shot = 1;
  CHECK(shoot(scene.map, origin, {1.0f, 0.0f}, p, tie, kinds) == std::vector<std::uint32_t>{1});
}

TEST_CASE("pick_shot_targets: many agents, the blocked scan finds the same hits as a plain one") {
  GridMap open = GridMap::from_costs(64, 64, std::vector<std::uint8_t>(64 * 64, 1));
  const std::vector<AgentKind> kinds = default_agent_kinds();
  SplitMix rng{3};
  Agents a;
  for (int i = 0; i < 2003; ++i) {
    a.add(rng.uniform(0.5f, 63.5f), rng.uniform(0.5f, 63.5f), static_cast<std::uint8_t>(rng.below(3)));
  }
  CombatParams p;
  p.max_hits_per_shot = kMaxHitsPerShot;
  for (int shot = 0; shot < 50; ++shot) {
    const Vec2 origin{rng.uniform(5.0f, 59.0f), rng.uniform(5.0f, 59.0f)};
    const Vec2 aim{rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f)};
    const std::vector<std::uint32_t> hits = shoot(open, origin, aim, p, a, kinds);
    // Brute force: every agent passing the rule, sorted by (distance, id).
    std::vector<std::pair<float, std::uint32_t>> expect;
    const Vec2 u = normalized_or_zero(aim);
    for (std::size_t i = 0; i < a.xs.size(); ++i) {
      const Vec2 d{a.xs[i] - origin.x, a.ys[i] - origin.y};
      const float r = kinds[a.kinds[i]].radius;
      const float dist = length(d);
      if (dist > p.fire_range + r) continue;
      const float along = dot(d, u);
      const bool cone = along >= dist * std::cos(p.fire_cone);
      const bool ray = along > 0.0f && std::abs(d.x * u.y - d.y * u.x) <= r;
      if (cone || ray || dist <= r) expect.push_back({dot(d, d), a.ids[i]});
    }
    std::sort(expect.begin(), expect.end());
    if (expect.size() > kMaxHitsPerShot) expect.resize(kMaxHitsPerShot);
    REQUIRE(hits.size() == expect.size());
    for (std::size_t h = 0; h < hits.size(); ++h) CHECK(a.ids[hits[h]] == expect[h].second);
  }
}
