// Integration field: the unit-cost search, a ring of three flat buckets in which a settled cell
// relaxes only its canonical successors.
#include "swarmfield/sim/nav/field/integration_field.hpp"

#include "integration_search.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace swarmfield::sim {

namespace {

using detail::kMaxPushesPerCell;
using detail::kPrefetchDistance;
using detail::kRingBatch;
using detail::prefetch_rows;
using detail::prefetch_write;

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

// Byte of a nav word (pattern | arrivals << 8) holding the arrivals.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr std::size_t kArrivalByte = 0;
#else
constexpr std::size_t kArrivalByte = 1;
#endif

}  // namespace

// ---- ring search (unit costs) ----------------------------------------------------------------

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

template void IntegrationField::run_ring_search<true>(std::size_t budget, std::uint32_t stop);
template void IntegrationField::run_ring_search<false>(std::size_t budget, std::uint32_t stop);

}  // namespace swarmfield::sim
