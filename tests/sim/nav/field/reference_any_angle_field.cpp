// Frozen copy of server/sim/src/nav/field/any_angle_field.cpp (build part) as of main ac6ba2d.
#include "reference_any_angle_field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim::reference {
namespace {

constexpr auto kNoneDir = static_cast<std::uint8_t>(FlowDirection::kNone);

/// Longest oblique segment checked band by band (rows of an x-major segment, columns of a
/// y-major one) when its bounding box holds a wall; longer ones are refused (conservative).
constexpr std::int32_t kMaxSightBands = 8;

constexpr std::uint32_t pack(std::int32_t x, std::int32_t y) noexcept {
  return static_cast<std::uint32_t>(x) | (static_cast<std::uint32_t>(y) << 16);
}

/// floor(n / d) for d > 0.
constexpr std::int64_t floor_div(std::int64_t n, std::int64_t d) noexcept {
  return n >= 0 ? n / d : -((-n + d - 1) / d);
}

/// Band-by-band test of the convex hull of cell c's square and the centre P of cell w (rows of
/// an x-major pair, columns of a y-major one), walking from c's band toward w's. The hull is
/// convex and its vertices are the square's corners and P, so its x-range within a band is that
/// of its slices on the band's two boundary lines (the square's own x-range in c's band, the
/// apex P in w's band); a slice on a line between the square and P runs between the lines from
/// P through two of the corners, the same two on every such line (lines through a common point
/// keep their order on one side of it). The cells whose interiors meet the open range must be
/// walkable. Exact integer arithmetic in doubled coordinates (corners even, P odd): per line,
/// one floor and one ceiling of a rational. `kTransposed` swaps the axes (table queries only).
template <bool kTransposed>
bool hull_bands_clear(const BlockedCountTable& t, std::int32_t cx, std::int32_t cy, std::int32_t wx,
                      std::int32_t wy) noexcept {
  // In this function "x" is the major axis and "y" the band axis; cy != wy (else the box test
  // was exact).
  const std::int32_t x0 = std::min(cx, wx), x1 = std::max(cx, wx);
  const std::int32_t dir = wy > cy ? 1 : -1;
  const std::int64_t px = 2 * static_cast<std::int64_t>(wx) + 1, py = 2 * static_cast<std::int64_t>(wy) + 1;
  // Corner k = (cx + (k & 1), cy + (k >> 1)), doubled, relative to P: both odd, dy never 0.
  std::int64_t dx[4], dy[4];
  for (int k = 0; k < 4; ++k) {
    dx[k] = 2 * (static_cast<std::int64_t>(cx) + (k & 1)) - px;
    dy[k] = 2 * (static_cast<std::int64_t>(cy) + (k >> 1)) - py;
  }
  // On a line Y between the square and P, corner k's line is at x = px + (Y - py) dx/dy, with
  // (Y - py) / dy[k] > 0 for every k, so a's is left of b's iff sign(Y - py) (dx_a dy_b - dx_b dy_a) < 0.
  const std::int64_t side = dir > 0 ? -1 : 1;  // sign of Y - py on those lines
  const auto left_of = [&](int a, int b) noexcept { return side * (dx[a] * dy[b] - dx[b] * dy[a]) < 0; };
  int kl = 0, kr = 0;
  for (int k = 1; k < 4; ++k) {
    if (left_of(k, kl)) kl = k;
    if (left_of(kr, k)) kr = k;
  }
  // floor / ceiling of corner k's line's x (cells) on the line y = Y (cells): x = num / (2 dy).
  const auto line_x = [&](int k, std::int32_t y, bool ceiling) noexcept {
    std::int64_t num = px * dy[k] + (2 * static_cast<std::int64_t>(y) - py) * dx[k];
    std::int64_t den = 2 * dy[k];
    if (den < 0) {
      num = -num;
      den = -den;
    }
    return ceiling ? -floor_div(-num, den) : floor_div(num, den);
  };
  // The square's own slice (c's band): cells cx .. cx (floor cx, ceiling cx + 1).
  std::int64_t lo = cx, hi = static_cast<std::int64_t>(cx) + 1;
  for (std::int32_t r = cy;; r += dir) {
    std::int64_t next_lo = wx, next_hi = static_cast<std::int64_t>(wx) + 1;  // the apex, in w's band
    if (r != wy) {
      const std::int32_t line = dir > 0 ? r + 1 : r;  // the boundary line toward w
      next_lo = line_x(kl, line, false);
      next_hi = line_x(kr, line, true);
    }
    // Cells x with (x, x + 1) meeting the open range: floor(min) .. ceiling(max) - 1.
    const auto c0 = static_cast<std::int32_t>(std::max<std::int64_t>(std::min(lo, next_lo), x0));
    const auto c1 = static_cast<std::int32_t>(std::min<std::int64_t>(std::max(hi, next_hi) - 1, x1));
    if (c0 <= c1) {
      const std::uint32_t blocked = kTransposed ? t.blocked_in(r, c0, r, c1) : t.blocked_in(c0, r, c1, r);
      if (blocked != 0) return false;
    }
    if (r == wy) return true;
    lo = next_lo;
    hi = next_hi;
  }
}

/// cell_sees_cell() past its clear-box test (kept out of line: ~87% of the pass's tests end at
/// the box, and they then skip this function's prologue).
[[gnu::noinline]] bool sees_past_box(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept {
  const std::int32_t adx = std::abs(to.x - from.x), ady = std::abs(to.y - from.y);
  if (adx == 0 || ady == 0) return false;  // the box was exactly the hull's cells
  if (std::min(adx, ady) + 1 > kMaxSightBands) return false;
  if (adx >= ady) return hull_bands_clear<false>(table, from.x, from.y, to.x, to.y);
  return hull_bands_clear<true>(table, from.y, from.x, to.y, to.x);
}

/// The clear-box test of cell_sees_cell(), inlined into the pass.
inline bool sees(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept {
  const std::int32_t x0 = std::min(from.x, to.x), x1 = std::max(from.x, to.x);
  const std::int32_t y0 = std::min(from.y, to.y), y1 = std::max(from.y, to.y);
  // The hull lies within the box spanned by the two cells: a clear box means a clear hull.
  return table.blocked_in(x0, y0, x1, y1) == 0 || sees_past_box(table, from, to);
}

}  // namespace

bool cell_sees_cell(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept {
  return sees(table, from, to);
}

// ---- build -----------------------------------------------------------------------------------

std::uint32_t AnyAngleField::raw_limit(float range) noexcept {
  // Region: values <= limit (raw units); NaN or negative: none but the goals.
  const double raw_range = static_cast<double>(range) * static_cast<double>(kOrthogonalStep);
  if (!(raw_range >= 0.0)) return 0;
  if (raw_range >= static_cast<double>(kUnreachable - 1)) return kUnreachable - 1;
  return static_cast<std::uint32_t>(raw_range);
}

std::int32_t AnyAngleField::box_half(std::int32_t width, std::int32_t height, std::uint32_t limit) noexcept {
  // A value v (raw) is at least kOrthogonalStep per Chebyshev step from the goal (every step
  // costs >= 1), so a region cell lies within floor(limit / kOrthogonalStep) of one.
  return static_cast<std::int32_t>(
      std::min<std::uint64_t>(limit / kOrthogonalStep, static_cast<std::uint64_t>(std::max({width, height, 0}))));
}

std::size_t AnyAngleField::pending_bound(std::int32_t width, std::int32_t height, std::size_t goal_count,
                                         std::uint32_t limit) noexcept {
  if (width <= 0 || height <= 0) return 0;
  const std::uint64_t cells = static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height);
  const std::uint64_t side = 2 * static_cast<std::uint64_t>(box_half(width, height, limit)) + 1;
  const std::uint64_t per_goal = std::min(side * side, cells);
  return static_cast<std::size_t>(std::min(per_goal * goal_count, cells));
}

void AnyAngleField::reserve(std::int32_t width, std::int32_t height, std::size_t goal_count, float range) {
  boxes_.reserve(goal_count);
  if (width <= 0 || height <= 0) return;
  const std::size_t n = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  waypoints_.reserve(n);
  goals_.reserve(n);
  region_.reserve((n + 63) / 64);
  const std::size_t bound = pending_bound(width, height, goal_count, raw_limit(range));
  if (pending_.size() < bound) pending_.resize(bound);
}

template <typename Fn>
void AnyAngleField::for_each_run(std::int32_t y, Fn&& fn) const {
  // Boxes are sorted by x0: runs merge as they come.
  std::int32_t run0 = 0, run1 = -2;
  for (const Box& b : boxes_) {
    if (y < b.y0 || y > b.y1) continue;
    if (b.x0 > run1 + 1) {
      if (run1 >= run0) fn(run0, run1);
      run0 = b.x0;
      run1 = b.x1;
    } else {
      run1 = std::max(run1, b.x1);
    }
  }
  if (run1 >= run0) fn(run0, run1);
}

std::uint64_t AnyAngleField::begin(const IntegrationField& integration, std::span<const CellCoord> goal_cells,
                                   float range) {
  width_ = std::max(integration.width(), 0);
  height_ = std::max(integration.height(), 0);
  cells_ = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  waypoints_.resize(cells_);
  goals_.resize(cells_);
  region_.assign((cells_ + 63) / 64, 0);
  range_ = range;
  boxes_.clear();
  pending_count_ = 0;
  next_pending_ = 0;
  resolved_ = 0;
  region_cells_ = 0;
  std::uint64_t units = linear_work_units(cells_ / 8);  // the region bits
  const std::size_t padded = (static_cast<std::size_t>(width_) + 2) * (static_cast<std::size_t>(height_) + 2);
  const bool usable = !integration.in_progress() && cells_ != 0 && integration.search_words().size() == padded &&
                      width_ <= kMaxSide && height_ <= kMaxSide;
  if (!usable) return units;  // done(), region_cells_ 0
  const std::uint32_t limit = raw_limit(range);
  const std::int32_t half = box_half(width_, height_, limit);
  for (std::size_t i = 0; i < goal_cells.size(); ++i) {
    const CellCoord g = goal_cells[i];
    if (!in_bounds(g.x, g.y) || integration.raw(g.x, g.y) != 0) continue;
    const std::size_t k = index(g.x, g.y);
    if (in_region(k)) continue;  // same cell twice: the first index keeps it
    set_region(k);
    ++resolved_;
    waypoints_[k] = pack(g.x, g.y);
    goals_[k] = static_cast<std::uint16_t>(std::min<std::size_t>(i, kGoalIndexMask) | kInSightBit);
    boxes_.push_back({std::max(g.x - half, 0), std::max(g.y - half, 0), std::min(g.x + half, width_ - 1),
                      std::min(g.y + half, height_ - 1)});
  }
  region_cells_ = resolved_;
  if (boxes_.empty()) return units;
  // The list only grows (allocating only when the bound does), so a build never clears it.
  const std::size_t bound = pending_bound(width_, height_, goal_cells.size(), limit);
  if (pending_.size() < bound) pending_.resize(bound);
  std::uint32_t* list = pending_.data();
  std::size_t count = 0;
  std::sort(boxes_.begin(), boxes_.end(), [](const Box& l, const Box& r) {
    if (l.x0 != r.x0) return l.x0 < r.x0;
    if (l.y0 != r.y0) return l.y0 < r.y0;
    if (l.x1 != r.x1) return l.x1 < r.x1;
    return l.y1 < r.y1;
  });
  std::int32_t y_lo = height_, y_hi = -1;
  for (const Box& b : boxes_) {
    y_lo = std::min(y_lo, b.y0);
    y_hi = std::max(y_hi, b.y1);
  }
  // The region's cells other than the goals: 1 <= value <= limit, row-major over the boxes.
  // Search words: value + 1 (0 blocked, all ones unreached), padded by one cell.
  const std::uint32_t* words = integration.search_words().data();
  const auto stride = static_cast<std::size_t>(width_) + 2;
  std::uint64_t scanned = 0;
  for (std::int32_t y = y_lo; y <= y_hi; ++y) {
    for_each_run(y, [&](std::int32_t x0, std::int32_t x1) {
      const std::uint32_t* row = words + (static_cast<std::size_t>(y) + 1) * stride + 1;
      for (std::int32_t x = x0; x <= x1; ++x) {
        // Kept when 1 <= value <= limit (branch-free; blocked words wrap to kUnreachable).
        const std::uint32_t value = row[x] == IntegrationField::kSearchUnreached ? kUnreachable : row[x] - 1u;
        list[count] = pack(x, y);
        count += value - 1u < limit ? 1 : 0;
      }
      scanned += static_cast<std::uint64_t>(x1 - x0 + 1);
    });
  }
  pending_count_ = count;
  return units + linear_work_units(scanned);
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
  std::uint32_t cur = start;
  std::int32_t cx = x;
  std::int32_t cy = y;
  std::uint16_t link = kChainStart;  // back link of `cur`
  std::uint32_t s = 0;
  std::int32_t sx = 0, sy = 0;
  std::uint64_t done = 0;
  // Forward along the flow to the first finished cell (every successor of a region cell is a
  // region cell: its value is lower).
  for (;;) {
    const std::uint8_t d = dirs[cur];
    if (d >= kNoneDir) {
      // A non-goal cell without flow cannot occur when `flow` is the field of the integration
      // begin() saw; if it does, it becomes its own waypoint (memory-safe, deterministic): it
      // is finished below from itself (s = cur: a zero step, "straight on").
      wp[cur] = pack(cx, cy);
      gw[cur] = 0;
      s = cur;
      sx = cx;
      sy = cy;
      break;
    }
    const CellCoord o = kDirectionOffsets[d];
    sx = cx + o.x;
    sy = cy + o.y;
    s = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(cur) + o.y * w + o.x);
    if (in_region(s)) break;
    gw[cur] = static_cast<std::uint16_t>(kPendingBit | link);
    link = d;
    cur = s;
    cx = sx;
    cy = sy;
  }
  for (;;) {
    // Finish `cur` from its successor s (finished, or cur itself at a dead end).
    const std::uint32_t ws = wp[s];
    const std::uint16_t gs = gw[s];
    const auto wx = static_cast<std::int32_t>(ws & 0xFFFFu), wy = static_cast<std::int32_t>(ws >> 16);
    const std::int32_t ex = wx - sx, ey = wy - sy;  // successor -> its waypoint
    const std::int32_t dx = sx - cx, dy = sy - cy;  // cur -> successor (one step)
    // A goal successor is its own waypoint (one legal step away: always in sight). A waypoint
    // straight ahead of an orthogonal step: the hull from this cell lies within this cell and
    // the successor's hull, which is clear.
    const bool straight_on = (dx == 0 || dy == 0) && dx * ey - dy * ex == 0 && dx * ex + dy * ey >= 0;
    if (straight_on || sees(table, {cx, cy}, {wx, wy})) {
      wp[cur] = ws;
      gw[cur] = gs;
    } else {
      wp[cur] = pack(sx, sy);
      gw[cur] = static_cast<std::uint16_t>(gs & ~kInSightBit);
    }
    set_region(cur);
    ++resolved_;
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
    // Inputs of another size: no waypoints beyond the goals (never read out of bounds).
    next_pending_ = pending_count_;
    region_cells_ = resolved_;
    return 0;
  }
  const std::uint8_t* dirs = flow.directions().data();
  std::uint64_t cells_done = 0;
  std::uint64_t scanned = 0;
  // Work: one unit per cell given a waypoint, plus the list at kLinearCellsPerWorkUnit per unit.
  while (next_pending_ < pending_count_ && cells_done + scanned / kLinearCellsPerWorkUnit < budget) {
    const std::uint32_t c = pending_[next_pending_++];
    ++scanned;
    const auto x = static_cast<std::int32_t>(c & 0xFFFFu), y = static_cast<std::int32_t>(c >> 16);
    const std::size_t i = index(x, y);
    if (!in_region(i)) cells_done += resolve(static_cast<std::uint32_t>(i), x, y, dirs, table);
  }
  if (done()) region_cells_ = resolved_;
  return cells_done + linear_work_units(scanned);
}

}  // namespace swarmfield::sim::reference
