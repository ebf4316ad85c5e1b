#!/usr/bin/env bash
# Composition against measurement on a real GPU (docs/context.md, "On a GPU"; issue 14).
# Needs: an NVIDIA GPU with NVML's total-energy counter (Volta or later), python3 with torch (CUDA),
# cmake and a C compiler. Runs in under 10 minutes on one H100/H200-class GPU:
#   1. builds erg (Release) unless $ERG points at one;
#   2. characterizes the kernel classes of a Llama-style decoder layer's forward + backward step
#      (GEMMs, fused attention, the rest) from NVML's energy counter with repetition: each class is
#      run in a loop of >= 0.5 s, 8 times, so that T, d = E - s*T and their variances are measured;
#      the static power s is the device's draw at rest, measured first;
#   3. takes a Kineto trace of one step and builds its schedule with `erg trace import`, the
#      rules mapping each kernel class to its signature (d scaled to the traced duration);
#   4. measures the step's energy over many runs (each run: 10 steps between two counter reads);
#   5. composes, and reports: how often a measured step falls inside erg's interval, the
#      deviation test (Eq. 23) of the mean, the bias bound as a fraction of the energy, and what
#      erg refine ranks as candidates.
# Results go to $OUT (default ./gpu-context-results): signatures, rules, trace, schedule,
# measured runs, summary.json. Nothing here was run on a GPU when it was written.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-context-results}
mkdir -p "$OUT"
if [ -z "${ERG:-}" ]; then
    cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release -DERG_BUILD_TESTS=OFF -DERG_BUILD_BENCH=OFF > "$OUT/cmake.log"
    cmake --build build/gpu -j "$(nproc)" --target erg >> "$OUT/cmake.log"
    ERG=$PWD/build/gpu/src/cli/erg
fi
export ERG OUT
nvidia-smi --query-gpu=name,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"

python3 - <<'PY'
import ctypes, json, math, os, statistics, subprocess, sys, time
import torch
import torch.nn.functional as F

OUT = os.environ["OUT"]; ERG = os.environ["ERG"]
dev = torch.device("cuda", 0)
torch.backends.cuda.matmul.allow_tf32 = True

# ---- NVML total-energy counter (mJ) through ctypes: no Python package needed
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
def energy_j():
    e = ctypes.c_ulonglong()
    rc = nv.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e))
    if rc != 0:
        sys.exit("NVML total energy counter unavailable (rc %d): needs Volta or later" % rc)
    return e.value / 1000.0
name = ctypes.create_string_buffer(96)
nv.nvmlDeviceGetName(h, name, 96)
gpu_name = name.value.decode()

# ---- the workload: one decoder layer (Llama-3-8B-like widths), bf16, forward + backward
B, S, D, H, KV, FF = 4, 2048, 4096, 32, 8, 14336
hd = D // H
torch.manual_seed(0)
def p(*shape):
    return (torch.randn(*shape, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
W = dict(q=p(D, D), k=p(KV * hd, D), v=p(KV * hd, D), o=p(D, D), g=p(FF, D), u=p(FF, D), d=p(D, FF))
n1 = torch.ones(D, device=dev, dtype=torch.bfloat16, requires_grad=True)
n2 = torch.ones(D, device=dev, dtype=torch.bfloat16, requires_grad=True)
x0 = torch.randn(B, S, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w
def layer(x):
    h1 = rms(x, n1)
    q = F.linear(h1, W["q"]).view(B, S, H, hd).transpose(1, 2)
    k = F.linear(h1, W["k"]).view(B, S, KV, hd).transpose(1, 2).repeat_interleave(H // KV, 1)
    v = F.linear(h1, W["v"]).view(B, S, KV, hd).transpose(1, 2).repeat_interleave(H // KV, 1)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, S, D)
    x = x + F.linear(a, W["o"])
    h2 = rms(x, n2)
    return x + F.linear(F.silu(F.linear(h2, W["g"])) * F.linear(h2, W["u"]), W["d"])
def step():
    y = layer(x0)
    y.float().square().mean().backward()

# ---- kernel classes, each as a loop that launches (mostly) kernels of that class
xs = torch.randn(B * S, D, device=dev, dtype=torch.bfloat16)
qa = torch.randn(B, H, S, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
def c_gemm():
    torch.mm(xs, W["g"].detach().t())
def c_attn():
    o = F.scaled_dot_product_attention(qa, qa, qa, is_causal=True)
    o.sum().backward()
def c_other():
    t = rms(xs, n1.detach()); F.silu(t).mul_(t)
classes = {"gemm": c_gemm, "attention": c_attn, "other": c_other}

def loop_energy(fn, reps):
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0 = energy_j(); s.record()
    for _ in range(reps):
        fn()
    e.record(); torch.cuda.synchronize()
    time.sleep(0.05)   # the counter updates every few ms: let it catch the tail
    return energy_j() - e0, s.elapsed_time(e) / 1000.0

# static power: the device at rest (a ready, idle GPU), 3 s
torch.cuda.synchronize(); time.sleep(1.0)
e0 = energy_j(); t0 = time.time(); time.sleep(3.0); s_w = (energy_j() - e0) / (time.time() - t0)
print("static power at rest: %.1f W" % s_w)

for _ in range(3):
    step()   # warm-up: allocator, cuBLAS heuristics, clocks
sigs = {}
for cname, fn in classes.items():
    fn(); torch.cuda.synchronize()
    _, t1 = loop_energy(fn, 5)
    reps = max(10, int(0.5 / max(t1 / 5, 1e-6)))
    Es, Ts = [], []
    for r in range(8):
        E, T = loop_energy(fn, reps)
        Es.append(E / reps); Ts.append(T / reps)
    T, E = statistics.mean(Ts), statistics.mean(Es)
    vT, vE = statistics.variance(Ts), statistics.variance(Es)
    sig = {"erg": "signature/1", "name": cname, "device": "gpu", "static_power_w": s_w,
           "time_s": T, "dynamic_energy_j": max(0.0, E - s_w * T), "time_var_s2": vT,
           "energy_var_j2": max(vE, s_w * s_w * vT), "grade": "hw_shunt", "runs": 8}
    json.dump(sig, open(os.path.join(OUT, cname + ".json"), "w"), indent=1)
    sigs[cname] = sig
    print("%-10s T = %.4g ms, E = %.4g mJ (sd %.2g), dynamic power %.0f W, %d reps x 8"
          % (cname, T * 1e3, E * 1e3, math.sqrt(vE) * 1e3, sig["dynamic_energy_j"] / T, reps))

rules = {"erg": "rules/1",
         "devices": [{"match": "*", "static_power_w": s_w, "grade": "hw_shunt"}],
         "rules": [{"category": "kernel", "regex": "flash|fmha|attention|sdpa", "signature": "attention.json"},
                   {"category": "kernel", "regex": "gemm|Gemm|GEMM|cutlass|xmma|nvjet|sm90|sm80", "signature": "gemm.json"},
                   {"category": "*", "name": "*", "signature": "other.json"}]}
json.dump(rules, open(os.path.join(OUT, "rules.json"), "w"), indent=1)

# ---- Kineto trace of one step
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    step(); torch.cuda.synchronize()
trace = os.path.join(OUT, "step-trace.json")
prof.export_chrome_trace(trace)
sched = os.path.join(OUT, "step-schedule.json")
subprocess.run([ERG, "trace", "import", trace, "--rules", os.path.join(OUT, "rules.json"), "-o", sched], check=True)
rep = json.loads(subprocess.run([ERG, "compose", sched, "--json"], capture_output=True, text=True).stdout)

# ---- the step measured directly: 40 runs of 10 steps
runs = []
for r in range(40):
    E, T = loop_energy(step, 10)
    runs.append({"energy_j": E / 10, "time_s": T / 10})
Em = [x["energy_j"] for x in runs]; Tm = [x["time_s"] for x in runs]
meas = {"erg": "signature/1", "name": "step", "device": "gpu", "static_power_w": s_w,
        "time_s": statistics.mean(Tm), "dynamic_energy_j": max(0.0, statistics.mean(Em) - s_w * statistics.mean(Tm)),
        "time_var_s2": statistics.variance(Tm),
        "energy_var_j2": max(statistics.variance(Em), s_w ** 2 * statistics.variance(Tm)),
        "grade": "hw_shunt", "runs": len(runs)}
mpath = os.path.join(OUT, "step-measured.json")
json.dump(meas, open(mpath, "w"), indent=1)
json.dump(runs, open(os.path.join(OUT, "step-runs.json"), "w"), indent=1)

lo, hi = rep["interval_j"]
inside = sum(lo <= e <= hi for e in Em) / len(Em)
c = 1.959963984540054
mean, sem = statistics.mean(Em), statistics.stdev(Em) / math.sqrt(len(Em))
z = abs(rep["energy_j"] - mean) / math.sqrt(rep["energy_sd_j"] ** 2 + sem ** 2)
ref = subprocess.run([ERG, "refine", sched, "--measured", mpath], capture_output=True, text=True)
gran = subprocess.run([ERG, "check-granularity", mpath, sched, "--json"], capture_output=True, text=True)
summary = {"gpu": gpu_name, "static_power_w": s_w,
           "composed": {k: rep[k] for k in ("energy_j", "energy_sd_j", "interval_j", "time_s", "bias_bound_j", "grade")},
           "measured": {"mean_j": mean, "sd_j": statistics.stdev(Em), "runs": len(Em), "time_s": statistics.mean(Tm)},
           "coverage": inside, "deviation_z": z, "deviation_detected": z > c,
           "bias_bound_fraction": rep["bias_bound_j"] / rep["energy_j"],
           "granularity": json.loads(gran.stdout) if gran.stdout.strip() else gran.stderr,
           "refine": ref.stdout + ref.stderr}
json.dump(summary, open(os.path.join(OUT, "summary.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in summary.items() if k != "refine"}, indent=1))
print(ref.stdout)
PY
