#!/usr/bin/env bash
# Crowd scene families of issue 19 (../shared/scenarios/README.md F1-F6), run with swarmfield-tool
# sim and measured with ../shared/tools/crowd_scene.py. Writes maps, CSVs, figures (*.txt) and
# pictures (*.png) into OUT (default out/crowd_scenes).
#   scripts/crowd_scenes.sh [--bin DIR] [--out DIR] [--only door,doormix,gap,chase,chase_street,oneside,big,street,march]
# Needs python3 with numpy and matplotlib (Debian: apt-get install python3-numpy python3-matplotlib).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=out/crowd_scenes
only="door,doormix,gap,chase,chase_street,oneside,big,street,march"
scenes="door doormix gap chase chase_street oneside big street march"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin|--out|--only)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (try --help)" >&2; exit 2; }
      case "$1" in --bin) bin=$2 ;; --out) out=$2 ;; --only) only=$2 ;; esac
      shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "error: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
# Every name in --only must be a scene: a typo would run nothing and still say where the figures are.
for name in ${only//,/ }; do
  case " $scenes " in
    *" $name "*) ;;
    *) echo "error: --only: no scene '$name' (the scenes: ${scenes// /, })" >&2; exit 2 ;;
  esac
done
tool=$bin/swarmfield-tool
shared=$here/../shared
scene_py=$shared/tools/crowd_scene.py
py=/usr/bin/python3
[ -x "$tool" ] || { echo "no $tool: build first (./swarmfield.sh build) or give --bin DIR" >&2; exit 2; }
[ -f "$scene_py" ] || { echo "no $scene_py: ../shared must sit beside this checkout" >&2; exit 2; }
"$py" -c 'import numpy, matplotlib' 2>/dev/null || {
  echo "python3 needs numpy and matplotlib: apt-get install python3-numpy python3-matplotlib" >&2; exit 2; }
mkdir -p "$out"
say() { printf '\033[1m[crowd]\033[0m %s\n' "$*"; }

# The scene maps (MovingAI format): a room with a 1-cell door in each wall, a wall with a 1-cell
# gap and a 3-cell opening 30 cells apart, open ground of three sizes.
"$py" - "$out" <<'PY'
import sys
out = sys.argv[1]
def write(name, g):
    with open(f"{out}/{name}", "w") as f:
        f.write(f"type octile\nheight {len(g)}\nwidth {len(g[0])}\nmap\n" + "\n".join("".join(r) for r in g) + "\n")
def open_map(w, h):
    g = [["."] * w for _ in range(h)]
    for x in range(w): g[0][x] = g[h - 1][x] = "@"
    for y in range(h): g[y][0] = g[y][w - 1] = "@"
    return g
g = open_map(96, 96)
lo, hi, mid = 28, 67, 47
for i in range(lo, hi + 1): g[lo][i] = g[hi][i] = g[i][lo] = g[i][hi] = "@"
g[lo][mid] = g[hi][mid] = g[mid][lo] = g[mid][hi] = "."
write("door_room.map", g)
g = open_map(96, 64)
for y in range(64): g[y][40] = "@"
g[16][40] = "."
for y in (46, 47, 48): g[y][40] = "."
write("gap_wall.map", g)
for n in (96, 128, 256): write(f"open{n}.map", open_map(n, n))
PY

# run NAME MAP TICKS EVERY -- tool args: a CSV every EVERY ticks plus every tick of the last 150.
run() {
  local name=$1 map=$2 ticks=$3 every=$4; shift 5
  say "$name: $ticks ticks"
  "$tool" sim "$map" --ticks "$ticks" --csv /dev/stdout --csv-every 1 --no-progress "$@" |
    awk -F, -v E="$every" -v T="$ticks" 'NR==1 || ($1 ~ /^[0-9]+$/ && ($1 % E == 0 || $1 > T - 150))' > "$out/$name.csv"
}
analyze() {  # NAME MAP PLAYER...
  local name=$1 map=$2; shift 2
  local args=() p; for p in "$@"; do args+=(--player "$p"); done
  "$py" "$scene_py" analyze "$map" "$out/$name.csv" "${args[@]}" --json "$out/$name.json" > /dev/null
  "$py" "$scene_py" plot "$map" "$out/$name.csv" "$out/$name.png" "${args[@]}" --mark-stuck
  "$py" - "$out/$name.json" "$shared/tools" "$out/$name.csv" "$map" "$@" <<'PY' | tee "$out/$name.txt"
import json, sys
import numpy as np
r = json.load(open(sys.argv[1]))
sys.path.insert(0, sys.argv[2])
import crowd_scene as cs
# The pile's fill and tail in the final frame, per player over the agents nearest it (straight):
# fill = the agents' disc area within 0.8 R_hex (crowd_scene's hex-disc radius) over that
# circle's walkable area less the player's disc, as a share of hexagonal packing (0.9069;
# issue 19's target: >= 85%);
# tail = the share of those agents farther than R_hex + 3 cells.
d = cs.read_csv(sys.argv[3])
rad, _ = cs.kind_arrays(d["kind"])
X, Y = d["x"][-1], d["y"][-1]
blocked = cs.read_map(sys.argv[4])
P = np.array([[float(v) for v in a.split(",")] for a in sys.argv[5:]])
# Walkable area near a point: the map's open cells sampled 4 x 4 per cell.
sub = (np.arange(4) + 0.5) / 4.0
oy, ox = np.nonzero(~blocked)
shape = (len(ox), 4, 4)  # per open cell, its 4 x 4 sample points (x by the 2nd axis, y by the 3rd)
gx = np.broadcast_to(ox[:, None, None] + sub[None, :, None], shape).ravel()
gy = np.broadcast_to(oy[:, None, None] + sub[None, None, :], shape).ravel()
dist = np.hypot(X[:, None] - P[None, :, 0], Y[:, None] - P[None, :, 1])
near = dist.argmin(axis=1)
for i, p in enumerate(r["players"]):
    mine = near == i
    R = float(p.get("R_hex") or 0.0)
    di, ri = dist[mine, i], rad[mine]
    inner = 0.8 * R
    open_area = np.count_nonzero(np.hypot(gx - P[i, 0], gy - P[i, 1]) < inner) / 16.0
    free_area = max(open_area - np.pi * cs.PLAYER_R ** 2, 1e-9)
    fill = float(np.sum(np.pi * ri[di < inner] ** 2)) / free_area / 0.9069
    tail = float(np.mean(di > R + 3.0)) if mine.any() else float("nan")
    print(f"player {i}: rg_ratio {p.get('rg_ratio')} sectors {p.get('sectors')}/16 axis_diag {p.get('axis_diag')} "
          f"reach_max/median {p.get('reach_max_over_median')} within5 {p.get('within5')} "
          f"fill(0.8 R_hex) {fill:.3f} beyond R_hex+3 {tail:.3f}")
print(" ".join(f"{k}={r[k]}" for k in ("rest_final", "t90_rest_s", "rest5_share", "stuck", "jitter",
                                        "pair_overlap_max_final", "wall_overlap_max_any", "t90_arrive_s")))
PY
}
has() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
kinds=(--kind runner --kind walker --kind brute)

if has door; then
  run door "$out/door_room.map" 1800 10 -- --agents 2000 --spawn-rect 1,1,95,95 --kind walker --player 4.5,4.5 --player 91.5,91.5 --threads 2
  analyze door "$out/door_room.map" 4.5,4.5 91.5,91.5
fi
if has doormix; then
  # The same room with runners, walkers and brutes (brutes fit no door), players in the other corners.
  run doormix "$out/door_room.map" 3000 10 -- --agents 2000 --spawn-rect 1,1,95,95 "${kinds[@]}" --player 4.5,91.5 --player 91.5,4.5 --seed 7 --threads 2
  analyze doormix "$out/door_room.map" 4.5,91.5 91.5,4.5
fi
if has gap; then
  run gap "$out/gap_wall.map" 4500 10 -- --agents 300 --spawn-rect 1,1,39,63 "${kinds[@]}" --player 60.5,16.5 --threads 2
  analyze gap "$out/gap_wall.map" 60.5,16.5
fi
# The chase target counts agents not held by the pile: of the agents not linked to the player by
# chains of touching agents (crowd_scene.py's pile rule, gap <= 0.15), the share of samples
# (every second from 5 s on) at >= 90% of their kind's max speed. The player's track comes from
# the tool's --players-csv (crowd_scene.py's own path is an approximation for open maps only).
chase_free() {  # MAP CSV PLAYERS_CSV
  "$py" - "$shared/tools" "$1" "$2" "$3" <<'PY'
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import crowd_scene as cs
blocked = cs.read_map(sys.argv[2]); d = cs.read_csv(sys.argv[3])
ticks = d["ticks"]; r, vmax = cs.kind_arrays(d["kind"])
track = np.genfromtxt(sys.argv[4], delimiter=",", skip_header=1, ndmin=2)
path = np.zeros((int(track[:, 0].max()) + 1, 2))
path[track[:, 0].astype(int)] = track[:, 2:4]
held, fast, free, slow = [], 0, 0, 0
for i, t in enumerate(ticks):
    if t < 150 or t % 30:
        continue
    X, Y = d["x"][i], d["y"][i]; px, py = path[t]
    adj = [[] for _ in X]
    for a, b, _ in cs.neighbours(X, Y, r, 0.15):
        adj[a].append(b); adj[b].append(a)
    pile = np.hypot(X - px, Y - py) - r - cs.PLAYER_R <= 0.15
    stack = list(np.nonzero(pile)[0])
    while stack:
        for b in adj[stack.pop()]:
            if not pile[b]:
                pile[b] = True; stack.append(b)
    held.append(pile.mean())
    rel = np.hypot(d["vx"][i], d["vy"][i]) / vmax
    fast += int(np.sum(rel[~pile] >= 0.9)); free += int((~pile).sum())
    slow += int(np.sum(rel < 0.1))
print(f"not held by the pile: share(v>=0.9vmax)={fast / max(free, 1):.3f} (held by the pile: {np.mean(held):.2f} "
      f"of the horde; the whole horde below 10% of max speed: {slow / max(len(held) * len(r), 1):.3f})")
# Agents ahead of the player (within 15 cells, its velocity pointing at them within 60 degrees)
# that run away from it (moving at > 30% of their speed, more than 90 degrees off the line at
# it): a pursuit that only leads the player turns them to run ahead of it.
ahead = away = 0
for i, t in enumerate(ticks):
    if t < 150 or t % 10:
        continue
    X, Y = d["x"][i], d["y"][i]; px, py = path[t]; pv = (path[t] - path[t - 1]) * 30.0
    dx, dy = X - px, Y - py; D = np.hypot(dx, dy); ps = np.hypot(pv[0], pv[1])
    if ps < 1.0:
        continue
    m = (D < 15) & (D > 1) & ((dx * pv[0] + dy * pv[1]) / (D * ps) > 0.5)
    sp = np.hypot(d["vx"][i], d["vy"][i])
    ahead += int(m.sum()); away += int((m & (sp > 0.3 * vmax) & (d["vx"][i] * -dx + d["vy"][i] * -dy < 0)).sum())
print(f"ahead of the player: {ahead} agent-samples, running away from it: {away / max(ahead, 1):.3f}")
PY
}
if has chase; then
  run chase "$out/open96.map" 1800 10 -- --agents 600 "${kinds[@]}" --threads 2 --players-csv "$out/chase.players.csv"
  { "$py" "$scene_py" chase "$out/open96.map" "$out/chase.csv" --png "$out/chase.png" | tail -3
    chase_free "$out/open96.map" "$out/chase.csv" "$out/chase.players.csv"; } | tee "$out/chase.txt"
  run chase3000 "$out/open128.map" 1800 10 -- --agents 3000 "${kinds[@]}" --threads 2 --players-csv "$out/chase3000.players.csv"
  { "$py" "$scene_py" chase "$out/open128.map" "$out/chase3000.csv" | tail -3
    chase_free "$out/open128.map" "$out/chase3000.csv" "$out/chase3000.players.csv"; } | tee "$out/chase3000.txt"
  # The family: the server's spawn weights (3:6:1) and walkers only, at both sizes.
  for variant in weights walkers; do
    case $variant in
      weights) vk=(--kind runner:3 --kind walker:6 --kind brute:1) ;;
      walkers) vk=(--kind walker) ;;
    esac
    run "chase_$variant" "$out/open96.map" 1800 10 -- --agents 600 "${vk[@]}" --threads 2 \
      --players-csv "$out/chase_$variant.players.csv"
    run "chase3000_$variant" "$out/open128.map" 1800 10 -- --agents 3000 "${vk[@]}" --threads 2 \
      --players-csv "$out/chase3000_$variant.players.csv"
    for pair in "chase_$variant:open96" "chase3000_$variant:open128"; do
      name=${pair%%:*}; m=${pair##*:}
      { "$py" "$scene_py" chase "$out/$m.map" "$out/$name.csv" | tail -1
        chase_free "$out/$m.map" "$out/$name.csv" "$out/$name.players.csv"; } | tee "$out/$name.txt"
    done
  done
fi
# The chase in streets (F3 "on open ground and in streets"): the tool's scripted player walks its
# waypoints through Paris_1_256 and Boston_0_256, 600 and 3,000 agents at the server's weights.
# crowd_scene.py's chase summary assumes open ground, so only the figures above that read the
# player's real track.
if has chase_street; then
  for city in Paris_1_256 Boston_0_256; do
    map=$shared/data/maps/street/$city.map
    for n in 600 3000; do
      name=chase_street_${city}_$n
      run "$name" "$map" 1800 10 -- --agents "$n" --kind runner:3 --kind walker:6 --kind brute:1 --threads 2 \
        --players-csv "$out/$name.players.csv"
      chase_free "$map" "$out/$name.csv" "$out/$name.players.csv" | tee "$out/$name.txt"
    done
  done
fi
if has oneside; then
  run oneside "$out/open96.map" 1800 10 -- --agents 1000 --spawn-rect 1,1,30,95 "${kinds[@]}" --player 60.5,48.5 --threads 2
  analyze oneside "$out/open96.map" 60.5,48.5
  # The family: from the top, from a corner (farther, and the pile must wrap a wider angle), with
  # the server's spawn weights (3:6:1), and walkers only.
  run oneside_top "$out/open96.map" 1800 10 -- --agents 1000 --spawn-rect 1,1,95,25 "${kinds[@]}" --player 48.5,60.5 --threads 2
  analyze oneside_top "$out/open96.map" 48.5,60.5
  run oneside_corner "$out/open96.map" 1800 10 -- --agents 1000 --spawn-rect 1,1,35,35 "${kinds[@]}" --player 70.5,70.5 --threads 2
  analyze oneside_corner "$out/open96.map" 70.5,70.5
  run oneside_weights "$out/open96.map" 1800 10 -- --agents 1000 --spawn-rect 1,1,30,95 --kind runner:3 --kind walker:6 --kind brute:1 --player 60.5,48.5 --threads 2
  analyze oneside_weights "$out/open96.map" 60.5,48.5
  run oneside_walkers "$out/open96.map" 1800 10 -- --agents 1000 --spawn-rect 1,1,30,95 --kind walker --player 60.5,48.5 --threads 2
  analyze oneside_walkers "$out/open96.map" 60.5,48.5
fi
if has big; then
  run big "$out/open256.map" 2700 30 -- --agents 10000 "${kinds[@]}" --player 128.5,128.5 --threads 2
  analyze big "$out/open256.map" 128.5,128.5
fi
if has street; then
  map=$shared/data/maps/street/Paris_1_256.map
  run street "$map" 1800 10 -- --agents 4000 --kind runner:3 --kind walker:6 --kind brute:1 --player 99.5,93.5 --threads 2
  analyze street "$map" 99.5,93.5
fi
if has march; then
  # A block of 600 walkers marching on open ground to a standing player in range of the any-angle
  # field (march_near, ~85 cells) and beyond it (march_far, ~225 cells, where class 1 follows the
  # smoothed eight-direction flow). Figures: per 2 s, the share at >= 90% and < 10% of max speed.
  run march_near "$out/open128.map" 900 10 -- --agents 600 --kind walker --spawn-rect 20,46,40,82 --player 120.5,64.5 --threads 2
  run march_far "$out/open256.map" 900 10 -- --agents 600 --kind walker --spawn-rect 5,110,25,146 --player 250.5,128.5 --threads 2
  # The same march from a packed block: 3,500 walkers in 55 x 32 cells (~85% of hexagonal
  # density), the state a chasing horde's trailing band is in. Half as many set off at once; this
  # one sets off row by row from the front (the chase's trailing band stands for the same reason).
  run march_dense "$out/open256.map" 900 10 -- --agents 3500 --kind walker --spawn-rect 5,110,60,142 --player 250.5,128.5 --threads 2
  for name in march_near march_far march_dense; do
    "$py" - "$out/$name.csv" <<'PY' | tee "$out/$name.txt"
import sys, numpy as np
rows = np.genfromtxt(sys.argv[1], delimiter=",", skip_header=1, usecols=(0, 3, 5, 6))
print(sys.argv[1].rsplit("/", 1)[-1])
for t in range(60, int(rows[:, 0].max()) + 1, 60):
    f = rows[rows[:, 0] == t]
    rel = np.hypot(f[:, 2], f[:, 3]) / 3.0
    print(f"  t {t / 30:4.0f} s  x {f[:, 1].min():5.0f}..{f[:, 1].max():5.0f}  share>=0.9 {np.mean(rel >= 0.9):.2f}  <0.1 {np.mean(rel < 0.1):.2f}")
PY
  done
fi
say "figures and pictures in $out/"
