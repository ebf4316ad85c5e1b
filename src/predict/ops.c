/* SPDX-License-Identifier: MIT */
/* Names, dimension checks, features and regimes of HYMELL's level-1 operations (Sections 3.1-3.3).
 */
#include "erg/predict.h"

#include <math.h>
#include <string.h>

static const char *const op_names[ERG_OP_COUNT] = {"rmsnorm", "softmax", "gemm"};
static const char *const dtype_names[] = {"fp32", "bf16", "fp16"};

const char *erg_op_name(erg_op op)
{
    return (unsigned)op < ERG_OP_COUNT ? op_names[op] : "?";
}

int erg_op_parse(const char *name, erg_op *out)
{
    for (unsigned i = 0; i < ERG_OP_COUNT; i++)
        if (name && strcmp(name, op_names[i]) == 0) {
            *out = (erg_op)i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

const char *erg_dtype_name(erg_dtype t)
{
    return (unsigned)t < 3 ? dtype_names[t] : "?";
}

int erg_dtype_parse(const char *name, erg_dtype *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (name && strcmp(name, dtype_names[i]) == 0) {
            *out = (erg_dtype)i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

unsigned erg_dtype_bytes(erg_dtype t)
{
    return t == ERG_DTYPE_FP32 ? 4u : 2u;
}

int erg_op_dims_check(const erg_op_dims *d, erg_diag *diag)
{
    if (!d)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no dimensions");
    if (d->m < 0 || d->n < 0 || d->k < 0 || d->tokens < 0 || d->d_model < 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "%s: dimensions must not be negative",
                            erg_op_name(d->op));
    if ((unsigned)d->dtype > ERG_DTYPE_FP16)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown dtype");
    switch (d->op) {
    case ERG_OP_RMSNORM:
        if (d->tokens <= 0 || d->d_model <= 0)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "rmsnorm needs tokens > 0 and d_model > 0");
        return ERG_OK;
    case ERG_OP_SOFTMAX:
        if (d->tokens > 0)
            return ERG_OK;
        if (d->m > 0 && d->n > 0)
            return ERG_OK;
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "softmax needs tokens > 0 (causal N x N) or m, n > 0 (rows x columns)");
    case ERG_OP_GEMM:
        if (d->m <= 0 || d->n <= 0 || d->k <= 0)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "gemm needs m, n, k > 0");
        return ERG_OK;
    }
    return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown op");
}

unsigned erg_op_feature_count(erg_op op)
{
    static const unsigned counts[ERG_OP_COUNT] = {6, 4, 11};
    return (unsigned)op < ERG_OP_COUNT ? counts[op] : 0;
}

unsigned erg_op_regime_count(erg_op op)
{
    return op == ERG_OP_GEMM ? 5u : ((unsigned)op < ERG_OP_COUNT ? 2u : 0u);
}

const char *erg_op_regime_name(erg_op op, unsigned r)
{
    static const char *const gemm[5] = {"launch_bound", "memory_bound", "balanced_mem",
                                        "balanced_comp", "compute_bound"};
    static const char *const two[2] = {"launch_bound", "memory_bound"};
    if (r == ERG_OP_MAX_REGIMES)
        return "average";
    if (r >= erg_op_regime_count(op))
        return "?";
    return op == ERG_OP_GEMM ? gemm[r] : two[r];
}

static void softmax_rc(const erg_op_dims *d, double *rows, double *cols)
{
    if (d->tokens > 0) {
        *rows = (double)d->tokens;
        *cols = (double)d->tokens;
    } else {
        *rows = (double)d->m;
        *cols = (double)d->n;
    }
}

struct gemm_terms {
    double f, b_in, b_out, ai, pf;
};

static struct gemm_terms gemm_terms(const erg_op_dims *d)
{
    struct gemm_terms g;
    double m = (double)d->m, n = (double)d->n, k = (double)d->k, b = erg_dtype_bytes(d->dtype);
    g.f = 2.0 * m * n * k;
    g.b_in = (m + n) * k * b;
    g.b_out = m * n * b;
    g.ai = g.f / (g.b_in + g.b_out);
    g.pf = m * n / k;
    return g;
}

double erg_gemm_ai(const erg_op_dims *d)
{
    if (erg_op_dims_check(d, NULL) != ERG_OK || d->op != ERG_OP_GEMM)
        return 0.0;
    return gemm_terms(d).ai;
}

unsigned erg_op_features(const erg_op_dims *d, double *x)
{
    if (erg_op_dims_check(d, NULL) != ERG_OK)
        return 0;
    switch (d->op) {
    case ERG_OP_RMSNORM: {
        double nt = (double)d->tokens, dm = (double)d->d_model, l = log2(dm);
        x[0] = nt * dm;
        x[1] = nt * l;
        x[2] = dm;
        x[3] = nt;
        x[4] = l;
        x[5] = 1.0;
        return 6;
    }
    case ERG_OP_SOFTMAX: {
        double r, c;
        softmax_rc(d, &r, &c);
        x[0] = r * c;
        x[1] = r;
        x[2] = log2(c);
        x[3] = 1.0;
        return 4;
    }
    case ERG_OP_GEMM: {
        struct gemm_terms g = gemm_terms(d);
        x[0] = g.pf * g.f;
        x[1] = g.pf * g.b_in;
        x[2] = g.ai * g.b_in;
        x[3] = g.f;
        x[4] = g.pf;
        x[5] = g.ai;
        x[6] = g.b_out;
        x[7] = g.b_in;
        x[8] = log10(g.f);
        x[9] = 1.0 / g.pf;
        x[10] = 1.0;
        return 11;
    }
    }
    return 0;
}

unsigned erg_gemm_cache_features(const erg_op_dims *d, double cache_bytes, double *x)
{
    if (erg_op_dims_check(d, NULL) != ERG_OK || d->op != ERG_OP_GEMM)
        return 0;
    double m = (double)d->m, n = (double)d->n, k = (double)d->k, b = erg_dtype_bytes(d->dtype);
    double foot = (m * k + n * k + m * n) * b, w = n * k * b;
    int cached = foot <= cache_bytes;
    x[0] = 2.0 * m * n * k;
    x[1] = cached ? w : 0.0;
    x[2] = cached ? 0.0 : w;
    x[3] = m * k * b;
    x[4] = m * n * b;
    x[5] = 1.0;
    return ERG_GEMM_CACHE_FEATURES;
}

double erg_op_split_value(const erg_op_dims *d)
{
    if (erg_op_dims_check(d, NULL) != ERG_OK)
        return 0.0;
    switch (d->op) {
    case ERG_OP_RMSNORM:
        return (double)d->tokens * (double)d->d_model;
    case ERG_OP_SOFTMAX: {
        double r, c;
        softmax_rc(d, &r, &c);
        return sqrt(r * c);
    }
    case ERG_OP_GEMM:
        return gemm_terms(d).f;
    }
    return 0.0;
}

void erg_op_thresholds_paper(erg_op_thresholds *t)
{
    /* HYMELL Section 5.2: th_RMS = 2.5e6, th_Softmax = 1024, F_thr = 8.39e6 FLOPs,
     * AI_low = 81.92, AI_mid = 166.05, AI_high = 288.91 FLOP/byte (H100 NVL, bf16). */
    t->rms_nd = 2.5e6;
    t->softmax_n = 1024.0;
    t->gemm_f = 8.39e6;
    t->gemm_ai[0] = 81.92;
    t->gemm_ai[1] = 166.05;
    t->gemm_ai[2] = 288.91;
}

unsigned erg_op_regime(const erg_op_dims *d, const erg_op_thresholds *t)
{
    double v = erg_op_split_value(d);
    switch (d->op) {
    case ERG_OP_RMSNORM:
        return v < t->rms_nd ? 0u : 1u;
    case ERG_OP_SOFTMAX:
        return v < t->softmax_n ? 0u : 1u;
    case ERG_OP_GEMM: {
        if (v < t->gemm_f)
            return 0;
        double ai = erg_gemm_ai(d);
        if (ai < t->gemm_ai[0])
            return 1;
        if (ai < t->gemm_ai[1])
            return 2;
        if (ai < t->gemm_ai[2])
            return 3;
        return 4;
    }
    }
    return 0;
}
