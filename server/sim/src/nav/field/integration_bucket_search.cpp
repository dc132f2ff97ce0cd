// Integration field: the bucket-queue search (Dial's buckets in a ring, stored in chunks from
// one pool), used on maps with costs other than 1 and where values could saturate.
#include "swarmfield/sim/nav/field/integration_field.hpp"

#include "integration_search.hpp"

#include <algorithm>
#include <vector>

namespace swarmfield::sim {

namespace {

using detail::kBlockedWord;
using detail::kBucketCount;
using detail::kBucketMask;
using detail::kPrefetchDistance;
using detail::kUnreached;
using detail::prefetch_rows;

inline std::uint32_t bucket_of(std::uint32_t word) noexcept { return (word - 1) / kOrthogonalStep; }

// Saturating add: a path cost beyond the representable range stays just below kUnreached
// instead of wrapping (documented limit ~4.3e6 cost units).
inline std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t s = a + b;
  return (s < a || s == kUnreached) ? kUnreached - 1 : s;
}

}  // namespace

// ---- bucket queue ----------------------------------------------------------------------------

IntegrationField::Queue::Queue(const Queue& other)
    : buckets(other.buckets), entries(other.entries), next(other.next), free_chunk(other.free_chunk),
      chunks_used(other.chunks_used) {
  rebase(other);
}

IntegrationField::Queue& IntegrationField::Queue::operator=(const Queue& other) {
  if (this == &other) return *this;
  buckets = other.buckets;
  entries = other.entries;
  next = other.next;
  free_chunk = other.free_chunk;
  chunks_used = other.chunks_used;
  rebase(other);
  return *this;
}

void IntegrationField::Queue::rebase(const Queue& other) noexcept {
  // The copied write cursors point into other.entries: move them to ours.
  for (Bucket& b : buckets) {
    if (b.write == nullptr) continue;
    b.write = entries.data() + (b.write - other.entries.data());
    b.write_end = entries.data() + (b.write_end - other.entries.data());
  }
}

void IntegrationField::reset_queue() {
  queue_.buckets.assign(kBucketCount, Bucket{});
  queue_.free_chunk = kNil;
  queue_.chunks_used = 0;
}

std::uint32_t IntegrationField::new_chunk() {
  std::uint32_t c = queue_.free_chunk;
  if (c != kNil) {
    queue_.free_chunk = queue_.next[c];
  } else {
    if (queue_.chunks_used == queue_.next.size()) {
      // Out of room: double the pool (allocates; see kInitialPoolCellsPerEntry) and move the
      // buckets' write cursors to the new storage while the old one still exists.
      const std::size_t grown = std::max<std::size_t>(2 * queue_.next.size(), kBucketCount);
      std::vector<std::uint32_t> entries(grown * kChunkSize);
      std::copy(queue_.entries.begin(), queue_.entries.end(), entries.begin());
      for (Bucket& b : queue_.buckets) {
        if (b.write == nullptr) continue;
        b.write = entries.data() + (b.write - queue_.entries.data());
        b.write_end = entries.data() + (b.write_end - queue_.entries.data());
      }
      queue_.entries.swap(entries);
      queue_.next.resize(grown);
    }
    c = queue_.chunks_used++;
  }
  queue_.next[c] = kNil;
  return c;
}

void IntegrationField::add_chunk(Bucket& b) {
  const std::uint32_t c = new_chunk();
  if (b.tail == kNil) {
    b.head = c;
  } else {
    queue_.next[b.tail] = c;
  }
  b.tail = c;
  b.write = queue_.entries.data() + static_cast<std::size_t>(c) * kChunkSize;
  b.write_end = b.write + kChunkSize;
}

/// Entries in chunk `chunk` of bucket `b`: full unless it is the tail.
inline std::uint32_t IntegrationField::chunk_fill(const Bucket& b, std::uint32_t chunk) const noexcept {
  if (chunk != b.tail) return kChunkSize;
  return static_cast<std::uint32_t>(b.write - (queue_.entries.data() + static_cast<std::size_t>(chunk) * kChunkSize));
}

// ---- search ----------------------------------------------------------------------------------

/// Drains the bucket queue until it is empty (phase -> kIdle), `budget` cells have been
/// settled in this call, or the padded cell `stop` was settled (kNil: never). `kUnitCost`:
/// every walkable cell costs 1 (the MovingAI case), so steps are constants and the cost copy
/// is not read. All loop state lives in members, so stopping anywhere and resuming later
/// performs exactly the same sequence of operations as one uninterrupted run.
template <bool kUnitCost>
void IntegrationField::run_search(std::size_t budget, std::uint32_t stop) {
  std::uint32_t* const word = words();
  const std::uint8_t* const cost = padded_costs_.data();
  const auto s = static_cast<std::ptrdiff_t>(width_) + 2;
  std::size_t settled = 0;
  // One step from cell `u` (value word `d`) to `u + off`, `unit` = kOrthogonalStep or
  // kDiagonalStep. A cell whose improved value stays in the bucket it is already queued in
  // needs no new entry; otherwise any old entry goes stale and is skipped when popped (its
  // value no longer matches that bucket).
  const auto step_to = [&](std::uint32_t u, std::ptrdiff_t off, std::uint32_t unit, std::uint32_t d) {
    const auto n = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(u) + off);
    std::uint32_t step = unit;
    if constexpr (!kUnitCost) step *= cost[n];
    const std::uint32_t nd = add_saturated(d, step);
    std::uint32_t* const cell = word + n;
    const std::uint32_t old = *cell;
    if (nd >= old) return;
    *cell = nd;
    const std::uint32_t b = bucket_of(nd);
    if (old != kUnreached && bucket_of(old) == b) return;
    push(b, n);
  };

  while (empty_run_ < kBucketCount) {
    Bucket& bucket = queue_.buckets[current_ & kBucketMask];
    if (bucket.head == kNil) {
      ++empty_run_;
      ++current_;
      continue;
    }
    empty_run_ = 0;
    const std::uint32_t lo = current_ * kOrthogonalStep + 1;
    std::uint32_t chunk = bucket.head;
    std::uint32_t pos = read_pos_;
    std::uint32_t fill = chunk_fill(bucket, chunk);
    for (;;) {
      if (pos == fill) {
        // Relaxations from this bucket normally never push into it; only values saturated at
        // the top of the range can, so the fill is re-read before the chunk counts as drained.
        fill = chunk_fill(bucket, chunk);
        if (pos == fill) {
          // Drained: hand the chunk back and move on (or finish the bucket).
          const std::uint32_t next = queue_.next[chunk];
          queue_.next[chunk] = queue_.free_chunk;
          queue_.free_chunk = chunk;
          pos = 0;
          if (next == kNil) {
            bucket = Bucket{};
            break;
          }
          bucket.head = next;
          chunk = next;
          fill = chunk_fill(bucket, chunk);
          continue;
        }
      }
      if (settled >= budget) {  // resume here on the next call
        read_pos_ = pos;
        work_units_ += settled;
        reachable_count_ += settled;
        return;
      }
      const std::uint32_t* entries = queue_.entries.data() + static_cast<std::size_t>(chunk) * kChunkSize;
      // The order within a bucket has little spatial locality (see the layout note in
      // integration_search.hpp), so the three rows around a cell a few entries ahead are
      // prefetched to hide memory latency.
      if (pos + kPrefetchDistance < fill) prefetch_rows(word + entries[pos + kPrefetchDistance], s);
      const std::uint32_t u = entries[pos++];
      std::uint32_t* const c = word + u;
      const std::uint32_t d = *c;
      if (d - lo >= kOrthogonalStep) continue;  // stale: the cell moved to an earlier bucket
      ++settled;
      if (u == stop) [[unlikely]] {
        read_pos_ = pos;
        work_units_ += settled;
        reachable_count_ += settled;
        return;
      }
      // Orthogonal steps need no test: a blocked cell holds 0 and never improves.
      const bool e = c[1] != kBlockedWord;
      const bool so = c[s] != kBlockedWord;
      const bool w = c[-1] != kBlockedWord;
      const bool n = c[-s] != kBlockedWord;
      step_to(u, 1, kOrthogonalStep, d);
      step_to(u, s, kOrthogonalStep, d);
      step_to(u, -1, kOrthogonalStep, d);
      step_to(u, -s, kOrthogonalStep, d);
      // Diagonals only when both orthogonal cells passed are free (no corner cutting).
      if (e && so) step_to(u, s + 1, kDiagonalStep, d);
      if (w && so) step_to(u, s - 1, kDiagonalStep, d);
      if (w && n) step_to(u, -s - 1, kDiagonalStep, d);
      if (e && n) step_to(u, -s + 1, kDiagonalStep, d);
    }
    read_pos_ = 0;
    ++current_;
  }
  work_units_ += settled;
  reachable_count_ += settled;
  phase_ = Phase::kIdle;
}

template void IntegrationField::run_search<true>(std::size_t budget, std::uint32_t stop);
template void IntegrationField::run_search<false>(std::size_t budget, std::uint32_t stop);

}  // namespace swarmfield::sim
