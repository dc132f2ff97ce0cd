#pragma once
// Baseline for "one field vs per-agent paths": a single-query A* on the cost grid.
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::bench {

/// Point-to-point A* (Hart, Nilsson & Raphael 1968) on a GridMap, as a game would run it once
/// per agent: 8-connected, a step into cell n costs cost(n) orthogonally and cost(n) * sqrt(2)
/// diagonally, no corner cutting (same rules as sim::IntegrationField), float costs, octile
/// heuristic scaled by the map's cheapest walkable cost (admissible and consistent), binary
/// heap (std::priority_queue) with lazy deletion, ties broken by cell index.
///
/// Per-query reset is O(1): each cell's g value and closed flag carry the generation (query
/// number) that wrote them, and a cell whose stamp is not the current generation counts as
/// unvisited, so a query touches only the cells it expands. Buffers are allocated on the first
/// query on a map and reused afterwards.
///
/// Path direction: the cost of a path is the sum of the costs of the cells it enters, so a
/// start -> goal path costs what sim::IntegrationField reports for the start only on unit-cost
/// maps (where both directions are the same); the benchmarks check this on unit-cost maps.
class GridAStar {
 public:
  struct Result {
    bool found = false;
    float cost = 0.0f;            ///< cost units (cells on a unit-cost map)
    std::size_t expanded = 0;     ///< cells closed
    std::size_t path_cells = 0;   ///< cells on the path, start and goal included
  };

  /// Shortest path from `start` to `goal` (cells). Not found when either is blocked or out of
  /// bounds or no path exists. The path (start first) is left in path().
  Result find_path(const sim::GridMap& map, sim::CellCoord start, sim::CellCoord goal);
  /// Cell indices (y * width + x) of the last path found, start first.
  [[nodiscard]] const std::vector<std::int32_t>& path() const noexcept { return path_; }

 private:
  void prepare(const sim::GridMap& map);

  using Entry = std::pair<float, std::int32_t>;  // (f = g + h, cell index)
  struct MinHeap : std::priority_queue<Entry, std::vector<Entry>, std::greater<>> {
    void clear() noexcept { c.clear(); }
  };

  const std::uint8_t* map_costs_ = nullptr;  // which map the buffers were sized for
  std::int32_t width_ = 0, height_ = 0;
  float min_cost_ = 1.0f;
  std::uint32_t generation_ = 0;
  std::vector<float> g_;
  std::vector<std::int32_t> parent_;
  std::vector<std::uint32_t> seen_;    // == generation_: g_ and parent_ are valid this query
  std::vector<std::uint32_t> closed_;  // == generation_: expanded this query
  MinHeap open_;
  std::vector<std::int32_t> path_;
};

}  // namespace swarmfield::bench
