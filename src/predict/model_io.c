/* SPDX-License-Identifier: MIT */
/* The level-1 model as "erg": "model/1" JSON. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "predict/model.h"

#define MODEL_KIND "hymell-level1-ops"

static const char *const feature_names[ERG_OP_COUNT][ERG_OP_MAX_FEATURES] = {
    {"N*d", "N*log2(d)", "d", "N", "log2(d)", "1"},
    {"R*C", "R", "log2(C)", "1"},
    {"PF*F", "PF*B_in", "AI*B_in", "F", "PF", "AI", "B_out", "B_in", "log10(F)", "1/PF", "1"}};
/* erg_gemm_cache_features (docs/predict.md, "A CPU GEMM form") */
static const char *const cache_feature_names[ERG_GEMM_CACHE_FEATURES] = {
    "F", "NK*b cached", "NK*b streamed", "MK*b", "MN*b", "1"};

static const char *feature_name(const struct erg__op_est *e, erg_op op, unsigned j)
{
    return e->form == ERG_GEMM_FORM_CACHE ? cache_feature_names[j] : feature_names[op][j];
}

static const char *const dim_names[5] = {"m", "n", "k", "tokens", "d_model"};

static json_t *lsq_json(const struct erg__lsq *l, unsigned p)
{
    if (!l->present)
        return json_null();
    json_t *o = json_object(), *c = json_array(), *s = json_array();
    for (unsigned j = 0; j < p; j++) {
        json_array_append_new(c, json_real(l->coef[j]));
        json_array_append_new(s, json_real(l->scale[j]));
    }
    json_object_set_new(o, "coef", c);
    json_object_set_new(o, "scale", s);
    json_object_set_new(o, "lambda", json_real(l->lambda));
    return o;
}

static json_t *validation_json(const erg_op_validation *v)
{
    json_t *o = json_object();
    json_object_set_new(o, "n_train", json_integer(v->n_train));
    json_object_set_new(o, "n_test", json_integer(v->n_test));
    erg__json_set_number(o, "time_mape_pct", v->time_mape_pct);
    erg__json_set_number(o, "time_r2", v->time_r2);
    erg__json_set_number(o, "energy_mape_pct", v->energy_mape_pct);
    erg__json_set_number(o, "energy_r2", v->energy_r2);
    json_t *r = json_object();
    erg__json_set_number(r, "time_mape_pct", v->roof_time_mape_pct);
    erg__json_set_number(r, "time_r2", v->roof_time_r2);
    erg__json_set_number(r, "energy_mape_pct", v->roof_energy_mape_pct);
    erg__json_set_number(r, "energy_r2", v->roof_energy_r2);
    json_object_set_new(o, "roofline", r);
    return o;
}

static json_t *pair_json(double lo, double hi)
{
    json_t *a = json_array();
    json_array_append_new(a, json_real(lo));
    json_array_append_new(a, json_real(hi));
    return a;
}

static json_t *bounds_json(const struct erg__bounds *b, int energy)
{
    json_t *o = json_object();
    erg__json_set_number(o, "peak_flop_s", b->peak_flop_s);
    erg__json_set_number(o, "bandwidth_bytes_s", b->bandwidth_bytes_s);
    erg__json_set_number(o, "launch_time_s", b->launch_time_s);
    erg__json_set_number(o, "eta", b->eta);
    erg__json_set_number(o, "eta_hi", b->eta_hi);
    json_object_set_new(o, "work", pair_json(b->work_lo, b->work_hi));
    if (b->ai_hi > 0)
        json_object_set_new(o, "ai", pair_json(b->ai_lo, b->ai_hi));
    if (energy) {
        json_t *pw = json_array();
        json_array_append_new(pw, json_real(b->power_lo_w));
        json_array_append_new(pw, json_real(b->power_med_w));
        json_array_append_new(pw, json_real(b->power_hi_w));
        json_object_set_new(o, "power_w", pw);
    }
    return o;
}

/* Read n positive numbers from array member key of o into out (lo ≤ ... ≤ hi). */
static int nums_load(const json_t *o, const char *key, size_t n, double *out, const char *file,
                     const char *path, erg_diag *diag)
{
    const json_t *a = json_object_get(o, key);
    int ok = json_is_array(a) && json_array_size(a) == n;
    for (size_t i = 0; ok && i < n; i++) {
        const json_t *v = json_array_get(a, i);
        ok = json_is_number(v) && json_number_value(v) > 0 && isfinite(json_number_value(v)) &&
             (i == 0 || json_number_value(v) >= out[i - 1]);
        if (ok)
            out[i] = json_number_value(v);
    }
    if (!ok)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.%s: expected %zu positive numbers in increasing order", path, key,
                            n);
    return ERG_OK;
}

static int bounds_load(const json_t *o, int energy, int gemm, struct erg__bounds *b,
                       const char *file, const char *path, erg_diag *diag)
{
    memset(b, 0, sizeof *b);
    b->power_lo_w = b->power_med_w = b->power_hi_w = NAN;
    if (!o || json_is_null(o))
        return ERG_OK; /* a model from before the bounds: predict checks positivity only */
    if (!json_is_object(o))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected an object", path);
    int rc;
    double work[2], ai[2] = {0, 0}, pw[3];
    if ((rc = erg__json_number(o, "peak_flop_s", ERG_JSON_REQUIRED | ERG_JSON_POSITIVE,
                               &b->peak_flop_s, file, path, diag)) ||
        (rc = erg__json_number(o, "bandwidth_bytes_s", ERG_JSON_REQUIRED | ERG_JSON_POSITIVE,
                               &b->bandwidth_bytes_s, file, path, diag)) ||
        (rc = erg__json_number(o, "launch_time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                               &b->launch_time_s, file, path, diag)) ||
        (rc = erg__json_number(o, "eta", ERG_JSON_REQUIRED | ERG_JSON_POSITIVE, &b->eta, file, path,
                               diag)) ||
        (rc = erg__json_number(o, "eta_hi", ERG_JSON_REQUIRED | ERG_JSON_POSITIVE, &b->eta_hi, file,
                               path, diag)) ||
        (rc = nums_load(o, "work", 2, work, file, path, diag)) ||
        (gemm && (rc = nums_load(o, "ai", 2, ai, file, path, diag))) ||
        (energy && (rc = nums_load(o, "power_w", 3, pw, file, path, diag))))
        return rc;
    b->work_lo = work[0];
    b->work_hi = work[1];
    b->ai_lo = ai[0];
    b->ai_hi = ai[1];
    if (energy) {
        b->power_lo_w = pw[0];
        b->power_med_w = pw[1];
        b->power_hi_w = pw[2];
    }
    b->present = 1;
    return ERG_OK;
}

int erg_op_model_save(const char *path, const erg_op_model *m, erg_diag *diag)
{
    json_t *root = json_object();
    json_object_set_new(root, "erg", json_string("model/1"));
    json_object_set_new(root, "kind", json_string(MODEL_KIND));
    json_t *tg = json_object();
    json_object_set_new(tg, "kind", json_string(m->target_kind));
    json_object_set_new(tg, "description", json_string(m->target_desc));
    json_object_set_new(root, "target", tg);
    json_object_set_new(root, "grade",
                        m->has_grade ? json_string(erg_grade_name(m->grade)) : json_null());
    json_t *fit = json_object();
    json_object_set_new(
        fit, "method",
        json_string("rows divided by the measured value (relative least squares), columns "
                    "scaled to unit 2-norm; truncated SVD or Tikhonov with GCV "
                    "lambda (gsl_multifit_linear_tsvd / _gcv), the lower GCV score"));
    json_object_set_new(fit, "samples", json_integer((json_int_t)m->n_samples));
    erg__json_set_number(fit, "test_fraction", m->test_fraction);
    json_object_set_new(fit, "seed", json_integer((json_int_t)m->seed));
    json_object_set_new(root, "fit", fit);
    json_t *roof = json_object();
    erg__json_set_number(roof, "peak_flop_s", m->peak_flop_s);
    erg__json_set_number(roof, "bandwidth_bytes_s", m->bandwidth_bytes_s);
    erg__json_set_number(roof, "mean_power_w", m->mean_power_w);
    if (m->call_time_s > 0)
        erg__json_set_number(roof, "call_time_s", m->call_time_s);
    json_object_set_new(root, "roofline", roof);
    json_t *th = json_object();
    erg__json_set_number(th, "rms_nd", m->th.rms_nd);
    erg__json_set_number(th, "softmax_n", m->th.softmax_n);
    erg__json_set_number(th, "gemm_f", m->th.gemm_f);
    json_t *ai = json_array();
    for (int i = 0; i < 3; i++)
        json_array_append_new(ai, json_real(m->th.gemm_ai[i]));
    json_object_set_new(th, "gemm_ai", ai);
    json_object_set_new(root, "thresholds", th);
    json_t *ops = json_object();
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        const struct erg__op_est *e = &m->op[op];
        if (!e->present)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "dtype", json_string(erg_dtype_name(e->dtype)));
        json_object_set_new(o, "kappa", json_string(e->kappa));
        json_object_set_new(o, "energy", json_boolean(e->has_energy));
        json_object_set_new(o, "thresholds_from",
                            json_string(e->chosen == 1   ? "data"
                                        : e->chosen == 2 ? "paper, kept by the data search"
                                                         : "paper"));
        if (e->form == ERG_GEMM_FORM_CACHE) {
            json_object_set_new(o, "form", json_string("cpu-cache"));
            json_object_set_new(o, "cache_bytes", json_real(e->cache_bytes));
        }
        json_t *fn = json_array();
        for (unsigned j = 0; j < e->nfeat; j++)
            json_array_append_new(fn, json_string(feature_name(e, (erg_op)op, j)));
        json_object_set_new(o, "features", fn);
        json_t *rg = json_object();
        for (unsigned j = 0; j < 5; j++) {
            if (e->range_hi[j] <= 0)
                continue;
            json_t *pair = json_array();
            json_array_append_new(pair, json_integer(e->range_lo[j]));
            json_array_append_new(pair, json_integer(e->range_hi[j]));
            json_object_set_new(rg, dim_names[j], pair);
        }
        json_object_set_new(o, "range", rg);
        if (e->bnd.present)
            json_object_set_new(o, "bounds", bounds_json(&e->bnd, e->has_energy));
        json_t *regs = json_array();
        for (unsigned r = 0; r < e->nreg; r++) {
            const struct erg__regime *g = &e->reg[r];
            json_t *jr = json_object();
            json_object_set_new(jr, "name", json_string(erg_op_regime_name((erg_op)op, r)));
            erg__json_set_number(jr, "lo", e->val[r].threshold_lo);
            erg__json_set_number(jr, "hi", e->val[r].threshold_hi);
            json_object_set_new(jr, "n_train", json_integer(g->n_train));
            json_object_set_new(jr, "fallback",
                                !g->fallback ? json_null()
                                : g->fallback_to == ERG__FALLBACK_POOLED
                                    ? json_string("pooled")
                                    : json_string(erg_op_regime_name((erg_op)op, g->fallback_to)));
            json_object_set_new(jr, "time", lsq_json(&g->time, e->nfeat));
            json_object_set_new(jr, "energy", lsq_json(&g->energy, e->nfeat));
            json_object_set_new(jr, "validation", validation_json(&e->val[r]));
            json_array_append_new(regs, jr);
        }
        json_object_set_new(o, "regimes", regs);
        if (e->pooled_time.present) {
            json_t *pl = json_object();
            json_object_set_new(pl, "time", lsq_json(&e->pooled_time, e->nfeat));
            json_object_set_new(pl, "energy", lsq_json(&e->pooled_energy, e->nfeat));
            json_object_set_new(o, "pooled", pl);
        }
        json_object_set_new(o, "average", validation_json(&e->val[ERG_OP_MAX_REGIMES]));
        json_object_set_new(ops, erg_op_name((erg_op)op), o);
    }
    json_object_set_new(root, "ops", ops);
    json_object_set_new(root, "notes", json_string(m->notes));
    int rc = erg__json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

static int lsq_load(const json_t *v, unsigned p, struct erg__lsq *l, const char *file,
                    const char *path, erg_diag *diag)
{
    memset(l, 0, sizeof *l);
    if (!v || json_is_null(v))
        return ERG_OK;
    const json_t *c = json_object_get(v, "coef"), *s = json_object_get(v, "scale");
    if (!json_is_array(c) || !json_is_array(s) || json_array_size(c) != p ||
        json_array_size(s) != p)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s: expected \"coef\" and \"scale\" arrays of %u numbers", path, p);
    for (unsigned j = 0; j < p; j++) {
        const json_t *cj = json_array_get(c, j), *sj = json_array_get(s, j);
        if (!json_is_number(cj) || !json_is_number(sj) || !(json_number_value(sj) > 0))
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s: coef[%u]/scale[%u] must be numbers, the scale positive", path,
                                j, j);
        l->coef[j] = json_number_value(cj);
        l->scale[j] = json_number_value(sj);
    }
    const json_t *lm = json_object_get(v, "lambda");
    l->lambda = json_is_number(lm) ? json_number_value(lm) : 0.0;
    erg__lsq_finish(l, p);
    l->present = 1;
    return ERG_OK;
}

static double num_or_nan(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

/* A count of fitted or held-out points: a whole number that fits an unsigned. */
static int count_load(const json_t *o, const char *key, unsigned *out, const char *file,
                      const char *path, erg_diag *diag)
{
    json_int_t n = 0;
    int rc = erg__json_count(o, key, 0, UINT_MAX, &n, file, path, diag);
    *out = (unsigned)n; /* in [0, UINT_MAX]: checked */
    return rc;
}

/* A held-out mean absolute percentage error: absent or null (NaN), else a number >= 0 (it
 * becomes the predictions' standard deviation, erg_op_model_signature). */
static int mape_load(const json_t *o, const char *key, double *out, const char *file,
                     const char *path, erg_diag *diag)
{
    *out = num_or_nan(o, key);
    if (isnan(*out) || (*out >= 0 && isfinite(*out)))
        return ERG_OK;
    return erg_diag_set(diag, ERG_EPARSE, file,
                        "%s.%s: a held-out error must be a percentage >= 0, got %g", path, key,
                        *out);
}

static int validation_load(const json_t *v, erg_op_validation *out, const char *file,
                           const char *path, erg_diag *diag)
{
    memset(out, 0, sizeof *out);
    int rc;
    if ((rc = count_load(v, "n_train", &out->n_train, file, path, diag)) ||
        (rc = count_load(v, "n_test", &out->n_test, file, path, diag)))
        return rc;
    const json_t *r = json_object_get(v, "roofline");
    char rpath[160];
    snprintf(rpath, sizeof rpath, "%s.roofline", path);
    if ((rc = mape_load(v, "time_mape_pct", &out->time_mape_pct, file, path, diag)) ||
        (rc = mape_load(v, "energy_mape_pct", &out->energy_mape_pct, file, path, diag)) ||
        (rc = mape_load(r, "time_mape_pct", &out->roof_time_mape_pct, file, rpath, diag)) ||
        (rc = mape_load(r, "energy_mape_pct", &out->roof_energy_mape_pct, file, rpath, diag)))
        return rc;
    out->time_r2 = num_or_nan(v, "time_r2");
    out->energy_r2 = num_or_nan(v, "energy_r2");
    out->roof_time_r2 = num_or_nan(r, "time_r2");
    out->roof_energy_r2 = num_or_nan(r, "energy_r2");
    return ERG_OK;
}

static int op_load(erg_op_model *m, erg_op op, const json_t *o, const char *file, erg_diag *diag)
{
    struct erg__op_est *e = &m->op[op];
    char path[128], dt[16] = "";
    const char *name = erg_op_name(op);
    int rc;
    e->nfeat = erg_op_feature_count(op);
    e->nreg = erg_op_regime_count(op);
    snprintf(path, sizeof path, "ops.%s", name);
    if (!json_is_object(o))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected an object", path);
    if ((rc = erg__json_string(o, "dtype", ERG_JSON_REQUIRED, dt, sizeof dt, file, path, diag)))
        return rc;
    if (erg_dtype_parse(dt, &e->dtype) != ERG_OK)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.dtype: unknown dtype \"%s\"", path, dt);
    if ((rc = erg__json_string(o, "kappa", 0, e->kappa, sizeof e->kappa, file, path, diag)))
        return rc;
    e->has_energy = json_is_true(json_object_get(o, "energy"));
    const json_t *tf = json_object_get(o, "thresholds_from");
    e->chosen = !json_is_string(tf)                                ? 0
                : strcmp(json_string_value(tf), "data") == 0       ? 1
                : strncmp(json_string_value(tf), "paper,", 6) == 0 ? 2
                                                                   : 0;
    const json_t *form = json_object_get(o, "form");
    if (form) {
        const char *fs = json_string_value(form);
        if (op != ERG_OP_GEMM || !fs || strcmp(fs, "cpu-cache") != 0)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.form: unknown form (only gemm has one: \"cpu-cache\")", path);
        e->form = ERG_GEMM_FORM_CACHE;
        e->nfeat = ERG_GEMM_CACHE_FEATURES;
        const json_t *cb = json_object_get(o, "cache_bytes");
        e->cache_bytes = json_is_number(cb) ? json_number_value(cb) : -1;
        if (!(e->cache_bytes > 0) || !isfinite(e->cache_bytes))
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.cache_bytes: expected a positive number of bytes", path);
    }
    const json_t *fn = json_object_get(o, "features");
    if (!json_is_array(fn) || json_array_size(fn) != e->nfeat)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.features: expected the %u features of the %s estimator", path,
                            e->nfeat, name);
    for (unsigned j = 0; j < e->nfeat; j++) {
        const char *f = json_string_value(json_array_get(fn, j));
        if (!f || strcmp(f, feature_name(e, op, j)) != 0)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.features[%u]: expected \"%s\" (is this a model of another "
                                "op or version?)",
                                path, j, feature_name(e, op, j));
    }
    const json_t *rg = json_object_get(o, "range");
    for (unsigned j = 0; j < 5; j++) {
        const json_t *pair = json_object_get(rg, dim_names[j]);
        e->range_lo[j] = e->range_hi[j] = 0;
        if (json_is_array(pair) && json_array_size(pair) == 2) {
            e->range_lo[j] = json_integer_value(json_array_get(pair, 0));
            e->range_hi[j] = json_integer_value(json_array_get(pair, 1));
        }
    }
    char bpath[160];
    snprintf(bpath, sizeof bpath, "%s.bounds", path);
    if ((rc = bounds_load(json_object_get(o, "bounds"), e->has_energy, op == ERG_OP_GEMM, &e->bnd,
                          file, bpath, diag)))
        return rc;
    const json_t *regs = json_object_get(o, "regimes");
    if (!json_is_array(regs) || json_array_size(regs) != e->nreg)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.regimes: expected %u regimes", path,
                            e->nreg);
    const json_t *pl = json_object_get(o, "pooled");
    char sub[192];
    snprintf(sub, sizeof sub, "%s.pooled.time", path);
    if ((rc = lsq_load(json_object_get(pl, "time"), e->nfeat, &e->pooled_time, file, sub, diag)))
        return rc;
    snprintf(sub, sizeof sub, "%s.pooled.energy", path);
    if ((rc =
             lsq_load(json_object_get(pl, "energy"), e->nfeat, &e->pooled_energy, file, sub, diag)))
        return rc;
    for (unsigned r = 0; r < e->nreg; r++) {
        const json_t *jr = json_array_get(regs, r);
        struct erg__regime *g = &e->reg[r];
        const char *rn = json_string_value(json_object_get(jr, "name"));
        if (!rn || strcmp(rn, erg_op_regime_name(op, r)) != 0)
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.regimes[%u].name: expected \"%s\"",
                                path, r, erg_op_regime_name(op, r));
        snprintf(sub, sizeof sub, "%s.regimes[%u]", path, r);
        if ((rc = count_load(jr, "n_train", &g->n_train, file, sub, diag)))
            return rc;
        snprintf(sub, sizeof sub, "%s.regimes[%u].time", path, r);
        if ((rc = lsq_load(json_object_get(jr, "time"), e->nfeat, &g->time, file, sub, diag)))
            return rc;
        snprintf(sub, sizeof sub, "%s.regimes[%u].energy", path, r);
        if ((rc = lsq_load(json_object_get(jr, "energy"), e->nfeat, &g->energy, file, sub, diag)))
            return rc;
        const json_t *fb = json_object_get(jr, "fallback");
        if (fb && !json_is_null(fb)) {
            const char *f = json_string_value(fb);
            g->fallback = 1;
            g->fallback_to = ERG_OP_MAX_REGIMES + 1;
            if (f && strcmp(f, "pooled") == 0)
                g->fallback_to = ERG__FALLBACK_POOLED;
            for (unsigned q = 0; f && q < e->nreg; q++)
                if (strcmp(f, erg_op_regime_name(op, q)) == 0)
                    g->fallback_to = q;
            if (g->fallback_to > ERG__FALLBACK_POOLED)
                return erg_diag_set(diag, ERG_EPARSE, file,
                                    "%s.regimes[%u].fallback: unknown regime", path, r);
        }
        snprintf(sub, sizeof sub, "%s.regimes[%u].validation", path, r);
        if ((rc = validation_load(json_object_get(jr, "validation"), &e->val[r], file, sub, diag)))
            return rc;
        e->val[r].threshold_lo = num_or_nan(jr, "lo");
        e->val[r].threshold_hi = num_or_nan(jr, "hi");
        if (!isfinite(e->val[r].threshold_hi))
            e->val[r].threshold_hi = INFINITY;
        e->val[r].fallback = g->fallback;
        e->val[r].fallback_to = g->fallback_to;
    }
    /* every regime must reach a time fit (its own, its neighbour's or the pooled one) */
    for (unsigned r = 0; r < e->nreg; r++) {
        const struct erg__regime *g = &e->reg[r];
        if (g->fallback && g->fallback_to < e->nreg && e->reg[g->fallback_to].fallback)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.regimes[%u].fallback: points at a regime that falls back too",
                                path, r);
        if (!erg__regime_fit(e, r, 0))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.regimes[%u]: no time coefficients",
                                path, r);
        if (e->has_energy && !erg__regime_fit(e, r, 1))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.regimes[%u]: no energy coefficients",
                                path, r);
    }
    snprintf(sub, sizeof sub, "%s.average", path);
    rc = validation_load(json_object_get(o, "average"), &e->val[ERG_OP_MAX_REGIMES], file, sub,
                         diag);
    if (rc != ERG_OK)
        return rc;
    e->present = 1;
    return ERG_OK;
}

/* A GPU target folder holds its measured fused kernels in gpu.json beside ops.json: attach
 * the attention kernels to the level-1 model (docs/predict.md, "GPU targets"). A gpu.json that
 * is there but unreadable is an error naming it; none is fine. */
static int attach_kernels(erg_op_model *m, const char *path, erg_diag *diag)
{
    const char *slash = strrchr(path, '/');
    char gpu[1100];
    if (slash) {
        int len = (int)(slash - path);
        if (snprintf(gpu, sizeof gpu, "%.*s/gpu.json", len, path) >= (int)sizeof gpu)
            return ERG_OK;
    } else
        snprintf(gpu, sizeof gpu, "gpu.json");
    if (erg_op_model_has(m, ERG_OP_GEMM)) {
        char map[1100];
        if (slash)
            snprintf(map, sizeof map, "%.*s/gemm-map.json", (int)(slash - path), path);
        else
            snprintf(map, sizeof map, "gemm-map.json");
        if (access(map, F_OK) == 0) {
            int rc = erg__gemm_map_load(map, m->op[ERG_OP_GEMM].dtype, &m->gemm_map, diag);
            if (rc != ERG_OK)
                return rc;
        }
    }
    if (access(gpu, F_OK) != 0)
        return ERG_OK;
    erg_gpu_kernels *k = malloc(sizeof *k);
    erg_serving_model sm;
    if (!k)
        return erg_diag_set(diag, ERG_ENOMEM, gpu, "out of memory");
    int rc = erg_gpu_target_load(gpu, k, &sm, NULL, diag);
    if (rc != ERG_OK || !(k->has_attn || k->has_attn_prefill)) {
        free(k);
        return rc;
    }
    m->kernels = k;
    return ERG_OK;
}

int erg_op_model_load(const char *path, erg_op_model **out, erg_diag *diag)
{
    *out = NULL;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    erg_op_model *m = calloc(1, sizeof *m);
    if (!m) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    if ((rc = erg__json_check_tag(root, "model", 1, path, diag)) != ERG_OK)
        goto fail;
    const char *kind = json_string_value(json_object_get(root, "kind"));
    if (!kind || strcmp(kind, MODEL_KIND) != 0) {
        rc = erg_diag_set(diag, ERG_EPARSE, path,
                          "kind: expected \"%s\" (a level-1 op model), got %s%s%s", MODEL_KIND,
                          kind ? "\"" : "", kind ? kind : "none", kind ? "\"" : "");
        goto fail;
    }
    const json_t *tg = json_object_get(root, "target");
    if ((rc = erg__json_string(tg, "kind", ERG_JSON_REQUIRED, m->target_kind, sizeof m->target_kind,
                               path, "target", diag)) ||
        (rc = erg__json_string(tg, "description", 0, m->target_desc, sizeof m->target_desc, path,
                               "target", diag)))
        goto fail;
    const json_t *gr = json_object_get(root, "grade");
    if (gr && !json_is_null(gr)) {
        if (!json_is_string(gr) || erg_grade_parse(json_string_value(gr), &m->grade) != ERG_OK) {
            rc = erg_diag_set(diag, ERG_EPARSE, path,
                              "grade: expected hw_shunt, model_based or estimator");
            goto fail;
        }
        m->has_grade = 1;
    }
    const json_t *th = json_object_get(root, "thresholds");
    erg_op_thresholds_paper(&m->th);
    if ((rc = erg__json_number(th, "rms_nd", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &m->th.rms_nd,
                               path, "thresholds", diag)) ||
        (rc = erg__json_number(th, "softmax_n", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                               &m->th.softmax_n, path, "thresholds", diag)) ||
        (rc = erg__json_number(th, "gemm_f", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &m->th.gemm_f,
                               path, "thresholds", diag)))
        goto fail;
    const json_t *ai = json_object_get(th, "gemm_ai");
    if (!json_is_array(ai) || json_array_size(ai) != 3) {
        rc = erg_diag_set(diag, ERG_EPARSE, path, "thresholds.gemm_ai: expected 3 numbers");
        goto fail;
    }
    for (int i = 0; i < 3; i++) {
        const json_t *v = json_array_get(ai, (size_t)i);
        if (!json_is_number(v)) {
            rc = erg_diag_set(diag, ERG_EPARSE, path, "thresholds.gemm_ai[%d]: expected a number",
                              i);
            goto fail;
        }
        m->th.gemm_ai[i] = json_number_value(v);
    }
    const json_t *roof = json_object_get(root, "roofline");
    m->peak_flop_s = num_or_nan(roof, "peak_flop_s");
    m->bandwidth_bytes_s = num_or_nan(roof, "bandwidth_bytes_s");
    m->mean_power_w = num_or_nan(roof, "mean_power_w");
    m->call_time_s = num_or_nan(roof, "call_time_s"); /* optional: absent in older models */
    if (!(m->call_time_s > 0) || !isfinite(m->call_time_s))
        m->call_time_s = 0;
    const json_t *fit = json_object_get(root, "fit");
    m->test_fraction = num_or_nan(fit, "test_fraction");
    /* the seed is written as the json_int_t of its bits (model_save): the cast restores them */
    m->seed = (uint64_t)json_integer_value(json_object_get(fit, "seed"));
    json_int_t samples = 0;
    if ((rc = erg__json_count(fit, "samples", 0, LLONG_MAX, &samples, path, "fit", diag)))
        goto fail;
    m->n_samples = (size_t)samples; /* non-negative: checked */
    const json_t *ops = json_object_get(root, "ops");
    if (!json_is_object(ops) || json_object_size(ops) == 0) {
        rc = erg_diag_set(diag, ERG_EPARSE, path, "ops: expected an object with at least one op");
        goto fail;
    }
    const char *key;
    json_t *val;
    json_object_foreach(erg__json_mut(ops), key, val)
    {
        erg_op op;
        if (erg_op_parse(key, &op) != ERG_OK) {
            rc = erg_diag_set(diag, ERG_EPARSE, path,
                              "ops.%s: unknown op (expected rmsnorm, softmax or gemm)", key);
            goto fail;
        }
        if ((rc = op_load(m, op, val, path, diag)) != ERG_OK)
            goto fail;
    }
    const char *notes = json_string_value(json_object_get(root, "notes"));
    if (notes)
        snprintf(m->notes, sizeof m->notes, "%s", notes);
    json_decref(root);
    if ((rc = attach_kernels(m, path, diag)) != ERG_OK)
        goto fail_model;
    *out = m;
    return ERG_OK;
fail:
    json_decref(root);
    erg__json_diag_place_file(diag, path);
fail_model:
    erg_op_model_free(m);
    return rc;
}

int erg_op_model_default_path(const char *kind, char *buf, size_t *size)
{
    char file[256];
    if (!kind || snprintf(file, sizeof file, "%s.json", kind) >= (int)sizeof file)
        return ERG_EINVAL;
    return erg__data_path("models", "ERG_MODEL_DIR", file, buf, size);
}
