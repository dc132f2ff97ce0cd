#pragma once
// The velocity predictor both ends of the snapshot codec run on a baseline frame, in integers
// only so that they agree bit for bit on any platform (protocol/SNAPSHOTS.md, "Prediction").
//
// Each tracked agent carries a velocity estimate v (1/16 position unit per tick) and the tick t
// of its last update. At tick n the predicted position is x + round(v * min(n - t, 16) / 16).
// When an update brings the new position x', the measured velocity m = 16 (x' - x) / (n - t)
// (by a fixed-point reciprocal, see update_velocity) is blended in with weight 1/2:
// v' = floor((v + m) / 2). Measured on real swarm
// motion (Boston_0_1024, 100k agents chasing a player, 20 Hz snapshots): the residual of this
// predictor needs 3.1 bits per agent against 5.9 for plain deltas; weight 1 gave 3.7, 1/4 gave
// 3.15; predicting along the flow field gave 3.1-3.2, not worth a field per goal set at both
// ends (bench/README.md).
#include <algorithm>
#include <array>
#include <cstdint>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"

namespace swarmfield::protocol {

/// Extrapolation horizon of the predictor (ticks); older updates predict no further.
inline constexpr std::uint32_t kMaxPredictionTicks = 16;
/// Velocity fixed point: 1/16 position unit per tick.
inline constexpr std::int32_t kVelocityScale = 16;

/// Ticks of extrapolation from an update at `last_tick` to `tick`: min(tick - last_tick, 16).
[[nodiscard]] inline std::uint32_t prediction_ticks(std::uint32_t last_tick, std::uint32_t tick) noexcept {
  return std::min(tick - last_tick, kMaxPredictionTicks);
}
/// Predicted quantized coordinate `dt` (<= kMaxPredictionTicks) ticks after an update that left
/// coordinate `x` with velocity `v`: x + floor((v * dt + 8) / 16), clamped to [0, kPositionMax].
[[nodiscard]] inline std::uint32_t predict_coordinate_after(std::uint32_t x, std::int16_t v, std::uint32_t dt) noexcept {
  // |v * dt| <= 32767 * 16 and x < 2^20: 32-bit arithmetic is exact.
  const std::int32_t p = static_cast<std::int32_t>(x) + ((std::int32_t{v} * static_cast<std::int32_t>(dt) + kVelocityScale / 2) >> 4);
  return static_cast<std::uint32_t>(std::clamp<std::int32_t>(p, 0, static_cast<std::int32_t>(kPositionMax)));
}
/// The same from the update's tick: the predicted coordinate at `tick`.
[[nodiscard]] inline std::uint32_t predict_coordinate(std::uint32_t x, std::int16_t v, std::uint32_t last_tick,
                                                      std::uint32_t tick) noexcept {
  return predict_coordinate_after(x, v, prediction_ticks(last_tick, tick));
}

/// Ticks a velocity measurement spans at most (older updates count as this many ticks).
inline constexpr std::uint32_t kMaxVelocitySpanTicks = 64;

/// 65536 / dt for dt = 1..kMaxVelocitySpanTicks (index 0 unused): the velocity update divides
/// by a multiplication, the same on both ends and ~10x cheaper than an integer division.
inline constexpr auto kInverseTicks = [] {
  std::array<std::int64_t, kMaxVelocitySpanTicks + 1> t{};
  for (std::uint32_t dt = 1; dt <= kMaxVelocitySpanTicks; ++dt) t[dt] = 65536 / dt;
  return t;
}();

/// Ticks a velocity measurement spans: min(tick - last_tick, kMaxVelocitySpanTicks).
[[nodiscard]] inline std::uint32_t velocity_span_ticks(std::uint32_t last_tick, std::uint32_t tick) noexcept {
  return std::min(tick - last_tick, kMaxVelocitySpanTicks);
}
/// New velocity estimate after a coordinate moved from `x` to `x_new` over `dt` ticks
/// (velocity_span_ticks; 0 keeps `v`): measured m = floor(16 (x_new - x) * floor(65536 / dt) /
/// 65536), then v' = floor((v + m) / 2), clamped to +-32767.
[[nodiscard]] inline std::int16_t update_velocity_over(std::int16_t v, std::uint32_t x, std::uint32_t x_new,
                                                       std::uint32_t dt) noexcept {
  if (dt == 0) return v;
  const std::int64_t measured = ((std::int64_t{x_new} - std::int64_t{x}) * kVelocityScale * kInverseTicks[dt]) >> 16;
  const std::int64_t blended = (std::int64_t{v} + measured) >> 1;
  return static_cast<std::int16_t>(std::clamp<std::int64_t>(blended, -32767, 32767));
}
/// The same between ticks `last_tick` and `tick`.
[[nodiscard]] inline std::int16_t update_velocity(std::int16_t v, std::uint32_t x, std::uint32_t x_new,
                                                  std::uint32_t last_tick, std::uint32_t tick) noexcept {
  return update_velocity_over(v, x, x_new, velocity_span_ticks(last_tick, tick));
}

/// Coarsest residual step: 2^4 position units = 1/4 cell (SnapshotHeader::precision_shift).
inline constexpr unsigned kMaxPrecisionShift = 4;

/// `r` / 2^shift rounded to the nearest integer, ties away from 0 (the step count of a coarse
/// residual or heading change).
[[nodiscard]] inline std::int32_t round_to_steps(std::int32_t r, unsigned shift) noexcept {
  const std::int32_t half = shift > 0 ? std::int32_t{1} << (shift - 1) : 0;
  return r >= 0 ? (r + half) >> shift : -((-r + half) >> shift);
}

/// The coded residual of an updated coordinate at precision `shift` (<= kMaxPrecisionShift):
/// the step count q whose coordinate `predicted` + q * 2^shift is nearest `actual` (ties away
/// from the prediction) and within [0, kPositionMax]. At shift 0 it is actual - predicted. Both
/// arguments within [0, kPositionMax]; the result's coordinate (coarse_coordinate) is within
/// 2^shift / 2 units of `actual` (2^shift - 1 where `actual` lies within 2^shift of an end).
[[nodiscard]] inline std::int32_t coarse_residual(std::uint32_t actual, std::uint32_t predicted, unsigned shift) noexcept {
  std::int32_t q = round_to_steps(static_cast<std::int32_t>(actual) - static_cast<std::int32_t>(predicted), shift);
  const std::int64_t x = std::int64_t{predicted} + (std::int64_t{q} << shift);
  if (x > static_cast<std::int64_t>(kPositionMax)) --q;
  if (x < 0) ++q;
  return q;
}
/// The coordinate a coded residual `q` gives at precision `shift`: predicted + q * 2^shift (may
/// lie outside [0, kPositionMax] for a forged residual: the decoder rejects that).
[[nodiscard]] inline std::int64_t coarse_coordinate(std::uint32_t predicted, std::int32_t q, unsigned shift) noexcept {
  return std::int64_t{predicted} + std::int64_t{q} * (std::int64_t{1} << shift);
}

/// Heading steps of an updated agent at precision `shift`: 2^heading_shift of the 256 per turn,
/// heading_shift = 0 at shift 0, else min(shift + 1, 3) (a 128-cell view: 64 headings per turn;
/// from a whole 256-cell map on, 32: 11 degrees, where a brute is ~6 pixels across and its facing
/// moves under a pixel). The heading then travels as a step count against the baseline's heading.
inline constexpr unsigned kMaxHeadingShift = 3;
[[nodiscard]] inline unsigned heading_shift(unsigned precision_shift) noexcept {
  return precision_shift == 0 ? 0 : std::min(precision_shift + 1, kMaxHeadingShift);
}
/// The coded heading change from `was` to `actual` in steps of 2^shift (shift <= 3): the
/// nearest step count to the shorter way round (ties away from 0); the heading it gives is
/// was + q * 2^shift modulo 256.
[[nodiscard]] inline std::int32_t coarse_heading_delta(std::uint8_t actual, std::uint8_t was, unsigned shift) noexcept {
  return round_to_steps(static_cast<std::int8_t>(static_cast<std::uint8_t>(actual - was)), shift);
}
[[nodiscard]] inline std::uint8_t coarse_heading(std::uint8_t was, std::int32_t q, unsigned shift) noexcept {
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(was) + static_cast<std::uint32_t>(q) * (1u << shift));
}

/// Speed class of a velocity estimate (max(|vx|, |vy|)), the coding context of the agent's
/// residuals: 0 below 1/4 position unit per tick (at rest or jostling), 1 below 1, 2 below 4,
/// 3 otherwise. Four classes instead of three (below 1/2, 2, else): on the crowded whole-map
/// view the residual symbols and tables took ~1.4% fewer bytes (format 0xD5).
inline constexpr std::size_t kSpeedClasses = 4;
[[nodiscard]] inline std::size_t speed_class(std::int16_t vx, std::int16_t vy) noexcept {
  const int m = std::max(vx < 0 ? -vx : vx, vy < 0 ? -vy : vy);
  return m < 4 ? 0 : m < 16 ? 1 : m < 64 ? 2 : 3;
}

/// The baseline velocity's frame of an updated agent's position residual (SNAPSHOTS.md,
/// "Residual symbols"): the residual's signs flipped so that the velocity points to +x, +y,
/// and its axes swapped so that the velocity's larger component is x. An agent's miss then
/// falls on the same symbols whichever way it walks (ahead or behind along its path, aside):
/// the position symbols ~5% fewer bytes on the crowded whole-map view (format 0xD5).
/// As masks (0 or -1), so that the hot loops turn residuals without branches.
struct VelocityFrame {
  std::int32_t flip_x = 0, flip_y = 0, swap = 0;
};
[[nodiscard]] inline VelocityFrame velocity_frame(std::int16_t vx, std::int16_t vy) noexcept {
  const int ax = vx < 0 ? -vx : vx, ay = vy < 0 ? -vy : vy;
  return VelocityFrame{-static_cast<std::int32_t>(vx < 0), -static_cast<std::int32_t>(vy < 0), -static_cast<std::int32_t>(ay > ax)};
}
/// (rx, ry) into the frame: (a, b) with a along the velocity's larger component.
[[nodiscard]] inline std::array<std::int32_t, 2> to_velocity_frame(VelocityFrame f, std::int32_t rx, std::int32_t ry) noexcept {
  const std::int32_t a = (rx ^ f.flip_x) - f.flip_x, b = (ry ^ f.flip_y) - f.flip_y;
  const std::int32_t d = (a ^ b) & f.swap;
  return {a ^ d, b ^ d};
}
/// The inverse: (a, b) in the frame back to (rx, ry).
[[nodiscard]] inline std::array<std::int32_t, 2> from_velocity_frame(VelocityFrame f, std::int32_t a, std::int32_t b) noexcept {
  const std::int32_t d = (a ^ b) & f.swap;
  const std::int32_t u = a ^ d, w = b ^ d;
  return {(u ^ f.flip_x) - f.flip_x, (w ^ f.flip_y) - f.flip_y};
}

}  // namespace swarmfield::protocol
