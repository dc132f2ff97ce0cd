import os, sys, json, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs
sys.path.insert(0, HERE)
import scene
mapp, csvp, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
meta = json.load(open(mapp + ".json")); d = cs.read_csv(csvp)
X, Y = scene.inv_pts(d["x"], d["y"], meta["W"], meta["H"], meta["ops"])
cx, cy = meta["wallx"] + 0.5, meta["gapy"] + 0.5
k = np.array(d["kind"])
for i, t in enumerate(d["ticks"]):
    if t0 * 30 <= t <= t1 * 30 and t % 30 == 0:
        D = np.hypot(X[i] - cx, Y[i] - cy); m = np.nonzero((D < 3.2) & (X[i] < cx + 1))[0]
        sp = np.hypot(d["vx"][i], d["vy"][i])
        print(f"{t/30:5.1f}s " + " ".join(f"{k[j][0]}({X[i,j]-cx:+.1f},{Y[i,j]-cy:+.1f}|{sp[j]:.1f})" for j in m[np.argsort(D[m])][:8]))
