/* SPDX-License-Identifier: MIT */
/* Level-1 predictions as energy signatures, for composition with the energy calculus. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "predict/model.h"

/* Relative sd of a normal error whose mean absolute value is mape_pct % (E|X| = σ·√(2/π)). */
static double rel_sd(double mape_pct)
{
    return isfinite(mape_pct) ? mape_pct / 100.0 * sqrt(M_PI / 2.0) : 0.0;
}

/* θ: the op's own dimensions only (a GEMM has no tokens, an RMSNorm no m, n, k), as compact
 * JSON object text. The dtype is kept for every op: it sets the bytes per element of the
 * memory-bound ops too (the A100 model's RMSNorm and softmax are fp16). Softmax is either causal
 * (tokens) or row-wise (m rows of n columns), as erg_op_dims_check allows. */
static void op_theta(const erg_op_dims *d, char *theta, size_t size)
{
    const char *dt = erg_dtype_name(d->dtype);
    switch (d->op) {
    case ERG_OP_GEMM:
        snprintf(theta, size, "{\"m\":%lld,\"n\":%lld,\"k\":%lld,\"dtype\":\"%s\"}",
                 (long long)d->m, (long long)d->n, (long long)d->k, dt);
        break;
    case ERG_OP_RMSNORM:
        snprintf(theta, size, "{\"tokens\":%lld,\"d_model\":%lld,\"dtype\":\"%s\"}",
                 (long long)d->tokens, (long long)d->d_model, dt);
        break;
    default:
        if (d->tokens > 0)
            snprintf(theta, size, "{\"tokens\":%lld,\"dtype\":\"%s\"}", (long long)d->tokens, dt);
        else
            snprintf(theta, size, "{\"m\":%lld,\"n\":%lld,\"dtype\":\"%s\"}", (long long)d->m,
                     (long long)d->n, dt);
        break;
    }
}

int erg_op_model_signature(const erg_op_model *m, const erg_op_dims *d, double static_power_w,
                           erg_signature *out, erg_diag *diag)
{
    if (!(static_power_w >= 0) || !isfinite(static_power_w))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "static power must be finite and >= 0 W");
    erg_op_prediction p;
    int rc = erg_op_model_predict(m, d, &p, diag);
    if (rc != ERG_OK)
        return rc;
    if (!isfinite(p.energy_j))
        return erg_diag_set(diag, ERG_ENOTSUP, NULL, "the model has no energy estimator for %s",
                            erg_op_name(d->op));
    double dyn = p.energy_j - static_power_w * p.time_s;
    if (dyn < 0)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "static power %g W x predicted time %g s exceeds the predicted energy "
                            "%g J",
                            static_power_w, p.time_s, p.energy_j);
    const erg_op_validation *v = &m->op[d->op].val[p.regime];
    const erg_op_validation *avg = &m->op[d->op].val[ERG_OP_MAX_REGIMES];
    double rt = rel_sd(isfinite(v->time_mape_pct) ? v->time_mape_pct : avg->time_mape_pct);
    double re = rel_sd(isfinite(v->energy_mape_pct) ? v->energy_mape_pct : avg->energy_mape_pct);
    erg_signature_init(out);
    out->static_power_w = static_power_w;
    out->time_s = p.time_s;
    out->dynamic_energy_j = dyn;
    out->time_var_s2 = (rt * p.time_s) * (rt * p.time_s);
    out->energy_var_j2 = fmax((re * p.energy_j) * (re * p.energy_j),
                              static_power_w * static_power_w * out->time_var_s2);
    if (!isfinite(out->time_var_s2) || !isfinite(out->energy_var_j2))
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "the model's held-out error for %s makes the variance overflow",
                            erg_op_name(d->op));
    out->grade = p.grade;
    out->runs = 0;
    snprintf(out->name, sizeof out->name, "%s", erg_op_name(d->op));
    snprintf(out->device, sizeof out->device, "%.63s", m->target_kind);
    snprintf(out->kappa, sizeof out->kappa, "%.63s", m->op[d->op].kappa);
    op_theta(d, out->theta, sizeof out->theta);
    return ERG_OK;
}
