#pragma once
// Hierarchical navigation, layers 3 and 4: per-sector integration and flow fields built on
// demand for the sectors agents occupy, seeded with the portal route costs, cached, dropped when
// unused, and built under a per-tick work budget (see server/sim/src/nav/hierarchical/HIERARCHICAL.md).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_search.hpp"
#include "swarmfield/sim/prefetch.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Flow field tiles (Emerson, "Crowd Pathfinding and Steering Using Flow Field Tiles", Game AI
/// Pro 2013): a sector's field is the integration field of the sector's cells plus a one-cell
/// ring around it, where the ring is blocked except for the portal cells of neighbouring
/// sectors that the sector's portals step to (the graph's crossing edges). Seeds: every portal
/// of the sector and every such neighbour portal at its route cost (PortalRoutes::node_cost),
/// and the goals inside the sector at 0. Since route costs are distances over the graph, which
/// holds the exact in-sector costs between portals, the seeded values are consistent across
/// sectors: a cell's flow leads downhill to a portal, over the border to the neighbour portal
/// it was seeded from, and on through the next sector's field to a goal. Values are never below
/// the map's true costs (every step is a real step of the map); on street maps within a few
/// per cent of them (HIERARCHICAL.md has the measured ratios).
///
/// Use per tick: begin_tick(); note_agent() for each agent (its cell); update(map, budget)
/// builds the fields of occupied sectors that have none or one for older routes, most agents
/// first, for about `budget` work units; then direction() / steer() per agent. After a route
/// change (a goal moved, the map changed: rebuild the SectorGraph / PortalRoutes, then call
/// set_routes()), cached fields stay readable until rebuilt: agents follow the old routes
/// meanwhile (a goal that moved by one cell changes every cost by at most one step). A sector
/// without any field steers toward its cheapest portal (steer(): straight line, for the tick or
/// two until its field is built). Fields of sectors no agent occupied for keep_ticks() ticks are
/// dropped, and at most max_fields() are kept (the least recently occupied go first).
///
/// Memory: per kept field of a 64 x 64 sector, 64 x 64 directions (1 byte), plus 66 x 66
/// values (4 bytes) when kept (set_keep_values(); ~21 KiB in all). Deterministic (no clock is read; same calls give the same fields and
/// counters). No allocation once warm (buffers of dropped fields are reused).
class SectorFields {
 public:
  /// Ticks a field is kept after the last tick an agent was in its sector (~3 s at 30 Hz).
  static constexpr std::uint32_t kDefaultKeepTicks = 90;
  /// Occupied sectors without a field rank by agents + ticks waited / kAgingTicks, so a sector
  /// with one agent is built within a bounded time while busier ones keep arriving (by agents
  /// alone, sparse sectors of an 8192 map waited minutes with their agents on the fallback).
  static constexpr std::uint64_t kAgingTicks = 4;
  /// Fields kept at most: every sector of an 8192 x 8192 map (a crowd spread over the whole map
  /// occupies most): 64 MiB of 64 x 64 sector fields without values, ~340 MiB with.
  static constexpr std::size_t kDefaultMaxFields = 16384;
  /// Work units charged per cell of a sector build (the cell ring included), from the cost of
  /// a build against that of a work unit measured in the same run (2026-12-02, 2-core VM at
  /// load 8-10, CPU time, medians of 5: bench hier/sector_build and field/nav_rebuild/plain):
  /// a build (SectorSearch's bucket queue and the flow pass, 64 x 64 sectors, routes fixed) takes
  /// 10.8-13.3 ns a cell (Boston_0_1024 tiled 4 x 4, unit costs: 13.3; city 1024, costs 1-3:
  /// 10.8; 50-58 us a sector), a unit of NavigationFields' rebuild 3.1-3.5 ns (Boston_0_1024
  /// 3.5, Paris_1_1024 3.1): ~3-4 units a cell. (The binary-heap build before took 31-45 ns a
  /// cell, ~12 units, while charged 4: the 4 dated from a whole-map search at 6-9 ns a unit,
  /// since made 2x faster by its sweeps; a sector build then cost ~3x its charge in time.)
  static constexpr std::uint64_t kWorkUnitsPerCell = 3;

  /// Binds the graph and routes (not owned: both must outlive this object and stay as they are
  /// until the next set_routes()). Every cached field becomes out of date (kept, readable, and
  /// rebuilt when its sector is next occupied); a graph with another sector layout drops them.
  void set_routes(const SectorGraph& graph, const PortalRoutes& routes);
  /// Starts a tick: clears the occupancy of the last one.
  void begin_tick();
  /// Counts an agent in map cell `c` (off-map cells are ignored) for this tick. Inline: the
  /// World calls it for every agent every tick.
  void note_agent(CellCoord c) {
    if (c.x < 0 || c.y < 0 || c.x >= width_ || c.y >= height_) return;  // also before set_routes()
    const std::uint32_t s = sector_index(c.x, c.y);
    if (agents_[s]++ == 0) occupied_.push_back(s);
  }
  /// Builds the fields of this tick's occupied sectors that have none or an out-of-date one,
  /// most agents first, until about `budget` work units are spent (each build charges
  /// kWorkUnitsPerCell per cell; the last may overshoot by one build); 0 = all of them. Then
  /// drops the fields past keep_ticks(). Returns the work units spent. `map` must be the map the
  /// graph was built for.
  std::uint64_t update(const GridMap& map, std::uint64_t budget);
  /// Builds (or rebuilds) the field of sector `s` now, whatever the occupancy or the cap.
  void build_sector(const GridMap& map, std::uint32_t s);

  /// Drops sector `s`'s field if it has one (its cells or portals changed: its directions may
  /// lead into a new wall); agents there steer to portals until it is rebuilt.
  void drop_sector(std::uint32_t s);
  /// The bound graph's portals changed (SectorGraph::update() or build(): node ids renumbered):
  /// forgets the portal lists of the fallback, made again from the graph by the next update().
  void graph_changed() noexcept;
  /// The bound graph followed a map change (SectorGraph::update(): `remap` its node_remap(),
  /// `updated` its updated_sectors()): the portal lists of the updated sectors and of their four
  /// neighbours (whose lists hold portals across the shared border) are made again by the next
  /// update(); every other list keeps its targets and costs, its node ids renumbered. A run-time
  /// blocker then costs a few lists instead of every occupied sector's (~15 ms at 8192 x 8192).
  /// An empty `remap` (no update): graph_changed().
  void graph_updated(std::span<const std::uint32_t> remap, std::span<const std::uint32_t> updated);
  /// Portal lists made since construction (make_fallback: a new sector, or after a graph change),
  /// for tests and tools.
  [[nodiscard]] std::uint64_t fallback_lists_made() const noexcept { return fallback_lists_made_; }
  /// Entries the portal lists hold (all sectors'); update() moves the lists of unoccupied
  /// sectors out once they hold more than half and `slack` entries (default 65536; tests set less).
  [[nodiscard]] std::size_t fallback_entries() const noexcept { return fallback_targets_.size(); }
  void set_fallback_slack(std::size_t entries) noexcept { fallback_slack_ = entries; }
  /// Fallback list entries update() refreshes a tick at most after new routes (about 0.2 ms;
  /// an 8192 map's occupied sectors hold ~600,000).
  static constexpr std::size_t kDefaultFallbackRefreshEntries = 65536;
  void set_fallback_refresh_entries(std::size_t entries) noexcept { refresh_entries_ = entries; }
  /// True when sector `s` has a field (current or from older routes).
  [[nodiscard]] bool has_field(std::uint32_t s) const noexcept;
  /// True when sector `s` has a field for the current routes.
  [[nodiscard]] bool field_current(std::uint32_t s) const noexcept;
  /// Cost to the nearest goal (raw units, as IntegrationField::raw()) of map cell `c` in its
  /// sector's field; kUnreachable when blocked, unreached, or the sector has no field. Without
  /// kept values (set_keep_values(false)): 0 on goal cells, kUnreachable elsewhere.
  [[nodiscard]] std::uint32_t value(CellCoord c) const noexcept;
  /// Flow direction of map cell `c` (FlowField's rules: lowest legal neighbour, no corner
  /// cutting, orthogonal first on ties); kNone for goals, blocked, unreached cells, and sectors
  /// without a field.
  [[nodiscard]] FlowDirection direction(CellCoord c) const noexcept;
  /// Desired direction (unit vector, world axes) of an agent at world position `p` on `map`:
  /// its cell's flow direction when its sector has a field (`from_field` true); else toward the
  /// centre of the cell that looks cheapest from here (a goal in the sector, a portal of the
  /// sector or a neighbour portal it steps to: route cost + octile distance); {0, 0} when
  /// nothing reaches the cell.
  struct Steer {
    Vec2 direction;
    bool from_field = false;
  };
  [[nodiscard]] Steer steer(const GridMap& map, Vec2 p) const noexcept;

  /// What the crowd's steering reads (NavigationSet::sample() in hierarchical mode), world units:
  /// - p's cell blocked: kNoRoute, the blend below (possibly {0, 0});
  /// - its sector without a field: steer()'s straight line, kFollowFlow (kNoRoute if none);
  /// - a goal cell: straight at the nearest goal position in `goals` inside the cell
  ///   (kGoalInSight, goal index set; kAtGoal within kAtGoalCells);
  /// - unreached: kNoRoute with the blend; else kFollowFlow with the blend: sample_flow()'s
  ///   bilinear blend of the four cell-centre directions round p, each from its own sector's
  ///   field (cells of sectors without a field and samples diagonal across a blocked corner
  ///   skipped), falling back to p's cell's direction. O(1), no allocation.
  [[nodiscard]] NavSample sample(const GridMap& map, std::span<const Vec2> goals, Vec2 p) const noexcept;

  /// A hint, no effect on any result: starts loading the direction codes sample() reads round
  /// map cell (x, y) (its row and the ones above and below: the bilinear blend's square), or, for
  /// a sector without a field, its fallback list.
  void prefetch(std::int32_t x, std::int32_t y) const noexcept {
    if (static_cast<std::uint32_t>(x) >= static_cast<std::uint32_t>(width_) ||
        static_cast<std::uint32_t>(y) >= static_cast<std::uint32_t>(height_)) {
      return;
    }
    const std::uint32_t s = sector_index(x, y);
    const std::uint8_t* dirs = sector_dirs_[s];
    if (dirs == nullptr) {  // the whole list (read in order), up to 8 cache lines
      constexpr std::size_t kLine = 64, kMostBytes = 8 * kLine;
      const TargetRange range = fallback_range_[s];
      if (range.end > fallback_targets_.size()) return;  // a list forgotten since (compact_fallback)
      const char* const list = reinterpret_cast<const char*>(fallback_targets_.data() + range.begin);
      const std::size_t bytes = std::min<std::size_t>((range.end - range.begin) * sizeof(Target), kMostBytes);
      for (std::size_t b = 0; b < bytes; b += kLine) prefetch_line(list + b);
      return;
    }
    const std::int32_t lx = side_shift_ >= 0 ? (x & (side_ - 1)) : x % side_;
    const std::int32_t ly = side_shift_ >= 0 ? (y & (side_ - 1)) : y % side_;
    const auto w = static_cast<std::size_t>(std::min(side_, width_ - (x - lx)));
    const std::uint8_t* at = dirs + static_cast<std::size_t>(ly) * w + static_cast<std::size_t>(lx);
    prefetch_line(at - w);  // a prefetch never faults: the rows past the sector's are harmless
    prefetch_line(at);
    prefetch_line(at + w);
  }

  /// Keep each field's values (66 x 66 x 4 bytes a 64-cell sector; the default, for tests and
  /// tools) or only its directions (64 x 64 bytes, goal cells marked): what steering needs.
  /// Applies to fields built from then on.
  void set_keep_values(bool keep) noexcept { keep_values_ = keep; }
  void set_keep_ticks(std::uint32_t ticks) noexcept { keep_ticks_ = ticks; }
  [[nodiscard]] std::uint32_t keep_ticks() const noexcept { return keep_ticks_; }
  void set_max_fields(std::size_t fields) noexcept { max_fields_ = fields < 1 ? 1 : fields; }
  [[nodiscard]] std::size_t max_fields() const noexcept { return max_fields_; }

  /// Fields kept now.
  [[nodiscard]] std::size_t field_count() const noexcept { return live_; }
  /// Sectors occupied this tick.
  [[nodiscard]] std::size_t occupied_count() const noexcept { return occupied_.size(); }
  /// Occupied sectors left without a current field by the last update() (budget or cap).
  [[nodiscard]] std::size_t pending_count() const noexcept { return pending_; }
  /// Counters since construction: sector fields built, dropped (unused or evicted by the cap).
  [[nodiscard]] std::uint64_t build_count() const noexcept { return builds_; }
  [[nodiscard]] std::uint64_t drop_count() const noexcept { return drops_; }
  /// Route generation (set_routes() calls).
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
  /// Bytes held by the kept fields and the per-sector tables (capacity).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  struct Field {
    std::uint32_t sector = 0;
    std::uint64_t generation = 0;
    std::uint64_t last_tick = 0;      // last tick an agent was in the sector
    std::vector<std::uint32_t> values;  // (w + 2) x (h + 2), the ring included; empty unless kept
    std::uint8_t* dirs = nullptr;       // w x h in the slot's slab: FlowDirection codes, kGoalCode on goals
  };
  /// Frees a slab (allocated with its alignment).
  struct SlabFree {
    std::align_val_t align;
    void operator()(std::uint8_t* p) const noexcept { ::operator delete[](p, align); }
  };
  /// The slot's direction bytes (side x side, the field's w x h used), in slab slot /
  /// slab_slots_, allocated on first use: fields live in a few big slabs instead of a heap
  /// block each, so on big maps they can sit on huge pages (every agent reads its sector's
  /// field every tick, and 16384 separate 4 KiB blocks missed the TLB each time).
  std::uint8_t* slot_dirs(std::uint32_t slot);
  static constexpr std::uint32_t kNoField = 0xFFFFFFFFu;
  static constexpr std::uint64_t kNoGeneration = ~std::uint64_t{0};
  /// Direction code of a goal cell (FlowDirection's codes are 0..8).
  static constexpr std::uint8_t kGoalCode = 9;
  [[nodiscard]] std::uint8_t code_at(CellCoord c) const noexcept;
  [[nodiscard]] const Field* field_of(CellCoord c, SectorGraph::Rect& r) const noexcept;
  /// Sector of the cell (x, y) of the graph's map (a shift when the side is a power of two: the
  /// sampling below runs per agent and per neighbour cell, and two divisions each added up).
  [[nodiscard]] std::uint32_t sector_index(std::int32_t x, std::int32_t y) const noexcept {
    if (side_shift_ >= 0) return static_cast<std::uint32_t>((y >> side_shift_) * sectors_x_ + (x >> side_shift_));
    return static_cast<std::uint32_t>((y / side_) * sectors_x_ + x / side_);
  }
  /// Direction code of cell (x, y) from its sector's kept field (kGoalCode on goals); kNone off
  /// the graph's map or without a field: code_at() with one table read instead of the slot,
  /// the Field and the sector rectangle.
  [[nodiscard]] std::uint8_t code_fast(std::int32_t x, std::int32_t y) const noexcept {
    if (static_cast<std::uint32_t>(x) >= static_cast<std::uint32_t>(width_) ||
        static_cast<std::uint32_t>(y) >= static_cast<std::uint32_t>(height_)) {
      return static_cast<std::uint8_t>(FlowDirection::kNone);
    }
    const std::uint32_t s = sector_index(x, y);
    const std::uint8_t* dirs = sector_dirs_[s];
    if (dirs == nullptr) return static_cast<std::uint8_t>(FlowDirection::kNone);
    const std::int32_t lx = side_shift_ >= 0 ? (x & (side_ - 1)) : x % side_;
    const std::int32_t ly = side_shift_ >= 0 ? (y & (side_ - 1)) : y % side_;
    const std::int32_t w = std::min(side_, width_ - (x - lx));
    return dirs[static_cast<std::size_t>(ly) * static_cast<std::size_t>(w) + static_cast<std::size_t>(lx)];
  }
  std::uint32_t take_slot();
  void drop(std::uint32_t slot);

  const SectorGraph* graph_ = nullptr;
  const PortalRoutes* routes_ = nullptr;
  std::int32_t sectors_x_ = 0;
  std::int32_t sectors_y_ = 0;
  std::int32_t side_ = 0;
  std::int32_t side_shift_ = -1;  // log2(side_) when side_ is a power of two, else -1
  std::int32_t width_ = 0;        // the graph's map, cells
  std::int32_t height_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t tick_ = 0;
  std::uint32_t keep_ticks_ = kDefaultKeepTicks;
  std::size_t max_fields_ = kDefaultMaxFields;
  std::vector<std::uint32_t> slot_of_;     // per sector: its field's slot, or kNoField
  std::vector<const std::uint8_t*> sector_dirs_;  // per sector: its field's dirs, or null
  std::vector<std::uint32_t> agents_;      // per sector: agents this tick
  // Per sector: the tick it was first found occupied without a field (0: not waiting).
  std::vector<std::uint64_t> waiting_since_;
  std::vector<std::uint32_t> occupied_;    // sectors with agents this tick
  std::vector<Field> fields_;              // slots
  std::vector<std::unique_ptr<std::uint8_t[], SlabFree>> slabs_;  // direction bytes of slab_slots_ slots each
  std::size_t slot_bytes_ = 0;             // side_ x side_
  std::size_t slab_slots_ = 1;
  bool huge_slabs_ = false;                // slabs advised for huge pages (big maps)
  std::vector<std::uint32_t> free_;        // free slots
  std::size_t live_ = 0;
  std::size_t pending_ = 0;
  std::uint64_t builds_ = 0;
  std::uint64_t drops_ = 0;
  // Build scratch (kept between builds).
  bool keep_values_ = true;
  std::vector<std::uint32_t> scratch_values_;  // values of the build when not kept
  static constexpr std::uint8_t kInner = SectorSearch::kInnerCell;  // open_: a walkable cell of the sector
  std::vector<std::uint8_t> open_;
  std::vector<std::uint8_t> step_;         // map cost of each local cell (inner cells)
  std::vector<std::uint8_t> row_costs_;    // a row's costs when the sector is not on the map
  std::vector<std::uint64_t> seeds_;       // (value << 32 | local cell) of the build's seeds
  SectorSearch search_;                    // the seeded search (bucket queue)
  std::vector<std::uint32_t> order_;       // update(): sectors to build
  std::vector<std::uint32_t> stale_;       // update(): occupied sectors with an out-of-date field
  // steer()'s portal candidates of an occupied sector without a field (its portals and the
  // neighbour portals they cross to, cheapest first; steer() takes the goals in the sector from
  // the routes first): listed once per graph by update() (steer() ran over every in-sector edge
  // of every portal, k^2 edges for k portals, for each agent there), with route costs copied in.
  // A new route generation leaves the costs a generation old until update() refreshes them in
  // place, at most kDefaultFallbackRefreshEntries a tick (agents follow old costs meanwhile, as
  // they do out-of-date fields): refreshing every list at once, ~600,000 entries on an 8192 map,
  // made the tick that swapped in new routes ~3x as long as the others.
  struct Target {
    CellCoord cell;
    std::uint32_t cost;
  };
  struct TargetRange {
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
  };
  void make_fallback(std::uint32_t s);
  // Keeps only the lists of this tick's occupied sectors, moved down in place, once the others
  // (sectors agents left, lists forgotten by graph_updated()) hold more than half the entries
  // and fallback_slack_: the lists then take memory for the sectors occupied, not for every
  // sector ever occupied (a 10-minute run at 4096 grew by them; bounded by the map, ~20 MiB at
  // 8192). O(entries), amortised over the entries added since the last time.
  void compact_fallback();
  /// update()'s upkeep of the lists after the builds: compact_fallback(), a list for each
  /// occupied sector without a field and without a list, out-of-date costs refreshed in place.
  void refresh_fallback();
  static constexpr std::size_t kDefaultFallbackSlack = 65536;
  std::size_t fallback_slack_ = kDefaultFallbackSlack;
  /// Orders a list by cost, then cell (steer() stops at the first cost past its best).
  void sort_fallback(TargetRange range) noexcept;
  // The lists back to back for the current graph (cleared by graph_changed()): one block read in
  // order per agent, instead of a heap block per sector.
  std::vector<Target> fallback_targets_;
  std::vector<std::uint32_t> fallback_nodes_;  // beside fallback_targets_: each entry's node (refreshes)
  std::vector<TargetRange> fallback_range_;  // per sector: its list in fallback_targets_
  std::vector<std::uint64_t> fallback_gen_;  // per sector: the generation of its costs; kNoGeneration: no list
  struct GoalSector {
    std::uint32_t sector;
    CellCoord cell;
  };
  std::vector<GoalSector> goal_sectors_;     // the routes' goals by sector (set_routes())
  std::vector<std::uint32_t> compact_order_;  // compact_fallback(): the kept sectors by list position
  std::uint64_t fallback_lists_made_ = 0;
  std::size_t refresh_cursor_ = 0;           // update(): where the last refresh stopped in occupied_
  std::size_t refresh_entries_ = kDefaultFallbackRefreshEntries;
};

}  // namespace swarmfield::sim
