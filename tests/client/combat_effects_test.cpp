// CombatEffects: deaths and shots taken from the snapshots as the render tick passes them,
// aged, forgotten after their life; a new stream starts over.
#include <doctest/doctest.h>

#include <deque>

#include "swarmfield/client/combat_effects.hpp"

namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;

namespace {

client::ReceivedSnapshot snapshot(std::uint32_t tick, std::uint32_t shots, std::vector<client::RenderAgent> deaths = {},
                                  float health = 100.0f) {
  client::ReceivedSnapshot r;
  r.snapshot.tick = tick;
  protocol::PlayerState p;
  p.id = 7;
  p.x = 5.0f;
  p.y = 6.0f;
  p.health = health;
  p.shots = shots;
  p.aim = 64;  // a quarter turn: +y
  r.snapshot.players = {p};
  r.snapshot.deaths = std::move(deaths);
  return r;
}

}  // namespace

TEST_CASE("combat effects: deaths and shots appear when the render tick reaches their snapshot, then fade out") {
  client::CombatEffects effects(10.0, 4.0);
  std::deque<client::ReceivedSnapshot> history;
  history.push_back(snapshot(100, 3));
  history.push_back(snapshot(102, 4, {client::RenderAgent{55, 1.5f, 2.5f, 0.0f, 2}}));
  history.push_back(snapshot(104, 4, {client::RenderAgent{56, 3.0f, 3.0f, 0.0f, 1}, client::RenderAgent{57, 4.0f, 4.0f, 0.0f, 1}}));
  effects.update(history, 101.0);  // only the first snapshot: the starting shot count, no shot
  CHECK(effects.deaths().empty());
  CHECK(effects.shots().empty());
  effects.update(history, 102.0);
  REQUIRE(effects.deaths().size() == 1);
  CHECK(effects.deaths()[0].x == 1.5f);
  CHECK(effects.deaths()[0].kind == 2);
  CHECK(effects.deaths()[0].age == 0.0f);
  REQUIRE(effects.shots().size() == 1);  // shots grew 3 -> 4
  CHECK(effects.shots()[0].player_id == 7);
  CHECK(effects.shots()[0].aim == doctest::Approx(3.14159265 / 2).epsilon(0.02));
  effects.update(history, 104.5);
  CHECK(effects.deaths().size() == 3);
  CHECK(effects.deaths()[0].age == doctest::Approx(0.25));
  CHECK(effects.shots().size() == 1);
  CHECK(effects.shots()[0].age == doctest::Approx(2.5 / 4.0));
  // Taking the same snapshots again adds nothing.
  effects.update(history, 104.5);
  CHECK(effects.deaths().size() == 3);
  CHECK(effects.deaths_seen() == 3);
  CHECK(effects.shots_seen() == 1);
  effects.update(history, 106.0);
  CHECK(effects.shots().empty());  // 4 ticks old
  CHECK(effects.deaths().size() == 3);
  effects.update(history, 112.0);  // the first death is 10 ticks old
  CHECK(effects.deaths().size() == 2);
  effects.update(history, 200.0);
  CHECK(effects.deaths().empty());
}

TEST_CASE("combat effects: a dead shooter draws no shot; a new stream (ticks going back) starts over; marks are capped") {
  client::CombatEffects effects(10.0, 4.0, 2);
  std::deque<client::ReceivedSnapshot> history;
  history.push_back(snapshot(10, 0));
  history.push_back(snapshot(11, 1, {}, 0.0f));
  effects.update(history, 11.0);
  CHECK(effects.shots().empty());
  history.clear();
  history.push_back(snapshot(3, 5, {client::RenderAgent{1, 0, 0, 0, 0}, client::RenderAgent{2, 0, 0, 0, 0},
                                    client::RenderAgent{3, 0, 0, 0, 0}}));
  effects.update(history, 3.0);
  REQUIRE(effects.deaths().size() == 2);  // capped: the oldest went first
  CHECK(effects.deaths()[0].x == 0.0f);
  CHECK(effects.deaths_seen() == 3);
}
