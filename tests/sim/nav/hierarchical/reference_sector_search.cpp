// Frozen copy of the binary-heap sector build (see reference_sector_search.hpp). Do not speed up.
#include "reference_sector_search.hpp"

#include <algorithm>
#include <functional>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim::test {

namespace {

constexpr std::uint32_t kInf = kUnreachable;
constexpr std::uint8_t kInner = 2;

std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint64_t s = std::uint64_t{a} + b;
  return s >= kInf ? kInf - 1 : static_cast<std::uint32_t>(s);
}

}  // namespace

std::vector<std::uint32_t> reference_sector_search(std::size_t lw, std::size_t lh, const std::uint8_t* open,
                                                   const std::uint8_t* step, const std::vector<std::uint64_t>& seeds) {
  std::vector<std::uint32_t> vals(lw * lh, kInf);
  std::vector<std::uint64_t> heap;
  for (const std::uint64_t sd : seeds) {
    const auto cell = static_cast<std::uint32_t>(sd & 0xFFFFFFFFu);
    const auto v = static_cast<std::uint32_t>(sd >> 32);
    if (v >= vals[cell]) continue;
    vals[cell] = v;
    heap.push_back(std::uint64_t{v} << 32 | cell);
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>{});
  std::ptrdiff_t offset[8];
  for (std::size_t k = 0; k < 8; ++k) {
    offset[k] = static_cast<std::ptrdiff_t>(kDirectionOffsets[k].y) * static_cast<std::ptrdiff_t>(lw) + kDirectionOffsets[k].x;
  }
  const std::size_t cells = lw * lh;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const std::uint64_t top = heap.back();
    heap.pop_back();
    const auto u = static_cast<std::uint32_t>(top & 0xFFFFFFFFu);
    const auto du = static_cast<std::uint32_t>(top >> 32);
    if (du != vals[u]) continue;
    for (std::size_t k = 0; k < 8; ++k) {
      const std::size_t n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + offset[k]);
      if (n >= cells || open[n] != kInner) continue;
      const bool diagonal = (k & 1) != 0;
      if (diagonal && (open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + kDirectionOffsets[k].x)] == 0 ||
                       open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + offset[k] - kDirectionOffsets[k].x)] == 0))
        continue;
      const std::uint32_t nd =
          add_saturated(du, (diagonal ? kDiagonalStep : kOrthogonalStep) * static_cast<std::uint32_t>(step[n]));
      if (nd < vals[n]) {
        vals[n] = nd;
        heap.push_back(std::uint64_t{nd} << 32 | n);
        std::push_heap(heap.begin(), heap.end(), std::greater<>{});
      }
    }
  }
  return vals;
}

ReferenceSector reference_build_sector(const GridMap& map, const SectorGraph& g, const PortalRoutes& routes,
                                       std::uint32_t s) {
  const SectorGraph::Rect r = g.sector_rect(s);
  const auto lw = static_cast<std::size_t>(r.w) + 2;
  const auto lh = static_cast<std::size_t>(r.h) + 2;
  const auto local = [&](CellCoord c) {
    return static_cast<std::uint32_t>(static_cast<std::size_t>(c.y - r.y0 + 1) * lw + static_cast<std::size_t>(c.x - r.x0 + 1));
  };
  std::vector<std::uint8_t> open(lw * lh, 0), step(lw * lh, 0);
  for (std::int32_t y = 0; y < r.h; ++y) {
    for (std::int32_t x = 0; x < r.w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y + 1) * lw + static_cast<std::size_t>(x + 1);
      const std::uint8_t cost = map.cost(r.x0 + x, r.y0 + y);
      open[i] = cost != kBlockedCost ? kInner : 0;
      step[i] = cost;
    }
  }
  std::vector<std::uint64_t> seeds;
  const auto seed = [&](std::uint32_t cell, std::uint32_t v) { seeds.push_back(std::uint64_t{v} << 32 | cell); };
  for (const std::uint32_t n : g.sector_nodes(s)) {
    seed(local(g.node_cell(n)), routes.node_cost(n));
    for (const SectorEdge& e : g.edges(n)) {
      if (g.node_sector(e.to) == s) continue;
      const std::uint32_t cell = local(g.node_cell(e.to));
      open[cell] = 1;
      seed(cell, routes.node_cost(e.to));
    }
  }
  for (const CellCoord goal : routes.goals()) {
    if (g.sector_of(goal) == s) seed(local(goal), 0);
  }
  ReferenceSector out;
  out.values = reference_sector_search(lw, lh, open.data(), step.data(), seeds);
  const std::vector<std::uint32_t>& vals = out.values;
  const auto stride = static_cast<std::ptrdiff_t>(lw);
  out.dirs.assign(static_cast<std::size_t>(r.w) * static_cast<std::size_t>(r.h),
                  static_cast<std::uint8_t>(FlowDirection::kNone));
  for (std::size_t y = 1; y + 1 < lh; ++y) {
    for (std::size_t x = 1; x + 1 < lw; ++x) {
      const std::size_t u = y * lw + x;
      if (open[u] == 0) continue;
      std::uint32_t best = vals[u];
      std::uint8_t dir = static_cast<std::uint8_t>(FlowDirection::kNone);
      for (const std::size_t k : {0u, 2u, 4u, 6u, 1u, 3u, 5u, 7u}) {
        const CellCoord o = kDirectionOffsets[k];
        const std::size_t n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + o.y * stride + o.x);
        if (open[n] == 0 || vals[n] >= best) continue;
        if ((k & 1) != 0 && (open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + o.x)] == 0 ||
                             open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + o.y * stride)] == 0))
          continue;
        best = vals[n];
        dir = static_cast<std::uint8_t>(k);
      }
      if (vals[u] == 0) dir = 9;
      out.dirs[(y - 1) * static_cast<std::size_t>(r.w) + (x - 1)] = dir;
    }
  }
  return out;
}

}  // namespace swarmfield::sim::test
