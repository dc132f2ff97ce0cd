// Flow field: downhill arrows under the corner rule, kNone cells, tie-breaks, determinism, and
// row slices built from an integration's snapshot.
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::ascii;
using swarmfield::sim::test::marker;

namespace {

struct Fields {
  IntegrationField integration;
  FlowField flow;
};

Fields build(const GridMap& m, const std::vector<CellCoord>& goals) {
  Fields f;
  f.integration.build(m, goals);
  f.flow.build(m, f.integration);
  return f;
}

bool is_diagonal(FlowDirection d) { return static_cast<int>(d) % 2 == 1; }

/// Checks the documented contract on every cell of `m`.
void check_flow_contract(const GridMap& m, const Fields& f) {
  const IntegrationField& in = f.integration;
  for (std::int32_t y = 0; y < m.height(); ++y) {
    for (std::int32_t x = 0; x < m.width(); ++x) {
      CAPTURE(x);
      CAPTURE(y);
      const FlowDirection d = f.flow.at(x, y);
      const bool none_expected = !m.walkable(x, y) || !in.reachable(x, y) || in.raw(x, y) == 0;
      if (none_expected) {
        CHECK(d == FlowDirection::kNone);
        continue;
      }
      // A reachable non-goal cell always has a lower neighbour (its predecessor on a path).
      REQUIRE(d != FlowDirection::kNone);
      const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(d)];
      const std::int32_t nx = x + o.x;
      const std::int32_t ny = y + o.y;
      REQUIRE(m.walkable(nx, ny));
      CHECK(in.raw(nx, ny) < in.raw(x, y));  // downhill
      if (is_diagonal(d)) {
        CHECK(m.walkable(nx, y));  // never across a blocked corner
        CHECK(m.walkable(x, ny));
      }
      // Lowest allowed neighbour.
      std::uint32_t best = kUnreachable;
      for (std::size_t k = 0; k < 8; ++k) {
        const CellCoord q = kDirectionOffsets[k];
        if (!in.reachable(x + q.x, y + q.y)) continue;
        if (k % 2 == 1 && (!m.walkable(x + q.x, y) || !m.walkable(x, y + q.y))) continue;
        best = std::min(best, in.raw(x + q.x, y + q.y));
      }
      CHECK(in.raw(nx, ny) == best);
    }
  }
}

}  // namespace

TEST_CASE("direction_vector: unit vectors, y down, zero for kNone") {
  for (int i = 0; i < 8; ++i) {
    const Vec2 v = direction_vector(static_cast<FlowDirection>(i));
    CHECK(length(v) == doctest::Approx(1.0f));
    const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(i)];
    CHECK(v.x * static_cast<float>(o.x) >= 0.0f);
    CHECK(v.y * static_cast<float>(o.y) >= 0.0f);
  }
  CHECK(direction_vector(FlowDirection::kS).y == 1.0f);
  CHECK(direction_vector(FlowDirection::kNone) == Vec2{});
  CHECK(direction_vector(static_cast<FlowDirection>(200)) == Vec2{});
}

TEST_CASE("flow: contract holds on hand-made, random and city maps") {
  SUBCASE("C1 X gap") {
    std::vector<MapMarker> mk;
    const GridMap m = ascii(test::kDiagonalGapMap, &mk);
    const Fields f = build(m, {marker(mk, 'P')});
    check_flow_contract(m, f);
    // The two cells touching across the wall corner never point at each other.
    CHECK(f.flow.at(4, 3) != FlowDirection::kSE);
    CHECK(f.flow.at(5, 4) != FlowDirection::kNW);
  }
  SUBCASE("random maps with costs, several goals") {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      CAPTURE(seed);
      const GridMap m = test::random_map(seed, 40, 30, 25, seed % 2 == 0);
      const Fields f = build(m, {{5, 5}, {30, 20}});
      check_flow_contract(m, f);
    }
  }
  SUBCASE("city") {
    const GridMap m = generate_city({128, 128, 3});
    const Fields f = build(m, {{3, 3}, {100, 90}});
    check_flow_contract(m, f);
  }
}

TEST_CASE("flow: kNone on goals, blocked and unreachable cells, and off the map") {
  std::vector<MapMarker> mk;
  const GridMap m = ascii(R"(
#######
#G.#..#
#..#..#
#######
)", &mk);
  const Fields f = build(m, {marker(mk, 'G')});
  CHECK(f.flow.at(1, 1) == FlowDirection::kNone);  // goal
  CHECK(f.flow.at(0, 0) == FlowDirection::kNone);  // blocked
  CHECK(f.flow.at(4, 1) == FlowDirection::kNone);  // unreachable
  CHECK(f.flow.at(-1, 1) == FlowDirection::kNone);
  CHECK(f.flow.at(1, 10) == FlowDirection::kNone);
  CHECK(f.flow.at(2, 2) == FlowDirection::kNW);
  CHECK(f.flow.at(2, 1) == FlowDirection::kW);
}

TEST_CASE("flow: ties go to the orthogonal, then to the lowest direction value") {
  // Cell (0,0): E (1,0) and S (0,1) are both goals -> E (enum 0) wins over S (enum 2).
  const GridMap m(3, 3);
  const Fields f = build(m, {{1, 0}, {0, 1}});
  CHECK(f.flow.at(0, 0) == FlowDirection::kE);
  // Cell (2,2): W (1,2) and N (2,1) are goals, NW (1,1) is not: W (enum 4) beats N (enum 6).
  const Fields g = build(m, {{2, 1}, {1, 2}});
  CHECK(g.flow.at(2, 2) == FlowDirection::kW);
  // Orthogonal vs diagonal: goals (2,1) and (2,2); cell (1,1) sees E and SE both 0 -> E.
  const Fields h = build(m, {{2, 1}, {2, 2}});
  CHECK(h.flow.at(1, 1) == FlowDirection::kE);
  // And a mirrored one: goals at (0,1) and (0,0) for cell (1,1): W and NW tie -> W.
  const Fields k = build(m, {{0, 1}, {0, 0}});
  CHECK(k.flow.at(1, 1) == FlowDirection::kW);
}

TEST_CASE("flow: deterministic across rebuilds and objects") {
  const GridMap m = generate_city({200, 150, 11});
  const Fields a = build(m, {{10, 10}, {190, 140}});
  const Fields b = build(m, {{10, 10}, {190, 140}});
  CHECK(a.flow.directions() == b.flow.directions());
  FlowField reused;
  reused.build(m, b.integration);
  reused.build(m, a.integration);
  CHECK(reused.directions() == a.flow.directions());
}

TEST_CASE("flow: a field built for another map size gives no directions") {
  const GridMap m(5, 5);
  const GridMap other(6, 5);
  IntegrationField in;
  const CellCoord goals[1] = {{0, 0}};
  in.build(m, goals);
  FlowField f;
  f.build(other, in);
  for (const std::uint8_t d : f.directions()) CHECK(d == static_cast<std::uint8_t>(FlowDirection::kNone));
}

// ---- row slices from the integration's snapshot (build_rows) ----------------------------------

TEST_CASE("flow build_rows: same directions as build(), whole or in slices of any height") {
  std::vector<std::pair<GridMap, std::vector<CellCoord>>> cases;
  cases.push_back({ascii(test::kDiagonalGapMap), {{7, 5}}});
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    cases.push_back({test::random_map(seed, 41, 23, 25, seed % 2 == 0), {{5, 5}, {30, 20}}});
  }
  cases.push_back({generate_city({128, 96, 3}), {{3, 3}, {100, 90}}});
  cases.push_back({GridMap(1, 1), {{0, 0}}});
  cases.push_back({GridMap(2, 7), {{1, 6}}});
  cases.push_back({GridMap(37, 1), {{0, 0}}});
  for (const auto& [m, goals] : cases) {
    CAPTURE(m.width());
    CAPTURE(m.height());
    const Fields f = build(m, goals);
    FlowField whole;
    whole.build_rows(f.integration, 0, m.height());
    CHECK(whole.width() == m.width());
    CHECK(whole.height() == m.height());
    CHECK(whole.directions() == f.flow.directions());
    for (const std::int32_t step : {1, 3, 17}) {
      FlowField sliced;
      for (std::int32_t y = 0; y < m.height(); y += step) sliced.build_rows(f.integration, y, y + step);
      CHECK(sliced.directions() == f.flow.directions());
    }
    // Out-of-range rows are clamped, an empty range only sizes the field.
    FlowField clamped;
    clamped.build_rows(f.integration, -5, 0);
    CHECK(clamped.directions().size() == f.flow.directions().size());
    clamped.build_rows(f.integration, -5, m.height() + 9);
    CHECK(clamped.directions() == f.flow.directions());
  }
}

TEST_CASE("flow build_rows: uses the blocked cells of the integration's snapshot, not the map's") {
  GridMap m = test::random_map(31, 30, 20, 20, false);
  const std::vector<CellCoord> goals{{1, 1}};
  const Fields before = build(m, goals);
  // Change the map after the integration was built: build_rows still matches the old map.
  for (std::int32_t x = 0; x < 30; ++x) m.set_cost(x, 10, kBlockedCost);
  m.set_cost(1, 2, kDefaultCost);
  FlowField f;
  f.build_rows(before.integration, 0, 20);
  CHECK(f.directions() == before.flow.directions());
}

TEST_CASE("flow build_rows: an integration still in progress gives kNone rows") {
  const GridMap m(20, 10);
  IntegrationField in;
  const CellCoord goal[1] = {{3, 3}};
  in.begin(m, goal);
  in.advance(10);
  REQUIRE(in.in_progress());
  FlowField f;
  f.build_rows(in, 0, 10);
  CHECK(f.directions().size() == 200u);
  for (const std::uint8_t d : f.directions()) CHECK(d == static_cast<std::uint8_t>(FlowDirection::kNone));
  // Rebuilding rows over an old field of the same size resets them too.
  while (!in.advance(10)) {
  }
  f.build_rows(in, 0, 10);
  CHECK(f.at(10, 3) == FlowDirection::kW);
  in.begin(m, goal);
  f.build_rows(in, 0, 5);
  CHECK(f.at(10, 3) == FlowDirection::kNone);
  CHECK(f.at(10, 7) != FlowDirection::kNone);  // rows outside the range keep their contents
}
