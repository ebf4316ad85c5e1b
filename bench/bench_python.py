#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Speed of the erg Python package, printed side by side with a reference; run by hand:

    ERG_LIBRARY=build/gcc/liberg.so PYTHONPATH=python /usr/bin/python3 bench/bench_python.py

1. Per-call overhead of a window from Python: a bare call of a no-op function against the same
   call inside `with meter.window(...)`, inside erg.measure's decorator, and through the
   instrumentation's wrapper (what a patched script and erg.run pay per call: two snapshots, three
   differences, the aggregation). Medians over batches, ns per call, wall clock and this thread's
   CPU time.
2. erg.run's slowdown on examples/python/transformer.py (training steps, then sampling): the
   script's own run time (torch imported beforehand, so import time is left out) plain, patched by
   `erg instrument`, and under erg.run, in children forked from one interpreter. Medians of
   --reps runs.

The figures are this machine's, with the meters it has (ERG_BACKENDS; the estimator when there are
no counters, as on a machine without RAPL): the cost of a snapshot depends on the backends.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "python"))
sys.path.insert(0, os.path.join(SRC, "tests", "python"))


def per_call(n, batches):
    import erg
    from erg import _records
    m = erg.Meter(sampler=False)

    def noop():
        return None

    def bare():
        for _ in range(n):
            noop()

    def window():
        for _ in range(n):
            with m.window("w"):
                noop()

    deco = erg.measure("d", meter=m)(noop)

    def decorated():
        for _ in range(n):
            deco()
        deco.measurements.clear()

    rec = _records.Recorder(os.devnull, meter=m, project="bench")

    def wrapper():
        for _ in range(n):
            rec.call("noop", "bench:1", noop, (), {})

    rows = []
    for name, fn in (("bare call", bare), ("with meter.window()", window),
                     ("@erg.measure", decorated), ("instrumentation wrapper", wrapper)):
        wall, cpu = [], []
        for _ in range(batches):
            w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            fn()
            wall.append((time.perf_counter_ns() - w0) / n)
            cpu.append((time.thread_time_ns() - c0) / n)
        rows.append((name, statistics.median(wall), statistics.median(cpu)))
    base = rows[0][1]
    print("per-call overhead of a window from Python (%d calls x %d batches, channels: %s)"
          % (n, batches, ", ".join(c["id"] for c in m.channels if c["usable"])))
    print("  %-26s %12s %12s %10s" % ("", "wall ns", "cpu ns", "x bare"))
    for name, w, c in rows:
        print("  %-26s %12.0f %12.0f %10.1f" % (name, w, c, w / base))
    m.close()


def slowdown(steps, reps):
    import torch  # noqa: F401  (once: the children are forked after it)
    import subprocess
    from ergtest import forkrun
    src = os.path.join(SRC, "examples", "python", "transformer.py")
    d = tempfile.mkdtemp(prefix="erg-bench-")
    patched = os.path.join(d, "transformer_patched.py")
    erg_bin = os.environ.get("ERG_BIN")
    if erg_bin:
        subprocess.run([erg_bin, "instrument", src, "-o", patched, "-q"], check=True)
    else:
        from erg import instrument
        with open(src) as f:
            out, _ = instrument.patch(f.read(), src)
        with open(patched, "w") as f:
            f.write(out)
    calls = os.path.join(d, "calls.jsonl")
    modes = (("plain", [src, steps]), ("patched (erg instrument)", [patched, steps]),
             ("erg.run", ["-m", "erg.run", "--out", calls, src, steps]))
    times = {m: [] for m, _ in modes}
    for _ in range(reps):
        for name, argv in modes:
            t0 = time.perf_counter()
            r = forkrun(argv, env={"ERG_CALLS": calls}, cwd=d)
            times[name].append(time.perf_counter() - t0)
            if r.returncode != 0:
                raise SystemExit("%s failed: %s" % (name, r.stderr))
    base = statistics.median(times["plain"])
    print("\nslowdown on examples/python/transformer.py (%s steps, then 24 tokens sampled; "
          "median of %d)" % (steps, reps))
    print("  %-26s %10s %10s" % ("", "wall s", "x plain"))
    for name, _ in modes:
        t = statistics.median(times[name])
        print("  %-26s %10.3f %10.2f" % (name, t, t / base))
    os.unlink(calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=7)
    ap.add_argument("--steps", default="40")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    per_call(a.calls, a.batches)
    slowdown(a.steps, a.reps)


if __name__ == "__main__":
    main()
