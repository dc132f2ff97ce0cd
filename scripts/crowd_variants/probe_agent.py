import os, sys, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs
mapp, csvp, aid, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
px, py = map(float, sys.argv[6].split(","))
b = cs.read_map(mapp); d = cs.read_csv(csvp); r, v = cs.kind_arrays(d["kind"]); k = np.array(d["kind"])
j = int(np.nonzero(d["ids"] == aid)[0][0]); c = int(np.ceil(2 * r[j] - 1e-6))
gx, gy = cs.ref_block(np.array([px]), np.array([py]), c)
F = cs.octile_dist(cs.passable_for(b, c), [(int(gx[0]), int(gy[0]))])
for i, t in enumerate(d["ticks"]):
    if t0 * 30 <= t <= t1 * 30 and t % 10 == 0:
        x, y = d["x"][i, j], d["y"][i, j]
        bx, by = cs.ref_block(np.array([x]), np.array([y]), c); bx, by = int(bx[0]), int(by[0])
        # downhill direction of the field at the block
        best = min(((F[by+dy, bx+dx], dx, dy) for dx in (-1,0,1) for dy in (-1,0,1)), key=lambda q: q[0])
        D = np.hypot(d["x"][i] - x, d["y"][i] - y) - r - r[j]
        nb = np.nonzero((D < 0.3) & (np.arange(len(D)) != j))[0]
        print(f"{t/30:5.1f}s pos ({x:.1f},{y:.1f}) v ({d['vx'][i,j]:+.2f},{d['vy'][i,j]:+.2f}) field {F[by,bx]:.1f} downhill step ({best[1]:+d},{best[2]:+d}) "
              f"touching {len(nb)}: " + " ".join(f"{k[q][0]}@({d['x'][i,q]-x:+.1f},{d['y'][i,q]-y:+.1f})" for q in nb[:6]))
