// The browser spectator in a real browser (issue 23, item 3): a swarmfield-server with
// --web-port and a bot walking its player, Debian's Chromium (headless, driven by playwright-core
// from web/node_modules) loading the page the server serves. Checks the pixels of the page's
// canvas: the map is drawn (walls and floor in the page's colours), agents are visible (pixels in
// the kinds' colours), and the player's marker moves between two captures; and the page's own
// state (window.swarmfield: streaming, snapshots decoded, no decode errors). Saves both
// screenshots in --out (the README's picture is the second).
//
// node page_test.mjs --bin BUILD/bin --web BUILD/web --modules web/node_modules --out DIR
// Exit 0 passed, 1 failed, 77 skipped (no Chromium, no page, no playwright-core), as CTest reads it.
// Every wait is bounded; the server and the bot are killed on every exit path.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []),
);
const CHROMIUM = process.env.SWARMFIELD_CHROMIUM || '/usr/bin/chromium';
const SKIP = 77;

function skip(why) {
  // SWARMFIELD_REQUIRE_ALL=1 (CI): a test that can not run fails instead of passing as skipped.
  if (process.env.SWARMFIELD_REQUIRE_ALL === '1') {
    console.error(`FAILED (SWARMFIELD_REQUIRE_ALL=1): ${why}`);
    process.exit(1);
  }
  console.log(`SKIPPED: ${why}`);
  process.exit(SKIP);
}

if (!existsSync(CHROMIUM)) skip(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
if (!existsSync(join(args.web, 'index.html'))) skip(`the page is not built (${args.web}/index.html)`);
const playwrightEntry = join(args.modules, 'playwright-core', 'index.mjs');
if (!existsSync(playwrightEntry)) skip(`no playwright-core in ${args.modules} (web/build.sh installs it)`);
const { chromium } = await import(pathToFileURL(playwrightEntry).href);
mkdirSync(args.out, { recursive: true });

const children = [];
function killAll() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
}
process.on('exit', killAll);

/** Starts a program, collecting its stderr; resolves `wait(needle)` when a log line has it. */
function start(program, programArgs) {
  const child = spawn(join(args.bin, program), programArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let log = '';
  const waiters = [];
  const feed = (chunk) => {
    log += chunk.toString();
    for (const w of waiters.splice(0)) {
      const at = log.indexOf(w.needle);
      if (at >= 0) w.resolve(log.slice(at, log.indexOf('\n', at) >>> 0));
      else waiters.push(w);
    }
  };
  child.stderr.on('data', feed);
  child.stdout.on('data', feed);
  return {
    child,
    log: () => log,
    wait(needle, ms) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${program}: no '${needle}' within ${ms} ms; log:\n${log}`)), ms);
        waiters.push({ needle, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        feed('');
      });
    },
  };
}

/** What the canvas shows now, counted by the page's colours (web/src/view/colours.js) inside the
 *  page (2.5 million channel values are too many to carry out through the DevTools protocol). */
async function capture(page) {
  return page.evaluate(async () => {
    // Read inside a frame callback queued after the page's own: the canvas holds a whole frame.
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    const canvas = document.querySelector('canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const near = (r, g, b, [cr, cg, cb], tolerance) =>
      Math.abs(r - cr) <= tolerance && Math.abs(g - cg) <= tolerance && Math.abs(b - cb) <= tolerance;
    const wall = [46, 48, 60], floor = [160, 160, 150], player = [60, 200, 255], flow = [110, 230, 140];
    const kinds = [[0xf2, 0xa3, 0x3a], [0xe0, 0x48, 0x48], [0x9a, 0x5b, 0xd6]];
    const counts = { wall: 0, floor: 0, agents: 0, flow: 0, player: 0, playerX: 0, playerY: 0, total: canvas.width * canvas.height };
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i], g = data[i + 1], b = data[i + 2];
      if (near(r, g, b, wall, 6)) ++counts.wall;
      else if (near(r, g, b, floor, 8)) ++counts.floor;
      else if (near(r, g, b, flow, 40)) ++counts.flow;
      else if (near(r, g, b, player, 24)) {
        ++counts.player;
        counts.playerX += (i / 4) % canvas.width;
        counts.playerY += Math.floor(i / 4 / canvas.width);
      } else if (kinds.some((k) => near(r, g, b, k, 24))) ++counts.agents;
    }
    if (counts.player > 0) {
      counts.playerX /= counts.player;
      counts.playerY /= counts.player;
    }
    return counts;
  });
}

const failures = [];
const t0 = Date.now();
const stamp = (what) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${what}`);
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

let browser;
try {
  const server = start('swarmfield-server', [
    '--port', '0', '--bind', '127.0.0.1', '--city-size', '96', '--agents', '1500', '--web-port', '0',
    '--web-root', args.web, '--duration', '60', '--no-combat',  // a player the horde can not kill stays drawn
  ]);
  const listening = await server.wait('listening tcp=', 20000);
  const tcpPort = Number(/tcp=(\d+)/.exec(listening)[1]);
  const webPort = Number(/port=(\d+)/.exec(await server.wait('web listening port=', 5000))[1]);
  const bot = start('swarmfield-bot', ['--port', String(tcpPort), '--seconds', '40', '--name', 'walker-bot']);
  await server.wait('joined', 10000).catch(() => {}); // the bot's join line; the page waits for the player anyway

  stamp('bot started');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const page = await browser.newPage({ viewport: { width: 960, height: 640 } });
  const consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('response', (r) => r.status() >= 400 && consoleErrors.push(`${r.status()} for ${r.url()}`));
  stamp('browser up');
  await page.goto(`http://127.0.0.1:${webPort}/`, { timeout: 15000 });
  await page.waitForFunction(
    () => window.swarmfield && window.swarmfield.state === 'streaming' && window.swarmfield.snapshots >= 10 &&
      window.swarmfield.players.length > 0,
    null, { timeout: 20000 },
  );
  stamp('streaming');
  const first = await capture(page);
  const firstPlayer = await page.evaluate(() => ({ ...window.swarmfield.players[0] }));
  await page.screenshot({ path: join(args.out, 'spectator_1.png') });
  // The bot wanders (a new heading every 0.5-2 s, a 1 s pause every 20 s): over one 2.5 s gap it
  // can end up where it began (0.9 px in one loaded run), so up to four gaps are tried, until it
  // moved both on screen (3 px) and in the page state (0.5 cells, ~3.3 px here: a loaded run
  // stopped at 3.0 px, 0.45 cells, and failed the second check).
  let second;
  for (let attempt = 0; attempt < 4; ++attempt) {
    await page.waitForTimeout(2500);
    second = await capture(page);
    const now = await page.evaluate((id) => window.swarmfield.players.find((p) => p.id === id), firstPlayer.id);
    const on_screen = first.player && second.player &&
      Math.hypot(second.playerX - first.playerX, second.playerY - first.playerY) >= 3;
    if (on_screen && now && Math.hypot(now.x - firstPlayer.x, now.y - firstPlayer.y) > 0.5) break;
  }
  const state = await page.evaluate(() => JSON.parse(JSON.stringify(window.swarmfield)));
  await page.screenshot({ path: join(args.out, 'spectator_2.png') });
  console.log('first capture', JSON.stringify(first));
  console.log('second capture', JSON.stringify(second));
  console.log('page state', JSON.stringify({ ...state, players: state.players }));

  check(first.wall > 0.02 * first.total, `walls drawn (${first.wall} of ${first.total} pixels)`);
  check(first.floor > 0.1 * first.total, `floor drawn (${first.floor} pixels)`);
  check(second.agents >= 200, `agents visible in the kinds' colours (${second.agents} pixels)`);
  check(first.player >= 10 && second.player >= 10, `the player's marker drawn (${first.player}, ${second.player} pixels)`);
  const moved = first.player && second.player ? Math.hypot(second.playerX - first.playerX, second.playerY - first.playerY) : 0;
  check(moved >= 3, `the player's marker moved on screen between the captures (${moved.toFixed(1)} px)`);
  // The flow overlay (key V): arrows over the map, none before.
  await page.keyboard.press('v');
  await page.waitForTimeout(800);
  const withFlow = await capture(page);
  await page.screenshot({ path: join(args.out, 'spectator_flow.png') });
  check(second.flow < 100 && withFlow.flow >= 2000, `flow arrows after V (${second.flow} -> ${withFlow.flow} pixels)`);
  const p2 = state.players.find((p) => p.id === firstPlayer.id);
  check(p2 && Math.hypot(p2.x - firstPlayer.x, p2.y - firstPlayer.y) > 0.5, 'the player moved in the page state');
  check(state.decodeErrors === 0, `no decode errors (${state.decodeErrors})`);
  check(state.snapshots >= 40, `snapshots decoded (${state.snapshots})`);
  check(consoleErrors.length === 0, `no errors in the page's console (${consoleErrors.slice(0, 3).join(' | ')})`);
  writeFileSync(join(args.out, 'page_state.json'), JSON.stringify(state, null, 1));
  bot.child.kill('SIGTERM');
  server.child.kill('SIGTERM');
  const summary = await server.wait('exit summary', 10000);
  check(/web_sockets=1\b/.test(summary), 'the server counted one WebSocket');
  check(/web_pages=[1-9]/.test(summary), 'the server served the page');
} catch (e) {
  failures.push(String(e && e.stack ? e.stack : e));
  console.error(String(e && e.stack ? e.stack : e));
} finally {
  if (browser) await browser.close().catch(() => {});
  killAll();
}
if (failures.length) {
  console.error(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('all checks passed');
process.exit(0);
