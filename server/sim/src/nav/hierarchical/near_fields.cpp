// NearFields: per goal, NavigationFields over a window of the planning grid round the goal.
#include "swarmfield/sim/nav/hierarchical/near_fields.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

namespace {

/// Window side (cells) for `range` before clamping to the grid.
std::int64_t window_side(float range) noexcept {
  constexpr std::int64_t kHuge = std::int64_t{1} << 40;
  if (!(range >= 0.0f) || !std::isfinite(range)) return range >= 0.0f ? kHuge : 2 * NearFields::kWindowMarginCells + 1;
  const auto half = static_cast<std::int64_t>(std::ceil(static_cast<double>(range))) + NearFields::kWindowMarginCells;
  return 2 * half + NearFields::kSnapCells + 1;
}

/// Corner (one axis) of a window of `side` cells on an axis of `extent` cells round goal
/// coordinate `g`: g - half rounded down to the snap, clamped into the grid.
std::int32_t window_corner(std::int32_t g, std::int32_t side, std::int32_t extent, float range) noexcept {
  const std::int64_t half = (window_side(range) - NearFields::kSnapCells - 1) / 2;
  std::int64_t c = static_cast<std::int64_t>(g) - half;
  c = c >= 0 ? c / NearFields::kSnapCells * NearFields::kSnapCells
             : -((-c + NearFields::kSnapCells - 1) / NearFields::kSnapCells) * NearFields::kSnapCells;
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(c, 0, std::max<std::int64_t>(extent - side, 0)));
}

std::int32_t chebyshev(CellCoord a, CellCoord b) noexcept {
  return std::max(std::abs(a.x - b.x), std::abs(a.y - b.y));
}

}  // namespace

void NearFields::set_range(float range) {
  if (range == range_) return;
  range_ = range;
  for (Window& w : windows_) w.fields.set_any_angle_range(range);
  grid_w_ = -1;  // windows change size: re-place them all
}

void NearFields::invalidate() noexcept {
  for (Window& w : windows_) w.fields.invalidate();
  grid_w_ = -1;
}

std::uint64_t NearFields::build_count() const noexcept {
  std::uint64_t n = 0;
  for (const Window& w : windows_) n += w.fields.rebuild_count();
  return n;
}

std::size_t NearFields::memory_bytes() const noexcept {
  // Per window cell: the copy (1), two field pairs (search words 4, flow 1, waypoints 4, goal
  // words 2, region bit), the sight table (4).
  constexpr std::size_t kBytesPerCell = 1 + 2 * (4 + 1 + 4 + 2) + 4;
  std::size_t bytes = 0;
  for (const Window& w : windows_) bytes += w.map.cell_count() * kBytesPerCell;
  return bytes;
}

void NearFields::place(Window& w, const GridMap& grid, CellCoord origin) {
  const auto side = static_cast<std::int32_t>(std::min<std::int64_t>(window_side(range_), std::numeric_limits<std::int32_t>::max()));
  const std::int32_t sw = std::min(side, grid.width()), sh = std::min(side, grid.height());
  if (w.map.width() != sw || w.map.height() != sh || w.map.cell_size() != grid.cell_size()) {
    w.map = GridMap(sw, sh, kBlockedCost, grid.cell_size());
    w.map.set_change_log(false);  // refilled wholesale: its fields rebuild on the revision alone
    w.placements.clear();
  }
  for (std::int32_t y = 0; y < sh; ++y) {
    for (std::int32_t x = 0; x < sw; ++x) w.map.set_cost(x, y, grid.cost(origin.x + x, origin.y + y));
  }
  // A new revision for every placement, even when the copy's cells did not change (the same
  // cells at another origin): the front is found by its revision (resolve_front()).
  const std::uint8_t c = w.map.cost(0, 0);
  w.map.set_cost(0, 0, c == kDefaultCost ? kDefaultCost + 1 : kDefaultCost);
  w.map.set_cost(0, 0, c);
  w.placements.push_back({w.map.revision(), origin});
  w.origin = origin;
  ++placements_;
}

void NearFields::resolve_front(Window& w, const GridMap& grid, std::span<const CellCoord> goal_cells) {
  w.front_ready = false;
  const IntegrationField& field = w.fields.integration();
  if (field.width() != w.map.width() || field.height() != w.map.height() || field.width() == 0) return;
  const std::uint32_t rev = w.fields.front_map_revision();
  const auto it = std::find_if(w.placements.begin(), w.placements.end(), [rev](const Placement& p) { return p.revision == rev; });
  if (it == w.placements.end()) return;
  const CellCoord o = it->origin;
  w.placements.erase(w.placements.begin(), it);  // older placements can no longer be the front's
  w.front_origin = o;
  w.front_w = field.width();
  w.front_h = field.height();
  // Per side of the window not on the grid's edge, the least distance of a seed to the grid
  // cells beyond it (kFar for a side on the edge: no path leaves there).
  constexpr std::int32_t kFar = std::numeric_limits<std::int32_t>::max() / 4;
  const bool open[4] = {o.x > 0, o.y > 0, o.x + w.front_w < grid.width(), o.y + w.front_h < grid.height()};
  for (std::size_t k = 0; k < 4; ++k) w.exit_side[k] = kFar;
  bool seeded = false;
  const std::span<const CellCoord> seeds = w.fields.goals();
  for (const CellCoord s : seeds) {
    if (s.x < 0 || s.y < 0 || s.x >= w.front_w || s.y >= w.front_h) continue;
    seeded = true;
    const std::int32_t d[4] = {s.x + 1, s.y + 1, w.front_w - s.x, w.front_h - s.y};
    for (std::size_t k = 0; k < 4; ++k) {
      if (open[k]) w.exit_side[k] = std::min(w.exit_side[k], d[k]);
    }
  }
  if (!seeded) return;
  // Goals now on the grid that the front was not seeded with (outside its window then, or
  // new). A seeded goal that has moved since stays seeded: the front is out of date for it, as
  // any front is while its rebuild runs (NavigationFields), and is read as such.
  w.unseen.clear();
  for (std::size_t j = 0; j < goal_cells.size(); ++j) {
    const CellCoord g = goal_cells[j];
    if (!grid.in_bounds(g.x, g.y)) continue;
    const bool seeded_j = j < seeds.size() && seeds[j].x >= 0 && seeds[j].y >= 0 && seeds[j].x < w.front_w && seeds[j].y < w.front_h;
    if (!seeded_j) w.unseen.push_back(g);
  }
  w.front_ready = true;
}

std::uint64_t NearFields::update(const GridMap& grid, std::span<const CellCoord> goal_cells, std::uint64_t budget) {
  std::uint64_t spent = 0;
  const bool grid_changed = grid.width() != grid_w_ || grid.height() != grid_h_ || grid.revision() != grid_revision_;
  grid_w_ = grid.width();
  grid_h_ = grid.height();
  grid_revision_ = grid.revision();
  if (windows_.size() < goal_cells.size()) {
    const std::size_t before = windows_.size();
    windows_.resize(goal_cells.size());
    for (std::size_t i = before; i < windows_.size(); ++i) {
      windows_[i].fields.set_any_angle(true);
      windows_[i].fields.set_any_angle_range(range_);
    }
  }
  const auto side = static_cast<std::int32_t>(std::min<std::int64_t>(window_side(range_), std::numeric_limits<std::int32_t>::max()));
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    Window& w = windows_[i];
    w.active = i < goal_cells.size() && grid.in_bounds(goal_cells[i].x, goal_cells[i].y);
    if (!w.active) continue;
    const CellCoord g = goal_cells[i];
    const CellCoord origin{window_corner(g.x, side, grid.width(), range_), window_corner(g.y, side, grid.height(), range_)};
    if (grid_changed || origin != w.origin) {
      place(w, grid, origin);
      spent += linear_work_units(w.map.cell_count());
    }
    w.local_goals.resize(goal_cells.size());
    for (std::size_t j = 0; j < goal_cells.size(); ++j) {
      const CellCoord local{goal_cells[j].x - w.origin.x, goal_cells[j].y - w.origin.y};
      w.local_goals[j] = w.map.in_bounds(local.x, local.y) && grid.in_bounds(goal_cells[j].x, goal_cells[j].y)
                             ? local
                             : CellCoord{-1, -1};
    }
  }
  const std::size_t n = windows_.size();
  for (std::size_t k = 0; k < n; ++k) {
    Window& w = windows_[(first_ + k) % n];
    if (!w.active) {
      w.front_ready = false;
      continue;
    }
    const bool has_front = w.fields.integration().width() == w.map.width() && w.fields.integration().height() == w.map.height();
    if (budget > 0 && spent >= budget && has_front) {
      resolve_front(w, grid, goal_cells);  // no budget left: next time it is served first
      continue;
    }
    w.fields.set_rebuild_budget(budget == 0 ? 0 : static_cast<std::size_t>(std::max<std::uint64_t>(budget - std::min(spent, budget), 1)));
    w.fields.update(w.map, w.local_goals);
    spent += w.fields.last_update_work();
    resolve_front(w, grid, goal_cells);
  }
  if (n > 0) first_ = (first_ + 1) % n;
  return spent;
}

void NearFields::set_goal_positions(std::span<const Vec2> goals) {
  for (Window& w : windows_) {
    if (!w.front_ready) continue;
    const Vec2 shift{static_cast<float>(w.front_origin.x) * w.map.cell_size(), static_cast<float>(w.front_origin.y) * w.map.cell_size()};
    w.local_positions.resize(goals.size());
    for (std::size_t i = 0; i < goals.size(); ++i) w.local_positions[i] = goals[i] - shift;
  }
}

bool NearFields::trusts(const Window& w, CellCoord b, std::uint32_t& raw) const noexcept {
  const std::int32_t lx = b.x - w.front_origin.x, ly = b.y - w.front_origin.y;  // inside: see find()
  if (!w.fields.any_angle().has_waypoint(lx, ly)) return false;  // beyond the range (or unreached)
  // A path leaving the window across side k walks at least b's distance beyond it, then back
  // at least a seed's.
  const std::int64_t d[4] = {lx + 1, ly + 1, w.front_w - lx, w.front_h - ly};
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  for (std::size_t k = 0; k < 4; ++k) limit = std::min<std::int64_t>(limit, d[k] + w.exit_side[k]);
  for (const CellCoord u : w.unseen) limit = std::min<std::int64_t>(limit, chebyshev(b, u));
  const std::uint32_t v = w.fields.integration().raw(lx, ly);
  if (limit < static_cast<std::int64_t>(kTrustMarginCells)) return false;
  const std::uint64_t bound = static_cast<std::uint64_t>(limit - kTrustMarginCells) * kOrthogonalStep;
  if (static_cast<std::uint64_t>(v) > bound) return false;
  raw = v;
  return true;
}

std::int32_t NearFields::find(CellCoord b, std::uint32_t& raw) const noexcept {
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    // The front and its bounds here, trusts() only inside them: every agent asks, and on a big
    // map most are outside every window.
    const Window& w = windows_[i];
    if (!w.front_ready || static_cast<std::uint32_t>(b.x - w.front_origin.x) >= static_cast<std::uint32_t>(w.front_w) ||
        static_cast<std::uint32_t>(b.y - w.front_origin.y) >= static_cast<std::uint32_t>(w.front_h)) {
      continue;
    }
    if (trusts(w, b, raw)) return static_cast<std::int32_t>(i);
  }
  return -1;
}

NavSample NearFields::sample(int size_class, float cell_size, Vec2 p, CellCoord& block,
                             std::uint32_t& priority) const noexcept {
  std::uint32_t raw = 0;
  block = reference_block(p, size_class, cell_size);
  const std::int32_t i = find(block, raw);
  priority = i >= 0 ? raw : kFarPriority;
  if (i < 0) return {};
  const Window& w = windows_[static_cast<std::size_t>(i)];
  const Vec2 shift{static_cast<float>(w.front_origin.x) * cell_size, static_cast<float>(w.front_origin.y) * cell_size};
  NavSample s = sample_any_angle(w.fields.any_angle(), w.fields.flow(), size_class, cell_size, w.local_positions, p - shift);
  if (s.status != NavStatus::kFollow && s.status != NavStatus::kGoalInSight && s.status != NavStatus::kAtGoal) return {};
  s.target += shift;
  return s;
}

}  // namespace swarmfield::sim
