// Interpolation between snapshots (src/view/interpolation.js, a port of
// client_viewer/src/snapshot_interpolation.cpp) on hand cases: agents by id lerped, appearing
// where the newer snapshot has them, disappearing; headings along the shorter arc; alpha
// clamped; the bracketing pair picked from a history; the clock's smoothing and reset.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  InterpolatedFrame,
  InterpolationClock,
  interpolateHistory,
  interpolateSnapshots,
} from '../src/view/interpolation.js';

function snapshot(tick, agents, players = []) {
  return {
    tick,
    totalAgents: agents.length,
    count: agents.length,
    id: Uint32Array.from(agents.map((a) => a[0])),
    x: Float32Array.from(agents.map((a) => a[1])),
    y: Float32Array.from(agents.map((a) => a[2])),
    heading: Float32Array.from(agents.map((a) => a[3] ?? 0)),
    kind: Uint8Array.from(agents.map((a) => a[4] ?? 0)),
    players,
    density: null,
    cellSize: 1,
    wave: 0,
  };
}
const rows = (f) => Array.from({ length: f.count }, (_, i) => [f.id[i], f.x[i], f.y[i]]);

test('agents in both are lerped by id; new ones drawn where they are; gone ones not drawn', () => {
  const a = snapshot(10, [[1, 0, 0], [2, 10, 10], [5, 50, 50]]);
  const b = snapshot(13, [[2, 20, 10], [3, 7, 7], [5, 50, 60]]);
  const out = new InterpolatedFrame();
  interpolateSnapshots(a, b, 0.5, out);
  assert.deepEqual(rows(out), [[2, 15, 10], [3, 7, 7], [5, 50, 55]]);
  assert.equal(out.tick, 11.5);
  interpolateSnapshots(a, b, 7, out); // clamped to 1
  assert.deepEqual(rows(out), [[2, 20, 10], [3, 7, 7], [5, 50, 60]]);
  interpolateSnapshots(a, b, NaN, out); // NaN -> 0
  assert.deepEqual(rows(out), [[2, 10, 10], [3, 7, 7], [5, 50, 50]]);
});

test('headings turn along the shorter arc', () => {
  const a = snapshot(0, [[1, 0, 0, 6.0]]);
  const b = snapshot(1, [[1, 0, 0, 0.2]]);
  const out = new InterpolatedFrame();
  interpolateSnapshots(a, b, 0.5, out);
  const expected = 6.0 + (0.2 - 6.0 + 2 * Math.PI) / 2;
  assert.ok(Math.abs(out.heading[0] - expected) < 1e-5, `${out.heading[0]} vs ${expected}`);
});

test('players are lerped, with their aim in radians', () => {
  const p = (x, aim) => ({ id: 4, x, y: 1, contacts: 0, health: 10, kills: 0, shots: 0, score: 0n, aim });
  const out = new InterpolatedFrame();
  interpolateSnapshots(snapshot(0, [], [p(0, 0)]), snapshot(2, [], [p(4, 64)]), 0.25, out);
  assert.equal(out.players[0].x, 1);
  assert.ok(Math.abs(out.players[0].aim - Math.PI / 2) < 1e-6);
});

test('the history: before the oldest, between two, at or after the newest', () => {
  const h = [snapshot(10, [[1, 0, 0]]), snapshot(13, [[1, 3, 0]]), snapshot(16, [[1, 9, 0]])].map((snapshot) => ({ snapshot }));
  const out = new InterpolatedFrame();
  assert.equal(interpolateHistory([], 5, out), false);
  interpolateHistory(h, 5, out);
  assert.deepEqual(rows(out), [[1, 0, 0]]);
  interpolateHistory(h, 14.5, out);
  assert.deepEqual(rows(out), [[1, 6, 0]]);
  interpolateHistory(h, 99, out);
  assert.deepEqual(rows(out), [[1, 9, 0]]);
});

test('the clock follows arrivals smoothly and resets after a jump of more than a second', () => {
  const c = new InterpolationClock(30);
  assert.equal(c.valid, false);
  c.observe(300, 10); // offset 0
  assert.equal(c.renderTick(10, 6), 294);
  c.observe(331, 11); // 1 tick late: moves a tenth of the way
  assert.ok(Math.abs(c.offsetTicks - 0.1) < 1e-9);
  c.observe(5000, 12); // a restart: taken at once
  assert.equal(c.renderTick(12, 0), 5000);
});
