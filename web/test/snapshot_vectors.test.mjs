// The JavaScript snapshot decoder against the C++ codec: every payload of the vectors that
// tests/web/snapshot_vectors.cpp writes (SWARMFIELD_SNAPSHOT_VECTORS names the file) goes
// through SnapshotReceiver and unpackFrame, and what they hold afterwards must equal what the C++
// SnapshotReceiver and client::unpack_frame held, value for value: the receive result, the ack,
// the header and players, every agent with its predictor state, the density grid, the deaths
// and the positions drawn. Hostile payloads must fail exactly where the C++ decoder fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  AgentFrame,
  DensityGrid,
  Received,
  SnapshotReceiver,
  decodeSnapshot,
  unpackFrame,
} from '../src/snapshot/index.js';

const path = process.env.SWARMFIELD_SNAPSHOT_VECTORS;
const vectors = path ? JSON.parse(readFileSync(path, 'utf8')) : null;
const skip = vectors ? false : 'SWARMFIELD_SNAPSHOT_VECTORS not set (ctest web_decoder sets it)';

function bytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; ++i) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

function agentRows(frame) {
  const rows = [];
  for (let i = 0; i < frame.size; ++i) {
    rows.push([frame.id[i], frame.x[i], frame.y[i], frame.lastTick[i], frame.vx[i], frame.vy[i], frame.heading[i], frame.kind[i]]);
  }
  return rows;
}

function gridJson(g) {
  return {
    origin_x: g.originX,
    origin_y: g.originY,
    cell_log2: g.cellLog2,
    width: g.width,
    height: g.height,
    levels: Array.from(g.levels),
  };
}

function frameJson(frame) {
  return { sequence: frame.sequence, tick: frame.tick, agents: agentRows(frame), grid: gridJson(frame.grid) };
}

function headerJson(h) {
  return {
    sequence: h.sequence,
    tick: h.tick,
    baseline_distance: h.baselineDistance,
    predicted: h.predicted,
    precision_shift: h.precisionShift,
    echo_client_time_us: h.echoClientTimeUs.toString(),
    total_agents: h.totalAgents,
    rebuilds: h.rebuilds.toString(),
    wave: h.wave,
    players: h.players.map((p) => ({
      id: p.id,
      x: p.x,
      y: p.y,
      contacts: p.contacts,
      health: p.health,
      kills: p.kills,
      shots: p.shots,
      score: p.score.toString(),
      aim: p.aim,
    })),
  };
}

function renderJson(state) {
  const agents = [];
  for (let i = 0; i < state.count; ++i) agents.push([state.id[i], state.x[i], state.y[i], state.heading[i], state.kind[i]]);
  return {
    updated: state.updated,
    agents,
    deaths: state.deaths.map((d) => [d.id, d.x, d.y, d.kind]),
  };
}

/** A frame rebuilt from its JSON (a baseline for the hostile payloads). */
function frameFromJson(j) {
  const f = new AgentFrame(j.agents.length);
  f.sequence = j.sequence;
  f.tick = j.tick;
  f.size = j.agents.length;
  j.agents.forEach((a, i) => {
    [f.id[i], f.x[i], f.y[i], f.lastTick[i], f.vx[i], f.vy[i], f.heading[i], f.kind[i]] = a;
  });
  const g = new DensityGrid();
  g.originX = j.grid.origin_x;
  g.originY = j.grid.origin_y;
  g.cellLog2 = j.grid.cell_log2;
  g.width = j.grid.width;
  g.height = j.grid.height;
  g.levels = Uint8Array.from(j.grid.levels);
  f.grid = g;
  return f;
}

test('the vectors cover what the codec distinguishes', { skip }, () => {
  const all = vectors.streams.flatMap((s) => s.steps);
  const decoded = all.filter((s) => s.result === 'decoded');
  assert.ok(decoded.length >= 150, `${decoded.length} decoded snapshots`);
  assert.ok(all.some((s) => s.result === 'stale'), 'a stale snapshot');
  assert.ok(decoded.some((s) => s.header.baseline_distance > 1), 'a baseline further back');
  assert.ok(decoded.some((s) => !s.header.predicted), 'snapshots without prediction');
  assert.ok(decoded.some((s) => s.header.precision_shift === 4), 'coarse positions (precision shift 4)');
  assert.ok(decoded.some((s) => s.deaths.length > 0), 'deaths');
  assert.ok(decoded.some((s) => s.frame.grid.width > 0), 'a density grid');
  assert.ok(decoded.some((s) => s.render.updated < s.frame.agents.length), 'stale agents drawn where predicted');
  assert.ok(vectors.corrupt.some((c) => !c.ok) && vectors.corrupt.some((c) => c.ok), 'hostile payloads both ways');
});

for (const stream of vectors ? vectors.streams : []) {
  test(`stream "${stream.name}": the same results, acks, frames and drawn positions as C++`, () => {
    const receiver = new SnapshotReceiver();
    stream.steps.forEach((step, n) => {
      const where = `${stream.name} arrival ${n} (sent ${step.sent_step})`;
      const result = receiver.receive(bytes(step.payload));
      assert.equal(result, step.result, `${where}: ${receiver.lastError}`);
      assert.deepEqual({ latest: receiver.ack.latest, received: receiver.ack.received }, step.ack, `${where}: ack`);
      if (result !== Received.DECODED) return;
      assert.deepEqual(headerJson(receiver.header), step.header, `${where}: header`);
      assert.deepEqual(frameJson(receiver.frame), step.frame, `${where}: frame`);
      assert.deepEqual(receiver.deaths.map((a) => [a.id, a.x, a.y, a.tick, a.vx, a.vy, a.heading, a.kind]), step.deaths,
        `${where}: deaths`);
      const state = unpackFrame(receiver.header, receiver.frame, vectors.cell_size, receiver.deaths);
      assert.deepEqual(renderJson(state), step.render, `${where}: drawn agents`);
    });
  });
}

test('hostile payloads: the same verdict as the C++ decoder, the same frame when it accepts', { skip }, () => {
  const reliable = vectors.streams.find((s) => s.name === 'reliable');
  let refused = 0;
  for (const c of vectors.corrupt) {
    const baseline = frameFromJson(reliable.steps[c.baseline_step].frame);
    const before = JSON.stringify(frameJson(baseline));
    const result = decodeSnapshot(bytes(c.payload), baseline);
    assert.equal(result.ok, c.ok, `${c.what} against step ${c.baseline_step}: C++ ${c.ok ? 'accepts' : `refuses (${c.error})`}, JS ${result.ok ? 'accepts' : `refuses (${result.error})`}`);
    assert.equal(JSON.stringify(frameJson(baseline)), before, `${c.what}: the baseline is unchanged`);
    if (result.ok) {
      assert.deepEqual(headerJson(result.header), c.header, `${c.what}: header`);
      assert.deepEqual(frameJson(result.frame), c.frame, `${c.what}: frame`);
    } else {
      ++refused;
    }
  }
  assert.ok(refused > 0);
});

test('a refused payload changes nothing at the receiver; the stream goes on', { skip }, () => {
  const reliable = vectors.streams.find((s) => s.name === 'reliable');
  const receiver = new SnapshotReceiver();
  const hostile = new Map();
  for (const c of vectors.corrupt) {
    if (!c.ok && !hostile.has(c.baseline_step + 1)) hostile.set(c.baseline_step + 1, c);
  }
  assert.ok(hostile.size >= 5);
  reliable.steps.forEach((step, i) => {
    const c = hostile.get(i);
    if (c) {
      const frame = receiver.frame;
      const ack = { ...receiver.ack };
      assert.equal(receiver.receive(bytes(c.payload)), Received.MALFORMED, c.what);
      assert.ok(receiver.lastError.length > 0);
      assert.equal(receiver.frame, frame);
      assert.deepEqual({ ...receiver.ack }, ack);
    }
    assert.equal(receiver.receive(bytes(step.payload)), Received.DECODED);
    assert.deepEqual(frameJson(receiver.frame), step.frame);
  });
});

test('a delta whose baseline the receiver never had is not decoded (no baseline), nor acknowledged', { skip }, () => {
  const reliable = vectors.streams.find((s) => s.name === 'reliable');
  const receiver = new SnapshotReceiver();
  const delta = reliable.steps.find((s) => s.header.baseline_distance > 0);
  assert.equal(receiver.receive(bytes(delta.payload)), Received.NO_BASELINE);
  assert.equal(receiver.ack.latest, 0);
});
