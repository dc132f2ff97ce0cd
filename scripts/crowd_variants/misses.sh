#!/usr/bin/env bash
# Variants of issue 19's scene families that miss a target on the 2026-12-06 build (a fresh
# session's sweep of 150 variants; most pass). Each: the map (scene.py), a run of swarmfield-tool
# sim (a CSV every 10 ticks plus every tick of the last 150) and its figures (scene.py m*).
#   scripts/crowd_variants/misses.sh [--bin DIR] [--out DIR] [--only room60,cornerdoors,gap600,street,surround,corridor,gapnear,gapfar,doornear,doornear2,doornear2mixed,corridor2]
# Needs python3 with numpy and matplotlib, and ../shared beside the checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build/bin
out=out/crowd_variants
only="room60,cornerdoors,gap600,street,surround,corridor,gapnear,gapfar,doornear,doornear2,doornear2mixed,corridor2"
# shellcheck source=options.sh
source "$here/options.sh"
crowd_options 2,7 1 "$@"
has() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
run() {  # NAME MAP TICKS -- sim args
  local name=$1 map=$2 ticks=$3; shift 4
  echo "== $name: swarmfield-tool sim $map --ticks $ticks $*"
  "$tool" sim "$map" --ticks "$ticks" --csv /dev/stdout --csv-every 1 --no-progress "$@" |
    awk -F, -v E=10 -v T="$ticks" 'NR==1 || ($1 ~ /^[0-9]+$/ && ($1 % E == 0 || $1 > T - 150))' > "$out/$name.csv"
}
K3="--kind runner --kind walker --kind brute"
shared_street=$here/../../../shared/data/maps/street
if has room60; then
  # A room 60 cells inside, mixed kinds, seed 7: on the sweep's build a resting brute tail along
  # the south wall reached the S door, its mouth stood still from ~42 s and 9 walkers never got
  # out; since sleep (2026-12-06) it empties in 43 s (kept: it is chaotic, watch it).
  $py "$here/scene.py" door "$out/room60.map" --lo 18 --hi 79 --doors N:48,S:48,W:48,E:48 --players "4.5,91.5;91.5,4.5" > /dev/null
  run room60 "$out/room60.map" 3000 -- --agents 2000 --spawn-rect 1,1,95,95 $K3 --player 4.5,91.5 --player 91.5,4.5 --seed 7 --threads 2
  $py "$here/scene.py" mdoor "$out/room60.map" "$out/room60.csv"
fi
if has cornerdoors; then
  # 1-cell doors flush at a corner, mixed kinds: a brute wedged in the corner in front of a door
  # held it 6 s (seeds 1 and 3 of 1-8); since make_way's corner rule and the held-by-contact rule
  # (2026-12-06) seed 7 still stalls 2.7 s, the others 0.7-1.7 s.
  $py "$here/scene.py" door "$out/cornerdoors.map" --doors N:29,S:66,W:66,E:29 --players "4.5,4.5;91.5,91.5;4.5,91.5;91.5,4.5" > /dev/null
  run cornerdoors "$out/cornerdoors.map" 3000 -- --agents 2000 --spawn-rect 1,1,95,95 $K3 --player 4.5,4.5 --player 91.5,91.5 --player 4.5,91.5 --player 91.5,4.5 --seed 7 --threads 2
  $py "$here/scene.py" mdoor "$out/cornerdoors.map" "$out/cornerdoors.csv"
fi
if has gap600; then
  # The gap wall with a 2-cell opening and 600 mixed: brutes flush on the wall beside the 1-cell
  # gap, yielding to its queue, held it 12 s (21-33 s); since a held-up brute shoves through a
  # smaller kind's queue on another route (2026-12-06) 3.3 s, brutes slow by the gap up to 4.3 s;
  # since brutes held by another route's crowd go round it, brutes waiting 1.3 s, the longest
  # stall 2.0 s (seeds 1-12: stalls over 2 s in 4, up to 6.4 s; gap_figures.py measures them)
  # (target: 0 brutes in the gap's queue, no stall over 2 s). Since brutes go through another
  # route's crowd (drop_bulldozed, 2026-12-07): seeds 1-12, 0 brutes held >= 2 s, stalls 0.3-1.7 s.
  # Still missed here: the brutes need over 150 s through the 2-cell opening (55-71% through).
  $py "$here/scene.py" gap "$out/gap600.map" --open 46,47 > /dev/null
  run gap600 "$out/gap600.map" 4500 -- --agents 600 $K3 --player 60.5,16.5 --spawn-rect 1,1,39,63 --threads 2
  $py "$here/scene.py" mgap "$out/gap600.map" "$out/gap600.csv"
  $py "$here/probe_gap.py" "$out/gap600.map" "$out/gap600.csv"
fi
if has street; then
  # 3,000 mixed round a standing player on Boston_0_256: brutes walking away from it for 2.7-5.7 s
  # with a free downhill step, and pairs overlapping past 10% of the smaller radius away from walls.
  run street "$shared_street/Boston_0_256.map" 1800 -- --agents 3000 $K3 --player 148.5,166.5 --threads 2
  $py "$here/scene.py" mstreet "$shared_street/Boston_0_256.map" "$out/street.csv" --player 148.5,166.5
fi
if has corridor; then
  # The player in a room reached through a 3-cell corridor 29 cells long (a helper's level-designer
  # sweep, 2026-12-06): the agents that come out first rest in a line from the corridor's mouth to
  # the pile, the rest rest behind them in the corridor, and from ~45 s nobody enters the room
  # while most of it is empty (600 walkers: 325 in by 55 s, none after; 400 mixed: 179 by 65 s,
  # ~100 brutes packed at the spawn side of the corridor). The rest chain: the
  # agents in the line are held by the resting one ahead, the walk round takes only the blocker's
  # tangent on the goal's side (the line's other row) and an agent at rest never walks round.
  # Since the walk round on wide open ground and the pile profile's fullness rule (2026-12-07):
  # 588 walkers / 300 mixed in the room at 90 s; seeds 3 and 4 still stalled (452, 416) on a
  # resting tongue from the mouth to the pile. Since resting agents in a tongue walk round
  # (later that day): 561 / 304, seeds 2-4 600 / 600 / 600.
  $py "$here/scene.py" corridor "$out/corridor.map" > /dev/null
  run corridor "$out/corridor.map" 2700 -- --agents 600 --kind walker --player 80.5,25.5 --spawn-rect 1,1,36,49 --threads 2
  $py "$here/scene.py" mroom "$out/corridor.map" "$out/corridor.csv"
  run corridor_mixed "$out/corridor.map" 2700 -- --agents 400 $K3 --player 80.5,25.5 --spawn-rect 1,1,36,49 --threads 2
  $py "$here/scene.py" mroom "$out/corridor.map" "$out/corridor_mixed.csv"
fi
if has gapnear; then
  # The gap wall with the player 3 cells past the 1-cell gap, runners and walkers only (a helper's
  # level-designer sweep, 2026-12-07): ~45 agents reach the player in the first 10 s, their small
  # pile round the player seals the gap's exit (its agents at rest, the pile round, so nothing
  # levels), and ~510 stand at rest behind the wall to the end while the 3-cell opening 30 cells
  # south stays free (44-84 of 600 through by 150 s, seeds 1-3, before and after that day's
  # changes). With brutes too, or the player 8 cells past the gap, the gap corks from 12-57 s.
  # Since plugged passages (2026-12-07, crowd README): seeds 1-6 182-498 east of the wall at 150 s
  # (seed 2 420); since routes are marked to 64 cells, a way out may lead onto an unplugged route
  # at any turn and a plug costs 200 (later that day) 559-587, what a pile of 600 holds there.
  $py "$here/scene.py" gap "$out/gapnear.map" --player 43.5,16.5 > /dev/null
  run gapnear "$out/gapnear.map" 4500 -- --agents 600 --kind runner --kind walker --player 43.5,16.5 --spawn-rect 1,1,39,63 --seed 2 --threads 2
  $py "$here/gap_figures.py" "$out/gapnear.csv"
fi
if has gapfar; then
  # gapnear with the wide opening 40 cells south of the gap (2026-12-07): 23-28 of 600 east of the
  # wall at 150 s with the plug worth 60 (seeds 1-3; ~270 stayed queued at the plugged gap, whose
  # detour of ~80 cells cost more), 579-586 with 200 (test `F2 far`).
  $py "$here/scene.py" gap "$out/gapfar.map" --open 56,57,58 --player 43.5,16.5 > /dev/null
  run gapfar "$out/gapfar.map" 4500 -- --agents 600 --kind runner --kind walker --player 43.5,16.5 --spawn-rect 1,1,39,63 --seed 2 --threads 2
  $py "$here/gap_figures.py" "$out/gapfar.csv"
fi
if has doornear; then
  # The door room of crowd_scenes.sh with one player 2.5 cells outside its N door, 2,000 walkers
  # (2026-12-07): the N door plugs and the room's crowd queued behind it; 551 / 575 still inside at
  # 90 s (seeds 1-2) before a way out could lead onto an unplugged route, 67 / 60 after (a line
  # resting behind the plugged door). Test `F1 near`.
  $py "$here/scene.py" door "$out/doornear.map" --players "47.5,25.5" > /dev/null
  run doornear "$out/doornear.map" 2700 -- --agents 2000 --spawn-rect 1,1,95,95 --kind walker --player 47.5,25.5 --seed 1 --threads 2
  $py "$here/scene.py" mdoor "$out/doornear.map" "$out/doornear.csv"
fi
if has doornear2; then
  # doornear with 2-cell doors (2026-12-07): the room was a short cut to the player for the walkers
  # south of it, who came in by the S, W and E doors and stood behind the N door, one of its cells
  # holding an agent at rest and the other one held still (1,096 / 1,123 / 1,116 inside at 90 s,
  # seeds 1-3); since 2-cell passages plug and a held agent beside a plug plugs too: 16 / 11 / 19.
  $py "$here/scene.py" door "$out/doornear2.map" --dw 2 --players "47.5,25.5" > /dev/null
  run doornear2 "$out/doornear2.map" 2700 -- --agents 2000 --spawn-rect 1,1,95,95 --kind walker --player 47.5,25.5 --seed 1 --threads 2
  $py "$here/scene.py" mdoor "$out/doornear2.map" "$out/doornear2.csv"
fi
if has doornear2mixed; then
  # doornear2 with runners, walkers and brutes, 150 s (2026-12-07, later): the brutes in the
  # room, bound for the plugged N door, walked its floor at full speed between the congestion
  # way (out of sight of the player) and the straight line (in the cone it sees through the N
  # door): 150-186 inside at 150 s, 22-73 faster than 1 cell/s, seeds 1-6; since larger kinds
  # take a plugged queue's way out also in sight, 54-100 inside, 7-22 moving. Seed 1: 178 left
  # inside (72 brutes) -> 97 (31) since brutes near walls, out of sight of the player, take turns
  # by who is in front and back off for one with the way (goes_first, GatherSums::bx).
  $py "$here/scene.py" door "$out/doornear2mixed.map" --dw 2 --players "47.5,25.5" > /dev/null
  run doornear2mixed "$out/doornear2mixed.map" 4500 -- --agents 2000 --spawn-rect 1,1,95,95 $K3 --player 47.5,25.5 --seed 1 --threads 2
  $py "$here/scene.py" mdoor "$out/doornear2mixed.map" "$out/doornear2mixed.csv"
fi
if has corridor2; then
  # The corridor room with a corridor 2 cells wide and 40 long and brute-heavy kinds (the same
  # sweep): brutes in single file fill the corridor and the room fills at 1-2 agents a second:
  # 207 of 1,000 in it by 150 s (the helper's map, the player 3 cells nearer the mouth: ~105, the
  # mouth passing nobody from ~78 s), while the room is mostly empty (before and after that
  # day's changes).
  $py "$here/scene.py" corridor "$out/corridor2.map" --cw 2 --clen 40 > /dev/null
  run corridor2 "$out/corridor2.map" 4500 -- --agents 1000 --kind runner --kind walker --kind brute:2 --player 91.5,25.5 --spawn-rect 1,1,36,49 --seed 1 --threads 2
  $py "$here/scene.py" mroom "$out/corridor2.map" "$out/corridor2.csv"
fi
if has surround; then
  # 600 mixed round a standing player on open 96: at rest within 5 s of arrival was 0.85-0.87
  # (target >= 0.9; brutes on the rim stepping round into the pile and pushed out again); 0.99
  # since the kernel rule for touched neighbours at rest (2026-12-06). Kept as a check.
  $py "$here/scene.py" open "$out/open96.map" --W 96 > /dev/null
  run surround "$out/open96.map" 1800 -- --agents 600 $K3 --player 48.5,48.5 --seed 1 --threads 2
  $py "$here/scene.py" mpile "$out/open96.map" "$out/surround.csv" --player 48.5,48.5
fi
