// Sleep (SwarmParams::sleep_after_ticks, server/sim/src/crowd/swarm_sleep.cpp): a settled pile
// round a standing player sleeps and holds the shape it has awake; sleepers wake when a
// neighbour is removed, when the map changes, when the player walks off; the state is the same
// for any thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;

namespace {

constexpr float kDt = 1.0f / 30.0f;
constexpr float kPi = std::numbers::pi_v<float>;
const Vec2 kPlayer{40.0f, 40.0f};

/// 300 agents of the three default kinds (~3 : 6 : 1) in a ring 8..20 cells round a standing
/// player on open ground, stepped `ticks` ticks.
World settled_pile(std::uint32_t sleep_after_ticks, int ticks, std::uint32_t threads = 1) {
  WorldParams params;
  params.max_agents = 512;
  params.kinds = default_agent_kinds();
  params.swarm.sleep_after_ticks = sleep_after_ticks;
  params.worker_threads = threads;
  World world(test::bordered(80, 80), params);
  world.add_player(kPlayer);
  test::SplitMix rng{91};
  Swarm& swarm = world.swarm_mutable();
  const std::uint8_t mix[] = {0, 1, 1, 0, 1, 1, 2, 1, 0, 1};
  std::size_t added = 0;
  for (int attempt = 0; added < 300 && attempt < 100000; ++attempt) {
    const float a = rng.uniform(-kPi, kPi), d = rng.uniform(8.0f, 20.0f);
    const Vec2 p = kPlayer + Vec2{std::cos(a), std::sin(a)} * d;
    const std::uint8_t kind = mix[added % std::size(mix)];
    if (!square_fits(world.map(), p, swarm.kind_table()[kind].radius)) continue;
    REQUIRE(swarm.add(p, a + kPi, kind) != Swarm::kInvalidAgent);
    ++added;
  }
  REQUIRE(added == 300);
  for (int i = 0; i < ticks; ++i) world.step(kDt);
  return world;
}

float mean_distance(const Swarm& s, Vec2 to) {
  double sum = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) sum += std::hypot(s.xs()[i] - to.x, s.ys()[i] - to.y);
  return s.size() > 0 ? static_cast<float>(sum / static_cast<double>(s.size())) : 0.0f;
}

float at_rest_share(const Swarm& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const float v = std::hypot(s.vxs()[i], s.vys()[i]);
    if (v < 0.02f * s.kind_table()[s.kinds()[i]].max_speed) ++n;
  }
  return s.size() > 0 ? static_cast<float>(n) / static_cast<float>(s.size()) : 0.0f;
}

std::size_t asleep_count(const Swarm& s) {
  const auto a = s.step_view().asleep;
  return static_cast<std::size_t>(std::count(a.begin(), a.end(), std::uint8_t{1}));
}

}  // namespace

TEST_CASE("sleep: a settled pile sleeps and keeps the shape, rest and spacing it has awake") {
  const World awake = settled_pile(0, 600);
  const World sleeping = settled_pile(30, 600);
  const Swarm& a = awake.swarm();
  const Swarm& s = sleeping.swarm();
  MESSAGE("asleep " << s.sleeping_count() << " of " << s.size() << "; mean distance awake " << mean_distance(a, kPlayer)
                    << " / with sleep " << mean_distance(s, kPlayer) << "; at rest " << at_rest_share(a) << " / "
                    << at_rest_share(s) << "; deepest overlap " << test::deepest_pair_overlap(a) << " / "
                    << test::deepest_pair_overlap(s));
  CHECK(a.sleeping_count() == 0);
  CHECK(s.sleeping_count() == asleep_count(s));
  CHECK(s.sleeping_count() >= s.size() / 2);  // most of a settled pile sleeps
  CHECK(std::abs(mean_distance(s, kPlayer) - mean_distance(a, kPlayer)) < 0.03f * mean_distance(a, kPlayer));
  CHECK(at_rest_share(s) >= at_rest_share(a) - 0.03f);
  CHECK(test::deepest_pair_overlap(s) < test::deepest_pair_overlap(a) + 0.05f);
  MESSAGE("state hash awake " << awake.state_hash() << ", with sleep " << sleeping.state_hash());
  // A sleeper holds: at rest, zero velocity.
  const auto view = s.step_view();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (view.asleep[i] != 1) continue;
    CHECK(view.resting[i] == 1);
    CHECK(s.vxs()[i] == 0.0f);
    CHECK(s.vys()[i] == 0.0f);
  }
}

TEST_CASE("sleep: the state is the same for 1, 2 and 3 threads") {
  const World one = settled_pile(30, 450, 1);
  const World two = settled_pile(30, 450, 2);
  const World three = settled_pile(30, 450, 3);
  CHECK(one.swarm().sleeping_count() > 0);
  CHECK(one.state_hash() == two.state_hash());
  CHECK(one.state_hash() == three.state_hash());
  CHECK(one.swarm().sleeping_count() == three.swarm().sleeping_count());
}

TEST_CASE("sleep: the neighbours of a removed agent wake, sleepers far from it sleep on") {
  World world = settled_pile(30, 600);
  Swarm& swarm = world.swarm_mutable();
  REQUIRE(swarm.sleeping_count() > 0);
  // A sleeper in the pile: the one nearest the player.
  const auto view = swarm.step_view();
  std::size_t victim = Swarm::kNoIndex;
  float best = 1e9f;
  for (std::size_t i = 0; i < swarm.size(); ++i) {
    const float d = std::hypot(swarm.xs()[i] - kPlayer.x, swarm.ys()[i] - kPlayer.y);
    if (view.asleep[i] == 1 && d < best) {
      best = d;
      victim = i;
    }
  }
  REQUIRE(victim != Swarm::kNoIndex);
  const Vec2 hole{swarm.xs()[victim], swarm.ys()[victim]};
  const std::size_t removed[] = {victim};
  REQUIRE(swarm.remove_agents(removed) == 1);
  world.step(kDt);
  const auto after = world.swarm().step_view();
  const Swarm& s = world.swarm();
  std::size_t near = 0, near_asleep = 0, far_asleep = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const float d = std::hypot(s.xs()[i] - hole.x, s.ys()[i] - hole.y);
    if (d < 1.0f) {
      ++near;
      near_asleep += after.asleep[i] == 1 ? 1u : 0u;
    } else if (d > 4.0f) {
      far_asleep += after.asleep[i] == 1 ? 1u : 0u;
    }
  }
  MESSAGE("within 1 cell of the hole " << near << " agents (" << near_asleep << " asleep); asleep beyond 8 cells "
                                       << far_asleep);
  CHECK(near > 0);
  CHECK(near_asleep == 0);
  CHECK(far_asleep > 0);
}

TEST_CASE("sleep: a map change wakes every agent; the player walking off wakes the pile and it follows") {
  World world = settled_pile(30, 600);
  REQUIRE(world.swarm().sleeping_count() > 0);
  world.set_cell_cost({70, 70}, kBlockedCost);  // far from the pile
  world.step(kDt);
  CHECK(world.swarm().sleeping_count() == 0);
  for (int i = 0; i < 90; ++i) world.step(kDt);
  REQUIRE(world.swarm().sleeping_count() > 0);  // settled again
  // The player walks 20 cells east over 4 s.
  const std::uint32_t player = world.players().front().id;
  const float before = mean_distance(world.swarm(), kPlayer + Vec2{20.0f, 0.0f});
  REQUIRE(world.set_player_intent(player, {1.0f, 0.0f}));
  std::size_t most_asleep_moving = 0;
  for (int i = 0; i < 120; ++i) {
    world.step(kDt);
    if (i >= 5) most_asleep_moving = std::max(most_asleep_moving, world.swarm().sleeping_count());
  }
  const Vec2 now = world.players().front().position;
  MESSAGE("player at " << now.x << "," << now.y << "; mean distance to where it went " << before << " -> "
                       << mean_distance(world.swarm(), now) << "; most asleep while it walked " << most_asleep_moving);
  CHECK(now.x > kPlayer.x + 10.0f);
  CHECK(most_asleep_moving < world.swarm().size() / 10);
  CHECK(mean_distance(world.swarm(), now) < before);
}
