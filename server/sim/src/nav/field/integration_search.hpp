#pragma once
// The search words, the bucket queue's and the ring's sizes, prefetching, and the inline queue
// operations that the files of IntegrationField share (internal to it): begin() and the public
// API (integration_field.cpp), the bucket-queue search (integration_bucket_search.cpp), the
// unit-cost ring search (integration_ring_search.cpp) and the sweeping build's passes
// (integration_sweep_passes.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim::detail {

// Search layout. The search runs on a padded copy of the grid (one blocked cell of border, so
// no bounds checks) holding, per cell, one 32-bit word:
//   0            blocked (never improves: every candidate value is larger)
//   kUnreached   walkable, not reached yet
//   value + 1    walkable, tentative/final integration value
// Folding "blocked" into the value array means the common unit-cost case touches one array
// only, which matters because the wavefront visits cells in an order with little locality.
inline constexpr std::uint32_t kBlockedWord = IntegrationField::kSearchBlocked;
inline constexpr std::uint32_t kUnreached = IntegrationField::kSearchUnreached;

// Bucket queue. Bucket b holds cells whose (value + 1) lies in [b*W + 1, (b+1)*W] with W =
// kOrthogonalStep, the smallest possible step. Relaxing from bucket b therefore only reaches
// buckets > b, so every cell in the lowest non-empty bucket is final and the bucket is drained
// in any order (Dial 1969 with Dinitz's bucket width; no heap). The largest step is
// 254 * kDiagonalStep, < 360 buckets ahead, so a ring of 512 buckets suffices.
inline constexpr std::uint32_t kBucketCount = 512;
inline constexpr std::uint32_t kBucketMask = kBucketCount - 1;
static_assert(254u * kDiagonalStep / kOrthogonalStep + 2 < kBucketCount);

// Bucket storage: chunks of kChunkSize entries from one pool. On unit-cost maps at most three
// buckets are live (steps reach b+1 or b+2), so a handful of chunks cycle through the LIFO free
// list while hot in cache. The pool starts with one chunk per bucket plus one entry per
// kInitialPoolCellsPerEntry map cells, and doubles if a build ever needs more (the only
// allocation of a warm field). Measured peaks on 1024 x 1024 maps (Boston, Paris, Milan, the
// generated city; 1 or 4 goals): at most 18 chunks of 256, against 768 to start with.
inline constexpr std::size_t kInitialPoolCellsPerEntry = 16;

inline std::size_t initial_pool_chunks(std::size_t cells, std::size_t chunk_size) noexcept {
  return kBucketCount + cells / kInitialPoolCellsPerEntry / chunk_size;
}

// Entries ahead whose neighbourhood is prefetched (tuned on Boston_0_1024).
inline constexpr std::uint32_t kPrefetchDistance = 8;

/// Prefetches (for writing) the three rows of a cell's neighbourhood in the search words.
inline void prefetch_rows([[maybe_unused]] const std::uint32_t* cell, [[maybe_unused]] std::ptrdiff_t stride) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(cell - stride, 1);
  __builtin_prefetch(cell, 1);
  __builtin_prefetch(cell + stride, 1);
#endif
}

inline void prefetch_write([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(p, 1);
#endif
}

// The ring search works in batches of entries (one room and budget check per batch); every
// ring array keeps kRingSlack readable entries past its fill for the prefetch look-ahead.
inline constexpr std::size_t kRingBatch = 128;
inline constexpr std::size_t kMaxPushesPerCell = 8;
inline constexpr std::size_t kRingSlack = 32;
static_assert(kRingSlack > kPrefetchDistance);

// Entries each ring bucket starts with: a bucket is one band of the wavefront, whose length is
// a few times the map's perimeter at most on street maps (measured on the 1024 x 1024 maps
// with 1 to 4 goals: under 2 * (w + h)). Buckets grow by doubling past this.
inline std::size_t initial_ring_entries(std::size_t w, std::size_t h) noexcept {
  return 2 * (w + h) + kRingBatch * kMaxPushesPerCell + kRingSlack;
}

/// Wrong cells the check has room for without allocating (only builds stopped by the sweep
/// pair limit have any; then the sweeps have settled most cells).
inline std::size_t initial_seed_capacity(std::size_t w, std::size_t h) noexcept { return w * h / 32 + w + 64; }

}  // namespace swarmfield::sim::detail

namespace swarmfield::sim {

/// Appends padded cell `cell` to bucket `bucket` (absolute index). An empty bucket has no
/// chunk and write == write_end == nullptr, so one test covers "no chunk" and "tail full".
[[gnu::always_inline]] inline void IntegrationField::push(std::uint32_t bucket, std::uint32_t cell) {
  Bucket& b = queue_.buckets[bucket & detail::kBucketMask];
  if (b.write == b.write_end) [[unlikely]] add_chunk(b);
  *b.write++ = cell;
}

/// Makes room for `entries` more pushes into ring slot `slot`, beyond its fill and the slack.
inline void IntegrationField::reserve_ring(std::size_t slot, std::size_t entries) {
  std::vector<std::uint32_t>& r = ring_[slot];
  const std::size_t need = ring_fill_[slot] + entries + detail::kRingSlack;
  if (need > r.size()) [[unlikely]] r.resize(std::max(need, 2 * r.size()));
}

}  // namespace swarmfield::sim
