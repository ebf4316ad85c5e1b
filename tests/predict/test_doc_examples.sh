#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/predict.md's examples. Its synopsis block has placeholders (M, FILE, ...): each of its five
# command forms is run here with small figures, every option it lists given at least once; the
# full-grid profile (minutes) is replaced by a two-row grid at --min-time 0.05 --no-meter. The
# behaviour and messages the prose quotes are checked, and the committed models carry the
# model/1 block's top-level members.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/predict.md"
S="$ERG_TEST_SOURCE_DIR"
T=$(mktemp -d /tmp/erg_predict_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"
awk '/^```$/ { nb++; inb = (nb == 1); next } /^```/ { inb = 0; next } inb' "$DOC" > "$T/synopsis"
run() { (cd "$S" && "$ERG_BIN" "$@") > "$T/out" 2> "$T/err"; rc=$?; }
ok() { run "$@"; [ "$rc" -eq 0 ] || fail "'erg $*' exit $rc: $(cat "$T/err")"; }
has() { grep -qF -- "$1" "$T/$2" || fail "'$1' not in $2: $(cat "$T/$2")"; }
doc() { tr '\n' ' ' < "$DOC" | sed 's/  */ /g' | grep -qF -- "$1" || fail "the doc no longer says '$1'"; }
# Every form the test runs is one the synopsis shows, and every option it lists is given below.
for form in 'erg profile ops --target cpu' 'erg fit ops ops.csv -o model.json' \
    'erg predict op gemm --m M --n N --k K' 'erg predict op rmsnorm --tokens N --d-model D' \
    'erg predict op softmax --tokens N' '(or --m R --n C for a row-wise softmax)'; do
    grep -qF -- "$form" "$T/synopsis" || fail "the synopsis lacks '$form'"
done
for opt in --grid --min-time --threads --no-meter --paper-thresholds --test-fraction --seed --json \
    --model --dtype; do
    grep -qF -- "$opt" "$T/synopsis" || fail "the synopsis lacks $opt"
done

printf 'op,kappa,m,n,k,tokens,d_model,dtype\nrmsnorm,,,,,64,256,fp32\ngemm,,32,32,32,,,fp32\n' > "$T/g.csv"
echo "note: 'erg profile ops --target cpu' on the default grid takes minutes: profiling a two-row grid"
ok profile ops --target cpu --grid "$T/g.csv" --min-time 0.05 --threads 1 --no-meter -o "$T/ops.csv"
head -n 1 "$T/ops.csv" | grep -qx 'op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade' ||
    fail "ops.csv header: $(head -n 1 "$T/ops.csv")"
[ "$(wc -l < "$T/ops.csv")" -eq 3 ] || fail "ops.csv rows: $(cat "$T/ops.csv")"
# --no-meter: a constant 15 W estimate (energy_j / time_s on each row).
awk -F, 'NR > 1 { p = $12 / $10; if (p < 14.999 || p > 15.001) exit 1 }' "$T/ops.csv" ||
    fail "--no-meter rows are not at 15 W: $(cat "$T/ops.csv")"
grep -q '^rmsnorm,erg-c,' "$T/ops.csv" || fail "rmsnorm kappa is not erg-c"
grep -q '^gemm,openblas-.*-sgemm-.*-t1,' "$T/ops.csv" || fail "gemm kappa: $(cat "$T/ops.csv")"

ok fit ops models/cpu-amd-epyc.ops.csv -o "$T/model.json" --test-fraction 0.2 --seed 42 --json
has '"erg": "fit-report/1"' out
ok fit ops models/cpu-amd-epyc.ops.csv -o "$T/model2.json" --paper-thresholds
for m in "$T/model.json" models/cpu-amd-epyc.json models/a100-llmcompass.json; do
    case "$m" in /*) f=$m ;; *) f="$S/$m" ;; esac
    tr -d ' \n' < "$f" > "$T/m" || fail "cannot read $f"
    for key in '"erg":"model/1"' '"kind":"hymell-level1-ops"' '"target":{' '"grade":' '"fit":{' \
        '"roofline":{' '"thresholds":{' '"ops":{'; do
        grep -qF -- "$key" "$T/m" || fail "$m lacks $key (the doc's model/1 block)"
    done
done

ok predict op gemm --m 1024 --n 1024 --k 1024 --model models/cpu-amd-epyc.json --json
has '"erg": "prediction/1"' out; has '"dtype": "fp32"' out; has '"model": ' out
ok predict op gemm --m 1024 --n 1024 --k 1024 --model models/a100-llmcompass.json
has 'gemm fp16' out; doc 'answers "gemm fp16"'
run predict op gemm --m 1024 --n 1024 --k 1024 --model models/a100-llmcompass.json --dtype fp32
[ "$rc" -eq 2 ] || fail "--dtype fp32 on the A100 model: exit $rc, expected 2"
has 'the gemm estimator was fitted on fp16, not fp32' err; doc 'the gemm estimator was fitted on fp16, not fp32'
ok predict op rmsnorm --tokens 128 --d-model 4096 --model models/cpu-amd-epyc.json --dtype fp32
has 'rmsnorm fp32' out
ok predict op softmax --tokens 512 --model models/cpu-amd-epyc.json
has 'softmax fp32' out
ok predict op softmax --m 128 --n 1024 --model models/cpu-amd-epyc.json --json
has '"op": "softmax"' out

# The quoted refusals of a file that is not a CSV.
run profile ops --grid examples/attention-layer.json -o "$T/x.csv"
[ "$rc" -eq 2 ] || fail "profile --grid JSON exit $rc"
want='examples/attention-layer.json:1:1: not a grid CSV (expected the header op,kappa,m,...): it is JSON ("erg": "schedule/1")'
has "$want" err; doc "$want"
[ ! -e "$T/x.csv" ] || fail "profile wrote x.csv"
run fit ops examples/attention-layer.json -o "$T/x.json"
[ "$rc" -eq 2 ] || fail "fit of JSON exit $rc"
has 'not an ops CSV (expected the header op,kappa,m,...,grade)' err
doc 'not an ops CSV (expected the header op,kappa,m,...,grade)'
# --target cuda: the extension point, exit 3.
run profile ops --target cuda -o "$T/c.csv"
[ "$rc" -eq 3 ] || fail "--target cuda exit $rc, expected 3"
has 'extension point not built' err
echo "ok: predict.md's command forms, its quoted messages and the model/1 members"
