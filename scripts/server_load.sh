#!/usr/bin/env bash
# Server load test: swarmfield-server with a large swarm on a 1024 map, driven by bot players
# (and optionally whole-map viewers and a headless rendering viewer) for a fixed time; prints
# the server's exit summary and a verdict against the tick budget, how often the players' cells
# (the fields' goal set) changed, and what the snapshots cost (bytes per agent, kbit/s and
# snapshots per second per viewer, the largest datagram). Called by `./swarmfield.sh load [options]` (which builds first and passes --bin), or
# directly: scripts/server_load.sh --bin build/bin [options].
# Exit: 0 = the run completed (whatever the verdict; with --strict, 3 when the tick budget was
# missed), 1 = something failed (server did not start or died, no summary, a bot lost its
# connection), 2 = bad options.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

MAP="$ROOT/../shared/data/maps/street/Boston_0_1024.map"
AGENTS=100000
DURATION=60
BOTS=8
PLAYER_SPEED=""  # empty = the server's default
THREADS=""
FIELD_BUDGET=""
VIEWER=no
VIEWERS=0
EXTRA_SERVER_ARGS=()
WEB_SPECTATORS=0
BOT_SCRIPT=""  # empty = the bots' built-in wander loop
BIN=""  # required: ./swarmfield.sh load passes its build's bin folder
OUT="$ROOT/out/load"
STRICT=no
RSS_EVERY=10  # seconds between samples of the server's resident memory; 0 = none
CLIENT_NICE=10  # the load generator's niceness: below the server it measures

usage() {
  cat <<USAGE
usage: ./swarmfield.sh load [options]      (or: scripts/server_load.sh --bin DIR [options])
  --map FILE.map         MovingAI map (default ../shared/data/maps/street/Boston_0_1024.map)
  --agents N             swarm size (default $AGENTS)
  --seconds S            length of the measured run (default $DURATION)
  --bots N               bot players, 1..1000, each wandering from the map centre (default $BOTS)
  --player-speed U       player speed, world units (= cells) per second (server default 5: a
                         player changes cell every ~6 ticks at 30 Hz; 40 = more than once a tick)
  --threads N            swarm worker threads of the server (server default 2)
  --field-budget UNITS   field rebuild work units per tick (server default -1 = auto: 200000
                         above 512x512 maps; 0 = every rebuild whole in one tick; else >= 10000)
  --bot-script FILE      the bots play this bot script (swarmfield-bot --script; default: their
                         built-in wander loop)
  --fight                the bots fight and build: --bot-script client_viewer/scripts/fight.bot
                         (fire at the nearest enemy throughout, wander, 4 barricades, kite)
  --viewers N            add N whole-map viewers, 0..1000 (swarmfield-bot --role viewer: decode and
                         acknowledge every snapshot, no rendering; default 0)
  --web-spectators N     add N browser spectators, 0..1000 (web_spectator_load, a bench program:
                         WebSockets on the server's --web-port, whole map, every snapshot decoded)
  --viewer               add a headless viewer following the first player (zoom 8, 10 fps)
  --server-arg ARG       pass ARG on to swarmfield-server (repeatable; e.g. --server-arg
                         --spectator-join-interval --server-arg 0 for unshared spectator streams)
  --bin DIR              folder with swarmfield-server and swarmfield-bot (required when this
                         script is called directly; ./swarmfield.sh load passes its build)
  --out DIR              logs: server.log, server.out, bots.log, viewers.log, viewer.log (default out/load)
  --strict               exit 3 when the run overran or tick p99 exceeded the tick budget
  --client-nice N        run the bots and viewers at nice N, 0..19 (default 10): they share the
                         server's cores here, and at the server's priority their wake-ups took a
                         swarm thread's core in the middle of a tick (on 2 cores, 8192 map: tick
                         p99 33-37 ms against 28 at nice 10); 0 = the server's priority
  --rss-every S          sample the server's resident memory (VmRSS) every S seconds into
                         OUT/rss.txt ("seconds KiB" lines) and report first/last/peak, the curve by
                         minute and the growth over the run's second half (default 10; 0 = off)
Machine load distorts the timings: the verdict prints the load average before and after.
USAGE
}

# Relative paths are the caller's: swarmfield.sh changes into the checkout before calling us.
CALLER_PWD=${SWARMFIELD_CALLER_PWD:-$PWD}
fail_usage() { echo "load: $*" >&2; echo "try: ./swarmfield.sh load --help" >&2; exit 2; }
abs_path() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$CALLER_PWD" "$1" ;; esac; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || fail_usage "$1 needs a value"; }
is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
is_number() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

while [ $# -gt 0 ]; do
  case "$1" in
    --map) need_value "$@"; MAP=$(abs_path "$2"); shift 2 ;;
    --agents) need_value "$@"; is_uint "$2" || fail_usage "--agents must be a whole number >= 0 (got '$2')"
              AGENTS=$2; shift 2 ;;
    --seconds) need_value "$@"; { is_number "$2" && awk -v s="$2" 'BEGIN { exit !(s > 0 && s <= 86400) }'; } ||
                 fail_usage "--seconds must be a number of seconds in (0, 86400] (got '$2')"
               DURATION=$2; shift 2 ;;
    --bots) need_value "$@"; { is_uint "$2" && [ "$2" -ge 1 ] && [ "$2" -le 1000 ]; } ||
              fail_usage "--bots must be in 1..1000 (got '$2')"
            BOTS=$2; shift 2 ;;
    --bot-script) need_value "$@"; BOT_SCRIPT=$(abs_path "$2")
                  [ -f "$BOT_SCRIPT" ] || fail_usage "--bot-script: no such file: $BOT_SCRIPT"; shift 2 ;;
    --fight) BOT_SCRIPT="$ROOT/client_viewer/scripts/fight.bot"; shift ;;
    --player-speed) need_value "$@"; is_number "$2" || fail_usage "--player-speed must be a number of units per second (got '$2')"
                    PLAYER_SPEED=$2; shift 2 ;;
    --threads) need_value "$@"; is_uint "$2" || fail_usage "--threads must be a whole number (got '$2')"
               THREADS=$2; shift 2 ;;
    --field-budget) need_value "$@"; { [[ "$2" =~ ^(-1|0|[1-9][0-9]*)$ ]] && { [ "$2" -le 0 ] || [ "${#2}" -gt 5 ] || [ "$2" -ge 10000 ]; }; } ||
                      fail_usage "--field-budget must be -1 (auto), 0 (whole rebuild in one tick) or >= 10000 work units per tick (got '$2')"
                    FIELD_BUDGET=$2; shift 2 ;;
    --viewers) need_value "$@"; { is_uint "$2" && [ "${#2}" -le 4 ] && [ "$2" -le 1000 ]; } ||
                 fail_usage "--viewers must be in 0..1000 (got '$2')"
               VIEWERS=$2; shift 2 ;;
    --web-spectators) need_value "$@"; { is_uint "$2" && [ "${#2}" -le 4 ] && [ "$2" -le 1000 ]; } ||
                        fail_usage "--web-spectators must be in 0..1000 (got '$2')"
                      WEB_SPECTATORS=$2; shift 2 ;;
    --viewer) VIEWER=yes; shift ;;
    --server-arg) need_value "$@"; EXTRA_SERVER_ARGS+=("$2"); shift 2 ;;
    --bin) need_value "$@"; BIN=$(abs_path "$2"); shift 2 ;;
    --out) need_value "$@"; OUT=$(abs_path "$2"); shift 2 ;;
    --strict) STRICT=yes; shift ;;
    --rss-every) need_value "$@"; { is_uint "$2" && [ "${#2}" -le 5 ]; } ||
                   fail_usage "--rss-every must be a whole number of seconds, 0 = off (got '$2')"
                 RSS_EVERY=$2; shift 2 ;;
    --client-nice) need_value "$@"; { is_uint "$2" && [ "${#2}" -le 2 ] && [ "$2" -le 19 ]; } ||
                     fail_usage "--client-nice must be 0..19 (got '$2')"
                   CLIENT_NICE=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) fail_usage "unknown option '$1'" ;;
  esac
done
[ -f "$MAP" ] || fail_usage "map file not found: $MAP"
[ "${SWARMFIELD_LOAD_CHECK_ONLY:-0}" = 1 ] && exit 0  # swarmfield.sh checks the options before building
# Called directly without --bin (e.g. with no arguments at all): say how to run it instead of
# starting a 60 s, 100k-agent run with whatever binaries happen to lie in build/bin.
if [ -z "$BIN" ]; then
  usage >&2
  echo "load: --bin DIR is required when calling scripts/server_load.sh directly (or run ./swarmfield.sh load)" >&2
  exit 2
fi
progs=(swarmfield-server swarmfield-bot)
[ "$VIEWER" = yes ] && progs+=(swarmfield-viewer)
for prog in "${progs[@]}"; do
  [ -x "$BIN/$prog" ] || { echo "load: $BIN/$prog not found; build first (./swarmfield.sh load builds) or pass --bin DIR" >&2; exit 1; }
done
mkdir -p "$OUT"

say() { printf '[load] %s\n' "$*"; }
now_ms() { date +%s%3N; }

# Every process we start, so that the trap stops exactly those (and nothing else).
pids=()
alive() { kill -0 "$1" 2>/dev/null; }
# stop_pids SIGNAL TIMEOUT_S PID...: sends SIGNAL, waits up to TIMEOUT_S for them to exit.
stop_pids() {
  local sig=$1 timeout=$2; shift 2
  local p deadline
  for p in "$@"; do alive "$p" && kill "-$sig" "$p" 2>/dev/null || true; done
  deadline=$(( $(now_ms) + timeout * 1000 ))
  for p in "$@"; do
    while alive "$p" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
  done
}
cleanup() {
  local left=()
  local p
  for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
  if [ ${#left[@]} -gt 0 ]; then
    stop_pids TERM 3 "${left[@]}"
    for p in "${left[@]}"; do alive "$p" && kill -KILL "$p" 2>/dev/null || true; done
  fi
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "load: interrupted; stopping the server and clients" >&2; exit 130' INT
trap 'echo "load: terminated; stopping the server and clients" >&2; exit 143' TERM

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# --- server --------------------------------------------------------------------------------
# --duration is only a safety net (the server stops itself if this script is killed with
# SIGKILL); the run is ended by our SIGTERM after --seconds.
SAFETY=$(awk -v s="$DURATION" 'BEGIN { print int(s) + 120 }')
SERVER_ARGS=(--map "$MAP" --agents "$AGENTS" --port 0 --bind 127.0.0.1 --duration "$SAFETY" --status-interval 5)
[ "$AGENTS" -gt 100000 ] && SERVER_ARGS+=(--max-agents "$AGENTS")
CLIENTS=$(( BOTS + VIEWERS + WEB_SPECTATORS + 2 )); [ "$CLIENTS" -lt 64 ] && CLIENTS=64
# Every bot and the viewer connect from 127.0.0.1: lift the per-address cap to match.
SERVER_ARGS+=(--max-clients "$CLIENTS" --max-connections-per-address "$CLIENTS" --max-clients-per-address "$CLIENTS")
[ -n "$PLAYER_SPEED" ] && SERVER_ARGS+=(--player-speed "$PLAYER_SPEED")
[ -n "$THREADS" ] && SERVER_ARGS+=(--threads "$THREADS")
[ -n "$FIELD_BUDGET" ] && SERVER_ARGS+=(--field-budget "$FIELD_BUDGET")
if [ "$WEB_SPECTATORS" -gt 0 ]; then
  [ -x "$BIN/web_spectator_load" ] || fail_usage "--web-spectators needs $BIN/web_spectator_load (a bench program: SWARMFIELD_BENCH=1 ./swarmfield.sh build)"
  # The gateway serves a page; the spectators never ask for it, so any index.html will do.
  WEB_ROOT="$BIN/../web"
  [ -f "$WEB_ROOT/index.html" ] || { WEB_ROOT="$OUT/web-root"; mkdir -p "$WEB_ROOT"; echo '<!doctype html>' >"$WEB_ROOT/index.html"; }
  SERVER_ARGS+=(--web-port 0 --web-root "$WEB_ROOT" --max-web-spectators "$WEB_SPECTATORS")
fi
SERVER_ARGS+=("${EXTRA_SERVER_ARGS[@]}")
say "server: swarmfield-server ${SERVER_ARGS[*]} (log: $OUT/server.log)"
# Emptied here, not only by the redirection below: that happens in the background child, and the
# wait for "listening tcp=" could read the previous run's log first (and its port).
: >"$OUT/server.out"
: >"$OUT/server.log"
"$BIN/swarmfield-server" "${SERVER_ARGS[@]}" >"$OUT/server.out" 2>"$OUT/server.log" &
SERVER_PID=$!
pids+=("$SERVER_PID")

PORT=""
deadline=$(( $(now_ms) + 60000 ))
while [ -z "$PORT" ] && [ "$(now_ms)" -lt "$deadline" ]; do
  if ! alive "$SERVER_PID"; then
    wait "$SERVER_PID" && rc=0 || rc=$?
    echo "load: the server exited (code $rc) before listening:" >&2
    cat "$OUT/server.log" >&2
    exit 1
  fi
  PORT=$(sed -n 's/.*listening tcp=\([0-9][0-9]*\) .*/\1/p' "$OUT/server.log" | head -1)
  [ -z "$PORT" ] && sleep 0.1
done
[ -n "$PORT" ] || { echo "load: the server did not report 'listening tcp=' within 60 s; log:" >&2; cat "$OUT/server.log" >&2; exit 1; }
LISTEN=$(grep -m1 'listening tcp=' "$OUT/server.log")
field() { printf '%s\n' "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p"; }
TICK_HZ=$(field "$LISTEN" tick_hz)
say "server listening on 127.0.0.1:$PORT: $(printf '%s' "$LISTEN" | sed 's/.*listening //')"

# --- clients -------------------------------------------------------------------------------
# Clients outlive the run on their own clock; the server's Bye at the end stops them.
CLIENT_SECONDS=$(awk -v s="$DURATION" 'BEGIN { print int(s) + 60 }')
# Our own server: any map size it runs (8192 x 8192 worlds), not the client default of 4096 x 4096.
bot_args=(--max-map-cells 67108864)
if [ -n "$BOT_SCRIPT" ]; then
  bot_args+=(--script "$BOT_SCRIPT")
  say "bots: swarmfield-bot --count $BOTS --script $BOT_SCRIPT (nice $CLIENT_NICE; log: $OUT/bots.log)"
else
  say "bots: swarmfield-bot --count $BOTS (built-in wander loop, nice $CLIENT_NICE; log: $OUT/bots.log)"
fi
nice -n "$CLIENT_NICE" "$BIN/swarmfield-bot" --host 127.0.0.1 --port "$PORT" --count "$BOTS" --seconds "$CLIENT_SECONDS" \
  "${bot_args[@]}" >"$OUT/bots.out" 2>"$OUT/bots.log" &
BOT_PID=$!
pids+=("$BOT_PID")
WEB_PID=""
if [ "$WEB_SPECTATORS" -gt 0 ]; then
  WEB_PORT=$(sed -n 's/.*web listening port=\([0-9][0-9]*\) .*/\1/p' "$OUT/server.log" | head -1)
  [ -n "$WEB_PORT" ] || { echo "load: the server did not report 'web listening port='; log:" >&2; cat "$OUT/server.log" >&2; exit 1; }
  # From 127.0.0.2.. (16 a host): the per-address limits count each browser's own address.
  say "web spectators: web_spectator_load --count $WEB_SPECTATORS on port $WEB_PORT (log: $OUT/web.out)"
  nice -n "$CLIENT_NICE" "$BIN/web_spectator_load" --port "$WEB_PORT" --count "$WEB_SPECTATORS" \
    --addresses $(( (WEB_SPECTATORS + 15) / 16 )) --seconds "$DURATION" >"$OUT/web.out" 2>&1 &
  WEB_PID=$!
  pids+=("$WEB_PID")
fi
VIEWERS_PID=""
if [ "$VIEWERS" -gt 0 ]; then
  say "viewers: swarmfield-bot --role viewer --count $VIEWERS (whole map; log: $OUT/viewers.log)"
  nice -n "$CLIENT_NICE" "$BIN/swarmfield-bot" --host 127.0.0.1 --port "$PORT" --role viewer --count "$VIEWERS" --input-hz 10 --max-map-cells 67108864 \
    --seconds "$CLIENT_SECONDS" --name viewer >"$OUT/viewers.out" 2>"$OUT/viewers.log" &
  VIEWERS_PID=$!
  pids+=("$VIEWERS_PID")
fi
VIEWER_PID=""
if [ "$VIEWER" = yes ]; then
  say "viewer: headless, following the first player (log: $OUT/viewer.log, screenshot $OUT/load.png)"
  nice -n "$CLIENT_NICE" "$BIN/swarmfield-viewer" --host 127.0.0.1 --port "$PORT" --headless --follow --zoom 8 --fps 10 \
    --seconds "$CLIENT_SECONDS" --screenshot "$OUT/load.png" >"$OUT/viewer.log" 2>&1 &
  VIEWER_PID=$!
  pids+=("$VIEWER_PID")
fi

# --- the run -------------------------------------------------------------------------------
say "running for $DURATION s"
start=$(now_ms)
# Resident memory over the run (issue 10's "no growth over a 10-minute run"): VmRSS of the
# server, read from /proc between the loop's half-second naps.
RSS_FILE="$OUT/rss.txt"
: >"$RSS_FILE"
next_rss=$start
sample_rss() {
  local kib
  kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null || true)
  [ -n "$kib" ] && printf '%d %s\n' $(( ($(now_ms) - start) / 1000 )) "$kib" >>"$RSS_FILE"
  return 0
}
end=$(( start + $(awk -v s="$DURATION" 'BEGIN { printf "%d", s * 1000 }') ))  # mawk clamps %d at 2^31
while [ "$(now_ms)" -lt "$end" ]; do
  if ! alive "$SERVER_PID"; then
    echo "load: the server stopped during the run; last log lines:" >&2
    tail -20 "$OUT/server.log" >&2
    exit 1
  fi
  if [ "$RSS_EVERY" -gt 0 ] && [ "$(now_ms)" -ge "$next_rss" ]; then
    sample_rss
    next_rss=$(( next_rss + RSS_EVERY * 1000 ))
  fi
  sleep 0.5
done
[ "$RSS_EVERY" -gt 0 ] && sample_rss  # the last sample, at the end of the run

# CPU seconds (user + system) each process used so far, read before stopping: with 2 worker
# threads the server wants up to 2 cores, and the clients run on the same machine.
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_s() { [ -r "/proc/$1/stat" ] && sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$CLK_TCK" '{ printf "%.1f", ($12 + $13) / hz }' || echo "?"; }
RUN_S=$(awk -v t0="$start" -v t1="$(now_ms)" 'BEGIN { printf "%.1f", (t1 - t0) / 1000 }')
SERVER_CPU=$(cpu_s "$SERVER_PID")
CPU_LINE="server $SERVER_CPU s, bots $(cpu_s "$BOT_PID") s"
[ -n "$VIEWERS_PID" ] && CPU_LINE="$CPU_LINE, viewers $(cpu_s "$VIEWERS_PID") s"
[ -n "$WEB_PID" ] && CPU_LINE="$CPU_LINE, web spectators: their line's cpu_s"
[ -n "$VIEWER_PID" ] && CPU_LINE="$CPU_LINE, viewer $(cpu_s "$VIEWER_PID") s"
CPU_LINE="$CPU_LINE of CPU in ${RUN_S} s of run (+ start-up) on $(nproc 2>/dev/null || echo '?') CPUs"

# --- stop: server first (it says Bye, the clients then end on their own) --------------------
say "stopping the server (SIGTERM)"
stop_pids TERM 15 "$SERVER_PID"
if alive "$SERVER_PID"; then
  echo "load: the server did not exit within 15 s of SIGTERM; killing it" >&2
  kill -KILL "$SERVER_PID" 2>/dev/null || true
fi
wait "$SERVER_PID" && SERVER_RC=0 || SERVER_RC=$?
client_pids=("$BOT_PID"); [ -n "$VIEWER_PID" ] && client_pids+=("$VIEWER_PID"); [ -n "$VIEWERS_PID" ] && client_pids+=("$VIEWERS_PID")
deadline=$(( $(now_ms) + 5000 ))
for p in "${client_pids[@]}"; do
  while alive "$p" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
done
stop_pids TERM 3 "${client_pids[@]}"
wait "$BOT_PID" && BOT_RC=0 || BOT_RC=$?
VIEWER_RC=""
if [ -n "$VIEWER_PID" ]; then wait "$VIEWER_PID" && VIEWER_RC=0 || VIEWER_RC=$?; fi
VIEWERS_RC=0
if [ -n "$VIEWERS_PID" ]; then wait "$VIEWERS_PID" && VIEWERS_RC=0 || VIEWERS_RC=$?; fi
WEB_RC=0
if [ -n "$WEB_PID" ]; then wait "$WEB_PID" && WEB_RC=0 || WEB_RC=$?; fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

SUMMARY=$(grep -E '^ticks=' "$OUT/server.out" | tail -1 || true)
if [ -z "$SUMMARY" ]; then
  echo "load: no summary line from the server (exit code $SERVER_RC); last log lines:" >&2
  tail -20 "$OUT/server.log" >&2
  exit 1
fi
say "server summary: $SUMMARY"
say "bots (exit $BOT_RC): $(tail -1 "$OUT/bots.out" 2>/dev/null)"
[ -n "$VIEWER_PID" ] && say "viewer (exit $VIEWER_RC): $(tail -1 "$OUT/viewer.log" 2>/dev/null)"
[ -n "$WEB_PID" ] && say "web spectators (exit $WEB_RC): $(tail -1 "$OUT/web.out" 2>/dev/null)"
VIEWERS_LINE=""
if [ -n "$VIEWERS_PID" ]; then
  VIEWERS_LINE=$(grep -E '^bots=' "$OUT/viewers.out" 2>/dev/null | tail -1 || true)
  say "viewers (exit $VIEWERS_RC): $VIEWERS_LINE"
fi

# Overruns once warm: the first status line (~5 s in) carries the count so far, which includes
# the first tick (it spawns every agent and builds the first field whole).
FIRST_STATUS=$(grep -m1 ' status tick=' "$OUT/server.log" || true)
WARM_TICK=$(printf '%s' "$FIRST_STATUS" | sed -n 's/.*status tick=\([0-9]*\).*/\1/p')
WARM_OVERRUNS=$(field "$FIRST_STATUS" overruns)

set +e
awk -v summary="$SUMMARY" -v hz="$TICK_HZ" -v seconds="$DURATION" -v bots="$BOTS" -v agents="$AGENTS" \
    -v map="$(basename "$MAP")" -v listen="$LISTEN" -v warm_tick="${WARM_TICK:-}" -v warm_overruns="${WARM_OVERRUNS:-}" \
    -v load_before="$LOAD_BEFORE" -v load_after="$LOAD_AFTER" -v cpu_line="$CPU_LINE" -v strict="$STRICT" \
    -v viewers="$VIEWERS" -v viewers_line="$VIEWERS_LINE" -v server_cpu="$SERVER_CPU" -v run_s="$RUN_S" '
function val(k) { return (k in v) ? v[k] : "n/a" }
function num(k) { return (k in v) ? v[k] + 0 : 0 }
function per_tick(k) { return ticks > 0 ? sprintf("%.2f", num(k) / ticks) : "n/a" }
BEGIN {
  n = split(summary, kv, " ")
  for (i = 1; i <= n; ++i) { if (split(kv[i], p, "=") == 2) v[p[1]] = p[2] }
  m = split(listen, lk, " ")
  for (i = 1; i <= m; ++i) { if (split(lk[i], p, "=") == 2) cfg[p[1]] = p[2] }
  if (hz + 0 <= 0) hz = 30
  budget_ms = 1000.0 / hz
  ticks = num("ticks")
  printf "\n== server load: %s, %s agents, %s bot(s), %s s at %s Hz (tick budget %.1f ms); threads %s, player speed %s units/s, field budget %s ==\n",
         map, agents, bots, seconds, hz, budget_ms, cfg["threads"], cfg["player_speed"], cfg["field_budget"]
  printf "machine load average: before %s, after %s; CPU used: %s\n", load_before, load_after, cpu_line
  printf "ticks            %d (expected ~%d; skipped by the catch-up cap %s)\n", ticks, seconds * hz, val("skipped_ticks")
  warm = ""
  if (warm_overruns != "") {
    late = num("overruns") - warm_overruns
    warm = sprintf("; %d after tick %s (~5 s, past the first tick that spawns %s agents)", late, warm_tick, agents)
  } else {
    late = num("overruns")
  }
  printf "overruns         %s total%s\n", val("overruns"), warm
  printf "tick ms          p50 %s  p99 %s  max %s   vs budget %.1f\n", val("tick_p50_ms"), val("tick_p99_ms"), val("tick_max_ms"), budget_ms
  printf "phases ms p50/p99  World step %s/%s, made of: fields %s/%s (over the ticks with rebuild work) and swarm %s/%s; then snapshots+sends %s/%s\n",
         val("step_p50_ms"), val("step_p99_ms"), val("rebuild_p50_ms"), val("rebuild_p99_ms"),
         val("swarm_p50_ms"), val("swarm_p99_ms"), val("snapshot_p50_ms"), val("snapshot_p99_ms")
  printf "goal set changed %s of %d ticks = %s per tick (a player changed cell; 1.00 = every tick)\n", val("goal_changes"), ticks, per_tick("goal_changes")
  printf "field builds     started %s (%s per tick), completed rebuilds %s (%s per tick", val("builds_started"), per_tick("builds_started"), val("rebuilds"), per_tick("rebuilds")
  if (num("rebuilds") > 0) printf "; one per %.1f ticks", ticks / num("rebuilds")
  printf "; all size classes, by class %s started / %s completed", val("builds_started_by_class"), val("rebuilds_by_class")
  printf "); agents read an out-of-date field on %s ticks (%s)\n", val("stale_ticks"), (ticks > 0 ? sprintf("%.0f%%", 100 * num("stale_ticks") / ticks) : "n/a")
  printf "peak memory      %s MiB resident (server process; target <= 128 MiB at 100k agents on a 1024 map)\n", val("peak_rss_mib")
  printf "snapshots        %s built (%s over TCP, %s deferred), %s bytes per agent entry sent, largest datagram %s bytes\n",
         val("snapshots_sent"), val("snapshots_tcp"), val("snapshots_deferred"), val("bytes_per_agent"), val("max_datagram")
  if (num("snapshots_shared") > 0)
    printf "shared streams   %s of them from %s shared encodes (spectators of one area; %s joins, %s sent back for lagging acks)\n", val("snapshots_shared"), val("shared_encodes"), val("spectator_joins"), val("spectator_lags")
  if (viewers + 0 > 0 && viewers_line != "") {
    q = split(viewers_line, vk, " ")
    for (i = 1; i <= q; ++i) { if (split(vk[i], p, "=") == 2) w[p[1]] = p[2] }
    vs = w["seconds"] + 0
    if (vs > 0) {
      printf "viewers          %d whole-map: %.1f kbit/s and %.1f snapshots/s each (received), %d undecodable (no baseline), rtt %s ms\n",
             viewers, w["bytes_received"] * 8 / 1000 / vs / viewers, w["snapshots"] / vs / viewers, w["snapshots_no_baseline"], w["rtt_ms_avg"]
    }
  }
  # The slowest viewer, by the server (issue 22: each of 64 viewers >= 19 snapshots/s; the mean
  # above hides one left behind). Viewers include the headless --viewer and web spectators.
  if (num("viewers_rated") > 0)
    printf "viewer rate      slowest viewer sent %s snapshots/s (server; %s viewers sent snapshots for >= 1 s)\n", val("viewer_snapshots_per_s_min"), val("viewers_rated")
  if (server_cpu != "?" && run_s + 0 > 0) printf "server CPU       %.2f cores over the run (%s s of CPU in %s s)\n", server_cpu / run_s, server_cpu, run_s
  p99 = num("tick_p99_ms")
  ok = (late == 0 && p99 <= budget_ms)
  if (ok) {
    printf "verdict: OK - no overruns once warm, tick p99 %.1f ms <= %.1f ms, goal set changing on %.0f%% of ticks\n", p99, budget_ms, (ticks > 0 ? 100 * num("goal_changes") / ticks : 0)
  } else {
    why = ""
    if (late > 0) why = why sprintf("%d overrun(s) once warm; ", late)
    if (p99 > budget_ms) why = why sprintf("tick p99 %.1f ms > %.1f ms; ", p99, budget_ms)
    printf "verdict: OVER BUDGET - %sgoal set changing on %.0f%% of ticks (see the phases above)\n", why, (ticks > 0 ? 100 * num("goal_changes") / ticks : 0)
  }
  exit (strict == "yes" && !ok) ? 3 : 0
}'
VERDICT_RC=$?
set -e

# Resident memory: first/last/peak, the last sample of each minute, and the growth from the
# sample nearest half the run to the last (after warm-up a server should not grow).
if [ "$RSS_EVERY" -gt 0 ] && [ -s "$RSS_FILE" ]; then
  awk -v half="$(awk -v s="$DURATION" 'BEGIN { print s / 2 }')" -v file="$RSS_FILE" -v every="$RSS_EVERY" '
  { t[NR] = $1; k[NR] = $2; if ($2 > peak) peak = $2; minute[int($1 / 60)] = $2; if (int($1 / 60) > last_min) last_min = int($1 / 60)
    if (h == 0 || ($1 - half) * ($1 - half) < (t[h] - half) * (t[h] - half)) h = NR }
  END {
    printf "resident memory  first %.1f MiB, last %.1f MiB, peak %.1f MiB (%d samples every %s s, %s)\n", k[1] / 1024, k[NR] / 1024, peak / 1024, NR, every, file
    printf "  by minute (last sample of each):"
    for (m = 0; m <= last_min; ++m) if (m in minute) printf " %d:%.1f", m + 1, minute[m] / 1024
    printf "\n"
    printf "  second half: %.1f MiB at %d s -> %.1f MiB at %d s: %+.1f MiB (%+.2f%%)\n", k[h] / 1024, t[h], k[NR] / 1024, t[NR], (k[NR] - k[h]) / 1024, 100 * (k[NR] - k[h]) / k[h]
  }' "$RSS_FILE"
fi

if [ "$VIEWERS_RC" -ne 0 ]; then
  echo "load: the viewers exited with code $VIEWERS_RC (one could not connect or lost its connection); see $OUT/viewers.log" >&2
  exit 1
fi
if [ "$WEB_RC" -ne 0 ]; then
  echo "load: the web spectators exited with code $WEB_RC (one was not welcomed or lost its connection); see $OUT/web.out" >&2
  exit 1
fi
if [ "$BOT_RC" -ne 0 ]; then
  echo "load: the bots exited with code $BOT_RC (a bot could not connect or lost its connection); see $OUT/bots.log" >&2
  exit 1
fi
exit "$VERDICT_RC"
