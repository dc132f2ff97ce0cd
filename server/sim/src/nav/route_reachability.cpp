// Reachability of a goal over the portal routes: a flood fill inside one sector.
#include "swarmfield/sim/nav/route_reachability.hpp"

#include <algorithm>

namespace swarmfield::sim {

bool RouteReachability::reaches_goal(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map,
                                     CellCoord c) {
  if (!map.walkable(c) || routes.goals().empty() || routes.node_count() != graph.node_count() ||
      map.width() <= 0 || graph.sector_count() == 0) {
    return false;
  }
  const std::uint32_t s = graph.sector_of(c);
  const SectorGraph::Rect r = graph.sector_rect(s);
  const auto cells = static_cast<std::size_t>(r.w) * static_cast<std::size_t>(r.h);
  if (stamp_.size() < cells) {
    stamp_.assign(cells, 0);
    target_.assign(cells, 0);
    queue_.resize(cells);
    visit_ = 0;
  }
  if (++visit_ == 0) {  // stamps wrapped: start clean
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    std::fill(target_.begin(), target_.end(), 0u);
    visit_ = 1;
  }
  const auto local = [&](CellCoord p) {
    return static_cast<std::uint32_t>((p.y - r.y0) * r.w + (p.x - r.x0));
  };
  bool any_target = false;
  for (const std::uint32_t n : graph.sector_nodes(s)) {
    if (routes.node_cost(n) != kUnreachable) {
      target_[local(graph.node_cell(n))] = visit_;
      any_target = true;
    }
  }
  for (const CellCoord g : routes.goals()) {
    if (map.in_bounds(g.x, g.y) && graph.sector_of(g) == s) {
      target_[local(g)] = visit_;
      any_target = true;
    }
  }
  if (!any_target) return false;

  const std::uint32_t start = local(c);
  if (target_[start] == visit_) return true;
  std::size_t head = 0, tail = 0;
  queue_[tail++] = start;
  stamp_[start] = visit_;
  const auto w = static_cast<std::uint32_t>(r.w);
  while (head < tail) {
    const std::uint32_t i = queue_[head++];
    const std::int32_t lx = static_cast<std::int32_t>(i % w), ly = static_cast<std::int32_t>(i / w);
    const std::int32_t nx[4] = {lx + 1, lx - 1, lx, lx};
    const std::int32_t ny[4] = {ly, ly, ly + 1, ly - 1};
    for (int k = 0; k < 4; ++k) {
      if (nx[k] < 0 || ny[k] < 0 || nx[k] >= r.w || ny[k] >= r.h) continue;
      const auto j = static_cast<std::uint32_t>(ny[k]) * w + static_cast<std::uint32_t>(nx[k]);
      if (stamp_[j] == visit_ || !map.walkable(r.x0 + nx[k], r.y0 + ny[k])) continue;
      if (target_[j] == visit_) return true;
      stamp_[j] = visit_;
      queue_[tail++] = j;
    }
  }
  return false;
}

}  // namespace swarmfield::sim
