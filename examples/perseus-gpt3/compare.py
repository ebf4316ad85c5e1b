#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare erg's frontier (erg frontier --csv) with Perseus's frontier CSV (time, energy).

Prints both endpoints, the energy of each at equal iteration times, and the area between the
curves over their common time range. erg's frontier is a staircase: at iteration time t its energy
is that of the least-energy plan that finishes by t. Perseus's is interpolated linearly between its
1 ms points.

usage: compare.py ERG_CSV PERSEUS_CSV
       compare.py --row LABEL ERG_CSV PERSEUS_CSV   one markdown row of the sensitivity table
       compare.py --row-header                      its header
"""
import bisect
import csv
import sys


def read(path, tcol, ecol):
    with open(path) as f:
        rows = [(float(r[tcol]), float(r[ecol])) for r in csv.DictReader(f)]
    return sorted(rows)


def erg_at(pts, t):
    i = bisect.bisect_right([p[0] for p in pts], t + 1e-12) - 1
    return pts[i][1] if i >= 0 else float("nan")


def lin_at(pts, t):
    ts = [p[0] for p in pts]
    i = bisect.bisect_left(ts, t)
    if i < len(pts) and abs(ts[i] - t) < 1e-12:
        return pts[i][1]
    if i == 0 or i == len(pts):
        return float("nan")
    (t0, e0), (t1, e1) = pts[i - 1], pts[i]
    return e0 + (e1 - e0) * (t - t0) / (t1 - t0)


def above_below(erg, per):
    """Over Perseus's points at or after erg's fastest time: (#above, #below, first and last time
    where erg is above, max and min of erg − Perseus), in J; 1e-6 J tolerance."""
    above = below = 0
    t_first = t_last = float("nan")
    worst, best = -float("inf"), float("inf")
    for t, e in per:
        if t < erg[0][0]:
            continue
        d = erg_at(erg, t) - e
        if d > 1e-6:
            above += 1
            t_first = t if above == 1 else t_first
            t_last = t
        elif d < -1e-6:
            below += 1
        worst, best = max(worst, d), min(best, d)
    return above, below, t_first, t_last, worst, best


def area_between(erg, per):
    lo, hi = max(erg[0][0], per[0][0]), per[-1][0]
    steps = 20000
    area = 0.0
    for k in range(steps):
        t = lo + (hi - lo) * (k + 0.5) / steps
        area += (lin_at(per, t) - erg_at(erg, t)) * (hi - lo) / steps
    return lo, hi, area


ROW_HEADER = ("| P_b (W), durations | erg fastest (s, J) | erg least energy (s, J) | Perseus points "
              "(≥ erg's fastest) erg above / below | where above (s) | erg − Perseus max / min (J) "
              "| area Perseus − erg (J·s) |\n|---|---|---|---|---|---|---|")


def row(label, erg, per):
    above, below, t0, t1, worst, best = above_below(erg, per)
    lo, hi, area = area_between(erg, per)
    emin = min(erg, key=lambda x: x[1])
    n = sum(1 for t, _ in per if t >= erg[0][0])
    where = f"{t0:.3f}–{t1:.3f}" if above else "nowhere"
    return (f"| {label} | {erg[0][0]:.4f}, {erg[0][1]:.1f} | {emin[0]:.4f}, {emin[1]:.1f} | "
            f"{above} / {below} of {n} | {where} | {worst:+.1f} / {best:+.1f} | {area:.1f} |")


def main():
    if sys.argv[1:] == ["--row-header"]:
        print(ROW_HEADER)
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "--row":
        print(row(sys.argv[2], read(sys.argv[3], "time_s", "energy_j"),
                  read(sys.argv[4], "time", "energy")))
        return 0
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    erg = read(sys.argv[1], "time_s", "energy_j")
    per = read(sys.argv[2], "time", "energy")
    print("| | fastest (s, J) | least energy (s, J) | points |")
    print("|---|---|---|---|")
    for name, p in (("erg", erg), ("Perseus", per)):
        emin = min(p, key=lambda x: x[1])
        print(f"| {name} | {p[0][0]:.4f} s, {p[0][1]:.1f} J | {emin[0]:.4f} s, {emin[1]:.1f} J | {len(p)} |")
    print()
    print("| iteration time (s) | Perseus (J) | erg (J) | erg − Perseus (J) | % |")
    print("|---|---|---|---|---|")
    lo, hi = max(erg[0][0], per[0][0]), per[-1][0]
    worst = -1e300
    n = 8
    for k in range(n + 1):
        t = lo + (hi - lo) * k / n
        a, b = lin_at(per, t), erg_at(erg, t)
        print(f"| {t:.4f} | {a:.1f} | {b:.1f} | {b - a:+.1f} | {100 * (b - a) / a:+.2f} |")
    # Every Perseus point, for the worst case.
    above = 0
    for t, e in per:
        if t < erg[0][0]:
            continue
        d = erg_at(erg, t) - e
        worst = max(worst, d)
        above += d > 1e-6
    # Area between the curves on a fine grid over the common range.
    steps = 20000
    area = 0.0
    for k in range(steps):
        t = lo + (hi - lo) * (k + 0.5) / steps
        area += (lin_at(per, t) - erg_at(erg, t)) * (hi - lo) / steps
    print()
    print(f"common range {lo:.4f}–{hi:.4f} s; area between the curves (Perseus − erg) = {area:.2f} J·s, "
          f"mean energy gap {area / (hi - lo):.1f} J")
    print(f"Perseus points where erg's frontier is above Perseus's: {above}; largest excess {worst:+.2f} J")
    return 0


if __name__ == "__main__":
    sys.exit(main())
