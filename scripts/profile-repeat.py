#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""profile-repeat.py: the noise floor of a profile: rows of re-measured profiles against a reference.

    scripts/profile-repeat.py REFERENCE_DIR REPEAT_DIR [REPEAT_DIR ...]

Each DIR holds blocks.csv / models.csv / ops.csv as `erg profile` (src/predict/profile_torch.py)
writes them; REPEAT_DIRs are typically made with `--every N` (a sample of the same plan). Rows are
matched on every column that describes the configuration (not reps, time, energy). Prints, per
file and block kind, n, the MAPE of each repeat against the reference, and the repeats' own
coefficient of variation (sd / mean over the repeats of a row, median over rows), for time_s
and energy_j."""
import csv
import math
import os
import statistics
import sys

MEASURED = {"reps", "time_s", "time_sd_s", "energy_j", "energy_sd_j", "grade"}


def load(d, name):
    p = os.path.join(d, name)
    if not os.path.isfile(p):
        return {}
    out = {}
    with open(p) as f:
        for r in csv.DictReader(f):
            key = tuple((k, v) for k, v in sorted(r.items()) if k not in MEASURED)
            out[key] = r
    return out


def group_of(name, row):
    if name == "blocks.csv":
        b = row["block"]
        return "%s %s" % (b, row["phase"]) if b == "attention" else b
    if name == "models.csv":
        moe = any(t in row["arch"] for t in ("moe", "mixtral", "gpt_oss"))
        return "model %s %s" % (row["phase"], "moe" if moe else "dense")
    return "op %s" % row["op"]


def num(v):
    try:
        x = float(v)
        return x if math.isfinite(x) and x > 0 else None
    except (TypeError, ValueError):
        return None


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    ref_dir, reps = argv[1], argv[2:]
    print("%-26s %4s  %-28s %-28s" % ("group", "n", "time: MAPE vs ref / CV reps",
                                        "energy: MAPE vs ref / CV reps"))
    for name in ("blocks.csv", "models.csv", "ops.csv"):
        ref = load(ref_dir, name)
        rep = [load(d, name) for d in reps]
        groups = {}
        for key in rep[0] if rep else []:
            if key not in ref or not all(key in r for r in rep):
                continue
            groups.setdefault(group_of(name, ref[key]), []).append(key)
        for g in sorted(groups):
            cells = []
            for col in ("time_s", "energy_j"):
                errs, cvs = [], []
                for key in groups[g]:
                    a = num(ref[key][col])
                    xs = [num(r[key][col]) for r in rep]
                    if a is None or any(x is None for x in xs):
                        continue
                    errs += [abs(x - a) / a for x in xs]
                    if len(xs) > 1:
                        cvs.append(statistics.stdev(xs) / statistics.mean(xs))
                cells.append("%6.2f %% / %s" % (
                    100 * statistics.mean(errs) if errs else float("nan"),
                    "%5.2f %%" % (100 * statistics.median(cvs)) if cvs else "-"))
            print("%-26s %4d  %-28s %-28s" % (g, len(groups[g]), cells[0], cells[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
