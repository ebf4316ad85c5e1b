#!/usr/bin/env bash
# Profile this machine's CPU on the default grid, fit HYMELL's level-1 estimators and predict.
#   examples/predict-cpu.sh [OUT_DIR] [MIN_TIME_S]
# The default grid (grids/cpu.csv, 186 configurations) takes about 6 minutes of CPU time at the
# default --min-time 1; on a shared machine use --clock thread (below) so that time spent
# descheduled is not counted.
set -euo pipefail
out=${1:-.}
min_time=${2:-1}
erg=${ERG:-"$(dirname "$0")/../build/release/src/cli/erg"}
if [ ! -x "$erg" ]; then
    echo "$(basename "$0"): erg not found at $erg; build it with scripts/main.sh, or" >&2
    echo "  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release" >&2
    echo "or point ERG at an erg binary (ERG=/path/to/erg $0)" >&2
    exit 2
fi
"$erg" profile ops --target cpu --clock thread --min-time "$min_time" -o "$out/ops_cpu.csv"
"$erg" fit ops "$out/ops_cpu.csv" -o "$out/model_cpu.json"
"$erg" predict op gemm --m 512 --n 4096 --k 4096 --model "$out/model_cpu.json"
"$erg" predict op rmsnorm --tokens 512 --d-model 4096 --model "$out/model_cpu.json"
"$erg" predict op softmax --tokens 1024 --model "$out/model_cpu.json" --json
