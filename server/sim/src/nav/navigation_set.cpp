// NavigationSet: clearance, class planning grids and one field set per size class present.
#include "swarmfield/sim/nav/navigation_set.hpp"

#include <algorithm>

#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

NavigationSet::NavigationSet() {
  for (ClassSlot& s : slots_) s.fields.set_any_angle(true);
  for (HierarchicalFields& h : hier_) h.fields().set_keep_values(false);  // steering reads directions only
}

void NavigationSet::set_rebuild_budget(std::size_t work_units_per_update) noexcept {
  for (ClassSlot& s : slots_) s.fields.set_rebuild_budget(work_units_per_update);
  for (HierarchicalFields& h : hier_) h.set_budget(work_units_per_update);
}

void NavigationSet::note_agents(const GridMap& map, std::span<const float> xs, std::span<const float> ys,
                                std::span<const std::uint8_t> classes) {
  if (resolve_field_mode(mode_, map.width(), map.height()) != FieldMode::kHierarchical) return;
  for (HierarchicalFields& h : hier_) h.begin_tick();
  const std::size_t n = std::min(xs.size(), ys.size());
  const float cs = map.cell_size();
  for (std::size_t i = 0; i < n; ++i) {
    const int c = classes.empty() ? 1 : (i < classes.size() ? classes[i] : 0);
    if (c < 1 || c > kMaxSizeClass) continue;
    const Vec2 p{xs[i], ys[i]};
    // Unit cells: truncation is world_to_cell()'s floor for 0 <= v < 2^24, without its call.
    const bool unit = cs == 1.0f && p.x >= 0.0f && p.y >= 0.0f && p.x < 16777216.0f && p.y < 16777216.0f;
    CellCoord cell{};
    if (c != 1) {
      cell = reference_block(p, c, cs);
    } else if (unit) {
      cell = {static_cast<std::int32_t>(p.x), static_cast<std::int32_t>(p.y)};
    } else {
      cell = map.world_to_cell(p);
    }
    hier_[slot(c)].note_agent(cell);
  }
}

void NavigationSet::set_any_angle_range(float range) noexcept {
  for (ClassSlot& s : slots_) s.fields.set_any_angle_range(range);
  for (HierarchicalFields& h : hier_) h.near().set_range(range);
}

void NavigationSet::set_near_fields(bool on) noexcept {
  for (HierarchicalFields& h : hier_) h.set_near_fields(on);
}

void NavigationSet::set_worker_pool(WorkerPool* pool) noexcept {
  pool_ = pool;
  for (ClassSlot& s : slots_) s.fields.set_worker_pool(pool);
}

void NavigationSet::invalidate() noexcept {
  clearance_valid_ = false;
  for (ClassSlot& s : slots_) {
    s.fields.invalidate();
    s.grid_current = false;
  }
  for (HierarchicalFields& h : hier_) h.invalidate();
}

std::uint64_t NavigationSet::rebuild_count() const noexcept {
  std::uint64_t n = 0;
  for (const ClassSlot& s : slots_) n += s.fields.rebuild_count();
  for (const HierarchicalFields& h : hier_) n += h.route_builds();
  return n;
}

std::uint64_t NavigationSet::follow_map(const GridMap& map) {
  if (clearance_valid_ && clearance_.matches(map) && clearance_source_ == map.costs().data()) return 0;
  // A copy of the map (another object, same revision and change log) is followed like the map.
  clearance_source_ = map.costs().data();
  std::span<const CellCoord> changed;
  std::vector<CellCoord> bulk;  // a bulk change's cells (changed blocks), past the change log
  if (clearance_valid_ && map.cells_changed_since(clearance_.revision(), bulk, changed) &&
      clearance_.update(map, changed)) {
    // Local: the clearance and the current class grids follow the changed cells (their own
    // change logs then tell the class's sector graph which blocks changed).
    for (int n = 2; n <= kMaxSizeClass; ++n) {
      ClassSlot& s = slots_[slot(n)];
      if (s.grid_current && !update_class_map_cells(map, clearance_, n, changed, s.grid)) s.grid_current = false;
    }
    return linear_work_units(changed.size() * 2 * kMaxSizeClass * kMaxSizeClass);
  }
  clearance_.build(map);
  clearance_valid_ = true;
  for (ClassSlot& s : slots_) s.grid_current = false;
  return linear_work_units(map.cell_count());
}

void NavigationSet::prepare(const GridMap& map, SizeClassMask classes) {
  if (resolve_field_mode(mode_, map.width(), map.height()) != FieldMode::kHierarchical) return;
  follow_map(map);
  for (int n = 1; n <= kMaxSizeClass; ++n) {
    if ((classes & size_class_bit(n)) == 0) continue;
    ClassSlot& s = slots_[slot(n)];
    if (n > 1 && !s.grid_current) {
      update_class_map(map, clearance_, n, s.grid);
      s.grid_current = true;
    }
    hier_[slot(n)].prepare(n == 1 ? map : s.grid);
  }
}

bool NavigationSet::update(const GridMap& map, std::span<const Vec2> goals, SizeClassMask classes) {
  last_work_ = 0;
  cell_size_ = map.cell_size();
  const std::uint64_t map_pass = linear_work_units(map.cell_count());
  const bool hier = resolve_field_mode(mode_, map.width(), map.height()) == FieldMode::kHierarchical;
  last_work_ += follow_map(map);
  bool changed = false;
  map_ = &map;
  hierarchical_ = hier;
  // Per class present: its planning grid and goal blocks (serial: the grids share the clearance).
  std::array<int, kMaxSizeClass> present{};
  std::size_t present_count = 0;
  for (int n = 1; n <= kMaxSizeClass; ++n) {
    ClassSlot& s = slots_[slot(n)];
    if ((classes & size_class_bit(n)) == 0) {
      s.present = false;
      continue;
    }
    // Back after an absence: its front is for old goals, so rebuild it at once.
    if (!s.present && !hierarchical_) s.fields.invalidate();
    if (n > 1 && !s.grid_current) {
      update_class_map(map, clearance_, n, s.grid);
      s.grid_current = true;
      last_work_ += map_pass * static_cast<std::uint64_t>(n);
    }
    s.goal_cells.clear();
    for (const Vec2 g : goals) {
      CellCoord b{};
      // Off the map: NavigationFields ignores such goals, and the index stays aligned.
      if (!class_goal_block(clearance_, g, n, cell_size_, kGoalReachCells, b)) b = {-1, -1};
      s.goal_cells.push_back(b);
    }
    present[present_count++] = n;
  }
  // The fields. Hierarchical: one class per chunk over the pool (a class's HierarchicalFields
  // reads only its grid and goal blocks and writes only itself; on 8192 maps each class's
  // routes and sector fields take milliseconds, while the other core would idle until the
  // swarm step). Whole mode: in turn (NavigationFields runs its own linear passes on the pool).
  std::array<std::uint64_t, kMaxSizeClass> work{};
  std::array<bool, kMaxSizeClass> class_changed{};
  const auto update_class = [&](std::size_t k) {
    const int n = present[k];
    ClassSlot& s = slots_[slot(n)];
    const GridMap& grid = n == 1 ? map : s.grid;
    if (hierarchical_) {
      HierarchicalFields& h = hier_[slot(n)];
      const std::uint64_t routes_before = h.route_builds();
      work[k] = h.update(grid, s.goal_cells);
      class_changed[k] = h.route_builds() != routes_before;
    } else {
      class_changed[k] = s.fields.update(grid, s.goal_cells);
      work[k] = s.fields.last_update_work();
    }
  };
  if (hierarchical_) {
    parallel_for(pool_, present_count, 1, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t k = begin; k < end; ++k) update_class(k);
    });
  } else {
    for (std::size_t k = 0; k < present_count; ++k) update_class(k);
  }
  for (std::size_t k = 0; k < present_count; ++k) {
    const int n = present[k];
    ClassSlot& s = slots_[slot(n)];
    last_work_ += work[k];
    changed |= class_changed[k];
    const std::span<const CellCoord> front = hierarchical_ ? hier_[slot(n)].goals() : s.fields.goals();
    s.sample_goals.resize(front.size());
    s.lattice_goals.resize(front.size());
    // Lattice point b of the class's grid is the centre of block b: a sector field samples
    // positions shifted by half a block less half a cell.
    const float shift = 0.5f * static_cast<float>(n - 1) * cell_size_;
    for (std::size_t i = 0; i < front.size(); ++i) {
      const bool fresh = i < goals.size() && s.goal_cells[i] == front[i];
      s.sample_goals[i] = fresh ? goals[i] : block_center(front[i], n, cell_size_);
      s.lattice_goals[i] = s.sample_goals[i] - Vec2{shift, shift};
    }
    if (hierarchical_) hier_[slot(n)].near().set_goal_positions(s.sample_goals);
    s.present = true;
  }
  return changed;
}

NavSample NavigationSet::sample(int size_class, Vec2 p) const noexcept {
  CellCoord block;
  std::uint32_t priority = 0;
  return sample(size_class, p, block, priority);
}

NavSample NavigationSet::sample(int size_class, Vec2 p, CellCoord& block, std::uint32_t& priority) const noexcept {
  block = {kNoBlock, kNoBlock};
  if (!has_class(size_class)) return {};
  const ClassSlot& s = slots_[slot(size_class)];
  if (hierarchical_ && map_ != nullptr) {
    // Round a goal, the near field's exact any-angle directions; elsewhere the sector fields.
    const HierarchicalFields& h = hier_[slot(size_class)];
    if (h.near_fields_on()) {
      const NavSample near = h.near().sample(size_class, cell_size_, p, block, priority);
      if (near.status != NavStatus::kNoField) return near;
    }
    const float shift = 0.5f * static_cast<float>(size_class - 1) * cell_size_;
    NavSample out = h.fields().sample(size_class == 1 ? *map_ : s.grid, s.lattice_goals, p - Vec2{shift, shift});
    out.target += Vec2{shift, shift};
    return out;
  }
  return sample_any_angle(s.fields.any_angle(), s.fields.flow(), size_class, cell_size_, s.sample_goals, p);
}

std::uint32_t NavigationSet::priority(int size_class, CellCoord block) const noexcept {
  if (!has_class(size_class)) return kUnreachable;
  if (hierarchical_) {
    const HierarchicalFields& h = hier_[slot(size_class)];
    return h.near_fields_on() ? h.near().priority(block) : kUnreachable;
  }
  const IntegrationField& field = slots_[slot(size_class)].fields.integration();
  return field.reachable(block.x, block.y) ? field.raw(block.x, block.y) : kUnreachable;
}

}  // namespace swarmfield::sim
