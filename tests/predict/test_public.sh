#!/usr/bin/env bash
# erg predict import / eval on public measured formats: small hand-made files (values checked by
# hand), every bad input, and, when ../shared/data is present, the real files' row counts.
set -u
erg=${ERG_BIN:?ERG_BIN not set}
src=${ERG_TEST_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check NAME WANT_STATUS PATTERN -- command...
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

# aiconfigurator GEMM table with NVML power (H200 layout); columns in another order than upstream
cat > "$tmp/gemm.csv" <<'G'
framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency,power,power_limit
VLLM,0.22.0,NVIDIA H200,gemm,vllm_default,bfloat16,4096,4096,4096,0.25,500,700
VLLM,0.22.0,NVIDIA H200,gemm,vllm_default,fp8_block,4096,4096,4096,0.15,600,700
VLLM,0.22.0,NVIDIA H200,gemm,vllm_default,bfloat16,1,4096,4096,0.02,200,700
G
gzip -c "$tmp/gemm.csv" > "$tmp/gemm.csv.gz"
check "import gemm.csv.gz" 0 "aic-gemm, 3 rows, 2 level-1 samples, 1 rows skipped" -- \
    "$erg" predict import "$tmp/gemm.csv.gz" --ops "$tmp/ops.csv"
# energy = power x latency: 500 W x 0.25 ms = 0.125 J; 200 W x 20 us = 4 mJ
grep -q '^gemm,aic-vllm_default,4096,4096,4096,,,bf16,1,0.00025,,0.125,,model_based$' "$tmp/ops.csv" \
    && grep -q '^gemm,aic-vllm_default,1,4096,4096,,,bf16,1,2e-05,,0.004,,model_based$' "$tmp/ops.csv" \
    && echo "ok   energy = power x latency" || { echo "FAIL energy rows:"; cat "$tmp/ops.csv"; fails=$((fails + 1)); }
check "import --dtype fp8" 2 "dtype 'fp8' is not one erg models" -- \
    "$erg" predict import "$tmp/gemm.csv" --dtype fp8 --ops "$tmp/o2.csv"
[ ! -e "$tmp/o2.csv" ] && echo "ok   nothing written" || { echo "FAIL wrote o2.csv"; fails=$((fails + 1)); }

# Vidur mlp.csv: one Llama-2-7B-like row (MHA 32/32, d 4096, ffn 11008, gated) at TP 1, one at TP 2
hdr="time_stats.emb.median,time_stats.input_layernorm.median,time_stats.attn_pre_proj.median,time_stats.attn_rope.median,time_stats.attn_post_proj.median,time_stats.post_attention_layernorm.median,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,time_stats.mlp_down_proj.median,time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers"
{ echo "$hdr"
  echo "0.1,0.05,0.5,0.08,0.2,0.06,1.0,0.14,0.44,0.03,32,32,4096,11008,32768,True,4096,1"
  echo "0.1,0.05,0.3,0.08,0.1,0.06,0.5,0.07,0.22,0.03,32,32,4096,11008,32768,True,4096,2"
} > "$tmp/mlp.csv"
check "import vidur" 0 "vidur-mlp, 2 rows, 6 level-1 samples, 1 rows skipped" -- \
    "$erg" predict import "$tmp/mlp.csv" --ops "$tmp/v.csv"
# QKV: n = (32 + 2*32)*128 = 12288, k = 4096; up: n = 2*11008 = 22016; down: k = 11008
for want in 'gemm,vidur-attn_pre_proj,4096,12288,4096,,,fp16,20,0.0005' \
            'gemm,vidur-attn_post_proj,4096,4096,4096,,,fp16,20,0.0002' \
            'gemm,vidur-mlp_up_proj,4096,22016,4096,,,fp16,20,0.001' \
            'gemm,vidur-mlp_down_proj,4096,4096,11008,,,fp16,20,0.00044' \
            'rmsnorm,vidur-rmsnorm,,,,4096,4096,fp16,20,5e-05' \
            'rmsnorm,vidur-rmsnorm,,,,4096,4096,fp16,20,6e-05'; do
    grep -q "^$want,,,,$" "$tmp/v.csv" || { echo "FAIL vidur row $want missing:"; cat "$tmp/v.csv"; fails=$((fails + 1)); }
done

# bad Vidur rows, at the cell: row 2's cells start at 1, 5, 10, 14, 19, 23, 28, 32, 37, 42 (the
# medians), 47 n_head, 50 n_kv_head, 53 n_embd, 58, 64, 70 use_gated_mlp, 75 num_tokens, 80 TP
sed '2s/,True,/,Maybe,/' "$tmp/mlp.csv" > "$tmp/mlpg.csv"
check "Vidur wrong type" 2 "mlpg.csv:2:70: column 'use_gated_mlp': expected True or False, got 'Maybe'$" -- \
    "$erg" predict import "$tmp/mlpg.csv" --ops "$tmp/o4.csv"
sed '2s/,32,32,4096,/,32,5,4096,/' "$tmp/mlp.csv" > "$tmp/mlpk.csv"
check "Vidur KV heads" 2 "mlpk.csv:2:50: column 'n_kv_head': 5 does not divide n_head 32$" -- \
    "$erg" predict import "$tmp/mlpk.csv" --ops "$tmp/o4.csv"
sed '2s/,4096,1$/,4096,0/' "$tmp/mlp.csv" > "$tmp/mlpt.csv"
check "Vidur out of range" 2 "mlpt.csv:2:80: column 'num_tensor_parallel_workers': must be positive, got '0'$" -- \
    "$erg" predict import "$tmp/mlpt.csv" --ops "$tmp/o4.csv"
sed '2s/^0.1,0.05,0.5,/0.1,0.05,-0.5,/' "$tmp/mlp.csv" > "$tmp/mlpm.csv"
check "Vidur negative median" 2 "mlpm.csv:2:10: column 'time_stats.attn_pre_proj.median': must be non-negative, got '-0.5'$" -- \
    "$erg" predict import "$tmp/mlpm.csv" --ops "$tmp/o4.csv"
[ ! -e "$tmp/o4.csv" ] && echo "ok   nothing written on bad Vidur rows" || { echo "FAIL o4.csv written"; fails=$((fails + 1)); }

# blocks.csv from Vidur (+ an aiconfigurator attention row of the same shape): hand sums
printf 'framework,device,op_name,batch_size,isl,num_heads,num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,step,window_size,latency\nVLLM,H100,context_attention,1,4096,32,32,128,bfloat16,bfloat16,0,0,1.25\nVLLM,H100,context_attention,1,4096,32,8,128,bfloat16,bfloat16,0,0,0.5\n' > "$tmp/ctx.csv"
cp "$tmp/mlp.csv" "$tmp/vidur_h100_tiny-llama_mlp.csv"
check "import --blocks" 0 "blocks: 1 Vidur rows (ffn, norm, embedding each), 1 attention blocks" -- \
    "$erg" predict import --blocks "$tmp/blocks.csv" "$tmp/vidur_h100_tiny-llama_mlp.csv" "$tmp/ctx.csv"
head -n 1 "$tmp/blocks.csv" | grep -qx 'arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,head_dim,d_ff,ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade' \
    && echo "ok   blocks.csv header (the contract's)" || { echo "FAIL blocks header"; fails=$((fails + 1)); }
# ffn = up 1.0 + act 0.14 + down 0.44 ms; attention = QKV 0.5 + RoPE 0.08 + O 0.2 + kernel 1.25 ms
for want in 'tiny-llama,ffn,prefill,1,4096,0,4096,4096,32,32,128,11008,silu,1,,,,,,32768,fp16,,20,0.00158,,,,' \
            'tiny-llama,norm,prefill,1,4096,0,4096,4096,32,32,128,11008,silu,1,,,,,,32768,fp16,,20,5e-05,,,,' \
            'tiny-llama,attention,prefill,1,4096,0,4096,4096,32,32,128,11008,silu,1,,,,,,32768,fp16,,20,0.00203,,,,'; do
    grep -qxF "$want" "$tmp/blocks.csv" || { echo "FAIL blocks row $want:"; cat "$tmp/blocks.csv"; fails=$((fails + 1)); }
done
check "--blocks without Vidur" 2 "no Vidur mlp.csv row at TP 1" -- \
    "$erg" predict import --blocks "$tmp/b2.csv" "$tmp/ctx.csv"

# bad inputs: file:line:col of the cell and the column, exit 2, nothing written. Row 2
# `VLLM,0.22.0,NVIDIA H200,gemm,vllm_default,bfloat16,4096,-4096,...`: the cells end at 5, 12, 24,
# 29, 42, 51, 56, so n starts at 57
sed '2s/,4096,4096,4096,0.25/,4096,-4096,4096,0.25/' "$tmp/gemm.csv" > "$tmp/neg.csv"
check "negative size" 2 "neg.csv:2:57: column 'n': must not be negative, got '-4096'$" -- \
    "$erg" predict import "$tmp/neg.csv" --ops "$tmp/o3.csv"
# row 3 `...,vllm_default,fp8_block,4096,4096,0,0.15,...`: fp8_block 43-51, m 53-56, n 58-61, k at 63
sed '3s/,4096,4096,4096,0.15/,4096,4096,0,0.15/' "$tmp/gemm.csv" > "$tmp/zero.csv"
check "zero size" 2 "zero.csv:3:63: column 'k': must be positive, got '0'$" -- \
    "$erg" predict import "$tmp/zero.csv" --ops "$tmp/o3.csv"
# row 4 `...,bfloat16,1,4096,4096,fast,...`: m 52, n 54-57, k 59-62, latency at 64
sed '4s/0.02,200/fast,200/' "$tmp/gemm.csv" > "$tmp/nan.csv"
check "not a number" 2 "nan.csv:4:64: column 'latency': expected a number, got 'fast'" -- \
    "$erg" predict import "$tmp/nan.csv" --ops "$tmp/o3.csv"
sed '1s/,k,/,kk,/' "$tmp/gemm.csv" > "$tmp/nok.csv"
check "missing column" 2 "nok.csv:1: header: column 'k' is missing" -- \
    "$erg" predict import "$tmp/nok.csv" --ops "$tmp/o3.csv"
sed '2s/,vllm_default,bfloat16,4096,4096,4096,0.25,500,700/,x,bfloat16,4096/' "$tmp/gemm.csv" > "$tmp/short.csv"
check "short row" 2 "short.csv:2: 7 cells where the header has 12 columns" -- \
    "$erg" predict import "$tmp/short.csv" --ops "$tmp/o3.csv"
printf 'a,b,c\n1,2,3\n' > "$tmp/other.csv"
check "unknown CSV" 2 "other.csv:1: not a known public format" -- \
    "$erg" predict import "$tmp/other.csv" --ops "$tmp/o3.csv"
check "unknown JSON" 2 'not a known public format: JSON ("erg": "schedule/1")' -- \
    "$erg" predict import "$src/examples/attention-layer.json" --ops "$tmp/o3.csv"
printf 'framework,device,op_name,batch_size,isl,num_heads,num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,step,latency\nVLLM,H100,context_attention,1,128,32,5,128,bfloat16,bfloat16,0,0.1\n' > "$tmp/att.csv"
# `VLLM,H100,context_attention,1,128,32,5,...`: cells end at 5, 10, 28, 30, 34, 37; 5 at 38
check "kv heads do not divide heads" 2 "att.csv:2:38: column 'num_key_value_heads': 5 does not divide num_heads 32" -- \
    "$erg" predict import "$tmp/att.csv" --ops "$tmp/o3.csv"
printf 'device,op_name,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\nH100,moe,bfloat16,8,4096,14336,9,8,1,1,balanced,0.3\n' > "$tmp/moe.csv"
# `H100,moe,bfloat16,8,4096,14336,9,...`: cells end at 5, 9, 18, 20, 25, 31; topk at 32
check "top-k above experts" 2 "moe.csv:2:32: column 'topk': 9 is above num_experts 8" -- \
    "$erg" predict import "$tmp/moe.csv" --ops "$tmp/o3.csv"
printf '{"model_id": "x/y", "configurations": [{"gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 7.5, "median_itl_ms": 10, "energy_per_token_joules": 0.5}, {"gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 7.5, "energy_per_token_joules": 0.5}]}\n' > "$tmp/mle.json"
# configurations[0] spans columns 40-170 (`{"gpu_model": "H100", ... "energy_per_token_joules":
# 0.5}`, 131 bytes), ", " follows: configurations[1], which lacks median_itl_ms, at 173
check "ML.ENERGY missing member" 2 "mle.json:1:173: configurations\[1\].median_itl_ms: required number is missing$" -- \
    "$erg" predict import "$tmp/mle.json" --ops "$tmp/o3.csv"
# pretty-printed: line 4 `   "num_gpus": "1", ...`: the value at 16; line 5 `   "median_itl_ms": 0,`: 0 at 21;
# line 3 `  {"gpu_model": ...`: configurations[0] at 3; cut after line 4: jansson stops at line 5
printf '{"model_id": "x/y",\n "configurations": [\n  {"gpu_model": "H100",\n   "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 7.5,\n   "median_itl_ms": 10, "energy_per_token_joules": 0.5}]}\n' > "$tmp/mlp3.json"
sed '4s/"num_gpus": 1/"num_gpus": "1"/' "$tmp/mlp3.json" > "$tmp/mlt.json"
check "ML.ENERGY wrong type" 2 "mlt.json:4:16: configurations\[0\].num_gpus: expected a number$" -- \
    "$erg" predict import "$tmp/mlt.json" --ops "$tmp/o3.csv"
sed '5s/"median_itl_ms": 10/"median_itl_ms": 0/' "$tmp/mlp3.json" > "$tmp/mlz.json"
check "ML.ENERGY out of range" 2 "mlz.json:5:21: configurations\[0\].median_itl_ms: must be positive (got 0)$" -- \
    "$erg" predict import "$tmp/mlz.json" --ops "$tmp/o3.csv"
sed '3s/"gpu_model": "H100",/"gpu": "H100",/' "$tmp/mlp3.json" > "$tmp/mlg.json"
check "ML.ENERGY missing gpu_model" 2 "mlg.json:3:3: configurations\[0\].gpu_model: required string is missing$" -- \
    "$erg" predict import "$tmp/mlg.json" --ops "$tmp/o3.csv"
head -n 4 "$tmp/mlp3.json" > "$tmp/mlcut.json"
check "ML.ENERGY truncated" 2 "mlcut.json:5: not JSON: " -- \
    "$erg" predict import "$tmp/mlcut.json" --ops "$tmp/o3.csv"
sed 's/"max_num_seqs": 8, "avg_batch_size": 7.5, "energy/"max_num_seqs": 8, "avg_batch_size": 7.5, "median_itl_ms": 9, "energy/' "$tmp/mle.json" > "$tmp/mle2.json"
check "ML.ENERGY has no level-1 rows" 2 "format mlenergy-v3 has no level-1 op rows" -- \
    "$erg" predict import "$tmp/mle2.json" --ops "$tmp/o3.csv"
printf '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"12"}}]}]}]}]}\n' > "$tmp/blis.json"
# `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","attributes":[`: the span at
# 44, its attributes array (which lacks the attribute) at 79
check "BLIS missing attribute" 2 "blis.json:1:79: llm_request span: attribute 'gen_ai.usage.completion_tokens' is missing$" -- \
    "$erg" predict import "$tmp/blis.json" --ops "$tmp/o3.csv"
# attributes[0] at 80: `{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"12"}}`, its
# intValue ("12") at 136
sed 's/"intValue":"12"/"intValue":"twelve"/' "$tmp/blis.json" > "$tmp/blist.json"
check "BLIS wrong type" 2 "blist.json:1:136: attribute 'gen_ai.usage.prompt_tokens': expected a number, got 'twelve'$" -- \
    "$erg" predict import "$tmp/blist.json" --ops "$tmp/o3.csv"
# cut inside the line (100 bytes, no newline): jansson stops at its last byte, 100
head -c 100 "$tmp/blis.json" > "$tmp/bliscut.json"
check "BLIS truncated line" 2 "bliscut.json:1:100: not JSON: " -- \
    "$erg" predict import "$tmp/bliscut.json" --ops "$tmp/o3.csv"
check "no such file" 2 "cannot open" -- "$erg" predict import "$tmp/nope.csv" --ops "$tmp/o3.csv"
[ ! -e "$tmp/o3.csv" ] && echo "ok   nothing written on errors" || { echo "FAIL o3.csv written"; fails=$((fails + 1)); }
check "import needs --ops" 2 "expected --ops" -- "$erg" predict import "$tmp/gemm.csv"
check "eval unknown target" 2 "unknown target 'no-such-gpu'" -- \
    "$erg" predict eval --target no-such-gpu "$tmp/gemm.csv"

# eval against the committed H100 target (name lookup: the source tree's models/h100/): an
# ML.ENERGY file with an H100 and a B200 configuration, with and without --config
printf '{"model_id": "meta-llama/Llama-3.1-8B-Instruct", "weight_precision": "bfloat16", "configurations": [{"gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 64, "avg_batch_size": 63.9, "median_itl_ms": 11.5, "energy_per_token_joules": 0.1186, "avg_power_watts": 610, "avg_output_len": 396, "output_throughput_tokens_per_sec": 5168, "parallelization": {"tensor_parallel": 1, "expert_parallel": 1, "data_parallel": 1}}, {"gpu_model": "B200", "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 8, "median_itl_ms": 4.57, "energy_per_token_joules": 0.39}]}\n' > "$tmp/l8.json"
printf '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "intermediate_size": 14336}\n' > "$tmp/l8cfg.json"
check "eval ML.ENERGY" 0 "row 2: B200 x1: the target's kernel data are of NVIDIA H100" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/l8.json"
grep -q "^  level 3 (serving)  *phase decode  *itl_s  *n      1  MAPE" "$tmp/out" && grep -q "assumption: steady-state decode step: KV length = 512" "$tmp/out" \
    && echo "ok   eval compares ITL, states the KV assumption" || { echo "FAIL eval output:"; cat "$tmp/out"; fails=$((fails + 1)); }
# the serving level 3 was fitted on ML.ENERGY files: the report says its figures on them are
# in-sample, with the count of its training configurations (gpu.json serving.n_train)
n_train=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["serving"]["n_train"])' "$src/models/h100/gpu.json")
grep -q "^assumption: in-sample: the serving level 3 was fitted on $n_train ML.ENERGY configurations" "$tmp/out" \
    && echo "ok   eval says the serving figures are in-sample ($n_train configurations)" || { echo "FAIL eval in-sample:"; cat "$tmp/out"; fails=$((fails + 1)); }
# the report names the target and what it holds once, each file with its format and what was
# compared, and each line's level and phase (level, target and phase each labelled)
grep -q "^target h100: .*models/h100; level 1 ops.json (fitted for h100), kernel models gpu.json (NVIDIA H100 80GB HBM3), level 3 serving model gpu.json$" "$tmp/out" \
    && grep -q "^file .*l8.json (mlenergy-v3, 2 rows): 1 rows compared$" "$tmp/out" \
    && ! grep -q "n/a\|(level 1: h100)" "$tmp/out" \
    && echo "ok   eval report: target, file, level and phase labelled" || { echo "FAIL eval report layout:"; cat "$tmp/out"; fails=$((fails + 1)); }
# consecutive rows skipped for one reason are one line (rows 2-3), a lone one keeps its own
sed 's/}]}$/}, {"gpu_model": "B200", "num_gpus": 1, "max_num_seqs": 16, "avg_batch_size": 16, "median_itl_ms": 5.1, "energy_per_token_joules": 0.3}]}/' "$tmp/l8.json" > "$tmp/l8b.json"
check "eval groups skipped rows" 0 "^  skipped rows 2-3: B200 x1: the target's kernel data are of NVIDIA H100" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/l8b.json"
[ "$(grep -c 'skipped' "$tmp/out")" = 1 ] && echo "ok   one skipped line" || { echo "FAIL skipped lines:"; cat "$tmp/out"; fails=$((fails + 1)); }
"$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/l8.json" --json > "$tmp/e.json"
# eval/1 is the library's (erg_eval_write_json): a failed write is exit 2, named
check "eval --json on a full disk" 2 "<stdout>: write error" -- \
    sh -c "'$erg' predict eval --target h100 --config '$tmp/l8cfg.json' '$tmp/l8.json' --json > /dev/full"
/usr/bin/python3 - "$tmp/e.json" <<'PY' && echo "ok   eval --json rows" || { echo "FAIL eval --json"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["erg"] == "eval/1"
q = sorted(r["quantity"] for r in d["rows"])
assert q == ["energy_per_token_j", "itl_s"], q
for r in d["rows"]:
    assert set(r) == {"file", "row", "phase", "quantity", "measured", "predicted"}
    assert r["row"] == 1 and r["phase"] == "decode" and r["predicted"] > 0
# the measured figures are the file's: 11.5 ms and 0.1186 J
m = {r["quantity"]: r["measured"] for r in d["rows"]}
assert abs(m["itl_s"] - 0.0115) < 1e-12 and abs(m["energy_per_token_j"] - 0.1186) < 1e-12
assert d["skipped"][0]["row"] == 2 and "B200" in d["skipped"][0]["reason"]
PY
# nothing compared is an error (exit 2) naming each file and why, with nothing on stdout
check "eval ML.ENERGY without --config" 2 "^erg: .*l8.json: skipped: no --config: the architecture of meta-llama/Llama-3.1-8B-Instruct is needed (give its HuggingFace config.json with --config)" -- \
    "$erg" predict eval --target h100 "$tmp/l8.json"
grep -q "^erg: predict eval: nothing compared: every row of the 1 file given was skipped" "$tmp/err" && [ ! -s "$tmp/out" ] \
    && echo "ok   nothing compared: said so, nothing on stdout" || { echo "FAIL nothing compared:"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1)); }
check "eval --json, nothing compared" 2 "^erg: .*l8.json: skipped: no --config" -- \
    "$erg" predict eval --target h100 --json "$tmp/l8.json"
[ ! -s "$tmp/out" ] && echo "ok   no JSON when nothing compared" || { echo "FAIL JSON written:"; cat "$tmp/out"; fails=$((fails + 1)); }
# every row skipped for the model's reasons (only a B200 configuration) is nothing compared too
printf '{"model_id": "x/y", "weight_precision": "bfloat16", "configurations": [{"gpu_model": "B200", "num_gpus": 1, "max_num_seqs": 8, "avg_batch_size": 8, "median_itl_ms": 4.57, "energy_per_token_joules": 0.39}]}\n' > "$tmp/b200.json"
check "eval only B200 rows" 2 "^erg: .*b200.json row 1: skipped: B200 x1: the target's kernel data are of NVIDIA H100" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/b200.json"
# one file compared, one skipped whole: exit 0, the skipped file listed with its reason
check "eval one file skipped" 0 "^file .*b200.json (mlenergy-v3, 1 rows): nothing compared$" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/l8.json" "$tmp/b200.json"
grep -A1 "b200.json (mlenergy-v3" "$tmp/out" | grep -q "^  skipped row 1: B200 x1" && grep -q "^nothing compared in 1 of 2 files" "$tmp/out" \
    && echo "ok   the skipped file listed with its reason" || { echo "FAIL skipped file:"; cat "$tmp/out"; fails=$((fails + 1)); }
check "eval bad config" 2 "kv.json.*num_key_value_heads" -- \
    sh -c "printf '{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 3, \"num_hidden_layers\": 2, \"vocab_size\": 10, \"intermediate_size\": 128}' > '$tmp/kv.json'; '$erg' predict eval --target h100 --config '$tmp/kv.json' '$tmp/l8.json'"
check "eval unknown format" 2 "not a known public format" -- \
    "$erg" predict eval --target h100 "$tmp/other.csv"
check "fit-serving needs pairs" 2 "expected MLENERGY.json=CONFIG.json" -- \
    "$erg" predict fit-serving --target h100 "$tmp/l8.json"
# a target whose gpu.json (gpu-target/1) is bad: file:line:col and the member, exit 2, nothing
# written (-o, or the target's own gpu.json in place); line 3 `  "phi": [1, 0], "power_max_w":
# "700", ...`: the value at 33
mkdir "$tmp/tgt"
cp "$src/models/h100/ops.json" "$tmp/tgt/"
printf '{"erg": "gpu-target/1",\n "serving": {"itl": [1, 1, 1, 1, 1], "power": [300, 0, 0],\n  "phi": [1, 0], "power_max_w": "700", "prompt_tokens": 512}}\n' > "$tmp/tgt/gpu.json"
cp "$tmp/tgt/gpu.json" "$tmp/tgt-gpu.json"
check "fit-serving bad gpu.json" 2 "^erg: .*tgt/gpu.json:3:33: serving.power_max_w: expected a number$" -- \
    "$erg" predict fit-serving --target "$tmp/tgt" -o "$tmp/fs.json" "$tmp/l8.json=$tmp/l8cfg.json"
check "fit-serving bad gpu.json in place" 2 "tgt/gpu.json:3:33: serving.power_max_w" -- \
    "$erg" predict fit-serving --target "$tmp/tgt" "$tmp/l8.json=$tmp/l8cfg.json"
check "eval bad gpu.json" 2 "^erg: .*tgt/gpu.json:3:33: serving.power_max_w: expected a number$" -- \
    "$erg" predict eval --target "$tmp/tgt" "$tmp/gemm.csv"
# the serving architecture's config: a missing field at the document, a bad one at its value
# (line 2 `  "num_hidden_layers": 0}`: 0 at 24)
printf '{"hidden_size": 4096, "num_attention_heads": 32,\n  "num_hidden_layers": 0}\n' > "$tmp/cfg0.json"
check "fit-serving config out of range" 2 "^erg: .*cfg0.json:2:24: num_hidden_layers: must be a positive integer$" -- \
    "$erg" predict fit-serving --target h100 -o "$tmp/fs.json" "$tmp/l8.json=$tmp/cfg0.json"
printf '{"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,\n "vocab_size": 128256}\n' > "$tmp/cfg1.json"
check "fit-serving config missing field" 2 "^erg: .*cfg1.json:1:1: intermediate_size: required field is missing (or n_inner)$" -- \
    "$erg" predict fit-serving --target h100 -o "$tmp/fs.json" "$tmp/l8.json=$tmp/cfg1.json"
[ ! -e "$tmp/fs.json" ] && cmp -s "$tmp/tgt/gpu.json" "$tmp/tgt-gpu.json" \
    && echo "ok   nothing written on a bad target or config" || { echo "FAIL fit-serving wrote"; fails=$((fails + 1)); }

# BLIS traces: two requests on one line are rows 1 and 2; prefill and decode per token compared
span() { printf '{"name":"llm_request","attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"%s"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"%s"}},{"key":"gen_ai.latency.time_in_model_prefill","value":{"doubleValue":%s}},{"key":"gen_ai.latency.time_in_model_decode","value":{"doubleValue":%s}},{"key":"gen_ai.latency.time_in_queue","value":{"doubleValue":0.0}},{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":%s}},{"key":"gen_ai.latency.e2e","value":{"doubleValue":1.0}}]}' "$@"; }
# a token count that is not a whole number is refused, naming the file and line
printf '{"resourceSpans":[{"scopeSpans":[{"spans":[%s]}]}]}\n{"resourceSpans":[{"scopeSpans":[{"spans":[%s]}]}]}\n' "$(span 5 3 0.5 0.2 0.5)" "$(span 51.5 3 0.5 0.2 0.5)" > "$tmp/blis-frac.json"
# line 2's span: attributes at 79, attributes[0] at 80, its intValue ("51.5") at 136
check "BLIS fractional prompt tokens" 2 "blis-frac.json:2:136: gen_ai.usage.prompt_tokens: 51.5 is not a token count" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/blis-frac.json"
printf '{"resourceSpans":[{"scopeSpans":[{"spans":[%s]}]}]}\n' "$(span 5 -1 0.5 0.2 0.5)" > "$tmp/blis-neg.json"
# attributes[0] spans 80-140 (`{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"5"}}`),
# attributes[1] at 142: "key" 143-147, its name 149-180, "value" 182-188, "intValue" 191-200,
# "-1" at 202
check "BLIS negative completion tokens" 2 "blis-neg.json:1:202: attribute 'gen_ai.usage.completion_tokens' must be a non-negative number" -- \
    "$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/blis-neg.json"
# request 3's prompt (2^41 tokens) cannot be predicted: both phases skipped with the reason
printf '{"resourceSpans":[{"scopeSpans":[{"spans":[%s,%s,%s]}]}]}\n' "$(span 512 101 0.05 1.0 0.05)" "$(span 1024 1 0.09 0 0.09)" "$(span 2199023255552 3 0.5 0.2 0.5)" > "$tmp/blis2.json"
"$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/blis2.json" --json > "$tmp/b.json"
/usr/bin/python3 - "$tmp/b.json" <<'PY' && echo "ok   eval BLIS rows" || { echo "FAIL eval BLIS"; cat "$tmp/b.json"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
rows = [(r["row"], r["phase"], r["quantity"], r["measured"]) for r in d["rows"]]
# request 2 has one completion token: no decode row; request 1: 1.0 s over 100 tokens
assert rows == [(1, "prefill", "time_s", 0.05), (1, "decode", "itl_s", 0.01), (2, "prefill", "time_s", 0.09)], rows
# every request not compared is listed: request 2's decode, request 3's two phases
sk = [(x["row"], x["reason"]) for x in d["skipped"]]
assert [r for r, _ in sk] == [2, 3, 3], sk
assert sk[0][1] == "decode: fewer than 2 completion tokens (no decode step)", sk
assert sk[1][1].startswith("prefill: ") and "2^40" in sk[1][1], sk
assert sk[2][1].startswith("decode: ") and "2^40" in sk[2][1], sk
assert any("one sequence per forward" in a for a in d["assumptions"])
PY
# the rows skipped for one reason share a line, consecutive rows as a run: requests 2, 4, 5, 6
# and 8 have one completion token (rows 2, 4-6, 8), request 7's prompt cannot be predicted
printf '{"resourceSpans":[{"scopeSpans":[{"spans":[%s,%s,%s,%s,%s,%s,%s,%s]}]}]}\n' "$(span 512 101 0.05 1.0 0.05)" "$(span 64 1 0.01 0 0.01)" "$(span 512 11 0.05 0.1 0.05)" "$(span 64 1 0.01 0 0.01)" "$(span 64 1 0.01 0 0.01)" "$(span 64 1 0.01 0 0.01)" "$(span 2199023255552 3 0.5 0.2 0.5)" "$(span 64 1 0.01 0 0.01)" > "$tmp/blis3.json"
"$erg" predict eval --target h100 --config "$tmp/l8cfg.json" "$tmp/blis3.json" > "$tmp/out" 2> "$tmp/err"
if [ "$(grep -c skipped "$tmp/out")" = 3 ] &&
    grep -q "^  skipped rows 2, 4-6, 8: decode: fewer than 2 completion tokens (no decode step)$" "$tmp/out" &&
    grep -q "^  skipped row 7: prefill: .*2^40" "$tmp/out" && grep -q "^  skipped row 7: decode: .*2^40" "$tmp/out"; then
    echo "ok   eval BLIS: one line per reason"
else
    echo "FAIL eval BLIS skipped lines:"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
fi

# The real files (../shared/data; skipped when absent): every public file reads, with the row
# counts SOURCES.md gives (section 6: H200 GEMM 65268 rows of which 35742 bf16; H100 26040/9240;
# A100 9240; section 5: Vidur Llama-2-7B H100 1044 rows, 261 at TP 1)
data="$src/../shared/data"
if [ -r "$data/kernels/aic_h200_vllm-0.22.0_gemm_perf.csv.gz" ]; then
    k=$data/kernels
    check "real H200 gemm" 0 "aic-gemm, 65268 rows, 35742 level-1 samples, 29526 rows skipped" -- \
        "$erg" predict import "$k/aic_h200_vllm-0.22.0_gemm_perf.csv.gz" --ops "$tmp/h200.csv"
    check "real H100 gemm" 0 "aic-gemm, 26040 rows, 9240 level-1 samples, 16800 rows skipped" -- \
        "$erg" predict import "$k/aic_h100_vllm-0.14.0_gemm_perf.csv.gz" --ops "$tmp/h100.csv"
    check "real A100 gemm" 0 "aic-gemm, 9240 rows, 9240 level-1 samples, 0 rows skipped" -- \
        "$erg" predict import "$k/aic_a100_vllm-0.14.0_gemm_perf.csv.gz" --ops "$tmp/a100.csv"
    check "real Vidur" 0 "vidur-mlp, 1044 rows, 1566 level-1 samples, 783 rows skipped" -- \
        "$erg" predict import "$data/blocks/vidur_h100_llama-2-7b-hf_mlp.csv" --ops "$tmp/v7.csv"
    # SOURCES.md section 5's sanity check: up_proj at 4096 tokens, median 0.987 ms
    grep -q '^gemm,vidur-mlp_up_proj,4096,22016,4096,,,fp16,20,0.000987,' "$tmp/v7.csv" \
        && echo "ok   Vidur up_proj 0.987 ms" || { echo "FAIL Vidur up_proj"; fails=$((fails + 1)); }
    for f in "$k"/*.gz "$data"/energy/mlenergy_v3_*.json "$data"/latency/blis_*_traces.json; do
        "$erg" predict import "$f" --ops "$tmp/any.csv" > /dev/null 2> "$tmp/err"
        grep -q "not a known public format\|line\|cannot" "$tmp/err" \
            && { echo "FAIL reading $f:"; cat "$tmp/err"; fails=$((fails + 1)); }
    done
    echo "ok   every public file reads"
else
    echo "note: $data absent, real-file checks skipped"
fi
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
