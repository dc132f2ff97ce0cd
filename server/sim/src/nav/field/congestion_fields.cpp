// CongestionFields (see the header): a round of builds every kPeriodTicks updates, one class
// after another; each build measures how full the map's cells are, adds the congestion cost to
// the class grid's costs and runs a time-sliced integration from the class's goal blocks.
#include "swarmfield/sim/nav/field/congestion_fields.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace swarmfield::sim {

namespace {

// Hexagonal packing of equal discs: the most of a cell's area discs can fill.
constexpr float kPackedFill = 0.9069f;

// True when (x, y) lies in a passage at most `width` cells across along x or along y: walls
// (or the map's edge) on both sides within that run. A 1-cell door or gap is 1 across; a
// corridor 2 cells wide is 2.
bool in_narrow_passage(const GridMap& map, std::int32_t x, std::int32_t y, std::int32_t width) {
  const auto across = [&](std::int32_t dx, std::int32_t dy) {
    std::int32_t run = 1;
    for (std::int32_t s = 1; run <= width && map.walkable(x + s * dx, y + s * dy); ++s) ++run;
    for (std::int32_t s = 1; run <= width && map.walkable(x - s * dx, y - s * dy); ++s) ++run;
    return run;
  };
  return across(1, 0) <= width || across(0, 1) <= width;
}

}  // namespace

std::uint8_t CongestionFields::penalty_at(std::int32_t x, std::int32_t y) const noexcept {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return 0;
  return penalty_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)];
}

void CongestionFields::measure_density(const GridMap& map, std::span<const float> xs, std::span<const float> ys,
                                       std::span<const std::uint8_t> kinds, std::span<const float> kind_area,
                                       std::span<const std::uint8_t> resting, std::span<const float> vxs,
                                       std::span<const float> vys, std::span<const float> kind_speed) {
  const std::size_t cells = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  fill_.assign(cells, 0.0f);  // allocates only when the map grows
  penalty_.assign(cells, 0);
  const float cs = map.cell_size();
  const float inv_packed = 1.0f / (kPackedFill * cs * cs);
  const std::size_t n = std::min({xs.size(), ys.size(), kinds.size()});
  for (std::size_t i = 0; i < n; ++i) {
    const CellCoord c = map.world_to_cell({xs[i], ys[i]});
    if (!map.in_bounds(c.x, c.y) || kinds[i] >= kind_area.size()) continue;
    fill_[map.index(c.x, c.y)] += kind_area[kinds[i]] * inv_packed;
  }
  for (std::size_t i = 0; i < cells; ++i) {
    const float over = (std::min(fill_[i], 1.0f) - kFreeFill) / (1.0f - kFreeFill);
    if (over > 0.0f) penalty_[i] = static_cast<std::uint8_t>(std::lround(kMaxPenalty * over * over));
  }
  // Plugged passages: agents at rest in a cell of a passage at most kPlugWidthCells across.
  // plugged_ is all zeros while no passage is plugged, so it is cleared only after a round that
  // found one (or a new map size).
  if (any_plug_ || plugged_.size() != cells) plugged_.assign(cells, 0);
  any_plug_ = false;
  const auto plug = [&](CellCoord c, std::uint8_t by) {
    std::uint8_t& p = penalty_[map.index(c.x, c.y)];
    p = std::max(p, kPlugPenalty);
    plugged_[map.index(c.x, c.y)] = by;
    any_plug_ = true;
  };
  for (std::size_t i = 0; i < std::min(n, resting.size()); ++i) {
    if (resting[i] == 0) continue;
    const CellCoord c = map.world_to_cell({xs[i], ys[i]});
    if (map.in_bounds(c.x, c.y) && in_narrow_passage(map, c.x, c.y, kPlugWidthCells)) plug(c, kPlugRest);
  }
  // A passage's other cells, beside one plugged by an agent at rest, plug too (kPlugHeld; only
  // beside a plug at rest, kPlugRest: a held plug does not pass it on, so the result does not
  // depend on the agents' order):
  // - held: with an agent held still in it (slower than kPlugHeldSpeed of its top speed, not
  //   flagged at rest). A 2-cell door with one agent at rest and one held beside it passes
  //   nobody either. Any slow agent in any narrow cell plugging sent a street junction's alleys'
  //   queues round the blocks (jitter 346 -> 501, rest_final 0.85 -> 0.84);
  // - sealed: with nobody moving in it and each of its other walkable 4-neighbours touched by
  //   an agent at rest (or a plug at rest). A 2-cell door whose one cell held a walker at rest
  //   and whose other one was empty between a brute at rest behind it and the outside pile at
  //   rest before it passed 2 agents in 150 s, while class 1's field ran through the empty cell
  //   at no cost and sent the crowds outside the side doors into the room.
  if (!any_plug_ || vxs.size() < n || vys.size() < n || kind_speed.empty()) return;
  // Held or moving: the agent's centre cell; at rest: every cell its disc's bounding square
  // touches (a brute's body closes the cell behind a door without its centre being in it).
  occupancy_.assign(cells, 0);
  for (std::size_t i = 0; i < std::min(n, resting.size()); ++i) {
    const CellCoord c = map.world_to_cell({xs[i], ys[i]});
    if (!map.in_bounds(c.x, c.y) || kinds[i] >= kind_speed.size()) continue;
    if (resting[i] == 0) {
      const float slow = kPlugHeldSpeed * kind_speed[kinds[i]];
      const bool held = vxs[i] * vxs[i] + vys[i] * vys[i] < slow * slow;
      occupancy_[map.index(c.x, c.y)] |= held ? kOccupiedHeld : kOccupiedMoving;
      continue;
    }
    if (kinds[i] >= kind_area.size()) continue;
    const float r = std::sqrt(kind_area[kinds[i]] / std::numbers::pi_v<float>);
    const CellCoord lo = map.world_to_cell({xs[i] - r, ys[i] - r}), hi = map.world_to_cell({xs[i] + r, ys[i] + r});
    for (std::int32_t y = std::max(lo.y, 0); y <= std::min(hi.y, height_ - 1); ++y) {
      for (std::int32_t x = std::max(lo.x, 0); x <= std::min(hi.x, width_ - 1); ++x) {
        occupancy_[map.index(x, y)] |= kOccupiedRest;
      }
    }
  }
  const auto rest_at = [&](std::int32_t x, std::int32_t y) {
    const std::size_t j = map.index(x, y);
    return (occupancy_[j] & kOccupiedRest) != 0 || plugged_[j] == kPlugRest;
  };
  constexpr std::array<CellCoord, 4> kSides{CellCoord{1, 0}, CellCoord{-1, 0}, CellCoord{0, 1}, CellCoord{0, -1}};
  for (std::size_t i = 0; i < std::min(n, resting.size()); ++i) {
    if (resting[i] == 0) continue;
    const CellCoord c = map.world_to_cell({xs[i], ys[i]});
    if (!map.in_bounds(c.x, c.y) || plugged_[map.index(c.x, c.y)] != kPlugRest) continue;
    for (const CellCoord d : kSides) {
      const CellCoord b{c.x + d.x, c.y + d.y};
      if (!map.walkable(b.x, b.y) || plugged_[map.index(b.x, b.y)] != 0 || !in_narrow_passage(map, b.x, b.y, kPlugWidthCells)) {
        continue;
      }
      const std::uint8_t here = occupancy_[map.index(b.x, b.y)];
      bool plugs = (here & kOccupiedHeld) != 0;
      if (!plugs && (here & kOccupiedMoving) == 0) {
        plugs = true;
        for (const CellCoord e : kSides) {
          const CellCoord m{b.x + e.x, b.y + e.y};
          if ((m.x == c.x && m.y == c.y) || !map.walkable(m.x, m.y)) continue;
          plugs = plugs && rest_at(m.x, m.y);
        }
      }
      if (plugs) plug(b, kPlugHeld);
    }
  }
}

void CongestionFields::start_build(const GridMap& map, const NavigationSet& nav, int size_class) {
  Slot& s = slots_[slot(size_class)];
  const GridMap& grid = size_class == 1 ? map : nav.class_grid(size_class);
  const std::int32_t w = grid.width(), h = grid.height();
  if (s.costs.width() != w || s.costs.height() != h || s.costs.cell_size() != grid.cell_size()) {
    s.costs = GridMap(w, h, kDefaultCost, grid.cell_size());
    s.costs.set_change_log(false);  // refilled wholesale: nobody follows it cell by cell
    s.ready = false;
  }
  // A class-n block (top-left b, n x n cells) costs its grid cost plus the most congested of
  // its cells' penalties (class 1: its cell's).
  const std::int32_t n = size_class;
  const std::size_t mw = static_cast<std::size_t>(width_);
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      const std::uint8_t base = grid.cost(x, y);
      std::uint8_t cost = base;
      if (base != kBlockedCost) {
        std::uint8_t extra = 0;
        if (n == 1) {
          extra = penalty_[static_cast<std::size_t>(y) * mw + static_cast<std::size_t>(x)];
        } else {
          for (std::int32_t dy = 0; dy < n; ++dy) {
            for (std::int32_t dx = 0; dx < n; ++dx) extra = std::max(extra, penalty_at(x + dx, y + dy));
          }
        }
        cost = static_cast<std::uint8_t>(std::min<int>(base + extra, kBlockedCost - 1));
      }
      if (s.costs.cost(x, y) != cost) s.costs.set_cost(x, y, cost);
    }
  }
  s.building.begin(s.costs, nav.goal_cells(size_class));
  building_class_ = size_class;
}

void CongestionFields::finish_build(const NavigationSet& nav, int size_class) {
  Slot& s = slots_[slot(size_class)];
  const std::int32_t w = s.costs.width(), h = s.costs.height();
  const std::size_t blocks = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  s.detour.assign((blocks + 63) / 64, 0);
  s.crowded_detour.assign((blocks + 63) / 64, 0);
  const IntegrationField& exact = nav.fields(size_class).integration();
  s.ready = exact.width() == w && exact.height() == h;
  if (!s.ready) return;
  const auto margin = static_cast<std::uint32_t>(std::max(0.0f, margin_) * static_cast<float>(kOrthogonalStep));
  const std::size_t mw = static_cast<std::size_t>(width_);
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      if (!s.integration.reachable(x, y) || !exact.reachable(x, y)) continue;
      const std::uint32_t ev = exact.raw(x, y), cv = s.integration.raw(x, y);
      if (cv <= ev || cv - ev <= margin) continue;
      // Not for a block that is crowded itself (an agent there is in the crowd): that one goes
      // to crowded_detour.
      const bool crowded =
          x < width_ && y < height_ && penalty_[static_cast<std::size_t>(y) * mw + static_cast<std::size_t>(x)] != 0;
      const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x);
      (crowded ? s.crowded_detour : s.detour)[i >> 6] |= std::uint64_t{1} << (i & 63);
    }
  }
}

// Follows class 1's exact flow from each cell near a goal (within kPluggedReachCells) until a
// cell already known, a goal or the reach's edge, then marks the path walked: O(cells near the
// goals), each cell once.
void CongestionFields::mark_plugged_routes(const NavigationSet& nav) {
  // plugged_route() reads plugged_route_ only while any_plugged_route_: without a plug nothing
  // is cleared or walked.
  any_plugged_route_ = false;
  if (!any_plug_ || !nav.has_class(1)) return;
  const std::size_t cells = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  plugged_route_.assign(cells, 0);
  const IntegrationField& exact = nav.fields(1).integration();
  const FlowField& flow = nav.fields(1).flow();
  if (exact.width() != width_ || exact.height() != height_ || plugged_.size() != cells) return;
  const auto reach = static_cast<std::uint32_t>(kPluggedReachCells * static_cast<float>(kOrthogonalStep));
  const auto w = static_cast<std::size_t>(width_);
  for (std::size_t start = 0; start < cells; ++start) {
    const auto sx = static_cast<std::int32_t>(start % w), sy = static_cast<std::int32_t>(start / w);
    if (plugged_route_[start] != kRouteUnknown || !exact.reachable(sx, sy) || exact.raw(sx, sy) > reach) continue;
    route_path_.clear();
    std::size_t at = start;
    std::uint8_t result = kRouteClear;
    while (true) {
      if (plugged_route_[at] != kRouteUnknown) {
        result = plugged_route_[at];
        break;
      }
      route_path_.push_back(at);
      plugged_route_[at] = kRouteClear;  // provisional: a cycle (none in a flow field) would end here
      const auto x = static_cast<std::int32_t>(at % w), y = static_cast<std::int32_t>(at / w);
      const FlowDirection d = flow.at(x, y);
      if (d == FlowDirection::kNone) break;
      const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(d)];
      at = static_cast<std::size_t>(y + o.y) * w + static_cast<std::size_t>(x + o.x);
    }
    // Back along the path: a cell's route is plugged when a cell nearer the goal on it is.
    for (std::size_t j = route_path_.size(); j-- > 0;) {
      if (plugged_[route_path_[j]] != 0) result = kRoutePlugged;
      plugged_route_[route_path_[j]] = result;
    }
    any_plugged_route_ = any_plugged_route_ || result == kRoutePlugged;
  }
}

void CongestionFields::update(const GridMap& map, const NavigationSet& nav, std::span<const float> xs,
                              std::span<const float> ys, std::span<const std::uint8_t> kinds,
                              std::span<const float> kind_area, std::span<const std::uint8_t> resting,
                              std::span<const float> vxs, std::span<const float> vys,
                              std::span<const float> kind_speed) {
  if (nav.hierarchical()) {
    for (Slot& s : slots_) s.ready = false;
    any_plugged_route_ = false;
    building_class_ = 0;
    round_mask_ = 0;
    return;
  }
  if (width_ != map.width() || height_ != map.height()) {
    width_ = map.width();
    height_ = map.height();
    for (Slot& s : slots_) s.ready = false;
    any_plugged_route_ = false;
    building_class_ = 0;
    round_mask_ = 0;
    ticks_ = kPeriodTicks;  // start at once
  }
  for (int c = 1; c <= kMaxSizeClass; ++c) {
    if (!nav.has_class(c)) slots_[slot(c)].ready = false;
  }
  ++ticks_;
  if (building_class_ == 0 && round_mask_ == 0 && ticks_ >= kPeriodTicks) {
    // A new round: the density now, then each class present in turn.
    ticks_ = 0;
    measure_density(map, xs, ys, kinds, kind_area, resting, vxs, vys, kind_speed);
    for (int c = 1; c <= kMaxSizeClass; ++c) {
      if (nav.has_class(c)) round_mask_ |= 1u << (c - 1);
    }
  }
  const std::size_t budget =
      std::max(kMinBudget, static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_) / 20);
  std::size_t left = budget;
  while (left > 0) {
    if (building_class_ == 0) {
      if (round_mask_ == 0) break;
      int c = 1;
      while ((round_mask_ & (1u << (c - 1))) == 0) ++c;
      round_mask_ &= ~(1u << (c - 1));
      if (!nav.has_class(c)) continue;
      start_build(map, nav, c);
    }
    Slot& s = slots_[slot(building_class_)];
    const std::uint64_t before = s.building.work_units();
    const bool done = s.building.advance(left);
    const std::uint64_t spent = s.building.work_units() - before;
    left = spent >= left ? 0 : left - static_cast<std::size_t>(spent);
    if (!done) break;
    std::swap(s.integration, s.building);
    s.flow.build(s.costs, s.integration);
    finish_build(nav, building_class_);
    if (building_class_ == 1) mark_plugged_routes(nav);
    ++builds_;
    building_class_ = 0;
  }
}

}  // namespace swarmfield::sim
