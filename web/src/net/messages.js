// The TCP messages the page exchanges over its WebSocket (one FlatBuffers Envelope, identifier
// "SWFT", per binary WebSocket message: a TCP frame's payload without its length prefix), with
// the code flatc --ts generates from protocol/schema/swarmfield.fbs ('swarmfield-wire', an alias
// build.sh gives esbuild). Encoders for what a client sends (Hello, Input, Bye); a decoder for
// what a server sends that range-checks every field as protocol/src/transport/messages.cpp does
// (decode_tcp_message with MessageSet::kFromServer). The JS FlatBuffers runtime has no verifier:
// reads past the buffer give garbage or throw, so every vector and string length is checked
// against the buffer, every decode runs under try/catch, and a failure is an { type: 'invalid' }
// result, never an exception.
import * as flatbuffers from 'flatbuffers';
import {
  Bye as WireBye,
  Envelope,
  Hello as WireHello,
  Input as WireInput,
  Message,
  Role,
} from 'swarmfield-wire';
import { Welcome, MapChunk, Error as WireError, SnapshotData, MapDelta } from 'swarmfield-wire';

export const PROTOCOL_VERSION = 3;
export const MAX_NAME_BYTES = 64;
export const MAX_REASON_BYTES = 256;
export const MAP_CHUNK_BYTES = 48 * 1024;
export const MAX_MAP_SIDE = 8192;
export const MAX_KINDS = 16;
/** A client reads frames of at most 1 MiB (kMaxFrameBytes). */
export const MAX_FRAME_BYTES = 1 << 20;
export const MAX_SNAPSHOT_PAYLOAD_BYTES = 128 * 1152;
export const MAX_MAP_DELTA_CELLS = 4096;
/** |value| limit of Input coordinates (kMaxWireCoordinate). */
export const MAX_WIRE_COORDINATE = 1.0e6;

/** ErrorCode names, for messages to the user. */
export const ERROR_CODES = Object.freeze({
  1: 'bad message',
  2: 'version mismatch',
  3: 'server full',
  4: 'frame too large',
  5: 'shutting down',
});

const encoder = new TextEncoder();

/**
 * `text` cut to at most `limit` UTF-8 bytes at a character boundary, without control
 * characters (what the server accepts in Hello.name).
 */
export function cleanName(text, limit = MAX_NAME_BYTES) {
  // eslint-disable-next-line no-control-regex
  let out = String(text).replace(/[\u0000-\u001f\u007f]/g, '');
  while (encoder.encode(out).length > limit) out = Array.from(out).slice(0, -1).join('');
  return out;
}

function finish(builder, type, body) {
  const envelope = Envelope.createEnvelope(builder, type, body);
  builder.finish(envelope, 'SWFT');
  return builder.asUint8Array().slice();
}

/** Hello of a viewer: protocol 3, no connect token. */
export function encodeHello(name) {
  const b = new flatbuffers.Builder(128);
  const nameOffset = b.createString(cleanName(name));
  WireHello.startHello(b);
  WireHello.addProtocolVersion(b, PROTOCOL_VERSION);
  WireHello.addRole(b, Role.Viewer);
  WireHello.addName(b, nameOffset);
  return finish(b, Message.Hello, WireHello.endHello(b));
}

function wireCoordinate(v) {
  if (!Number.isFinite(v)) return 0;
  return Math.max(-MAX_WIRE_COORDINATE, Math.min(MAX_WIRE_COORDINATE, v));
}

/**
 * Input of a viewer: no move, no fire, no build; the view rectangle in world units (clamped to
 * what the server accepts), the snapshot ack and the client time (µs, echoed back in snapshots).
 * @param {{sequence:number, view:{x0:number,y0:number,x1:number,y1:number}, ackLatest:number, ackBits:number, clientTimeUs:bigint}} input
 */
export function encodeInput(input) {
  const b = new flatbuffers.Builder(128);
  const v = input.view;
  const offset = WireInput.createInput(b, input.sequence >>> 0, 0, 0, wireCoordinate(v.x0), wireCoordinate(v.y0),
    wireCoordinate(v.x1), wireCoordinate(v.y1), input.ackLatest >>> 0, BigInt.asUintN(64, input.clientTimeUs),
    input.ackBits >>> 0, false, 0, 0, 0, 0, 0);
  return finish(b, Message.Input, offset);
}

/** Bye with a reason (the page closing). */
export function encodeBye(reason) {
  const b = new flatbuffers.Builder(64);
  const r = b.createString(cleanName(reason, MAX_REASON_BYTES));
  return finish(b, Message.Bye, WireBye.createBye(b, r));
}

class Invalid extends globalThis.Error {}
function invalid(message) {
  throw new Invalid(message);
}

/** Number of MapChunks that carry `compressed` bytes. */
export function mapChunkCount(compressed) {
  return Math.ceil(compressed / MAP_CHUNK_BYTES);
}
/** ZSTD_COMPRESSBOUND(size). */
export function zstdCompressBound(size) {
  return size + Math.floor(size / 256) + (size < 128 * 1024 ? Math.floor((128 * 1024 - size) / 2048) : 0);
}
const MAX_MAP_CHUNKS = mapChunkCount(zstdCompressBound(MAX_MAP_SIDE * MAX_MAP_SIDE));

/** A string field checked like read_string: UTF-8 (the decoder replaces bad bytes, so refuse
 * them), length, and for names no control characters: C0, DEL, C1 and the invisible formatting
 * characters messages.cpp's is_hidden_format() names (bidirectional controls, zero-width space,
 * word joiner, separators, byte order mark). */
function readString(bytes, limit, isName, what) {
  if (bytes === null || bytes === undefined) return '';
  if (!(bytes instanceof Uint8Array)) invalid(`${what} unreadable`);
  if (bytes.length > limit) invalid(`${what} is ${bytes.length} bytes, limit ${limit}`);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    invalid(`${what} is not valid UTF-8`);
  }
  // eslint-disable-next-line no-control-regex
  if (isName && /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]/.test(text)) {
    invalid(`${what} contains control characters`);
  }
  return text;
}

/** Checks that a vector of `count` elements of `size` bytes can lie inside the buffer. */
function checkLength(count, size, bb, what) {
  if (!Number.isInteger(count) || count < 0 || count * size > bb.capacity()) invalid(`${what} runs past the message`);
}

function readWelcome(w, bb) {
  const out = {
    clientId: w.clientId(),
    tickHz: w.tickHz(),
    snapshotHz: w.snapshotHz(),
    playerId: w.playerId(),
    kinds: [],
  };
  if (out.tickHz < 1 || out.tickHz > 1000 || out.snapshotHz < 1 || out.snapshotHz > 1000) {
    invalid('Welcome tick_hz/snapshot_hz must be 1..1000');
  }
  const m = w.map();
  if (!m) invalid('Welcome.map missing');
  const map = {
    width: m.width(),
    height: m.height(),
    cellSize: m.cellSize(),
    rawBytes: m.rawBytes(),
    compressedBytes: m.compressedBytes(),
    chunkCount: m.chunkCount(),
    name: '',
  };
  if (map.width < 1 || map.width > MAX_MAP_SIDE || map.height < 1 || map.height > MAX_MAP_SIDE) {
    invalid(`MapInfo size ${map.width}x${map.height} outside 1..${MAX_MAP_SIDE} cells per side`);
  }
  if (!Number.isFinite(map.cellSize) || map.cellSize <= 0 || map.cellSize > 1024) {
    invalid('MapInfo.cell_size must be finite and in (0, 1024]');
  }
  if (map.rawBytes !== map.width * map.height) invalid(`MapInfo.raw_bytes ${map.rawBytes} is not width*height`);
  if (map.compressedBytes === 0 || map.compressedBytes > zstdCompressBound(map.rawBytes)) {
    invalid(`MapInfo.compressed_bytes ${map.compressedBytes} impossible for ${map.rawBytes} raw bytes`);
  }
  if (map.chunkCount !== mapChunkCount(map.compressedBytes)) {
    invalid(`MapInfo.chunk_count ${map.chunkCount} should be ${mapChunkCount(map.compressedBytes)}`);
  }
  map.name = readString(m.name(flatbuffers.Encoding.UTF8_BYTES), MAX_NAME_BYTES, true, 'MapInfo.name');
  out.map = map;
  // Welcome.udp (the UDP session's secrets) is of no use to a browser: not read.
  const n = w.kindsLength();
  checkLength(n, 4, bb, 'Welcome.kinds');
  if (n > MAX_KINDS) invalid(`Welcome has ${n} kinds, limit ${MAX_KINDS}`);
  for (let i = 0; i < n; ++i) {
    const k = w.kinds(i);
    if (!k) invalid(`KindInfo ${i} missing`);
    const kind = {
      name: readString(k.name(flatbuffers.Encoding.UTF8_BYTES), MAX_NAME_BYTES, true, 'KindInfo.name'),
      radius: k.radius(),
      colour: k.colour(),
    };
    if (!(Number.isFinite(kind.radius) && kind.radius > 0 && kind.radius <= 1024)) {
      invalid(`KindInfo ${i} radius must be finite and in (0, 1024]`);
    }
    if (kind.colour > 0xffffff) invalid(`KindInfo ${i} colour must be 0xRRGGBB`);
    out.kinds.push(kind);
  }
  return out;
}

function readMapChunk(c, bb) {
  const index = c.index();
  const count = c.count();
  if (count > MAX_MAP_CHUNKS) invalid(`MapChunk.count ${count} too large`);
  if (count !== 0 ? index >= count : index >= MAX_MAP_CHUNKS) invalid(`MapChunk.index ${index} out of range`);
  const n = c.bytesLength();
  checkLength(n, 1, bb, 'MapChunk.bytes');
  if (n === 0 || n > MAP_CHUNK_BYTES) invalid(`MapChunk holds ${n} bytes, expected 1..${MAP_CHUNK_BYTES}`);
  return { index, count, bytes: c.bytesArray().slice() };
}

function readMapDelta(d, bb) {
  const n = d.cellsLength();
  checkLength(n, 6, bb, 'MapDelta.cells');
  if (n === 0 || n > MAX_MAP_DELTA_CELLS) invalid(`MapDelta holds ${n} cells, expected 1..${MAX_MAP_DELTA_CELLS}`);
  const cells = [];
  for (let i = 0; i < n; ++i) {
    const c = d.cells(i);
    const cell = { x: c.x(), y: c.y(), cost: c.cost(), barricade: c.barricade() };
    const where = `MapDelta cell (${cell.x}, ${cell.y})`;
    if (cell.x >= MAX_MAP_SIDE || cell.y >= MAX_MAP_SIDE) invalid(`${where} outside 0..${MAX_MAP_SIDE - 1}`);
    if (cell.cost === 0) invalid(`${where} has cost 0 (costs are 1..255)`);
    if (cell.barricade !== 0 && cell.cost !== 255) invalid(`${where} holds a barricade but has cost ${cell.cost}, not 255`);
    cells.push(cell);
  }
  return { revision: d.revision(), cells };
}

/**
 * Decodes one server message. Returns { type: 'welcome' | 'map_chunk' | 'error' | 'bye' |
 * 'snapshot' | 'map_delta', ... } or { type: 'invalid', error } for a buffer that is not a valid
 * envelope, a message a server may not send (Hello, Input, a SessionSalt the page never asked
 * for), or a field out of range. Never throws.
 * @param {Uint8Array} bytes
 */
export function decodeServerMessage(bytes) {
  try {
    if (bytes.length === 0) invalid('empty message');
    if (bytes.length > MAX_FRAME_BYTES) invalid(`message of ${bytes.length} bytes exceeds the frame limit`);
    if (bytes.length < 8) invalid('not a valid swarmfield TCP message (too short)');
    const bb = new flatbuffers.ByteBuffer(bytes);
    if (!Envelope.bufferHasIdentifier(bb)) invalid('not a valid swarmfield TCP message (identifier)');
    const root = bb.readUint32(0);
    if (root + 4 > bytes.length) invalid('not a valid swarmfield TCP message (root)');
    const envelope = Envelope.getRootAsEnvelope(bb);
    const type = envelope.messageType();
    switch (type) {
      case Message.Welcome:
        return { type: 'welcome', welcome: readWelcome(envelope.message(new Welcome()) ?? invalid('message body missing'), bb) };
      case Message.MapChunk:
        return { type: 'map_chunk', chunk: readMapChunk(envelope.message(new MapChunk()) ?? invalid('message body missing'), bb) };
      case Message.Error: {
        const e = envelope.message(new WireError()) ?? invalid('message body missing');
        const code = e.code();
        if (code < 1 || code > 5) invalid(`Error.code ${code} unknown`);
        return { type: 'error', code, reason: readString(e.reason(flatbuffers.Encoding.UTF8_BYTES), MAX_REASON_BYTES, false, 'Error.reason') };
      }
      case Message.Bye: {
        const b = envelope.message(new WireBye()) ?? invalid('message body missing');
        return { type: 'bye', reason: readString(b.reason(flatbuffers.Encoding.UTF8_BYTES), MAX_REASON_BYTES, false, 'Bye.reason') };
      }
      case Message.SnapshotData: {
        const s = envelope.message(new SnapshotData()) ?? invalid('message body missing');
        const n = s.payloadLength();
        checkLength(n, 1, bb, 'SnapshotData.payload');
        if (n === 0 || n > MAX_SNAPSHOT_PAYLOAD_BYTES) invalid(`SnapshotData holds ${n} bytes, expected 1..${MAX_SNAPSHOT_PAYLOAD_BYTES}`);
        return { type: 'snapshot', payload: s.payloadArray() };
      }
      case Message.MapDelta:
        return { type: 'map_delta', delta: readMapDelta(envelope.message(new MapDelta()) ?? invalid('message body missing'), bb) };
      case Message.NONE:
        invalid('message type NONE');
        break;
      default:
        invalid(`message type ${Message[type] ?? type} is not accepted here`);
    }
  } catch (e) {
    return { type: 'invalid', error: e instanceof Invalid ? e.message : `unreadable message (${e && e.message})` };
  }
  return { type: 'invalid', error: 'unreachable' };
}
