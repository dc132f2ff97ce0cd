// World with combat on: agents hurt players, players shoot agents, the dead leave or respawn,
// and the match stays deterministic for any thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

namespace {

constexpr float kDt = 1.0f / 30.0f;

GridMap open_room(std::int32_t side) {
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(side) * side, 1);
  for (std::int32_t i = 0; i < side; ++i) {
    costs[static_cast<std::size_t>(i)] = costs[static_cast<std::size_t>(side) * (side - 1) + i] = kBlockedCost;
    costs[static_cast<std::size_t>(i) * side] = costs[static_cast<std::size_t>(i) * side + side - 1] = kBlockedCost;
  }
  return GridMap::from_costs(side, side, std::move(costs));
}

WorldParams combat_params() {
  WorldParams p;
  p.combat.enabled = true;
  p.max_agents = 1000;
  AgentKind k;
  k.name = "walker";
  k.damage = 6.0f;
  k.health = 40.0f;
  p.kinds = {k};
  return p;
}

}  // namespace

TEST_CASE("combat: an agent in reach hurts the player; it dies at 0, stays where it fell, respawns whole") {
  WorldParams p = combat_params();
  p.combat.player_health = 10.0f;
  p.combat.respawn_seconds = 1.0f;
  World w(open_room(24), p);
  const std::uint32_t pid = w.add_player({12.5f, 12.5f});
  const std::uint32_t biter = w.swarm_mutable().add({12.5f + 0.7f, 12.5f});  // touching (0.35 + 0.4 = 0.75)
  const std::uint32_t far = w.swarm_mutable().add({12.5f, 12.5f + 6.0f});
  REQUIRE(w.find_player(pid)->health == 10.0f);
  w.step(kDt);
  CHECK(w.find_player(pid)->health == doctest::Approx(10.0f - 6.0f * kDt));
  CHECK(w.contacts().size() == 1);
  // 10 hp at 6 hp/s: 50 ticks (the far agent arrives meanwhile and bites too, so sooner).
  std::uint64_t died_at = 0;
  for (int t = 0; t < 80 && died_at == 0; ++t) {
    w.step(kDt);
    if (!w.player_deaths().empty()) {
      died_at = w.tick();
      CHECK(w.player_deaths()[0].player_id == pid);
    }
  }
  REQUIRE(died_at > 0);
  CHECK(died_at <= 51);
  const Player& dead = *w.find_player(pid);
  CHECK_FALSE(dead.alive);
  CHECK(dead.health == 0.0f);
  CHECK(dead.deaths == 1);
  CHECK(w.player_death_count() == 1);
  // Dead: it does not move and is not bitten (no contacts, no damage); the horde still gathers
  // where it fell (no goal change, no rebuild).
  REQUIRE(w.set_player_intent(pid, {1.0f, 0.0f}));
  const Vec2 where = dead.position;
  const std::uint32_t contacts = dead.contacts;
  const std::uint64_t rebuilds = w.all_rebuild_count();
  for (int t = 0; t < 20; ++t) w.step(kDt);
  CHECK(w.find_player(pid)->position == where);
  CHECK(w.find_player(pid)->contacts == contacts);
  CHECK(w.find_player(pid)->health == 0.0f);
  CHECK(w.contacts().empty());
  CHECK(w.all_rebuild_count() == rebuilds);
  std::vector<Vec2> after;
  positions_by_id(w.swarm(), after);
  CHECK(length(after[biter] - where) < 1.0f);
  CHECK(length(after[far] - where) < 1.5f);  // it came to the body
  // Respawn 1 s (30 ticks) after death, at the spawn point, whole.
  for (int t = 0; t < 15 && !w.find_player(pid)->alive; ++t) w.step(kDt);
  const Player& back = *w.find_player(pid);
  REQUIRE(back.alive);
  CHECK(w.tick() >= died_at + 29);
  CHECK(w.tick() <= died_at + 31);
  CHECK(back.health == 10.0f);
  CHECK(back.position == Vec2{12.5f, 12.5f});
}

TEST_CASE("combat: shots kill the nearest agents in the aim, counted; the dead leave; ids are never reused") {
  WorldParams p = combat_params();
  p.kinds[0].max_speed = 0.01f;  // they stay put (almost)
  p.combat.fire_damage = 20.0f;  // 2 shots an agent
  p.combat.fire_interval = 0.25f;
  p.combat.max_hits_per_shot = 1;
  World w(open_room(24), p);
  const std::uint32_t pid = w.add_player({3.5f, 12.5f});
  const std::uint32_t a = w.swarm_mutable().add({8.5f, 12.5f});
  const std::uint32_t b = w.swarm_mutable().add({6.5f, 12.5f});
  const std::uint32_t c = w.swarm_mutable().add({10.5f, 12.5f});
  const std::uint32_t aside = w.swarm_mutable().add({3.5f, 18.5f});
  CHECK_FALSE(w.set_player_fire(pid, true, {0.0f, 0.0f}));
  CHECK_FALSE(w.set_player_fire(pid, true, {std::nanf(""), 1.0f}));
  CHECK_FALSE(w.set_player_fire(999, true, {1.0f, 0.0f}));
  REQUIRE(w.set_player_fire(pid, true, {2.0f, 0.0f}));
  std::vector<AgentDeath> deaths;
  for (int t = 0; t < 120 && w.kills() < 3; ++t) {
    w.step(kDt);
    for (const AgentDeath& d : w.agent_deaths()) deaths.push_back(d);
    if (w.tick() == 1) CHECK(w.agent_health(b) == doctest::Approx(20.0f));  // the first shot, at once
  }
  REQUIRE(deaths.size() == 3);
  CHECK(deaths[0].agent_id == b);
  CHECK(deaths[1].agent_id == a);
  CHECK(deaths[2].agent_id == c);
  for (const AgentDeath& d : deaths) CHECK(d.killer_id == pid);
  CHECK(w.shots() == 6);
  // 6 shots 0.25 s apart: the sixth at 1.25 s (tick 38 or so).
  CHECK(w.tick() >= 37);
  CHECK(w.tick() <= 40);
  CHECK(w.kills() == 3);
  CHECK(w.find_player(pid)->kills == 3);
  CHECK(w.swarm().size() == 1);
  CHECK(w.swarm().ids()[0] == aside);
  CHECK(w.agent_health(a) < 0.0f);  // gone
  CHECK(w.agent_health(aside) == 40.0f);
  // Releasing the trigger stops the shots.
  REQUIRE(w.set_player_fire(pid, false, {}));
  for (int t = 0; t < 30; ++t) w.step(kDt);
  CHECK(w.shots() == 6);
  const std::uint32_t fresh = w.swarm_mutable().add({5.5f, 12.5f});
  CHECK(fresh > c);
  CHECK(fresh > aside);
}

TEST_CASE("combat: two players shooting the same line in one tick kill two agents, not one corpse twice") {
  WorldParams p = combat_params();
  p.kinds[0].max_speed = 0.01f;
  p.kinds[0].health = 20.0f;  // one shot each
  p.combat.fire_damage = 20.0f;
  p.combat.max_hits_per_shot = 1;
  World w(open_room(24), p);
  const std::uint32_t p1 = w.add_player({3.5f, 12.5f});
  const std::uint32_t p2 = w.add_player({3.5f, 12.5f});
  const std::uint32_t near = w.swarm_mutable().add({6.5f, 12.5f});
  const std::uint32_t next = w.swarm_mutable().add({8.5f, 12.5f});
  REQUIRE(w.set_player_fire(p1, true, {1.0f, 0.0f}));
  REQUIRE(w.set_player_fire(p2, true, {1.0f, 0.0f}));
  w.step(kDt);
  REQUIRE(w.agent_deaths().size() == 2);
  CHECK(w.agent_deaths()[0].agent_id == near);
  CHECK(w.agent_deaths()[0].killer_id == p1);
  CHECK(w.agent_deaths()[1].agent_id == next);
  CHECK(w.agent_deaths()[1].killer_id == p2);
  CHECK(w.swarm().size() == 0);
  CHECK(w.shots() == 2);
}

TEST_CASE("combat: a fight replays bit for bit with 1, 2 and 3 threads; without combat nothing dies") {
  const GridMap city = generate_city({64, 64, 5});
  std::vector<std::vector<std::uint64_t>> hashes;
  std::vector<std::uint64_t> kills, deaths;
  for (std::uint32_t threads : {1u, 2u, 3u}) {
    WorldParams p;
    p.seed = 5;
    p.worker_threads = threads;
    p.max_agents = 800;
    p.kinds = default_agent_kinds();
    p.spawner.initial_agents = 500;
    p.spawner.wave_size = 40;
    p.spawner.wave_interval_ticks = 30;
    p.spawner.min_player_distance = 8.0f;
    p.combat.enabled = true;
    p.combat.player_health = 30.0f;
    p.combat.respawn_seconds = 0.5f;
    World w(city, p);
    const std::uint32_t pid = w.add_player({32.0f, 32.0f});
    hashes.emplace_back();
    for (std::uint64_t t = 0; t < 300; ++t) {
      const float a = static_cast<float>(t) * 0.07f;
      REQUIRE(w.set_player_intent(pid, {std::cos(a), std::sin(a)}));
      REQUIRE(w.set_player_fire(pid, true, {std::cos(a * 3.0f), std::sin(a * 3.0f)}));
      w.step(kDt);
      hashes.back().push_back(w.state_hash());
    }
    kills.push_back(w.kills());
    deaths.push_back(w.player_death_count());
  }
  CHECK(hashes[0] == hashes[1]);
  CHECK(hashes[0] == hashes[2]);
  CHECK(kills[0] > 0);
  CHECK(deaths[0] > 0);
  MESSAGE("kills " << kills[0] << ", player deaths " << deaths[0]);

  WorldParams off;
  off.seed = 5;
  off.max_agents = 800;
  off.spawner.initial_agents = 500;
  World w(city, off);
  const std::uint32_t pid = w.add_player({32.0f, 32.0f});
  REQUIRE(w.set_player_fire(pid, true, {1.0f, 0.0f}));
  for (int t = 0; t < 400; ++t) w.step(kDt);
  CHECK(w.kills() == 0);
  CHECK(w.shots() == 0);
  CHECK(w.swarm().size() == 500);
  CHECK(w.find_player(pid)->alive);
  CHECK(w.find_player(pid)->contacts > 0);
}
