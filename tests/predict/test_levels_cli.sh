#!/usr/bin/env bash
# erg fit blocks / fit model / predict model / predict sweep: a synthetic target end to end, the
# schedule that composes to the predicted totals, and every bad input (exit 2, nothing written).
set -u
erg=${ERG_BIN:?ERG_BIN not set}
src=${ERG_TEST_SOURCE_DIR:?}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check NAME WANT_STATUS PATTERN -- command...
    local name=$1 want=$2 pat=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" != "$want" ] || ! grep -q -e "$pat" "$tmp/err" "$tmp/out"; then
        echo "FAIL $name: status $got (want $want); stdout/stderr:"; head -40 "$tmp/out" "$tmp/err"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

t="$tmp/models/synth"
mkdir -p "$t/profile"
cp "$src/models/cpu-amd-epyc.json" "$t/ops.json"
cp "$src/tests/predict/configs/tiny-llama.json" "$src/tests/predict/configs/tiny-moe.json" "$t/profile/"

# blocks.csv: three architectures, every block kind, both phases; time grows with the work
awk 'BEGIN {
  print "arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,head_dim,d_ff,ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade"
  split("256 384 512", D, " "); split("a b c", A, " ")
  for (i = 1; i <= 3; i++) for (ph = 0; ph < 2; ph++) for (b = 1; b <= 4; b *= 2) for (L = 16; L <= 256; L *= 2) {
    d = D[i]; P = ph == 0 ? L : ""; K = ph == 1 ? L : ""; T = ph == 0 ? b * L : b
    w = T * d * d * 1e-11
    printf "%s,attention,%s,%d,%s,%s,%d,%d,4,2,%d,,,,,,,,,,fp32,1,10,%.9g,,%.9g,,estimator\n", A[i], ph ? "decode" : "prefill", b, P, K, T, d, d / 4, 8 * w + 2e-6 + (ph ? b * L * d * 4e-12 : b * L * L * d * 2e-12), 60 * (8 * w + 2e-6)
    printf "%s,ffn,%s,%d,%s,%s,%d,%d,,,,%d,silu,1,,,,,,,fp32,1,10,%.9g,,%.9g,,estimator\n", A[i], ph ? "decode" : "prefill", b, P, K, T, d, 3 * d, 20 * w + 1e-6, 60 * (20 * w + 1e-6)
    printf "%s,moe,%s,%d,%s,%s,%d,%d,,,,%d,silu,1,8,2,,,,,fp32,1,10,%.9g,,%.9g,,estimator\n", A[i], ph ? "decode" : "prefill", b, P, K, T, d, d, 12 * w + 4e-6, 60 * (12 * w + 4e-6)
    printf "%s,norm,%s,%d,%s,%s,%d,%d,,,,,,,,,,,,,fp32,1,10,%.9g,,%.9g,,estimator\n", A[i], ph ? "decode" : "prefill", b, P, K, T, d, T * d * 3e-10 + 1e-7, 60 * (T * d * 3e-10 + 1e-7)
    printf "%s,lm_head,%s,%d,%s,%s,%d,%d,,,,,,,,,,,,1000,fp32,1,10,%.9g,,%.9g,,estimator\n", A[i], ph ? "decode" : "prefill", b, P, K, T, d, T * d * 1000 * 3e-10 + 1e-6, 60 * (T * d * 1000 * 3e-10 + 1e-6)
  } }' > "$t/profile/blocks.csv"

check "fit blocks prints Tables 4 and 5" 0 "Attention block estimator (Table 4 layout)" -- "$erg" fit blocks "$t/profile" -o "$t/blocks.json" --epochs 200
grep -q "FFN block estimator (Table 5 layout)" "$tmp/out" && grep -q "Prefill " "$tmp/out" && grep -q "MoE FFN" "$tmp/out" \
    && grep -q "3.514" "$tmp/out" || fail "fit blocks tables"; 
grep -q '"kind": "hymell-level2-blocks"' "$t/blocks.json" || fail "blocks.json kind"
check "fit blocks --json" 0 '"level": 2' -- "$erg" fit blocks "$t/profile/blocks.csv" --ops "$t/ops.json" -o "$tmp/b2.json" --json --no-cv --epochs 40

# models.csv: the two fixtures at several sizes
{
  echo "arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade"
  for c in tiny-llama tiny-moe; do for b in 1 2 4; do for L in 16 64 256; do
    awk -v c=$c -v b=$b -v L=$L 'BEGIN { f = c == "tiny-moe" ? 2 : 1
      printf "%s,%s.json,prefill,%d,%d,,%d,fp32,1,5,%.9g,,%.9g,,estimator\n", c, c, b, L, b * L, f * (1e-3 + b * L * 2e-6), 60 * f * (1e-3 + b * L * 2e-6)
      printf "%s,%s.json,decode,%d,,%d,%d,fp32,1,5,%.9g,,%.9g,,estimator\n", c, c, b, L, b, f * (5e-4 + b * 1e-5 + L * 1e-7), 60 * f * (5e-4 + b * 1e-5 + L * 1e-7) }'
  done; done; done
} > "$t/profile/models.csv"
check "fit model prints Table 6" 0 "End-to-end estimator (Table 6 layout)" -- "$erg" fit model "$t/profile/models.csv" -o "$t/e2e.json" --epochs 200
grep -q "Decode (MoE)" "$tmp/out" && grep -q "10.980" "$tmp/out" || fail "fit model table"
check "fit model --per-sequence (Table 7)" 0 "Per-sequence accuracy of tiny-llama at batch 1 (Table 7 layout" -- "$erg" fit model "$t/profile/models.csv" -o "$tmp/e2e7.json" --epochs 40 --per-sequence tiny-llama
[ "$(grep -c '^  prefill ' "$tmp/out")" = 4 ] && [ "$(grep -c '^  decode ' "$tmp/out")" = 4 ] && grep -q "15.56" "$tmp/out" \
    || fail "Table 7 rows (3 lengths and the MAPE per phase)"
check "--per-sequence belongs to fit model" 2 "belongs to 'erg fit model'" -- "$erg" fit blocks "$t/profile" -o "$tmp/x.json" --per-sequence a
# --nested: the folds are the five architectures of blocks.csv (a, b, c) and models.csv
check "fit model --nested --json" 0 '"folds": 5' -- "$erg" fit model "$t/profile/models.csv" -o "$tmp/e2en.json" --epochs 40 --nested --json
grep -q '"nested": {' "$tmp/out" && grep -q '"attention": {"prefill": {"n": 45' "$tmp/out" || fail "nested JSON: blocks by kind and phase"
check "fit model --nested prints the nested tables" 0 "nested leave-one-architecture-out (5 folds" -- "$erg" fit model "$t/profile/models.csv" -o "$tmp/e2en.json" --epochs 40 --nested
check "--nested belongs to fit model" 2 "belongs to 'erg fit model'" -- "$erg" fit blocks "$t/profile" -o "$tmp/x.json" --nested
mkdir -p "$tmp/two" && cp "$t/profile/models.csv" "$t/profile/"tiny-*.json "$tmp/two/"
check "--nested without blocks.csv needs three architectures" 2 "three or more architectures (the rows have 2)" -- "$erg" fit model "$tmp/two/models.csv" --target "$t" -o "$tmp/never.json" --epochs 40 --nested
[ -e "$tmp/never.json" ] && fail "fit model --nested wrote on error"

cfg="$src/tests/predict/configs/tiny-llama.json"
check "predict model, both phases" 0 "^prefill: 1 x 512 tokens" -- "$erg" predict model "$cfg" --target "$t"
grep -q "^decode: 1 sequence x 1 token, KV cache 512" "$tmp/out" && grep -q "attention " "$tmp/out" \
    && grep -q "levels 1-3" "$tmp/out" || fail "predict model output"
check "predict model --json" 0 '"erg": "model-prediction/1"' -- "$erg" predict model "$cfg" --target "$t" --json --prompt 128 --kv 300 --batch 2
$py - "$tmp/out" "$t/e2e.json" <<'P' || fail "predict model json"
import json, sys
o = json.load(open(sys.argv[1]))
groups = json.load(open(sys.argv[2]))["groups"]
ph = {p["phase"]: p for p in o["phases"]}
assert ph["prefill"]["prompt"] == 128 and ph["decode"]["kv"] == 300 and ph["decode"]["batch"] == 2
for p in o["phases"]:
    s = sum(b["time_s"] for b in p["blocks"])
    assert abs(s - p["time_s"]) <= 1e-6 * p["time_s"], (s, p["time_s"])  # 9 digits printed
    # level 3 answers unless it chose no correction for this phase of dense models (then the
    # blocks' lowest level: the embedding has no level-2 rows here)
    l3 = groups[p["phase"] + "_dense"]["use"] != "none"
    assert (p["level"] == 3) == l3 and p["level"] >= 1 and p["time_sd_s"] > 0, (p["level"], l3)
P

# --emit-schedule composes to the same totals
check "emit schedule" 0 '"schedule": ' -- "$erg" predict model "$cfg" --target "$t" --json --emit-schedule "$tmp/sched.json" --static-power-w 0.5
cp "$tmp/out" "$tmp/pred.json"
check "compose the schedule" 0 '"erg": "report/1"' -- "$erg" compose "$tmp/sched.json" --json
$py - "$tmp/pred.json" "$tmp/out" <<'P' || fail "schedule totals differ from the prediction"
import json, sys
p = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
t = sum(x["time_s"] for x in p["phases"]); e = sum(x["energy_j"] for x in p["phases"])
vt = sum(x["time_sd_s"] ** 2 for x in p["phases"])
assert abs(r["time_s"] - t) <= 1e-7 * t, (r["time_s"], t)  # the prediction prints 9 digits
assert abs(r["energy_j"] - e) <= 1e-7 * e, (r["energy_j"], e)
assert abs(r["time_sd_s"] ** 2 - vt) <= 1e-6 * vt, (r["time_sd_s"] ** 2, vt)
assert abs(r["static_energy_j"] - 0.5 * t) <= 1e-7 * t
P
check "static power above the prediction" 2 "exceeds the predicted" -- "$erg" predict model "$cfg" --target "$t" --emit-schedule "$tmp/no.json" --static-power-w 1e9
[ -e "$tmp/no.json" ] && fail "a schedule was written on error"

# --output N: the whole request is the prefill plus the N - 1 decode steps at KV lengths
# prompt + 1 ... prompt + N - 1, each the figure 'predict model --phase decode --kv L' gives
check "request --output" 0 '"request": {' -- "$erg" predict model "$cfg" --target "$t" --json --batch 2 --prompt 128 --output 4
cp "$tmp/out" "$tmp/req.json"
"$erg" predict model "$cfg" --target "$t" --json --batch 2 --prompt 128 --phase prefill > "$tmp/pre.json"
for L in 129 130 131; do
    "$erg" predict model "$cfg" --target "$t" --json --batch 2 --kv $L --phase decode > "$tmp/dec$L.json"
done
$py - "$tmp/req.json" "$tmp/pre.json" "$tmp"/dec129.json "$tmp"/dec130.json "$tmp"/dec131.json <<'P' || fail "request = prefill + the decode steps"
import json, sys
r = json.load(open(sys.argv[1]))["request"]
pre = json.load(open(sys.argv[2]))["phases"][0]
dec = [json.load(open(f))["phases"][0] for f in sys.argv[3:]]
near = lambda a, b: abs(a - b) <= 1e-7 * abs(b)
assert (r["batch"], r["prompt"], r["output"], r["decode_steps"]) == (2, 128, 4, 3), r
assert [d["kv"] for d in dec] == [129, 130, 131]
assert near(r["prefill_time_s"], pre["time_s"]) and near(r["prefill_energy_j"], pre["energy_j"])
dt, de = sum(d["time_s"] for d in dec), sum(d["energy_j"] for d in dec)
assert near(r["decode_time_s"], dt) and near(r["time_s"], pre["time_s"] + dt), (r, dt)
assert near(r["energy_j"], pre["energy_j"] + de)
# the steps' sds add linearly (one model's error), the prefill's in quadrature
sd = (pre["time_sd_s"] ** 2 + sum(d["time_sd_s"] for d in dec) ** 2) ** 0.5
assert near(r["time_sd_s"], sd), (r["time_sd_s"], sd)
assert near(r["time_per_output_token_s"], dt / 3)
assert near(r["energy_per_output_token_j"], r["energy_j"] / (2 * 4))
assert r["grade"] == "estimator"
P
check "request text" 0 "^request: 2 x (128 prompt + 4 output tokens): time .* (prefill .*, 3 decode steps .*, .* s per output token), energy .* J per output token, grade estimator)" -- "$erg" predict model "$cfg" --target "$t" --batch 2 --prompt 128 --output 4
check "request of one output token" 0 '"decode_steps": 0' -- "$erg" predict model "$cfg" --target "$t" --json --prompt 64 --output 1
$py -c 'import json,sys; o=json.load(open(sys.argv[1])); r=o["request"]; assert r["time_per_output_token_s"] is None and abs(r["time_s"]-o["phases"][0]["time_s"])<=1e-9*r["time_s"], r' "$tmp/out" || fail "one output token: the prefill alone"
check "request on a time-only target: energy null" 0 '"energy_per_output_token_j": null' -- "$erg" predict model "$cfg" --target h100 --json --prompt 64 --output 3
$py -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["request"]["grade"] is None and all(p["grade"] is None and p["energy_j"] is None for p in o["phases"]), o' "$tmp/out" \
    || fail "a time-only target has no energy grade (null), as it has no energy"
check "--output with --phase" 2 "it takes neither --phase nor --kv" -- "$erg" predict model "$cfg" --target "$t" --output 4 --phase decode
check "--output with --kv" 2 "it takes neither --phase nor --kv" -- "$erg" predict model "$cfg" --target "$t" --output 4 --kv 9
check "--output with --emit-schedule" 2 "not an --output request" -- "$erg" predict model "$cfg" --target "$t" --output 4 --emit-schedule "$tmp/no.json"
[ -e "$tmp/no.json" ] && fail "a schedule was written on error"
check "--output too large" 2 "at most 2^24 output tokens" -- "$erg" predict model "$cfg" --target "$t" --output 16777217
check "--output tokens above 2^40" 2 "x (--prompt 1024 + --output 1024) is more than 2^40 tokens" -- "$erg" predict model "$cfg" --target "$t" --batch 1073741824 --prompt 1024 --output 1024
check "--output belongs to model" 2 "belongs to 'erg predict model'" -- "$erg" predict sweep "$cfg" --target "$t" --set heads=4 --output 3
check "--kv with --phase prefill" 2 "--phase prefill has none" -- "$erg" predict model "$cfg" --target "$t" --phase prefill --kv 64
# beyond max_position_embeddings: a warning naming the length, and still a prediction
$py -c 'import json,sys; c=json.load(open(sys.argv[1])); c["max_position_embeddings"]=256; json.dump(c,open(sys.argv[2],"w"))' "$cfg" "$tmp/pos.json"
check "longer than max_position_embeddings" 0 "^erg: warning: 299 tokens (prompt + output - 1) are more than the config's max_position_embeddings 256" -- "$erg" predict model "$tmp/pos.json" --target "$t" --prompt 200 --output 100
check "within max_position_embeddings: no warning" 0 '"warnings": \[\]' -- "$erg" predict model "$tmp/pos.json" --target "$t" --prompt 200 --output 57 --json
check "prompt beyond max_position_embeddings --json" 0 '"warnings": \["300 tokens (the prompt) are more than' -- "$erg" predict model "$tmp/pos.json" --target "$t" --prompt 300 --phase prefill --json
check "sweep key given twice" 2 "--set batch is given twice" -- "$erg" predict sweep "$cfg" --target "$t" --set batch=1:2:1 --set batch=1:3:1

# HYMELL Figure 3's sweep: heads at d_model 4096, prefill N = 1024
check "sweep heads" 0 "phase,time_s,energy_j" -- "$erg" predict sweep "$cfg" --target "$t" --set d_model=4096 --set heads=8:128:8 --phase prefill --prompt 1024 --csv
[ "$(grep -c ',prefill,' "$tmp/out")" = 5 ] || fail "sweep rows (8, 16, 32, 64, 128 divide 4096)"
grep -q "skipped d_model=4096 heads=24" "$tmp/err" || fail "sweep skipped list"
check "sweep unknown key" 2 "unknown key 'wibble'" -- "$erg" predict sweep "$cfg" --target "$t" --set wibble=1:2:1
check "sweep bad range" 2 "B (2) is below A (8)" -- "$erg" predict sweep "$cfg" --target "$t" --set heads=8:2:1
check "sweep needs --set" 2 "at least one --set" -- "$erg" predict sweep "$cfg" --target "$t"
grep -q "^Try 'erg predict sweep --help'" "$tmp/err" || fail "sweep's usage errors point at its own --help: $(cat "$tmp/err")"
# --json: the same points as --csv, one object per point and phase; skipped points with the reason
check "sweep --json" 0 '"erg": "model-sweep/1"' -- "$erg" predict sweep "$cfg" --target "$t" --set d_model=4096 --set heads=8:128:8 --phase prefill --prompt 1024 --json
$py - "$tmp/out" <<'P' || fail "sweep --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["keys"] == ["d_model", "heads"], d["keys"]
rows = d["rows"]
assert [r["heads"] for r in rows] == [8, 16, 32, 64, 128], rows
assert all(r["phase"] == "prefill" and r["d_model"] == 4096 and r["time_s"] > 0 for r in rows)
assert all(r["time_s"] > r["attention_time_s"] > 0 and r["ffn_time_s"] > 0 for r in rows)
sk = d["skipped"]
assert len(sk) == 16 - 5 and sk[0]["heads"] == 24 and "divide" in sk[0]["reason"], sk[0]
P
"$erg" predict sweep "$cfg" --target "$t" --set d_model=4096 --set heads=8:128:8 --phase prefill --prompt 1024 --csv > "$tmp/sweep.csv" 2>/dev/null
$py - "$tmp/out" "$tmp/sweep.csv" <<'P' || fail "sweep --json and --csv disagree"
import csv, json, sys
j = json.load(open(sys.argv[1]))["rows"]
c = list(csv.DictReader(open(sys.argv[2])))
assert len(j) == len(c)
for a, b in zip(j, c):
    for k in ("time_s", "energy_j", "attention_time_s", "ffn_energy_j"):
        assert abs(a[k] - float(b[k])) <= 1e-5 * abs(a[k]), (k, a[k], b[k])
P
check "sweep --json and --csv" 2 "either --csv or --json" -- "$erg" predict sweep "$cfg" --target "$t" --set heads=4 --csv --json
check "sweep --static-power-w" 2 "belongs to 'erg predict model'" -- "$erg" predict sweep "$cfg" --target "$t" --set heads=4 --static-power-w 5
check "too many tokens" 2 "^erg predict model: --batch 1099511627776 x --prompt 2 is more than 2^40 tokens" -- "$erg" predict model "$cfg" --target "$t" --batch 1099511627776 --prompt 2
check "too many cached tokens" 2 "x --kv 1099511627776 is more than 2^40 cached tokens" -- "$erg" predict model "$cfg" --target "$t" --batch 2 --kv 1099511627776 --phase decode
# every point skipped: nothing was predicted, so exit 2 with the reasons and nothing on stdout
# (it used to print the bare header and exit 0); with --json no half document either
check "sweep: too many tokens skipped" 2 "skipped batch=1099511627776: --batch 1099511627776 x --prompt 512" -- "$erg" predict sweep "$cfg" --target "$t" --set batch=1099511627776 --phase prefill
grep -q "^erg predict sweep: every point (1) was skipped: nothing predicted" "$tmp/err" || fail "all-skipped sweep names why: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "all-skipped sweep wrote stdout: $(head -3 "$tmp/out")"
check "sweep --json: every point skipped" 2 "every point (3) was skipped" -- "$erg" predict sweep "$cfg" --target "$t" --set d_model=4096 --set heads=5:7:1 --phase prefill --json
[ ! -s "$tmp/out" ] || fail "all-skipped sweep --json wrote stdout: $(head -3 "$tmp/out")"
# one point of two predicted: exit 0, the skipped one listed
check "sweep: some points skipped" 0 "skipped batch=1099511627776" -- "$erg" predict sweep "$cfg" --target "$t" --set batch=1:1099511627776:1099511627775 --phase prefill --csv
[ "$(grep -c ',prefill,' "$tmp/out")" = 1 ] || fail "partly skipped sweep: one row"
check "model usage error" 2 "^erg predict model: --batch expects a positive integer, got '0'" -- "$erg" predict model "$cfg" --target "$t" --batch 0
grep -q "^Try 'erg predict model --help'" "$tmp/err" || fail "model's usage errors point at its own --help: $(cat "$tmp/err")"

# a target found by name under $ERG_MODEL_DIR; level 1 only when blocks.json and e2e.json are absent
mkdir -p "$tmp/models/l1only" && cp "$t/ops.json" "$tmp/models/l1only/"
check "target by name" 0 "(level 1 only)" -- env ERG_MODEL_DIR="$tmp/models" "$erg" predict model "$cfg" --target l1only --phase decode --kv 64

# the committed CPU target, found by name in the source tree, answers at level 3
check "committed cpu target" 0 "on .*models/cpu (levels 1-3)" -- "$erg" predict model "$src/models/cpu/profile/configs/llama-d256-l2-h4-kv4.json" --target cpu --prompt 64 --kv 256
grep -q "^decode: 1 sequence x 1 token, KV cache 256" "$tmp/out" || fail "cpu target decode"

# quantized weights are modelled in torch_dtype, and erg says so; a dtype erg does not model is refused
$py - "$cfg" "$tmp/q.json" "$tmp/dt.json" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
c["quantization_config"] = {"quant_method": "mxfp4"}
json.dump(c, open(sys.argv[2], "w"))
c.pop("quantization_config")
c["torch_dtype"] = "int3"
json.dump(c, open(sys.argv[3], "w"))
P
check "quantized weights warn" 0 '^erg: warning: quantization_config: quant_method "mxfp4": erg has no kernel data' -- "$erg" predict model "$tmp/q.json" --target "$t"
check "quantized weights --json" 0 '"warnings": \["quantization_config: quant_method' -- "$erg" predict model "$tmp/q.json" --target "$t" --json
check "quantized weights sweep" 0 '^erg: warning: quantization_config' -- "$erg" predict sweep "$tmp/q.json" --target "$t" --set heads=4
check "unknown torch_dtype" 2 "dt.json:[0-9]*:[0-9]*: torch_dtype: \"int3\" is not a dtype erg models" -- "$erg" predict model "$tmp/dt.json" --target "$t" --emit-schedule "$tmp/dt-sched.json"
[ -e "$tmp/dt-sched.json" ] && fail "a schedule was written for a refused config"
[ -s "$tmp/out" ] && fail "output on a refused config: $(cat "$tmp/out")"

# the H100 target's serving level 3 answers the decode step's energy (its blocks are time only):
# the same ITL and energy per output token as erg predict eval on an ML.ENERGY row of that
# batch and KV length (L = 512 assumed prompt tokens + avg_output_len / 2 = 512)
check "h100 decode as served" 0 "^  as served (the target's serving level 3" -- "$erg" predict model "$cfg" --target h100 --phase decode --batch 8 --kv 512
"$erg" predict model "$cfg" --target h100 --phase decode --batch 8 --kv 512 --json > "$tmp/srv.json"
printf '{"model_id": "t/tiny", "weight_precision": "bfloat16", "configurations": [{"gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 8, "avg_output_len": 0, "median_itl_ms": 1.0, "energy_per_token_joules": 1.0, "parallelization": {"tensor_parallel": 1, "expert_parallel": 1, "data_parallel": 1}}]}\n' > "$tmp/ml.json"
"$erg" predict eval --target h100 --config "$cfg" --json "$tmp/ml.json" > "$tmp/ev.json"
$py - "$tmp/srv.json" "$tmp/ev.json" <<'P' || fail "serving figures of predict model and predict eval differ"
import json, sys
s = json.load(open(sys.argv[1]))["phases"][0]["serving"]
e = {r["quantity"]: r["predicted"] for r in json.load(open(sys.argv[2]))["rows"]}
assert abs(s["itl_s"] - e["itl_s"]) <= 1e-7 * e["itl_s"], (s, e)
assert abs(s["energy_per_token_j"] - e["energy_per_token_j"]) <= 1e-7 * e["energy_per_token_j"], (s, e)
assert s["energy_per_token_j"] > 0
P
check "no serving level: null" 0 '"serving": null' -- "$erg" predict model "$cfg" --target h200 --phase decode --json
# an op the level-1 model has no estimator for (RMSNorm on the H200) costs at least the target's
# smallest fitted launch floor (the H200 GEMM's 2.25 us), never the 2.4 ns its bytes alone gave
$py - "$tmp/out" "$src/models/h200/ops.json" <<'P' || fail "h200 norm below the launch floor"
import json, sys
norm = [b for b in json.load(open(sys.argv[1]))["phases"][0]["blocks"] if b["block"] == "norm"][0]
floors = []
def walk(o):
    if isinstance(o, dict):
        if isinstance(o.get("launch_time_s"), (int, float)) and o["launch_time_s"] > 0:
            floors.append(o["launch_time_s"])
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(json.load(open(sys.argv[2])))
f = min(floors)
assert 2e-6 < f < 3e-6, f
assert f <= norm["time_s_each"] <= 1.01 * f, (norm["time_s_each"], f)
P

# a MoE block's routed experts on a GPU target are the target's fused-MoE kernel model (vLLM's
# fused_experts), not A per-expert GEMMs near their launch floor: Qwen3-30B-A3B's MoE shape
# (d 2048, experts of 768, top-8 of 128), decode batch 8. The kernel by hand from gpu.json's
# coefficients (features 1, A·3·d·f·2 bytes, 6·T·k·d·f FLOPs, A, T·k with A = E(1 - (1 - k/E)^T)
# = 51.6); aiconfigurator measured 0.12652 ms on the H200 at this shape (power-law routing, the
# rows the model was fitted on) and 0.18178 ms on the H100. The rest of the block (router GEMM,
# its softmax and top-k, the residual) is a few microseconds and does not depend on the expert
# width, so two widths differ by exactly the kernel's difference. The per-expert GEMMs gave
# 596 us on the H200 and 301 us on the H100, an H200 step slower than the H100's.
moecfg() { printf '{"model_type": "qwen3_moe", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 2, "vocab_size": 1000, "intermediate_size": 6144, "moe_intermediate_size": %d, "num_experts": 128, "num_experts_per_tok": 8, "torch_dtype": "bfloat16"}\n' "$1" > "$2"; }
moecfg 768 "$tmp/moe768.json"
moecfg 1536 "$tmp/moe1536.json"
for tg in h200 h100 a100; do
    for f in 768 1536; do
        "$erg" predict model "$tmp/moe$f.json" --target $tg --phase decode --batch 8 --kv 700 --json > "$tmp/moe-$tg-$f.json" 2>> "$tmp/moe.err" || fail "moe $tg $f: $(cat "$tmp/moe.err")"
    done
done
$py - "$tmp" "$src/models" <<'P' || fail "MoE block is not the fused-MoE kernel"
import json, math, sys
tmp, models = sys.argv[1:]
def kernel(tg, f, T=8, d=2048, k=8, E=128):
    c = json.load(open(f"{models}/{tg}/gpu.json"))["kernels"]["moe"]["coef"]
    A = E * (1 - (1 - k / E) ** T)
    assert abs(A - 51.6) < 0.05, A
    x = [1.0, A * 3 * d * f * 2, 6 * T * k * d * f, A, T * k]
    return sum(ci * xi for ci, xi in zip(c, x))
def block(tg, f):
    ph = json.load(open(f"{tmp}/moe-{tg}-{f}.json"))["phases"][0]
    return ph, [b for b in ph["blocks"] if b["block"] == "moe"][0]
measured = {"h200": 0.12652e-3, "h100": 0.18178e-3}
for tg in ("h200", "h100", "a100"):
    kt = kernel(tg, 768)
    ph, b = block(tg, 768)
    rest = b["time_s_each"] - kt
    assert 1e-6 < rest < 1e-5, (tg, b["time_s_each"], kt)
    _, b2 = block(tg, 1536)
    dk = kernel(tg, 1536) - kt
    assert abs((b2["time_s_each"] - b["time_s_each"]) - dk) <= 1e-9 + 1e-6 * dk, (tg, b2, b, dk)
    if tg in measured:
        assert abs(kt / measured[tg] - 1) < 0.10, (tg, kt, measured[tg])
    if tg == "h200":
        # the kernel's NVML power model: energy per call within the measured power range
        e = b["energy_j_each"] / b["time_s_each"]
        assert 132 < e < 700, e
    else:
        assert b["energy_j_each"] is None
t200 = block("h200", 768)[0]["time_s"]
t100 = block("h100", 768)[0]["time_s"]
t_a100 = block("a100", 768)[0]["time_s"]
assert t200 < t100 < t_a100, (t200, t100, t_a100)
P

# bad input
check "unknown target" 2 "unknown target" -- "$erg" predict model "$cfg" --target no-such-target-xyz
check "unknown phase" 2 "unknown phase 'generate'" -- "$erg" predict model "$cfg" --target "$t" --phase generate
check "missing target" 2 "--target NAME|DIR is required" -- "$erg" predict model "$cfg"
# both messages name the committed targets the lookup finds (the source tree's models/)
for name in "missing target" "unknown target"; do
    if [ "$name" = "missing target" ]; then set -- "$erg" predict model "$cfg"; else set -- "$erg" predict model "$cfg" --target no-such-target-xyz; fi
    env -u ERG_MODEL_DIR -u ERG_DATA_DIR "$@" > /dev/null 2> "$tmp/err"
    for g in a100 cpu h100 h200; do
        grep -q "the targets: .*\b$g\b" "$tmp/err" || fail "$name: target $g not listed: $(cat "$tmp/err")"
    done
done
check "targets under ERG_MODEL_DIR" 2 "the targets: l1only, synth (a target" -- env ERG_MODEL_DIR="$tmp/models" "$erg" predict model "$cfg" --target nope

# weights + KV cache above the target's memory_gib: a warning, not a refusal. tiny-llama (fp32):
# attention 256*8*32*2 + 2*256*2*32 = 163840, gated FFN 3*256*688 = 528384, per layer 692224,
# x 4 layers = 2768896, norms 2*256*4 + 256 = 2304, embedding + untied LM head 2*1000*256 =
# 512000: 3283200 parameters = 13132800 bytes. KV per cached token: 2 (K, V) x 4 layers x
# 2 KV heads x 32 x 4 bytes = 2048. Batch 2 x kv 1000: 13132800 + 4096000 = 17228800 bytes, above
# 0.016 GiB = 17179869 bytes; batch 1: 13132800 + 2048000 = 15180800, below.
tiny="$src/tests/predict/configs/tiny-llama.json"
m="$tmp/models/small-mem"
mkdir -p "$m" && cp "$t/ops.json" "$m/"
printf '{"erg": "gpu-target/1", "memory_gib": 0.016}\n' > "$m/gpu.json"
check "memory warning" 0 "^erg: warning: the weights (0.01223 GiB, fp32) and the KV cache (0.003815 GiB, 2 x 1000 tokens) need 0.01605 GiB, more than the target's 0.016 GiB" -- "$erg" predict model "$tiny" --target "$m" --phase decode --kv 1000 --batch 2
check "memory warning --json" 0 '"warnings": \["the weights' -- "$erg" predict model "$tiny" --target "$m" --phase decode --kv 1000 --batch 2 --json
check "below the memory: no warning" 0 '"warnings": \[\]' -- "$erg" predict model "$tiny" --target "$m" --phase decode --kv 1000 --batch 1 --json
grep -q warning "$tmp/err" && fail "warning below the memory: $(cat "$tmp/err")"
printf '{"erg": "gpu-target/1", "memory_gib": -1}\n' > "$m/gpu.json"
# placed at the value: `{"erg": "gpu-target/1", "memory_gib": -1}`, -1 at 39
check "bad memory_gib" 2 "gpu.json:1:39: memory_gib: must be a positive number (GiB)$" -- "$erg" predict model "$tiny" --target "$m"
check "MLA refused" 2 "kv_lora_rank" -- "$erg" predict model "$src/tests/predict/configs/mla.json" --target "$t"
check "bad kv heads" 2 "num_key_value_heads: 3 KV heads do not divide 8" -- "$erg" predict model "$src/tests/predict/configs/bad-kv-heads.json" --target "$t"
check "bad prompt" 2 "--prompt expects a positive integer" -- "$erg" predict model "$cfg" --target "$t" --prompt 0
printf 'arch,block,phase,batch,d_model,time_s\nx,mlp,prefill,1,64,1\n' > "$tmp/bad.csv"
check "fit blocks bad csv" 2 "unknown block 'mlp'" -- "$erg" fit blocks "$tmp/bad.csv" --ops "$t/ops.json" -o "$tmp/never.json"
[ -e "$tmp/never.json" ] && fail "fit blocks wrote on error"
check "fit blocks without ops" 2 "none.json: cannot open" -- "$erg" fit blocks "$t/profile/blocks.csv" --ops "$tmp/none.json" -o "$tmp/never.json"
check "fit model bad config" 2 "missing.json" -- "$erg" fit model <(printf 'arch,config,phase,batch,kv,time_s\nx,missing.json,decode,1,8,0.1\n') --target "$t" -o "$tmp/never.json"
[ -e "$tmp/never.json" ] && fail "fit model wrote on error"

# every shared config predicts (skipped when the data is absent)
hf="$src/../shared/data/hf-configs"
if [ -d "$hf" ]; then
    for f in "$hf"/*.json; do
        "$erg" predict model "$f" --target "$t" --prompt 256 --kv 1024 --json > "$tmp/o" 2>&1 || fail "predict $f: $(cat "$tmp/o")"
    done
    echo "ok   every shared config predicts"
fi

# the messages docs/predict.md quotes are the ones erg prints
doc() { tr '\n' ' ' < "$src/docs/predict.md" | sed 's/  */ /g' | grep -qF -- "$1" || fail "docs/predict.md no longer says '$1'"; }
for q in "unknown phase 'generate' (prefill, decode or both)" "exceeds the predicted" \
    "skipped d_model=4096 heads=24" "unknown target: no folder" \
    "--set d_model=4096 --set heads=8:128:8 --phase prefill --prompt 1024 --csv" \
    '"kind": "hymell-level2-blocks"' '"kind": "hymell-level3-e2e"'; do
    doc "$q"
done
grep -q '"heldout_score"' "$t/blocks.json" && grep -q '"sigma_from"' "$t/e2e.json" || fail "model/1 members the doc lists"

[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
