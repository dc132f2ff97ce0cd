// Smoothed flow sampling: unit length, fallback, corner rule, no 45-degree jumps (C9).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

double angle_deg(Vec2 a, Vec2 b) {
  const double c = std::clamp(static_cast<double>(dot(a, b)) / (length(a) * length(b)), -1.0, 1.0);
  return std::acos(c) * 180.0 / 3.14159265358979323846;
}

}  // namespace

TEST_CASE("sample_flow: unit length or zero, zero only where the own cell has no direction") {
  for (const float cell_size : {1.0f, 0.5f}) {
    CAPTURE(cell_size);
    const GridMap base = generate_city({96, 96, 8});
    const GridMap m = GridMap::from_costs(96, 96, base.costs(), cell_size);
    const Fields f = build(m, {{2, 2}, {60, 70}});
    std::size_t nonzero = 0;
    const float extent = 96.0f * cell_size;
    for (float y = -0.3f; y < extent + 0.3f; y += 0.137f * cell_size) {
      for (float x = -0.3f; x < extent + 0.3f; x += 0.113f * cell_size) {
        const Vec2 v = sample_flow(m, f.flow, {x, y});
        const float len = length(v);
        if (len == 0.0f) {
          const CellCoord c = m.world_to_cell({x, y});
          CHECK(f.flow.at(c.x, c.y) == FlowDirection::kNone);
        } else {
          CHECK(len == doctest::Approx(1.0f).epsilon(1e-5));
          ++nonzero;
        }
      }
    }
    CHECK(nonzero > 100000);
  }
}

TEST_CASE("sample_flow: falls back to the own cell when the blend cancels") {
  // Goals at both ends: cells 1,2 point W, cells 3,4 point E; at x = 3.0 the two samples
  // cancel exactly, so the own cell (3, pointing E) decides.
  const GridMap m(6, 1);
  const Fields f = build(m, {{0, 0}, {5, 0}});
  REQUIRE(f.flow.at(2, 0) == FlowDirection::kW);
  REQUIRE(f.flow.at(3, 0) == FlowDirection::kE);
  const Vec2 v = sample_flow(m, f.flow, {3.0f, 0.5f});
  CHECK(v.x == doctest::Approx(1.0f));
  CHECK(v.y == doctest::Approx(0.0f));
  // Just left of the border the own cell is 2 (W).
  CHECK(sample_flow(m, f.flow, {2.9999f, 0.5f}).x < 0.0f);
}

TEST_CASE("sample_flow: zero at a goal centre, pointing at the goal next to it, zero for NaN") {
  const GridMap m(9, 9);
  const Fields f = build(m, {{4, 4}});
  CHECK(sample_flow(m, f.flow, {4.5f, 4.5f}) == Vec2{});
  const Vec2 v = sample_flow(m, f.flow, {4.8f, 4.5f});
  CHECK(v.x < -0.99f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(sample_flow(m, f.flow, {nan, 1.0f}) == Vec2{});
  CHECK(sample_flow(m, f.flow, {1.0f, std::numeric_limits<float>::infinity()}) == Vec2{});
  CHECK(sample_flow(m, f.flow, {-50.0f, -50.0f}) == Vec2{});
}

TEST_CASE("sample_flow: a sample across a blocked corner is not blended in (C1)") {
  std::vector<MapMarker> mk;
  const GridMap m = ascii(test::kDiagonalGapMap, &mk);
  const Fields f = build(m, {marker(mk, 'P')});
  // Near the shared corner of (4,3) and (5,4): the (5,4) sample lies beyond the wall corner.
  const Vec2 v = sample_flow(m, f.flow, {4.95f, 3.95f});
  const Vec2 own = direction_vector(f.flow.at(4, 3));
  CHECK(v.x == doctest::Approx(own.x));
  CHECK(v.y == doctest::Approx(own.y));
  const Vec2 w = sample_flow(m, f.flow, {5.05f, 4.05f});
  const Vec2 own2 = direction_vector(f.flow.at(5, 4));
  CHECK(w.x == doctest::Approx(own2.x));
  CHECK(w.y == doctest::Approx(own2.y));
}

TEST_CASE("sample_flow: no 45-degree jump at the border between N and NE cells (C9)") {
  // Goal at the top middle of an open map: column 10 points N, column 9 points NE.
  const GridMap m(21, 21);
  const Fields f = build(m, {{10, 0}});
  REQUIRE(f.flow.at(9, 10) == FlowDirection::kNE);
  REQUIRE(f.flow.at(10, 10) == FlowDirection::kN);

  // An agent moving 0.1 cells per tick (3 cells/s at 30 Hz) across the border, and one moving
  // along it: heading changes stay far below 15 degrees per tick.
  double max_step = 0.0;
  double raw_max_step = 0.0;
  Vec2 prev = sample_flow(m, f.flow, {9.2f, 10.5f});
  Vec2 raw_prev = direction_vector(f.flow.at(9, 10));
  for (float x = 9.3f; x <= 10.8f; x += 0.1f) {
    const Vec2 v = sample_flow(m, f.flow, {x, 10.5f});
    const CellCoord c = m.world_to_cell({x, 10.5f});
    const Vec2 raw = direction_vector(f.flow.at(c.x, c.y));
    max_step = std::max(max_step, angle_deg(prev, v));
    raw_max_step = std::max(raw_max_step, angle_deg(raw_prev, raw));
    prev = v;
    raw_prev = raw;
  }
  CHECK(raw_max_step == doctest::Approx(45.0).epsilon(1e-3));  // the jump smoothing removes
  CHECK(max_step < 15.0);
  MESSAGE("largest heading change per 0.1-cell step across the N/NE border: " << max_step << " degrees");

  prev = sample_flow(m, f.flow, {10.0f, 15.0f});
  for (float y = 14.9f; y > 3.0f; y -= 0.1f) {
    const Vec2 v = sample_flow(m, f.flow, {10.0f, y});
    CHECK(angle_deg(prev, v) < 15.0);
    prev = v;
  }
}
