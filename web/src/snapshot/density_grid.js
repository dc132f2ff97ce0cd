// The coarse density grid of the agents a client does not track, and its delta coding against
// the baseline's grid: a port of protocol/src/snapshot/density_grid.cpp (reading side).
import { BitReader } from './bit_reader.js';

export const MAX_DENSITY_GRID_SIDE = 64; // squares per side
export const MAX_DENSITY_CELL_LOG2 = 13; // square side up to 8192 map cells
export const MAX_DENSITY_ORIGIN = 8192; // origin in map cells

const ORIGIN_BITS = 14;
const SIDE_BITS = 7;
const LEVEL_BITS = 4;
const RUN_ORDER = 1;

export class DensityGrid {
  constructor() {
    this.originX = 0; // map cells
    this.originY = 0;
    this.cellLog2 = 0; // square side = 2^cellLog2 map cells
    this.width = 0; // squares, 0 = no grid
    this.height = 0;
    /** width * height levels, row-major, each 0..15 */
    this.levels = new Uint8Array(0);
  }

  empty() {
    return this.width === 0 || this.height === 0;
  }

  /**
   * Level of the square covering map cell (cx, cy); 0 outside the grid.
   * @param {number} cx
   * @param {number} cy
   */
  levelAtCell(cx, cy) {
    if (this.empty() || cx < this.originX || cy < this.originY) return 0;
    // Non-negative differences below 2^31: >> is the C++ int64 shift exactly.
    const gx = (cx - this.originX) >> this.cellLog2;
    const gy = (cy - this.originY) >> this.cellLog2;
    if (gx >= this.width || gy >= this.height) return 0;
    const i = gy * this.width + gx;
    return i < this.levels.length ? this.levels[i] : 0;
  }
}

/** The shared empty grid (baseline of a full snapshot). Never modified. */
export const EMPTY_GRID = Object.freeze(new DensityGrid());

/** Smallest count with `level` (0, 1, 2, 4, ...): what a client may draw for a square. */
export function densityLevelFloor(level) {
  if (level === 0) return 0;
  return 2 ** (Math.min(level, 15) - 1);
}

/**
 * The baseline's level for every square of `grid` (same map position, same square size), else
 * 0: the levels a run repeats. All at once: the grid has up to 4096 squares per snapshot.
 */
function baselineLevels(grid, baseline) {
  const out = new Uint8Array(grid.width * grid.height);
  if (baseline.empty() || baseline.cellLog2 !== grid.cellLog2) return out;
  for (let gy = 0, i = 0; gy < grid.height; ++gy) {
    for (let gx = 0; gx < grid.width; ++gx, ++i) {
      // Map cells below 8192 + 63 * 2^13: int32 shifts are exact.
      out[i] = baseline.levelAtCell(grid.originX + (gx << grid.cellLog2), grid.originY + (gy << grid.cellLog2));
    }
  }
  return out;
}

/**
 * Reads a grid written against `baseline` into `grid`: geometry, then runs (Exp-Golomb(1) count
 * of squares equal to the baseline's level at the same map cell, then a new 4-bit level). False
 * on out-of-range geometry, runs past the end, or a reader failure (`grid` unspecified then).
 * @param {BitReader} reader
 * @param {DensityGrid} grid
 * @param {DensityGrid} baseline
 */
export function readDensityGrid(reader, grid, baseline) {
  const ox = reader.readBits(ORIGIN_BITS);
  const oy = reader.readBits(ORIGIN_BITS);
  const log2 = reader.readBits(4);
  const w = reader.readBits(SIDE_BITS);
  const h = reader.readBits(SIDE_BITS);
  if (reader.failed || ox > MAX_DENSITY_ORIGIN || oy > MAX_DENSITY_ORIGIN || log2 > MAX_DENSITY_CELL_LOG2 ||
      w > MAX_DENSITY_GRID_SIDE || h > MAX_DENSITY_GRID_SIDE || w === 0 || h === 0) {
    return false;
  }
  grid.originX = ox;
  grid.originY = oy;
  grid.cellLog2 = log2;
  grid.width = w;
  grid.height = h;
  const n = w * h;
  grid.levels = baselineLevels(grid, baseline);
  let i = 0;
  while (i < n) {
    const run = reader.readExpGolomb(RUN_ORDER);
    if (reader.failed || run > n - i) return false;
    i += run; // these squares keep the baseline's level
    if (i === n) break;
    grid.levels[i] = reader.readBits(LEVEL_BITS);
    ++i;
  }
  return !reader.failed;
}
