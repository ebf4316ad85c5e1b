#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Perseus GPT-3 175B pipeline DAG, compute erg's frontier and compare it with Perseus's.
# usage: examples/perseus-gpt3/run.sh [ERG_BIN] [OUTDIR]      (from the repository root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
erg=${1:-build/src/cli/erg}
out=${2:-build/perseus-gpt3}
ref=$here/../../../shared/data/energy/perseus_frontier_gpt3-175b_a100_mb12.csv
[ -f "$ref" ] || { echo "skipped: $ref not found"; exit 0; }
mkdir -p "$out"
for mode in ms-floored measured; do
    flag=""
    [ "$mode" = ms-floored ] && flag="--quantize-ms"
    python3 "$here/build_schedule.py" $flag "$out/gpt3_$mode.json"
    start=$(date +%s.%N)
    "$erg" frontier "$out/gpt3_$mode.json" --csv --lp-deadlines 640 \
        --plot "$out/gpt3_$mode.svg" --reference "$ref" > "$out/gpt3_$mode.csv"
    end=$(date +%s.%N)
    echo "## $mode durations ($(echo "$end - $start" | bc) s for erg frontier)"
    python3 "$here/compare.py" "$out/gpt3_$mode.csv" "$ref"
    echo
done
