#pragma once
// Hierarchical navigation, first layer: the map cut into square sectors, the portals where
// sectors meet, and the graph of portal cells with exact step costs (see docs in
// server/sim/src/nav/hierarchical/HIERARCHICAL.md).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim {

/// One directed edge of the portal graph, in the integration field's convention ("outward"
/// from the goals): a path that reaches `to` from the node holding the edge costs `cost` more
/// (raw units, 1/kOrthogonalStep of a cost unit; each cell entered is charged its cost).
struct SectorEdge {
  std::uint32_t to;
  std::uint32_t cost;
};

/// Sectors, portals and the portal graph of HPA* (Botea, Mueller & Schaeffer, "Near Optimal
/// Hierarchical Path-Finding", JGD 2004), as the flow field tiles of Emerson ("Crowd
/// Pathfinding and Steering Using Flow Field Tiles", Game AI Pro, 2013) use it:
/// - sectors: side x side cells (the last column / row of sectors may be narrower);
/// - entrances: maximal runs of border cell pairs (a cell on each side, both walkable; pairs of
///   one cost, so a cheap lane of a wide road is an entrance of its own) along the border of
///   two orthogonally adjacent sectors;
/// - portals (the graph's nodes): on each entrance, the cell pairs at both ends and every
///   `spacing` cells between (a run shorter than 3 cells: its middle pair), one node per cell of
///   a pair, so each sector holds the portal cells on its four sides (a cell on two borders is
///   one node);
/// - edges: across a border, the orthogonal step between the two cells of a pair (cost of the
///   cell entered x kOrthogonalStep, each way); inside a sector, from each portal to each other
///   portal it reaches without leaving the sector, the exact cost of that in-sector path (the
///   integration field of the sector alone, built from the first portal).
/// Every edge is a real path of the map (no corner cutting), so graph distances are never
/// below the map's true costs; they equal them when a best path crosses borders at portals.
/// Updating after cost changes rebuilds only the sectors touched and their neighbours.
class SectorGraph {
 public:
  static constexpr std::int32_t kDefaultSectorSide = 64;
  static constexpr std::int32_t kDefaultPortalSpacing = 16;

  /// The whole graph of `map`. `sector_side` >= 4 cells, `spacing` >= 1 cells (clamped).
  void build(const GridMap& map, std::int32_t sector_side = kDefaultSectorSide,
             std::int32_t spacing = kDefaultPortalSpacing);
  /// After costs changed at `cells` (map cells, e.g. GridMap::changes_since(); off-map ones are
  /// ignored) on the map the graph was built for: recomputes the entrances on the borders of the
  /// sectors holding them, the in-sector costs of those sectors and of the neighbours whose
  /// portals moved (updated_sectors()), and rewrites the edge blocks of those and their four
  /// neighbours. Ids of the sectors whose portals moved may change (node_remap()); the others
  /// keep theirs unless the graph is packed again (rare: see kEdgeHeadroom; then pack()).
  /// Cost: the recomputed sectors (~1 ms each on a 64-cell city sector) plus O(node_count())
  /// for the remap. Returns the number of sectors recomputed. A map of another size gets a
  /// whole build.
  std::size_t update(const GridMap& map, std::span<const CellCoord> cells);
  /// Packs the node ids and edge blocks: no unused ids or edge slots, each sector's portals and
  /// edges in sector order, room reserved for ranges and blocks that move in later updates (as a
  /// whole build leaves). Edges, costs and portal cells are kept; node ids change, and
  /// node_remap() then maps each id before to its id now (kNoNode for an unused one). Copies the
  /// node and edge arrays once: O(node_count() + edges), no map access, no sector recomputed
  /// (update() calls it when the room is nearly used up).
  void pack();
  /// After update() or pack(): for each node id before it, the node id now (kNoNode for a portal that is
  /// gone), so that per-node data (route costs) can follow; empty after build() or a whole build.
  [[nodiscard]] std::span<const std::uint32_t> node_remap() const noexcept { return node_remap_; }
  /// After update(): the sectors whose in-sector edges were recomputed (ascending; the touched
  /// sectors and the neighbours whose portals moved): their sector fields are out of date.
  [[nodiscard]] std::span<const std::uint32_t> updated_sectors() const noexcept { return updated_sectors_; }
  static constexpr std::uint32_t kNoNode = 0xFFFFFFFFu;

  [[nodiscard]] std::int32_t sector_side() const noexcept { return side_; }
  [[nodiscard]] std::int32_t sectors_x() const noexcept { return sectors_x_; }
  [[nodiscard]] std::int32_t sectors_y() const noexcept { return sectors_y_; }
  [[nodiscard]] std::size_t sector_count() const noexcept { return sectors_.size(); }
  /// Sector holding map cell `c` (which must be on the map).
  [[nodiscard]] std::uint32_t sector_of(CellCoord c) const noexcept {
    return static_cast<std::uint32_t>((c.y / side_) * sectors_x_ + c.x / side_);
  }
  /// Cell rectangle of sector `s`: [x0, x0 + w) x [y0, y0 + h).
  struct Rect {
    std::int32_t x0, y0, w, h;
  };
  [[nodiscard]] Rect sector_rect(std::uint32_t s) const noexcept;

  /// Node ids are below node_count(). A whole build numbers the portals 0..portal_count() - 1,
  /// sector by sector; after update() some ids may be unused (a sector whose portals outgrew its
  /// id range took a new one at the end, and ranges keep room to grow): an unused id belongs to
  /// no sector (node_sector() kNoSector), has no edges and node_cell() {-1, -1}.
  [[nodiscard]] std::size_t node_count() const noexcept { return node_cells_.size(); }
  /// Nodes in use (portal cells).
  [[nodiscard]] std::size_t portal_count() const noexcept { return live_nodes_; }
  [[nodiscard]] CellCoord node_cell(std::uint32_t n) const noexcept { return node_cells_[n]; }
  [[nodiscard]] std::uint32_t node_sector(std::uint32_t n) const noexcept { return node_sectors_[n]; }
  static constexpr std::uint32_t kNoSector = 0xFFFFFFFFu;
  /// Nodes of sector `s` (consecutive ids, in the row-major order of their cells).
  [[nodiscard]] std::span<const std::uint32_t> sector_nodes(std::uint32_t s) const noexcept {
    return {node_ids_.data() + node_base_[s], sectors_[s].portals.size()};
  }
  /// Outward edges of node `n`: in-sector edges (to the sector's other portals in id order),
  /// then the steps across borders.
  [[nodiscard]] std::span<const SectorEdge> edges(std::uint32_t n) const noexcept {
    return {edges_.data() + edge_first_[n], edge_len_[n]};
  }
  /// Edges in use.
  [[nodiscard]] std::size_t edge_count() const noexcept { return live_edges_; }
  /// Bytes held (capacity) by the graph: sectors' portals and in-sector cost matrices, the
  /// assembled nodes and edges, scratch.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  /// What one sector keeps: its portal cells (sorted row-major) and the costs between them
  /// (k x k, row = from, kUnreachable where a portal does not reach another inside the sector).
  struct Sector {
    std::vector<CellCoord> portals;
    std::vector<std::uint32_t> costs;
  };
  void compute_border(const GridMap& map, std::uint32_t s, bool east);
  void collect_portals(std::uint32_t s);
  void compute_costs(const GridMap& map, std::uint32_t s);
  /// Gives sector `s`'s portals ids: its range when they fit, else a new range at the end with
  /// `slack` ids to spare (the old range becomes unused), and writes their cells.
  void place_nodes(std::uint32_t s, std::size_t slack);
  /// Writes the out-edges of sector `s`'s nodes into its edge block (a new block at the end when
  /// they do not fit, with room for `slack` + a quarter more unless `slack` is 0; the old block
  /// becomes unused).
  void write_edges(const GridMap& map, std::uint32_t s, std::size_t slack);
  /// Ids and edge blocks for every sector, packed (no unused ids or edges).
  void assemble(const GridMap& map);
  [[nodiscard]] std::uint32_t node_of(std::uint32_t s, CellCoord c) const noexcept;

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::int32_t side_ = kDefaultSectorSide;
  std::int32_t spacing_ = kDefaultPortalSpacing;
  std::int32_t sectors_x_ = 0;
  std::int32_t sectors_y_ = 0;
  std::vector<Sector> sectors_;
  // Per sector: offsets (along the border, from the sector's first row / column) of the portal
  // pairs on its east border (with sector + 1) and on its south border (with sector + sectors_x_).
  std::vector<std::vector<std::int32_t>> east_;
  std::vector<std::vector<std::int32_t>> south_;
  // Spare ids and edge slots a packing leaves (plus an eighth of those in use) for ranges and
  // blocks that move in updates; update() packs again when less than half of this is left.
  static constexpr std::size_t kNodeHeadroom = 4096;
  static constexpr std::size_t kEdgeHeadroom = 65536;
  // A block moved by an update gets this many edge slots to spare plus a quarter of its edges.
  static constexpr std::size_t kBlockSlack = 16;
  // The assembled graph. Sector s owns node ids [node_base_[s], node_base_[s] + node_cap_[s])
  // (its portals first) and edge slots [edge_base_[s], edge_base_[s] + edge_cap_[s]) (its nodes'
  // out-edges, edge_used_[s] of them), so that an update rewrites only the sectors it touches and
  // their neighbours instead of renumbering the whole graph (O(graph): ~1.5 ms of a 2.9 ms change
  // on the 1024 city, 550 ms of 552 ms at 8192). Moved ranges and blocks go to the end, into room
  // reserved by the last packing (pack(), or assemble() in a whole build).
  std::vector<CellCoord> node_cells_;
  std::vector<std::uint32_t> node_sectors_;
  std::vector<std::uint32_t> node_ids_;   // 0..n-1 (sector_nodes() spans into it)
  std::vector<std::size_t> edge_first_;   // per node: first edge
  std::vector<std::uint32_t> edge_len_;   // per node: edge count
  std::vector<std::size_t> node_base_, node_cap_;               // per sector
  std::vector<std::size_t> edge_base_, edge_cap_, edge_used_;   // per sector
  std::vector<SectorEdge> edges_;
  std::size_t live_nodes_ = 0, live_edges_ = 0;
  std::vector<std::pair<std::uint32_t, SectorEdge>> cross_scratch_;  // write_edges(): (local node, edge)
  std::vector<std::uint32_t> node_remap_;      // update(): old node id -> new
  std::vector<std::uint32_t> updated_sectors_;  // update(): sectors recomputed
  IntegrationField scratch_field_;           // in-sector fields (reused)
  GridMap scratch_map_;                      // the sector alone
};

}  // namespace swarmfield::sim
