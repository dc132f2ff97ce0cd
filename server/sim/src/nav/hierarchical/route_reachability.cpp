// Reachability of a goal over the portal routes: a flood fill inside one sector, labelled once
// per sector and version.
#include "swarmfield/sim/nav/hierarchical/route_reachability.hpp"

#include <algorithm>

namespace swarmfield::sim {

void RouteReachability::label_sector(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map,
                                     std::uint32_t s, std::uint64_t* bits) {
  const SectorGraph::Rect r = graph.sector_rect(s);
  const auto w = static_cast<std::uint32_t>(r.w);
  const auto cells = static_cast<std::size_t>(r.w) * static_cast<std::size_t>(r.h);
  std::fill(bits, bits + (cells + 63) / 64, std::uint64_t{0});
  if (queue_.size() < cells) queue_.resize(cells);
  const auto seen = [&](std::uint32_t i) { return (bits[i >> 6] >> (i & 63)) & 1u; };
  const auto mark = [&](std::uint32_t i) { bits[i >> 6] |= std::uint64_t{1} << (i & 63); };
  std::size_t head = 0, tail = 0;
  const auto seed = [&](CellCoord p) {
    if (!map.walkable(p)) return;
    const auto i = static_cast<std::uint32_t>((p.y - r.y0) * r.w + (p.x - r.x0));
    if (seen(i) != 0) return;
    mark(i);
    queue_[tail++] = i;
  };
  for (const std::uint32_t n : graph.sector_nodes(s)) {
    if (routes.node_cost(n) != kUnreachable) seed(graph.node_cell(n));
  }
  for (const CellCoord g : routes.goals()) {
    if (map.in_bounds(g.x, g.y) && graph.sector_of(g) == s) seed(g);
  }
  while (head < tail) {
    const std::uint32_t i = queue_[head++];
    const std::int32_t lx = static_cast<std::int32_t>(i % w), ly = static_cast<std::int32_t>(i / w);
    const std::int32_t nx[4] = {lx + 1, lx - 1, lx, lx};
    const std::int32_t ny[4] = {ly, ly, ly + 1, ly - 1};
    for (int k = 0; k < 4; ++k) {
      if (nx[k] < 0 || ny[k] < 0 || nx[k] >= r.w || ny[k] >= r.h) continue;
      const auto j = static_cast<std::uint32_t>(ny[k]) * w + static_cast<std::uint32_t>(nx[k]);
      if (seen(j) != 0 || !map.walkable(r.x0 + nx[k], r.y0 + ny[k])) continue;
      mark(j);
      queue_[tail++] = j;
    }
  }
}

bool RouteReachability::reaches_goal(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map,
                                     CellCoord c, std::uint64_t version) {
  if (!map.walkable(c) || routes.goals().empty() || routes.node_count() != graph.node_count() ||
      map.width() <= 0 || graph.sector_count() == 0) {
    return false;
  }
  const std::uint32_t s = graph.sector_of(c);
  const SectorGraph::Rect r = graph.sector_rect(s);
  const auto side = static_cast<std::size_t>(graph.sector_side());
  const auto i = static_cast<std::size_t>((c.y - r.y0) * r.w + (c.x - r.x0));
  std::uint64_t* bits = nullptr;
  if (version == kUncached) {
    scratch_.resize((side * side + 63) / 64);
    bits = scratch_.data();
    label_sector(graph, routes, map, s, bits);
  } else {
    if (sectors_ != graph.sector_count() || words_ != (side * side + 63) / 64) {
      sectors_ = graph.sector_count();
      words_ = (side * side + 63) / 64;
      bits_.assign(sectors_ * words_, 0);
      version_.assign(sectors_, kUncached);
    }
    bits = bits_.data() + static_cast<std::size_t>(s) * words_;
    if (version_[s] != version) {
      label_sector(graph, routes, map, s, bits);
      version_[s] = version;
    }
  }
  return ((bits[i >> 6] >> (i & 63)) & 1u) != 0;
}

std::size_t RouteReachability::memory_bytes() const noexcept {
  return (bits_.capacity() + version_.capacity() + scratch_.capacity()) * sizeof(std::uint64_t) +
         queue_.capacity() * sizeof(std::uint32_t);
}

}  // namespace swarmfield::sim
