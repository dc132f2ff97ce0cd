// Integration field: multi-source Dijkstra over the cost field with a bucket queue.
#include "swarmfield/sim/integration_field.hpp"

#include <algorithm>
#include <cstring>

namespace swarmfield::sim {

namespace {

// Search layout. The search runs on a padded copy of the grid (one blocked cell of border, so
// no bounds checks) holding, per cell, one 32-bit word:
//   0            blocked (never improves: every candidate value is larger)
//   kUnreached   walkable, not reached yet
//   value + 1    walkable, tentative/final integration value
// Folding "blocked" into the value array means the common unit-cost case touches one array
// only, which matters because the wavefront visits cells in an order with little locality.
constexpr std::uint32_t kBlockedWord = 0;
constexpr std::uint32_t kUnreached = 0xFFFFFFFFu;

// Bucket queue. Bucket b holds cells whose (value + 1) lies in [b*W + 1, (b+1)*W] with W =
// kOrthogonalStep, the smallest possible step. Relaxing from bucket b therefore only reaches
// buckets > b, so every cell in the lowest non-empty bucket is final and the bucket is drained
// in any order (Dial 1969 with Dinitz's bucket width; no heap). The largest step is
// 254 * kDiagonalStep, < 360 buckets ahead, so a ring of 512 buckets suffices.
constexpr std::uint32_t kBucketCount = 512;
constexpr std::uint32_t kBucketMask = kBucketCount - 1;
static_assert(254u * kDiagonalStep / kOrthogonalStep + 2 < kBucketCount);

using Buckets = std::vector<std::vector<std::uint32_t>>;

// Entries ahead whose neighbourhood is prefetched (tuned on Boston_0_1024).
constexpr std::size_t kPrefetchDistance = 8;

inline std::uint32_t bucket_of(std::uint32_t word) noexcept { return (word - 1) / kOrthogonalStep; }

// Saturating add: a path cost beyond the representable range stays just below kUnreached
// instead of wrapping (documented limit ~4.3e6 cost units).
inline std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t s = a + b;
  return (s < a || s == kUnreached) ? kUnreached - 1 : s;
}

/// Offers value `nd` to the cell `n` (word pointer `cell`). A cell whose improved value stays in
/// the bucket it is already queued in needs no new entry; otherwise any old entry goes stale
/// and is skipped when popped (its value no longer matches that bucket).
[[gnu::always_inline]] inline void relax(std::uint32_t* cell, std::uint32_t n, std::uint32_t nd, Buckets& buckets) {
  const std::uint32_t old = *cell;
  if (nd >= old) return;
  *cell = nd;
  const std::uint32_t b = bucket_of(nd);
  if (old != kUnreached && bucket_of(old) == b) return;
  buckets[b & kBucketMask].push_back(n);
}

/// One step from cell `u` (value word `d`) to `u + off`, `unit` = kOrthogonalStep or kDiagonalStep.
template <bool kUnitCost>
[[gnu::always_inline]] inline void step_to(std::uint32_t* word, const std::uint8_t* cost, std::uint32_t u,
                                           std::ptrdiff_t off, std::uint32_t unit, std::uint32_t d, Buckets& buckets) {
  const auto n = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(u) + off);
  std::uint32_t step = unit;
  if constexpr (!kUnitCost) step *= cost[n];
  relax(word + n, n, add_saturated(d, step), buckets);
}

/// Drains the bucket queue; returns the number of cells settled. `kUnitCost`: every walkable
/// cell costs 1 (the MovingAI case), so steps are constants and `cost` is not read. Stops early
/// once the padded cell `stop` is settled (kNoStop: never).
constexpr std::uint32_t kNoStop = 0xFFFFFFFFu;
template <bool kUnitCost>
std::size_t run_buckets(std::uint32_t* word, const std::uint8_t* cost, std::size_t pw, Buckets& buckets,
                        std::uint32_t stop) {
  const std::ptrdiff_t s = static_cast<std::ptrdiff_t>(pw);
  std::size_t settled = 0;
  std::size_t empty_run = 0;  // consecutive empty buckets; a whole empty ring means done
  for (std::uint32_t current = 0; empty_run < kBucketCount; ++current) {
    std::vector<std::uint32_t>& bucket = buckets[current & kBucketMask];
    if (bucket.empty()) {
      ++empty_run;
      continue;
    }
    empty_run = 0;
    const std::uint32_t lo = current * kOrthogonalStep + 1;
    // Relaxations from this bucket normally never push into it; only values saturated at the
    // top of the range can, so the bucket is indexed (not iterated) and its size re-read.
    for (std::size_t k = 0; k < bucket.size(); ++k) {
      // The order within a bucket has little spatial locality (see the layout note), so the
      // three rows around a cell a few entries ahead are prefetched to hide memory latency.
#if defined(__GNUC__)
      if (k + kPrefetchDistance < bucket.size()) {
        const std::uint32_t* ahead = word + bucket[k + kPrefetchDistance];
        __builtin_prefetch(ahead - s, 1);
        __builtin_prefetch(ahead, 1);
        __builtin_prefetch(ahead + s, 1);
      }
#endif
      const std::uint32_t u = bucket[k];
      std::uint32_t* const c = word + u;
      const std::uint32_t d = *c;
      if (d - lo >= kOrthogonalStep) continue;  // stale: the cell moved to an earlier bucket
      ++settled;
      if (u == stop) return settled;
      // Orthogonal steps need no test: a blocked cell holds 0 and never improves.
      const bool e = c[1] != kBlockedWord;
      const bool so = c[s] != kBlockedWord;
      const bool w = c[-1] != kBlockedWord;
      const bool n = c[-s] != kBlockedWord;
      step_to<kUnitCost>(word, cost, u, 1, kOrthogonalStep, d, buckets);
      step_to<kUnitCost>(word, cost, u, s, kOrthogonalStep, d, buckets);
      step_to<kUnitCost>(word, cost, u, -1, kOrthogonalStep, d, buckets);
      step_to<kUnitCost>(word, cost, u, -s, kOrthogonalStep, d, buckets);
      // Diagonals only when both orthogonal cells passed are free (no corner cutting).
      if (e && so) step_to<kUnitCost>(word, cost, u, s + 1, kDiagonalStep, d, buckets);
      if (w && so) step_to<kUnitCost>(word, cost, u, s - 1, kDiagonalStep, d, buckets);
      if (w && n) step_to<kUnitCost>(word, cost, u, -s - 1, kDiagonalStep, d, buckets);
      if (e && n) step_to<kUnitCost>(word, cost, u, -s + 1, kDiagonalStep, d, buckets);
    }
    bucket.clear();
  }
  return settled;
}

}  // namespace

double IntegrationField::cost_to_goal(std::int32_t x, std::int32_t y) const noexcept {
  if (!reachable(x, y)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(raw(x, y)) / static_cast<double>(kOrthogonalStep);
}

void IntegrationField::build(const GridMap& map, std::span<const CellCoord> goals) {
  build_impl(map, goals, nullptr);
}

void IntegrationField::build_until(const GridMap& map, std::span<const CellCoord> goals, CellCoord target) {
  build_impl(map, goals, &target);
}

void IntegrationField::build_impl(const GridMap& map, std::span<const CellCoord> goals, const CellCoord* target) {
  width_ = map.width();
  height_ = map.height();
  const std::size_t w = static_cast<std::size_t>(width_);
  const std::size_t h = static_cast<std::size_t>(height_);
  values_.resize(w * h);
  reachable_count_ = 0;
  if (w == 0 || h == 0) return;

  // Padded word array (see the layout above) and, for non-unit costs, padded costs.
  const std::size_t pw = w + 2;
  const std::size_t ph = h + 2;
  padded_values_.resize(pw * ph);
  std::uint32_t* word = padded_values_.data();
  std::fill(word, word + pw, kBlockedWord);
  std::fill(word + (ph - 1) * pw, word + ph * pw, kBlockedWord);
  const std::uint8_t* src = map.costs().data();
  bool unit_cost = true;
  for (std::size_t y = 0; y < h; ++y) {
    std::uint32_t* row = word + (y + 1) * pw;
    const std::uint8_t* in = src + y * w;
    row[0] = kBlockedWord;
    row[w + 1] = kBlockedWord;
    bool unit_row = true;
    for (std::size_t x = 0; x < w; ++x) {
      row[x + 1] = in[x] == kBlockedCost ? kBlockedWord : kUnreached;
      unit_row &= (in[x] == 1) | (in[x] == kBlockedCost);
    }
    unit_cost &= unit_row;
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
  buckets_.resize(kBucketCount);
  for (auto& b : buckets_) b.clear();

  bool any_goal = false;
  for (const CellCoord g : goals) {
    if (!map.walkable(g)) continue;
    const std::size_t p = (static_cast<std::size_t>(g.y) + 1) * pw + static_cast<std::size_t>(g.x) + 1;
    if (word[p] == 1) continue;  // same goal twice
    word[p] = 1;                 // value 0
    buckets_[0].push_back(static_cast<std::uint32_t>(p));
    any_goal = true;
  }
  if (any_goal) {
    std::uint32_t stop = kNoStop;
    if (target != nullptr && map.in_bounds(target->x, target->y))
      stop = static_cast<std::uint32_t>((static_cast<std::size_t>(target->y) + 1) * pw + static_cast<std::size_t>(target->x) + 1);
    reachable_count_ = unit_cost ? run_buckets<true>(word, nullptr, pw, buckets_, stop)
                                 : run_buckets<false>(word, padded_costs_.data(), pw, buckets_, stop);
  }
  for (std::size_t y = 0; y < h; ++y) {
    const std::uint32_t* in = word + (y + 1) * pw + 1;
    std::uint32_t* out = values_.data() + y * w;
    for (std::size_t x = 0; x < w; ++x) {
      const std::uint32_t v = in[x];
      out[x] = (v == kBlockedWord || v == kUnreached) ? kUnreachable : v - 1;
    }
  }
}

}  // namespace swarmfield::sim
