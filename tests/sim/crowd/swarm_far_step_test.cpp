// Far stepping (SwarmParams::far_step_cells, server/sim/src/crowd/swarm_far_step.cpp): agents
// whose path to the player is longer than far_step_cells step on every other tick with twice the
// time step. They cover the same ground as agents stepped every tick, half of them hold on each
// tick, agents near the player step every tick, a scene with no far agent is bit for bit the
// same as with far stepping off, and the state is the same for any thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/world.hpp"

using namespace swarmfield::sim;

namespace {

constexpr float kDt = 1.0f / 30.0f;
// A long open strip, the player at its east end: agents spawned in its west part are 290-390
// cells from the player by path, far past the default far_step_cells (96).
constexpr std::int32_t kWidth = 420, kHeight = 48;
const Vec2 kPlayer{400.5f, 24.5f};

/// Spawns n agents of the three default kinds (3 : 6 : 1 by the order they are added), or walkers
/// only, drawn uniformly in [x0, x1] x [y0, y1] from `rng`, each where its disc fits and touches
/// no agent already there (within max_attempts draws).
void spawn_apart(World& world, test::SplitMix& rng, std::size_t n, float x0, float x1, float y0, float y1,
                 bool walkers_only, int max_attempts) {
  Swarm& swarm = world.swarm_mutable();
  const std::uint8_t mix[] = {0, 1, 1, 0, 1, 1, 2, 1, 0, 1};
  std::size_t added = 0;
  for (int attempt = 0; added < n && attempt < max_attempts; ++attempt) {
    const Vec2 p{rng.uniform(x0, x1), rng.uniform(y0, y1)};
    const std::uint8_t kind = walkers_only ? std::uint8_t{1} : mix[added % std::size(mix)];
    if (!square_fits(world.map(), p, swarm.kind_table()[kind].radius)) continue;
    bool clear = true;  // no overlap at the start
    for (std::size_t i = 0; i < swarm.size() && clear; ++i) {
      const float r = swarm.kind_table()[kind].radius + swarm.kind_table()[swarm.kinds()[i]].radius;
      clear = std::hypot(swarm.xs()[i] - p.x, swarm.ys()[i] - p.y) >= r;
    }
    if (!clear) continue;
    REQUIRE(swarm.add(p, 0.0f, kind) != Swarm::kInvalidAgent);
    ++added;
  }
  REQUIRE(added == n);
}

/// 600 agents of the three default kinds (3 : 6 : 1), or walkers only, spread over x in [x0, x1],
/// the strip's whole height, chasing the standing player; not stepped yet. Far stepping with
/// `levels` (SwarmParams::far_step_levels; 2 here unless a case says otherwise).
World strip(float far_step_cells, float x0, float x1, std::uint32_t threads = 1, bool walkers_only = false,
            std::uint32_t levels = 2) {
  WorldParams params;
  params.max_agents = 1024;
  params.kinds = default_agent_kinds();
  params.swarm.far_step_cells = far_step_cells;
  params.swarm.far_step_levels = levels;
  params.worker_threads = threads;
  World world(test::bordered(kWidth, kHeight), params);
  world.add_player(kPlayer);
  test::SplitMix rng{7};
  spawn_apart(world, rng, 600, x0, x1, 2.0f, static_cast<float>(kHeight) - 2.0f, walkers_only, 100000);
  return world;
}

double mean_x(const Swarm& s) {
  double sum = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) sum += s.xs()[i];
  return sum / static_cast<double>(s.size());
}

/// Per kind, the mean distance covered toward the player (x) since `from` (positions by id).
std::vector<double> advance_by_kind(const Swarm& s, const std::vector<Vec2>& from) {
  std::vector<double> sum(3, 0.0), n(3, 0.0);
  std::vector<Vec2> now;
  test::positions_by_id(s, now);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::uint32_t id = s.ids()[i];
    sum[s.kinds()[i]] += now[id].x - from[id].x;
    n[s.kinds()[i]] += 1.0;
  }
  for (std::size_t k = 0; k < 3; ++k) sum[k] /= std::max(1.0, n[k]);
  return sum;
}

/// Share of agents whose position did not change over one step.
double held_share(World& w) {
  std::vector<Vec2> before, after;
  test::positions_by_id(w.swarm(), before);
  w.step(kDt);
  test::positions_by_id(w.swarm(), after);
  std::size_t held = 0;
  for (std::size_t i = 0; i < before.size(); ++i) held += before[i].x == after[i].x && before[i].y == after[i].y;
  return static_cast<double>(held) / static_cast<double>(before.size());
}

}  // namespace

TEST_CASE("far stepping: agents past twice far_step_cells hold on 3 ticks in 4 and cover the same ground at their speed") {
  World far = strip(96.0f, 10.0f, 110.0f), every = strip(0.0f, 10.0f, 110.0f);
  std::vector<Vec2> start;
  test::positions_by_id(far.swarm(), start);
  // The first step finds the far agents; from the second on they take turns.
  far.step(kDt);
  every.step(kDt);
  std::vector<double> far_held, every_held;
  for (int i = 0; i < 4; ++i) {
    far_held.push_back(held_share(far));
    every_held.push_back(held_share(every));
  }
  for (int i = 0; i < 145; ++i) {
    far.step(kDt);
    every.step(kDt);
  }
  const std::vector<double> a = advance_by_kind(far.swarm(), start), b = advance_by_kind(every.swarm(), start);
  MESSAGE("held per step, far stepping: " << far_held[0] << " " << far_held[1] << " " << far_held[2] << " "
                                           << far_held[3] << "; every tick: " << every_held[0]);
  MESSAGE("advance in 5 s, runners / walkers / brutes: far " << a[0] << " / " << a[1] << " / " << a[2]
                                                            << " cells, every tick " << b[0] << " / " << b[1] << " / " << b[2]);
  // 290-390 cells out: level 2 (a step every 4 ticks).
  for (const double h : far_held) {
    CHECK(h > 0.65);
    CHECK(h < 0.85);
  }
  for (const double h : every_held) CHECK(h < 0.05);
  // Same speed: within 5% of the every-tick run per kind, and most of the kind's top speed
  // (4.5 / 3 / 2 cells a second over 5 s; the crowd's spacing takes some).
  const double top[] = {4.5 * 5.0, 3.0 * 5.0, 2.0 * 5.0};
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(a[k] > 0.95 * b[k]);
    CHECK(a[k] < 1.05 * b[k]);
    CHECK(a[k] > 0.7 * top[k]);
  }
  // Discs kept apart nearly as well as every tick (the contact lists reach two level-1 steps).
  const float overlap_far = test::deepest_pair_overlap(far.swarm()), overlap_every = test::deepest_pair_overlap(every.swarm());
  MESSAGE("deepest pair overlap, share of the smaller radius: far " << overlap_far << ", every tick " << overlap_every);
  CHECK(overlap_far <= std::max(0.1f, 1.5f * overlap_every));
  CHECK(test::agents_in_walls(far.map(), far.swarm()) == 0);
}

TEST_CASE("far stepping: a horde of one small kind steps far too") {
  // Walkers only: the hash's block is the walkers' R, and two far steps of a pair pass it. Far
  // stepping stays on (it was off for every single-kind horde); the contact lists reach one
  // step, and the next gather parts what they miss.
  World far = strip(96.0f, 10.0f, 110.0f, 1, true), every = strip(0.0f, 10.0f, 110.0f, 1, true);
  std::vector<Vec2> start;
  test::positions_by_id(far.swarm(), start);
  far.step(kDt);
  every.step(kDt);
  const double far_held = held_share(far), every_held = held_share(every);
  for (int i = 0; i < 148; ++i) {
    far.step(kDt);
    every.step(kDt);
  }
  const double a = advance_by_kind(far.swarm(), start)[1], b = advance_by_kind(every.swarm(), start)[1];
  const float overlap_far = test::deepest_pair_overlap(far.swarm()), overlap_every = test::deepest_pair_overlap(every.swarm());
  MESSAGE("walkers only: held per step " << far_held << " (every tick " << every_held << "), advance in 5 s " << a
                                        << " cells (every tick " << b << "), deepest pair overlap " << overlap_far
                                        << " (every tick " << overlap_every << ")");
  CHECK(far_held > 0.65);  // level 2, as above
  CHECK(far_held < 0.85);
  CHECK(every_held < 0.05);
  CHECK(a > 0.95 * b);
  CHECK(a < 1.05 * b);
  CHECK(overlap_far <= std::max(0.15f, 2.0f * overlap_every));
  CHECK(test::agents_in_walls(far.map(), far.swarm()) == 0);
}

TEST_CASE("far stepping: with one level (the default) agents past twice far_step_cells hold on every other tick") {
  CHECK(SwarmParams{}.far_step_levels == 1);
  World far = strip(96.0f, 10.0f, 110.0f, 1, false, SwarmParams{}.far_step_levels);
  far.step(kDt);
  for (int i = 0; i < 4; ++i) {
    const double h = held_share(far);
    CHECK(h > 0.4);
    CHECK(h < 0.6);
  }
}

TEST_CASE("far stepping: agents between far_step_cells and twice it hold on every other tick") {
  // 105-185 cells from the player by path: level 1.
  World far = strip(96.0f, 215.0f, 295.0f), every = strip(0.0f, 215.0f, 295.0f);
  far.step(kDt);
  every.step(kDt);
  std::vector<double> held;
  for (int i = 0; i < 4; ++i) held.push_back(held_share(far));
  MESSAGE("105-185 cells out, held per step: " << held[0] << " " << held[1] << " " << held[2] << " " << held[3]);
  for (const double h : held) {
    CHECK(h > 0.4);
    CHECK(h < 0.6);
  }
  // The speed once under way (the first second left out: from a standstill a step of 2 dt gains
  // a tick's start on the every-tick run), over the next 2 s.
  for (int i = 0; i < 25; ++i) {
    far.step(kDt);
    every.step(kDt);
  }
  std::vector<Vec2> far_start, every_start;
  test::positions_by_id(far.swarm(), far_start);
  test::positions_by_id(every.swarm(), every_start);
  for (int i = 0; i < 60; ++i) {
    far.step(kDt);
    every.step(kDt);
  }
  const std::vector<double> a = advance_by_kind(far.swarm(), far_start), b = advance_by_kind(every.swarm(), every_start);
  MESSAGE("advance in 2 s, runners / walkers / brutes: far " << a[0] << " / " << a[1] << " / " << a[2]
                                                            << " cells, every tick " << b[0] << " / " << b[1] << " / " << b[2]);
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(a[k] > 0.95 * b[k]);
    CHECK(a[k] < 1.05 * b[k]);
  }
}

TEST_CASE("far stepping: shown positions move every tick, within a step of the true ones") {
  World far = strip(96.0f, 10.0f, 110.0f);
  for (int i = 0; i < 40; ++i) far.step(kDt);
  const Swarm& s = far.swarm();
  float top_step = 0.0f;
  for (const AgentKind& k : s.kind_table()) top_step = std::max(top_step, k.max_speed * kDt);
  // Per agent (by id), the length of each tick's move: shown and true.
  const std::size_t n = s.size();
  std::vector<std::vector<float>> shown_moves(n), true_moves(n);
  std::vector<float> xs, ys, last_sx(n), last_sy(n), last_tx(n), last_ty(n);
  float worst_lag = 0.0f;
  for (int tick = 0; tick <= 8; ++tick) {
    far.step(kDt);
    REQUIRE(s.shown_positions(xs, ys));
    REQUIRE(xs.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t id = s.ids()[i];
      worst_lag = std::max(worst_lag, std::hypot(xs[i] - s.xs()[i], ys[i] - s.ys()[i]));
      if (tick > 0) {
        shown_moves[id].push_back(std::hypot(xs[i] - last_sx[id], ys[i] - last_sy[id]));
        true_moves[id].push_back(std::hypot(s.xs()[i] - last_tx[id], s.ys()[i] - last_ty[id]));
      }
      last_sx[id] = xs[i];
      last_sy[id] = ys[i];
      last_tx[id] = s.xs()[i];
      last_ty[id] = s.ys()[i];
    }
  }
  // Moving every tick: the share of ticks an agent that moved did not move at all, shown and true.
  std::size_t shown_still = 0, true_still = 0, samples = 0;
  for (std::size_t id = 0; id < n; ++id) {
    float sum = 0.0f;
    for (const float d : true_moves[id]) sum += d;
    if (sum < 1.0f) continue;  // (held up in the crowd)
    for (std::size_t k = 0; k < shown_moves[id].size(); ++k) {
      shown_still += shown_moves[id][k] == 0.0f;
      true_still += true_moves[id][k] == 0.0f;
      ++samples;
    }
  }
  const double shown_share = static_cast<double>(shown_still) / static_cast<double>(samples);
  const double true_share = static_cast<double>(true_still) / static_cast<double>(samples);
  MESSAGE("ticks without a move, moving agents: shown " << shown_share << ", true " << true_share
                                                        << "; farthest shown from true " << worst_lag << " (a level-2 step "
                                                        << 4.0f * top_step << ")");
  CHECK(true_share > 0.6);   // level 2: a step every 4 ticks
  CHECK(shown_share < 0.05);
  CHECK(worst_lag <= 4.0f * top_step * 1.01f);
  // Far stepping off: nobody is shown elsewhere.
  World every = strip(0.0f, 10.0f, 110.0f);
  every.step(kDt);
  CHECK_FALSE(every.swarm().shown_positions(xs, ys));
}

TEST_CASE("far stepping: agents near the player step every tick, and a scene with none far is unchanged") {
  // The crowd within 70 cells of the player: nobody holds there.
  World near = strip(96.0f, 340.0f, 398.0f);
  near.step(kDt);
  near.step(kDt);
  CHECK(held_share(near) < 0.05);
  // Bit for bit the run with far stepping off.
  World off = strip(0.0f, 340.0f, 398.0f);
  near = strip(96.0f, 340.0f, 398.0f);
  for (int i = 0; i < 60; ++i) {
    near.step(kDt);
    off.step(kDt);
  }
  std::vector<Vec2> p, q;
  test::positions_by_id(near.swarm(), p);
  test::positions_by_id(off.swarm(), q);
  REQUIRE(p.size() == q.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < p.size(); ++i) same += p[i].x == q[i].x && p[i].y == q[i].y;
  CHECK(same == p.size());
  // The far crowd's motion does change with it (the test above can tell).
  World far_on = strip(96.0f, 10.0f, 110.0f), far_off = strip(0.0f, 10.0f, 110.0f);
  for (int i = 0; i < 10; ++i) {
    far_on.step(kDt);
    far_off.step(kDt);
  }
  CHECK(mean_x(far_on.swarm()) != mean_x(far_off.swarm()));
}

namespace {

/// 400 agents of the three kinds (3 : 6 : 1) in a corridor 6 cells wide and 400 long (every agent
/// within 2 cells of a wall: no contact projection there), 250-390 cells from the player at its
/// east end, stepped 10 s with far stepping at `far_step_cells` (0: every tick): pairs
/// overlapping past 10% of the smaller radius, summed over a frame every 10 ticks.
std::size_t corridor_overlaps(float far_step_cells) {
  WorldParams params;
  params.max_agents = 512;
  params.kinds = default_agent_kinds();
  params.swarm.far_step_cells = far_step_cells;
  World world(test::bordered(kWidth, 8), params);
  world.add_player({400.5f, 4.5f});
  test::SplitMix rng{11};
  spawn_apart(world, rng, 400, 10.0f, 150.0f, 1.5f, 6.5f, false, 200000);
  std::size_t pairs = 0;
  for (int t = 1; t <= 300; ++t) {
    world.step(kDt);
    if (t % 10 != 0) continue;
    const Swarm& s = world.swarm();
    for (std::size_t i = 0; i < s.size(); ++i) {
      for (std::size_t j = i + 1; j < s.size(); ++j) {
        const float ri = s.kind_table()[s.kinds()[i]].radius, rj = s.kind_table()[s.kinds()[j]].radius;
        const float d = std::hypot(s.xs()[i] - s.xs()[j], s.ys()[i] - s.ys()[j]);
        pairs += ri + rj - d > 0.1f * std::min(ri, rj);
      }
    }
  }
  return pairs;
}

}  // namespace

// A far step reaches further than the pair's separation radius R, out to which the gather looks
// (a runner's 0.3-cell step against R = 0.77 with a walker, contact 0.6): the far pairs'
// (SwarmTick::far_pairs) free path looks out to the contact distance plus the step. Before, far
// runners stepped into walkers and runners they did not see, and beside walls only the
// correction terms parted them (Paris_1_1024, 10,000 mixed: 2.4 pairs per frame every tick, 26.4
// with far stepping, now 6.9). Here (30 frames): 65 before, 22 now, 3 every tick; what is left
// is not this (not repaired yet: see "Far stepping" in server/sim/src/crowd/README.md).
TEST_CASE("far stepping: a far step sees every neighbour it can reach (fewer overlaps beside walls)") {
  const std::size_t far = corridor_overlaps(96.0f), every = corridor_overlaps(0.0f);
  MESSAGE("corridor, pairs overlapping past 10% of the smaller radius over 30 frames: far stepping " << far
                                                                                                   << ", every tick " << every);
  CHECK(far <= 4 * every + 20);
}

TEST_CASE("far stepping: the same state for 1, 2 and 3 threads") {
  std::vector<std::vector<Vec2>> runs;
  for (const std::uint32_t threads : {1u, 2u, 3u}) {
    World w = strip(96.0f, 10.0f, 110.0f, threads);
    for (int i = 0; i < 90; ++i) w.step(kDt);
    runs.emplace_back();
    test::positions_by_id(w.swarm(), runs.back());
  }
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
}

TEST_CASE("far stepping: a non-finite or negative far_step_cells turns it off") {
  for (const float bad : {std::nanf(""), -1.0f, -std::numeric_limits<float>::infinity()}) {
    SwarmParams p;
    p.far_step_cells = bad;
    CHECK(Swarm(p, 4).params().far_step_cells == 0.0f);
  }
  SwarmParams p;
  p.far_step_cells = 40.0f;
  CHECK(Swarm(p, 4).params().far_step_cells == 40.0f);
}
