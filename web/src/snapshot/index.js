// The snapshot decoding side of swarmfield's protocol for the browser (and node's tests): no DOM.
export { BitReader, zigzagDecode, MAX_EXP_GOLOMB_ORDER } from './bit_reader.js';
export { RansTable, RansDecoder, RANS_LOW } from './rans.js';
export { DensityGrid, EMPTY_GRID, readDensityGrid, densityLevelFloor } from './density_grid.js';
export * from './prediction.js';
export { AgentFrame, EMPTY_FRAME, MAX_FRAME_AGENTS } from './agent_frame.js';
export { decodeSnapshot, readSnapshotPrelude, SNAPSHOT_FORMAT, SNAPSHOT_HISTORY_SIZE } from './snapshot_decoder.js';
export { SnapshotAck } from './snapshot_ack.js';
export { SnapshotReceiver, Received, DEFAULT_HISTORY_AGENTS } from './snapshot_receiver.js';
export { unpackFrame, densityAgentsFloor } from './snapshot_state.js';
