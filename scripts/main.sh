#!/usr/bin/env bash
# Install what is missing, build erg, and run the main job on the bundled example: compose the
# energy of the paper's attention layer (energy-calculus paper, Section 2.4) with its uncertainty.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DERG_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
build/release/src/cli/erg compose examples/attention-layer.json

# Measure: detect this machine's meters, measure the bundled compute kernel (examples/meters-kernel.c)
# into a signature, and compose a schedule of it. Without hardware counters erg says plainly that
# the figures are estimates.
erg=build/release/src/cli/erg
echo
echo "== Energy meters on this machine =="
"$erg" meters
echo
# The calibration goes where 'erg measure' looks by default ($XDG_CACHE_HOME/erg/calibration.json,
# else ~/.cache/erg/calibration.json), so later 'erg measure' runs use it too.
echo "== Calibrating idle power (3 s at rest) =="
"$erg" calibrate --duration 3 --window 0.25
echo
echo "== Measuring the bundled kernel (5 runs) =="
"$erg" measure -r 5 --warmup 1 --name kernel \
    --signature build/release/kernel.json -- build/release/src/meter/erg-kernel 256 4
# The schedule declares the kernel's device with the static power the signature measured.
dev=$(sed -n 's/^ *"device": "\(.*\)",*$/\1/p' build/release/kernel.json)
s_w=$(sed -n 's/^ *"static_power_w": \([0-9.eE+-]*\),*$/\1/p' build/release/kernel.json)
cat > build/release/kernel-schedule.json <<JSON
{"erg": "schedule/1",
 "name": "the measured kernel twice in sequence, then twice side by side on the same device",
 "devices": {"${dev:-host}": {"static_power_w": ${s_w:-0}}},
 "signatures": {"kernel": "kernel.json"},
 "expr": {"seq": ["kernel", "kernel", {"par": ["kernel", "kernel"]}]}}
JSON
echo
echo "== Composing a schedule of the measured kernel =="
"$erg" compose build/release/kernel-schedule.json
