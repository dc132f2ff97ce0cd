#!/usr/bin/env python3
"""Figures of crowd_scenes.sh's gap wall (96 x 64: a wall on x = 40, a 1-cell gap at y = 16, the
wider opening from y = 46) from a `swarmfield-tool sim --csv` of it, sampled every few ticks:

  - per kind: the share through by 150 s, and how many through the gap / the opening;
  - brutes held by the gap: those slower than 0.3 of their top speed within 5 cells of the gap's
    mouth, on its side, for 2 s or more in a row (how many; the longest run): issue 19's "0 brutes
    waiting in the 1-cell gap's queue";
  - the gap's longest stall: runners and walkers queued within 2.5 cells of its mouth and none
    passing (to the sampling's resolution).

  gap_figures.py CSV [--gap-y Y] [--wall-x X]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs

TICK_HZ = 30.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--gap-y", type=float, default=16.5, help="the gap's centre row, world units (16.5)")
    ap.add_argument("--wall-x", type=float, default=40.0, help="the wall's west face, world units (40)")
    a = ap.parse_args()
    d = cs.read_csv(a.csv)
    ticks = d["ticks"]
    _, vmax = cs.kind_arrays(d["kind"])
    kinds = np.array(d["kind"])
    n = len(kinds)
    far_side = a.wall_x + 1.0
    crossed = np.full(n, -1)
    cross_y = np.zeros(n)
    brute = kinds == "brute"
    small = ~brute
    run = np.zeros(n)
    longest = np.zeros(n)
    stall = worst_stall = 0
    prev_x = prev_t = None
    for i, t in enumerate(ticks):
        x, y = d["x"][i], d["y"][i]
        now = (crossed < 0) & (x >= far_side)
        crossed[now] = t
        cross_y[now] = y[now]
        if prev_t is not None:
            step = t - prev_t
            speed = np.hypot(d["vx"][i], d["vy"][i]) / vmax
            held = brute & (x < a.wall_x + 1.0) & (np.hypot(x - a.wall_x, y - a.gap_y) < 5.0) & (speed < 0.3)
            run = np.where(held, run + step, 0)
            longest = np.maximum(longest, run)
            passed = np.any(small & (prev_x < far_side) & (x >= far_side) & (np.abs(y - a.gap_y) < 2.0))
            queued = np.any(small & (x < a.wall_x) & (np.hypot(x - a.wall_x, y - a.gap_y) < 2.5))
            stall = stall + step if queued and not passed else 0
            worst_stall = max(worst_stall, stall)
        prev_x, prev_t = x, t
    limit = 150 * TICK_HZ
    for k in ("runner", "walker", "brute"):
        m = kinds == k
        if not m.any():
            continue
        c, cy = crossed[m], cross_y[m]
        through = (c >= 0) & (c <= limit)
        via_gap = int(np.sum((c >= 0) & (np.abs(cy - a.gap_y) < 8.0)))
        print(f"{k}: {int(m.sum())} agents, through by 150 s {through.mean():.3f}, via the gap {via_gap}, "
              f"via the opening {int(np.sum(c >= 0)) - via_gap}")
    b = longest[brute] / TICK_HZ
    print(f"brutes held by the gap (< 0.3 of top speed within 5 cells, its side) >= 2 s: {int(np.sum(b >= 2.0))}, "
          f"longest {b.max() if b.size else 0.0:.1f} s; the gap's longest stall with a queue {worst_stall / TICK_HZ:.1f} s")


if __name__ == "__main__":
    main()
