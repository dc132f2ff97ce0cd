// Bot brain, the gun: the nearest agent is the target (ties: the lowest id), fire only while the
// script holds the trigger and an agent is in sight, `fire S` runs out like a `wait S`, and a
// repeating script of commands that take no time ends each update instead of spinning.
// (Walking: bot_steering_test.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "swarmfield/client/bot_brain.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace client = swarmfield::client;
namespace sim = swarmfield::sim;

namespace {

sim::GridMap open_map() {
  sim::GridMap map;
  sim::MapError error;
  REQUIRE_MESSAGE(sim::parse_ascii_map("........\n........\n........\n........\n........\n........\n", "test", map,
                                       error),
                  error.to_string());
  return map;
}

client::BotBrain brain_of(const char* text) {
  client::BotScript script;
  client::BotScriptError error;
  REQUIRE_MESSAGE(client::parse_bot_script(text, "t.bot", script, error), error.to_string());
  return client::BotBrain(script, 1);
}

client::RenderAgent agent(std::uint32_t id, float x, float y) { return client::RenderAgent{id, x, y, 0.0f, 0}; }

// Ticks of `brain.act` (dt each, agents unchanged) on which it fired.
int shots_in(client::BotBrain& brain, const sim::GridMap& map, sim::Vec2 p, const std::vector<client::RenderAgent>& agents,
             int ticks, float dt) {
  int shots = 0;
  for (int i = 0; i < ticks; ++i) shots += brain.act(map, p, agents, dt).fire ? 1 : 0;
  return shots;
}

}  // namespace

TEST_CASE("nearest_agent: by distance, equal distances to the lowest id, in any order") {
  const sim::Vec2 p{4.0f, 4.0f};
  CHECK(client::nearest_agent(p, {}) == nullptr);
  const std::vector<client::RenderAgent> agents = {agent(3, 9.0f, 4.0f), agent(7, 4.0f, 6.5f), agent(1, 0.0f, 0.0f)};
  const client::RenderAgent* near = client::nearest_agent(p, agents);
  REQUIRE(near != nullptr);
  CHECK(near->id == 7);
  // Two at the same distance (2 units, on either side), listed high id first: the lower id.
  const std::vector<client::RenderAgent> tie = {agent(9, 6.0f, 4.0f), agent(12, 4.0f, 7.0f), agent(4, 2.0f, 4.0f)};
  near = client::nearest_agent(p, tie);
  REQUIRE(near != nullptr);
  CHECK(near->id == 4);
}

TEST_CASE("fire: aims at the nearest agent from the bot's position; no agent, no fire") {
  const sim::GridMap map = open_map();
  client::BotBrain brain = brain_of("fire\nwait 10\n");
  const sim::Vec2 p{2.5f, 2.5f};
  // Before the bot has seen itself nothing runs and nothing fires.
  std::vector<client::RenderAgent> agents = {agent(5, 3.5f, 2.5f)};
  CHECK_FALSE(brain.act(map, std::nullopt, agents, 0.1f).fire);
  CHECK_FALSE(brain.trigger_held());

  agents = {agent(2, 7.5f, 0.5f), agent(5, 1.0f, 4.5f), agent(8, 6.0f, 6.0f)};
  client::BotAction action = brain.act(map, p, agents, 0.1f);
  CHECK(brain.trigger_held());
  CHECK(action.fire);
  CHECK(action.aim == sim::Vec2{-1.5f, 2.0f});  // agent 5 - position (distance 2.5)
  CHECK(action.move == sim::Vec2{});          // the script's move goes on (here: wait)

  agents.push_back(agent(1, 3.5f, 2.5f));  // a nearer one arrives: the target changes
  action = brain.act(map, p, agents, 0.1f);
  CHECK(action.fire);
  CHECK(action.aim == sim::Vec2{1.0f, 0.0f});

  action = brain.act(map, p, {}, 0.1f);  // none in sight: trigger held, no shot
  CHECK(brain.trigger_held());
  CHECK_FALSE(action.fire);
  CHECK(action.aim == sim::Vec2{});

  // One exactly on the player has no direction: no shot.
  action = brain.act(map, p, std::vector<client::RenderAgent>{agent(3, 2.5f, 2.5f)}, 0.1f);
  CHECK_FALSE(action.fire);
}

TEST_CASE("fire goes on while the script moves; cease lets go; a script that ends holding the trigger stands and fires on") {
  const sim::GridMap map = open_map();
  const std::vector<client::RenderAgent> agents = {agent(1, 7.5f, 5.5f)};
  client::BotBrain brain = brain_of("fire\ngoto 6.5 1.5\ncease\nwait 0.5\nfire\nwait 0.5\n");
  const float dt = 0.125f;  // exact in binary: the waits end on known updates
  sim::Vec2 p{1.5f, 1.5f};
  int moving_shots = 0;
  for (int ticks = 0; ticks < 200 && brain.command_index() < 2; ++ticks) {
    const client::BotAction action = brain.act(map, p, agents, dt);
    if (brain.command_index() == 1) {
      CHECK(action.fire);
      CHECK(sim::length(action.move) > 0.0f);
      CHECK(action.aim == sim::Vec2{7.5f - p.x, 5.5f - p.y});
      moving_shots += action.fire ? 1 : 0;
    }
    p = p + action.move * (5.0f * dt);
  }
  CHECK(brain.gotos_arrived() == 1);
  CHECK(moving_shots >= 6);
  // The update that arrived ran cease and began the wait: its other 3 updates fire nothing.
  CHECK_FALSE(brain.trigger_held());
  CHECK(shots_in(brain, map, p, agents, 3, dt) == 0);
  // fire again for the last wait (4 updates); the script ends with the trigger held: a last
  // stand, standing still and firing, not finished.
  CHECK(shots_in(brain, map, p, agents, 4, dt) == 4);
  for (int i = 0; i < 20; ++i) {
    const client::BotAction action = brain.act(map, p, agents, dt);
    CHECK(action.fire);
    CHECK(action.move == sim::Vec2{});
  }
  CHECK(brain.ran_off_end());
  CHECK_FALSE(brain.finished());
  CHECK(brain.trigger_held());

  // A bare `fire` is a last stand from the start; `fire S` at the end fires S seconds more.
  client::BotBrain bare = brain_of("fire\n");
  CHECK(shots_in(bare, map, p, agents, 10, dt) == 10);
  CHECK_FALSE(bare.finished());
  client::BotBrain timed = brain_of("wait 0.25\nfire 0.5\n");
  CHECK(shots_in(timed, map, p, agents, 10, dt) == 4);  // 2 updates of wait, then 4 x 0.125 s
  CHECK(timed.finished());
  // Without the trigger, the script's end is the end.
  client::BotBrain cease = brain_of("fire\nwait 0.25\ncease\n");
  CHECK(shots_in(cease, map, p, agents, 5, dt) == 2);
  CHECK(cease.finished());
}

TEST_CASE("build takes no time: its cells come out of act() in script order; a cell off the map is skipped, warned once") {
  const sim::GridMap map = open_map();  // 8 x 6 cells
  client::BotBrain brain = brain_of("build 1 2\nbuild 7 5\nbuild 8 0\nwait 0.25\nbuild 0 6\nrepeat\n");
  const sim::Vec2 p{2.5f, 2.5f};
  CHECK(brain.act(map, std::nullopt, {}, 0.125f).builds.empty());  // before the bot sees itself
  client::BotAction action = brain.act(map, p, {}, 0.125f);
  CHECK(action.builds == std::vector<sim::CellCoord>{{1, 2}, {7, 5}});
  CHECK(action.move == sim::Vec2{});
  std::vector<std::string> messages = brain.take_messages();
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "line 3: build (8, 0) is outside the 8x6 map, skipped");
  CHECK(brain.act(map, p, {}, 0.125f).builds.empty());  // the wait goes on
  // The wait ends; line 5 is off the map too; repeat starts over in the same update.
  action = brain.act(map, p, {}, 0.125f);
  CHECK(action.builds == std::vector<sim::CellCoord>{{1, 2}, {7, 5}});
  messages = brain.take_messages();
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "line 5: build (0, 6) is outside the 8x6 map, skipped");
  // The next passes (a wait of 0.25 s is two updates and ends on the third) warn no more.
  for (int i = 0; i < 4; ++i) (void)brain.act(map, p, {}, 0.125f);
  CHECK(brain.take_messages().empty());
  CHECK(brain.builds() == 8);  // four passes
  CHECK(brain.builds_skipped() == 7);
}

TEST_CASE("build ~DX ~DY builds relative to the bot's own cell when it runs; off the map is skipped") {
  const sim::GridMap map = open_map();  // 8 x 6 cells
  client::BotBrain brain = brain_of("build ~2 ~-1\nbuild 0 ~\nbuild ~-5 ~0\n");
  const client::BotAction action = brain.act(map, sim::Vec2{3.5f, 2.5f}, {}, 0.125f);  // cell (3, 2)
  CHECK(action.builds == std::vector<sim::CellCoord>{{5, 1}, {0, 2}});
  const std::vector<std::string> messages = brain.take_messages();
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "line 3: build (-2, 2) is outside the 8x6 map, skipped");
}

TEST_CASE("fire S holds the trigger for S seconds of updates, like wait S; fire 0 fires nothing") {
  const sim::GridMap map = open_map();
  const std::vector<client::RenderAgent> agents = {agent(1, 5.0f, 5.0f)};
  const sim::Vec2 p{1.5f, 1.5f};
  client::BotBrain brain = brain_of("fire 1\nwait 3\n");
  CHECK(shots_in(brain, map, p, agents, 12, 0.25f) == 4);  // 4 x 0.25 s
  CHECK_FALSE(brain.finished());

  client::BotBrain timed_wait = brain_of("fire 1\nwait 1\nwait 5\n");  // the same span as the wait
  int both = 0;
  for (int i = 0; i < 12; ++i) {
    const bool fired = timed_wait.act(map, p, agents, 0.25f).fire;
    both += fired && timed_wait.command_index() == 1 ? 1 : 0;
    CHECK(fired == (timed_wait.command_index() == 1));
  }
  CHECK(both == 4);

  client::BotBrain zero = brain_of("fire 0\nwait 1\n");
  CHECK(shots_in(zero, map, p, agents, 3, 0.25f) == 0);
  // A later `fire` replaces the earlier one: untimed after timed fires on.
  client::BotBrain longer = brain_of("fire 0.5\nfire\nwait 2\n");
  CHECK(shots_in(longer, map, p, agents, 6, 0.25f) == 6);
}

TEST_CASE("a repeating script of zero-time commands ends each update as one tick instead of spinning") {
  const sim::GridMap map = open_map();
  const std::vector<client::RenderAgent> agents = {agent(1, 5.0f, 5.0f)};
  const sim::Vec2 p{1.5f, 1.5f};
  // Each of these would loop forever inside one update without the guard.
  for (const char* text : {"fire\nrepeat\n", "fire 2\ncease\nrepeat\n", "wait 0\nfire\nwander 0\nrepeat\n",
                           "goto 1.5 1.5\nfire\nrepeat\n", "goto -5 -5\nfire\nrepeat\n"}) {
    CAPTURE(text);
    client::BotBrain brain = brain_of(text);
    for (int tick = 0; tick < 50; ++tick) {
      const client::BotAction action = brain.act(map, p, agents, 1.0f / 30.0f);
      CHECK(action.move == sim::Vec2{});
      CHECK(brain.command_index() == 0);
      CHECK_FALSE(brain.finished());
    }
  }
  // The trigger as the pass left it: `fire` + `repeat` fires every tick; fire-then-cease never.
  client::BotBrain firing = brain_of("fire\nrepeat\n");
  CHECK(shots_in(firing, map, p, agents, 30, 1.0f / 30.0f) == 30);
  client::BotBrain ceasing = brain_of("fire 2\ncease\nrepeat\n");
  CHECK(shots_in(ceasing, map, p, agents, 30, 1.0f / 30.0f) == 0);
  // A repeat after a command that took time starts the next pass in the same update, as before.
  client::BotBrain walking = brain_of("wait 0.1\nfire\nrepeat\n");
  for (int tick = 0; tick < 30; ++tick) (void)walking.act(map, p, agents, 0.05f);
  CHECK(walking.trigger_held());
  CHECK(walking.command_index() == 0);
}

TEST_CASE("kite S backs away from the nearest enemies while firing at them, round walls; nobody near: stands") {
  sim::GridMap map;
  sim::MapError error;
  // A wall column at x = 6 from y = 0 to 4: kiting east from (5.5, 2.5) is blocked.
  REQUIRE(sim::parse_ascii_map("......#...\n......#...\n......#...\n......#...\n..........\n..........\n", "k",
                               map, error));
  client::BotBrain brain = brain_of("kite 1\nwait 1\n");
  sim::Vec2 p{2.5f, 2.5f};
  const std::vector<client::RenderAgent> west = {agent(4, 0.5f, 2.5f), agent(5, 0.6f, 2.4f)};
  client::BotAction a = brain.act(map, p, west, 0.1f);
  CHECK(a.move.x > 0.9f);  // straight away (east)
  CHECK(a.fire);
  CHECK(a.aim == sim::Vec2{0.6f - p.x, 2.4f - p.y});  // the nearest one
  // Against the wall: the best open way that still leads away.
  p = {5.5f, 2.5f};
  const std::vector<client::RenderAgent> closing = {agent(7, 3.5f, 2.5f)};
  a = brain.act(map, p, closing, 0.1f);
  CHECK(map.walkable_at(p + a.move * 1.5f));
  CHECK(a.move.x >= -0.01f);  // never toward the enemy
  CHECK(std::abs(a.move.y) > 0.9f);
  // Nobody within kKiteRadius: it stands and does not fire.
  const std::vector<client::RenderAgent> far = {agent(8, 9.5f, 5.5f)};
  CHECK(client::kite_direction(map, {0.5f, 0.5f}, far) == sim::Vec2{});
  a = brain.act(map, sim::Vec2{0.5f, 0.5f}, std::vector<client::RenderAgent>{}, 0.1f);
  CHECK(a.move == sim::Vec2{});
  CHECK_FALSE(a.fire);
  // After 1 s of kite, the wait: no move, no fire (kite's trigger ends with it).
  for (int i = 0; i < 8; ++i) (void)brain.act(map, p, closing, 0.1f);
  CHECK(brain.command_index() == 1);
  a = brain.act(map, p, closing, 0.1f);
  CHECK(a.move == sim::Vec2{});
  CHECK_FALSE(a.fire);
}
