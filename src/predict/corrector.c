/* SPDX-License-Identifier: MIT */
/* Log-ratio corrections (HYMELL levels 2 and 3) with leave-one-architecture-out hold-out. */
#include "predict/corrector.h"
#include "core/json.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void erg_mlp_options_init(erg_mlp_options *o)
{
    if (!o)
        return;
    o->hidden_layers = 2;
    o->width = 16;
    o->max_epochs = 600;
    o->seed = 42;
    o->cross_validate = 1;
}

static void to_private(const erg_mlp_options *o, struct erg__mlp_options *p)
{
    erg__mlp_options_init(p);
    p->hidden_layers = o->hidden_layers;
    p->width = o->width;
    p->max_epochs = o->max_epochs;
    p->seed = o->seed;
}

#define N_CAND 6
static const char *const cand_names[N_CAND] = {"constant",   "linear l=0.01", "linear l=0.1",
                                               "linear l=1", "mlp 1x8",       "mlp"};

/* One fit of candidate k on the rows with use[i] (NULL: all); constant when too thin. */
static int fit_once(const double *X, const double *Y, const int *group, const int *use, size_t n,
                    unsigned n_in, unsigned n_out, const erg_mlp_options *o, int k,
                    struct erg__corrector *c, erg_diag *diag)
{
    memset(c, 0, sizeof *c);
    c->present = 1;
    c->n_in = n_in;
    c->n_out = n_out;
    size_t m = 0;
    int groups[1024];
    unsigned ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (use && !use[i])
            continue;
        m++;
        int seen = 0;
        for (unsigned g = 0; g < ng && !seen; g++)
            seen = groups[g] == group[i];
        if (!seen && ng < 1024)
            groups[ng++] = group[i];
    }
    c->n_rows = m;
    c->n_groups = ng;
    if (m == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no rows to fit");
    for (unsigned j = 0; j < n_out; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            if (!use || use[i])
                s += Y[i * n_out + j];
        c->c[j] = s / (double)m;
    }
    if (k == 0 || m < ERG__CORRECTOR_MIN_ROWS) {
        c->constant = 1;
        snprintf(c->method, sizeof c->method, "constant");
        return ERG_OK;
    }
    double *x = malloc(m * n_in * sizeof *x), *y = malloc(m * n_out * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (use && !use[i])
            continue;
        memcpy(x + r * n_in, X + i * n_in, n_in * sizeof *x);
        memcpy(y + r * n_out, Y + i * n_out, n_out * sizeof *y);
        r++;
    }
    int rc;
    if (k <= 3) {
        static const double lambda[] = {0, 0.01, 0.1, 1};
        c->linear = 1;
        rc = erg__linear_train(x, y, m, n_in, n_out, lambda[k], &c->mlp, diag);
        snprintf(c->method, sizeof c->method, "%s", cand_names[k]);
    } else {
        struct erg__mlp_options po;
        to_private(o, &po);
        if (k == 4) {
            po.hidden_layers = 1;
            po.width = 8;
        }
        rc = erg__mlp_train(x, y, m, n_in, n_out, &po, &c->mlp, diag);
        snprintf(c->method, sizeof c->method, "mlp %ux%u", po.hidden_layers, po.width);
    }
    free(x);
    free(y);
    return rc;
}

const char *const erg__use_names[ERG__USE_COUNT] = {"shared", "own", "none"};

/* Mean absolute relative error (%) of base·exp(h) against measured over rows with mask (time,
 * plus energy when present: their mean). */
static double group_mape(const double *mt, const double *me, const double *bt, const double *be,
                         const double *H, unsigned n_out, const int *mask, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mask[i])
            continue;
        double ht = H ? H[i * n_out] : 0, he = H && n_out == 2 ? H[i * n_out + 1] : 0;
        if (!isfinite(ht) || !isfinite(he))
            return (double)INFINITY;
        s += fabs(bt[i] * exp(ht) - mt[i]) / mt[i];
        k++;
        if (n_out == 2) {
            s += fabs(be[i] * exp(he) - me[i]) / me[i];
            k++;
        }
    }
    return k ? 100 * s / (double)k : (double)NAN;
}

/* erg__corrector_choose (corrector.h). */
int erg__corrector_choose(const double *X, const double *Y, const int *grp, const int *mask,
                          size_t n, unsigned n_in, unsigned n_out, const erg_mlp_options *o,
                          const double *mt, const double *me, const double *bt, const double *be,
                          double *H, struct erg__corrector *own, int *use,
                          double score[ERG__USE_COUNT], erg_diag *diag)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += mask[i] != 0;
    *use = ERG__USE_SHARED;
    for (int u = 0; u < ERG__USE_COUNT; u++)
        score[u] = NAN;
    if (k == 0)
        return ERG_OK;
    double *Xg = malloc(k * n_in * sizeof *Xg), *Yg = malloc(k * 2 * sizeof *Yg);
    double *Hg = malloc(k * 2 * sizeof *Hg), *Ho = malloc(n * 2 * sizeof *Ho);
    int *gg = malloc(k * sizeof *gg);
    int rc = ERG_OK;
    if (!Xg || !Yg || !Hg || !Ho || !gg) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0, r = 0; i < n; i++)
        if (mask[i]) {
            memcpy(Xg + r * n_in, X + i * n_in, n_in * sizeof *X);
            memcpy(Yg + r * n_out, Y + i * n_out, n_out * sizeof *Y);
            gg[r++] = grp[i];
        }
    score[ERG__USE_SHARED] = group_mape(mt, me, bt, be, H, n_out, mask, n);
    score[ERG__USE_NONE] = group_mape(mt, me, bt, be, NULL, n_out, mask, n);
    rc = erg__corrector_fit(Xg, Yg, gg, k, n_in, n_out, o, own, Hg, diag);
    if (rc != ERG_OK)
        goto done;
    for (size_t i = 0, r = 0; i < n; i++) {
        for (unsigned j = 0; j < n_out; j++)
            Ho[i * n_out + j] = mask[i] ? Hg[r * n_out + j] : 0;
        r += mask[i] != 0;
    }
    score[ERG__USE_OWN] = group_mape(mt, me, bt, be, Ho, n_out, mask, n);
    for (int u = ERG__USE_OWN; u < ERG__USE_COUNT; u++) /* a tie goes to none: the simplest */
        if (score[u] < score[*use] || (u == ERG__USE_NONE && score[u] <= score[*use]))
            *use = u;
    for (size_t i = 0; i < n; i++)
        for (unsigned j = 0; mask[i] && j < n_out; j++)
            H[i * n_out + j] = *use == ERG__USE_OWN    ? Ho[i * n_out + j]
                               : *use == ERG__USE_NONE ? 0
                                                       : H[i * n_out + j];
    if (*use != ERG__USE_OWN)
        erg__corrector_free(own);
done:
    free(Xg);
    free(Yg);
    free(Hg);
    free(Ho);
    free(gg);
    return rc;
}

void erg__corrector_apply(const struct erg__corrector *c, const double *x, double *y)
{
    if (!c->present) {
        for (unsigned k = 0; k < ERG__MLP_MAX_OUT; k++)
            y[k] = 0;
        return;
    }
    if (c->constant) {
        for (unsigned k = 0; k < c->n_out; k++)
            y[k] = c->c[k];
        return;
    }
    erg__mlp_run(&c->mlp, x, y);
}

void erg__corrector_free(struct erg__corrector *c)
{
    if (c)
        erg__mlp_free(&c->mlp);
}

/* Leave-one-group-out predictions of candidate k into H (n × n_out); *score its residual score. */
static int heldout_of(const double *X, const double *Y, const int *group, size_t n, unsigned n_in,
                      unsigned n_out, const erg_mlp_options *o, int k, double *H, double *score,
                      erg_diag *diag)
{
    int *use = malloc(n * sizeof *use);
    if (!use)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    int rc = ERG_OK;
    double y[ERG__MLP_MAX_OUT];
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        int first = 1; /* the first row of each group: fit without the group */
        for (size_t j = 0; j < i && first; j++)
            first = group[j] != group[i];
        if (!first)
            continue;
        for (size_t j = 0; j < n; j++)
            use[j] = group[j] != group[i];
        struct erg__corrector c;
        rc = fit_once(X, Y, group, use, n, n_in, n_out, o, k, &c, diag);
        for (size_t j = 0; j < n && rc == ERG_OK; j++)
            if (!use[j]) {
                erg__corrector_apply(&c, X + j * n_in, y);
                memcpy(H + j * n_out, y, n_out * sizeof *y);
            }
        erg__corrector_free(&c);
    }
    free(use);
    *score = 0;
    for (unsigned j = 0; rc == ERG_OK && j < n_out; j++) {
        double mean = 0, var = 0, res = 0;
        for (size_t i = 0; i < n; i++)
            mean += Y[i * n_out + j] / (double)n;
        for (size_t i = 0; i < n; i++) {
            double e = Y[i * n_out + j] - H[i * n_out + j];
            var += (Y[i * n_out + j] - mean) * (Y[i * n_out + j] - mean);
            res += e * e;
        }
        *score += var > 0 ? res / var : res;
    }
    return rc;
}

int erg__corrector_fit(const double *X, const double *Y, const int *group, size_t n, unsigned n_in,
                       unsigned n_out, const erg_mlp_options *opt, struct erg__corrector *out,
                       double *heldout, erg_diag *diag)
{
    erg_mlp_options o;
    if (opt)
        o = *opt;
    else
        erg_mlp_options_init(&o);
    unsigned ng = 0;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = group[j] != group[i];
        if (first)
            ng++;
    }
    int best = N_CAND - 1, rc = ERG_OK;
    double score[N_CAND];
    for (int k = 0; k < N_CAND; k++)
        score[k] = NAN;
    double *H = NULL, *Hbest = NULL;
    int cv = o.cross_validate && ng >= 2;
    if (cv) {
        H = malloc(n * n_out * sizeof *H);
        Hbest = malloc(n * n_out * sizeof *Hbest);
        if (!H || !Hbest) {
            free(H);
            free(Hbest);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        double best_score = INFINITY;
        for (int k = 0; k < N_CAND && rc == ERG_OK; k++) {
            rc = heldout_of(X, Y, group, n, n_in, n_out, &o, k, H, &score[k], diag);
            if (rc == ERG_OK && score[k] < best_score) {
                best_score = score[k];
                best = k;
                memcpy(Hbest, H, n * n_out * sizeof *H);
            }
        }
    }
    if (rc == ERG_OK)
        rc = fit_once(X, Y, group, NULL, n, n_in, n_out, &o, best, out, diag);
    if (rc == ERG_OK) {
        out->n_candidates = cv ? N_CAND : 0;
        for (int k = 0; k < N_CAND; k++)
            out->score[k] = score[k];
        double y[ERG__MLP_MAX_OUT], ss[ERG__MLP_MAX_OUT] = {0};
        for (size_t i = 0; i < n; i++) {
            const double *h = y;
            if (cv)
                h = Hbest + i * n_out;
            else
                erg__corrector_apply(out, X + i * n_in, y);
            for (unsigned k = 0; k < n_out; k++) {
                ss[k] += (Y[i * n_out + k] - h[k]) * (Y[i * n_out + k] - h[k]);
                if (heldout)
                    heldout[i * n_out + k] = cv ? h[k] : (double)NAN;
            }
        }
        for (unsigned k = 0; k < n_out; k++)
            out->sigma[k] = sqrt(ss[k] / (double)n);
        out->sigma_heldout = cv;
    }
    free(H);
    free(Hbest);
    return rc;
}

static json_t *nums(const double *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; a && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

json_t *erg__corrector_to_json(const struct erg__corrector *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "correction",
                        json_string(c->constant ? "constant"
                                    : c->linear ? "linear"
                                                : "mlp"));
    json_object_set_new(o, "method", json_string(c->method));
    if (c->n_candidates) {
        json_t *sel = json_object();
        for (unsigned k = 0; k < c->n_candidates && k < N_CAND; k++)
            json_object_set_new(sel, cand_names[k],
                                isfinite(c->score[k]) ? json_real(c->score[k]) : json_null());
        json_object_set_new(o, "heldout_score", sel);
    }
    json_object_set_new(o, "outputs", json_integer(c->n_out));
    json_object_set_new(o, "rows", json_integer((json_int_t)c->n_rows));
    json_object_set_new(o, "architectures", json_integer(c->n_groups));
    json_object_set_new(o, "mean_log_ratio", nums(c->c, c->n_out));
    json_object_set_new(o, "sigma_log", nums(c->sigma, c->n_out));
    json_object_set_new(o, "sigma_from", json_string(c->sigma_heldout ? "held-out" : "training"));
    if (!c->constant)
        json_object_set_new(o, "mlp", erg__mlp_to_json(&c->mlp));
    return o;
}

static int nums_in(const json_t *o, const char *key, double *v, unsigned n, int nonneg,
                   const char *file, const char *path, erg_diag *diag)
{
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a) || json_array_size(a) != n)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: expected %u numbers", path, key, n);
    for (unsigned i = 0; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_number(x) || (nonneg && json_number_value(x) < 0))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s[%u]: expected a %snumber", path, key,
                                i, nonneg ? "non-negative " : "");
        v[i] = json_number_value(x);
    }
    return ERG_OK;
}

int erg__corrector_from_json(const json_t *j, unsigned n_in, struct erg__corrector *c,
                             const char *file, const char *path, erg_diag *diag)
{
    memset(c, 0, sizeof *c);
    if (!json_is_object(j))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected an object", path);
    const char *kind = json_string_value(json_object_get(j, "correction"));
    json_int_t n_out = json_integer_value(json_object_get(j, "outputs"));
    if (!kind ||
        (strcmp(kind, "mlp") != 0 && strcmp(kind, "constant") != 0 && strcmp(kind, "linear") != 0))
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.correction: expected \"mlp\", \"linear\" or \"constant\"", path);
    if (n_out < 1 || n_out > ERG__MLP_MAX_OUT)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.outputs: expected 1 or 2", path);
    c->n_in = n_in;
    c->n_out = (unsigned)n_out;
    c->constant = strcmp(kind, "constant") == 0;
    c->linear = strcmp(kind, "linear") == 0;
    const char *meth = json_string_value(json_object_get(j, "method"));
    snprintf(c->method, sizeof c->method, "%s", meth ? meth : kind);
    json_int_t rows = 0, archs = 0;
    int rc;
    if ((rc = erg__json_count(j, "rows", 0, LLONG_MAX, &rows, file, path, diag)) ||
        (rc = erg__json_count(j, "architectures", 0, UINT_MAX, &archs, file, path, diag)))
        return rc;
    c->n_rows = (size_t)rows;      /* non-negative: checked */
    c->n_groups = (unsigned)archs; /* at most UINT_MAX: checked */
    const char *from = json_string_value(json_object_get(j, "sigma_from"));
    c->sigma_heldout = from && strcmp(from, "held-out") == 0;
    if ((rc = nums_in(j, "mean_log_ratio", c->c, c->n_out, 0, file, path, diag)) ||
        (rc = nums_in(j, "sigma_log", c->sigma, c->n_out, 1, file, path, diag)))
        return rc;
    if (!c->constant) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.mlp", path);
        if ((rc = erg__mlp_from_json(json_object_get(j, "mlp"), n_in, c->n_out, &c->mlp, file, sub,
                                     diag)))
            return rc;
    }
    c->present = 1;
    return ERG_OK;
}

void erg__accuracy(const double *meas, const double *pred, const double *base, const int *mask,
                   size_t n, size_t *count, double *mape, double *r2, double *base_mape)
{
    double ape = 0, bape = 0, sum = 0, ss_res = 0, ss_tot = 0;
    size_t m = 0, mb = 0;
    for (size_t i = 0; i < n; i++)
        if ((!mask || mask[i]) && isfinite(meas[i]) && isfinite(pred[i]) && meas[i] > 0) {
            sum += meas[i];
            m++;
        }
    double mean = m ? sum / (double)m : 0;
    for (size_t i = 0; i < n; i++) {
        if ((mask && !mask[i]) || !isfinite(meas[i]) || !isfinite(pred[i]) || !(meas[i] > 0))
            continue;
        ape += fabs(pred[i] - meas[i]) / meas[i];
        ss_res += (pred[i] - meas[i]) * (pred[i] - meas[i]);
        ss_tot += (meas[i] - mean) * (meas[i] - mean);
        if (base && isfinite(base[i])) {
            bape += fabs(base[i] - meas[i]) / meas[i];
            mb++;
        }
    }
    *count = m;
    *mape = m ? 100 * ape / (double)m : (double)NAN;
    *r2 = m >= 2 && ss_tot > 0 ? 1 - ss_res / ss_tot : (double)NAN;
    if (base_mape)
        *base_mape = mb ? 100 * bape / (double)mb : (double)NAN;
}

int erg__fit_rows_init(struct erg__fit_rows *f, size_t n, unsigned n_in, int energy, erg_diag *diag)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->n_in = n_in;
    f->n_out = energy ? 2 : 1;
    /* X, then Y and H (2 columns each, the most n_out can be), then six columns of values */
    double *d = malloc(n * ((size_t)n_in + 4 + 6) * sizeof *d);
    f->grp = malloc(n * 2 * sizeof *f->grp);
    f->arch = malloc(n * sizeof *f->arch);
    if (!d || !f->grp || !f->arch) {
        free(d);
        erg__fit_rows_free(f);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    f->X = d;
    f->Y = f->X + n * n_in;
    f->H = f->Y + n * 2;
    f->base_t = f->H + n * 2;
    f->base_e = f->base_t + n;
    f->meas_t = f->base_e + n;
    f->meas_e = f->meas_t + n;
    f->pred_t = f->meas_e + n;
    f->pred_e = f->pred_t + n;
    f->mask = f->grp + n;
    return ERG_OK;
}

int erg__fit_rows_set(struct erg__fit_rows *f, size_t r, const char *arch, double base_t,
                      double base_e, double time_s, double energy_j, const char *target,
                      const char *what, erg_diag *diag)
{
    int energy = f->n_out == 2;
    f->Y[r * f->n_out] = log(time_s / base_t);
    if (energy) {
        if (!isfinite(base_e) || !(base_e > 0))
            return erg_diag_set(diag, ERG_EINVAL, target,
                                "the level-1 model has no energy, but the %s rows have", what);
        f->Y[r * f->n_out + 1] = log(energy_j / base_e);
    }
    f->base_t[r] = base_t;
    f->base_e[r] = base_e;
    f->meas_t[r] = time_s;
    f->meas_e[r] = energy ? energy_j : (double)NAN;
    int g = 0;
    while (g < f->n_arch && strcmp(f->arch[g], arch) != 0)
        g++;
    if (g == f->n_arch)
        f->arch[f->n_arch++] = arch;
    f->grp[r] = g;
    return ERG_OK;
}

void erg__fit_rows_predict(struct erg__fit_rows *f)
{
    for (size_t i = 0; i < f->n; i++) {
        f->pred_t[i] = f->base_t[i] * exp(f->H[i * f->n_out]);
        f->pred_e[i] = f->n_out == 2 ? f->base_e[i] * exp(f->H[i * f->n_out + 1]) : (double)NAN;
    }
}

void erg__fit_rows_accuracy(const struct erg__fit_rows *f, erg_accuracy *a)
{
    size_t ne;
    erg__accuracy(f->meas_t, f->pred_t, f->base_t, f->mask, f->n, &a->n, &a->time_mape_pct,
                  &a->time_r2, &a->base_time_mape_pct);
    erg__accuracy(f->meas_e, f->pred_e, f->base_e, f->mask, f->n, &ne, &a->energy_mape_pct,
                  &a->energy_r2, &a->base_energy_mape_pct);
}

void erg__fit_rows_free(struct erg__fit_rows *f)
{
    if (!f)
        return;
    free(f->X);
    free(f->grp);
    free(f->arch);
    memset(f, 0, sizeof *f);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *erg__accuracy_to_json(const erg_accuracy *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)a->n));
    json_object_set_new(o, "time_mape_pct", num_or_null(a->time_mape_pct));
    json_object_set_new(o, "time_r2", num_or_null(a->time_r2));
    json_object_set_new(o, "energy_mape_pct", num_or_null(a->energy_mape_pct));
    json_object_set_new(o, "energy_r2", num_or_null(a->energy_r2));
    json_object_set_new(o, "base_time_mape_pct", num_or_null(a->base_time_mape_pct));
    json_object_set_new(o, "base_energy_mape_pct", num_or_null(a->base_energy_mape_pct));
    return o;
}

static double num_of(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

int erg__accuracy_from_json(const json_t *j, erg_accuracy *a, const char *file, const char *path,
                            erg_diag *diag)
{
    json_int_t n = 0;
    int rc = erg__json_count(j, "n", 0, LLONG_MAX, &n, file, path, diag);
    if (rc != ERG_OK)
        return rc;
    a->n = (size_t)n; /* non-negative: checked */
    a->time_mape_pct = num_of(j, "time_mape_pct");
    a->time_r2 = num_of(j, "time_r2");
    a->energy_mape_pct = num_of(j, "energy_mape_pct");
    a->energy_r2 = num_of(j, "energy_r2");
    a->base_time_mape_pct = num_of(j, "base_time_mape_pct");
    a->base_energy_mape_pct = num_of(j, "base_energy_mape_pct");
    return ERG_OK;
}
