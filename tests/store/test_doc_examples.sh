#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/store.md's ```sh block, run line by line (comments stripped) against a store in a fresh
# $XDG_DATA_HOME, so that the doc's default location is checked too. `erg measure ... -- ./gemm`
# needs an energy meter and a gemm program: each such line is skipped with a note and stands in
# for by writing gemm.json with the figures of measurement k (time_s 0.5 s, then 0.6 s, ...).
# What each step prints is checked against what the comments say.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/store.md"
T=$(mktemp -d /tmp/erg_store_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"
awk '/^```sh$/ { inb = 1; next } /^```/ { inb = 0; next }
     inb { sub(/ *#.*/, ""); if ($0 != "") print }' "$DOC" > "$T/cmds"
[ "$(wc -l < "$T/cmds")" -ge 8 ] || fail "the doc's sh block has fewer than 8 commands"
unset ERG_STORE
XDG_DATA_HOME="$T/xdg"; export XDG_DATA_HOME
DB="$T/xdg/erg/signatures.db"
k=0; n=0
while IFS= read -r line; do
    case "$line" in
    "erg measure "*)
        k=$((k + 1))
        echo "skipped: '$line' (needs an energy meter and ./gemm): writing measurement $k"
        printf '{"erg": "signature/1", "name": "gemm-4096", "device": "cpu", "static_power_w": 20, "time_s": 0.%d, "dynamic_energy_j": 30, "grade": "model_based", "runs": 10}\n' \
            $((4 + k)) > "$T/gemm.json"
        continue ;;
    erg\ *) ;;
    *) fail "not an erg command: $line" ;;
    esac
    n=$((n + 1))
    # shellcheck disable=SC2086
    (cd "$T" && set -f && "$ERG_BIN" ${line#erg }) > "$T/out_$n" 2> "$T/err_$n" ||
        fail "'$line' exit $?: $(cat "$T/err_$n")"
    case "$line" in
    "erg store put "*) [ -f "$DB" ] || fail "'$line' did not create $DB" ;;
    "erg store list --json")
        grep -q '"erg": "store-list/1"' "$T/out_$n" || fail "store-list/1 tag missing"
        grep -q '"name": "gemm-4096"' "$T/out_$n" || fail "list --json lacks gemm-4096" ;;
    "erg store list")
        head -n 1 "$T/out_$n" | grep -q 'name.*device.*energy_j.*time_s.*static_w.*grade' ||
            fail "list header: $(head -n 1 "$T/out_$n")"
        grep -q '^gemm-4096  *cpu  *40  *0.5  *20  *model_based$' "$T/out_$n" ||
            fail "list row: $(cat "$T/out_$n")" ;;
    "erg store history gemm-4096")
        grep -q '^1  .* 40  *0.5  *20  *model_based$' "$T/out_$n" ||
            fail "history lacks version 1 (0.5 s, 40 J): $(cat "$T/out_$n")" ;;
    esac
done < "$T/cmds"
[ "$k" -eq 2 ] || fail "expected two measure lines, found $k"
[ "$n" -ge 8 ] || fail "ran $n store commands"
grep -q '"time_s": 0.5' "$T/g.json" || fail "g.json is not the first measurement: $(cat "$T/g.json")"
grep -q '"time_s": 0.5' "$T/old.json" || fail "old.json (--previous 1) is not the first measurement"
# After rm: the name is gone, with its history (exit 2 for an unknown name).
"$ERG_BIN" store get gemm-4096 > /dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "get after rm exit $rc, expected 2"
"$ERG_BIN" store history gemm-4096 > "$T/h" 2>&1; rc=$?
[ "$rc" -eq 2 ] || grep -q 'no earlier versions' "$T/h" || fail "history survives rm: $(cat "$T/h")"
# "a file without a name is refused": exit 2, naming the file, nothing stored.
sed 's/"name": "gemm-4096", //' "$T/gemm.json" > "$T/anon.json"
(cd "$T" && "$ERG_BIN" store put gemm.json anon.json) > /dev/null 2> "$T/err"; rc=$?
[ "$rc" -eq 2 ] || fail "put of a nameless file exit $rc, expected 2"
grep -qF 'anon.json' "$T/err" || fail "the refusal does not name the file: $(cat "$T/err")"
"$ERG_BIN" store get gemm-4096 > /dev/null 2>&1 && fail "one bad file still stored the good one"
echo "ok: store.md's $n store command(s) ($k measure line(s) stood in for)"
