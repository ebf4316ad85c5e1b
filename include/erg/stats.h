/* SPDX-License-Identifier: MIT */
/**
 * erg/stats.h - statistics helpers of the core module: the standard normal distribution, the
 * two-sided confidence multiplier, and the mean and variance of the maximum of independent
 * Gaussian times, which every parallel composition needs (energy-calculus paper, Appendix F.3).
 *
 * Thread safety: every function here is pure and thread-safe.
 */
#ifndef ERG_STATS_H
#define ERG_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Standard normal CDF Φ(x). */
ERG_API double erg_normal_cdf(double x);

/** Standard normal density φ(x). */
ERG_API double erg_normal_pdf(double x);

/** Standard normal quantile Φ⁻¹(p) for 0 < p < 1; NaN outside. */
ERG_API double erg_normal_quantile(double p);

/**
 * Two-sided Gaussian multiplier c for confidence P (0 < P < 1): P(|Z| ≤ c) = P, so c(0.95)
 * = 1.95996. Used for prediction intervals E ± c·σ and the bias tolerance c_α·σ_E (paper Eq. 11-13,
 * 23). Returns NaN for P outside (0, 1).
 */
ERG_API double erg_two_sided_multiplier(double confidence);

/**
 * Mean and variance of max(T1, T2) for independent Gaussian T_i ~ N(mean_i, var_i), by Clark's
 * closed form (C. E. Clark, "The greatest of a finite set of random variables", Oper. Res. 1961;
 * energy-calculus Appendix F.3). Exact for two operands; either variance may be 0.
 * Variances are in s² when the means are in s. Outputs may be NULL.
 */
ERG_API void erg_max2_normal(double mean1, double var1, double mean2, double var2, double *mean_out,
                             double *var_out);

/**
 * Mean and variance of max(T_1..T_n) for independent Gaussian T_i, by numerical integration of
 * the product of the normal CDFs F(x) = Π Φ((x − μ_i)/σ_i):
 *   E[M] = a + ∫_a^b (1 − F(x)) dx,   E[(M − a)²] = 2 ∫_a^b (x − a)(1 − F(x)) dx
 * over [a, b] = [min μ_i − 12 max σ, max μ_i + 12 max σ] (GSL QAGP, breakpoints at deterministic
 * operands' means). Three operands with variances > 0 and within a factor 10^12 take a closed form
 * instead: Σ_i E[X_i^p; X_i is the max] by Gaussian integration by parts, with bivariate normal
 * orthant probabilities (Drezner-Wesolowsky, Genz 2004; double precision), moments taken about
 * the largest mean. The result does not depend on the order or grouping of operands.
 * n = 1 returns the operand; n = 2 agrees with erg_max2_normal to integration tolerance.
 * means, vars: arrays of n values (vars ≥ 0). Returns ERG_OK, or ERG_EINVAL (n = 0, NaN input,
 * negative variance) or ERG_ERANGE (the integration did not converge).
 */
ERG_API ERG_NODISCARD int erg_maxn_normal(const double *means, const double *vars, size_t n,
                                          double *mean_out, double *var_out);

/**
 * Quantile of the F distribution with (df1, df2) degrees of freedom: the x with P(F ≤ x) = p.
 * df2 = INFINITY gives the limit χ²_p(df1)/df1. Used for one-sided variance-ratio tests (e.g. a
 * fresh power CV against a calibrated one). Returns NaN unless 0 < p < 1 and df1, df2 > 0.
 */
ERG_API double erg_f_quantile(double p, double df1, double df2);

/**
 * Running mean and variance (Welford). Initialise with {0}; add values with erg_running_add.
 * erg_running_var is the sample variance (n − 1 denominator), 0 for fewer than two values.
 */
typedef struct erg_running {
    size_t n;
    double mean;
    double m2;
} erg_running;

/** Add one value x (any unit) to r. O(1), no allocation. */
ERG_API void erg_running_add(erg_running *r, double x);

/** Sample variance of the values added so far (unit²; n − 1 denominator), 0 for n < 2. */
ERG_API double erg_running_var(const erg_running *r);

/**
 * The one number format of erg's human output: a figure and its standard deviation as
 * "mean ± sd" into buf (snprintf semantics; returns the length the text needs). sd is rounded to
 * two significant digits and mean to the same decimal place (the convention of metrology, GUM
 * Section 7.2.6: the uncertainty sets the digits): 68.1542 ± 0.0031 prints
 * "68.1542 ± 0.0031", 68.1542 ± 0.31 prints "68.15 ± 0.31"; an sd below 1e-11 prints both
 * to two significant digits ("7.8e-16 ± 1.2e-15", never "0.000000000000 ± 0.000000000000"). sd 0
 * prints mean to 6 significant digits and "± 0"; sd NaN (unknown: one run) prints mean to 4
 * significant digits and "± ?"; mean NaN prints "-". The ± is UTF-8 (two bytes, one column).
 */
ERG_API int erg_format_mean_sd(double mean, double sd, char *buf, size_t size);

/**
 * The shortest decimal that reads back (strtod) as exactly v: "%.Pg" for the least P in 1..17
 * that round-trips, so 0.3 prints "0.3" (not %.17g's "0.29999999999999999") and no bit is lost
 * (0.1 + 0.2 prints "0.30000000000000004": that is another double than 0.3). Into buf with
 * snprintf semantics; returns the length the text needs. Non-finite values print "nan", "inf",
 * "-inf". Used for every figure erg writes in full (JSON files, --json, CSV exports).
 */
ERG_API int erg_format_double(double v, char *buf, size_t size);

/**
 * Rewrite, in place, every real number of a JSON text (a number token with '.', 'e' or 'E',
 * outside strings) as the shortest decimal that reads back as the same double (erg_format_double,
 * exponent without '+' or leading zeros, ".0" kept on whole values so a real stays a real).
 * Integers, strings and layout are untouched; the text never grows. Used on every JSON document
 * erg writes (jansson prints reals with %.17g or a fixed precision, never the shortest form).
 */
ERG_API void erg_json_shorten_reals(char *text);

struct json_t;
/**
 * jansson's json_dumps(root, flags), safe when memory runs out: the text (NUL-terminated, to
 * free()), or NULL when root is NULL, jansson refuses it, or an allocation failed. jansson 2.14's
 * json_dumps drops the failure to append an object's key and carries on, so under memory
 * pressure it can return a corrupt text (a key's closing quote missing); here the first failed
 * allocation fails the whole dump. erg writes every JSON text through it.
 */
ERG_API ERG_NODISCARD char *erg_json_dumps(const struct json_t *root, size_t flags);

#ifdef __cplusplus
}
#endif
#endif
