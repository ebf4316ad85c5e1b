/* SPDX-License-Identifier: MIT */
/* erg predict eval's comparisons of a target's predictions with public measured files
 * (aiconfigurator, Vidur, ML.ENERGY, BLIS), their summary per level, phase and quantity, and the
 * serving samples of ML.ENERGY rows (also what erg predict fit-serving fits): library logic, so
 * that the CLI only parses and prints (issue 13). The eval/1 document is eval_json.c's. */
#include "erg/predict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the ML.ENERGY GPU name (e.g. "H100") name the kernels' device ("NVIDIA H100 80GB HBM3")? */
static int same_gpu(const char *mle, const char *device)
{
    if (!mle[0] || !device[0])
        return 0;
    const char *p = strstr(device, mle);
    if (!p)
        return 0;
    char next = p[strlen(mle)];
    return next == '\0' || next == ' ' || next == '-';
}

int erg_serving_sample_of_row(const erg_public_table *t, const erg_public_row *r,
                              const erg_serving_arch *a, const erg_op_model *ops,
                              const erg_gpu_kernels *k, double prompt, erg_serving_sample *out,
                              char *why, size_t why_size)
{
    if (!same_gpu(r->device, k->device)) {
        snprintf(why, why_size,
                 "%s x%lld: the target's kernel data are of %s (no kernel data "
                 "for this GPU)",
                 r->device, (long long)r->gpus, k->device[0] ? k->device : "?");
        return 1;
    }
    if (strcmp(t->rows[0].dtype, "bfloat16") != 0) {
        snprintf(why, why_size, "%s weights: the kernel tables and the level-1 model are bf16",
                 r->dtype);
        return 1;
    }
    if (r->ep > 1 || (r->tp > 0 && r->gpus > r->tp)) {
        snprintf(why, why_size,
                 "%lld GPUs with expert parallelism %lld / data parallelism: no "
                 "all-to-all tables",
                 (long long)r->gpus, (long long)r->ep);
        return 1;
    }
    double kv = prompt + (isfinite(r->avg_output_len) ? r->avg_output_len / 2.0 : 0.0);
    erg_diag diag;
    erg_diag_clear(&diag);
    memset(out, 0, sizeof *out);
    if (erg_serving_step(ops, k, a, r->avg_batch, kv, (int)(r->tp > 0 ? r->tp : 1), &out->terms,
                         &diag) != ERG_OK) {
        snprintf(why, why_size, "%.250s", diag.detail);
        return 1;
    }
    out->batch = r->avg_batch;
    out->gpus = (double)r->gpus;
    out->itl_s = r->time_s;
    out->energy_per_token_j = r->energy_j;
    out->power_w = r->power_w;
    out->throughput_tok_s = r->throughput_tok_s;
    return 0;
}

static int add_cmp(erg_eval *e, size_t file, size_t row, const char *level, const char *phase,
                   const char *q, double measured, double predicted)
{
    if (e->n_rows == e->cap_rows) {
        size_t nc = e->cap_rows ? e->cap_rows * 2 : 1024;
        erg_eval_row *p = realloc(e->rows, nc * sizeof *p);
        if (!p)
            return -1;
        e->rows = p;
        e->cap_rows = nc;
    }
    erg_eval_row *x = &e->rows[e->n_rows++];
    x->file = file;
    x->row = row;
    x->level = level;
    x->phase = phase;
    snprintf(x->quantity, sizeof x->quantity, "%s", q);
    x->measured = measured;
    x->predicted = predicted;
    return 0;
}

static int add_skip(erg_eval *e, size_t file, size_t row, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_skip(erg_eval *e, size_t file, size_t row, const char *fmt, ...)
{
    if (e->n_skipped == e->cap_skipped) {
        size_t nc = e->cap_skipped ? e->cap_skipped * 2 : 64;
        erg_eval_skip *p = realloc(e->skipped, nc * sizeof *p);
        if (!p)
            return -1;
        e->skipped = p;
        e->cap_skipped = nc;
    }
    erg_eval_skip *x = &e->skipped[e->n_skipped++];
    x->file = file;
    x->row = row;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->reason, sizeof x->reason, fmt, ap);
    va_end(ap);
    return 0;
}

static void add_assumption(erg_eval *e, const char *text)
{
    for (size_t i = 0; i < e->n_assumptions; i++)
        if (strcmp(e->assumptions[i], text) == 0)
            return;
    if (e->n_assumptions < ERG_EVAL_MAX_ASSUMPTIONS)
        snprintf(e->assumptions[e->n_assumptions++], sizeof e->assumptions[0], "%s", text);
}

#define LEVEL_GEMM "level 1 (GEMM estimator)"

static int gemm_row(erg_eval *e, size_t fi, const erg_op_model *m, erg_dtype dt, int64_t mm,
                    int64_t nn, int64_t kk, size_t line, const char *q, double meas_t,
                    double meas_e)
{
    erg_op_dims d = {.op = ERG_OP_GEMM, .dtype = dt, .m = mm, .n = nn, .k = kk};
    erg_op_prediction p;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_op_model_predict(m, &d, &p, &diag) != ERG_OK)
        return add_skip(e, fi, line, "%s", diag.detail);
    char qn[40];
    snprintf(qn, sizeof qn, "%s%stime_s", q, q[0] ? "." : "");
    if (add_cmp(e, fi, line, LEVEL_GEMM, NULL, qn, meas_t, p.time_s))
        return -1;
    if (isfinite(meas_e) && isfinite(p.energy_j)) {
        snprintf(qn, sizeof qn, "%s%senergy_j", q, q[0] ? "." : "");
        return add_cmp(e, fi, line, LEVEL_GEMM, NULL, qn, meas_e, p.energy_j);
    }
    return 0;
}

/* The comparisons of one file. Returns 0, or -1 on out of memory. */
static int eval_file(erg_eval *e, size_t fi, const erg_public_table *t, const erg_eval_target *tg,
                     const erg_serving_arch *arch, const char *config)
{
    const erg_op_model *m = tg->ops;
    if (t->format == ERG_PUBLIC_MLENERGY_V3) {
        if (!tg->serving || !tg->kernels)
            return add_skip(e, fi, 0,
                            "the target has no serving model (gpu.json: erg predict "
                            "fit-serving)");
        if (!arch)
            return add_skip(e, fi, 0,
                            "no --config: the architecture of %s is needed (give its "
                            "HuggingFace config.json with --config)",
                            t->model_id[0] ? t->model_id : "this file");
        char as[240];
        snprintf(as, sizeof as,
                 "steady-state decode step: KV length = %g assumed prompt tokens + half the "
                 "configuration's avg_output_len; batch = avg_batch_size",
                 tg->serving->prompt_tokens);
        add_assumption(e, as);
        add_assumption(e, "energy per output token = predicted per-GPU power x GPUs x ITL / "
                          "(batch x phi); power linear in the step's bytes/ITL and FLOPs/ITL, "
                          "capped at the highest trained power; phi(batch) = fitted throughput "
                          "/ (batch / ITL), linear in ln batch");
        /* the serving level 3 is fitted on ML.ENERGY files themselves (the committed h100 on
         * every one in shared/data): its figures on them are in-sample, not accuracy */
        snprintf(as, sizeof as,
                 "in-sample: the serving level 3 was fitted on %zu ML.ENERGY configurations "
                 "(the committed h100: every ML.ENERGY file in shared/data), so rows of its "
                 "training files are not held out (held out: scripts/eval-public-loao.sh)",
                 tg->serving->n_train);
        add_assumption(e, as);
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            erg_serving_sample x;
            char why[256];
            if (erg_serving_sample_of_row(t, r, arch, m, tg->kernels, tg->serving->prompt_tokens,
                                          &x, why, sizeof why)) {
                if (add_skip(e, fi, r->line, "%s", why))
                    return -1;
                continue;
            }
            double itl, ept;
            erg_serving_predict(tg->serving, &x.terms, x.batch, x.gpus, &itl, &ept);
            if (add_cmp(e, fi, r->line, "level 3 (serving)", "decode", "itl_s", r->time_s, itl) ||
                add_cmp(e, fi, r->line, "level 3 (serving)", "decode", "energy_per_token_j",
                        r->energy_j, ept))
                return -1;
        }
        return 0;
    }
    if (t->format == ERG_PUBLIC_AIC_GENERATION_ATTENTION || t->format == ERG_PUBLIC_AIC_MOE ||
        t->format == ERG_PUBLIC_AIC_CONTEXT_ATTENTION) {
        int attn = t->format != ERG_PUBLIC_AIC_MOE;
        int pre = t->format == ERG_PUBLIC_AIC_CONTEXT_ATTENTION;
        const char *level = pre    ? "level 1 (prefill-attention kernel)"
                            : attn ? "level 1 (decode-attention kernel)"
                                   : "level 1 (fused-MoE kernel)";
        if (!tg->kernels || !(pre    ? tg->kernels->has_attn_prefill
                              : attn ? tg->kernels->has_attn
                                     : tg->kernels->has_moe))
            return add_skip(e, fi, 0, "the target has no %s kernel model (gpu.json)",
                            pre    ? "prefill-attention"
                            : attn ? "decode-attention"
                                   : "fused-MoE");
        size_t other = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            double p;
            if (attn) {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, "bfloat16") || r->window) {
                    other++;
                    continue;
                }
                if (pre)
                    p = erg_gpu_attn_prefill_s(tg->kernels, (double)r->batch, (double)r->isl,
                                               r->heads, r->kv_heads, r->head_dim, 0);
                else
                    p = erg_gpu_attn_decode_s(tg->kernels, (double)r->batch, (double)r->kv,
                                              r->heads, r->kv_heads, r->head_dim);
                if (r->energy_j > 0 && tg->kernels->has_energy[pre]) {
                    double pe = erg_gpu_attn_energy_j(
                        tg->kernels, pre ? ERG_PHASE_PREFILL : ERG_PHASE_DECODE, (double)r->batch,
                        pre ? (double)r->isl : (double)r->kv, r->heads, r->kv_heads, r->head_dim,
                        0);
                    if (add_cmp(e, fi, r->line, level, pre ? "prefill" : "decode", "energy_j",
                                r->energy_j, pe))
                        return -1;
                }
            } else {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, ERG_GPU_MOE_ROUTING) ||
                    r->ep != 1) {
                    other++;
                    continue;
                }
                p = erg_gpu_moe_s(tg->kernels, (double)r->tokens, r->hidden, r->inter, r->topk,
                                  r->experts, r->tp);
                if (r->energy_j > 0 && tg->kernels->has_energy[2] &&
                    add_cmp(e, fi, r->line, level, NULL, "energy_j", r->energy_j,
                            erg_gpu_moe_energy_j(tg->kernels, (double)r->tokens, r->hidden,
                                                 r->inter, r->topk, r->experts, r->tp)))
                    return -1;
            }
            if (add_cmp(e, fi, r->line, level,
                        pre    ? "prefill"
                        : attn ? "decode"
                               : NULL,
                        "time_s", r->time_s, p))
                return -1;
        }
        if (other)
            return add_skip(e, fi, 0, "%zu rows outside the kernel model (not bf16, %s)", other,
                            attn ? "fp8 KV cache or a sliding window"
                                 : "routing other than " ERG_GPU_MOE_ROUTING
                                   " or expert parallelism");
        return 0;
    }
    if (t->format == ERG_PUBLIC_AIC_GEMM) {
        if (!erg_op_model_has(m, ERG_OP_GEMM))
            return add_skip(e, fi, 0, "the target's level-1 model has no GEMM estimator");
        erg_op_prediction probe;
        erg_op_dims d1 = {.op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = 64, .n = 64, .k = 64};
        erg_dtype want = ERG_DTYPE_BF16;
        if (erg_op_model_predict(m, &d1, &probe, NULL) != ERG_OK)
            want = ERG_DTYPE_FP16;
        size_t other = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            int ok = (want == ERG_DTYPE_BF16 && strcmp(r->dtype, "bfloat16") == 0) ||
                     (want == ERG_DTYPE_FP16 && strcmp(r->dtype, "float16") == 0);
            if (!ok) {
                other++;
                continue;
            }
            if (gemm_row(e, fi, m, want, r->m, r->n, r->k, r->line, "", r->time_s, r->energy_j))
                return -1;
        }
        if (other)
            return add_skip(e, fi, 0, "%zu rows of another dtype than the model's %s", other,
                            erg_dtype_name(want));
        return 0;
    }
    if (t->format == ERG_PUBLIC_VIDUR_MLP) {
        size_t tp = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            if (r->tp != 1) {
                tp++;
                continue;
            }
            int64_t d = r->hidden, hd = r->head_dim;
            struct {
                erg_vidur_op op;
                int64_t mm, nn, kk;
            } g[4] = {{ERG_VIDUR_ATTN_PRE_PROJ, r->tokens, (r->heads + 2 * r->kv_heads) * hd, d},
                      {ERG_VIDUR_ATTN_POST_PROJ, r->tokens, d, r->heads * hd},
                      {ERG_VIDUR_MLP_UP_PROJ, r->tokens, (r->gated ? 2 : 1) * r->inter, d},
                      {ERG_VIDUR_MLP_DOWN_PROJ, r->tokens, d, r->inter}};
            erg_dtype dt = ERG_DTYPE_BF16; /* fp16 and bf16 move the same bytes */
            erg_op_prediction probe;
            erg_op_dims d1 = {.op = ERG_OP_GEMM, .dtype = dt, .m = 64, .n = 64, .k = 64};
            if (erg_op_model_predict(m, &d1, &probe, NULL) != ERG_OK)
                dt = ERG_DTYPE_FP16;
            for (int j = 0; j < 4; j++)
                if (r->op_time_s[g[j].op] > 0 &&
                    gemm_row(e, fi, m, dt, g[j].mm, g[j].nn, g[j].kk, r->line,
                             erg_vidur_op_name(g[j].op), r->op_time_s[g[j].op], NAN))
                    return -1;
            if (r->gated && erg_op_model_has(m, ERG_OP_RMSNORM) &&
                r->op_time_s[ERG_VIDUR_INPUT_LAYERNORM] > 0) {
                erg_op_dims dn = {.op = ERG_OP_RMSNORM,
                                  .dtype = ERG_DTYPE_FP16,
                                  .tokens = r->tokens,
                                  .d_model = d};
                erg_op_prediction p;
                if (erg_op_model_predict(m, &dn, &p, NULL) == ERG_OK &&
                    add_cmp(e, fi, r->line, "level 1 (RMSNorm estimator)", NULL,
                            "input_layernorm.time_s", r->op_time_s[ERG_VIDUR_INPUT_LAYERNORM],
                            p.time_s))
                    return -1;
            }
        }
        if (tp && add_skip(e, fi, 0,
                           "%zu rows with tensor parallelism > 1 (Vidur emulates the per-GPU "
                           "shard; level-1 rows are taken at TP 1)",
                           tp))
            return -1;
        add_assumption(e, "Vidur profiles fp16 and aiconfigurator bf16: the same bytes per "
                          "element, compared as one dtype");
        add_assumption(e, "in-sample: the committed h100 and a100 fitted their RMSNorm on Vidur's "
                          "norms (the input_layernorm rows); their GEMM was fitted on "
                          "aiconfigurator's rows, not on these");
        return 0;
    }
    if (t->format == ERG_PUBLIC_BLIS_TRACES) {
        if (!config)
            return add_skip(e, fi, 0,
                            "no --config: the architecture of the traced model is "
                            "needed (give its HuggingFace config.json with --config)");
        erg_diag diag;
        erg_diag_clear(&diag);
        erg_arch a;
        erg_predictor *p = NULL;
        if (erg_arch_from_hf_config(config, &a, &diag) != ERG_OK ||
            erg_predictor_open(tg->dir, &p, &diag) != ERG_OK) {
            erg_predictor_free(p);
            return add_skip(e, fi, 0, "%.180s", diag.detail);
        }
        add_assumption(e, "BLIS requests: one sequence per forward (the server's concurrent "
                          "batch is not in the trace); decode KV = prompt + completion / 2; "
                          "decode time per token = time_in_model_decode / (completion - 1)");
        static const char *const whole[3] = {"level 1 (whole model)", "levels 1-2 (whole model)",
                                             "levels 1-3 (whole model)"};
        int lv = erg_predictor_level(p);
        const char *level = whole[lv >= 1 && lv <= 3 ? lv - 1 : 0];
        int rc = 0;
        for (size_t i = 0; i < t->n && !rc; i++) {
            const erg_public_row *r = &t->rows[i];
            erg_phase_spec ph = {.phase = ERG_PHASE_PREFILL, .batch = 1, .prompt = r->isl};
            erg_model_prediction mp;
            /* a request that is not compared says why: a skipped line per phase */
            if (!(r->isl > 0) || !(r->prefill_s > 0))
                rc = add_skip(e, fi, r->line, "prefill: %s",
                              r->isl > 0 ? "no time_in_model_prefill (0 s)" : "no prompt tokens");
            else if (erg_predict_model(p, &a, &ph, &mp, &diag) == ERG_OK)
                rc = add_cmp(e, fi, r->line, level, "prefill", "time_s", r->prefill_s,
                             mp.total.time_s);
            else
                rc = add_skip(e, fi, r->line, "prefill: %.180s", diag.detail);
            if (rc)
                break;
            if (r->tokens < 2 || !(r->decode_s > 0)) {
                rc = add_skip(e, fi, r->line, "decode: %s",
                              r->tokens < 2 ? "fewer than 2 completion tokens (no decode step)"
                                            : "no time_in_model_decode (0 s)");
                continue;
            }
            erg_phase_spec pd = {
                .phase = ERG_PHASE_DECODE, .batch = 1, .kv = r->isl + r->tokens / 2};
            if (erg_predict_model(p, &a, &pd, &mp, &diag) == ERG_OK)
                rc = add_cmp(e, fi, r->line, level, "decode", "itl_s",
                             r->decode_s / (double)(r->tokens - 1), mp.total.time_s);
            else
                rc = add_skip(e, fi, r->line, "decode: %.180s", diag.detail);
        }
        erg_predictor_free(p);
        return rc;
    }
    return add_skip(e, fi, 0,
                    "%s: not a file erg predict eval compares (collective tables feed the "
                    "all-reduce kernel models: erg predict import --kernels)",
                    erg_public_format_name(t->format));
}

int erg_eval_file(erg_eval *e, size_t file, const erg_public_table *t, const erg_eval_target *tg,
                  const erg_serving_arch *arch, const char *config, erg_diag *diag)
{
    if (!e || !t || !tg || !tg->ops || !tg->dir)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_eval_file: NULL argument");
    if (eval_file(e, file, t, tg, arch, config))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    return ERG_OK;
}

void erg_eval_release(erg_eval *e)
{
    if (!e)
        return;
    free(e->rows);
    free(e->skipped);
    memset(e, 0, sizeof *e);
}

/* Two comparisons of one file belong to one summary line: same level, phase and quantity. */
static int same_group(const erg_eval_row *a, const erg_eval_row *b)
{
    if (a->file != b->file || strcmp(a->level, b->level) || strcmp(a->quantity, b->quantity))
        return 0;
    if (!a->phase || !b->phase)
        return !a->phase && !b->phase;
    return strcmp(a->phase, b->phase) == 0;
}

static double rel_err(const erg_eval_row *x)
{
    return fabs(x->predicted - x->measured) / x->measured;
}

int erg_eval_summary(const erg_eval *e, size_t file, unsigned worst, erg_eval_group **out,
                     size_t *n_out)
{
    if (!e || !out || !n_out || worst > ERG_EVAL_MAX_WORST)
        return ERG_EINVAL;
    *out = NULL;
    *n_out = 0;
    erg_eval_group *g = NULL;
    size_t ng = 0, cap = 0;
    for (size_t i = 0; i < e->n_rows; i++) {
        const erg_eval_row *c = &e->rows[i];
        if (c->file != file)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_group(&e->rows[j], c);
        if (seen)
            continue;
        if (ng == cap) {
            size_t nc = cap ? 2 * cap : 8;
            erg_eval_group *p = realloc(g, nc * sizeof *p);
            if (!p) {
                free(g);
                return ERG_ENOMEM;
            }
            g = p;
            cap = nc;
        }
        erg_eval_group *x = &g[ng++];
        memset(x, 0, sizeof *x);
        x->first = c;
        double ape = 0, sy = 0, syy = 0, sse = 0;
        size_t nw = 0;
        for (size_t j = i; j < e->n_rows; j++) {
            const erg_eval_row *y = &e->rows[j];
            if (!same_group(y, c))
                continue;
            x->n++;
            ape += rel_err(y);
            sy += y->measured;
            syy += y->measured * y->measured;
            sse += (y->predicted - y->measured) * (y->predicted - y->measured);
            /* the worst rows by relative error, largest first */
            size_t pos = nw;
            while (pos > 0 && rel_err(x->worst[pos - 1]) < rel_err(y))
                pos--;
            if (pos >= worst)
                continue;
            if (nw < worst)
                nw++;
            for (size_t q = nw - 1; q > pos; q--)
                x->worst[q] = x->worst[q - 1];
            x->worst[pos] = y;
        }
        x->n_worst = nw;
        x->mape_pct = 100.0 * ape / (double)x->n;
        double sst = syy - sy * sy / (double)x->n;
        x->r2 = x->n >= 2 && sst > 0 ? 1.0 - sse / sst : (double)NAN;
    }
    *out = g;
    *n_out = ng;
    return ERG_OK;
}
