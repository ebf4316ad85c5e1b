#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""profile_torch.py: ground truth for HYMELL levels 2 and 3, measured with real PyTorch.

Builds PyTorch attention blocks (MHA, GQA, sliding window, RoPE, a KV cache for decode), FFN
blocks (gated SiLU / GELU, non-gated GELU), MoE blocks (router, top-k experts, shared expert),
norms, embeddings, LM heads and whole decoder models from HF-style configs of the families
llama, mistral, mixtral, qwen (v1), qwen2_moe, qwen3, qwen3_moe, gemma2, phi and gpt_oss,
scaled down to fit the machine (random weights), and times them in prefill and decode.

Writes into DIR (docs/predict.md, "CPU target"):
  blocks.csv  arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,head_dim,d_ff,
              ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,dtype,threads,
              reps,time_s,time_sd_s,energy_j,energy_sd_j,grade
  models.csv  arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,time_sd_s,
              energy_j,energy_sd_j,grade   (config: configs/<name>.json, HF format, written too)
  ops.csv     erg's level-1 format (op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,...),
              the same torch kernels the blocks use (F.linear, the RMSNorm, the masked softmax).

Protocol (HYMELL Section 5.1, adapted): every configuration gets input sets (weights, inputs,
KV cache) rotated between executions until their footprint reaches 64 MiB (at least 2, at most
8); one warm-up per set; then batches of b executions (b chosen so that a batch lasts at least
--min-window) until the measured time passes --min-time and at least --min-batches batches ran.
time_s = the median over batches of the per-execution time (batch time / b); time_sd_s =
1.4826 x MAD of the same (robust to an interrupted batch, not divided by sqrt(b)). On the CPU the
clock is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) with one torch thread, which a shared
machine does not inflate by descheduling; --clock monotonic for wall time.

Energy: on the CPU, erg's meter read through liberg (erg_meter_open, snapshots around each
batch, erg_meter_diff), scaled like erg profile ops by (batch clock time / batch wall time);
without hardware counters that figure is erg's utilisation estimator and grade says
"estimator". On CUDA, NVML's nvmlDeviceGetTotalEnergyConsumption (mJ) around each batch
(grade hw_shunt, as erg's nvml backend grades that counter). Without either, energy is empty
(never invented). The script does not depend on the erg Python package.
"""

import argparse
import ctypes
import ctypes.util
import json
import math
import os
import platform
import random
import sys
import time
import zlib

BLOCK_COLUMNS = ("arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,head_dim,"
                 "d_ff,ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,dtype,"
                 "threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade").split(",")
MODEL_COLUMNS = ("arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,time_sd_s,"
                 "energy_j,energy_sd_j,grade").split(",")
OPS_COLUMNS = ("op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,"
               "grade").split(",")

ROTATE_BYTES = 64 << 20
MAX_SETS = 8


def die(msg, status=2):
    sys.stderr.write("profile_torch: %s\n" % msg)
    sys.exit(status)


# ---------------------------------------------------------------------------------------------
# Families: the structure of each HF family (from ../shared/data/hf-configs), sizes scaled.
# ---------------------------------------------------------------------------------------------

FAMILIES = {
    # model_type: structure. ffn: width / d_model; heads: (q heads, kv heads) per 1024 of d_model
    # unless head_dim is explicit.
    "llama": dict(act="silu", gated=True, norm="rms", ffn=3.5, kv_ratio=4, mha_too=True,
                  source="llama-3.1-8b.json, llama-2-7b-hf.json"),
    "mistral": dict(act="silu", gated=True, norm="rms", ffn=3.5, kv_ratio=4, window="all",
                    source="mistral-7b-v0.1.json"),
    "mixtral": dict(act="silu", gated=True, norm="rms", ffn=3.5, kv_ratio=4, experts=(8, 2),
                    renorm=True, source="mixtral-8x7b-v0.1.json"),
    "qwen": dict(act="silu", gated=True, norm="rms", ffn=3.0, kv_ratio=1,
                 source="qwen-72b.json (intermediate_size = 2 x FFN width)"),
    "qwen2_moe": dict(act="silu", gated=True, norm="rms", ffn=2.75, kv_ratio=1,
                      experts=(60, 4), moe_ffn=0.6875, shared=2.75, renorm=False,
                      source="qwen1.5-moe-a2.7b.json"),
    "qwen3": dict(act="silu", gated=True, norm="rms", ffn=3.0, kv_ratio=4, head_dim=128,
                  qk_norm=True, source="qwen3-8b.json, qwen3-32b.json"),
    "qwen3_moe": dict(act="silu", gated=True, norm="rms", ffn=3.0, kv_ratio=8, head_dim=128,
                      qk_norm=True, experts=(128, 8), moe_ffn=0.375, renorm=True,
                      source="qwen3-30b-a3b.json, qwen3-235b-a22b.json"),
    "gemma2": dict(act="gelu_tanh", gated=True, norm="rms1p", ffn=4.0, kv_ratio=2,
                   head_dim=256, window="alternate", softcap=(50.0, 30.0), post_norms=True,
                   emb_scale=True, source="gemma-2-2b.json"),
    "phi": dict(act="gelu_tanh", gated=False, norm="layer", ffn=4.0, kv_ratio=1, bias=True,
                rotary_pct=0.4, parallel=True, source="phi-2.json"),
    "gpt_oss": dict(act="silu", gated=True, norm="rms", ffn=1.0, kv_ratio=8, head_dim=64,
                    window="alternate", experts=(32, 4), moe_ffn=1.0, attn_bias=True,
                    sinks=True, oss_glu=True, source="gpt-oss-20b.json"),
}
FAMILY_ORDER = ["llama", "mistral", "mixtral", "qwen", "qwen2_moe", "qwen3", "qwen3_moe",
                "gemma2", "phi", "gpt_oss"]


def arch_shape(fam, d, head_dim, mha, rnd, experts_scale=None):
    """A scaled architecture (dict) of family fam at hidden size d."""
    f = FAMILIES[fam]
    hd = head_dim
    heads = max(1, d // hd) if not f.get("head_dim") else max(2, d // hd)
    kv_ratio = 1 if mha else f["kv_ratio"]
    while heads % kv_ratio:
        kv_ratio //= 2
    kvh = max(1, heads // kv_ratio)
    a = dict(arch=fam, d_model=d, n_heads=heads, n_kv_heads=kvh, head_dim=hd,
             d_ff=int(round(f["ffn"] * d / 64.0)) * 64, act=f["act"], gated=f["gated"],
             norm=f["norm"], bias=bool(f.get("bias")), attn_bias=bool(f.get("attn_bias") or
                                                                      f.get("bias")),
             qk_norm=bool(f.get("qk_norm")), rotary_pct=f.get("rotary_pct", 1.0),
             softcap=f.get("softcap"), post_norms=bool(f.get("post_norms")),
             emb_scale=bool(f.get("emb_scale")), parallel=bool(f.get("parallel")),
             sinks=bool(f.get("sinks")), oss_glu=bool(f.get("oss_glu")),
             window_mode=f.get("window"), renorm=f.get("renorm", False),
             n_experts=0, top_k=0, n_shared=0, d_ff_shared=0)
    if "experts" in f:
        e, k = experts_scale if experts_scale else f["experts"]
        a["n_experts"], a["top_k"] = e, k
        a["d_ff"] = max(64, int(round(f.get("moe_ffn", f["ffn"]) * d / 64.0)) * 64)
        if f.get("shared"):
            a["n_shared"] = 1
            a["d_ff_shared"] = int(round(f["shared"] * d / 64.0)) * 64
    return a


def scaled_experts(fam, rnd, small):
    """Expert count and top-k scaled to this machine, keeping the family's sparsity flavour."""
    e, k = FAMILIES[fam]["experts"]
    if fam == "mixtral":
        return (8, 2)
    choices = {"qwen2_moe": [(16, 4), (30, 4), (60, 4)], "qwen3_moe": [(16, 4), (32, 8), (64, 8)],
               "gpt_oss": [(8, 2), (16, 4), (32, 4)]}[fam]
    if small:
        return choices[0]
    return rnd.choice(choices)


def hf_config(a, layers, vocab, window, name):
    """An HF-format config.json (the family's own field names) for architecture a."""
    fam = a["arch"]
    d = a["d_model"]
    c = {"_name_or_path": "erg-profile/" + name, "model_type": fam,
         "architectures": [{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                            "mixtral": "MixtralForCausalLM", "qwen": "QWenLMHeadModel",
                            "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
                            "qwen3_moe": "Qwen3MoeForCausalLM", "gemma2": "Gemma2ForCausalLM",
                            "phi": "PhiForCausalLM", "gpt_oss": "GptOssForCausalLM"}[fam]],
         "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": a["n_heads"],
         "vocab_size": vocab, "torch_dtype": "float32", "tie_word_embeddings": False,
         "max_position_embeddings": 4096, "rope_theta": 10000.0,
         "erg_profile": "random weights, scaled from the family's structure (%s)"
                        % FAMILIES[fam]["source"]}
    if fam == "qwen":
        c.update(intermediate_size=2 * a["d_ff"], kv_channels=a["head_dim"],
                 layer_norm_epsilon=1e-6, seq_length=4096, no_bias=True)
    else:
        c["num_key_value_heads"] = a["n_kv_heads"]
        c["hidden_act"] = {"silu": "silu", "gelu_tanh": "gelu_pytorch_tanh"}[a["act"]]
        c["intermediate_size"] = a["d_ff"]
        if a["head_dim"] * a["n_heads"] != d or fam in ("qwen3", "qwen3_moe", "gemma2",
                                                        "gpt_oss"):
            c["head_dim"] = a["head_dim"]
        if a["norm"] == "layer":
            c["layer_norm_eps"] = 1e-5
        else:
            c["rms_norm_eps"] = 1e-6
    if fam == "mistral":
        c["sliding_window"] = window
    if fam == "mixtral":
        c.update(num_local_experts=a["n_experts"], num_experts_per_tok=a["top_k"],
                 sliding_window=None)
    if fam == "qwen2_moe":
        c.update(num_experts=a["n_experts"], num_experts_per_tok=a["top_k"],
                 moe_intermediate_size=a["d_ff"], intermediate_size=a["d_ff_shared"],
                 shared_expert_intermediate_size=a["d_ff_shared"], norm_topk_prob=False,
                 decoder_sparse_step=1, use_sliding_window=False)
    if fam == "qwen3_moe":
        c.update(num_experts=a["n_experts"], num_experts_per_tok=a["top_k"],
                 moe_intermediate_size=a["d_ff"], intermediate_size=3 * d,
                 norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[],
                 use_sliding_window=False, sliding_window=None)
    if fam == "qwen3":
        c.update(use_sliding_window=False, sliding_window=None)
    if fam == "gemma2":
        c.update(sliding_window=window, attn_logit_softcapping=a["softcap"][0],
                 final_logit_softcapping=a["softcap"][1],
                 query_pre_attn_scalar=a["head_dim"], hidden_activation="gelu_pytorch_tanh")
    if fam == "phi":
        c.update(partial_rotary_factor=a["rotary_pct"], qk_layernorm=False)
    if fam == "gpt_oss":
        c.update(num_local_experts=a["n_experts"], num_experts_per_tok=a["top_k"],
                 experts_per_token=a["top_k"], sliding_window=window, attention_bias=True,
                 layer_types=["sliding_attention" if i % 2 == 0 else "full_attention"
                              for i in range(layers)], swiglu_limit=7.0)
    return c


def layer_windows(a, layers, window):
    """The window of each layer (None: global attention)."""
    m = a["window_mode"]
    if m == "all":
        return [window] * layers
    if m == "alternate":
        # gemma2: even layers sliding; gpt-oss: layer_types starts with sliding_attention
        return [window if i % 2 == 0 else None for i in range(layers)]
    return [None] * layers


# ---------------------------------------------------------------------------------------------
# Plans: which configurations to measure.
# ---------------------------------------------------------------------------------------------

PLANS = {
    # d_model choices, prefill (batch, prompt), decode (batch, kv), rows per family per block,
    # model sizes; "cap" bounds the FLOPs of one execution.
    "full": dict(d=[256, 384, 512, 768, 1024, 1536, 2048],
                 prefill=[(1, 16), (1, 64), (1, 128), (1, 256), (1, 512), (1, 1024), (2, 128),
                          (4, 64), (8, 32), (2, 512), (4, 256)],
                 decode=[(1, 64), (1, 256), (1, 1024), (1, 2048), (4, 128), (4, 512), (8, 256),
                         (8, 1024), (16, 128), (32, 64), (16, 512)],
                 attention=32, ffn=26, norm=8, embedding=4, lm_head=6, ops=300,
                 models=3, model_d=[256, 512, 768], model_layers=[2, 3, 4],
                 model_vocab=[4096, 8192, 16384],
                 model_prefill=[(1, 64), (1, 256), (4, 128)],
                 model_decode=[(1, 256), (4, 512), (16, 128)],
                 cap=8e9, cache_cap=96 << 20),
    "small": dict(d=[256, 512, 1024],
                  prefill=[(1, 16), (1, 128), (1, 512), (4, 64)],
                  decode=[(1, 128), (1, 1024), (8, 256)],
                  attention=6, ffn=5, norm=2, embedding=1, lm_head=1, ops=24,
                  models=1, model_d=[256, 512], model_layers=[2], model_vocab=[4096],
                  model_prefill=[(1, 64), (2, 128)], model_decode=[(1, 256), (4, 128)],
                  cap=4e9, cache_cap=32 << 20),
    "smoke": dict(d=[64, 128],
                  prefill=[(1, 8), (2, 16)], decode=[(1, 16), (2, 32)],
                  attention=1, ffn=1, norm=1, embedding=1, lm_head=1, ops=6,
                  models=1, model_d=[64], model_layers=[1], model_vocab=[256],
                  model_prefill=[(1, 8)], model_decode=[(1, 16)],
                  cap=1e8, cache_cap=1 << 20),
}

CUDA_SCALE = dict(d=4, prompt=4, cap=200.0, cache=64, vocab=4)


def head_dim_for(fam, d, rnd, plan_name):
    f = FAMILIES[fam]
    if f.get("head_dim"):
        hd = f["head_dim"]
        if plan_name == "smoke":
            hd = 32
        return hd
    options = [64, 128] if d >= 512 else [32, 64]
    if plan_name == "smoke":
        options = [32]
    return rnd.choice(options)


def window_for(fam, rnd, plan_name):
    m = FAMILIES[fam].get("window")
    if not m:
        return None
    if plan_name == "smoke":
        return 8
    return rnd.choice([32, 64, 128, 256])


def attn_flops(a, phase, batch, prompt, kv):
    d, h, kvh, hd = a["d_model"], a["n_heads"], a["n_kv_heads"], a["head_dim"]
    t = batch * (prompt if phase == "prefill" else 1)
    proj = 2 * t * d * hd * (2 * h + 2 * kvh)
    ctx = prompt if phase == "prefill" else kv + 1
    return proj + 4 * t * ctx * h * hd


def ffn_flops(a, tokens, moe):
    mult = 3 if a["gated"] else 2
    if moe:
        f = 2 * tokens * a["top_k"] * mult * a["d_model"] * a["d_ff"]
        f += 2 * tokens * a["d_model"] * a["n_experts"]
        f += 2 * tokens * a["n_shared"] * 3 * a["d_model"] * a["d_ff_shared"]
        return f
    return 2 * tokens * mult * a["d_model"] * a["d_ff"]


def cache_bytes(a, batch, kv, elt):
    return 2 * batch * a["n_kv_heads"] * (kv + 1) * a["head_dim"] * elt


def make_plan(plan_name, families, device, seed):
    """The list of measurements: dicts with kind (block/model/op) and parameters."""
    P = dict(PLANS[plan_name])
    if device == "cuda":
        P = dict(P)
        P["d"] = [x * CUDA_SCALE["d"] for x in P["d"] if x * CUDA_SCALE["d"] <= 8192]
        P["prefill"] = [(b, p * CUDA_SCALE["prompt"]) for b, p in P["prefill"]]
        P["decode"] = [(b * 4, kv * CUDA_SCALE["prompt"]) for b, kv in P["decode"]]
        P["model_d"] = [x * CUDA_SCALE["d"] for x in P["model_d"]]
        P["model_vocab"] = [x * CUDA_SCALE["vocab"] for x in P["model_vocab"]]
        P["model_prefill"] = [(b, p * 4) for b, p in P["model_prefill"]]
        P["model_decode"] = [(b * 4, kv * 4) for b, kv in P["model_decode"]]
        P["cap"] *= CUDA_SCALE["cap"]
        P["cache_cap"] *= CUDA_SCALE["cache"]
    elt = 4
    blocks, models, ops = [], [], []
    for fam in families:
        rnd = random.Random("%s/%s/%d" % (plan_name, fam, seed))
        moe = "experts" in FAMILIES[fam]

        def draw_arch(d=None, small=False):
            d = d or rnd.choice(P["d"])
            hd = head_dim_for(fam, d, rnd, plan_name)
            mha = FAMILIES[fam].get("mha_too") and rnd.random() < 0.5
            ex = scaled_experts(fam, rnd, small or plan_name != "full") if moe else None
            return arch_shape(fam, d, hd, mha, rnd, ex)

        def draw_work(a, flops_fn, need_cache):
            for _ in range(50):
                phase = rnd.choice(["prefill", "decode"])
                if phase == "prefill":
                    batch, prompt = rnd.choice(P["prefill"])
                    kv = 0
                else:
                    batch, kv = rnd.choice(P["decode"])
                    prompt = 0
                if flops_fn(phase, batch, prompt, kv) > P["cap"]:
                    continue
                if need_cache and phase == "decode" and \
                        cache_bytes(a, batch, kv, elt) > P["cache_cap"]:
                    continue
                return phase, batch, prompt, kv
            return None

        # attention: for windowed families half the rows on windowed layers
        for i in range(P["attention"]):
            a = draw_arch()
            w = None
            if a["window_mode"] == "all" or (a["window_mode"] == "alternate" and i % 2 == 0):
                w = window_for(fam, rnd, plan_name)
            wk = draw_work(a, lambda ph, b, p, kv: attn_flops(a, ph, b, p, kv), True)
            if wk:
                blocks.append(dict(kind="block", block="attention", a=a, window=w, work=wk))
        for _ in range(P["ffn"]):
            a = draw_arch()
            wk = draw_work(a, lambda ph, b, p, kv: ffn_flops(a, b * (p or 1), moe), False)
            if wk:
                blocks.append(dict(kind="block", block="moe" if moe else "ffn", a=a, window=None,
                                   work=wk))
        for _ in range(P["norm"]):
            a = draw_arch()
            wk = draw_work(a, lambda ph, b, p, kv: 0, False)
            blocks.append(dict(kind="block", block="norm", a=a, window=None, work=wk))
        for blk, n in (("embedding", P["embedding"]), ("lm_head", P["lm_head"])):
            for _ in range(n):
                a = draw_arch()
                vocab = rnd.choice(P["model_vocab"] + [32768] if plan_name == "full"
                                   else P["model_vocab"])
                f = (lambda ph, b, p, kv: 2 * b * (p or 1) * a["d_model"] * vocab) \
                    if blk == "lm_head" else (lambda ph, b, p, kv: 0)
                wk = draw_work(a, f, False)
                if wk:
                    blocks.append(dict(kind="block", block=blk, a=a, window=None, work=wk,
                                       vocab=vocab))
        # whole models
        for j in range(P["models"]):
            d = P["model_d"][j % len(P["model_d"])]
            a = draw_arch(d=d, small=True)
            layers = P["model_layers"][j % len(P["model_layers"])]
            vocab = P["model_vocab"][j % len(P["model_vocab"])]
            w = window_for(fam, rnd, plan_name)
            name = "%s-d%d-l%d-h%d-kv%d%s%s" % (
                fam, d, layers, a["n_heads"], a["n_kv_heads"],
                "-e%dk%d" % (a["n_experts"], a["top_k"]) if moe else "",
                "-w%d" % w if w else "")
            cfg = hf_config(a, layers, vocab, w, name)
            for (b, p) in P["model_prefill"]:
                models.append(dict(kind="model", a=a, name=name, config=cfg, layers=layers,
                                   vocab=vocab, window=w, work=("prefill", b, p, 0)))
            for (b, kv) in P["model_decode"]:
                models.append(dict(kind="model", a=a, name=name, config=cfg, layers=layers,
                                   vocab=vocab, window=w, work=("decode", b, 0, kv)))
    # level-1 ops: the torch kernels the blocks are made of
    rnd = random.Random("%s/ops/%d" % (plan_name, seed))
    n_ops = P["ops"]
    toks = [1, 4, 16, 64, 256, 1024, 4096] if plan_name != "smoke" else [1, 16]
    dms = [256, 1024, 4096] if plan_name != "smoke" else [64]
    for t in toks:
        for dm in dms:
            if t * dm <= 2 ** 24:
                ops.append(dict(kind="op", op="rmsnorm", tokens=t, d_model=dm))
    sm = [16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048] if plan_name != "smoke" \
        else [16, 32]
    for n in sm:
        ops.append(dict(kind="op", op="softmax", tokens=n))
    fixed = [(1, 1024, 1024), (1, 4096, 1024), (4, 2048, 2048), (16, 1024, 4096), (1, 2048, 512)]
    n_gemm = max(2, n_ops - len(ops))
    gemms = [] if plan_name == "smoke" else list(fixed)
    while len(gemms) < n_gemm:
        m = int(round(2 ** rnd.uniform(0, 12)))
        n = 64 * int(round(2 ** rnd.uniform(0, 7)))
        k = 64 * int(round(2 ** rnd.uniform(0, 7)))
        if plan_name == "smoke":
            m, n, k = rnd.choice([1, 8, 32]), 64, 64
        if 2 * m * n * k <= P["cap"] / 2:
            gemms.append((m, n, k))
    for m, n, k in gemms:
        ops.append(dict(kind="op", op="gemm", m=m, n=n, k=k))
    return blocks, models, ops


# ---------------------------------------------------------------------------------------------
# Energy: erg's meter through liberg (CPU) or NVML's energy counter (CUDA).
# ---------------------------------------------------------------------------------------------

class _Diag(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("where", ctypes.c_char * 256),
                ("detail", ctypes.c_char * 512)]


class _ChannelReading(ctypes.Structure):
    # erg_channel_reading, include/erg/meter.h
    _fields_ = [("id", ctypes.c_char * 64), ("domain", ctypes.c_int),
                ("device", ctypes.c_char * 64), ("grade", ctypes.c_int),
                ("state", ctypes.c_int), ("reason", ctypes.c_char * 256),
                ("flags", ctypes.c_uint), ("energy_j", ctypes.c_double),
                ("in_total", ctypes.c_int)]


class _Measurement(ctypes.Structure):
    # erg_measurement, include/erg/meter.h (ERG_METER_MAX_CHANNELS = 64); every member, or
    # erg_meter_diff writes past this buffer (it did: 264 bytes, "corrupted size vs. prev_size")
    _fields_ = [("time_s", ctypes.c_double), ("cpu_s", ctypes.c_double),
                ("n_channels", ctypes.c_size_t), ("channels", _ChannelReading * 64),
                ("total_energy_j", ctypes.c_double), ("total_grade", ctypes.c_int),
                ("n_total", ctypes.c_size_t), ("total_flags", ctypes.c_uint),
                ("total_reason", ctypes.c_char * 256)]  # ERG_METER_REASON_MAX


def find_liberg(explicit):
    cands = []
    if explicit:
        cands.append(explicit)
    if os.environ.get("ERG_LIB"):
        cands.append(os.environ["ERG_LIB"])
    here = os.path.dirname(os.path.abspath(__file__))
    # installed: <prefix>/share/erg/scripts/profile_torch.py, <prefix>/lib[/<triplet>]/liberg.so.0
    prefix = os.path.normpath(os.path.join(here, "..", "..", ".."))
    for lib in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu"),
                os.path.join("lib", "aarch64-linux-gnu")):
        cands.append(os.path.join(prefix, lib, "liberg.so.0"))
    if not explicit and not os.environ.get("ERG_LIB"):
        name = ctypes.util.find_library("erg")
        if name:
            cands.append(name)
    for c in cands:
        try:
            return ctypes.CDLL(c), c
        except OSError:
            if c == explicit or c == os.environ.get("ERG_LIB"):
                die("cannot load liberg '%s' (--erg-lib / $ERG_LIB)" % c, 3)
    return None, None


class ErgMeter:
    """Windows on erg's meter (every backend it finds; on a machine without counters, the
    utilisation estimator)."""

    def __init__(self, lib):
        self.lib = lib
        lib.erg_meter_open.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(_Diag)]
        lib.erg_meter_open.restype = ctypes.c_int
        lib.erg_meter_close.argtypes = [ctypes.c_void_p]
        lib.erg_meter_sampler_start.argtypes = [ctypes.c_void_p, ctypes.c_double]
        lib.erg_meter_sampler_start.restype = ctypes.c_int
        lib.erg_meter_sampler_stop.argtypes = [ctypes.c_void_p]
        lib.erg_meter_snapshot_new.argtypes = [ctypes.c_void_p]
        lib.erg_meter_snapshot_new.restype = ctypes.c_void_p
        lib.erg_meter_snapshot_free.argtypes = [ctypes.c_void_p]
        lib.erg_meter_snapshot_take.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.erg_meter_snapshot_take.restype = ctypes.c_int
        lib.erg_meter_diff.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.c_double, ctypes.POINTER(_Measurement)]
        lib.erg_meter_diff.restype = ctypes.c_int
        lib.erg_grade_name.argtypes = [ctypes.c_int]
        lib.erg_grade_name.restype = ctypes.c_char_p
        self.m = ctypes.c_void_p()
        diag = _Diag()
        rc = lib.erg_meter_open(None, ctypes.byref(self.m), ctypes.byref(diag))
        if rc != 0:
            die("erg_meter_open failed: %s: %s" % (diag.where.decode(), diag.detail.decode()), 3)
        if lib.erg_meter_sampler_start(self.m, 0.1) != 0:
            die("cannot start erg's meter sampler", 3)
        self.a = lib.erg_meter_snapshot_new(self.m)
        self.b = lib.erg_meter_snapshot_new(self.m)
        self.meas = _Measurement()
        self.name = "erg meter"

    def begin(self):
        self.lib.erg_meter_snapshot_take(self.m, self.a)

    def end(self):
        """(energy J or None, grade name or '')"""
        self.lib.erg_meter_snapshot_take(self.m, self.b)
        if self.lib.erg_meter_diff(self.m, self.a, self.b, 0.0, ctypes.byref(self.meas)) != 0:
            return None, ""
        e = self.meas.total_energy_j
        if not math.isfinite(e) or self.meas.n_total == 0:
            return None, ""
        return e, self.lib.erg_grade_name(self.meas.total_grade).decode()

    def close(self):
        self.lib.erg_meter_sampler_stop(self.m)
        self.lib.erg_meter_snapshot_free(self.a)
        self.lib.erg_meter_snapshot_free(self.b)
        self.lib.erg_meter_close(self.m)


class NvmlMeter:
    """NVML's GPU energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since driver load)."""

    def __init__(self, index, path=None):
        path = path or os.environ.get("ERG_NVML_LIB") or "libnvidia-ml.so.1"
        try:
            self.lib = ctypes.CDLL(path)
        except OSError:
            die("cannot load NVML (%s): no GPU energy counter" % path, 3)
        if self.lib.nvmlInit_v2() != 0:
            die("nvmlInit_v2 failed", 3)
        self.h = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index),
                                                   ctypes.byref(self.h)) != 0:
            die("nvmlDeviceGetHandleByIndex_v2(%d) failed" % index, 3)
        self.v = ctypes.c_ulonglong()
        if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.h, ctypes.byref(self.v)) != 0:
            die("nvmlDeviceGetTotalEnergyConsumption is not supported on this GPU", 3)
        self.start = 0
        self.name = "NVML total energy counter"

    def _read(self):
        if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.h, ctypes.byref(self.v)) != 0:
            return None
        return self.v.value

    def begin(self):
        self.start = self._read()

    def end(self):
        e = self._read()
        if e is None or self.start is None or e < self.start:
            return None, ""
        return (e - self.start) * 1e-3, "hw_shunt"

    def close(self):
        self.lib.nvmlShutdown()


# ---------------------------------------------------------------------------------------------
# The torch side. torch is imported in main(), after the thread environment is set.
# ---------------------------------------------------------------------------------------------

torch = None
F = None


def _randn(*shape, generator):
    """Random normal values made on the generator's device (a CPU detour would cost seconds
    per GiB of weights on a GPU run)."""
    return torch.randn(*shape, generator=generator, device=generator.device)


def _randint(low, high, shape, generator):
    return torch.randint(low, high, shape, generator=generator, device=generator.device)


def rms_norm(x, w, eps=1e-6, one_plus=False):
    # HF LlamaRMSNorm / Gemma2RMSNorm (one_plus: x * (1 + w))
    var = x.pow(2).mean(-1, keepdim=True)
    y = x * torch.rsqrt(var + eps)
    return y * (1.0 + w) if one_plus else y * w


def apply_norm(a, x, p, key):
    if a["norm"] == "layer":
        return F.layer_norm(x, (x.shape[-1],), p[key], p[key + ".b"], 1e-5)
    return rms_norm(x, p[key], one_plus=a["norm"] == "rms1p")


def rope_tables(a, positions, dev, dt):
    rd = int(a["head_dim"] * a["rotary_pct"]) // 2 * 2
    inv = 1.0 / (10000.0 ** (torch.arange(0, rd, 2, device=dev, dtype=torch.float32) / rd))
    f = positions.to(torch.float32)[:, None] * inv[None, :]
    emb = torch.cat([f, f], dim=-1)
    return emb.cos().to(dt), emb.sin().to(dt)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def apply_rope(x, cos, sin):
    rd = cos.shape[-1]
    if rd == x.shape[-1]:
        return x * cos + rotate_half(x) * sin
    xr, xp = x[..., :rd], x[..., rd:]
    return torch.cat([xr * cos + rotate_half(xr) * sin, xp], dim=-1)


def causal_mask(q_len, k_len, window, dev, dt):
    """Additive mask [q_len, k_len] for queries at the last q_len positions of k_len keys."""
    i = torch.arange(k_len - q_len, k_len, device=dev)[:, None]
    j = torch.arange(k_len, device=dev)[None, :]
    bad = j > i
    if window:
        bad = bad | (j <= i - window)
    return torch.zeros(q_len, k_len, device=dev, dtype=dt).masked_fill(bad, float("-inf"))


def attn_params(a, gen, dev, dt):
    d, h, kvh, hd = a["d_model"], a["n_heads"], a["n_kv_heads"], a["head_dim"]
    s = 1.0 / math.sqrt(d)
    p = {"q": _randn(h * hd, d, generator=gen) * s, "k": _randn(kvh * hd, d, generator=gen) * s,
         "v": _randn(kvh * hd, d, generator=gen) * s,
         "o": _randn(d, h * hd, generator=gen) / math.sqrt(h * hd)}
    if a["attn_bias"]:
        for n, w in list(p.items()):
            if n != "o" or a["bias"] or a["sinks"]:
                p[n + ".b"] = _randn(w.shape[0], generator=gen) * 0.02
    if a["qk_norm"]:
        p["qn"] = torch.ones(hd)
        p["kn"] = torch.ones(hd)
    if a["sinks"]:
        p["sinks"] = _randn(h, generator=gen)
    return {k: v.to(device=dev, dtype=dt) for k, v in p.items()}


def attention(a, p, x, cos, sin, mask, cache, window, kv_out=None):
    """One attention block: projections, RoPE, KV cache (decode), scores, softmax, context,
    output projection. x [B, S, d]. cache: None (prefill) or (k, v) [B, kvh, L, hd] (for a
    sliding-window layer the last window - 1 positions). kv_out: a list that gets (k, v) of
    every position seen, the cache a following decode step would use."""
    B, S, _ = x.shape
    h, kvh, hd = a["n_heads"], a["n_kv_heads"], a["head_dim"]
    q = F.linear(x, p["q"], p.get("q.b")).view(B, S, h, hd).transpose(1, 2)
    k = F.linear(x, p["k"], p.get("k.b")).view(B, S, kvh, hd).transpose(1, 2)
    v = F.linear(x, p["v"], p.get("v.b")).view(B, S, kvh, hd).transpose(1, 2)
    if a["qk_norm"]:
        q = rms_norm(q, p["qn"])
        k = rms_norm(k, p["kn"])
    q = apply_rope(q, cos, sin)
    k = apply_rope(k, cos, sin)
    if cache is not None:
        # HF DynamicCache: concatenate the new token's keys and values
        k = torch.cat([cache[0], k], dim=2)
        v = torch.cat([cache[1], v], dim=2)
    if kv_out is not None:
        kv_out.append((k, v))
    if kvh != h:  # HF repeat_kv
        T = k.shape[2]
        k = k[:, :, None].expand(B, kvh, h // kvh, T, hd).reshape(B, h, T, hd)
        v = v[:, :, None].expand(B, kvh, h // kvh, T, hd).reshape(B, h, T, hd)
    scale = 1.0 / math.sqrt(hd)
    s = torch.matmul(q, k.transpose(2, 3)) * scale
    if a["softcap"]:
        c = a["softcap"][0]
        s = torch.tanh(s / c) * c
    if mask is not None:
        s = s + mask
    if a["sinks"]:
        sink = p["sinks"].view(1, h, 1, 1).expand(B, h, S, 1)
        s = torch.cat([s, sink], dim=-1)
        pr = torch.softmax(s, dim=-1)[..., :-1]
    else:
        pr = torch.softmax(s, dim=-1)
    ctx = torch.matmul(pr, v).transpose(1, 2).reshape(B, S, h * hd)
    return F.linear(ctx, p["o"], p.get("o.b"))


def act_fn(a, x):
    if a["act"] == "silu":
        return F.silu(x)
    return F.gelu(x, approximate="tanh")


def ffn_params(a, gen, dev, dt, d_ff=None, bias=None):
    d = a["d_model"]
    f = d_ff or a["d_ff"]
    bias = a["bias"] if bias is None else bias
    p = {"up": _randn(f, d, generator=gen) / math.sqrt(d),
         "down": _randn(d, f, generator=gen) / math.sqrt(f)}
    if a["gated"]:
        p["gate"] = _randn(f, d, generator=gen) / math.sqrt(d)
    if bias:
        p["up.b"] = _randn(f, generator=gen) * 0.02
        p["down.b"] = _randn(d, generator=gen) * 0.02
        if a["gated"]:
            p["gate.b"] = _randn(f, generator=gen) * 0.02
    return {k: v.to(device=dev, dtype=dt) for k, v in p.items()}


def ffn(a, p, x):
    if not a["gated"]:  # phi: fc2(gelu(fc1(x)))
        return F.linear(act_fn(a, F.linear(x, p["up"], p.get("up.b"))), p["down"],
                        p.get("down.b"))
    g = F.linear(x, p["gate"], p.get("gate.b"))
    u = F.linear(x, p["up"], p.get("up.b"))
    if a["oss_glu"]:  # GptOssExperts: clamped gate and up, gate * sigmoid(1.702 gate), (up + 1)
        g = g.clamp(max=7.0)
        u = u.clamp(min=-7.0, max=7.0)
        return F.linear((u + 1) * (g * torch.sigmoid(g * 1.702)), p["down"], p.get("down.b"))
    return F.linear(act_fn(a, g) * u, p["down"], p.get("down.b"))


def moe_params(a, gen, dev, dt):
    d = a["d_model"]
    p = {"router": _randn(a["n_experts"], d, generator=gen).to(device=dev, dtype=dt)
         / math.sqrt(d), "experts": [ffn_params(a, gen, dev, dt, bias=a["oss_glu"])
                                     for _ in range(a["n_experts"])]}
    if a["oss_glu"]:
        p["router.b"] = (_randn(a["n_experts"], generator=gen) * 0.02).to(dev, dt)
    if a["n_shared"]:
        p["shared"] = ffn_params(a, gen, dev, dt, d_ff=a["d_ff_shared"])
        p["shared_gate"] = (_randn(1, d, generator=gen) / math.sqrt(d)).to(dev, dt)
    return p


def moe(a, p, x):
    """HF-style sparse MoE: router, top-k, loop over the experts that got tokens."""
    B, S, d = x.shape
    xf = x.reshape(-1, d)
    logits = F.linear(xf, p["router"], p.get("router.b"))
    k = a["top_k"]
    if a["oss_glu"]:  # gpt-oss: top-k of the logits, softmax over the k
        w, sel = torch.topk(logits, k, dim=-1)
        w = torch.softmax(w, dim=-1)
    else:
        w = torch.softmax(logits, dim=-1)
        w, sel = torch.topk(w, k, dim=-1)
        if a["renorm"]:
            w = w / w.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(xf)
    mask = F.one_hot(sel, num_classes=a["n_experts"]).permute(2, 1, 0)
    hit = torch.nonzero(mask.sum(dim=(-1, -2)) > 0).flatten().tolist()
    for e in hit:
        slot, tok = torch.where(mask[e])
        y = ffn(a, p["experts"][e], xf[tok]) * w[tok, slot, None]
        out.index_add_(0, tok, y)
    if a["n_shared"]:
        out = out + torch.sigmoid(F.linear(xf, p["shared_gate"])) * ffn(a, p["shared"], xf)
    return out.view(B, S, d)


def norm_params(a, gen, dev, dt, key="n"):
    d = a["d_model"]
    p = {key: (1.0 + 0.02 * _randn(d, generator=gen)).to(dev, dt)}
    if a["norm"] == "layer":
        p[key + ".b"] = (0.02 * _randn(d, generator=gen)).to(dev, dt)
    return p


def tensors_bytes(obj):
    if torch.is_tensor(obj):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensors_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensors_bytes(v) for v in obj)
    return 0


def clone_all(obj):
    if torch.is_tensor(obj):
        return obj.clone()
    if isinstance(obj, dict):
        return {k: clone_all(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone_all(v) for v in obj)
    return obj


def n_sets_for(footprint):
    if footprint >= ROTATE_BYTES:
        return 1
    return max(2, min(MAX_SETS, -(-ROTATE_BYTES // max(1, footprint))))


def build_block(item, dev, dt, gen):
    """(fn(set), first set, extra sets factory) for a block row."""
    a = item["a"]
    phase, B, P, L = item["work"]
    blk = item["block"]
    S = P if phase == "prefill" else 1
    d = a["d_model"]
    window = item.get("window")
    x = _randn(B, S, d, generator=gen).to(dev, dt)
    if blk == "attention":
        p = attn_params(a, gen, dev, dt)
        if phase == "prefill":
            pos = torch.arange(S, device=dev)
            cos, sin = rope_tables(a, pos, dev, dt)
            mask = causal_mask(S, S, window, dev, dt)
            st = dict(p=p, x=x, cache=None)
        else:
            Lc = min(L, window - 1) if window else L
            pos = torch.tensor([L], device=dev)
            cos, sin = rope_tables(a, pos, dev, dt)
            mask = None
            kvh, hd = a["n_kv_heads"], a["head_dim"]
            cache = (_randn(B, kvh, Lc, hd, generator=gen).to(dev, dt),
                     _randn(B, kvh, Lc, hd, generator=gen).to(dev, dt))
            st = dict(p=p, x=x, cache=cache)

        def fn(s):
            return attention(a, s["p"], s["x"], cos, sin, mask, s["cache"], window)
    elif blk in ("ffn", "moe"):
        p = moe_params(a, gen, dev, dt) if blk == "moe" else ffn_params(a, gen, dev, dt)
        st = dict(p=p, x=x)

        def fn(s):
            return moe(a, s["p"], s["x"]) if blk == "moe" else ffn(a, s["p"], s["x"])
    elif blk == "norm":
        st = dict(p=norm_params(a, gen, dev, dt), x=x)

        def fn(s):
            return apply_norm(a, s["x"], s["p"], "n")
    elif blk == "embedding":
        V = item["vocab"]
        st = dict(w=_randn(V, d, generator=gen).to(dev, dt),
                  ids=_randint(0, V, (B, S), generator=gen).to(dev))
        scale = math.sqrt(d) if a["emb_scale"] else None

        def fn(s):
            e = F.embedding(s["ids"], s["w"])
            return e * scale if scale else e
    elif blk == "lm_head":
        V = item["vocab"]
        st = dict(w=(_randn(V, d, generator=gen) / math.sqrt(d)).to(dev, dt), x=x,
                  b=(torch.zeros(V).to(dev, dt) if a["bias"] else None))
        cap = a["softcap"][1] if a["softcap"] else None

        def fn(s):
            y = F.linear(s["x"], s["w"], s["b"])
            return torch.tanh(y / cap) * cap if cap else y
    else:
        raise ValueError(blk)
    return fn, st


def model_params(a, layers, vocab, gen, dev, dt):
    d = a["d_model"]
    moe_ = a["n_experts"] > 0
    P = {"emb": _randn(vocab, d, generator=gen).to(dev, dt),
         "head": (_randn(vocab, d, generator=gen) / math.sqrt(d)).to(dev, dt),
         "layers": []}
    P.update(norm_params(a, gen, dev, dt, "final"))
    if a["bias"]:
        P["head.b"] = torch.zeros(vocab).to(dev, dt)
    for _ in range(layers):
        lp = {"attn": attn_params(a, gen, dev, dt),
              "mlp": moe_params(a, gen, dev, dt) if moe_ else ffn_params(a, gen, dev, dt)}
        lp.update(norm_params(a, gen, dev, dt, "in"))
        if not a["parallel"]:
            lp.update(norm_params(a, gen, dev, dt, "post"))
        if a["post_norms"]:
            lp.update(norm_params(a, gen, dev, dt, "pa"))
            lp.update(norm_params(a, gen, dev, dt, "pf"))
        P["layers"].append(lp)
    return P


def model_forward(a, P, ids, caches, pos0, windows, kv_out=None):
    """A decoder forward: embedding, layers, final norm, LM head over every position (HF's
    forward without logits_to_keep). caches: per layer (k, v) or None (prefill)."""
    B, S = ids.shape
    dev, dt = P["emb"].device, P["emb"].dtype
    h = F.embedding(ids, P["emb"])
    if a["emb_scale"]:
        h = h * math.sqrt(a["d_model"])
    pos = torch.arange(pos0, pos0 + S, device=dev)
    cos, sin = rope_tables(a, pos, dev, dt)
    masks = {}
    if S > 1:
        for w in set(windows):
            masks[w] = causal_mask(S, S, w, dev, dt)
    moe_ = a["n_experts"] > 0
    for i, lp in enumerate(P["layers"]):
        w = windows[i]
        cache = caches[i] if caches else None
        r = apply_norm(a, h, lp, "in")
        at = attention(a, lp["attn"], r, cos, sin, masks.get(w), cache, w, kv_out)
        if a["parallel"]:  # phi: x + attn(ln(x)) + mlp(ln(x))
            h = h + at + ffn(a, lp["mlp"], r)
            continue
        if a["post_norms"]:
            at = apply_norm(a, at, lp, "pa")
        h = h + at
        r = apply_norm(a, h, lp, "post")
        f = moe(a, lp["mlp"], r) if moe_ else ffn(a, lp["mlp"], r)
        if a["post_norms"]:
            f = apply_norm(a, f, lp, "pf")
        h = h + f
    h = apply_norm(a, h, P, "final")
    y = F.linear(h, P["head"], P.get("head.b"))
    if a["softcap"]:
        c = a["softcap"][1]
        y = torch.tanh(y / c) * c
    return y


def build_model(item, dev, dt, gen):
    a = item["a"]
    phase, B, Pn, L = item["work"]
    layers, vocab = item["layers"], item["vocab"]
    windows = layer_windows(a, layers, item["window"])
    P = model_params(a, layers, vocab, gen, dev, dt)
    if phase == "prefill":
        ids = _randint(0, vocab, (B, Pn), generator=gen).to(dev)
        caches = None
        pos0 = 0
    else:
        ids = _randint(0, vocab, (B, 1), generator=gen).to(dev)
        kvh, hd = a["n_kv_heads"], a["head_dim"]
        caches = []
        for w in windows:
            Lc = min(L, w - 1) if w else L
            caches.append((_randn(B, kvh, Lc, hd, generator=gen).to(dev, dt),
                           _randn(B, kvh, Lc, hd, generator=gen).to(dev, dt)))
        pos0 = L
    st = dict(P=P, ids=ids, caches=caches)

    def fn(s):
        return model_forward(a, s["P"], s["ids"], s["caches"], pos0, windows)
    return fn, st


def build_op(item, dev, dt, gen):
    op = item["op"]
    if op == "gemm":
        m, n, k = item["m"], item["n"], item["k"]
        st = dict(x=_randn(m, k, generator=gen).to(dev, dt),
                  w=(_randn(n, k, generator=gen) / math.sqrt(k)).to(dev, dt))

        def fn(s):
            return F.linear(s["x"], s["w"])
    elif op == "rmsnorm":
        st = dict(x=_randn(item["tokens"], item["d_model"], generator=gen).to(dev, dt),
                  w=torch.ones(item["d_model"]).to(dev, dt))

        def fn(s):
            return rms_norm(s["x"], s["w"])
    else:  # causal softmax over one N x N head, as attention's prefill computes it
        n = item["tokens"]
        st = dict(x=_randn(n, n, generator=gen).to(dev, dt))
        mask = causal_mask(n, n, None, dev, dt)

        def fn(s):
            return torch.softmax(s["x"] + mask, dim=-1)
    return fn, st


# ---------------------------------------------------------------------------------------------
# The protocol.
# ---------------------------------------------------------------------------------------------

def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def robust_sd(v):
    if len(v) < 2:
        return float("nan")
    m = median(v)
    return 1.4826 * median([abs(x - m) for x in v])


class Runner:
    def __init__(self, args, meter):
        self.args = args
        self.meter = meter
        self.cuda = args.device == "cuda"
        if args.clock == "thread":
            self.clock = time.thread_time
        else:
            self.clock = time.perf_counter

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def measure(self, fn, sets):
        """Run the protocol; returns (reps, time_s, time_sd_s, energy_j, energy_sd_j, grade)."""
        args = self.args
        with torch.inference_mode():
            t1 = None
            for s in sets:  # one warm-up per set
                c0 = self.clock()
                fn(s)
                self.sync()
                t1 = self.clock() - c0
            b = max(1, int(math.ceil(args.min_window / max(t1, 1e-7))))
            per_t, per_e, grades = [], [], set()
            total = 0.0
            reps = 0
            r = 0
            wall_start = time.perf_counter()
            max_wall = max(30.0, 40.0 * args.min_time)
            while True:
                if self.meter:
                    self.meter.begin()
                w0 = time.perf_counter()
                c0 = self.clock()
                for _ in range(b):
                    fn(sets[r % len(sets)])
                    r += 1
                self.sync()
                c1 = self.clock()
                w1 = time.perf_counter()
                e, g = self.meter.end() if self.meter else (None, "")
                dt = c1 - c0
                if dt < 0.5 * args.min_window and b < 1 << 30:
                    b = max(b * 2, int(math.ceil(b * args.min_window / max(dt, 1e-9))))
                    continue  # too short for the meter: discard, grow the batch
                per_t.append(dt / b)
                total += dt
                reps += b
                if e is not None and w1 > w0:
                    # energy on the clock's time base (erg profile ops): window power x clock time
                    per_e.append(e * (dt / (w1 - w0)) / b)
                    grades.add(g)
                else:
                    per_e.append(None)
                enough = total >= args.min_time and len(per_t) >= args.min_batches
                long_exec = per_t[0] * args.min_batches > 4 * args.min_time and len(per_t) >= 3
                if enough or long_exec or time.perf_counter() - wall_start > max_wall:
                    break
        # --stat min: the least-disturbed batch. Other processes only ever add to a batch's
        # time (cache and memory-bandwidth contention, frequency), so on a shared machine the
        # minimum repeats between runs about twice as well as the median (measured here: median
        # run-to-run CV 4.2 % vs 7.8 % of the thread's CPU time, docs/profile.md).
        t = min(per_t) if args.stat == "min" else median(per_t)
        tsd = robust_sd(per_t)
        got = [x for x in per_e if x is not None]
        if got and 2 * len(got) >= len(per_e):
            # a window the meter gave no figure for (below its resolution, a counter glitch) is
            # left out; with fewer than half the windows measured there is no energy figure.
            # energy_j = the median over batches of the batch's power (energy / time on the
            # clock's base) x time_s, so that energy and time describe the same execution
            powers = [e / x for e, x in zip(per_e, per_t) if e is not None and x > 0]
            en = median(powers) * t if args.stat == "min" else median(got)
            esd = robust_sd(got)
            order = ["hw_shunt", "model_based", "estimator"]
            grade = max(grades, key=lambda x: order.index(x) if x in order else 3)
        else:
            en, esd, grade = None, None, ""
        return reps, t, tsd, en, esd, grade


def fmt(v):
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        return "%.9g" % v
    return str(v)


class CsvOut:
    """Rows go to DIR/.NAME.partial, flushed per row; renamed onto NAME at the end."""

    def __init__(self, dir_, name, columns):
        self.final = os.path.join(dir_, name)
        if os.path.lexists(self.final) and not os.path.isfile(self.final) or \
                os.path.islink(self.final):
            die("%s: exists and is not a regular file; not replaced" % self.final)
        self.tmp = os.path.join(dir_, "." + name + ".partial")
        self.f = open(self.tmp, "w")
        self.columns = columns
        self.f.write(",".join(columns) + "\n")
        self.n = 0

    def row(self, d):
        self.f.write(",".join(fmt(d.get(c)) for c in self.columns) + "\n")
        self.f.flush()
        self.n += 1

    def commit(self):
        self.f.close()
        os.replace(self.tmp, self.final)

    def abandon(self):
        self.f.close()
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


def dtype_name(args):
    return args.dtype


def torch_dtype(args):
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]


def make_sets(build, item, dev, dt, seed):
    gen = torch.Generator(device=dev).manual_seed(seed)
    fn, st = build(item, dev, dt, gen)
    n = n_sets_for(tensors_bytes(st))
    sets = [st] + [clone_all(st) for _ in range(n - 1)]
    return fn, sets


def blas_name():
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "blas"
    for key, name in (("openblas", "openblas"), ("mkl", "mkl"), ("blis", "blis")):
        if key in maps:
            return name
    return "blas"


def run(args):
    global torch, F
    try:
        import torch as _torch
        import torch.nn.functional as _F
    except ImportError as e:
        die("cannot import torch (%s); Debian: apt-get install python3-torch" % e, 3)
    torch, F = _torch, _F
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    dev = torch.device("cpu")
    if args.device == "cuda":
        if not torch.cuda.is_available():
            die("--device cuda: torch sees no CUDA device", 3)
        dev = torch.device("cuda", args.gpu)
    dt = torch_dtype(args)
    families = args.families.split(",") if args.families else FAMILY_ORDER
    for f in families:
        if f not in FAMILIES:
            die("--families: unknown family '%s' (known: %s)" % (f, ", ".join(FAMILY_ORDER)))
    blocks, models, ops = make_plan(args.plan, families, args.device, args.seed)
    what = args.what
    todo = []
    if what in ("blocks", "all"):
        todo += blocks
    if what in ("models", "all"):
        todo += models
    if what in ("ops", "all"):
        todo += ops
    if args.every > 1:
        todo = todo[args.every_offset::args.every]
    if args.limit:
        todo = todo[:args.limit]
    if args.list:
        for it in todo:
            print(describe(it))
        return 0
    os.makedirs(args.output, exist_ok=True)
    meter = None
    energy_src = "none"
    if not args.no_energy:
        if args.device == "cuda":
            meter = NvmlMeter(args.gpu)
            energy_src = meter.name
        else:
            lib, path = find_liberg(args.erg_lib)
            if lib is None:
                sys.stderr.write("profile_torch: liberg not found (--erg-lib, $ERG_LIB): "
                                 "energy columns stay empty\n")
            else:
                meter = ErgMeter(lib)
                energy_src = "erg meter (%s)" % path
    runner = Runner(args, meter)
    outs = {}
    kinds = {"block": ("blocks.csv", BLOCK_COLUMNS), "model": ("models.csv", MODEL_COLUMNS),
             "op": ("ops.csv", OPS_COLUMNS)}
    for it in todo:
        if it["kind"] not in outs:
            outs[it["kind"]] = CsvOut(args.output, *kinds[it["kind"]])
    if "model" in outs:
        os.makedirs(os.path.join(args.output, "configs"), exist_ok=True)
    ver = torch.__version__.split("+")[0]
    blas = blas_name() if args.device == "cpu" else "cublas"
    thr = args.threads if args.device == "cpu" else ""
    t_start = time.perf_counter()
    try:
        for i, it in enumerate(todo):
            t0 = time.perf_counter()
            seed = item_seed(args.seed, it)
            if it["kind"] == "block":
                fn, sets = make_sets(build_block, it, dev, dt, seed)
            elif it["kind"] == "model":
                fn, sets = make_sets(build_model, it, dev, dt, seed)
                path = os.path.join(args.output, "configs", it["name"] + ".json")
                write_json(path, it["config"])
            else:
                fn, sets = make_sets(build_op, it, dev, dt, seed)
            reps, t, tsd, en, esd, grade = runner.measure(fn, sets)
            row = dict(reps=reps, time_s=t, time_sd_s=tsd, energy_j=en, energy_sd_j=esd,
                       grade=grade, dtype=dtype_name(args), threads=thr)
            if it["kind"] in ("block", "model"):
                phase, B, P, L = it["work"]
                row.update(arch=it["a"]["arch"], phase=phase, batch=B,
                           prompt=P if phase == "prefill" else "",
                           kv=L if phase == "decode" else 0,
                           tokens=B * P if phase == "prefill" else B)
            if it["kind"] == "block":
                row.update(block_fields(it))
            elif it["kind"] == "model":
                row["config"] = "configs/%s.json" % it["name"]
            else:
                row.update(op_fields(it, ver, blas, args))
            outs[it["kind"]].row(row)
            del sets, fn
            if not args.quiet:
                sys.stderr.write("[%d/%d] %-70s %.4g s (sd %.2g) %s J  %.1fs\n" % (
                    i + 1, len(todo), describe(it), t, tsd if math.isfinite(tsd) else 0,
                    fmt(en) or "-", time.perf_counter() - t0))
    except BaseException:
        for o in outs.values():
            o.abandon()
        raise
    finally:
        if meter:
            meter.close()
    for o in outs.values():
        o.commit()
    if not args.quiet:
        sys.stderr.write("profile_torch: %s rows in %.0f s (clock %s, %d thread(s), energy: %s)\n"
                         % (", ".join("%d %s" % (o.n, os.path.basename(o.final))
                                      for o in outs.values()),
                            time.perf_counter() - t_start, args.clock, args.threads, energy_src))
    return 0


def write_json(path, obj):
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        die("%s: exists and is not a regular file; not replaced" % path)
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def block_fields(it):
    a = it["a"]
    blk = it["block"]
    r = dict(block=blk, d_model=a["d_model"])
    if blk == "attention":
        r.update(n_heads=a["n_heads"], n_kv_heads=a["n_kv_heads"], head_dim=a["head_dim"],
                 window=it.get("window") or "")
    elif blk in ("ffn", "moe"):
        r.update(d_ff=a["d_ff"], ffn_act=a["act"], gated=a["gated"])
        if blk == "moe":
            r.update(n_experts=a["n_experts"], top_k=a["top_k"], n_shared=a["n_shared"],
                     d_ff_shared=a["d_ff_shared"] or "")
    elif blk in ("embedding", "lm_head"):
        r["vocab"] = it["vocab"]
    return r


def op_fields(it, ver, blas, args):
    t = "t%d" % args.threads if args.device == "cpu" else args.device
    op = it["op"]
    if op == "gemm":
        return dict(op="gemm", kappa="torch-%s-linear-%s-%s" % (ver, blas, t), m=it["m"],
                    n=it["n"], k=it["k"])
    if op == "rmsnorm":
        return dict(op="rmsnorm", kappa="torch-%s-rmsnorm-%s" % (ver, t), tokens=it["tokens"],
                    d_model=it["d_model"])
    return dict(op="softmax", kappa="torch-%s-softmax-causal-%s" % (ver, t), tokens=it["tokens"])


def item_seed(seed, it):
    """The seed of a configuration's weights and inputs: it follows from the configuration, not
    from its place in the run, so a subset (--families, --every) measures the same tensors (and
    an MoE block the same routing) as the whole plan."""
    return seed * 1000003 + zlib.crc32(describe(it).encode())


def describe(it):
    if it["kind"] == "op":
        return "op %s %s" % (it["op"], " ".join("%s=%s" % (k, it[k]) for k in
                                                ("m", "n", "k", "tokens", "d_model") if k in it))
    phase, B, P, L = it["work"]
    wk = "%s b=%d %s" % (phase, B, "p=%d" % P if phase == "prefill" else "kv=%d" % L)
    a = it["a"]
    if it["kind"] == "model":
        return "model %s %s" % (it["name"], wk)
    extra = ""
    if it["block"] == "attention":
        extra = "h=%d/%d hd=%d%s" % (a["n_heads"], a["n_kv_heads"], a["head_dim"],
                                     " w=%d" % it["window"] if it.get("window") else "")
    elif it["block"] in ("ffn", "moe"):
        extra = "ff=%d%s" % (a["d_ff"], " e=%d/%d" % (a["n_experts"], a["top_k"])
                             if it["block"] == "moe" else "")
    elif "vocab" in it:
        extra = "V=%d" % it["vocab"]
    return "%s %s d=%d %s %s" % (a["arch"], it["block"], a["d_model"], extra, wk)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="profile_torch.py",
        description="Profile PyTorch LLM blocks, whole models and level-1 ops into blocks.csv, "
                    "models.csv and ops.csv (erg, HYMELL levels 2/3; docs/predict.md).")
    ap.add_argument("what", choices=["blocks", "models", "ops", "all"])
    ap.add_argument("-o", "--output", required=True, help="output folder")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index (default 0)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch (and BLAS/OpenMP) threads on the CPU (default 1)")
    ap.add_argument("--clock", choices=["thread", "monotonic"], default=None,
                    help="CPU default: thread CPU time with --threads 1, else monotonic")
    ap.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default=None,
                    help="default fp32 on the CPU, bf16 on CUDA")
    ap.add_argument("--plan", choices=sorted(PLANS), default="full")
    ap.add_argument("--families", default=None,
                    help="comma-separated model_types (default: all %d)" % len(FAMILY_ORDER))
    ap.add_argument("--limit", type=int, default=0, help="measure only the first N items")
    ap.add_argument("--every", type=int, default=1,
                    help="measure every N-th item of the plan (a sample, e.g. to re-measure "
                         "and find the noise floor)")
    ap.add_argument("--every-offset", type=int, default=0,
                    help="with --every N: start at this item (0..N-1)")
    ap.add_argument("--min-time", type=float, default=None,
                    help="measured time per configuration, s (default 0.3 CPU, 0.2 CUDA; HYMELL "
                    "used 10)")
    ap.add_argument("--min-batches", type=int, default=None, help="default 8 CPU, 3 CUDA")
    ap.add_argument("--stat", choices=["min", "median"], default=None,
                    help="time_s of a configuration: the minimum (CPU default) or the median "
                         "(CUDA default) over batches of the per-execution time")
    ap.add_argument("--min-window", type=float, default=None,
                    help="shortest batch, s (default 0.05 CPU: five of the estimator's 10 ms "
                         "jiffies; 0.1 CUDA: NVML's counter updates every 20-100 ms)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--erg-lib", default=None, help="liberg.so to read erg's meter through")
    ap.add_argument("--no-energy", action="store_true", help="leave the energy columns empty")
    ap.add_argument("--list", action="store_true", help="print the plan, measure nothing")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.threads > 1024:
        ap.error("--threads must be in 1..1024")
    if args.limit < 0:
        ap.error("--limit must not be negative")
    if args.every < 1 or not 0 <= args.every_offset < args.every:
        ap.error("--every must be at least 1 and --every-offset in 0..N-1")
    if args.min_batches is not None and args.min_batches < 1:
        ap.error("--min-batches must be at least 1")
    cuda = args.device == "cuda"
    if args.clock is None:
        args.clock = "thread" if (not cuda and args.threads == 1) else "monotonic"
    if args.clock == "thread" and (cuda or args.threads != 1):
        ap.error("--clock thread needs --device cpu and --threads 1 (other threads' work is "
                 "not on the calling thread's clock)")
    if args.dtype is None:
        args.dtype = "bf16" if cuda else "fp32"
    if args.min_time is None:
        args.min_time = 0.2 if cuda else 0.3
    if args.min_batches is None:
        args.min_batches = 3 if cuda else 8
    if args.stat is None:
        args.stat = "median" if cuda else "min"
    if args.min_window is None:
        args.min_window = 0.1 if cuda else 0.05
    if not (args.min_time >= 0 and args.min_window > 0):
        ap.error("--min-time must be >= 0 and --min-window > 0")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        die("%s: not a folder" % args.output)
    # thread pools are sized when the libraries load: before torch is imported
    n = str(args.threads)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = n
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
