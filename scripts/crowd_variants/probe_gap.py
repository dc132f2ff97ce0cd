import os, sys, json, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs
sys.path.insert(0, HERE)
import scene
mapp, csvp = sys.argv[1], sys.argv[2]
meta = json.load(open(mapp + ".json")); d = cs.read_csv(csvp)
X, Y = scene.inv_pts(d["x"], d["y"], meta["W"], meta["H"], meta["ops"])
k = np.array(d["kind"]); wx = meta["wallx"]; gy = meta["gapy"]; op = meta["opening"]
r, vmax = cs.kind_arrays(d["kind"])
sp = np.hypot(d["vx"], d["vy"]) / vmax
T = d["ticks"]
past = X > wx + 1
for t in range(0, int(T[-1]) + 1, 300):
    i = int(np.searchsorted(T, t))
    nearop = (X[i] < wx) & (np.abs(Y[i] - np.mean(op) - 0.5) < 12) & (X[i] > wx - 20)
    b = k == "brute"
    print(f"{t/30:5.0f}s past: brute {int((past[i]&b).sum()):3d} small {int((past[i]&~b).sum()):3d} | brutes on spawn side within 20 of opening {int((nearop&b).sum()):3d}, "
          f"of them at rest(<2%) {int((nearop&b&(sp[i]<0.02)).sum()):3d}; brutes past the wall at rest & >8 cells from any other agent past: "
          f"{int(sum(1 for j in np.nonzero(past[i]&b&(sp[i]<0.02))[0] if np.sort(np.hypot(X[i]-X[i,j],Y[i]-Y[i,j]))[1] > 2.0))}")
# per 10 s: crossings via gap / via opening, by kind class; longest gap stall with a queue
tc = np.full(len(k), np.inf); yc = np.full(len(k), np.nan); lastY = Y[0].copy()
for i in range(1, len(T)):
    n = past[i] & ~np.isfinite(tc); tc[n] = T[i] / 30; yc[n] = lastY[n]; lastY[~past[i]] = Y[i, ~past[i]]
viag = np.abs(yc - gy - 0.5) < 2
b = k == "brute"
print("per 10 s  small via gap | small via opening | brutes via opening")
print(" ".join(f"{int(((tc>=t)&(tc<t+10)&viag&~b).sum())}" for t in range(0, int(T[-1]/30), 10)))
print(" ".join(f"{int(((tc>=t)&(tc<t+10)&~viag&~b).sum())}" for t in range(0, int(T[-1]/30), 10)))
print(" ".join(f"{int(((tc>=t)&(tc<t+10)&~viag&b).sum())}" for t in range(0, int(T[-1]/30), 10)))
q = ((X < wx) & (np.hypot(X - wx, Y - gy - 0.5) < 2.5) & ~b[None, :]).sum(1) > 0
gt = np.sort(tc[viag & ~b]); st = 0; best = (0, 0); s0 = None
for i in range(1, len(T)):
    crossed = np.any((gt > T[i-1]/30) & (gt <= T[i]/30))
    if crossed or not q[i]: s0 = None; continue
    if s0 is None: s0 = T[i-1]/30
    if T[i]/30 - s0 > best[0]: best = (T[i]/30 - s0, s0)
print(f"gap: longest interval with small agents queued at the gap and none passing: {best[0]:.1f}s from {best[1]:.1f}s")
