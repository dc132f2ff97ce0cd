#pragma once
// Integration field: cost-to-nearest-goal of every cell.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// Integration values are integers in units of 1/kOrthogonalStep of one cost unit, so a
/// bucket queue can be used and sums are exact. kDiagonalStep / kOrthogonalStep = 1393/985
/// = 1.41421320 (a Pell-number convergent of sqrt(2), relative error 2.6e-7), so on unit-cost
/// maps value / 985 equals the exact octile distance well within the 1e-4 of MovingAI's
/// rounded `.scen` lengths. Largest path cost representable: ~4.3e6 cost units.
inline constexpr std::uint32_t kOrthogonalStep = 985;
inline constexpr std::uint32_t kDiagonalStep = 1393;
inline constexpr std::uint32_t kUnreachable = std::numeric_limits<std::uint32_t>::max();

/// Work units, the currency of time-sliced builds (IntegrationField::advance(),
/// NavigationFields::set_rebuild_budget()). Counted, never timed, so a budget gives the same
/// result on every machine: one unit = one cell settled by the search, or
/// kLinearCellsPerWorkUnit cells of a linear pass (copying the map in, writing values or flow
/// directions out). Measured on Boston_0_1024 (x86-64 with AVX2, shared 2-core VM): a settled
/// cell ~6-9 ns (unit-cost maps; ~10-13 ns with other costs), 8 cells of the flow pass ~5-8 ns,
/// 8 cells of the copy passes ~1.5 ns (so those are charged conservatively); overall
/// 80,000-150,000 units per millisecond on unit-cost maps (a full build there: ~1.06 million
/// units in 7-13 ms, load-dependent).
inline constexpr std::uint32_t kLinearCellsPerWorkUnit = 8;
/// Work units charged for a linear pass over `cells` cells (rounded up: never free).
[[nodiscard]] constexpr std::uint64_t linear_work_units(std::uint64_t cells) noexcept {
  return (cells + kLinearCellsPerWorkUnit - 1) / kLinearCellsPerWorkUnit;
}

/// Cost-to-goal of every cell (Dijkstra from all goals at once). 8-connected: an orthogonal
/// step into cell n costs cost(n) * kOrthogonalStep, a diagonal one cost(n) * kDiagonalStep,
/// and a diagonal step is forbidden when either orthogonal cell it passes is blocked (no corner
/// cutting; the rule of Sturtevant 2012, "Benchmarks for Grid-Based Pathfinding").
/// Blocked cells and cells no goal can reach hold kUnreachable. Goals out of bounds or on
/// blocked cells are ignored. Buffers are kept between builds (no allocation once warm).
/// Queue: buckets of width kOrthogonalStep (the smallest possible step), which makes every
/// cell of the lowest non-empty bucket final, so each bucket is drained in FIFO order with no
/// heap (Dial 1969; Dinitz's bucket-width rule). O(cells + max_value / kOrthogonalStep).
/// On unit-cost maps (every walkable cell costs 1, e.g. all MovingAI maps) the search is cut
/// down further: three flat buckets suffice, and a settled cell relaxes only its canonical
/// successors (Sturtevant & Rabin 2016, "Canonical Orderings on Grids"; the pruning rules of
/// Jump Point Search without corner cutting, Harabor & Grastien 2011/2014) instead of all 8
/// neighbours. Values are the same either way (tests compare with a textbook Dijkstra).
///
/// Whole builds on unit-cost maps of up to ~1.3 million walkable cells take another route to
/// the same values (Method::kAuto): raster sweeps with SIMD rows until few cells still change,
/// then a check of every cell against its neighbours and a short Dijkstra from the cells that
/// fail it (see integration_sweep.hpp). The sweeps read memory in order where the wavefront
/// jumps around, and they have no data-dependent branches.
///
/// A build can also be spread over several calls (time slicing): begin() takes a snapshot of
/// the map and seeds the goals, then each advance(budget) does at most about `budget` work
/// units and returns true once the field is complete. The search state is kept exactly
/// between calls, so the result is bit-identical to build() for any sequence of budgets.
class IntegrationField {
 public:
  /// How a whole build searches a unit-cost map. Every method gives the same values and
  /// reachable_count(); tests and benchmarks compare them. kAuto: sweeps (AVX-512 rows when
  /// the CPU has them) where they apply, else the wavefront. kWavefront: the canonical
  /// Dijkstra only. kSweeps / kSweepsScalar: sweeps where they apply (with / without AVX-512).
  /// Maps with other costs, values that could pass 2^31 and build_until() always use the
  /// Dijkstra wavefront.
  enum class Method : std::uint8_t { kAuto, kWavefront, kSweeps, kSweepsScalar };
  void set_method(Method method) noexcept { method_ = method; }
  [[nodiscard]] Method method() const noexcept { return method_; }
  /// True when the last begin()/build() used sweeps (kAuto turns to the wavefront when the
  /// sweeps visit more than kSweepVisitFactor times the map's walkable chunks of 16 cells).
  [[nodiscard]] bool last_build_swept() const noexcept { return swept_; }
  /// Sweeps (one row pass down or up the whole map) done by the last sweeping build.
  [[nodiscard]] std::uint32_t sweep_count() const noexcept { return sweeps_done_; }
  /// Cells the last sweeping build's check found wrong (then fixed by its Dijkstra pass).
  [[nodiscard]] std::size_t corrected_seed_count() const noexcept { return seeds_.size(); }
  /// Pairs of sweeps (down, up) after which a sweeping build stops even if cells still
  /// change, and leaves the rest to the check and its Dijkstra pass (street maps converge in
  /// 4-5 pairs, maze512-4-6 in 64). At least 1. Same values for any limit.
  static constexpr std::uint32_t kDefaultSweepPairLimit = 64;
  static constexpr std::size_t kSweepVisitFactor = 16;
  /// Chunks of 16 cells the last sweeping build visited (rows taking from a neighbour row).
  [[nodiscard]] std::size_t sweep_visits() const noexcept { return sweep_visits_; }
  void set_sweep_pair_limit(std::uint32_t pairs) noexcept { sweep_pair_limit_ = pairs < 1 ? 1 : pairs; }

  /// Full rebuild for `goals` (cells) on `map`. Same as begin() then advance() without limit.
  void build(const GridMap& map, std::span<const CellCoord> goals);
  /// Point query: the same search (the wavefront), stopped as soon as `target`'s value is
  /// final. Afterwards raw(target) / cost_to_goal(target) are exact, as is every value below
  /// it; other cells may hold tentative values or kUnreachable, and reachable_count() counts
  /// the settled cells.
  /// Not for flow fields. A blocked, unreachable or off-map target means a full search.
  void build_until(const GridMap& map, std::span<const CellCoord> goals, CellCoord target);

  /// Starts a time-sliced build for `goals` (cells) on `map`, abandoning any build in
  /// progress. Copies the map into the search buffer (linear passes: the copy and, on
  /// unit-cost maps, the neighbour patterns; charged together as cells /
  /// kLinearCellsPerWorkUnit work units), so later changes to `map` do not affect this
  /// build: the result is the field of the map as it was here. Until advance() returns true
  /// the accessors below are memory-safe but their contents are unspecified (keep a complete
  /// field to read meanwhile; NavigationFields does). Allocates only when the map is larger
  /// than any before, the first time this object searches by the wavefront (also when a
  /// sweeping build turns to it; reserve() avoids both), or, rarely, when the queue or the
  /// check's list needs more room than ever before.
  void begin(const GridMap& map, std::span<const CellCoord> goals);
  /// Continues the build started by begin() for about `budget` work units: the search stops
  /// after `budget` settled cells; sweeps and the check (which writes the search words) go by
  /// whole rows and may overshoot by up to max_overshoot(width()) units. A budget of 0
  /// settles no cell and does no row. Returns true when the field is complete (also when no
  /// build is in progress). Never reads the map; allocates only if the queue outgrows its pool.
  bool advance(std::size_t budget);
  /// Work units a sweep charges per chunk of 16 cells it visits (plus one per row it looks
  /// at): measured ~10 ns per visit with its scans (1024 street maps, AVX-512), against ~6-9 ns
  /// per settled cell of the wavefront.
  static constexpr std::uint64_t kSweepChunkWorkUnits = 2;
  /// Most work units one advance() call can spend beyond its budget on a map `width` cells
  /// wide: rows are not split, so one row of a linear pass, of the check or of a sweep.
  [[nodiscard]] static constexpr std::uint64_t max_overshoot(std::int32_t width) noexcept {
    const std::uint64_t w = width < 0 ? 0 : static_cast<std::uint64_t>(width);
    const std::uint64_t check_row = 4 * linear_work_units(w + 2);
    const std::uint64_t sweep_row = 1 + kSweepChunkWorkUnits * ((w + 2 + 15) / 16);
    return check_row > sweep_row ? check_row : sweep_row;
  }
  /// True between begin() and the advance() that completes the build.
  [[nodiscard]] bool in_progress() const noexcept { return phase_ != Phase::kIdle; }
  /// Work units spent so far by the current (or, when idle, the last) build, begin() included.
  /// A full wavefront build on a map with C cells of which S are reachable costs about
  /// C / kLinearCellsPerWorkUnit (snapshot) + S units; a sweeping one C /
  /// kLinearCellsPerWorkUnit + one unit per row looked at per sweep + kSweepChunkWorkUnits per
  /// chunk visited + 2 (4 when checked) linear units per padded row for the search words.
  [[nodiscard]] std::uint64_t work_units() const noexcept { return work_units_; }
  /// Reserves the capacity a map of `width` x `height` cells needs, so that the first begin()
  /// on such a map allocates nothing (except, on maps with costs other than 1 and blocked, the
  /// cost copy). The current field is left as it is. The 3-argument form reserves only what
  /// one way of searching needs (the wavefront's queue and neighbour patterns are ~2.3 bytes a
  /// cell that a sweeping build never touches); the 2-argument form reserves for both.
  enum class Searches : std::uint8_t { kSweeps, kWavefront, kBoth };
  void reserve(std::int32_t width, std::int32_t height);
  void reserve(std::int32_t width, std::int32_t height, Searches searches);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Raw value (1/985 cost units) of an in-bounds cell; kUnreachable when unreachable/blocked.
  /// Read from the search words (the field keeps one per-cell array of values, no copy).
  [[nodiscard]] std::uint32_t raw(std::int32_t x, std::int32_t y) const noexcept {
    const std::uint32_t word = padded_values_[kSlack + (static_cast<std::size_t>(y) + 1) * (static_cast<std::size_t>(width_) + 2) +
                                              static_cast<std::size_t>(x) + 1];
    return word == kSearchUnreached ? kUnreachable : word - 1u;  // blocked: 0 - 1 = kUnreachable
  }
  /// Cost to the nearest goal in cost units (cells on a unit-cost map); +infinity if unreachable.
  [[nodiscard]] double cost_to_goal(std::int32_t x, std::int32_t y) const noexcept;
  [[nodiscard]] bool reachable(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_ && raw(x, y) != kUnreachable;
  }
  /// Every raw() value, row-major (width() * height()): a copy made on each call (allocates),
  /// for tests, tools and one-off consumers; hot paths read raw() or search_words().
  [[nodiscard]] std::vector<std::uint32_t> values() const;
  /// Number of cells with a finite value after the last build.
  [[nodiscard]] std::size_t reachable_count() const noexcept { return reachable_count_; }

  /// The search buffer of the last build, for consumers that want the values together with the
  /// map snapshot they were computed on (FlowField::build_rows): (width() + 2) x (height() + 2)
  /// words, row-major, with a one-cell border; per cell 0 = blocked (in the snapshot),
  /// kSearchUnreached = walkable but not reached, otherwise value + 1. Meaningful only when
  /// the last build was complete and not a build_until(); empty before the first build. This
  /// is the field's only per-cell array of values: raw() and values() read it.
  [[nodiscard]] std::span<const std::uint32_t> search_words() const noexcept {
    return {padded_values_.data() + (padded_values_.empty() ? 0 : kSlack), padded_cells_};
  }
  static constexpr std::uint32_t kSearchBlocked = 0;
  static constexpr std::uint32_t kSearchUnreached = 0xFFFFFFFFu;

 private:
  enum class Phase : std::uint8_t { kIdle, kSearch, kSweep, kCheck, kCorrect };
  // Readable words / flags before and after the padded grid (the sweeps' vector loads).
  static constexpr std::size_t kSlack = 32;
  static constexpr std::uint32_t kNil = 0xFFFFFFFFu;
  static constexpr std::uint32_t kChunkSize = 256;  // entries per pool chunk
  /// One bucket of the queue: a singly linked list of pool chunks (see src/nav/field/
  /// integration_search.hpp and integration_bucket_search.cpp); every chunk
  /// but the tail is full. `write` is the next free entry of the tail chunk (pointers, not
  /// indices, so a push costs what a vector's does). Empty bucket: all nil / nullptr.
  struct Bucket {
    std::uint32_t* write = nullptr;
    std::uint32_t* write_end = nullptr;
    std::uint32_t head = kNil;
    std::uint32_t tail = kNil;
  };

  // The bucket-queue search and its queue (src/nav/field/integration_bucket_search.cpp; push() is
  // inline in integration_search.hpp).
  template <bool kUnitCost>
  void run_search(std::size_t budget, std::uint32_t stop);
  inline void push(std::uint32_t bucket, std::uint32_t cell);
  std::uint32_t new_chunk();
  void add_chunk(Bucket& b);
  [[nodiscard]] std::uint32_t chunk_fill(const Bucket& b, std::uint32_t chunk) const noexcept;
  void reset_queue();
  // The unit-cost ring search (integration_ring_search.cpp; reserve_ring() is inline in
  // integration_search.hpp).
  template <bool kHasStop>
  void run_ring_search(std::size_t budget, std::uint32_t stop);
  inline void reserve_ring(std::size_t slot, std::size_t entries);
  // The sweeping build's passes (integration_sweep_passes.cpp).
  void start_sweeps();
  void run_sweeps(std::size_t budget);
  void run_check(std::size_t budget);
  void run_correction(std::size_t budget);
  // begin() and the choice of search (integration_field.cpp).
  void search(std::size_t budget, std::uint32_t stop);
  void begin_build(const GridMap& map, std::span<const CellCoord> goals, bool whole);
  void start_wavefront();
  [[nodiscard]] std::uint32_t* words() noexcept { return padded_values_.data() + kSlack; }
  [[nodiscard]] std::uint8_t* open_flags() noexcept { return padded_open_.data() + kSlack; }

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t reachable_count_ = 0;
  // Search state, kept between builds so a warm rebuild allocates nothing, and between
  // advance() calls so a sliced build resumes exactly where it stopped. The search runs on a
  // copy with a one-cell blocked border (no bounds checks in the inner loop); see
  // src/nav/field/integration_search.hpp.
  std::vector<std::uint8_t> padded_costs_;    // only for maps with costs other than 1 and 255
  std::vector<std::uint32_t> padded_values_;  // search_words(), with kSlack words either side
  std::size_t padded_cells_ = 0;              // (width + 2) * (height + 2) once a build began
  bool unit_cost_ = true;
  // Unit-cost maps small enough that no value can saturate use a ring of three flat buckets
  // (the only ones a step of 985 or 1393 can reach from the bucket being drained) instead of
  // the chunked queue below: fewer instructions per relaxation, same values (see
  // integration_ring_search.cpp).
  bool ring_search_ = false;
  std::array<std::vector<std::uint32_t>, 3> ring_;  // bucket current_ + k lives in slot (current_ + k) % 3
  std::array<std::size_t, 3> ring_fill_{};
  // Ring search only, per padded cell: walkable flag, and a word holding the walkable-neighbour
  // pattern (low byte) and the directions its current value was reached from (high byte; the
  // canonical successors, see integration_ring_search.cpp).
  std::vector<std::uint8_t> padded_open_;  // walkable flags, with kSlack either side
  std::vector<std::uint16_t> padded_nav_;
  // Sweeps (see integration_sweep.hpp): scratch rows, the check's wrong cells (offer << 32 |
  // padded cell, sorted before the Dijkstra pass), and where the build stands.
  Method method_ = Method::kAuto;
  bool swept_ = false;
  bool sweep_vector_ = false;
  bool sweep_down_ = true;
  std::uint32_t sweeps_done_ = 0;
  std::int32_t sweep_row_ = 0;       // rows done in the current sweep
  bool sweep_pending_ = false;       // some row changed in the current pair of sweeps
  bool sweeps_converged_ = false;    // the last pair changed nothing: no check needed
  std::uint32_t sweep_pair_limit_ = kDefaultSweepPairLimit;
  std::int32_t check_row_ = 0;       // next padded row of the check pass
  std::size_t seed_pos_ = 0;         // next seed the Dijkstra pass takes
  std::size_t walkable_ = 0;
  std::vector<std::uint32_t> goal_cells_;  // padded indices of the walkable goals, no repeats
  std::size_t sweep_visits_ = 0;           // chunks visited by this build's sweeps
  std::size_t sweep_visit_limit_ = 0;      // beyond it (kAuto) the build turns to the wavefront
  std::vector<std::uint32_t> sweep_scratch_;
  // Per padded row, a bitset over its chunks of 16 cells (chunk_words_ words a row): the
  // chunks whose cells of the row above (need_down_) / below (need_up_) changed near them
  // since they last took from it; a sweep visits only those. touched_: one row's changes.
  std::size_t chunk_words_ = 0;
  std::vector<std::uint64_t> need_down_;
  std::vector<std::uint64_t> need_up_;
  std::vector<std::uint64_t> touched_;
  std::vector<std::uint64_t> seeds_;
  Phase phase_ = Phase::kIdle;
  std::uint64_t work_units_ = 0;
  std::uint32_t current_ = 0;    // bucket being drained (absolute index; the ring slot is & mask)
  std::uint32_t read_pos_ = 0;   // next entry of the current bucket's head chunk
  std::uint32_t empty_run_ = 0;  // consecutive empty buckets seen; a whole empty ring = done
  // Bucket queue: a ring of buckets, each a list of fixed-size chunks from one pool; drained
  // chunks go back to a LIFO free list, so the few live chunks stay in cache and the pool's
  // size is the high-water mark of queued entries, not the sum over all buckets.
  struct Queue {
    std::vector<Bucket> buckets;
    std::vector<std::uint32_t> entries;  // kChunkSize padded cell indices per chunk
    std::vector<std::uint32_t> next;     // next chunk of the bucket, or of the free list
    std::uint32_t free_chunk = kNil;     // head of the free list
    std::uint32_t chunks_used = 0;       // chunks ever handed out since the last reset
    Queue() = default;
    // Copies re-point the buckets' write cursors at their own entries; moves keep the buffer.
    Queue(const Queue& other);
    Queue& operator=(const Queue& other);
    Queue(Queue&&) noexcept = default;
    Queue& operator=(Queue&&) noexcept = default;
    ~Queue() = default;
    void rebase(const Queue& other) noexcept;
  };
  Queue queue_;
};

}  // namespace swarmfield::sim
