#!/usr/bin/env python3
"""How much of a crowd could reach its player within T seconds at all: for each agent, the exact
(octile, no corner cutting) path distance of its size class from where it is in the CSV's first
frame to the player, over its kind's top speed (crowd_scene.py's kinds), with no crowd in the
way. A bound for "x% at rest by T s" targets: agents that cannot arrive cannot rest.

  reach.py MAP CSV X,Y [T ...]     (default T: 30 45 55 60)
"""
import math, os, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    mapp, csvp = sys.argv[1], sys.argv[2]
    px, py = map(float, sys.argv[3].split(","))
    limits = [float(t) for t in sys.argv[4:]] or [30.0, 45.0, 55.0, 60.0]
    blocked = cs.read_map(mapp)
    d = cs.read_csv(csvp)
    r, vmax = cs.kind_arrays(d["kind"])
    kinds = np.array(d["kind"])
    cls = np.array([int(math.ceil(2 * ri - 1e-6)) for ri in r])
    h, w = blocked.shape
    fields = {}
    for c in sorted(set(cls.tolist())):
        gx, gy = cs.ref_block(np.array([px]), np.array([py]), c)
        fields[c] = cs.octile_dist(cs.passable_for(blocked, c), [(int(gx[0]), int(gy[0]))])
    need = np.full(len(r), np.inf)
    for i in range(len(r)):
        c = int(cls[i])
        bx, by = cs.ref_block(np.array([d["x"][0][i]]), np.array([d["y"][0][i]]), c)
        bx, by = int(np.clip(bx[0], 0, w - 1)), int(np.clip(by[0], 0, h - 1))
        dist = fields[c][by, bx]
        if not np.isfinite(dist):  # a disc pressed on a wall: its best neighbouring block
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    dist = min(dist, fields[c][np.clip(by + dy, 0, h - 1), np.clip(bx + dx, 0, w - 1)] + math.hypot(dx, dy))
        need[i] = dist / vmax[i]
    print(f"agents {len(r)}; time to the player at full speed, no crowd: median {np.median(need):.1f} s")
    for t in limits:
        per_kind = " ".join(f"{k} {np.mean(need[kinds == k] <= t):.3f}" for k in sorted(set(kinds.tolist())))
        print(f"  within {t:g} s: {np.mean(need <= t):.3f} ({per_kind})")


if __name__ == "__main__":
    main()
