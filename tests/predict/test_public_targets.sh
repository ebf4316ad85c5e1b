#!/usr/bin/env bash
# The GPU targets from public data (../shared/data; skipped, 77, when absent), refitted on small
# subsets with the commands scripts/fit-public-targets.sh uses, and their held-out accuracy held
# to what docs/predict.md reports ("GPU targets"): kernel models of the H100 tables, GEMM on
# held-out H200 shapes, and the serving level 3 left-one-architecture-out on ML.ENERGY.
set -u
erg=${ERG_BIN:?ERG_BIN not set}
src=${ERG_TEST_SOURCE_DIR:?}
data="$src/../shared/data"
[ -r "$data/kernels/aic_h200_vllm-0.22.0_gemm_perf.csv.gz" ] || { echo "skipped: $data not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
below() { # below NAME VALUE LIMIT
    if awk -v v="$2" -v l="$3" 'BEGIN { exit !(v + 0 == v && v < l) }'; then
        echo "ok   $1: $2 < $3"
    else
        fail "$1: $2 (limit $3)"
    fi
}
k=$data/kernels

# kernel models of the H100 tables (docs: decode attention 10.15 %, fused MoE 18.8 % on the power-law-routed rows)
"$erg" predict import --kernels "$tmp/gpu.json" "$k/aic_h100_vllm-0.14.0_generation_attention_perf.csv.gz" \
    "$k/aic_h100_vllm-0.14.0_moe_perf.csv.gz" "$k/aic_h100_vllm-0.14.0_custom_allreduce_perf.csv.gz" 2> "$tmp/k.txt" \
    || fail "import --kernels: $(cat "$tmp/k.txt")"
below "H100 decode attention held-out MAPE" "$(sed -n 's/.*decode attention: 5435 rows, held-out MAPE \([0-9.]*\) %.*/\1/p' "$tmp/k.txt")" 11
below "H100 fused MoE held-out MAPE" "$(sed -n 's/.*fused MoE: 1863 rows, held-out MAPE \([0-9.]*\) %.*/\1/p' "$tmp/k.txt")" 20

# prefill (flash) attention on H200 with NVML power (docs: time 13.05 %, energy 25.8 % held out,
# 26.2 % before the power form P(ln t, head_dim, GQA) x t);
# with gpu.json beside ops.json, level 1 answers the attention core with it: HYMELL Figure 3's
# sweep (heads at d_model 4096, prefill N = 1024) is then U-shaped in time, lowest at 16-32
# heads (head_dim 256-128), as aiconfigurator measured (30.5, 28.1 us at 16, 32 heads; 52.2, 50.0
# us at 8, 64), where GEMMs + softmax per head rise monotonically with the heads
mkdir -p "$tmp/h200k"
cp "$src/models/h200/ops.json" "$tmp/h200k/"
"$erg" predict import --kernels "$tmp/h200k/gpu.json" "$k/aic_h200_vllm-0.22.0_context_attention_perf.csv.gz" 2> "$tmp/kp.txt" \
    || fail "import --kernels (H200 prefill): $(cat "$tmp/kp.txt")"
below "H200 prefill attention held-out time MAPE" "$(sed -n 's/.*prefill attention: 13736 rows, held-out MAPE \([0-9.]*\) %.*/\1/p' "$tmp/kp.txt")" 14
below "H200 prefill attention held-out energy MAPE" "$(sed -n 's/.*prefill attention energy (NVML power x latency): held-out MAPE \([0-9.]*\) %.*/\1/p' "$tmp/kp.txt")" 26.5
"$erg" predict sweep "$data/hf-configs/llama-2-7b-hf.json" --target "$tmp/h200k" --set d_model=4096 --set heads=8:128:8 \
    --phase prefill --prompt 1024 --csv > "$tmp/fig3.csv" 2> /dev/null || fail "Figure 3 sweep"
awk -F, 'NR > 1 { t[$2] = $6 } END { exit !(t[16] < t[8] && t[32] < t[64] && t[64] < t[128] && t[16] < t[64]) }' "$tmp/fig3.csv" \
    && echo "ok   Figure 3 sweep: attention time U-shaped in the heads, lowest at 16-32" \
    || fail "Figure 3 sweep not U-shaped: $(cat "$tmp/fig3.csv")"
# and in energy: the power model gives 16 heads the lowest attention energy, as the measured
# kernel has in 78 of the 119 (batch, prompt) cells of d_model 4096 (docs: 115.2 mJ at 16 heads,
# 117.4 at 8, 118.7 at 64, 126.5 at 128; the former energy fit fell monotonically to 8 heads)
awk -F, 'NR > 1 { e[$2] = $7 } END { exit !(e[16] < e[8] && e[16] < e[64] && e[32] < e[64] && e[64] < e[128]) }' "$tmp/fig3.csv" \
    && echo "ok   Figure 3 sweep: attention energy U-shaped in the heads, lowest at 16" \
    || fail "Figure 3 energy not U-shaped: $(cat "$tmp/fig3.csv")"

# GEMM on held-out H200 shapes: fit on every 20th bf16 row, compare on the rows 10 after them
zcat "$k/aic_h200_vllm-0.22.0_gemm_perf.csv.gz" | awk -F, -v tr="$tmp/train.csv" -v te="$tmp/test.csv" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gemm_dtype") c = i; print > tr; print > te; next }
    $c == "bfloat16" { n++; if (n % 20 == 0) print > tr; else if (n % 20 == 10) print > te }'
mkdir -p "$tmp/h200"
"$erg" predict import "$tmp/train.csv" --ops "$tmp/ops.csv" 2> /dev/null || fail "import train"
"$erg" fit ops "$tmp/ops.csv" -o "$tmp/h200/ops.json" --paper-thresholds --target-kind h200 > /dev/null || fail "fit ops"
"$erg" predict eval --target "$tmp/h200" "$tmp/test.csv" --json > "$tmp/eval.json" || fail "eval"
/usr/bin/python3 - "$tmp/eval.json" > "$tmp/gemm.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    assert set(r) == {"file", "row", "phase", "quantity", "measured", "predicted"}, r
for q in ("time_s", "energy_j"):
    s = [r for r in d["rows"] if r["quantity"] == q]
    print(q, len(s), 100 * sum(abs(r["predicted"] - r["measured"]) / r["measured"] for r in s) / len(s))
PY
grep -q '^time_s 1787 ' "$tmp/gemm.txt" || fail "expected 1787 held-out H200 shapes: $(cat "$tmp/gemm.txt")"
below "H200 GEMM held-out time MAPE (1/20 subset)" "$(awk '$1 == "time_s" { print $3 }' "$tmp/gemm.txt")" 11
below "H200 GEMM held-out energy MAPE (1/20 subset)" "$(awk '$1 == "energy_j" { print $3 }' "$tmp/gemm.txt")" 26
# with the measured-shape map of the same training rows (docs, every 5th row held out: time
# 8.50 -> 3.92 %, energy 22.8 -> 14.7 %)
"$erg" predict import "$tmp/train.csv" --gemm-map "$tmp/h200/gemm-map.json" 2> /dev/null || fail "import --gemm-map"
"$erg" predict eval --target "$tmp/h200" "$tmp/test.csv" --json > "$tmp/eval-map.json" || fail "eval with the map"
/usr/bin/python3 - "$tmp/eval-map.json" > "$tmp/gemm-map.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for q in ("time_s", "energy_j"):
    s = [r for r in d["rows"] if r["quantity"] == q]
    print(q, len(s), 100 * sum(abs(r["predicted"] - r["measured"]) / r["measured"] for r in s) / len(s))
PY
cat "$tmp/gemm.txt" "$tmp/gemm-map.txt"
below "H200 GEMM held-out time MAPE with the map (1/20 subset)" "$(awk '$1 == "time_s" { print $3 }' "$tmp/gemm-map.txt")" 8.5
below "H200 GEMM held-out energy MAPE with the map (1/20 subset)" "$(awk '$1 == "energy_j" { print $3 }' "$tmp/gemm-map.txt")" 23

# serving level 3, leave-one-architecture-out on the committed H100 target (docs: dense ITL
# 6.17 %, energy per token 8.80 %; B200, expert-parallel and mxfp4 configurations skipped)
ERG=$erg "$src/scripts/eval-public-loao.sh" "$data" "$src/models/h100" x --json "$tmp/loao.json" > "$tmp/loao.txt" \
    || fail "eval-public-loao.sh: $(cat "$tmp/loao.txt")"
cat "$tmp/loao.txt"
read -r itl en <<< "$(/usr/bin/python3 -c 'import json,sys; c=[x for x in json.load(open(sys.argv[1]))["classes"] if x["class"]=="dense"][0]; print(c["itl_mape_pct"], c["energy_mape_pct"])' "$tmp/loao.json")"
below "H100 dense decode ITL MAPE, held-out architectures" "$itl" 7
below "H100 dense decode energy/token MAPE, held-out architectures" "$en" 9.5
# MoE (Qwen3-30B-A3B, fitted on dense only; docs: ITL 4.89 %, energy per token 12.2 %, 30.6 %
# with the former power P = p0 + p1 ln B)
read -r mitl men <<< "$(/usr/bin/python3 -c 'import json,sys; c=[x for x in json.load(open(sys.argv[1]))["classes"] if x["class"]=="moe"][0]; print(c["itl_mape_pct"], c["energy_mape_pct"])' "$tmp/loao.json")"
below "H100 MoE decode ITL MAPE, held-out architecture" "$mitl" 6
below "H100 MoE decode energy/token MAPE, held-out architecture" "$men" 13.5
grep -q "B200 x1" "$tmp/loao.txt" && grep -q "mxfp4 weights" "$tmp/loao.txt" \
    && echo "ok   B200 and mxfp4 configurations listed as skipped" || fail "skip reasons missing"
# BLIS: Llama-2-7B requests against the H100 target at one sequence per forward (docs: prefill
# 15.1 %, decode per token 7.63 % over 282 / 269 requests)
"$erg" predict eval --target "$src/models/h100" --config "$data/hf-configs/llama-2-7b-hf.json" \
    "$data/latency/blis_jan21-llama7b-train-1_traces.json" > "$tmp/blis.txt" || fail "eval BLIS"
below "BLIS prefill MAPE" "$(sed -n 's/.*phase prefill  time_s  *n    282  MAPE  *\([0-9.]*\) %.*/\1/p' "$tmp/blis.txt")" 17
below "BLIS decode per-token MAPE" "$(sed -n 's/.*phase decode  *itl_s  *n    269  MAPE  *\([0-9.]*\) %.*/\1/p' "$tmp/blis.txt")" 9

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
