// HierarchicalFields: graph, front/back portal routes and sector fields under one budget.
#include "swarmfield/sim/nav/hierarchical_fields.hpp"

#include <algorithm>
#include <utility>

namespace swarmfield::sim {

std::uint64_t HierarchicalFields::prepare(const GridMap& map) {
  if (map.width() == width_ && map.height() == height_ && map.revision() == revision_) return 0;
  // A changed revision: the map's change list is not known here, so the whole graph.
  graph_.build(map, side_);
  ++graph_builds_;
  width_ = map.width();
  height_ = map.height();
  revision_ = map.revision();
  front_valid_ = false;
  back_.abandon();
  return map.cell_count();
}

std::uint64_t HierarchicalFields::update(const GridMap& map, std::span<const CellCoord> goal_cells) {
  std::uint64_t spent = prepare(map);
  if (!front_valid_) {
    // Routes for this graph at once: agents have nothing to read before.
    front_goals_.assign(goal_cells.begin(), goal_cells.end());
    front_.build(graph_, map, front_goals_);
    front_valid_ = true;
    ++route_builds_;
    spent += front_.work_units();
    fields_.set_routes(graph_, front_);
  } else if (back_.in_progress() &&
             std::equal(goal_cells.begin(), goal_cells.end(), front_goals_.begin(), front_goals_.end())) {
    back_.abandon();  // the front is already right (e.g. a player who stepped back)
  }
  const std::uint64_t unlimited = 0;
  // The near fields first (agents round the goals read them), about an eighth of the budget:
  // a refinement of what the routes and sector fields give, which keep most of it.
  if (near_on_) {
    spent += near_.update(map, goal_cells, budget_ == 0 ? unlimited : std::max<std::uint64_t>(budget_ / kNearBudgetShare, 1));
  }
  // Sector fields next (agents read them now), at most half of what is left.
  const std::uint64_t after_near = budget_ > spent ? budget_ - spent : 0;
  spent += fields_.update(map, budget_ == 0 ? unlimited : std::max<std::uint64_t>(after_near / 2, 1));
  if (!back_.in_progress() && !std::equal(goal_cells.begin(), goal_cells.end(), front_goals_.begin(), front_goals_.end())) {
    back_goals_.assign(goal_cells.begin(), goal_cells.end());
    back_.begin(graph_, map, back_goals_);
    spent += back_.work_units();
  }
  if (back_.in_progress()) {
    const std::uint64_t before = back_.work_units();
    const std::uint64_t left = budget_ == 0 ? unlimited : (spent < budget_ ? std::max<std::uint64_t>(budget_ - spent, 1) : 1);
    const bool done = back_.advance(left);
    spent += back_.work_units() - before;
    if (done) {
      std::swap(front_, back_);
      std::swap(front_goals_, back_goals_);
      ++route_builds_;
      fields_.set_routes(graph_, front_);  // same object: bumps the generation
      if (budget_ == 0 || spent < budget_) spent += fields_.update(map, budget_ == 0 ? unlimited : budget_ - spent);
    }
  }
  last_work_ = spent;
  return spent;
}

}  // namespace swarmfield::sim
