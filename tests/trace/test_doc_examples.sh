#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/trace.md's examples, run so that they cannot drift: the rules/1 ```json block is applied to
# tests/trace/data/two_gpus.json and must give the hand-computed totals (report and import+compose
# agree); the "$ erg trace report" example runs on the shared HTA traces when they are present
# (skipped with a note otherwise) and must print the doc's message, joined over its line breaks;
# every "Bad input" message the doc quotes is checked (exit 2, one line, no -o file written).
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/trace.md"
DATA="$ERG_TEST_SOURCE_DIR/../shared/data/traces"
T=$(mktemp -d /tmp/erg_trace_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"
awk -v dir="$T" '
    /^```json$/ { nj++; f = dir "/json_" nj ".json"; inb = 1; next }
    /^ *```$/ && inb == 0 { nb++; f = dir "/block_" nb; inb = 2; next }
    /^ *```/    { inb = 0; next }
    inb >= 1 { print > f }
' "$DOC"
[ -s "$T/json_1.json" ] || fail "no rules json block"
[ ! -e "$T/json_2.json" ] || fail "a second json block: name it in this test"
run() { (cd "$T" && "$ERG_BIN" "$@") > "$T/out" 2> "$T/err"; rc=$?; }
num() { tr -d ' \n' < "$T/out" | grep -o "\"$1\":[-0-9.e+]*" | head -n 1 | cut -d: -f2; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
    exit !(d <= 1e-9 * m) }' || fail "$3: got '$1', expected $2"; }

# The rules block on two_gpus.json: makespan 1000..1350 us; 2 devices x 60 W x 350 us = 0.042 J
# static; gemm 100 us x 200 W = 0.020 J (sd 20 W x 100 us = 0.002 J); the rest at 100 W:
# (100 + 80 + 50 + 200 + 10) us = 0.044 J; E = 0.106 J.
cp "$T/json_1.json" "$T/rules.json"
cp "$ERG_TEST_SOURCE_DIR/tests/trace/data/two_gpus.json" "$T/two_gpus.json"
run trace report two_gpus.json --rules rules.json --json
[ "$rc" -eq 0 ] || fail "the doc's rules are rejected ($rc): $(cat "$T/err")"
near "$(num energy_j)" 0.106 "report energy_j"
near "$(num energy_sd_j)" 0.002 "report energy_sd_j"
near "$(num static_energy_j)" 0.042 "report static_energy_j"
near "$(num dynamic_energy_j)" 0.064 "report dynamic_energy_j"
near "$(num time_s)" 0.00035 "report time_s"
run trace import two_gpus.json -o s.json --rules rules.json
[ "$rc" -eq 0 ] || fail "import exit $rc: $(cat "$T/err")"
run compose s.json --json
[ "$rc" -eq 0 ] || fail "compose of the import exit $rc: $(cat "$T/err")"
near "$(num energy_j)" 0.106 "import+compose energy_j"
near "$(num energy_sd_j)" 0.002 "import+compose energy_sd_j"

# The quoted refusal of two files from different clocks (needs the shared traces).
n=0
for b in "$T"/block_*; do
    grep -q '^ *\$ erg ' "$b" || continue
    n=$((n + 1))
    line=$(sed -n 's/^ *\$ //p' "$b")
    want=$(grep -v '^ *\$ ' "$b" | sed 's/^ *//' | tr '\n' ' ' | sed 's/ *$//')
    if [ ! -r "$DATA/hta_alexnet_a100_critical_path.json.gz" ] ||
       [ ! -r "$DATA/hta_nccl_2xa100_rank0.json.gz" ]; then
        echo "skipped: '$line': $DATA not found"
        continue
    fi
    cp "$DATA/hta_alexnet_a100_critical_path.json.gz" "$T/alexnet.json.gz"
    cp "$DATA/hta_nccl_2xa100_rank0.json.gz" "$T/nccl_rank0.json.gz"
    # shellcheck disable=SC2086
    (cd "$T" && set -f && "$ERG_BIN" ${line#erg }) > "$T/out" 2> "$T/err"
    rc=$?
    [ "$rc" -eq 2 ] || fail "'$line' exit $rc, expected 2"
    [ "$(wc -l < "$T/err")" -eq 1 ] || fail "'$line': not one line on stderr"
    [ "$(cat "$T/err")" = "$want" ] || fail "'$line' prints
$(cat "$T/err")
the doc says
$want"
done
[ "$n" -eq 1 ] || fail "expected one \$ erg example in the doc, found $n"

# The "Bad input" messages.
bad() { f=$1; shift; rm -f "$T/x.json"; run trace import "$f" -o x.json
    [ "$rc" -eq 2 ] || fail "import $f exit $rc, expected 2"
    [ ! -e "$T/x.json" ] || fail "import $f wrote x.json"
    run trace report "$f"
    [ "$rc" -eq 2 ] || fail "report $f exit $rc, expected 2"
    [ "$(wc -l < "$T/err")" -eq 1 ] || fail "$f: not one line: $(cat "$T/err")"
    for w in "$@"; do grep -qF -- "$w" "$T/err" || fail "$f: '$w' not in: $(cat "$T/err")"; done; }
# ...and the doc quotes the same text (N, FILE and the like standing for the figures).
doc() { for w in "$@"; do tr '\n' ' ' < "$DOC" | sed 's/  */ /g' | grep -qF -- "$w" ||
    fail "the doc no longer says '$w'"; done; }
doc 'malformed JSON at byte N: ' 'JSON ends early at byte N (truncated file?)' \
    'truncated gzip stream after N bytes: unexpected end of file' 'empty file: no JSON trace in it' \
    '`not a trace: ...`' 'not a Chrome/Kineto trace (it is an erg schedule/1 file: run erg compose on it)' \
    'not a Chrome/Kineto trace: a JSON object without traceEvents' \
    'no GPU activity (kernel, gpu_memcpy, gpu_memset) in N events of 1 file: was the profiler run with CUDA activities on?' 
printf '{"traceEvents": [}' > "$T/mal.json"
bad mal.json 'erg: mal.json:1:18: malformed JSON at byte 17: '
printf '{"traceEvents": [{"ph": "X"' > "$T/trunc.json"
bad trunc.json 'JSON ends early at byte 27 (truncated file?)'
: > "$T/empty.json"
bad empty.json 'empty file: no JSON trace in it'
gzip -c "$T/two_gpus.json" | head -c 200 > "$T/cut.json.gz"
bad cut.json.gz 'truncated gzip stream after ' ' bytes: unexpected end of file'
echo 42 > "$T/n.json"
bad n.json 'not a trace: '
cp "$ERG_TEST_SOURCE_DIR/examples/attention-layer.json" "$T/sch.json"
bad sch.json 'not a Chrome/Kineto trace (it is an erg schedule/1 file: run erg compose on it)'
echo '{"a": 1}' > "$T/obj.json"
bad obj.json 'not a Chrome/Kineto trace: a JSON object without traceEvents'
printf '[1,2' > "$T/arr.json"
bad arr.json 'JSON ends early at byte 4 (truncated file?)'
echo '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}' > "$T/nogpu.json"
bad nogpu.json 'no GPU activity (kernel, gpu_memcpy, gpu_memset) in 1 events of 1 file: was the profiler run with CUDA activities on?'
# An array cut between two events is still read.
printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7},' > "$T/cut2.json"
run trace report cut2.json
[ "$rc" -eq 0 ] || fail "an array cut between two events: exit $rc: $(cat "$T/err")"
echo "ok: trace.md's rules block, its quoted command and its bad-input messages"
