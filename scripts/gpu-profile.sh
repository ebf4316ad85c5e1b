#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Profile an NVIDIA GPU for HYMELL levels 1-3 within about 10 minutes and fit a target from it:
#   scripts/gpu-profile.sh NAME [BUDGET_S]        (default BUDGET_S 540)
# writes models/NAME/profile/{ops.csv,blocks.csv,models.csv,configs/,machine.txt} and fits
# models/NAME/{ops.json,blocks.json,e2e.json} with the same commands as every other target
# (docs/predict.md, "Profile files" and "GPU targets").
#
# Needs: an NVIDIA GPU with its driver (NVML: libnvidia-ml.so.1), python3 with torch (CUDA
# build); erg built (ERG=path/to/erg, default build/release/src/cli/erg, else build/gcc).
# Timing: CUDA events inside src/predict/profile_torch.py (--device cuda); energy: NVML's
# total-energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ) read around each batch of
# executions, each batch at least 0.1 s (the counter updates every 20-100 ms); bf16.
# The budget is split ops 20 %, blocks 45 %, whole models 35 %; each phase runs under `timeout`
# and the plan is sized (--limit) so that it normally finishes well inside its share.
#
# Options (before NAME):
#   --out DIR   write DIR/NAME/ instead of models/NAME/
#   --dry-run   no GPU: the same phases, timeouts and file collection with torch on the CPU
#               (profile_torch.py --device cpu --plan smoke, a few items per phase, no energy),
#               writing the same profile files; the fits are skipped (the smoke plan has 2
#               GEMMs, erg fit ops needs 12). For testing the script on a machine without a GPU.
set -euo pipefail
usage="usage: scripts/gpu-profile.sh [--dry-run] [--out DIR] NAME [BUDGET_S]"
dry=0
root=models
while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry=1; shift ;;
        --out) [ $# -ge 2 ] || { echo "gpu-profile: --out needs a folder; $usage" >&2; exit 2; }
               root=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "gpu-profile: unknown option $1; $usage" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "gpu-profile: $usage" >&2; exit 2; }
name=$1
budget=${2:-540}
case "$name" in
    */* | .* | "") echo "gpu-profile: NAME must be a plain folder name (models/NAME/)" >&2; exit 2 ;;
esac
case "$budget" in
    "" | *[!0-9]*) echo "gpu-profile: BUDGET_S must be a whole number of seconds (got '$budget')" >&2; exit 2 ;;
esac
[ "$budget" -ge 10 ] || { echo "gpu-profile: BUDGET_S must be at least 10 (got $budget)" >&2; exit 2; }
case "$root" in /*) ;; *) root=$PWD/$root ;; esac
[ -d "$root" ] || { echo "gpu-profile: --out $root is not a folder" >&2; exit 2; }
cd "$(dirname "$0")/.."
py=${PYTHON:-/usr/bin/python3}
erg=${ERG:-}
if [ -z "$erg" ]; then
    for c in build/release/src/cli/erg build/gcc/src/cli/erg; do
        [ -x "$c" ] && { erg=$c; break; }
    done
fi
[ -n "$erg" ] && [ -x "$erg" ] || { echo "gpu-profile: build erg first (cmake --build ...), or set ERG" >&2; exit 2; }
prof=src/predict/profile_torch.py
[ -r "$prof" ] || { echo "gpu-profile: $prof is missing" >&2; exit 2; }
if [ "$dry" = 1 ]; then
    "$py" -c 'import torch' 2>/dev/null || { echo "gpu-profile: --dry-run needs python3 with torch" >&2; exit 3; }
else
    "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)' || {
        echo "gpu-profile: torch sees no CUDA device" >&2; exit 3; }
fi

out=$root/$name
prof_dir=$out/profile
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$prof_dir"

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    if [ "$dry" = 1 ]; then
        echo "device: cpu (dry run: torch on the CPU, smoke plan, no energy; not a GPU profile)"
        "$py" -c 'import torch; print("torch:", torch.__version__)'
    else
        nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm \
            --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' || true
        "$py" -c 'import torch; print("torch:", torch.__version__, "cuda:", torch.version.cuda,
"device:", torch.cuda.get_device_name(0))'
    fi
    "$py" -c 'import transformers; print("transformers:", transformers.__version__)' 2>/dev/null || true
    echo "erg: $("$erg" --version 2>/dev/null || echo unknown)"
    echo "budget_s: $budget"
} > "$tmp/machine.txt"

t_ops=$((budget * 20 / 100))
t_blocks=$((budget * 45 / 100))
t_models=$((budget * 35 / 100))
common=(--device cuda --dtype bf16 --min-time "${MIN_TIME:-0.2}" --min-batches 3 --quiet)
lim_ops=${OPS_LIMIT:-110} lim_blocks=${BLOCKS_LIMIT:-400} lim_models=${MODELS_LIMIT:-60}
if [ "$dry" = 1 ]; then
    common=(--device cpu --plan smoke --min-time 0 --min-batches 2 --no-energy --quiet)
    lim_ops=${OPS_LIMIT:-4} lim_blocks=${BLOCKS_LIMIT:-4} lim_models=${MODELS_LIMIT:-2}
fi
phase() { # phase WHAT SECONDS LIMIT
    local what=$1 secs=$2 limit=$3 rc=0
    echo "gpu-profile: $what (at most ${secs} s)" >&2
    timeout --signal=INT "$secs" "$py" "$prof" "$what" -o "$tmp/$what" --limit "$limit" \
        "${common[@]}" || rc=$?
    if [ "$rc" -eq 124 ]; then
        echo "gpu-profile: $what ran past ${secs} s; keeping what it wrote" >&2
    elif [ "$rc" -ne 0 ]; then
        echo "gpu-profile: $what failed (exit $rc)" >&2
        return "$rc"
    fi
}
phase ops "$t_ops" "$lim_ops"
phase blocks "$t_blocks" "$lim_blocks"
phase models "$t_models" "$lim_models"

# Collect the profile files (whole or not at all: into the folder only when all three exist).
for f in ops/ops.csv blocks/blocks.csv models/models.csv; do
    [ -s "$tmp/$f" ] || { echo "gpu-profile: $f was not written" >&2; exit 1; }
done
cp "$tmp/ops/ops.csv" "$tmp/blocks/blocks.csv" "$tmp/models/models.csv" "$tmp/machine.txt" "$prof_dir/"
if [ -d "$tmp/models/configs" ]; then
    rm -rf "$prof_dir/configs"
    cp -r "$tmp/models/configs" "$prof_dir/configs"
fi

if [ "$dry" = 1 ]; then
    echo "gpu-profile: dry run: profile in $prof_dir; fits skipped (a smoke plan is too small to fit)"
    exit 0
fi
gpu=$("$py" -c 'import torch; print(torch.cuda.get_device_name(0))')
"$erg" fit ops "$prof_dir/ops.csv" -o "$out/ops.json" --target-kind "$name" \
    --target-desc "$gpu, torch bf16 (scripts/gpu-profile.sh)"
if "$erg" fit blocks --help 2>&1 | grep -q 'fit blocks'; then
    "$erg" fit blocks "$prof_dir" -o "$out/blocks.json" --ops "$out/ops.json"
    "$erg" fit model "$prof_dir/models.csv" -o "$out/e2e.json" --target "$out"
else
    echo "gpu-profile: this erg has no 'fit blocks|model'; level 1 fitted only" >&2
fi
echo "gpu-profile: target $out written (profile in $prof_dir)"
