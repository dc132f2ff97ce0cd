#pragma once
// The seeded search of a sector field build: Dijkstra with a bucket queue over a sector and
// its one-cell ring, seeded with arbitrary values (portal route costs).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace swarmfield::sim {

/// Multi-source Dijkstra over a small local grid (a sector plus its ring, see SectorFields)
/// whose seeds carry arbitrary values (route costs, possibly millions of units apart), with a
/// bucket queue instead of a binary heap (Dial, "Algorithm 360: Shortest-path forest with
/// topological ordering", CACM 1969; buckets of width kOrthogonalStep, the smallest step, so
/// every cell of the lowest non-empty bucket is final and a bucket drains in any order, as
/// IntegrationField's wavefront). The seeds are sorted and each enters the queue when the
/// frontier reaches its bucket; an empty queue jumps to the next seed's bucket, so distant
/// seeds cost nothing in between. Live buckets lie within ceil(max step / kOrthogonalStep) of
/// the one draining: 2 with unit costs (steps 985 and 1393), 361 with costs up to 255
/// (255 * 1393 / 985 = 360.6): a ring of 4 or 512 buckets.
///
/// Values equal a binary-heap Dijkstra's bit for bit (shortest path costs, sums saturated at
/// kUnreachable - 1: the same fixed point whatever the order; sector_search_test checks it
/// against a copy of the heap version on random grids and seeds). Costs must be 1..254
/// (GridMap's passable range; a cost of 0 would break the bucket order, as in
/// IntegrationField). Cost: O(cells * 8 + seeds log seeds + value span / kOrthogonalStep
/// while the queue is non-empty). No allocation once warm (the buckets keep their capacity).
class SectorSearch {
 public:
  /// Cell kinds of the local grid (`open`).
  static constexpr std::uint8_t kBlockedCell = 0;  // never entered, blocks diagonal steps past it
  static constexpr std::uint8_t kSeedCell = 1;     // a ring cell: takes its seed value, never relaxed
  static constexpr std::uint8_t kInnerCell = 2;    // a walkable cell of the sector: relaxed

  /// Fills `values` (lw * lh, row-major local cells) with the least seed value + path cost to
  /// each cell, kUnreachable where none reaches. `open`: lw * lh cell kinds; every cell on the
  /// grid's outer ring must be kBlockedCell or kSeedCell (only inner cells are relaxed, and
  /// their 8 neighbours lie on the grid). `step`: each inner cell's cost (1..254; read for inner cells
  /// only): a step into it costs step * kOrthogonalStep, diagonally step * kDiagonalStep, and
  /// a diagonal step needs both orthogonal cells it passes not blocked (no corner cutting).
  /// `unit_cost`: every inner cell costs 1 (step not read). `seeds`: (value << 32 | local
  /// cell), any order, duplicates allowed (the least counts), values of kUnreachable ignored;
  /// sorted in place. Every cell reached relaxes its inner neighbours, whatever its kind.
  void run(std::size_t lw, std::size_t lh, const std::uint8_t* open, const std::uint8_t* step, bool unit_cost,
           std::vector<std::uint64_t>& seeds, std::uint32_t* values);

  /// Bytes held by the bucket queue (capacity).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  static constexpr std::uint32_t kGeneralBuckets = 512;
  template <bool kUnitCost, bool kSaturate>
  void drain(std::size_t lw, std::size_t cells, const std::uint8_t* open, const std::uint8_t* step,
             const std::vector<std::uint64_t>& seeds, std::uint32_t* values);
  std::vector<std::vector<std::uint32_t>> buckets_;  // bucket b in buckets_[b & mask]: local cells
};

}  // namespace swarmfield::sim
