/* SPDX-License-Identifier: MIT */
/* GPU targets from public data: kernel models fitted on aiconfigurator tables, the terms of a
 * steady-state decode step, and the serving level 3 fitted on ML.ENERGY (docs/predict.md,
 * "GPU targets"). */
#include "erg/predict.h"
#include "core/splitmix.h"
#include "erg/stats.h"

#include <errno.h>
#include <gsl/gsl_multifit.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/json.h"

/* ------------------------------------------------------------------ relative least squares */

#define MAXP 6

/* Minimise Σ ((x_i·c − y_i) / y_i)² over rows with y > 0; columns scaled by their 2-norm.
 * x is n × p row-major. Returns 0, or ERG_ESINGULAR / ERG_ENOMEM. */
static int rel_lsq(const double *x, const double *y, size_t n, size_t p, double *c)
{
    if (n < p)
        return ERG_ESINGULAR;
    gsl_matrix *X = gsl_matrix_alloc(n, p);
    gsl_vector *Y = gsl_vector_alloc(n), *C = gsl_vector_alloc(p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, p);
    int rc = ERG_OK;
    if (!X || !Y || !C || !cov || !w) {
        rc = ERG_ENOMEM;
        goto out;
    }
    double scale[MAXP] = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < p; j++) {
            double v = x[i * p + j] / y[i];
            scale[j] += v * v;
        }
    for (size_t j = 0; j < p; j++)
        scale[j] = scale[j] > 0 ? sqrt(scale[j]) : 1.0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(X, i, j, x[i * p + j] / y[i] / scale[j]);
        gsl_vector_set(Y, i, 1.0);
    }
    double chisq;
    size_t rank;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st = gsl_multifit_linear_tsvd(X, Y, 1e-12, C, cov, &chisq, &rank, w);
    gsl_set_error_handler(old);
    if (st) {
        rc = ERG_ESINGULAR;
        goto out;
    }
    for (size_t j = 0; j < p; j++)
        c[j] = gsl_vector_get(C, j) / scale[j];
out:
    gsl_matrix_free(X);
    gsl_vector_free(Y);
    gsl_vector_free(C);
    gsl_matrix_free(cov);
    if (w)
        gsl_multifit_linear_free(w);
    return rc;
}

/* The held-out rows of every fit here: a seeded 20 % (splitmix64 from seed 42), so the same
 * rows are held out of a kernel's time and power fits. */
static void holdout_mask(unsigned char *test, size_t n)
{
    uint64_t seed = 42;
    for (size_t i = 0; i < n; i++)
        test[i] = erg__splitmix_unit(&seed) < 0.2;
}

/* The training rows (test[i] == 0) packed: xt (nt x p) from the first p columns of x's rows of
 * `stride` values, yt (nt) from y[i * ystride]; returns nt. */
static size_t gather_train(const unsigned char *test, size_t n, const double *x, size_t stride,
                           size_t p, const double *y, size_t ystride, double *xt, double *yt)
{
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        if (!test[i]) {
            memcpy(xt + nt * p, x + i * stride, p * sizeof *xt);
            yt[nt++] = y[i * ystride];
        }
    }
    return nt;
}

/* Fit on a seeded 80 % and report the held-out MAPE; then refit on all rows (stored). */
static int fit_holdout(const double *x, const double *y, size_t n, size_t p, double *c,
                       double *mape_pct)
{
    *mape_pct = NAN;
    unsigned char *test = calloc(n ? n : 1, 1);
    double *xt = malloc((n ? n : 1) * p * sizeof *xt), *yt = malloc((n ? n : 1) * sizeof *yt);
    int rc = ERG_OK;
    if (!test || !xt || !yt) {
        rc = ERG_ENOMEM;
        goto out;
    }
    holdout_mask(test, n);
    size_t nt = gather_train(test, n, x, p, p, y, 1, xt, yt);
    if (nt >= p * 3 && nt < n && rel_lsq(xt, yt, nt, p, c) == ERG_OK) {
        double s = 0;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (!test[i])
                continue;
            double pr = 0;
            for (size_t j = 0; j < p; j++)
                pr += c[j] * x[i * p + j];
            s += fabs(pr - y[i]) / y[i];
            k++;
        }
        *mape_pct = 100.0 * s / (double)k;
    }
    rc = rel_lsq(x, y, n, p, c);
out:
    free(test);
    free(xt);
    free(yt);
    return rc;
}

/* ------------------------------------------------------------------ kernel models */

static double active_experts(double tokens, double k, double e)
{
    if (e <= 0)
        return 0;
    return e * (1.0 - pow(1.0 - k / e, tokens));
}

#define ATTN_P 6
#define MOE_P 5

static void attn_features(double b, double kv, double h, double hkv, double hd, double *f)
{
    f[0] = 1.0;
    f[1] = 2.0 * b * hkv * hd * kv * 2.0;
    f[2] = b * h;
    f[3] = b;
    f[4] = b * hkv;
    f[5] = kv;
}

/* Causal scores of a prompt of n tokens against a window w (<= 0: full attention): query i
 * attends min(i + 1, w) keys, about n·w' − w'²/2 with w' = min(n, w). */
static double causal_scores(double n, double w)
{
    double ww = w > 0 && w < n ? w : n;
    return n * ww - ww * ww / 2.0;
}

static void attn_prefill_features(double b, double n, double h, double hkv, double hd, double w,
                                  double *f)
{
    double s = b * h * causal_scores(n, w), fl = 4.0 * hd * s;
    f[0] = 1.0;
    f[1] = fl;
    f[2] = fl * hd / 128.0;
    f[3] = s;
    f[4] = b * n * (2.0 * h + 2.0 * hkv) * hd * 2.0;
    f[5] = b * h * ceil(n / 128.0);
}

/* a: the experts the T tokens activate, E·(1 − (1 − k/E)^T) when routed at random, in the fit
 * on aiconfigurator's skewed "power_law_1.01" rows and in the prediction of a served batch
 * (whose learned router is not uniform either). The "balanced" rows, which spread the T·k
 * routed tokens evenly over min(E, T·k) experts, over-predicted served MoE steps by 4–15 %. */
static void moe_features(double t, double d, double ff, double k, double a, double tp, double *f)
{
    f[0] = 1.0;
    f[1] = a * 3.0 * d * ff / tp * 2.0;
    f[2] = 6.0 * t * k * d * ff / tp;
    f[3] = a;
    f[4] = t * k;
}

static int gpus_index(int64_t g)
{
    return g == 2 ? 0 : g == 4 ? 1 : g == 8 ? 2 : -1;
}

struct rows {
    double *x, *y;
    size_t n, cap, p;
};

static int rows_push(struct rows *r, const double *f, double y)
{
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 1024;
        double *x = realloc(r->x, nc * r->p * sizeof *x);
        if (!x)
            return ERG_ENOMEM;
        r->x = x;
        double *yy = realloc(r->y, nc * sizeof *yy);
        if (!yy)
            return ERG_ENOMEM;
        r->y = yy;
        r->cap = nc;
    }
    memcpy(r->x + r->n * r->p, f, r->p * sizeof *f);
    r->y[r->n++] = y;
    return ERG_OK;
}

/* ------------------------------------------------------------------ kernel energy */

#define EN_COLS 9
#define POWER_P 6

/* The power model's shape terms: attention log2(head_dim/128) and log2(heads/kv_heads) (the
 * tile shape and the GQA share of K/V loads); MoE log2(top-k) and log2(experts). */
static void attn_shape_terms(double hd, double h, double hkv, double *x)
{
    x[0] = log2(hd / 128.0);
    x[1] = log2(h / hkv);
}

static void moe_shape_terms(double k, double e, double *x)
{
    x[0] = log2(k);
    x[1] = log2(e);
}

/* P = q0 + q1·u + q2·u² + q3·u³ + q4·x1 + q5·x2, u = ln(t̂ / 100 µs), t̂ the kernel's predicted
 * time (at least 1 µs): NVML's power of a loop of short kernels includes the launch gaps, so it
 * rises with the kernel's length towards the sustained level. */
static void kernel_power_features(double t, const double *x, double *g)
{
    double u = log(fmax(t, 1e-6) / 1e-4);
    g[0] = 1.0;
    g[1] = u;
    g[2] = u * u;
    g[3] = u * u * u;
    g[4] = x[0];
    g[5] = x[1];
}

static double power_energy(const double *q, const double *range, double t, const double *x)
{
    double g[POWER_P], pw = 0;
    kernel_power_features(t, x, g);
    for (int i = 0; i < POWER_P; i++)
        pw += q[i] * g[i];
    pw = fmin(fmax(pw, range[0]), range[1]);
    return pw * fmax(t, 1e-6);
}

/* The power model of one kernel on its rows (EN_COLS columns: pt time features, the shape
 * terms at 6 and 7, the measured time at 8; y the measured power): held-out on the same seeded
 * 20 % as fit_holdout, with the time model refitted on the 80 % (so no held-out row informs
 * t̂), as the energy MAPE against power × latency; then refitted on all rows with the stored
 * time model tc. */
static int power_fit_holdout(const struct rows *en, size_t pt, const double *tc,
                             const double *range, double *q, double *mape_pct)
{
    size_t n = en->n;
    *mape_pct = NAN;
    unsigned char *test = calloc(n, 1);
    double *xt = malloc(n * pt * sizeof *xt), *yt = malloc(n * sizeof *yt);
    double *g = malloc(n * POWER_P * sizeof *g), *py = malloc(n * sizeof *py);
    int rc = ERG_OK;
    if (!test || !xt || !yt || !g || !py) {
        rc = ERG_ENOMEM;
        goto out;
    }
    holdout_mask(test, n);
    size_t nt = gather_train(test, n, en->x, EN_COLS, pt, en->x + 8, EN_COLS, xt, yt);
    double ct[MAXP];
    if (nt >= pt * 3 && nt < n && rel_lsq(xt, yt, nt, pt, ct) == ERG_OK) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (test[i])
                continue;
            const double *r = en->x + i * EN_COLS;
            double t = 0;
            for (size_t j = 0; j < pt; j++)
                t += ct[j] * r[j];
            kernel_power_features(t, r + 6, g + m * POWER_P);
            py[m++] = en->y[i];
        }
        double qt[POWER_P];
        if (rel_lsq(g, py, m, POWER_P, qt) == ERG_OK) {
            double sum = 0;
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (!test[i])
                    continue;
                const double *r = en->x + i * EN_COLS;
                double t = 0, e = en->y[i] * r[8];
                for (size_t j = 0; j < pt; j++)
                    t += ct[j] * r[j];
                sum += fabs(power_energy(qt, range, t, r + 6) - e) / e;
                k++;
            }
            *mape_pct = k ? 100.0 * sum / (double)k : (double)NAN;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const double *r = en->x + i * EN_COLS;
        double t = 0;
        for (size_t j = 0; j < pt; j++)
            t += tc[j] * r[j];
        kernel_power_features(t, r + 6, g + i * POWER_P);
        py[i] = en->y[i];
    }
    rc = rel_lsq(g, py, n, POWER_P, q);
out:
    free(test);
    free(xt);
    free(yt);
    free(g);
    free(py);
    return rc;
}

int erg_gpu_kernels_fit(const erg_public_table *const *tabs, size_t n, erg_gpu_kernels *out,
                        erg_diag *diag)
{
    if (!out || (n && !tabs))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_gpu_kernels_fit: NULL argument");
    memset(out, 0, sizeof *out);
    out->attn_mape_pct = out->moe_mape_pct = out->attn_prefill_mape_pct = NAN;
    out->attn_prefill_min_s = INFINITY;
    for (int g = 0; g < 3; g++) {
        out->allreduce_mape_pct[g] = out->energy_mape_pct[g] = NAN;
        out->power_w[g][0] = INFINITY;
        out->power_w[g][1] = 0;
    }
    struct rows attn = {.p = ATTN_P}, moe = {.p = MOE_P}, ar[3] = {{.p = 2}, {.p = 2}, {.p = 2}};
    struct rows pre = {.p = ATTN_P};
    /* energy rows ([0] decode attention, [1] prefill attention, [2] MoE), where NVML power is
     * in the table; a model is fitted only when every row of its kind has one */
    struct rows en[3] = {{.p = EN_COLS}, {.p = EN_COLS}, {.p = EN_COLS}};
    size_t no_power[3] = {0, 0, 0};
    int graph[3] = {0, 0, 0}; /* custom all-reduce (graph) seen: NCCL rows are then ignored */
    for (size_t i = 0; i < n; i++)
        if (tabs[i]->format == ERG_PUBLIC_AIC_COLLECTIVE)
            for (size_t j = 0; j < tabs[i]->n; j++) {
                const erg_public_row *r = &tabs[i]->rows[j];
                int gi = gpus_index(r->gpus);
                if (gi >= 0 && strcmp(r->variant, "vllm_graph") == 0)
                    graph[gi] = 1;
            }
    int rc = ERG_OK;
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        const erg_public_table *t = tabs[i];
        for (size_t j = 0; j < t->n && rc == ERG_OK; j++) {
            const erg_public_row *r = &t->rows[j];
            double f[ATTN_P];
            if (!(r->time_s > 0))
                continue;
            if (!out->device[0])
                snprintf(out->device, sizeof out->device, "%s", r->device);
            int kind = -1; /* energy slot */
            if (t->format == ERG_PUBLIC_AIC_GENERATION_ATTENTION) {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, "bfloat16") ||
                    r->window != 0)
                    continue;
                attn_features((double)r->batch, (double)r->kv, (double)r->heads,
                              (double)r->kv_heads, (double)r->head_dim, f);
                rc = rows_push(&attn, f, r->time_s);
                kind = 0;
            } else if (t->format == ERG_PUBLIC_AIC_CONTEXT_ATTENTION) {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, "bfloat16") ||
                    r->window != 0)
                    continue;
                attn_prefill_features((double)r->batch, (double)r->isl, (double)r->heads,
                                      (double)r->kv_heads, (double)r->head_dim, 0.0, f);
                rc = rows_push(&pre, f, r->time_s);
                out->attn_prefill_min_s = fmin(out->attn_prefill_min_s, r->time_s);
                kind = 1;
            } else if (t->format == ERG_PUBLIC_AIC_MOE) {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, ERG_GPU_MOE_ROUTING) ||
                    r->ep != 1 || r->tp < 1)
                    continue;
                moe_features((double)r->tokens, (double)r->hidden, (double)r->inter,
                             (double)r->topk,
                             active_experts((double)r->tokens, (double)r->topk, (double)r->experts),
                             (double)r->tp, f);
                rc = rows_push(&moe, f, r->time_s);
                kind = 2;
            } else if (t->format == ERG_PUBLIC_AIC_COLLECTIVE) {
                int gi = gpus_index(r->gpus);
                if (gi < 0 || strcmp(r->op, "all_reduce"))
                    continue;
                if (graph[gi] ? strcmp(r->variant, "vllm_graph") != 0 : 0)
                    continue;
                f[0] = 1.0;
                f[1] = (double)r->message_bytes;
                rc = rows_push(&ar[gi], f, r->time_s);
            }
            if (kind >= 0 && rc == ERG_OK) {
                if (r->energy_j > 0 && r->power_w > 0) {
                    /* the time features (MoE: 5, padded), the two shape terms of the power
                     * model, the measured time; y = the measured power */
                    double ef[EN_COLS] = {0};
                    memcpy(ef, f, (kind == 2 ? MOE_P : ATTN_P) * sizeof *f);
                    if (kind == 2)
                        moe_shape_terms((double)r->topk, (double)r->experts, ef + 6);
                    else
                        attn_shape_terms((double)r->head_dim, (double)r->heads, (double)r->kv_heads,
                                         ef + 6);
                    ef[8] = r->time_s;
                    rc = rows_push(&en[kind], ef, r->power_w);
                    out->power_w[kind][0] = fmin(out->power_w[kind][0], r->power_w);
                    out->power_w[kind][1] = fmax(out->power_w[kind][1], r->power_w);
                } else
                    no_power[kind]++;
            }
        }
    }
    if (rc == ERG_OK && attn.n >= 6) {
        rc = fit_holdout(attn.x, attn.y, attn.n, ATTN_P, out->attn, &out->attn_mape_pct);
        out->has_attn = rc == ERG_OK;
        out->attn_n = attn.n;
    }
    if (rc == ERG_OK && pre.n >= 6) {
        rc = fit_holdout(pre.x, pre.y, pre.n, ATTN_P, out->attn_prefill,
                         &out->attn_prefill_mape_pct);
        out->has_attn_prefill = rc == ERG_OK;
        out->attn_prefill_n = pre.n;
    }
    if (!out->has_attn_prefill)
        out->attn_prefill_min_s = NAN;
    if (rc == ERG_OK && moe.n >= 6) {
        rc = fit_holdout(moe.x, moe.y, moe.n, MOE_P, out->moe, &out->moe_mape_pct);
        out->has_moe = rc == ERG_OK;
        out->moe_n = moe.n;
    }
    /* energy = P(t̂)·t̂, the power fitted on the kernel's predicted time and shape */
    double *ec[3] = {out->attn_e, out->attn_prefill_e, out->moe_e};
    const double *tc[3] = {out->attn, out->attn_prefill, out->moe};
    const int has_t[3] = {out->has_attn, out->has_attn_prefill, out->has_moe};
    for (int g = 0; g < 3 && rc == ERG_OK; g++)
        if (en[g].n >= 12 && !no_power[g] && has_t[g]) {
            rc = power_fit_holdout(&en[g], g == 2 ? MOE_P : ATTN_P, tc[g], out->power_w[g], ec[g],
                                   &out->energy_mape_pct[g]);
            out->has_energy[g] = rc == ERG_OK;
        }
    for (int g = 0; g < 3; g++)
        if (!out->has_energy[g])
            out->power_w[g][0] = out->power_w[g][1] = NAN;
    for (int g = 0; g < 3 && rc == ERG_OK; g++)
        if (ar[g].n >= 4) {
            rc = fit_holdout(ar[g].x, ar[g].y, ar[g].n, 2, out->allreduce[g],
                             &out->allreduce_mape_pct[g]);
            out->has_allreduce[g] = rc == ERG_OK;
            out->allreduce_n[g] = ar[g].n;
        }
    free(attn.x);
    free(attn.y);
    free(moe.x);
    free(moe.y);
    free(pre.x);
    free(pre.y);
    for (int g = 0; g < 3; g++) {
        free(ar[g].x);
        free(ar[g].y);
        free(en[g].x);
        free(en[g].y);
    }
    if (rc)
        return erg_diag_set(diag, rc, NULL, "fitting the kernel models: %s", erg_strerror(rc));
    if (!out->has_attn && !out->has_attn_prefill && !out->has_moe && !out->has_allreduce[0] &&
        !out->has_allreduce[1] && !out->has_allreduce[2])
        return erg_diag_set(
            diag, ERG_EINVAL, NULL,
            "no bf16 decode- or prefill-attention, power-law-routed MoE or all-reduce "
            "rows to fit");
    return ERG_OK;
}

double erg_gpu_attn_decode_s(const erg_gpu_kernels *k, double batch, double kv, int64_t heads,
                             int64_t kv_heads, int64_t head_dim)
{
    if (!k || !k->has_attn)
        return NAN;
    double f[ATTN_P], t = 0;
    attn_features(batch, kv, (double)heads, (double)kv_heads, (double)head_dim, f);
    for (int i = 0; i < ATTN_P; i++)
        t += k->attn[i] * f[i];
    return t;
}

double erg_gpu_attn_prefill_s(const erg_gpu_kernels *k, double batch, double prompt, int64_t heads,
                              int64_t kv_heads, int64_t head_dim, int64_t window)
{
    if (!k || !k->has_attn_prefill)
        return NAN;
    double f[ATTN_P], t = 0;
    attn_prefill_features(batch, prompt, (double)heads, (double)kv_heads, (double)head_dim,
                          (double)window, f);
    for (int i = 0; i < ATTN_P; i++)
        t += k->attn_prefill[i] * f[i];
    return isfinite(k->attn_prefill_min_s) ? fmax(t, k->attn_prefill_min_s) : t;
}

double erg_gpu_attn_energy_j(const erg_gpu_kernels *k, erg_phase phase, double batch, double prompt,
                             int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t window)
{
    int g = phase == ERG_PHASE_PREFILL ? 1 : 0;
    if (!k || !k->has_energy[g])
        return NAN;
    double t = g == 1 ? erg_gpu_attn_prefill_s(k, batch, prompt, heads, kv_heads, head_dim, window)
                      : erg_gpu_attn_decode_s(k, batch, prompt, heads, kv_heads, head_dim);
    double x[2];
    attn_shape_terms((double)head_dim, (double)heads, (double)kv_heads, x);
    return power_energy(g == 1 ? k->attn_prefill_e : k->attn_e, k->power_w[g], t, x);
}

double erg_gpu_moe_energy_j(const erg_gpu_kernels *k, double tokens, int64_t d, int64_t f,
                            int64_t top_k, int64_t experts, int64_t tp)
{
    if (!k || !k->has_energy[2])
        return NAN;
    double t = erg_gpu_moe_s(k, tokens, d, f, top_k, experts, tp), x[2];
    moe_shape_terms((double)top_k, (double)experts, x);
    return power_energy(k->moe_e, k->power_w[2], t, x);
}

double erg_gpu_moe_s(const erg_gpu_kernels *k, double tokens, int64_t d, int64_t f, int64_t top_k,
                     int64_t experts, int64_t tp)
{
    if (!k || !k->has_moe || tp < 1)
        return NAN;
    double x[MOE_P], t = 0;
    moe_features(tokens, (double)d, (double)f, (double)top_k,
                 active_experts(tokens, (double)top_k, (double)experts), (double)tp, x);
    for (int i = 0; i < MOE_P; i++)
        t += k->moe[i] * x[i];
    return t;
}

double erg_gpu_allreduce_s(const erg_gpu_kernels *k, int gpus, double bytes)
{
    if (gpus == 1)
        return 0.0;
    int gi = gpus_index(gpus);
    if (!k || gi < 0 || !k->has_allreduce[gi])
        return NAN;
    return k->allreduce[gi][0] + k->allreduce[gi][1] * bytes;
}

/* ------------------------------------------------------------------ config and step */

/* The first of keys present in root into *out (absent: def, or an error when def < 0); *used
 * the key read (keys[0] when none was). Errors name the key first ("hidden_size: ..."), which
 * erg__json_diag_place turns into the file's line and column (an absent one: the document's). */
static int cfg_int(const json_t *root, const char *const *keys, int64_t def, int64_t *out,
                   const char **used, const char *path, erg_diag *diag)
{
    *used = keys[0];
    for (const char *const *k = keys; *k; k++) {
        const json_t *v = json_object_get(root, *k);
        if (!v || json_is_null(v))
            continue;
        *used = *k;
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return erg_diag_set(diag, ERG_EPARSE, path, "%s: must be a positive integer", *k);
        *out = (int64_t)json_integer_value(v);
        return ERG_OK;
    }
    if (def < 0)
        return erg_diag_set(diag, ERG_EPARSE, path, "%s: required field is missing%s%s%s", keys[0],
                            keys[1] ? " (or " : "", keys[1] ? keys[1] : "", keys[1] ? ")" : "");
    *out = def;
    return ERG_OK;
}

static int serving_arch_parse(const json_t *root, const char *path, erg_serving_arch *out,
                              erg_diag *diag)
{
    if (!json_is_object(root))
        return erg_diag_set(diag, ERG_EPARSE, path, "not a JSON object (a config.json)");
    static const char *const k_d[] = {"hidden_size", "n_embd", "d_model", NULL};
    static const char *const k_h[] = {"num_attention_heads", "n_head", NULL};
    static const char *const k_l[] = {"num_hidden_layers", "n_layer", NULL};
    static const char *const k_v[] = {"vocab_size", NULL};
    static const char *const k_ff[] = {"intermediate_size", "n_inner", NULL};
    static const char *const k_kv[] = {"num_key_value_heads", NULL};
    static const char *const k_hd[] = {"head_dim", NULL};
    static const char *const k_e[] = {"num_experts", "num_local_experts", NULL};
    static const char *const k_k[] = {"num_experts_per_tok", "experts_per_token", NULL};
    static const char *const k_fe[] = {"moe_intermediate_size", NULL};
    static const char *const k_sh[] = {"shared_expert_intermediate_size", NULL};
    static const char *const k_nsh[] = {"n_shared_experts", NULL};
    const char *u_d, *u_h, *u_kv, *u_k, *u;
    int rc;
    if ((rc = cfg_int(root, k_d, -1, &out->d_model, &u_d, path, diag)) ||
        (rc = cfg_int(root, k_h, -1, &out->n_heads, &u_h, path, diag)) ||
        (rc = cfg_int(root, k_l, -1, &out->layers, &u, path, diag)) ||
        (rc = cfg_int(root, k_v, -1, &out->vocab, &u, path, diag)) ||
        (rc = cfg_int(root, k_ff, -1, &out->d_ff, &u, path, diag)) ||
        (rc = cfg_int(root, k_kv, out->n_heads, &out->n_kv_heads, &u_kv, path, diag)))
        return rc;
    if (out->d_model % out->n_heads && !json_object_get(root, "head_dim"))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s: %lld does not divide %s %lld", u_h,
                            (long long)out->n_heads, u_d, (long long)out->d_model);
    if ((rc = cfg_int(root, k_hd, out->d_model / out->n_heads, &out->head_dim, &u, path, diag)) ||
        (rc = cfg_int(root, k_e, 0, &out->n_experts, &u, path, diag)) ||
        (rc = cfg_int(root, k_k, 0, &out->top_k, &u_k, path, diag)) ||
        (rc = cfg_int(root, k_fe, out->d_ff, &out->d_ff_expert, &u, path, diag)) ||
        (rc = cfg_int(root, k_sh, 0, &out->d_ff_shared, &u, path, diag)) ||
        (rc = cfg_int(root, k_nsh, 0, &out->n_shared, &u, path, diag)))
        return rc;
    if (out->n_experts == 0)
        out->n_shared = out->d_ff_shared = 0;
    else if (out->d_ff_shared > 0 && out->n_shared == 0)
        out->n_shared = 1; /* Qwen-MoE: one shared expert of shared_expert_intermediate_size */
    else if (out->n_shared > 0 && out->d_ff_shared == 0)
        out->d_ff_shared = out->d_ff_expert; /* DeepSeek: shared experts as wide as routed ones */
    if (out->n_heads % out->n_kv_heads)
        return erg_diag_set(diag, ERG_EPARSE, path, "%s: %lld does not divide %s %lld", u_kv,
                            (long long)out->n_kv_heads, u_h, (long long)out->n_heads);
    if (out->top_k > out->n_experts)
        return erg_diag_set(diag, ERG_EPARSE, path, "%s: top-k %lld is above the %lld experts", u_k,
                            (long long)out->top_k, (long long)out->n_experts);
    return ERG_OK;
}

int erg_serving_arch_read(const char *path, erg_serving_arch *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_serving_arch_read: NULL argument");
    memset(out, 0, sizeof *out);
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc)
        return rc;
    rc = serving_arch_parse(root, path, out, diag);
    json_decref(root);
    if (rc) { /* the error path only: the file is read again to place the value */
        erg__json_diag_place_file(diag, path);
        return rc;
    }
    const char *base = strrchr(path, '/');
    snprintf(out->name, sizeof out->name, "%s", base ? base + 1 : path);
    char *dot = strrchr(out->name, '.');
    if (dot)
        *dot = '\0';
    return ERG_OK;
}

static int gemm_s(const erg_op_model *ops, int64_t m, int64_t n, int64_t k, double *t,
                  erg_diag *diag)
{
    erg_op_dims d = {.op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = m, .n = n, .k = k};
    erg_op_prediction p;
    int rc = erg_op_model_predict(ops, &d, &p, diag);
    if (rc)
        return rc;
    *t += p.time_s;
    return ERG_OK;
}

int erg_serving_step(const erg_op_model *ops, const erg_gpu_kernels *k, const erg_serving_arch *a,
                     double batch, double kv, int tp, erg_serving_terms *out, erg_diag *diag)
{
    if (!ops || !k || !a || !out || !(batch > 0) || !(kv > 0) || tp < 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_serving_step: bad argument");
    memset(out, 0, sizeof *out);
    if (a->n_heads % tp || (a->n_kv_heads % tp && tp % a->n_kv_heads))
        return erg_diag_set(diag, ERG_EINVAL, a->name,
                            "tensor parallelism %d does not divide the %lld heads / %lld KV heads",
                            tp, (long long)a->n_heads, (long long)a->n_kv_heads);
    int64_t b = (int64_t)llround(batch);
    if (b < 1)
        b = 1;
    int64_t h = a->n_heads / tp, hkv = a->n_kv_heads >= tp ? a->n_kv_heads / tp : 1;
    int64_t hd = a->head_dim, d = a->d_model;
    double g = 0;
    int rc;
    if ((rc = gemm_s(ops, b, (h + 2 * hkv) * hd, d, &g, diag)) ||
        (rc = gemm_s(ops, b, d, h * hd, &g, diag)))
        return rc;
    if (a->n_experts > 0) {
        /* the router (B × d → E, replicated) and the shared experts (dense gated FFNs, split tp
         * ways) are GEMMs beside the fused MoE kernel */
        if ((rc = gemm_s(ops, b, a->n_experts, d, &g, diag)))
            return rc;
        for (int64_t i = 0; i < a->n_shared; i++)
            if ((rc = gemm_s(ops, b, 2 * a->d_ff_shared / tp, d, &g, diag)) ||
                (rc = gemm_s(ops, b, d, a->d_ff_shared / tp, &g, diag)))
                return rc;
        out->moe_s = erg_gpu_moe_s(k, (double)b, d, a->d_ff_expert, a->top_k, a->n_experts, tp);
        if (!isfinite(out->moe_s))
            return erg_diag_set(diag, ERG_ENOTSUP, a->name,
                                "the target has no fused-MoE kernel model (aiconfigurator "
                                "moe_perf)");
        out->moe_s *= (double)a->layers;
    } else if ((rc = gemm_s(ops, b, 2 * a->d_ff / tp, d, &g, diag)) ||
               (rc = gemm_s(ops, b, d, a->d_ff / tp, &g, diag)))
        return rc;
    g *= (double)a->layers;
    if ((rc = gemm_s(ops, b, a->vocab / tp, d, &g, diag)))
        return rc;
    out->gemm_s = g;
    /* the work one GPU does in the step, for the power model (bf16: 2 bytes a weight) */
    double bd = (double)b, dd = (double)d, ff;
    double w_attn = dd * (double)((h + 2 * hkv) * hd) + (double)(h * hd) * dd;
    double w_read = w_attn, w_flop = w_attn;
    if (a->n_experts > 0) {
        double e = (double)a->n_experts, kk = (double)a->top_k;
        ff = 3.0 * dd * (double)a->d_ff_expert / (double)tp;
        double sh = 3.0 * dd * (double)a->d_ff_shared / (double)tp * (double)a->n_shared;
        w_read += active_experts(bd, kk, e) * ff + e * dd + sh;
        w_flop += kk * ff + e * dd + sh;
    } else {
        ff = 3.0 * dd * (double)a->d_ff / (double)tp;
        w_read += ff;
        w_flop += ff;
    }
    double lm = (double)(a->vocab / tp) * dd, nl = (double)a->layers;
    out->bytes = 2.0 * (nl * w_read + lm) + nl * bd * kv * 2.0 * (double)(hkv * hd) * 2.0;
    out->flops = 2.0 * bd * (nl * w_flop + lm) + nl * 4.0 * bd * kv * (double)(h * hd);
    out->attn_s = erg_gpu_attn_decode_s(k, batch, kv, h, hkv, hd);
    if (!isfinite(out->attn_s))
        return erg_diag_set(diag, ERG_ENOTSUP, a->name,
                            "the target has no decode-attention kernel model (aiconfigurator "
                            "generation_attention)");
    out->attn_s *= (double)a->layers;
    out->comm_s = erg_gpu_allreduce_s(k, tp, (double)b * (double)d * 2.0);
    if (!isfinite(out->comm_s))
        return erg_diag_set(diag, ERG_ENOTSUP, a->name,
                            "tensor parallelism %d: the target has no all-reduce model for %d "
                            "GPUs",
                            tp, tp);
    out->comm_s *= 2.0 * (double)a->layers;
    out->layers = (double)a->layers;
    return ERG_OK;
}

/* ------------------------------------------------------------------ serving level 3 */

static void itl_features(const erg_serving_terms *t, double *f)
{
    f[0] = t->gemm_s;
    f[1] = t->moe_s;
    f[2] = t->attn_s;
    f[3] = t->comm_s;
    f[4] = t->layers;
}

/* P = p0 + p1·bytes/ITL + p2·flops/ITL: the step's achieved memory and FLOP rates */
static void power_features(const erg_serving_terms *t, double itl, double *f)
{
    f[0] = 1.0;
    f[1] = t->bytes / itl;
    f[2] = t->flops / itl;
}

static double serving_itl(const erg_serving_model *m, const erg_serving_terms *t)
{
    double f[5], itl = 0;
    itl_features(t, f);
    for (int i = 0; i < 5; i++)
        itl += m->itl[i] * f[i];
    return itl;
}

void erg_serving_predict(const erg_serving_model *m, const erg_serving_terms *t, double batch,
                         double gpus, double *itl_s, double *energy_per_token_j)
{
    double itl = serving_itl(m, t), pf[3], p = 0;
    power_features(t, itl, pf);
    for (int i = 0; i < 3; i++)
        p += m->power[i] * pf[i];
    p = fmin(p, m->power_max_w);
    double phi = batch > 0 ? fmin(1.0, m->phi[0] + m->phi[1] * log(batch)) : (double)NAN;
    if (!(phi > 0) || !(itl > 0)) {
        itl = NAN;
        p = NAN;
        phi = NAN;
    }
    if (itl_s)
        *itl_s = itl;
    if (energy_per_token_j)
        *energy_per_token_j = p * gpus * itl / (batch * phi);
}

int erg_serving_fit(const erg_serving_sample *s, size_t n, double prompt_tokens,
                    erg_serving_model *out, erg_diag *diag)
{
    if (!s || !out || n < 6)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "a serving fit needs at least 6 measured configurations (got %zu)", n);
    memset(out, 0, sizeof *out);
    double *x = malloc(n * 5 * sizeof *x), *y = malloc(n * sizeof *y);
    double *px = malloc(n * 3 * sizeof *px), *py = malloc(n * sizeof *py);
    double *fx = malloc(n * 2 * sizeof *fx), *fy = malloc(n * sizeof *fy);
    int rc = ERG_OK;
    if (!x || !y || !px || !py || !fx || !fy) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    int any_moe = 0, any_comm = 0;
    double pmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(s[i].batch > 0) || !(s[i].gpus > 0) || !(s[i].itl_s > 0) || !(s[i].power_w > 0) ||
            !(s[i].terms.bytes > 0) || !(s[i].terms.flops > 0)) {
            rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                              "serving sample %zu: batch, GPUs, ITL, power, bytes and FLOPs must "
                              "be positive",
                              i);
            goto out;
        }
        itl_features(&s[i].terms, x + i * 5);
        y[i] = s[i].itl_s;
        any_moe |= s[i].terms.moe_s > 0;
        any_comm |= s[i].terms.comm_s > 0;
        pmax = fmax(pmax, s[i].power_w / s[i].gpus);
        fx[i * 2] = 1.0;
        fx[i * 2 + 1] = log(s[i].batch);
        fy[i] = s[i].throughput_tok_s > 0 ? s[i].throughput_tok_s / (s[i].batch / s[i].itl_s) : 1.0;
    }
    /* a term no training row has cannot be fitted: it keeps the level-1 scale (1) */
    double cf[5] = {1, 1, 1, 1, 0};
    {
        size_t p = 0;
        size_t idx[5];
        for (size_t j = 0; j < 5; j++)
            if ((j != 1 || any_moe) && (j != 3 || any_comm))
                idx[p++] = j;
        double *xr = malloc(n * p * sizeof *xr);
        if (!xr) {
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < p; j++)
                xr[i * p + j] = x[i * 5 + idx[j]];
        double c[5];
        rc = rel_lsq(xr, y, n, p, c);
        free(xr);
        if (rc) {
            rc = erg_diag_set(diag, rc, NULL, "serving fit (ITL): %s", erg_strerror(rc));
            goto out;
        }
        for (size_t j = 0; j < p; j++)
            cf[idx[j]] = c[j];
    }
    memcpy(out->itl, cf, sizeof cf);
    /* power on the achieved rates at the predicted ITL (what a prediction sees); rows within
     * 2 % of the highest power are at the board's limit, which caps P instead */
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        double pw = s[i].power_w / s[i].gpus, itl = serving_itl(out, &s[i].terms);
        if (pw >= 0.98 * pmax || !(itl > 0))
            continue;
        power_features(&s[i].terms, itl, px + np * 3);
        py[np++] = pw;
    }
    rc = rel_lsq(px, py, np, 3, out->power);
    if (rc) {
        rc = erg_diag_set(diag, rc, NULL, "serving fit (power, %zu rows below the cap): %s", np,
                          erg_strerror(rc));
        goto out;
    }
    out->power_max_w = pmax;
    rc = rel_lsq(fx, fy, n, 2, out->phi);
    if (rc) {
        rc = erg_diag_set(diag, rc, NULL, "serving fit (phi): %s", erg_strerror(rc));
        goto out;
    }

    out->prompt_tokens = prompt_tokens;
    out->n_train = n;
    double et = 0, ee = 0;
    for (size_t i = 0; i < n; i++) {
        double itl, ept;
        erg_serving_predict(out, &s[i].terms, s[i].batch, s[i].gpus, &itl, &ept);
        et += fabs(itl - s[i].itl_s) / s[i].itl_s;
        ee += fabs(ept - s[i].energy_per_token_j) / s[i].energy_per_token_j;
    }
    out->itl_mape_pct = 100.0 * et / (double)n;
    out->energy_mape_pct = 100.0 * ee / (double)n;
out:
    free(x);
    free(y);
    free(px);
    free(py);
    free(fx);
    free(fy);
    return rc;
}

/* ------------------------------------------------------------------ gpu-target/1 files */

static json_t *arr(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, isfinite(v[i]) ? json_real(v[i]) : json_null());
    return a;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int erg_gpu_target_save(const char *path, const erg_gpu_kernels *k, const erg_serving_model *m,
                        erg_diag *diag)
{
    json_t *root = json_object();
    json_object_set_new(root, "erg", json_string("gpu-target/1"));
    if (k) {
        json_t *o = json_object();
        json_object_set_new(o, "device", json_string(k->device));
        if (k->has_attn)
            json_object_set_new(o, "attention_decode",
                                json_pack("{s:o,s:o,s:I,s:o}", "features",
                                          json_pack("[s,s,s,s,s,s]", "1", "kv_bytes", "batch*heads",
                                                    "batch", "batch*kv_heads", "kv_len"),
                                          "coef", arr(k->attn, ATTN_P), "rows",
                                          (json_int_t)k->attn_n, "held_out_mape_pct",
                                          num(k->attn_mape_pct)));
        if (k->has_attn_prefill)
            json_object_set_new(
                o, "attention_prefill",
                json_pack("{s:o,s:o,s:I,s:o,s:o}", "features",
                          json_pack("[s,s,s,s,s,s]", "1", "flops", "flops*head_dim/128",
                                    "causal_scores", "qkvo_bytes", "query_tiles"),
                          "coef", arr(k->attn_prefill, ATTN_P), "rows",
                          (json_int_t)k->attn_prefill_n, "held_out_mape_pct",
                          num(k->attn_prefill_mape_pct), "min_time_s", num(k->attn_prefill_min_s)));
        static const char *const ek[3] = {"attention_decode", "attention_prefill", "moe"};
        const double *ec[3] = {k->attn_e, k->attn_prefill_e, k->moe_e};
        json_t *eo = json_object();
        for (int g = 0; g < 3; g++)
            if (k->has_energy[g])
                json_object_set_new(
                    eo, ek[g],
                    json_pack("{s:o,s:o,s:o,s:o}", "power_features",
                              g == 2 ? json_pack("[s,s,s,s,s,s]", "1", "u", "u^2", "u^3",
                                                 "log2(top_k)", "log2(experts)")
                                     : json_pack("[s,s,s,s,s,s]", "1", "u", "u^2", "u^3",
                                                 "log2(head_dim/128)", "log2(heads/kv_heads)"),
                              "power_coef", arr(ec[g], POWER_P), "power_w", arr(k->power_w[g], 2),
                              "held_out_mape_pct", num(k->energy_mape_pct[g])));
        if (json_object_size(eo))
            json_object_set_new(o, "energy", eo);
        else
            json_decref(eo);
        if (k->has_moe)
            json_object_set_new(o, "moe",
                                json_pack("{s:o,s:o,s:I,s:o}", "features",
                                          json_pack("[s,s,s,s,s]", "1", "active_expert_bytes",
                                                    "flops", "active_experts", "tokens*top_k"),
                                          "coef", arr(k->moe, MOE_P), "rows", (json_int_t)k->moe_n,
                                          "held_out_mape_pct", num(k->moe_mape_pct)));
        json_t *ar = json_object();
        static const char *const gn[3] = {"2", "4", "8"};
        for (int g = 0; g < 3; g++)
            if (k->has_allreduce[g])
                json_object_set_new(ar, gn[g],
                                    json_pack("{s:o,s:I,s:o}", "coef", arr(k->allreduce[g], 2),
                                              "rows", (json_int_t)k->allreduce_n[g],
                                              "held_out_mape_pct", num(k->allreduce_mape_pct[g])));
        json_object_set_new(o, "allreduce", ar);
        json_object_set_new(root, "kernels", o);
    }
    if (m) {
        json_object_set_new(
            root, "serving",
            json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:o}", "itl_terms",
                      json_pack("[s,s,s,s,s]", "gemm_s", "moe_s", "attn_s", "comm_s", "layers"),
                      "itl", arr(m->itl, 5), "power_terms",
                      json_pack("[s,s,s]", "1", "bytes/itl", "flops/itl"), "power",
                      arr(m->power, 3), "power_max_w", num(m->power_max_w), "phi_terms",
                      json_pack("[s,s]", "1", "ln_batch"), "phi", arr(m->phi, 2), "prompt_tokens",
                      num(m->prompt_tokens), "n_train", (json_int_t)m->n_train, "itl_mape_pct",
                      num(m->itl_mape_pct), "energy_mape_pct", num(m->energy_mape_pct)));
    }
    char *text = erg_json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    erg_json_shorten_reals(text);
    json_decref(root);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory serialising");
    size_t len = strlen(text);
    char *t2 = realloc(text, len + 2);
    if (!t2) {
        free(text);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory serialising");
    }
    t2[len] = '\n';
    t2[len + 1] = '\0';
    int rc = erg__write_file_atomic(path, t2, len + 1, diag);
    free(t2);
    return rc;
}

/* An array of n numbers at ctx.key (ctx the object's path from the root): messages name that
 * path, and erg__json_diag_place puts them at the value (a missing array: at ctx's object). */
static int get_arr(const json_t *o, const char *key, double *v, size_t n, const char *path,
                   const char *ctx, erg_diag *diag)
{
    const json_t *a = json_object_get(o, key);
    if (!a)
        return erg_diag_set(diag, ERG_EPARSE, path,
                            "%s.%s: required array of %zu numbers is missing", ctx, key, n);
    if (!json_is_array(a) || json_array_size(a) != n)
        return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s: expected an array of %zu numbers", ctx,
                            key, n);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_number(x))
            return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s[%zu]: expected a number", ctx, key,
                                i);
        v[i] = json_number_value(x);
    }
    return ERG_OK;
}

/* An optional figure (null: not known, NAN); another type is an error naming ctx.key. */
static int get_num(const json_t *o, const char *key, double *out, const char *path, const char *ctx,
                   erg_diag *diag)
{
    *out = NAN;
    return erg__json_number(o, key, 0, out, path, ctx, diag);
}

/* A member that must be an object when present (null: absent). */
static int get_obj(const json_t *o, const char *key, const json_t **out, const char *path,
                   const char *ctx, erg_diag *diag)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return ERG_OK;
    if (!json_is_object(v))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s%s%s: expected an object", ctx,
                            ctx[0] ? "." : "", key);
    *out = v;
    return ERG_OK;
}

/* The members of gpu-target/1; a check that fails names the JSON path of the value, which
 * erg_gpu_target_load turns into the file's line and column. */
static int target_read(const json_t *root, const char *path, erg_gpu_kernels *k,
                       erg_serving_model *m, int *has_serving, erg_diag *diag)
{
    int rc;
    const json_t *tag = json_object_get(root, "erg");
    if (!json_is_object(root))
        return erg_diag_set(diag, ERG_EPARSE, path, "not a gpu-target file (not a JSON object)");
    if (!tag)
        return erg_diag_set(diag, ERG_EPARSE, path,
                            "erg: not a gpu-target file (no \"erg\": \"gpu-target/1\" member)");
    if (!json_is_string(tag) || strncmp(json_string_value(tag), "gpu-target/", 11) != 0)
        return erg_diag_set(diag, ERG_EPARSE, path,
                            "erg: not a gpu-target file (expected \"gpu-target/1\")");
    if (strcmp(json_string_value(tag), "gpu-target/1") != 0)
        return erg_diag_set(diag, ERG_EVERSION, path, "erg: \"%s\": this erg reads gpu-target/1",
                            json_string_value(tag));
    k->attn_mape_pct = k->moe_mape_pct = k->attn_prefill_mape_pct = NAN;
    k->attn_prefill_min_s = NAN;
    for (int g = 0; g < 3; g++) {
        k->energy_mape_pct[g] = NAN;
        k->power_w[g][0] = k->power_w[g][1] = NAN;
        k->allreduce_mape_pct[g] = NAN;
    }
    const json_t *ko, *a;
    if ((rc = get_obj(root, "kernels", &ko, path, "", diag)))
        return rc;
    if (ko) {
        if ((rc = erg__json_string(ko, "device", 0, k->device, sizeof k->device, path, "kernels",
                                   diag)))
            return rc;
        if ((rc = get_obj(ko, "attention_decode", &a, path, "kernels", diag)))
            return rc;
        if (a) {
            if ((rc =
                     get_arr(a, "coef", k->attn, ATTN_P, path, "kernels.attention_decode", diag)) ||
                (rc = get_num(a, "held_out_mape_pct", &k->attn_mape_pct, path,
                              "kernels.attention_decode", diag)))
                return rc;
            k->has_attn = 1;
        }
        if ((rc = get_obj(ko, "attention_prefill", &a, path, "kernels", diag)))
            return rc;
        if (a) {
            if ((rc = get_arr(a, "coef", k->attn_prefill, ATTN_P, path, "kernels.attention_prefill",
                              diag)) ||
                (rc = get_num(a, "held_out_mape_pct", &k->attn_prefill_mape_pct, path,
                              "kernels.attention_prefill", diag)) ||
                (rc = get_num(a, "min_time_s", &k->attn_prefill_min_s, path,
                              "kernels.attention_prefill", diag)))
                return rc;
            k->has_attn_prefill = 1;
        }
        if (json_object_get(ko, "energy_j"))
            return erg_diag_set(diag, ERG_EPARSE, path,
                                "kernels.energy_j: the former energy form (energy linear in the "
                                "time features); refit with erg predict import --kernels");
        const json_t *eo;
        if ((rc = get_obj(ko, "energy", &eo, path, "kernels", diag)))
            return rc;
        static const char *const ek[3] = {"attention_decode", "attention_prefill", "moe"};
        double *ec[3] = {k->attn_e, k->attn_prefill_e, k->moe_e};
        for (int g = 0; g < 3 && eo; g++) {
            const json_t *x;
            char ctx[64];
            snprintf(ctx, sizeof ctx, "kernels.energy.%s", ek[g]);
            if ((rc = get_obj(eo, ek[g], &x, path, "kernels.energy", diag)))
                return rc;
            if (!x)
                continue;
            if ((rc = get_arr(x, "power_coef", ec[g], POWER_P, path, ctx, diag)) ||
                (rc = get_arr(x, "power_w", k->power_w[g], 2, path, ctx, diag)) ||
                (rc = get_num(x, "held_out_mape_pct", &k->energy_mape_pct[g], path, ctx, diag)))
                return rc;
            k->has_energy[g] = 1;
        }
        if ((rc = get_obj(ko, "moe", &a, path, "kernels", diag)))
            return rc;
        if (a) {
            if ((rc = get_arr(a, "coef", k->moe, MOE_P, path, "kernels.moe", diag)) ||
                (rc = get_num(a, "held_out_mape_pct", &k->moe_mape_pct, path, "kernels.moe", diag)))
                return rc;
            k->has_moe = 1;
        }
        const json_t *ar;
        if ((rc = get_obj(ko, "allreduce", &ar, path, "kernels", diag)))
            return rc;
        static const char *const gn[3] = {"2", "4", "8"};
        for (int g = 0; g < 3 && ar; g++) {
            const json_t *x;
            char ctx[64];
            snprintf(ctx, sizeof ctx, "kernels.allreduce.%s", gn[g]);
            if ((rc = get_obj(ar, gn[g], &x, path, "kernels.allreduce", diag)))
                return rc;
            if (!x)
                continue;
            if ((rc = get_arr(x, "coef", k->allreduce[g], 2, path, ctx, diag)) ||
                (rc = get_num(x, "held_out_mape_pct", &k->allreduce_mape_pct[g], path, ctx, diag)))
                return rc;
            k->has_allreduce[g] = 1;
        }
    }
    const json_t *so;
    if ((rc = get_obj(root, "serving", &so, path, "", diag)))
        return rc;
    if (so) {
        /* a count: a double cast to size_t was undefined from 2^64 on */
        json_int_t nt = 0;
        if ((rc = get_arr(so, "itl", m->itl, 5, path, "serving", diag)) ||
            (rc = get_arr(so, "power", m->power, 3, path, "serving", diag)) ||
            (rc = get_arr(so, "phi", m->phi, 2, path, "serving", diag)) ||
            (rc = erg__json_number(so, "power_max_w", ERG_JSON_REQUIRED | ERG_JSON_POSITIVE,
                                   &m->power_max_w, path, "serving", diag)) ||
            (rc = erg__json_number(so, "prompt_tokens", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                                   &m->prompt_tokens, path, "serving", diag)) ||
            (rc = get_num(so, "itl_mape_pct", &m->itl_mape_pct, path, "serving", diag)) ||
            (rc = get_num(so, "energy_mape_pct", &m->energy_mape_pct, path, "serving", diag)) ||
            (rc = erg__json_count(so, "n_train", 0, LLONG_MAX, &nt, path, "serving", diag)))
            return rc;
        m->n_train = (size_t)nt; /* non-negative: checked */
        if (has_serving)
            *has_serving = 1;
    }
    return ERG_OK;
}

int erg_gpu_target_load(const char *path, erg_gpu_kernels *k, erg_serving_model *m,
                        int *has_serving, erg_diag *diag)
{
    if (!path || !k || !m)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_gpu_target_load: NULL argument");
    memset(k, 0, sizeof *k);
    memset(m, 0, sizeof *m);
    if (has_serving)
        *has_serving = 0;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc)
        return rc;
    rc = target_read(root, path, k, m, has_serving, diag);
    json_decref(root);
    if (rc) { /* the error path only: the file is read again to place the value */
        erg__json_diag_place_file(diag, path);
        memset(k, 0, sizeof *k);
        memset(m, 0, sizeof *m);
        if (has_serving)
            *has_serving = 0;
    }
    return rc;
}
