/* SPDX-License-Identifier: MIT */
#include "erg/stats.h"
#include "erg/error.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double erg_normal_cdf(double x)
{
    return gsl_cdf_ugaussian_P(x);
}

double erg_normal_pdf(double x)
{
    return exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
}

double erg_normal_quantile(double p)
{
    if (!(p > 0.0 && p < 1.0))
        return NAN;
    return gsl_cdf_ugaussian_Pinv(p);
}

double erg_two_sided_multiplier(double confidence)
{
    if (!(confidence > 0.0 && confidence < 1.0))
        return NAN;
    return gsl_cdf_ugaussian_Pinv(0.5 + 0.5 * confidence);
}

double erg_f_quantile(double p, double df1, double df2)
{
    if (!(p > 0.0 && p < 1.0) || !(df1 > 0.0) || !(df2 > 0.0))
        return NAN;
    if (isinf(df2))
        return gsl_cdf_chisq_Pinv(p, df1) / df1;
    return gsl_cdf_fdist_Pinv(p, df1, df2);
}

void erg_max2_normal(double mean1, double var1, double mean2, double var2, double *mean_out,
                     double *var_out)
{
    double theta2 = var1 + var2;
    double m, v;
    if (theta2 <= 0.0) {
        m = mean1 > mean2 ? mean1 : mean2;
        v = 0.0;
    } else {
        double theta = sqrt(theta2);
        double alpha = (mean1 - mean2) / theta;
        double pa = erg_normal_cdf(alpha), pna = erg_normal_cdf(-alpha), da = erg_normal_pdf(alpha);
        m = mean1 * pa + mean2 * pna + theta * da;
        double e2 = (mean1 * mean1 + var1) * pa + (mean2 * mean2 + var2) * pna +
                    (mean1 + mean2) * theta * da;
        v = e2 - m * m;
        /* Cancellation can leave a tiny negative value when the operands are far apart. */
        if (v < 0.0)
            v = 0.0;
    }
    if (mean_out)
        *mean_out = m;
    if (var_out)
        *var_out = v;
}

struct maxn_params {
    const double *means;
    const double *sds;
    size_t n;
    double a;
    int second_moment;
};

static double maxn_cdf(const struct maxn_params *p, double x)
{
    double f = 1.0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->sds[i] > 0.0)
            f *= erg_normal_cdf((x - p->means[i]) / p->sds[i]);
        else if (x < p->means[i])
            return 0.0;
    }
    return f;
}

static double maxn_integrand(double x, void *vp)
{
    const struct maxn_params *p = vp;
    double tail = 1.0 - maxn_cdf(p, x);
    return p->second_moment ? 2.0 * (x - p->a) * tail : tail;
}

int erg_maxn_normal(const double *means, const double *vars, size_t n, double *mean_out,
                    double *var_out)
{
    if (n == 0 || !means || !vars)
        return ERG_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(means[i]) || !isfinite(vars[i]) || vars[i] < 0.0)
            return ERG_EINVAL;
    if (n == 1) {
        if (mean_out)
            *mean_out = means[0];
        if (var_out)
            *var_out = vars[0];
        return ERG_OK;
    }

    double *sds = malloc(n * sizeof *sds);
    double *pts = malloc((n + 2) * sizeof *pts);
    if (!sds || !pts) {
        free(sds);
        free(pts);
        return ERG_ENOMEM;
    }
    double lo = INFINITY, hi = -INFINITY, maxsd = 0.0;
    for (size_t i = 0; i < n; i++) {
        sds[i] = sqrt(vars[i]);
        if (sds[i] > maxsd)
            maxsd = sds[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (means[i] - 12.0 * maxsd < lo)
            lo = means[i] - 12.0 * maxsd;
        if (means[i] + 12.0 * maxsd > hi)
            hi = means[i] + 12.0 * maxsd;
    }
    /* All deterministic: the maximum is exact. */
    int status = ERG_OK;
    double m, v;
    if (maxsd == 0.0) {
        m = means[0];
        for (size_t i = 1; i < n; i++)
            if (means[i] > m)
                m = means[i];
        v = 0.0;
    } else {
        /* Breakpoints: the interval ends plus every deterministic operand's mean (the CDF steps
         * there), sorted and unique, as QAGP requires. */
        size_t np = 0;
        pts[np++] = lo;
        for (size_t i = 0; i < n; i++)
            if (sds[i] == 0.0 && means[i] > lo && means[i] < hi)
                pts[np++] = means[i];
        pts[np++] = hi;
        for (size_t i = 1; i < np; i++) /* insertion sort: np is small */
            for (size_t j = i; j > 0 && pts[j - 1] > pts[j]; j--) {
                double t = pts[j];
                pts[j] = pts[j - 1];
                pts[j - 1] = t;
            }
        size_t u = 1;
        for (size_t i = 1; i < np; i++)
            if (pts[i] > pts[u - 1])
                pts[u++] = pts[i];
        np = u;

        gsl_error_handler_t *old = gsl_set_error_handler_off();
        gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
        struct maxn_params p = {means, sds, n, lo, 0};
        gsl_function f = {maxn_integrand, &p};
        double i1 = 0, i2 = 0, err;
        int r1 = ws ? gsl_integration_qagp(&f, pts, np, 0.0, 1e-11, 1000, ws, &i1, &err) : GSL_ENOMEM;
        p.second_moment = 1;
        int r2 = ws ? gsl_integration_qagp(&f, pts, np, 0.0, 1e-11, 1000, ws, &i2, &err) : GSL_ENOMEM;
        gsl_integration_workspace_free(ws);
        gsl_set_error_handler(old);
        if (r1 == GSL_ENOMEM || r2 == GSL_ENOMEM)
            status = ERG_ENOMEM;
        else if ((r1 != GSL_SUCCESS && r1 != GSL_EROUND) || (r2 != GSL_SUCCESS && r2 != GSL_EROUND))
            status = ERG_ERANGE;
        /* mean = a + I1; Var = E[(M-a)^2] - (E[M-a])^2 */
        m = lo + i1;
        v = i2 - i1 * i1;
        if (v < 0.0)
            v = 0.0;
    }
    free(sds);
    free(pts);
    if (status != ERG_OK)
        return status;
    if (mean_out)
        *mean_out = m;
    if (var_out)
        *var_out = v;
    return ERG_OK;
}

void erg_running_add(erg_running *r, double x)
{
    r->n++;
    double delta = x - r->mean;
    r->mean += delta / (double)r->n;
    r->m2 += delta * (x - r->mean);
}

double erg_running_var(const erg_running *r)
{
    return r->n < 2 ? 0.0 : r->m2 / (double)(r->n - 1);
}

int erg_format_mean_sd(double mean, double sd, char *buf, size_t size)
{
    if (!isfinite(mean))
        return snprintf(buf, size, "-");
    if (isnan(sd))
        return snprintf(buf, size, "%.4g \u00b1 ?", mean);
    if (!(sd > 0) || !isfinite(sd))
        return snprintf(buf, size, "%.6g \u00b1 %s", mean, isfinite(sd) ? "0" : "inf");
    /* two significant digits of sd; the decimal place of its second digit sets mean's */
    int lead = (int)floor(log10(sd));
    double unit = pow(10.0, lead - 1);
    double sd_r = round(sd / unit) * unit;
    if (sd_r >= pow(10.0, lead + 1)) { /* 0.0996 rounds to 0.10: one place fewer */
        lead++;
    }
    int dec = 1 - lead;
    if (dec < 0)
        dec = 0;
    if (dec > 12)
        dec = 12;
    return snprintf(buf, size, "%.*f \u00b1 %.*f", dec, mean, dec, sd_r);
}
