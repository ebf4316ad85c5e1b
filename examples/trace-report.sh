#!/usr/bin/env bash
# Energy of a real PyTorch-profiler trace, three ways: the report with erg's default A100/H100
# rules, the same with your own rules, and import + compose (which gives the same totals).
# Usage: [ERG=path/to/erg] examples/trace-report.sh
# ERG defaults to build/release/src/cli/erg, what scripts/main.sh builds.
set -euo pipefail
cd "$(dirname "$0")/.."
erg=${ERG:-build/release/src/cli/erg}
if [ ! -x "$erg" ]; then
    echo "trace-report.sh: erg not found at $erg; build it with" >&2
    echo "  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release" >&2
    echo "or point ERG at an erg binary (ERG=build/src/cli/erg $0)" >&2
    exit 2
fi
trace=../shared/data/traces/hta_nccl_2xa100_rank0.json.gz
[ -r "$trace" ] || { echo "skipped: $trace not found"; exit 0; }

echo "== erg trace report (default rules, grade estimator)"
"$erg" trace report "$trace" --top 5

echo "== with examples/trace-rules.json, as JSON (totals only)"
"$erg" trace report "$trace" --rules examples/trace-rules.json --json |
    grep -E '^  "(energy_j|energy_sd_j|time_s|static_energy_j|dynamic_energy_j|grade|unmatched)"'

echo "== erg trace import, then erg compose"
out=$(mktemp /tmp/trace-schedule.XXXXXX.json)
"$erg" trace import "$trace" -o "$out"
"$erg" compose "$out"
rm -f "$out"
