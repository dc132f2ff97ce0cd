// Bit fields and Exp-Golomb codes of the snapshot codec's bit section, a port of
// protocol/include/swarmfield/protocol/snapshot/bit_stream.hpp (BitReader, zigzag).
//
// Layout: bit i of the stream is bit (i % 8) of byte (i / 8); a field of n bits is stored with
// its least significant bit first. Exp-Golomb order k of an unsigned v: w = v + 2^k has b bits;
// the code is (b - 1 - k) zero bits, a one bit, then the low (b - 1) bits of w.
//
// Like the C++ reader, reading past the end (or a malformed code) returns 0 and sets `failed`;
// later reads keep returning 0, so callers check `failed` once per section. Values are plain
// JS numbers holding unsigned 32-bit integers (exact in a double).

/** Largest Exp-Golomb order the reader accepts (kMaxExpGolombOrder). */
export const MAX_EXP_GOLOMB_ORDER = 24;

/** Zigzag decode: 0, 1, 2, 3, 4 -> 0, -1, 1, -2, 2 (u is an unsigned 32-bit value). */
export function zigzagDecode(u) {
  return (u >>> 1) ^ -(u & 1);
}

export class BitReader {
  /**
   * @param {Uint8Array} bytes the bit section (not copied)
   */
  constructor(bytes) {
    this.bytes = bytes;
    this.pos = 0; // bits read
    this.failed = false;
  }

  /** Bits not read yet. */
  bitsLeft() {
    return this.bytes.length * 8 - this.pos;
  }

  /**
   * The next `bits` (0..32) bits as an unsigned value; 0 and `failed` past the end.
   * @param {number} bits
   */
  readBits(bits) {
    if (bits === 0) return 0;
    if (this.failed || bits > 32 || bits > this.bitsLeft()) {
      this.failed = true;
      return 0;
    }
    const bytes = this.bytes;
    let pos = this.pos;
    let value = 0;
    let got = 0;
    // At most 5 bytes; the value is built with multiplications, not shifts, so that a 32-bit
    // field stays unsigned (JS shifts work on signed 32-bit integers).
    while (got < bits) {
      const shift = pos & 7;
      const take = Math.min(8 - shift, bits - got);
      const part = (bytes[pos >>> 3] >>> shift) & ((1 << take) - 1);
      value += part * 2 ** got;
      got += take;
      pos += take;
    }
    this.pos = pos;
    return value;
  }

  readBool() {
    return this.readBits(1) !== 0;
  }

  /**
   * Exp-Golomb of order `k`. A code whose value does not fit a uint32 (prefix too long), or an
   * order above MAX_EXP_GOLOMB_ORDER, fails.
   * @param {number} k
   */
  readExpGolomb(k) {
    if (k > MAX_EXP_GOLOMB_ORDER) {
      this.failed = true;
      return 0;
    }
    let zeros = 0;
    while (!this.failed && this.readBits(1) === 0) {
      if (++zeros > 32) {
        this.failed = true;
        return 0;
      }
    }
    if (this.failed) return 0;
    const lowBits = zeros + k; // b - 1
    // w >= 2^lowBits and v = w - 2^k with k <= 24: above 32 low bits v cannot fit 32 bits. The
    // C++ reader reads those bits first, but its verdict is the same failure.
    if (lowBits > 32) {
      this.failed = true;
      return 0;
    }
    // Past the end the low bits read as 0 and `failed` is set, as in C++ (the value is then
    // returned all the same; callers check `failed`).
    const low = this.readBits(lowBits);
    const v = 2 ** lowBits + low - 2 ** k;
    if (v > 0xffffffff) {
      this.failed = true;
      return 0;
    }
    return v;
  }

  /** Zigzag Exp-Golomb of order `k` (a signed 32-bit value). */
  readSignedExpGolomb(k) {
    return zigzagDecode(this.readExpGolomb(k));
  }
}
