#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the schedule/1 DAG of one GPT-3 175B training iteration on 8 A100 pipeline stages with
12 microbatches (1F1B), from Perseus's measured stage profile (time and energy of every forward and
backward instruction at every SM frequency).

Each node of the DAG is one instruction (stage, forward/backward, microbatch) whose operating set
has one point per frequency. Energy accounting (schedule/1 DAG semantics): every GPU is held at
its static power P_b for the whole iteration, so a point's dynamic energy is E_measured - P_b * T.
The iteration energy is then sum(E_measured) + P_b * (idle time of every GPU), which is Perseus's
accounting with P_b its "blocking" power.

usage: build_schedule.py [--csv PROFILE] [--p-blocking W] [--quantize-ms] [--microbatches N] OUT
"""
import argparse
import collections
import csv
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "..", "shared", "data", "energy",
                           "perseus_stage_profile_gpt3-175b_a100_bf16.csv")


def one_f_one_b(stage, stages, micro):
    """Instruction order of one stage under 1F1B (PipeDream-flush / Megatron)."""
    warm = min(stages - stage - 1, micro)
    seq = [("F", m) for m in range(warm)]
    f, b = warm, 0
    while f < micro:
        seq.append(("F", f)); f += 1
        seq.append(("B", b)); b += 1
    while b < micro:
        seq.append(("B", b)); b += 1
    return seq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--csv", default=DEFAULT_CSV)
    ap.add_argument("--p-blocking", type=float, default=86.3,
                    help="static (blocking) power of an A100 in W (default 86.3, see README)")
    ap.add_argument("--quantize-ms", action="store_true",
                    help="floor every duration to whole milliseconds, as Perseus's optimiser does")
    ap.add_argument("--microbatches", type=int, default=12)
    a = ap.parse_args()
    if not os.path.exists(a.csv):
        print(f"skipped: {a.csv} not found", file=sys.stderr)
        return 77
    prof = collections.defaultdict(list)
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            t = float(r["time"])
            if a.quantize_ms:
                t = math.floor(t * 1000) / 1000
            prof[(int(r["stage"]), r["instruction"])].append((int(r["frequency"]), t, float(r["energy"])))
    stages = 1 + max(s for s, _ in prof)
    pb = a.p_blocking
    sched = {"erg": "schedule/1", "devices": {}, "signatures": {}, "nodes": [], "edges": []}
    for s in range(stages):
        sched["devices"][f"gpu{s}"] = {"static_power_w": pb}
        for ins, tag in (("forward", "F"), ("backward", "B")):
            pts = []
            for freq, t, e in sorted(prof[(s, ins)], reverse=True):
                d = e - pb * t
                if d < 0:
                    sys.exit(f"stage {s} {ins} {freq} MHz: E {e} J < P_b*T; lower --p-blocking")
                pts.append({"kappa": "megatron", "omega_device": {"sm_mhz": freq},
                            "time_s": t, "dynamic_energy_j": d})
            sched["signatures"][f"s{s}{tag}"] = {"device": f"gpu{s}", "points": pts}
    M = a.microbatches
    for s in range(stages):
        prev = None
        for tag, m in one_f_one_b(s, stages, M):
            nid = f"s{s}.{tag}{m}"
            sched["nodes"].append({"id": nid, "signature": f"s{s}{tag}"})
            if prev:
                sched["edges"].append([prev, nid])  # one stream per GPU
            prev = nid
    for s in range(stages):
        for m in range(M):
            if s > 0:
                sched["edges"].append([f"s{s-1}.F{m}", f"s{s}.F{m}"])
            if s < stages - 1:
                sched["edges"].append([f"s{s+1}.B{m}", f"s{s}.B{m}"])
            else:
                sched["edges"].append([f"s{s}.F{m}", f"s{s}.B{m}"])
    with open(a.out, "w") as f:
        json.dump(sched, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
