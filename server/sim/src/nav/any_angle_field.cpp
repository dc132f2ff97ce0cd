// AnyAngleField: Theta*-style waypoints over a finished flow field, and their sampling.
#include "swarmfield/sim/nav/any_angle_field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "swarmfield/sim/nav/size_class.hpp"

namespace swarmfield::sim {

namespace {

constexpr auto kNoneDir = static_cast<std::uint8_t>(FlowDirection::kNone);

/// Longest oblique segment checked band by band (rows of an x-major segment, columns of a
/// y-major one) when its bounding box holds a wall; longer ones are refused (conservative).
constexpr std::int32_t kMaxSightBands = 8;

constexpr std::uint32_t pack(std::int32_t x, std::int32_t y) noexcept {
  return static_cast<std::uint32_t>(x) | (static_cast<std::uint32_t>(y) << 16);
}

/// Band-by-band test of the convex hull of cell c's square and the centre P of cell w (rows of
/// an x-major pair, columns of a y-major one), walking from c's band toward w's. The hull is
/// convex and its vertices are the square's corners and P, so its x-range within a band is that
/// of its slices on the band's two boundary lines (the square's own x-range in c's band, the
/// apex P in w's band), and a slice on a line between the square and P spans the four
/// corner-to-P segments there. The cells whose interiors the open range meets must be walkable.
/// Range ends are rationals with denominators below 2^17, so a value within 1e-9 of an integer
/// is that integer (rounding error is ~1e-11): snapping keeps the test exact. `kTransposed`
/// swaps the axes (table queries only).
template <bool kTransposed>
bool hull_bands_clear(const BlockedCountTable& t, std::int32_t cx, std::int32_t cy, std::int32_t wx,
                      std::int32_t wy) noexcept {
  // In this function "x" is the major axis and "y" the band axis; cy != wy (else the box test
  // was exact).
  const std::int32_t x0 = std::min(cx, wx), x1 = std::max(cx, wx);
  const std::int32_t dir = wy > cy ? 1 : -1;
  const double px = static_cast<double>(wx) + 0.5, py = static_cast<double>(wy) + 0.5;
  const double sx = static_cast<double>(cx), sy = static_cast<double>(cy);
  // Corner k = (sx + (k & 1), sy + (k >> 1)): x on the line y = sy + d is base[k] + d * slope[k].
  double base[4], slope[4];
  for (int k = 0; k < 4; ++k) {
    const double ax = sx + static_cast<double>(k & 1), ay = sy + static_cast<double>(k >> 1);
    slope[k] = (px - ax) / (py - ay);  // py - ay is never 0: py is a half-integer
    base[k] = ax - ay * slope[k] + sy * slope[k];
  }
  const auto snap = [](double v) noexcept {
    const double n = std::nearbyint(v);
    return std::fabs(v - n) < 1.0e-9 ? n : v;
  };
  // Slice on the first boundary line beyond the square (y = sy + 1 going down, y = sy going up):
  // every corner's segment crosses it.
  double d = dir > 0 ? 1.0 : 0.0;
  double lo = sx, hi = sx + 1.0;  // the square's own slice (c's band)
  for (std::int32_t r = cy;; r += dir) {
    double next_lo = px, next_hi = px;  // the apex, in w's band
    if (r != wy) {
      next_lo = 1.0e300;
      next_hi = -1.0e300;
      for (int k = 0; k < 4; ++k) {
        const double x = base[k] + d * slope[k];
        next_lo = std::min(next_lo, x);
        next_hi = std::max(next_hi, x);
      }
    }
    const double blo = snap(std::min(lo, next_lo)), bhi = snap(std::max(hi, next_hi));
    // Cells x with (x, x + 1) meeting (blo, bhi).
    const auto c0 = std::max(static_cast<std::int32_t>(std::floor(blo)), x0);
    const auto c1 = std::min(static_cast<std::int32_t>(std::ceil(bhi)) - 1, x1);
    if (blo < bhi && c0 <= c1) {
      const std::uint32_t blocked = kTransposed ? t.blocked_in(r, c0, r, c1) : t.blocked_in(c0, r, c1, r);
      if (blocked != 0) return false;
    }
    if (r == wy) return true;
    lo = next_lo;
    hi = next_hi;
    d += static_cast<double>(dir);
  }
}

}  // namespace

bool cell_sees_cell(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept {
  const std::int32_t x0 = std::min(from.x, to.x), x1 = std::max(from.x, to.x);
  const std::int32_t y0 = std::min(from.y, to.y), y1 = std::max(from.y, to.y);
  // The hull lies within the box spanned by the two cells: a clear box means a clear hull.
  if (table.blocked_in(x0, y0, x1, y1) == 0) return true;
  const std::int32_t adx = x1 - x0, ady = y1 - y0;
  if (adx == 0 || ady == 0) return false;  // the box was exactly the hull's cells
  if (std::min(adx, ady) + 1 > kMaxSightBands) return false;
  if (adx >= ady) return hull_bands_clear<false>(table, from.x, from.y, to.x, to.y);
  return hull_bands_clear<true>(table, from.y, from.x, to.y, to.x);
}

// ---- build -----------------------------------------------------------------------------------

void AnyAngleField::reserve(std::int32_t width, std::int32_t height) {
  if (width <= 0 || height <= 0) return;
  const std::size_t n = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  waypoints_.reserve(n);
  goals_.reserve(n);
}

std::uint64_t AnyAngleField::begin(const IntegrationField& integration, std::span<const CellCoord> goal_cells) {
  width_ = std::max(integration.width(), 0);
  height_ = std::max(integration.height(), 0);
  cells_ = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  waypoints_.resize(cells_);
  goals_.resize(cells_);
  const std::uint64_t units = linear_work_units(cells_);
  const bool usable = !integration.in_progress() && integration.values().size() == cells_ &&
                      width_ <= kMaxSide && height_ <= kMaxSide;
  if (!usable) {
    std::fill(waypoints_.begin(), waypoints_.end(), kNoWaypoint);
    std::fill(goals_.begin(), goals_.end(), std::uint16_t{0});
    next_cell_ = cells_;
    return units;
  }
  std::fill(waypoints_.begin(), waypoints_.end(), kUnset);
  std::fill(goals_.begin(), goals_.end(), std::uint16_t{0});
  for (std::size_t i = 0; i < goal_cells.size(); ++i) {
    const CellCoord g = goal_cells[i];
    if (!in_bounds(g.x, g.y) || integration.raw(g.x, g.y) != 0) continue;
    const std::size_t k = index(g.x, g.y);
    if (waypoints_[k] != kUnset) continue;  // same cell twice: the first index keeps it
    waypoints_[k] = pack(g.x, g.y);
    goals_[k] = static_cast<std::uint16_t>(std::min<std::size_t>(i, kGoalIndexMask) | kInSightBit);
  }
  next_cell_ = 0;
  return units;
}

/// Gives `start` (and every unfinished cell on its flow path) a waypoint; returns the cells done.
/// The path is followed forward until a finished cell, then finished backward, each cell from
/// its successor. No stack: a waiting cell's goal word holds the direction back to the cell it
/// was reached from (pointer reversal, as in the Deutsch-Schorr-Waite marking algorithm).
std::uint64_t AnyAngleField::resolve(std::uint32_t start, std::int32_t x, std::int32_t y, const std::uint8_t* dirs,
                                     const BlockedCountTable& table) {
  std::uint32_t* wp = waypoints_.data();
  std::uint16_t* gw = goals_.data();
  const auto w = static_cast<std::ptrdiff_t>(width_);
  const std::uint8_t first = dirs[start];
  if (first >= kNoneDir) {  // blocked or unreachable (goal cells were seeded by begin())
    wp[start] = kNoWaypoint;
    gw[start] = 0;
    return 1;
  }
  std::uint32_t cur = start;
  std::int32_t cx = x;
  std::int32_t cy = y;
  std::uint16_t link = kChainStart;  // back link of `cur`
  std::uint32_t s = 0;
  std::int32_t sx = 0, sy = 0;
  for (;;) {
    const std::uint8_t d = dirs[cur];
    const CellCoord o = kDirectionOffsets[d];
    sx = cx + o.x;
    sy = cy + o.y;
    s = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(cur) + o.y * w + o.x);
    if (wp[s] != kUnset) break;
    gw[cur] = static_cast<std::uint16_t>(kPendingBit | link);
    link = d;
    cur = s;
    cx = sx;
    cy = sy;
  }
  std::uint64_t done = 0;
  for (;;) {
    // Finish `cur` from its successor s (finished).
    const std::uint32_t ws = wp[s];
    const std::uint16_t gs = gw[s];
    const auto wx = static_cast<std::int32_t>(ws & 0xFFFFu), wy = static_cast<std::int32_t>(ws >> 16);
    const std::int32_t ex = wx - sx, ey = wy - sy;  // successor -> its waypoint
    const std::int32_t dx = sx - cx, dy = sy - cy;  // cur -> successor (one step)
    // A goal successor is its own waypoint (one legal step away: always in sight). A waypoint
    // straight ahead of an orthogonal step: the hull from this cell lies within this cell and
    // the successor's hull, which is clear.
    const bool straight_on = (dx == 0 || dy == 0) && dx * ey - dy * ex == 0 && dx * ex + dy * ey >= 0;
    if (straight_on || cell_sees_cell(table, {cx, cy}, {wx, wy})) {
      wp[cur] = ws;
      gw[cur] = gs;
    } else {
      wp[cur] = pack(sx, sy);
      gw[cur] = static_cast<std::uint16_t>(gs & ~kInSightBit);
    }
    ++done;
    if (link == kChainStart) break;
    // Step back to the cell `cur` was reached from; read its own link before it is overwritten.
    const CellCoord o = kDirectionOffsets[link];
    s = cur;
    sx = cx;
    sy = cy;
    cx -= o.x;
    cy -= o.y;
    cur = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(cur) - o.y * w - o.x);
    link = static_cast<std::uint16_t>(gw[cur] & 0xFu);
  }
  return done;
}

std::uint64_t AnyAngleField::advance(const FlowField& flow, const BlockedCountTable& table, std::uint64_t budget) {
  if (done() || budget == 0) return 0;
  if (flow.width() != width_ || flow.height() != height_ || table.width() != width_ || table.height() != height_) {
    // Inputs of another size: no waypoints (never read out of bounds).
    std::fill(waypoints_.begin() + static_cast<std::ptrdiff_t>(next_cell_), waypoints_.end(), kNoWaypoint);
    next_cell_ = cells_;
    return linear_work_units(cells_);
  }
  const std::uint8_t* dirs = flow.directions().data();
  std::uint64_t cells_done = 0;
  std::size_t scanned = 0;
  const auto uw = static_cast<std::size_t>(width_);
  auto x = static_cast<std::int32_t>(next_cell_ % uw);
  auto y = static_cast<std::int32_t>(next_cell_ / uw);
  // Work: one unit per cell given a waypoint, plus the scan at kLinearCellsPerWorkUnit per unit.
  while (next_cell_ < cells_ && cells_done + scanned / kLinearCellsPerWorkUnit < budget) {
    if (waypoints_[next_cell_] == kUnset) cells_done += resolve(static_cast<std::uint32_t>(next_cell_), x, y, dirs, table);
    ++next_cell_;
    ++scanned;
    if (++x == width_) {
      x = 0;
      ++y;
    }
  }
  return cells_done + linear_work_units(scanned);
}

// ---- sampling --------------------------------------------------------------------------------

NavSample sample_any_angle(const AnyAngleField& field, int size_class, float cell_size, std::span<const Vec2> goals,
                           Vec2 p) noexcept {
  NavSample out;
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || field.width() <= 0 || field.height() <= 0 ||
      !(cell_size > 0.0f)) {
    return out;
  }
  const int n = std::clamp(size_class, 1, kMaxSizeClass);
  // Lattice coordinates: lattice point b (block b's centre) sits at u = b.
  const float half = 0.5f * static_cast<float>(n);
  const float ux = p.x / cell_size - half;
  const float uy = p.y / cell_size - half;
  const float fx = std::floor(ux), fy = std::floor(uy);
  if (std::fabs(fx) > 1.0e8f || std::fabs(fy) > 1.0e8f) {
    out.status = NavStatus::kNoRoute;
    return out;
  }
  const auto x0 = static_cast<std::int32_t>(fx);
  const auto y0 = static_cast<std::int32_t>(fy);
  const float tx = ux - fx, ty = uy - fy;
  // The reference block (reference_block(), computed in double there); kept inside the 2x2.
  CellCoord own = reference_block(p, n, cell_size);
  if (own.x != x0 && own.x != x0 + 1) own.x = tx >= 0.5f ? x0 + 1 : x0;
  if (own.y != y0 && own.y != y0 + 1) own.y = ty >= 0.5f ? y0 + 1 : y0;

  struct Target {
    Vec2 at;
    std::int32_t goal = -1;
    bool sight = false;
  };
  const auto target_of = [&](std::int32_t x, std::int32_t y, Target& t) noexcept {
    if (!field.has_waypoint(x, y)) return false;
    const std::uint32_t w = field.packed(x, y);
    const std::uint16_t g = field.goal_words()[static_cast<std::size_t>(y) * static_cast<std::size_t>(field.width()) +
                                               static_cast<std::size_t>(x)];
    t.goal = static_cast<std::int32_t>(g & AnyAngleField::kGoalIndexMask);
    t.sight = (g & AnyAngleField::kInSightBit) != 0;
    if (t.sight && static_cast<std::size_t>(t.goal) < goals.size()) {
      t.at = goals[static_cast<std::size_t>(t.goal)];
    } else {
      t.at = block_center({static_cast<std::int32_t>(w & 0xFFFFu), static_cast<std::int32_t>(w >> 16)}, n, cell_size);
    }
    return true;
  };

  Target own_t;
  const bool own_valid = target_of(own.x, own.y, own_t);
  const float eps = 1.0e-4f * cell_size;
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1);
    const std::int32_t cy = y0 + (k >> 1);
    Target t;
    if (!target_of(cx, cy, t)) continue;
    // A sample diagonal to the reference block across a blocked corner belongs to the other
    // side of a wall: blending it in would pull the agent into the corner.
    if (own_valid && cx != own.x && cy != own.y && (!field.has_waypoint(cx, own.y) || !field.has_waypoint(own.x, cy)))
      continue;
    const Vec2 d = t.at - p;
    const float len = length(d);
    if (!(len > eps)) continue;  // standing on this sample's target: no pull from it
    const float wx = (k & 1) ? tx : 1.0f - tx;
    const float wy = (k >> 1) ? ty : 1.0f - ty;
    sum += d * (wx * wy / len);
  }
  constexpr float kMinBlend = 1.0e-3f;
  out.direction = normalized_or_zero(sum, kMinBlend);
  if (!own_valid) {
    out.status = NavStatus::kNoRoute;
    out.target = p;
    return out;
  }
  out.target = own_t.at;
  out.goal = own_t.goal;
  const Vec2 to_target = own_t.at - p;
  const float dist = length(to_target);
  if (own_t.sight) {
    if (dist <= kAtGoalCells * cell_size) {
      out.status = NavStatus::kAtGoal;
      out.direction = {};
      return out;
    }
    out.status = NavStatus::kGoalInSight;
  } else {
    out.status = NavStatus::kFollow;
  }
  if (out.direction.x == 0.0f && out.direction.y == 0.0f && dist > eps) out.direction = to_target * (1.0f / dist);
  return out;
}

}  // namespace swarmfield::sim
