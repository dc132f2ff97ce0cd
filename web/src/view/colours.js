// Colours of the scene, those of the C++ viewer (client_viewer/include/swarmfield/client/
// scene_renderer.hpp and scene_renderer.cpp) so both viewers look alike.

export const BACKGROUND = [10, 10, 14]; // outside the map
export const WALL = [46, 48, 60]; // cost 255
export const PLAYER = [60, 200, 255];
export const DEAD_PLAYER = [120, 120, 120];
export const DENSITY = [200, 60, 40];
export const DENSITY_ALPHA_BASE = 40;
export const DENSITY_ALPHA_STEP = 12;
export const BARRICADE = [168, 104, 40];
export const DEATH = [255, 80, 60];
export const FLOW = [110, 230, 140]; // flow arrows (key V)
export const FALLBACK_KIND = { radius: 0.35, colour: 0xb4b4b4 };

/** Cost 1..254 in greys (log2 spacing: 1/2/3 differ visibly, 254 still lighter than a wall). */
export function costColour(cost) {
  if (cost === 255) return WALL;
  const c = Math.max(1, cost);
  const shade = Math.max(80, 160 - Math.round(22 * Math.log2(c)));
  return [shade, shade, Math.max(0, shade - 10)];
}

/** A barricade by health 1..255: 16 steps from 5/12 of BARRICADE up to BARRICADE. */
export function barricadeColour(health) {
  const step = Math.floor((Math.max(1, health) + 15) / 16);
  const shade = (c) => Math.floor((c * (375 + 35 * (step - 1)) + 450) / 900);
  return BARRICADE.map(shade);
}

export function css([r, g, b], alpha = 1) {
  return alpha >= 1 ? `rgb(${r},${g},${b})` : `rgba(${r},${g},${b},${alpha})`;
}

export function cssOfColour(colour) {
  return `#${(colour & 0xffffff).toString(16).padStart(6, '0')}`;
}
