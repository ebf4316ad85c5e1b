#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-profile.sh without a GPU: --dry-run runs its phases (timeouts, file collection,
# machine.txt) with torch on the CPU and a smoke plan, and writes the same profile files; bad
# input is refused (exit 2) with nothing written. Skips (77) without Debian's python3-torch.
set -u
py=${ERG_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "skip: no $py"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "skip: python3-torch is not installed"; exit 77; }
src=${ERG_TEST_SOURCE_DIR:?}
erg=${ERG_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
gp="$src/scripts/gpu-profile.sh"

# A budget far above what the smoke plan needs (seconds on an idle machine): the phases' timeouts
# are upper bounds, and a loaded CI machine (sanitizer builds beside it) must not trip them.
PYTHON=$py ERG=$erg "$gp" --dry-run --out "$tmp" dry 1000 > "$tmp/out" 2>&1 \
    || { echo "FAIL: gpu-profile.sh --dry-run: $(cat "$tmp/out")"; fail=1; }
p=$tmp/dry/profile
head -1 "$p/ops.csv" 2>/dev/null | grep -q '^op,kappa,m,n,k,tokens,d_model,dtype' \
    || { echo "FAIL: ops.csv header"; fail=1; }
head -1 "$p/models.csv" 2>/dev/null | grep -qx 'arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade' \
    || { echo "FAIL: models.csv header"; fail=1; }
[ -s "$p/blocks.csv" ] || { echo "FAIL: blocks.csv missing"; fail=1; }
# the plan's limits: 4 ops, 4 blocks, 2 models (a header line each)
for f in ops:5 blocks:5 models:3; do
    n=$(grep -c . "$p/${f%%:*}.csv" 2>/dev/null)
    [ "$n" = "${f#*:}" ] || { echo "FAIL: ${f%%:*}.csv has $n lines, expected ${f#*:}"; fail=1; }
done
# measured rows: a positive time, no energy (--no-energy) rather than a made-up one
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         !($c["time_s"] > 0) || $c["energy_j"] != "" { bad = 1 } END { exit bad }' "$p/ops.csv" \
    || { echo "FAIL: ops.csv rows need time_s > 0 and an empty energy_j"; fail=1; }
grep -q '^device: cpu (dry run' "$p/machine.txt" 2>/dev/null || { echo "FAIL: machine.txt"; fail=1; }
ls "$p"/configs/*.json > /dev/null 2>&1 || { echo "FAIL: configs/ not collected"; fail=1; }
grep -q "fits skipped" "$tmp/out" || { echo "FAIL: the dry run must say the fits are skipped"; fail=1; }
[ ! -e "$tmp/dry/ops.json" ] || { echo "FAIL: a dry run fitted ops.json"; fail=1; }

# bad input: exit 2, nothing written
bad() { # bad WHAT EXPECTED-MESSAGE ARGS...
    what=$1 msg=$2
    shift 2
    PYTHON=$py ERG=$erg "$gp" "$@" > "$tmp/err" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "$msg" "$tmp/err" || { echo "FAIL: $what: exit $rc: $(cat "$tmp/err")"; fail=1; }
}
mkdir "$tmp/b"
bad "NAME with a slash" "plain folder name" --dry-run --out "$tmp/b" a/b
bad "unknown option" "unknown option --gpu" --gpu 1 x
bad "budget not a number" "whole number of seconds" --dry-run --out "$tmp/b" x 9m
bad "budget too small" "at least 10" --dry-run --out "$tmp/b" x 3
bad "--out not a folder" "is not a folder" --dry-run --out "$tmp/none" x
bad "no NAME" "usage" --dry-run
[ -z "$(ls -A "$tmp/b")" ] || { echo "FAIL: bad input wrote $(ls -A "$tmp/b")"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
