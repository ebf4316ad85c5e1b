/* SPDX-License-Identifier: MIT */
#include "support/erg_test.h"

#include "erg/error.h"
#include "erg/stats.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

/* F quantiles against printed tables (NIST/SEMATECH e-Handbook 1.3.6.7.3, upper 5 % points)
 * and the χ² limit: F_0.95(2, ∞) = χ²_0.95(2)/2 = 5.991465/2. */
static void f_quantile_matches_tables(void **state)
{
    (void)state;
    /* the tables print two decimals */
    erg_assert_near(erg_f_quantile(0.95, 9, 29), 2.22, 0.006);
    erg_assert_near(erg_f_quantile(0.95, 10, 20), 2.35, 0.006);
    erg_assert_near(erg_f_quantile(0.95, 2, 29), 3.33, 0.006);
    erg_assert_near(erg_f_quantile(0.95, 2, INFINITY), 2.995732, 1e-5);
    erg_assert_near(erg_f_quantile(0.95, 1, INFINITY), 3.841459, 1e-5);
    assert_true(isnan(erg_f_quantile(1.0, 2, 3)));
    assert_true(isnan(erg_f_quantile(0.5, 0, 3)));
    assert_true(isnan(erg_f_quantile(0.5, 2, -1)));
}

static void two_sided_multiplier_matches_tables(void **state)
{
    (void)state;
    erg_assert_near(erg_two_sided_multiplier(0.95), 1.959963984540054, 1e-12);
    erg_assert_near(erg_two_sided_multiplier(0.99), 2.5758293035489, 1e-10);
    assert_true(isnan(erg_two_sided_multiplier(1.0)));
    assert_true(isnan(erg_two_sided_multiplier(0.0)));
}

/* max of two iid N(0,1): mean 1/sqrt(pi), variance 1 - 1/pi (hand-computed from Clark 1961). */
static void clark_two_standard_normals(void **state)
{
    (void)state;
    double m, v;
    erg_max2_normal(0, 1, 0, 1, &m, &v);
    erg_assert_near(m, 1.0 / sqrt(M_PI), 1e-12);
    erg_assert_near(v, 1.0 - 1.0 / M_PI, 1e-12);
}

/* Well-separated operands: the longer one dominates (paper Appendix F.3 limit). */
static void clark_separated_limit(void **state)
{
    (void)state;
    double m, v;
    erg_max2_normal(10.0, 0.04, 1.0, 0.09, &m, &v);
    erg_assert_near(m, 10.0, 1e-12);
    erg_assert_near(v, 0.04, 1e-12);
    erg_max2_normal(3.0, 0.0, 2.0, 0.0, &m, &v);
    erg_assert_near(m, 3.0, 0);
    erg_assert_near(v, 0.0, 0);
}

/* max of three iid N(0,1): mean 3/(2 sqrt(pi)), variance 1 + sqrt(3)/(2 pi) - 9/(4 pi). */
static void maxn_three_standard_normals(void **state)
{
    (void)state;
    double mu[3] = {0, 0, 0}, var[3] = {1, 1, 1}, m, v;
    assert_int_equal(erg_maxn_normal(mu, var, 3, &m, &v), ERG_OK);
    erg_assert_near(m, 1.5 / sqrt(M_PI), 1e-8);
    erg_assert_near(v, 1.0 + sqrt(3.0) / (2 * M_PI) - 9.0 / (4 * M_PI), 1e-8);
}

/* E[M − c] and E[(M − c)²] of the max of n independent Gaussians by composite Simpson over
 * [c − 12 s, c + 12 s] (c the largest mean, s the largest sd; below it the max is c − ... with
 * probability 1 in double): the reference for the closed form. */
static void maxn_simpson(const double *mu, const double *var, int n, double *m, double *v)
{
    double c = -INFINITY, s = 0.0;
    for (int i = 0; i < n; i++) {
        c = fmax(c, mu[i]);
        s = fmax(s, sqrt(var[i]));
    }
    const int N = 100000; /* per side, even */
    double h = 12.0 * s / N, i1 = 0.0, i2 = 0.0;
    for (int side = -1; side <= 1; side += 2) /* [c - 12 s, c] and [c, c + 12 s] */
        for (int k = 0; k <= N; k++) {
            double x = c + side * k * h, f = 1.0;
            for (int i = 0; i < n; i++)
                f *= erg_normal_cdf((x - mu[i]) / sqrt(var[i]));
            double w = (k == 0 || k == N ? 1.0 : k % 2 ? 4.0 : 2.0) * h / 3.0;
            /* E[M - c] = -∫_lo^c F dx + ∫_c^hi (1 - F) dx; E[(M - c)²] = 2∫ |x - c|·(...) */
            double g = side < 0 ? f : 1.0 - f;
            i1 += side * w * g;
            i2 += w * 2.0 * fabs(x - c) * g;
        }
    *m = c + i1;
    *v = i2 - i1 * i1;
}

/* Three operands take the closed form (bivariate normal orthants): random triples, close and far
 * apart, variances over 6 decades, against Simpson's rule (means within 1e-9 sd, variances within
 * 1e-7 relative). */
static void maxn_three_closed_form_matches_integration(void **state)
{
    (void)state;
    uint64_t st = 99;
    for (int it = 0; it < 60; it++) {
        double mu[3], var[3], m3, v3, mr, vr, smax = 0.0;
        for (int i = 0; i < 3; i++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            double u1 = (double)(st >> 11) * 0x1.0p-53;
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            double u2 = (double)(st >> 11) * 0x1.0p-53;
            double sd = pow(10.0, -3.0 + 3.0 * u1); /* 1e-3 .. 1 */
            mu[i] = 100.0 + (it % 3 == 0 ? 20.0 : 0.5) * (u2 - 0.5);
            var[i] = sd * sd;
            smax = fmax(smax, sd);
        }
        assert_int_equal(erg_maxn_normal(mu, var, 3, &m3, &v3), ERG_OK);
        maxn_simpson(mu, var, 3, &mr, &vr);
        erg_assert_near(m3, mr, 1e-9 * smax);
        erg_assert_near(v3, vr, 1e-7 * vr + 1e-13 * smax * smax);
    }
}

static void maxn_agrees_with_clark_for_two(void **state)
{
    (void)state;
    double mu[2] = {1.0, 1.3}, var[2] = {0.04, 0.25}, m, v, cm, cv;
    assert_int_equal(erg_maxn_normal(mu, var, 2, &m, &v), ERG_OK);
    erg_max2_normal(mu[0], var[0], mu[1], var[1], &cm, &cv);
    erg_assert_near(m, cm, 1e-9);
    erg_assert_near(v, cv, 1e-9);
}

/* A deterministic operand makes the CDF step; integration must still be exact. Monte Carlo check.
 */
static void maxn_with_deterministic_operand_matches_monte_carlo(void **state)
{
    (void)state;
    double mu[3] = {2.0, 1.8, 2.1}, var[3] = {0.0, 0.09, 0.01}, m, v;
    assert_int_equal(erg_maxn_normal(mu, var, 3, &m, &v), ERG_OK);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    const int N = 400000;
    double s = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        double x = 2.0;
        for (int k = 1; k < 3; k++) {
            double y = mu[k] + gsl_ran_gaussian(r, sqrt(var[k]));
            if (y > x)
                x = y;
        }
        s += x;
        s2 += x * x;
    }
    gsl_rng_free(r);
    double mm = s / N, mv = s2 / N - mm * mm;
    erg_assert_near(m, mm, 4 * sqrt(mv / N));
    erg_assert_rel(v, mv, 0.02);
}

static void maxn_rejects_bad_input(void **state)
{
    (void)state;
    double mu[2] = {1, NAN}, var[2] = {1, 1}, m, v;
    assert_int_equal(erg_maxn_normal(mu, var, 2, &m, &v), ERG_EINVAL);
    double mu2[2] = {1, 1}, var2[2] = {1, -1};
    assert_int_equal(erg_maxn_normal(mu2, var2, 2, &m, &v), ERG_EINVAL);
    assert_int_equal(erg_maxn_normal(mu2, var2, 0, &m, &v), ERG_EINVAL);
}

static void running_mean_and_variance(void **state)
{
    (void)state;
    erg_running r = {0};
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    for (size_t i = 0; i < 8; i++)
        erg_running_add(&r, x[i]);
    erg_assert_near(r.mean, 5.0, 1e-15);
    erg_assert_near(erg_running_var(&r), 32.0 / 7.0, 1e-12);
}

/* The shortest decimal that reads back as the same double: the classic %.17g artefacts vanish,
 * a genuinely different double keeps every digit it needs, and every text reads back exactly. */
static void format_double_shortest_round_trip(void **state)
{
    (void)state;
    char b[48];
    erg_format_double(0.3, b, sizeof b);
    assert_string_equal(b, "0.3");
    erg_format_double(0.1 + 0.2, b, sizeof b);
    assert_string_equal(b, "0.30000000000000004");
    erg_format_double(0.009, b, sizeof b); /* %.17g: 0.0089999999999999993 */
    assert_string_equal(b, "0.009");
    erg_format_double(2.98, b, sizeof b);
    assert_string_equal(b, "2.98");
    erg_format_double(20.0, b, sizeof b); /* not %.1g's 2e+01 */
    assert_string_equal(b, "20");
    erg_format_double(1.5e16, b, sizeof b);
    assert_string_equal(b, "15000000000000000");
    erg_format_double(1e17, b, sizeof b);
    assert_string_equal(b, "1e+17");
    erg_format_double(1e-6, b, sizeof b);
    assert_string_equal(b, "1e-06");
    erg_format_double(-0.0, b, sizeof b);
    assert_string_equal(b, "-0");
    erg_format_double(NAN, b, sizeof b);
    assert_string_equal(b, "nan");
    /* every text reads back exactly, over many magnitudes (a deterministic LCG) */
    unsigned long long x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = (double)(x >> 11) * 0x1p-53 * pow(10.0, (double)(i % 40) - 20);
        erg_format_double(v, b, sizeof b);
        assert_true(strtod(b, NULL) == v);
        assert_true(strlen(b) <= 24);
    }
}

/* Reals of a JSON text shortened in place; integers, strings (with numbers and escaped quotes
 * inside) and layout kept; whole reals stay reals. */
static void json_shorten_reals_in_place(void **state)
{
    (void)state;
    char t[] = "{\"a\": 0.29999999999999999, \"s\": \"x 0.10000000000000001 \\\" 1.50\", "
               "\"n\": 12345678901234567, \"e\": 1.0000000000000001e-5, \"w\": 20.0, "
               "\"l\": [0.0089999999999999993, -2.9800000000000004, 1e+20, 3.5E-07]}";
    erg_json_shorten_reals(t);
    assert_string_equal(t, "{\"a\": 0.3, \"s\": \"x 0.10000000000000001 \\\" 1.50\", "
                           "\"n\": 12345678901234567, \"e\": 1e-5, \"w\": 20.0, "
                           "\"l\": [0.009, -2.9800000000000004, 1e20, 3.5e-7]}");
    char m[48];
    erg_format_mean_sd(7.794e-16, 1.23e-15, m, sizeof m);
    assert_string_equal(m, "7.8e-16 \u00b1 1.2e-15");
    erg_format_mean_sd(68.1542, 0.0031, m, sizeof m);
    assert_string_equal(m, "68.1542 \u00b1 0.0031");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_sided_multiplier_matches_tables),
        cmocka_unit_test(f_quantile_matches_tables),
        cmocka_unit_test(clark_two_standard_normals),
        cmocka_unit_test(clark_separated_limit),
        cmocka_unit_test(maxn_three_standard_normals),
        cmocka_unit_test(maxn_three_closed_form_matches_integration),
        cmocka_unit_test(maxn_agrees_with_clark_for_two),
        cmocka_unit_test(maxn_with_deterministic_operand_matches_monte_carlo),
        cmocka_unit_test(maxn_rejects_bad_input),
        cmocka_unit_test(running_mean_and_variance),
        cmocka_unit_test(format_double_shortest_round_trip),
        cmocka_unit_test(json_shorten_reals_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
