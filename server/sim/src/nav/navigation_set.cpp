// NavigationSet: clearance, class planning grids and one field set per size class present.
#include "swarmfield/sim/nav/navigation_set.hpp"

#include <algorithm>

namespace swarmfield::sim {

NavigationSet::NavigationSet() {
  for (ClassSlot& s : slots_) s.fields.set_any_angle(true);
  hier_.fields().set_keep_values(false);  // steering reads directions only
}

void NavigationSet::set_rebuild_budget(std::size_t work_units_per_update) noexcept {
  for (ClassSlot& s : slots_) s.fields.set_rebuild_budget(work_units_per_update);
  hier_.set_budget(work_units_per_update);
}

void NavigationSet::note_agents(const GridMap& map, std::span<const float> xs, std::span<const float> ys) {
  if (resolve_field_mode(mode_, map.width(), map.height()) != FieldMode::kHierarchical) return;
  hier_.begin_tick();
  const std::size_t n = std::min(xs.size(), ys.size());
  for (std::size_t i = 0; i < n; ++i) hier_.note_agent(map.world_to_cell({xs[i], ys[i]}));
}

void NavigationSet::set_any_angle_range(float range) noexcept {
  for (ClassSlot& s : slots_) s.fields.set_any_angle_range(range);
}

void NavigationSet::set_worker_pool(WorkerPool* pool) noexcept {
  for (ClassSlot& s : slots_) s.fields.set_worker_pool(pool);
}

void NavigationSet::invalidate() noexcept {
  clearance_valid_ = false;
  for (ClassSlot& s : slots_) {
    s.fields.invalidate();
    s.grid_current = false;
  }
  hier_.invalidate();
}

std::uint64_t NavigationSet::rebuild_count() const noexcept {
  std::uint64_t n = 0;
  for (const ClassSlot& s : slots_) n += s.fields.rebuild_count();
  return n + hier_.route_builds();
}

bool NavigationSet::update(const GridMap& map, std::span<const Vec2> goals, SizeClassMask classes) {
  last_work_ = 0;
  cell_size_ = map.cell_size();
  const std::uint64_t map_pass = linear_work_units(map.cell_count());
  const bool hier = resolve_field_mode(mode_, map.width(), map.height()) == FieldMode::kHierarchical;
  // The clearance map serves classes >= 2 (and class 1's goal blocks when it is whole-map).
  const bool need_clearance = !hier || (classes & ~size_class_bit(1)) != 0;
  if (need_clearance && (!clearance_valid_ || !clearance_.matches(map))) {
    clearance_.build(map);
    clearance_valid_ = true;
    last_work_ += map_pass;
    for (ClassSlot& s : slots_) s.grid_current = false;
  }
  bool changed = false;
  map_ = &map;
  hierarchical_ = hier;
  for (int n = 1; n <= kMaxSizeClass; ++n) {
    ClassSlot& s = slots_[slot(n)];
    if ((classes & size_class_bit(n)) == 0) {
      s.present = false;
      continue;
    }
    if (n == 1 && hierarchical_) {
      // Class 1 plans on the map itself: goal cells are the goals' cells (off-map: {-1, -1},
      // which the routes ignore, keeping goal indices aligned).
      s.goal_cells.clear();
      for (const Vec2 g : goals) {
        const CellCoord c = map.world_to_cell(g);
        s.goal_cells.push_back(map.walkable(c) ? c : CellCoord{-1, -1});
      }
      const std::uint64_t routes_before = hier_.route_builds();
      last_work_ += hier_.update(map, s.goal_cells);
      changed |= hier_.route_builds() != routes_before;
      const std::span<const CellCoord> front = hier_.goals();
      s.sample_goals.resize(front.size());
      for (std::size_t i = 0; i < front.size(); ++i) {
        const bool fresh = i < goals.size() && s.goal_cells[i] == front[i];
        s.sample_goals[i] = fresh ? goals[i] : map.cell_center(front[i]);
      }
      s.present = true;
      continue;
    }
    // Back after an absence: its front is for old goals, so rebuild it at once.
    if (!s.present) s.fields.invalidate();
    if (n > 1 && !s.grid_current) {
      update_class_map(map, clearance_, n, s.grid);
      s.grid_current = true;
      last_work_ += map_pass * static_cast<std::uint64_t>(n);
    }
    const GridMap& grid = n == 1 ? map : s.grid;
    s.goal_cells.clear();
    for (const Vec2 g : goals) {
      CellCoord b{};
      // Off the map: NavigationFields ignores such goals, and the index stays aligned.
      if (!class_goal_block(clearance_, g, n, cell_size_, kGoalReachCells, b)) b = {-1, -1};
      s.goal_cells.push_back(b);
    }
    changed |= s.fields.update(grid, s.goal_cells);
    last_work_ += s.fields.last_update_work();
    const std::span<const CellCoord> front = s.fields.goals();
    s.sample_goals.resize(front.size());
    for (std::size_t i = 0; i < front.size(); ++i) {
      const bool fresh = i < goals.size() && s.goal_cells[i] == front[i];
      s.sample_goals[i] = fresh ? goals[i] : block_center(front[i], n, cell_size_);
    }
    s.present = true;
  }
  return changed;
}

NavSample NavigationSet::sample(int size_class, Vec2 p) const noexcept {
  if (!has_class(size_class)) return {};
  const ClassSlot& s = slots_[slot(size_class)];
  if (size_class == 1 && hierarchical_ && map_ != nullptr) return hier_.fields().sample(*map_, s.sample_goals, p);
  return sample_any_angle(s.fields.any_angle(), s.fields.flow(), size_class, cell_size_, s.sample_goals, p);
}

}  // namespace swarmfield::sim
