// The page's network side (src/net: messages over flatc's TypeScript, map transfer, the
// session) against the C++ protocol: a whole server session that tests/web/snapshot_vectors
// encoded with the real encoders (Welcome, zstd map chunks out of order, MapDeltas early and
// stale, 60 snapshots, a Bye) replayed into a Session over a fake WebSocket; the Hello and
// Inputs the Session sends go back to the C++ decoder (snapshot_vectors --check-client), which
// must accept them with the right values. Then hostile server messages end the session with a
// reason, and a snapshot that does not decode is counted while the stream goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { bundleWire } from './support/bundle.mjs';

const vectorsPath = process.env.SWARMFIELD_SNAPSHOT_VECTORS;
const vectorsBin = process.env.SWARMFIELD_SNAPSHOT_VECTORS_BIN;
const vectors = vectorsPath ? JSON.parse(readFileSync(vectorsPath, 'utf8')) : null;
let wire = null;
let skip = vectors && vectorsBin ? false : 'SWARMFIELD_SNAPSHOT_VECTORS(_BIN) not set (ctest web_decoder sets them)';
if (!skip) {
  const bundle = bundleWire();
  if (bundle.skip) skip = bundle.skip;
  else wire = await import(pathToFileURL(bundle.path).href);
}
// The project's rule (tests/support/skip.hpp): where everything must run (CI), a test that
// cannot run fails instead of passing as skipped.
if (skip && process.env.SWARMFIELD_REQUIRE_ALL === '1') {
  test('the session tests could run', () => assert.fail(`could not run: ${skip} (SWARMFIELD_REQUIRE_ALL=1)`));
}

function bytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; ++i) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}
const toHex = (u8) => Buffer.from(u8).toString('hex');
const buffer = (u8) => u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength);

/** The C++ decoder's verdicts on client messages. */
function cppVerdicts(messages) {
  const out = execFileSync(vectorsBin, ['--check-client', ...messages.map(toHex)], { encoding: 'utf8' });
  return out.trim().split('\n').map((line) => JSON.parse(line));
}

/** A WebSocket stand-in: records what the Session sends. */
class FakeSocket {
  constructor() {
    this.readyState = 0;
    this.sent = [];
    this.closed = false;
  }
  open() {
    this.readyState = 1;
    this.onopen();
  }
  send(b) {
    this.sent.push(new Uint8Array(b));
  }
  close() {
    this.readyState = 3;
    this.closed = true;
  }
}

function newSession(view = () => ({ x0: -1.5, y0: 2.25, x1: 300, y1: 225 })) {
  let socket = null;
  let t = 100;
  const session = new wire.Session({
    url: 'ws://test/ws',
    name: 'browser\u0007 of a name that is much longer than sixty-four bytes, so it must be cut',
    view,
    clock: () => (t += 0.01),
    openSocket: () => (socket = new FakeSocket()),
  });
  socket.open();
  return { session, socket };
}

test('a whole server session: map, deltas, 60 snapshots, Bye; Hello and Inputs the C++ accepts', { skip }, () => {
  const s = vectors.session;
  const { session, socket } = newSession();
  try {
    assert.equal(session.phase, 'handshake');
    s.messages.forEach((hex, i) => {
      if (i === 1) assert.equal(session.phase, 'handshake');
      session.onMessage(buffer(bytes(hex)));
      if (i === 0) assert.ok(session.welcome, 'Welcome taken');
    });
    assert.equal(session.closeReason, `server closed the session: ${s.bye}`);
    assert.equal(session.phase, 'closed');
    assert.ok(socket.closed);
    assert.equal(session.stats.snapshotsDecoded, s.snapshots);
    assert.equal(session.stats.decodeErrors, 0);
    const w = session.welcome;
    assert.deepEqual({ width: w.map.width, height: w.map.height, cell_size: w.map.cellSize, name: w.map.name }, s.map);
    assert.deepEqual(w.kinds, s.kinds);
    assert.equal([w.tickHz, w.snapshotHz, w.clientId].join(), '30,10,5');
    assert.equal(toHex(session.map.costs), s.final_costs);
    assert.deepEqual([...session.map.barricades.entries()].sort((a, b) => b[0] - a[0]), s.final_barricades);
    assert.equal(session.map.deltasApplied, 2);
    assert.equal(session.map.deltasIgnored, 1);
    assert.equal(session.snapshots.length, 8);
    const last = session.snapshots[session.snapshots.length - 1].snapshot;
    assert.equal(last.sequence, s.snapshots);
    // What went out: a Hello, then Inputs from the Welcome on (one at once; the 100 ms timer is
    // stopped by the Bye before it fires in this synchronous replay).
    const verdicts = cppVerdicts(socket.sent);
    assert.deepEqual(verdicts[0], { ok: true, type: 'hello', protocol_version: 3, role: 0,
      name: 'browser of a name that is much longer than sixty-four bytes, so ', connect_token: 0 }); // 64 bytes, no BEL
    assert.ok(verdicts.length >= 2);
    assert.deepEqual(verdicts[1].view, [-1.5, 2.25, 300, 225]);
    assert.equal(verdicts[1].sequence, 1);
    assert.equal(verdicts[1].fire, false);
  } finally {
    session.fail('test over');
  }
});

test('Inputs carry the ack of what was decoded (latest + 32 bits), counting up from 1', { skip }, () => {
  const s = vectors.session;
  const { session, socket } = newSession(() => ({ x0: NaN, y0: -5e6, x1: 5e6, y1: 10 }));
  try {
    for (const hex of s.messages.slice(0, -1)) session.onMessage(buffer(bytes(hex)));
    session.sendInput();
    session.sendInput();
    const verdicts = cppVerdicts(socket.sent);
    assert.ok(verdicts.every((v) => v.ok), JSON.stringify(verdicts.find((v) => !v.ok)));
    const inputs = verdicts.filter((v) => v.type === 'input');
    assert.deepEqual(inputs.map((v) => v.sequence), inputs.map((_, i) => i + 1));
    assert.deepEqual(inputs[inputs.length - 1].ack, [s.snapshots, 0xffffffff]);
    assert.deepEqual(inputs[0].ack, [0, 0]);
    assert.deepEqual(inputs[0].view, [0, -1e6, 1e6, 10]); // non-finite -> 0, clamped to +-1e6
    assert.ok(BigInt(inputs[1].client_time_us) > BigInt(inputs[0].client_time_us));
  } finally {
    session.close('test over');
  }
  assert.deepEqual(cppVerdicts([socket.sent[socket.sent.length - 1]])[0], { ok: true, type: 'bye', reason: 'test over' });
});

test('a snapshot that does not decode is counted, and the stream goes on', { skip }, () => {
  const s = vectors.session;
  const { session } = newSession();
  try {
    const messages = s.messages.slice(0, -1).map(bytes);
    // The last SnapshotData's payload with its format byte zeroed: refused. (An earlier
    // one would leave every later delta without its baseline in this reliable stream.)
    const lastSnapshot = messages.length - 1;
    const payloadHex = vectors.streams[0].steps[vectors.streams[0].steps.length - 1].payload;
    const at = toHex(messages[lastSnapshot]).indexOf(payloadHex) / 2;
    assert.ok(at > 0);
    messages[lastSnapshot][at] = 0x00;
    for (const m of messages) session.onMessage(buffer(m));
    assert.equal(session.phase, 'streaming');
    assert.equal(session.stats.decodeErrors, 1);
    assert.equal(session.stats.snapshotsDecoded, s.snapshots - 1);
    assert.match(session.lastError, /snapshot not decoded/);
  } finally {
    session.fail('test over');
  }
});

test('hostile server messages end the session with a reason, never an exception', { skip }, () => {
  const welcome = bytes(vectors.session.messages[0]);
  const hello = wire.encodeHello('x');
  const garbage = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff);
  const wrongId = welcome.slice();
  wrongId[4] = 0x58; // 'X' in place of 'S' of SWFT
  const cases = [
    [new Uint8Array(0), /empty message/],
    [garbage, /bad message/],
    [wrongId, /identifier/],
    [welcome.slice(0, welcome.length / 2), /bad message/],
    [hello, /not accepted here/],
  ];
  for (const [message, reason] of cases) {
    const { session, socket } = newSession();
    assert.doesNotThrow(() => session.onMessage(buffer(message)));
    assert.equal(session.phase, 'closed');
    assert.match(session.closeReason, reason);
    assert.ok(socket.closed);
  }
  // Every one-byte change of a Welcome: accepted or refused, never thrown.
  for (let i = 0; i < welcome.length; ++i) {
    const changed = welcome.slice();
    changed[i] ^= 0x5a;
    const r = wire.decodeServerMessage(changed);
    assert.ok(typeof r.type === 'string');
  }
  // A second Welcome.
  const { session } = newSession();
  session.onMessage(buffer(welcome));
  session.onMessage(buffer(welcome));
  assert.match(session.closeReason, /second Welcome/);
});

test('the decoder refuses what the C++ refuses in a Welcome', { skip }, () => {
  const r = wire.decodeServerMessage(bytes(vectors.session.messages[0]));
  assert.equal(r.type, 'welcome');
  assert.equal(r.welcome.map.chunkCount, vectors.session.chunks);
});
