// The page's flow overlay (web/src/view/flow_overlay.js): the exact octile integration field and
// its flow on hand-made maps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { integrationField, flowField, stepOf } from '../src/view/flow_overlay.js';

const W = 255;

function grid(rows) {
  const height = rows.length;
  const width = rows[0].length;
  const costs = new Uint8Array(width * height);
  rows.forEach((row, y) => [...row].forEach((c, x) => (costs[y * width + x] = c === '#' ? W : Number(c))));
  return { costs, width, height };
}

test('open ground: octile distances from the goal', () => {
  const { costs, width, height } = grid(['11111', '11111', '11111', '11111', '11111']);
  const values = integrationField(costs, width, height, [0]);
  assert.equal(values[0], 0);
  assert.equal(values[4], 4); // 4 straight steps
  assert.ok(Math.abs(values[4 * width + 4] - 4 * Math.SQRT2) < 1e-9); // 4 diagonal steps
  assert.ok(Math.abs(values[2 * width + 4] - (2 + 2 * Math.SQRT2)) < 1e-9); // 2 diagonal + 2 straight
});

test('walls are not entered and diagonals do not cut their corners', () => {
  const { costs, width, height } = grid(['1#1', '111', '111']);
  const values = integrationField(costs, width, height, [0]);
  assert.equal(values[1], Infinity); // the wall
  // (2, 0) is reached round the wall: the diagonals next to it would cut its corners, so
  // (0,0) -> (0,1) -> (1,1) -> (2,1) -> (2,0), four straight steps (not 2 + sqrt 2).
  assert.equal(values[2], 4);
});

test('cell costs weigh the path, and unreachable cells stay Infinity', () => {
  const { costs, width, height } = grid(['1911', '1111', '####', '1111']);
  const values = integrationField(costs, width, height, [0]);
  assert.equal(values[1], 9); // entering the cost-9 cell straight
  assert.ok(values[2] < 9 + 1); // round it through the row below is cheaper
  assert.ok(Math.abs(values[2] - (Math.SQRT2 + Math.SQRT2)) < 1e-9);
  for (let x = 0; x < width; ++x) assert.equal(values[3 * width + x], Infinity);
});

test('the flow points downhill to a neighbour with the lowest value', () => {
  const { costs, width, height } = grid(['11111', '11111', '11111']);
  const goal = 1 * width + 2;
  const values = integrationField(costs, width, height, [goal]);
  const flow = flowField(values, costs, width, height);
  assert.equal(flow[goal], -1);
  for (let cell = 0; cell < values.length; ++cell) {
    if (cell === goal) continue;
    const [dx, dy] = stepOf(flow[cell]);
    const x = cell % width;
    const y = (cell - x) / width;
    assert.ok(values[(y + dy) * width + (x + dx)] < values[cell], `cell ${cell} flows uphill`);
  }
  // The cell left of the goal moves right.
  assert.deepEqual(stepOf(flow[goal - 1]).slice(0, 2), [1, 0]);
});
