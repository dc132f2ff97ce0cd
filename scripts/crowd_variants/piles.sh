#!/usr/bin/env bash
# Pile variants of issue 19's standing-player families, for comparing two builds: 300 / 1,000 /
# 3,000 agents round a player in the open, a player 3 cells from a wall, arrival from one side;
# walkers or the server's weights (runner:3 walker:6 brute:1); seeds 1 and 2. 20 runs of
# swarmfield-tool sim (60 s, 1 thread each, two at a time), each measured by scene.py mpile (rg,
# sectors, beyond R_hex + 3, rest_final, rest5, stuck, pair overlaps); OUT/all.txt lists them.
#   scripts/crowd_variants/piles.sh [--bin DIR] [--out DIR]
# Needs python3 with numpy and matplotlib, and ../shared beside the checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build/bin
out=out/crowd_piles
# shellcheck source=options.sh
source "$here/options.sh"
crowd_options 2,8 0 "$@"
"$py" "$here/scene.py" open "$out/open96.map" --W 96 > /dev/null
"$py" "$here/scene.py" open "$out/open128.map" --W 128 > /dev/null
runs=()
for seed in 1 2; do
  for kinds in walk mix; do
    k="--kind walker"
    [ "$kinds" = mix ] && k="--kind runner:3 --kind walker:6 --kind brute:1"
    runs+=("s300_${kinds}_$seed open96 48.5,48.5 --agents 300 $k --seed $seed")
    runs+=("s1000_${kinds}_$seed open96 48.5,48.5 --agents 1000 $k --seed $seed")
    runs+=("s3000_${kinds}_$seed open128 64.5,64.5 --agents 3000 $k --seed $seed")
    runs+=("wall_${kinds}_$seed open96 48.5,3.5 --agents 800 $k --seed $seed")
    runs+=("side_${kinds}_$seed open96 48.5,48.5 --agents 800 $k --spawn-rect 1,1,30,95 --seed $seed")
  done
done
one() {  # NAME MAP PLAYER sim args...
  local name=$1 map=$2 player=$3; shift 3
  "$tool" sim "$out/$map.map" --ticks 1800 --csv "$out/$name.csv" --csv-every 10 --no-progress \
    --player "$player" "$@" --threads 1 > /dev/null
  echo "$name $("$py" "$here/scene.py" mpile "$out/$map.map" "$out/$name.csv" --player "$player" | tail -1)" > "$out/$name.txt"
  rm -f "$out/$name.csv"
}
for ((i = 0; i < ${#runs[@]}; i += 2)); do
  # shellcheck disable=SC2086  # each entry is a word list on purpose
  one ${runs[$i]} &
  # shellcheck disable=SC2086
  if [ $((i + 1)) -lt ${#runs[@]} ]; then one ${runs[$((i + 1))]}; fi
  wait
  echo "piles: $((i + 2 < ${#runs[@]} ? i + 2 : ${#runs[@]})) of ${#runs[@]} runs" >&2
done
cat "$out"/*.txt > "$out/all.txt"
echo "piles: figures in $out/all.txt" >&2
