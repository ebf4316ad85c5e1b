#!/bin/sh
# SPDX-License-Identifier: MIT
# Reading a schedule costs the same for erg frontier and erg compose (issue 13): CPU time (user +
# system, median of RUNS runs, default 5) of both whole commands side by side on a 20,000-node
# random DAG, a 10^5-node chain and a 10^5-element seq, and their ratio. Whole commands: on the
# chain most of `erg frontier` is the frontier itself, not the reading; bench/bench_sched_read
# times the two readers alone. With OLD=path/to/an/older/erg, the same commands of that binary too
# (before/after). Usage: [RUNS=N] bench/frontier_read.sh [BUILD_DIR] (default build/gcc).
set -eu
B=${1:-build/gcc}
erg=$B/src/cli/erg
T=$(mktemp -d /tmp/erg-bench-frontier.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$B/bench/bench_calculus_gen" 20000 > "$T/dag20k.json"
python3 - "$T" <<'PY'
import json, sys
d = sys.argv[1]
n = 100000
dev = {"g": {"static_power_w": 10}}
sig = {"a": {"device": "g", "time_s": 1.0, "dynamic_energy_j": 2.0}}
json.dump({"erg": "schedule/1", "devices": dev, "signatures": sig,
           "nodes": [{"id": "n%d" % i, "signature": "a"} for i in range(n)],
           "edges": [["n%d" % i, "n%d" % (i + 1)] for i in range(n - 1)]}, open(d + "/chain100k.json", "w"))
sigs = {"e%d" % i: {"device": "g", "time_s": 1.0 + 0.001 * (i % 7), "dynamic_energy_j": 2.0} for i in range(n)}
json.dump({"erg": "schedule/1", "devices": dev, "signatures": sigs, "expr": {"seq": list(sigs)}},
          open(d + "/seq100k.json", "w"))
PY
cpu() { # median CPU seconds of RUNS runs of "$@"
    RUNS=${RUNS:-5} python3 - "$@" <<'PY'
import os, resource, statistics, subprocess, sys
xs = []
for _ in range(int(os.environ["RUNS"])):
    a = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    xs.append(b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime)
print("%.3f" % statistics.median(xs))
PY
}
printf '%-16s %12s %12s %8s\n' file "compose s" "frontier s" ratio
for f in dag20k chain100k seq100k; do
    c=$(cpu "$erg" compose "$T/$f.json"); r=$(cpu "$erg" frontier "$T/$f.json")
    printf '%-16s %12s %12s %8.2f\n' "$f" "$c" "$r" "$(awk -v r="$r" -v c="$c" 'BEGIN { print (c > 0 ? r / c : 0) }')"
    if [ -n "${OLD:-}" ]; then
        c=$(cpu "$OLD" compose "$T/$f.json"); r=$(cpu timeout 600 "$OLD" frontier "$T/$f.json")
        printf '%-16s %12s %12s %8.2f  (OLD)\n' "$f" "$c" "$r" "$(awk -v r="$r" -v c="$c" 'BEGIN { print (c > 0 ? r / c : 0) }')"
    fi
done
