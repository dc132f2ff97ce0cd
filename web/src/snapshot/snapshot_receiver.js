// The client's side of its snapshot stream, a port of protocol/src/snapshot/
// snapshot_receiver.cpp: decodes each payload against the frame it names as baseline (kept in a
// history of the last 32 sequences), keeps the newest decoded frame, and builds the ack the
// client sends back. A snapshot not newer than the newest decoded one is stale; one whose
// baseline is not held cannot be decoded (no baseline); a failed decode changes nothing.
//
// Over the WebSocket (like TCP) every snapshot's baseline is the previous one, but the server's
// sender may fall back to an older frame (one too big for its history) or a full snapshot, so
// the history is kept as the C++ client keeps it.
import { AgentFrame } from './agent_frame.js';
import { SNAPSHOT_HISTORY_SIZE, decodeSnapshot, readSnapshotPrelude } from './snapshot_decoder.js';
import { SnapshotAck } from './snapshot_ack.js';

/** Receive results, as SnapshotReceiver::Result. */
export const Received = Object.freeze({
  DECODED: 'decoded',
  STALE: 'stale',
  NO_BASELINE: 'no_baseline',
  MALFORMED: 'malformed',
});

/** Agent entries the history holds at most (the client library's 16 x 16384). */
export const DEFAULT_HISTORY_AGENTS = 16 * 16384;

export class SnapshotReceiver {
  /** @param {number} historyAgents agent entries over all remembered frames */
  constructor(historyAgents = DEFAULT_HISTORY_AGENTS) {
    this.historyAgents = historyAgents;
    this.reset();
  }

  /** Forgets everything (a new connection). */
  reset() {
    /** Ring of the last 32 frames by sequence % 32 (frames are never changed once decoded). */
    this.history = new Array(SNAPSHOT_HISTORY_SIZE).fill(null);
    this.frame = new AgentFrame(0);
    this.header = null;
    this.deaths = [];
    this.ack = new SnapshotAck();
    this.lastError = '';
  }

  /** The held frame of `sequence`, or null. */
  find(sequence) {
    const f = this.history[sequence % SNAPSHOT_HISTORY_SIZE];
    return f && f.sequence === sequence ? f : null;
  }

  /**
   * Decodes one payload. On DECODED, `frame`, `header` and `deaths` hold the new state and `ack`
   * includes its sequence; on MALFORMED and NO_BASELINE `lastError` says why. Never throws.
   * @param {Uint8Array} payload
   */
  receive(payload) {
    const prelude = readSnapshotPrelude(payload);
    if (!prelude) {
      this.lastError = 'not a snapshot, or baseline distance out of range';
      return Received.MALFORMED;
    }
    if (prelude.sequence === 0) {
      this.lastError = 'snapshot sequence 0';
      return Received.MALFORMED;
    }
    if (this.ack.latest !== 0 && prelude.sequence <= this.ack.latest) return Received.STALE;
    let baseline = null;
    if (prelude.baselineDistance !== 0) {
      baseline = this.find(prelude.sequence - prelude.baselineDistance);
      if (!baseline) {
        this.lastError = 'baseline not held';
        return Received.NO_BASELINE;
      }
    }
    const result = decodeSnapshot(payload, baseline);
    if (!result.ok) {
      this.lastError = result.error;
      return Received.MALFORMED;
    }
    // The baseline may be older than the frame held now, so a death may be flagged again:
    // report only agents the frame held now still has.
    this.deaths = result.deaths.filter((dead) => this.frame.indexOf(dead.id) >= 0);
    this.frame = result.frame;
    this.header = result.header;
    this.store(result.frame);
    this.ack.add(result.header.sequence);
    return Received.DECODED;
  }

  /** Remembers `frame` under its sequence; drops the oldest frames past the agent budget. */
  store(frame) {
    this.history[frame.sequence % SNAPSHOT_HISTORY_SIZE] = frame;
    let total = 0;
    const held = this.history.filter((f) => f !== null).sort((a, b) => b.sequence - a.sequence);
    for (const f of held) {
      total += f.size;
      if (total > this.historyAgents && f !== frame) this.history[f.sequence % SNAPSHOT_HISTORY_SIZE] = null;
    }
  }
}
