// Interpolation between snapshots, a port of client_viewer/src/snapshot_interpolation.cpp: the
// page draws a couple of snapshot intervals in the past and blends agents by id between the two
// snapshots that bracket that time (entity interpolation of Quake/Source netcode), so motion is
// smooth although snapshots arrive at 20 Hz with jitter. No DOM: times are passed in (seconds).

/** An interpolated frame to draw: agents as parallel arrays sorted by id, players, grid. */
export class InterpolatedFrame {
  constructor() {
    this.tick = 0;
    this.totalAgents = 0;
    this.count = 0;
    this.id = new Uint32Array(0);
    this.x = new Float32Array(0);
    this.y = new Float32Array(0);
    this.heading = new Float32Array(0);
    this.kind = new Uint8Array(0);
    this.players = [];
    this.density = null;
    this.densityCellSize = 1;
    this.wave = 0;
  }

  /** Room for `n` agents (grows, never shrinks: no allocation per frame once warm). */
  reserve(n) {
    if (this.id.length >= n) return;
    const cap = Math.max(n, this.id.length * 2, 256);
    this.id = new Uint32Array(cap);
    this.x = new Float32Array(cap);
    this.y = new Float32Array(cap);
    this.heading = new Float32Array(cap);
    this.kind = new Uint8Array(cap);
  }
}

const TWO_PI = Math.fround(2 * Math.PI);
const PI = Math.fround(Math.PI);

/** Angle from a to b along the shorter arc, at t. */
function lerpAngle(a, b, t) {
  let d = (b - a) % TWO_PI;
  if (d > PI) d -= TWO_PI;
  if (d < -PI) d += TWO_PI;
  return a + d * t;
}

function renderPlayer(p) {
  return {
    id: p.id,
    x: p.x,
    y: p.y,
    contacts: p.contacts,
    health: p.health,
    kills: p.kills,
    shots: p.shots,
    score: p.score,
    aim: Math.fround(p.aim * ((2 * Math.PI) / 256)),
  };
}

function copyCommon(snapshot, out) {
  out.totalAgents = snapshot.totalAgents;
  out.density = snapshot.density;
  out.densityCellSize = snapshot.cellSize;
  out.wave = snapshot.wave;
}

/** One snapshot (a SnapshotState from unpackFrame) as it is into `out`. */
export function unpackSnapshot(s, out) {
  out.tick = s.tick;
  copyCommon(s, out);
  out.reserve(s.count);
  out.count = s.count;
  out.id.set(s.id);
  out.x.set(s.x);
  out.y.set(s.y);
  out.heading.set(s.heading);
  out.kind.set(s.kind);
  out.players = s.players.map(renderPlayer);
}

/**
 * Blends `from` and `to` at `alpha` (clamped to [0, 1]) by id: an id in both is lerped (heading
 * along the shorter arc); an id only in `to` is drawn where `to` has it; an id only in `from` is
 * not drawn. Players likewise.
 */
export function interpolateSnapshots(from, to, alpha, out) {
  if (!(alpha >= 0)) alpha = 0; // also NaN
  if (alpha > 1) alpha = 1;
  out.tick = from.tick + (to.tick - from.tick) * alpha;
  copyCommon(to, out);
  out.reserve(to.count);
  let ia = 0;
  for (let i = 0; i < to.count; ++i) {
    const id = to.id[i];
    while (ia < from.count && from.id[ia] < id) ++ia;
    out.id[i] = id;
    out.kind[i] = to.kind[i];
    if (ia < from.count && from.id[ia] === id) {
      out.x[i] = from.x[ia] + (to.x[i] - from.x[ia]) * alpha;
      out.y[i] = from.y[ia] + (to.y[i] - from.y[ia]) * alpha;
      out.heading[i] = lerpAngle(from.heading[ia], to.heading[i], alpha);
    } else {
      out.x[i] = to.x[i];
      out.y[i] = to.y[i];
      out.heading[i] = to.heading[i];
    }
  }
  out.count = to.count;
  out.players = to.players.map((pb) => {
    const p = renderPlayer(pb);
    const pa = from.players.find((q) => q.id === pb.id);
    if (pa) {
      p.x = pa.x + (pb.x - pa.x) * alpha;
      p.y = pa.y + (pb.y - pa.y) * alpha;
    }
    return p;
  });
}

/**
 * Picks the two snapshots of `history` (ordered by tick) that bracket `renderTick` and blends
 * them; before the oldest: the oldest; at or after the newest: the newest (no extrapolation).
 * False when the history is empty.
 */
export function interpolateHistory(history, renderTick, out) {
  if (history.length === 0) return false;
  const first = history[0].snapshot;
  const last = history[history.length - 1].snapshot;
  if (!(renderTick > first.tick)) {
    unpackSnapshot(first, out);
    return true;
  }
  if (renderTick >= last.tick) {
    unpackSnapshot(last, out);
    return true;
  }
  for (let i = 0; i + 1 < history.length; ++i) {
    const a = history[i].snapshot;
    const b = history[i + 1].snapshot;
    if (renderTick >= a.tick && renderTick < b.tick) {
      const span = b.tick - a.tick;
      interpolateSnapshots(a, b, span > 0 ? (renderTick - a.tick) / span : 1, out);
      return true;
    }
  }
  unpackSnapshot(last, out);
  return true;
}

/**
 * Maps the local clock (seconds) to the server tick from the arrival times of snapshots; the
 * offset is smoothed so jitter does not shake the picture, and a jump of more than a second of
 * ticks (a restart, a long stall) resets it.
 */
export class InterpolationClock {
  constructor(tickHz = 30) {
    this.tickHz = tickHz > 0 ? tickHz : 30;
    this.valid = false;
    this.offsetTicks = 0;
  }

  observe(tick, receivedAtSeconds) {
    const offset = tick - receivedAtSeconds * this.tickHz;
    if (!this.valid || Math.abs(offset - this.offsetTicks) > this.tickHz) {
      this.offsetTicks = offset;
      this.valid = true;
      return;
    }
    this.offsetTicks += 0.1 * (offset - this.offsetTicks);
  }

  /** Estimated server tick at `nowSeconds`, minus `delayTicks`. */
  renderTick(nowSeconds, delayTicks) {
    return nowSeconds * this.tickHz + this.offsetTicks - delayTicks;
  }
}
