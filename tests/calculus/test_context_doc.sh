#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/context.md's examples, run so that they cannot drift: its one ```json block (a signature/1
# with context points) is read by every reader the page names and keeps its points through the
# store; its correlation snippet is accepted in a schedule; the commands it documents exist and
# take the options it lists; the quoted message of the graph's file tag matches what erg writes.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/context.md"
T=$(mktemp -d /tmp/erg_context_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
awk -v dir="$T" '/^```json$/ { n++; f = dir "/json_" n ".json"; inb = 1; next } /^```/ { inb = 0; next } inb { print > f }' "$DOC"
[ -s "$T/json_1.json" ] || fail "json block 1 missing"
[ ! -e "$T/json_2.json" ] || fail "a second json block: name it in this test"
export ERG_STORE="$T/s.db"
"$ERG_BIN" store put "$T/json_1.json" 2> "$T/err" || fail "store put: $(cat "$T/err")"
"$ERG_BIN" store get gemm -o "$T/got.json" || fail "store get"
tr -d ' \n' < "$T/got.json" | grep -q '"name":"after:stream","mechanism":"cache","after":"stream","cache":"cold","traffic_bytes":67108864' || fail "points kept"
tr -d ' \n' < "$T/got.json" | grep -q '"corunners":\["copy"\]' || fail "co-runners kept"
"$ERG_BIN" insensitive "$T/json_1.json" "$T/json_1.json" > /dev/null || fail "the plain reader reads it"
# the correlation snippet, in a schedule of the doc's signature
corr=$(awk '/"correlations": \[/ { on = 1 } on { print } on && /\]$/ { exit }' "$DOC" | sed 's/"attn", "mlp"/"gemm", "copy"/; s/"a", "b"/"gemm", "copy"/')
[ -n "$corr" ] || fail "correlation snippet not found"
cat > "$T/sched.json" <<JSON
{"erg": "schedule/1", "devices": {"cpu": {"static_power_w": 10}},
 "signatures": {"gemm": "json_1.json", "copy": {"device": "cpu", "time_s": 1, "dynamic_energy_j": 1, "energy_var_j2": 0.01}},
 "nodes": [{"id": "a", "signature": "gemm"}, {"id": "b", "signature": "copy"}], "edges": [["a", "b"]],
 $corr}
JSON
"$ERG_BIN" compose "$T/sched.json" > /dev/null 2> "$T/err" || fail "compose with correlations: $(cat "$T/err")"
echo '{"erg": "signature/1", "name": "ab", "static_power_w": 10, "time_s": 2.05, "dynamic_energy_j": 6.2}' > "$T/coarse.json"
"$ERG_BIN" check-granularity "$T/coarse.json" "$T/sched.json" --json > "$T/out" 2> "$T/err"
[ $? -le 1 ] || fail "check-granularity: $(cat "$T/err")"
# gemm runs after nothing and copy after gemm: 15 + 11 = 26 J; the coarse 26.7 J
tr -d ' \n' < "$T/out" | grep -q '"parts_energy_j":26.0,' || fail "parts 26 J: $(cat "$T/out")"
# the commands and options the page documents
for o in --after --cold --warm --heat --with --traffic-bytes --reset --time --energy --static-power --schedule --corunner-out --warmup; do
    "$ERG_BIN" characterize --help | grep -q -- "$o" || fail "characterize --help lacks $o"
    grep -q -- "$o" "$DOC" || fail "docs/context.md lacks $o"
done
for o in --measured --characterize --in-place --write-signatures --top --graph --json; do
    "$ERG_BIN" refine --help | grep -q -- "$o" || fail "refine --help lacks $o"
done
grep -q '"erg": "interactions/1"' "$DOC" || fail "graph tag in the doc"
grep -q 'interactions/1' "$ERG_TEST_SOURCE_DIR/src/calculus/interaction.c" || fail "graph tag in the writer"
echo ok
