#!/usr/bin/env bash
# Trace import benchmark (issue 4, "Speed"): throughput in MB/s of uncompressed JSON and peak
# memory on the shared traces and on a generated 1 GB trace, and the time of `erg trace report`
# against Python's json.load of the same file (json.load alone, timed inside Python).
# Usage: bench/bench_trace.sh [BUILD_DIR] [SIZE_MB]   (defaults: build, 1000)
# The generated trace is written under /tmp and removed at the end; it is never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
size_mb=${2:-1000}
erg=$build/src/cli/erg
bench=$build/bench/bench_trace
gen=$build/bench/bench_trace_gen
for b in "$erg" "$bench" "$gen"; do
    [ -x "$b" ] || { echo "bench_trace.sh: $b not built (cmake --build $build)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/erg_bench_trace.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# wall seconds and peak RSS (MiB) of a command
measure() {
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$tmp/time" "$@" >/dev/null
    t1=$(date +%s%N)
    awk -v ns=$((t1 - t0)) '{printf "%.4f %.1f\n", ns / 1e9, $1 / 1024}' "$tmp/time"
}
py_load() { # seconds of json.load alone, and Python's peak RSS (MiB)
    python3 - "$1" <<'PY'
import gzip, json, resource, sys, time
p = sys.argv[1]
f = gzip.open(p, "rt") if p.endswith(".gz") else open(p)
t = time.perf_counter(); json.load(f); dt = time.perf_counter() - t
print("%.4f %.1f" % (dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
PY
}
compare() { # file label
    local f=$1
    echo "== $2: $f ($(du -h "$f" | cut -f1) on disk)"
    "$bench" "$f" | sed 's/^/   /'
    read -r erg_s erg_mb < <(measure "$erg" trace report "$f" --json)
    if [ "${3:-py}" = py ]; then
        read -r py_s py_mb < <(py_load "$f")
        awk -v e="$erg_s" -v p="$py_s" -v em="$erg_mb" -v pm="$py_mb" 'BEGIN {
            printf "   erg trace report %.3f s (peak %.1f MiB) vs python json.load %.3f s (peak %.1f MiB): ratio %.3f\n",
                   e, em, p, pm, (p > 0 ? e / p : 0) }'
    else
        echo "   erg trace report ${erg_s} s (peak ${erg_mb} MiB); python json.load skipped: $3"
    fi
}

for f in ../shared/data/traces/*.json.gz; do
    [ -r "$f" ] || { echo "skipped: ../shared/data/traces not found"; break; }
    compare "$f" "shared trace (gzip)"
    plain=$tmp/$(basename "$f" .gz)
    gzip -dc "$f" >"$plain"
    compare "$plain" "shared trace (plain)"
    rm -f "$plain"
done

big=$tmp/synthetic_${size_mb}mb.json
"$gen" "$big" "$size_mb"
avail_mb=$(awk '/MemAvailable/ {print int($2/1024)}' /proc/meminfo)
# json.load keeps every event as Python dicts: about 10x the file in memory.
if [ "$avail_mb" -gt $((size_mb * 12)) ]; then
    compare "$big" "generated"
else
    compare "$big" "generated" "needs ~$((size_mb * 10)) MiB, only ${avail_mb} MiB available"
fi
