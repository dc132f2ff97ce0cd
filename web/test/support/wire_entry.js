// What session.test.mjs needs from the page's network code, bundled for node by
// support/bundle.mjs (the page's modules import flatc's TypeScript output, which node cannot
// load as it is).
export { Session } from '../../src/net/connection.js';
export { decodeServerMessage, encodeHello, encodeInput, encodeBye, cleanName } from '../../src/net/messages.js';
export { MapAssembler, GameMap } from '../../src/net/game_map.js';
