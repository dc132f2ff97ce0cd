// Size classes: footprints, reference blocks, disc placement and the per-class planning grid.
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace swarmfield::sim {

namespace {

// Same bound as GridMap::world_to_cell: keeps floor() results inside int32.
constexpr double kCoordLimit = 1.0e9;

std::int32_t clamp_floor(double v) noexcept {
  const double c = std::floor(v);
  if (!(c > -kCoordLimit)) return static_cast<std::int32_t>(-kCoordLimit);  // also NaN
  if (c > kCoordLimit) return static_cast<std::int32_t>(kCoordLimit);
  return static_cast<std::int32_t>(c);
}

/// The fitting class-`n` block within `reach` (Chebyshev, cells) of `b0` minimising
/// `distance2(block, position_out)`, which also yields the position to report; scan order
/// (row-major) breaks ties. False when no block fits.
template <class Distance>
bool nearest_fitting_block(const ClearanceMap& clearance, CellCoord b0, int n, std::int32_t reach, Distance&& distance2,
                           CellCoord& block, Vec2& position) noexcept {
  double best = std::numeric_limits<double>::infinity();
  reach = std::max(reach, 0);
  for (std::int32_t y = b0.y - reach; y <= b0.y + reach; ++y) {
    for (std::int32_t x = b0.x - reach; x <= b0.x + reach; ++x) {
      if (!clearance.fits({x, y}, n)) continue;
      Vec2 q{};
      const double d = distance2(CellCoord{x, y}, q);
      if (d < best) {
        best = d;
        block = {x, y};
        position = q;
      }
    }
  }
  return std::isfinite(best);
}

/// Cost of the class-`n` block with top-left (x, y): blocked unless its clearance is >= n, else
/// the largest cost of its cells (1 on unit-cost maps, without reading them).
std::uint8_t block_cost(const GridMap& map, const ClearanceMap& clearance, std::int32_t x, std::int32_t y, int n,
                        bool unit) noexcept {
  if (clearance.at(x, y) < n) return kBlockedCost;
  std::uint8_t cost = kDefaultCost;
  if (!unit) {
    for (int dy = 0; dy < n; ++dy)
      for (int dx = 0; dx < n; ++dx) cost = std::max(cost, map.cost(x + dx, y + dy));
  }
  return cost;
}

}  // namespace

int size_class_of_radius(float radius, float cell_size) noexcept {
  if (!std::isfinite(radius) || !(radius > 0.0f) || !std::isfinite(cell_size) || !(cell_size > 0.0f)) return 1;
  const double n = std::ceil(2.0 * static_cast<double>(radius) / static_cast<double>(cell_size));
  if (n <= 1.0) return 1;
  if (n >= static_cast<double>(kMaxSizeClass)) return kMaxSizeClass;
  return static_cast<int>(n);
}

CellCoord reference_block_exact(Vec2 p, int size_class, float cell_size) noexcept {
  const int n = std::clamp(size_class, 1, kMaxSizeClass);
  // p / cs - n / 2 + 0.5 = p / cs - (n - 1) / 2; for n = 1 exactly GridMap::world_to_cell.
  const double shift = 0.5 * static_cast<double>(n - 1);
  const double cs = static_cast<double>(cell_size);
  return {clamp_floor(static_cast<double>(p.x) / cs - shift), clamp_floor(static_cast<double>(p.y) / cs - shift)};
}

Vec2 block_center(CellCoord block, int size_class, float cell_size) noexcept {
  const float half = 0.5f * static_cast<float>(std::clamp(size_class, 1, kMaxSizeClass));
  return {(static_cast<float>(block.x) + half) * cell_size, (static_cast<float>(block.y) + half) * cell_size};
}

bool disc_fits(const GridMap& map, Vec2 p, float radius) noexcept {
  if (!finite(p) || !std::isfinite(radius) || radius < 0.0f) return false;
  const float cs = map.cell_size();
  const double r = static_cast<double>(radius);
  const double px = static_cast<double>(p.x), py = static_cast<double>(p.y);
  // The disc must lie on the map at all.
  if (px - r < 0.0 || py - r < 0.0 || px + r > static_cast<double>(map.width()) * cs ||
      py + r > static_cast<double>(map.height()) * cs) {
    return false;
  }
  const std::int32_t x0 = clamp_floor((px - r) / cs), x1 = clamp_floor((px + r) / cs);
  const std::int32_t y0 = clamp_floor((py - r) / cs), y1 = clamp_floor((py + r) / cs);
  const double r2 = r * r;
  for (std::int32_t y = y0; y <= y1; ++y) {
    for (std::int32_t x = x0; x <= x1; ++x) {
      if (map.walkable(x, y)) continue;
      // Closest point of the blocked square to p; strictly inside the radius = overlap.
      const double qx = std::clamp(px, static_cast<double>(x) * cs, static_cast<double>(x + 1) * cs);
      const double qy = std::clamp(py, static_cast<double>(y) * cs, static_cast<double>(y + 1) * cs);
      const double dx = px - qx, dy = py - qy;
      if (dx * dx + dy * dy < r2) return false;
    }
  }
  return true;
}

bool nearest_fitting_position(const GridMap& map, const ClearanceMap& clearance, Vec2 p, float radius,
                              std::int32_t max_cells, Vec2& out) noexcept {
  if (!finite(p) || !std::isfinite(radius) || radius < 0.0f || !clearance.matches(map)) return false;
  if (disc_fits(map, p, radius)) {
    out = p;
    return true;
  }
  const float cs = map.cell_size();
  // Wider than the largest block: no block placement holds the disc.
  if (static_cast<double>(radius) > 0.5 * kMaxSizeClass * static_cast<double>(cs)) return false;
  const int n = size_class_of_radius(radius, cs);
  const double side = static_cast<double>(n) * cs;
  const double r = std::min(static_cast<double>(radius), 0.5 * side);
  // Keep candidates a hair inside the block so float rounding cannot make them touch a wall
  // from the wrong side; a disc as wide as its block sits at the block's centre.
  const double eps = 1.0e-4 * cs;
  const double lo_in = side - 2.0 * r >= 2.0 * eps ? r + eps : 0.5 * side;
  const double hi_in = side - 2.0 * r >= 2.0 * eps ? side - r - eps : 0.5 * side;
  const CellCoord b0 = reference_block(p, n, cs);
  const double px = static_cast<double>(p.x), py = static_cast<double>(p.y);
  // Distance to the nearest centre that keeps the disc inside the block.
  const auto inside = [&](CellCoord b, Vec2& q) noexcept {
    const double bx = static_cast<double>(b.x) * cs, by = static_cast<double>(b.y) * cs;
    const double qx = std::clamp(px, bx + lo_in, bx + hi_in);
    const double qy = std::clamp(py, by + lo_in, by + hi_in);
    q = {static_cast<float>(qx), static_cast<float>(qy)};
    return (qx - px) * (qx - px) + (qy - py) * (qy - py);
  };
  CellCoord block{};
  return nearest_fitting_block(clearance, b0, n, max_cells, inside, block, out);
}

bool class_goal_block(const ClearanceMap& clearance, Vec2 p, int size_class, float cell_size, std::int32_t max_cells,
                      CellCoord& out) noexcept {
  if (!finite(p) || size_class < 1 || size_class > kMaxSizeClass) return false;
  const CellCoord b0 = reference_block(p, size_class, cell_size);
  if (clearance.fits(b0, size_class)) {
    out = b0;
    return true;
  }
  const auto centre = [&](CellCoord b, Vec2& c) noexcept {
    c = block_center(b, size_class, cell_size);
    const double dx = static_cast<double>(c.x) - p.x, dy = static_cast<double>(c.y) - p.y;
    return dx * dx + dy * dy;
  };
  Vec2 c{};
  return nearest_fitting_block(clearance, b0, size_class, max_cells, centre, out, c);
}

void update_class_map(const GridMap& map, const ClearanceMap& clearance, int size_class, GridMap& class_map) {
  const std::int32_t w = map.width(), h = map.height();
  const int n = std::clamp(size_class, 1, kMaxSizeClass);
  // Unit-cost maps (every walkable cell costs 1, e.g. all MovingAI maps): every block costs 1.
  const bool unit = std::all_of(map.costs().begin(), map.costs().end(),
                                [](std::uint8_t c) { return c == kDefaultCost || c == kBlockedCost; });
  if (class_map.width() != w || class_map.height() != h || class_map.cell_size() != map.cell_size()) {
    // A new grid: filled at once (one set_cost() per cell would fill its change log for nothing).
    std::vector<std::uint8_t> costs(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
    for (std::int32_t y = 0; y < h; ++y)
      for (std::int32_t x = 0; x < w; ++x) costs[map.index(x, y)] = block_cost(map, clearance, x, y, n, unit);
    class_map = GridMap::from_costs(w, h, std::move(costs), map.cell_size());
    return;
  }
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      // Bumps the revision (and logs the block) only when the block changed.
      class_map.set_cost(x, y, block_cost(map, clearance, x, y, n, unit));
    }
  }
}

bool update_class_map_cells(const GridMap& map, const ClearanceMap& clearance, int size_class,
                            std::span<const CellCoord> cells, GridMap& class_map) {
  if (class_map.width() != map.width() || class_map.height() != map.height()) return false;
  const int n = std::clamp(size_class, 1, kMaxSizeClass);
  for (const CellCoord c : cells) {
    if (!map.in_bounds(c.x, c.y)) continue;
    for (std::int32_t y = std::max(c.y - n + 1, 0); y <= c.y; ++y)
      for (std::int32_t x = std::max(c.x - n + 1, 0); x <= c.x; ++x)
        class_map.set_cost(x, y, block_cost(map, clearance, x, y, n, false));
  }
  return true;
}

}  // namespace swarmfield::sim
