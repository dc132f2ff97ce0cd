// The delta snapshot decoder, a port of protocol/src/snapshot/snapshot_decoder.cpp (wire layout:
// protocol/SNAPSHOTS.md, format 0xD5). decodeSnapshot() is the list of its steps in wire order:
// header and players, the bit section's parts (density grid, removed and deaths, kept runs,
// added, kind changes, frequency tables), the residual streams, then the merge that builds the
// frame from the baseline. Every value from the wire is range-checked before use, exactly where
// the C++ decoder checks it; a failure returns { ok: false, error } and changes nothing (the
// baseline is never written). No DOM: node runs it in the tests.
import { BitReader } from './bit_reader.js';
import { DensityGrid, readDensityGrid } from './density_grid.js';
import { AgentFrame, EMPTY_FRAME, MAX_FRAME_AGENTS } from './agent_frame.js';
import { RansDecoder, RansTable } from './rans.js';
import {
  POSITION_MAX,
  SPEED_CLASSES,
  predictCoordinateAfter,
  predictionTicks,
  speedClass,
  updateVelocityOver,
  velocitySpanTicks,
} from './prediction.js';

/** First byte of every snapshot payload. */
export const SNAPSHOT_FORMAT = 0xd5;
/** Fixed bytes before the players. */
export const SNAPSHOT_HEADER_BYTES = 36;
export const SNAPSHOT_PLAYER_BYTES = 37;
/** Snapshots a client remembers (and so the largest baseline distance on the wire). */
export const SNAPSHOT_HISTORY_SIZE = 32;

const FLAG_PREDICTED = 0x01;
const FLAG_GRID = 0x02;
// Bits 2..4: the precision shift (updated positions in steps of 2^shift position units, <= 4).
const SHIFT_FLAG_POS = 2;
const FLAG_SHIFT_MASK = 0x1c;
const MAX_PRECISION_SHIFT = 4;
const KNOWN_FLAGS = FLAG_PREDICTED | FLAG_GRID | FLAG_SHIFT_MASK;

// Residual symbols: position (rx, ry) in [-3, 3]^2, turned into the baseline velocity's frame
// (a, b) (prediction.js, fromVelocityFrame), as (a + 3) * 7 + (b + 3), else 49 (escape);
// heading dh in [-7, 7] as dh + 7, else 15 (escape: the heading in 8 bits).
const POS_RANGE = 3;
const POS_SIDE = 2 * POS_RANGE + 1;
const POS_ESCAPE = POS_SIDE * POS_SIDE;
const POS_ALPHABET = POS_ESCAPE + 1;
const HEAD_RANGE = 7;
const HEAD_ESCAPE = 2 * HEAD_RANGE + 1;
const HEAD_ALPHABET = HEAD_ESCAPE + 1;

// Exp-Golomb orders and field widths.
const COUNT_ORDER = 4;
const ESCAPE_ORDER = 2;
const KIND_GAP_ORDER = 2;
const ORDER_FIELD_BITS = 5;
const BITS_FIELD_BITS = 5;
const POSITION_BITS = 20;

/** Little-endian reads of a payload (bounds are checked by the callers). */
function u32(p, at) {
  return (p[at] | (p[at + 1] << 8) | (p[at + 2] << 16) | (p[at + 3] << 24)) >>> 0;
}
function u64(p, at) {
  return BigInt(u32(p, at)) | (BigInt(u32(p, at + 4)) << 32n);
}
function f32(view, at) {
  return view.getFloat32(at, true);
}

/**
 * The fixed first bytes of a payload: { sequence, tick, baselineDistance }, or null if it is too
 * short, not format 0xD5, or the baseline distance is out of range (read_snapshot_prelude).
 * @param {Uint8Array} p
 */
export function readSnapshotPrelude(p) {
  if (p.length < SNAPSHOT_HEADER_BYTES || p[0] !== SNAPSHOT_FORMAT) return null;
  const sequence = u32(p, 2);
  const tick = u32(p, 6);
  const baselineDistance = p[10];
  if (baselineDistance > SNAPSHOT_HISTORY_SIZE || (baselineDistance !== 0 && sequence <= baselineDistance)) return null;
  return { sequence, tick, baselineDistance };
}

class Failure extends Error {}
/** Ends the decode with `message` (caught in decodeSnapshot, never escapes it). */
function fail(message) {
  throw new Failure(message);
}

/**
 * Reads `count` (> 0) strictly increasing indices below `limit` coded as Exp-Golomb gaps with a
 * 5-bit order; null on a truncated stream or an index out of range.
 */
function readIndexGaps(reader, count, limit) {
  const out = new Uint32Array(count);
  const order = reader.readBits(ORDER_FIELD_BITS);
  let next = 0;
  for (let k = 0; k < count; ++k) {
    const index = next + reader.readExpGolomb(order);
    if (reader.failed || index >= limit) return null;
    out[k] = index;
    next = index + 1;
  }
  return out;
}

/** Header fields after the prelude, and the players; returns the offset after them. */
function readHeader(p, prelude, flags, header) {
  const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
  header.sequence = prelude.sequence;
  header.tick = prelude.tick;
  header.baselineDistance = prelude.baselineDistance;
  header.predicted = (flags & FLAG_PREDICTED) !== 0;
  header.precisionShift = (flags & FLAG_SHIFT_MASK) >> SHIFT_FLAG_POS;
  if (header.precisionShift > MAX_PRECISION_SHIFT) fail('precision shift out of range');
  header.echoClientTimeUs = u64(p, 11);
  header.totalAgents = u32(p, 19);
  header.rebuilds = u64(p, 23);
  header.wave = u32(p, 31);
  const players = p[35];
  let at = SNAPSHOT_HEADER_BYTES;
  if (p.length < at + players * SNAPSHOT_PLAYER_BYTES + 4) fail('snapshot truncated in the players');
  header.players = [];
  for (let k = 0; k < players; ++k, at += SNAPSHOT_PLAYER_BYTES) {
    const player = {
      id: u32(p, at),
      x: f32(view, at + 4),
      y: f32(view, at + 8),
      contacts: u32(p, at + 12),
      health: f32(view, at + 16),
      kills: u32(p, at + 20),
      shots: u32(p, at + 24),
      score: BigInt.asIntN(64, u64(p, at + 28)),
      aim: p[at + 36],
    };
    if (!Number.isFinite(player.x) || !Number.isFinite(player.y)) fail('player position not finite');
    if (!(Number.isFinite(player.health) && player.health >= 0)) fail('player health not finite and >= 0');
    header.players.push(player);
  }
  return at;
}

/** Bit section 2: baseline indices removed, and the agents among them that died. */
function readRemoved(reader, baseline, s) {
  const count = reader.readExpGolomb(COUNT_ORDER);
  if (reader.failed || count > baseline.size) fail('removed count out of range');
  s.removed = new Uint32Array(0);
  s.deaths = [];
  if (count === 0) return;
  const removed = readIndexGaps(reader, count, baseline.size);
  if (!removed) fail('removed index out of range');
  s.removed = removed;
  const died = reader.readExpGolomb(COUNT_ORDER);
  if (reader.failed || died > count) fail('death count out of range');
  if (died === 0) return;
  const positions = readIndexGaps(reader, died, count);
  if (!positions) fail('death index out of range');
  for (const position of positions) s.deaths.push(baseline.agent(removed[position]));
}

/**
 * Section 3's order key of a kept agent last updated at `lastTick` (snapshot_codec_layout.hpp
 * run_order_key): 255 - min(tick - lastTick, 255), so the longest since its update comes first.
 */
function runOrderKey(lastTick, tick) {
  return 255 - Math.min((tick - lastTick) >>> 0, 255);
}

/**
 * Bit section 3: alternating runs over the kept agents, updated first, in run order (oldest update
 * first, ties by id), put back in id order over the baseline agents not removed; returns the
 * updated count.
 */
function readKeptRuns(reader, kept, baseline, tick, s) {
  s.keptUpdated = new Uint8Array(kept);
  const aged = new Uint8Array(kept);
  let updated = 0;
  if (kept === 0) return 0;
  const order = reader.readBits(ORDER_FIELD_BITS);
  let filled = 0;
  let runUpdated = true;
  let first = true;
  while (filled < kept) {
    const run = reader.readExpGolomb(order);
    // Only the first run may be empty: otherwise zero-length runs could repeat forever.
    if (reader.failed || run > kept - filled || (run === 0 && !first)) fail('bad update runs');
    if (runUpdated) {
      aged.fill(1, filled, filled + run);
      updated += run;
    }
    filled += run;
    runUpdated = !runUpdated;
    first = false;
  }
  // The keys of the baseline agents not removed (s.removed is increasing), in id order.
  const keys = new Uint8Array(kept);
  const removed = s.removed;
  for (let b = 0, r = 0, k = 0; b < baseline.size; ++b) {
    if (r < removed.length && removed[r] === b) {
      ++r;
      continue;
    }
    keys[k++] = runOrderKey(baseline.lastTick[b], tick);
  }
  const offsets = new Uint32Array(256);
  for (const key of keys) ++offsets[key];
  for (let key = 0, at = 0; key < 256; ++key) {
    const n = offsets[key];
    offsets[key] = at;
    at += n;
  }
  for (let k = 0; k < kept; ++k) s.keptUpdated[k] = aged[offsets[keys[k]]++];
  return updated;
}

/** Bit section 4: added agents (absolute values, zero velocity, updated at `tick`). */
function readAdded(reader, kept, tick, s) {
  const count = reader.readExpGolomb(COUNT_ORDER);
  if (reader.failed || count > MAX_FRAME_AGENTS - kept) fail('too many agents');
  const added = new AgentFrame(count);
  added.size = count;
  s.added = added;
  if (count === 0) return;
  let id = reader.readBits(32);
  const order = reader.readBits(ORDER_FIELD_BITS);
  added.id[0] = id;
  for (let k = 1; k < count; ++k) {
    id += reader.readExpGolomb(order) + 1;
    if (reader.failed || id > 0xffffffff) fail('added id out of range');
    added.id[k] = id;
  }
  const minX = reader.readBits(POSITION_BITS);
  const minY = reader.readBits(POSITION_BITS);
  const bitsX = reader.readBits(BITS_FIELD_BITS);
  const bitsY = reader.readBits(BITS_FIELD_BITS);
  if (reader.failed || bitsX > POSITION_BITS || bitsY > POSITION_BITS) fail('bad added positions');
  for (let k = 0; k < count; ++k) {
    const x = minX + reader.readBits(bitsX);
    const y = minY + reader.readBits(bitsY);
    if (x > POSITION_MAX || y > POSITION_MAX) fail('added position out of range');
    added.x[k] = x;
    added.y[k] = y;
    added.heading[k] = reader.readBits(8);
    added.lastTick[k] = tick;
  }
  if (reader.readBool()) {
    added.kind.fill(reader.readBits(8));
  } else {
    for (let k = 0; k < count; ++k) added.kind[k] = reader.readBits(8);
  }
  if (reader.failed) fail('snapshot truncated in the added agents');
}

/** Bit section 5: kind changes of updated agents (their updated-agent index and new kind). */
function readKindChanges(reader, updated, s) {
  const count = reader.readExpGolomb(0);
  if (reader.failed || count > updated) fail('kind change count out of range');
  s.kindChanges = [];
  s.kindValues = [];
  let next = 0;
  for (let k = 0; k < count; ++k) {
    const index = next + reader.readExpGolomb(KIND_GAP_ORDER);
    if (reader.failed || index >= updated) fail('kind change index out of range');
    s.kindChanges.push(index);
    s.kindValues.push(reader.readBits(8));
    next = index + 1;
  }
}

/** Bit section 6: per speed class, a "used" bit and the position and heading tables. */
// The tables are scratch reused by every decode (each holds a 4 kB slot look-up): decodes run
// one at a time, and a table is used only in the decode that read it (haveTable).
const POS_TABLES = Array.from({ length: SPEED_CLASSES }, () => new RansTable());
const HEAD_TABLES = Array.from({ length: SPEED_CLASSES }, () => new RansTable());

function readTables(reader, s) {
  s.haveTable = [];
  s.posTables = POS_TABLES;
  s.headTables = HEAD_TABLES;
  for (let ctx = 0; ctx < SPEED_CLASSES; ++ctx) {
    const have = reader.readBool();
    s.haveTable.push(have);
    if (have && (!POS_TABLES[ctx].read(reader, POS_ALPHABET) || !HEAD_TABLES[ctx].read(reader, HEAD_ALPHABET))) {
      fail('bad frequency table');
    }
  }
  if (reader.failed) fail('snapshot truncated in the tables');
}

/**
 * The merge: baseline minus removed, kept (updated or stale), plus added, by id, into `frame`
 * (capacity kept + added); residual symbols from the rANS streams, escapes from bit section 7.
 */
function merge(reader, rans, ransHead, baseline, header, frame, s) {
  const tick = header.tick;
  const predicted = header.predicted;
  const step = 2 ** header.precisionShift;  // position units per residual step
  // heading units per step (agent_prediction.hpp heading_shift)
  const headingStep = header.precisionShift === 0 ? 1 : 2 ** Math.min(header.precisionShift + 1, 3);
  const baseCount = baseline.size;
  const added = s.added;
  const addedCount = added.size;
  const removed = s.removed;
  let written = 0;
  let nextRemoved = 0;
  let keptSeen = 0;
  let updatedSeen = 0;
  let nextKindChange = 0;
  let nextAdded = 0;
  const copy = (from, i) => {
    frame.id[written] = from.id[i];
    frame.x[written] = from.x[i];
    frame.y[written] = from.y[i];
    frame.lastTick[written] = from.lastTick[i];
    frame.vx[written] = from.vx[i];
    frame.vy[written] = from.vy[i];
    frame.heading[written] = from.heading[i];
    frame.kind[written] = from.kind[i];
    ++written;
  };
  for (let b = 0; b <= baseCount; ++b) {
    const atEnd = b === baseCount;
    // Added agents whose id comes before this baseline agent (or all that remain at the end).
    while (nextAdded < addedCount && (atEnd || added.id[nextAdded] < baseline.id[b])) {
      if (written > 0 && added.id[nextAdded] <= frame.id[written - 1]) fail('added id not increasing');
      copy(added, nextAdded++);
    }
    if (atEnd) break;
    const id = baseline.id[b];
    if (nextAdded < addedCount && added.id[nextAdded] === id) fail('added id already in the baseline');
    if (nextRemoved < removed.length && removed[nextRemoved] === b) {
      ++nextRemoved;
      continue;
    }
    if (s.keptUpdated[keptSeen++] === 0) {
      copy(baseline, b);
      continue;
    }
    const wasX = baseline.x[b];
    const wasY = baseline.y[b];
    const wasVx = baseline.vx[b];
    const wasVy = baseline.vy[b];
    const wasTick = baseline.lastTick[b];
    const ctx = speedClass(wasVx, wasVy);
    if (!s.haveTable[ctx]) fail('residual without a table');
    const pdt = predicted ? predictionTicks(wasTick, tick) : 0;
    const px = predictCoordinateAfter(wasX, wasVx, pdt);
    const py = predictCoordinateAfter(wasY, wasVy, pdt);
    let rx = 0;
    let ry = 0;
    const ps = rans.get(s.posTables[ctx]);
    if (ps === POS_ESCAPE) {
      rx = reader.readSignedExpGolomb(ESCAPE_ORDER);
      ry = reader.readSignedExpGolomb(ESCAPE_ORDER);
    } else {
      // In the baseline velocity's frame: back to (rx, ry).
      const a = Math.floor(ps / POS_SIDE) - POS_RANGE;
      const c = (ps % POS_SIDE) - POS_RANGE;
      const u = Math.abs(wasVy) > Math.abs(wasVx) ? c : a;
      const w = Math.abs(wasVy) > Math.abs(wasVx) ? a : c;
      rx = wasVx < 0 ? -u : u;
      ry = wasVy < 0 ? -w : w;
    }
    const x = px + rx * step;
    const y = py + ry * step;
    if (x < 0 || y < 0 || x > POSITION_MAX || y > POSITION_MAX) fail('position out of range');
    const hs = ransHead.get(s.headTables[ctx]);
    let heading = 0;
    if (hs === HEAD_ESCAPE) {
      heading = reader.readBits(8);
    } else {
      heading = (baseline.heading[b] + (hs - HEAD_RANGE) * headingStep) & 0xff;
    }
    let kind = baseline.kind[b];
    if (nextKindChange < s.kindChanges.length && s.kindChanges[nextKindChange] === updatedSeen) {
      kind = s.kindValues[nextKindChange++];
    }
    ++updatedSeen;
    const vdt = velocitySpanTicks(wasTick, tick);
    frame.id[written] = id;
    frame.x[written] = x;
    frame.y[written] = y;
    frame.lastTick[written] = tick;
    frame.vx[written] = updateVelocityOver(wasVx, wasX, x, vdt);
    frame.vy[written] = updateVelocityOver(wasVy, wasY, y, vdt);
    frame.heading[written] = heading;
    frame.kind[written] = kind;
    ++written;
  }
  frame.size = written;
}

/**
 * Decodes `payload` against `baseline` (the frame of sequence - baseline distance; ignored for a
 * full snapshot, may be null then). Returns { ok: true, header, frame, deaths } (deaths: the
 * removed agents flagged as killed, as the baseline held them, in id order) or
 * { ok: false, error } where the C++ SnapshotDecoder::decode returns false. Never throws.
 * @param {Uint8Array} payload
 * @param {AgentFrame|null} baselineIn
 */
export function decodeSnapshot(payload, baselineIn) {
  try {
    return decodeOrThrow(payload, baselineIn);
  } catch (e) {
    if (e instanceof Failure) return { ok: false, error: e.message };
    // A bug of ours, not a verdict on the payload: still no exception out of the message loop.
    return { ok: false, error: `decoder error: ${e && e.message ? e.message : String(e)}` };
  }
}

function decodeOrThrow(payload, baselineIn) {
  // ---- Header and players ----
  const prelude = readSnapshotPrelude(payload);
  if (!prelude) fail('not a snapshot, or baseline distance out of range');
  const flags = payload[1];
  if ((flags & ~KNOWN_FLAGS) !== 0) fail('unknown snapshot flags');
  const baseline = prelude.baselineDistance === 0 ? EMPTY_FRAME : baselineIn;
  if (prelude.baselineDistance !== 0) {
    if (!baseline || baseline.sequence !== prelude.sequence - prelude.baselineDistance) fail('wrong baseline frame');
    if (baseline.tick >= prelude.tick) fail('tick not after the baseline\'s');
  }
  const header = {};
  let at = readHeader(payload, prelude, flags, header);
  const bitLen = u32(payload, at);
  at += 4;
  if (bitLen > payload.length - at) fail('bit section longer than the snapshot');
  const reader = new BitReader(payload.subarray(at, at + bitLen));
  const ransBytes = payload.subarray(at + bitLen);

  // ---- Bit section ----
  const s = {}; // the sections read so far
  const grid = new DensityGrid();
  if ((flags & FLAG_GRID) !== 0) {
    if (!readDensityGrid(reader, grid, baseline.grid)) fail('bad density grid');
  }
  readRemoved(reader, baseline, s);
  const kept = baseline.size - s.removed.length;
  const updated = readKeptRuns(reader, kept, baseline, header.tick, s);
  readAdded(reader, kept, header.tick, s);
  readKindChanges(reader, updated, s);
  readTables(reader, s);

  // ---- Residual streams, then the merge into the frame ----
  const rans = new RansDecoder();
  const ransHead = new RansDecoder();
  if (updated > 0) {
    if (ransBytes.length < 4) fail('residual streams missing');
    const posLen = u32(ransBytes, 0);
    if (posLen > ransBytes.length - 4) fail('residual stream longer than the snapshot');
    if (!rans.init(ransBytes.subarray(4, 4 + posLen)) || !ransHead.init(ransBytes.subarray(4 + posLen))) {
      fail('bad residual stream');
    }
  } else if (ransBytes.length !== 0) {
    fail('trailing bytes after the snapshot');
  }
  const frame = new AgentFrame(kept + s.added.size);
  frame.sequence = header.sequence;
  frame.tick = header.tick;
  frame.grid = grid;
  merge(reader, rans, ransHead, baseline, header, frame, s);
  if (reader.failed) fail('snapshot truncated in the escaped residuals');
  if (reader.bitsLeft() >= 8) fail('trailing bytes in the bit section');
  if (updated > 0 && (!rans.finishedCleanly() || !ransHead.finishedCleanly())) {
    fail('residual stream corrupt or with trailing bytes');
  }
  return { ok: true, header, frame, deaths: s.deaths };
}
