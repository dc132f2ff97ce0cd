// Bot steering: the flow field toward a waypoint leads around walls, and the bot brain runs
// scripts against a simple kinematic stand-in for the server (move, collide with walls).
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>

#include "swarmfield/client/bot_brain.hpp"
#include "swarmfield/client/bot_steering.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace client = swarmfield::client;
namespace sim = swarmfield::sim;

namespace {

struct AsciiMap {
  sim::GridMap map;
  std::vector<sim::MapMarker> markers;
  sim::Vec2 marker(char c) const {
    for (const auto& m : markers) {
      if (m.symbol == c) return map.cell_center(m.cell);
    }
    FAIL("marker not found: " << c);
    return {};
  }
};

AsciiMap parse(const char* text) {
  AsciiMap m;
  sim::MapError error;
  REQUIRE_MESSAGE(sim::parse_ascii_map(text, "test", m.map, error, &m.markers), error.to_string());
  return m;
}

// A wall from row 1 to row 7 between S and T: straight east is blocked.
constexpr const char* kWallMap = R"(
...........
.....#.....
.....#.....
.....#.....
.S...#...T.
.....#.....
.....#.....
.....#.....
...........
)";

// Kinematic stand-in for the server: moves at `speed` units/s, never into a blocked cell
// (axis-separated slide, as the server slides along walls).
sim::Vec2 step(const sim::GridMap& map, sim::Vec2 p, sim::Vec2 intent, float speed, float dt) {
  const sim::Vec2 d = intent * (speed * dt);
  sim::Vec2 next = p;
  if (map.walkable_at({p.x + d.x, p.y})) next.x += d.x;
  if (map.walkable_at({next.x, p.y + d.y})) next.y += d.y;
  return next;
}

}  // namespace

TEST_CASE("steering toward a target behind a wall turns to go around it") {
  const AsciiMap m = parse(kWallMap);
  client::BotSteering steering;
  const sim::Vec2 start = m.marker('S');
  const sim::Vec2 target = m.marker('T');
  REQUIRE(steering.set_target(m.map, target) == client::BotSteering::TargetStatus::kOk);
  CHECK(steering.reachable_from(m.map, start));

  // Just west of the wall, the direct line (east) runs into the wall; the flow must not.
  const sim::Vec2 near_wall = m.map.cell_center({4, 4});
  const sim::Vec2 dir = steering.direction(m.map, near_wall);
  CHECK(std::abs(sim::length(dir) - 1.0f) < 1e-3f);
  CHECK(std::abs(dir.y) > 0.5f);  // north or south, around the wall's end
  CHECK_FALSE(m.map.walkable_at(near_wall + sim::Vec2{1.0f, 0.0f}));  // (sanity: east is wall)

  // Following the field from S reaches T without ever standing in a wall.
  sim::Vec2 p = start;
  bool arrived = false;
  for (int i = 0; i < 2000 && !arrived; ++i) {
    p = step(m.map, p, steering.direction(m.map, p), 5.0f, 1.0f / 30.0f);
    REQUIRE(m.map.walkable_at(p));
    arrived = sim::length(target - p) < client::kArriveRadius;
  }
  CHECK(arrived);
}

TEST_CASE("steering rejects targets outside the map or in walls and rebuilds only on a new cell") {
  const AsciiMap m = parse(kWallMap);
  client::BotSteering steering;
  CHECK(steering.set_target(m.map, {-1.0f, 2.0f}) == client::BotSteering::TargetStatus::kOutsideMap);
  CHECK_FALSE(steering.has_target());
  CHECK(steering.set_target(m.map, {5.5f, 3.5f}) == client::BotSteering::TargetStatus::kBlocked);
  CHECK(steering.direction(m.map, {1.5f, 1.5f}) == sim::Vec2{});
  REQUIRE(steering.set_target(m.map, {9.2f, 4.2f}) == client::BotSteering::TargetStatus::kOk);
  CHECK(steering.rebuilds() == 1);
  REQUIRE(steering.set_target(m.map, {9.8f, 4.9f}) == client::BotSteering::TargetStatus::kOk);  // same cell
  CHECK(steering.rebuilds() == 1);
  REQUIRE(steering.set_target(m.map, {8.5f, 4.5f}) == client::BotSteering::TargetStatus::kOk);
  CHECK(steering.rebuilds() == 2);
}

TEST_CASE("target in a walled-off pocket is unreachable") {
  const AsciiMap m = parse(R"(
.S...###
.....#T#
.....###
)");
  client::BotSteering steering;
  REQUIRE(steering.set_target(m.map, m.marker('T')) == client::BotSteering::TargetStatus::kOk);
  CHECK_FALSE(steering.reachable_from(m.map, m.marker('S')));
}

TEST_CASE("the brain walks a goto/wait/goto script around the wall and finishes") {
  const AsciiMap m = parse(kWallMap);
  client::BotScript script;
  client::BotScriptError error;
  REQUIRE(client::parse_bot_script("goto 9.5 4.5\nwait 0.5\ngoto 1.5 8.5\n", "t.bot", script, error));
  client::BotBrain brain(script, 7);
  sim::Vec2 p = m.marker('S');
  const float dt = 1.0f / 30.0f;
  // Without a position (no snapshot yet) nothing happens.
  CHECK(brain.update(m.map, std::nullopt, dt) == sim::Vec2{});
  CHECK(brain.command_index() == 0);
  int steps = 0;
  int waited_steps = 0;
  for (; steps < 3000 && !brain.finished(); ++steps) {
    const std::size_t before = brain.command_index();
    const sim::Vec2 intent = brain.update(m.map, p, dt);
    CHECK(sim::length(intent) <= 1.0f + 1e-4f);
    if (before == 1 && brain.command_index() == 1) ++waited_steps;
    p = step(m.map, p, intent, 5.0f, dt);
    REQUIRE(m.map.walkable_at(p));
  }
  CHECK(brain.finished());
  CHECK(brain.gotos_arrived() == 2);
  CHECK(brain.gotos_failed() == 0);
  CHECK(sim::length(p - sim::Vec2{1.5f, 8.5f}) < 0.6f);
  CHECK(waited_steps >= 14);  // 0.5 s at 30 Hz
  CHECK(waited_steps <= 17);
  CHECK(brain.take_messages().empty());
}

TEST_CASE("a goto that can not be done is skipped with a warning, once per line") {
  const AsciiMap m = parse(kWallMap);
  client::BotScript script;
  client::BotScriptError error;
  REQUIRE(client::parse_bot_script("goto 5.5 3.5\nwait 0.1\nrepeat\n", "t.bot", script, error));
  client::BotBrain brain(script, 1);
  for (int i = 0; i < 100; ++i) (void)brain.update(m.map, m.marker('S'), 1.0f / 30.0f);
  const auto messages = brain.take_messages();
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "line 1: goto (5.5, 3.5) is inside a wall, skipped");
  CHECK(brain.gotos_failed() >= 2);  // repeat keeps trying
  CHECK_FALSE(brain.finished());
}

TEST_CASE("a goto times out with a warning when the bot does not get there") {
  const AsciiMap m = parse(kWallMap);
  client::BotScript script;
  client::BotScriptError error;
  REQUIRE(client::parse_bot_script("goto 9.5 4.5 1\n", "t.bot", script, error));
  client::BotBrain brain(script, 1);
  // The bot never moves (a stuck player): the 1 s timeout fires.
  for (int i = 0; i < 40 && !brain.finished(); ++i) (void)brain.update(m.map, m.marker('S'), 1.0f / 30.0f);
  CHECK(brain.finished());
  const auto messages = brain.take_messages();
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].find("line 1: goto (9.5, 4.5) timed out after 1.0 s at (1.5, 4.5)") == 0);
}

TEST_CASE("wander is seeded, stays out of walls and moves") {
  const AsciiMap m = parse(kWallMap);
  client::BotScript script;
  client::BotScriptError error;
  REQUIRE(client::parse_bot_script("wander 5\n", "t.bot", script, error));
  auto run = [&](std::uint64_t seed) {
    client::BotBrain brain(script, seed);
    sim::Vec2 p = m.marker('S');
    float travelled = 0.0f;
    for (int i = 0; i < 200 && !brain.finished(); ++i) {
      const sim::Vec2 next = step(m.map, p, brain.update(m.map, p, 1.0f / 30.0f), 5.0f, 1.0f / 30.0f);
      travelled += sim::length(next - p);
      p = next;
      REQUIRE(m.map.walkable_at(p));
    }
    CHECK(brain.finished());
    CHECK(travelled > 5.0f);
    return p;
  };
  const sim::Vec2 a = run(42);
  const sim::Vec2 b = run(42);
  const sim::Vec2 c = run(43);
  CHECK(a == b);
  CHECK_FALSE(a == c);
}
