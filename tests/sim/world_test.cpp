// World: determinism and state hash, field rebuilds, players (clamp, walls), contacts, spawner.
#include "swarmfield/sim/world.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/map/city_generator.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

namespace {

constexpr float kDt = 1.0f / 30.0f;

/// A scripted input sequence: the player circles so it crosses cells and the fields rebuild.
Vec2 scripted_intent(std::uint64_t tick) {
  const float a = static_cast<float>(tick) * 0.05f;
  return {std::cos(a), std::sin(a)};
}

WorldParams small_params(std::uint64_t seed) {
  WorldParams p;
  p.seed = seed;
  p.max_agents = 600;
  p.spawner.initial_agents = 300;
  p.spawner.wave_size = 50;
  p.spawner.wave_interval_ticks = 20;
  p.spawner.min_player_distance = 10.0f;
  return p;
}

}  // namespace

TEST_CASE("world: same seed and inputs give the same hash every tick; another seed differs") {
  const GridMap city = generate_city({64, 64, 5});
  World a(city, small_params(11)), b(city, small_params(11)), c(city, small_params(12));
  for (World* w : {&a, &b, &c}) w->add_player({32.0f, 32.0f});
  int differing = 0;
  std::uint64_t previous = 0;
  int repeats = 0;
  for (std::uint64_t t = 0; t < 120; ++t) {
    for (World* w : {&a, &b, &c}) REQUIRE(w->set_player_intent(w->players()[0].id, scripted_intent(t)));
    a.step(kDt);
    b.step(kDt);
    c.step(kDt);
    REQUIRE(a.tick() == t + 1);
    REQUIRE(a.state_hash() == b.state_hash());
    if (a.state_hash() != c.state_hash()) ++differing;
    if (a.state_hash() == previous) ++repeats;
    previous = a.state_hash();
  }
  CHECK(differing == 120);
  CHECK(repeats == 0);  // the state changes every tick, and so does the hash
  CHECK(a.swarm().size() == 300 + 5 * 50);  // waves at ticks 20, 40, ..., 100
  CHECK(a.rebuild_count() > 3);
}

TEST_CASE("world: fields rebuild once per player cell change, never for moves inside a cell") {
  World w(GridMap(40, 40), WorldParams{});
  const std::uint32_t id = w.add_player({10.5f, 10.5f});
  w.step(kDt);
  REQUIRE(w.rebuild_count() == 1);  // the first build

  // Wiggle inside the cell: 0.1 * 5 / 30 = 0.0167 units a tick, back and forth.
  for (int t = 0; t < 60; ++t) {
    REQUIRE(w.set_player_intent(id, {(t / 10) % 2 == 0 ? 0.1f : -0.1f, 0.0f}));
    w.step(kDt);
  }
  CHECK(w.map().world_to_cell(w.find_player(id)->position) == CellCoord{10, 10});
  CHECK(w.rebuild_count() == 1);

  // Walk across cells in a loop; count the cell changes seen after each tick.
  CellCoord last = w.map().world_to_cell(w.find_player(id)->position);
  std::uint64_t changes = 0;
  for (std::uint64_t t = 0; t < 200; ++t) {
    REQUIRE(w.set_player_intent(id, scripted_intent(t)));
    w.step(kDt);
    const CellCoord now = w.map().world_to_cell(w.find_player(id)->position);
    if (!(now == last)) ++changes;
    last = now;
  }
  CHECK(changes > 10);
  CHECK(w.rebuild_count() == 1 + changes);

  // A run-time blocker changes the cost field: exactly one more rebuild.
  w.set_cell_cost({30, 30}, kBlockedCost);
  REQUIRE(w.set_player_intent(id, {0.0f, 0.0f}));
  w.step(kDt);
  w.step(kDt);
  CHECK(w.rebuild_count() == 2 + changes);
}

TEST_CASE("world: player intents are clamped to player_speed and collided with walls") {
  AsciiScene scene(
      "##########\n"
      "#........#\n"
      "#........#\n"
      "#....#...#\n"
      "##########\n");
  WorldParams params;
  World w(scene.map, params);
  const std::uint32_t id = w.add_player({2.5f, 2.5f});
  CHECK_FALSE(w.set_player_intent(id, {std::nanf(""), 0.0f}));
  CHECK_FALSE(w.set_player_intent(id, {0.0f, std::numeric_limits<float>::infinity()}));
  CHECK_FALSE(w.set_player_intent(9999, {1.0f, 0.0f}));

  REQUIRE(w.set_player_intent(id, {30.0f, 40.0f}));  // length 50: clamped to 1
  CHECK(length(w.find_player(id)->intent) == doctest::Approx(1.0f));
  const Vec2 before = w.find_player(id)->position;
  REQUIRE(w.set_player_intent(id, {10.0f, 0.0f}));
  w.step(kDt);
  const Player* p = w.find_player(id);
  CHECK(p->position.x - before.x == doctest::Approx(params.player_speed * kDt));
  CHECK(length(p->velocity) == doctest::Approx(params.player_speed));

  // Push into the wall cell (5,3) from the west and into the top wall: never inside, and kept
  // a radius away.
  for (const Vec2 dir : {Vec2{1.0f, 0.3f}, Vec2{0.0f, -1.0f}, Vec2{-1.0f, -1.0f}}) {
    REQUIRE(w.set_player_intent(id, dir));
    for (int t = 0; t < 90; ++t) {
      w.step(kDt);
      const Vec2 pos = w.find_player(id)->position;
      REQUIRE(w.map().walkable_at(pos));
      REQUIRE(wall_overlap(w.map(), pos, params.player_radius) <= 1e-4f);
      REQUIRE(length(w.find_player(id)->velocity) <= params.player_speed * 1.001f);
    }
  }
  // Ends in the top-left corner, a radius from both walls.
  CHECK(w.find_player(id)->position.x == doctest::Approx(1.0f + params.player_radius));
  CHECK(w.find_player(id)->position.y == doctest::Approx(1.0f + params.player_radius));

  // A player added inside a wall is put on the nearest walkable cell centre.
  const std::uint32_t id2 = w.add_player({5.5f, 3.5f});
  CHECK(w.map().walkable_at(w.find_player(id2)->position));
  // A blocker dropped on a player pushes it out on the next step.
  const CellCoord under = w.map().world_to_cell(w.find_player(id2)->position);
  w.set_cell_cost(under, kBlockedCost);
  w.step(kDt);
  CHECK(w.map().walkable_at(w.find_player(id2)->position));
  CHECK(w.remove_player(id2));
  CHECK_FALSE(w.remove_player(id2));
  CHECK(w.find_player(id2) == nullptr);
}

TEST_CASE("world: contact events when an agent disc touches a player disc") {
  WorldParams params;
  World w(GridMap(30, 30), params);
  const std::uint32_t pid = w.add_player({15.5f, 15.5f});
  const std::uint32_t near_id = w.swarm_mutable().add({15.5f + 0.6f, 15.5f});  // 0.6 < 0.35 + 0.4
  const std::uint32_t far_id = w.swarm_mutable().add({2.5f, 2.5f});
  w.step(kDt);
  REQUIRE(w.contacts().size() == 1);
  CHECK(w.contacts()[0].agent_id == near_id);
  CHECK(w.contacts()[0].player_id == pid);
  CHECK(w.find_player(pid)->contacts == 1);
  CHECK(far_id != near_id);
  w.step(kDt);
  CHECK(w.find_player(pid)->contacts == 2);  // still touching: one event per tick

  // The player walks away: no more contacts.
  REQUIRE(w.set_player_intent(pid, {0.0f, 1.0f}));
  for (int t = 0; t < 10; ++t) w.step(kDt);
  REQUIRE(w.set_player_intent(pid, {0.0f, 0.0f}));
  w.swarm_mutable().set_position(w.swarm().index_of(near_id), {2.5f, 28.5f});
  w.step(kDt);
  CHECK(w.contacts().empty());
}

TEST_CASE("world: spawner counts, capacity, distance and reachability") {
  // A walled room in the east half is unreachable from the player: nothing spawns there.
  std::string text;
  for (int y = 0; y < 60; ++y) {
    std::string row(60, '.');
    row[0] = row[59] = '#';
    if (y == 0 || y == 59) row.assign(60, '#');
    if (y >= 20 && y <= 40) {
      row[40] = '#';
      row[58] = '#';
      if (y == 20 || y == 40) {
        for (int x = 40; x <= 58; ++x) row[static_cast<std::size_t>(x)] = '#';
      }
    }
    text += row + "\n";
  }
  AsciiScene scene(text);
  WorldParams params;
  params.max_agents = 250;
  params.spawner.initial_agents = 200;
  params.spawner.wave_size = 20;
  params.spawner.wave_interval_ticks = 3;
  params.spawner.min_player_distance = 15.0f;
  World w(scene.map, params);
  const Vec2 player{10.5f, 10.5f};
  w.add_player(player);
  w.step(kDt);
  REQUIRE(w.swarm().size() == 200);
  const IntegrationField& field = w.fields().integration();
  // Check the spawn positions before they move much: take the positions after one tick
  // (agents move <= max_speed * dt).
  const float slack = params.swarm.max_speed * kDt + 1e-3f;
  for (std::size_t i = 0; i < w.swarm().size(); ++i) {
    const Vec2 p{w.swarm().xs()[i], w.swarm().ys()[i]};
    const CellCoord c = w.map().world_to_cell(p);
    CAPTURE(i);
    CHECK(field.reachable(c.x, c.y));
    CHECK(length(p - player) >= params.spawner.min_player_distance - 1.0f - slack);
  }
  for (int t = 0; t < 9; ++t) w.step(kDt);  // waves at ticks 3, 6, 9: capped at 250
  CHECK(w.swarm().size() == 250);
  CHECK(w.spawn_agents(10) == 0);  // full

  // A map where no cell is far enough: still spawns (nearer, reachable cells).
  WorldParams tiny;
  tiny.spawner.min_player_distance = 100.0f;
  World small(GridMap(12, 12), tiny);
  small.add_player({6.0f, 6.0f});
  CHECK(small.spawn_agents(30) == 30);
  // No players: anywhere walkable.
  World empty(GridMap(12, 12), tiny);
  CHECK(empty.spawn_agents(5) == 5);
  // No walkable cell: nothing, no crash.
  World solid(GridMap(8, 8, kBlockedCost), tiny);
  CHECK(solid.spawn_agents(5) == 0);
  solid.add_player({1.0f, 1.0f});
  solid.step(kDt);
  CHECK(solid.tick() == 1);
}

TEST_CASE("world: bad dt is ignored and a world with no players holds its agents") {
  WorldParams params;
  params.spawner.initial_agents = 20;
  World w(GridMap(20, 20), params);
  w.step(0.0f);
  w.step(-1.0f);
  w.step(std::numeric_limits<float>::infinity());
  CHECK(w.tick() == 0);
  CHECK(w.swarm().size() == 0);
  w.step(kDt);
  CHECK(w.tick() == 1);
  CHECK(w.swarm().size() == 20);
  for (int t = 0; t < 30; ++t) w.step(kDt);
  CHECK(all_finite(w.swarm()));
}

TEST_CASE("world: the spawner picks kinds by weight from the seed; kinds enter the state hash") {
  const GridMap city = generate_city({64, 64, 5});
  auto make = [&](std::uint64_t seed, std::vector<AgentKind> kinds) {
    WorldParams p = small_params(seed);
    p.max_agents = 4000;
    p.spawner.initial_agents = 3000;
    p.kinds = std::move(kinds);
    auto w = std::make_unique<World>(city, p);
    w->add_player({32.0f, 32.0f});
    return w;
  };
  auto kinds_by_id = [](const World& w) {
    std::vector<std::uint8_t> out(w.swarm().size());
    for (std::size_t i = 0; i < out.size(); ++i) out[w.swarm().ids()[i]] = w.swarm().kinds()[i];
    return out;
  };
  auto a = make(7, default_agent_kinds()), b = make(7, default_agent_kinds()), c = make(8, default_agent_kinds());
  for (auto* w : {a.get(), b.get(), c.get()}) w->step(kDt);
  REQUIRE(a->swarm().size() == 3000);
  const std::vector<std::uint8_t> ka = kinds_by_id(*a);
  CHECK(ka == kinds_by_id(*b));  // same seed, same kinds
  CHECK(ka != kinds_by_id(*c));  // another seed, other kinds
  std::size_t counts[3] = {0, 0, 0};
  for (const std::uint8_t k : ka) ++counts[k];
  MESSAGE("3000 agents: " << counts[0] << " runners, " << counts[1] << " walkers, " << counts[2] << " brutes");
  CHECK(counts[0] == doctest::Approx(900).epsilon(0.1));
  CHECK(counts[1] == doctest::Approx(1800).epsilon(0.1));
  CHECK(counts[2] == doctest::Approx(300).epsilon(0.2));
  CHECK(a->state_hash() == b->state_hash());

  // One spawnable kind draws no kind: the same positions as a world without a kind table.
  std::vector<AgentKind> one = default_agent_kinds();
  one[0].spawn_weight = 0.0f;
  one[2].spawn_weight = 0.0f;
  auto only_walkers = make(7, one), plain = make(7, {});
  only_walkers->step(kDt);
  plain->step(kDt);
  REQUIRE(only_walkers->swarm().size() == plain->swarm().size());
  for (std::size_t i = 0; i < plain->swarm().size(); ++i) {
    REQUIRE(only_walkers->swarm().kinds()[i] == 1);
    REQUIRE(only_walkers->swarm().xs()[i] == plain->swarm().xs()[i]);
  }
  // ...but the hash tells the kinds apart when the table has a choice: two kinds of the same
  // size and speed, drawn with other weights, move alike but hash differently.
  std::vector<AgentKind> twins = one;
  twins[0] = twins[1];
  twins[0].name = "twin";
  twins[0].spawn_weight = 1.0f;
  twins[1].spawn_weight = 1.0f;
  auto x = make(9, twins), y = make(9, twins);
  x->step(kDt);
  y->step(kDt);
  CHECK(x->state_hash() == y->state_hash());
  std::vector<AgentKind> reweighted = twins;  // one draw per agent either way, other indices
  reweighted[1].spawn_weight = 3.0f;
  auto z = make(9, reweighted);
  z->step(kDt);
  for (std::size_t i = 0; i < x->swarm().size(); ++i) REQUIRE(z->swarm().xs()[i] == x->swarm().xs()[i]);
  const std::vector<std::uint8_t> kx(x->swarm().kinds().begin(), x->swarm().kinds().end());
  const std::vector<std::uint8_t> kz(z->swarm().kinds().begin(), z->swarm().kinds().end());
  REQUIRE(kx != kz);
  CHECK(z->state_hash() != x->state_hash());
}

TEST_CASE("world: contacts use each kind's radius") {
  std::vector<AgentKind> kinds = default_agent_kinds();
  WorldParams p;
  p.kinds = kinds;
  World w(GridMap(20, 20), p);
  const std::uint32_t player = w.add_player({10.0f, 10.0f});
  // A brute (r 0.8) 1.1 from the player (r 0.4) touches it; a runner (r 0.25) at 1.1 does not.
  REQUIRE(w.swarm_mutable().add({11.1f, 10.0f}, 0.0f, 2) != Swarm::kInvalidAgent);
  REQUIRE(w.swarm_mutable().add({10.0f, 11.1f}, 0.0f, 0) != Swarm::kInvalidAgent);
  w.step(kDt);
  std::size_t brute_contacts = 0, runner_contacts = 0;
  for (const ContactEvent& e : w.contacts()) {
    CHECK(e.player_id == player);
    (e.agent_id == 0 ? brute_contacts : runner_contacts) += 1;
  }
  CHECK(brute_contacts == 1);
  CHECK(runner_contacts == 0);
}

TEST_CASE("world: contacts are every agent touching a player, player by player in agent order") {
  // Rings of mixed kinds round three players, at distances between the smallest and the largest
  // reach (a runner there does not touch, a brute does), and a scatter far off: the contacts
  // must equal a plain test of every agent against every player after the step, wherever in
  // the arrays (blocks of the scan or the tail) the touching agents end up (207 agents: a tail
  // of 15 after the blocks of 16, the ring of the last player, sorted last by the hash).
  WorldParams p;
  p.kinds = default_agent_kinds();
  World w(GridMap(96, 96), p);
  const Vec2 centres[3] = {{20.0f, 20.0f}, {70.0f, 30.0f}, {40.0f, 75.0f}};
  for (const Vec2 c : centres) (void)w.add_player(c);
  std::uint32_t seed = 7;
  const auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / 16777216.0f;
  };
  for (int i = 0; i < 147; ++i) {
    const Vec2 c = centres[i % 3];
    const float a = 6.2831853f * next(), d = 0.7f + 0.6f * next();
    REQUIRE(w.swarm_mutable().add({c.x + d * std::cos(a), c.y + d * std::sin(a)}, 0.0f, static_cast<std::uint8_t>(i % 3)) !=
            Swarm::kInvalidAgent);
  }
  for (int i = 0; i < 60; ++i) {
    REQUIRE(w.swarm_mutable().add({5.0f + 85.0f * next(), 2.0f + 12.0f * next()}, 0.0f,
                                  static_cast<std::uint8_t>(i % 3)) != Swarm::kInvalidAgent);
  }
  std::size_t total = 0;
  for (int tick = 0; tick < 3; ++tick) {
    w.step(kDt);
    std::vector<ContactEvent> expected;
    const Swarm& s = w.swarm();
    for (const Player& pl : w.players()) {
      for (std::size_t i = 0; i < s.size(); ++i) {
        const float reach = s.kind_table()[s.kinds()[i]].radius + p.player_radius;
        const float dx = s.xs()[i] - pl.position.x, dy = s.ys()[i] - pl.position.y;
        if (dx * dx + dy * dy <= reach * reach) expected.push_back({s.ids()[i], pl.id});
      }
    }
    REQUIRE(w.contacts().size() == expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      CHECK(w.contacts()[k].agent_id == expected[k].agent_id);
      CHECK(w.contacts()[k].player_id == expected[k].player_id);
    }
    total += expected.size();
  }
  CHECK(total > 20);  // the rings do touch
}
