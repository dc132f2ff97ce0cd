// The seeded bucket-queue search of a sector field build (see sector_search.hpp).
#include "swarmfield/sim/nav/hierarchical/sector_search.hpp"

#include <algorithm>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim {

namespace {

constexpr std::uint32_t kInf = kUnreachable;

inline std::uint32_t add_saturated(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint64_t s = std::uint64_t{a} + b;
  return s >= kInf ? kInf - 1 : static_cast<std::uint32_t>(s);
}

inline std::uint32_t seed_value(std::uint64_t seed) noexcept { return static_cast<std::uint32_t>(seed >> 32); }
inline std::uint32_t seed_cell(std::uint64_t seed) noexcept { return static_cast<std::uint32_t>(seed & 0xFFFFFFFFu); }

}  // namespace

void SectorSearch::run(std::size_t lw, std::size_t lh, const std::uint8_t* open, const std::uint8_t* step,
                       bool unit_cost, std::vector<std::uint64_t>& seeds, std::uint32_t* values) {
  const std::size_t cells = lw * lh;
  // (Lambdas below are forced inline: GCC at -O2 called them, ~2M calls per 81 sectors.)
  // During the search a cell that is not inner holds 0: no step ever improves it, so a step
  // needs one comparison whatever the cell is (IntegrationField folds blocked cells the same way).
  for (std::size_t i = 0; i < cells; ++i) values[i] = open[i] == kInnerCell ? kInf : 0u;
  if (buckets_.size() < kGeneralBuckets) buckets_.resize(kGeneralBuckets);
  std::sort(seeds.begin(), seeds.end());
  // Sums saturate at kInf - 1 only if the largest seed plus the longest path through the grid
  // (every cell once at the largest step) can reach it; else the plain sum is exact.
  std::uint64_t top = 0;
  for (const std::uint64_t sd : seeds) {
    if (seed_value(sd) != kInf) top = std::max<std::uint64_t>(top, seed_value(sd));
  }
  const bool saturate = top + std::uint64_t{cells} * 254u * kDiagonalStep >= kInf - 1;
  if (unit_cost) {
    if (saturate) {
      drain<true, true>(lw, cells, open, step, seeds, values);
    } else {
      drain<true, false>(lw, cells, open, step, seeds, values);
    }
  } else if (saturate) {
    drain<false, true>(lw, cells, open, step, seeds, values);
  } else {
    drain<false, false>(lw, cells, open, step, seeds, values);
  }
  // Cells that are not inner: their least seed value, else kUnreachable.
  for (std::size_t i = 0; i < cells; ++i) values[i] = open[i] == kInnerCell ? values[i] : kInf;
  for (const std::uint64_t sd : seeds) {
    const std::uint32_t c = seed_cell(sd);
    if (open[c] != kInnerCell) values[c] = std::min(values[c], seed_value(sd));
  }
}

template <bool kUnitCost, bool kSaturate>
void SectorSearch::drain(std::size_t lw, std::size_t cells, const std::uint8_t* open, const std::uint8_t* step,
                         const std::vector<std::uint64_t>& seeds, std::uint32_t* val) {
  constexpr std::uint32_t kW = kOrthogonalStep;
  constexpr std::uint32_t kD = kDiagonalStep;
  static_assert(255u * kDiagonalStep / kOrthogonalStep + 2 <= kGeneralBuckets);
  static_assert(kDiagonalStep / kOrthogonalStep + 2 <= 4);
  const std::uint32_t mask = kUnitCost ? 3u : kGeneralBuckets - 1;
  if (seeds.empty() || seed_value(seeds[0]) == kInf) return;  // unreachable seeds sort last
  const auto s = static_cast<std::ptrdiff_t>(lw);
  std::size_t queued = 0;
  // Lowers cell n to nd if that is better; queues it unless already queued in nd's bucket (an
  // old entry in a later bucket goes stale: skipped when drained, the value no longer there).
  const auto lower = [&](std::uint32_t n, std::uint32_t nd) __attribute__((always_inline)) {
    const std::uint32_t old = val[n];
    if (nd >= old) return;
    val[n] = nd;
    const std::uint32_t b = nd / kW;
    if (old != kInf && old / kW == b) return;
    buckets_[b & mask].push_back(n);
    ++queued;
  };
  // The steps out of cell u at value d into its inner neighbours (the others hold 0); diagonal
  // ones only when both orthogonal cells passed are not blocked (no corner cutting). Every
  // cell relaxed is inner, so its neighbours all lie on the grid; a ring cell's neighbours off
  // the grid are never looked at (relax_from_ring).
  const auto step_to = [&](std::uint32_t u, std::ptrdiff_t off, std::uint32_t unit, std::uint32_t d) __attribute__((always_inline)) {
    const auto n = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(u) + off);
    std::uint32_t cost = unit;
    if constexpr (!kUnitCost) cost *= static_cast<std::uint32_t>(step[n]);
    std::uint32_t nd = d + cost;
    if constexpr (kSaturate) nd = add_saturated(d, cost);
    lower(n, nd);
  };
  const auto relax = [&](std::uint32_t u, std::uint32_t d) __attribute__((always_inline)) {
    const std::uint8_t* const o = open + u;
    const bool e = o[1] != kBlockedCell, so = o[s] != kBlockedCell, w = o[-1] != kBlockedCell, no = o[-s] != kBlockedCell;
    step_to(u, 1, kW, d);
    step_to(u, s, kW, d);
    step_to(u, -1, kW, d);
    step_to(u, -s, kW, d);
    if (e && so) step_to(u, s + 1, kD, d);
    if (w && so) step_to(u, s - 1, kD, d);
    if (w && no) step_to(u, -s - 1, kD, d);
    if (e && no) step_to(u, -s + 1, kD, d);
  };
  // A seed on a cell that is not inner (a ring cell): never lowered, so its least seed (the
  // first fed: seeds are sorted) is final when fed, and it relaxes its inner neighbours there
  // and then (later duplicates relax again with larger values: no effect). Its neighbours may
  // lie off the grid: each is checked, as in the heap version.
  const auto relax_from_ring = [&](std::uint32_t u, std::uint32_t d) {
    for (std::size_t k = 0; k < 8; ++k) {
      const CellCoord o = kDirectionOffsets[k];
      const std::ptrdiff_t off = o.y * s + o.x;
      const std::size_t n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + off);
      if (n >= cells || open[n] != kInnerCell) continue;
      const bool diagonal = (k & 1) != 0;
      if (diagonal && (open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + o.x)] == kBlockedCell ||
                       open[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(u) + o.y * s)] == kBlockedCell))
        continue;
      step_to(u, off, diagonal ? kD : kW, d);
    }
  };
  std::size_t next_seed = 0;
  std::uint32_t current = seed_value(seeds[0]) / kW;
  for (;;) {
    // Seeds enter when the frontier reaches their bucket (never later: see the jump below).
    while (next_seed < seeds.size() && seed_value(seeds[next_seed]) != kInf &&
           seed_value(seeds[next_seed]) / kW <= current) {
      const std::uint32_t c = seed_cell(seeds[next_seed]);
      if (open[c] == kInnerCell) {
        lower(c, seed_value(seeds[next_seed]));
      } else {
        relax_from_ring(c, seed_value(seeds[next_seed]));
      }
      ++next_seed;
    }
    std::vector<std::uint32_t>& bucket = buckets_[current & mask];
    const std::uint32_t lo = current * kW;
    // Indexed, the size re-read: a sum saturated at kInf - 1 can land in the bucket draining.
    for (std::size_t i = 0; i < bucket.size(); ++i) {
      const std::uint32_t u = bucket[i];
      const std::uint32_t d = val[u];
      if (d - lo >= kW) continue;  // stale: the cell moved to an earlier bucket
      relax(u, d);
    }
    queued -= bucket.size();
    bucket.clear();
    if (queued == 0) {
      if (next_seed == seeds.size() || seed_value(seeds[next_seed]) == kInf) break;
      current = seed_value(seeds[next_seed]) / kW;  // the queue ran dry: jump to the next seed
    } else {
      ++current;
    }
  }
}

std::size_t SectorSearch::memory_bytes() const noexcept {
  std::size_t bytes = buckets_.capacity() * sizeof(std::vector<std::uint32_t>);
  for (const std::vector<std::uint32_t>& b : buckets_) bytes += b.capacity() * sizeof(std::uint32_t);
  return bytes;
}

}  // namespace swarmfield::sim
