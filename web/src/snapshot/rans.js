// Static-model rANS decoding with transmitted frequency tables, a port of the decoder half of
// protocol/src/snapshot/rans_coder.cpp (byte-wise rANS, 32-bit state in [2^23, 2^31), after
// F. Giesen's rans_byte.h). Hostile-input safe as the C++ one: a table is accepted only if its
// frequencies sum exactly to 2^scale; every symbol comes from a validated table; running out of
// bytes fails instead of reading past the stream; the final state must be the encoder's initial
// 2^23 and every byte used.
import { BitReader } from './bit_reader.js';

export const RANS_MAX_SYMBOLS = 64;
export const RANS_MIN_SCALE_BITS = 6;
export const RANS_MAX_SCALE_BITS = 12;
/** Lower end of the state interval (the encoder's initial state). */
export const RANS_LOW = 1 << 23;

/** A normalized frequency table with the decoder's slot look-up. */
export class RansTable {
  constructor() {
    this.size = 0;
    this.scaleBits = RANS_MIN_SCALE_BITS;
    this.freq = new Uint32Array(RANS_MAX_SYMBOLS);
    this.start = new Uint32Array(RANS_MAX_SYMBOLS);
    /** Symbol of every slot 0 .. 2^scaleBits - 1. */
    this.slotSymbol = new Uint8Array(1 << RANS_MAX_SCALE_BITS);
  }

  /**
   * Reads and validates a table of `alphabetSize` symbols: 3 bits scale - 6, 3 bits order k,
   * every frequency as Exp-Golomb(k). False on any inconsistency (frequencies not summing to
   * 2^scale, a reader failure).
   * @param {BitReader} reader
   * @param {number} alphabetSize
   */
  read(reader, alphabetSize) {
    if (alphabetSize === 0 || alphabetSize > RANS_MAX_SYMBOLS) return false;
    const bits = reader.readBits(3) + RANS_MIN_SCALE_BITS;
    const k = reader.readBits(3);
    if (reader.failed || bits > RANS_MAX_SCALE_BITS) return false;
    const target = 2 ** bits;
    let sum = 0;
    for (let i = 0; i < alphabetSize; ++i) {
      const f = reader.readExpGolomb(k);
      if (reader.failed || f > target) return false;
      this.freq[i] = f;
      sum += f;
    }
    if (sum !== target) return false;
    this.freq.fill(0, alphabetSize);
    this.size = alphabetSize;
    this.scaleBits = bits;
    let start = 0;
    for (let i = 0; i < alphabetSize; ++i) {
      this.start[i] = start;
      this.slotSymbol.fill(i, start, start + this.freq[i]);
      start += this.freq[i];
    }
    return true;
  }
}

/** Decodes one stream made by the C++ RansEncoder. */
export class RansDecoder {
  constructor() {
    this.bytes = new Uint8Array(0);
    this.pos = 0;
    this.state = 0;
    this.failed = false;
  }

  /**
   * Reads the initial state; false if the stream is shorter than 4 bytes or the state is out of
   * its interval.
   * @param {Uint8Array} bytes
   */
  init(bytes) {
    this.bytes = bytes;
    this.failed = false;
    if (bytes.length < 4) {
      this.failed = true;
      return false;
    }
    this.state = (bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24)) >>> 0;
    this.pos = 4;
    if (this.state < RANS_LOW || this.state >= RANS_LOW * 256) {
      this.failed = true;
      return false;
    }
    return true;
  }

  /**
   * Decodes one symbol with `table` (always < table.size). On exhausted input sets `failed` and
   * returns symbols of no meaning (still in range), as the C++ decoder does.
   * @param {RansTable} t
   */
  get(t) {
    const mask = (1 << t.scaleBits) - 1;
    let x = this.state;
    const s = t.slotSymbol[x & mask];
    // freq <= 2^scale and x >> scale < 2^(31 - scale): the product stays below 2^31, exact.
    x = t.freq[s] * (x >>> t.scaleBits) + (x & mask) - t.start[s];
    while (x < RANS_LOW) {
      if (this.pos >= this.bytes.length) {
        this.failed = true;
        x = RANS_LOW;
        break;
      }
      x = x * 256 + this.bytes[this.pos++];
    }
    this.state = x;
    return s < t.size ? s : 0;
  }

  /** True when every byte was consumed and the state is back to the encoder's initial value. */
  finishedCleanly() {
    return !this.failed && this.pos === this.bytes.length && this.state === RANS_LOW;
  }
}
