// Single-query A* with generation-stamped buffers (baseline; see the header).
#include "baselines/grid_astar.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace swarmfield::bench {

namespace {
constexpr float kSqrt2 = 1.41421356237309505f;
// E SE S SW W NW N NE; even = orthogonal.
constexpr std::array<int, 8> kDx = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr std::array<int, 8> kDy = {0, 1, 1, 1, 0, -1, -1, -1};
}  // namespace

void GridAStar::prepare(const sim::GridMap& map) {
  if (map_costs_ == map.costs().data() && width_ == map.width() && height_ == map.height()) return;
  map_costs_ = map.costs().data();
  width_ = map.width();
  height_ = map.height();
  const std::size_t n = map.cell_count();
  g_.assign(n, 0.0f);
  parent_.assign(n, -1);
  seen_.assign(n, 0);
  closed_.assign(n, 0);
  generation_ = 0;
  std::uint8_t lowest = sim::kBlockedCost;
  for (const std::uint8_t c : map.costs()) lowest = std::min(lowest, c);
  min_cost_ = lowest == sim::kBlockedCost ? 1.0f : static_cast<float>(lowest);
}

GridAStar::Result GridAStar::find_path(const sim::GridMap& map, sim::CellCoord start, sim::CellCoord goal) {
  Result result;
  path_.clear();
  if (!map.walkable(start) || !map.walkable(goal)) return result;
  prepare(map);
  if (++generation_ == 0) {  // wrapped after 2^32 queries: stamps would be ambiguous, reset
    std::fill(seen_.begin(), seen_.end(), 0u);
    std::fill(closed_.begin(), closed_.end(), 0u);
    generation_ = 1;
  }
  const std::uint32_t gen = generation_;
  const auto heuristic = [&](std::int32_t x, std::int32_t y) {
    const auto dx = static_cast<float>(std::abs(x - goal.x)), dy = static_cast<float>(std::abs(y - goal.y));
    return min_cost_ * (dx + dy + (kSqrt2 - 2.0f) * std::min(dx, dy));  // octile distance
  };
  const auto s = static_cast<std::int32_t>(map.index(start.x, start.y));
  const auto t = static_cast<std::int32_t>(map.index(goal.x, goal.y));
  open_.clear();
  g_[static_cast<std::size_t>(s)] = 0.0f;
  parent_[static_cast<std::size_t>(s)] = -1;
  seen_[static_cast<std::size_t>(s)] = gen;
  open_.push({heuristic(start.x, start.y), s});
  while (!open_.empty()) {
    const std::int32_t u = open_.top().second;
    open_.pop();
    const auto ui = static_cast<std::size_t>(u);
    if (closed_[ui] == gen) continue;  // stale entry (lazy deletion)
    closed_[ui] = gen;
    ++result.expanded;
    if (u == t) break;
    const float gu = g_[ui];
    const std::int32_t ux = u % width_, uy = u / width_;
    bool free[4] = {false, false, false, false};  // E S W N walkable
    for (int k = 0; k < 8; k += 2) free[k / 2] = map.walkable(ux + kDx[static_cast<std::size_t>(k)], uy + kDy[static_cast<std::size_t>(k)]);
    for (int k = 0; k < 8; ++k) {
      const bool diagonal = (k & 1) != 0;
      if (diagonal && !(free[k / 2] && free[((k / 2) + 1) & 3])) continue;  // no corner cutting
      const std::int32_t nx = ux + kDx[static_cast<std::size_t>(k)], ny = uy + kDy[static_cast<std::size_t>(k)];
      if (!map.walkable(nx, ny)) continue;
      const std::size_t n = map.index(nx, ny);
      if (closed_[n] == gen) continue;
      const float ng = gu + static_cast<float>(map.cost(nx, ny)) * (diagonal ? kSqrt2 : 1.0f);
      if (seen_[n] == gen && ng >= g_[n]) continue;
      seen_[n] = gen;
      g_[n] = ng;
      parent_[n] = u;
      open_.push({ng + heuristic(nx, ny), static_cast<std::int32_t>(n)});
    }
  }
  const auto ti = static_cast<std::size_t>(t);
  if (closed_[ti] != gen) return result;
  result.found = true;
  result.cost = g_[ti];
  for (std::int32_t c = t; c != -1; c = parent_[static_cast<std::size_t>(c)]) path_.push_back(c);
  std::reverse(path_.begin(), path_.end());
  result.path_cells = path_.size();
  return result;
}

}  // namespace swarmfield::bench
