#!/usr/bin/env python3
"""Score committed level-1 models on rows they never saw, through `erg predict op --json`.

  python3 examples/predict-crosscheck.py ERG MODEL.json OPS.csv [--held-out]

Prints per op the number of rows, how many were extrapolated, and the time and energy MAPE.
--held-out keeps only the rows `erg fit ops` holds out of OPS.csv by default (20 %, seed 42;
the split is replayed here: splitmix64 Fisher-Yates per op in the order rmsnorm, softmax,
gemm, as src/predict/fit.c draws it). Used for docs/predict.md's comparison of two CPU models
on each other's held-out rows.
"""
import csv
import json
import math
import subprocess
import sys

MASK = (1 << 64) - 1


def held_out(rows, seed=42, frac=0.2):
    state = [seed]

    def nxt():
        state[0] = (state[0] + 0x9E3779B97F4A7C15) & MASK
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    test = []
    for op in ("rmsnorm", "softmax", "gemm"):
        idx = [i for i, r in enumerate(rows) if r["op"] == op]
        k = len(idx)
        if not k:
            continue
        perm = list(range(k))
        for i in range(k, 1, -1):
            j = nxt() % i
            perm[i - 1], perm[j] = perm[j], perm[i - 1]
        nt = int(math.floor(frac * k + 0.5))
        if frac > 0 and nt == 0 and k >= 5:
            nt = 1
        nt = min(nt, k - 1)
        test += [rows[idx[p]] for p in perm[:nt]]
    return test


def main():
    erg, model, data = sys.argv[1:4]
    rows = list(csv.DictReader(l for l in open(data) if not l.startswith("#")))
    if "--held-out" in sys.argv[4:]:
        rows = held_out(rows)
    res = {}
    for r in rows:
        op = r["op"]
        args = [erg, "predict", "op", op, "--model", model, "--json"]
        if op == "gemm":
            args += ["--m", r["m"], "--n", r["n"], "--k", r["k"]]
        elif op == "rmsnorm":
            args += ["--tokens", r["tokens"], "--d-model", r["d_model"]]
        elif r["tokens"]:
            args += ["--tokens", r["tokens"]]
        else:
            args += ["--m", r["m"], "--n", r["n"]]
        p = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        d = res.setdefault(op, {"t": [], "e": [], "x": 0})
        t = float(r["time_s"])
        d["t"].append(abs(p["time_s"] - t) / t * 100)
        if r["energy_j"] and p["energy_j"] is not None:
            e = float(r["energy_j"])
            d["e"].append(abs(p["energy_j"] - e) / e * 100)
        d["x"] += bool(p["extrapolated"])
    for op, d in res.items():
        n = len(d["t"])
        em = "%6.2f %%" % (sum(d["e"]) / len(d["e"])) if d["e"] else "     -"
        print(f"{op:8s} rows {n:3d}  extrapolated {d['x']:3d}  time MAPE {sum(d['t']) / n:6.2f} %"
              f"  energy MAPE {em}")


main()
