/* SPDX-License-Identifier: MIT */
/* Work lists (HYMELL Sections 3.4-3.6): the level-1 ops of each block, and the blocks of a
 * whole-model forward, per phase. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "erg/predict.h"

static const char *const block_names[ERG_BLOCK_COUNT] = {"attention", "ffn",       "moe",
                                                         "norm",      "embedding", "lm_head"};

const char *erg_block_name(erg_block b)
{
    return (unsigned)b < ERG_BLOCK_COUNT ? block_names[b] : "?";
}

int erg_block_parse(const char *name, erg_block *out)
{
    for (unsigned i = 0; name && out && i < ERG_BLOCK_COUNT; i++)
        if (strcmp(name, block_names[i]) == 0) {
            *out = (erg_block)i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

const char *erg_phase_name(erg_phase p)
{
    return p == ERG_PHASE_PREFILL ? "prefill" : p == ERG_PHASE_DECODE ? "decode" : "?";
}

int erg_phase_parse(const char *name, erg_phase *out)
{
    if (!name || !out)
        return ERG_EINVAL;
    if (strcmp(name, "prefill") == 0)
        *out = ERG_PHASE_PREFILL;
    else if (strcmp(name, "decode") == 0)
        *out = ERG_PHASE_DECODE;
    else
        return ERG_EINVAL;
    return ERG_OK;
}

int64_t erg_block_tokens(const erg_block_spec *s)
{
    if (!s || s->batch <= 0)
        return 0;
    if (s->phase == ERG_PHASE_PREFILL)
        return s->prompt > 0 ? s->batch * s->prompt : 0;
    return s->batch;
}

static int need(erg_diag *diag, const erg_block_spec *s, const char *field, int64_t v)
{
    if (v > 0)
        return ERG_OK;
    return erg_diag_set(diag, ERG_EINVAL, NULL, "%s %s: %s must be a positive integer (got %lld)",
                        erg_phase_name(s->phase), erg_block_name(s->block), field, (long long)v);
}

int erg_block_spec_check(const erg_block_spec *s, erg_diag *diag)
{
    if (!s)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no block");
    if ((unsigned)s->block >= ERG_BLOCK_COUNT)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown block %d", (int)s->block);
    if (s->phase != ERG_PHASE_PREFILL && s->phase != ERG_PHASE_DECODE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown phase %d", (int)s->phase);
    const int64_t all[] = {s->batch,      s->prompt,      s->kv,     s->d_model,   s->n_heads,
                           s->n_kv_heads, s->head_dim,    s->d_ff,   s->n_experts, s->top_k,
                           s->n_shared,   s->d_ff_shared, s->window, s->vocab};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i] < 0)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "%s %s: a size is negative (%lld)",
                                erg_phase_name(s->phase), erg_block_name(s->block),
                                (long long)all[i]);
    int rc;
    if ((rc = need(diag, s, "batch", s->batch)) || (rc = need(diag, s, "d_model", s->d_model)))
        return rc;
    if (s->phase == ERG_PHASE_PREFILL && (rc = need(diag, s, "prompt", s->prompt)))
        return rc;
    if (s->phase == ERG_PHASE_DECODE && s->block == ERG_BLOCK_ATTENTION &&
        (rc = need(diag, s, "kv", s->kv)))
        return rc;
    switch (s->block) {
    case ERG_BLOCK_ATTENTION:
        if ((rc = need(diag, s, "n_heads", s->n_heads)) ||
            (rc = need(diag, s, "n_kv_heads", s->n_kv_heads)) ||
            (rc = need(diag, s, "head_dim", s->head_dim)))
            return rc;
        if (s->n_heads % s->n_kv_heads)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "attention: n_kv_heads %lld does not divide n_heads %lld",
                                (long long)s->n_kv_heads, (long long)s->n_heads);
        break;
    case ERG_BLOCK_FFN:
        return need(diag, s, "d_ff", s->d_ff);
    case ERG_BLOCK_MOE:
        if ((rc = need(diag, s, "d_ff", s->d_ff)) ||
            (rc = need(diag, s, "n_experts", s->n_experts)) ||
            (rc = need(diag, s, "top_k", s->top_k)))
            return rc;
        if (s->top_k > s->n_experts)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "moe: top_k %lld is above n_experts %lld",
                                (long long)s->top_k, (long long)s->n_experts);
        if (s->n_shared > 0)
            return need(diag, s, "d_ff_shared", s->d_ff_shared);
        break;
    case ERG_BLOCK_EMBEDDING:
    case ERG_BLOCK_LM_HEAD:
        return need(diag, s, "vocab", s->vocab);
    case ERG_BLOCK_NORM:
        break;
    }
    return ERG_OK;
}

static void add_op(erg_block_work *w, const char *role, erg_op op, int64_t m, int64_t n, int64_t k,
                   int64_t tokens, int64_t d_model, double count)
{
    if (w->n_ops >= ERG_BLOCK_MAX_OPS || count <= 0)
        return;
    erg_work_op *o = &w->ops[w->n_ops++];
    memset(o, 0, sizeof *o);
    o->dims.op = op;
    o->dims.dtype = w->spec.dtype;
    o->dims.m = m;
    o->dims.n = n;
    o->dims.k = k;
    o->dims.tokens = tokens;
    o->dims.d_model = d_model;
    o->count = count;
    snprintf(o->role, sizeof o->role, "%s", role);
    if (op == ERG_OP_GEMM) {
        double b = erg_dtype_bytes(w->spec.dtype);
        w->gemm_flops += count * 2.0 * (double)m * (double)n * (double)k;
        w->gemm_bytes += count * ((double)(m + n) * (double)k + (double)m * (double)n) * b;
    }
}

static void gemm(erg_block_work *w, const char *role, int64_t m, int64_t n, int64_t k, double count)
{
    add_op(w, role, ERG_OP_GEMM, m, n, k, 0, 0, count);
}

/* An FFN of width f over t tokens (gated: gate, up, down), count times; prefix names the roles. */
static void ffn(erg_block_work *w, const char *pre, int64_t t, int64_t f, double count)
{
    const erg_block_spec *s = &w->spec;
    char role[16];
    double b = erg_dtype_bytes(s->dtype);
    if (s->gated) {
        snprintf(role, sizeof role, "%sgate", pre);
        gemm(w, role, t, f, s->d_model, count);
    }
    snprintf(role, sizeof role, "%sup", pre);
    gemm(w, role, t, f, s->d_model, count);
    snprintf(role, sizeof role, "%sdown", pre);
    gemm(w, role, t, s->d_model, f, count);
    /* activation (≈ 8 FLOPs per element for silu/gelu) and the gating product */
    double elems = count * (double)t * (double)f;
    w->elementwise_flops += elems * (s->gated ? 9.0 : 8.0);
    w->elementwise_bytes += elems * b * (s->gated ? 3.0 : 2.0);
    w->eager_calls += count * (s->gated ? 2.0 : 1.0); /* the activation (and the product) */
}

int erg_block_work_build(const erg_block_spec *s, erg_block_work *out, erg_diag *diag)
{
    int rc = erg_block_spec_check(s, diag);
    if (rc != ERG_OK)
        return rc;
    erg_block_work *w = out;
    memset(w, 0, sizeof *w);
    w->spec = *s;
    const int64_t T = erg_block_tokens(s), d = s->d_model;
    const double b = erg_dtype_bytes(s->dtype), Td = (double)T * (double)d;
    const double residual = 3.0 * Td * b; /* x + f(x): read two, write one */
    switch (s->block) {
    case ERG_BLOCK_ATTENTION: {
        const int64_t nh = s->n_heads, nkv = s->n_kv_heads, hd = s->head_dim;
        gemm(w, "q_proj", T, nh * hd, d, 1);
        gemm(w, "k_proj", T, nkv * hd, d, 1);
        gemm(w, "v_proj", T, nkv * hd, d, 1);
        double scores, kv_len; /* keys each head attends to (the copies' length) */
        if (s->phase == ERG_PHASE_PREFILL) {
            const int64_t P = s->prompt;
            const int64_t Pw = s->window > 0 && s->window < P ? s->window : P;
            const double heads = (double)s->batch * (double)nh;
            gemm(w, "qk", P, Pw, hd, heads);
            if (Pw == P)
                add_op(w, "softmax", ERG_OP_SOFTMAX, 0, 0, 0, P, 0, heads);
            else
                add_op(w, "softmax", ERG_OP_SOFTMAX, P, Pw, 0, 0, 0, heads);
            gemm(w, "pv", P, hd, Pw, heads);
            scores = heads * (double)P * (double)Pw;
            kv_len = (double)P;
        } else {
            /* eager PyTorch: repeat_kv gives every head its own copy of the keys, and the
             * batched matmuls run per sequence and head with the one new query */
            const int64_t L = s->window > 0 && s->window < s->kv ? s->window : s->kv;
            const double heads = (double)s->batch * (double)nh;
            gemm(w, "qk", 1, L, hd, heads);
            add_op(w, "softmax", ERG_OP_SOFTMAX, s->batch * nh, L, 0, 0, 0, 1);
            gemm(w, "pv", 1, hd, L, heads);
            scores = heads * (double)L;
            kv_len = (double)L;
            /* HF DynamicCache: torch.cat of the cache and the new K (and V) reads the cache and
             * writes it whole, one position longer, every step */
            const double cache = (double)s->batch * (double)nkv * (double)hd * b;
            w->kv_copy_bytes += 2.0 * cache * (2.0 * kv_len + 1.0);
            w->kv_copy_footprint += 2.0 * cache * (kv_len + 1.0);
            w->eager_calls += 2; /* the two torch.cat */
        }
        if (nkv != nh) { /* HF repeat_kv: K and V expanded to every head (read, write) */
            const double per_head = (double)s->batch * kv_len * (double)hd * b;
            w->kv_copy_bytes += 2.0 * per_head * (double)(nkv + nh);
            w->kv_copy_footprint += 2.0 * per_head * (double)nh;
            w->eager_calls += 6; /* per K and V: index [:, :, None], expand, reshape */
        }
        /* eager calls besides the GEMMs and the softmax (HF's eager attention, profile_torch.py):
         * view and transpose of q, k, v (6); RoPE on q and k, each x·cos, rotate_half's two
         * slices, neg and cat, ·sin and the sum (14); k.transpose and the scale (2); the
         * context's transpose and reshape (2); the residual add (1); the mask's add is in the
         * softmax op's profile (prefill, above) and decode has none */
        w->eager_calls += 25;
        gemm(w, "o_proj", T, d, nh * hd, 1);
        /* RoPE on q and k (read, write), the KV-cache write, scale and mask of the scores */
        double qk_elems = (double)T * (double)(nh + nkv) * (double)hd;
        w->elementwise_flops += 3.0 * qk_elems + 2.0 * scores + Td;
        w->elementwise_bytes += 2.0 * qk_elems * b +
                                2.0 * (double)T * (double)nkv * (double)hd * b + 2.0 * scores * b +
                                residual;
        break;
    }
    case ERG_BLOCK_FFN:
        ffn(w, "", T, s->d_ff, 1);
        w->elementwise_flops += Td;
        w->elementwise_bytes += residual;
        w->eager_calls += 1; /* the residual add */
        break;
    case ERG_BLOCK_MOE: {
        gemm(w, "router", T, s->n_experts, d, 1);
        /* uniform routing (what random router weights give): each token's k distinct experts
         * are a uniform draw, so an expert is untouched by all T tokens with probability
         * (1 - k/E)^T; tokens that share an expert share its weights (one FFN over them) */
        const double routed = (double)T * (double)s->top_k, E = (double)s->n_experts;
        const double active = fmax(1.0, E * -expm1((double)T * log1p(-(double)s->top_k / E)));
        const int64_t per = (int64_t)fmax(1.0, floor(routed / active + 0.5));
        ffn(w, "expert_", per, s->d_ff, active);
        if (s->n_shared > 0)
            ffn(w, "shared_", T, s->d_ff_shared, (double)s->n_shared);
        /* HF's eager MoE (profile_torch.py's moe): routing (reshape, softmax, top-k, the
         * weights' sum and division, zeros_like, one_hot, permute, sum, compare, nonzero,
         * flatten and the list of hit experts: 14), per active expert the select, where, the
         * tokens' and weights' gathers, unsqueeze, the weighting product and index_add_ (7,
         * besides its FFN's 2); per shared expert its gate's linear, sigmoid, product and add
         * (4); the residual add (1) */
        w->eager_calls += 14.0 + 7.0 * active + 4.0 * (double)s->n_shared + 1.0;
        /* router softmax and top-k over T × n_experts; weighted sum of the k expert outputs */
        double logits = (double)T * (double)s->n_experts;
        w->elementwise_flops += 6.0 * logits + 2.0 * routed * (double)d + Td;
        w->elementwise_bytes += 2.0 * logits * b + 2.0 * routed * (double)d * b + residual;
        break;
    }
    case ERG_BLOCK_NORM:
        add_op(w, "rmsnorm", ERG_OP_RMSNORM, 0, 0, 0, T, d, 1);
        break;
    case ERG_BLOCK_EMBEDDING:
        w->elementwise_bytes += 2.0 * Td * b; /* gather the rows, write the activations */
        w->eager_calls += 1;                  /* F.embedding */
        break;
    case ERG_BLOCK_LM_HEAD:
        gemm(w, "lm_head", T, s->vocab, d, 1);
        break;
    }
    return ERG_OK;
}

static void base_spec(const erg_arch *a, const erg_phase_spec *p, erg_block block,
                      erg_block_spec *s)
{
    memset(s, 0, sizeof *s);
    s->block = block;
    s->phase = p->phase;
    s->batch = p->batch;
    s->prompt = p->phase == ERG_PHASE_PREFILL ? p->prompt : 0;
    s->kv = p->phase == ERG_PHASE_DECODE ? p->kv : 0;
    s->d_model = a->d_model;
    s->dtype = a->dtype;
    s->act = a->act;
}

static void push(erg_model_work *w, const char *name, const erg_block_spec *s, int64_t count)
{
    if (count <= 0 || w->n_blocks >= ERG_MODEL_MAX_BLOCKS)
        return;
    erg_model_block *b = &w->blocks[w->n_blocks++];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->spec = *s;
    b->count = count;
}

int erg_model_work_build(const erg_arch *a, const erg_phase_spec *p, erg_model_work *out,
                         erg_diag *diag)
{
    int rc = erg_arch_check(a, diag);
    if (rc != ERG_OK)
        return rc;
    if (!p || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no phase or no output");
    if (p->phase != ERG_PHASE_PREFILL && p->phase != ERG_PHASE_DECODE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown phase %d", (int)p->phase);
    if (p->batch <= 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "batch: must be a positive integer (got %lld)",
                            (long long)p->batch);
    if (p->phase == ERG_PHASE_PREFILL && p->prompt <= 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "prompt: prefill needs a positive prompt length (got %lld)",
                            (long long)p->prompt);
    if (p->phase == ERG_PHASE_DECODE && p->kv <= 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "kv: decode needs a positive KV-cache length (got %lld)",
                            (long long)p->kv);
    /* beyond 2^40 tokens the work overflows the sizes computed below (the CLI refuses it too) */
    const int64_t max = (int64_t)1 << 40;
    int64_t len = p->phase == ERG_PHASE_PREFILL ? p->prompt : p->kv;
    if (p->batch > max / len)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "batch %lld x %s %lld is more than 2^40 %stokens", (long long)p->batch,
                            p->phase == ERG_PHASE_PREFILL ? "prompt" : "kv", (long long)len,
                            p->phase == ERG_PHASE_PREFILL ? "" : "cached ");
    erg_model_work *w = out;
    memset(w, 0, sizeof *w);
    w->arch = *a;
    w->phase = *p;
    erg_block_spec s;
    base_spec(a, p, ERG_BLOCK_EMBEDDING, &s);
    s.vocab = a->vocab;
    push(w, "embedding", &s, 1);
    base_spec(a, p, ERG_BLOCK_NORM, &s);
    push(w, "norm", &s, (int64_t)a->norms_per_layer * a->n_layers + 1);
    base_spec(a, p, ERG_BLOCK_ATTENTION, &s);
    s.n_heads = a->n_heads;
    s.n_kv_heads = a->n_kv_heads;
    s.head_dim = a->head_dim;
    push(w, "attention", &s, a->layers[ERG_LAYER_FULL_DENSE] + a->layers[ERG_LAYER_FULL_MOE]);
    s.window = a->window;
    push(w, "attention_sliding", &s,
         a->layers[ERG_LAYER_SLIDING_DENSE] + a->layers[ERG_LAYER_SLIDING_MOE]);
    base_spec(a, p, ERG_BLOCK_FFN, &s);
    s.d_ff = a->d_ff;
    s.gated = a->gated;
    push(w, "ffn", &s, a->layers[ERG_LAYER_FULL_DENSE] + a->layers[ERG_LAYER_SLIDING_DENSE]);
    base_spec(a, p, ERG_BLOCK_MOE, &s);
    s.d_ff = a->d_ff_expert;
    s.gated = a->gated;
    s.n_experts = a->n_experts;
    s.top_k = a->top_k;
    s.n_shared = a->n_shared;
    s.d_ff_shared = a->d_ff_shared;
    push(w, "moe", &s, a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE]);
    base_spec(a, p, ERG_BLOCK_LM_HEAD, &s);
    s.vocab = a->vocab;
    if (p->phase == ERG_PHASE_PREFILL && !p->logits_all) {
        s.prompt = 1; /* the last position of each sequence */
    }
    push(w, "lm_head", &s, 1);
    return ERG_OK;
}

int erg_model_work_gemm_flops(const erg_model_work *w, double *flops, erg_diag *diag)
{
    if (!w || !flops)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no work list");
    double f = 0;
    for (size_t i = 0; i < w->n_blocks; i++) {
        erg_block_work bw;
        int rc = erg_block_work_build(&w->blocks[i].spec, &bw, diag);
        if (rc != ERG_OK)
            return rc;
        f += bw.gemm_flops * (double)w->blocks[i].count;
    }
    *flops = f;
    return ERG_OK;
}
