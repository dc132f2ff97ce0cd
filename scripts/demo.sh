#!/usr/bin/env bash
# The main job: a dedicated server on a city map, a bot walking a script as the player, and a
# viewer watching (a window when there is a display, headless screenshots otherwise).
# Called by `./swarmfield.sh demo [options]` with the binary folder as first argument.
set -euo pipefail
BIN=${1:?binary folder}; shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)

MAP_ARGS=(--city-seed 1 --city-size 256)
AGENTS=3000
PLAYER_HEALTH=1000
SECONDS_TO_RUN=""
PORT=7777
SCRIPT=""   # default: patrol.bot on the default city, the built-in wander loop elsewhere
PATROL="$ROOT/client_viewer/scripts/patrol.bot"
CITY_DEFAULT=yes
OUT="$ROOT/out"
HEADLESS=auto
WEB_PORT=8088  # the browser spectator (0 = off); only when the page is built (BIN/../web)

usage() {
  cat <<USAGE
usage: ./swarmfield.sh demo [--map FILE.map | --city-seed N] [--agents N] [--seconds S]
                            [--port P] [--web-port P] [--script FILE.bot] [--headless] [--out DIR]
  --map FILE.map   a MovingAI map, e.g. ../shared/data/maps/street/Boston_0_512.map
                   (default: the generated city, seed 1, 256x256 cells)
  --city-seed N    generated city with seed N
  --agents N       enemies in the swarm (default $AGENTS)
  --seconds S      stop after S seconds (default: 30 headless, until the window closes otherwise)
  --port P         TCP and UDP port of the server (default $PORT)
  --web-port P     the browser spectator: watch at http://127.0.0.1:P/ (default $WEB_PORT;
                   0 = off; on when the page was built, which needs node and npm)
  --script FILE    bot script (default: client_viewer/scripts/patrol.bot on the default city,
                   a wander loop on other maps; format in client_viewer/BOT_SCRIPT.md)
  --headless       never open a window; write screenshots to --out (default when DISPLAY is unset)
  --out DIR        where screenshots and logs go (default out/)
USAGE
}

# Relative paths are the caller's: swarmfield.sh changes into the checkout before calling us.
CALLER_PWD=${SWARMFIELD_CALLER_PWD:-$PWD}
fail_usage() { echo "demo: $*" >&2; echo "try: ./swarmfield.sh demo --help" >&2; exit 2; }
abs_path() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$CALLER_PWD" "$1" ;; esac; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || fail_usage "$1 needs a value"; }
is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

while [ $# -gt 0 ]; do
  case "$1" in
    --map) need_value "$@"; f=$(abs_path "$2")
           [ -f "$f" ] || fail_usage "map file '$2' not found (looked for $f)"
           MAP_ARGS=(--map "$f"); CITY_DEFAULT=no; shift 2 ;;
    --city-seed) need_value "$@"; is_uint "$2" || fail_usage "--city-seed must be a whole number >= 0 (got '$2')"
                 MAP_ARGS=(--city-seed "$2" --city-size 256); [ "$2" = 1 ] || CITY_DEFAULT=no; shift 2 ;;
    --agents) need_value "$@"; is_uint "$2" || fail_usage "--agents must be a whole number >= 0 (got '$2')"
              AGENTS=$2; shift 2 ;;
    --seconds) need_value "$@"; [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail_usage "--seconds must be a number of seconds >= 0 (got '$2')"
               SECONDS_TO_RUN=$2; shift 2 ;;
    --port) need_value "$@"; { is_uint "$2" && [ "$2" -ge 1 ] && [ "$2" -le 65535 ]; } || fail_usage "--port must be in 1..65535 (got '$2')"
            PORT=$2; shift 2 ;;
    --web-port) need_value "$@"; { is_uint "$2" && [ "$2" -le 65535 ]; } || fail_usage "--web-port must be in 0..65535 (got '$2'; 0 = off)"
                WEB_PORT=$2; shift 2 ;;
    --script) need_value "$@"; f=$(abs_path "$2")
              [ -f "$f" ] || fail_usage "bot script '$2' not found (looked for $f)"
              SCRIPT=$f; shift 2 ;;
    --headless) HEADLESS=yes; shift ;;
    --out) need_value "$@"; OUT=$(abs_path "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) fail_usage "unknown option '$1'" ;;
  esac
done
[ "${SWARMFIELD_DEMO_CHECK_ONLY:-0}" = 1 ] && exit 0  # swarmfield.sh checks the options before building
[ -z "$SCRIPT" ] && [ "$CITY_DEFAULT" = yes ] && SCRIPT=$PATROL
[ "$HEADLESS" = auto ] && { [ -n "${DISPLAY:-}" ] && HEADLESS=no || HEADLESS=yes; }
[ -z "$SECONDS_TO_RUN" ] && { [ "$HEADLESS" = yes ] && SECONDS_TO_RUN=30 || SECONDS_TO_RUN=0; }
mkdir -p "$OUT"

say() { printf '\033[1m[demo]\033[0m %s\n' "$*"; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# The server outlives the clients by a few seconds so that they end first, on their own clock.
SERVER_DURATION=$(awk -v s="$SECONDS_TO_RUN" 'BEGIN { d = (s > 0) ? int(s) + 4 : 0; print d }')
WEB_ARGS=()
if [ "$WEB_PORT" != 0 ] && [ -f "$BIN/../web/index.html" ]; then
  WEB_ARGS=(--web-port "$WEB_PORT" --web-bind 127.0.0.1)
elif [ "$WEB_PORT" != 0 ]; then
  say "the browser page is not built (needs node and npm): no browser spectator"
fi
say "starting the server: ${MAP_ARGS[*]} --agents $AGENTS --player-health $PLAYER_HEALTH --port $PORT ${WEB_ARGS[*]} (log: $OUT/server.log)"
# The player is a hero here (1000 hit points, the server's default is 100): it walks its patrol
# through the horde and the picture shows the chase (at 100 the horde swarmed it every ~6 s at
# its spawn and it never reached a waypoint).
"$BIN/swarmfield-server" "${MAP_ARGS[@]}" --agents "$AGENTS" --port "$PORT" --duration "$SERVER_DURATION" \
  --player-health "$PLAYER_HEALTH" \
  "${WEB_ARGS[@]}" >"$OUT/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  grep -q 'listening' "$OUT/server.log" 2>/dev/null && break
  kill -0 "${pids[0]}" 2>/dev/null || { echo "the server did not start:"; cat "$OUT/server.log"; exit 1; }
  sleep 0.1
done
grep -q 'listening' "$OUT/server.log" || { echo "the server did not report listening within 10 s:"; cat "$OUT/server.log"; exit 1; }
[ ${#WEB_ARGS[@]} -gt 0 ] && say "watch in a browser: http://127.0.0.1:$WEB_PORT/ (pan: drag, zoom: wheel, F follows a player)"

# The bot outlives the viewer (the last frame, the screenshot, must still show the player being
# chased); the clean-up below stops it once the viewer is done.
BOT_SECONDS=$(awk -v s="$SECONDS_TO_RUN" 'BEGIN { print (s > 0) ? s + 3 : 0 }')
# It fights: --fire holds the trigger at the nearest enemy while it walks (the server's
# default horde rules resolve the shots; see README "The game").
BOT_ARGS=(--port "$PORT" --seconds "$BOT_SECONDS" --fire)
if [ -n "$SCRIPT" ]; then BOT_ARGS+=(--script "$SCRIPT"); BOT_WHAT="script $(basename "$SCRIPT")"; else BOT_WHAT="its built-in wander loop"; fi
say "starting the bot as the player, walking $BOT_WHAT and firing at the nearest enemy (log: $OUT/bot.log)"
"$BIN/swarmfield-bot" "${BOT_ARGS[@]}" >"$OUT/bot.log" 2>&1 &
BOT_PID=$!
pids+=($BOT_PID)
sleep 1
if ! kill -0 "$BOT_PID" 2>/dev/null; then
  echo "demo: the bot stopped at once; its log ($OUT/bot.log):" >&2
  cat "$OUT/bot.log" >&2
  exit 1
fi

if [ "$HEADLESS" = yes ]; then
  say "no display: headless viewer for $SECONDS_TO_RUN s, screenshot -> $OUT/demo.png"
  # Following the player at 6 pixels per cell: the picture shows the chase, not the whole map.
  "$BIN/swarmfield-viewer" --port "$PORT" --headless --seconds "$SECONDS_TO_RUN" --screenshot "$OUT/demo.png" \
    --follow --zoom 6 \
    | tee "$OUT/viewer.log"
else
  say "opening the viewer window (F flow arrows, H heat map, P follow player, arrows pan, wheel zoom, Esc quits)"
  "$BIN/swarmfield-viewer" --port "$PORT" --seconds "$SECONDS_TO_RUN" | tee "$OUT/viewer.log"
fi

say "stopping"
kill -TERM "${pids[@]}" 2>/dev/null || true
wait "${pids[0]}" 2>/dev/null || true
# The bot writes its summary as it ends: wait for it too (a bounded 5 s), or the line read
# below was sometimes its connect line.
for _ in $(seq 50); do kill -0 "$BOT_PID" 2>/dev/null || break; sleep 0.1; done
wait "$BOT_PID" 2>/dev/null || true
say "server summary: $(grep -E '^ticks=' "$OUT/server.log" | tail -1)"
say "bot summary:    $(grep -E '^bots=' "$OUT/bot.log" | tail -1)"
FIGHT=$(grep -E '^ticks=' "$OUT/server.log" | tail -1 | tr ' ' '\n' | grep -E '^(kills|player_deaths|shots|barricades_built|barricades_fallen)=' | tr '\n' ' ')
[ -n "$FIGHT" ] && say "the fight:      $FIGHT"
[ "$HEADLESS" = yes ] && say "screenshot: $OUT/demo.png"
trap - EXIT
