// A decoded snapshot as the page draws it, a port of client_viewer/src/snapshot_state.cpp
// (unpack_frame): the header's players and counts, every tracked agent in world units (agents
// this snapshot did not update placed where the shared predictor puts them at its tick) and the
// density grid of the agents not tracked. Agents as parallel typed arrays, sorted by id.
import { dequantizeHeading, dequantizePosition, predictCoordinate } from './prediction.js';
import { densityLevelFloor } from './density_grid.js';

/**
 * @param {object} header decoded header (decodeSnapshot)
 * @param {import('./agent_frame.js').AgentFrame} frame
 * @param {number} cellSize world units per map cell (Welcome.map.cell_size, a float)
 * @param {object[]} deaths the receiver's deaths (agents as the baseline held them)
 */
export function unpackFrame(header, frame, cellSize, deaths = []) {
  const n = frame.size;
  const out = {
    sequence: header.sequence,
    tick: header.tick,
    echoClientTimeUs: header.echoClientTimeUs,
    totalAgents: header.totalAgents,
    rebuilds: header.rebuilds,
    wave: header.wave,
    players: header.players,
    cellSize,
    density: frame.grid,
    updated: 0,
    count: n,
    id: new Uint32Array(n),
    // Quantized positions as drawn (predicted for agents not updated), for tests and look-ups.
    qx: new Uint32Array(n),
    qy: new Uint32Array(n),
    x: new Float32Array(n),
    y: new Float32Array(n),
    heading: new Float32Array(n),
    kind: new Uint8Array(n),
    deaths: deaths.map((a) => ({
      id: a.id,
      x: dequantizePosition(a.x, cellSize),
      y: dequantizePosition(a.y, cellSize),
      heading: dequantizeHeading(a.heading),
      kind: a.kind,
    })),
  };
  for (let i = 0; i < n; ++i) {
    let x = frame.x[i];
    let y = frame.y[i];
    if (frame.lastTick[i] === header.tick) {
      ++out.updated;
    } else {
      // Not sent this time: where the server's own predictor expects it now (at most 16 ticks
      // ahead of its last update), rather than frozen at its last position.
      x = predictCoordinate(x, frame.vx[i], frame.lastTick[i], header.tick);
      y = predictCoordinate(y, frame.vy[i], frame.lastTick[i], header.tick);
    }
    out.id[i] = frame.id[i];
    out.qx[i] = x;
    out.qy[i] = y;
    out.x[i] = dequantizePosition(x, cellSize);
    out.y[i] = dequantizePosition(y, cellSize);
    out.heading[i] = dequantizeHeading(frame.heading[i]);
    out.kind[i] = frame.kind[i];
  }
  return out;
}

/** Lower bound of the agents the density grid stands for (sum of each square's level floor). */
export function densityAgentsFloor(grid) {
  let sum = 0;
  for (const level of grid.levels) sum += densityLevelFloor(level);
  return sum;
}
