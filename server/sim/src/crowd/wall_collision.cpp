// Wall collision of a disc on a grid map (see wall_collision.hpp): axis-by-axis sliding of the
// disc's bounding square, rounding door posts, and moving a disc out of walls. Used by the
// swarm step for agents and by World for players.
#include "swarmfield/sim/crowd/wall_collision.hpp"

#include <algorithm>
#include <limits>

#include "crowd_math.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

using crowd_detail::cell_of;

float wall_collision_radius(float radius, float cell_size) noexcept {
  const float lo = 0.01f * cell_size;
  const float hi = 0.5f * static_cast<float>(kMaxSizeClass) * cell_size;
  if (!(radius >= lo)) return lo;  // also NaN
  return radius > hi ? hi : radius;
}

float wall_span_epsilon(const GridMap& map) noexcept {
  const float cs = map.cell_size();
  const float extent = static_cast<float>(std::max(map.width(), map.height())) * cs;
  return 1e-4f * cs + 4e-7f * extent;
}

namespace {

inline bool column_blocked(const GridMap& map, std::int32_t column, std::int32_t row0, std::int32_t row1) noexcept {
  for (std::int32_t r = row0; r <= row1; ++r) {
    if (!map.walkable(column, r)) return true;
  }
  return false;
}

inline bool row_blocked(const GridMap& map, std::int32_t row, std::int32_t col0, std::int32_t col1) noexcept {
  for (std::int32_t c = col0; c <= col1; ++c) {
    if (!map.walkable(c, row)) return true;
  }
  return false;
}

/// New coordinate along one axis: `pos + delta`, clamped so the square [p - r, p + r] enters
/// no blocked line (column or row) beyond the centre's own one. `blocked(k)` tests line k over
/// the span of the other axis. Walks lines outward from the centre until the first blocked one.
template <class Blocked>
inline float slide_axis(float pos, float delta, float r, float cs, float eps, Blocked&& blocked) noexcept {
  const std::int32_t centre = cell_of(pos, cs);
  float target = pos + delta;
  const std::int32_t k_hi = cell_of(std::max(target, pos) + r - eps, cs);
  for (std::int32_t k = centre + 1; k <= k_hi; ++k) {
    if (blocked(k)) {
      target = std::min(target, static_cast<float>(k) * cs - r);
      break;
    }
  }
  const std::int32_t k_lo = cell_of(std::min(target, pos) - r + eps, cs);
  for (std::int32_t k = centre - 1; k >= k_lo; --k) {
    if (blocked(k)) {
      target = std::max(target, static_cast<float>(k + 1) * cs + r);
      break;
    }
  }
  return target;
}

}  // namespace

Vec2 slide_along_walls(const GridMap& map, Vec2 from, Vec2 move, float radius) noexcept {
  if (!finite(from)) return from;
  if (!finite(move)) return from;
  const float cs = map.cell_size();
  const float r = wall_collision_radius(radius, cs);
  const float eps = wall_span_epsilon(map);

  // X first, over the rows the disc's square spans now.
  const std::int32_t row0 = cell_of(from.y - r + eps, cs);
  const std::int32_t row1 = cell_of(from.y + r - eps, cs);
  const float x = slide_axis(from.x, move.x, r, cs, eps,
                             [&](std::int32_t k) { return column_blocked(map, k, row0, row1); });
  // Then Y, over the columns spanned at the new x.
  const std::int32_t col0 = cell_of(x - r + eps, cs);
  const std::int32_t col1 = cell_of(x + r - eps, cs);
  const float y = slide_axis(from.y, move.y, r, cs, eps,
                             [&](std::int32_t k) { return row_blocked(map, k, col0, col1); });
  return {x, y};
}

/// Rounds a door post: `p1` is where `move` from `p0` ended after wall sliding. When an axis
/// was stopped by a wall cell only the disc's edge overlaps (the cell beside the centre's own
/// row or column is blocked, the one straight ahead is free), the disc is moved sideways toward
/// the opening by what the stopped axis lost, within `budget` in total (so the speed limit
/// holds). Without this an agent pressed against a post stays there until a push frees it:
/// the bounding-square collision blocks it although its centre is already in line with the
/// opening (the "corner snag" of tile games). Never moves into a wall (slide_along_walls).
Vec2 slide_round_corner(const GridMap& map, Vec2 p0, Vec2 p1, Vec2 move, float budget, float radius) noexcept {
  const float cs = map.cell_size();
  const float r = wall_collision_radius(radius, cs);
  const float eps = 2.0f * wall_span_epsilon(map);
  for (int axis = 0; axis < 2; ++axis) {
    const float lost = axis == 0 ? move.x - (p1.x - p0.x) : move.y - (p1.y - p0.y);
    if (std::abs(lost) <= eps) continue;
    const float along = axis == 0 ? p1.x : p1.y;   // coordinate on the stopped axis
    const float across = axis == 0 ? p1.y : p1.x;  // coordinate on the other axis
    const std::int32_t ahead = cell_of(along + (lost > 0.0f ? r + eps : -(r + eps)), cs);
    const std::int32_t line = cell_of(across, cs);
    auto walkable = [&](std::int32_t a, std::int32_t b) { return axis == 0 ? map.walkable(a, b) : map.walkable(b, a); };
    if (!walkable(ahead, line)) continue;  // a flat wall straight ahead: nothing to round
    float shift = 0.0f;
    const float lo = static_cast<float>(line) * cs, hi = lo + cs;
    if (across - r < lo - eps && !walkable(ahead, line - 1)) shift = lo + r - across;
    else if (across + r > hi + eps && !walkable(ahead, line + 1)) shift = hi - r - across;
    if (shift == 0.0f) continue;
    const Vec2 used = p1 - p0;
    const float room = std::min(std::abs(lost), budget - length(used));
    if (!(room > 0.0f)) break;
    shift = std::clamp(shift, -room, room);
    p1 = slide_along_walls(map, p1, axis == 0 ? Vec2{0.0f, shift} : Vec2{shift, 0.0f}, radius);
  }
  return p1;
}


Vec2 move_out_of_walls(const GridMap& map, Vec2 p, float radius) noexcept {
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  const float cs = map.cell_size();
  if (!finite(p)) p = {static_cast<float>(w) * cs * 0.5f, static_cast<float>(h) * cs * 0.5f};
  if (w <= 0 || h <= 0) return p;
  // Far-off points are first brought onto the map's rectangle (keeps distances finite).
  p.x = std::clamp(p.x, 0.0f, static_cast<float>(w) * cs);
  p.y = std::clamp(p.y, 0.0f, static_cast<float>(h) * cs);
  const std::int32_t cx = std::clamp(cell_of(p.x, cs), 0, w - 1);
  const std::int32_t cy = std::clamp(cell_of(p.y, cs), 0, h - 1);

  // Ring search outward (Chebyshev rings); every cell of ring k is at least (k - 1) cells from
  // p, so stop once that bound exceeds the best distance found.
  float best_d2 = std::numeric_limits<float>::infinity();
  CellCoord best{-1, -1};
  auto consider = [&](std::int32_t x, std::int32_t y) {
    if (!map.walkable(x, y)) return;
    const float x0 = static_cast<float>(x) * cs, y0 = static_cast<float>(y) * cs;
    const float dx = p.x < x0 ? x0 - p.x : (p.x > x0 + cs ? p.x - (x0 + cs) : 0.0f);
    const float dy = p.y < y0 ? y0 - p.y : (p.y > y0 + cs ? p.y - (y0 + cs) : 0.0f);
    const float d2 = dx * dx + dy * dy;
    if (d2 < best_d2) {
      best_d2 = d2;
      best = {x, y};
    }
  };
  const std::int32_t max_ring = std::max(w, h);
  for (std::int32_t k = 0; k <= max_ring; ++k) {
    if (best.x >= 0 && k >= 1) {
      const float bound = static_cast<float>(k - 1) * cs;
      if (bound * bound > best_d2) break;
    }
    if (k == 0) {
      consider(cx, cy);
      continue;
    }
    for (std::int32_t y = cy - k; y <= cy + k; ++y) {
      if (y < 0 || y >= h) continue;
      if (y == cy - k || y == cy + k) {
        for (std::int32_t x = std::max(cx - k, 0); x <= std::min(cx + k, w - 1); ++x) consider(x, y);
      } else {
        if (cx - k >= 0) consider(cx - k, y);
        if (cx + k < w) consider(cx + k, y);
      }
    }
  }
  if (best.x < 0) return p;
  // Inside one cell: at most 0.49 cell (a bigger disc needs move_disc_out_of_walls).
  const float r = std::min(wall_collision_radius(radius, cs), 0.49f * cs);
  const float x0 = static_cast<float>(best.x) * cs, y0 = static_cast<float>(best.y) * cs;
  return {std::clamp(p.x, x0 + r, x0 + cs - r), std::clamp(p.y, y0 + r, y0 + cs - r)};
}

bool square_fits(const GridMap& map, Vec2 p, float radius) noexcept {
  if (!finite(p)) return false;
  const float cs = map.cell_size();
  const float r = wall_collision_radius(radius, cs);
  const float eps = wall_span_epsilon(map);
  const std::int32_t col0 = cell_of(p.x - r + eps, cs), col1 = cell_of(p.x + r - eps, cs);
  const std::int32_t row0 = cell_of(p.y - r + eps, cs), row1 = cell_of(p.y + r - eps, cs);
  if (col1 - col0 > 2 * kMaxSizeClass || row1 - row0 > 2 * kMaxSizeClass) return false;  // far off the map
  for (std::int32_t y = row0; y <= row1; ++y) {
    if (row_blocked(map, y, col0, col1)) return false;
  }
  return true;
}

bool move_disc_out_of_walls(const GridMap& map, const ClearanceMap& clearance, Vec2 p, float radius,
                            Vec2& out) noexcept {
  const std::int32_t w = map.width(), h = map.height();
  const float cs = map.cell_size();
  if (w <= 0 || h <= 0 || !clearance.matches(map)) return false;
  if (!finite(p)) p = {static_cast<float>(w) * cs * 0.5f, static_cast<float>(h) * cs * 0.5f};
  p.x = std::clamp(p.x, 0.0f, static_cast<float>(w) * cs);
  p.y = std::clamp(p.y, 0.0f, static_cast<float>(h) * cs);
  if (square_fits(map, p, radius)) {
    out = p;
    return true;
  }
  const float r = wall_collision_radius(radius, cs);
  const int n = size_class_of_radius(r, cs);
  const float side = static_cast<float>(n) * cs;
  const CellCoord b0 = reference_block(p, n, cs);
  // A square of side 2r <= n cells spans n or n + 1 cells per axis, so every placement lies in an
  // all-walkable rectangle of n or n + 1 cells a side: the union of one, two or four fitting
  // n-blocks. Per fitting block b, the centres of the rectangles it starts: [b + r, b + w - r]
  // per axis, w = n, or n + 1 when the next block along that axis (and for both, the diagonal
  // one) fits too. The nearest of those centres over all blocks is the nearest placement.
  float best_d2 = std::numeric_limits<float>::infinity();
  Vec2 best{};
  auto consider = [&](std::int32_t bx, std::int32_t by) {
    if (!clearance.fits({bx, by}, n)) return;
    const bool right = clearance.fits({bx + 1, by}, n), down = clearance.fits({bx, by + 1}, n);
    const bool both = right && down && clearance.fits({bx + 1, by + 1}, n);
    const float x0 = static_cast<float>(bx) * cs, y0 = static_cast<float>(by) * cs;
    for (int shape = 0; shape < 4; ++shape) {
      const bool wide = (shape & 1) != 0, tall = (shape & 2) != 0;
      if ((wide && tall && !both) || (wide && !right) || (tall && !down)) continue;
      const float wx = wide ? side + cs : side, wy = tall ? side + cs : side;
      const float qx = std::clamp(p.x, x0 + r, std::max(x0 + r, x0 + wx - r));
      const float qy = std::clamp(p.y, y0 + r, std::max(y0 + r, y0 + wy - r));
      const float d2 = (qx - p.x) * (qx - p.x) + (qy - p.y) * (qy - p.y);
      if (d2 < best_d2) {
        best_d2 = d2;
        best = {qx, qy};
      }
    }
  };
  // Rings of blocks round b0: a placement from a block in ring k (its rectangles reach one cell
  // further) is at least (k - n/2 - 3/2) cells from p.
  const std::int32_t max_ring = std::max(w, h) + n;
  for (std::int32_t k = 0; k <= max_ring; ++k) {
    const float bound = (static_cast<float>(k) - 0.5f * static_cast<float>(n) - 1.5f) * cs;
    if (best_d2 < std::numeric_limits<float>::infinity() && bound > 0.0f && bound * bound > best_d2) break;
    if (k == 0) {
      consider(b0.x, b0.y);
      continue;
    }
    for (std::int32_t by = b0.y - k; by <= b0.y + k; ++by) {
      if (by < 0 || by > h - n) continue;
      if (by == b0.y - k || by == b0.y + k) {
        for (std::int32_t bx = std::max(b0.x - k, 0); bx <= std::min(b0.x + k, w - n); ++bx) consider(bx, by);
      } else {
        if (b0.x - k >= 0) consider(b0.x - k, by);
        if (b0.x + k <= w - n) consider(b0.x + k, by);
      }
    }
  }
  if (!(best_d2 < std::numeric_limits<float>::infinity())) return false;
  out = best;
  return true;
}

}  // namespace swarmfield::sim
