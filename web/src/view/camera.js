// The 2D camera: world units to canvas pixels (centre + zoom in pixels per world unit), panning
// by drag, zooming about a point, fitting the map. No DOM.

export const MIN_ZOOM = 0.05;
export const MAX_ZOOM = 200;

export class Camera {
  constructor() {
    this.cx = 0; // world point at the canvas centre
    this.cy = 0;
    this.zoom = 1; // pixels per world unit
    this.width = 1; // canvas pixels
    this.height = 1;
  }

  resize(width, height) {
    this.width = Math.max(1, width);
    this.height = Math.max(1, height);
  }

  /** Shows the whole rectangle [0, w] x [0, h] (world units), with a small border. */
  fit(worldWidth, worldHeight) {
    this.cx = worldWidth / 2;
    this.cy = worldHeight / 2;
    this.zoom = clampZoom(Math.min(this.width / worldWidth, this.height / worldHeight) * 0.95);
  }

  worldToScreenX(x) {
    return (x - this.cx) * this.zoom + this.width / 2;
  }
  worldToScreenY(y) {
    return (y - this.cy) * this.zoom + this.height / 2;
  }
  screenToWorldX(sx) {
    return (sx - this.width / 2) / this.zoom + this.cx;
  }
  screenToWorldY(sy) {
    return (sy - this.height / 2) / this.zoom + this.cy;
  }

  /** Moves the view by a drag of (dx, dy) pixels. */
  panPixels(dx, dy) {
    this.cx -= dx / this.zoom;
    this.cy -= dy / this.zoom;
  }

  /** Zooms by `factor` keeping the world point under pixel (sx, sy) where it is. */
  zoomAbout(factor, sx, sy) {
    const wx = this.screenToWorldX(sx);
    const wy = this.screenToWorldY(sy);
    this.zoom = clampZoom(this.zoom * factor);
    this.cx = wx - (sx - this.width / 2) / this.zoom;
    this.cy = wy - (sy - this.height / 2) / this.zoom;
  }

  /** The world rectangle the canvas shows. */
  visibleWorld() {
    return {
      x0: this.screenToWorldX(0),
      y0: this.screenToWorldY(0),
      x1: this.screenToWorldX(this.width),
      y1: this.screenToWorldY(this.height),
    };
  }
}

function clampZoom(z) {
  if (!Number.isFinite(z) || z <= 0) return 1;
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z));
}
