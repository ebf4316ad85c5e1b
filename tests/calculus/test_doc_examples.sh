#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/formats.md's examples, run so that they cannot drift. The doc's ```json blocks are, in order:
# 1 a signature/1 file, 2 the schedule/1 skeleton (not JSON), 3 the attention-layer schedule,
# 4 a DAG fragment (not a file), 5 the report/1 of the ```sh command before it. Blocks 1 and 3 must
# be accepted and give the figures the prose states; the command must print block 5's figures; the
# examples/ files the prose names must give its totals; the error messages it quotes are checked.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/formats.md"
T=$(mktemp -d /tmp/erg_formats_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"
awk -v dir="$T" '
    /^```json$/ { nj++; f = dir "/json_" nj ".json"; inb = 1; next }
    /^```sh$/   { nc++; f = dir "/cmd_" nc; inb = 2; next }
    /^```/      { inb = 0; next }
    inb == 1 { print > f }
    inb == 2 && /^\$ / { print substr($0, 3) > f }
' "$DOC"
for i in 1 2 3 4 5; do [ -s "$T/json_$i.json" ] || fail "json block $i missing"; done
[ ! -e "$T/json_6.json" ] || fail "a sixth json block: name it in this test"
# "$@" runs erg in $T; stdout in $T/out, stderr in $T/err, exit status in rc.
run() { (cd "$T" && "$ERG_BIN" "$@") > "$T/out" 2> "$T/err"; rc=$?; }
has() { grep -qF -- "$1" "$T/$2" || fail "$3: '$1' not in: $(cat "$T/$2")"; }
# A figure of the JSON output: the value of "key" (first occurrence), as printed.
num() { tr -d ' \n' < "$T/out" | grep -o "\"$1\":[-0-9.e+]*" | head -n 1 | cut -d: -f2; }
near() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
    m = b < 0 ? -b : b; exit !(d <= r * m) }' || fail "$4: got $1, the doc says $2"; }

# Block 1: a valid signature/1 file (insensitive to itself).
cp "$T/json_1.json" "$T/softmax.json"
run insensitive softmax.json softmax.json
[ "$rc" -eq 0 ] || fail "signature block rejected ($rc): $(cat "$T/err")"
# Block 3: 3.32 J with 518.4 mJ static.
cp "$T/json_3.json" "$T/att.json"
run compose att.json --json
[ "$rc" -eq 0 ] || fail "attention block rejected ($rc): $(cat "$T/err")"
near "$(num energy_j)" 3.32 1e-9 "attention block energy_j"
near "$(num static_energy_j)" 0.5184 1e-9 "attention block static_energy_j"

# The ```sh command and the report/1 block (rounded in the doc: 3 significant digits or better).
[ "$(wc -l < "$T/cmd_1")" -eq 1 ] || fail "expected one command in the sh block"
line=$(cat "$T/cmd_1")
case "$line" in erg\ *) ;; *) fail "not an erg command: $line" ;; esac
# shellcheck disable=SC2086
(cd "$ERG_TEST_SOURCE_DIR" && set -f && "$ERG_BIN" ${line#erg }) > "$T/out" 2> "$T/err"
rc=$?
[ "$rc" -eq 1 ] || fail "'$line' exit $rc, the doc says 1 (deviation detected): $(cat "$T/err")"
cp "$T/out" "$T/got.json"
for key in energy_j energy_sd_j time_s time_sd_s static_energy_j dynamic_energy_j bias_bound_j \
    z measured_j; do
    cp "$T/json_5.json" "$T/out"; want=$(num "$key")
    cp "$T/got.json" "$T/out"; got=$(num "$key")
    [ -n "$want" ] && [ -n "$got" ] || fail "$key missing (doc '$want', erg '$got')"
    near "$got" "$want" 0.02 "report $key"
done
# monte_carlo's figures: the second energy_j etc.
mc() { tr -d ' \n' < "$1" | sed -n "s/.*\"monte_carlo\":{\(.*\)}.*/\1/p" | sed -n "s/.*\"$2\":\([-0-9.e+]*\).*/\1/p"; }
for key in samples energy_j energy_sd_j time_s; do
    near "$(mc "$T/got.json" "$key")" "$(mc "$T/json_5.json" "$key")" 0.02 "monte_carlo $key"
done
grep -q '"grade": *"model_based"' "$T/got.json" || fail "report grade is not model_based"
grep -q '"detected": *true' "$T/got.json" || fail "deviation not detected"

# The examples/ files the prose names.
E="$ERG_TEST_SOURCE_DIR/examples"
run compose "$E/attention-layer-serialized.json" --json
near "$(num static_energy_j)" 0.8508 1e-9 "attention-layer-serialized static"
for f in pipeline-2gpu pipeline-2gpu-dag; do
    run compose "$E/$f.json" --json
    [ "$rc" -eq 0 ] || fail "$f: exit $rc"
    near "$(num energy_j)" 2.98 1e-9 "$f energy_j"
done
run compare "$E/attention-layer.json" "$E/attention-layer-serialized.json"
[ "$rc" -eq 0 ] || fail "compare exit $rc"
has 'A - B = -332.4 mJ (-9.1% of B; combined sd 27.38 mJ)' out "compare"

# The error messages the prose quotes (exit 2, one line on stderr).
bad() { run "$@"; [ "$rc" -eq 2 ] || fail "'$*' exit $rc, expected 2";
    [ "$(wc -l < "$T/err")" -eq 1 ] || fail "'$*': not one line: $(cat "$T/err")"; }
sed 's/"time_s": 0.00155/"time_s": -1/' "$T/att.json" > "$T/sched.json"
bad compose sched.json; has 'sched.json:4:48: signatures.prefix.time_s: must not be negative (got -1)' err neg
sed 's|"schedule/1"|"schedule/2"|' "$T/att.json" > "$T/v2.json"
bad compose v2.json; has 'unknown format version' err version
bad compose softmax.json
has 'softmax.json:1:2: format tag "erg" is "signature/1", expected "schedule/1"' err tag
sed 's/"time_var_s2"/"time_var_s"/' "$T/softmax.json" > "$T/k.json"
bad insensitive k.json k.json; has 'k.json:2:61: signature.time_var_s: unknown member of a signature' err member
printf '{"erg": "schedule/1", "devices": {"d": {"static_power_w": 1}},\n "signatures": {"x": {"device": "d", "time_s": 1,\n "dynamic_energy_j": 1, "time_var_s": 1}}, "expr": "x"}\n' > "$T/sched.json"
bad compose sched.json; has 'sched.json:3:' err inline; has 'signatures.x.time_var_s: unknown member of a signature' err inline
printf '{"traceEvents": []}\n' > "$T/tr.json"
bad compose tr.json; has 'erg trace import TRACE -o SCHEDULE.json' err trace
H='{"erg": "schedule/1", "devices": {"d": {"static_power_w": 1}}, "signatures": {"x": {"device": "d", "time_s": 1, "dynamic_energy_j": 1}},'
printf '%s\n"nodes": [{"id":"a","signature":"x"},{"id":"b","signature":"x"},{"id":"c","signature":"x"}], "edges": [["a","b"],["b","c"],["c","a"]]}\n' "$H" > "$T/cyc.json"
bad compose cyc.json; has 'the DAG has a cycle: "a" -> "b" -> "c" -> "a"' err cycle
printf '%s\n"nodes": [{"id": "a", "signature": "y"}], "edges": []}\n' "$H" > "$T/sched.json"
bad compose sched.json; has 'nodes[0]: node "a": unknown signature "y"' err node
echo "ok: formats.md's json blocks, its command and report, its example totals and quoted errors"
