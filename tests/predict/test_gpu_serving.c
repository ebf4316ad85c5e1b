/* SPDX-License-Identifier: MIT */
/* GPU targets from public data: kernel models recover known coefficients from tables written by
 * hand, the decode step's terms against hand-computed sums, the serving fit recovers a known
 * model, gpu-target/1 round-trips, bad configs are refused. */
#include "support/erg_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg/predict.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/erg_gpu_serving.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A decode-attention table generated from t = 5 us + KV bytes / 2 TB/s (plus zero for the other
 * terms), a MoE table from t = 20 us + weight bytes / 1.5 TB/s + FLOPs / 400 TFLOP/s
 * (power_law_1.01 rows with the random-routing average of active experts, which the fit and a
 * prediction use; balanced rows 3x slower, which the fit must ignore), an
 * all-reduce table t = 8 us + bytes / 100 GB/s: the fits must recover these exactly. */
static erg_public_table *attn_table(void)
{
    char *buf = malloc(1 << 20), path[128];
    assert_non_null(buf);
    size_t len = (size_t)sprintf(buf, "framework,device,op_name,batch_size,isl,num_heads,"
                                      "num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,"
                                      "step,window_size,latency\n");
    int bs[] = {1, 4, 16, 64}, kvh[] = {1, 8, 32}, steps[] = {128, 1024, 8192};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++) {
                double bytes = 2.0 * bs[a] * kvh[b] * 128 * steps[c] * 2.0;
                double ms = (5e-6 + bytes / 2e12) * 1e3;
                len += (size_t)sprintf(buf + len,
                                       "VLLM,GPU X,generation_attention,%d,1,32,%d,128,bfloat16,"
                                       "bfloat16,%d,0,%.17g\n",
                                       bs[a], kvh[b], steps[c], ms);
            }
    /* an fp8 KV cache row is not part of the bf16 model */
    len += (size_t)sprintf(buf + len, "VLLM,GPU X,generation_attention,8,1,32,8,128,bfloat16,"
                                      "fp8,100,0,9.0\n");
    write_file("attn.csv", buf, path, sizeof path);
    free(buf);
    erg_public_table *t = NULL;
    assert_int_equal(erg_public_read(path, &t, NULL), ERG_OK);
    assert_int_equal(t->format, ERG_PUBLIC_AIC_GENERATION_ATTENTION);
    return t;
}

static erg_public_table *moe_table(void)
{
    char *buf = malloc(1 << 20), path[128];
    assert_non_null(buf);
    size_t len = (size_t)sprintf(buf, "device,op_name,moe_dtype,num_tokens,hidden_size,"
                                      "inter_size,topk,num_experts,moe_tp_size,moe_ep_size,"
                                      "distribution,latency\n");
    int toks[] = {1, 8, 64, 512, 4096}, ds[] = {2048, 4096}, es[] = {8, 64, 128};
    int ks[] = {2, 8, 8};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 3; c++) {
                double e = es[c], k = ks[c], d = ds[b], f = 1024, t = toks[a];
                double act = e * (1 - pow(1 - k / e, t));
                double ms = (20e-6 + act * 3 * d * f * 2 / 1.5e12 + 6 * t * k * d * f / 4e14) * 1e3;
                len += (size_t)sprintf(buf + len,
                                       "GPU X,moe,bfloat16,%d,%d,1024,%d,%d,1,1,power_law_1.01,"
                                       "%.17g\n"
                                       "GPU X,moe,bfloat16,%d,%d,1024,%d,%d,1,1,balanced,%.17g\n",
                                       toks[a], ds[b], ks[c], es[c], ms, toks[a], ds[b], ks[c],
                                       es[c], 3 * ms);
            }
    write_file("moe.csv", buf, path, sizeof path);
    free(buf);
    erg_public_table *t = NULL;
    assert_int_equal(erg_public_read(path, &t, NULL), ERG_OK);
    return t;
}

static erg_public_table *ar_table(void)
{
    char buf[8192], path[128];
    size_t len = (size_t)sprintf(buf, "framework,version,device,op_name,kernel_source,"
                                      "allreduce_dtype,num_gpus,message_size,latency,backend\n");
    for (int g = 2; g <= 8; g *= 2)
        for (long s = 1024; s <= (1l << 26); s *= 4) {
            double ms = (8e-6 * g / 2 + (double)s / 1e11) * 1e3;
            len += (size_t)sprintf(buf + len,
                                   "vLLM,1,GPU X,all_reduce,c,bfloat16,%d,%ld,%.17g,"
                                   "vllm_graph\n",
                                   g, s, ms);
            /* eager rows are slower and ignored when graph rows exist */
            len += (size_t)sprintf(buf + len,
                                   "vLLM,1,GPU X,all_reduce,c,bfloat16,%d,%ld,%.17g,"
                                   "vllm_eager\n",
                                   g, s, 10 * ms);
        }
    write_file("ar.csv", buf, path, sizeof path);
    erg_public_table *t = NULL;
    assert_int_equal(erg_public_read(path, &t, NULL), ERG_OK);
    assert_int_equal(t->format, ERG_PUBLIC_AIC_COLLECTIVE);
    return t;
}

static void kernel_fits_recover_known_models(void **state)
{
    (void)state;
    erg_public_table *t[3] = {attn_table(), moe_table(), ar_table()};
    erg_gpu_kernels k;
    assert_int_equal(erg_gpu_kernels_fit((const erg_public_table *const *)t, 3, &k, NULL), ERG_OK);
    assert_string_equal(k.device, "GPU X");
    assert_true(k.has_attn && k.has_moe);
    assert_int_equal(k.attn_n, 36); /* the fp8-KV row is left out */
    assert_true(k.has_allreduce[0] && k.has_allreduce[1] && k.has_allreduce[2]);
    assert_int_equal(k.allreduce_n[0], 9); /* 2^10..2^26 by 4: graph rows only */
    /* batch 4, 8 KV heads of 128, KV 1024: 16.8 MB -> 5 us + 8.39 us */
    erg_assert_rel(erg_gpu_attn_decode_s(&k, 4, 1024, 32, 8, 128),
                   5e-6 + 2.0 * 4 * 8 * 128 * 1024 * 2 / 2e12, 1e-6);
    double act = 64 * (1 - pow(1 - 8.0 / 64, 64));
    erg_assert_rel(erg_gpu_moe_s(&k, 64, 4096, 1024, 8, 64, 1),
                   20e-6 + act * 3 * 4096 * 1024 * 2 / 1.5e12 + 6.0 * 64 * 8 * 4096 * 1024 / 4e14,
                   1e-6);
    erg_assert_rel(erg_gpu_allreduce_s(&k, 4, 1 << 20), 16e-6 + 1048576.0 / 1e11, 1e-6);
    erg_assert_near(erg_gpu_allreduce_s(&k, 1, 1 << 20), 0.0, 0);
    assert_true(isnan(erg_gpu_allreduce_s(&k, 3, 1 << 20)));
    erg_assert_near(k.attn_mape_pct, 0.0, 1e-6);

    /* gpu-target/1 round trip with a serving model */
    erg_serving_model m = {.itl = {1.1, 0.9, 1.2, 1.0, 2e-5},
                           .power = {300, 7e-11, 1e-12},
                           .power_max_w = 690,
                           .phi = {1.05, -0.03},
                           .prompt_tokens = 512,
                           .n_train = 7};
    char path[128];
    snprintf(path, sizeof path, "%s/gpu.json", dir);
    assert_int_equal(erg_gpu_target_save(path, &k, &m, NULL), ERG_OK);
    erg_gpu_kernels k2;
    erg_serving_model m2;
    int has = 0;
    assert_int_equal(erg_gpu_target_load(path, &k2, &m2, &has, NULL), ERG_OK);
    assert_int_equal(has, 1);
    erg_assert_rel(erg_gpu_attn_decode_s(&k2, 4, 1024, 32, 8, 128),
                   erg_gpu_attn_decode_s(&k, 4, 1024, 32, 8, 128), 1e-15);
    erg_assert_rel(m2.power[1], 7e-11, 1e-15);
    erg_assert_rel(m2.power[2], 1e-12, 1e-15);
    erg_assert_rel(m2.power_max_w, 690, 1e-15);
    erg_assert_rel(m2.phi[1], -0.03, 1e-15);
    assert_int_equal(m2.n_train, 7);
    /* n_train is a count: 1e30 was cast from double to size_t (undefined), -3 read as 0 */
    static const char *const bad_n[] = {"1e30", "-3", "7.5"};
    for (int i = 0; i < 3; i++) {
        char cmd[512], bad[160];
        snprintf(bad, sizeof bad, "%s/gpu-bad.json", dir);
        snprintf(cmd, sizeof cmd, "sed -e 's|\"n_train\": [0-9]*|\"n_train\": %s|' '%s' > '%s'",
                 bad_n[i], path, bad);
        assert_int_equal(system(cmd), 0);
        erg_diag diag;
        assert_int_equal(erg_gpu_target_load(bad, &k2, &m2, &has, &diag), ERG_EPARSE);
        assert_non_null(strstr(diag.detail, "serving.n_train: expected a whole number"));
    }
    for (int i = 0; i < 3; i++)
        erg_public_table_free(t[i]);
}

/* The prefill table's NVML power: 450 W + 20 W per e-fold of the kernel's time over 100 us
 * + 15 W per doubling of head_dim over 128 (the kernel power model's form, so its fit is exact) */
static double table_power_w(double t, double hd)
{
    return 450 + 20 * log(t / 1e-4) + 15 * log2(hd / 128);
}

/* A prefill-attention (context_attention) table with NVML power generated from
 * t = 4 us + F / 500 TFLOP/s + S / 2e12 scores/s (S = B·h·N²/2 causal scores, F = 4·d_h·S)
 * with the power of table_power_w: the time fit recovers it exactly, the power fit that power. */
static erg_public_table *prefill_table(void)
{
    char *buf = malloc(1 << 20), path[128];
    assert_non_null(buf);
    size_t len = (size_t)sprintf(buf, "framework,device,op_name,batch_size,isl,num_heads,"
                                      "num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,"
                                      "step,window_size,latency,power\n");
    int bs[] = {1, 2, 8}, hs[] = {8, 32, 64}, hds[] = {64, 128, 256}, ns[] = {128, 1024, 4096};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++) {
                    double sc = (double)bs[a] * hs[b] * (double)ns[d] * ns[d] / 2.0;
                    double ms = (4e-6 + 4.0 * hds[c] * sc / 5e14 + sc / 2e12) * 1e3;
                    len += (size_t)sprintf(buf + len,
                                           "VLLM,GPU X,context_attention,%d,%d,%d,%d,%d,bfloat16,"
                                           "bfloat16,0,0,%.17g,%.17g\n",
                                           bs[a], ns[d], hs[b], hs[b] / 8, hds[c], ms,
                                           table_power_w(ms * 1e-3, hds[c]));
                }
    /* a sliding-window row is not part of the full-attention fit */
    len += (size_t)sprintf(buf + len, "VLLM,GPU X,context_attention,1,4096,32,4,128,bfloat16,"
                                      "bfloat16,0,1024,9.0,450\n");
    write_file("ctx.csv", buf, path, sizeof path);
    free(buf);
    erg_public_table *t = NULL;
    assert_int_equal(erg_public_read(path, &t, NULL), ERG_OK);
    assert_int_equal(t->format, ERG_PUBLIC_AIC_CONTEXT_ATTENTION);
    return t;
}

static void prefill_attention_fit_recovers_a_known_model(void **state)
{
    (void)state;
    erg_public_table *t = prefill_table();
    erg_gpu_kernels k;
    assert_int_equal(erg_gpu_kernels_fit((const erg_public_table *const *)&t, 1, &k, NULL), ERG_OK);
    assert_true(k.has_attn_prefill && !k.has_attn && !k.has_moe);
    assert_int_equal(k.attn_prefill_n, 81);
    assert_true(k.has_energy[1] && !k.has_energy[0]);
    erg_assert_near(k.attn_prefill_mape_pct, 0.0, 1e-6);
    /* batch 4, 16 heads of 96, prompt 2048 (none of these in the table): S = 4·16·2048²/2 */
    double sc = 4.0 * 16 * 2048.0 * 2048 / 2, want = 4e-6 + 4.0 * 96 * sc / 5e14 + sc / 2e12;
    erg_assert_rel(erg_gpu_attn_prefill_s(&k, 4, 2048, 16, 2, 96, 0), want, 1e-6);
    erg_assert_rel(erg_gpu_attn_energy_j(&k, ERG_PHASE_PREFILL, 4, 2048, 16, 2, 96, 0),
                   table_power_w(want, 96) * want, 1e-6);
    erg_assert_near(k.energy_mape_pct[1], 0.0, 1e-6);
    /* a window of 512 over 2048 tokens: 2048·512 − 512²/2 scores per head */
    double sw = 4.0 * 16 * (2048.0 * 512 - 512.0 * 512 / 2);
    erg_assert_rel(erg_gpu_attn_prefill_s(&k, 4, 2048, 16, 2, 96, 512),
                   4e-6 + 4.0 * 96 * sw / 5e14 + sw / 2e12, 1e-6);
    /* never below the smallest measured time (4 us + the smallest work in the table) */
    double smin = 1.0 * 8 * 128.0 * 128 / 2;
    erg_assert_rel(erg_gpu_attn_prefill_s(&k, 1, 1, 1, 1, 64, 0),
                   4e-6 + 4.0 * 64 * smin / 5e14 + smin / 2e12, 1e-9);
    assert_true(isnan(erg_gpu_attn_energy_j(&k, ERG_PHASE_DECODE, 4, 2048, 16, 2, 96, 0)));
    assert_true(isnan(erg_gpu_attn_decode_s(&k, 4, 2048, 16, 2, 96)));
    /* round trip */
    char path[128];
    snprintf(path, sizeof path, "%s/gpu-prefill.json", dir);
    assert_int_equal(erg_gpu_target_save(path, &k, NULL, NULL), ERG_OK);
    erg_gpu_kernels k2;
    erg_serving_model m2;
    assert_int_equal(erg_gpu_target_load(path, &k2, &m2, NULL, NULL), ERG_OK);
    erg_assert_rel(erg_gpu_attn_prefill_s(&k2, 4, 2048, 16, 2, 96, 0), want, 1e-6);
    erg_assert_rel(erg_gpu_attn_energy_j(&k2, ERG_PHASE_PREFILL, 4, 2048, 16, 2, 96, 0),
                   table_power_w(want, 96) * want, 1e-6);
    /* the smallest measured power: batch 1, 8 heads of 64, 128 tokens */
    double s1 = 8.0 * 128 * 128 / 2, t1 = 4e-6 + 4.0 * 64 * s1 / 5e14 + s1 / 2e12;
    erg_assert_rel(k2.power_w[1][0], table_power_w(t1, 64), 1e-12);
    /* a file of the former energy form (energy linear in the time features) is refused */
    char old[160], cmd[512];
    snprintf(old, sizeof old, "%s/gpu-old.json", dir);
    snprintf(cmd, sizeof cmd, "sed -e 's|\"energy\":|\"energy_j\":|' '%s' > '%s'", path, old);
    assert_int_equal(system(cmd), 0);
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_gpu_target_load(old, &k2, &m2, NULL, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "former energy form"));
    erg_public_table_free(t);
}

/* A level-1 model of bf16 GEMMs, t = 1 us + F / 500 TFLOP/s, fitted on a grid of m 1..4096, n
 * 512..65536, k 1024..16384 (powers of 4, 2, 2), drawing power_w (NAN: no energy). */
static erg_op_model *gemm_model(double power_w)
{
    erg_op_sample *g = calloc(400, sizeof *g);
    assert_non_null(g);
    size_t n = 0;
    for (int64_t m = 1; m <= 4096; m *= 4)
        for (int64_t nn = 512; nn <= 65536; nn *= 2)
            for (int64_t k = 1024; k <= 16384; k *= 2) {
                erg_op_sample *x = &g[n++];
                x->dims.op = ERG_OP_GEMM;
                x->dims.dtype = ERG_DTYPE_BF16;
                x->dims.m = m;
                x->dims.n = nn;
                x->dims.k = k;
                x->reps = 1;
                x->time_s = 1e-6 + 2.0 * (double)(m * nn * k) / 5e14;
                x->energy_j = power_w * x->time_s;
                x->time_sd_s = x->energy_sd_j = NAN;
            }
    erg_fit_options o;
    erg_fit_options_init(&o);
    o.choose_thresholds = 0;
    o.target_kind = "test";
    erg_op_model *ops = NULL;
    assert_int_equal(erg_op_model_fit(g, n, &o, &ops, NULL), ERG_OK);
    free(g);
    return ops;
}

/* The measured-shape GEMM map: a level-1 model of t = 1 us + F / 500 TFLOP/s at 400 W, a
 * "measured" aiconfigurator table 1.25x slower at 360 W for m in 64..128: inside those cells a
 * prediction is 1.25x the estimator at 360 W, outside the estimator alone; a bad map is refused
 * naming the file. */
static void gemm_map_corrects_measured_cells(void **state)
{
    (void)state;
    erg_op_model *ops = gemm_model(400);
    char sub[128], opsp[160], mapp[160], path[128];
    snprintf(sub, sizeof sub, "%s/maptarget", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(opsp, sizeof opsp, "%s/ops.json", sub);
    snprintf(mapp, sizeof mapp, "%s/gemm-map.json", sub);
    assert_int_equal(erg_op_model_save(opsp, ops, NULL), ERG_OK);
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    size_t len = (size_t)sprintf(buf, "framework,version,device,op_name,kernel_source,gemm_dtype,"
                                      "m,n,k,latency,power\n");
    for (int64_t m = 64; m <= 128; m *= 2)
        for (int64_t nn = 1024; nn <= 4096; nn *= 2) {
            erg_op_dims d = {
                .op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = m, .n = nn, .k = 4096};
            erg_op_prediction p;
            assert_int_equal(erg_op_model_predict(ops, &d, &p, NULL), ERG_OK);
            len += (size_t)sprintf(buf + len,
                                   "VLLM,1,GPU X,gemm,d,bfloat16,%lld,%lld,4096,%.17g,360\n",
                                   (long long)m, (long long)nn, 1.25 * p.time_s * 1e3);
        }
    /* an fp8 row is not the estimator's dtype */
    len += (size_t)sprintf(buf + len, "VLLM,1,GPU X,gemm,d,fp8,64,1024,4096,9,300\n");
    write_file("gemm.csv", buf, path, sizeof path);
    free(buf);
    erg_public_table *t = NULL;
    assert_int_equal(erg_public_read(path, &t, NULL), ERG_OK);
    size_t cells = 0, rows = 0;
    assert_int_equal(
        erg_gemm_map_write(mapp, opsp, (const erg_public_table *const *)&t, 1, &cells, &rows, NULL),
        ERG_OK);
    assert_int_equal(rows, 6);
    assert_int_equal(cells, 6); /* m 64, 128 x n 1024, 2048, 4096 are 6 cells at step 1/2 */
    erg_op_model *mapped = NULL;
    assert_int_equal(erg_op_model_load(opsp, &mapped, NULL), ERG_OK);
    erg_op_dims in = {.op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = 128, .n = 2048, .k = 4096};
    erg_op_dims out = {.op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = 1024, .n = 2048, .k = 4096};
    erg_op_prediction a, b;
    assert_int_equal(erg_op_model_predict(ops, &in, &a, NULL), ERG_OK);
    assert_int_equal(erg_op_model_predict(mapped, &in, &b, NULL), ERG_OK);
    erg_assert_rel(b.time_s, 1.25 * a.time_s, 1e-9);
    erg_assert_rel(b.energy_j, 360 * b.time_s, 1e-9);
    assert_int_equal(erg_op_model_predict(ops, &out, &a, NULL), ERG_OK);
    assert_int_equal(erg_op_model_predict(mapped, &out, &b, NULL), ERG_OK);
    erg_assert_rel(b.time_s, a.time_s, 1e-15);
    erg_assert_rel(b.energy_j, a.energy_j, 1e-15);
    erg_op_model_free(mapped);
    /* a map that is not one: loading the target names it */
    FILE *f = fopen(mapp, "w");
    assert_non_null(f);
    fputs("{\"erg\": \"gemm-map/1\", \"dtype\": \"bf16\", \"step_log2\": 0.5,\n"
          " \"cells\": [[1, 2, 3, 1.5, null, 1],\n"
          "           [1, 2, 3, -1, null, 1]]}\n",
          f);
    fclose(f);
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_op_model_load(opsp, &mapped, &diag), ERG_EPARSE);
    /* the file, then the line and column of the bad cell (hand-counted) */
    size_t wl = strlen(diag.where);
    assert_true(wl > 19 && strcmp(diag.where + wl - 19, "/gemm-map.json:3:12") == 0);
    assert_string_equal(diag.detail,
                        "cells[1]: expected [i, j, l, ratio > 0, power > 0 or null, n]");
    erg_public_table_free(t);
    erg_op_model_free(ops);
}

static void serving_fit_recovers_a_known_model(void **state)
{
    (void)state;
    /* ITL = 1.2 gemm + 0.8 attn + 1.0 comm + 30 us per layer; per-GPU power
     * P = min(650, 280 + 8e-11 W·s/B · bytes/ITL + 1.2e-12 W·s/FLOP · flops/ITL);
     * φ = 1.02 − 0.03 ln B (below 1 from batch 4 on) */
    erg_serving_sample s[12];
    for (int i = 0; i < 12; i++) {
        erg_serving_sample *x = &s[i];
        memset(x, 0, sizeof *x);
        x->terms.gemm_s = 2e-3 * (1 + i % 4);
        x->terms.attn_s = 1e-3 * (1 + i % 3) * (1 + i / 6);
        x->terms.comm_s = (i % 2) ? 3e-4 * (1 + i % 5) : 0;
        x->terms.layers = 32 + 8 * (i % 3);
        x->batch = 4 << (i % 6);
        x->gpus = (i % 2) ? 2 : 1;
        x->itl_s = 1.2 * x->terms.gemm_s + 0.8 * x->terms.attn_s + 1.0 * x->terms.comm_s +
                   30e-6 * x->terms.layers;
        x->terms.bytes = 1.6e10 * (1 + i % 5) / x->gpus;
        x->terms.flops = 1.6e10 * x->batch / x->gpus * (1 + i % 4);
        double p = 280 + 8e-11 * x->terms.bytes / x->itl_s + 1.2e-12 * x->terms.flops / x->itl_s;
        x->power_w = fmin(p, 650) * x->gpus;
        double phi = 1.02 - 0.03 * log(x->batch);
        x->throughput_tok_s = phi * x->batch / x->itl_s;
        x->energy_per_token_j = x->power_w * x->itl_s / (x->batch * phi);
    }
    /* row 9 (batch 32, 4 GPU-rows of work) is above 650 W: it sits at the cap */
    double top = 280 + (8e-11 * s[9].terms.bytes + 1.2e-12 * s[9].terms.flops) / s[9].itl_s;
    assert_true(top > 650);
    erg_serving_model m;
    assert_int_equal(erg_serving_fit(s, 12, 256, &m, NULL), ERG_OK);
    erg_assert_rel(m.itl[0], 1.2, 1e-9);
    erg_assert_near(m.itl[1], 1.0, 0); /* no MoE row: the level-1 scale stays */
    erg_assert_rel(m.itl[2], 0.8, 1e-9);
    erg_assert_rel(m.itl[3], 1.0, 1e-9);
    erg_assert_rel(m.itl[4], 30e-6, 1e-9);
    erg_assert_rel(m.power[0], 280, 1e-8);
    erg_assert_rel(m.power[1], 8e-11, 1e-8);
    erg_assert_rel(m.power[2], 1.2e-12, 1e-8);
    erg_assert_rel(m.power_max_w, 650, 1e-12);
    erg_assert_rel(m.phi[0], 1.02, 1e-9);
    erg_assert_rel(m.phi[1], -0.03, 1e-9);
    erg_assert_near(m.itl_mape_pct, 0, 1e-7);
    erg_assert_near(m.energy_mape_pct, 0, 1e-6);
    double itl, ept;
    for (int i = 5; i <= 9; i += 4) { /* below the cap, and at it */
        erg_serving_predict(&m, &s[i].terms, s[i].batch, s[i].gpus, &itl, &ept);
        erg_assert_rel(itl, s[i].itl_s, 1e-9);
        erg_assert_rel(ept, s[i].energy_per_token_j, 1e-8);
    }
    /* a step that reads less and computes less at the same ITL draws less power: a MoE step
     * (sparse experts) at a dense model's batch */
    erg_serving_terms light = s[0].terms; /* 606 W: below the cap */
    light.bytes *= 0.5;
    light.flops *= 0.2;
    double ept_light;
    erg_serving_predict(&m, &light, s[0].batch, s[0].gpus, &itl, &ept_light);
    erg_serving_predict(&m, &s[0].terms, s[0].batch, s[0].gpus, NULL, &ept);
    erg_assert_rel(ept_light / ept,
                   (280 + (8e-11 * light.bytes + 1.2e-12 * light.flops) / itl) /
                       (280 + (8e-11 * s[0].terms.bytes + 1.2e-12 * s[0].terms.flops) / itl),
                   1e-8);
    assert_int_equal(erg_serving_fit(s, 5, 256, &m, NULL), ERG_EINVAL);
    s[3].terms.bytes = 0; /* a sample without the step's work cannot train the power model */
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_serving_fit(s, 12, 256, &m, &diag), ERG_EINVAL);
    assert_non_null(strstr(diag.detail, "sample 3"));
}

static void step_terms_are_the_hand_sums(void **state)
{
    (void)state;
    char path[128];
    write_file("cfg.json",
               "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"num_key_value_heads\": 8,"
               " \"num_hidden_layers\": 2, \"vocab_size\": 32000, \"intermediate_size\": 14336}",
               path, sizeof path);
    erg_serving_arch a;
    assert_int_equal(erg_serving_arch_read(path, &a, NULL), ERG_OK);
    assert_string_equal(a.name, "cfg");
    assert_int_equal(a.head_dim, 128);
    assert_int_equal(a.n_experts, 0);
    /* a level-1 model of bf16 GEMMs, t = 1 us + F / 500 TFLOP/s, fitted on a grid */
    erg_op_model *ops = gemm_model(NAN);
    erg_public_table *t[2] = {attn_table(), ar_table()};
    erg_gpu_kernels k;
    assert_int_equal(erg_gpu_kernels_fit((const erg_public_table *const *)t, 2, &k, NULL), ERG_OK);
    erg_serving_terms st;
    assert_int_equal(erg_serving_step(ops, &k, &a, 16, 1024, 2, &st, NULL), ERG_OK);
    /* per GPU at TP 2: 16 heads, 4 KV heads; the GEMM sum from the same level-1 model */
    double gsum = 0;
    int64_t dims[5][3] = {{16, (16 + 8) * 128, 4096},
                          {16, 4096, 16 * 128},
                          {16, 2 * 14336 / 2, 4096},
                          {16, 4096, 14336 / 2},
                          {16, 16000, 4096}};
    for (int i = 0; i < 5; i++) {
        erg_op_dims d = {.op = ERG_OP_GEMM,
                         .dtype = ERG_DTYPE_BF16,
                         .m = dims[i][0],
                         .n = dims[i][1],
                         .k = dims[i][2]};
        erg_op_prediction p;
        assert_int_equal(erg_op_model_predict(ops, &d, &p, NULL), ERG_OK);
        gsum += (i < 4 ? 2.0 : 1.0) * p.time_s;
    }
    erg_assert_rel(st.gemm_s, gsum, 1e-12);
    erg_assert_rel(st.attn_s, 2 * (5e-6 + 2.0 * 16 * 4 * 128 * 1024 * 2 / 2e12), 1e-6);
    erg_assert_rel(st.comm_s, 2 * 2 * (8e-6 + 16.0 * 4096 * 2 / 1e11), 1e-6);
    erg_assert_near(st.moe_s, 0, 0);
    /* the work per GPU: weights (QKV 4096 x 3072, O 2048 x 4096, gated FFN 3 x 4096 x 7168,
     * per layer; LM head 16000 x 4096) at 2 bytes, the KV cache 16 x 1024 x 2 x 4 x 128 x 2
     * bytes per layer; 2 FLOPs per weight per token and 4 x 1024 x 16 x 128 per sequence and
     * layer for attention */
    double wl = 4096.0 * 3072 + 2048.0 * 4096 + 3.0 * 4096 * 7168, lm = 16000.0 * 4096;
    erg_assert_rel(st.bytes, 2 * (2 * wl + lm) + 2 * 16.0 * 1024 * 2 * 4 * 128 * 2, 1e-12);
    erg_assert_rel(st.flops, 2 * 16 * (2 * wl + lm) + 2 * 4.0 * 16 * 1024 * 16 * 128, 1e-12);
    /* a MoE config without a MoE kernel model, and TP that does not divide the heads */
    write_file("moe.json",
               "{\"hidden_size\": 2048, \"num_attention_heads\": 32, \"num_key_value_heads\": 4,"
               " \"num_hidden_layers\": 2, \"vocab_size\": 32000, \"intermediate_size\": 6144,"
               " \"num_experts\": 128, \"num_experts_per_tok\": 8, \"moe_intermediate_size\": 768}",
               path, sizeof path);
    erg_serving_arch am;
    assert_int_equal(erg_serving_arch_read(path, &am, NULL), ERG_OK);
    assert_int_equal(am.d_ff_expert, 768);
    erg_diag diag;
    assert_int_equal(erg_serving_step(ops, &k, &am, 16, 1024, 1, &st, &diag), ERG_ENOTSUP);
    assert_non_null(strstr(diag.detail, "no fused-MoE kernel model"));
    assert_int_equal(erg_serving_step(ops, &k, &a, 16, 1024, 3, &st, &diag), ERG_EINVAL);
    /* Qwen-MoE style: 60 experts, top-4 of 1408, one shared expert of 5632, MHA 16 heads: the
     * router and the shared expert are GEMMs, the routed experts the fused kernel with the
     * random-routing average of active experts */
    write_file("qmoe.json",
               "{\"hidden_size\": 2048, \"num_attention_heads\": 16, \"num_hidden_layers\": 2,"
               " \"vocab_size\": 32000, \"intermediate_size\": 5632, \"num_experts\": 60,"
               " \"num_experts_per_tok\": 4, \"moe_intermediate_size\": 1408,"
               " \"shared_expert_intermediate_size\": 5632}",
               path, sizeof path);
    assert_int_equal(erg_serving_arch_read(path, &am, NULL), ERG_OK);
    assert_int_equal(am.n_shared, 1);
    assert_int_equal(am.d_ff_shared, 5632);
    erg_public_table *tm[3] = {attn_table(), ar_table(), moe_table()};
    erg_gpu_kernels km;
    assert_int_equal(erg_gpu_kernels_fit((const erg_public_table *const *)tm, 3, &km, NULL),
                     ERG_OK);
    assert_int_equal(erg_serving_step(ops, &km, &am, 16, 1024, 1, &st, NULL), ERG_OK);
    int64_t md[6][3] = {{16, 3 * 2048, 2048}, {16, 2048, 2048}, {16, 60, 2048},
                        {16, 2 * 5632, 2048}, {16, 2048, 5632}, {16, 32000, 2048}};
    gsum = 0;
    for (int i = 0; i < 6; i++) {
        erg_op_dims d = {.op = ERG_OP_GEMM,
                         .dtype = ERG_DTYPE_BF16,
                         .m = md[i][0],
                         .n = md[i][1],
                         .k = md[i][2]};
        erg_op_prediction p;
        assert_int_equal(erg_op_model_predict(ops, &d, &p, NULL), ERG_OK);
        gsum += (i < 5 ? 2.0 : 1.0) * p.time_s;
    }
    erg_assert_rel(st.gemm_s, gsum, 1e-12);
    double act = 60 * (1 - pow(1 - 4.0 / 60, 16));
    erg_assert_rel(
        st.moe_s,
        2 * (20e-6 + act * 3 * 2048 * 1408 * 2 / 1.5e12 + 6.0 * 16 * 4 * 2048 * 1408 / 4e14), 1e-6);
    /* bytes: only the activated experts' weights are read, FLOPs only top-k per token (plus
     * the router 2048 x 60 and the shared expert 3 x 2048 x 5632 for all tokens) */
    double wa = 2048.0 * 48 * 128 + 2048.0 * 2048, sh = 3.0 * 2048 * 5632, ex = 3.0 * 2048 * 1408;
    double lmq = 32000.0 * 2048;
    erg_assert_rel(st.bytes,
                   2 * (2 * (wa + act * ex + 60 * 2048 + sh) + lmq) +
                       2 * 16.0 * 1024 * 2 * 16 * 128 * 2,
                   1e-12);
    erg_assert_rel(st.flops,
                   2 * 16 * (2 * (wa + 4 * ex + 60 * 2048 + sh) + lmq) +
                       2 * 4.0 * 16 * 1024 * 16 * 128,
                   1e-12);
    for (int i = 0; i < 3; i++)
        erg_public_table_free(tm[i]);
    erg_op_model_free(ops);
    for (int i = 0; i < 2; i++)
        erg_public_table_free(t[i]);
}

static void bad_configs_are_refused(void **state)
{
    (void)state;
    char path[128];
    erg_serving_arch a;
    erg_diag diag;
    write_file("nolayers.json", "{\"hidden_size\": 64, \"num_attention_heads\": 4}", path,
               sizeof path);
    assert_int_equal(erg_serving_arch_read(path, &a, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "num_hidden_layers: required field is missing"));
    write_file("kv.json",
               "{\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 3,"
               " \"num_hidden_layers\": 2, \"vocab_size\": 10, \"intermediate_size\": 128}",
               path, sizeof path);
    assert_int_equal(erg_serving_arch_read(path, &a, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "does not divide"));
    write_file("zero.json",
               "{\"hidden_size\": 0, \"num_attention_heads\": 4, \"num_hidden_layers\": 2,"
               " \"vocab_size\": 10, \"intermediate_size\": 128}",
               path, sizeof path);
    assert_int_equal(erg_serving_arch_read(path, &a, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "hidden_size: must be a positive integer"));
    write_file("topk.json",
               "{\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2,"
               " \"vocab_size\": 10, \"intermediate_size\": 128, \"num_experts\": 4,"
               " \"num_experts_per_tok\": 5}",
               path, sizeof path);
    assert_int_equal(erg_serving_arch_read(path, &a, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "top-k 5 is above the 4 experts"));
    write_file("tag.json", "{\"erg\": \"gpu-target/2\"}", path, sizeof path);
    erg_gpu_kernels k;
    erg_serving_model m;
    assert_int_equal(erg_gpu_target_load(path, &k, &m, NULL, &diag), ERG_EVERSION);
}

/* A pretty-printed gpu-target/1 file; positions below are hand-counted on these lines (columns
 * are 1-based bytes). */
static const char target_doc[] =
    "{\"erg\": \"gpu-target/1\",\n"                                      /* 1 */
    " \"kernels\": {\"device\": \"H100\",\n"                             /* 2 */
    "  \"attention_decode\": {\"coef\": [1, 2, 3, 4, 5, 6]},\n"          /* 3 */
    "  \"allreduce\": {\"2\": {\"coef\": [4e-6, 7e-12]}}},\n"            /* 4 */
    " \"serving\": {\"itl\": [1, 1, 1, 1, 1], \"power\": [300, 0, 0],\n" /* 5 */
    "  \"phi\": [1, 0], \"power_max_w\": 700,\n"                         /* 6 */
    "  \"prompt_tokens\": 512, \"n_train\": 7}}\n";                      /* 7 */

/* target_doc with the first `from` replaced by `to`, loaded: the status, where and detail. */
static void target_bad(const char *from, const char *to, int status, const char *where,
                       const char *detail)
{
    char text[2048], path[160];
    const char *at = strstr(target_doc, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - target_doc), target_doc, to,
             at + strlen(from));
    write_file("target.json", text, path, sizeof path);
    erg_gpu_kernels k;
    erg_serving_model m;
    int has = 1;
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_gpu_target_load(path, &k, &m, &has, &diag), status);
    char want[300];
    snprintf(want, sizeof want, "%s%s", path, where);
    assert_string_equal(diag.where, want);
    assert_string_equal(diag.detail, detail);
    assert_int_equal(has, 0);
    assert_int_equal(k.has_attn, 0);
}

static void target_errors_name_line_and_column(void **state)
{
    (void)state;
    char path[160];
    write_file("target.json", target_doc, path, sizeof path);
    erg_gpu_kernels k;
    erg_serving_model m;
    int has = 0;
    assert_int_equal(erg_gpu_target_load(path, &k, &m, &has, NULL), ERG_OK);
    assert_int_equal(has, 1);
    assert_int_equal(k.has_attn, 1);
    assert_int_equal(k.has_allreduce[0], 1);
    erg_assert_rel(k.allreduce[0][1], 7e-12, 1e-15);
    erg_assert_rel(m.power_max_w, 700, 1e-15);
    assert_int_equal(m.n_train, 7);
    /* wrong type: line 3 `  "attention_decode": {"coef": [1, "2", ...`: '[' at 32, "2" at 36 */
    target_bad("[1, 2,", "[1, \"2\",", ERG_EPARSE, ":3:36",
               "kernels.attention_decode.coef[1]: expected a number");
    /* line 2 ` "kernels": 3,`: the value at 13 */
    target_bad("{\"device\": \"H100\",\n", "3, \"x\": {\n", ERG_EPARSE, ":2:13",
               "kernels: expected an object");
    /* line 4 `  "allreduce": {"2": {"coef": [4e-6]}}},`: '[' at 31 */
    target_bad("[4e-6, 7e-12]", "[4e-6]", ERG_EPARSE, ":4:31",
               "kernels.allreduce.2.coef: expected an array of 2 numbers");
    /* out of range: line 6 `  "phi": [1, 0], "power_max_w": -3,`: -3 at 33 */
    target_bad("700", "-3", ERG_EPARSE, ":6:33", "serving.power_max_w: must be positive (got -3)");
    /* line 7 `  "prompt_tokens": 512, "n_train": -1}}`: -1 at 36 */
    target_bad("\"n_train\": 7", "\"n_train\": -1", ERG_EPARSE, ":7:36",
               "serving.n_train: expected a whole number in [0, 9223372036854775807]");
    /* missing: serving lacks phi; the serving object, line 5 ` "serving": {`, '{' at 13 */
    target_bad("\"phi\": [1, 0], ", "", ERG_EPARSE, ":5:13",
               "serving.phi: required array of 2 numbers is missing");
    /* the document lacks its tag: the document, 1:1 */
    target_bad("\"erg\": \"gpu-target/1\",", "", ERG_EPARSE, ":1:1",
               "erg: not a gpu-target file (no \"erg\": \"gpu-target/1\" member)");
    /* another major version: the tag's value, line 1 `{"erg": "gpu-target/2",` at 9 */
    target_bad("gpu-target/1", "gpu-target/2", ERG_EVERSION, ":1:9",
               "erg: \"gpu-target/2\": this erg reads gpu-target/1");
    /* truncated after line 6: jansson's place, the end of the text (line 7, before its first
     * byte: jansson's column 0) */
    target_bad("  \"prompt_tokens\": 512, \"n_train\": 7}}\n", "", ERG_EPARSE, ":7:0",
               "malformed JSON: string or '}' expected near end of file");
}

/* A config.json for the serving level, pretty-printed; positions hand-counted on its lines. */
static const char arch_doc[] = "{\n"                                                  /* 1 */
                               "  \"hidden_size\": 64, \"num_attention_heads\": 4,\n" /* 2 */
                               "  \"num_key_value_heads\": 2,\n"                      /* 3 */
                               "  \"num_hidden_layers\": 2, \"vocab_size\": 10,\n"    /* 4 */
                               "  \"intermediate_size\": 128\n"                       /* 5 */
                               "}\n";                                                 /* 6 */

static void arch_bad(const char *from, const char *to, const char *where, const char *detail)
{
    char text[1024], path[160];
    const char *at = strstr(arch_doc, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - arch_doc), arch_doc, to, at + strlen(from));
    write_file("arch.json", text, path, sizeof path);
    erg_serving_arch a;
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_serving_arch_read(path, &a, &diag), ERG_EPARSE);
    char want[300];
    snprintf(want, sizeof want, "%s%s", path, where);
    assert_string_equal(diag.where, want);
    assert_string_equal(diag.detail, detail);
}

static void arch_errors_name_line_and_column(void **state)
{
    (void)state;
    char path[160];
    write_file("arch.json", arch_doc, path, sizeof path);
    erg_serving_arch a;
    assert_int_equal(erg_serving_arch_read(path, &a, NULL), ERG_OK);
    assert_int_equal(a.n_kv_heads, 2);
    assert_int_equal(a.head_dim, 16);
    /* wrong type: line 4 `  "num_hidden_layers": "2", ...`: the value at 24 */
    arch_bad("\"num_hidden_layers\": 2", "\"num_hidden_layers\": \"2\"", ":4:24",
             "num_hidden_layers: must be a positive integer");
    /* out of range: line 2 `  "hidden_size": 0, ...`: 0 at 18 */
    arch_bad("64", "0", ":2:18", "hidden_size: must be a positive integer");
    /* line 3 `  "num_key_value_heads": 3,`: 3 at 26 */
    arch_bad("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", ":3:26",
             "num_key_value_heads: 3 does not divide num_attention_heads 4");
    /* the alias read is the one named: line 2 `  "hidden_size": 64, "n_head": 3,`: "n_head" at
     * 22-29, 3 at 32 */
    arch_bad("\"num_attention_heads\": 4", "\"n_head\": 3", ":2:32",
             "n_head: 3 does not divide hidden_size 64");
    /* missing: the document lacks it, 1:1 */
    arch_bad("\"vocab_size\": 10,", "", ":1:1", "vocab_size: required field is missing");
    arch_bad("\"num_hidden_layers\": 2, ", "", ":1:1",
             "num_hidden_layers: required field is missing (or n_layer)");
    /* invalid: line 3 `  "num_key_value_heads": _layers": 2, ...`: jansson's place, '_' at 26 */
    arch_bad("2,\n  \"num_hidden", "", ":3:26", "malformed JSON: invalid token near '_'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_fits_recover_known_models),
        cmocka_unit_test(prefill_attention_fit_recovers_a_known_model),
        cmocka_unit_test(gemm_map_corrects_measured_cells),
        cmocka_unit_test(serving_fit_recovers_a_known_model),
        cmocka_unit_test(step_terms_are_the_hand_sums),
        cmocka_unit_test(bad_configs_are_refused),
        cmocka_unit_test(target_errors_name_line_and_column),
        cmocka_unit_test(arch_errors_name_line_and_column),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
