// The map as the page holds it: the cost bytes from the Welcome's MapChunks (zstd), checked and
// reassembled as protocol/src/transport/map_transfer.cpp's MapAssembler does, and the server's
// MapDeltas applied as client_viewer/src/map_delta.cpp does (newer revisions only; barricades
// kept for drawing). No DOM.
import { decompress } from 'fzstd';
import { MAP_CHUNK_BYTES } from './messages.js';

export const BLOCKED_COST = 255;

/** Collects MapChunks (any order, duplicates ignored) for the MapInfo of a Welcome. */
export class MapAssembler {
  /** @param {{width:number,height:number,rawBytes:number,compressedBytes:number,chunkCount:number}} info */
  constructor(info) {
    this.info = info;
    this.compressed = new Uint8Array(info.compressedBytes);
    this.have = new Uint8Array(info.chunkCount);
    this.received = 0;
  }

  chunkSize(index) {
    return Math.min(MAP_CHUNK_BYTES, this.info.compressedBytes - index * MAP_CHUNK_BYTES);
  }

  /** Takes one chunk; an error message when it does not belong to this map, else ''. */
  add(chunk) {
    const count = this.info.chunkCount;
    if (chunk.index >= count) return `map chunk ${chunk.index} but the map has ${count}`;
    if (chunk.count !== 0 && chunk.count !== count) return `map chunk says ${chunk.count} chunks, Welcome said ${count}`;
    const expected = this.chunkSize(chunk.index);
    if (chunk.bytes.length !== expected) {
      return `map chunk ${chunk.index} holds ${chunk.bytes.length} bytes, expected ${expected}`;
    }
    if (this.have[chunk.index]) return ''; // duplicate: harmless
    this.compressed.set(chunk.bytes, chunk.index * MAP_CHUNK_BYTES);
    this.have[chunk.index] = 1;
    ++this.received;
    return '';
  }

  complete() {
    return this.received === this.info.chunkCount;
  }

  /** The width*height cost bytes, or { error } if they do not decompress to exactly that. */
  finish() {
    let raw;
    try {
      raw = decompress(this.compressed);
    } catch (e) {
      return { error: `map bytes are not zstd (${e.message})` };
    }
    if (raw.length !== this.info.rawBytes) {
      return { error: `map bytes do not decompress to width*height = ${this.info.rawBytes} bytes` };
    }
    return { costs: raw };
  }
}

/** The map's costs, barricades and change counts. */
export class GameMap {
  constructor(width, height, cellSize, name, costs) {
    this.width = width;
    this.height = height;
    this.cellSize = cellSize;
    this.name = name;
    this.costs = costs; // Uint8Array, row-major, 255 = wall
    /** cell index -> barricade health 1..255 */
    this.barricades = new Map();
    this.revision = 0; // newest MapDelta revision applied
    this.deltasApplied = 0;
    this.deltasIgnored = 0;
    this.cellsSkipped = 0;
    /** Cells changed since the drawing last looked (indices), for a partial redraw. */
    this.dirty = [];
  }

  /**
   * Applies a MapDelta: ignored (false) when one was applied before and its revision is not
   * newer; else every listed cell inside the map gets its cost and barricade, cells outside are
   * skipped and counted.
   */
  applyDelta(delta) {
    if (this.deltasApplied > 0 && delta.revision <= this.revision) {
      ++this.deltasIgnored;
      return false;
    }
    for (const cell of delta.cells) {
      if (cell.x >= this.width || cell.y >= this.height) {
        ++this.cellsSkipped;
        continue;
      }
      const index = cell.y * this.width + cell.x;
      this.costs[index] = cell.cost === 0 ? 1 : cell.cost;
      if (cell.barricade !== 0) this.barricades.set(index, cell.barricade);
      else this.barricades.delete(index);
      this.dirty.push(index);
    }
    this.revision = delta.revision;
    ++this.deltasApplied;
    return true;
  }
}
