// The flow overlay (key V): the integration and flow fields of the smallest size class, computed
// in the page from the map and the players' cells, as the C++ viewer draws them (it runs the
// server's own code; this is a port of the exact octile field it starts from, without the
// server's any-angle layer, congestion and size classes, so arrows are what a runner follows
// far from crowds). Dijkstra over the 8-neighbour grid: a step costs the cell's cost x 1 (or x
// sqrt 2 diagonally, and a diagonal never cuts a wall's corner); walls (255) are not entered.
// Source of the method: the flow-field pathfinding of E. Emerson, "Crowd Pathfinding and Steering
// Using Flow Field Tiles" (Game AI Pro, 2013). No DOM: node tests load it.

const WALL = 255;
const SQRT2 = Math.SQRT2;
// Neighbours: dx, dy, step length.
const STEPS = [
  [1, 0, 1], [-1, 0, 1], [0, 1, 1], [0, -1, 1],
  [1, 1, SQRT2], [1, -1, SQRT2], [-1, 1, SQRT2], [-1, -1, SQRT2],
];

/** Min-heap of (value, cell) in typed arrays, grown as needed. */
class CellHeap {
  constructor(capacity) {
    this.values = new Float64Array(Math.max(16, capacity));
    this.cells = new Int32Array(Math.max(16, capacity));
    this.size = 0;
  }
  push(value, cell) {
    if (this.size === this.values.length) {
      const values = new Float64Array(this.size * 2);
      const cells = new Int32Array(this.size * 2);
      values.set(this.values);
      cells.set(this.cells);
      this.values = values;
      this.cells = cells;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.values[parent] <= value) break;
      this.values[i] = this.values[parent];
      this.cells[i] = this.cells[parent];
      i = parent;
    }
    this.values[i] = value;
    this.cells[i] = cell;
  }
  /** Removes the smallest; returns its cell (its value is in lastValue). */
  pop() {
    const cell = this.cells[0];
    this.lastValue = this.values[0];
    const value = this.values[--this.size];
    const moved = this.cells[this.size];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && this.values[child + 1] < this.values[child]) ++child;
      if (this.values[child] >= value) break;
      this.values[i] = this.values[child];
      this.cells[i] = this.cells[child];
      i = child;
    }
    this.values[i] = value;
    this.cells[i] = moved;
    return cell;
  }
}

/**
 * The integration field: for each cell (row-major, width x height) the cost of the cheapest path
 * to the nearest goal cell, in cells x cost; Infinity where no goal is reachable (and on walls).
 * @param {Uint8Array} costs cell costs 1..255 (255 = wall)
 * @param {number[]} goals cell indices (walls among them are ignored)
 */
export function integrationField(costs, width, height, goals) {
  const values = new Float64Array(width * height).fill(Infinity);
  const heap = new CellHeap(1024);
  for (const goal of goals) {
    if (goal < 0 || goal >= costs.length || costs[goal] === WALL || values[goal] === 0) continue;
    values[goal] = 0;
    heap.push(0, goal);
  }
  while (heap.size > 0) {
    const cell = heap.pop();
    const value = heap.lastValue;
    if (value > values[cell]) continue; // a stale entry
    const x = cell % width;
    const y = (cell - x) / width;
    for (const [dx, dy, length] of STEPS) {
      const nx = x + dx;
      const ny = y + dy;
      if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
      const next = ny * width + nx;
      if (costs[next] === WALL) continue;
      // No corner cutting: a diagonal needs both orthogonal cells open.
      if (dx !== 0 && dy !== 0 && (costs[y * width + nx] === WALL || costs[ny * width + x] === WALL)) continue;
      const candidate = value + costs[next] * length;
      if (candidate < values[next]) {
        values[next] = candidate;
        heap.push(candidate, next);
      }
    }
  }
  return values;
}

/**
 * The flow field: for each cell the index into STEPS of the move to the lowest neighbour (the
 * first of equals in STEPS order), -1 on goals, walls and cells that reach no goal.
 */
export function flowField(values, costs, width, height) {
  const flow = new Int8Array(width * height).fill(-1);
  for (let cell = 0; cell < values.length; ++cell) {
    const here = values[cell];
    if (here === 0 || here === Infinity) continue;
    const x = cell % width;
    const y = (cell - x) / width;
    let best = here;
    for (let s = 0; s < STEPS.length; ++s) {
      const [dx, dy] = STEPS[s];
      const nx = x + dx;
      const ny = y + dy;
      if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
      if (dx !== 0 && dy !== 0 && (costs[y * width + nx] === WALL || costs[ny * width + x] === WALL)) continue;
      const v = values[ny * width + nx];
      if (v < best) {
        best = v;
        flow[cell] = s;
      }
    }
  }
  return flow;
}

/** The move (dx, dy) of a flow direction. */
export function stepOf(direction) {
  return STEPS[direction];
}

/**
 * Keeps the overlay's fields for the players' cells: rebuilt when that set of cells changes,
 * at most every `minIntervalMs`, and not at all on maps above `maxCells` (the page's thread
 * would stall: a 1024 x 1024 build takes a few hundred ms in JavaScript).
 */
export class FlowOverlay {
  constructor(minIntervalMs = 250, maxCells = 1024 * 1024) {
    this.minIntervalMs = minIntervalMs;
    this.maxCells = maxCells;
    this.key = '';
    this.builtAt = -Infinity;
    this.flow = null;
    this.mapRevision = -1;
  }

  /** Brings the fields up to date; `players` are {x, y} in world units. */
  update(map, players, nowMs) {
    if (!map || map.width * map.height > this.maxCells) {
      this.flow = null;
      return;
    }
    const goals = [];
    for (const p of players) {
      const cx = Math.floor(p.x / map.cellSize);
      const cy = Math.floor(p.y / map.cellSize);
      if (cx >= 0 && cy >= 0 && cx < map.width && cy < map.height) goals.push(cy * map.width + cx);
    }
    goals.sort((a, b) => a - b);
    const key = goals.join(',');
    const revision = map.revision ?? 0;
    if (key === this.key && revision === this.mapRevision && this.flow) return;
    if (nowMs - this.builtAt < this.minIntervalMs) return;
    this.key = key;
    this.mapRevision = revision;
    this.builtAt = nowMs;
    const values = integrationField(map.costs, map.width, map.height, goals);
    this.flow = flowField(values, map.costs, map.width, map.height);
  }
}
