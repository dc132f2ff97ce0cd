// sample_flow()'s fast path (block inside the map, own cell walkable: no bounds checks) gives
// bit-identical results to the original, fully checked formulation, kept here as the reference,
// on a real street map and on generated cities (several cell sizes), at random points, on cell
// centres and borders, next to walls, at the map border, off the map and at non-finite points.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::SplitMix;

namespace {

/// The formulation of sample_flow() before the fast path, verbatim: the reference.
Vec2 reference_sample_flow(const GridMap& map, const FlowField& flow, Vec2 p) noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return {};
  const CellCoord own = map.world_to_cell(p);
  const float u = p.x / map.cell_size() - 0.5f;
  const float v = p.y / map.cell_size() - 0.5f;
  const float fu = std::floor(u);
  const float fv = std::floor(v);
  if (std::fabs(fu) > 1.0e9f || std::fabs(fv) > 1.0e9f) return {};
  const auto x0 = static_cast<std::int32_t>(fu);
  const auto y0 = static_cast<std::int32_t>(fv);
  const float tx = u - fu;
  const float ty = v - fv;

  const bool own_walkable = map.walkable(own);
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1);
    const std::int32_t cy = y0 + (k >> 1);
    if (!map.walkable(cx, cy)) continue;
    const FlowDirection d = flow.at(cx, cy);
    if (d == FlowDirection::kNone) continue;
    if (own_walkable && cx != own.x && cy != own.y && (!map.walkable(cx, own.y) || !map.walkable(own.x, cy)))
      continue;
    const float wx = (k & 1) ? tx : 1.0f - tx;
    const float wy = (k >> 1) ? ty : 1.0f - ty;
    sum += direction_vector(d) * (wx * wy);
  }
  constexpr float kMinBlend = 1.0e-3f;
  const Vec2 blended = normalized_or_zero(sum, kMinBlend);
  if (blended.x != 0.0f || blended.y != 0.0f) return blended;
  return direction_vector(flow.at(own.x, own.y));
}

bool same_bits(Vec2 a, Vec2 b) { return std::memcmp(&a, &b, sizeof(Vec2)) == 0; }

struct Tally {
  std::size_t points = 0;
  std::size_t differing = 0;
  std::size_t nonzero = 0;     // results that are a direction (the comparison is not all zeros)
  std::size_t interior = 0;    // points whose 2x2 block is on the map with a walkable own cell
  std::size_t corner_cut = 0;  // interior points where the corner rule drops a sample
};

/// Compares the two at `p`; on the first difference reports the point.
void compare(const GridMap& map, const FlowField& flow, Vec2 p, Tally& t) {
  const Vec2 got = sample_flow(map, flow, p);
  const Vec2 want = reference_sample_flow(map, flow, p);
  ++t.points;
  if (got.x != 0.0f || got.y != 0.0f) ++t.nonzero;
  if (!same_bits(got, want)) {
    if (t.differing == 0) {
      MESSAGE("first difference at (" << p.x << ", " << p.y << "): got (" << got.x << ", " << got.y << "), want ("
                                      << want.x << ", " << want.y << ")");
    }
    ++t.differing;
  }
  // Classify, written independently of the library, so the test shows it covered both paths.
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return;
  const float u = p.x / map.cell_size() - 0.5f, v = p.y / map.cell_size() - 0.5f;
  const float fu = std::floor(u), fv = std::floor(v);
  if (!(fu >= 0.0f && fv >= 0.0f && fu + 1.0f < static_cast<float>(map.width()) &&
        fv + 1.0f < static_cast<float>(map.height())))
    return;
  const CellCoord own = map.world_to_cell(p);
  if (!map.walkable(own)) return;
  ++t.interior;
  const auto x0 = static_cast<std::int32_t>(fu), y0 = static_cast<std::int32_t>(fv);
  const std::int32_t dx = own.x == x0 ? x0 + 1 : x0, dy = own.y == y0 ? y0 + 1 : y0;  // diagonal sample
  if (map.walkable(dx, dy) && (!map.walkable(dx, own.y) || !map.walkable(own.x, dy))) ++t.corner_cut;
}

/// Random and structured points over `map` (and around it); returns the tally.
Tally sweep(const GridMap& map, const FlowField& flow, std::uint64_t seed, std::size_t random_points) {
  SplitMix rng{seed};
  Tally t;
  const float cs = map.cell_size();
  const float ww = static_cast<float>(map.width()) * cs, wh = static_cast<float>(map.height()) * cs;
  // Anywhere on the map and a margin around it.
  for (std::size_t i = 0; i < random_points; ++i) {
    compare(map, flow, {rng.uniform(-3.0f * cs, ww + 3.0f * cs), rng.uniform(-3.0f * cs, wh + 3.0f * cs)}, t);
  }
  // Cell centres, borders and the floats next to them, next to walls (every blocked cell's
  // neighbourhood is sampled densely), including the map's first and last rows and columns.
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < random_points / 8; ++i) {
    const std::int32_t cx = rng.below(map.width() + 2) - 1, cy = rng.below(map.height() + 2) - 1;
    const float bx = static_cast<float>(cx) * cs, by = static_cast<float>(cy) * cs;
    for (const float fx : {0.0f, 0.5f, 1.0f}) {
      for (const float fy : {0.0f, 0.5f, 1.0f}) {
        const float x = bx + fx * cs, y = by + fy * cs;
        compare(map, flow, {x, y}, t);
        compare(map, flow, {std::nextafter(x, -inf), std::nextafter(y, inf)}, t);
        compare(map, flow, {std::nextafter(x, inf), std::nextafter(y, -inf)}, t);
      }
    }
  }
  std::size_t walls = 0;
  for (std::int32_t y = 0; y < map.height() && walls < random_points / 16; ++y) {
    for (std::int32_t x = 0; x < map.width() && walls < random_points / 16; ++x) {
      if (map.walkable(x, y) || rng.below(7) != 0) continue;
      ++walls;
      for (int k = 0; k < 12; ++k) {
        compare(map, flow,
                {(static_cast<float>(x) + rng.uniform(-1.0f, 2.0f)) * cs,
                 (static_cast<float>(y) + rng.uniform(-1.0f, 2.0f)) * cs},
                t);
      }
    }
  }
  // Map border exactly, and just inside and outside it.
  for (std::int32_t i = 0; i < 400; ++i) {
    const float a = rng.uniform(0.0f, ww), b = rng.uniform(0.0f, wh);
    for (const float x : {0.0f, 0.5f * cs, ww - 0.5f * cs, std::nextafter(ww - 0.5f * cs, -inf),
                          std::nextafter(ww, -inf), ww, ww + 0.5f * cs, -0.0f, std::nextafter(0.5f * cs, -inf)}) {
      compare(map, flow, {x, b}, t);
      compare(map, flow, {a, x * (wh / ww)}, t);
    }
  }
  // Far off the map and not finite.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const float x : {-1e30f, -1e9f, -3.5e9f, 1e9f, 4.2e9f, 1e30f, 16777216.0f, 16777217.5f, nan, inf, -inf,
                        std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(), 1.0f}) {
    for (const float y : {-1e30f, 0.75f, 1e9f, nan, inf, 3.0f, 1e30f}) {
      compare(map, flow, {x, y}, t);
      compare(map, flow, {y, x}, t);
    }
  }
  return t;
}

FlowField flow_for(const GridMap& map, const std::vector<CellCoord>& goals) {
  IntegrationField integration;
  integration.build(map, goals);
  FlowField flow;
  flow.build(map, integration);
  return flow;
}

/// Walkable cells spread over the map (goals).
std::vector<CellCoord> some_goals(const GridMap& map, std::size_t count, std::uint64_t seed) {
  SplitMix rng{seed};
  std::vector<CellCoord> goals;
  for (int tries = 0; goals.size() < count && tries < 100000; ++tries) {
    const CellCoord c{rng.below(map.width()), rng.below(map.height())};
    if (map.walkable(c)) goals.push_back(c);
  }
  REQUIRE(goals.size() == count);
  return goals;
}

void check_map(const GridMap& map, std::size_t goals, std::uint64_t seed, std::size_t points) {
  const FlowField flow = flow_for(map, some_goals(map, goals, seed));
  const Tally t = sweep(map, flow, seed + 1, points);
  CAPTURE(t.points);
  CHECK(t.differing == 0);
  // The comparison covered both paths and the corner rule, and is not all zeros.
  CHECK(t.nonzero > t.points / 4);
  CHECK(t.interior > t.points / 4);
  CHECK(t.corner_cut > 0);
  CHECK(t.interior < t.points);
}

}  // namespace

TEST_CASE("sample_flow fast path equals the checked formulation on a real street map") {
  GridMap map;
  MapError error;
  const std::string path = std::string(SWARMFIELD_MAPS_DIR) + "/street/Boston_0_512.map";
  REQUIRE_MESSAGE(swarmfield::io::read_map_file(path, map, error), error.to_string());
  check_map(map, 3, swarmfield::sim::test::test_seed(4242), 400000);
}

TEST_CASE("sample_flow fast path equals the checked formulation on generated cities") {
  const std::uint64_t seed = swarmfield::sim::test::test_seed(99);
  const GridMap base = generate_city({160, 120, 11});
  for (const float cell_size : {1.0f, 0.5f, 0.9f, 2.0f, 1.3f}) {
    CAPTURE(cell_size);
    const GridMap map = GridMap::from_costs(base.width(), base.height(), base.costs(), cell_size);
    check_map(map, 2, seed, 120000);
  }
}

TEST_CASE("sample_flow with a flow field of another size takes the checked path and agrees") {
  const GridMap city = generate_city({64, 64, 3});
  const GridMap bigger = generate_city({80, 72, 3});
  const FlowField flow = flow_for(bigger, some_goals(bigger, 1, 5));  // not this map's size
  SplitMix rng{17};
  Tally t;
  for (int i = 0; i < 20000; ++i) compare(city, flow, {rng.uniform(-2.0f, 66.0f), rng.uniform(-2.0f, 66.0f)}, t);
  CHECK(t.differing == 0);
  CHECK(t.nonzero > 1000);
}
