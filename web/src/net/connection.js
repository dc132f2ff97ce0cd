// One spectator session over the WebSocket: Hello, then the Welcome and the map's chunks, then
// snapshots (decoded and acknowledged), map changes, and an Input about 10 times a second (the
// view rectangle, the snapshot ack: the server closes a client silent for 15 s). Mirrors what
// client_viewer/src/connection*.cpp does over TCP: a bad server message ends the session, a
// snapshot that does not decode is counted and dropped (the stream goes on), map deltas that
// arrive before the map is complete wait for it. The DOM-free part of the page.
import { Received, SnapshotReceiver, unpackFrame } from '../snapshot/index.js';
import { ERROR_CODES, decodeServerMessage, encodeBye, encodeHello, encodeInput } from './messages.js';
import { GameMap, MapAssembler } from './game_map.js';

/** Inputs per second (the brief of the server: one at least every 15 s). */
export const INPUT_INTERVAL_MS = 100;
/** Snapshots kept for interpolation (the C++ client's default). */
export const SNAPSHOT_HISTORY = 8;
/** MapDeltas held while the map is still arriving (each up to 4096 cells). */
const MAX_EARLY_DELTAS = 256;

/** Seconds of a monotonic clock (performance.now() in the page; any in tests). */
const defaultClock = () => performance.now() / 1000;

/** A sliding one-second rate of events or bytes. */
class Rate {
  constructor() {
    this.events = [];
  }
  add(now, amount = 1) {
    this.events.push([now, amount]);
    this.trim(now);
  }
  trim(now) {
    while (this.events.length > 0 && this.events[0][0] < now - 1) this.events.shift();
  }
  perSecond(now) {
    this.trim(now);
    return this.events.reduce((sum, e) => sum + e[1], 0);
  }
}

export class Session {
  /**
   * @param {object} options
   * @param {(url: string) => WebSocket} options.openSocket
   * @param {string} options.url ws:// or wss:// address of /ws
   * @param {string} options.name Hello.name
   * @param {() => {x0:number,y0:number,x1:number,y1:number}} options.view the rectangle shown (world units)
   * @param {() => number} [options.clock] seconds
   */
  constructor(options) {
    this.options = options;
    this.clock = options.clock ?? defaultClock;
    this.receiver = new SnapshotReceiver();
    /** 'connecting' | 'handshake' | 'streaming' | 'closed' */
    this.phase = 'connecting';
    this.welcome = null;
    this.map = null;
    this.assembler = null;
    this.earlyDeltas = [];
    /** Snapshots for interpolation: { snapshot (unpackFrame), receivedAt (s) }, oldest first. */
    this.snapshots = [];
    this.newSnapshots = 0;
    this.closeReason = '';
    this.lastError = '';
    this.stats = {
      bytesReceived: 0,
      messages: 0,
      snapshotsDecoded: 0,
      snapshotsStale: 0,
      snapshotsNoBaseline: 0,
      decodeErrors: 0,
      inputsSent: 0,
      deathsSeen: 0,
      rttMs: 0,
    };
    this.byteRate = new Rate();
    this.snapshotRate = new Rate();
    this.inputSequence = 0;
    this.inputTimer = null;
    this.socket = options.openSocket(options.url);
    this.socket.binaryType = 'arraybuffer';
    this.socket.onopen = () => this.onOpen();
    this.socket.onmessage = (event) => this.onMessage(event.data);
    this.socket.onclose = (event) => this.onClose(event.code, event.reason);
    this.socket.onerror = () => {
      if (!this.lastError) this.lastError = 'WebSocket error';
    };
  }

  onOpen() {
    this.phase = 'handshake';
    this.send(encodeHello(this.options.name));
  }

  send(bytes) {
    if (this.socket.readyState === 1) this.socket.send(bytes);
  }

  /** Ends the session with `reason` (a bad message, the server's Error or Bye, the page). */
  fail(reason) {
    if (this.phase === 'closed') return;
    this.closeReason = reason;
    this.lastError = reason;
    this.stopInputs();
    this.phase = 'closed';
    try {
      this.socket.close(1000, 'closing');
    } catch {
      // already closing
    }
    this.options.onClosed?.(this);
  }

  /** The page leaves: a Bye, then close. */
  close(reason = 'viewer closed') {
    if (this.phase === 'closed') return;
    this.send(encodeBye(reason));
    this.fail(reason);
  }

  onClose(code, reason) {
    if (this.phase === 'closed') return;
    this.fail(`connection closed (code ${code}${reason ? `: ${reason}` : ''})`);
  }

  /** One WebSocket message: never throws (a bug in a handler is reported as an error). */
  onMessage(data) {
    if (this.phase === 'closed') return;
    if (!(data instanceof ArrayBuffer)) {
      this.fail('server sent a text message (the protocol is binary)');
      return;
    }
    const bytes = new Uint8Array(data);
    const now = this.clock();
    this.stats.bytesReceived += bytes.length;
    ++this.stats.messages;
    this.byteRate.add(now, bytes.length);
    try {
      this.handle(decodeServerMessage(bytes), now);
    } catch (e) {
      this.lastError = `internal error: ${e && e.message}`;
      ++this.stats.decodeErrors;
    }
  }

  handle(message, now) {
    switch (message.type) {
      case 'invalid':
        this.fail(`server sent a bad message: ${message.error}`);
        return;
      case 'error':
        this.fail(`server error (${ERROR_CODES[message.code] ?? message.code}): ${message.reason}`);
        return;
      case 'bye':
        this.fail(this.phase === 'streaming' ? `server closed the session: ${message.reason}`
          : `server closed the connection during handshake: ${message.reason}`);
        return;
      case 'welcome':
        if (this.welcome) {
          this.fail('server sent a second Welcome');
          return;
        }
        this.welcome = message.welcome;
        this.assembler = new MapAssembler(message.welcome.map);
        this.startInputs();
        return;
      case 'map_chunk':
        this.onMapChunk(message.chunk);
        return;
      case 'snapshot':
        this.onSnapshot(message.payload, now);
        return;
      case 'map_delta':
        this.onMapDelta(message.delta);
        return;
      default:
        this.fail('server sent an unexpected message');
    }
  }

  onMapChunk(chunk) {
    if (this.phase !== 'handshake' || !this.assembler) {
      this.fail('server sent a MapChunk outside the handshake');
      return;
    }
    const error = this.assembler.add(chunk);
    if (error) {
      this.fail(`server sent a bad map: ${error}`);
      return;
    }
    if (!this.assembler.complete()) return;
    const done = this.assembler.finish();
    if (done.error) {
      this.fail(`server sent a bad map: ${done.error}`);
      return;
    }
    const info = this.welcome.map;
    this.map = new GameMap(info.width, info.height, info.cellSize, info.name, done.costs);
    this.assembler = null;
    this.phase = 'streaming';
    for (const delta of this.earlyDeltas) this.map.applyDelta(delta);
    this.earlyDeltas = [];
    this.options.onMap?.(this);
  }

  onMapDelta(delta) {
    if (this.phase !== 'streaming') {
      if (this.phase !== 'handshake' || this.earlyDeltas.length >= MAX_EARLY_DELTAS) {
        this.fail('server sent too many MapDeltas before the map was complete');
        return;
      }
      this.earlyDeltas.push(delta);
      return;
    }
    this.map.applyDelta(delta);
  }

  /** A snapshot, decoded against its baseline; may come before the map is complete. */
  onSnapshot(payload, now) {
    if (!this.welcome) {
      this.fail('server sent a snapshot before its Welcome');
      return;
    }
    const result = this.receiver.receive(payload);
    if (result === Received.MALFORMED) {
      ++this.stats.decodeErrors;
      this.lastError = `snapshot not decoded: ${this.receiver.lastError}`;
      return;
    }
    if (result === Received.NO_BASELINE) {
      ++this.stats.snapshotsNoBaseline;
      return;
    }
    if (result === Received.STALE) {
      ++this.stats.snapshotsStale;
      return;
    }
    ++this.stats.snapshotsDecoded;
    this.snapshotRate.add(now);
    const r = this.receiver;
    const snapshot = unpackFrame(r.header, r.frame, this.welcome.map.cellSize, r.deaths);
    this.stats.deathsSeen += snapshot.deaths.length;
    const echo = Number(snapshot.echoClientTimeUs);
    const nowUs = Math.round(now * 1e6);
    if (echo > 0 && echo <= nowUs) {
      const sample = (nowUs - echo) / 1000;
      this.stats.rttMs = this.stats.rttMs === 0 ? sample : this.stats.rttMs + 0.1 * (sample - this.stats.rttMs);
    }
    const last = this.snapshots[this.snapshots.length - 1];
    if (last && snapshot.tick <= last.snapshot.tick) return; // not newer
    this.snapshots.push({ snapshot, receivedAt: now });
    if (this.snapshots.length > SNAPSHOT_HISTORY) this.snapshots.shift();
    ++this.newSnapshots;
  }

  startInputs() {
    this.stopInputs();
    this.sendInput();
    this.inputTimer = setInterval(() => this.sendInput(), INPUT_INTERVAL_MS);
  }

  stopInputs() {
    if (this.inputTimer !== null) clearInterval(this.inputTimer);
    this.inputTimer = null;
  }

  /** An Input: the view, the ack of what was decoded, the client time (echoed: the RTT). */
  sendInput() {
    if (this.phase === 'closed') return;
    const ack = this.receiver.ack;
    this.send(encodeInput({
      sequence: ++this.inputSequence,
      view: this.options.view(),
      ackLatest: ack.latest,
      ackBits: ack.received,
      clientTimeUs: BigInt(Math.round(this.clock() * 1e6)),
    }));
    ++this.stats.inputsSent;
  }

  /** Bytes received over the last second. */
  bytesPerSecond() {
    return this.byteRate.perSecond(this.clock());
  }

  /** Snapshots decoded over the last second. */
  snapshotsPerSecond() {
    return this.snapshotRate.perSecond(this.clock());
  }
}
