// Row sweeps of the integration field: scalar code and an AVX-512 version of the same loops.
#include "integration_sweep.hpp"

#include <algorithm>

#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "vector_clones.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SWARMFIELD_SWEEP_AVX512 1
// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_epi32(), which its
// -Wmaybe-uninitialized reports at every use (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace swarmfield::sim::detail {

namespace {

constexpr std::uint32_t kW = kOrthogonalStep;
constexpr std::uint32_t kD = kDiagonalStep;
constexpr std::uint32_t kInf = kSweepInfinity;
constexpr std::size_t kLanes = 16;

[[nodiscard]] constexpr std::size_t chunks_of(std::size_t width) noexcept { return (width + 2 + kLanes - 1) / kLanes; }

// ---- scalar ----------------------------------------------------------------------------------

bool sweep_row_scalar(const SweepGrid& g, std::size_t y, std::size_t from, std::uint64_t* touched) noexcept {
  const std::size_t s = g.stride();
  const std::size_t w = g.width;
  std::uint32_t* row = g.words + y * s;
  const std::uint32_t* up = g.words + from * s;
  const std::uint8_t* oc = g.open + y * s;
  const std::uint8_t* op = g.open + from * s;
  bool changed = false;
  const std::size_t words = sweep_chunk_words(w);
  for (std::size_t i = 0; i < 3 * words; ++i) touched[i] = 0;
  const auto lower = [&](std::size_t x, std::uint32_t v) {
    if (v < row[x]) {
      row[x] = v;
      changed = true;
      const std::size_t k = x / kLanes;
      const std::uint64_t bit = std::uint64_t{1} << (k & 63);
      touched[k >> 6] |= bit;
      if (x % kLanes == 0) touched[words + (k >> 6)] |= bit;
      if (x % kLanes == kLanes - 1) touched[2 * words + (k >> 6)] |= bit;
    }
  };
  // Every cell takes from the row swept before (straight, and diagonally when both cells
  // passed are walkable): the cells of chunks not to visit cannot go down, so this gives what
  // the vector code gives.
  for (std::size_t x = 1; x <= w; ++x) {
    if (oc[x] == 0) continue;
    std::uint32_t v = up[x] + kW;
    if (op[x] != 0) {
      if (oc[x - 1] != 0) v = std::min(v, up[x - 1] + kD);
      if (oc[x + 1] != 0) v = std::min(v, up[x + 1] + kD);
    }
    lower(x, v);
  }
  if (!changed) return false;  // the row was consistent along itself, and still is
  // Along the row, both ways (the borders x = 0 and w + 1 are blocked and end every run).
  for (std::size_t x = 2; x <= w; ++x) {
    if ((oc[x] & oc[x - 1]) != 0) lower(x, row[x - 1] + kW);
  }
  for (std::size_t x = w - 1; x >= 1; --x) {
    if ((oc[x] & oc[x + 1]) != 0) lower(x, row[x + 1] + kW);
  }
  return true;
}

std::size_t check_row_scalar(const SweepGrid& g, std::size_t y, std::uint64_t* seeds, std::size_t& count) noexcept {
  const std::size_t s = g.stride();
  const std::uint32_t* c = g.words + y * s;
  const std::uint8_t* o = g.open + y * s;
  std::size_t finite = 0;
  for (std::size_t x = 1; x <= g.width; ++x) {
    if (o[x] == 0) continue;
    std::uint32_t m = std::min({c[x - 1], c[x + 1], c[x - s], c[x + s]}) + kW;
    const bool e = o[x + 1] != 0, so = o[x + s] != 0, wv = o[x - 1] != 0, n = o[x - s] != 0;
    if (e && so) m = std::min(m, c[x + s + 1] + kD);
    if (wv && so) m = std::min(m, c[x + s - 1] + kD);
    if (wv && n) m = std::min(m, c[x - s - 1] + kD);
    if (e && n) m = std::min(m, c[x - s + 1] + kD);
    if (m < c[x]) {
      seeds[count++] = static_cast<std::uint64_t>(m) << 32 | (y * s + x);
    }
    finite += c[x] != kInf ? 1u : 0u;
  }
  return finite;
}

// ---- AVX-512 ---------------------------------------------------------------------------------

#if defined(SWARMFIELD_SWEEP_AVX512)
#define SWARMFIELD_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,bmi,bmi2,lzcnt,popcnt")))

SWARMFIELD_AVX512 inline __mmask16 open_mask(const std::uint8_t* p) noexcept {
  return _mm_test_epi8_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8(-1));
}

SWARMFIELD_AVX512 inline __m512i load(const std::uint32_t* p) noexcept { return _mm512_loadu_si512(p); }

/// Lanes that exist in the chunk starting at padded x `x0` of a row of `stride` words.
inline __mmask16 valid_lanes(std::size_t x0, std::size_t stride) noexcept {
  if (x0 >= stride) return 0;
  const std::size_t left = stride - x0;
  return left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

/// Lanes shifted by kShift toward the scan's direction, infinity shifted in.
template <bool kForward, int kShift>
SWARMFIELD_AVX512 inline __m512i shifted(__m512i a, __m512i inf) noexcept {
  if constexpr (kForward) {
    return _mm512_alignr_epi32(a, inf, 16 - kShift);  // lane i <- lane i - kShift
  } else {
    return _mm512_alignr_epi32(inf, a, kShift);  // lane i <- lane i + kShift
  }
}

/// Constants of the scans.
struct ScanSteps {
  __m512i inf, w1, w2, w4, w8, ramp_forward, ramp_backward;
};

/// One chunk of a segmented min-plus prefix scan along the row (left to right when kForward):
/// in log steps lane i takes lane i -+ k plus k steps when every cell between is walkable
/// (Hillis & Steele), then the carry (the neighbouring chunk's last lane, broadcast) plus the
/// steps to each lane of the run of walkable lanes that touches that neighbour.
template <bool kForward>
SWARMFIELD_AVX512 inline __m512i scan_chunk(__m512i a, std::uint32_t m, __m512i carry, const ScanSteps& c) noexcept {
  const auto widen = [](std::uint32_t e, int k) { return kForward ? e & (e << k) : e & (e >> k); };
  const std::uint32_t e1 = widen(m, 1);
  const std::uint32_t e2 = widen(e1, 1);
  const std::uint32_t e4 = widen(e2, 2);
  const std::uint32_t e8 = widen(e4, 4);
  std::uint32_t run = 0;  // lanes connected to the neighbour the carry comes from
  if constexpr (kForward) {
    run = (~m & (m + 1)) - 1;  // before the first blocked lane
  } else {
    const std::uint32_t closed = ~m & 0xFFFFu;  // after the last blocked lane
    run = closed == 0 ? 0xFFFFu : (0xFFFFu << (32 - __builtin_clz(closed))) & 0xFFFFu;
  }
  a = _mm512_mask_min_epu32(a, static_cast<__mmask16>(e1), a, _mm512_add_epi32(shifted<kForward, 1>(a, c.inf), c.w1));
  a = _mm512_mask_min_epu32(a, static_cast<__mmask16>(e2), a, _mm512_add_epi32(shifted<kForward, 2>(a, c.inf), c.w2));
  a = _mm512_mask_min_epu32(a, static_cast<__mmask16>(e4), a, _mm512_add_epi32(shifted<kForward, 4>(a, c.inf), c.w4));
  a = _mm512_mask_min_epu32(a, static_cast<__mmask16>(e8), a, _mm512_add_epi32(shifted<kForward, 8>(a, c.inf), c.w8));
  return _mm512_mask_min_epu32(a, static_cast<__mmask16>(run), a,
                               _mm512_add_epi32(carry, kForward ? c.ramp_forward : c.ramp_backward));
}

SWARMFIELD_AVX512 bool sweep_row_vector(const SweepGrid& g, std::size_t y, std::size_t from,
                                        const std::uint64_t* visit, std::uint64_t* touched,
                                        std::uint32_t* scratch) noexcept {
  const std::size_t s = g.stride();
  const std::size_t chunks = chunks_of(g.width);
  std::uint32_t* row = g.words + y * s;
  const std::uint32_t* up = g.words + from * s;
  const std::uint8_t* oc = g.open + y * s;
  const std::uint8_t* op = g.open + from * s;
  // Per chunk (one spare entry each side): lanes that break the row's consistency
  // left-to-right (lane i above its left neighbour plus a step) and right-to-left.
  auto* bad_lr = reinterpret_cast<std::uint16_t*>(scratch) + 1;
  auto* bad_rl = bad_lr + chunks + 2;
  std::fill(bad_lr - 1, bad_rl + chunks + 1, std::uint16_t{0});
  const __m512i w1 = _mm512_set1_epi32(static_cast<int>(kW));
  const __m512i d1 = _mm512_set1_epi32(static_cast<int>(kD));
  const __m512i inf = _mm512_set1_epi32(static_cast<int>(kInf));
  const std::size_t words = sweep_chunk_words(g.width);
  for (std::size_t i = 0; i < 3 * words; ++i) touched[i] = 0;
  const auto touch = [&](std::size_t k, std::uint32_t lanes) {
    const std::uint64_t bit = std::uint64_t{1} << (k & 63);
    touched[k >> 6] |= bit;
    touched[words + (k >> 6)] |= (lanes & 1u) != 0 ? bit : 0;
    touched[2 * words + (k >> 6)] |= (lanes & 0x8000u) != 0 ? bit : 0;
  };

  // 1. The chunks to visit take from the row swept before, in place. Lanes past the row (the
  // next row's cells) count as blocked. The row was consistent along itself before; each
  // lowered chunk checks the edges of its cells (its neighbours' lanes included) and marks the
  // lanes that now break consistency, for the scans below.
  bool any = false;
  std::size_t lr_first = chunks;
  std::size_t rl_last = 0;
  for (std::size_t i = 0; i < words; ++i) {
    for (std::uint64_t bits = visit[i]; bits != 0; bits &= bits - 1) {
      const std::size_t k = i * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      if (k >= chunks) break;  // bits past the row
      const std::size_t x0 = k * kLanes;
      const __mmask16 m = open_mask(oc + x0) & valid_lanes(x0, s);
      const __mmask16 mp = open_mask(op + x0);
      const __mmask16 open_left = open_mask(oc + x0 - 1);
      const __mmask16 open_right = open_mask(oc + x0 + 1);
      __m512i cand = _mm512_add_epi32(load(up + x0), w1);
      cand = _mm512_mask_min_epu32(cand, open_left & mp, cand, _mm512_add_epi32(load(up + x0 - 1), d1));
      cand = _mm512_mask_min_epu32(cand, open_right & mp, cand, _mm512_add_epi32(load(up + x0 + 1), d1));
      __m512i nv = load(row + x0);
      const __mmask16 lower = _mm512_mask_cmplt_epu32_mask(m, cand, nv);
      if (lower == 0) continue;
      _mm512_mask_storeu_epi32(row + x0, lower, cand);
      nv = _mm512_mask_mov_epi32(nv, lower, cand);
      any = true;
      touch(k, lower);
      // Edge (i - 1, i) for each lane i, the left one reaching into the chunk before; and the
      // edge from lane 15 to the chunk after.
      const __m512i left = _mm512_alignr_epi32(nv, _mm512_set1_epi32(static_cast<int>(row[x0 - 1])), 15);
      const __m512i right = _mm512_alignr_epi32(_mm512_set1_epi32(static_cast<int>(row[x0 + kLanes])), nv, 1);
      const __m512i nv_w = _mm512_add_epi32(nv, w1);
      const __mmask16 edge_left = m & open_left;
      const __mmask16 edge_right = m & open_right;
      const std::uint32_t lr_in = _mm512_mask_cmpgt_epu32_mask(edge_left, nv, _mm512_add_epi32(left, w1));
      const std::uint32_t rl_to_left = _mm512_mask_cmpgt_epu32_mask(edge_left, left, nv_w);
      const std::uint32_t rl_in = _mm512_mask_cmpgt_epu32_mask(edge_right, nv, _mm512_add_epi32(right, w1));
      const std::uint32_t lr_to_right = _mm512_mask_cmpgt_epu32_mask(edge_right, right, nv_w);
      bad_lr[k] = static_cast<std::uint16_t>(bad_lr[k] | lr_in | ((lr_to_right << 1) & 0xFFFFu));
      bad_lr[k + 1] = static_cast<std::uint16_t>(bad_lr[k + 1] | (lr_to_right >> 15));
      bad_rl[k] = static_cast<std::uint16_t>(bad_rl[k] | rl_in | (rl_to_left >> 1));
      bad_rl[k - 1] = static_cast<std::uint16_t>(bad_rl[k - 1] | ((rl_to_left & 1u) << 15));
      lr_first = std::min(lr_first, k);
      rl_last = std::max(rl_last, k);
    }
  }
  if (!any) return false;

  // 2. Along the row, each way (scan_chunk()): a chunk is scanned when it breaks consistency or
  // the carry into it went down.
  const ScanSteps steps{inf,
                        w1,
                        _mm512_set1_epi32(static_cast<int>(2 * kW)),
                        _mm512_set1_epi32(static_cast<int>(4 * kW)),
                        _mm512_set1_epi32(static_cast<int>(8 * kW)),
                        _mm512_mullo_epi32(_mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), w1),
                        _mm512_mullo_epi32(_mm512_setr_epi32(16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), w1)};
  const __m512i last_lane = _mm512_set1_epi32(15);
  const __m512i first_lane = _mm512_setzero_si512();
  bool carried = false;  // the neighbouring lane went down in this scan
  __m512i carry = inf;
  for (std::size_t k = lr_first; k < chunks; ++k) {
    if (bad_lr[k] == 0 && !carried) continue;
    const std::size_t x0 = k * kLanes;
    if (!carried) carry = _mm512_set1_epi32(static_cast<int>(row[x0 - 1]));
    const std::uint32_t m = open_mask(oc + x0) & valid_lanes(x0, s);
    const __m512i cur = load(row + x0);
    const __m512i a = scan_chunk<true>(cur, m, carry, steps);
    const std::uint32_t lower = _mm512_mask_cmplt_epu32_mask(static_cast<__mmask16>(m), a, cur);
    if (lower != 0) {
      _mm512_mask_storeu_epi32(row + x0, static_cast<__mmask16>(lower), a);
      // Lowered from the left: cannot break consistency to the left (the cell it came from
      // is lower still); the cells right of it are this scan's next lanes.
      touch(k, lower);
    }
    carried = (lower & 0x8000u) != 0;
    carry = _mm512_permutexvar_epi32(last_lane, a);
  }
  carried = false;
  for (std::size_t j = rl_last + 1; j-- > 0;) {
    if (bad_rl[j] == 0 && !carried) continue;
    const std::size_t x0 = j * kLanes;
    if (!carried) carry = _mm512_set1_epi32(static_cast<int>(row[x0 + kLanes]));
    const std::uint32_t m = open_mask(oc + x0) & valid_lanes(x0, s);
    const __m512i cur = load(row + x0);
    const __m512i a = scan_chunk<false>(cur, m, carry, steps);
    const std::uint32_t lower = _mm512_mask_cmplt_epu32_mask(static_cast<__mmask16>(m), a, cur);
    if (lower != 0) {
      _mm512_mask_storeu_epi32(row + x0, static_cast<__mmask16>(lower), a);
      touch(j, lower);
    }
    carried = (lower & 0x0001u) != 0;
    carry = _mm512_permutexvar_epi32(first_lane, a);
  }
  return true;
}

SWARMFIELD_AVX512 std::size_t check_row_vector(const SweepGrid& g, std::size_t y, std::uint64_t* seeds,
                                               std::size_t& count) noexcept {
  const std::size_t s = g.stride();
  const std::size_t chunks = chunks_of(g.width);
  const std::uint32_t* c = g.words + y * s;
  const std::uint8_t* o = g.open + y * s;
  const __m512i w1 = _mm512_set1_epi32(static_cast<int>(kW));
  const __m512i d1 = _mm512_set1_epi32(static_cast<int>(kD));
  const __m512i inf = _mm512_set1_epi32(static_cast<int>(kInf));
  std::size_t finite = 0;
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t x0 = k * kLanes;
    const __mmask16 m = open_mask(o + x0) & valid_lanes(x0, s);
    if (m == 0) continue;
    const __mmask16 e = open_mask(o + x0 + 1), wv = open_mask(o + x0 - 1);
    const __mmask16 so = open_mask(o + x0 + s), n = open_mask(o + x0 - s);
    __m512i best = _mm512_min_epu32(_mm512_min_epu32(load(c + x0 - 1), load(c + x0 + 1)),
                                    _mm512_min_epu32(load(c + x0 - s), load(c + x0 + s)));
    best = _mm512_add_epi32(best, w1);
    best = _mm512_mask_min_epu32(best, e & so, best, _mm512_add_epi32(load(c + x0 + s + 1), d1));
    best = _mm512_mask_min_epu32(best, wv & so, best, _mm512_add_epi32(load(c + x0 + s - 1), d1));
    best = _mm512_mask_min_epu32(best, wv & n, best, _mm512_add_epi32(load(c + x0 - s - 1), d1));
    best = _mm512_mask_min_epu32(best, e & n, best, _mm512_add_epi32(load(c + x0 - s + 1), d1));
    const __m512i own = load(c + x0);
    finite += static_cast<std::size_t>(__builtin_popcount(_mm512_mask_cmpneq_epu32_mask(m, own, inf)));
    std::uint32_t bad = _mm512_mask_cmplt_epu32_mask(m, best, own);
    if (bad == 0) [[likely]] continue;
    alignas(64) std::uint32_t offer[kLanes];
    _mm512_store_si512(offer, best);
    while (bad != 0) {
      const auto lane = static_cast<std::size_t>(__builtin_ctz(bad));
      seeds[count++] = static_cast<std::uint64_t>(offer[lane]) << 32 | (y * s + x0 + lane);
      bad &= bad - 1;
    }
  }
  return finite;
}

bool cpu_has_avx512() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

}  // namespace

std::size_t sweep_scratch_words(std::size_t width) noexcept {
  // Two 16-bit masks per chunk of a row, with a spare entry each side.
  return (chunks_of(width) + 2) + kLanes;
}

std::size_t sweep_chunk_words(std::size_t width) noexcept { return (chunks_of(width) + 63) / 64; }

bool sweep_row(const SweepGrid& grid, std::size_t y, std::size_t from, const std::uint64_t* visit,
               std::uint64_t* touched, std::uint32_t* scratch, bool vector) noexcept {
#if defined(SWARMFIELD_SWEEP_AVX512)
  if (vector) return sweep_row_vector(grid, y, from, visit, touched, scratch);
#else
  (void)vector;
  (void)scratch;
#endif
  (void)visit;
  return sweep_row_scalar(grid, y, from, touched);
}

std::size_t check_row(const SweepGrid& grid, std::size_t y, std::uint64_t* seeds, std::size_t& count,
                      bool vector) noexcept {
#if defined(SWARMFIELD_SWEEP_AVX512)
  if (vector) return check_row_vector(grid, y, seeds, count);
#else
  (void)vector;
#endif
  return check_row_scalar(grid, y, seeds, count);
}

namespace {

// Plain loops in blocks of 32 (a constant trip count is what GCC's -O2 vectorizer takes),
// with restrict pointers so the compiler knows the arrays do not overlap; clones per CPU.
constexpr std::size_t kBlock = 32;

SWARMFIELD_VECTOR_CLONES std::size_t words_of_row(std::uint32_t* __restrict row, const std::uint8_t* __restrict open,
                                                  std::size_t n) noexcept {
  std::uint32_t finite = 0;
  const auto cell = [&](std::size_t x) {
    const std::uint32_t v = row[x];
    const std::uint32_t searched = v == kInf ? IntegrationField::kSearchUnreached : v + 1u;
    row[x] = open[x] != 0 ? searched : IntegrationField::kSearchBlocked;
    finite += v != kInf ? 1u : 0u;  // blocked cells hold infinity
  };
  std::size_t x = 0;
  for (; x + kBlock <= n; x += kBlock) {
    for (std::size_t k = 0; k < kBlock; ++k) cell(x + k);
  }
  for (; x < n; ++x) cell(x);
  return finite;
}

}  // namespace

std::size_t convert_row(const SweepGrid& grid, std::size_t y) noexcept {
  const std::size_t s = grid.stride();
  return words_of_row(grid.words + y * s, grid.open + y * s, s);
}

void settle_row(const SweepGrid& grid, std::size_t y) noexcept {
  const std::size_t s = grid.stride();
  std::uint32_t* row = grid.words + y * s;
  const std::uint8_t* oc = grid.open + y * s;
  for (std::size_t x = 2; x <= grid.width; ++x) {
    if ((oc[x] & oc[x - 1]) != 0) row[x] = std::min(row[x], row[x - 1] + kW);
  }
  for (std::size_t x = grid.width - 1; x >= 1; --x) {
    if ((oc[x] & oc[x + 1]) != 0) row[x] = std::min(row[x], row[x + 1] + kW);
  }
}

bool sweep_vector_supported() noexcept {
#if defined(SWARMFIELD_SWEEP_AVX512)
  return cpu_has_avx512();
#else
  return false;
#endif
}

}  // namespace swarmfield::sim::detail
