// Snapshot acknowledgements, a port of protocol/include/swarmfield/protocol/transport/
// snapshot_ack.hpp: the newest sequence decoded and a 32-bit field of the 32 before it
// (bit i = latest - 1 - i). Sequences are per connection, from 1 (0 = none).

export class SnapshotAck {
  constructor() {
    this.latest = 0;
    this.received = 0; // unsigned 32-bit
  }

  /** True if this ack reports `sequence` as decoded. */
  has(sequence) {
    if (this.latest === 0 || sequence === 0 || sequence > this.latest) return false;
    if (sequence === this.latest) return true;
    const back = this.latest - sequence;
    return back <= 32 && ((this.received >>> (back - 1)) & 1) !== 0;
  }

  /** Records `sequence` as decoded (older than latest - 32 is forgotten). */
  add(sequence) {
    if (sequence === 0) return;
    if (this.latest === 0 || sequence > this.latest) {
      const shift = this.latest === 0 ? 33 : sequence - this.latest;
      // The old latest becomes bit shift - 1; shifting by >= 32 clears everything.
      if (shift > 32) this.received = 0;
      else if (shift === 32) this.received = 0x80000000;
      else this.received = ((this.received << shift) | (1 << (shift - 1))) >>> 0;
      this.latest = sequence;
    } else if (sequence < this.latest && this.latest - sequence <= 32) {
      this.received = (this.received | (1 << (this.latest - sequence - 1))) >>> 0;
    }
  }
}
