// Integration field: multi-source Dijkstra over the cost field with a bucket queue, runnable in
// budgeted slices.
#include "swarmfield/sim/nav/integration_field.hpp"

#include "integration_sweep.hpp"
#include "vector_clones.hpp"

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
constexpr std::uint32_t kBlockedWord = IntegrationField::kSearchBlocked;
constexpr std::uint32_t kUnreached = IntegrationField::kSearchUnreached;

// Bucket queue. Bucket b holds cells whose (value + 1) lies in [b*W + 1, (b+1)*W] with W =
// kOrthogonalStep, the smallest possible step. Relaxing from bucket b therefore only reaches
// buckets > b, so every cell in the lowest non-empty bucket is final and the bucket is drained
// in any order (Dial 1969 with Dinitz's bucket width; no heap). The largest step is
// 254 * kDiagonalStep, < 360 buckets ahead, so a ring of 512 buckets suffices.
constexpr std::uint32_t kBucketCount = 512;
constexpr std::uint32_t kBucketMask = kBucketCount - 1;
static_assert(254u * kDiagonalStep / kOrthogonalStep + 2 < kBucketCount);

// Bucket storage: chunks of kChunkSize entries from one pool. On unit-cost maps at most three
// buckets are live (steps reach b+1 or b+2), so a handful of chunks cycle through the LIFO free
// list while hot in cache. The pool starts with one chunk per bucket plus one entry per
// kInitialPoolCellsPerEntry map cells, and doubles if a build ever needs more (the only
// allocation of a warm field). Measured peaks on 1024 x 1024 maps (Boston, Paris, Milan, the
// generated city; 1 or 4 goals): at most 18 chunks of 256, against 768 to start with.
constexpr std::size_t kInitialPoolCellsPerEntry = 16;

// Entries ahead whose neighbourhood is prefetched (tuned on Boston_0_1024).
constexpr std::uint32_t kPrefetchDistance = 8;

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

inline std::uint32_t bucket_of(std::uint32_t word) noexcept { return (word - 1) / kOrthogonalStep; }

// Saturating add: a path cost beyond the representable range stays just below kUnreached
// instead of wrapping (documented limit ~4.3e6 cost units).
inline std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t s = a + b;
  return (s < a || s == kUnreached) ? kUnreached - 1 : s;
}

// The linear passes are plain loops the compiler vectorizes (SWARMFIELD_VECTOR_CLONES).

// Both loops go in blocks of kBlock cells: a constant trip count is what GCC's -O2 ("very
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

std::size_t initial_pool_chunks(std::size_t cells, std::size_t chunk_size) noexcept {
  return kBucketCount + cells / kInitialPoolCellsPerEntry / chunk_size;
}

// The ring search works in batches of entries (one room and budget check per batch); every
// ring array keeps kRingSlack readable entries past its fill for the prefetch look-ahead.
constexpr std::size_t kRingBatch = 128;
constexpr std::size_t kMaxPushesPerCell = 8;
constexpr std::size_t kRingSlack = 32;
static_assert(kRingSlack > kPrefetchDistance);

// ---- canonical successors (unit-cost ring search) ---------------------------------------------
//
// Canonical Dijkstra (Sturtevant & Rabin 2016, "Canonical Orderings on Grids", IJCAI), with the
// neighbour pruning of Jump Point Search (Harabor & Grastien 2011, AAAI) for grids without
// corner cutting: a cell reached from parent p by direction a only relaxes the neighbours n
// that are not reached as cheaply from p without passing through the cell (within its 3 x 3
// block: "as cheaply" is <= after a cardinal move, < after a diagonal one, which is what makes
// diagonal-first paths canonical). Every cell keeps an optimal path whose every step survives
// the pruning, so all values stay exact while most cells relax 1-3 neighbours instead of 8.
// Tied arrivals from several directions relax the union of their successors.
//
// Directions are FlowDirection's: 0 E, 1 SE, 2 S, 3 SW, 4 W, 5 NW, 6 N, 7 NE (y down).
// A cell's neighbour pattern has bit k set when the neighbour in direction k is walkable.

constexpr std::array<int, 8> kDirX = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr std::array<int, 8> kDirY = {0, 1, 1, 1, 0, -1, -1, -1};

constexpr std::uint32_t step_cost(int k) { return (k & 1) != 0 ? kDiagonalStep : kOrthogonalStep; }

/// Successor sets: index arrival * 256 + pattern; arrival 8 = goal (every legal neighbour).
struct CanonicalSuccessors {
  std::array<std::uint8_t, 9 * 256> successors{};
};

constexpr CanonicalSuccessors make_canonical_successors() {
  CanonicalSuccessors table;
  for (int pattern = 0; pattern < 256; ++pattern) {
    const auto open = [&](int k) { return ((pattern >> (k & 7)) & 1) != 0; };
    // Block cell (x, y), x, y in -1..1, is walkable: the centre is (it was reached).
    const auto walkable_at = [&](int x, int y) {
      if (x == 0 && y == 0) return true;
      for (int k = 0; k < 8; ++k) {
        if (kDirX[static_cast<std::size_t>(k)] == x && kDirY[static_cast<std::size_t>(k)] == y) return open(k);
      }
      return false;
    };
    // Legal steps from the centre: walkable target, no corner cutting.
    std::uint8_t legal = 0;
    for (int k = 0; k < 8; ++k) {
      const bool ok = open(k) && ((k & 1) == 0 || (open(k - 1) && open(k + 1)));
      if (ok) legal = static_cast<std::uint8_t>(legal | (1u << k));
    }
    table.successors[static_cast<std::size_t>(8 * 256 + pattern)] = legal;
    for (int a = 0; a < 8; ++a) {
      // Parent p = centre - dir(a), i.e. the neighbour in direction a + 4.
      const int pk = (a + 4) & 7;
      if (!open(pk)) {  // cannot happen (the parent is walkable); keep everything legal
        table.successors[static_cast<std::size_t>(a * 256 + pattern)] = legal;
        continue;
      }
      // Shortest paths from p over the walkable block cells other than the centre (8 nodes,
      // Bellman-Ford: at most 7 rounds), with the corner rule inside the block.
      std::array<std::uint32_t, 8> dist{};
      for (int k = 0; k < 8; ++k) dist[static_cast<std::size_t>(k)] = 0xFFFFFFFFu;
      dist[static_cast<std::size_t>(pk)] = 0;
      for (int round = 0; round < 8; ++round) {
        for (int i = 0; i < 8; ++i) {
          if (dist[static_cast<std::size_t>(i)] == 0xFFFFFFFFu || !open(i)) continue;
          for (int j = 0; j < 8; ++j) {
            if (j == i || !open(j)) continue;
            const int xi = kDirX[static_cast<std::size_t>(i)], yi = kDirY[static_cast<std::size_t>(i)];
            const int xj = kDirX[static_cast<std::size_t>(j)], yj = kDirY[static_cast<std::size_t>(j)];
            const int dx = xj - xi, dy = yj - yi;
            if (dx < -1 || dx > 1 || dy < -1 || dy > 1) continue;  // not adjacent
            std::uint32_t c = kOrthogonalStep;
            if (dx != 0 && dy != 0) {
              if (!walkable_at(xi, yj) || !walkable_at(xj, yi)) continue;  // corner
              c = kDiagonalStep;
            }
            const std::uint32_t nd = dist[static_cast<std::size_t>(i)] + c;
            if (nd < dist[static_cast<std::size_t>(j)]) dist[static_cast<std::size_t>(j)] = nd;
          }
        }
      }
      std::uint8_t keep = 0;
      for (int k = 0; k < 8; ++k) {
        if (((legal >> k) & 1) == 0 || k == pk) continue;
        const std::uint32_t via_centre = step_cost(a) + step_cost(k);
        const std::uint32_t around = dist[static_cast<std::size_t>(k)];
        const bool pruned = (a & 1) == 0 ? around <= via_centre : around < via_centre;
        if (!pruned) keep = static_cast<std::uint8_t>(keep | (1u << k));
      }
      table.successors[static_cast<std::size_t>(a * 256 + pattern)] = keep;
    }
  }
  return table;
}

constexpr CanonicalSuccessors kCanonicalSuccessors = make_canonical_successors();

// Spot checks of the rules of Jump Point Search without corner cutting (all neighbours open:
// pattern 0xFF): after a cardinal move only straight on; after a diagonal one the diagonal and
// its two cardinal parts; a goal expands everything.
static_assert(kCanonicalSuccessors.successors[0 * 256 + 0xFF] == (1u << 0));
static_assert(kCanonicalSuccessors.successors[7 * 256 + 0xFF] == ((1u << 7) | (1u << 6) | (1u << 0)));
static_assert(kCanonicalSuccessors.successors[8 * 256 + 0xFF] == 0xFF);
// Moving east with the cell behind-north (NW) blocked: north and north-east become forced.
static_assert(kCanonicalSuccessors.successors[0 * 256 + (0xFF & ~(1u << 5))] == ((1u << 0) | (1u << 6) | (1u << 7)));

/// Neighbour patterns of one row (see above) from three padded rows of walkable flags (0/1),
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

/// Wrong cells the check has room for without allocating (only builds stopped by the sweep
/// pair limit have any; then the sweeps have settled most cells).
std::size_t initial_seed_capacity(std::size_t w, std::size_t h) noexcept { return w * h / 32 + w + 64; }

// Byte of a nav word (pattern | arrivals << 8) holding the arrivals.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr std::size_t kArrivalByte = 0;
#else
constexpr std::size_t kArrivalByte = 1;
#endif


// Entries each ring bucket starts with: a bucket is one band of the wavefront, whose length is
// a few times the map's perimeter at most on street maps (measured on the 1024 x 1024 maps
// with 1 to 4 goals: under 2 * (w + h)). Buckets grow by doubling past this.
std::size_t initial_ring_entries(std::size_t w, std::size_t h) noexcept {
  return 2 * (w + h) + kRingBatch * kMaxPushesPerCell + kRingSlack;
}

}  // namespace

double IntegrationField::cost_to_goal(std::int32_t x, std::int32_t y) const noexcept {
  if (!reachable(x, y)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(raw(x, y)) / static_cast<double>(kOrthogonalStep);
}

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

/// Appends padded cell `cell` to bucket `bucket` (absolute index). An empty bucket has no
/// chunk and write == write_end == nullptr, so one test covers "no chunk" and "tail full".
[[gnu::always_inline]] inline void IntegrationField::push(std::uint32_t bucket, std::uint32_t cell) {
  Bucket& b = queue_.buckets[bucket & kBucketMask];
  if (b.write == b.write_end) [[unlikely]] add_chunk(b);
  *b.write++ = cell;
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
      // The order within a bucket has little spatial locality (see the layout note), so the
      // three rows around a cell a few entries ahead are prefetched to hide memory latency.
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

// ---- ring search (unit costs) ----------------------------------------------------------------

/// Makes room for `entries` more pushes into ring slot `slot`, beyond its fill and the slack.
inline void IntegrationField::reserve_ring(std::size_t slot, std::size_t entries) {
  std::vector<std::uint32_t>& r = ring_[slot];
  const std::size_t need = ring_fill_[slot] + entries + kRingSlack;
  if (need > r.size()) [[unlikely]] r.resize(std::max(need, 2 * r.size()));
}

/// The unit-cost search: the same Dial/Dinitz bucket order as run_search(), with the queue cut
/// down to what unit costs need. From a cell of bucket b (words [lo, lo + W)) an orthogonal
/// step (+W) always lands in bucket b + 1 and a diagonal one (+1393) in b + 1 or b + 2, so only
/// three buckets are ever live: three flat arrays used as a ring. Pushes are branch-free (the
/// entry is always written, the cursor advances only when the cell is new to that bucket), and
/// no saturation test is needed (begin() checked the bound). Values and settled counts are
/// identical to run_search(); resumable at any entry like it.
template <bool kHasStop>
void IntegrationField::run_ring_search(std::size_t budget, std::uint32_t stop) {
  constexpr std::uint32_t kW = kOrthogonalStep;
  constexpr std::uint32_t kD = kDiagonalStep;
  std::uint32_t* const word = words();
  std::uint16_t* const nav = padded_nav_.data();
  // Arrival bytes are the high bytes of the nav words (kArrivalByte).
  std::uint8_t* const arrival = reinterpret_cast<std::uint8_t*>(nav) + kArrivalByte;
  const auto s = static_cast<std::ptrdiff_t>(width_) + 2;
  const std::array<std::ptrdiff_t, 8> offset = {1, s + 1, s, s - 1, -1, -s - 1, -s, -s + 1};
  std::size_t settled = 0;
  for (;;) {
    const std::size_t s0 = current_ % 3;
    const std::size_t s1 = (current_ + 1) % 3;
    const std::size_t s2 = (current_ + 2) % 3;
    const std::size_t fill = ring_fill_[s0];
    if (read_pos_ >= fill) {
      ring_fill_[s0] = 0;
      read_pos_ = 0;
      if (ring_fill_[s1] == 0 && ring_fill_[s2] == 0) break;  // queue empty: done
      ++current_;
      continue;
    }
    const std::uint32_t lo = current_ * kW + 1;
    const std::uint32_t lo1 = lo + kW;
    const std::uint32_t lo2 = lo1 + kW;
    std::size_t pos = read_pos_;
    bool paused = false;
    while (pos < fill && !paused) {
      if (settled >= budget) {
        paused = true;
        break;
      }
      // A batch of entries needs no per-entry budget or room checks: each settles at most one
      // cell and pushes at most kMaxPushesPerCell entries into each of the next two buckets.
      const std::size_t batch = std::min({fill - pos, budget - settled, kRingBatch});
      reserve_ring(s1, batch * kMaxPushesPerCell);
      reserve_ring(s2, batch * kMaxPushesPerCell);
      const std::uint32_t* const cur = ring_[s0].data();
      std::uint32_t* out1 = ring_[s1].data() + ring_fill_[s1];
      std::uint32_t* out2 = ring_[s2].data() + ring_fill_[s2];
      const std::size_t batch_end = pos + batch;
      while (pos < batch_end) {
        // Reads past `fill` land in the ring's slack (kRingSlack), so no bounds test is needed;
        // a prefetch of a stale index is harmless.
        {
          const std::uint32_t next = cur[pos + kPrefetchDistance];
          prefetch_rows(word + next, s);
          prefetch_write(nav + next);
        }
        const std::uint32_t u = cur[pos++];
        std::uint32_t* const c = word + u;
        const std::uint32_t d = *c;
        if (d - lo >= kW) continue;  // stale: the cell moved to an earlier bucket
        ++settled;
        if constexpr (kHasStop) {
          if (u == stop) [[unlikely]] {
            paused = true;
            break;
          }
        }
        // Successors: the union of the canonical successors of every direction the cell's value
        // was reached from (arrival 0xFF = goal: every legal neighbour).
        const std::uint32_t cell_nav = nav[u];
        const std::uint32_t pattern = cell_nav & 0xFFu;
        std::uint32_t arrivals = cell_nav >> 8;
        std::uint32_t successors = 0;
        do {
          const auto a = static_cast<std::uint32_t>(__builtin_ctz(arrivals));
          successors |= kCanonicalSuccessors.successors[a * 256 + pattern];
          arrivals &= arrivals - 1;
        } while (arrivals != 0);
        // A cardinal step (+W) always lands in bucket b + 1; a diagonal one (+1393) in b + 2
        // when it reaches lo2, else b + 1 — the same for all four diagonals of this cell.
        const bool far = d + kD >= lo2;
        const auto relax = [&](std::uint32_t k) {
          const std::uint32_t nbr = u + static_cast<std::uint32_t>(offset[k]);
          const std::uint32_t nd = d + ((k & 1) != 0 ? kD : kW);
          const std::uint32_t old = word[nbr];
          if (nd < old) {
            word[nbr] = nd;
            arrival[2 * static_cast<std::size_t>(nbr)] = static_cast<std::uint8_t>(1u << k);
            // Queue it unless it already is in the target bucket (old in [lo_t, lo_t + W)).
            if ((k & 1) != 0 && far) {
              *out2 = nbr;
              out2 += (old - lo2) >= kW ? 1 : 0;
            } else {
              *out1 = nbr;
              out1 += (old - lo1) >= kW ? 1 : 0;
            }
          } else if (nd == old) {
            arrival[2 * static_cast<std::size_t>(nbr)] |= static_cast<std::uint8_t>(1u << k);
          }
        };
        if (successors & 0x01u) relax(0);
        if (successors & 0x04u) relax(2);
        if (successors & 0x10u) relax(4);
        if (successors & 0x40u) relax(6);
        if (successors & 0x02u) relax(1);
        if (successors & 0x08u) relax(3);
        if (successors & 0x20u) relax(5);
        if (successors & 0x80u) relax(7);
      }
      ring_fill_[s1] = static_cast<std::size_t>(out1 - ring_[s1].data());
      ring_fill_[s2] = static_cast<std::size_t>(out2 - ring_[s2].data());
    }
    if (paused) {
      read_pos_ = pos;
      work_units_ += settled;
      reachable_count_ += settled;
      return;
    }
    read_pos_ = fill;  // drained; the top of the loop moves to the next bucket
  }
  work_units_ += settled;
  reachable_count_ += settled;
  phase_ = Phase::kIdle;
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

/// Sweep words (infinity but the goals), flags for the rows beside the goals, goal rows
/// settled along themselves; phase kSweep.
void IntegrationField::start_sweeps() {
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  const std::size_t pw = w + 2;
  const std::size_t ph = h + 2;
  std::uint32_t* word = words();
  swept_ = true;
  sweep_vector_ = method_ != Method::kSweepsScalar && detail::sweep_vector_supported();
  if (sweep_scratch_.size() < detail::sweep_scratch_words(w)) sweep_scratch_.resize(detail::sweep_scratch_words(w));
  if (seeds_.capacity() < initial_seed_capacity(w, h)) seeds_.reserve(initial_seed_capacity(w, h));
  std::fill(padded_values_.begin(), padded_values_.end(), detail::kSweepInfinity);
  chunk_words_ = detail::sweep_chunk_words(w);
  need_down_.assign(ph * chunk_words_, 0);
  need_up_.assign(ph * chunk_words_, 0);
  touched_.resize(3 * chunk_words_);
  const std::size_t chunks = (pw + 15) / 16;
  for (const std::uint32_t p : goal_cells_) {
    const std::size_t y = p / pw;
    word[p] = 0;
    // Every chunk of the rows either side (a goal row is settled along its whole length).
    for (std::size_t k = 0; k < chunks; ++k) {
      need_down_[(y + 1) * chunk_words_ + k / 64] |= std::uint64_t{1} << (k % 64);
      need_up_[(y - 1) * chunk_words_ + k / 64] |= std::uint64_t{1} << (k % 64);
    }
  }
  // Goal rows: consistent along themselves before any sweep (sweep_row's precondition).
  const detail::SweepGrid grid{word, open_flags(), w, h};
  for (std::size_t y = 1; y <= h; ++y) {
    if (need_down_[(y + 1) * chunk_words_] != 0) detail::settle_row(grid, y);
  }
  sweep_visit_limit_ = kSweepVisitFactor * (walkable_ / 16 + chunks);
  sweep_visits_ = 0;
  sweep_down_ = true;
  sweep_row_ = 0;
  sweep_pending_ = false;
  check_row_ = 1;
  seed_pos_ = 0;
  ring_fill_ = {};
  phase_ = Phase::kSweep;
}

// ---- sweeps (unit costs, whole builds) ----------------------------------------------------------

/// Sweeps rows while less than `budget` units were spent in this call, a pair (down, up) at
/// a time, skipping the rows whose neighbour on the side swept from has not changed since they
/// last took from it (such a row cannot change). Hands over to the check once a pair changed
/// nothing (the field is then exact; the check confirms it) or after kMaxSweepPairs pairs
/// (mazes, whose paths turn up and down many times; the check and the Dijkstra pass finish).
void IntegrationField::run_sweeps(std::size_t budget) {
  const detail::SweepGrid grid{words(), open_flags(), static_cast<std::size_t>(width_), static_cast<std::size_t>(height_)};
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  const std::size_t cw = chunk_words_;
  const std::size_t chunks = (w + 2 + 15) / 16;
  // The last word's chunks past the row stay clear.
  const std::uint64_t last_word = chunks % 64 == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << (chunks % 64)) - 1;
  std::uint64_t spent = 0;
  while (phase_ == Phase::kSweep && spent < budget) {
    const auto done = static_cast<std::size_t>(sweep_row_);
    const std::size_t y = sweep_down_ ? done + 1 : h - done;
    std::uint64_t* need = (sweep_down_ ? need_down_.data() : need_up_.data()) + y * cw;
    ++spent;  // a skipped row
    std::size_t visits = 0;
    for (std::size_t i = 0; i < cw; ++i) visits += static_cast<std::size_t>(__builtin_popcountll(need[i]));
    if (visits != 0) {
      sweep_visits_ += visits;
      if (sweep_visits_ > sweep_visit_limit_ && method_ == Method::kAuto) {
        // Paths that turn up and down many times (a maze): the wavefront is faster here.
        // Start it afresh from the walkable flags; the work so far stays counted.
        swept_ = false;
        work_units_ += spent;
        start_wavefront();
        return;
      }
      const std::size_t from = sweep_down_ ? y - 1 : y + 1;
      const bool changed = detail::sweep_row(grid, y, from, need, touched_.data(), sweep_scratch_.data(), sweep_vector_);
      std::fill(need, need + cw, std::uint64_t{0});
      if (changed) {
        // The rows either side take from cells x - 1..x + 1: a chunk whose first (last) lane
        // changed concerns the chunk before (after) it too.
        std::uint64_t* below = need_down_.data() + (y + 1) * cw;
        std::uint64_t* above = need_up_.data() + (y - 1) * cw;
        const std::uint64_t* first = touched_.data() + cw;
        const std::uint64_t* last = touched_.data() + 2 * cw;
        for (std::size_t i = 0; i < cw; ++i) {
          std::uint64_t near = touched_[i] | (last[i] << 1) | (first[i] >> 1);
          if (i > 0) near |= last[i - 1] >> 63;
          if (i + 1 < cw) near |= first[i + 1] << 63;
          if (i + 1 == cw) near &= last_word;
          below[i] |= near;
          above[i] |= near;
        }
        sweep_pending_ = true;
      }
      spent += kSweepChunkWorkUnits * visits;
    }
    if (++sweep_row_ < height_) continue;
    sweep_row_ = 0;
    ++sweeps_done_;
    if (sweep_down_) {
      sweep_down_ = false;
      continue;
    }
    sweep_down_ = true;
    if (!sweep_pending_ || sweeps_done_ >= 2 * sweep_pair_limit_) {
      // Converged: no cell can be lowered by a neighbour (each row took from both rows beside
      // it after their last change, and is consistent along itself), so the values are exact
      // and the check is skipped. Stopped by the limit: the check finds what is left.
      sweeps_converged_ = !sweep_pending_;
      phase_ = Phase::kCheck;
      check_row_ = 1;
    }
    sweep_pending_ = false;
  }
  work_units_ += spent;
}

/// Checks rows (collecting the cells some neighbour can still lower) and, one row behind,
/// turns sweep words into search words and values; the last row sorts the wrong cells and
/// hands over to the Dijkstra pass.
void IntegrationField::run_check(std::size_t budget) {
  const detail::SweepGrid grid{words(), open_flags(), static_cast<std::size_t>(width_), static_cast<std::size_t>(height_)};
  const auto w = static_cast<std::size_t>(width_);
  // Converting a row is two linear passes; checking it, two more.
  const std::uint64_t row_units = (sweeps_converged_ ? 2 : 4) * linear_work_units(w + 2);
  std::uint64_t spent = 0;
  while (phase_ == Phase::kCheck && spent < budget) {
    const auto y = static_cast<std::size_t>(check_row_);
    if (!sweeps_converged_ && y <= static_cast<std::size_t>(height_)) {
      std::size_t count = seeds_.size();
      if (seeds_.capacity() < count + w) seeds_.reserve(2 * (count + w));  // rare: see initial_seed_capacity
      seeds_.resize(count + w);
      static_cast<void>(detail::check_row(grid, y, seeds_.data(), count, sweep_vector_));
      seeds_.resize(count);
    }
    // Row y - 1 is no longer read by the check: convert it (and, after the last row, the
    // last map row and the bottom border too).
    reachable_count_ += detail::convert_row(grid, y - 1);
    if (y == static_cast<std::size_t>(height_) + 1) {
      static_cast<void>(detail::convert_row(grid, y));  // the bottom border: nothing finite
      std::sort(seeds_.begin(), seeds_.end());
      seed_pos_ = 0;
      current_ = 0;
      read_pos_ = 0;
      ring_fill_ = {};
      phase_ = Phase::kCorrect;
    }
    ++check_row_;
    spent += row_units;
  }
  work_units_ += spent;
}

/// Dijkstra from the cells the check found wrong, each entering the queue at its offer when
/// the search reaches that bucket (the same three-bucket ring as run_ring_search(), with every
/// legal neighbour relaxed: the arrival directions are not known here). A cell is final when
/// its bucket is drained, and its value is written then. Exact: afterwards no cell can be
/// lowered by any neighbour, and every value is the length of a path.
void IntegrationField::run_correction(std::size_t budget) {
  constexpr std::uint32_t kW = kOrthogonalStep;
  std::uint32_t* const word = words();
  const auto s = static_cast<std::ptrdiff_t>(width_) + 2;
  const auto us = static_cast<std::uint32_t>(s);
  const std::array<std::ptrdiff_t, 8> offset = {1, s + 1, s, s - 1, -1, -s - 1, -s, -s + 1};
  std::size_t settled = 0;
  const auto enqueue = [&](std::size_t slot, std::uint32_t cell) {
    reserve_ring(slot, 1);
    ring_[slot][ring_fill_[slot]++] = cell;
  };
  for (;;) {
    const std::size_t s0 = current_ % 3;
    while (seed_pos_ < seeds_.size()) {
      const auto offer = static_cast<std::uint32_t>(seeds_[seed_pos_] >> 32);
      if (offer / kW > current_) break;
      const auto cell = static_cast<std::uint32_t>(seeds_[seed_pos_] & 0xFFFFFFFFu);
      ++seed_pos_;
      if (offer + 1 < word[cell]) {
        reachable_count_ += word[cell] == kUnreached ? 1u : 0u;
        word[cell] = offer + 1;
        enqueue(s0, cell);
      }
    }
    if (read_pos_ >= ring_fill_[s0]) {
      ring_fill_[s0] = 0;
      read_pos_ = 0;
      if (ring_fill_[(current_ + 1) % 3] == 0 && ring_fill_[(current_ + 2) % 3] == 0) {
        if (seed_pos_ == seeds_.size()) break;  // done
        current_ = static_cast<std::uint32_t>(seeds_[seed_pos_] >> 32) / kW;
      } else {
        ++current_;
      }
      continue;
    }
    if (settled >= budget) {
      work_units_ += settled;
      return;
    }
    const std::uint32_t u = ring_[s0][read_pos_++];
    const std::uint32_t d = word[u];
    const std::uint32_t lo = current_ * kW + 1;
    if (d - lo >= kW) continue;  // stale
    ++settled;
    const bool e = word[u + 1] != kBlockedWord, so = word[u + us] != kBlockedWord;
    const bool wv = word[u - 1] != kBlockedWord, n = word[u - us] != kBlockedWord;
    const std::array<bool, 8> legal = {true, e && so, true, wv && so, true, wv && n, true, e && n};
    for (std::size_t k = 0; k < 8; ++k) {
      if (!legal[k]) continue;
      const auto nbr = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(u) + offset[k]);
      const std::uint32_t nd = d + ((k & 1) != 0 ? kDiagonalStep : kW);
      const std::uint32_t old = word[nbr];
      if (nd >= old) continue;  // also every blocked cell (word 0)
      reachable_count_ += old == kUnreached ? 1u : 0u;
      word[nbr] = nd;
      enqueue((current_ + (nd - lo) / kW) % 3, nbr);
    }
  }
  work_units_ += settled;
  phase_ = Phase::kIdle;
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
