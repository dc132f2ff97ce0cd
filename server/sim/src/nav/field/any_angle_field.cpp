// AnyAngleField: Theta*-style waypoints over a finished flow field, and their sampling.
#include "swarmfield/sim/nav/field/any_angle_field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

namespace {

constexpr auto kNoneDir = static_cast<std::uint8_t>(FlowDirection::kNone);

/// Longest oblique segment checked band by band (rows of an x-major segment, columns of a
/// y-major one) when its bounding box holds a wall; longer ones are refused (conservative).
constexpr std::int32_t kMaxSightBands = 8;

constexpr std::uint32_t pack(std::int32_t x, std::int32_t y) noexcept {
  return static_cast<std::uint32_t>(x) | (static_cast<std::uint32_t>(y) << 16);
}

/// floor(n / d) for d > 0.
constexpr std::int32_t floor_div(std::int32_t n, std::int32_t d) noexcept {
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
/// 32-bit arithmetic suffices: at most kMaxSightBands bands, so the band-axis offsets are at
/// most 2 * kMaxSightBands + 1 (doubled) and the major ones at most 2 * kMaxSide + 1, which
/// keeps every product and numerator below 2^23.
template <bool kTransposed>
bool hull_bands_clear(const BlockedCountTable& t, std::int32_t cx, std::int32_t cy, std::int32_t wx,
                      std::int32_t wy) noexcept {
  static_assert(AnyAngleField::kMaxSide <= 65534 && kMaxSightBands <= 8, "32-bit bounds above");
  // In this function "x" is the major axis and "y" the band axis; cy != wy (else the box test
  // was exact).
  const std::int32_t x0 = std::min(cx, wx), x1 = std::max(cx, wx);
  const std::int32_t dir = wy > cy ? 1 : -1;
  const std::int32_t px = 2 * wx + 1, py = 2 * wy + 1;
  // Corner k = (cx + (k & 1), cy + (k >> 1)), doubled, relative to P: both odd, dy never 0.
  std::int32_t dx[4], dy[4];
  for (int k = 0; k < 4; ++k) {
    dx[k] = 2 * (cx + (k & 1)) - px;
    dy[k] = 2 * (cy + (k >> 1)) - py;
  }
  // On a line Y between the square and P, corner k's line is at x = px + (Y - py) dx/dy, with
  // (Y - py) / dy[k] > 0 for every k, so a's is left of b's iff sign(Y - py) (dx_a dy_b - dx_b dy_a) < 0.
  const std::int32_t side = dir > 0 ? -1 : 1;  // sign of Y - py on those lines
  const auto left_of = [&](int a, int b) noexcept { return side * (dx[a] * dy[b] - dx[b] * dy[a]) < 0; };
  int kl = 0, kr = 0;
  for (int k = 1; k < 4; ++k) {
    if (left_of(k, kl)) kl = k;
    if (left_of(kr, k)) kr = k;
  }
  // floor / ceiling of corner k's line's x (cells) on the line y = Y (cells): x = num / (2 dy).
  const auto line_x = [&](int k, std::int32_t y, bool ceiling) noexcept {
    std::int32_t num = px * dy[k] + (2 * y - py) * dx[k];
    std::int32_t den = 2 * dy[k];
    if (den < 0) {
      num = -num;
      den = -den;
    }
    return ceiling ? -floor_div(-num, den) : floor_div(num, den);
  };
  // The square's own slice (c's band): cells cx .. cx (floor cx, ceiling cx + 1).
  std::int32_t lo = cx, hi = cx + 1;
  for (std::int32_t r = cy;; r += dir) {
    std::int32_t next_lo = wx, next_hi = wx + 1;  // the apex, in w's band
    if (r != wy) {
      const std::int32_t line = dir > 0 ? r + 1 : r;  // the boundary line toward w
      next_lo = line_x(kl, line, false);
      next_hi = line_x(kr, line, true);
    }
    // Cells x with (x, x + 1) meeting the open range: floor(min) .. ceiling(max) - 1.
    const std::int32_t c0 = std::max(std::min(lo, next_lo), x0);
    const std::int32_t c1 = std::min(std::max(hi, next_hi) - 1, x1);
    if (c0 <= c1) {
      // One row (column) of at most kMaxSide cells: the table's small-rectangle count.
      const std::uint32_t blocked = kTransposed ? t.blocked_in_small(r, c0, r, c1) : t.blocked_in_small(c0, r, c1, r);
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

// ---- sampling --------------------------------------------------------------------------------

namespace {

/// Both sample_any_angle() overloads; `flow` null = no fallback beyond the range.
NavSample sample_navigation(const AnyAngleField& field, const FlowField* flow, int size_class, float cell_size,
                            std::span<const Vec2> goals, Vec2 p) noexcept {
  NavSample out;
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || field.width() <= 0 || field.height() <= 0 ||
      !(cell_size > 0.0f)) {
    return out;
  }
  if (flow != nullptr && (flow->width() != field.width() || flow->height() != field.height())) flow = nullptr;
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

  // What a lattice point contributes: a target point (any-angle region) or a flow direction.
  enum class Kind : std::uint8_t { kNone, kTarget, kFlow };
  struct Sample {
    Kind kind = Kind::kNone;
    Vec2 at;                  // kTarget: the point it heads for
    FlowDirection dir = FlowDirection::kNone;  // kFlow
    std::int32_t goal = -1;
    bool sight = false;
  };
  const auto sample_of = [&](std::int32_t x, std::int32_t y) noexcept {
    Sample t;
    if (field.has_waypoint(x, y)) {
      const std::uint32_t w = field.packed(x, y);
      const std::uint16_t g = field.goal_words()[static_cast<std::size_t>(y) * static_cast<std::size_t>(field.width()) +
                                                 static_cast<std::size_t>(x)];
      t.kind = Kind::kTarget;
      t.goal = static_cast<std::int32_t>(g & AnyAngleField::kGoalIndexMask);
      t.sight = (g & AnyAngleField::kInSightBit) != 0;
      if (t.sight && static_cast<std::size_t>(t.goal) < goals.size()) {
        t.at = goals[static_cast<std::size_t>(t.goal)];
      } else {
        t.at = block_center({static_cast<std::int32_t>(w & 0xFFFFu), static_cast<std::int32_t>(w >> 16)}, n, cell_size);
      }
    } else if (flow != nullptr) {
      t.dir = flow->at(x, y);
      if (t.dir != FlowDirection::kNone) t.kind = Kind::kFlow;
    }
    return t;
  };

  const auto usable = [&](std::int32_t x, std::int32_t y) noexcept {
    return field.has_waypoint(x, y) || (flow != nullptr && flow->at(x, y) != FlowDirection::kNone);
  };

  const Sample own_t = sample_of(own.x, own.y);
  const bool own_valid = own_t.kind != Kind::kNone;
  const float eps = 1.0e-4f * cell_size;
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1);
    const std::int32_t cy = y0 + (k >> 1);
    const Sample t = sample_of(cx, cy);
    if (t.kind == Kind::kNone) continue;
    // A sample diagonal to the reference block across a blocked corner belongs to the other
    // side of a wall: blending it in would pull the agent into the corner.
    if (own_valid && cx != own.x && cy != own.y &&
        (!usable(cx, own.y) || !usable(own.x, cy)))
      continue;
    const float wx = (k & 1) ? tx : 1.0f - tx;
    const float wy = (k >> 1) ? ty : 1.0f - ty;
    if (t.kind == Kind::kFlow) {
      sum += direction_vector(t.dir) * (wx * wy);  // a unit vector, like the targets' below
      continue;
    }
    const Vec2 d = t.at - p;
    const float len = length(d);
    if (!(len > eps)) continue;  // standing on this sample's target: no pull from it
    sum += d * (wx * wy / len);
  }
  constexpr float kMinBlend = 1.0e-3f;
  out.direction = normalized_or_zero(sum, kMinBlend);
  if (!own_valid) {
    out.status = NavStatus::kNoRoute;
    out.target = p;
    return out;
  }
  if (own_t.kind == Kind::kFlow) {
    const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(own_t.dir)];
    out.status = NavStatus::kFollowFlow;
    out.target = block_center({own.x + o.x, own.y + o.y}, n, cell_size);
    if (out.direction.x == 0.0f && out.direction.y == 0.0f) out.direction = direction_vector(own_t.dir);
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

}  // namespace

NavSample sample_any_angle(const AnyAngleField& field, const FlowField& flow, int size_class, float cell_size,
                           std::span<const Vec2> goals, Vec2 p) noexcept {
  return sample_navigation(field, &flow, size_class, cell_size, goals, p);
}

NavSample sample_any_angle(const AnyAngleField& field, int size_class, float cell_size, std::span<const Vec2> goals,
                           Vec2 p) noexcept {
  return sample_navigation(field, nullptr, size_class, cell_size, goals, p);
}

}  // namespace swarmfield::sim
