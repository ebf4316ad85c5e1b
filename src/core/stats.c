/* SPDX-License-Identifier: MIT */
#include "erg/stats.h"
#include "erg/error.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Gauss-Legendre rule of 20 points on [-1, 1]: the positive nodes and their weights. */
static const double gl20[10][2] = {
    {0.076526521133497338, 0.15275338713072578}, {0.2277858511416451, 0.14917298647260366},
    {0.37370608871541955, 0.14209610931838187},  {0.51086700195082713, 0.13168863844917653},
    {0.63605368072651502, 0.11819453196151825},  {0.7463319064601508, 0.10193011981724026},
    {0.83911697182221878, 0.083276741576704671}, {0.91223442825132584, 0.062672048334109443},
    {0.96397192727791381, 0.040601429800386217}, {0.99312859918509488, 0.017614007139153273},
};

/* P(U > h, V > k) for standard bivariate normal (U, V) with correlation |r| <= 0.75: Plackett's
 * integral over θ in [0, asin r] by 20-point Gauss-Legendre (Drezner and Wesolowsky 1990, in the
 * form of Genz 2004, "Numerical computation of rectangular bivariate and trivariate normal and t
 * probabilities", Statistics and Computing 14; double precision for |r| < 0.925). */
static double bvn_upper(double h, double k, double r)
{
    double hk = h * k, hs = 0.5 * (h * h + k * k), asr = 0.5 * asin(r), sum = 0.0;
    for (int i = 0; i < 10; i++) {
        double s1 = sin(asr * (1.0 - gl20[i][0])), s2 = sin(asr * (1.0 + gl20[i][0]));
        sum += gl20[i][1] *
               (exp((s1 * hk - hs) / (1.0 - s1 * s1)) + exp((s2 * hk - hs) / (1.0 - s2 * s2)));
    }
    return sum * asr / (2.0 * M_PI) + erg_normal_cdf(-h) * erg_normal_cdf(-k);
}

/*
 * Mean and variance of the max of three independent Gaussians in closed form (no quadrature):
 * E[M^p] = Σ_i E[X_i^p; X_i is the max]. With Y_j = X_i − X_j, Y_k = X_i − X_k (bivariate normal,
 * Cov(X_i, Y_·) = σ_i²), Gaussian integration by parts (Stein's lemma) gives
 *   E[Z_i; A_i]  = σ_i² (f_j(0) P(Y_k > 0 | Y_j = 0) + f_k(0) P(Y_j > 0 | Y_k = 0)),
 *   E[Z_i²; A_i] = σ_i² P(A_i) + σ_i² Σ_{j} f_j(0) E[Z_i; Y_k > 0 | Y_j = 0],
 * Z_i = X_i − μ_i, A_i = {Y_j > 0, Y_k > 0}, P(A_i) a bivariate normal orthant (bvn_upper; the
 * operand with the largest variance, whose correlation may be near 1, takes 1 − the others').
 * Means are taken relative to the largest so that E[M²] − E[M]² does not cancel. Returns 0, or
 * -1 when the operands are outside its domain (a variance 0 or 10^12 times below another): the
 * caller integrates then.
 */
static int maxn3(const double *mean, const double *var, double *m_out, double *v_out)
{
    double c = fmax(mean[0], fmax(mean[1], mean[2]));
    double vmax = fmax(var[0], fmax(var[1], var[2])), vmin = fmin(var[0], fmin(var[1], var[2]));
    if (!(vmin > 0.0) || vmin < 1e-12 * vmax)
        return -1;
    int big = var[0] >= var[1] ? (var[0] >= var[2] ? 0 : 2) : (var[1] >= var[2] ? 1 : 2);
    double mu[3] = {mean[0] - c, mean[1] - c, mean[2] - c}, p[3], e1 = 0.0, e2 = 0.0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 3; i++) {
            if ((i == big) != (pass == 1))
                continue; /* the largest variance last */
            int j = (i + 1) % 3, k = (i + 2) % 3;
            double si = var[i], tj2 = si + var[j], tk2 = si + var[k];
            double tj = sqrt(tj2), tk = sqrt(tk2);
            double aj = mu[i] - mu[j], ak = mu[i] - mu[k];
            double fj = erg_normal_pdf(aj / tj) / tj, fk = erg_normal_pdf(ak / tk) / tk;
            /* Y_k given Y_j = 0 and Y_j given Y_k = 0 */
            double ck = ak - si * aj / tj2, wk = sqrt((si * var[j] + var[k] * tj2) / tj2);
            double cj = aj - si * ak / tk2, wj = sqrt((si * var[k] + var[j] * tk2) / tk2);
            double pk = erg_normal_cdf(ck / wk), pj = erg_normal_cdf(cj / wj);
            double dk = erg_normal_pdf(ck / wk) / wk, dj = erg_normal_pdf(cj / wj) / wj;
            if (i != big) {
                double r = si / (tj * tk);
                if (r > 0.75)
                    return -1;
                p[i] = bvn_upper(-aj / tj, -ak / tk, r);
            } else {
                p[i] = 1.0 - p[j] - p[k];
                p[i] = p[i] > 0.0 ? p[i] : 0.0;
            }
            double b = fj * pk + fk * pj;
            double ez2 = si * p[i] + si * (fj * (-si * aj / tj2 * pk + si * var[j] / tj2 * dk) +
                                           fk * (-si * ak / tk2 * pj + si * var[k] / tk2 * dj));
            e1 += mu[i] * p[i] + si * b;
            e2 += mu[i] * mu[i] * p[i] + 2.0 * mu[i] * si * b + ez2;
        }
    double v = e2 - e1 * e1;
    *m_out = c + e1;
    *v_out = v > 0.0 ? v : 0.0;
    return 0;
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
    double m3, v3;
    if (n == 3 && maxn3(means, vars, &m3, &v3) == 0) {
        if (mean_out)
            *mean_out = m3;
        if (var_out)
            *var_out = v3;
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
        int r1 =
            ws ? gsl_integration_qagp(&f, pts, np, 0.0, 1e-11, 1000, ws, &i1, &err) : GSL_ENOMEM;
        p.second_moment = 1;
        int r2 =
            ws ? gsl_integration_qagp(&f, pts, np, 0.0, 1e-11, 1000, ws, &i2, &err) : GSL_ENOMEM;
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

int erg_format_double(double v, char *buf, size_t size)
{
    if (isnan(v))
        return snprintf(buf, size, "nan");
    if (isinf(v))
        return snprintf(buf, size, v > 0 ? "inf" : "-inf");
    char tmp[40];
    int p = 1;
    for (; p < 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*g", p, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* the layout of %.17g: fixed notation for decimal exponents -5..16 (20 prints "20", not
     * %.1g's "2e+01"), so only the digits change */
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
    int e = atoi(strchr(tmp, 'e') + 1);
    if (e >= p && e < 17)
        p = e + 1;
    return snprintf(buf, size, "%.*g", p, v);
}

/* JSON's number grammar: -?digits(.digits)?([eE][+-]?digits)? */
static size_t json_number_len(const char *s, int *is_real)
{
    size_t i = 0;
    *is_real = 0;
    if (s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++;
    if (s[i] == '.') {
        *is_real = 1;
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        *is_real = 1;
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i;
}

/* erg_format_double in jansson's layout: "1e-06" -> "1e-6", "1e+20" -> "1e20", "2" -> "2.0". */
static size_t json_real_text(double v, char *out, size_t size)
{
    char t[48];
    erg_format_double(v, t, sizeof t);
    size_t j = 0;
    int has_point = 0;
    for (size_t i = 0; t[i] && j + 1 < sizeof t; i++) {
        if (t[i] == ',') /* a locale's decimal comma */
            t[i] = '.';
        if (t[i] == '.' || t[i] == 'e')
            has_point = 1;
        if (t[i] == 'e') {
            out[j++] = 'e';
            i++;
            if (t[i] == '-')
                out[j++] = '-';
            else if (t[i] != '+')
                i--;
            while (t[i + 1] == '0' && t[i + 2] >= '0' && t[i + 2] <= '9')
                i++;
            continue;
        }
        out[j++] = t[i];
    }
    if (!has_point && j + 3 < size) {
        out[j++] = '.';
        out[j++] = '0';
    }
    out[j] = '\0';
    return j;
}

void erg_json_shorten_reals(char *text)
{
    if (!text)
        return;
    char *r = text, *w = text;
    while (*r) {
        if (*r == '"') { /* a string: copied as is, escapes included */
            *w++ = *r++;
            while (*r && *r != '"') {
                if (*r == '\\' && r[1])
                    *w++ = *r++;
                *w++ = *r++;
            }
            if (*r)
                *w++ = *r++;
            continue;
        }
        if (*r == '-' || (*r >= '0' && *r <= '9')) {
            int is_real;
            size_t n = json_number_len(r, &is_real);
            if (n == 0)
                n = 1;
            char tok[48], alt[48];
            if (is_real && n < sizeof tok) {
                memcpy(tok, r, n);
                tok[n] = '\0';
                char *end;
                double v = strtod(tok, &end);
                size_t m = *end == '\0' && isfinite(v) ? json_real_text(v, alt, sizeof alt) : n + 1;
                if (m <= n) {
                    memmove(w, alt, m);
                    w += m;
                    r += n;
                    continue;
                }
            }
            memmove(w, r, n);
            w += n;
            r += n;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
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
    if (dec > 12) /* below 1e-11: fixed decimals would print only zeros */
        return snprintf(buf, size, "%.2g \u00b1 %.2g", mean, sd_r);
    return snprintf(buf, size, "%.*f \u00b1 %.*f", dec, mean, dec, sd_r);
}
