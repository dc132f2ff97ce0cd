#include "swarmfield/server/spawn_point.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace swarmfield::server {

sim::Vec2 centre_most_walkable(const sim::GridMap& map) {
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  const sim::CellCoord mid{w / 2, h / 2};
  if (w <= 0 || h <= 0) return {};
  std::int64_t best_d2 = std::numeric_limits<std::int64_t>::max();
  sim::CellCoord best = mid;
  bool found = false;
  const std::int32_t max_ring = std::max(w, h);
  for (std::int32_t r = 0; r <= max_ring; ++r) {
    // Every cell of ring r is at least r away; once r*r exceeds the best, nothing closer remains.
    if (found && static_cast<std::int64_t>(r) * r > best_d2) break;
    for (std::int32_t y = mid.y - r; y <= mid.y + r; ++y) {
      const bool edge_row = (y == mid.y - r || y == mid.y + r);
      for (std::int32_t x = mid.x - r; x <= mid.x + r; x += (edge_row || r == 0) ? 1 : 2 * r) {
        if (!map.walkable(x, y)) continue;
        const std::int64_t dx = x - mid.x, dy = y - mid.y;
        const std::int64_t d2 = dx * dx + dy * dy;
        if (d2 < best_d2 || (d2 == best_d2 && (y < best.y || (y == best.y && x < best.x)))) {
          best_d2 = d2;
          best = {x, y};
          found = true;
        }
      }
    }
  }
  return map.cell_center(found ? best : mid);
}

namespace {

// Distance (cells) from the centre of `cell` to the nearest of `players` (world units).
float nearest_player_cells(const sim::GridMap& map, sim::CellCoord cell, std::span<const sim::Vec2> players) {
  const sim::Vec2 at = map.cell_center(cell);
  float best = std::numeric_limits<float>::infinity();
  for (const sim::Vec2 p : players) best = std::min(best, sim::length(p - at));
  return best / map.cell_size();
}

}  // namespace

sim::Vec2 player_spawn_point(const sim::GridMap& map, std::span<const sim::CellCoord> spawn_cells, sim::Vec2 centre,
                             std::span<const sim::Vec2> players) {
  // The map's spawn cells: the one farthest from its nearest player.
  float best_gap = -1.0f;
  sim::CellCoord best{};
  for (const sim::CellCoord c : spawn_cells) {
    if (!map.walkable(c.x, c.y)) continue;
    const float gap = nearest_player_cells(map, c, players);
    if (gap > best_gap) {
      best_gap = gap;
      best = c;
    }
  }
  if (best_gap >= 0.0f) return map.cell_center(best);
  // Round the centre: a breadth-first walk (4-neighbour) over the walkable cells of the square.
  const sim::CellCoord mid = map.world_to_cell(centre);
  if (!map.walkable(mid.x, mid.y)) return centre;
  constexpr int kSide = 2 * kSpawnRadiusCells + 1;
  bool seen[kSide][kSide] = {};
  std::vector<sim::CellCoord> queue{mid};
  seen[kSpawnRadiusCells][kSpawnRadiusCells] = true;
  float best_score = -1.0f;
  std::int64_t best_d2 = 0;
  best = mid;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const sim::CellCoord c = queue[i];
    const float score = std::min(nearest_player_cells(map, c, players), kSpawnSpacingCells);
    const std::int64_t dx = c.x - mid.x, dy = c.y - mid.y, d2 = dx * dx + dy * dy;
    if (score > best_score || (score == best_score && (d2 < best_d2 || (d2 == best_d2 && (c.y < best.y || (c.y == best.y && c.x < best.x)))))) {
      best_score = score;
      best_d2 = d2;
      best = c;
    }
    constexpr sim::CellCoord kSteps[4] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (const sim::CellCoord s : kSteps) {
      const sim::CellCoord n{c.x + s.x, c.y + s.y};
      const int ox = n.x - mid.x + kSpawnRadiusCells, oy = n.y - mid.y + kSpawnRadiusCells;
      if (ox < 0 || oy < 0 || ox >= kSide || oy >= kSide || seen[oy][ox] || !map.walkable(n.x, n.y)) continue;
      seen[oy][ox] = true;
      queue.push_back(n);
    }
  }
  return map.cell_center(best);
}

}  // namespace swarmfield::server
