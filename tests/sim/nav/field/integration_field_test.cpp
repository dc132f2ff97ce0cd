// Integration field: exact octile values, corner rule, several goals, costs, unreachable cells,
// agreement with a textbook Dijkstra on random maps, and time-sliced builds (begin/advance).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::boston_256;
using swarmfield::sim::test::ascii;
using swarmfield::sim::test::marker;

namespace {
IntegrationField build(const GridMap& m, std::vector<CellCoord> goals) {
  IntegrationField f;
  f.build(m, goals);
  return f;
}

/// The ways a whole build can search (see IntegrationField::Method): each exactness test runs
/// them all. "1 pair" stops the sweeps after one pair, leaving the rest to the check and its
/// Dijkstra pass.
struct Variant {
  const char* name;
  IntegrationField::Method method;
  std::uint32_t pair_limit;
};
constexpr std::uint32_t kLimit = IntegrationField::kDefaultSweepPairLimit;
const Variant kVariants[] = {
    {"auto", IntegrationField::Method::kAuto, kLimit},
    {"wavefront", IntegrationField::Method::kWavefront, kLimit},
    {"sweeps", IntegrationField::Method::kSweeps, kLimit},
    {"sweeps scalar", IntegrationField::Method::kSweepsScalar, kLimit},
    {"sweeps, 1 pair + check", IntegrationField::Method::kSweeps, 1},
    {"sweeps scalar, 1 pair + check", IntegrationField::Method::kSweepsScalar, 1},
};

IntegrationField build(const GridMap& m, std::span<const CellCoord> goals, const Variant& v) {
  IntegrationField f;
  f.set_method(v.method);
  f.set_sweep_pair_limit(v.pair_limit);
  f.build(m, goals);
  return f;
}

std::size_t finite_count(const std::vector<std::uint32_t>& values) {
  return static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [](std::uint32_t v) { return v != kUnreachable; }));
}

/// Every variant's values and reachable count against `ref` (a textbook Dijkstra's values).
void check_all_variants(const GridMap& m, std::span<const CellCoord> goals, const std::vector<std::uint32_t>& ref) {
  for (const Variant& v : kVariants) {
    CAPTURE(v.name);
    const IntegrationField f = build(m, goals, v);
    CHECK(f.values() == ref);
    CHECK(f.reachable_count() == finite_count(ref));
  }
}
constexpr std::uint32_t O = kOrthogonalStep;
constexpr std::uint32_t D = kDiagonalStep;
}  // namespace

TEST_CASE("integration: open map gives exact octile distances") {
  const GridMap m(9, 7);
  const CellCoord g{3, 2};
  const IntegrationField f = build(m, {g});
  CHECK(f.width() == 9);
  CHECK(f.height() == 7);
  for (std::int32_t y = 0; y < 7; ++y)
    for (std::int32_t x = 0; x < 9; ++x) {
      const auto dx = static_cast<std::uint32_t>(std::abs(x - g.x));
      const auto dy = static_cast<std::uint32_t>(std::abs(y - g.y));
      CAPTURE(x);
      CAPTURE(y);
      CHECK(f.raw(x, y) == std::min(dx, dy) * D + (std::max(dx, dy) - std::min(dx, dy)) * O);
      const double octile = std::max(dx, dy) + (std::sqrt(2.0) - 1.0) * std::min(dx, dy);
      CHECK(f.cost_to_goal(x, y) == doctest::Approx(octile).epsilon(1e-6));
    }
  CHECK(f.reachable_count() == 63);
}

TEST_CASE("integration: no corner cutting") {
  SUBCASE("one wall beside the diagonal forces the long way") {
    std::vector<MapMarker> mk;
    const GridMap m = ascii(R"(
G.
#X
)", &mk);
    const IntegrationField f = build(m, {marker(mk, 'G')});
    CHECK(f.raw(1, 1) == 2 * O);
  }
  SUBCASE("walls touching diagonally seal the gap") {
    std::vector<MapMarker> mk;
    const GridMap m = ascii(R"(
G#
#X
)", &mk);
    const IntegrationField f = build(m, {marker(mk, 'G')});
    CHECK_FALSE(f.reachable(1, 1));
    CHECK(f.raw(1, 1) == kUnreachable);
    CHECK(f.reachable_count() == 1);
  }
  SUBCASE("scenario C1: the X gap is crossed by going round") {
    std::vector<MapMarker> mk;
    const GridMap m = ascii(test::kDiagonalGapMap, &mk);
    const IntegrationField f = build(m, {marker(mk, 'P')});
    // (4,3) and (5,4) touch only across the corner of walls (5,3) and (4,4): their values must
    // differ by much more than one diagonal step.
    CHECK(f.raw(4, 3) > f.raw(5, 4) + 5 * O);
    CHECK(f.raw(4, 3) == test::reference_field(m, {marker(mk, 'P')})[m.index(4, 3)]);
  }
}

TEST_CASE("integration: several goals give the distance to the nearest") {
  const GridMap m(10, 1);
  const IntegrationField f = build(m, {{0, 0}, {9, 0}});
  for (std::int32_t x = 0; x < 10; ++x) CHECK(f.raw(x, 0) == static_cast<std::uint32_t>(std::min(x, 9 - x)) * O);
  // Duplicate goals are harmless.
  const IntegrationField g = build(m, {{0, 0}, {0, 0}, {9, 0}});
  CHECK(g.values() == f.values());
}

TEST_CASE("integration: unreachable and blocked cells hold the marker") {
  std::vector<MapMarker> mk;
  const GridMap m = ascii(R"(
#######
#G.#..#
#..#..#
#######
)", &mk);
  const IntegrationField f = build(m, {marker(mk, 'G')});
  CHECK(f.reachable_count() == 4);
  CHECK(f.raw(4, 1) == kUnreachable);
  CHECK(f.raw(0, 0) == kUnreachable);
  CHECK(f.raw(3, 1) == kUnreachable);
  CHECK(std::isinf(f.cost_to_goal(4, 1)));
  CHECK_FALSE(f.reachable(-1, 0));
  CHECK_FALSE(f.reachable(0, 99));
}

TEST_CASE("integration: cells costing more than 1 are charged on entry and avoided") {
  SUBCASE("corridor") {
    GridMap m(5, 1);
    m.set_cost(2, 0, 5);
    const IntegrationField f = build(m, {{0, 0}});
    CHECK(f.raw(1, 0) == O);
    CHECK(f.raw(2, 0) == O + 5 * O);
    CHECK(f.raw(3, 0) == 6 * O + O);
  }
  SUBCASE("detour around an expensive strip") {
    GridMap m(5, 2);
    for (std::int32_t x = 1; x <= 3; ++x) m.set_cost(x, 1, 10);
    const IntegrationField f = build(m, {{0, 1}});
    // Up, along the cheap row, down: 2 diagonals + 2 orthogonals, all into cost-1 cells.
    CHECK(f.raw(4, 1) == 2 * D + 2 * O);
  }
}

TEST_CASE("integration: goals on blocked or off-map cells are ignored") {
  std::vector<MapMarker> mk;
  const GridMap m = ascii(R"(
G..
.#.
...
)", &mk);
  const IntegrationField only = build(m, {{0, 0}});
  const IntegrationField mixed = build(m, {{1, 1}, {-1, 0}, {0, 0}, {3, 3}});
  CHECK(mixed.values() == only.values());
  const IntegrationField none = build(m, {{1, 1}, {7, 7}});
  CHECK(none.reachable_count() == 0);
  const std::vector<std::uint32_t> none_values = none.values();
  CHECK(std::all_of(none_values.begin(), none_values.end(), [](std::uint32_t v) { return v == kUnreachable; }));
  const IntegrationField empty_goals = build(m, {});
  CHECK(empty_goals.reachable_count() == 0);
}

TEST_CASE("integration: an empty map is fine") {
  const IntegrationField f = build(GridMap{}, {{0, 0}});
  CHECK(f.values().empty());
  CHECK(f.reachable_count() == 0);
}

TEST_CASE("integration: agrees with a textbook Dijkstra on random maps") {
  // Seeded; the seed is printed on failure. Set another with a code change to explore.
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    CAPTURE(seed);
    const bool costs = seed % 2 == 0;
    const std::int32_t w = 20 + static_cast<std::int32_t>(seed % 7) * 9;
    const std::int32_t h = 15 + static_cast<std::int32_t>(seed % 5) * 11;
    const GridMap m = test::random_map(seed, w, h, static_cast<int>(10 + seed % 4 * 10), costs);
    test::TestRng rng{seed * 977};
    std::vector<CellCoord> goals;
    const int count = 1 + static_cast<int>(seed % 3);
    for (int i = 0; i < count; ++i) goals.push_back({rng.below(w), rng.below(h)});
    check_all_variants(m, goals, test::reference_field(m, goals));
  }
}

TEST_CASE("integration: agrees with a textbook Dijkstra on the generated city (costs 1-3)") {
  const GridMap m = generate_city({160, 120, 5});
  const std::vector<CellCoord> goals{{2, 2}, {150, 100}, {80, 60}};
  IntegrationField f;
  f.build(m, goals);
  CHECK(f.values() == test::reference_field(m, goals));
}

TEST_CASE("integration: rebuilding reuses buffers without leaking state") {
  const GridMap big = test::random_map(7, 60, 40, 20, true);
  const GridMap small = test::random_map(8, 13, 9, 20, false);
  IntegrationField f;
  f.build(big, std::vector<CellCoord>{{1, 1}, {50, 30}});
  f.build(small, std::vector<CellCoord>{{3, 3}});
  const IntegrationField fresh = build(small, {{3, 3}});
  CHECK(f.width() == 13);
  CHECK(f.values() == fresh.values());
  CHECK(f.reachable_count() == fresh.reachable_count());
}

TEST_CASE("integration: maximum cell cost and long paths do not overflow") {
  GridMap m(300, 3, 254);
  m.set_cost(0, 1, 1);
  const IntegrationField f = build(m, {{0, 1}});
  CHECK(f.raw(299, 1) == 299u * 254u * O);
  CHECK(f.cost_to_goal(299, 1) == doctest::Approx(299.0 * 254.0));
}

TEST_CASE("integration: path costs beyond the representable range saturate instead of wrapping") {
  // 20000 cells of cost 254 = 5.08e6 cost units > the ~4.36e6 representable.
  const GridMap m(20000, 1, 254);
  const IntegrationField f = build(m, {{0, 0}});
  CHECK(f.reachable_count() == 20000);
  bool monotonic = true;
  for (std::int32_t x = 1; x < 20000; ++x) monotonic &= f.raw(x, 0) >= f.raw(x - 1, 0);
  CHECK(monotonic);
  CHECK(f.raw(100, 0) == 100u * 254u * O);
  CHECK(f.reachable(19999, 0));
  CHECK(f.raw(19999, 0) > 4000000000u);
}

TEST_CASE("integration: build_until gives the exact value at the target and below") {
  for (std::uint64_t seed = 30; seed <= 45; ++seed) {
    CAPTURE(seed);
    const GridMap m = test::random_map(seed, 50, 40, 25, seed % 2 == 0);
    const std::vector<CellCoord> goals{{3, 4}, {40, 30}};
    IntegrationField full;
    full.build(m, goals);
    test::TestRng rng{seed};
    IntegrationField part;
    for (int i = 0; i < 20; ++i) {
      const CellCoord t{rng.below(50), rng.below(40)};
      CAPTURE(t.x);
      CAPTURE(t.y);
      part.build_until(m, goals, t);
      CHECK(part.raw(t.x, t.y) == full.raw(t.x, t.y));
      CHECK(part.reachable_count() <= full.reachable_count());
      // Every stored value not above the target's is final.
      if (full.reachable(t.x, t.y)) {
        const std::vector<std::uint32_t> part_values = part.values(), full_values = full.values();
        for (std::size_t k = 0; k < part_values.size(); ++k)
          if (part_values[k] <= part.raw(t.x, t.y)) CHECK(part_values[k] == full_values[k]);
      } else {
        CHECK(part.values() == full.values());  // full search when the target is unreachable
      }
    }
  }
  IntegrationField f;
  f.build_until(GridMap(5, 5), std::vector<CellCoord>{{0, 0}}, {99, 99});  // off-map: full
  CHECK(f.reachable_count() == 25);
}

// ---- time-sliced builds (begin / advance) ------------------------------------------------------

namespace {
/// Runs begin() then advance(budget) until complete; returns the number of advance() calls and
/// checks the per-call budget bound (settled cells <= budget; an output call overshoots by
/// less than one row).
std::size_t sliced_build(IntegrationField& f, const GridMap& m, std::span<const CellCoord> goals, std::size_t budget) {
  f.begin(m, goals);
  const std::uint64_t row_units = IntegrationField::max_overshoot(m.width());
  std::size_t calls = 0;
  bool done = false;
  while (!done) {
    REQUIRE(f.in_progress());
    const std::uint64_t before = f.work_units();
    done = f.advance(budget);
    ++calls;
    const std::uint64_t used = f.work_units() - before;
    CHECK((used <= budget || used - budget <= row_units));
    REQUIRE(calls < 100000000);  // bounded: every call with budget >= 1 makes progress
  }
  CHECK_FALSE(f.in_progress());
  CHECK(f.advance(budget));  // idle: nothing to do
  return calls;
}

constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max();

}  // namespace

TEST_CASE("integration sliced: any budget gives exactly the full build (ASCII, random, city, Boston)") {
  struct Case {
    const char* name;
    GridMap map;
    std::vector<CellCoord> goals;
  };
  std::vector<MapMarker> mk;
  std::vector<Case> cases;
  cases.push_back({"C1", ascii(test::kDiagonalGapMap, &mk), {}});
  cases.back().goals = {marker(mk, 'P')};
  cases.push_back({"random with costs", test::random_map(5, 47, 31, 20, true), {{3, 3}, {40, 25}}});
  cases.push_back({"random unit", test::random_map(6, 52, 29, 30, false), {{10, 10}}});
  cases.push_back({"city costs 1-3", generate_city({96, 80, 4}), {{2, 2}, {90, 70}, {50, 40}}});
  cases.push_back({"Boston_0_256", boston_256(), {{128, 128}, {20, 230}}});
  cases.push_back({"no goal", GridMap(9, 9), {}});
  for (Case& c : cases) {
   for (const Variant& v : kVariants) {
    CAPTURE(c.name);
    CAPTURE(v.name);
    IntegrationField full;
    full.set_method(v.method);
    full.set_sweep_pair_limit(v.pair_limit);
    full.build(c.map, c.goals);
    for (const std::size_t budget : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, kHuge}) {
      CAPTURE(budget);
      IntegrationField sliced;
      sliced.set_method(v.method);
      sliced.set_sweep_pair_limit(v.pair_limit);
      const std::size_t calls = sliced_build(sliced, c.map, c.goals, budget);
      CHECK(sliced.values() == full.values());
      CHECK(sliced.reachable_count() == full.reachable_count());
      CHECK(sliced.search_words().size() == full.search_words().size());
      CHECK(std::equal(sliced.search_words().begin(), sliced.search_words().end(), full.search_words().begin()));
      // Same work whatever the slicing, and the number of calls follows from it.
      CHECK(sliced.work_units() == full.work_units());
      if (budget == kHuge) CHECK(calls == 1);
      if (budget == 1 && full.reachable_count() > 0 && !full.last_build_swept()) CHECK(calls >= full.reachable_count());
      if (budget == 1 && full.last_build_swept())
        CHECK(calls >= std::size_t{full.sweep_count()} * static_cast<std::size_t>(c.map.height()));
    }
   }
  }
}

TEST_CASE("integration sliced: work units are documented: snapshot + settled cells") {
  const GridMap m = boston_256();
  IntegrationField f;
  f.set_method(IntegrationField::Method::kWavefront);
  const CellCoord goal[1] = {{128, 128}};
  f.begin(m, goal);
  const std::uint64_t pass = linear_work_units(256u * 256u);
  CHECK(pass == 256u * 256u / 8u);
  CHECK(f.work_units() == pass);  // begin(): the snapshot
  while (!f.advance(5000)) {
  }
  CHECK(f.work_units() == pass + f.reachable_count());
  // A zero budget settles nothing.
  f.begin(m, goal);
  const std::uint64_t before = f.work_units();
  CHECK_FALSE(f.advance(0));
  CHECK(f.work_units() == before);
  CHECK(f.in_progress());
}

TEST_CASE("integration sliced: the build uses the map as it was at begin()") {
  GridMap m = test::random_map(21, 40, 30, 15, false);
  const std::vector<CellCoord> goals{{2, 2}};
  IntegrationField expected;
  expected.build(m, goals);
  IntegrationField f;
  f.begin(m, goals);
  CHECK_FALSE(f.advance(50));
  // Wall off a band and change costs mid-build: no effect on this build.
  for (std::int32_t y = 0; y < 30; ++y) m.set_cost(20, y, kBlockedCost);
  m.set_cost(5, 5, 9);
  while (!f.advance(50)) {
  }
  CHECK(f.values() == expected.values());
  // The next build sees the change.
  f.build(m, goals);
  CHECK_FALSE(f.reachable(30, 10));
}

TEST_CASE("integration sliced: begin() abandons a build in progress; build() after begin() too") {
  const GridMap m = test::random_map(22, 60, 40, 20, true);
  const std::vector<CellCoord> a{{1, 1}};
  const std::vector<CellCoord> b{{50, 30}, {10, 35}};
  IntegrationField ref_b;
  ref_b.build(m, b);
  IntegrationField f;
  f.begin(m, a);
  f.advance(300);
  REQUIRE(f.in_progress());
  sliced_build(f, m, b, 77);
  CHECK(f.values() == ref_b.values());
  f.begin(m, a);
  f.advance(100);
  f.build(m, b);
  CHECK_FALSE(f.in_progress());
  CHECK(f.values() == ref_b.values());
  // Another map size mid-build.
  const GridMap small = test::random_map(23, 11, 7, 10, false);
  f.begin(m, a);
  f.advance(100);
  const std::vector<CellCoord> g{{0, 0}};
  sliced_build(f, small, g, 3);
  CHECK(f.values() == test::reference_field(small, g));
}

TEST_CASE("integration sliced: a copy of a build in progress finishes on its own") {
  const GridMap m = test::random_map(24, 70, 50, 20, true);
  const std::vector<CellCoord> goals{{5, 5}, {60, 40}};
  IntegrationField full;
  full.build(m, goals);
  IntegrationField f;
  f.begin(m, goals);
  f.advance(900);
  REQUIRE(f.in_progress());
  IntegrationField copy = f;  // the copy's queue must not point into f's
  IntegrationField assigned;
  assigned.build(GridMap(3, 3), std::vector<CellCoord>{{1, 1}});
  assigned = f;
  while (!f.advance(13)) {
  }
  while (!copy.advance(1000)) {
  }
  while (!assigned.advance(kHuge)) {
  }
  CHECK(f.values() == full.values());
  CHECK(copy.values() == full.values());
  CHECK(assigned.values() == full.values());
}

TEST_CASE("integration sliced: a queue larger than its initial pool grows and stays exact") {
  // 512 x 512 open map, a goal on every other cell of every other row: ~200k cells are queued
  // at once after the goals, more than the pool starts with (one chunk per bucket + cells/16).
  const GridMap m(512, 512);
  std::vector<CellCoord> goals;
  for (std::int32_t y = 0; y < 512; y += 2)
    for (std::int32_t x = 0; x < 512; x += 2) goals.push_back({x, y});
  for (const std::size_t budget : {std::size_t{10007}, kHuge}) {
    CAPTURE(budget);
    IntegrationField f;
    sliced_build(f, m, goals, budget);
    bool all_ok = true;
    for (std::int32_t y = 0; y < 512; ++y)
      for (std::int32_t x = 0; x < 512; ++x) {
        const std::uint32_t want = (x % 2 == 0 && y % 2 == 0) ? 0u : (x % 2 == 1 && y % 2 == 1) ? D : O;
        all_ok &= f.raw(x, y) == want;
      }
    CHECK(all_ok);
    CHECK(f.reachable_count() == 512u * 512u);
  }
}

TEST_CASE("integration sliced: saturating path costs, one cell at a time") {
  const GridMap m(20000, 1, 254);
  IntegrationField full;
  const CellCoord goal[1] = {{0, 0}};
  full.build(m, goal);
  IntegrationField f;
  sliced_build(f, m, goal, 1);
  CHECK(f.values() == full.values());
  CHECK(f.raw(19999, 0) > 4000000000u);
}

// The unit-cost search relaxes only canonical successors (Jump Point Search pruning without
// corner cutting); these check that no value is lost to the pruning, where obstacles force
// the most successors: dense random maps, all 256 neighbourhoods of a cell, and real maps.
TEST_CASE("integration canonical: dense random unit-cost maps agree with a textbook Dijkstra") {
  for (std::uint64_t seed = 100; seed < 400; ++seed) {
    CAPTURE(seed);
    const std::int32_t w = 8 + static_cast<std::int32_t>(seed % 23);
    const std::int32_t h = 8 + static_cast<std::int32_t>(seed % 17);
    const int blocked = 15 + static_cast<int>(seed % 9) * 5;  // 15..55 %
    const GridMap m = test::random_map(seed, w, h, blocked, false);
    test::TestRng rng{seed * 31};
    std::vector<CellCoord> goals;
    const int count = 1 + static_cast<int>(seed % 4);
    for (int i = 0; i < count; ++i) goals.push_back({rng.below(w), rng.below(h)});
    check_all_variants(m, goals, test::reference_field(m, goals));
  }
}

TEST_CASE("integration canonical: every 3x3 neighbourhood around the goal and around a passage") {
  // A 7 x 7 map whose cells around (3, 3) follow all 256 patterns, with the goal at the centre
  // and, separately, at a corner (so the patterned cell is reached from each side).
  for (int pattern = 0; pattern < 256; ++pattern) {
    CAPTURE(pattern);
    GridMap m(7, 7);
    for (int k = 0; k < 8; ++k) {
      const CellCoord d = kDirectionOffsets[static_cast<std::size_t>(k)];
      if (((pattern >> k) & 1) == 0) m.set_cost(3 + d.x, 3 + d.y, kBlockedCost);
    }
    for (const CellCoord goal : {CellCoord{3, 3}, CellCoord{0, 0}, CellCoord{6, 3}, CellCoord{3, 6}}) {
      CAPTURE(goal.x);
      CAPTURE(goal.y);
      const std::vector<CellCoord> goals{goal};
      check_all_variants(m, goals, test::reference_field(m, goals));
    }
  }
}

TEST_CASE("integration canonical: benchmark maps agree with a textbook Dijkstra on every cell") {
  for (const char* name : {"street/Boston_0_256.map", "street/Paris_1_512.map", "game/den312d.map",
                           "game/AR0500SR.map", "maze/maze512-4-6.map"}) {
    CAPTURE(name);
    const GridMap m = test::read_benchmark_map(name);
    test::TestRng rng{17};
    std::vector<CellCoord> goals;
    while (goals.size() < 3) {
      const CellCoord c{rng.below(m.width()), rng.below(m.height())};
      if (m.walkable(c)) goals.push_back(c);
    }
    for (std::size_t count = 1; count <= goals.size(); count += 2) {
      const std::vector<CellCoord> g(goals.begin(), goals.begin() + static_cast<std::ptrdiff_t>(count));
      check_all_variants(m, g, test::reference_field(m, g));
    }
  }
}

// ---- sweeps (IntegrationField::Method; see integration_sweep.hpp) ------------------------------

TEST_CASE("integration sweeps: street maps converge with no cell left to the check") {
  const GridMap m = boston_256();
  for (const std::vector<CellCoord>& goals :
       {std::vector<CellCoord>{{128, 128}}, std::vector<CellCoord>{{20, 230}, {230, 20}, {128, 128}, {5, 5}}}) {
    CAPTURE(goals.size());
    IntegrationField wavefront;
    wavefront.set_method(IntegrationField::Method::kWavefront);
    wavefront.build(m, goals);
    CHECK_FALSE(wavefront.last_build_swept());
    IntegrationField swept;
    swept.build(m, goals);  // kAuto
    CHECK(swept.last_build_swept());
    CHECK(swept.corrected_seed_count() == 0);
    CHECK(swept.sweep_count() <= 12);
    CHECK(swept.values() == wavefront.values());
    CHECK(swept.reachable_count() == wavefront.reachable_count());
    CHECK(std::equal(swept.search_words().begin(), swept.search_words().end(), wavefront.search_words().begin(),
                     wavefront.search_words().end()));
  }
}

TEST_CASE("integration sweeps: paths that turn up and down each column (a serpentine)") {
  // Open columns at even x, walls at odd x with a gap at the top (x = 1 mod 4) or the bottom
  // (x = 3 mod 4): the path from the goal turns vertically once per column, so each column
  // costs the sweeps another pair.
  constexpr std::int32_t kW = 64, kH = 40;
  GridMap m(kW, kH);
  for (std::int32_t x = 1; x < kW; x += 2)
    for (std::int32_t y = 0; y < kH; ++y) {
      const bool gap = (x % 4 == 1) ? y == 0 : y == kH - 1;
      if (!gap) m.set_cost(x, y, kBlockedCost);
    }
  const std::vector<CellCoord> goals{{0, kH - 1}};
  const std::vector<std::uint32_t> ref = test::reference_field(m, goals);
  REQUIRE(ref[static_cast<std::size_t>(kH - 1) * kW + kW - 2] != kUnreachable);

  SUBCASE("auto turns to the wavefront once the sweeps visit too many chunks") {
    IntegrationField f;
    f.build(m, goals);
    CHECK_FALSE(f.last_build_swept());
    CHECK(f.values() == ref);
  }
  SUBCASE("sweeps alone converge, one pair per column") {
    IntegrationField f;
    f.set_method(IntegrationField::Method::kSweeps);
    f.build(m, goals);
    CHECK(f.last_build_swept());
    CHECK(f.sweep_count() >= kW / 2);
    CHECK(f.corrected_seed_count() == 0);
    CHECK(f.values() == ref);
  }
  SUBCASE("stopped by the pair limit, the check and its Dijkstra pass finish") {
    for (const auto method : {IntegrationField::Method::kSweeps, IntegrationField::Method::kSweepsScalar}) {
      IntegrationField f;
      f.set_method(method);
      f.set_sweep_pair_limit(4);
      f.build(m, goals);
      CHECK(f.sweep_count() == 8);
      CHECK(f.corrected_seed_count() > 0);
      CHECK(f.values() == ref);
      CHECK(f.reachable_count() == finite_count(ref));
    }
  }
}

TEST_CASE("integration sweeps: wide random maps (many chunks of 16 cells) agree with the wavefront") {
  // Scattered cells and random rectangles (long walls make the sweeps' changes stop and start
  // at chunk borders, where a missed visit would leave a cell too high).
  for (std::uint64_t seed = 1; seed <= 160; ++seed) {
    CAPTURE(seed);
    test::TestRng rng{seed * 7919};
    const std::int32_t w = 33 + rng.below(230);
    const std::int32_t h = 20 + rng.below(120);
    GridMap m = test::random_map(seed, w, h, static_cast<int>(rng.below(30)), false);
    for (int r = rng.below(40); r > 0; --r) {
      const std::int32_t x0 = rng.below(w), y0 = rng.below(h);
      const std::int32_t rw = 1 + rng.below(40), rh = 1 + rng.below(6);
      const bool vertical = rng.below(2) == 0;
      for (std::int32_t dy = 0; dy < (vertical ? rw : rh); ++dy)
        for (std::int32_t dx = 0; dx < (vertical ? rh : rw); ++dx)
          if (m.in_bounds(x0 + dx, y0 + dy)) m.set_cost(x0 + dx, y0 + dy, kBlockedCost);
    }
    std::vector<CellCoord> goals;
    for (int i = 1 + rng.below(4); i > 0; --i) goals.push_back({rng.below(w), rng.below(h)});
    IntegrationField wavefront;
    wavefront.set_method(IntegrationField::Method::kWavefront);
    wavefront.build(m, goals);
    for (const auto method : {IntegrationField::Method::kSweeps, IntegrationField::Method::kSweepsScalar}) {
      IntegrationField f;
      f.set_method(method);
      f.build(m, goals);
      REQUIRE(f.values() == wavefront.values());
      CHECK(f.reachable_count() == wavefront.reachable_count());
    }
  }
}
