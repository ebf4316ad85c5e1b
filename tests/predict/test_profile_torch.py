#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tests of src/predict/profile_torch.py (run by test_profile_torch.sh, which skips without
torch). Nothing here depends on the host's speed: times are only checked to be positive."""

import csv
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get("ERG_TEST_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "src", "predict", "profile_torch.py")
HF = os.path.join(SRC, "..", "shared", "data", "hf-configs")

spec = importlib.util.spec_from_file_location("profile_torch", SCRIPT)
pt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pt)
import torch  # noqa: E402

pt.torch = torch
pt.F = torch.nn.functional
torch.set_num_threads(1)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def close(a, b, tol=2e-4):
    return torch.allclose(a, b, rtol=tol, atol=tol)


# --- the statistics of the protocol, hand-computed ------------------------------------------
check(pt.median([4, 1, 3, 2]) == 2.5, "median of 1..4 is 2.5")
check(pt.median([5, 1, 3]) == 3, "median of 1,3,5 is 3")
# |x - 3| = 2, 1, 0, 1, 97 -> MAD 1 -> 1.4826; one interrupted batch does not dominate
check(abs(pt.robust_sd([1, 2, 3, 4, 100]) - 1.4826) < 1e-12, "robust sd 1.4826 x MAD")
check(math.isnan(pt.robust_sd([1.0])), "sd of one batch is undefined")
# input sets: footprint 1 MiB -> 8 (cap); 20 MiB -> ceil(64/20) = 4; 64 MiB and more -> 1
check(pt.n_sets_for(1 << 20) == 8, "1 MiB rotates 8 sets")
check(pt.n_sets_for(20 << 20) == 4, "20 MiB rotates 4 sets")
check(pt.n_sets_for(40 << 20) == 2, "40 MiB rotates 2 sets")
check(pt.n_sets_for(64 << 20) == 1, "64 MiB is one set")

# --- the plans: valid configurations covering dense/MoE, MHA/GQA, windows ---------------------
for plan in ("full", "small", "smoke"):
    blocks, models, ops = pt.make_plan(plan, pt.FAMILY_ORDER, "cpu", 42)
    P = pt.PLANS[plan]
    archs = {it["a"]["arch"] for it in blocks + models}
    check(archs == set(pt.FAMILY_ORDER), "%s: every family present" % plan)
    for it in blocks + models:
        a = it["a"]
        check(a["n_heads"] % a["n_kv_heads"] == 0, "%s: kv heads divide heads" % pt.describe(it))
        check(a["top_k"] <= a["n_experts"], "%s: top-k <= experts" % pt.describe(it))
        phase, B, Pn, L = it["work"]
        check(B >= 1 and (Pn >= 1 if phase == "prefill" else L >= 1), "work sizes positive")
        if it["kind"] == "block" and it["block"] == "attention":
            check(pt.attn_flops(a, phase, B, Pn, L) <= P["cap"], "attention within the cap")
    kinds = {(it["block"], it["a"]["n_kv_heads"] < it["a"]["n_heads"]) for it in blocks
             if it["block"] == "attention"}
    check(("attention", True) in kinds and ("attention", False) in kinds,
          "%s: MHA and GQA attention" % plan)
    check(any(it["block"] == "moe" for it in blocks) and any(it["block"] == "ffn"
                                                             for it in blocks),
          "%s: dense and MoE FFN blocks" % plan)
    check(any(it.get("window") for it in blocks), "%s: sliding-window attention" % plan)
    check({it["work"][0] for it in blocks} == {"prefill", "decode"}, "%s: both phases" % plan)
    check({it["work"][0] for it in models} == {"prefill", "decode"}, "%s: models both phases"
          % plan)
    check(any(m["a"]["n_experts"] for m in models) and any(not m["a"]["n_experts"]
                                                          for m in models),
          "%s: dense and MoE models" % plan)
    check({o["op"] for o in ops} == {"gemm", "rmsnorm", "softmax"}, "%s: level-1 ops" % plan)
    if plan == "full":
        n = len(blocks) + len(models) + len(ops)
        check(900 <= n <= 1300, "full plan: on the order of 1,000 configurations (%d)" % n)
    # the same seed gives the same plan
    again = pt.make_plan(plan, pt.FAMILY_ORDER, "cpu", 42)
    check([pt.describe(x) for x in again[0]] == [pt.describe(x) for x in blocks],
          "%s: the plan is reproducible" % plan)

# --- generated HF configs: the family's own fields, consistent sizes ------------------------
blocks, models, ops = pt.make_plan("full", pt.FAMILY_ORDER, "cpu", 42)
for m in models:
    c, a = m["config"], m["a"]
    d = c["hidden_size"]
    check(c["model_type"] == a["arch"], "config model_type")
    h = c["num_attention_heads"]
    hd = c.get("head_dim", c.get("kv_channels", d // h))
    check(hd == a["head_dim"], "%s: head_dim" % m["name"])
    kvh = c.get("num_key_value_heads", h)
    check(h % kvh == 0 and kvh == a["n_kv_heads"], "%s: kv heads" % m["name"])
    if a["arch"] == "qwen":  # Qwen v1: intermediate_size is twice the FFN width
        check(c["intermediate_size"] == 2 * a["d_ff"], "qwen intermediate_size = 2 x d_ff")
    elif a["n_experts"]:
        ne = c.get("num_experts", c.get("num_local_experts"))
        check(ne == a["n_experts"] and c["num_experts_per_tok"] == a["top_k"], "experts")
        if a["arch"] in ("qwen2_moe", "qwen3_moe"):
            check(c["moe_intermediate_size"] == a["d_ff"], "moe_intermediate_size")
        if a["arch"] == "qwen2_moe":
            check(c["shared_expert_intermediate_size"] == a["d_ff_shared"] > 0, "shared")
    else:
        check(c["intermediate_size"] == a["d_ff"], "%s: intermediate_size" % m["name"])
    if a["arch"] == "gpt_oss":
        check(c["layer_types"][0] == "sliding_attention" and
              len(c["layer_types"]) == c["num_hidden_layers"], "gpt-oss layer_types")
    json.dumps(c)
# the real configs use the same field names (shared data; that part is skipped without it)
if os.path.isdir(HF):
    real = {}
    for f in os.listdir(HF):
        with open(os.path.join(HF, f)) as fh:
            j = json.load(fh)
        real.setdefault(j["model_type"], set()).update(j)
    for m in models:
        extra = set(m["config"]) - real[m["a"]["arch"]] - {"erg_profile", "_name_or_path",
                                                            "tie_word_embeddings", "head_dim",
                                                            "torch_dtype", "rope_theta"}
        check(not extra, "%s: fields the family's configs do not have: %s" % (m["name"], extra))
else:
    print("note: %s absent, the field-name check is skipped" % HF)

# --- the blocks compute what they claim --------------------------------------------------------
dev, dt = torch.device("cpu"), torch.float64


def arch(fam, d=64, hd=16, mha=False, experts=None):
    return pt.arch_shape(fam, d, hd, mha, None, experts)


# decode with a KV cache reproduces the last position of prefill (RoPE positions, GQA repeat,
# window, sinks, softcap, qk-norm, caches), for every family's whole model
with torch.inference_mode():
    for fam in pt.FAMILY_ORDER:
        moe_ = "experts" in pt.FAMILIES[fam]
        hd = 16
        a = arch(fam, 64, hd, False, (4, 2) if moe_ else None)
        layers, vocab, P = 2, 50, 9
        w = 4 if a["window_mode"] else None
        windows = pt.layer_windows(a, layers, w)
        gen = torch.Generator().manual_seed(7)
        params = pt.model_params(a, layers, vocab, gen, dev, dt)
        ids = torch.randint(0, vocab, (2, P + 1), generator=gen)
        full = pt.model_forward(a, params, ids, None, 0, windows)
        kv = []
        pt.model_forward(a, params, ids[:, :P], None, 0, windows, kv)
        caches = [(k[:, :, -(win - 1):], v[:, :, -(win - 1):]) if win else (k, v)
                  for (k, v), win in zip(kv, windows)]
        step = pt.model_forward(a, params, ids[:, P:], caches, P, windows)
        check(step.shape == (2, 1, vocab), "%s: decode logits shape" % fam)
        check(close(step[:, 0], full[:, P], 1e-8), "%s: decode == last prefill position" % fam)
        # the window matters: a global-attention decode over the whole cache differs
        if w:
            wide = [(k, v) for (k, v) in kv]
            other = pt.model_forward(a, params, ids[:, P:], wide, P, [None] * layers)
            check(not close(other[:, 0], full[:, P], 1e-6), "%s: the window binds" % fam)

    # MoE: with top_k = n_experts and renormalised weights, the sparse loop equals the dense
    # softmax-weighted sum of every expert
    a = arch("mixtral", 32, 16, False, (4, 4))
    gen = torch.Generator().manual_seed(3)
    p = pt.moe_params(a, gen, dev, dt)
    x = torch.randn(2, 5, 32, generator=gen, dtype=dt)
    y = pt.moe(a, p, x)
    xf = x.reshape(-1, 32)
    wts = torch.softmax(xf @ p["router"].T, dim=-1)
    ref = sum(wts[:, e:e + 1] * pt.ffn(a, p["experts"][e], xf) for e in range(4))
    check(close(y.reshape(-1, 32), ref, 1e-10), "MoE top-all equals the dense mixture")
    # top-1 of 4: each token's output is exactly its argmax expert's FFN (weight 1 renormalised)
    a1 = dict(a, top_k=1)
    y1 = pt.moe(a1, p, x).reshape(-1, 32)
    best = wts.argmax(dim=-1)
    ref1 = torch.stack([pt.ffn(a, p["experts"][int(e)], xf[i:i + 1])[0]
                        for i, e in enumerate(best)])
    check(close(y1, ref1, 1e-10), "MoE top-1 routes each token to its argmax expert")

    # RMSNorm: x / sqrt(mean(x^2) + eps) * w on a hand case: x = (3, 4), mean 12.5
    r = pt.rms_norm(torch.tensor([[3.0, 4.0]], dtype=dt), torch.tensor([1.0, 2.0], dtype=dt),
                    eps=0.0)
    check(close(r, torch.tensor([[3 / math.sqrt(12.5), 8 / math.sqrt(12.5)]], dtype=dt), 1e-12),
          "RMSNorm hand case")
    # causal mask with window 2 over 3 keys: row 2 sees keys 1, 2 only
    m = pt.causal_mask(3, 3, 2, dev, dt)
    check(torch.isinf(m[2, 0]) and m[2, 1] == 0 and m[2, 2] == 0 and torch.isinf(m[0, 1]),
          "window-2 causal mask")

# --- NVML's energy counter (--device cuda) read through the fake NVML (tests/fakes) ---------
fake = os.environ.get("ERG_TEST_FAKE_NVML")
if fake:
    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "nvml")
        os.environ["FAKE_NVML_FILE"] = state

        def gpu(mj, rc=0):
            with open(state, "w") as f:
                f.write("1 0\n%d 300000 %d 0 0 40\n" % (mj, rc))
        gpu(1000)
        nv = pt.NvmlMeter(0, fake)
        nv.begin()
        gpu(3500)  # the counter advanced by 2500 mJ inside the window
        e, g = nv.end()
        check(abs(e - 2.5) < 1e-12 and g == "hw_shunt", "NVML window: 2.5 J, hw_shunt (%s)" % e)
        nv.begin()
        gpu(3000)  # backwards: no figure, never a negative one
        check(nv.end() == (None, ""), "NVML counter going backwards gives no figure")
        nv.begin()
        gpu(3000, rc=3)  # NVML_ERROR_NOT_SUPPORTED at the end of the window
        check(nv.end() == (None, ""), "NVML read error gives no figure")
        nv.close()
        gpu(0, rc=3)
        try:
            pt.NvmlMeter(0, fake)
            check(False, "a GPU without the energy counter is refused")
        except SystemExit as ex:
            check(ex.code == 3, "no energy counter: exit 3")
        del os.environ["FAKE_NVML_FILE"]
else:
    print("note: no fake NVML (sanitizer build): the NVML reader is not tested")

# --- --every samples the plan; a configuration's seed does not depend on the sample ------------
full = subprocess.run([sys.executable, SCRIPT, "all", "-o", "unused", "--list"],
                      capture_output=True, text=True).stdout.splitlines()
third = subprocess.run([sys.executable, SCRIPT, "all", "-o", "unused", "--list", "--every", "3",
                        "--every-offset", "1"], capture_output=True, text=True).stdout.splitlines()
check(len(full) > 1000 and third == full[1::3], "--every 3 --every-offset 1 lists items 1, 4, 7...")
p = subprocess.run([sys.executable, SCRIPT, "all", "-o", "unused", "--list", "--every", "3",
                    "--every-offset", "3"], capture_output=True, text=True)
check(p.returncode == 2 and "--every-offset" in p.stderr, "an offset outside 0..N-1 refused")
bl, _, _ = pt.make_plan("full", pt.FAMILY_ORDER, "cpu", 42)
bq, _, _ = pt.make_plan("full", ["qwen3"], "cpu", 42)
q0 = [it for it in bl if it["a"]["arch"] == "qwen3"][0]
check(pt.describe(q0) == pt.describe(bq[0]) and pt.item_seed(42, q0) == pt.item_seed(42, bq[0])
      and pt.item_seed(42, q0) != pt.item_seed(42, bl[0]), "a configuration's seed is its own")

# --- a smoke run writes the contract's files --------------------------------------------------
env = dict(os.environ)
lib = os.environ.get("ERG_TEST_LIBERG")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "out")
    cmd = [sys.executable, SCRIPT, "all", "-o", out, "--plan", "smoke", "--families",
           "llama,qwen3_moe,gemma2", "--min-time", "0.04", "--min-window", "0.02",
           "--min-batches", "2", "--quiet"]
    if lib:
        cmd += ["--erg-lib", lib]
    else:
        cmd += ["--no-energy"]
    rc = subprocess.run(cmd, env=env).returncode
    check(rc == 0, "smoke run exit status 0 (%d)" % rc)

    def rows(name, columns):
        with open(os.path.join(out, name)) as f:
            r = list(csv.reader(f))
        check(r[0] == columns, "%s: header is the contract's" % name)
        return [dict(zip(r[0], x)) for x in r[1:]]

    b = rows("blocks.csv", pt.BLOCK_COLUMNS)
    m = rows("models.csv", pt.MODEL_COLUMNS)
    o = rows("ops.csv", pt.OPS_COLUMNS)
    check(len(b) == 15 and len(m) == 6 and len(o) == 6, "smoke row counts %d %d %d"
          % (len(b), len(m), len(o)))
    check({x["block"] for x in b} == {"attention", "ffn", "moe", "norm", "embedding",
                                      "lm_head"}, "every block kind")
    for x in b + m:
        B = int(x["batch"])
        if x["phase"] == "prefill":
            check(int(x["tokens"]) == B * int(x["prompt"]) and x["kv"] == "0", "prefill tokens")
        else:
            check(int(x["tokens"]) == B and x["prompt"] == "" and int(x["kv"]) > 0,
                  "decode tokens")
    for x in b + m + o:
        check(float(x["time_s"]) > 0 and int(x["reps"]) >= 2, "positive time, reps")
        check(x["dtype"] == "fp32", "dtype")
        if x["energy_j"] == "":
            check(x["grade"] == "" and x["energy_sd_j"] == "", "no energy: no grade")
        else:
            check(float(x["energy_j"]) > 0 and x["grade"] in ("hw_shunt", "model_based",
                                                              "estimator"), "energy and grade")
    if lib:
        check(any(x["energy_j"] for x in b), "energy through erg's meter")
    for x in m:
        with open(os.path.join(out, x["config"])) as f:
            c = json.load(f)
        check(c["model_type"] == x["arch"], "models.csv config matches arch")
    for x in o:
        check(x["kappa"].startswith("torch-"), "ops kappa names the torch kernel")
    check(not [f for f in os.listdir(out) if f.endswith(".partial")], "no partial files left")

    # bad input: exit 2, named, nothing written
    bad = os.path.join(tmp, "bad")
    p = subprocess.run([sys.executable, SCRIPT, "blocks", "-o", bad, "--families", "llama,mla"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "unknown family 'mla'" in p.stderr and not os.path.exists(bad),
          "unknown family refused")
    afile = os.path.join(tmp, "afile")
    open(afile, "w").close()
    p = subprocess.run([sys.executable, SCRIPT, "blocks", "-o", afile], capture_output=True,
                       text=True)
    check(p.returncode == 2 and "not a folder" in p.stderr, "output that is a file refused")
    p = subprocess.run([sys.executable, SCRIPT, "models", "-o", bad, "--threads", "2",
                        "--clock", "thread"], capture_output=True, text=True)
    check(p.returncode == 2 and "--clock thread needs" in p.stderr, "thread clock needs 1 thread")
    link = os.path.join(tmp, "link")
    os.makedirs(link)
    os.symlink(afile, os.path.join(link, "ops.csv"))
    p = subprocess.run([sys.executable, SCRIPT, "ops", "-o", link, "--plan", "smoke",
                        "--no-energy", "--limit", "1"], capture_output=True, text=True)
    check(p.returncode == 2 and "not replaced" in p.stderr and
          os.path.islink(os.path.join(link, "ops.csv")), "a symlink output is not replaced")

if failures:
    print("%d failure(s)" % failures)
    sys.exit(1)
print("ok")
