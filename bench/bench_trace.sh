#!/usr/bin/env bash
# Trace import benchmark (issue 4, "Speed"; issue 13): throughput in MB/s of uncompressed JSON and
# peak memory on the shared traces and on a generated 1 GB trace; erg's reader side by side with
# simdjson's on-demand parser on the same bytes (bench_trace_simdjson, built when libsimdjson-dev is
# installed; skipped otherwise), the ratio of the two; peak RSS per JSON event of `erg trace
# import -o` and `erg trace report`; and the time of `erg trace report` against Python's json.load
# of the same file (json.load alone, timed inside Python).
# Usage: [ERG=path/to/erg] bench/bench_trace.sh [BUILD_DIR] [SIZE_MB]   (defaults: build, 1000)
# ERG (the erg binary) defaults to build/release/src/cli/erg, what scripts/main.sh builds; the
# bench binaries come from BUILD_DIR/bench.
# The generated trace is written under /tmp and removed at the end; it is never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
size_mb=${2:-1000}
erg=${ERG:-build/release/src/cli/erg}
bench=$build/bench/bench_trace
gen=$build/bench/bench_trace_gen
simd=$build/bench/bench_trace_simdjson
[ -x "$erg" ] || {
    echo "bench_trace.sh: erg not found at $erg; build it with cmake -S . -B build/release" \
        "-DCMAKE_BUILD_TYPE=Release && cmake --build build/release, or set ERG" >&2
    exit 2
}
for b in "$bench" "$gen"; do
    [ -x "$b" ] || { echo "bench_trace.sh: $b not built (cmake --build $build)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/erg_bench_trace.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# wall seconds (bash's time keyword, no extra process; the mean of 10 runs for small files) and
# peak RSS (MiB, from one run under /usr/bin/time) of a command whose first argument is the file size
measure() {
    local bytes=$1 reps=1 t
    shift
    [ "$bytes" -lt 50000000 ] && reps=10
    TIMEFORMAT=%R
    t=$( { time for ((i = 0; i < reps; i++)); do "$@" >/dev/null; done; } 2>&1 )
    /usr/bin/time -f "%M" -o "$tmp/time" "$@" >/dev/null
    awk -v t="$t" -v r=$reps '{printf "%.4f %.1f\n", t / r, $1 / 1024}' "$tmp/time"
}
py_load() { # seconds of json.load alone (the mean of 10 loads for small files), Python's peak RSS
    python3 - "$1" <<'PY'
import gzip, json, os, resource, sys, time
p = sys.argv[1]
reps = 10 if os.path.getsize(p) < 50_000_000 else 1
total = 0.0
for _ in range(reps):
    f = gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    t = time.perf_counter(); json.load(f); total += time.perf_counter() - t
    f.close()
print("%.4f %.1f" % (total / reps, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
PY
}
compare() { # file label
    local f=$1
    echo "== $2: $f ($(du -h "$f" | cut -f1) on disk)"
    local out events
    out=$("$bench" "$f")
    sed 's/^/   /' <<<"$out"
    events=$(awk '/^jobs/ {print $9}' <<<"$out")
    if [ -x "$simd" ]; then
        "$simd" -r "${ROUNDS:-5}" "$f" | sed 's/^/   /'
        # simdjson picks its widest kernel (AVX-512 "icelake", AVX2 "haswell"); erg's scanner
        # (src/trace/jscan.c) is 128-bit SSE2: the same comparison against simdjson's 128-bit
        # kernel ("westmere", SSE4.2) says how much of the ratio is the vector width.
        SIMDJSON_FORCE_IMPLEMENTATION=westmere "$simd" -r "${ROUNDS:-5}" "$f" |
            sed -n 's/^/   /; /implementation\|MB\/s\|simdjson file/p'
    else
        echo "   simdjson comparison skipped: $simd not built (install libsimdjson-dev, scripts/deps.sh)"
    fi
    /usr/bin/time -f "%M" -o "$tmp/time" "$erg" trace import "$f" -o "$tmp/sched.json" >/dev/null 2>&1
    local imp_kib
    imp_kib=$(cat "$tmp/time")
    /usr/bin/time -f "%M" -o "$tmp/time" "$erg" trace report "$f" --json >/dev/null
    awk -v i="$imp_kib" -v r="$(cat "$tmp/time")" -v e="$events" 'BEGIN {
        printf "   peak RSS: erg trace import -o %.1f MiB (%.0f B/event), erg trace report %.1f MiB (%.0f B/event), %d events\n",
               i / 1024, i * 1024 / e, r / 1024, r * 1024 / e, e }'
    rm -f "$tmp/sched.json"
    read -r erg_s erg_mb < <(measure "$(stat -c %s "$f")" "$erg" trace report "$f" --json)
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

# Several rank files: parsed one at a time (-J 1) and all at once (-J nproc).
ranks=4
per_mb=$((size_mb / 10 > 0 ? size_mb / 10 : 1))
files=()
for r in $(seq 0 $((ranks - 1))); do
    "$gen" "$tmp/rank$r.json" "$per_mb" "$r" "$r" 2>/dev/null
    files+=("$tmp/rank$r.json")
done
echo "== $ranks generated rank files of ${per_mb} MB"
"$bench" -J 1 "${files[@]}" | sed 's/^/   /' | grep -E 'jobs|import'
"$bench" -J "$(nproc)" "${files[@]}" | sed 's/^/   /' | grep -E 'jobs|import'
