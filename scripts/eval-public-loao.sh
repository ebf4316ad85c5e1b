#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Leave-one-architecture-out accuracy of the H100 serving level 3 on ML.ENERGY v3
# (docs/predict.md, "GPU targets"): for each architecture, fit the serving model on the others
# (erg predict fit-serving on a copy of the target), predict the held-out file
# (erg predict eval --json) and pool the rows; prints MAPE and R² of ITL and energy per output
# token, per architecture and for dense / MoE, in the layout of HYMELL's Table 6.
#   scripts/eval-public-loao.sh [DATA_DIR] [TARGET_DIR] [x --json OUT]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$here/../shared/data}
target=${2:-$here/models/h100}
json_out=""
[ "${4:-}" = --json ] && json_out=${5:?--json needs a file}
erg=${ERG:-}
if [ -z "$erg" ]; then
    for c in "$here"/build/release/src/cli/erg "$here"/build/gcc/src/cli/erg; do
        [ -x "$c" ] && { erg=$c; break; }
    done
fi
[ -n "$erg" ] && [ -x "$erg" ] || { echo "eval-public-loao: build erg first, or set ERG" >&2; exit 2; }
e=$data/energy c=$data/hf-configs
[ -r "$e/mlenergy_v3_qwen3-8b_lm-arena-chat.json" ] || { echo "eval-public-loao: $e not found" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/loao.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# architecture  class  ML.ENERGY file  config
pairs="llama-3.1-8b dense mlenergy_v3_llama-3.1-8b-instruct_lm-arena-chat.json llama-3.1-8b.json
qwen3-8b dense mlenergy_v3_qwen3-8b_lm-arena-chat.json qwen3-8b.json
qwen3-32b dense mlenergy_v3_qwen3-32b_lm-arena-chat.json qwen3-32b.json
llama-3.1-70b dense mlenergy_v3_llama-3.1-70b-instruct_lm-arena-chat.json llama-3.1-70b-instruct.json
qwen3-30b-a3b moe mlenergy_v3_qwen3-30b-a3b-instruct-2507_lm-arena-chat.json qwen3-30b-a3b.json
qwen3-235b-a22b moe mlenergy_v3_qwen3-235b-a22b-instruct-2507_lm-arena-chat.json qwen3-235b-a22b.json
gpt-oss-20b moe mlenergy_v3_gpt-oss-20b_gpqa.json gpt-oss-20b.json"
prompt=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serving"]["prompt_tokens"])' "$target/gpu.json")
: > "$tmp/classes"
while read -r arch cls file cfg; do
    echo "$arch $cls" >> "$tmp/classes"
    mkdir -p "$tmp/$arch"
    cp "$target/ops.json" "$target/gpu.json" "$tmp/$arch/"
    [ -r "$target/gemm-map.json" ] && cp "$target/gemm-map.json" "$tmp/$arch/"
    train=()
    while read -r a2 _ f2 c2; do
        [ "$a2" = "$arch" ] || train+=("$e/$f2=$c/$c2")
    done <<< "$pairs"
    "$erg" predict fit-serving --target "$tmp/$arch" --prompt-tokens "$prompt" "${train[@]}" 2> "$tmp/$arch.fit"
    if ! "$erg" predict eval --target "$tmp/$arch" --config "$c/$cfg" "$e/$file" --json > "$tmp/$arch.json" 2> "$tmp/$arch.err"; then
        # exit 2 with "nothing compared": every configuration was skipped, the reasons on stderr
        grep -q "nothing compared" "$tmp/$arch.err" || { cat "$tmp/$arch.err" >&2; exit 2; }
    fi
done <<< "$pairs"
/usr/bin/python3 - "$tmp" "$json_out" <<'PY'
import json, math, re, sys
tmp, out = sys.argv[1], sys.argv[2]
classes = [l.split() for l in open(tmp + "/classes")]
def stats(rows):
    if not rows:
        return None
    m = [r["measured"] for r in rows]; p = [r["predicted"] for r in rows]
    mape = 100 * sum(abs(b - a) / a for a, b in zip(m, p)) / len(m)
    mu = sum(m) / len(m); sst = sum((a - mu) ** 2 for a in m)
    r2 = 1 - sum((b - a) ** 2 for a, b in zip(m, p)) / sst if len(m) > 1 and sst > 0 else float("nan")
    return len(m), mape, r2
report = {"erg": "loao/1", "archs": [], "classes": []}
pool = {}
print("%-18s %-6s %4s | %10s %8s | %10s %8s | skipped" % ("held out", "class", "n", "ITL MAPE", "R2", "E/tok MAPE", "R2"))
for arch, cls in classes:
    try:
        d = json.load(open("%s/%s.json" % (tmp, arch)))
    except ValueError:  # nothing compared: "erg: FILE rows A-B: skipped: REASON" on stderr
        d = {"rows": [], "skipped": []}
        for l in open("%s/%s.err" % (tmp, arch)):
            m = re.match(r"erg: .*?(?: rows (\d+)-(\d+)| row (\d+))?: skipped: (.*)$", l)
            if m:
                k = int(m.group(2)) - int(m.group(1)) + 1 if m.group(1) else 1
                d["skipped"] += [{"reason": m.group(4)}] * k
    it = [r for r in d["rows"] if r["quantity"] == "itl_s"]
    en = [r for r in d["rows"] if r["quantity"] == "energy_per_token_j"]
    pool.setdefault(cls, ([], []))
    pool[cls][0].extend(it); pool[cls][1].extend(en)
    reasons = sorted(set(s["reason"].split(":")[0] for s in d["skipped"]))
    st_i, st_e = stats(it), stats(en)
    rec = {"arch": arch, "class": cls, "n": len(it), "skipped": len(d["skipped"]), "skip_reasons": reasons}
    if st_i:
        rec.update(itl_mape_pct=st_i[1], itl_r2=st_i[2], energy_mape_pct=st_e[1], energy_r2=st_e[2])
        print("%-18s %-6s %4d | %9.2f%% %8.4f | %9.2f%% %8.4f | %d (%s)" % (arch, cls, len(it), st_i[1], st_i[2], st_e[1], st_e[2], len(d["skipped"]), "; ".join(reasons)))
    else:
        print("%-18s %-6s %4d | %10s %8s | %10s %8s | %d (%s)" % (arch, cls, 0, "-", "-", "-", "-", len(d["skipped"]), "; ".join(reasons)))
    report["archs"].append(rec)
for cls, (it, en) in sorted(pool.items()):
    st_i, st_e = stats(it), stats(en)
    if st_i:
        print("decode (%s) pooled: n %d, ITL MAPE %.2f %% R2 %.4f, energy/token MAPE %.2f %% R2 %.4f" % (cls, st_i[0], st_i[1], st_i[2], st_e[1], st_e[2]))
        report["classes"].append({"class": cls, "n": st_i[0], "itl_mape_pct": st_i[1], "itl_r2": st_i[2], "energy_mape_pct": st_e[1], "energy_r2": st_e[2]})
if out:
    json.dump(report, open(out, "w"), indent=1)
PY
