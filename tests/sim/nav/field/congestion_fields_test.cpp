// CongestionFields: the crowd-density cost on top of the exact fields (Continuum Crowds' idea).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/congestion_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"

using namespace swarmfield::sim;

namespace {

/// Two routes from the left half to a goal on the right: a wall on x = 20 with openings at
/// y = 5 (the short route) and y = 25 (the long one).
GridMap two_routes() {
  GridMap map(40, 30);
  for (std::int32_t y = 0; y < 30; ++y) {
    if (y == 5 || y == 25) continue;
    map.set_cost(20, y, kBlockedCost);
  }
  return map;
}

struct Crowd {
  std::vector<float> xs, ys;
  std::vector<std::uint8_t> kinds;
};

/// Walkers (radius 0.35) packed hexagonally in the rectangle [x0, x1) x [y0, y1).
Crowd packed(float x0, float y0, float x1, float y1) {
  Crowd c;
  const float d = 0.7f, row = d * std::sqrt(3.0f) * 0.5f;
  int r = 0;
  for (float y = y0 + 0.35f; y < y1; y += row, ++r) {
    for (float x = x0 + 0.35f + ((r & 1) != 0 ? 0.35f : 0.0f); x < x1; x += d) {
      c.xs.push_back(x);
      c.ys.push_back(y);
      c.kinds.push_back(0);
    }
  }
  return c;
}

const std::vector<float> kWalkerArea = {3.14159265f * 0.35f * 0.35f};

void run(CongestionFields& cf, const GridMap& map, const NavigationSet& nav, const Crowd& c, int updates) {
  for (int i = 0; i < updates; ++i) cf.update(map, nav, c.xs, c.ys, c.kinds, kWalkerArea);
}

}  // namespace

TEST_CASE("congestion: a packed crowd costs, an empty map does not, and the exact field stays exact") {
  const GridMap map = two_routes();
  NavigationSet nav;
  const Vec2 goals[1] = {{35.5f, 5.5f}};
  REQUIRE(nav.update(map, goals, size_class_bit(1)));
  CongestionFields cf;
  CHECK_FALSE(cf.ready(1));
  run(cf, map, nav, Crowd{}, 1);
  REQUIRE(cf.ready(1));  // a 40 x 30 build fits one update's budget
  // No crowd: the congestion field is the exact field.
  const IntegrationField& exact = nav.fields(1).integration();
  for (std::int32_t y = 0; y < 30; ++y) {
    for (std::int32_t x = 0; x < 40; ++x) CHECK(cf.integration(1).raw(x, y) == exact.raw(x, y));
  }
  // A crowd packed in front of the short route's opening, wall to wall.
  const Crowd crowd = packed(12.0f, 0.0f, 20.0f, 12.0f);
  CongestionFields cf2;
  run(cf2, map, nav, crowd, 1);
  REQUIRE(cf2.ready(1));
  CHECK(cf2.penalty_at(16, 5) == static_cast<std::uint8_t>(CongestionFields::kMaxPenalty));
  CHECK(cf2.penalty_at(30, 20) == 0);
  // From (5, 15) the exact route is the short one (through y = 5); with the crowd in front of it
  // the congestion field's route is the long one (through y = 25), and its value there is the
  // long route's, above the exact value.
  CHECK(cf2.integration(1).raw(5, 15) > exact.raw(5, 15));
  auto crossing = [&](const FlowField& flow) {
    CellCoord c{5, 15};
    for (int steps = 0; steps < 200 && c.x <= 20; ++steps) {
      const FlowDirection d = flow.at(c.x, c.y);
      if (d == FlowDirection::kNone) break;
      const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(d)];
      c = {c.x + o.x, c.y + o.y};
    }
    return c.y;
  };
  CHECK(crossing(nav.fields(1).flow()) == 5);
  CHECK(crossing(cf2.flow(1)) == 25);
  // The exact field is untouched by all this.
  CHECK(nav.fields(1).integration().raw(5, 5) == exact.raw(5, 5));
}

TEST_CASE("congestion: builds are time-sliced, periodic and deterministic") {
  GridMap map(600, 600);  // 360,000 cells: a build takes several updates (cells / 10 a update)
  NavigationSet nav;
  const Vec2 goals[1] = {{300.5f, 300.5f}};
  REQUIRE(nav.update(map, goals, size_class_bit(1)));
  const Crowd crowd = packed(290.0f, 290.0f, 300.0f, 310.0f);
  CongestionFields a, b;
  int first_ready = -1;
  for (int i = 1; i <= 3 * static_cast<int>(CongestionFields::kPeriodTicks); ++i) {
    a.update(map, nav, crowd.xs, crowd.ys, crowd.kinds, kWalkerArea);
    b.update(map, nav, crowd.xs, crowd.ys, crowd.kinds, kWalkerArea);
    if (first_ready < 0 && a.ready(1)) first_ready = i;
  }
  MESSAGE("first build ready after " << first_ready << " updates; builds in " << 3 * CongestionFields::kPeriodTicks
                                     << " updates: " << a.build_count());
  CHECK(first_ready > 1);  // time-sliced
  CHECK(a.build_count() >= 2);  // periodic
  for (std::int32_t y = 0; y < 600; y += 7) {
    for (std::int32_t x = 0; x < 600; x += 7) REQUIRE(a.integration(1).raw(x, y) == b.integration(1).raw(x, y));
  }
}
