#!/bin/sh
# SPDX-License-Identifier: MIT
# profile_torch.py (erg profile blocks|models): plans, configs, block numerics, a smoke run, bad
# input (test_profile_torch.py), and the CLI hand-off. Skips (77) without Debian's python3-torch.
set -u
py=${ERG_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3) || { echo "skip: no python3"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "skip: python3-torch is not installed"; exit 77; }
src=${ERG_TEST_SOURCE_DIR:?}
"$py" "$src/tests/predict/test_profile_torch.py" || exit 1

# the CLI runs the script with its options: a smoke profile of the models of two families
erg=${ERG_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ERG_PYTHON=$py ERG_PROFILE_SCRIPT="$src/src/predict/profile_torch.py" \
    "$erg" profile models --plan smoke --min-time 0 --no-meter --quiet -o "$tmp/m" \
    || { echo "FAIL: erg profile models"; fail=1; }
n=$(grep -c '^[a-z]' "$tmp/m/models.csv" 2>/dev/null)
[ "$n" = 21 ] || { echo "FAIL: models.csv has $n lines (header + 20 expected)"; fail=1; }
head -1 "$tmp/m/models.csv" | grep -qx 'arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade' \
    || { echo "FAIL: models.csv header"; fail=1; }
[ -f "$tmp/m/configs/mixtral-d64-l1-h2-kv1-e8k2.json" ] || { echo "FAIL: config written"; fail=1; }
# bad input: exit 2, nothing run
"$erg" profile blocks --target tpu -o "$tmp/b" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "expects cpu or cuda" "$tmp/err" && [ ! -e "$tmp/b" ] \
    || { echo "FAIL: --target tpu ($rc)"; fail=1; }
"$erg" profile blocks 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "missing -o DIR" "$tmp/err" || { echo "FAIL: missing -o ($rc)"; fail=1; }
ERG_PYTHON=/nonexistent/python "$erg" profile blocks -o "$tmp/c" 2>"$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "cannot run /nonexistent/python" "$tmp/err" \
    || { echo "FAIL: missing python ($rc)"; fail=1; }
# docs/profile.md's synopsis is the command's usage
syn='erg profile blocks|models|all [--target cpu|cuda] [--plan full|small|smoke]'
grep -qF -- "$syn" "$src/docs/profile.md" || { echo "FAIL: docs/profile.md lacks '$syn'"; fail=1; }
"$erg" profile --help | grep -qF -- "Usage: $syn" || { echo "FAIL: help lacks '$syn'"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
