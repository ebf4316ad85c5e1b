#!/bin/sh
# SPDX-License-Identifier: MIT
# erg serve under load (bench/bench_serve.sh, bounded: 2 s per path, loopback): whatever rate this
# machine reaches, the counter must equal the energy the fake counter moved through its wraps and
# no interval may be ambiguous (a wrap unseen). The rates are printed, never asserted.
set -u
: "${ERG_BIN:?}" "${ERG_TEST_SOURCE_DIR:?}"
command -v wrk > /dev/null || { echo "skip: wrk is not installed (scripts/deps.sh installs it)"; exit 77; }
out=$(sh "$ERG_TEST_SOURCE_DIR/bench/bench_serve.sh" "$ERG_BIN" 2 8) || { echo "$out"; exit 1; }
echo "$out"
line=$(echo "$out" | grep '^fake counter moved')
moved=$(echo "$line" | sed -n 's/^fake counter moved \([0-9.]*\) J;.*/\1/p')
got=$(echo "$line" | sed -n 's/.*erg counted \([0-9.e+]*\) J;.*/\1/p')
amb=$(echo "$line" | sed -n 's/.*ambiguous \([0-9]*\)$/\1/p')
awk -v a="$moved" -v b="$got" 'BEGIN { exit !(a > 0 && (a - b) < 1e-6 && (b - a) < 1e-6) }' ||
    { echo "FAIL: the fake counter moved $moved J, erg counted $got J"; exit 1; }
[ "$amb" = 0 ] || { echo "FAIL: $amb ambiguous intervals"; exit 1; }
echo ok
