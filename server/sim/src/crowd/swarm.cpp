// Swarm: structure-of-arrays agents and the per-tick steering step (SPEC "Swarm step").
//
// Every phase reads the previous tick's arrays and writes per-agent outputs, so one agent's
// new state never depends on another agent's new state: the phases run over a WorkerPool in
// fixed chunks of agents, with the pool's return as the barrier between them, and give the
// same result for any thread count.
#include "swarmfield/sim/crowd/swarm.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Hot helper lambdas called from more than one place: inlined, so what they update stays in
// registers (GCC and Clang spell it this way; elsewhere it is only a hint left out).
#if defined(__GNUC__) || defined(__clang__)
#define SWARMFIELD_ALWAYS_INLINE __attribute__((always_inline))
#else
#define SWARMFIELD_ALWAYS_INLINE
#endif

namespace swarmfield::sim {

namespace {

// Squared distance (world units^2) below which two agents count as coincident: their
// difference vector has no usable direction, so one is derived from their ids instead.
constexpr float kCoincidentDist2 = 1e-12f;
// Keeps floor() results inside int32 (maps are at most a few thousand cells wide).
constexpr double kCoordLimit = 1.0e9;
constexpr float kPi = std::numbers::pi_v<float>;
constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;
// How many agents ahead the steering pass prefetches map and field cells.
constexpr std::size_t kPrefetchAgents = 8;
constexpr std::size_t kCellRing = 16;  // > kPrefetchAgents, a power of two

/// Cell index along one axis: floor(v / cell_size), the same rule as GridMap::world_to_cell.
/// Dividing by 1 is exact, so the common unit-cell case skips the double division, and floors
/// by truncating and stepping down (exact for every float in range; std::floor is a library
/// call on baseline x86-64, and this runs several times per agent per tick).
inline std::int32_t cell_of(float v, float cell_size) noexcept {
  if (cell_size == 1.0f) {
    constexpr float kLimit = static_cast<float>(kCoordLimit);
    if (!(v > -kLimit)) return static_cast<std::int32_t>(-kCoordLimit);  // also NaN
    if (v > kLimit) return static_cast<std::int32_t>(kCoordLimit);
    const auto t = static_cast<std::int32_t>(v);
    return t - (v < static_cast<float>(t) ? 1 : 0);
  }
  const double c = std::floor(static_cast<double>(v) / static_cast<double>(cell_size));
  if (!(c > -kCoordLimit)) return static_cast<std::int32_t>(-kCoordLimit);  // also NaN
  if (c > kCoordLimit) return static_cast<std::int32_t>(kCoordLimit);
  return static_cast<std::int32_t>(c);
}

/// atan2 from the odd polynomial of Abramowitz & Stegun 4.4.47 on [0, 1] (max error 1e-5 rad)
/// and octant symmetry. Plain float arithmetic, so headings do not depend on the C library's
/// atan2f (not specified bit-exactly), and several times cheaper. Returns 0 for (0, 0).
inline float fast_atan2(float y, float x) noexcept {
  const float ax = std::abs(x), ay = std::abs(y);
  const float mx = std::max(ax, ay), mn = std::min(ax, ay);
  if (!(mx > 0.0f)) return 0.0f;
  const float a = mn / mx;
  const float s = a * a;
  float r = a * (0.9998660f + s * (-0.3302995f + s * (0.1801410f + s * (-0.0851330f + s * 0.0208351f))));
  if (ay > ax) r = 0.5f * kPi - r;
  if (x < 0.0f) r = kPi - r;
  return y < 0.0f ? -r : r;
}

inline bool finite(Vec2 v) noexcept { return std::isfinite(v.x) && std::isfinite(v.y); }

/// Radius used for wall collision: at least 1% of a cell (so the span tests below stay
/// meaningful) and below half a cell (so a clear position exists inside every walkable cell).
inline float collision_radius(float radius, float cell_size) noexcept {
  const float lo = 0.01f * cell_size;
  const float hi = 0.49f * cell_size;
  if (!(radius >= lo)) return lo;  // also NaN
  return radius > hi ? hi : radius;
}

/// Tolerance (world units) for "touching is not overlapping" in the span tests: a disc clamped
/// against a wall at k*cs - r must not count the wall cell as spanned when the float sum
/// x + r rounds a few ulps past k*cs. Grows with the map extent because float ulps do.
inline float span_epsilon(const GridMap& map) noexcept {
  const float cs = map.cell_size();
  const float extent = static_cast<float>(std::max(map.width(), map.height())) * cs;
  return 1e-4f * cs + 4e-7f * extent;
}

inline bool column_blocked(const GridMap& map, std::int32_t column, std::int32_t row0, std::int32_t row1) noexcept {
  for (std::int32_t r = row0; r <= row1; ++r) {
    if (!map.walkable(column, r)) return true;
  }
  return false;
}

inline bool row_blocked(const GridMap& map, std::int32_t row, std::int32_t col0, std::int32_t col1) noexcept {
  for (std::int32_t c = col0; c <= col1; ++c) {
    if (!map.walkable(c, row)) return true;
  }
  return false;
}

/// New coordinate along one axis: `pos + delta`, clamped so the square [p - r, p + r] enters
/// no blocked line (column or row) beyond the centre's own one. `blocked(k)` tests line k over
/// the span of the other axis. Walks lines outward from the centre until the first blocked one.
template <class Blocked>
inline float slide_axis(float pos, float delta, float r, float cs, float eps, Blocked&& blocked) noexcept {
  const std::int32_t centre = cell_of(pos, cs);
  float target = pos + delta;
  const std::int32_t k_hi = cell_of(std::max(target, pos) + r - eps, cs);
  for (std::int32_t k = centre + 1; k <= k_hi; ++k) {
    if (blocked(k)) {
      target = std::min(target, static_cast<float>(k) * cs - r);
      break;
    }
  }
  const std::int32_t k_lo = cell_of(std::min(target, pos) - r + eps, cs);
  for (std::int32_t k = centre - 1; k >= k_lo; --k) {
    if (blocked(k)) {
      target = std::max(target, static_cast<float>(k + 1) * cs + r);
      break;
    }
  }
  return target;
}

/// Deterministic unit direction of an id: the golden-angle spiral, so consecutive ids point
/// in well-spread directions (Vogel 1979).
inline Vec2 id_direction(std::uint32_t id) noexcept {
  constexpr double kGoldenAngle = 2.39996322972865332;  // pi * (3 - sqrt 5)
  const double a = std::fmod(static_cast<double>(id) * kGoldenAngle, 2.0 * std::numbers::pi);
  return {static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a))};
}

/// This tick's displacement, in units of max_step, of an agent that shares its exact position
/// with `group - 1` others, `rank` of which have a smaller id. The stack takes the points of a
/// Vogel (golden-angle) spiral, which fill a disc evenly (Vogel 1979): it bursts into a filled
/// disc rather than a ring (where a capped push would put everyone), so the smallest pairwise
/// distance grows with the disc. Depends only on ids (deterministic); distinct ranks give
/// distinct points.
inline Vec2 coincident_push(std::uint32_t rank, std::uint32_t group) noexcept {
  const float r = std::sqrt((static_cast<float>(rank) + 0.5f) / static_cast<float>(group));
  return id_direction(rank) * r;
}

/// Ticks a stack of `group` coincident agents keeps bursting: the Vogel disc of coincident_push
/// grows by max_step a tick (each agent repeats its first displacement, so the pattern only
/// scales), and its smallest spacing, between the innermost points, is 1.546 / sqrt(group) of
/// the disc radius for group >= 4 (larger below). The burst lasts until that spacing reaches one
/// disc diameter `contact_d`: ceil(contact_d * sqrt(group) / (1.546 * max_step)), 1 to 255 ticks.
/// A uniformly scaled pattern is the fastest way out for agents that cannot exceed max_step:
/// plain contact pushes cancel inside a dense stack and it would spread by slow diffusion.
inline std::uint8_t burst_ticks(std::uint32_t group, float contact_d, float max_step) noexcept {
  constexpr float kVogelMinSpacing = 1.546f;
  if (!(max_step > 0.0f)) return 1;
  const float ticks = std::ceil(contact_d * std::sqrt(static_cast<float>(group)) / (kVogelMinSpacing * max_step));
  if (!(ticks >= 1.0f)) return 1;
  return ticks >= 255.0f ? std::uint8_t{255} : static_cast<std::uint8_t>(ticks);
}

/// Wraps an angle (radians) into (-pi, pi].
inline float wrap_angle(float a) noexcept {
  if (!std::isfinite(a)) return 0.0f;
  if (a > kPi || a <= -kPi) {
    a = std::remainder(a, kTwoPi);
    if (a <= -kPi) a += kTwoPi;
  }
  return a;
}

/// Replaces non-finite or out-of-range tuning values by usable ones so step() never divides
/// by zero or produces NaN whatever the caller passed.
SwarmParams sanitize(SwarmParams p) noexcept {
  const SwarmParams d{};
  auto ok = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (!ok(p.radius)) p.radius = d.radius;
  if (!ok(p.max_speed)) p.max_speed = d.max_speed;
  if (!ok(p.separation_radius) || p.separation_radius <= 0.0f) p.separation_radius = std::max(2.0f * p.radius, 1e-3f);
  if (!std::isfinite(p.flow_weight)) p.flow_weight = d.flow_weight;
  if (!ok(p.obstacle_max_force)) p.obstacle_max_force = d.obstacle_max_force;
  if (!ok(p.overlap_stiffness)) p.overlap_stiffness = d.overlap_stiffness;
  if (!ok(p.contact_stiffness)) p.contact_stiffness = d.contact_stiffness;
  if (!ok(p.max_turn_rate)) p.max_turn_rate = d.max_turn_rate;
  if (!ok(p.commit_min_speed)) p.commit_min_speed = d.commit_min_speed;
  if (!ok(p.yield_fraction)) p.yield_fraction = d.yield_fraction;
  p.yield_fraction = std::min(p.yield_fraction, 1.0f);
  if (!ok(p.press_overlap)) p.press_overlap = d.press_overlap;
  p.press_overlap = std::min(p.press_overlap, 1.0f);
  if (p.parallel_chunk_agents == 0) p.parallel_chunk_agents = d.parallel_chunk_agents;
  return p;
}

/// Direction (unit) from `p` to the centre of the nearest cell `integration` can reach, within
/// `range` cells (Chebyshev) of p's cell, or {0,0} when there is none.
Vec2 escape_direction(const GridMap& map, const IntegrationField& integration, Vec2 p, std::int32_t cx,
                      std::int32_t cy, std::int32_t range) noexcept {
  float best_d2 = std::numeric_limits<float>::infinity();
  Vec2 best{};
  for (std::int32_t y = cy - range; y <= cy + range; ++y) {
    for (std::int32_t x = cx - range; x <= cx + range; ++x) {
      if (!integration.reachable(x, y) || !map.walkable(x, y)) continue;
      const Vec2 d = map.cell_center({x, y}) - p;
      const float d2 = dot(d, d);
      if (d2 < best_d2) {
        best_d2 = d2;
        best = d;
      }
    }
  }
  return normalized_or_zero(best);
}


/// Route commitment (hysteresis): the smoothed flow direction `desired` at an agent in cell
/// (cx, cy) that moved with velocity `v` last tick. When the blend points back (more than 90
/// degrees from v), the agent does not reverse if it can keep going: first, when its own cell's
/// arrow is still within 90 degrees of v, it follows that arrow (the blend was pulled back by a
/// neighbouring cell, e.g. one whose tie between two equal routes broke the other way); else,
/// when a neighbour cell roughly ahead (within 67.5 degrees of v, legal step, no corner cut) is
/// still downhill in `integration` (lower than the agent's cell), it keeps going along v: both
/// ways are then (nearly) as good, and reversing would only make it dither each time a goal
/// flickers between two cells (C5) or a tie in the field flips. Below `min_speed` the blend wins.
Vec2 keep_route(const GridMap& map, const FlowField& flow, const IntegrationField& integration, std::int32_t cx,
                std::int32_t cy, Vec2 desired, Vec2 v, float min_speed) noexcept {
  if (dot(desired, v) >= 0.0f) return desired;  // the common case first: no square root
  const float speed = length(v);
  if (!(speed >= min_speed)) return desired;
  const Vec2 own_arrow = direction_vector(flow.at(cx, cy));
  if (dot(own_arrow, v) > 0.0f) return own_arrow;
  if (!integration.reachable(cx, cy)) return desired;
  const Vec2 u = v * (1.0f / speed);
  const std::uint32_t own = integration.raw(cx, cy);
  constexpr float kCos67 = 0.38268343f;
  for (std::size_t d = 0; d < kDirectionOffsets.size(); ++d) {
    const CellCoord o = kDirectionOffsets[d];
    if (dot(direction_vector(static_cast<FlowDirection>(d)), u) < kCos67) continue;
    const std::int32_t ax = cx + o.x, ay = cy + o.y;
    if (!integration.reachable(ax, ay) || integration.raw(ax, ay) >= own) continue;
    if (o.x != 0 && o.y != 0 && (!map.walkable(ax, cy) || !map.walkable(cx, ay))) continue;  // corner
    return u;
  }
  return desired;
}

/// How far (world units) a disc may move along a unit direction before it touches another disc:
/// the other's centre is at distance `d` in a direction whose cosine with the move is
/// `approach` (> 0), and discs touch at `contact_d`. Exact for the straight sweep: the smallest
/// L >= 0 with |d u - L s| = contact_d, or +infinity when the sweep passes by. 0 when the
/// discs already overlap (any such move brings them closer).
inline float free_path(float d, float approach, float contact_d) noexcept {
  if (d <= contact_d) return 0.0f;
  const float disc = d * d * approach * approach - (d * d - contact_d * contact_d);
  if (disc < 0.0f) return std::numeric_limits<float>::infinity();
  return std::max(0.0f, d * approach - std::sqrt(disc));
}

// ---------------------------------------------------------------------------------------------
// Neighbour gather of the separation pass (see step_impl), for one agent over a list of slots
// that passed the distance test. Written twice: four hits at a time with SSE2 (x86-64), and one
// at a time (the definition); both perform the same IEEE operations on the same values, so the
// results are the same bit for bit. The SSE2 version computes every term for every hit and masks
// out the ones the definition skips, instead of branching on each test (the tests are close to
// coin flips in a crowd, and mispredicted branches cost more than the arithmetic). Masked terms
// are +0 or +infinity: sums start at +0 and a sum is -0 only when both addends are, so adding +0
// changes nothing, and min(allow, +inf) is allow.

/// The separation pass's view of the other agents (slot-indexed arrays) and its constants.
struct GatherInput {
  const float* nx;
  const float* ny;
  const std::uint32_t* nid;
  const std::uint32_t* nprio;
  const float* npx;
  const float* npy;
  float inv_r, cd, pd, yf;
};

/// One agent's side of the gather.
struct GatherAgent {
  float px, py;    // position
  float skx, sky;  // unit direction of its path (when moving)
  std::uint32_t id, prio;
  bool moving;
};

/// What the gather accumulates for one agent.
struct GatherSums {
  float sx = 0.0f, sy = 0.0f;  // kernel sum
  float kx = 0.0f, ky = 0.0f;  // contact sum
  float allow;                 // free path along the path direction
  std::uint32_t count = 0, coincident = 0, rank = 0;
};

/// The definition: one neighbour slot `m` within R of the agent (m is not the agent).
SWARMFIELD_ALWAYS_INLINE inline void gather_one(const GatherInput& in, const GatherAgent& a, std::uint32_t m,
                                                GatherSums& s) noexcept {
  const float dx = a.px - in.nx[m], dy = a.py - in.ny[m];
  const float d2 = dx * dx + dy * dy;
  ++s.count;
  if (d2 < kCoincidentDist2) {  // no direction: handled by id (see step_impl)
    ++s.coincident;
    if (in.nid[m] < a.id) ++s.rank;
    return;
  }
  const float d = std::sqrt(d2);
  const float inv_d = 1.0f / d;
  const float w = (1.0f - d * in.inv_r) * inv_d;  // kernel weight; inv_d normalizes (dx, dy)
  s.sx += dx * w;
  s.sy += dy * w;
  if (d < in.cd) {
    const float c = (in.cd - d) * 0.5f * inv_d;
    s.kx += dx * c;
    s.ky += dy * c;
  }
  if (!a.moving) return;
  // Unit vector toward m, and how fast moving along the path closes in on it.
  const float ux = -dx * inv_d, uy = -dy * inv_d;
  const float approach = a.skx * ux + a.sky * uy;
  if (approach <= 0.0f) return;  // m is beside or behind
  // Already pressed into m by more than press_overlap: a jammed crowd (a packed spawn, a mob at
  // a door) only clears if its members push on; the contact term keeps it bounded.
  if (d < in.pd) return;
  // Head-on or converging (m's path also closes in on us): one of the two must go first, or
  // both wait for ever (the two-agent arch at a door). The one with right of way (nearer the
  // goal, then the lower id) ignores the other, whose own pass makes it yield.
  const float m_approach = -(in.npx[m] * ux + in.npy[m] * uy);
  const bool converging = m_approach > 0.0f;
  if (converging && (a.prio < in.nprio[m] || (a.prio == in.nprio[m] && a.id < in.nid[m]))) return;
  s.allow = std::min(s.allow, in.yf * free_path(d, approach, in.cd));
  if (converging) {
    // Yielding: keep clear of where m is heading too (one diameter along its path), or m walks
    // into us and shoves us back the next tick.
    const float wx = in.nx[m] + in.npx[m] * in.cd - a.px, wy = in.ny[m] + in.npy[m] * in.cd - a.py;
    const float wd = std::sqrt(wx * wx + wy * wy);
    if (wd > 1e-6f) {
      const float ahead = (a.skx * wx + a.sky * wy) / wd;
      if (ahead > 0.0f) s.allow = std::min(s.allow, in.yf * free_path(wd, ahead, in.cd));
    }
  }
}

#if defined(__SSE2__) && !defined(SWARMFIELD_NO_SIMD)
#define SWARMFIELD_SIMD_GATHER 1

/// All-ones in the lanes whose bit is set in the index (lane 0 = bit 0).
alignas(16) constexpr std::uint32_t kLaneMasks[16][4] = {
    {0, 0, 0, 0},  {~0u, 0, 0, 0},  {0, ~0u, 0, 0},  {~0u, ~0u, 0, 0},  {0, 0, ~0u, 0},  {~0u, 0, ~0u, 0},
    {0, ~0u, ~0u, 0},  {~0u, ~0u, ~0u, 0},  {0, 0, 0, ~0u},  {~0u, 0, 0, ~0u},  {0, ~0u, 0, ~0u},  {~0u, ~0u, 0, ~0u},
    {0, 0, ~0u, ~0u},  {~0u, 0, ~0u, ~0u},  {0, ~0u, ~0u, ~0u},  {~0u, ~0u, ~0u, ~0u}};

inline __m128 lane_mask(std::uint32_t bits) noexcept {
  return _mm_castsi128_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(kLaneMasks[bits & 15u])));
}

/// free_path() on four lanes: same operations, the branches as selects.
inline __m128 free_path4(__m128 d, __m128 approach, __m128 cd) noexcept {
  const __m128 d_sq = _mm_mul_ps(d, d);
  const __m128 disc = _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(d_sq, approach), approach), _mm_sub_ps(d_sq, _mm_mul_ps(cd, cd)));
  const __m128 x = _mm_sub_ps(_mm_mul_ps(d, approach), _mm_sqrt_ps(disc));
  const __m128 zero = _mm_setzero_ps();
  const __m128 clamped = _mm_and_ps(_mm_cmplt_ps(zero, x), x);  // std::max(0, x): 0 unless 0 < x
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  const __m128 beyond = _mm_cmplt_ps(disc, zero);                // the sweep passes by
  const __m128 r = _mm_or_ps(_mm_and_ps(beyond, inf), _mm_andnot_ps(beyond, clamped));
  return _mm_andnot_ps(_mm_cmple_ps(d, cd), r);                  // already touching: 0
}

/// Selects a where mask is set, else b.
inline __m128 select4(__m128 mask, __m128 a, __m128 b) noexcept {
  return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

/// gather_one() for the hits slots[0, n), four at a time, in order.
SWARMFIELD_ALWAYS_INLINE inline void gather_hits(const GatherInput& in, const GatherAgent& a, const std::uint32_t* slots,
                                                 std::uint32_t n, GatherSums& s) noexcept {
  const __m128 px = _mm_set1_ps(a.px), py = _mm_set1_ps(a.py);
  const __m128 one = _mm_set1_ps(1.0f), zero = _mm_setzero_ps();
  const __m128 inv_r = _mm_set1_ps(in.inv_r), cd = _mm_set1_ps(in.cd), pd = _mm_set1_ps(in.pd), yf = _mm_set1_ps(in.yf);
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  for (std::uint32_t i = 0; i < n; i += 4) {
    const std::uint32_t lanes = n - i < 4 ? n - i : 4;
    const std::uint32_t valid_bits = (1u << lanes) - 1u;
    // Missing lanes repeat the first hit (any valid slot; they are masked out).
    const std::uint32_t m0 = slots[i], m1 = lanes > 1 ? slots[i + 1] : m0, m2 = lanes > 2 ? slots[i + 2] : m0,
                        m3 = lanes > 3 ? slots[i + 3] : m0;
    const __m128 nx = _mm_setr_ps(in.nx[m0], in.nx[m1], in.nx[m2], in.nx[m3]);
    const __m128 ny = _mm_setr_ps(in.ny[m0], in.ny[m1], in.ny[m2], in.ny[m3]);
    const __m128 dx = _mm_sub_ps(px, nx), dy = _mm_sub_ps(py, ny);
    const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
    const __m128 coincident = _mm_cmplt_ps(d2, _mm_set1_ps(kCoincidentDist2));
    const auto coincident_bits = static_cast<std::uint32_t>(_mm_movemask_ps(coincident)) & valid_bits;
    s.count += lanes;
    if (coincident_bits != 0) {  // rare: a stack of agents on one point
      const std::uint32_t m[4] = {m0, m1, m2, m3};
      for (std::uint32_t j = 0; j < 4; ++j) {
        if ((coincident_bits >> j) & 1u) {
          ++s.coincident;
          if (in.nid[m[j]] < a.id) ++s.rank;
        }
      }
    }
    const __m128 normal = _mm_andnot_ps(coincident, lane_mask(valid_bits));
    const __m128 d = _mm_sqrt_ps(d2);
    const __m128 inv_d = _mm_div_ps(one, d);
    const __m128 w = _mm_mul_ps(_mm_sub_ps(one, _mm_mul_ps(d, inv_r)), inv_d);
    const __m128 touching = _mm_and_ps(normal, _mm_cmplt_ps(d, cd));
    const __m128 c = _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(cd, d), _mm_set1_ps(0.5f)), inv_d);
    alignas(16) float tx[4], ty[4], cx[4], cy[4];
    _mm_store_ps(tx, _mm_and_ps(normal, _mm_mul_ps(dx, w)));
    _mm_store_ps(ty, _mm_and_ps(normal, _mm_mul_ps(dy, w)));
    _mm_store_ps(cx, _mm_and_ps(touching, _mm_mul_ps(dx, c)));
    _mm_store_ps(cy, _mm_and_ps(touching, _mm_mul_ps(dy, c)));
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.sx += tx[j];
      s.sy += ty[j];
      s.kx += cx[j];
      s.ky += cy[j];
    }
    if (!a.moving) continue;
    const __m128 sign = _mm_set1_ps(-0.0f);  // xor with it: the unary minus
    const __m128 ux = _mm_mul_ps(_mm_xor_ps(dx, sign), inv_d);
    const __m128 uy = _mm_mul_ps(_mm_xor_ps(dy, sign), inv_d);
    const __m128 approach = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), ux), _mm_mul_ps(_mm_set1_ps(a.sky), uy));
    // Goes on past "approach <= 0" and "d < pd" (NaN goes on, as in gather_one).
    const __m128 ahead_of_us = _mm_and_ps(_mm_cmpnle_ps(approach, zero), _mm_cmpnlt_ps(d, pd));
    const __m128 npx = _mm_setr_ps(in.npx[m0], in.npx[m1], in.npx[m2], in.npx[m3]);
    const __m128 npy = _mm_setr_ps(in.npy[m0], in.npy[m1], in.npy[m2], in.npy[m3]);
    const __m128 m_approach = _mm_xor_ps(_mm_add_ps(_mm_mul_ps(npx, ux), _mm_mul_ps(npy, uy)), sign);
    const __m128 converging = _mm_cmpgt_ps(m_approach, zero);
    // Right of way over m (ours: ignore m when converging).
    auto ours = [&](std::uint32_t m) noexcept {
      return static_cast<std::uint32_t>((a.prio < in.nprio[m]) | ((a.prio == in.nprio[m]) & (a.id < in.nid[m])));
    };
    const std::uint32_t way_bits = ours(m0) | (ours(m1) << 1) | (ours(m2) << 2) | (ours(m3) << 3);
    const __m128 yields = _mm_andnot_ps(_mm_and_ps(converging, lane_mask(way_bits)), _mm_and_ps(normal, ahead_of_us));
    const __m128 first = select4(yields, _mm_mul_ps(yf, free_path4(d, approach, cd)), inf);
    // Yielding to a converging m: also keep clear of where it is heading.
    const __m128 wx = _mm_sub_ps(_mm_add_ps(nx, _mm_mul_ps(npx, cd)), px);
    const __m128 wy = _mm_sub_ps(_mm_add_ps(ny, _mm_mul_ps(npy, cd)), py);
    const __m128 wd = _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(wx, wx), _mm_mul_ps(wy, wy)));
    const __m128 ahead =
        _mm_div_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), wx), _mm_mul_ps(_mm_set1_ps(a.sky), wy)), wd);
    const __m128 second_on = _mm_and_ps(_mm_and_ps(yields, converging),
                                        _mm_and_ps(_mm_cmpgt_ps(wd, _mm_set1_ps(1e-6f)), _mm_cmpgt_ps(ahead, zero)));
    const __m128 second = select4(second_on, _mm_mul_ps(yf, free_path4(wd, ahead, cd)), inf);
    alignas(16) float f1[4], f2[4];
    _mm_store_ps(f1, first);
    _mm_store_ps(f2, second);
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.allow = std::min(s.allow, f1[j]);
      s.allow = std::min(s.allow, f2[j]);
    }
  }
}
#else
SWARMFIELD_ALWAYS_INLINE inline void gather_hits(const GatherInput& in, const GatherAgent& a, const std::uint32_t* slots,
                                                 std::uint32_t n, GatherSums& s) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) gather_one(in, a, slots[i], s);
}
#endif

}  // namespace

/// Rounds a door post: `p1` is where `move` from `p0` ended after wall sliding. When an axis
/// was stopped by a wall cell only the disc's edge overlaps (the cell beside the centre's own
/// row or column is blocked, the one straight ahead is free), the disc is moved sideways toward
/// the opening by what the stopped axis lost, within `budget` in total (so the speed limit
/// holds). Without this an agent pressed against a post stays there until a push frees it:
/// the bounding-square collision blocks it although its centre is already in line with the
/// opening (the "corner snag" of tile games). Never moves into a wall (slide_along_walls).
Vec2 slide_round_corner(const GridMap& map, Vec2 p0, Vec2 p1, Vec2 move, float budget, float radius) noexcept {
  const float cs = map.cell_size();
  const float r = collision_radius(radius, cs);
  const float eps = 2.0f * span_epsilon(map);
  for (int axis = 0; axis < 2; ++axis) {
    const float lost = axis == 0 ? move.x - (p1.x - p0.x) : move.y - (p1.y - p0.y);
    if (std::abs(lost) <= eps) continue;
    const float along = axis == 0 ? p1.x : p1.y;   // coordinate on the stopped axis
    const float across = axis == 0 ? p1.y : p1.x;  // coordinate on the other axis
    const std::int32_t ahead = cell_of(along + (lost > 0.0f ? r + eps : -(r + eps)), cs);
    const std::int32_t line = cell_of(across, cs);
    auto walkable = [&](std::int32_t a, std::int32_t b) { return axis == 0 ? map.walkable(a, b) : map.walkable(b, a); };
    if (!walkable(ahead, line)) continue;  // a flat wall straight ahead: nothing to round
    float shift = 0.0f;
    const float lo = static_cast<float>(line) * cs, hi = lo + cs;
    if (across - r < lo - eps && !walkable(ahead, line - 1)) shift = lo + r - across;
    else if (across + r > hi + eps && !walkable(ahead, line + 1)) shift = hi - r - across;
    if (shift == 0.0f) continue;
    const Vec2 used = p1 - p0;
    const float room = std::min(std::abs(lost), budget - length(used));
    if (!(room > 0.0f)) break;
    shift = std::clamp(shift, -room, room);
    p1 = slide_along_walls(map, p1, axis == 0 ? Vec2{0.0f, shift} : Vec2{shift, 0.0f}, radius);
  }
  return p1;
}

namespace {
}  // namespace

// ---------------------------------------------------------------------------------------------
// Free helpers: wall sliding and moving out of walls (also used for players by World).

Vec2 slide_along_walls(const GridMap& map, Vec2 from, Vec2 move, float radius) noexcept {
  if (!finite(from)) return from;
  if (!finite(move)) return from;
  const float cs = map.cell_size();
  const float r = collision_radius(radius, cs);
  const float eps = span_epsilon(map);

  // X first, over the rows the disc's square spans now.
  const std::int32_t row0 = cell_of(from.y - r + eps, cs);
  const std::int32_t row1 = cell_of(from.y + r - eps, cs);
  const float x = slide_axis(from.x, move.x, r, cs, eps,
                             [&](std::int32_t k) { return column_blocked(map, k, row0, row1); });
  // Then Y, over the columns spanned at the new x.
  const std::int32_t col0 = cell_of(x - r + eps, cs);
  const std::int32_t col1 = cell_of(x + r - eps, cs);
  const float y = slide_axis(from.y, move.y, r, cs, eps,
                             [&](std::int32_t k) { return row_blocked(map, k, col0, col1); });
  return {x, y};
}

Vec2 move_out_of_walls(const GridMap& map, Vec2 p, float radius) noexcept {
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  const float cs = map.cell_size();
  if (!finite(p)) p = {static_cast<float>(w) * cs * 0.5f, static_cast<float>(h) * cs * 0.5f};
  if (w <= 0 || h <= 0) return p;
  // Far-off points are first brought onto the map's rectangle (keeps distances finite).
  p.x = std::clamp(p.x, 0.0f, static_cast<float>(w) * cs);
  p.y = std::clamp(p.y, 0.0f, static_cast<float>(h) * cs);
  const std::int32_t cx = std::clamp(cell_of(p.x, cs), 0, w - 1);
  const std::int32_t cy = std::clamp(cell_of(p.y, cs), 0, h - 1);

  // Ring search outward (Chebyshev rings); every cell of ring k is at least (k - 1) cells from
  // p, so stop once that bound exceeds the best distance found.
  float best_d2 = std::numeric_limits<float>::infinity();
  CellCoord best{-1, -1};
  auto consider = [&](std::int32_t x, std::int32_t y) {
    if (!map.walkable(x, y)) return;
    const float x0 = static_cast<float>(x) * cs, y0 = static_cast<float>(y) * cs;
    const float dx = p.x < x0 ? x0 - p.x : (p.x > x0 + cs ? p.x - (x0 + cs) : 0.0f);
    const float dy = p.y < y0 ? y0 - p.y : (p.y > y0 + cs ? p.y - (y0 + cs) : 0.0f);
    const float d2 = dx * dx + dy * dy;
    if (d2 < best_d2) {
      best_d2 = d2;
      best = {x, y};
    }
  };
  const std::int32_t max_ring = std::max(w, h);
  for (std::int32_t k = 0; k <= max_ring; ++k) {
    if (best.x >= 0 && k >= 1) {
      const float bound = static_cast<float>(k - 1) * cs;
      if (bound * bound > best_d2) break;
    }
    if (k == 0) {
      consider(cx, cy);
      continue;
    }
    for (std::int32_t y = cy - k; y <= cy + k; ++y) {
      if (y < 0 || y >= h) continue;
      if (y == cy - k || y == cy + k) {
        for (std::int32_t x = std::max(cx - k, 0); x <= std::min(cx + k, w - 1); ++x) consider(x, y);
      } else {
        if (cx - k >= 0) consider(cx - k, y);
        if (cx + k < w) consider(cx + k, y);
      }
    }
  }
  if (best.x < 0) return p;
  const float r = collision_radius(radius, cs);
  const float x0 = static_cast<float>(best.x) * cs, y0 = static_cast<float>(best.y) * cs;
  return {std::clamp(p.x, x0 + r, x0 + cs - r), std::clamp(p.y, y0 + r, y0 + cs - r)};
}

// ---------------------------------------------------------------------------------------------
// Swarm

Swarm::Swarm(const SwarmParams& params, std::size_t capacity) : params_(sanitize(params)), capacity_(capacity) {
  // Capacity is fixed here so step() and add() never allocate (Detour's crowd does the same).
  ids_.reserve(capacity);
  for (auto* v : {&xs_, &ys_, &vxs_, &vys_, &headings_, &steer_x_, &steer_y_, &next_xs_, &next_ys_}) {
    v->reserve(capacity);
  }
  burst_ticks_.reserve(capacity);
  perm_burst_.reserve(capacity);
  perm_vxs_.reserve(capacity);
  prio_.reserve(capacity);
  path_x_.reserve(capacity);
  path_y_.reserve(capacity);
  open_here_.reserve(capacity);
  perm_vys_.reserve(capacity);
  perm_ids_.reserve(capacity);
  perm_headings_.reserve(capacity);
  hash_.reserve(capacity);
}

std::size_t Swarm::index_of(std::uint32_t id) const noexcept {
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] == id) return i;
  }
  return kNoIndex;
}

std::uint32_t Swarm::add(Vec2 p, float heading) {
  if (ids_.size() >= capacity_ || next_id_ == kInvalidAgent) return kInvalidAgent;
  const std::uint32_t id = next_id_++;
  ids_.push_back(id);
  // A non-finite position is kept non-finite on purpose: the next step() moves it to the
  // nearest walkable cell like any other invalid position.
  xs_.push_back(p.x);
  ys_.push_back(p.y);
  needs_repair_ = true;
  vxs_.push_back(0.0f);
  vys_.push_back(0.0f);
  headings_.push_back(wrap_angle(heading));
  burst_ticks_.push_back(0);
  return id;
}

void Swarm::clear() noexcept {
  ids_.clear();
  xs_.clear();
  ys_.clear();
  vxs_.clear();
  vys_.clear();
  headings_.clear();
  burst_ticks_.clear();
}

void Swarm::set_environment(const GridMap& map, std::span<const Obstacle> obstacles) {
  obstacles_.clear();
  for (const Obstacle& o : obstacles) {
    if (!finite(o.center) || !std::isfinite(o.radius) || o.radius < 0.0f) continue;  // ignore bad props
    obstacles_.push_back(o);
  }
  obstacle_xs_.resize(obstacles_.size());
  obstacle_ys_.resize(obstacles_.size());
  for (std::size_t i = 0; i < obstacles_.size(); ++i) {
    obstacle_xs_[i] = obstacles_[i].center.x;
    obstacle_ys_[i] = obstacles_[i].center.y;
  }
  configure_hashes(map);
  refresh_map_cache(map);
  needs_repair_ = true;
}

void Swarm::configure_hashes(const GridMap& map) {
  const float cs = map.cell_size();
  env_world_width_ = static_cast<float>(map.width()) * cs;
  env_world_height_ = static_cast<float>(map.height()) * cs;
  hash_.configure(env_world_width_, env_world_height_, params_.separation_radius);
  hash_.reserve(capacity_);
  float max_obstacle_radius = 0.0f;
  for (const Obstacle& o : obstacles_) max_obstacle_radius = std::max(max_obstacle_radius, o.radius);
  // An obstacle acts within separation_radius of its surface, so a hash cell of
  // R + largest radius keeps every obstacle that can act inside the 3x3 query block.
  obstacle_hash_.configure(env_world_width_, env_world_height_, params_.separation_radius + max_obstacle_radius);
  obstacle_hash_.rebuild(obstacle_xs_, obstacle_ys_);
}

bool Swarm::refresh_map_cache(const GridMap& map) {
  const std::uint8_t* source = map.costs().data();
  if (source == open_source_ && map.width() == open_width_ && map.height() == open_height_ &&
      map.revision() == open_revision_) {
    return false;
  }
  open_source_ = source;
  open_width_ = map.width();
  open_height_ = map.height();
  open_revision_ = map.revision();
  const std::int32_t w = open_width_, h = open_height_;
  open_cells_.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), 0);
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      bool open = true;
      for (std::int32_t dy = -1; dy <= 1 && open; ++dy) {
        for (std::int32_t dx = -1; dx <= 1 && open; ++dx) open = map.walkable(x + dx, y + dy);
      }
      open_cells_[map.index(x, y)] = open ? 1 : 0;
    }
  }
  return true;
}

void Swarm::step(const GridMap& map, const FlowField& flow, float dt, WorkerPool* pool) {
  step_impl(map, flow, nullptr, dt, pool);
}

void Swarm::step(const GridMap& map, const FlowField& flow, const IntegrationField& integration, float dt,
                 WorkerPool* pool) {
  step_impl(map, flow, &integration, dt, pool);
}

void Swarm::step_impl(const GridMap& map, const FlowField& flow, const IntegrationField* integration, float dt,
                      WorkerPool* pool) {
  if (!(dt > 0.0f) || !std::isfinite(dt)) return;
  const std::size_t n = ids_.size();
  const float cs = map.cell_size();
  const std::int32_t map_w = map.width(), map_h = map.height();
  if (static_cast<float>(map_w) * cs != env_world_width_ || static_cast<float>(map_h) * cs != env_world_height_) {
    configure_hashes(map);  // first step on a map of this size (allocates once)
    needs_repair_ = true;
  }
  if (refresh_map_cache(map)) needs_repair_ = true;  // walls may have appeared under agents
  if (integration != nullptr && (integration->width() != map_w || integration->height() != map_h)) {
    integration = nullptr;  // not built for this map: cannot tell unreachable cells apart
  }
  const float radius = collision_radius(params_.radius, cs);
  const float max_step = params_.max_speed * dt;
  const float sep_r = params_.separation_radius;
  const float sep_r2 = sep_r * sep_r;
  const float inv_sep_r = 1.0f / sep_r;
  const float contact_d = 2.0f * params_.radius;
  const float stiffness = params_.overlap_stiffness;
  const float contact_stiffness = params_.contact_stiffness;
  // The fast path of wall sliding is valid while a move cannot reach past the 3x3 block.
  const bool small_moves = max_step + radius < cs;
  const std::size_t chunk = params_.parallel_chunk_agents;

  steer_x_.resize(n);
  steer_y_.resize(n);
  prio_.resize(n);
  path_x_.resize(n);
  path_y_.resize(n);
  open_here_.resize(n);
  next_xs_.resize(n);
  next_ys_.resize(n);

  // Threading: every phase below is a parallel_for over fixed chunks of `chunk` agents. A
  // phase writes only the slots of its own agents and reads the previous tick's arrays or the
  // completed outputs of earlier phases (the pool's return is the barrier), so an agent's
  // arithmetic never depends on the thread count. The one cross-agent step, the hash rebuild,
  // is a stable sort by cell, whose result is unique (see SpatialHash::rebuild).

  // --- Repair: positions that are non-finite or inside a blocked cell (set by add(),
  //     set_position() or a wall that appeared) move to the nearest point clear of walls in the
  //     nearest walkable cell. Only needed after such a change: step() itself never leaves an
  //     agent in a wall, so this loop is skipped on ordinary ticks.
  if (needs_repair_) {
    std::atomic<bool> invalid{false};  // an OR: the same whatever order chunks finish in
    parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
      bool bad = false;
      for (std::size_t i = begin; i < end; ++i) {
        const Vec2 p{xs_[i], ys_[i]};
        if (finite(p) && map.walkable(cell_of(p.x, cs), cell_of(p.y, cs))) continue;
        const Vec2 q = move_out_of_walls(map, p, radius);
        xs_[i] = q.x;
        ys_[i] = q.y;
        if (!map.walkable(cell_of(q.x, cs), cell_of(q.y, cs))) bad = true;  // map has no walkable cell
      }
      if (bad) invalid.store(true, std::memory_order_relaxed);
    });
    has_invalid_ = invalid.load(std::memory_order_relaxed);
    needs_repair_ = false;
  }

  // --- Rebuild hash, and reorder agents into its cell-sorted order -----------------------------
  // Agent i of this step is slot i of the hash: neighbours, map cells and flow cells of
  // consecutive agents are close in memory, which matters more than anything else at 100k
  // agents on a 1024 x 1024 map. Agents move little per tick, so the order is nearly the same
  // every tick and this permutation reads almost sequentially. Indices therefore change across
  // steps; ids follow an agent. The hash's sorted positions are the previous tick's positions
  // (the read buffer); this tick's are written to next_xs_/next_ys_ and swapped in at the end.
  hash_.rebuild(xs_, ys_, pool);
  const std::uint32_t* items = hash_.items().data();
  const float* sxs = hash_.sorted_xs().data();
  const float* sys = hash_.sorted_ys().data();
  perm_ids_.resize(n);
  perm_headings_.resize(n);
  perm_burst_.resize(n);
  perm_vxs_.resize(n);
  perm_vys_.resize(n);

  // --- Steering (with the reorder: slot k gathers its agent's state first): desired =
  //     smoothed flow (hold on a goal, escape from unreachable cells), kept on its route when
  //     the flow flips behind it (see keep_route); obstacle force from the static hash,
  //     clamped; steer = normalize(desired * w + force). Reads only the agent's own state, and
  //     comes before the neighbour pass, which needs every agent's steering direction.
  const std::uint8_t* open = open_cells_.data();
  // Unit cells (the usual case): for 0 <= v < W, cell_of(v) is truncation, so the cell test
  // needs only float compares (same answer as cell_of plus bounds checks, NaN included).
  const bool unit_cells = cs == 1.0f && map_w < (1 << 24) && map_h < (1 << 24);
  const float map_wf = static_cast<float>(map_w), map_hf = static_cast<float>(map_h);
  const float inv_cs = 1.0f / cs;  // for prefetch hints only
  auto is_open = [&](Vec2 from) noexcept {
    if (unit_cells) {
      return from.x >= 0.0f && from.y >= 0.0f && from.x < map_wf && from.y < map_hf &&
             open[map.index(static_cast<std::int32_t>(from.x), static_cast<std::int32_t>(from.y))] != 0;
    }
    const std::int32_t cx = cell_of(from.x, cs), cy = cell_of(from.y, cs);
    return cx >= 0 && cy >= 0 && cx < map_w && cy < map_h && open[map.index(cx, cy)] != 0;
  };
  // `from_open`: is_open(from), when the caller already knows it.
  auto slide_known = [&](Vec2 from, Vec2 move, bool from_open) noexcept -> Vec2 {
    if (small_moves && std::abs(move.x) <= max_step && std::abs(move.y) <= max_step && from_open) {
      return from + move;
    }
    return slide_along_walls(map, from, move, radius);
  };
  auto slide = [&](Vec2 from, Vec2 move) noexcept -> Vec2 {
    if (small_moves && std::abs(move.x) <= max_step && std::abs(move.y) <= max_step && is_open(from)) {
      return from + move;
    }
    return slide_along_walls(map, from, move, radius);
  };
  // slide_round_corner() returns its p1 unchanged when neither axis lost more than this to the
  // walls (float rounding of p1 - p0 makes the exact comparison fail for most moves): the same
  // test, done before the call.
  const float corner_eps = 2.0f * span_epsilon(map);
  auto rounds_corner = [corner_eps](Vec2 p0, Vec2 p1, Vec2 move) noexcept {
    return !(std::abs(move.x - (p1.x - p0.x)) <= corner_eps) || !(std::abs(move.y - (p1.y - p0.y)) <= corner_eps);
  };
  const float max_force = params_.obstacle_max_force;
  const bool have_obstacles = !obstacles_.empty();
  const float commit_speed = params_.commit_min_speed * params_.max_speed;
  const std::uint32_t* field_values = integration != nullptr ? integration->values().data() : nullptr;
  const std::uint8_t* flow_dirs = flow.directions().data();
  const std::uint8_t* map_costs = map.costs().data();
  const bool flow_fits = flow.width() == map_w && flow.height() == map_h &&
                         flow.directions().size() == static_cast<std::size_t>(map_w) * static_cast<std::size_t>(map_h);
  parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
    // Map cell of agents k .. k + kPrefetchAgents (ring, indexed by slot): computed once, for the
    // prefetch, and used again when the agent's turn comes.
    static_assert((kCellRing & (kCellRing - 1)) == 0 && kCellRing > kPrefetchAgents);
    std::int32_t ring_x[kCellRing], ring_y[kCellRing];
    for (std::size_t k = begin; k < std::min(end, begin + kPrefetchAgents); ++k) {
      ring_x[k & (kCellRing - 1)] = cell_of(sxs[k], cs);
      ring_y[k & (kCellRing - 1)] = cell_of(sys[k], cs);
    }
    for (std::size_t k = begin; k < end; ++k) {
      // Agents in slot order walk the map row by row but far apart along a row, so nearly every
      // agent reads new cache lines of the map, flow and integration fields: fetch them a few
      // agents ahead (no effect on any result).
      if (k + kPrefetchAgents < n) {
        const std::int32_t fx = cell_of(sxs[k + kPrefetchAgents], cs), fy = cell_of(sys[k + kPrefetchAgents], cs);
        ring_x[(k + kPrefetchAgents) & (kCellRing - 1)] = fx;
        ring_y[(k + kPrefetchAgents) & (kCellRing - 1)] = fy;
        if (fx >= 0 && fy >= 0 && fx < map_w && fy + 1 < map_h) {
          const std::size_t at = map.index(fx, fy);
          __builtin_prefetch(map_costs + at);
          __builtin_prefetch(map_costs + at + static_cast<std::size_t>(map_w));
          __builtin_prefetch(open + at);
          if (flow_fits) {
            __builtin_prefetch(flow_dirs + at);
            __builtin_prefetch(flow_dirs + at + static_cast<std::size_t>(map_w));
          }
          if (field_values != nullptr) __builtin_prefetch(field_values + at);
        }
      }
      const std::uint32_t from = items[k];
      const std::uint32_t id = ids_[from];
      const float vx = vxs_[from], vy = vys_[from];
      perm_ids_[k] = id;
      perm_headings_[k] = headings_[from];
      perm_burst_[k] = burst_ticks_[from];
      perm_vxs_[k] = vx;
      perm_vys_[k] = vy;

      const Vec2 p{sxs[k], sys[k]};
      const std::int32_t cx = ring_x[k & (kCellRing - 1)], cy = ring_y[k & (kCellRing - 1)];  // cell_of(p)
      Vec2 desired{};
      if (flow.at(cx, cy) != FlowDirection::kNone) {
        desired = sample_flow(map, flow, p);
        if (integration != nullptr && commit_speed > 0.0f) {
          desired = keep_route(map, flow, *integration, cx, cy, desired, {vx, vy}, commit_speed);
        }
      } else if (integration != nullptr && !integration->reachable(cx, cy)) {
        desired = escape_direction(map, *integration, p, cx, cy, kEscapeSearchCells);
      }
      // else: a goal cell (or no integration to tell): hold.
      // Right of way in the neighbour pass: the lower integration value (nearer the goal) first.
      prio_[k] = integration != nullptr && integration->reachable(cx, cy) ? integration->raw(cx, cy) : kUnreachable;

      Vec2 force{};
      if (have_obstacles) {
        obstacle_hash_.for_each_near(p, [&](std::uint32_t o_index) {
          const Obstacle& o = obstacles_[o_index];
          const Vec2 away = p - o.center;
          const float dist = length(away);
          const float surface = dist - o.radius;
          if (surface >= sep_r) return;
          const float w = 1.0f - std::max(surface, 0.0f) * inv_sep_r;
          const Vec2 u = dist > 1e-6f ? away * (1.0f / dist) : id_direction(id);
          force += u * w;
        });
        const float f = length(force);
        if (f > max_force) force = force * (max_force / f);
      }
      const Vec2 steer = normalized_or_zero(desired * params_.flow_weight + force);
      steer_x_[k] = steer.x;
      steer_y_[k] = steer.y;
      // Where a full step along the steering actually goes once walls are slid along and posts
      // rounded: along a wall only the tangential part moves the agent, and the free path must
      // be measured along that (an agent pressed on a wall slides into neighbours its steering
      // direction alone would pass by).
      Vec2 probe = steer;
      const bool open_here =
          small_moves && cx >= 0 && cy >= 0 && cx < map_w && cy < map_h && open[map.index(cx, cy)] != 0;
      if (!open_here && max_step > 0.0f && (steer.x != 0.0f || steer.y != 0.0f)) {
        const Vec2 move = steer * max_step;
        Vec2 q = slide_along_walls(map, p, move, radius);
        if (q.x - p.x != move.x || q.y - p.y != move.y) {
          if (rounds_corner(p, q, move)) q = slide_round_corner(map, p, q, move, max_step, radius);
          probe = (q - p) * (1.0f / max_step);
        }
      }
      path_x_[k] = probe.x;
      path_y_[k] = probe.y;
      open_here_[k] = open_here ? 1 : 0;
    }
  });
  ids_.swap(perm_ids_);
  headings_.swap(perm_headings_);
  burst_ticks_.swap(perm_burst_);
  vxs_.swap(perm_vxs_);
  vys_.swap(perm_vys_);

  // --- Gather neighbours, integrate and turn, one agent at a time (each reads its neighbours'
  //     positions, ids, priorities and paths, which no part of this pass writes).
  //   Gather: separation = mean over neighbours closer than R of away_unit * (1 - d / R)
  //     (SPEC); plus a contact term for discs that overlap: the sum over them of
  //     away_unit * (2r - d) / 2, i.e. each of a pair removes half the overlap. The mean alone
  //     dilutes the push between two overlapping agents by the neighbour count (in a cluster of
  //     30 they part at 2 * stiffness / 30 per tick and stay stacked for seconds); the contact
  //     term is what keeps discs apart. Both go into the correction. Also the free path: how
  //     far the agent may move along its steering direction before its disc would touch a
  //     neighbour ahead (see free_path()), so agents queue behind the one in front instead of
  //     stepping into it and being pushed back the next tick (the period-2 jitter of a pressed
  //     crowd, which never loses its kinetic energy).
  //   Integrate: the overlap correction (separation * stiffness + contact term, not scaled by
  //     dt, clamped to max_speed * dt) slid along walls, then the move = steer * budget slid
  //     along walls and round door posts (slide_round_corner()). Budget: max_speed * dt minus
  //     what the correction actually moved the agent, and at most the free path; so the total
  //     stays within max_speed * dt, a pushed agent yields instead of pressing on, and one
  //     pushed into a wall still walks.
  //   Heading: turn toward the steering (move) direction by at most max_turn_rate * dt.
  const bool yield = params_.yield_to_agents_ahead;
  const float yield_fraction = params_.yield_fraction;
  const float press_d = contact_d * (1.0f - params_.press_overlap);
  const float max_step2 = max_step * max_step;
  const float inv_dt = 1.0f / dt;
  const float max_turn = params_.max_turn_rate * dt;
  const bool has_invalid = has_invalid_;
  parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
    // Local copies of what the neighbour loop reads: this pass stores bytes (burst ticks), which
    // may alias any memory, so values reached through the closure would be reloaded each time.
    const float* const nx = sxs;
    const float* const ny = sys;
    const std::uint32_t* const nid = ids_.data();
    const std::uint32_t* const nprio = prio_.data();
    const float* const npx = path_x_.data();
    const float* const npy = path_y_.data();
    const float r2 = sep_r2, inv_r = inv_sep_r, cd = contact_d, pd = press_d, yf = yield_fraction;
    const GatherInput in{nx, ny, nid, nprio, npx, npy, inv_r, cd, pd, yf};
    // Slots of the current agent's neighbours within R, a batch at a time (room for one more
    // group of four past the batch).
    constexpr std::uint32_t kHitBatch = 64;
    std::uint32_t hit_slot[kHitBatch + 4];
    for (std::size_t k = begin; k < end; ++k) {
      // Fetch a few agents ahead what the query and the move will read: the hash's cell ranges
      // and the open-cell byte (megabyte tables read at scattered places when agents are spread
      // out; no effect on any result).
      if (k + kPrefetchAgents < n) {
        const Vec2 ahead{sxs[k + kPrefetchAgents], sys[k + kPrefetchAgents]};
        hash_.prefetch_near(ahead);
        if (ahead.x >= 0.0f && ahead.y >= 0.0f && ahead.x < map_wf * cs && ahead.y < map_hf * cs) {
          // Only a hint: any cell near the agent's will do (truncation, a reciprocal).
          const auto fx = static_cast<std::int32_t>(ahead.x * inv_cs), fy = static_cast<std::int32_t>(ahead.y * inv_cs);
          __builtin_prefetch(open + map.index(std::min(fx, map_w - 1), std::min(fy, map_h - 1)));
        }
      }
      const float px = sxs[k], py = sys[k];
      const auto self = static_cast<std::uint32_t>(k);
      const std::uint32_t self_id = ids_[k];
      const std::uint32_t self_prio = prio_[k];
      // Direction and rate (world units per unit of move budget) of this agent's actual path.
      const float path_len = std::sqrt(path_x_[k] * path_x_[k] + path_y_[k] * path_y_[k]);
      const bool moving = yield && path_len > 1e-4f;
      const float skx = moving ? path_x_[k] / path_len : 0.0f, sky = moving ? path_y_[k] / path_len : 0.0f;
      // Neighbours in two steps: the distance test over the candidate slots, four at a time and
      // without a branch per candidate, collecting the hits in query order; then the hits, in
      // that order (gather_hits).
      const GatherAgent agent{px, py, skx, sky, self_id, self_prio, moving};
      GatherSums sums;
      sums.allow = max_step;
      std::uint32_t hits = 0;
#if defined(SWARMFIELD_SIMD_GATHER)
      const __m128 vpx = _mm_set1_ps(px), vpy = _mm_set1_ps(py), vr2 = _mm_set1_ps(r2);
#endif
      hash_.for_each_range_near({px, py}, [&](std::uint32_t first, std::uint32_t last) SWARMFIELD_ALWAYS_INLINE {
        // Four slots per step; slots past `last` (up to 3, inside the hash's padding, see
        // SpatialHash::kSlotPadding) are loaded but masked out.
        for (std::uint32_t m0 = first; m0 < last; m0 += 4) {
#if defined(SWARMFIELD_SIMD_GATHER)
          const __m128 dxv = _mm_sub_ps(vpx, _mm_loadu_ps(nx + m0));
          const __m128 dyv = _mm_sub_ps(vpy, _mm_loadu_ps(ny + m0));
          const __m128 d2v = _mm_add_ps(_mm_mul_ps(dxv, dxv), _mm_mul_ps(dyv, dyv));
          // Within R: !(d2 >= r2), the definition's test (true for NaN too).
          auto mask = static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpnge_ps(d2v, vr2)));
#else
          std::uint32_t mask = 0;
          for (std::uint32_t j = 0; j < 4 && m0 + j < last; ++j) {
            const float dx = px - nx[m0 + j], dy = py - ny[m0 + j];
            mask |= static_cast<std::uint32_t>(!(dx * dx + dy * dy >= r2)) << j;
          }
#endif
          const std::uint32_t left = last - m0;
          mask &= left >= 4 ? 15u : (1u << left) - 1u;
          if (self - m0 < 4u) mask &= ~(1u << (self - m0));
          // Append the masked-in slots without branching: write each, advance past the kept ones.
          hit_slot[hits] = m0;
          hits += mask & 1u;
          hit_slot[hits] = m0 + 1;
          hits += (mask >> 1) & 1u;
          hit_slot[hits] = m0 + 2;
          hits += (mask >> 2) & 1u;
          hit_slot[hits] = m0 + 3;
          hits += mask >> 3;
          if (hits >= kHitBatch) {
            gather_hits(in, agent, hit_slot, hits, sums);
            hits = 0;
          }
        }
      });
      gather_hits(in, agent, hit_slot, hits, sums);
      const float sx = sums.sx, sy = sums.sy, kx = sums.kx, ky = sums.ky, allow = sums.allow;
      const std::uint32_t count = sums.count, coincident = sums.coincident, rank = sums.rank;
      const float allow_k = moving ? allow / path_len : max_step;
      Vec2 corr{};
      bool burst = false;
      if (coincident > 0) {
        // Stacked on other agents: this tick's whole displacement is the agent's point of a
        // Vogel disc of radius max_step (see coincident_push).
        corr = coincident_push(rank, coincident + 1);
        burst = true;
        burst_ticks_[k] = burst_ticks(coincident + 1, contact_d, max_step) - 1;
      } else if (burst_ticks_[k] > 0 && max_step > 0.0f) {
        // Still bursting out of a stack: repeat last tick's displacement, so the stack's Vogel
        // disc keeps its shape and only grows (see burst_ticks()).
        const float inv_step = 1.0f / max_step;
        corr = {vxs_[k] * dt * inv_step, vys_[k] * dt * inv_step};
        burst = true;
        --burst_ticks_[k];
      } else {
        const float mean = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
        corr = {sx * mean * stiffness + kx * contact_stiffness, sy * mean * stiffness + ky * contact_stiffness};
      }

      // Integrate.
      const Vec2 p0{px, py};
      Vec2 p2 = p0;
      if (has_invalid && !map.walkable(cell_of(p0.x, cs), cell_of(p0.y, cs))) {
        // Only when the map has no walkable cell at all (repair failed): hold.
      } else if (burst) {
        p2 = slide(p0, corr * max_step);
      } else {
        const float c_len = length(corr);
        if (c_len > max_step) corr = corr * (max_step / c_len);
        // The correction first, slid along walls: only what it actually moves the agent spends
        // the budget (a crowd pressing an agent into a corner must not freeze it there).
        const Vec2 pc = slide_known(p0, corr, open_here_[k] != 0);
        const float used = std::min(max_step, length(pc - p0));
        const float budget = std::min(max_step - used, allow_k);
        const Vec2 move = Vec2{steer_x_[k], steer_y_[k]} * budget;
        p2 = slide(pc, move);
        if ((p2.x - pc.x != move.x || p2.y - pc.y != move.y) && rounds_corner(pc, p2, move)) {
          p2 = slide_round_corner(map, pc, p2, move, budget, radius);
        }
        // Sliding can turn the two parts so they no longer partly cancel; never exceed the speed
        // limit: keep the correction alone then.
        const Vec2 d = p2 - p0;
        if (dot(d, d) > max_step2 * 1.0001f) p2 = pc;
      }
      next_xs_[k] = p2.x;
      next_ys_[k] = p2.y;
      vxs_[k] = (p2.x - p0.x) * inv_dt;
      vys_[k] = (p2.y - p0.y) * inv_dt;

      // Heading.
      const float hx = steer_x_[k], hy = steer_y_[k];
      if (hx == 0.0f && hy == 0.0f) continue;  // holding: keep the heading
      float& h = headings_[k];
      const float diff = wrap_angle(fast_atan2(hy, hx) - h);
      h = wrap_angle(h + std::clamp(diff, -max_turn, max_turn));
    }
  });

  xs_.swap(next_xs_);
  ys_.swap(next_ys_);
}

}  // namespace swarmfield::sim
