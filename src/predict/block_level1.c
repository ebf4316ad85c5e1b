/* SPDX-License-Identifier: MIT */
/* Level 1 of a block: the sum of its ops' level-1 predictions plus the roofline cost of the
 * element-wise work (HYMELL Sections 3.4-3.5: the inputs of the block MLPs). */
#include <math.h>
#include <string.h>

#include "erg/predict.h"
#include "predict/model.h"

/* Relative sd of a normal error whose mean absolute value is mape_pct (erg_op_model_signature). */
static double rel_sd(double mape_pct)
{
    return isfinite(mape_pct) ? mape_pct / 100 * sqrt(M_PI / 2) : 0;
}

/* Predict op d; when the model has no estimator for d's dtype, the dtype it was fitted on
 * (a CPU model fitted in fp32 answers a bf16 config's ops: the ops' dims are what matter). */
static int predict_op(const erg_op_model *m, const erg_op_dims *d, erg_op_prediction *p)
{
    int rc = erg_op_model_predict(m, d, p, NULL);
    for (unsigned t = 0; rc == ERG_ENOTSUP && t < 3; t++) {
        erg_op_dims e = *d;
        e.dtype = (erg_dtype)t;
        if (e.dtype != d->dtype)
            rc = erg_op_model_predict(m, &e, p, NULL);
    }
    return rc;
}

/* The attention core (QK^T, softmax, ·V, the scale and mask of the scores) of a GPU target as
 * its measured fused kernel (flash attention; erg_gpu_attn_prefill_s / erg_gpu_attn_decode_s):
 * adds its time, energy and variances, and takes the scores' element-wise work, which never
 * leaves the kernel, out of w. ERG_ENOTSUP when the target has no kernel for this phase. */
static int fused_attention(const erg_op_model *m, const erg_block_spec *s, double pw,
                           erg_block_work *w, double *t, double *e, double *vt, double *ve)
{
    const erg_gpu_kernels *k = m->kernels;
    int pre = s->phase == ERG_PHASE_PREFILL;
    double len = pre ? (double)s->prompt : (double)s->kv, ti, mape;
    double eff = s->window > 0 && (double)s->window < len ? (double)s->window : len;
    if (pre) {
        ti = erg_gpu_attn_prefill_s(k, (double)s->batch, len, s->n_heads, s->n_kv_heads,
                                    s->head_dim, s->window);
        mape = k->attn_prefill_mape_pct;
    } else {
        ti =
            erg_gpu_attn_decode_s(k, (double)s->batch, eff, s->n_heads, s->n_kv_heads, s->head_dim);
        mape = k->attn_mape_pct;
    }
    if (!(ti > 0) || !isfinite(ti))
        return ERG_ENOTSUP;
    double ei = erg_gpu_attn_energy_j(k, s->phase, (double)s->batch, pre ? len : eff, s->n_heads,
                                      s->n_kv_heads, s->head_dim, s->window);
    int g = pre ? 1 : 0;
    double me = k->energy_mape_pct[g];
    if (!isfinite(ei)) { /* time-only table: the target's mean power, as its roofline does */
        ei = pw * ti;
        me = mape;
    }
    double scores = pre ? (double)s->batch * (double)s->n_heads * len * eff
                        : (double)s->batch * (double)s->n_heads * eff;
    w->elementwise_flops = fmax(w->elementwise_flops - 2.0 * scores, 0.0);
    w->elementwise_bytes =
        fmax(w->elementwise_bytes - 2.0 * scores * erg_dtype_bytes(s->dtype), 0.0);
    *t += ti;
    *e += ei;
    *vt += (ti * rel_sd(mape)) * (ti * rel_sd(mape));
    *ve += (ei * rel_sd(me)) * (ei * rel_sd(me));
    return ERG_OK;
}

/* The routed experts of a MoE block as the target's measured fused-MoE kernel (vLLM's
 * fused_experts: gate and up, activation and gating, down with the routing weights, the sum of
 * the k outputs; aiconfigurator's moe_perf rows, erg_gpu_moe_s / erg_gpu_moe_energy_j): adds
 * its time, energy and variances, and takes the experts' element-wise work, which never leaves
 * the kernel, out of w. The router GEMM, its softmax and top-k, the shared experts and the
 * residual add stay. One GPU (TP 1). ERG_ENOTSUP when the target has no fused-MoE model or the
 * experts are not gated (the kernel is a gated FFN's). */
static int fused_moe(const erg_op_model *m, const erg_block_spec *s, double pw, erg_block_work *w,
                     double *t, double *e, double *vt, double *ve)
{
    const erg_gpu_kernels *k = m->kernels;
    if (!k->has_moe || !s->gated)
        return ERG_ENOTSUP;
    const double tokens = (double)erg_block_tokens(s);
    double ti = erg_gpu_moe_s(k, tokens, s->d_model, s->d_ff, s->top_k, s->n_experts, 1);
    if (!(ti > 0) || !isfinite(ti))
        return ERG_ENOTSUP;
    double ei = erg_gpu_moe_energy_j(k, tokens, s->d_model, s->d_ff, s->top_k, s->n_experts, 1);
    double me = k->energy_mape_pct[2];
    if (!isfinite(ei)) { /* time-only table: the target's mean power, as its roofline does */
        ei = pw * ti;
        me = k->moe_mape_pct;
    }
    /* the element-wise work erg_block_work_build counted for the routed experts: activation and
     * gating of every active expert's tokens (its "expert_up" op: count experts of m tokens ×
     * d_ff), and the weighted sum of each token's top_k outputs */
    const double b = erg_dtype_bytes(s->dtype), routed = tokens * (double)s->top_k;
    double elems = 0;
    for (size_t i = 0; i < w->n_ops; i++)
        if (!strcmp(w->ops[i].role, "expert_up"))
            elems = w->ops[i].count * (double)w->ops[i].dims.m * (double)w->ops[i].dims.n;
    w->elementwise_flops =
        fmax(w->elementwise_flops - 9.0 * elems - 2.0 * routed * (double)s->d_model, 0.0);
    w->elementwise_bytes =
        fmax(w->elementwise_bytes - 3.0 * elems * b - 2.0 * routed * (double)s->d_model * b, 0.0);
    *t += ti;
    *e += ei;
    *vt += (ti * rel_sd(k->moe_mape_pct)) * (ti * rel_sd(k->moe_mape_pct));
    *ve += (ei * rel_sd(me)) * (ei * rel_sd(me));
    return ERG_OK;
}

/* The cache-aware GEMM form's cost of a byte of a GEMM's weight matrix read from cache (hit)
 * and streamed from memory (miss), time and energy, and the cache size it was fitted with: the
 * target's measured memory rates. 0 when the GEMM estimator has another form. */
static int gemm_byte_costs(const erg_op_model *m, double *cache_bytes, double t[2], double e[2])
{
    const struct erg__op_est *g = &m->op[ERG_OP_GEMM];
    if (!g->present || g->form != ERG_GEMM_FORM_CACHE || !(g->cache_bytes > 0))
        return 0;
    const struct erg__lsq *lt = erg__regime_fit(g, 0, 0);
    const struct erg__lsq *le = g->has_energy ? erg__regime_fit(g, 0, 1) : NULL;
    if (!lt)
        return 0;
    /* features: F, NK·b cached, NK·b streamed, MK·b, MN·b, 1 */
    t[0] = fmax(lt->w[1], 0.0);
    t[1] = fmax(lt->w[2], t[0]);
    e[0] = le ? fmax(le->w[1], 0.0) : (double)NAN;
    e[1] = le ? fmax(le->w[2], e[0]) : (double)NAN;
    *cache_bytes = g->cache_bytes;
    return 1;
}

int erg_block_level1(const erg_op_model *m, const erg_block_spec *s, erg_estimate *out,
                     erg_diag *diag)
{
    if (!m || !s || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no model, block or output");
    erg_block_work w;
    int rc = erg_block_work_build(s, &w, diag);
    if (rc != ERG_OK)
        return rc;
    double peak, bw, pw;
    erg_op_model_roofline(m, &peak, &bw, &pw);
    double t = 0, e = 0, vt = 0, ve = 0;
    int fused = 0, fused_experts = 0;
    if (s->block == ERG_BLOCK_ATTENTION && m->kernels &&
        (rc = fused_attention(m, s, pw, &w, &t, &e, &vt, &ve)) == ERG_OK)
        fused = 1;
    if (s->block == ERG_BLOCK_MOE && m->kernels &&
        fused_moe(m, s, pw, &w, &t, &e, &vt, &ve) == ERG_OK)
        fused = fused_experts = 1;
    double cache_bytes = 0, bt[2] = {0, 0}, be[2] = {0, 0};
    int cache_form = gemm_byte_costs(m, &cache_bytes, bt, be);
    if (!fused && w.kv_copy_bytes > 0) {
        /* eager attention's KV copies (a fused kernel makes none): at the rate the GEMM fit
         * measured for a byte of a cached or streamed weight matrix, else the roofline */
        int hit = w.kv_copy_footprint <= cache_bytes;
        double tc = cache_form ? w.kv_copy_bytes * bt[!hit] : bw > 0 ? w.kv_copy_bytes / bw : 0;
        double ec = cache_form && isfinite(be[!hit]) ? w.kv_copy_bytes * be[!hit] : pw * tc;
        t += tc;
        e += ec;
    }
    /* the operands of all the block's GEMMs together (weights, heads' keys, experts) */
    double block_foot = 0;
    for (size_t i = 0; cache_form && i < w.n_ops; i++) {
        const erg_op_dims *d = &w.ops[i].dims;
        if (d->op == ERG_OP_GEMM)
            block_foot += w.ops[i].count *
                          ((double)d->m * (double)d->k + (double)d->n * (double)d->k +
                           (double)d->m * (double)d->n) *
                          erg_dtype_bytes(d->dtype);
    }
    for (size_t i = 0; i < w.n_ops; i++) {
        const erg_work_op *o = &w.ops[i];
        if (fused &&
            (!strcmp(o->role, "qk") || !strcmp(o->role, "softmax") || !strcmp(o->role, "pv")))
            continue;
        if (fused_experts && !strncmp(o->role, "expert_", 7))
            continue;
        erg_op_prediction p;
        double ti, ei, rt = 0, re = 0;
        rc = predict_op(m, &o->dims, &p);
        if (rc == ERG_OK) {
            ti = p.time_s;
            ei = p.energy_j;
            erg_op_validation v;
            if (erg_op_model_validation(m, o->dims.op, p.regime, &v) == ERG_OK) {
                int roof = p.method == ERG_PREDICT_ROOFLINE;
                rt = rel_sd(roof ? v.roof_time_mape_pct : v.time_mape_pct);
                re = rel_sd(roof ? v.roof_energy_mape_pct : v.energy_mape_pct);
            }
        } else if (rc == ERG_ENOTSUP) { /* no estimator for this op: the machine's roofline */
            double fl, by;
            erg__roofline_work(&o->dims, &fl, &by);
            ti = fmax(peak > 0 ? fl / peak : 0, bw > 0 ? by / bw : 0);
            /* a call costs at least the fixed cost of the target's cheapest measured call: an
             * H200 RMSNorm (no norm data) came out at 2.4 ns per kernel from bytes alone */
            double floor_s = INFINITY;
            for (int k = 0; k < ERG_OP_COUNT; k++) {
                erg_op_bounds b;
                if (erg_op_model_bounds(m, (erg_op)k, &b) == ERG_OK && b.launch_time_s > 0)
                    floor_s = fmin(floor_s, b.launch_time_s);
            }
            if (isfinite(floor_s))
                ti = fmax(ti, floor_s);
            if (!(ti > 0))
                return erg_diag_set(diag, ERG_ENOTSUP, erg_op_model_target(m),
                                    "the level-1 model has no %s estimator and no roofline",
                                    erg_op_name(o->dims.op));
            ei = pw * ti;
        } else
            return erg_diag_set(diag, rc, erg_op_model_target(m),
                                "%s %s: level-1 prediction "
                                "failed (%s)",
                                erg_block_name(s->block), o->role, erg_strerror(rc));
        /* count instances run as one batched kernel (per head, per sequence, per expert): the
         * fixed cost of a call t0 (the op's launch floor) is paid once, the rest count times */
        double cnt = o->count, tb = ti, eb = ei;
        erg_op_bounds bd;
        if (cnt > 1 && erg_op_model_bounds(m, o->dims.op, &bd) == ERG_OK && bd.launch_time_s > 0) {
            double marginal = fmax(ti - bd.launch_time_s, 0.05 * ti);
            tb = (ti + (cnt - 1) * marginal) / cnt;
            eb = ei * tb / ti;
        }
        ti = tb;
        ei = eb;
        /* weights streamed from memory: the block's GEMM operands together (its weight
         * matrices, every head's keys, every expert's weights) do not fit the cache, so one
         * that would fit alone is not there when its GEMM runs (the profiles rotate input sets
         * through 64 MiB, a whole model's layers do likewise). QK^T and ·V read the keys and
         * values the block itself has just written: only their own instances count. */
        if (cache_form && o->dims.op == ERG_OP_GEMM) {
            double b = erg_dtype_bytes(o->dims.dtype);
            double mm = (double)o->dims.m, nn = (double)o->dims.n, kk = (double)o->dims.k;
            double foot = (mm * kk + nn * kk + mm * nn) * b;
            int core = !strcmp(o->role, "qk") || !strcmp(o->role, "pv");
            if (foot <= cache_bytes && (core ? cnt * foot : block_foot) > cache_bytes) {
                ti += nn * kk * b * (bt[1] - bt[0]);
                if (isfinite(be[1]))
                    ei += nn * kk * b * (be[1] - be[0]);
            }
        }
        t += o->count * ti;
        e += o->count * ei;
        /* one op's identical instances share one error; different ops are independent */
        vt += (o->count * ti * rt) * (o->count * ti * rt);
        ve += (o->count * ei * re) * (o->count * ei * re);
    }
    double tew =
        fmax(peak > 0 ? w.elementwise_flops / peak : 0, bw > 0 ? w.elementwise_bytes / bw : 0);
    /* the eager framework calls besides the ops (a fused GPU kernel target has none) */
    if (!fused)
        tew += w.eager_calls * m->call_time_s;
    t += tew;
    e += pw * tew;
    if (!(t > 0))
        return erg_diag_set(diag, ERG_ENOTSUP, erg_op_model_target(m),
                            "%s: the level-1 model gives no time for this block (no roofline)",
                            erg_block_name(s->block));
    if (!isfinite(t) || !isfinite(vt) || (isfinite(e) && !isfinite(ve)))
        return erg_diag_set(diag, ERG_ERANGE, erg_op_model_target(m),
                            "%s: the level-1 model's %s overflows (a rate in its roofline too "
                            "small, or held-out errors too large)",
                            erg_block_name(s->block), isfinite(t) ? "variance" : "time");
    out->time_s = t;
    out->energy_j = isfinite(e) ? e : (double)NAN;
    out->time_var_s2 = vt;
    out->energy_var_j2 = isfinite(e) ? ve : (double)NAN;
    out->level = 1;
    return ERG_OK;
}
