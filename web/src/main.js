// The spectator page: a full-window canvas, one Session at a time over ws(s)://<page host>/ws
// (retried after a close), interpolation at the snapshot rate, pan (drag), zoom (wheel, about
// the cursor), follow a player (F cycles, Esc stops; ?follow=1 follows the first), D toggles
// the density layer. window.swarmfield is the state tests read, updated every frame.
// URL parameters: name (Hello.name), follow=1, ws (another WebSocket address, for tests).
import { Session } from './net/connection.js';
import { cleanName } from './net/messages.js';
import { Camera } from './view/camera.js';
import { InterpolatedFrame, InterpolationClock, interpolateHistory } from './view/interpolation.js';
import { MapImage, drawScene } from './view/renderer.js';
import { FlowOverlay } from './view/flow_overlay.js';

/** Tries after a close before the page gives up, and the wait before each. */
const MAX_RETRIES = 5;
const RETRY_DELAY_MS = 2000;
/** How far behind the newest snapshot frames are drawn (snapshot intervals; the C++ default). */
const INTERP_SNAPSHOTS = 2;

const params = new URLSearchParams(location.search);
const wsUrl = params.get('ws') ?? `${location.protocol === 'https:' ? 'wss://' : 'ws://'}${location.host}/ws`;
const name = cleanName(params.get('name') ?? 'browser') || 'browser';

const canvas = document.getElementById('view');
const hud = document.getElementById('hud');
const ctx = canvas.getContext('2d', { alpha: false });
const camera = new Camera();

const exposed = {
  state: 'connecting',
  snapshots: 0,
  decodeErrors: 0,
  agentsDrawn: 0,
  players: [],
  map: null,
  lastError: null,
};
window.swarmfield = exposed;

const page = {
  session: null,
  retries: 0,
  retryAt: 0,
  mapImage: null,
  mapFitted: false,
  clock: new InterpolationClock(30),
  observedTick: 0,
  frame: new InterpolatedFrame(),
  hasFrame: false,
  following: params.get('follow') === '1' ? 'first' : null, // null | 'first' | player id
  welcome: null, // the last Welcome received (its map and kinds stay drawn across sessions)
  serverReason: '', // why the last session that reached the server ended
  showDensity: true,
  flow: new FlowOverlay(), // shown while showFlow (key V, ?flow=1)
  showFlow: params.get('flow') === '1',
  deaths: [], // { x, y, at }
  maxHealth: new Map(), // player id -> highest health seen (the bar's full length)
  snapshotsBefore: 0, // decoded by earlier sessions
  errorsBefore: 0,
  closeReason: '',
  hudAt: 0,
};

function resize() {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(window.innerWidth * dpr);
  canvas.height = Math.round(window.innerHeight * dpr);
  canvas.style.width = `${window.innerWidth}px`;
  canvas.style.height = `${window.innerHeight}px`;
  camera.resize(canvas.width, canvas.height);
}

/** The world rectangle the server should send: what the canvas shows, else the whole map. */
function viewRect() {
  const s = page.session;
  if (page.mapFitted) return camera.visibleWorld();
  const m = s && s.welcome ? s.welcome.map : null;
  return m ? { x0: 0, y0: 0, x1: m.width * m.cellSize, y1: m.height * m.cellSize } : { x0: 0, y0: 0, x1: 0, y1: 0 };
}

// A new session keeps drawing the last one's map and frame until its own arrive (as the C++
// viewer keeps its last frame while it resumes).
function connect() {
  page.observedTick = 0;
  page.session = new Session({
    url: wsUrl,
    name,
    openSocket: (url) => new WebSocket(url),
    view: viewRect,
    onMap: (session) => {
      page.welcome = session.welcome; // kept while a later session is not (yet) connected
      page.mapImage = new MapImage(session.map);
      page.clock = new InterpolationClock(session.welcome.tickHz);
      if (!page.mapFitted) {
        camera.fit(session.map.width * session.map.cellSize, session.map.height * session.map.cellSize);
        page.mapFitted = true;
      }
    },
    onClosed: (session) => {
      // A session that reached the server says why it ended (the server's Error or Bye, or the
      // close); one that never did only adds that the server is unreachable, keeping the reason.
      if (session.welcome) {
        page.closeReason = session.closeReason;
        page.serverReason = session.closeReason;
      } else {
        page.closeReason = page.serverReason
          ? `${page.serverReason}; the server is unreachable since`
          : 'the server is unreachable (the connection failed)';
      }
      page.snapshotsBefore += session.stats.snapshotsDecoded;
      page.errorsBefore += session.stats.decodeErrors;
      // A session that streamed earns a fresh set of tries.
      if (session.stats.snapshotsDecoded > 0) page.retries = 0;
      if (page.retries < MAX_RETRIES) {
        ++page.retries;
        page.retryAt = performance.now() + RETRY_DELAY_MS;
      } else {
        page.retryAt = 0;
      }
    },
  });
}

/** Snapshots not seen yet set the clock; deaths start their fade; then the frame to draw. */
function interpolate(nowSeconds) {
  const s = page.session;
  if (!s || !s.welcome || s.snapshots.length === 0) return;
  for (const r of s.snapshots) {
    if (r.snapshot.tick > page.observedTick) {
      page.clock.observe(r.snapshot.tick, r.receivedAt);
      page.observedTick = r.snapshot.tick;
      for (const d of r.snapshot.deaths) page.deaths.push({ x: d.x, y: d.y, at: nowSeconds });
      for (const p of r.snapshot.players) {
        page.maxHealth.set(p.id, Math.max(page.maxHealth.get(p.id) ?? 0, p.health));
      }
    }
  }
  page.deaths = page.deaths.filter((d) => nowSeconds - d.at <= 1);
  const w = s.welcome;
  const delayTicks = (INTERP_SNAPSHOTS * w.tickHz) / Math.max(1, w.snapshotHz);
  page.hasFrame = interpolateHistory(s.snapshots, page.clock.renderTick(nowSeconds, delayTicks), page.frame);
}

function followPlayer() {
  if (page.following === null || !page.hasFrame) return;
  const players = page.frame.players;
  if (players.length === 0) return;
  if (page.following === 'first') page.following = players[0].id;
  const p = players.find((q) => q.id === page.following);
  if (p) {
    camera.cx = p.x;
    camera.cy = p.y;
  }
}

function exposedState(s) {
  if (!s || s.phase === 'closed') return 'closed';
  return s.phase === 'streaming' ? 'streaming' : 'connecting';
}

function updateHud(now, drawn) {
  const s = page.session;
  const lines = [];
  const m = s && s.map ? s.map : null;
  const w = page.welcome ? page.welcome.map : null;
  lines.push(w ? `map ${w.name || '(unnamed)'} ${w.width}x${w.height} cells` : 'map -');
  const last = s && s.snapshots.length > 0 ? s.snapshots[s.snapshots.length - 1].snapshot : null;
  lines.push(`tick ${last ? last.tick : '-'}   agents in world ${last ? last.totalAgents : '-'}   tracked ${last ? last.count : '-'}   drawn ${drawn}`);
  if (s) {
    lines.push(`snapshots/s ${s.snapshotsPerSecond()}   ${(s.bytesPerSecond() / 1000).toFixed(1)} kB/s   rtt ${s.stats.rttMs.toFixed(0)} ms`);
  }
  lines.push(`decoded ${exposed.snapshots}   decode errors ${exposed.decodeErrors}`);
  let state = exposed.state;
  if (state === 'closed' && page.retryAt > 0) state += ` (retry ${page.retries}/${MAX_RETRIES} in ${Math.max(0, (page.retryAt - now) / 1000).toFixed(1)} s)`;
  else if (state === 'closed') state += ' (gave up)';
  lines.push(`connection ${state}${m && m.barricades.size > 0 ? `   barricades ${m.barricades.size}` : ''}`);
  if (exposed.lastError) lines.push(`last error: ${exposed.lastError}`);
  lines.push(`[drag] pan  [wheel] zoom  [F] follow ${page.following ?? 'off'}  [Esc] stop  [D] density ${page.showDensity ? 'on' : 'off'}  [V] flow ${page.showFlow ? 'on' : 'off'}`);
  hud.textContent = lines.join('\n');
}

function frame() {
  const now = performance.now();
  const nowSeconds = now / 1000;
  if (page.session && page.session.phase === 'closed' && page.retryAt > 0 && now >= page.retryAt) {
    page.retryAt = 0;
    connect();
  }
  const s = page.session;
  let drawn = 0;
  try {
    interpolate(nowSeconds);
    followPlayer();
    if (page.showFlow) page.flow.update(page.mapImage ? page.mapImage.map : null, page.hasFrame ? page.frame.players : [], now);
    drawn = drawScene(ctx, camera, {
      flow: page.showFlow ? page.flow.flow : null,
      map: page.mapImage ? page.mapImage.map : null,
      mapImage: page.mapImage,
      frame: page.hasFrame ? page.frame : null,
      kinds: page.welcome ? page.welcome.kinds : [],
      showDensity: page.showDensity,
      deaths: page.deaths,
      now: nowSeconds,
      maxHealth: page.maxHealth,
    });
  } catch (e) {
    // Never let one bad frame stop the loop; say what happened.
    if (s) s.lastError = `drawing failed: ${e && e.message}`;
  }
  exposed.state = exposedState(s);
  exposed.snapshots = page.snapshotsBefore + (s && s.phase !== 'closed' ? s.stats.snapshotsDecoded : 0);
  exposed.decodeErrors = page.errorsBefore + (s && s.phase !== 'closed' ? s.stats.decodeErrors : 0);
  exposed.agentsDrawn = drawn;
  exposed.players = page.hasFrame ? page.frame.players.map((p) => ({ id: p.id, x: p.x, y: p.y })) : [];
  exposed.map = s && s.welcome ? { width: s.welcome.map.width, height: s.welcome.map.height, name: s.welcome.map.name } : null;
  exposed.lastError = (s && s.welcome && (s.closeReason || s.lastError)) || page.closeReason || (s && s.lastError) || null;
  if (now - page.hudAt > 200) {
    page.hudAt = now;
    updateHud(now, drawn);
  }
  requestAnimationFrame(frame);
}

// ---- Input: pan, zoom, keys ----
let drag = null;
canvas.addEventListener('pointerdown', (e) => {
  drag = { x: e.clientX, y: e.clientY };
  canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener('pointermove', (e) => {
  if (!drag) return;
  const dpr = window.devicePixelRatio || 1;
  camera.panPixels((e.clientX - drag.x) * dpr, (e.clientY - drag.y) * dpr);
  drag = { x: e.clientX, y: e.clientY };
  page.following = null; // a drag takes the camera back
});
canvas.addEventListener('pointerup', () => {
  drag = null;
});
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  const dpr = window.devicePixelRatio || 1;
  camera.zoomAbout(Math.exp(-e.deltaY * 0.0015), e.clientX * dpr, e.clientY * dpr);
}, { passive: false });
window.addEventListener('keydown', (e) => {
  if (e.key === 'f' || e.key === 'F') {
    const players = page.hasFrame ? page.frame.players : [];
    if (players.length === 0) return;
    const at = players.findIndex((p) => p.id === page.following);
    page.following = players[(at + 1) % players.length].id;
  } else if (e.key === 'Escape') {
    page.following = null;
  } else if (e.key === 'd' || e.key === 'D') {
    page.showDensity = !page.showDensity;
  } else if (e.key === 'v' || e.key === 'V') {
    page.showFlow = !page.showFlow;
  }
});
window.addEventListener('resize', resize);
window.addEventListener('pagehide', () => page.session?.close('page closed'));

resize();
connect();
requestAnimationFrame(frame);
