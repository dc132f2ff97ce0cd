// The velocity predictor both ends of the snapshot codec run, in integers only: a port of
// protocol/include/swarmfield/protocol/snapshot/agent_prediction.hpp that agrees with the C++
// bit for bit. Every intermediate value is an exact integer below 2^53, so doubles compute it
// exactly; floor division of negatives is Math.floor (C++ uses an arithmetic >> there, which
// rounds toward minus infinity too, unlike JS's truncating integer casts).

/** Largest quantized coordinate (20 bits). */
export const POSITION_MAX = 2 ** 20 - 1;
/** Quantized position units per map cell. */
export const POSITION_UNITS_PER_CELL = 64;
/** Extrapolation horizon of the predictor (ticks). */
export const MAX_PREDICTION_TICKS = 16;
/** Ticks a velocity measurement spans at most. */
export const MAX_VELOCITY_SPAN_TICKS = 64;
export const SPEED_CLASSES = 4;

/** 65536 / dt for dt = 1..64 (integer division; index 0 unused), as kInverseTicks. */
const INVERSE_TICKS = Array.from({ length: MAX_VELOCITY_SPAN_TICKS + 1 }, (_, dt) => (dt === 0 ? 0 : Math.floor(65536 / dt)));

/** min(tick - lastTick, 16), the difference taken modulo 2^32 like the C++ uint32 one. */
export function predictionTicks(lastTick, tick) {
  return Math.min((tick - lastTick) >>> 0, MAX_PREDICTION_TICKS);
}

/** min(tick - lastTick, 64), modulo 2^32 as in C++. */
export function velocitySpanTicks(lastTick, tick) {
  return Math.min((tick - lastTick) >>> 0, MAX_VELOCITY_SPAN_TICKS);
}

/**
 * Predicted coordinate `dt` (<= 16) ticks after an update that left coordinate `x` with
 * velocity `v` (1/16 position unit per tick): x + floor((v * dt + 8) / 16), clamped to
 * [0, POSITION_MAX].
 */
export function predictCoordinateAfter(x, v, dt) {
  // |v * dt| <= 32767 * 16 fits int32: >> 4 is the C++ arithmetic shift (floor).
  const p = x + ((v * dt + 8) >> 4);
  return p < 0 ? 0 : p > POSITION_MAX ? POSITION_MAX : p;
}

/** The predicted coordinate at `tick` of an agent last updated at `lastTick`. */
export function predictCoordinate(x, v, lastTick, tick) {
  return predictCoordinateAfter(x, v, predictionTicks(lastTick, tick));
}

/**
 * New velocity estimate after a coordinate moved from `x` to `xNew` over `dt` ticks (0 keeps
 * `v`): measured m = floor(16 (xNew - x) * floor(65536 / dt) / 65536), v' = floor((v + m) / 2),
 * clamped to +-32767.
 */
export function updateVelocityOver(v, x, xNew, dt) {
  if (dt === 0) return v;
  // |16 (xNew - x) * 65536| < 2^41: exact in a double; the division by 2^16 is exact too.
  const measured = Math.floor(((xNew - x) * 16 * INVERSE_TICKS[dt]) / 65536);
  const blended = Math.floor((v + measured) / 2);
  return blended < -32767 ? -32767 : blended > 32767 ? 32767 : blended;
}

/** Speed class of a velocity estimate (the residuals' coding context): 0, 1, 2 or 3. */
export function speedClass(vx, vy) {
  const m = Math.max(Math.abs(vx), Math.abs(vy));
  return m < 4 ? 0 : m < 16 ? 1 : m < 64 ? 2 : 3;
}

/**
 * Quantized position -> world units, as dequantize_agent_position: the float of
 * double(q) * cell_size / 64 (`cellSize` is the float from MapInfo).
 */
export function dequantizePosition(q, cellSize) {
  return Math.fround((q * cellSize) / POSITION_UNITS_PER_CELL);
}

/** Heading in 256 steps per turn -> radians, as dequantize_heading (a float). */
export function dequantizeHeading(q) {
  return Math.fround(q * ((2 * Math.PI) / 256));
}
