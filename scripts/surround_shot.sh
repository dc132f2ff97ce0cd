#!/usr/bin/env bash
# The README's surround picture: a 96x96 open map (walls on the border only), a bot standing
# still in the middle, 600 agents of the default kinds (runner, walker, brute), and a headless
# viewer following the player; after 30 s it writes the screenshot.
#   scripts/surround_shot.sh [--bin build/bin] [--out docs/images/surround_open.png] [--port 7801]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bin
OUT=$ROOT/docs/images/surround_open.png
PORT=7801
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "surround_shot: unknown option '$1'" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM
python3 - "$work/open96.map" <<'PY'
import sys
n = 96
rows = [''.join('@' if x in (0, n - 1) or y in (0, n - 1) else '.' for x in range(n)) for y in range(n)]
open(sys.argv[1], 'w').write(f"type octile\nheight {n}\nwidth {n}\nmap\n" + "\n".join(rows) + "\n")
PY
printf 'goto 48.5 48.5\nwait 1000\n' > "$work/stand.bot"
"$BIN/swarmfield-server" --map "$work/open96.map" --agents 600 --port "$PORT" --bind 127.0.0.1 --duration 40 \
  > "$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q listening "$work/server.log" 2>/dev/null && break; sleep 0.1; done
"$BIN/swarmfield-bot" --port "$PORT" --script "$work/stand.bot" --seconds 38 > "$work/bot.log" 2>&1 &
pids+=($!)
sleep 1
mkdir -p "$(dirname "$OUT")"
"$BIN/swarmfield-viewer" --port "$PORT" --headless --seconds 30 --zoom 14 --follow --screenshot "$OUT"
echo "surround_shot: wrote $OUT"
