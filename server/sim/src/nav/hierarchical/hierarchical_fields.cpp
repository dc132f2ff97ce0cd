// HierarchicalFields: graph, front/back portal routes and sector fields under one budget.
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"

#include <algorithm>
#include <utility>

namespace swarmfield::sim {

std::uint64_t HierarchicalFields::prepare(const GridMap& map) {
  if (map.width() == width_ && map.height() == height_ && map.revision() == revision_) return 0;
  std::span<const CellCoord> changed;
  std::vector<CellCoord> bulk;  // a bulk change's cells (changed blocks), past the change log
  if (map.width() == width_ && map.height() == height_ && map.cells_changed_since(revision_, bulk, changed)) {
    graph_.update(map, changed);
    fields_.graph_updated(graph_.node_remap(), graph_.updated_sectors());  // node ids renumbered
    ++graph_updates_;
    revision_ = map.revision();
    std::uint64_t work = graph_.node_count();  // the node remap (graph and front routes)
    for (const std::uint32_t s : graph_.updated_sectors()) {
      const SectorGraph::Rect r = graph_.sector_rect(s);
      work += static_cast<std::uint64_t>(r.w) * static_cast<std::uint64_t>(r.h) *
              std::max<std::uint64_t>(graph_.sector_nodes(s).size(), 1);
      fields_.drop_sector(s);
    }
    if (front_valid_) {
      // A build in progress goes on over the new graph (restarting it on every change starved
      // the routes of a map changing faster than a build completes, or forced one all at once:
      // ~60 ms at 8192); what it returns is then out of date where paths got dearer, so another
      // build, begun after the change, follows it (routes_stale_).
      if (back_.in_progress()) {
        route_extra_ += back_.follow_update(graph_, map, graph_.node_remap(), graph_.updated_sectors());
      }
      front_.remap_nodes(graph_.node_remap(), graph_.node_count());
      routes_stale_ = true;
      back_follows_change_ = back_.in_progress();
    }
    return work;
  }
  // Another size, or changes the map no longer knows cell by cell: the whole graph.
  graph_.build(map, side_);
  fields_.graph_changed();
  ++graph_builds_;
  width_ = map.width();
  height_ = map.height();
  revision_ = map.revision();
  front_valid_ = false;
  routes_stale_ = false;
  back_follows_change_ = false;
  route_extra_ = 0;
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
  } else if (back_.in_progress() && !routes_stale_ &&
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
  if (!back_.in_progress() &&
      (routes_stale_ || !std::equal(goal_cells.begin(), goal_cells.end(), front_goals_.begin(), front_goals_.end()))) {
    back_goals_.assign(goal_cells.begin(), goal_cells.end());
    back_.begin(graph_, map, back_goals_);
    spent += back_.work_units();
  }
  if (back_.in_progress()) {
    const std::uint64_t before = back_.work_units();
    const bool at_once = budget_ == 0;
    // The nodes a map change queued again come on top (route_extra_: charged to the change,
    // like the graph update itself), so the build still advances by its own slice.
    const std::uint64_t floor = std::max<std::uint64_t>(budget_ / kMinRouteShare, 1);
    const std::uint64_t left =
        at_once ? unlimited : std::max(spent < budget_ ? budget_ - spent : 0, floor) + route_extra_;
    route_extra_ = 0;
    const bool done = back_.advance(left);
    spent += back_.work_units() - before;
    if (done) {
      // Exact unless the map changed while it ran (then the next build starts at once).
      routes_stale_ = back_follows_change_;
      back_follows_change_ = false;
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
