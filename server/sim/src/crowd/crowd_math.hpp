#pragma once
// Small numeric helpers shared by the crowd units (wall collision and the swarm step's phases).
// Internal to server/sim/src/crowd. Plain float arithmetic with a fixed operation order, so the
// results do not depend on the C library or the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "swarmfield/sim/vec2.hpp"

// Hot helpers called from more than one place: inlined, so what they update stays in registers
// (GCC and Clang spell it this way; elsewhere it is only a hint left out).
#if defined(__GNUC__) || defined(__clang__)
#define SWARMFIELD_ALWAYS_INLINE __attribute__((always_inline))
#else
#define SWARMFIELD_ALWAYS_INLINE
#endif

namespace swarmfield::sim::crowd_detail {

// Squared distance (world units^2) below which two agents count as coincident: their
// difference vector has no usable direction, so one is derived from their ids instead.
inline constexpr float kCoincidentDist2 = 1e-12f;
// Keeps floor() results inside int32 (maps are at most a few thousand cells wide).
inline constexpr double kCoordLimit = 1.0e9;
inline constexpr float kPi = std::numbers::pi_v<float>;
inline constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

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

/// Wraps an angle (radians) into (-pi, pi].
inline float wrap_angle(float a) noexcept {
  if (!std::isfinite(a)) return 0.0f;
  if (a > kPi || a <= -kPi) {
    a = std::remainder(a, kTwoPi);
    if (a <= -kPi) a += kTwoPi;
  }
  return a;
}

/// Deterministic unit direction of an id: the golden-angle spiral, so consecutive ids point
/// in well-spread directions (Vogel 1979).
inline Vec2 id_direction(std::uint32_t id) noexcept {
  constexpr double kGoldenAngle = 2.39996322972865332;  // pi * (3 - sqrt 5)
  const double a = std::fmod(static_cast<double>(id) * kGoldenAngle, 2.0 * std::numbers::pi);
  return {static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a))};
}

}  // namespace swarmfield::sim::crowd_detail
