#!/usr/bin/env bash
# erg profile / fit / predict from the command line: a tiny end-to-end run and every bad input.
set -u
erg=${ERG_BIN:?ERG_BIN not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check NAME WANT_STATUS STDERR_PATTERN -- command...
    local name=$1 want=$2 pat=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" != "$want" ] || ! grep -q -e "$pat" "$tmp/err" "$tmp/out"; then
        echo "FAIL $name: status $got (want $want); stdout/stderr:"; cat "$tmp/out" "$tmp/err"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}

# A small grid profiled quickly; the fit needs enough points per op, so synthesise a larger
# ops.csv with awk for the fit tests (profiling many configurations would be slow).
cat > "$tmp/grid.csv" <<'G'
op,kappa,m,n,k,tokens,d_model,dtype
rmsnorm,,,,,4,256,fp32
softmax,,,,,32,,fp32
gemm,,16,16,16,,,fp32
G
check "profile runs a grid" 0 "wrote 3 configurations" -- "$erg" profile ops --grid "$tmp/grid.csv" --min-time 0.003 -o "$tmp/ops.csv"
head -1 "$tmp/ops.csv" | grep -qx "op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade" \
    || { echo "FAIL header"; fails=$((fails + 1)); }
[ "$(grep -c ',estimator$' "$tmp/ops.csv")" = 3 ] || { echo "FAIL grade column"; fails=$((fails + 1)); }

awk 'BEGIN { print "op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade";
  for (t = 1; t <= 1024; t *= 2) for (d = 256; d <= 4096; d *= 2) {
    nd = t * d; T = (nd < 200000) ? 1e-6 + 2e-10 * nd + 3e-8 * t : 5e-6 + 6e-10 * nd
    printf "rmsnorm,x,,,,%d,%d,fp32,10,%.9g,,%.9g,,estimator\n", t, d, T, 12 * T }
  for (n = 16; n <= 4096; n = int(n * 1.25) + 1) { T = 2e-6 + 3e-9 * n * n + 1e-8 * n
    printf "softmax,x,,,,%d,,fp32,10,%.9g,,%.9g,,estimator\n", n, T, 12 * T } }' > "$tmp/syn.csv"
check "fit prints table layout" 0 "RMSNorm estimator (Table 1 layout)" -- "$erg" fit ops "$tmp/syn.csv" -o "$tmp/model.json"
grep -q '"erg": "model/1"' "$tmp/model.json" || { echo "FAIL model tag"; fails=$((fails + 1)); }
check "fit --json" 0 '"time_mape_pct"' -- "$erg" fit ops "$tmp/syn.csv" -o "$tmp/model2.json" --json --paper-thresholds --target-kind other-box
check "predict rmsnorm" 0 "rmsnorm fp32: time" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/model.json"
check "predict --json" 0 '"erg": "prediction/1"' -- "$erg" predict op rmsnorm --tokens 8 --d-model 1024 --model "$tmp/model.json" --json
grep -q '"grade": "estimator"' "$tmp/out" && grep -q '"time_s": ' "$tmp/out" && grep -q '"energy_j": ' "$tmp/out" \
    && grep -q '"method": "fit"' "$tmp/out" && grep -q '"extrapolated": false' "$tmp/out" \
    && grep -q '"held_out_time_mape_pct": [0-9]' "$tmp/out" \
    || { echo "FAIL predict json keys"; cat "$tmp/out"; fails=$((fails + 1)); }
check "predict writes a signature" 0 "rmsnorm fp32" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/model.json" --signature "$tmp/sig.json" --static-power-w 1e-3
grep -q '"erg": "signature/1"' "$tmp/sig.json" && grep -q '"static_power_w": 0.001' "$tmp/sig.json" \
    || { echo "FAIL signature file"; cat "$tmp/sig.json"; fails=$((fails + 1)); }
# held-out errors become the predictions' sd: a negative one is refused where it is read, one so
# large that its variance overflows is refused where it is used (both used to print "+- inf J")
sed 's/"time_mape_pct": [0-9][0-9.e+-]*/"time_mape_pct": -5/' "$tmp/model.json" > "$tmp/neg.json"
check "negative held-out error" 2 "time_mape_pct: a held-out error must be a percentage >= 0, got -5" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/neg.json"
sed 's/"energy_mape_pct": [0-9][0-9.e+-]*/"energy_mape_pct": 1e300/; s/"time_mape_pct": [0-9][0-9.e+-]*/"time_mape_pct": 1e300/' "$tmp/model.json" > "$tmp/huge.json"
check "held-out error whose variance overflows" 2 "variance overflow" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/huge.json" --signature "$tmp/sig3.json" --static-power-w 1e-3
[ -e "$tmp/sig3.json" ] && { echo "FAIL a signature was written"; fails=$((fails + 1)); }
# a denormal roofline rate: the roofline time of the ops without an estimator overflows to inf
mkdir -p "$tmp/denormal"
sed 's/"peak_flop_s": [0-9][0-9.e+-]*/"peak_flop_s": 1e-310/' "${ERG_TEST_SOURCE_DIR:?}/models/cpu/ops.json" > "$tmp/denormal/ops.json"
check "denormal roofline rate" 2 "out of range\|time overflows" -- "$erg" predict model "$ERG_TEST_SOURCE_DIR/tests/predict/configs/tiny-llama.json" --target "$tmp/denormal"
check "signature static power too high" 2 "exceeds the predicted energy" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/model.json" --signature "$tmp/sig2.json" --static-power-w 1e9
check "predict extrapolates with a warning" 0 "tokens = 100000 is outside the trained 1..1024" -- "$erg" predict op rmsnorm --tokens 100000 --d-model 1024 --model "$tmp/model.json"
grep -q "method roofline" "$tmp/out" || { echo "FAIL extrapolation method"; cat "$tmp/out"; fails=$((fails + 1)); }
check "predict shows the held-out MAPE and grade" 0 "held-out MAPE of the fit in this regime: time [0-9.e+-]* %, energy [0-9.e+-]* % (grade estimator)" -- "$erg" predict op rmsnorm --tokens 64 --d-model 1024 --model "$tmp/model.json"

# the committed CPU model: the trial's negative GEMM times and unbounded extrapolation
src=${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}
cpu="$src/models/cpu-amd-epyc.json"
positive() { # positive KEY: the JSON number KEY in $tmp/out is finite and > 0
    awk -v k="\"$1\":" '{ for (i = 1; i <= NF; i++) if ($i == k) { v = $(i + 1); sub(/,$/, "", v);
        exit !(v + 0 > 0 && v !~ /nan|inf/) } exit 1 }' "$tmp/out"
}
for mnk in "16 16 16" "1 1 1" "8 8 8" "16 1 4096" "1826 1 1"; do
    set -- $mnk
    check "gemm $1x$2x$3 is positive" 0 '"erg": "prediction/1"' -- "$erg" predict op gemm --m "$1" --n "$2" --k "$3" --model "$cpu" --json
    { positive time_s && positive energy_j; } || { echo "FAIL gemm $mnk: not positive"; cat "$tmp/out"; fails=$((fails + 1)); }
done
# Which machine erg runs on is read from <ERG_ROOT>/proc/cpuinfo: give it the machine the committed
# model was fitted on (and then another one), so the outcome never depends on the host's CPU.
mkdir -p "$tmp/epyc/proc" "$tmp/xeon/proc" "$tmp/empty-models"
printf 'processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\n' > "$tmp/epyc/proc/cpuinfo"
printf 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz\n\n' > "$tmp/xeon/proc/cpuinfo"
ERG_ROOT="$tmp/epyc" "$erg" predict op gemm --m 16 --n 16 --k 16 --model "$cpu" 2>"$tmp/err" >/dev/null
[ ! -s "$tmp/err" ] || { echo "FAIL 16^3 lies inside the range: no warning expected"; cat "$tmp/err"; fails=$((fails + 1)); }
check "a model of another machine is named" 0 "fitted for cpu-amd-epyc, not this machine (cpu-intel-r-xeon-r-gold-6140-cpu-2-30ghz)" -- env ERG_ROOT="$tmp/xeon" "$erg" predict op gemm --m 16 --n 16 --k 16 --model "$cpu"
grep -q "^gemm fp32:" "$tmp/out" || { echo "FAIL the prediction is still printed"; cat "$tmp/out"; fails=$((fails + 1)); }
# no committed model for this machine: how to fit one, and how long the default grid takes
check "no model: how to fit one" 2 "erg profile ops --target cpu -o ops.csv" -- env ERG_ROOT="$tmp/xeon" ERG_MODEL_DIR="$tmp/empty-models" "$erg" predict op gemm --m 16 --n 16 --k 16
rows=$(grep -v '^#' "$src/grids/cpu.csv" | tail -n +2 | grep -c .)
mins=$(( (rows + 59) / 60 ))
grep -q "erg fit ops ops.csv -o cpu-intel-r-xeon-r-gold-6140-cpu-2-30ghz.json" "$tmp/err" \
    && grep -q "has $rows configurations; each runs for --min-time (1 s) after a warm-up, so profiling takes at least $mins min" "$tmp/err" \
    || { echo "FAIL no-model hint ($rows rows, $mins min)"; cat "$tmp/err"; fails=$((fails + 1)); }
check "far beyond the range: roofline" 0 "m = 99999999999 is outside the trained" -- "$erg" predict op gemm --m 99999999999 --n 10 --k 10 --model "$cpu" --json
grep -q '"method": "roofline"' "$tmp/out" && grep -q '"extrapolated": true' "$tmp/out" \
    && awk '{ for (i = 1; i <= NF; i++) if ($i == "\"power_w\":") { v = $(i + 1) + 0; exit !(v > 0 && v <= 70) } exit 1 }' "$tmp/out" \
    || { echo "FAIL roofline extrapolation"; cat "$tmp/out"; fails=$((fails + 1)); }

# bad input
check "op not in model" 2 "no gemm estimator" -- "$erg" predict op gemm --m 8 --n 8 --k 8 --model "$tmp/model.json"
check "unknown op" 2 "unknown op 'conv'" -- "$erg" predict op conv --m 8 --model "$tmp/model.json"
check "negative dim" 2 "--m expects a positive integer" -- "$erg" predict op gemm --m -8 --n 8 --k 8 --model "$tmp/model.json"
check "zero dim" 2 "--k expects a positive integer" -- "$erg" predict op gemm --m 8 --n 8 --k 0 --model "$tmp/model.json"
for cmd in "predict op gemm" "fit ops" "profile ops"; do
    check "$cmd: unknown option, one message" 2 "unknown option '--bogus'" -- "$erg" $cmd --bogus
    [ "$(grep -c . "$tmp/err")" = 2 ] && ! grep -q unrecognized "$tmp/err" \
        || { echo "FAIL $cmd --bogus: expected one message and the --help hint"; cat "$tmp/err"; fails=$((fails + 1)); }
    check "$cmd --help: exit status" 0 "Exit status: 0" -- "$erg" $cmd --help
done
check "fit --json is tagged" 0 '"erg": "fit-report/1"' -- "$erg" fit ops "$tmp/syn.csv" -o "$tmp/model3.json" --json
check "missing dim" 2 "gemm needs m, n, k" -- "$erg" predict op gemm --m 8 --n 8 --model "$tmp/model.json"
check "option of another op" 2 "option not used by rmsnorm" -- "$erg" predict op rmsnorm --tokens 8 --d-model 64 --k 3 --model "$tmp/model.json"
check "missing model" 2 "nonexistent" -- "$erg" predict op rmsnorm --tokens 8 --d-model 64 --model "$tmp/nonexistent.json"
sed 's|"hymell-level1-ops"|"something-else"|' "$tmp/model.json" > "$tmp/other.json"
check "model of another kind" 2 "a level-1 op model" -- "$erg" predict op rmsnorm --tokens 8 --d-model 64 --model "$tmp/other.json"
check "model of another target" 0 "was fitted for other-box" -- "$erg" predict op rmsnorm --tokens 8 --d-model 256 --model "$tmp/model2.json"
check "wrong dtype" 2 "fitted on fp32, not bf16" -- "$erg" predict op rmsnorm --tokens 8 --d-model 64 --dtype bf16 --model "$tmp/model.json"
printf 'op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade\ngemm,x,8,8,8,,,fp32,1,abc,,,,\n' > "$tmp/bad.csv"
# issue 16: a NUL byte used to drop the rows after it silently; a device is not a file
printf 'op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade\ngemm,x,8,8,8,,,fp32,1,1e-6,,,,\n\000gemm,x,9,9,9,,,fp32,1,1e-6,,,,\n' > "$tmp/nul.csv"
check "a NUL byte in ops.csv" 2 "nul.csv:3:1: a NUL byte (a binary file, not an ops CSV)" -- "$erg" fit ops "$tmp/nul.csv" -o "$tmp/never.json"
check "a device as ops.csv" 2 "/dev/zero: not a regular file" -- "$erg" fit ops /dev/zero -o "$tmp/never.json"
check "non-numeric column" 2 "bad.csv:2:23: column 'time_s': expected a number" -- "$erg" fit ops "$tmp/bad.csv" -o "$tmp/never.json"
[ ! -e "$tmp/never.json" ] || { echo "FAIL half-written model"; fails=$((fails + 1)); }
printf 'op,kappa,m,n,k,tokens,d_model,dtype\ngemm,,8,-2,8,,,fp32\n' > "$tmp/badgrid.csv"
check "negative dim in grid" 2 "badgrid.csv:2:9: column 'n': dimensions must not be negative" -- "$erg" profile ops --grid "$tmp/badgrid.csv" -o "$tmp/never.csv"
[ ! -e "$tmp/never.csv" ] || { echo "FAIL half-written ops.csv"; fails=$((fails + 1)); }
# an output that cannot be written is refused before profiling, not after it
mkdir -p "$tmp/adir"
check "profile onto a folder: refused first" 2 "adir: is a folder" -- "$erg" profile ops --grid "$tmp/grid.csv" --min-time 0.003 -o "$tmp/adir"
! grep -q '^\[1/3' "$tmp/err" || { echo "FAIL profiled before refusing the output"; cat "$tmp/err"; fails=$((fails + 1)); }
# an interrupted run keeps the rows measured so far in OUT.partial (OUT itself is not written)
"$erg" profile ops --grid "$tmp/grid.csv" --min-time 2 --no-meter -o "$tmp/int.csv" 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 600); do
    [ "$(grep -c . "$tmp/int.csv.partial" 2>/dev/null)" -ge 2 ] && break
    sleep 0.2
done
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rows=$(grep -c '^rmsnorm,' "$tmp/int.csv.partial" 2>/dev/null)
[ "${rows:-0}" = 1 ] && [ ! -e "$tmp/int.csv" ] && grep -q "int.csv.partial as it is measured" "$tmp/int.err" \
    && grep -q '^\[1/3, .* elapsed, about .* left\] rmsnorm tokens=4 d_model=256' "$tmp/int.err" \
    && ! grep -q ' m=0 ' "$tmp/int.err" \
    || { echo "FAIL interrupted profile: partial rows ${rows:-none}"; cat "$tmp/int.err" "$tmp/int.csv.partial"; fails=$((fails + 1)); }
[ ! -e "$tmp/ops.csv.partial" ] || { echo "FAIL a finished run left its partial file"; fails=$((fails + 1)); }
check "cuda is an extension point" 3 "extension point" -- "$erg" profile ops --target cuda -o "$tmp/never.csv"
check "thread clock" 0 "wrote 3 configurations" -- "$erg" profile ops --grid "$tmp/grid.csv" --min-time 0.003 --clock thread --no-meter -o "$tmp/ops_thread.csv"
check "thread clock needs one thread" 2 "needs --threads 1" -- "$erg" profile ops --grid "$tmp/grid.csv" --clock thread --threads 2 -o "$tmp/never.csv"
check "unknown target" 2 "expects cpu or cuda" -- "$erg" profile ops --target tpu -o "$tmp/never.csv"
check "min-time beyond a day" 2 "--min-time must be 0 to 86400 s" -- "$erg" profile ops --grid "$tmp/grid.csv" --min-time 1e300 -o "$tmp/never.csv"
check "fit without output" 2 "missing -o" -- "$erg" fit ops "$tmp/syn.csv"
check "profile without subcommand" 2 "expected 'ops'" -- "$erg" profile
# a JSON file (or any CSV without the grid/ops header) says what it is not, not "unknown column '{'"
src=${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}
check "grid is JSON" 2 "attention-layer.json:1:1: not a grid CSV (expected the header op,kappa,m,...): it is JSON (\"erg\": \"schedule/1\")" -- "$erg" profile ops --grid "$src/examples/attention-layer.json" -o "$tmp/never.csv"
check "fit input is JSON" 2 "attention-layer.json:1:1: not an ops CSV (expected the header op,kappa,m,...,grade)" -- "$erg" fit ops "$src/examples/attention-layer.json" -o "$tmp/never.json"
printf 'time,energy\n1,2\n' > "$tmp/other.csv"
check "fit input is another CSV" 2 "other.csv:1:1: not an ops CSV" -- "$erg" fit ops "$tmp/other.csv" -o "$tmp/never.json"
[ ! -e "$tmp/never.csv" ] && [ ! -e "$tmp/never.json" ] || { echo "FAIL half-written output"; fails=$((fails + 1)); }
# --dtype follows the model (the A100 model is fp16); an explicit other dtype is refused
check "dtype defaults to the model's" 0 "^gemm fp16:" -- "$erg" predict op gemm --m 256 --n 256 --k 256 --model "$src/models/a100-llmcompass.json"
check "explicit other dtype refused" 2 "fitted on fp16, not fp32" -- "$erg" predict op gemm --m 256 --n 256 --k 256 --dtype fp32 --model "$src/models/a100-llmcompass.json"
check "help says the dtype default" 0 "default: the dtype the model's estimator" -- "$erg" predict --help
# erg predict --help names every subcommand, and so does the usage error without one
for sub in "op gemm" "model CONFIG.json" "sweep CONFIG.json" "eval --target" "import MEASURED" "fit-serving --target"; do
    check "predict --help lists $sub" 0 "erg predict $sub" -- "$erg" predict --help
done
for opt in --ops --blocks --kernels --gemm-map; do
    check "predict import --help lists $opt" 0 "erg predict import .* $opt OUT" -- "$erg" predict import --help
done
check "predict op --help" 0 "^Usage: erg predict op gemm" -- "$erg" predict op --help
for sub in op model sweep eval import fit-serving; do
    check "predict without a subcommand lists $sub" 2 "'$sub" -- "$erg" predict
done
# a GEMM's signature: theta holds m, n, k, dtype and nothing else
check "gemm signature" 0 "gemm fp32" -- "$erg" predict op gemm --m 64 --n 32 --k 16 --model "$src/models/cpu-amd-epyc.json" --signature "$tmp/gsig.json"
theta=$(tr -d ' \n' < "$tmp/gsig.json" | grep -o '"theta":{[^}]*}')
[ "$theta" = '"theta":{"m":64,"n":32,"k":16,"dtype":"fp32"}' ] || { echo "FAIL gemm theta: $theta"; fails=$((fails + 1)); }
[ "$fails" = 0 ]
