// Route costs over the portal graph (hierarchical navigation, layer 2): the goals' entries through
// their sectors, Dijkstra over the portals in slices, and costs of single cells.
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>

namespace swarmfield::sim {

namespace {

// A seed of a search inside one sector, (local cell, cost), or an entry of its queue, (cost,
// local cell).
using CostSeed = std::pair<std::uint32_t, std::uint32_t>;

constexpr std::array<CellCoord, 8> kSteps = {{{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}}};

std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint64_t s = std::uint64_t{a} + b;
  return s >= kUnreachable ? kUnreachable - 1 : static_cast<std::uint32_t>(s);
}

/// Costs (raw, outward) of every cell of sector rectangle `r` from seeds (local cell index,
/// starting value) into `d` (r.w x r.h, row-major): Dijkstra with a binary heap kept in `heap`
/// ((cost, local cell) pairs), 8-connected, no corner cutting, each cell entered charged its
/// cost (orthogonal x kOrthogonalStep, diagonal x kDiagonalStep). `d` and `heap` are the
/// caller's buffers, so that reused ones allocate nothing once warm.
void seeded_costs(const GridMap& map, const SectorGraph::Rect& r, std::span<const CostSeed> seeds,
                  std::vector<std::uint32_t>& d, std::vector<CostSeed>& heap) {
  const auto w = static_cast<std::size_t>(r.w);
  d.assign(w * static_cast<std::size_t>(r.h), kUnreachable);
  heap.clear();
  const auto push = [&](std::uint32_t cost, std::uint32_t cell) {
    heap.push_back({cost, cell});
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  };
  for (const auto& [cell, value] : seeds) {
    if (value < d[cell]) {
      d[cell] = value;
      push(value, cell);
    }
  }
  const auto open = [&](std::int32_t x, std::int32_t y) {
    return x >= 0 && y >= 0 && x < r.w && y < r.h && map.walkable(r.x0 + x, r.y0 + y);
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const auto [du, u] = heap.back();
    heap.pop_back();
    if (du != d[u]) continue;
    const auto ux = static_cast<std::int32_t>(u % w), uy = static_cast<std::int32_t>(u / w);
    for (std::size_t k = 0; k < kSteps.size(); ++k) {
      const std::int32_t nx = ux + kSteps[k].x, ny = uy + kSteps[k].y;
      if (!open(nx, ny)) continue;
      const bool diagonal = (k & 1) != 0;
      if (diagonal && (!open(ux + kSteps[k].x, uy) || !open(ux, uy + kSteps[k].y))) continue;
      const std::uint32_t step = (diagonal ? kDiagonalStep : kOrthogonalStep) * map.cost(r.x0 + nx, r.y0 + ny);
      const std::uint32_t nd = add_saturated(du, step);
      const auto n = static_cast<std::uint32_t>(static_cast<std::size_t>(ny) * w + static_cast<std::size_t>(nx));
      if (nd < d[n]) {
        d[n] = nd;
        push(nd, n);
      }
    }
  }
}

}  // namespace

void PortalRoutes::build(const SectorGraph& graph, const GridMap& map, std::span<const CellCoord> goals) {
  begin(graph, map, goals);
  advance(0);
}

void PortalRoutes::begin(const SectorGraph& graph, const GridMap& map, std::span<const CellCoord> goals) {
  cost_.assign(graph.node_count(), kUnreachable);
  goals_.clear();
  heap_.clear();
  settled_ = 0;
  work_ = 0;
  graph_ = &graph;
  for (const CellCoord g : goals) {
    if (!map.walkable(g)) continue;
    goals_.push_back(g);
    seed_goal(graph, map, g);
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
}

void PortalRoutes::seed_goal(const SectorGraph& graph, const GridMap& map, CellCoord g) {
  const std::uint32_t s = graph.sector_of(g);
  const SectorGraph::Rect r = graph.sector_rect(s);
  const CostSeed goal[1] = {{static_cast<std::uint32_t>((g.y - r.y0) * r.w + (g.x - r.x0)), 0u}};
  seeded_costs(map, r, goal, sector_costs_, sector_heap_);
  const std::vector<std::uint32_t>& d = sector_costs_;
  work_ += static_cast<std::uint64_t>(r.w) * static_cast<std::uint64_t>(r.h);
  for (const std::uint32_t n : graph.sector_nodes(s)) {
    const CellCoord c = graph.node_cell(n);
    const std::uint32_t v = d[static_cast<std::size_t>((c.y - r.y0) * r.w + (c.x - r.x0))];
    if (v < cost_[n]) {
      cost_[n] = v;
      heap_.push_back(std::uint64_t{v} << 32 | n);
    }
  }
}

std::uint64_t PortalRoutes::follow_update(const SectorGraph& graph, const GridMap& map,
                                          std::span<const std::uint32_t> remap, std::span<const std::uint32_t> updated) {
  if (graph_ == nullptr) {
    remap_nodes(remap, graph.node_count());
    return 0;
  }
  const std::size_t node_count = graph.node_count();
  remap_costs(remap, node_count);
  // Queued nodes under their new ids (entries for a cost since lowered are stale anyway).
  std::size_t kept = 0;
  for (const std::uint64_t entry : heap_) {
    const auto old = static_cast<std::uint32_t>(entry & 0xFFFFFFFFu);
    const auto c = static_cast<std::uint32_t>(entry >> 32);
    if (old >= remap.size() || remap[old] >= node_count || cost_[remap[old]] != c) continue;
    heap_[kept++] = std::uint64_t{c} << 32 | remap[old];
  }
  heap_.resize(kept);
  // The updated sectors' edges are new, and nodes settled before the change never relaxed them:
  // queue those sectors' nodes and the nodes across their borders (whose edge blocks were
  // rewritten too) at their costs, so popping them relaxes the new edges (a node popped again
  // at its cost only relaxes again: the queue corrects labels, it does not assume them final).
  for (const CellCoord g : goals_) {
    if (!map.walkable(g)) continue;
    if (std::binary_search(updated.begin(), updated.end(), graph.sector_of(g))) seed_goal(graph, map, g);
  }
  const std::size_t first_requeued = heap_.size();
  const auto queue = [&](std::uint32_t u) {
    if (cost_[u] != kUnreachable) heap_.push_back(std::uint64_t{cost_[u]} << 32 | u);
  };
  for (const std::uint32_t s : updated) {
    for (const std::uint32_t u : graph.sector_nodes(s)) {
      queue(u);
      for (const SectorEdge& e : graph.edges(u)) {
        if (graph.node_sector(e.to) != s) queue(e.to);
      }
    }
  }
  // A node on the border of two updated sectors was queued from both (same cost, same node):
  // once is enough. The entries are few (the updated sectors' portals and their neighbours).
  const auto requeued = heap_.begin() + static_cast<std::ptrdiff_t>(first_requeued);
  std::sort(requeued, heap_.end());
  heap_.erase(std::unique(requeued, heap_.end()), heap_.end());
  std::uint64_t requeued_work = 0;
  for (std::size_t i = first_requeued; i < heap_.size(); ++i)
    requeued_work += 1 + kWorkUnitsPerEdge * graph.edges(static_cast<std::uint32_t>(heap_[i] & 0xFFFFFFFFu)).size();
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
  graph_ = &graph;
  return requeued_work;
}

void PortalRoutes::remap_nodes(std::span<const std::uint32_t> remap, std::size_t node_count) {
  abandon();
  remap_costs(remap, node_count);
}

void PortalRoutes::remap_costs(std::span<const std::uint32_t> remap, std::size_t node_count) {
  remap_scratch_.assign(node_count, kUnreachable);
  const std::size_t n = std::min(remap.size(), cost_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (remap[i] < node_count) remap_scratch_[remap[i]] = cost_[i];
  }
  cost_.swap(remap_scratch_);
}

bool PortalRoutes::advance(std::uint64_t budget) {
  if (graph_ == nullptr) return true;
  const std::uint64_t stop = budget == 0 ? ~std::uint64_t{0} : work_ + budget;
  while (!heap_.empty() && work_ < stop) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const std::uint64_t top = heap_.back();
    heap_.pop_back();
    const auto u = static_cast<std::uint32_t>(top & 0xFFFFFFFFu);
    const auto du = static_cast<std::uint32_t>(top >> 32);
    if (du != cost_[u]) continue;
    ++settled_;
    const std::span<const SectorEdge> edges = graph_->edges(u);
    work_ += 1 + kWorkUnitsPerEdge * edges.size();
    for (const SectorEdge& e : edges) {
      const std::uint32_t nd = add_saturated(du, e.cost);
      if (nd < cost_[e.to]) {
        cost_[e.to] = nd;
        heap_.push_back(std::uint64_t{nd} << 32 | e.to);
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
      }
    }
  }
  if (!heap_.empty()) return false;
  graph_ = nullptr;
  return true;
}

std::uint32_t PortalRoutes::cost_at(const SectorGraph& graph, const GridMap& map, CellCoord c) const {
  if (!map.walkable(c) || cost_.size() != graph.node_count() || in_progress()) return kUnreachable;
  const std::uint32_t s = graph.sector_of(c);
  const SectorGraph::Rect r = graph.sector_rect(s);
  const auto local = [&](CellCoord p) { return static_cast<std::uint32_t>((p.y - r.y0) * r.w + (p.x - r.x0)); };
  std::vector<CostSeed> seeds;
  for (const std::uint32_t n : graph.sector_nodes(s)) {
    if (cost_[n] != kUnreachable) seeds.push_back({local(graph.node_cell(n)), cost_[n]});
  }
  for (const CellCoord g : goals_) {
    if (graph.sector_of(g) == s) seeds.push_back({local(g), 0u});
  }
  std::vector<std::uint32_t> d;
  std::vector<CostSeed> heap;
  seeded_costs(map, r, seeds, d, heap);
  return d[local(c)];
}

}  // namespace swarmfield::sim
