#!/usr/bin/env python3
"""Variant scenes for swarmfield: build maps (+ meta json) and measure door / gap / oneside /
surround / street figures from swarmfield-tool sim CSVs.

  scene.py door  OUT.map [--W 96 --lo 28 --hi 67 --doors N:47,S:47,W:47,E:47 --dw 1] [--tf T,MX]
  scene.py gap   OUT.map [--gapy 16 --open 46,47,48 --wallx 40 --W 96 --H 64] [--tf T,MX]
  scene.py open  OUT.map --W 96
  scene.py corridor OUT.map [--cw 3 --clen 29]   (a spawn room, a corridor, the player's room)
  scene.py mdoor MAP CSV     (meta from MAP.json)
  scene.py mgap  MAP CSV
  scene.py mpile MAP CSV --player X,Y   (one-sided / surround extras)
  scene.py mstreet MAP CSV --player X,Y (walk-away runs, pair overlap away from walls)
  scene.py mroom MAP CSV     (corridor: agents in the player's room over time, empty cells near it)
Transforms (applied in order to the base scene): T transpose, MX mirror x, MY mirror y.
Positions are mapped back to the base frame for measuring.
"""
import argparse, json, math, os, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../shared/tools"))  # ../shared beside the checkout
import crowd_scene as cs


def write(path, g, meta):
    with open(path, "w") as f:
        f.write(f"type octile\nheight {len(g)}\nwidth {len(g[0])}\nmap\n" + "\n".join("".join(r) for r in g) + "\n")
    json.dump(meta, open(path + ".json", "w"), indent=1)


def open_map(w, h):
    g = [["."] * w for _ in range(h)]
    for x in range(w): g[0][x] = g[h - 1][x] = "@"
    for y in range(h): g[y][0] = g[y][w - 1] = "@"
    return g


def tf_grid(g, ops):
    for op in ops:
        if op == "T":
            g = [list(r) for r in zip(*g)]
        elif op == "MX":
            g = [r[::-1] for r in g]
        elif op == "MY":
            g = g[::-1]
    return g


def tf_pt(x, y, W, H, ops):
    """base-frame continuous point -> transformed frame"""
    for op in ops:
        if op == "T":
            x, y, W, H = y, x, H, W
        elif op == "MX":
            x = W - x
        elif op == "MY":
            y = H - y
    return x, y


def inv_pts(X, Y, W, H, ops):
    """transformed-frame arrays -> base frame"""
    dims = [(W, H)]
    for op in ops:
        w, h = dims[-1]
        dims.append((h, w) if op == "T" else (w, h))
    for k in range(len(ops) - 1, -1, -1):
        op = ops[k]; w, h = dims[k + 1]
        if op == "T":
            X, Y = Y, X
        elif op == "MX":
            X = w - X
        elif op == "MY":
            Y = h - Y
    return X, Y


def tf_rect(r, W, H, ops):
    a = tf_pt(r[0], r[1], W, H, ops); b = tf_pt(r[2], r[3], W, H, ops)
    return [min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])]


def build_door(a):
    W = a.W; lo, hi = a.lo, a.hi
    g = open_map(W, W)
    for i in range(lo, hi + 1): g[lo][i] = g[hi][i] = g[i][lo] = g[i][hi] = "@"
    doors = []
    for spec in a.doors.split(","):
        side, off = spec.split(":"); off = int(off)
        cells = []
        for k in range(a.dw):
            c = off + k
            if side == "N": g[lo][c] = "."; cells.append((c, lo))
            if side == "S": g[hi][c] = "."; cells.append((c, hi))
            if side == "W": g[c][lo] = "."; cells.append((lo, c))
            if side == "E": g[c][hi] = "."; cells.append((hi, c))
        cx = np.mean([c[0] for c in cells]) + 0.5; cy = np.mean([c[1] for c in cells]) + 0.5
        doors.append({"side": side, "cells": cells, "cx": cx, "cy": cy})
    ops = [o for o in a.tf.split(",") if o]
    players = [tf_pt(float(p.split(",")[0]), float(p.split(",")[1]), W, W, ops) for p in a.players.split(";")]
    meta = {"kind": "door", "W": W, "H": W, "lo": lo, "hi": hi, "doors": doors, "dw": a.dw, "ops": ops,
            "players": players, "spawn": [1, 1, W - 1, W - 1]}
    write(a.out, tf_grid(g, ops), meta)
    print(" ".join(f"--player {x:g},{y:g}" for x, y in players), f"--spawn-rect 1,1,{W-1},{W-1}")


def build_gap(a):
    W, H, wx = a.W, a.H, a.wallx
    g = open_map(W, H)
    for y in range(H): g[y][wx] = "@"
    g[a.gapy][wx] = "."
    opening = [int(v) for v in a.open.split(",")] if a.open else []
    for y in opening: g[y][wx] = "."
    ops = [o for o in a.tf.split(",") if o]
    px, py = [float(v) for v in a.player.split(",")]
    p = tf_pt(px, py, W, H, ops)
    sp = tf_rect([1, 1, wx - 1, H - 1], W, H, ops)
    meta = {"kind": "gap", "W": W, "H": H, "wallx": wx, "gapy": a.gapy, "opening": opening, "ops": ops,
            "players": [p], "spawn": sp}
    Wt, Ht = (H, W) if ops.count("T") % 2 else (W, H)
    write(a.out, tf_grid(g, ops), meta)
    print(f"--player {p[0]:g},{p[1]:g} --spawn-rect {sp[0]:g},{sp[1]:g},{sp[2]:g},{sp[3]:g}")


def build_corridor(a):
    """A 35 x 48 spawn room (x 1..35), a corridor `cw` cells wide and `clen` long, and a 26 x 31
    room beyond it with the player 15 cells from the corridor's mouth (a level designer's room
    behind a passage; a helper's sweep of 2026-12-06 found the horde froze there)."""
    x0 = 36 + a.clen                      # the player's room starts here
    W, H = x0 + 26 + 1, 50
    g = [["@"] * W for _ in range(H)]
    for y in range(1, 49):
        for x in range(1, 36): g[y][x] = "."
    c0 = 25 - a.cw // 2
    for y in range(c0, c0 + a.cw):
        for x in range(36, x0): g[y][x] = "."
    for y in range(10, 41):
        for x in range(x0, x0 + 26): g[y][x] = "."
    p = [x0 + 15.5, 25.5]
    meta = {"kind": "corridor", "W": W, "H": H, "room_x": x0, "players": [p], "spawn": [1, 1, 36, 49]}
    write(a.out, g, meta)
    print(f"--player {p[0]:g},{p[1]:g} --spawn-rect 1,1,36,49")


def mroom(mapp, csvp):
    """Agents in the player's room every 5 s, the second the count last rose, and at the end the
    share of the room's open cells within 6 cells of the player that no agent's disc touches."""
    meta, d = load(mapp, csvp)
    x0 = meta["room_x"]; px, py = meta["players"][0]
    T = d["ticks"]; n = len(d["x"][0])
    counts = [(int(t) // 30, int(np.sum(d["x"][i] >= x0))) for i, t in enumerate(T) if t % 150 == 0]
    last_rise = 0
    for (t0, c0), (t1, c1) in zip(counts, counts[1:]):
        if c1 > c0: last_rise = t1
    print("in the player's room (s:agents): " + " ".join(f"{t}:{c}" for t, c in counts))
    blocked = cs.read_map(mapp)
    r, _ = cs.kind_arrays(d["kind"])
    X, Y = d["x"][-1], d["y"][-1]
    cells = [(x, y) for y in range(blocked.shape[0]) for x in range(blocked.shape[1])
             if not blocked[y, x] and math.hypot(x + 0.5 - px, y + 0.5 - py) < 6.0]
    empty = sum(1 for x, y in cells if not np.any(np.hypot(X - (x + 0.5), Y - (y + 0.5)) < r + 0.5))
    print(f"agents {n}; in the room at the end {counts[-1][1]}; last rise by {last_rise} s; "
          f"cells within 6 of the player touched by no agent: {empty} of {len(cells)}")


def load(mapp, csvp):
    meta = json.load(open(mapp + ".json")) if mapp else None
    d = cs.read_csv(csvp)
    return meta, d


FIT1 = {"runner", "walker"}


def mdoor(mapp, csvp):
    meta, d = load(mapp, csvp)
    W, H, ops = meta["W"], meta["H"], meta["ops"]
    Hb = W  # square
    lo, hi = meta["lo"], meta["hi"]
    T = d["ticks"]; X, Y = inv_pts(d["x"], d["y"], W, Hb, ops)
    kinds = np.array(d["kind"])
    fits = np.isin(kinds, list(FIT1)) if meta["dw"] < 2 else np.ones(len(kinds), bool)
    ins = (X > lo + 1) & (X < hi) & (Y > lo + 1) & (Y < hi)
    outs = (X < lo) | (X > hi + 1) | (Y < lo) | (Y > hi + 1)
    doors = meta["doors"]
    nd = len(doors)
    DC = np.array([[dd["cx"], dd["cy"]] for dd in doors])
    # crossings: last non-band state inside -> outside; door = nearest door to the last band/inside position
    state = np.where(ins[0], 1, np.where(outs[0], 0, 2))
    lastpos = np.stack([X[0], Y[0]], 1)
    cross_t = [[] for _ in range(nd)]
    cross_k = [[] for _ in range(nd)]
    started_in = ins[0].copy()
    for i in range(1, len(T)):
        s = np.where(ins[i], 1, np.where(outs[i], 0, 2))
        c = np.nonzero((state == 1) & (s == 0))[0]
        for j in c:
            mid = (lastpos[j] + np.array([X[i, j], Y[i, j]])) / 2
            k = int(np.argmin(np.hypot(DC[:, 0] - mid[0], DC[:, 1] - mid[1])))
            cross_t[k].append(T[i]); cross_k[k].append(kinds[j])
        # in the door band: remember where (for attribution)
        band = s == 2
        lastpos[band] = np.stack([X[i, band], Y[i, band]], 1)
        lastpos[s == 1] = np.stack([X[i, s == 1], Y[i, s == 1]], 1)
        state = np.where(s == 2, state, s)
    # re-entries
    # queue per door: fitting agents inside within 2.5 cells of the door centre
    print(f"agents {len(kinds)} started inside {int(started_in.sum())} (fit {int((started_in & fits).sum())})")
    left = ins[-1] & fits
    left_all = ins[-1]
    print(f"left inside at end t={T[-1]/30:.1f}s: fitting {int(left.sum())}, all {int(left_all.sum())} "
          f"({ {k: int((left_all & (kinds == k)).sum()) for k in sorted(set(kinds))} })")
    if "brute" in set(kinds):
        fast = np.hypot(d["vx"][-1], d["vy"][-1]) > 1.0
        print(f"brutes inside faster than 1 cell/s at the end: {int((left_all & fast & (kinds == 'brute')).sum())}")
    # time the room emptied of fitting agents
    nin = (ins & fits[None, :]).sum(1)
    empt = np.nonzero(nin == 0)[0]
    print(f"room empty of fitting agents at: {T[empt[0]]/30:.1f}s" if len(empt) else "room never empty of fitting agents")
    worst = 0.0
    res = []
    for k, dd in enumerate(doors):
        q = (ins & fits[None, :] & (np.hypot(X - dd["cx"], Y - dd["cy"]) <= 2.5)).sum(1) > 0
        ct = np.array(cross_t[k])
        stall, st0, best_at, qtime, qpass = 0.0, None, None, 0.0, 0
        for i in range(1, len(T)):
            crossed = np.any((ct > T[i - 1]) & (ct <= T[i]))
            if q[i - 1]:
                qtime += (T[i] - T[i - 1]) / 30.0
                qpass += int(np.sum((ct > T[i - 1]) & (ct <= T[i])))
            if crossed:
                st0 = T[i] if q[i] else None
            elif q[i]:
                if st0 is None:
                    st0 = T[i - 1] if q[i - 1] else T[i]
                if (T[i] - st0) / 30.0 > stall:
                    stall = (T[i] - st0) / 30.0; best_at = st0 / 30.0
            else:
                st0 = None
        worst = max(worst, stall)
        rate = qpass / qtime if qtime > 0 else float("nan")
        last = ct.max() / 30.0 if len(ct) else float("nan")
        kk = {kn: cross_k[k].count(kn) for kn in sorted(set(cross_k[k]))}
        print(f"door {dd['side']}@{dd['cells'][0]}: passed {len(ct)} {kk}, queued {qtime:.1f}s, "
              f"passed while queued {qpass} = {rate:.2f}/s, longest stall with queue {stall:.1f}s "
              f"(from {best_at}s), last pass {last:.1f}s")
        res.append({"side": dd["side"], "passed": len(ct), "rate_q": rate, "stall": stall, "stall_from": best_at})
    print(f"WORST stall {worst:.1f}s; min rate while queued {min(r['rate_q'] for r in res if r['rate_q']==r['rate_q']) if any(r['rate_q']==r['rate_q'] for r in res) else float('nan'):.2f}/s")


def mgap(mapp, csvp):
    meta, d = load(mapp, csvp)
    W, H, ops = meta["W"], meta["H"], meta["ops"]
    T = d["ticks"]; X, Y = inv_pts(d["x"], d["y"], W, H, ops)
    kinds = np.array(d["kind"]); wx = meta["wallx"]; gy = meta["gapy"]; op = meta["opening"]
    past = X > wx + 1
    tcross = np.full(len(kinds), np.inf); ycross = np.full(len(kinds), np.nan)
    before = X < wx
    lastY = Y[0].copy()
    for i in range(1, len(T)):
        newp = past[i] & ~np.isfinite(tcross)
        tcross[newp] = T[i] / 30.0
        ycross[newp] = lastY[newp]
        inb = ~past[i]
        lastY[inb] = Y[i, inb]
    via_gap = np.abs(ycross - (gy + 0.5)) < 2.0
    via_open = np.isfinite(ycross) & ~via_gap
    t150 = 150.0
    for k in sorted(set(kinds)):
        m = kinds == k
        n = int(m.sum())
        thr = int((tcross[m] <= t150).sum())
        print(f"{k}: {n}, past the wall by 150s {thr} ({thr / n:.0%}), by end {int(np.isfinite(tcross[m]).sum())}; "
              f"via gap {int(via_gap[m].sum())}, via opening {int(via_open[m].sum())}; "
              f"t(90%) {np.sort(tcross[m])[int(0.9*(n-1))]:.1f}s t(last) {np.max(tcross[m]):.1f}s")
    small = np.isin(kinds, list(FIT1))
    print(f"runners+walkers past by 150s: {np.mean(tcross[small] <= t150):.1%}")
    b = kinds == "brute"
    gapq = b[None, :] & (X < wx) & (np.hypot(X - wx, Y - (gy + 0.5)) <= 4.0)
    sl = np.hypot(d["vx"], d["vy"]) < 0.1
    print(f"brutes within 4 cells of the gap (spawn side): at end {int(gapq[-1].sum())}, max over samples from 10s "
          f"{int(gapq[T >= 300].sum(1).max()) if np.any(T>=300) else 0}, slow ones at end {int((gapq[-1] & sl[-1]).sum())}")
    # dwell: per brute, longest continuous time within 3 cells of the gap (spawn side) below 0.3 cells/s
    near = b[None, :] & (X < wx + 0.5) & (np.hypot(X - wx, Y - (gy + 0.5)) <= 3.0) & (np.hypot(d["vx"], d["vy"]) < 0.3)
    dw = np.zeros(len(kinds)); cur = np.zeros(len(kinds)); t0 = np.zeros(len(kinds))
    for i in range(len(T)):
        cur = np.where(near[i], np.where(cur > 0, cur, 1), 0)
        t0 = np.where(near[i] & (cur == 1) & (t0 < 0), T[i], t0)
        if i == 0:
            start = np.where(near[0], T[0], -1.0)
        else:
            start = np.where(near[i], np.where(near[i - 1], start, T[i]), -1.0)
        dw = np.maximum(dw, np.where(near[i], (T[i] - start) / 30.0, 0))
    print(f"brutes waiting (slow, within 3 cells of the gap) >= 2 s: {int((dw >= 2).sum())}, longest {dw.max():.1f}s")
    # which brutes remain on the spawn side at end, where
    rem = b & ~past[-1]
    if rem.any():
        print("brutes not past at end:", [(round(float(X[-1, j]), 1), round(float(Y[-1, j]), 1)) for j in np.nonzero(rem)[0][:10]], "(base frame)")
    rem = small & ~past[-1]
    if rem.any():
        print(f"small not past at end: {int(rem.sum())}", [(round(float(X[-1, j]), 1), round(float(Y[-1, j]), 1)) for j in np.nonzero(rem)[0][:8]])


def mpile(mapp, csvp, players):
    d = cs.read_csv(csvp)
    res, dd = cs.analyze(mapp, csvp, players, quiet=True)
    r, vmax = cs.kind_arrays(d["kind"])
    X, Y = d["x"][-1], d["y"][-1]
    P = np.array(players)
    dist = np.hypot(X[:, None] - P[None, :, 0], Y[:, None] - P[None, :, 1]).min(1)
    R = res["players"][0]["R_hex"]
    rest = np.hypot(d["vx"][-1], d["vy"][-1]) / vmax < 0.02
    far = rest & (dist > R + 3.0)
    pr = res["players"][0]
    print(f"t={d['ticks'][-1]/30:.0f}s rg_ratio {pr['rg_ratio']} sectors {pr['sectors']}/16 R_hex {R} "
          f"beyond R+3 {np.mean(dist > R + 3):.3f} RESTING beyond R+3: {int(far.sum())} "
          f"({ {k: int((far & (np.array(d['kind']) == k)).sum()) for k in sorted(set(d['kind']))} }) "
          f"rest_final {res['rest_final']} rest5 {res['rest5_share']} (elig {res['rest5_eligible']}) t90_arrive {res['t90_arrive_s']} "
          f"stuck {res['stuck']} pile_share {res['pile_share']} wall_any {res['wall_overlap_max_any']} "
          f"pair_final {res['pair_overlap_max_final']} pairs>0.1 {res['pairs_overlap_gt_0.1']}")
    return res


def sectors_over_time(csvp, players, every=30):
    d = cs.read_csv(csvp)
    r, _ = cs.kind_arrays(d["kind"])
    px, py = players[0]
    out = []
    for i, t in enumerate(d["ticks"]):
        if t % every:
            continue
        dx = d["x"][i] - px; dy = d["y"][i] - py; dd = np.hypot(dx, dy)
        sec = ((np.arctan2(dy, dx) + math.pi) / (2 * math.pi) * 16).astype(int) % 16
        out.append((t / 30, len(set(sec[dd - r - cs.PLAYER_R <= 2.0].tolist()))))
    return out


def mstreet(mapp, csvp, players, every_s=1.0 / 3):
    """Walk-away runs and pair overlaps (away from walls)."""
    blocked = cs.read_map(mapp)
    d = cs.read_csv(csvp)
    T = d["ticks"]; kinds = np.array(d["kind"])
    r, vmax = cs.kind_arrays(d["kind"])
    h, w = blocked.shape
    classes = sorted(set(int(math.ceil(2 * ri - 1e-6)) for ri in r))
    cls = np.array([int(math.ceil(2 * ri - 1e-6)) for ri in r])
    fields = {}
    P = np.array(players)
    for c in classes:
        gx, gy = cs.ref_block(P[:, 0], P[:, 1], c)
        fields[c] = cs.octile_dist(cs.passable_for(blocked, c), list(zip(gx.tolist(), gy.tolist())))

    def pd_class(c, xx, yy):
        """Path distance of points of size class c (bilinear over the class's blocks; NaN where
        none of the four is reachable)."""
        ux = xx - 0.5 * c; uy = yy - 0.5 * c
        i0 = np.floor(ux).astype(int); j0 = np.floor(uy).astype(int)
        fx = ux - i0; fy = uy - j0
        num = np.zeros(len(xx)); den = np.zeros(len(xx))
        for di, dj, wg in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
            v = fields[c][np.clip(j0 + dj, 0, h - 1), np.clip(i0 + di, 0, w - 1)]
            ok = np.isfinite(v)
            num += np.where(ok, v * wg, 0); den += np.where(ok, wg, 0)
        return np.where(den > 1e-9, num / np.maximum(den, 1e-9), np.nan)

    def pd(xx, yy):
        out = np.full(len(xx), np.nan)
        for c in classes:
            m = np.nonzero(cls == c)[0]
            out[m] = pd_class(c, xx[m], yy[m])
        return out
    # samples on a regular grid (every 10 ticks)
    sel = [i for i, t in enumerate(T) if t % 10 == 0]
    PD = np.array([pd(d["x"][i], d["y"][i]) for i in sel])
    ts = T[sel] / 30.0
    # pile membership per sample (touch chains)
    inpile = np.zeros_like(PD, dtype=bool)
    wd = np.zeros_like(PD)
    for k, i in enumerate(sel):
        x, y = d["x"][i], d["y"][i]
        touching = np.hypot(x[:, None] - P[None, :, 0], y[:, None] - P[None, :, 1]).min(1) - r - cs.PLAYER_R <= 0.15
        pairs = cs.neighbours(x, y, r, 0.15)
        adj = [[] for _ in x]
        for a_, b_, _ in pairs:
            adj[a_].append(b_); adj[b_].append(a_)
        m = touching.copy(); st = list(np.nonzero(m)[0])
        while st:
            for b_ in adj[st.pop()]:
                if not m[b_]:
                    m[b_] = True; st.append(b_)
        inpile[k] = m
    rate = np.diff(PD, axis=0) / np.diff(ts)[:, None]
    rising = (rate > 0.2) & ~inpile[1:] & ~inpile[:-1] & np.isfinite(rate)
    runs = []
    for j in range(PD.shape[1]):
        cur = 0; start = None
        for k in range(rising.shape[0]):
            if rising[k, j]:
                if cur == 0: start = k
                cur += 1
            else:
                if cur * (ts[1] - ts[0]) >= 2.0 - 1e-9:
                    runs.append((j, ts[start], cur * (ts[1] - ts[0]), PD[start, j], PD[start + cur, j]))
                cur = 0
        if cur * (ts[1] - ts[0]) >= 2.0 - 1e-9:
            runs.append((j, ts[start], cur * (ts[1] - ts[0]), PD[start, j], PD[start + cur, j]))
    # The target's clause "while it has a free downhill step": at each sample of a run, whether the
    # agent's disc could move 0.3 cells in some direction that lowers its path distance (of 16)
    # without touching another disc or a wall. A run without one at most of its samples is a way
    # round a jam (the congestion field's detour), not a walk-away.
    def pd1(c, px, py):  # one point; +inf where unreachable
        v = pd_class(c, np.array([px]), np.array([py]))[0]
        return float(v) if np.isfinite(v) else math.inf
    angles = np.arange(16) * (2 * math.pi / 16)
    def free_downhill(j, i):
        x, y = d["x"][i], d["y"][i]
        here = pd1(cls[j], x[j], y[j])
        near = np.nonzero(np.hypot(x - x[j], y - y[j]) < r[j] + r.max() + 0.4)[0]
        near = near[near != j]
        for a in angles:
            qx, qy = x[j] + 0.3 * math.cos(a), y[j] + 0.3 * math.sin(a)
            if not pd1(cls[j], qx, qy) < here - 0.05:
                continue
            if cs.wall_overlap(blocked, np.array([qx]), np.array([qy]), np.array([r[j]]))[0] > 0.01:
                continue
            if np.all(np.hypot(x[near] - qx, y[near] - qy) >= r[near] + r[j] - 0.01):
                return True
        return False
    free_runs = []
    for run_ in runs:
        j, t0, dur = run_[0], run_[1], run_[2]
        k0 = int(np.argmin(np.abs(ts - t0))); n = int(round(dur / (ts[1] - ts[0])))
        share = np.mean([free_downhill(j, sel[k]) for k in range(k0, k0 + n)])
        if share >= 0.5:
            free_runs.append(run_)
    def list_runs(rs, indent):  # the 8 longest
        for j, t0, dur, a0, a1 in sorted(rs, key=lambda q: -q[2])[:8]:
            k0 = int(np.argmin(np.abs(ts - t0)))
            print(f"{indent}agent {d['ids'][j]} {kinds[j]} t {t0:.1f}s for {dur:.1f}s pathdist {a0:.1f} -> {a1:.1f} at "
                  f"({d['x'][sel[k0]][j]:.1f},{d['y'][sel[k0]][j]:.1f})")
    print(f"walk-away runs >= 2 s (path distance rising > 0.2 cells/s, not in pile): {len(runs)} "
          f"in {len(set(r_[0] for r_ in runs))} agents; by kind "
          f"{ {k: sum(1 for r_ in runs if kinds[r_[0]] == k) for k in sorted(set(kinds))} }")
    list_runs(runs, "  ")
    print(f"  of them with a free downhill step at half their samples or more (the target's walk-aways): "
          f"{len(free_runs)} in {len(set(r_[0] for r_ in free_runs))} agents")
    list_runs(free_runs, "    ")
    # pair overlap per frame, all and away from walls (both > 2 cells from the nearest wall square)
    cnt_all, cnt_far, deep_far, deep_all, nfr = 0, 0, 0.0, 0.0, 0
    worst_far = None
    for i in [q for q in sel[::3] if T[q] >= 60]:
        x, y = d["x"][i], d["y"][i]
        wo = cs.wall_overlap(blocked, x, y, np.full(len(x), 2.0))  # 2 - dist to wall
        farw = wo < 0  # dist to wall > 2
        nfr += 1
        for a_, b_, dd in cs.neighbours(x, y, r, 0.0):
            ov = r[a_] + r[b_] - dd
            rel = ov / min(r[a_], r[b_])
            if rel > 0.10:
                cnt_all += 1
                if farw[a_] and farw[b_]:
                    cnt_far += 1
                    if rel > deep_far:
                        deep_far = rel; worst_far = (T[i] / 30, kinds[a_], kinds[b_], round(float(x[a_]), 1), round(float(y[a_]), 1))
            deep_all = max(deep_all, rel)
    wmax = max(float(cs.wall_overlap(blocked, d["x"][i], d["y"][i], r).max()) for i in sel)
    print(f"pairs overlapping > 10% of smaller radius per frame: all {cnt_all / nfr:.2f}, away from walls (>2 cells) "
          f"{cnt_far / nfr:.2f}; deepest all {deep_all:.0%}, away {deep_far:.0%} {worst_far}; frames {nfr}; wall overlap max {wmax:.3f}")


def main():
    ap = argparse.ArgumentParser()
    s = ap.add_subparsers(dest="cmd", required=True)
    a = s.add_parser("door"); a.add_argument("out"); a.add_argument("--W", type=int, default=96)
    a.add_argument("--lo", type=int, default=28); a.add_argument("--hi", type=int, default=67)
    a.add_argument("--doors", default="N:47,S:47,W:47,E:47"); a.add_argument("--dw", type=int, default=1)
    a.add_argument("--tf", default=""); a.add_argument("--players", default="4.5,4.5;91.5,91.5")
    a = s.add_parser("gap"); a.add_argument("out"); a.add_argument("--W", type=int, default=96)
    a.add_argument("--H", type=int, default=64); a.add_argument("--wallx", type=int, default=40)
    a.add_argument("--gapy", type=int, default=16); a.add_argument("--open", default="46,47,48")
    a.add_argument("--tf", default=""); a.add_argument("--player", default="60.5,16.5")
    a = s.add_parser("open"); a.add_argument("out"); a.add_argument("--W", type=int, default=96)
    a = s.add_parser("corridor"); a.add_argument("out"); a.add_argument("--cw", type=int, default=3)
    a.add_argument("--clen", type=int, default=29)
    for n in ("mdoor", "mgap", "mroom"):
        a = s.add_parser(n); a.add_argument("map"); a.add_argument("csv")
    for n in ("mpile", "mstreet", "msect"):
        a = s.add_parser(n); a.add_argument("map"); a.add_argument("csv"); a.add_argument("--player", action="append")
    a = ap.parse_args()
    if a.cmd == "door": build_door(a)
    elif a.cmd == "gap": build_gap(a)
    elif a.cmd == "open": write(a.out, open_map(a.W, a.W), {"kind": "open"})
    elif a.cmd == "corridor": build_corridor(a)
    elif a.cmd == "mroom": mroom(a.map, a.csv)
    elif a.cmd == "mdoor": mdoor(a.map, a.csv)
    elif a.cmd == "mgap": mgap(a.map, a.csv)
    elif a.cmd == "mpile": mpile(a.map, a.csv, cs.parse_players(a.player))
    elif a.cmd == "msect": print(sectors_over_time(a.csv, cs.parse_players(a.player)))
    elif a.cmd == "mstreet": mstreet(a.map, a.csv, cs.parse_players(a.player))


if __name__ == "__main__":
    main()
