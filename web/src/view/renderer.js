// Canvas 2D drawing of the scene: the map (an image of one pixel per cell, redrawn where
// MapDeltas changed it), the density grid as squares shaded by level, agents as discs of their
// kind's colour and radius, recent deaths, players with id, health bar and aim, in that order.
import {
  BACKGROUND,
  DEAD_PLAYER,
  DEATH,
  DENSITY,
  DENSITY_ALPHA_BASE,
  DENSITY_ALPHA_STEP,
  FALLBACK_KIND,
  FLOW,
  PLAYER,
  barricadeColour,
  costColour,
  css,
  cssOfColour,
} from './colours.js';
import { stepOf } from './flow_overlay.js';

/** The map's image: one pixel per cell, barricades in their colour over the walls. */
export class MapImage {
  constructor(map) {
    this.map = map;
    this.canvas = document.createElement('canvas');
    this.canvas.width = map.width;
    this.canvas.height = map.height;
    this.ctx = this.canvas.getContext('2d');
    this.image = this.ctx.createImageData(map.width, map.height);
    for (let i = 0; i < map.costs.length; ++i) this.paint(i);
    this.ctx.putImageData(this.image, 0, 0);
    map.dirty = [];
  }

  paint(index) {
    const barricade = this.map.barricades.get(index);
    const [r, g, b] = barricade ? barricadeColour(barricade) : costColour(this.map.costs[index]);
    const p = this.image.data;
    p[4 * index] = r;
    p[4 * index + 1] = g;
    p[4 * index + 2] = b;
    p[4 * index + 3] = 255;
  }

  /** Repaints the cells the map's deltas changed (only their bounding box goes to the canvas). */
  update() {
    const dirty = this.map.dirty;
    if (dirty.length === 0) return;
    const w = this.map.width;
    let x0 = w, y0 = this.map.height, x1 = -1, y1 = -1;
    for (const index of dirty) {
      this.paint(index);
      const x = index % w;
      const y = Math.floor(index / w);
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
    this.map.dirty = [];
    this.ctx.putImageData(this.image, 0, 0, x0, y0, x1 - x0 + 1, y1 - y0 + 1);
  }
}

/**
 * Draws one frame; returns the number of agents drawn (inside the canvas).
 * @param {CanvasRenderingContext2D} ctx
 * @param {import('./camera.js').Camera} camera
 * @param {object} scene { mapImage, map, frame (InterpolatedFrame or null), kinds, showDensity, deaths, now }
 */
export function drawScene(ctx, camera, scene) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = css(BACKGROUND);
  ctx.fillRect(0, 0, camera.width, camera.height);
  const map = scene.map;
  if (map && scene.mapImage) {
    scene.mapImage.update();
    ctx.imageSmoothingEnabled = false;
    const cs = map.cellSize;
    const x0 = camera.worldToScreenX(0);
    const y0 = camera.worldToScreenY(0);
    ctx.drawImage(scene.mapImage.canvas, x0, y0, map.width * cs * camera.zoom, map.height * cs * camera.zoom);
  }
  if (scene.flow && map) drawFlow(ctx, camera, map, scene.flow);
  const frame = scene.frame;
  if (!frame) return 0;
  if (scene.showDensity && frame.density) drawDensity(ctx, camera, frame.density, frame.densityCellSize);
  const drawn = drawAgents(ctx, camera, frame, scene.kinds);
  drawDeaths(ctx, camera, scene.deaths, scene.now);
  drawPlayers(ctx, camera, frame.players, scene.maxHealth);
  return drawn;
}

/** Flow arrows, one per cell in view once cells are at least 8 px wide (else every k-th cell). */
function drawFlow(ctx, camera, map, flow) {
  const cs = map.cellSize;
  const cellPx = cs * camera.zoom;
  const every = Math.max(1, Math.ceil(8 / cellPx));
  const x0 = Math.max(0, Math.floor(camera.screenToWorldX(0) / cs));
  const y0 = Math.max(0, Math.floor(camera.screenToWorldY(0) / cs));
  const x1 = Math.min(map.width - 1, Math.ceil(camera.screenToWorldX(camera.width) / cs));
  const y1 = Math.min(map.height - 1, Math.ceil(camera.screenToWorldY(camera.height) / cs));
  const half = 0.4 * cellPx * every;
  ctx.strokeStyle = css(FLOW, 0.85);
  ctx.lineWidth = Math.max(1, Math.min(2, cellPx / 8));
  ctx.beginPath();
  for (let y = y0 - (y0 % every); y <= y1; y += every) {
    for (let x = x0 - (x0 % every); x <= x1; x += every) {
      const direction = flow[y * map.width + x];
      if (direction < 0) continue;
      const [dx, dy, length] = stepOf(direction);
      const ux = dx / length;
      const uy = dy / length;
      const sx = camera.worldToScreenX((x + 0.5) * cs);
      const sy = camera.worldToScreenY((y + 0.5) * cs);
      const tx = sx + ux * half;
      const ty = sy + uy * half;
      ctx.moveTo(sx - ux * half, sy - uy * half);
      ctx.lineTo(tx, ty);
      // The head: two short strokes back from the tip.
      ctx.moveTo(tx, ty);
      ctx.lineTo(tx - (ux - uy) * half * 0.5, ty - (uy + ux) * half * 0.5);
      ctx.moveTo(tx, ty);
      ctx.lineTo(tx - (ux + uy) * half * 0.5, ty - (uy - ux) * half * 0.5);
    }
  }
  ctx.stroke();
}

function drawDensity(ctx, camera, g, cellSize) {
  if (g.width === 0 || g.height === 0 || g.levels.length !== g.width * g.height) return;
  const side = 2 ** g.cellLog2 * cellSize; // world units
  const byLevel = Array.from({ length: 16 }, () => []);
  for (let row = 0; row < g.height; ++row) {
    for (let col = 0; col < g.width; ++col) {
      const level = g.levels[row * g.width + col];
      if (level === 0) continue;
      const wx = g.originX * cellSize + col * side;
      const wy = g.originY * cellSize + row * side;
      // Integer edges shared by neighbouring squares: no seams, no overlaps.
      const ax = Math.floor(camera.worldToScreenX(wx));
      const ay = Math.floor(camera.worldToScreenY(wy));
      const bx = Math.floor(camera.worldToScreenX(wx + side));
      const by = Math.floor(camera.worldToScreenY(wy + side));
      if (bx < 0 || by < 0 || ax > camera.width || ay > camera.height || bx <= ax || by <= ay) continue;
      byLevel[Math.min(level, 15)].push(ax, ay, bx - ax, by - ay);
    }
  }
  for (let level = 1; level < 16; ++level) {
    const rects = byLevel[level];
    if (rects.length === 0) continue;
    ctx.fillStyle = css(DENSITY, Math.min(255, DENSITY_ALPHA_BASE + DENSITY_ALPHA_STEP * level) / 255);
    for (let i = 0; i < rects.length; i += 4) ctx.fillRect(rects[i], rects[i + 1], rects[i + 2], rects[i + 3]);
  }
}

/** Agents batched by kind (one path and one fill per kind); tiny ones as squares. */
function drawAgents(ctx, camera, frame, kinds) {
  const slots = kinds.length + 1; // the last slot: kinds the table does not list
  const paths = Array.from({ length: slots }, () => []);
  const w = camera.width;
  const h = camera.height;
  let drawn = 0;
  for (let i = 0; i < frame.count; ++i) {
    const k = frame.kind[i] < kinds.length ? frame.kind[i] : kinds.length;
    const r = (k < kinds.length ? kinds[k].radius : FALLBACK_KIND.radius) * camera.zoom;
    const sx = camera.worldToScreenX(frame.x[i]);
    const sy = camera.worldToScreenY(frame.y[i]);
    if (sx + r < 0 || sy + r < 0 || sx - r > w || sy - r > h) continue;
    paths[k].push(i);
    ++drawn;
  }
  for (let k = 0; k < slots; ++k) {
    const list = paths[k];
    if (list.length === 0) continue;
    const kind = k < kinds.length ? kinds[k] : FALLBACK_KIND;
    const r = Math.max(1, kind.radius * camera.zoom);
    ctx.fillStyle = cssOfColour(kind.colour);
    if (r < 2) {
      for (const i of list) {
        ctx.fillRect(camera.worldToScreenX(frame.x[i]) - r, camera.worldToScreenY(frame.y[i]) - r, 2 * r, 2 * r);
      }
      continue;
    }
    ctx.beginPath();
    for (const i of list) {
      const sx = camera.worldToScreenX(frame.x[i]);
      const sy = camera.worldToScreenY(frame.y[i]);
      ctx.moveTo(sx + r, sy);
      ctx.arc(sx, sy, r, 0, 2 * Math.PI);
    }
    ctx.fill();
    if (r >= 5) {
      // Heading: a dark tick from the centre to the rim.
      ctx.strokeStyle = 'rgba(0,0,0,0.55)';
      ctx.lineWidth = Math.max(1, r / 5);
      ctx.beginPath();
      for (const i of list) {
        const sx = camera.worldToScreenX(frame.x[i]);
        const sy = camera.worldToScreenY(frame.y[i]);
        ctx.moveTo(sx, sy);
        ctx.lineTo(sx + Math.cos(frame.heading[i]) * r, sy + Math.sin(frame.heading[i]) * r);
      }
      ctx.stroke();
    }
  }
  return drawn;
}

/** Deaths of the last second: a fading cross where the agent was. */
function drawDeaths(ctx, camera, deaths, now) {
  if (!deaths || deaths.length === 0) return;
  ctx.lineWidth = 1.5;
  for (const d of deaths) {
    const age = now - d.at;
    if (age > 1) continue;
    const sx = camera.worldToScreenX(d.x);
    const sy = camera.worldToScreenY(d.y);
    const s = Math.max(3, 0.4 * camera.zoom);
    ctx.strokeStyle = css(DEATH, 1 - age);
    ctx.beginPath();
    ctx.moveTo(sx - s, sy - s);
    ctx.lineTo(sx + s, sy + s);
    ctx.moveTo(sx + s, sy - s);
    ctx.lineTo(sx - s, sy + s);
    ctx.stroke();
  }
}

/** Players: a rimmed disc (grey while dead), the aim, the id and a health bar. */
function drawPlayers(ctx, camera, players, maxHealth) {
  ctx.font = '12px monospace';
  ctx.textAlign = 'center';
  for (const p of players) {
    const sx = camera.worldToScreenX(p.x);
    const sy = camera.worldToScreenY(p.y);
    const r = Math.max(6, 0.5 * camera.zoom);
    const dead = p.health <= 0;
    ctx.fillStyle = css(dead ? DEAD_PLAYER : PLAYER);
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(sx, sy, r, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
    if (!dead) {
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(sx + Math.cos(p.aim) * r, sy + Math.sin(p.aim) * r);
      ctx.lineTo(sx + Math.cos(p.aim) * r * 2, sy + Math.sin(p.aim) * r * 2);
      ctx.stroke();
    }
    const full = Math.max(p.health, maxHealth?.get(p.id) ?? 0, 1e-6);
    const barW = 2.5 * r;
    ctx.fillStyle = 'rgba(0,0,0,0.7)';
    ctx.fillRect(sx - barW / 2 - 1, sy - r - 9, barW + 2, 6);
    ctx.fillStyle = p.health / full > 0.3 ? '#4cd964' : '#ff3b30';
    ctx.fillRect(sx - barW / 2, sy - r - 8, barW * Math.max(0, Math.min(1, p.health / full)), 4);
    ctx.fillStyle = '#fff';
    ctx.fillText(`#${p.id}`, sx, sy + r + 13);
  }
}
