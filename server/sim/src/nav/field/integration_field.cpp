// Integration field: begin() (the map's snapshot in linear row passes, and the start of the
// wavefront), the choice of search, advance() over the phases, and the public API. The searches
// and passes live in integration_bucket_search.cpp, integration_ring_search.cpp and
// integration_sweep_passes.cpp.
#include "swarmfield/sim/nav/field/integration_field.hpp"

#include "integration_search.hpp"
#include "integration_sweep.hpp"
#include "vector_clones.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace swarmfield::sim {

namespace {

using detail::initial_pool_chunks;
using detail::initial_ring_entries;
using detail::initial_seed_capacity;
using detail::kBlockedWord;
using detail::kBucketCount;
using detail::kUnreached;

// The linear passes are plain loops the compiler vectorizes (SWARMFIELD_VECTOR_CLONES).

// The loops go in blocks of kBlock cells: a constant trip count is what GCC's -O2 ("very
// cheap") vectorizer accepts, and it makes the 1024 x 1024 snapshot ~4x faster.
constexpr std::size_t kBlock = 32;

/// Search words of one padded row from its walkable flags (blocked -> kBlockedWord, else
/// kUnreached); `n` = padded width.
SWARMFIELD_VECTOR_CLONES void words_row(const std::uint8_t* __restrict open, std::uint32_t* __restrict out,
                                        std::size_t n) noexcept {
  const auto cell = [&](std::size_t x) { out[x] = open[x] != 0 ? kUnreached : kBlockedWord; };
  std::size_t x = 0;
  for (; x + kBlock <= n; x += kBlock) {
    for (std::size_t k = 0; k < kBlock; ++k) cell(x + k);
  }
  for (; x < n; ++x) cell(x);
}

/// Neighbour patterns of one row (bit k set when the neighbour in direction k is walkable: see
/// the canonical successors in integration_ring_search.cpp) from three padded rows of walkable flags (0/1),
/// starting one row above; `out` gets the `w` cells from padded x = 1 (pattern in the low byte,
/// arrivals cleared).
SWARMFIELD_VECTOR_CLONES void pattern_row(const std::uint8_t* __restrict open, std::size_t pw,
                                          std::uint16_t* __restrict out, std::size_t w) noexcept {
  const std::uint8_t* n = open + 1;
  const std::uint8_t* c = n + pw;
  const std::uint8_t* so = c + pw;
  const auto cell = [&](std::size_t x) {
    out[x] = static_cast<std::uint16_t>(c[x + 1] | (so[x + 1] << 1) | (so[x] << 2) | (so[x - 1] << 3) | (c[x - 1] << 4) |
                                        (n[x - 1] << 5) | (n[x] << 6) | (n[x + 1] << 7));
  };
  std::size_t x = 0;
  for (; x + kBlock <= w; x += kBlock) {
    for (std::size_t k = 0; k < kBlock; ++k) cell(x + k);
  }
  for (; x < w; ++x) cell(x);
}

/// One row of walkable flags (1 walkable, 0 blocked) from a map row; returns true when every
/// cost in it is 1 or blocked. Adds the row's walkable cells to `walkable`.
SWARMFIELD_VECTOR_CLONES bool open_row(const std::uint8_t* __restrict in, std::uint8_t* __restrict out, std::size_t w,
                                       std::size_t& walkable) noexcept {
  std::uint8_t other_costs = 0;
  std::uint32_t open = 0;
  const auto cell = [&](std::size_t x) {
    const std::uint8_t c = in[x];
    out[x] = c != kBlockedCost ? 1 : 0;
    open += static_cast<std::uint32_t>(c != kBlockedCost);
    other_costs |= static_cast<std::uint8_t>((c != 1) & (c != kBlockedCost));
  };
  std::size_t x = 0;
  for (; x + kBlock <= w; x += kBlock) {
    for (std::size_t k = 0; k < kBlock; ++k) cell(x + k);
  }
  for (; x < w; ++x) cell(x);
  walkable += open;
  return other_costs == 0;
}

// Whole builds sweep only while every value stays below kSweepLimit (walkable * kDiagonalStep
// bounds them), so that a value plus a 16-cell ramp never reaches 2^32.
constexpr std::uint32_t kSweepLimit = detail::kSweepInfinity - 64u * kDiagonalStep;

/// Goals a reserved field takes without allocating.
constexpr std::size_t kReservedGoals = 64;

}  // namespace

double IntegrationField::cost_to_goal(std::int32_t x, std::int32_t y) const noexcept {
  if (!reachable(x, y)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(raw(x, y)) / static_cast<double>(kOrthogonalStep);
}

/// The search variant this build uses (see begin()); `stop` = kNil: no target.
void IntegrationField::search(std::size_t budget, std::uint32_t stop) {
  if (ring_search_) {
    if (stop == kNil) {
      run_ring_search<false>(budget, kNil);
    } else {
      run_ring_search<true>(budget, stop);
    }
  } else if (unit_cost_) {
    run_search<true>(budget, stop);
  } else {
    run_search<false>(budget, stop);
  }
}

// ---- public API ------------------------------------------------------------------------------

void IntegrationField::reserve(std::int32_t width, std::int32_t height) {
  reserve(width, height, Searches::kBoth);
}

void IntegrationField::reserve(std::int32_t width, std::int32_t height, Searches searches) {
  if (width <= 0 || height <= 0) return;
  const std::size_t w = static_cast<std::size_t>(width);
  const std::size_t h = static_cast<std::size_t>(height);
  const std::size_t padded = (w + 2) * (h + 2) + 2 * kSlack;
  padded_values_.reserve(padded);
  padded_open_.reserve(padded);
  goal_cells_.reserve(kReservedGoals);
  if (searches != Searches::kSweeps) {
    queue_.buckets.reserve(kBucketCount);
    const std::size_t chunks = initial_pool_chunks(w * h, kChunkSize);
    queue_.entries.reserve(chunks * kChunkSize);
    queue_.next.reserve(chunks);
    for (std::vector<std::uint32_t>& r : ring_) {
      if (r.size() < initial_ring_entries(w, h)) r.resize(initial_ring_entries(w, h));
    }
    padded_nav_.reserve((w + 2) * (h + 2));
  }
  if (searches != Searches::kWavefront) {
    need_down_.reserve((h + 2) * detail::sweep_chunk_words(w));
    need_up_.reserve((h + 2) * detail::sweep_chunk_words(w));
    touched_.reserve(3 * detail::sweep_chunk_words(w));
    if (sweep_scratch_.size() < detail::sweep_scratch_words(w)) sweep_scratch_.resize(detail::sweep_scratch_words(w));
    seeds_.reserve(initial_seed_capacity(w, h));
  }
}

void IntegrationField::begin(const GridMap& map, std::span<const CellCoord> goals) { begin_build(map, goals, true); }

void IntegrationField::begin_build(const GridMap& map, std::span<const CellCoord> goals, bool whole) {
  width_ = std::max(map.width(), 0);
  height_ = std::max(map.height(), 0);
  const std::size_t w = static_cast<std::size_t>(width_);
  const std::size_t h = static_cast<std::size_t>(height_);
  reachable_count_ = 0;
  current_ = 0;
  read_pos_ = 0;
  empty_run_ = 0;
  swept_ = false;
  sweeps_done_ = 0;
  seeds_.clear();
  work_units_ = linear_work_units(w * h);
  if (w == 0 || h == 0 || map.costs().size() != w * h) {
    width_ = 0;
    height_ = 0;
    padded_values_.clear();
    padded_cells_ = 0;
    phase_ = Phase::kIdle;
    return;
  }

  // Padded walkable flags (border and slack blocked), and what the map's costs are.
  const std::size_t pw = w + 2;
  const std::size_t ph = h + 2;
  padded_cells_ = pw * ph;
  padded_open_.resize(padded_cells_ + 2 * kSlack);
  padded_values_.resize(padded_cells_ + 2 * kSlack);
  std::uint8_t* open = open_flags();
  std::fill(padded_open_.begin(), padded_open_.begin() + static_cast<std::ptrdiff_t>(kSlack + pw), std::uint8_t{0});
  std::fill(padded_open_.end() - static_cast<std::ptrdiff_t>(kSlack + pw), padded_open_.end(), std::uint8_t{0});
  const std::uint8_t* src = map.costs().data();
  bool unit_cost = true;
  std::size_t walkable = 0;
  for (std::size_t y = 0; y < h; ++y) {
    std::uint8_t* row = open + (y + 1) * pw;
    row[0] = 0;
    row[w + 1] = 0;
    unit_cost &= open_row(src + y * w, row + 1, w, walkable);
  }
  unit_cost_ = unit_cost;
  walkable_ = walkable;
  // A shortest path enters each walkable cell at most once, so on a unit-cost map no value
  // exceeds walkable * kDiagonalStep: below this bound nothing can saturate, which is what the
  // ring search relies on (it has no saturating arithmetic), and below kSweepLimit nothing
  // reaches the sweeps' infinity.
  ring_search_ = unit_cost && walkable < (kUnreached - 4 * kDiagonalStep) / kDiagonalStep;
  const bool sweepable = whole && unit_cost && method_ != Method::kWavefront &&
                         walkable < kSweepLimit / kDiagonalStep;
  goal_cells_.clear();
  for (const CellCoord g : goals) {
    if (!map.walkable(g)) continue;
    const auto p = static_cast<std::uint32_t>((static_cast<std::size_t>(g.y) + 1) * pw + static_cast<std::size_t>(g.x) + 1);
    if (std::find(goal_cells_.begin(), goal_cells_.end(), p) == goal_cells_.end()) goal_cells_.push_back(p);
  }
  if (sweepable) {
    start_sweeps();
    return;
  }
  if (!unit_cost) {
    padded_costs_.resize(pw * ph);
    std::fill(padded_costs_.begin(), padded_costs_.begin() + static_cast<std::ptrdiff_t>(pw), kBlockedCost);
    std::fill(padded_costs_.end() - static_cast<std::ptrdiff_t>(pw), padded_costs_.end(), kBlockedCost);
    for (std::size_t y = 0; y < h; ++y) {
      std::uint8_t* row = padded_costs_.data() + (y + 1) * pw;
      row[0] = kBlockedCost;
      std::memcpy(row + 1, src + y * w, w);
      row[w + 1] = kBlockedCost;
    }
  }
  start_wavefront();
}

/// The Dijkstra wavefront from goal_cells_ on the walkable flags (and, for other costs,
/// padded_costs_): search words, the queue and its seeds; phase kSearch.
void IntegrationField::start_wavefront() {
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  const std::size_t pw = w + 2;
  const std::size_t ph = h + 2;
  const std::uint8_t* open = open_flags();
  std::uint32_t* word = words();
  // Search words (see the layout above).
  std::fill(padded_values_.begin(), padded_values_.begin() + static_cast<std::ptrdiff_t>(kSlack + pw), kBlockedWord);
  std::fill(padded_values_.end() - static_cast<std::ptrdiff_t>(kSlack + pw), padded_values_.end(), kBlockedWord);
  for (std::size_t y = 1; y <= h; ++y) words_row(open + y * pw, word + y * pw, pw);
  ring_fill_ = {};
  current_ = 0;
  read_pos_ = 0;
  empty_run_ = 0;
  if (ring_search_) {
    for (std::vector<std::uint32_t>& r : ring_) {
      if (r.size() < initial_ring_entries(w, h)) r.resize(initial_ring_entries(w, h));
    }
    // Neighbour patterns of the map cells from the padded walkable flags (arrival bytes need
    // no reset: a cell's first arrival always improves on kUnreached and overwrites it).
    padded_nav_.resize(pw * ph);
    for (std::size_t y = 0; y < h; ++y) pattern_row(open + y * pw, pw, padded_nav_.data() + (y + 1) * pw + 1, w);
  } else {
    reset_queue();
    const std::size_t chunks = std::max(queue_.next.size(), initial_pool_chunks(w * h, kChunkSize));
    queue_.entries.resize(chunks * kChunkSize);
    queue_.next.resize(chunks);
  }
  for (const std::uint32_t p : goal_cells_) {
    word[p] = 1;  // value 0
    if (ring_search_) {
      reserve_ring(0, 1);
      ring_[0][ring_fill_[0]++] = p;
      padded_nav_[p] = static_cast<std::uint16_t>(padded_nav_[p] | 0xFF00u);  // a goal: all legal neighbours
    } else {
      push(0, p);
    }
  }
  // No goal: the queue is empty and the search ends at once (every cell unreachable).
  phase_ = Phase::kSearch;
}

bool IntegrationField::advance(std::size_t budget) {
  const auto spend = [&](auto&& step) {
    const std::uint64_t before = work_units_;
    step(budget);
    const std::uint64_t used = work_units_ - before;
    budget = used >= budget ? 0 : budget - static_cast<std::size_t>(used);
  };
  if (phase_ == Phase::kSweep) spend([&](std::size_t b) { run_sweeps(b); });
  if (phase_ == Phase::kCheck) spend([&](std::size_t b) { run_check(b); });
  if (phase_ == Phase::kCorrect) spend([&](std::size_t b) { run_correction(b); });
  if (phase_ == Phase::kSearch) spend([&](std::size_t b) { search(b, kNil); });
  return phase_ == Phase::kIdle;
}

void IntegrationField::build(const GridMap& map, std::span<const CellCoord> goals) {
  begin(map, goals);
  advance(std::numeric_limits<std::size_t>::max());
}

void IntegrationField::build_until(const GridMap& map, std::span<const CellCoord> goals, CellCoord target) {
  begin_build(map, goals, false);
  if (phase_ == Phase::kIdle) return;
  std::uint32_t stop = kNil;
  if (map.in_bounds(target.x, target.y)) {
    const std::size_t pw = static_cast<std::size_t>(width_) + 2;
    const std::size_t p = (static_cast<std::size_t>(target.y) + 1) * pw + static_cast<std::size_t>(target.x) + 1;
    stop = static_cast<std::uint32_t>(p);
  }
  constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();
  search(kNoLimit, stop);
  phase_ = Phase::kIdle;  // stopped early or not (tentative values stay, as documented)
}

std::vector<std::uint32_t> IntegrationField::values() const {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_));
  for (std::int32_t y = 0; y < height_; ++y)
    for (std::int32_t x = 0; x < width_; ++x) out[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)] = raw(x, y);
  return out;
}

}  // namespace swarmfield::sim
