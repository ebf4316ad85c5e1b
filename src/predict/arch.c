/* SPDX-License-Identifier: MIT */
/* erg_arch: names, invariants, sweep edits and parameter counts. */
#include <stdio.h>
#include <string.h>

#include "erg/predict.h"

static const char *const act_names[] = {"silu", "gelu", "gelu_tanh", "relu"};

const char *erg_act_name(erg_act a)
{
    return (unsigned)a < 4 ? act_names[a] : "?";
}

int erg_act_parse(const char *name, erg_act *out)
{
    static const struct {
        const char *name;
        erg_act act;
    } alias[] = {{"silu", ERG_ACT_SILU},           {"swish", ERG_ACT_SILU},
                 {"swiglu", ERG_ACT_SILU},         {"gelu", ERG_ACT_GELU},
                 {"quick_gelu", ERG_ACT_GELU},     {"gelu_tanh", ERG_ACT_GELU_TANH},
                 {"gelu_new", ERG_ACT_GELU_TANH},  {"gelu_pytorch_tanh", ERG_ACT_GELU_TANH},
                 {"gelu_fast", ERG_ACT_GELU_TANH}, {"relu", ERG_ACT_RELU}};
    if (!name || !out)
        return ERG_EINVAL;
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strcmp(name, alias[i].name) == 0) {
            *out = alias[i].act;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

static int bad(erg_diag *diag, const char *field, long long v, const char *why)
{
    return erg_diag_set(diag, ERG_EINVAL, NULL, "%s: %s (got %lld)", field, why, v);
}

int erg_arch_check(const erg_arch *a, erg_diag *diag)
{
    if (!a)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no architecture");
    const struct {
        const char *name;
        int64_t v;
    } pos[] = {{"n_layers", a->n_layers},     {"d_model", a->d_model},   {"n_heads", a->n_heads},
               {"n_kv_heads", a->n_kv_heads}, {"head_dim", a->head_dim}, {"vocab", a->vocab}};
    for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
        if (pos[i].v <= 0)
            return bad(diag, pos[i].name, (long long)pos[i].v, "must be a positive integer");
    int64_t sum = 0;
    for (int k = 0; k < ERG_LAYER_KINDS; k++) {
        if (a->layers[k] < 0)
            return bad(diag, "layers", (long long)a->layers[k], "a layer count is negative");
        sum += a->layers[k];
    }
    if (sum != a->n_layers)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "layers: the layer kinds sum to %lld, not n_layers %lld",
                            (long long)sum, (long long)a->n_layers);
    if (a->n_heads % a->n_kv_heads)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "n_kv_heads: %lld KV heads do not divide %lld heads",
                            (long long)a->n_kv_heads, (long long)a->n_heads);
    int64_t dense = a->layers[ERG_LAYER_FULL_DENSE] + a->layers[ERG_LAYER_SLIDING_DENSE];
    int64_t moe = a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE];
    int64_t sliding = a->layers[ERG_LAYER_SLIDING_DENSE] + a->layers[ERG_LAYER_SLIDING_MOE];
    if (dense && a->d_ff <= 0)
        return bad(diag, "d_ff", (long long)a->d_ff, "dense layers need a positive FFN width");
    if (moe) {
        if (a->n_experts <= 0)
            return bad(diag, "n_experts", (long long)a->n_experts, "MoE layers need experts");
        if (a->top_k <= 0 || a->top_k > a->n_experts)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "top_k: must be in 1..n_experts = %lld (got %lld)",
                                (long long)a->n_experts, (long long)a->top_k);
        if (a->d_ff_expert <= 0)
            return bad(diag, "d_ff_expert", (long long)a->d_ff_expert, "must be positive");
        if (a->n_shared < 0)
            return bad(diag, "n_shared", (long long)a->n_shared, "must not be negative");
        if (a->n_shared > 0 && a->d_ff_shared <= 0)
            return bad(diag, "d_ff_shared", (long long)a->d_ff_shared,
                       "shared experts need a positive width");
    }
    if (sliding && a->window <= 0)
        return bad(diag, "window", (long long)a->window, "sliding layers need a positive window");
    if (a->window < 0)
        return bad(diag, "window", (long long)a->window, "must not be negative");
    if (a->norms_per_layer < 0)
        return bad(diag, "norms_per_layer", a->norms_per_layer, "must not be negative");
    if (a->dtype != ERG_DTYPE_FP32 && a->dtype != ERG_DTYPE_BF16 && a->dtype != ERG_DTYPE_FP16)
        return bad(diag, "dtype", (long long)a->dtype, "unknown dtype");
    return ERG_OK;
}

/* Scale the layer kinds to n layers, keeping their shares (largest remainders). */
static void set_layers(erg_arch *a, int64_t n)
{
    int64_t old = a->n_layers > 0 ? a->n_layers : 1, got = 0;
    double rem[ERG_LAYER_KINDS];
    for (int k = 0; k < ERG_LAYER_KINDS; k++) {
        double x = (double)a->layers[k] * (double)n / (double)old;
        a->layers[k] = (int64_t)x;
        rem[k] = x - (double)a->layers[k];
        got += a->layers[k];
    }
    if (a->n_layers <= 0)
        a->layers[ERG_LAYER_FULL_DENSE] = n, got = n;
    while (got < n) {
        int best = 0;
        for (int k = 1; k < ERG_LAYER_KINDS; k++)
            if (rem[k] > rem[best])
                best = k;
        a->layers[best]++;
        rem[best] = -1;
        got++;
    }
    a->n_layers = n;
}

int erg_arch_set(erg_arch *a, const char *key, int64_t v, erg_diag *diag)
{
    if (!a || !key)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no architecture or key");
    if (v < 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "%s: must not be negative (got %lld)", key,
                            (long long)v);
    int derived_hd = a->n_heads > 0 && a->head_dim * a->n_heads == a->d_model;
    if (strcmp(key, "heads") == 0) {
        if (v == 0 || a->d_model % v)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "heads: %lld does not divide d_model %lld",
                                (long long)v, (long long)a->d_model);
        a->n_heads = a->n_kv_heads = v;
        a->head_dim = a->d_model / v;
    } else if (strcmp(key, "d_model") == 0) {
        a->d_model = v;
        if (derived_hd)
            a->head_dim = v / a->n_heads;
    } else if (strcmp(key, "n_heads") == 0) {
        a->n_heads = v;
        if (derived_hd && v > 0)
            a->head_dim = a->d_model / v;
    } else if (strcmp(key, "n_kv_heads") == 0)
        a->n_kv_heads = v;
    else if (strcmp(key, "head_dim") == 0)
        a->head_dim = v;
    else if (strcmp(key, "d_ff") == 0)
        a->d_ff = v;
    else if (strcmp(key, "d_ff_expert") == 0)
        a->d_ff_expert = v;
    else if (strcmp(key, "n_layers") == 0)
        set_layers(a, v);
    else if (strcmp(key, "n_experts") == 0)
        a->n_experts = v;
    else if (strcmp(key, "top_k") == 0)
        a->top_k = v;
    else if (strcmp(key, "n_shared") == 0)
        a->n_shared = v;
    else if (strcmp(key, "d_ff_shared") == 0)
        a->d_ff_shared = v;
    else if (strcmp(key, "window") == 0)
        a->window = v;
    else if (strcmp(key, "vocab") == 0)
        a->vocab = v;
    else
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "unknown architecture key '%s' (d_model, n_heads, n_kv_heads, "
                            "head_dim, heads, d_ff, d_ff_expert, n_layers, n_experts, top_k, "
                            "n_shared, d_ff_shared, window, vocab)",
                            key);
    return ERG_OK;
}

double erg_arch_memory_bytes(const erg_arch *a, int64_t batch, int64_t tokens, double *kv_bytes)
{
    if (kv_bytes)
        *kv_bytes = 0;
    if (!a)
        return 0;
    double b = (double)erg_dtype_bytes(a->dtype);
    double full = (double)(a->layers[ERG_LAYER_FULL_DENSE] + a->layers[ERG_LAYER_FULL_MOE]);
    double sliding =
        (double)(a->layers[ERG_LAYER_SLIDING_DENSE] + a->layers[ERG_LAYER_SLIDING_MOE]);
    double t = (double)(tokens > 0 ? tokens : 0);
    double ts = a->window > 0 && (double)a->window < t ? (double)a->window : t;
    /* K and V: n_kv_heads x head_dim elements each, per cached token and layer */
    double kv = 2 * (double)a->n_kv_heads * (double)a->head_dim * b *
                (double)(batch > 0 ? batch : 0) * (full * t + sliding * ts);
    if (kv_bytes)
        *kv_bytes = kv;
    return erg_arch_params(a, NULL) * b + kv;
}

double erg_arch_params(const erg_arch *a, double *active)
{
    if (!a)
        return 0;
    double d = (double)a->d_model, hd = (double)a->head_dim;
    double attn = d * (double)a->n_heads * hd * 2 + 2 * d * (double)a->n_kv_heads * hd;
    double mats = a->gated ? 3 : 2;
    double dense = mats * d * (double)a->d_ff;
    double expert = mats * d * (double)a->d_ff_expert;
    double shared = (double)a->n_shared * mats * d * (double)a->d_ff_shared;
    double router = d * (double)a->n_experts;
    double moe_all = router + (double)a->n_experts * expert + shared;
    double moe_act = router + (double)a->top_k * expert + shared;
    double nd = (double)(a->layers[ERG_LAYER_FULL_DENSE] + a->layers[ERG_LAYER_SLIDING_DENSE]);
    double nm = (double)(a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE]);
    double norms = (double)a->norms_per_layer * d * (double)a->n_layers + d;
    double emb = (double)a->vocab * d * (a->tied_embeddings ? 1 : 2);
    double common = (double)a->n_layers * attn + nd * dense + norms + emb;
    if (active)
        *active = common + nm * moe_act;
    return common + nm * moe_all;
}
