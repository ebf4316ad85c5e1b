/* SPDX-License-Identifier: MIT */
/*
 * Fitting HYMELL's level-1 estimators (Sections 3.1-3.3): regime split, least squares in scaled
 * features with GSL, thresholds from data, neighbour fallback, held-out validation against a
 * roofline baseline (Tables 1-3 layout).
 */
#include <gsl/gsl_errno.h>
#include "core/splitmix.h"
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/model.h"

struct pt {
    erg_op_dims d;
    double x[ERG_OP_MAX_FEATURES];
    double t, e;
    double split, ai;
};

/* The rows of s[0..n) for one op, as fitting points (pts) and as samples (byop), in file order;
 * returns how many. Both fitting passes gather the same way, so their splits agree. */
static size_t gather_op(const erg_op_sample *s, size_t n, erg_op op, struct pt *pts,
                        erg_op_sample *byop)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].dims.op != op)
            continue;
        struct pt *q = &pts[k];
        q->d = s[i].dims;
        erg_op_features(&q->d, q->x);
        q->t = s[i].time_s;
        q->e = s[i].energy_j;
        q->split = erg_op_split_value(&q->d);
        q->ai = op == ERG_OP_GEMM ? erg_gemm_ai(&q->d) : 0;
        byop[k] = s[i];
        k++;
    }
    return k;
}

void erg_fit_options_init(erg_fit_options *o)
{
    memset(o, 0, sizeof *o);
    o->test_fraction = 0.2;
    o->seed = 42;
    o->choose_thresholds = 1;
}

static void note(erg_op_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(erg_op_model *m, const char *fmt, ...)
{
    size_t len = strlen(m->notes);
    if (len + 2 >= sizeof m->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->notes + len, sizeof m->notes - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(m->notes);
    if (len + 1 < sizeof m->notes) {
        m->notes[len] = '\n';
        m->notes[len + 1] = '\0';
    }
}

void erg__lsq_finish(struct erg__lsq *l, unsigned p)
{
    for (unsigned j = 0; j < p; j++)
        l->w[j] = l->coef[j] / l->scale[j];
}

const struct erg__lsq *erg__regime_fit(const struct erg__op_est *e, unsigned r, int energy)
{
    const struct erg__regime *g = &e->reg[r];
    const struct erg__lsq *l;
    if (g->fallback)
        l = g->fallback_to == ERG__FALLBACK_POOLED
                ? (energy ? &e->pooled_energy : &e->pooled_time)
                : (energy ? &e->reg[g->fallback_to].energy : &e->reg[g->fallback_to].time);
    else
        l = energy ? &g->energy : &g->time;
    return l->present ? l : NULL;
}

void erg__roofline_work(const erg_op_dims *d, double *flops, double *bytes)
{
    double b = erg_dtype_bytes(d->dtype);
    switch (d->op) {
    case ERG_OP_RMSNORM: {
        double nd = (double)d->tokens * (double)d->d_model;
        *flops = 4.0 * nd;                            /* square, add, scale, weight */
        *bytes = (2.0 * nd + (double)d->d_model) * b; /* read x, write y, read w */
        return;
    }
    case ERG_OP_SOFTMAX: {
        double r = d->tokens ? (double)d->tokens : (double)d->m;
        double c = d->tokens ? (double)d->tokens : (double)d->n;
        double live = d->tokens ? r * (r + 1) / 2 : r * c; /* causal: lower triangle */
        *flops = 5.0 * live;                               /* max, sub, exp, sum, scale */
        *bytes = 2.0 * r * c * b;                          /* read scores, write probabilities */
        return;
    }
    case ERG_OP_GEMM: {
        double m = (double)d->m, n = (double)d->n, k = (double)d->k;
        *flops = 2.0 * m * n * k;
        *bytes = ((m + n) * k + m * n) * b;
        return;
    }
    }
    *flops = *bytes = 0;
}

double erg__roofline_time(const struct erg__bounds *b, const erg_op_dims *d)
{
    if (!b->present)
        return 0.0;
    double fl, by, t = 0.0;
    erg__roofline_work(d, &fl, &by);
    if (b->peak_flop_s > 0)
        t = fl / b->peak_flop_s;
    if (b->bandwidth_bytes_s > 0)
        t = fmax(t, by / b->bandwidth_bytes_s);
    return t;
}

double erg__roofline_predict(const struct erg__bounds *b, const erg_op_dims *d)
{
    return b->launch_time_s + b->eta * erg__roofline_time(b, d);
}

/*
 * Weighted, scaled, regularised least squares: minimise Σ_i ((x_i·c − y_i)/y_i)² + λ²‖c̃‖², the
 * squared relative error that MAPE measures. Row i of the design is x_i/y_i, the target 1; columns
 * are then divided by their 2-norm s_j (c̃ are the coefficients of the scaled columns).
 * Two candidates: truncated SVD (λ = 0; singular values below 1e-12·σ_max dropped) and Tikhonov
 * with λ minimising generalised cross-validation (GSL's gsl_multifit_linear_gcv, Golub, Heath &
 * Wahba 1979); the one with the smaller GCV score G = ‖r‖²/(n − dof)² is kept, so exact data is
 * fitted exactly and thin, noisy regimes (11 GEMM terms on a dozen points) are shrunk instead of
 * blowing up between the points. *chisq: the relative SSE.
 */
static int lsq_fit(const struct pt *pts, const size_t *idx, size_t n, unsigned p, int energy,
                   struct erg__lsq *out, double *chisq)
{
    memset(out, 0, sizeof *out);
    if (n < (size_t)p + 1)
        return ERG_ESINGULAR;
    enum { NLAMBDA = 40 };
    gsl_matrix *A = gsl_matrix_alloc(n, p);
    gsl_vector *b = gsl_vector_alloc(n);
    gsl_vector *c = gsl_vector_alloc(p);
    gsl_vector *c2 = gsl_vector_alloc(p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_vector *lam = gsl_vector_alloc(NLAMBDA);
    gsl_vector *G = gsl_vector_alloc(NLAMBDA);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, p);
    int rc = ERG_OK;
    if (!A || !b || !c || !c2 || !cov || !lam || !G || !w) {
        rc = ERG_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const struct pt *q = &pts[idx[i]];
        double y = energy ? q->e : q->t;
        for (unsigned j = 0; j < p; j++)
            gsl_matrix_set(A, i, j, q->x[j] / y);
        gsl_vector_set(b, i, 1.0);
    }
    for (unsigned j = 0; j < p; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += gsl_matrix_get(A, i, j) * gsl_matrix_get(A, i, j);
        s = sqrt(s);
        if (!(s > 0) || !isfinite(s))
            s = 1.0;
        out->scale[j] = s;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(A, i, j, gsl_matrix_get(A, i, j) / s);
    }
    size_t rank;
    double chi0, best_lambda = 0, chi_best;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int g = gsl_multifit_linear_tsvd(A, b, 1e-12, c, cov, &chi0, &rank, w);
    if (g != GSL_SUCCESS || rank == 0) {
        gsl_set_error_handler(old);
        rc = ERG_ESINGULAR;
        goto done;
    }
    chi_best = chi0;
    double dof0 = (double)n - (double)rank;
    double g0 = dof0 > 0 ? chi0 / (dof0 * dof0) : (double)INFINITY;
    double lambda, g_lambda;
    /* an (almost) exact fit needs no regularisation: RMS relative residual ≤ 1e-9 */
    int exact = chi0 <= (double)n * 1e-18;
    if (!exact && gsl_multifit_linear_svd(A, w) == GSL_SUCCESS &&
        gsl_multifit_linear_gcv(b, lam, G, &lambda, &g_lambda, w) == GSL_SUCCESS &&
        isfinite(g_lambda) && g_lambda < g0 * (1 - 1e-6)) {
        double rnorm, snorm;
        if (gsl_multifit_linear_solve(lambda, A, b, c2, &rnorm, &snorm, w) == GSL_SUCCESS) {
            gsl_vector_memcpy(c, c2);
            best_lambda = lambda;
            chi_best = rnorm * rnorm;
        }
    }
    gsl_set_error_handler(old);
    for (unsigned j = 0; j < p; j++) {
        out->coef[j] = gsl_vector_get(c, j);
        if (!isfinite(out->coef[j])) {
            rc = ERG_ESINGULAR;
            goto done;
        }
    }
    out->lambda = best_lambda;
    erg__lsq_finish(out, p);
    out->present = 1;
    if (chisq)
        *chisq = chi_best;
done:
    gsl_matrix_free(A);
    gsl_vector_free(b);
    gsl_vector_free(c);
    gsl_vector_free(c2);
    gsl_matrix_free(cov);
    gsl_vector_free(lam);
    gsl_vector_free(G);
    gsl_multifit_linear_free(w);
    return rc;
}

static double lsq_eval(const struct erg__lsq *l, const double *x, unsigned p)
{
    double y = 0;
    for (unsigned j = 0; j < p; j++)
        y += l->w[j] * x[j];
    return y;
}

static unsigned need_points(const erg_fit_options *o, unsigned p)
{
    return o->min_points > p + 1 ? o->min_points : p + 1;
}

/* A launch-bound point's work, at the best rates measured, takes at most this many launch
 * floors: the fixed cost is at least a third of its time. */
#define ERG__LAUNCH_SLACK 2.0

/* Added to the AIC per violation, so the threshold search minimises (violations, AIC)
 * lexicographically: |AIC| of any data set here is far below it. */
#define ERG__VIOLATION_COST 1e9

/*
 * Splits that the threshold search must not choose (docs/predict.md, "Thresholds"): one violation
 * per regime left almost empty (1 ≤ n < need training points: it could only borrow a neighbour's
 * fit), and one per training point put in the launch-bound regime although its roofline time
 * exceeds twice the op's launch floor t0 (its fixed cost per call, struct erg__bounds):
 * launch-bound means the work is too small to matter next to the fixed cost of a call, so its
 * roofline time must be of the order of that cost. (On HYMELL's H100 the paper's th_RMS = 2.5e6
 * meets this with equality: 10^7 bytes at 3.35 TB/s ≈ 3 µs, about one kernel launch.) For GEMM also
 * one per point on the wrong side of the measured ridge point AI* = peak / bandwidth: memory_bound
 * and balanced_mem need AI ≤ AI*, compute_bound AI ≥ AI* (balanced_comp straddles it, as the
 * paper's does).
 */
static unsigned split_violations(const struct erg__op_est *e, const struct pt *pts,
                                 const size_t *train, size_t ntrain, const erg_op_thresholds *th,
                                 unsigned need)
{
    unsigned v = 0;
    for (unsigned r = 0; r < e->nreg; r++)
        if (e->reg[r].n_train > 0 && e->reg[r].n_train < need)
            v++;
    if (!e->bnd.present)
        return v;
    double ridge = e->bnd.bandwidth_bytes_s > 0 ? e->bnd.peak_flop_s / e->bnd.bandwidth_bytes_s
                                                : (double)INFINITY;
    for (size_t i = 0; i < ntrain; i++) {
        const struct pt *q = &pts[train[i]];
        unsigned r = erg_op_regime(&q->d, th);
        if (r == 0 && erg__roofline_time(&e->bnd, &q->d) > ERG__LAUNCH_SLACK * e->bnd.launch_time_s)
            v++;
        /* GEMM: the memory side of the ridge point (peak / bandwidth) is memory_bound and
         * balanced_mem, compute_bound lies beyond it */
        if (e->nreg == 5 && (((r == 1 || r == 2) && q->ai > ridge) || (r == 4 && q->ai < ridge)))
            v++;
    }
    return v;
}

/*
 * Fit every regime of op e on the training points under thresholds th; thin regimes fall back to
 * the nearest fitted one (the lower one first), and with none fitted every regime uses one pooled
 * fit. *obj: the AIC of the fit (below). ERG_ESINGULAR when nothing can be fitted.
 */
static int fit_regimes(struct erg__op_est *e, const struct pt *pts, const size_t *train,
                       size_t ntrain, const erg_op_thresholds *th, const erg_fit_options *o,
                       size_t *scratch, double *obj)
{
    unsigned p = e->nfeat, need = need_points(o, p);
    int any = 0, rc;
    memset(e->reg, 0, sizeof e->reg);
    memset(&e->pooled_time, 0, sizeof e->pooled_time);
    memset(&e->pooled_energy, 0, sizeof e->pooled_energy);
    for (unsigned r = 0; r < e->nreg; r++) {
        size_t k = 0;
        for (size_t i = 0; i < ntrain; i++)
            if (erg_op_regime(&pts[train[i]].d, th) == r)
                scratch[k++] = train[i];
        e->reg[r].n_train = (unsigned)k;
        if (k < need)
            continue;
        if ((rc = lsq_fit(pts, scratch, k, p, 0, &e->reg[r].time, NULL)) == ERG_ENOMEM)
            return rc;
        if (e->has_energy &&
            (rc = lsq_fit(pts, scratch, k, p, 1, &e->reg[r].energy, NULL)) == ERG_ENOMEM)
            return rc;
        if (e->reg[r].time.present)
            any = 1;
    }
    if (!any) {
        if ((rc = lsq_fit(pts, train, ntrain, p, 0, &e->pooled_time, NULL)) != ERG_OK)
            return rc == ERG_ENOMEM ? rc : ERG_ESINGULAR;
        if (e->has_energy &&
            (rc = lsq_fit(pts, train, ntrain, p, 1, &e->pooled_energy, NULL)) == ERG_ENOMEM)
            return rc;
        for (unsigned r = 0; r < e->nreg; r++) {
            e->reg[r].fallback = 1;
            e->reg[r].fallback_to = ERG__FALLBACK_POOLED;
        }
    } else {
        for (unsigned r = 0; r < e->nreg; r++) {
            if (e->reg[r].time.present)
                continue;
            for (unsigned dist = 1; dist < e->nreg; dist++) {
                if (r >= dist && e->reg[r - dist].time.present) {
                    e->reg[r].fallback_to = r - dist;
                    break;
                }
                if (r + dist < e->nreg && e->reg[r + dist].time.present) {
                    e->reg[r].fallback_to = r + dist;
                    break;
                }
            }
            e->reg[r].fallback = 1;
        }
    }
    /* Objective: Akaike's information criterion of the piecewise fit, time plus energy,
     * AIC = n·ln(RSS/n) + 2K with K the coefficients actually fitted (Akaike 1974); training RSS
     * alone always prefers more regimes. (The small-sample AICc was tried: on 18-point data it
     * refused splits that halve the held-out error.) */
    double sse_t = 0, sse_e = 0;
    for (size_t i = 0; i < ntrain; i++) {
        const struct pt *q = &pts[train[i]];
        unsigned r = erg_op_regime(&q->d, th);
        const struct erg__lsq *lt = erg__regime_fit(e, r, 0);
        double rt = (lsq_eval(lt, q->x, p) - q->t) / q->t;
        sse_t += rt * rt;
        const struct erg__lsq *le = e->has_energy ? erg__regime_fit(e, r, 1) : NULL;
        if (le) {
            double re = (lsq_eval(le, q->x, p) - q->e) / q->e;
            sse_e += re * re;
        }
    }
    unsigned fitted = 0;
    for (unsigned r = 0; r < e->nreg; r++)
        if (e->reg[r].time.present)
            fitted++;
    double nn = (double)ntrain, k = (double)(fitted ? fitted : 1) * p;
    double pen = 2 * k;
    double aic = nn * log(fmax(sse_t / nn, 1e-30)) + pen;
    if (e->has_energy)
        aic += nn * log(fmax(sse_e / nn, 1e-30)) + pen;
    *obj = aic + ERG__VIOLATION_COST * (double)split_violations(e, pts, train, ntrain, th, need);
    return ERG_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Candidate thresholds: geometric midpoints between consecutive distinct values, one below the
 * smallest and one above the largest (an empty regime), and the current value. */
static size_t candidates(double *v, size_t n, double current, double *out)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = 0;
    out[k++] = current;
    if (n == 0)
        return k;
    out[k++] = v[0] * 0.5;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[i - 1])
            out[k++] = sqrt(v[i] * v[i - 1]);
    out[k++] = v[n - 1] * 2.0;
    return k;
}

static double *th_slot(erg_op_thresholds *t, erg_op op, unsigned which)
{
    if (op == ERG_OP_RMSNORM)
        return &t->rms_nd;
    if (op == ERG_OP_SOFTMAX)
        return &t->softmax_n;
    return which == 0 ? &t->gemm_f : &t->gemm_ai[which - 1];
}

/* Choose op's thresholds from the training data: coordinate search, two passes, each threshold
 * over its candidates (kept in order for GEMM's AI bounds), minimising the AIC of the piecewise
 * fit (fit_regimes), so that a split must pay for the coefficients it adds. */
static int choose_thresholds(struct erg__op_est *e, erg_op op, const struct pt *pts,
                             const size_t *train, size_t ntrain, erg_op_thresholds *th,
                             const erg_fit_options *o, size_t *scratch)
{
    unsigned nth = op == ERG_OP_GEMM ? 4 : 1;
    double *vals = malloc((ntrain + 1) * sizeof *vals);
    double *cand = malloc((ntrain + 4) * sizeof *cand);
    int rc = ERG_OK;
    if (!vals || !cand) {
        rc = ERG_ENOMEM;
        goto done;
    }
    double best;
    if ((rc = fit_regimes(e, pts, train, ntrain, th, o, scratch, &best)) != ERG_OK)
        goto done;
    /* GEMM's AI bounds first, F_launch last: the AI regimes' meaning (ridge side) and the launch
     * regime's (small work) trade violations point for point, and starting from F_launch left
     * the search stuck with everything in the launch regime. */
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned wi = 0; wi < nth; wi++) {
            unsigned w = nth == 4 ? (wi + 1) % 4 : wi;
            size_t nv = 0;
            for (size_t i = 0; i < ntrain; i++) {
                const struct pt *q = &pts[train[i]];
                /* AI candidates from every point, not only those above F_launch: F_launch
                 * may still move down and hand its points to the AI regimes */
                vals[nv++] = w == 0 ? q->split : q->ai;
            }
            double *slot = th_slot(th, op, w);
            size_t nc = candidates(vals, nv, *slot, cand);
            erg_op_thresholds start = *th, keep = *th;
            for (size_t c = 1; c < nc; c++) {
                *th = start;
                *slot = cand[c];
                /* AI_low ≤ AI_mid ≤ AI_high: a candidate pushes the others along (so that the
                 * middle bound can empty a regime on either side) */
                for (unsigned j = 0; w >= 1 && j < 3; j++) {
                    if (j + 1 < w && th->gemm_ai[j] > cand[c])
                        th->gemm_ai[j] = cand[c];
                    if (j + 1 > w && th->gemm_ai[j] < cand[c])
                        th->gemm_ai[j] = cand[c];
                }
                double obj;
                if ((rc = fit_regimes(e, pts, train, ntrain, th, o, scratch, &obj)) == ERG_ENOMEM)
                    goto done;
                if (rc == ERG_OK && obj < best - 1e-9 * fabs(best)) {
                    best = obj;
                    keep = *th;
                }
            }
            *th = keep;
            rc = ERG_OK;
        }
    }
done:
    free(vals);
    free(cand);
    return rc;
}

static double mean_finite(const double *v, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            s += v[i];
            k++;
        }
    return k ? s / (double)k : (double)NAN;
}

struct acc {
    size_t n;
    double ape, sy, syy, sres;
};

static void acc_add(struct acc *a, double pred, double y)
{
    a->n++;
    a->ape += fabs(pred - y) / y;
    a->sy += y;
    a->syy += y * y;
    a->sres += (pred - y) * (pred - y);
}

static void acc_result(const struct acc *a, double *mape, double *r2)
{
    *mape = a->n ? 100.0 * a->ape / (double)a->n : (double)NAN;
    double sst = a->syy - a->sy * a->sy / (double)(a->n ? a->n : 1);
    *r2 = a->n >= 2 && sst > 0 ? 1.0 - a->sres / sst : (double)NAN;
}

static double enveloped_time(const struct erg__op_est *e, const erg_op_dims *d, double t_fit,
                             int *ok);

static void validate(const erg_op_model *m, struct erg__op_est *e, const struct pt *pts,
                     const size_t *test, size_t ntest)
{
    unsigned p = e->nfeat;
    struct acc at[ERG_OP_MAX_REGIMES], ae[ERG_OP_MAX_REGIMES], rt[ERG_OP_MAX_REGIMES],
        re[ERG_OP_MAX_REGIMES];
    memset(at, 0, sizeof at);
    memset(ae, 0, sizeof ae);
    memset(rt, 0, sizeof rt);
    memset(re, 0, sizeof re);
    for (size_t i = 0; i < ntest; i++) {
        const struct pt *q = &pts[test[i]];
        unsigned r = erg_op_regime(&q->d, &m->th);
        /* the estimator as predict uses it inside the range: kept within the roofline envelope,
         * its power within the observed range (the range check itself is left out: a random
         * split always holds out some extreme points, and predict's roofline answer for those
         * is scored in the roofline columns) */
        int ok;
        double t_pred = enveloped_time(e, &q->d, lsq_eval(erg__regime_fit(e, r, 0), q->x, p), &ok);
        double e_pred = NAN;
        if (e->has_energy) {
            double pw =
                ok ? lsq_eval(erg__regime_fit(e, r, 1), q->x, p) / t_pred : e->bnd.power_med_w;
            e_pred = fmin(fmax(pw, e->bnd.power_lo_w / ERG_PREDICT_SLACK),
                          e->bnd.power_hi_w * ERG_PREDICT_SLACK) *
                     t_pred;
            if (!isfinite(e_pred))
                e_pred = e->bnd.power_med_w * t_pred;
        }
        acc_add(&at[r], t_pred, q->t);
        double troof = erg__roofline_predict(&e->bnd, &q->d); /* what predict falls back to */
        acc_add(&rt[r], troof, q->t);
        if (e->has_energy) {
            acc_add(&ae[r], e_pred, q->e);
            acc_add(&re[r], e->bnd.power_med_w * troof, q->e);
        }
    }
    double col[8][ERG_OP_MAX_REGIMES];
    unsigned tr = 0, te = 0;
    for (unsigned r = 0; r < e->nreg; r++) {
        erg_op_validation *v = &e->val[r];
        v->n_train = e->reg[r].n_train;
        v->n_test = (unsigned)at[r].n;
        tr += v->n_train;
        te += v->n_test;
        acc_result(&at[r], &v->time_mape_pct, &v->time_r2);
        acc_result(&rt[r], &v->roof_time_mape_pct, &v->roof_time_r2);
        if (e->has_energy) {
            acc_result(&ae[r], &v->energy_mape_pct, &v->energy_r2);
            acc_result(&re[r], &v->roof_energy_mape_pct, &v->roof_energy_r2);
        } else {
            v->energy_mape_pct = v->energy_r2 = v->roof_energy_mape_pct = v->roof_energy_r2 = NAN;
        }
        v->fallback = e->reg[r].fallback;
        v->fallback_to = e->reg[r].fallback_to;
        col[0][r] = v->time_mape_pct;
        col[1][r] = v->time_r2;
        col[2][r] = v->energy_mape_pct;
        col[3][r] = v->energy_r2;
        col[4][r] = v->roof_time_mape_pct;
        col[5][r] = v->roof_time_r2;
        col[6][r] = v->roof_energy_mape_pct;
        col[7][r] = v->roof_energy_r2;
    }
    /* The paper's "Average" row is the mean of the regime rows (Table 1: (1.288+2.098)/2 = 1.693).
     */
    erg_op_validation *a = &e->val[ERG_OP_MAX_REGIMES];
    a->n_train = tr;
    a->n_test = te;
    a->time_mape_pct = mean_finite(col[0], e->nreg);
    a->time_r2 = mean_finite(col[1], e->nreg);
    a->energy_mape_pct = mean_finite(col[2], e->nreg);
    a->energy_r2 = mean_finite(col[3], e->nreg);
    a->roof_time_mape_pct = mean_finite(col[4], e->nreg);
    a->roof_time_r2 = mean_finite(col[5], e->nreg);
    a->roof_energy_mape_pct = mean_finite(col[6], e->nreg);
    a->roof_energy_r2 = mean_finite(col[7], e->nreg);
    a->threshold_lo = 0;
    a->threshold_hi = INFINITY;
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The op's physical bounds from its training rows (struct erg__bounds). */
static void op_bounds(struct erg__op_est *e, const erg_op_model *m, const struct pt *pts,
                      const size_t *train, size_t ntrain)
{
    struct erg__bounds *b = &e->bnd;
    memset(b, 0, sizeof *b);
    b->bandwidth_bytes_s = m->bandwidth_bytes_s;
    double t_min = INFINITY;
    b->work_lo = b->ai_lo = INFINITY;
    for (size_t i = 0; i < ntrain; i++) {
        const struct pt *q = &pts[train[i]];
        double fl, by;
        erg__roofline_work(&q->d, &fl, &by);
        b->peak_flop_s = fmax(b->peak_flop_s, fl / q->t);
        t_min = fmin(t_min, q->t);
        b->work_lo = fmin(b->work_lo, q->split);
        b->work_hi = fmax(b->work_hi, q->split);
        if (e->nreg == 5) {
            b->ai_lo = fmin(b->ai_lo, q->ai);
            b->ai_hi = fmax(b->ai_hi, q->ai);
        }
    }
    if (e->nreg != 5)
        b->ai_lo = b->ai_hi = 0;
    b->present = ntrain > 0;
    b->power_lo_w = b->power_med_w = b->power_hi_w = NAN;
    b->eta = 1.0;
    b->launch_time_s = t_min;
    double *v = malloc(2 * ntrain * sizeof *v);
    if (!v || ntrain == 0) {
        free(v);
        return;
    }
    /* Launch floor t0: the fixed cost of a call, the intercept of t = t0 + s·roofline fitted by
     * relative least squares (weights 1/t²) over the half of the rows with the least work,
     * clamped into [0, smallest time]. A GPU kernel's launch shows as t0 ≈ the flat small-op
     * time; a CPU loop without overhead gets t0 ≈ 0. */
    {
        double *w0 = v + ntrain;
        for (size_t i = 0; i < ntrain; i++)
            w0[i] = pts[train[i]].split;
        qsort(w0, ntrain, sizeof *w0, cmp_double);
        double w_half = w0[(ntrain - 1) / 2];
        double A = 0, B = 0, C = 0, D = 0, E = 0;
        size_t k = 0;
        for (size_t i = 0; i < ntrain; i++) {
            const struct pt *q = &pts[train[i]];
            if (q->split > w_half)
                continue;
            double r = erg__roofline_time(b, &q->d), wt = 1.0 / (q->t * q->t);
            A += wt;
            B += wt * r;
            C += wt * r * r;
            D += wt * q->t;
            E += wt * r * q->t;
            k++;
        }
        double det = A * C - B * B;
        if (k >= 2 && det > 1e-12 * A * C)
            b->launch_time_s = fmin(fmax((D * C - B * E) / det, 0.0), t_min);
    }
    /* η over the quarter of the rows with the most work, where the work dominates the time */
    double *w = v + ntrain;
    for (size_t i = 0; i < ntrain; i++)
        w[i] = pts[train[i]].split;
    qsort(w, ntrain, sizeof *w, cmp_double);
    size_t qn = ntrain >= 4 ? ntrain / 4 : 1, nl = 0;
    double w_large = w[ntrain - qn];
    for (size_t i = 0; i < ntrain; i++) {
        const struct pt *q = &pts[train[i]];
        double tr = erg__roofline_time(b, &q->d);
        if (q->split >= w_large && tr > 0)
            v[nl++] = (q->t - b->launch_time_s) / tr;
    }
    b->eta = nl ? fmax(1.0, median_of(v, nl)) : 1.0;
    b->eta_hi = b->eta;
    for (size_t i = 0; i < ntrain; i++) {
        const struct pt *q = &pts[train[i]];
        double tr = erg__roofline_time(b, &q->d);
        if (tr > 0)
            b->eta_hi = fmax(b->eta_hi, (q->t - b->launch_time_s) / tr);
    }
    if (e->has_energy) {
        for (size_t i = 0; i < ntrain; i++)
            v[i] = pts[train[i]].e / pts[train[i]].t;
        b->power_med_w = median_of(v, ntrain);
        b->power_lo_w = v[0];
        b->power_hi_w = v[ntrain - 1];
    }
    free(v);
}

static void regime_bounds(erg_op op, const erg_op_thresholds *t, unsigned r, double *lo, double *hi)
{
    if (op == ERG_OP_RMSNORM || op == ERG_OP_SOFTMAX) {
        double th = op == ERG_OP_RMSNORM ? t->rms_nd : t->softmax_n;
        *lo = r == 0 ? 0 : th;
        *hi = r == 0 ? th : (double)INFINITY;
        return;
    }
    /* GEMM: regime 0 on F, the others on AI */
    if (r == 0) {
        *lo = 0;
        *hi = t->gemm_f;
        return;
    }
    *lo = r == 1 ? 0 : t->gemm_ai[r - 2];
    *hi = r == 4 ? (double)INFINITY : t->gemm_ai[r - 1];
}

unsigned erg__op_est_features(const struct erg__op_est *e, const erg_op_dims *d, double *x)
{
    if (e->form == ERG_GEMM_FORM_CACHE && d->op == ERG_OP_GEMM)
        return erg_gemm_cache_features(d, e->cache_bytes, x);
    return erg_op_features(d, x);
}

/*
 * The cache-aware CPU GEMM form (erg_gemm_cache_features): one fit over every training point
 * (each regime uses it: the pooled fit), its cache size chosen among the powers of two from
 * 64 KiB to 64 MiB by the smallest relative SSE on the training points (one parameter, the same
 * number of coefficients for each candidate, so no penalty is needed; caches come in powers of
 * two). Recomputes every point's features (pts[0..np)) for the chosen size.
 */
static int fit_cache_form(struct erg__op_est *e, struct pt *pts, size_t np, const size_t *train,
                          size_t ntrain, const erg_op_thresholds *th)
{
    double best = INFINITY, best_c = 0;
    int rc = ERG_OK;
    for (int lg = 16; lg <= 26; lg++) {
        e->cache_bytes = ldexp(1.0, lg);
        for (size_t i = 0; i < np; i++)
            erg__op_est_features(e, &pts[i].d, pts[i].x);
        struct erg__lsq l;
        double chisq;
        rc = lsq_fit(pts, train, ntrain, e->nfeat, 0, &l, &chisq);
        if (rc == ERG_ENOMEM)
            return rc;
        if (rc == ERG_OK && chisq < best * (1 - 1e-9)) {
            best = chisq;
            best_c = e->cache_bytes;
        }
    }
    if (!(best_c > 0))
        return ERG_ESINGULAR;
    e->cache_bytes = best_c;
    for (size_t i = 0; i < np; i++)
        erg__op_est_features(e, &pts[i].d, pts[i].x);
    memset(e->reg, 0, sizeof e->reg);
    if ((rc = lsq_fit(pts, train, ntrain, e->nfeat, 0, &e->pooled_time, NULL)) != ERG_OK)
        return rc;
    if (e->has_energy &&
        (rc = lsq_fit(pts, train, ntrain, e->nfeat, 1, &e->pooled_energy, NULL)) == ERG_ENOMEM)
        return rc;
    for (unsigned r = 0; r < e->nreg; r++) {
        e->reg[r].fallback = 1;
        e->reg[r].fallback_to = ERG__FALLBACK_POOLED;
    }
    for (size_t i = 0; i < ntrain; i++)
        e->reg[erg_op_regime(&pts[train[i]].d, th)].n_train++;
    return ERG_OK;
}

static int fit_op(erg_op_model *m, erg_op op, struct pt *pts, size_t np, const erg_op_sample *src,
                  const erg_fit_options *o, uint64_t *rng, erg_diag *diag)
{
    struct erg__op_est *e = &m->op[op];
    memset(e, 0, sizeof *e);
    e->nfeat = erg_op_feature_count(op);
    if (op == ERG_OP_GEMM && o->gemm_form == ERG_GEMM_FORM_CACHE) {
        e->form = ERG_GEMM_FORM_CACHE;
        e->nfeat = ERG_GEMM_CACHE_FEATURES;
    }
    e->nreg = erg_op_regime_count(op);
    e->dtype = pts[0].d.dtype;
    snprintf(e->kappa, sizeof e->kappa, "%s", src[0].kappa);
    e->has_energy = 1;
    for (size_t i = 0; i < np; i++) {
        if (pts[i].d.dtype != e->dtype)
            return erg_diag_set(
                diag, ERG_EINVAL, NULL, "%s samples mix dtypes %s and %s: fit one dtype at a time",
                erg_op_name(op), erg_dtype_name(e->dtype), erg_dtype_name(pts[i].d.dtype));
        if (!(pts[i].e > 0))
            e->has_energy = 0;
        if (strcmp(src[i].kappa, e->kappa) != 0 && !strchr(e->kappa, '*')) {
            size_t l = strlen(e->kappa);
            if (l + 2 < sizeof e->kappa)
                strcat(e->kappa, "*");
        }
    }
    if (!e->has_energy)
        note(m, "%s: some samples have no (positive) energy: time only", erg_op_name(op));
    for (unsigned j = 0; j < 5; j++) {
        e->range_lo[j] = INT64_MAX;
        e->range_hi[j] = 0;
    }
    size_t *perm = malloc(np * sizeof *perm), *scratch = malloc(np * sizeof *scratch);
    int rc = ERG_OK;
    if (!perm || !scratch) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < np; i++)
        perm[i] = i;
    for (size_t i = np; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)(erg__splitmix64(rng) % i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    size_t ntest = (size_t)floor(o->test_fraction * (double)np + 0.5);
    if (o->test_fraction > 0 && ntest == 0 && np >= 5)
        ntest = 1;
    if (ntest >= np)
        ntest = np - 1;
    const size_t *test = perm, *train = perm + ntest;
    size_t ntrain = np - ntest;
    for (size_t i = 0; i < ntrain; i++) {
        const erg_op_dims *d = &pts[train[i]].d;
        int64_t v[5] = {d->m, d->n, d->k, d->tokens, d->d_model};
        for (unsigned j = 0; j < 5; j++) {
            if (v[j] <= 0) /* unused by this row (e.g. tokens of a row-wise softmax) */
                continue;
            if (v[j] < e->range_lo[j])
                e->range_lo[j] = v[j];
            if (v[j] > e->range_hi[j])
                e->range_hi[j] = v[j];
        }
    }
    for (unsigned j = 0; j < 5; j++)
        if (e->range_hi[j] == 0) /* never trained: 0..0, which in_range skips */
            e->range_lo[j] = 0;
    if (ntrain < e->nfeat + 1) {
        rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                          "%s: %zu training samples, the estimator needs at least %u",
                          erg_op_name(op), ntrain, e->nfeat + 1);
        goto done;
    }
    op_bounds(e, m, pts, train, ntrain);
    if (e->form == ERG_GEMM_FORM_CACHE) {
        rc = fit_cache_form(e, pts, np, train, ntrain, &m->th);
        if (rc != ERG_OK) {
            rc = erg_diag_set(diag, rc, NULL, "%s: least squares failed (%s)", erg_op_name(op),
                              erg_strerror(rc));
            goto done;
        }
        note(m,
             "gemm: cache-aware CPU form, weights cached up to a footprint of %.0f KiB; "
             "one fit for every regime",
             e->cache_bytes / 1024);
        goto fitted;
    }
    if (o->choose_thresholds) {
        erg_op_thresholds before = m->th;
        rc = choose_thresholds(e, op, pts, train, ntrain, &m->th, o, scratch);
        /* 1: the search moved a threshold; 2: it ran and kept the paper's */
        e->chosen = rc != ERG_OK ? 0 : memcmp(&before, &m->th, sizeof before) != 0 ? 1 : 2;
    }
    double obj;
    if (rc == ERG_OK)
        rc = fit_regimes(e, pts, train, ntrain, &m->th, o, scratch, &obj);
    if (rc != ERG_OK) {
        rc = erg_diag_set(diag, rc, NULL, "%s: least squares failed (%s)", erg_op_name(op),
                          erg_strerror(rc));
        goto done;
    }
fitted:
    for (unsigned r = 0; r < e->nreg; r++) {
        regime_bounds(op, &m->th, r, &e->val[r].threshold_lo, &e->val[r].threshold_hi);
        if (e->reg[r].fallback && e->form != ERG_GEMM_FORM_CACHE)
            note(m, "%s: regime %s has %u training points (< %u): uses %s", erg_op_name(op),
                 erg_op_regime_name(op, r), e->reg[r].n_train, need_points(o, e->nfeat),
                 e->reg[r].fallback_to == ERG__FALLBACK_POOLED
                     ? "one fit over all regimes"
                     : erg_op_regime_name(op, e->reg[r].fallback_to));
    }
    e->present = 1;
    /* Validation needs the roofline figures, measured on every op's training rows first. */
    memcpy(scratch, test, ntest * sizeof *test);
    validate(m, e, pts, scratch, ntest);
done:
    free(perm);
    free(scratch);
    return rc;
}

int erg_op_model_fit(const erg_op_sample *s, size_t n, const erg_fit_options *opt,
                     erg_op_model **out, erg_diag *diag)
{
    erg_fit_options defaults;
    erg_fit_options_init(&defaults);
    const erg_fit_options *o = opt ? opt : &defaults;
    *out = NULL;
    if (!s || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no samples to fit");
    if (!(o->test_fraction >= 0 && o->test_fraction < 1))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "test fraction must be in [0, 1)");
    erg_op_model *m = calloc(1, sizeof *m);
    struct pt *pts = malloc(n * sizeof *pts);
    erg_op_sample *byop = malloc(n * sizeof *byop);
    int rc = ERG_OK;
    if (!m || !pts || !byop) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto fail;
    }
    if (o->target_kind)
        snprintf(m->target_kind, sizeof m->target_kind, "%s", o->target_kind);
    if (o->target_desc)
        snprintf(m->target_desc, sizeof m->target_desc, "%s", o->target_desc);
    if (!o->target_kind || !o->target_desc) {
        char k[128], d[256];
        erg_target_identity(k, sizeof k, d, sizeof d);
        if (!o->target_kind)
            snprintf(m->target_kind, sizeof m->target_kind, "%s", k);
        if (!o->target_desc)
            snprintf(m->target_desc, sizeof m->target_desc, "%s", d);
    }
    if (o->thresholds)
        m->th = *o->thresholds;
    else
        erg_op_thresholds_paper(&m->th);
    m->test_fraction = o->test_fraction;
    m->seed = o->seed;
    m->n_samples = n;
    m->mean_power_w = NAN;
    /* Check every sample and take the weakest grade of the energy data. */
    for (size_t i = 0; i < n; i++) {
        if (erg_op_dims_check(&s[i].dims, NULL) != ERG_OK || !(s[i].time_s > 0)) {
            rc = erg_diag_set(diag, ERG_EPARSE, NULL,
                              "sample %zu: bad dimensions or non-positive time", i + 1);
            goto fail;
        }
        if (s[i].has_grade && s[i].energy_j > 0) {
            m->grade = m->has_grade ? erg_grade_weakest(m->grade, s[i].grade) : s[i].grade;
            m->has_grade = 1;
        }
    }
    /* First pass: draw each op's split as fit_op will (same generator sequence) and measure the
     * roofline's peak FLOP/s, bandwidth and mean power on the training rows only, so that the
     * baseline does not see the held-out points either. */
    uint64_t rng = o->seed;
    size_t counts[ERG_OP_COUNT] = {0};
    double psum = 0;
    size_t pn = 0;
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        size_t k = gather_op(s, n, (erg_op)op, pts, byop);
        counts[op] = k;
        if (k == 0)
            continue;
        /* same permutation as fit_op will draw: replay the generator on a copy */
        uint64_t r2 = rng;
        size_t *perm = malloc(k * sizeof *perm);
        if (!perm) {
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < k; i++)
            perm[i] = i;
        for (size_t i = k; i > 1; i--) {
            size_t j = (size_t)(erg__splitmix64(&r2) % i);
            size_t t = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = t;
        }
        size_t ntest = (size_t)floor(o->test_fraction * (double)k + 0.5);
        if (o->test_fraction > 0 && ntest == 0 && k >= 5)
            ntest = 1;
        if (ntest >= k)
            ntest = k - 1;
        for (size_t i = ntest; i < k; i++) {
            const struct pt *q = &pts[perm[i]];
            double fl, by;
            erg__roofline_work(&q->d, &fl, &by);
            if (op == ERG_OP_GEMM && fl / q->t > m->peak_flop_s)
                m->peak_flop_s = fl / q->t;
            /* one eager call's fixed cost: the fastest F.linear of a PyTorch profile */
            if (op == ERG_OP_GEMM && !strncmp(byop[perm[i]].kappa, "torch-", 6) &&
                (m->call_time_s == 0 || q->t < m->call_time_s))
                m->call_time_s = q->t;
            if (by / q->t > m->bandwidth_bytes_s)
                m->bandwidth_bytes_s = by / q->t;
            if (q->e > 0) {
                psum += q->e / q->t;
                pn++;
            }
        }
        free(perm);
        rng = r2;
    }
    if (pn)
        m->mean_power_w = psum / (double)pn;
    /* Second pass: fit each op with the same generator sequence. */
    rng = o->seed;
    int fitted = 0;
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        if (!counts[op])
            continue;
        size_t k = gather_op(s, n, (erg_op)op, pts, byop);
        erg_diag sub;
        erg_diag_clear(&sub);
        rc = fit_op(m, (erg_op)op, pts, k, byop, o, &rng, &sub);
        if (rc == ERG_ENOMEM) {
            erg_diag_set(diag, rc, NULL, "%s", sub.detail);
            goto fail;
        }
        if (rc != ERG_OK) {
            note(m, "%s left out: %s", erg_op_name((erg_op)op), sub.detail);
            if (diag)
                *diag = sub;
            continue;
        }
        fitted++;
    }
    if (!fitted) {
        rc = rc != ERG_OK ? rc : ERG_EINVAL;
        goto fail;
    }
    erg_diag_clear(diag);
    free(pts);
    free(byop);
    *out = m;
    return ERG_OK;
fail:
    free(pts);
    free(byop);
    free(m);
    return rc;
}

void erg_op_model_free(erg_op_model *m)
{
    if (m) {
        free(m->kernels);
        erg__gemm_map_free(m->gemm_map);
    }
    free(m);
}

const char *erg_op_model_target(const erg_op_model *m)
{
    return m->target_kind;
}

erg_grade erg_op_model_grade(const erg_op_model *m)
{
    return m->has_grade ? m->grade : ERG_GRADE_ESTIMATOR;
}

int erg_op_model_has(const erg_op_model *m, erg_op op)
{
    if ((unsigned)op >= ERG_OP_COUNT || !m->op[op].present)
        return 0;
    return m->op[op].has_energy ? 2 : 1;
}

const char *erg_op_model_notes(const erg_op_model *m)
{
    return m->notes;
}

void erg_op_model_roofline(const erg_op_model *m, double *peak_flop_s, double *bandwidth_bytes_s,
                           double *mean_power_w)
{
    if (peak_flop_s)
        *peak_flop_s = m->peak_flop_s;
    if (bandwidth_bytes_s)
        *bandwidth_bytes_s = m->bandwidth_bytes_s;
    if (mean_power_w)
        *mean_power_w = m->mean_power_w;
}

double erg_op_model_call_time_s(const erg_op_model *m)
{
    return m ? m->call_time_s : 0;
}

int erg_op_model_validation(const erg_op_model *m, erg_op op, unsigned r, erg_op_validation *out)
{
    if ((unsigned)op >= ERG_OP_COUNT || !m->op[op].present ||
        (r != ERG_OP_MAX_REGIMES && r >= m->op[op].nreg))
        return ERG_EINVAL;
    *out = m->op[op].val[r];
    return ERG_OK;
}

int erg_op_model_bounds(const erg_op_model *m, erg_op op, erg_op_bounds *out)
{
    if ((unsigned)op >= ERG_OP_COUNT || !m->op[op].present)
        return ERG_EINVAL;
    const struct erg__bounds *b = &m->op[op].bnd;
    if (!b->present)
        return ERG_ENOENT;
    out->peak_flop_s = b->peak_flop_s;
    out->bandwidth_bytes_s = b->bandwidth_bytes_s;
    out->launch_time_s = b->launch_time_s;
    out->eta = b->eta;
    out->eta_hi = b->eta_hi;
    out->work_lo = b->work_lo;
    out->work_hi = b->work_hi;
    out->ai_lo = b->ai_lo;
    out->ai_hi = b->ai_hi;
    out->power_lo_w = b->power_lo_w;
    out->power_med_w = b->power_med_w;
    out->power_hi_w = b->power_hi_w;
    return ERG_OK;
}

void erg_op_model_thresholds(const erg_op_model *m, erg_op_thresholds *t, int *chosen)
{
    *t = m->th;
    if (chosen)
        for (unsigned op = 0; op < ERG_OP_COUNT; op++)
            chosen[op] = m->op[op].chosen;
}

/* Is d inside op e's training range? If not, say why in why[]. A dimension the training rows
 * never used (range 0..0: tokens of a row-wise softmax model, m and n of a causal one) has no
 * range to leave; the work check below (√(R·C) = N) covers it with the real trained range. */
static int in_range(const struct erg__op_est *e, const erg_op_dims *d, char *why, size_t size)
{
    static const char *const dn[5] = {"m", "n", "k", "tokens", "d_model"};
    static const char *const wn[ERG_OP_COUNT] = {"N*d", "N (sqrt(R*C))", "F (FLOPs)"};
    int64_t v[5] = {d->m, d->n, d->k, d->tokens, d->d_model};
    for (unsigned j = 0; j < 5; j++)
        if (v[j] > 0 && e->range_hi[j] > 0 && (v[j] < e->range_lo[j] || v[j] > e->range_hi[j])) {
            snprintf(why, size, "%s = %lld is outside the trained %lld..%lld", dn[j],
                     (long long)v[j], (long long)e->range_lo[j], (long long)e->range_hi[j]);
            return 0;
        }
    const struct erg__bounds *b = &e->bnd;
    if (!b->present)
        return 1;
    double w = erg_op_split_value(d), tol = 1e-9;
    if (w < b->work_lo * (1 - tol) || w > b->work_hi * (1 + tol)) {
        snprintf(why, size, "%s = %.4g is outside the trained %.4g..%.4g", wn[d->op], w, b->work_lo,
                 b->work_hi);
        return 0;
    }
    if (d->op == ERG_OP_GEMM) {
        double ai = erg_gemm_ai(d);
        if (ai < b->ai_lo * (1 - tol) || ai > b->ai_hi * (1 + tol)) {
            snprintf(why, size,
                     "arithmetic intensity %.4g FLOP/B is outside the trained %.4g..%.4g", ai,
                     b->ai_lo, b->ai_hi);
            return 0;
        }
    }
    return 1;
}

/* The regime fit's time t_fit for d, kept inside the roofline envelope measured in training:
 * below the floor max(roofline at the best rates, launch floor) (or not finite) the floor
 * answers; above the top launch + eta_hi · roofline (slower, relative to its roofline,
 * than any training row: the fit wanders between sparse points) the top answers. *ok: 1 when
 * t_fit was kept. */
static double enveloped_time(const struct erg__op_est *e, const erg_op_dims *d, double t_fit,
                             int *ok)
{
    const struct erg__bounds *b = &e->bnd;
    double roof = erg__roofline_time(b, d);
    double lo = fmax(roof, b->launch_time_s);
    double hi = ERG_PREDICT_SLACK * (b->launch_time_s + b->eta_hi * roof);
    *ok = 0;
    if (!(t_fit >= lo) || !isfinite(t_fit))
        return lo; /* as fast as the best rates measured allow */
    if (t_fit > hi)
        return hi;
    *ok = 1;
    return t_fit;
}

static int predict_core(const erg_op_model *m, const struct erg__op_est *e, const erg_op_dims *d,
                        erg_op_prediction *out, erg_diag *diag);

int erg_op_model_predict(const erg_op_model *m, const erg_op_dims *d, erg_op_prediction *out,
                         erg_diag *diag)
{
    int rc = erg_op_dims_check(d, diag);
    if (rc != ERG_OK)
        return rc;
    const struct erg__op_est *e = &m->op[d->op];
    if (!e->present)
        return erg_diag_set(diag, ERG_ENOTSUP, NULL, "model for %s has no %s estimator",
                            m->target_kind, erg_op_name(d->op));
    if (d->dtype != e->dtype)
        return erg_diag_set(diag, ERG_ENOTSUP, NULL, "the %s estimator was fitted on %s, not %s",
                            erg_op_name(d->op), erg_dtype_name(e->dtype), erg_dtype_name(d->dtype));
    rc = predict_core(m, e, d, out, diag);
    /* a GPU target's measured-shape map corrects a GEMM inside the trained range (gemm_map.c) */
    double ratio, pw;
    if (rc == ERG_OK && m->gemm_map && !out->extrapolated &&
        erg__gemm_map_lookup(m->gemm_map, d, &ratio, &pw)) {
        out->time_s = fmax(out->time_s * ratio, out->floor_time_s);
        if (isfinite(out->energy_j)) {
            if (pw >= e->bnd.power_lo_w / ERG_PREDICT_SLACK &&
                pw <= e->bnd.power_hi_w * ERG_PREDICT_SLACK)
                out->power_w = pw;
            out->energy_j = out->power_w * out->time_s;
        }
    }
    /* A prediction is a time and (NAN: none) an energy; one that overflows is refused, named. */
    if (rc == ERG_OK && (!isfinite(out->time_s) || isinf(out->energy_j)))
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "%s: the predicted time or energy is not finite (the dimensions are "
                            "far outside the fitted range: it overflows a double)",
                            erg_op_name(d->op));
    return rc;
}

/* erg_op_model_predict after the checks. */
static int predict_core(const erg_op_model *m, const struct erg__op_est *e, const erg_op_dims *d,
                        erg_op_prediction *out, erg_diag *diag)
{
    const struct erg__bounds *b = &e->bnd;
    double x[ERG_OP_MAX_FEATURES];
    unsigned p = erg__op_est_features(e, d, x);
    unsigned r = erg_op_regime(d, &m->th);
    out->regime = r;
    out->fallback = e->reg[r].fallback;
    out->grade = m->has_grade ? m->grade : ERG_GRADE_ESTIMATOR;
    out->why[0] = '\0';
    out->extrapolated = !in_range(e, d, out->why, sizeof out->why);
    out->time_bounded = out->energy_bounded = 0;
    out->method = ERG_PREDICT_FIT;
    const struct erg__lsq *le = e->has_energy ? erg__regime_fit(e, r, 1) : NULL;
    double t_fit = lsq_eval(erg__regime_fit(e, r, 0), x, p);
    double e_fit = le ? lsq_eval(le, x, p) : (double)NAN;
    if (!b->present) { /* a model file from before the bounds: positivity is all we can check */
        out->floor_time_s = 0;
        if (!(t_fit > 0) || !isfinite(t_fit) || (le && !(e_fit > 0 && isfinite(e_fit))))
            return erg_diag_set(diag, ERG_ERANGE, NULL,
                                "the %s estimator gives a non-positive time or energy here and "
                                "the model has no physical bounds to fall back on: refit it "
                                "with this erg ('erg fit ops')",
                                erg_op_name(d->op));
        out->time_s = t_fit;
        out->energy_j = e_fit;
        out->power_w = le ? e_fit / t_fit : (double)NAN;
        return ERG_OK;
    }
    out->floor_time_s = fmax(erg__roofline_time(b, d), b->launch_time_s);
    double anchor_pw = NAN;
    if (out->extrapolated) {
        /* Beyond the range: the roofline's growth, anchored at the nearest trained
         * configuration (d with its dimensions clamped into the trained range) when that one is
         * inside the range, so that the prediction is continuous at the edge; else the
         * calibrated roofline alone. */
        out->method = ERG_PREDICT_ROOFLINE;
        out->time_s = erg__roofline_predict(b, d);
        erg_op_dims dc = *d;
        int64_t *v[5] = {&dc.m, &dc.n, &dc.k, &dc.tokens, &dc.d_model};
        for (unsigned j = 0; j < 5; j++)
            if (*v[j] > 0 && e->range_hi[j] > 0)
                *v[j] = *v[j] < e->range_lo[j]   ? e->range_lo[j]
                        : *v[j] > e->range_hi[j] ? e->range_hi[j]
                                                 : *v[j];
        char scratch[8];
        if (in_range(e, &dc, scratch, sizeof scratch)) {
            double xc[ERG_OP_MAX_FEATURES];
            erg__op_est_features(e, &dc, xc);
            unsigned rc_ = erg_op_regime(&dc, &m->th);
            int fit_ok;
            double tc =
                enveloped_time(e, &dc, lsq_eval(erg__regime_fit(e, rc_, 0), xc, p), &fit_ok);
            double rl = erg__roofline_predict(b, &dc);
            if (rl > 0) {
                out->time_s = tc * (out->time_s / rl);
                const struct erg__lsq *lc = e->has_energy ? erg__regime_fit(e, rc_, 1) : NULL;
                if (lc && fit_ok)
                    anchor_pw = lsq_eval(lc, xc, p) / tc;
            }
        }
        out->time_s = fmax(out->time_s, out->floor_time_s);
    } else {
        int fit_ok;
        out->time_s = enveloped_time(e, d, t_fit, &fit_ok);
        if (!fit_ok) {
            out->time_bounded = 1;
            out->method = ERG_PREDICT_ROOFLINE;
        }
    }
    if (!e->has_energy || !le) {
        out->energy_j = out->power_w = NAN;
        return ERG_OK;
    }
    if (out->method == ERG_PREDICT_ROOFLINE) {
        /* the anchor's power if it was within the observed range, else the median */
        out->power_w =
            anchor_pw >= b->power_lo_w && anchor_pw <= b->power_hi_w ? anchor_pw : b->power_med_w;
    } else {
        /* the fit's power, trusted within ERG_PREDICT_SLACK of the observed range */
        double pw = e_fit / out->time_s, lo = b->power_lo_w / ERG_PREDICT_SLACK,
               hi = b->power_hi_w * ERG_PREDICT_SLACK;
        if (!(pw >= lo && pw <= hi)) {
            out->energy_bounded = 1;
            pw = !(pw > 0) || !isfinite(pw) ? b->power_med_w : pw < lo ? lo : hi;
        }
        out->power_w = pw;
    }
    out->energy_j = out->power_w * out->time_s;
    return ERG_OK;
}
