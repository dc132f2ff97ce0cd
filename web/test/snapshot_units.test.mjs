// Hand cases for the pieces of the snapshot decoder (no C++ needed): the bit reader and its
// Exp-Golomb codes, rANS tables and streams (made by a small reference encoder written here
// from rans_byte.h's formulas), the integer predictor where JS's truncating habits would differ
// from the C++ floor, acks, and the density grid's runs against a baseline.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  BitReader,
  DensityGrid,
  RANS_LOW,
  RansDecoder,
  RansTable,
  SnapshotAck,
  decodeSnapshot,
  predictCoordinate,
  predictCoordinateAfter,
  readDensityGrid,
  readSnapshotPrelude,
  SNAPSHOT_FORMAT,
  speedClass,
  updateVelocityOver,
  zigzagDecode,
} from '../src/snapshot/index.js';

/** LSB-first bit writer (the C++ BitWriter's layout) for building inputs. */
class BitWriter {
  constructor() {
    this.bits = [];
  }
  write(value, n) {
    for (let i = 0; i < n; ++i) this.bits.push(Math.floor(value / 2 ** i) % 2);
    return this;
  }
  expGolomb(v, k) {
    const w = v + 2 ** k;
    const b = Math.floor(Math.log2(w)) + 1;
    this.write(0, b - 1 - k);
    this.write(1, 1);
    return this.write(w - 2 ** (b - 1), b - 1);
  }
  bytes() {
    const out = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((bit, i) => {
      out[i >> 3] |= bit << (i & 7);
    });
    return out;
  }
}

test('bit fields are read least significant bit first, across bytes, up to 32 bits', () => {
  const r = new BitReader(Uint8Array.from([0b10110101, 0xff, 0x00, 0x00, 0x80, 0x34]));
  assert.equal(r.readBits(3), 0b101);
  assert.equal(r.readBits(5), 0b10110);
  assert.equal(r.readBits(32), 0x800000ff); // unsigned, not a negative int32
  assert.equal(r.readBits(0), 0);
  assert.equal(r.bitsLeft(), 8);
  assert.equal(r.readBits(8), 0x34);
  assert.equal(r.failed, false);
  assert.equal(r.readBits(1), 0); // past the end
  assert.equal(r.failed, true);
  assert.equal(r.readBits(1), 0); // stays failed
});

test('a read longer than what is left fails and reads nothing', () => {
  const r = new BitReader(Uint8Array.from([0xff]));
  assert.equal(r.readBits(9), 0);
  assert.equal(r.failed, true);
  assert.equal(r.bitsLeft(), 8);
});

test('Exp-Golomb codes of orders 0..24 round-trip, up to 2^32 - 1', () => {
  const values = [0, 1, 2, 3, 6, 7, 100, 65535, 2 ** 31, 0xffffffff];
  for (const k of [0, 1, 2, 4, 5, 24]) {
    const w = new BitWriter();
    for (const v of values) w.expGolomb(v, k);
    const r = new BitReader(w.bytes());
    for (const v of values) assert.equal(r.readExpGolomb(k), v, `EG(${k}) of ${v}`);
    assert.equal(r.failed, false);
  }
  // Order 0: 0 -> "1", 1 -> "010", 2 -> "011", in stream order: bits 1 010 011 = 0b0110_0101.
  const r = new BitReader(Uint8Array.from([0b0110_0101]));
  assert.equal(r.readExpGolomb(0), 0);
  assert.equal(r.readExpGolomb(0), 1);
  assert.equal(r.readExpGolomb(0), 2);
});

test('Exp-Golomb refuses values past 32 bits, overlong prefixes, orders above 24 and truncation', () => {
  const tooBig = new BitWriter().write(0, 32).write(1, 1).write(1, 32); // w = 2^32 + 1: v = 2^32
  const r1 = new BitReader(tooBig.bytes());
  r1.readExpGolomb(0);
  assert.equal(r1.failed, true);
  const max = new BitReader(new BitWriter().write(0, 32).write(1, 1).write(0, 32).bytes());
  assert.equal(max.readExpGolomb(0), 0xffffffff); // w = 2^32: the largest value
  assert.equal(max.failed, false);
  const r2 = new BitReader(new Uint8Array(8)); // 64 zero bits: a prefix longer than 32
  assert.equal(r2.readExpGolomb(0), 0);
  assert.equal(r2.failed, true);
  const r3 = new BitReader(Uint8Array.from([1]));
  r3.readExpGolomb(25);
  assert.equal(r3.failed, true);
  const r4 = new BitReader(Uint8Array.from([0b0000_0100])); // after 6 bits: a prefix that never ends
  r4.readBits(6);
  r4.readExpGolomb(0);
  assert.equal(r4.failed, true);
});

test('zigzag decoding maps 0, 1, 2, 3, 4, 2^32 - 1 to 0, -1, 1, -2, 2, -2^31', () => {
  assert.deepEqual([0, 1, 2, 3, 4].map(zigzagDecode), [0, -1, 1, -2, 2]);
  assert.equal(zigzagDecode(0xffffffff), -(2 ** 31));
  assert.equal(zigzagDecode(0xfffffffe), 2 ** 31 - 1);
});

/** rANS encoder after rans_byte.h (plain division; the C++ one uses reciprocals, same output). */
function ransEncode(symbols, freq, scaleBits) {
  const start = [];
  let s = 0;
  for (const f of freq) {
    start.push(s);
    s += f;
  }
  let x = RANS_LOW;
  const reversed = [];
  for (let i = symbols.length - 1; i >= 0; --i) {
    const sym = symbols[i];
    const xMax = ((RANS_LOW >>> scaleBits) << 8) * freq[sym];
    while (x >= xMax) {
      reversed.push(x & 0xff);
      x = Math.floor(x / 256);
    }
    x = Math.floor(x / freq[sym]) * 2 ** scaleBits + (x % freq[sym]) + start[sym];
  }
  reversed.push((x >>> 24) & 0xff, (x >>> 16) & 0xff, (x >>> 8) & 0xff, x & 0xff);
  return Uint8Array.from(reversed.reverse());
}

function tableBits(freq, scaleBits, k) {
  const w = new BitWriter().write(scaleBits - 6, 3).write(k, 3);
  for (const f of freq) w.expGolomb(f, k);
  return w;
}

test('rANS: a transmitted table and a stream decode back to the symbols, ending cleanly', () => {
  const freq = [40, 1, 0, 20, 3]; // sum 64 = 2^6
  const table = new RansTable();
  assert.equal(table.read(new BitReader(tableBits(freq, 6, 2).bytes()), freq.length), true);
  const symbols = [0, 0, 3, 1, 4, 0, 3, 3, 0, 0, 0, 4, 1, 0];
  const stream = ransEncode(symbols, freq, 6);
  const d = new RansDecoder();
  assert.equal(d.init(stream), true);
  assert.deepEqual(symbols.map(() => d.get(table)), symbols);
  assert.equal(d.finishedCleanly(), true);
  // A larger table (2^12) and many symbols: every renormalization path.
  const big = [1000, 3000, 1, 95];
  const t2 = new RansTable();
  assert.equal(t2.read(new BitReader(tableBits(big, 12, 7).bytes()), big.length), true);
  const many = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 97 === 0 ? 2 : (i * 31) % 4);
  const s2 = ransEncode(many, big, 12);
  const d2 = new RansDecoder();
  d2.init(s2);
  assert.deepEqual(many.map(() => d2.get(t2)), many);
  assert.equal(d2.finishedCleanly(), true);
});

test('rANS: tables that do not sum to 2^scale, or scale above 12, are refused', () => {
  assert.equal(new RansTable().read(new BitReader(tableBits([40, 1, 0, 20, 2], 6, 2).bytes()), 5), false);
  assert.equal(new RansTable().read(new BitReader(tableBits([65, 0], 6, 0).bytes()), 2), false); // f > 2^6
  const scale13 = new BitWriter().write(7, 3).write(0, 3).expGolomb(8192, 0);
  assert.equal(new RansTable().read(new BitReader(scale13.bytes()), 1), false);
  assert.equal(new RansTable().read(new BitReader(new Uint8Array(1)), 5), false); // truncated
});

test('rANS: a stream with bytes left over, cut short, or starting out of range is not clean', () => {
  const freq = [32, 32];
  const table = new RansTable();
  table.read(new BitReader(tableBits(freq, 6, 0).bytes()), 2);
  const symbols = Array.from({ length: 200 }, (_, i) => i % 2);
  const stream = ransEncode(symbols, freq, 6);
  const extra = new Uint8Array(stream.length + 1);
  extra.set(stream);
  const d = new RansDecoder();
  d.init(extra);
  symbols.forEach(() => d.get(table));
  assert.equal(d.finishedCleanly(), false);
  const short = new RansDecoder();
  short.init(stream.subarray(0, stream.length - 2));
  symbols.forEach(() => short.get(table));
  assert.equal(short.failed, true);
  assert.equal(short.finishedCleanly(), false);
  assert.equal(new RansDecoder().init(Uint8Array.from([0, 0, 0x7f, 0])), false); // state < 2^23
  assert.equal(new RansDecoder().init(Uint8Array.from([0, 0, 0, 0x80])), false); // state >= 2^31
  assert.equal(new RansDecoder().init(Uint8Array.from([0, 0, 0x80])), false); // < 4 bytes
});

test('the predictor floors negatives as the C++ arithmetic shifts do', () => {
  assert.equal(predictCoordinateAfter(100, -1, 1), 100); // (-1 + 8) >> 4 = 0
  assert.equal(predictCoordinateAfter(100, -9, 1), 99); // (-9 + 8) >> 4 = -1, not 0
  assert.equal(predictCoordinateAfter(100, -32767, 16), 0); // clamped at 0
  assert.equal(predictCoordinateAfter(2 ** 20 - 3, 32767, 16), 2 ** 20 - 1); // clamped at the top
  assert.equal(predictCoordinate(1000, 16, 10, 13), 1003);
  assert.equal(predictCoordinate(1000, 16, 10, 100), 1016); // at most 16 ticks ahead
  assert.equal(predictCoordinate(1000, 16, 0xfffffffe, 1), 1003); // ticks modulo 2^32
  // measured = floor(16 * -1 * 21845 / 65536) = floor(-5.33) = -6; v' = floor(-6 / 2) = -3
  assert.equal(updateVelocityOver(0, 100, 99, 3), -3);
  assert.equal(updateVelocityOver(-1, 100, 100, 5), -1); // floor(-1 / 2) = -1, not 0
  assert.equal(updateVelocityOver(7, 5, 5, 0), 7); // no span: kept
  assert.equal(updateVelocityOver(32767, 0, 2 ** 20 - 1, 1), 32767); // clamped
  assert.equal(updateVelocityOver(-32767, 2 ** 20 - 1, 0, 1), -32767);
  assert.deepEqual(
    [speedClass(3, -3), speedClass(-4, 0), speedClass(0, 15), speedClass(-16, 0), speedClass(63, -63), speedClass(0, -64)],
    [0, 1, 1, 2, 2, 3],
  );
});

test('acks: the newest sequence and the 32 before it', () => {
  const a = new SnapshotAck();
  assert.equal(a.has(1), false);
  a.add(5);
  assert.deepEqual([a.latest, a.received], [5, 0]);
  a.add(3);
  assert.equal(a.has(3), true);
  assert.equal(a.has(4), false);
  a.add(7);
  assert.deepEqual([a.has(7), a.has(5), a.has(3), a.has(6)], [true, true, true, false]);
  a.add(7 + 32);
  assert.equal(a.has(7), true);
  assert.equal(a.received >>> 31, 1); // unsigned
  assert.equal(a.has(5), false);
  a.add(200);
  assert.equal(a.received, 0);
  a.add(160);
  assert.equal(a.received, 0);
  for (let s = 201; s <= 240; ++s) a.add(s);
  assert.equal(a.received, 0xffffffff);
});

test('density grid: runs copy the baseline level at the same map cell, new levels in 4 bits', () => {
  const base = new DensityGrid();
  base.originX = 0;
  base.originY = 0;
  base.cellLog2 = 2;
  base.width = 4;
  base.height = 1;
  base.levels = Uint8Array.from([1, 2, 3, 4]);
  // New grid shifted one square (4 cells) right, same square size: 3 squares equal to the
  // baseline's at the same map cells, then a new level 9.
  const w = new BitWriter().write(4, 14).write(0, 14).write(2, 4).write(4, 7).write(1, 7);
  w.expGolomb(3, 1).write(9, 4);
  const g = new DensityGrid();
  assert.equal(readDensityGrid(new BitReader(w.bytes()), g, base), true);
  assert.deepEqual(Array.from(g.levels), [2, 3, 4, 9]);
  // A run past the end, a zero side and an origin past 8192 are refused.
  const past = new BitWriter().write(0, 14).write(0, 14).write(0, 4).write(2, 7).write(1, 7).expGolomb(3, 1);
  assert.equal(readDensityGrid(new BitReader(past.bytes()), new DensityGrid(), base), false);
  const zero = new BitWriter().write(0, 14).write(0, 14).write(0, 4).write(0, 7).write(1, 7);
  assert.equal(readDensityGrid(new BitReader(zero.bytes()), new DensityGrid(), base), false);
  const far = new BitWriter().write(8193, 14).write(0, 14).write(0, 4).write(1, 7).write(1, 7).expGolomb(1, 1);
  assert.equal(readDensityGrid(new BitReader(far.bytes()), new DensityGrid(), base), false);
});

/** The smallest valid snapshot: a full one with no agents and no players. */
function emptySnapshot({ sequence = 1, tick = 10, distance = 0, flags = 1 } = {}) {
  const p = new Uint8Array(36 + 4 + 1);
  p[0] = SNAPSHOT_FORMAT;
  p[1] = flags;
  new DataView(p.buffer).setUint32(2, sequence, true);
  new DataView(p.buffer).setUint32(6, tick, true);
  p[10] = distance;
  new DataView(p.buffer).setUint32(36, 1, true); // bit section: 1 byte
  // removed EG(4) 0 = "1" + 4 bits; (no kept agents: no runs); added EG(4) 0; kind changes EG(0)
  // 0; three "no table" bits.
  const w = new BitWriter().expGolomb(0, 4).expGolomb(0, 4).expGolomb(0, 0).write(0, 3);
  const bits = w.bytes();
  assert.equal(bits.length, 2);
  const out = new Uint8Array(36 + 4 + bits.length);
  out.set(p.subarray(0, 36));
  new DataView(out.buffer).setUint32(36, bits.length, true);
  out.set(bits, 40);
  return out;
}

test('an empty full snapshot decodes; its prelude checks hold', () => {
  const r = decodeSnapshot(emptySnapshot(), null);
  assert.equal(r.ok, true, r.error);
  assert.equal(r.frame.size, 0);
  assert.equal(r.header.players.length, 0);
  assert.equal(readSnapshotPrelude(emptySnapshot({ sequence: 5, distance: 5 })), null); // before 1
  assert.equal(readSnapshotPrelude(emptySnapshot({ sequence: 50, distance: 33 })), null);
  // Unknown flag bits, and precision shifts past 4 (bits 2..4), are refused; shift 4 is not.
  assert.equal(decodeSnapshot(emptySnapshot({ flags: 0x20 }), null).ok, false);
  assert.match(decodeSnapshot(emptySnapshot({ flags: 5 << 2 }), null).error, /precision shift/);
  assert.equal(decodeSnapshot(emptySnapshot({ flags: 4 << 2 }), null).ok, true);
  assert.equal(decodeSnapshot(emptySnapshot().subarray(0, 35), null).ok, false);
  // A delta against a frame of another sequence, or of a tick not before its own.
  const base = decodeSnapshot(emptySnapshot({ sequence: 1, tick: 10 }), null).frame;
  assert.equal(decodeSnapshot(emptySnapshot({ sequence: 2, tick: 11, distance: 1 }), base).ok, true);
  assert.match(decodeSnapshot(emptySnapshot({ sequence: 3, tick: 11, distance: 1 }), base).error, /wrong baseline/);
  assert.match(decodeSnapshot(emptySnapshot({ sequence: 2, tick: 10, distance: 1 }), base).error, /tick not after/);
  // A byte after the bit section with nothing updated: trailing bytes.
  const trailing = new Uint8Array(emptySnapshot().length + 1);
  trailing.set(emptySnapshot());
  assert.match(decodeSnapshot(trailing, null).error, /trailing/);
});

test('players: non-finite positions and negative health are refused', () => {
  const one = (x, health) => {
    const base = emptySnapshot();
    const p = new Uint8Array(base.length + 37);
    p.set(base.subarray(0, 36));
    p[35] = 1;
    const v = new DataView(p.buffer);
    v.setUint32(36, 42, true);
    v.setFloat32(40, x, true);
    v.setFloat32(44, 2.5, true);
    v.setFloat32(52, health, true);
    p.set(base.subarray(36), 36 + 37);
    return p;
  };
  const ok = decodeSnapshot(one(1.5, 0), null);
  assert.equal(ok.ok, true, ok.error);
  assert.deepEqual([ok.header.players[0].id, ok.header.players[0].x, ok.header.players[0].y], [42, 1.5, 2.5]);
  assert.equal(decodeSnapshot(one(NaN, 1), null).ok, false);
  assert.equal(decodeSnapshot(one(Infinity, 1), null).ok, false);
  assert.equal(decodeSnapshot(one(1, -1), null).ok, false);
});
