#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Numeric faults in every numeric field of erg's input formats (signature/1, schedule/1, a
Chrome/Kineto trace, a HuggingFace config.json, model/1, calibration/1, an ops CSV): each number in
turn is replaced by zero, -0, a negative, a huge, a denormal, an overflowing or non-finite value
(as JSON can spell it: 1e400 and NaN literals, a string, null) and the command is run;
calibration/1 goes through erg measure on a fake RAPL tree. Each run
must end with exit 0 (or 1 where the command reports a check) or 2, with a message naming the file
for 2, never a signal, a sanitizer report, or non-finite figures ("nan", "inf") in output that exits
0. Usage: fault_numeric.py ERG SOURCE_DIR [MAX_PER_CASE]"""
import json
import os
import subprocess
import sys
import tempfile

erg, src = sys.argv[1], sys.argv[2]
max_per_case = int(sys.argv[3]) if len(sys.argv) > 3 else 0  # 0: every field and value
BAD = ["0", "-0.0", "-1", "-1e-300", "1e308", "-1e308", "4.9e-324", "1e-310", "1e400", "-1e400",
       "9223372036854775807", "18446744073709551616", "NaN", "Infinity", "\"1\"", "null"]
CSV_BAD = ["0", "-0", "-1", "1e308", "4.9e-324", "1e400", "nan", "inf", "-inf", "0x10", "1e-310"]
env = dict(os.environ)
env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":exitcode=99"
env["UBSAN_OPTIONS"] = env.get("UBSAN_OPTIONS", "") + ":halt_on_error=1:exitcode=99"
failures = []
runs = 0


def leaves(v, path=()):
    """Paths of every number in a JSON value (booleans are not numbers)."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, path + (i,))
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield path


MARK = "\"@@ERG-FAULT@@\""


def with_value(doc, path, text):
    d = json.loads(json.dumps(doc))
    o = d
    for p in path[:-1]:
        o = o[p]
    o[path[-1]] = "@@ERG-FAULT@@"
    return json.dumps(d, indent=1).replace(MARK, text)


def run(case, what, argv, allowed=(0, 2)):
    global runs
    runs += 1
    p = subprocess.run(argv, capture_output=True, env=env, timeout=120)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    why = None
    if "Sanitizer" in err or "runtime error" in err:
        why = "sanitizer report"
    elif p.returncode not in allowed:
        why = "exit status %d" % p.returncode
    elif p.returncode == 2 and "erg" not in err:
        why = "exit 2 without a message"
    elif p.returncode != 2 and any(w in out.lower().replace("inference", "")
                                   for w in ("nan", " inf", "-inf", "infinity")):
        why = "non-finite figures in the output"
    if why:
        failures.append("%s, %s: %s\n%s%s" % (case, what, why, err[:800], out[:400]))


def json_case(case, path, argv_of, allowed=(0, 2), name="in.json"):
    doc = json.load(open(path))
    paths = list(leaves(doc))
    with tempfile.TemporaryDirectory(prefix="erg-numeric.") as tmp:
        f = os.path.join(tmp, name)
        combos = [(p, b) for p in paths for b in BAD]
        if max_per_case and len(combos) > max_per_case:
            step = len(combos) / max_per_case
            combos = [combos[int(i * step)] for i in range(max_per_case)]
        for p, b in combos:
            with open(f, "w") as fh:
                fh.write(with_value(doc, p, b))
            run(case, "%s = %s" % (".".join(map(str, p)), b), argv_of(f, tmp), allowed)


def csv_case(case, path, argv_of):
    lines = open(path).read().splitlines()
    header = lines[0].split(",")
    combos = []
    for r in range(1, len(lines)):
        cells = lines[r].split(",")
        for c, cell in enumerate(cells):
            try:
                float(cell)
            except ValueError:
                continue
            combos += [(r, c, b) for b in CSV_BAD]
    if max_per_case and len(combos) > max_per_case:
        step = len(combos) / max_per_case
        combos = [combos[int(i * step)] for i in range(max_per_case)]
    with tempfile.TemporaryDirectory(prefix="erg-numeric.") as tmp:
        f = os.path.join(tmp, "in.csv")
        for r, c, b in combos:
            cells = lines[r].split(",")
            cells[c] = b
            with open(f, "w") as fh:
                fh.write("\n".join(lines[:r] + [",".join(cells)] + lines[r + 1:]) + "\n")
            run(case, "line %d %s = %s" % (r + 1, header[c], b), argv_of(f, tmp))


ex = os.path.join(src, "examples")
sig_null = os.path.join(ex, "insensitive", "softmax-null.json")
sig_hot = os.path.join(ex, "insensitive", "softmax-hot.json")
trace = os.path.join(src, "tests", "trace", "data", "two_gpus.json")
json_case("signature/1 (insensitive)", sig_null, lambda f, t: [erg, "insensitive", f, sig_hot],
          (0, 1, 2))
json_case("schedule/1 (compose)", os.path.join(ex, "pipeline-2gpu.json"),
          lambda f, t: [erg, "compose", "--json", f])
json_case("schedule/1 DAG (compose)", os.path.join(ex, "pipeline-2gpu-dag.json"),
          lambda f, t: [erg, "compose", f])
json_case("schedule/1 points (frontier)",
          os.path.join(src, "tests", "fuzz", "seeds", "opsched-frontier-doc.json"),
          lambda f, t: [erg, "frontier", "--json", f])
json_case("trace (trace report)", trace, lambda f, t: [erg, "trace", "report", "--json", f])
json_case("trace (trace import)", trace,
          lambda f, t: [erg, "trace", "import", "-o", os.path.join(t, "s.json"), f])
json_case("config.json (predict model)",
          os.path.join(src, "tests", "predict", "configs", "tiny-llama.json"),
          lambda f, t: [erg, "predict", "model", f, "--target", os.path.join(src, "models", "cpu")])


def model_argv(f, tmp):
    tgt = os.path.join(tmp, "target")
    os.makedirs(tgt, exist_ok=True)
    os.replace(f, os.path.join(tgt, "ops.json"))
    return [erg, "predict", "model",
            os.path.join(src, "tests", "predict", "configs", "tiny-llama.json"), "--target", tgt]


json_case("model/1 (predict model)", os.path.join(src, "models", "cpu", "ops.json"), model_argv)
# calibration/1, read by erg measure (a fake RAPL tree whose counter stands still)
root = tempfile.mkdtemp(prefix="erg-numeric-root.")
rapl = os.path.join(root, "sys", "class", "powercap", "intel-rapl:0")
os.makedirs(rapl)
os.makedirs(os.path.join(root, "proc"))
for name, text in (("name", "package-0\n"), ("energy_uj", "1000000\n"),
                   ("max_energy_range_uj", "262143328850\n")):
    with open(os.path.join(rapl, name), "w") as fh:
        fh.write(text)
with open(os.path.join(root, "proc", "stat"), "w") as fh:
    fh.write("cpu  100 0 0 100 0 0 0 0 0 0\n")
calibration = os.path.join(tempfile.mkdtemp(prefix="erg-numeric-cal."), "calibration.json")
with open(calibration, "w") as fh:
    json.dump({"erg": "calibration/1", "duration_s": 1, "window_s": 0.01, "idle_power_w": 2.0,
               "channels": [{"id": "rapl-sysfs:package-0", "idle_power_w": 2.0, "cv": 0.01}]}, fh)
env["ERG_ROOT"] = root
json_case("calibration/1 (measure)", calibration,
          lambda f, t: [erg, "measure", "-r", "1", "--backends", "rapl-sysfs", "--calibration", f,
                        "--", "true"])
del env["ERG_ROOT"]
csv_case("ops CSV (fit ops)", os.path.join(src, "tests", "fuzz", "seeds", "ops.csv"),
         lambda f, t: [erg, "fit", "ops", f, "-o", os.path.join(t, "m.json")])

import shutil
shutil.rmtree(root, ignore_errors=True)
shutil.rmtree(os.path.dirname(calibration), ignore_errors=True)
print("%d runs, %d failed" % (runs, len(failures)))
for f in failures[:40]:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
