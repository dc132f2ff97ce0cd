// Sectors, portals and the portal graph (hierarchical navigation, layer 1).
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

#include <algorithm>
#include <utility>

namespace swarmfield::sim {

namespace {

bool row_major_less(CellCoord a, CellCoord b) noexcept { return a.y != b.y ? a.y < b.y : a.x < b.x; }

/// The cells of `rect` of `map` as a map of their own (costs copied, nothing around them).
void copy_rect(const GridMap& map, const SectorGraph::Rect& r, GridMap& out) {
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(r.w) * static_cast<std::size_t>(r.h));
  for (std::int32_t y = 0; y < r.h; ++y)
    for (std::int32_t x = 0; x < r.w; ++x)
      costs[static_cast<std::size_t>(y) * static_cast<std::size_t>(r.w) + static_cast<std::size_t>(x)] =
          map.cost(r.x0 + x, r.y0 + y);
  out = GridMap::from_costs(r.w, r.h, std::move(costs), map.cell_size());
}

/// Offsets of the portal pairs on one border, from `pair` (per offset: 0 where a cell of the
/// pair is blocked, else the pair's larger cost), `n` long: per maximal run of pairs of one cost
/// (so that a cheap lane of a wide road has portals of its own), both ends and every `spacing`
/// between (one in the middle of a run shorter than 3).
void portal_offsets(const std::vector<std::uint8_t>& pair, std::int32_t n, std::int32_t spacing,
                    std::vector<std::int32_t>& out) {
  out.clear();
  std::int32_t i = 0;
  while (i < n) {
    const std::uint8_t cost = pair[static_cast<std::size_t>(i)];
    if (cost == 0) {
      ++i;
      continue;
    }
    const std::int32_t a = i;
    while (i < n && pair[static_cast<std::size_t>(i)] == cost) ++i;
    const std::int32_t b = i - 1;
    if (b - a + 1 < 3) {
      out.push_back(a + (b - a) / 2);
      continue;
    }
    for (std::int32_t k = a; k < b; k += spacing) out.push_back(k);
    out.push_back(b);
  }
}

}  // namespace

SectorGraph::Rect SectorGraph::sector_rect(std::uint32_t s) const noexcept {
  const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
  const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
  const std::int32_t x0 = sx * side_, y0 = sy * side_;
  return {x0, y0, std::min(side_, width_ - x0), std::min(side_, height_ - y0)};
}

void SectorGraph::compute_border(const GridMap& map, std::uint32_t s, bool east) {
  const Rect r = sector_rect(s);
  std::vector<std::int32_t>& out = east ? east_[s] : south_[s];
  const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
  const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
  if ((east && sx + 1 >= sectors_x_) || (!east && sy + 1 >= sectors_y_)) {
    out.clear();
    return;
  }
  const std::int32_t n = east ? r.h : r.w;
  std::vector<std::uint8_t> pair(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) {
    const CellCoord a = east ? CellCoord{r.x0 + r.w - 1, r.y0 + i} : CellCoord{r.x0 + i, r.y0 + r.h - 1};
    const CellCoord b = east ? CellCoord{a.x + 1, a.y} : CellCoord{a.x, a.y + 1};
    pair[static_cast<std::size_t>(i)] =
        map.walkable(a) && map.walkable(b) ? std::max(map.cost(a.x, a.y), map.cost(b.x, b.y)) : std::uint8_t{0};
  }
  portal_offsets(pair, n, spacing_, out);
}

void SectorGraph::collect_portals(std::uint32_t s) {
  const Rect r = sector_rect(s);
  const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
  const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
  std::vector<CellCoord>& p = sectors_[s].portals;
  p.clear();
  for (const std::int32_t o : east_[s]) p.push_back({r.x0 + r.w - 1, r.y0 + o});
  for (const std::int32_t o : south_[s]) p.push_back({r.x0 + o, r.y0 + r.h - 1});
  if (sx > 0) {
    for (const std::int32_t o : east_[s - 1]) p.push_back({r.x0, r.y0 + o});
  }
  if (sy > 0) {
    for (const std::int32_t o : south_[s - static_cast<std::uint32_t>(sectors_x_)]) p.push_back({r.x0 + o, r.y0});
  }
  std::sort(p.begin(), p.end(), row_major_less);
  p.erase(std::unique(p.begin(), p.end()), p.end());
}

void SectorGraph::compute_costs(const GridMap& map, std::uint32_t s) {
  Sector& sec = sectors_[s];
  const Rect r = sector_rect(s);
  const std::size_t k = sec.portals.size();
  sec.costs.assign(k * k, kUnreachable);
  if (k == 0) return;
  copy_rect(map, r, scratch_map_);
  for (std::size_t i = 0; i < k; ++i) {
    const CellCoord goal[1] = {{sec.portals[i].x - r.x0, sec.portals[i].y - r.y0}};
    scratch_field_.build(scratch_map_, goal);
    for (std::size_t j = 0; j < k; ++j)
      sec.costs[i * k + j] = scratch_field_.raw(sec.portals[j].x - r.x0, sec.portals[j].y - r.y0);
  }
}

std::uint32_t SectorGraph::node_of(std::uint32_t s, CellCoord c) const noexcept {
  const std::vector<CellCoord>& p = sectors_[s].portals;
  const auto it = std::lower_bound(p.begin(), p.end(), c, row_major_less);
  return static_cast<std::uint32_t>(node_base_[s] + static_cast<std::size_t>(it - p.begin()));
}

void SectorGraph::place_nodes(std::uint32_t s, std::size_t slack) {
  const std::vector<CellCoord>& p = sectors_[s].portals;
  if (p.size() > node_cap_[s]) {
    for (std::size_t i = node_base_[s]; i < node_base_[s] + node_cap_[s]; ++i) {
      node_cells_[i] = {-1, -1};
      node_sectors_[i] = kNoSector;
      edge_len_[i] = 0;
    }
    node_base_[s] = node_cells_.size();
    node_cap_[s] = p.size() + slack;
    const std::size_t end = node_base_[s] + node_cap_[s];
    node_cells_.resize(end, {-1, -1});
    node_sectors_.resize(end, kNoSector);
    edge_first_.resize(end, 0);
    edge_len_.resize(end, 0);
    const std::size_t from = node_ids_.size();
    node_ids_.resize(end);
    for (std::size_t i = from; i < end; ++i) node_ids_[i] = static_cast<std::uint32_t>(i);
  }
  for (std::size_t i = 0; i < node_cap_[s]; ++i) {
    const std::size_t n = node_base_[s] + i;
    node_cells_[n] = i < p.size() ? p[i] : CellCoord{-1, -1};
    node_sectors_[n] = i < p.size() ? s : kNoSector;
    if (i >= p.size()) edge_len_[n] = 0;
  }
}

void SectorGraph::write_edges(const GridMap& map, std::uint32_t s, std::size_t slack) {
  const Sector& sec = sectors_[s];
  const std::size_t k = sec.portals.size();
  const Rect r = sector_rect(s);
  const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
  const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
  const auto row = static_cast<std::uint32_t>(sectors_x_);
  // Steps across the four borders, from this sector's portal `a` to the neighbour's `b`.
  cross_scratch_.clear();
  const auto cross = [&](CellCoord a, std::uint32_t sb, CellCoord b) {
    const auto i = static_cast<std::uint32_t>(node_of(s, a) - node_base_[s]);
    cross_scratch_.push_back({i, {node_of(sb, b), kOrthogonalStep * map.cost(b.x, b.y)}});
  };
  for (const std::int32_t o : east_[s]) cross({r.x0 + r.w - 1, r.y0 + o}, s + 1, {r.x0 + r.w, r.y0 + o});
  for (const std::int32_t o : south_[s]) cross({r.x0 + o, r.y0 + r.h - 1}, s + row, {r.x0 + o, r.y0 + r.h});
  if (sx > 0) {
    for (const std::int32_t o : east_[s - 1]) cross({r.x0, r.y0 + o}, s - 1, {r.x0 - 1, r.y0 + o});
  }
  if (sy > 0) {
    for (const std::int32_t o : south_[s - row]) cross({r.x0 + o, r.y0}, s - row, {r.x0 + o, r.y0 - 1});
  }
  std::sort(cross_scratch_.begin(), cross_scratch_.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first < y.first : x.second.to < y.second.to; });
  std::size_t total = cross_scratch_.size();
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) total += i != j && sec.costs[i * k + j] != kUnreachable ? 1 : 0;
  if (total > edge_cap_[s]) {
    edge_base_[s] = edges_.size();
    edge_cap_[s] = total + (slack == 0 ? 0 : slack + total / 4);  // room for a few more portals
    edges_.resize(edges_.size() + edge_cap_[s]);
  }
  live_edges_ = live_edges_ - edge_used_[s] + total;
  edge_used_[s] = total;
  std::size_t at = edge_base_[s], c = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t n = node_base_[s] + i;
    edge_first_[n] = at;
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint32_t cost = sec.costs[i * k + j];
      if (i != j && cost != kUnreachable) edges_[at++] = {static_cast<std::uint32_t>(node_base_[s] + j), cost};
    }
    for (; c < cross_scratch_.size() && cross_scratch_[c].first == i; ++c) edges_[at++] = cross_scratch_[c].second;
    edge_len_[n] = static_cast<std::uint32_t>(at - edge_first_[n]);
  }
}

void SectorGraph::assemble(const GridMap& map) {
  const std::size_t count = sectors_.size();
  node_base_.assign(count, 0);
  node_cap_.assign(count, 0);
  std::size_t nodes = 0;
  for (std::size_t s = 0; s < count; ++s) {
    node_base_[s] = nodes;
    node_cap_[s] = sectors_[s].portals.size();
    nodes += node_cap_[s];
  }
  // Room for ranges that move in later updates without reallocating (see update()).
  const std::size_t node_room = nodes + nodes / 8 + kNodeHeadroom;
  node_cells_.reserve(node_room);
  node_sectors_.reserve(node_room);
  node_ids_.reserve(node_room);
  edge_first_.reserve(node_room);
  edge_len_.reserve(node_room);
  node_cells_.assign(nodes, {-1, -1});
  node_sectors_.assign(nodes, kNoSector);
  node_ids_.resize(nodes);
  for (std::size_t n = 0; n < nodes; ++n) node_ids_[n] = static_cast<std::uint32_t>(n);
  edge_first_.assign(nodes, 0);
  edge_len_.assign(nodes, 0);
  live_nodes_ = nodes;
  for (std::uint32_t s = 0; s < count; ++s) place_nodes(s, 0);
  // Edges in use: in-sector pairs that reach each other, and both steps of every border pair.
  std::size_t total = 0;
  for (std::size_t s = 0; s < count; ++s) {
    const std::size_t k = sectors_[s].portals.size();
    for (std::size_t i = 0; i < k * k; ++i) total += i % (k + 1) != 0 && sectors_[s].costs[i] != kUnreachable ? 1 : 0;
    total += 2 * (east_[s].size() + south_[s].size());
  }
  // A fresh buffer (not clear(): a packing must not keep the grown one) with room for blocks
  // that move in later updates.
  std::vector<SectorEdge>().swap(edges_);
  edges_.reserve(total + total / 8 + kEdgeHeadroom);
  edge_base_.assign(count, 0);
  edge_cap_.assign(count, 0);
  edge_used_.assign(count, 0);
  live_edges_ = 0;
  for (std::uint32_t s = 0; s < count; ++s) write_edges(map, s, 0);
}

void SectorGraph::build(const GridMap& map, std::int32_t sector_side, std::int32_t spacing) {
  width_ = map.width();
  height_ = map.height();
  side_ = std::max(sector_side, 4);
  spacing_ = std::max(spacing, 1);
  sectors_x_ = width_ > 0 ? (width_ + side_ - 1) / side_ : 0;
  sectors_y_ = height_ > 0 ? (height_ + side_ - 1) / side_ : 0;
  const std::size_t count = static_cast<std::size_t>(sectors_x_) * static_cast<std::size_t>(sectors_y_);
  sectors_.assign(count, Sector{});
  east_.assign(count, {});
  south_.assign(count, {});
  for (std::uint32_t s = 0; s < count; ++s) {
    compute_border(map, s, true);
    compute_border(map, s, false);
  }
  for (std::uint32_t s = 0; s < count; ++s) {
    collect_portals(s);
    compute_costs(map, s);
  }
  assemble(map);
  node_remap_.clear();
  updated_sectors_.clear();
}

std::size_t SectorGraph::memory_bytes() const noexcept {
  std::size_t bytes = sectors_.capacity() * sizeof(Sector) + (east_.capacity() + south_.capacity()) * sizeof(east_[0]);
  for (const Sector& s : sectors_) bytes += s.portals.capacity() * sizeof(CellCoord) + s.costs.capacity() * sizeof(std::uint32_t);
  for (const auto& v : east_) bytes += v.capacity() * sizeof(std::int32_t);
  for (const auto& v : south_) bytes += v.capacity() * sizeof(std::int32_t);
  bytes += node_cells_.capacity() * sizeof(CellCoord) + (node_sectors_.capacity() + node_ids_.capacity()) * sizeof(std::uint32_t) +
           (edge_first_.capacity() + node_base_.capacity() + node_cap_.capacity() + edge_base_.capacity() +
            edge_cap_.capacity() + edge_used_.capacity()) * sizeof(std::size_t) +
           edge_len_.capacity() * sizeof(std::uint32_t) + edges_.capacity() * sizeof(SectorEdge) +
           (node_remap_.capacity() + updated_sectors_.capacity()) * sizeof(std::uint32_t) +
           scratch_map_.costs().capacity();
  return bytes;
}

std::size_t SectorGraph::update(const GridMap& map, std::span<const CellCoord> cells) {
  if (map.width() != width_ || map.height() != height_ || sectors_.empty()) {
    build(map, side_, spacing_);
    return sectors_.size();
  }
  const std::size_t count = sectors_.size();
  std::vector<std::uint8_t> touched(count, 0);
  for (const CellCoord c : cells) {
    if (map.in_bounds(c.x, c.y)) touched[sector_of(c)] = 1;
  }
  // Borders of a touched sector: its own east / south, and those of its west / north neighbours.
  std::vector<std::uint8_t> redo(count, 0);
  for (std::uint32_t s = 0; s < count; ++s) {
    if (touched[s] == 0) continue;
    const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
    const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
    compute_border(map, s, true);
    compute_border(map, s, false);
    if (sx > 0) compute_border(map, s - 1, true);
    if (sy > 0) compute_border(map, s - static_cast<std::uint32_t>(sectors_x_), false);
    redo[s] = 1;
    if (sx > 0) redo[s - 1] = 1;
    if (sx + 1 < sectors_x_) redo[s + 1] = 1;
    if (sy > 0) redo[s - static_cast<std::uint32_t>(sectors_x_)] = 1;
    if (sy + 1 < sectors_y_) redo[s + static_cast<std::uint32_t>(sectors_x_)] = 1;
  }
  const std::size_t old_nodes = node_cells_.size();
  std::vector<std::pair<std::uint32_t, std::vector<CellCoord>>> moved;  // sector, its portals before
  std::vector<std::pair<std::size_t, std::size_t>> moved_range;         // its id range before
  updated_sectors_.clear();
  for (std::uint32_t s = 0; s < count; ++s) {
    if (redo[s] == 0) continue;
    std::vector<CellCoord> before = sectors_[s].portals;
    collect_portals(s);
    // A neighbour keeps its costs when its portals did not move (its own cells did not change).
    if (touched[s] != 0 || sectors_[s].portals != before) {
      compute_costs(map, s);
      updated_sectors_.push_back(s);
      if (sectors_[s].portals != before) {
        moved.emplace_back(s, std::move(before));
        moved_range.emplace_back(node_base_[s], node_cap_[s]);
      }
    }
  }
  // New ids for the sectors whose portals moved (room for a few more when a range must move),
  // then the edge blocks of the recomputed sectors and of their neighbours (their steps across
  // the border point at ids that may have changed).
  for (const auto& m : moved) {
    live_nodes_ = live_nodes_ - m.second.size() + sectors_[m.first].portals.size();
    place_nodes(m.first, 4);
  }
  std::vector<std::uint32_t> rewrite;
  const auto row = static_cast<std::uint32_t>(sectors_x_);
  for (const std::uint32_t s : updated_sectors_) {
    const std::int32_t sx = static_cast<std::int32_t>(s) % sectors_x_;
    const std::int32_t sy = static_cast<std::int32_t>(s) / sectors_x_;
    rewrite.push_back(s);
    if (sx > 0) rewrite.push_back(s - 1);
    if (sx + 1 < sectors_x_) rewrite.push_back(s + 1);
    if (sy > 0) rewrite.push_back(s - row);
    if (sy + 1 < sectors_y_) rewrite.push_back(s + row);
  }
  std::sort(rewrite.begin(), rewrite.end());
  rewrite.erase(std::unique(rewrite.begin(), rewrite.end()), rewrite.end());
  for (const std::uint32_t s : rewrite) write_edges(map, s, kBlockSlack);
  // Old ids to new: unchanged where the portals stayed; the moved sectors' ids by cell.
  node_remap_.resize(old_nodes);
  for (std::size_t i = 0; i < old_nodes; ++i)
    node_remap_[i] = node_sectors_[i] == kNoSector ? kNoNode : static_cast<std::uint32_t>(i);
  for (std::size_t m = 0; m < moved.size(); ++m) {
    const auto [base, cap] = moved_range[m];
    for (std::size_t i = base; i < base + cap; ++i) node_remap_[i] = kNoNode;
    const std::uint32_t s = moved[m].first;
    const std::vector<CellCoord>& before = moved[m].second;
    for (std::size_t i = 0; i < before.size(); ++i) {
      const std::uint32_t n = node_of(s, before[i]);
      if (n < node_base_[s] + sectors_[s].portals.size() && node_cells_[n] == before[i]) node_remap_[base + i] = n;
    }
  }
  // The room left by the last packing nearly used up by moved ranges and blocks: pack again
  // before a move has to reallocate (a copy of the whole edge array; ids change everywhere
  // and the remap follows). O(graph), once per ~(edges / 8 + kEdgeHeadroom) edges moved.
  if (edges_.capacity() - edges_.size() < kEdgeHeadroom / 2 || node_cells_.capacity() - node_cells_.size() < kNodeHeadroom / 2) {
    std::vector<std::uint32_t> before = std::move(node_remap_);
    pack();
    for (std::uint32_t& n : before) {
      if (n != kNoNode) n = node_remap_[n];  // n is in use (unused ids map to kNoNode above)
    }
    node_remap_ = std::move(before);
  }
  return updated_sectors_.size();
}

void SectorGraph::pack() {
  const std::size_t count = sectors_.size();
  // Old id -> new id: sector by sector, each sector's portals first in its range.
  node_remap_.assign(node_cells_.size(), kNoNode);
  std::size_t nodes = 0, edges = 0;
  for (std::size_t s = 0; s < count; ++s) {
    for (std::size_t i = 0; i < sectors_[s].portals.size(); ++i) node_remap_[node_base_[s] + i] = static_cast<std::uint32_t>(nodes + i);
    nodes += sectors_[s].portals.size();
    edges += edge_used_[s];
  }
  // Fresh buffers with the same room a whole build leaves (a packing must not keep grown ones).
  const std::size_t node_room = nodes + nodes / 8 + kNodeHeadroom;
  std::vector<CellCoord> cells;
  std::vector<std::uint32_t> sectors, ids, lens;
  std::vector<std::size_t> firsts;
  cells.reserve(node_room);
  sectors.reserve(node_room);
  ids.reserve(node_room);
  firsts.reserve(node_room);
  lens.reserve(node_room);
  std::vector<SectorEdge> packed;
  packed.reserve(edges + edges / 8 + kEdgeHeadroom);
  for (std::size_t s = 0; s < count; ++s) {
    const std::size_t k = sectors_[s].portals.size();
    const std::size_t old_edge_base = edge_base_[s];
    const std::size_t edge_base = packed.size();
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t n = node_base_[s] + i;
      cells.push_back(node_cells_[n]);
      sectors.push_back(static_cast<std::uint32_t>(s));
      ids.push_back(static_cast<std::uint32_t>(ids.size()));
      firsts.push_back(edge_base + (edge_first_[n] - old_edge_base));
      lens.push_back(edge_len_[n]);
    }
    for (std::size_t e = old_edge_base; e < old_edge_base + edge_used_[s]; ++e)
      packed.push_back({node_remap_[edges_[e].to], edges_[e].cost});
    node_base_[s] = cells.size() - k;
    node_cap_[s] = k;
    edge_base_[s] = edge_base;
    edge_cap_[s] = edge_used_[s];
  }
  node_cells_ = std::move(cells);
  node_sectors_ = std::move(sectors);
  node_ids_ = std::move(ids);
  edge_first_ = std::move(firsts);
  edge_len_ = std::move(lens);
  edges_ = std::move(packed);
  live_nodes_ = nodes;
  live_edges_ = edges;
}

}  // namespace swarmfield::sim
