// CongestionFields: the crowd-density cost on top of the exact fields (Continuum Crowds' idea).
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/congestion_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"

using namespace swarmfield::sim;

namespace {

/// Two routes from the left half to a goal on the right: a wall on x = 20 with openings at
/// y = 5 (the short route; `short_width` cells wide, from y = 5 down) and y = 25 (the long one).
GridMap two_routes(std::int32_t short_width = 1) {
  GridMap map(40, 30);
  for (std::int32_t y = 0; y < 30; ++y) {
    if ((y >= 5 && y < 5 + short_width) || y == 25) continue;
    map.set_cost(20, y, kBlockedCost);
  }
  return map;
}

/// `map`'s navigation for size class 1 toward the two-route wall's goal (35.5, 5.5), east of it.
void navigate_two_routes(NavigationSet& nav, const GridMap& map) {
  const Vec2 goals[1] = {{35.5f, 5.5f}};
  REQUIRE(nav.update(map, goals, size_class_bit(1)));
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

/// Walkers (kind 0) at `at`.
Crowd walkers_at(std::initializer_list<Vec2> at) {
  Crowd c;
  for (const Vec2 p : at) {
    c.xs.push_back(p.x);
    c.ys.push_back(p.y);
    c.kinds.push_back(0);
  }
  return c;
}

const std::vector<float> kWalkerArea = {3.14159265f * 0.35f * 0.35f};
const std::vector<float> kWalkerSpeed = {3.0f};  // top speed of kind 0 (see kPlugHeldSpeed)

void run(CongestionFields& cf, const GridMap& map, const NavigationSet& nav, const Crowd& c, int updates) {
  for (int i = 0; i < updates; ++i) cf.update(map, nav, c.xs, c.ys, c.kinds, kWalkerArea);
}

}  // namespace

TEST_CASE("congestion: a packed crowd costs, an empty map does not, and the exact field stays exact") {
  const GridMap map = two_routes();
  NavigationSet nav;
  navigate_two_routes(nav, map);
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

TEST_CASE("congestion: a 1-cell passage holding an agent at rest is plugged; the other opening is the way") {
  // The two-route wall: the short route's opening (20, 5) is one cell wide. Two walkers in it.
  const GridMap map = two_routes();
  NavigationSet nav;
  navigate_two_routes(nav, map);
  const Crowd in_gap = walkers_at({{20.25f, 5.5f}, {20.75f, 5.5f}});
  // The same two at rest on open ground (25, 15).
  Crowd in_open = in_gap;
  for (float& x : in_open.xs) x += 5.0f;
  for (float& y : in_open.ys) y += 10.0f;
  const std::vector<std::uint8_t> moving(2, 0), at_rest(2, 1);
  CongestionFields stream, plugged, open_rest;
  stream.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, moving);
  plugged.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, at_rest);
  open_rest.update(map, nav, in_open.xs, in_open.ys, in_open.kinds, kWalkerArea, at_rest);
  REQUIRE(plugged.ready(1));
  MESSAGE("the 1-cell opening with two walkers: moving " << int{stream.penalty_at(20, 5)} << ", at rest "
                                                          << int{plugged.penalty_at(20, 5)});
  CHECK(stream.penalty_at(20, 5) < 6);  // two walkers fill the cell to 0.85: a stream's cost
  CHECK(plugged.penalty_at(20, 5) == CongestionFields::kPlugPenalty);
  CHECK(open_rest.penalty_at(25, 15) == stream.penalty_at(20, 5));  // not a passage: its fill only
  // From (5, 6), next to the short route, the way is the short route while the passage streams
  // and the long one (through y = 25) once it is plugged.
  const IntegrationField& exact = nav.fields(1).integration();
  CHECK(stream.integration(1).raw(5, 6) < exact.raw(5, 6) + 10 * kOrthogonalStep);
  CHECK(plugged.integration(1).raw(5, 6) > exact.raw(5, 6) + 15 * kOrthogonalStep);
  CHECK(plugged.flow(1).at(19, 5) != FlowDirection::kE);
  // The exact routes through the plug, near the goal: (5, 6) and (19, 5) run through it, (30, 20)
  // (east of the wall) and (18, 25) (through the long route's opening) do not; nothing is plugged
  // where agents stream through or rest on open ground.
  CHECK(plugged.plugged_route(5, 6));
  CHECK(plugged.plugged_route(19, 5));
  CHECK_FALSE(plugged.plugged_route(30, 20));
  CHECK_FALSE(plugged.plugged_route(18, 25));
  CHECK_FALSE(stream.plugged_route(5, 6));
  CHECK_FALSE(open_rest.plugged_route(5, 6));
  // unplugged_route: the cells whose exact route is free of the plug (east of the wall, through
  // the long route's opening); none on a plugged route, and none at all while nothing is plugged.
  CHECK(plugged.unplugged_route(30, 20));
  CHECK(plugged.unplugged_route(18, 25));
  CHECK_FALSE(plugged.unplugged_route(5, 6));
  CHECK_FALSE(plugged.unplugged_route(19, 5));
  CHECK_FALSE(stream.unplugged_route(30, 20));
  CHECK_FALSE(stream.unplugged_route(18, 25));
}

TEST_CASE("congestion: a 2-cell passage plugs too, its other cell with an agent held still beside one at rest") {
  // The two-route wall with its short opening 2 cells wide (y = 5 and 6).
  const GridMap map = two_routes(2);
  NavigationSet nav;
  navigate_two_routes(nav, map);
  const Crowd in_gap = walkers_at({{20.5f, 5.5f}, {20.5f, 6.5f}});
  const std::vector<std::uint8_t> moving(2, 0), at_rest(2, 1), one_at_rest = {1, 0};
  const std::vector<float> streaming_v = {3.0f, 3.0f}, held_v = {0.0f, 0.01f}, zero = {0.0f, 0.0f};
  CongestionFields stream, plugged, held, held_only;
  stream.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, moving, streaming_v, zero, kWalkerSpeed);
  plugged.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, at_rest);
  held.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, one_at_rest, held_v, zero, kWalkerSpeed);
  held_only.update(map, nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, moving, held_v, zero, kWalkerSpeed);
  REQUIRE(plugged.ready(1));
  for (const std::int32_t y : {5, 6}) {
    CHECK(stream.penalty_at(20, y) < CongestionFields::kPlugPenalty);
    CHECK(plugged.penalty_at(20, y) == CongestionFields::kPlugPenalty);
    CHECK(held.penalty_at(20, y) == CongestionFields::kPlugPenalty);
    CHECK(held_only.penalty_at(20, y) < CongestionFields::kPlugPenalty);  // held still, none at rest
  }
  CHECK(plugged.plugged_route(5, 6));
  CHECK(held.plugged_route(5, 6));
  CHECK_FALSE(stream.plugged_route(5, 6));
  CHECK_FALSE(held_only.plugged_route(5, 6));
  // A 3-cell passage does not plug (the short opening widened to y = 5..7).
  const GridMap wide = two_routes(3);
  NavigationSet wide_nav;
  navigate_two_routes(wide_nav, wide);
  CongestionFields wide_rest;
  wide_rest.update(wide, wide_nav, in_gap.xs, in_gap.ys, in_gap.kinds, kWalkerArea, at_rest);
  CHECK(wide_rest.penalty_at(20, 5) < CongestionFields::kPlugPenalty);
  CHECK_FALSE(wide_rest.plugged_route(5, 6));
}

TEST_CASE("congestion: a 2-cell passage's empty cell between agents at rest beside a plug is sealed") {
  // The two-route wall with its short opening 2 cells wide (y = 5 and 6): a walker at rest in
  // (20, 5), nobody in (20, 6), walkers at rest in the cells before and behind it (19, 6) and
  // (21, 6). A brute at rest behind a door closes the cell with its body, not its centre.
  const GridMap map = two_routes(2);
  NavigationSet nav;
  navigate_two_routes(nav, map);
  const auto plug_at_6 = [&](const Crowd& c, const std::vector<std::uint8_t>& resting, const std::vector<float>& vx) {
    CongestionFields cf;
    const std::vector<float> vy(c.xs.size(), 0.0f);
    cf.update(map, nav, c.xs, c.ys, c.kinds, kWalkerArea, resting, vx, vy, kWalkerSpeed);
    REQUIRE(cf.ready(1));
    CHECK(cf.penalty_at(20, 5) == CongestionFields::kPlugPenalty);
    return cf.penalty_at(20, 6) == CongestionFields::kPlugPenalty;
  };
  const Crowd sealed = walkers_at({{20.5f, 5.5f}, {19.5f, 6.5f}, {21.5f, 6.5f}});
  const std::vector<float> still(3, 0.0f);
  CHECK(plug_at_6(sealed, {1, 1, 1}, still));
  // Open: the cell behind the empty one holds nobody at rest (its walker moves on, or is gone).
  CHECK_FALSE(plug_at_6(sealed, {1, 1, 0}, {0.0f, 0.0f, 3.0f}));
  CHECK_FALSE(plug_at_6(walkers_at({{20.5f, 5.5f}, {19.5f, 6.5f}}), {1, 1}, {0.0f, 0.0f}));
  // A walker streaming through the cell itself keeps it open.
  const Crowd streaming = walkers_at({{20.5f, 5.5f}, {19.5f, 6.5f}, {21.5f, 6.5f}, {20.5f, 6.5f}});
  CHECK_FALSE(plug_at_6(streaming, {1, 1, 1, 0}, {0.0f, 0.0f, 0.0f, 3.0f}));
  // A body at rest whose disc reaches into the cell behind (its centre one cell farther on).
  const Crowd body = walkers_at({{20.5f, 5.5f}, {19.5f, 6.5f}, {22.2f, 6.5f}});
  CHECK(plug_at_6(body, {1, 1, 1}, still));
}
