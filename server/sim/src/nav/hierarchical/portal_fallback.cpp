// The portal fallback of the sector fields (hierarchical navigation, layer 4's stand-in): per
// occupied sector without a field, its portal targets with their route costs, cheapest first,
// made when agents arrive, refreshed after each route build, renumbered or forgotten when the
// graph changes, compacted when agents leave; steer() reads them per agent.
#include <algorithm>
#include <cmath>

#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "world_cell.hpp"

namespace swarmfield::sim {

using nav_detail::cell_at;

namespace {

constexpr std::uint32_t kInf = kUnreachable;

/// Octile distance between two cells, raw units (unit costs).
std::uint32_t octile(CellCoord a, CellCoord b) noexcept {
  const auto dx = static_cast<std::uint32_t>(std::abs(a.x - b.x));
  const auto dy = static_cast<std::uint32_t>(std::abs(a.y - b.y));
  const std::uint32_t lo = std::min(dx, dy), hi = std::max(dx, dy);
  return lo * kDiagonalStep + (hi - lo) * kOrthogonalStep;
}

/// The portal candidates of sector `s` in steer()'s order (after the goals in the sector): each
/// portal of the sector followed by the neighbour portals it crosses to, as node ids.
template <class Fn>
void for_each_portal_target(const SectorGraph& g, std::uint32_t s, Fn&& fn) {
  for (const std::uint32_t n : g.sector_nodes(s)) {
    fn(n);
    for (const SectorEdge& e : g.edges(n)) {
      if (g.node_sector(e.to) != s) fn(e.to);
    }
  }
}

}  // namespace

void SectorFields::graph_changed() noexcept {
  fallback_targets_.clear();
  fallback_nodes_.clear();
  std::fill(fallback_gen_.begin(), fallback_gen_.end(), kNoGeneration);
}

void SectorFields::graph_updated(std::span<const std::uint32_t> remap, std::span<const std::uint32_t> updated) {
  if (remap.empty() || graph_ == nullptr || fallback_gen_.size() != slot_of_.size()) {
    graph_changed();
    return;
  }
  const auto forget = [&](std::uint32_t s) {
    if (s < fallback_gen_.size()) fallback_gen_[s] = kNoGeneration;  // its entries: compact_fallback()
  };
  for (const std::uint32_t s : updated) {
    const auto sx = static_cast<std::int32_t>(s % static_cast<std::uint32_t>(sectors_x_));
    const auto sy = static_cast<std::int32_t>(s / static_cast<std::uint32_t>(sectors_x_));
    forget(s);
    if (sx > 0) forget(s - 1);
    if (sx + 1 < sectors_x_) forget(s + 1);
    if (sy > 0) forget(s - static_cast<std::uint32_t>(sectors_x_));
    if (sy + 1 < sectors_y_) forget(s + static_cast<std::uint32_t>(sectors_x_));
  }
  // The kept lists' node ids (dead entries too: cheaper than skipping them, never read).
  for (std::uint32_t& n : fallback_nodes_) n = n < remap.size() ? remap[n] : SectorGraph::kNoNode;
  for (std::uint32_t s = 0; s < fallback_gen_.size(); ++s) {
    if (fallback_gen_[s] == kNoGeneration) continue;
    const TargetRange range = fallback_range_[s];
    for (std::uint32_t k = range.begin; k < range.end; ++k) {
      if (fallback_nodes_[k] == SectorGraph::kNoNode) {  // a portal gone: not expected, but safe
        forget(s);
        break;
      }
    }
  }
}

void SectorFields::sort_fallback(TargetRange range) noexcept {
  // Insertion sort: a refresh after a goal moved shifts the costs by about the same amount, so
  // the list is nearly in order already (linear). Ties by cell: the order, and so steer()'s
  // pick among equally good targets, does not depend on the list's history.
  const auto before = [](const Target& a, const Target& b) {
    return a.cost != b.cost ? a.cost < b.cost : (a.cell.y != b.cell.y ? a.cell.y < b.cell.y : a.cell.x < b.cell.x);
  };
  for (std::uint32_t i = range.begin + 1; i < range.end; ++i) {
    const Target t = fallback_targets_[i];
    const std::uint32_t node = fallback_nodes_[i];
    std::uint32_t j = i;
    for (; j > range.begin && before(t, fallback_targets_[j - 1]); --j) {
      fallback_targets_[j] = fallback_targets_[j - 1];
      fallback_nodes_[j] = fallback_nodes_[j - 1];
    }
    fallback_targets_[j] = t;
    fallback_nodes_[j] = node;
  }
}

void SectorFields::compact_fallback() {
  std::size_t kept = 0;
  for (const std::uint32_t s : occupied_) {
    if (fallback_gen_[s] != kNoGeneration) kept += fallback_range_[s].end - fallback_range_[s].begin;
  }
  if (fallback_targets_.size() <= 2 * kept + fallback_slack_) return;
  compact_order_.clear();
  for (const std::uint32_t s : occupied_) {
    if (fallback_gen_[s] != kNoGeneration) compact_order_.push_back(s);
  }
  // Lists lie in the order they were made: moving each down in that order never overwrites a
  // list not yet moved.
  std::sort(compact_order_.begin(), compact_order_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return fallback_range_[a].begin < fallback_range_[b].begin; });
  for (std::uint32_t s = 0; s < fallback_gen_.size(); ++s) {
    if (agents_[s] == 0) fallback_gen_[s] = kNoGeneration;  // made again if agents come back
  }
  std::uint32_t out = 0;
  for (const std::uint32_t s : compact_order_) {
    const TargetRange r = fallback_range_[s];
    std::copy(fallback_targets_.begin() + r.begin, fallback_targets_.begin() + r.end, fallback_targets_.begin() + out);
    std::copy(fallback_nodes_.begin() + r.begin, fallback_nodes_.begin() + r.end, fallback_nodes_.begin() + out);
    fallback_range_[s] = {out, out + (r.end - r.begin)};
    out += r.end - r.begin;
  }
  fallback_targets_.resize(out);
  fallback_nodes_.resize(out);
}

void SectorFields::make_fallback(std::uint32_t s) {
  const auto begin = static_cast<std::uint32_t>(fallback_targets_.size());
  for_each_portal_target(*graph_, s, [&](std::uint32_t n) {
    fallback_targets_.push_back({graph_->node_cell(n), routes_->node_cost(n)});
    fallback_nodes_.push_back(n);
  });
  fallback_range_[s] = {begin, static_cast<std::uint32_t>(fallback_targets_.size())};
  sort_fallback(fallback_range_[s]);
  fallback_gen_[s] = generation_;
  ++fallback_lists_made_;
}

void SectorFields::refresh_fallback() {
  // Portal lists for the occupied sectors without a field: a new one at once (cells and current
  // costs), out-of-date costs refreshed in place up to refresh_entries_, going round
  // occupied_ from where the last refresh stopped.
  compact_fallback();
  std::size_t refresh_left = refresh_entries_;
  const std::size_t occupied = occupied_.size();
  const std::size_t first = occupied > 0 ? refresh_cursor_ % occupied : 0;
  for (std::size_t i = 0; i < occupied; ++i) {
    const std::size_t at = first + i < occupied ? first + i : first + i - occupied;
    const std::uint32_t s = occupied_[at];
    if (slot_of_[s] != kNoField || fallback_gen_[s] == generation_) continue;
    if (fallback_gen_[s] == kNoGeneration) {
      make_fallback(s);
      continue;
    }
    if (refresh_left == 0) continue;
    const TargetRange range = fallback_range_[s];
    for (std::uint32_t k = range.begin; k < range.end; ++k) {
      fallback_targets_[k].cost = routes_->node_cost(fallback_nodes_[k]);
    }
    sort_fallback(range);
    fallback_gen_[s] = generation_;
    refresh_left -= std::min<std::size_t>(refresh_left, range.end - range.begin);
    refresh_cursor_ = at + 1;
  }
}

SectorFields::Steer SectorFields::steer(const GridMap& map, Vec2 p) const noexcept {
  const CellCoord c = cell_at(map, p);
  if (graph_ == nullptr || !map.walkable(c)) return {};
  SectorGraph::Rect r{};
  if (field_of(c, r) != nullptr) return {direction_vector(direction(c)), true};
  // No field yet: the cell that looks cheapest from here, in a straight line.
  const SectorGraph& g = *graph_;
  const std::uint32_t s = g.sector_of(c);
  std::uint64_t best = kInf;
  CellCoord target = c;
  bool at_goal = false;
  const auto consider = [&](CellCoord t, std::uint32_t cost) {
    // Not the agent's own cell: on a portal cell, head for the next one (across the border)
    // instead of standing still on a target already reached; on a goal, stay.
    if (t == c) at_goal = at_goal || cost == 0;
    if (cost == kInf || t == c) return;
    const std::uint64_t v = std::uint64_t{cost} + octile(c, t);
    if (v < best) {
      best = v;
      target = t;
    }
  };
  const auto goals_here = std::lower_bound(goal_sectors_.begin(), goal_sectors_.end(), s,
                                           [](const GoalSector& e, std::uint32_t v) { return e.sector < v; });
  for (auto it = goals_here; it != goal_sectors_.end() && it->sector == s; ++it) consider(it->cell, 0u);
  if (s < fallback_gen_.size() && fallback_gen_[s] != kNoGeneration) {
    // update() made the list (costs maybe a generation old), cheapest first: once a target's
    // cost alone reaches the best so far, no later one can beat it (the octile part is >= 0).
    const TargetRange range = fallback_range_[s];
    for (std::uint32_t k = range.begin; k < range.end && fallback_targets_[k].cost < best; ++k) {
      consider(fallback_targets_[k].cell, fallback_targets_[k].cost);
    }
  } else {
    for_each_portal_target(g, s, [&](std::uint32_t n) { consider(g.node_cell(n), routes_->node_cost(n)); });
  }
  if (at_goal || best == kInf) return {};
  const Vec2 d = map.cell_center(target) - p;
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (!(len > 1e-6f)) return {};
  return {{d.x / len, d.y / len}, false};
}

}  // namespace swarmfield::sim
