// The agents a client holds after decoding a snapshot (its "frame"), as
// protocol/include/swarmfield/protocol/snapshot/agent_frame.hpp: sorted by id (strictly
// increasing), quantized position (1/64 cell, 20 bits), heading (256 steps per turn), kind, and
// the predictor state (velocity in 1/16 position unit per tick, tick of the last update).
// Stored as parallel typed arrays: a frame of 16384 agents is ~360 kB and a history of them
// allocates no object per agent.
import { DensityGrid, EMPTY_GRID } from './density_grid.js';

/** Largest number of agents a frame (and so a snapshot) may hold. */
export const MAX_FRAME_AGENTS = 65536;

export class AgentFrame {
  /** @param {number} capacity agents the arrays hold (the frame's size may be smaller) */
  constructor(capacity = 0) {
    this.sequence = 0; // snapshot sequence that produced this frame
    this.tick = 0; // world tick of that snapshot
    this.size = 0;
    this.id = new Uint32Array(capacity);
    this.x = new Uint32Array(capacity);
    this.y = new Uint32Array(capacity);
    this.lastTick = new Uint32Array(capacity); // AgentState::tick
    this.vx = new Int16Array(capacity);
    this.vy = new Int16Array(capacity);
    this.heading = new Uint8Array(capacity);
    this.kind = new Uint8Array(capacity);
    /** Density of the agents the client does not track (empty when not sent). */
    this.grid = new DensityGrid();
  }

  /** Index of the agent with `id`, or -1 (binary search: ids are sorted). */
  indexOf(id) {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.id[mid] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.size && this.id[lo] === id ? lo : -1;
  }

  /** Agent `i` as a plain object (for tests and deaths). */
  agent(i) {
    return {
      id: this.id[i],
      x: this.x[i],
      y: this.y[i],
      tick: this.lastTick[i],
      vx: this.vx[i],
      vy: this.vy[i],
      heading: this.heading[i],
      kind: this.kind[i],
    };
  }
}

/** The empty frame: baseline of a full snapshot. */
export const EMPTY_FRAME = (() => {
  const f = new AgentFrame(0);
  f.grid = EMPTY_GRID;
  return Object.freeze(f);
})();
