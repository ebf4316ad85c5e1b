#!/usr/bin/env bash
# Convert LLMCompass's measured A100 operator latencies (../shared/data/latency/, see SOURCES.md 3c)
# into erg's ops.csv (time only, no energy) and fit HYMELL's level-1 estimators to them.
#   examples/predict-llmcompass.sh [DATA_DIR] [OUT_DIR]
# matmul:    M,N,K,"<ms>ms",...        -> gemm m,n,k, time_s = ms/1000 (fp16)
# softmax:   M,N,<G elements/s>        -> softmax m rows x n columns, time_s = M*N/(G*1e9)
# layernorm: M,N,<G elements/s>        -> rmsnorm tokens=M, d_model=N (LayerNorm stands in)
set -euo pipefail
data=${1:-"$(dirname "$0")/../../shared/data/latency"}
out=${2:-.}
erg=${ERG:-"$(dirname "$0")/../build/release/src/cli/erg"}
if [ ! -x "$erg" ]; then
    echo "$(basename "$0"): erg not found at $erg; build it with scripts/main.sh, or" >&2
    echo "  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release" >&2
    echo "or point ERG at an erg binary (ERG=/path/to/erg $0)" >&2
    exit 2
fi
for f in matmul softmax layernorm; do
    [ -r "$data/llmcompass_${f}_A100.csv" ] || { echo "skipped: $data/llmcompass_${f}_A100.csv not found"; exit 0; }
done
csv="$out/ops_a100_llmcompass.csv"
{
    echo "op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade"
    awk -F', *' 'NF>=4 { ms=$4; sub(/ms$/,"",ms); printf "gemm,cublas-a100-llmcompass,%d,%d,%d,,,fp16,,%.9g,,,,\n", $1,$2,$3, ms/1000 }' \
        "$data/llmcompass_matmul_A100.csv"
    awk -F', *' 'NF>=3 { printf "softmax,llmcompass-a100-rows,%d,%d,,,,fp16,,%.9g,,,,\n", $1,$2, $1*$2/($3*1e9) }' \
        "$data/llmcompass_softmax_A100.csv"
    awk -F', *' 'NF>=3 { printf "rmsnorm,llmcompass-a100-layernorm,,,,%d,%d,fp16,,%.9g,,,,\n", $1,$2, $1*$2/($3*1e9) }' \
        "$data/llmcompass_layernorm_A100.csv"
} > "$csv"
"$erg" fit ops "$csv" -o "$out/a100-llmcompass.json" --target-kind a100-llmcompass \
    --target-desc "NVIDIA A100 (LLMCompass measured latencies, fp16; time only)" "${@:3}"
