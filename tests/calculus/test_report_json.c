/* SPDX-License-Identifier: MIT */
/* The documents the calculus writes for the CLI (issue 13): compare/1 with the comparison of two
 * reports (paper Section 5.2.2), granularity/1 (Eq. 24) and refine/1 with its characterize
 * commands (Section 4.4, Eq. 23). Every expected figure and text is worked by hand in the
 * comments; the writers are called directly, bad paths included. */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "erg/calculus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tmpdir, sizeof tmpdir, "reportjson");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tmpdir);
}

static erg_report report(double e, double sd, double lo, double hi, double t, erg_grade g)
{
    erg_report r;
    memset(&r, 0, sizeof r);
    r.energy_j = e;
    r.energy_sd_j = sd;
    r.interval_j[0] = lo;
    r.interval_j[1] = hi;
    r.time_s = t;
    r.grade = g;
    r.confidence = 0.9545;
    return r;
}

static void comparison_digits(void **state)
{
    (void)state;
    erg_comparison c;
    /* overlap: 3 ± 0.6 against 2 ± 0.8; Δ = 1 J, sd = hypot(0.3, 0.4) = 0.5 J; lead digit 10^0,
     * the sd's 10^-1: 0 − (−1) + 3 = 4 digits (the tolerance 3e-9 J allows 9) */
    erg_report a = report(3.0, 0.3, 2.4, 3.6, 1.5, ERG_GRADE_HW_SHUNT),
               b = report(2.0, 0.4, 1.2, 2.8, 2.5, ERG_GRADE_ESTIMATOR);
    assert_int_equal(erg_report_comparison(&a, &b, &c), ERG_OK);
    assert_int_equal(c.verdict, 0);
    assert_int_equal(c.kind, ERG_DIFFERENCE_REAL);
    erg_assert_near(c.difference_j, 1.0, 1e-15);
    erg_assert_near(c.combined_sd_j, 0.5, 1e-15);
    erg_assert_near(c.rounding_j, 3e-9, 1e-24);
    assert_int_equal(c.digits, 4);
    /* disjoint: 1 ± 0.02 lies below 2 ± 0.02: a is less; sd = 0.01·√2 = 0.0141 J, its leading
     * digit 10^-2: 0 + 2 + 3 = 5 digits */
    erg_report lo = report(1.0, 0.01, 0.98, 1.02, 1, ERG_GRADE_HW_SHUNT),
               hi = report(2.0, 0.01, 1.98, 2.02, 1, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&lo, &hi, &c), ERG_OK);
    assert_int_equal(c.verdict, -1);
    erg_assert_near(c.difference_j, -1.0, 1e-15);
    erg_assert_near(c.combined_sd_j, 0.01 * sqrt(2.0), 1e-17);
    assert_int_equal(c.digits, 5);
    assert_int_equal(erg_report_comparison(&hi, &lo, &c), ERG_OK);
    assert_int_equal(c.verdict, 1);
    /* rounding: 2 J and 2 + 1e-12 J, zero variance: |Δ| ≤ 2e-9 J is 0, not a verdict */
    erg_report r1 = report(2.0, 0, 2.0, 2.0, 1, ERG_GRADE_HW_SHUNT),
               r2 = report(2.0 + 1e-12, 0, 2.0 + 1e-12, 2.0 + 1e-12, 1, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&r1, &r2, &c), ERG_OK);
    assert_int_equal(c.kind, ERG_DIFFERENCE_ROUNDING);
    assert_true(c.difference_j == 0.0);
    assert_int_equal(c.verdict, 0);
    /* noise: 1 mJ apart with sd 1 J each: 0.001 < 1 % of √2 J */
    erg_report n1 = report(10.0, 1, 8, 12, 1, ERG_GRADE_HW_SHUNT),
               n2 = report(10.001, 1, 8.001, 12.001, 1, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&n1, &n2, &c), ERG_OK);
    assert_int_equal(c.kind, ERG_DIFFERENCE_NOISE);
    erg_assert_near(c.difference_j, -0.001, 1e-12);
    assert_int_equal(c.digits, 6);
    /* zero variance, 123 uJ apart: no cap from the sd (6), the tolerance 6.00123e-10 J allows
     * −4 − (−10) = 6 digits */
    erg_report z1 = report(0.600123, 0, 0.600123, 0.600123, 1, ERG_GRADE_HW_SHUNT),
               z2 = report(0.6, 0, 0.6, 0.6, 1, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&z1, &z2, &c), ERG_OK);
    assert_int_equal(c.kind, ERG_DIFFERENCE_REAL);
    assert_int_equal(c.digits, 6);
    assert_int_equal(c.verdict, 1);
    /* 50 J apart with sd 1000 J (not under its 1 %): 1 − 3 + 3 = 1 digit, clamped to 2 */
    erg_report w1 = report(150, 600, 0, 1305, 1, ERG_GRADE_HW_SHUNT),
               w2 = report(100, 800, 0, 1700, 1, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&w1, &w2, &c), ERG_OK);
    assert_int_equal(c.kind, ERG_DIFFERENCE_REAL);
    assert_int_equal(c.digits, 2);
    assert_int_equal(erg_report_comparison(NULL, &w2, &c), ERG_EINVAL);
    assert_int_equal(erg_report_comparison(&w1, &w2, NULL), ERG_EINVAL);
}

static void compare_document(void **state)
{
    (void)state;
    erg_diag d;
    erg_comparison c;
    erg_report a = report(3.0, 0.3, 2.4, 3.6, 1.5, ERG_GRADE_HW_SHUNT),
               b = report(2.0, 0.4, 1.2, 2.8, 2.5, ERG_GRADE_ESTIMATOR);
    assert_int_equal(erg_report_comparison(&a, &b, &c), ERG_OK);
    const char *p = erg_tmp_path(tmpdir, "compare.json");
    assert_int_equal(erg_comparison_write_json(p, "A.json", &a, "B.json", &b, &c, 0.9545, &d),
                     ERG_OK);
    assert_string_equal(erg_tmp_slurp(p), "{\n"
                                          "  \"erg\": \"compare/1\",\n"
                                          "  \"a\": {\n"
                                          "    \"file\": \"A.json\",\n"
                                          "    \"energy_j\": 3.0,\n"
                                          "    \"energy_sd_j\": 0.3,\n"
                                          "    \"interval_j\": [\n"
                                          "      2.4,\n"
                                          "      3.6\n"
                                          "    ],\n"
                                          "    \"time_s\": 1.5,\n"
                                          "    \"grade\": \"hw_shunt\"\n"
                                          "  },\n"
                                          "  \"b\": {\n"
                                          "    \"file\": \"B.json\",\n"
                                          "    \"energy_j\": 2.0,\n"
                                          "    \"energy_sd_j\": 0.4,\n"
                                          "    \"interval_j\": [\n"
                                          "      1.2,\n"
                                          "      2.8\n"
                                          "    ],\n"
                                          "    \"time_s\": 2.5,\n"
                                          "    \"grade\": \"estimator\"\n"
                                          "  },\n"
                                          "  \"confidence\": 0.9545,\n"
                                          "  \"difference_j\": 1.0,\n"
                                          "  \"combined_sd_j\": 0.5,\n"
                                          "  \"verdict\": \"indistinguishable\"\n"
                                          "}\n");
    /* the verdicts by name; a non-finite figure is null (JSON has no NaN) */
    erg_report lo = report(1.0, 0.01, 0.98, 1.02, 1, ERG_GRADE_HW_SHUNT),
               hi = report(2.0, 0.01, 1.98, 2.02, (double)NAN, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_report_comparison(&lo, &hi, &c), ERG_OK);
    assert_int_equal(erg_comparison_write_json(p, "lo", &lo, "hi", &hi, &c, 0.95, &d), ERG_OK);
    const char *t = erg_tmp_slurp(p);
    assert_non_null(strstr(t, "\"verdict\": \"a_less\"\n}\n"));
    assert_non_null(strstr(t, "\"difference_j\": -1.0,"));
    /* 0.01·√2 = 0.014142135623730951 to 12 significant digits */
    assert_non_null(strstr(t, "\"combined_sd_j\": 0.0141421356237,"));
    assert_non_null(strstr(t, "\"time_s\": null,"));
    assert_int_equal(erg_report_comparison(&hi, &lo, &c), ERG_OK);
    assert_int_equal(erg_comparison_write_json(p, "hi", &hi, "lo", &lo, &c, 0.95, &d), ERG_OK);
    assert_non_null(strstr(erg_tmp_slurp(p), "\"verdict\": \"b_less\"\n}\n"));
    /* bad arguments and paths: nothing written */
    assert_int_equal(erg_comparison_write_json(p, NULL, &a, "B", &b, &c, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_comparison_write_json(p, "A", &a, "B", &b, NULL, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_comparison_write_json(erg_tmp_path(tmpdir, "nodir/x.json"), "A", &a, "B",
                                               &b, &c, 0.95, &d),
                     ERG_ENOENT);
    assert_int_equal(access(erg_tmp_path(tmpdir, "nodir"), F_OK), -1);
    assert_int_equal(erg_comparison_write_json(tmpdir, "A", &a, "B", &b, &c, 0.95, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "is a folder"));
    if (access("/dev/full", W_OK) == 0)
        assert_int_equal(erg_comparison_write_json("/dev/full", "A", &a, "B", &b, &c, 0.95, &d),
                         ERG_EIO);
}

static void granularity_document(void **state)
{
    (void)state;
    erg_diag d;
    /* coarse: s = 10 W, T = 1 s, d = 2 J: E = 12 J, σ² = 0.09 J² (sd 0.3 J); parts: 11 J, sd
     * 0.4 J, bias bound 0.2 J at 95 %: |Δ| = 1 J, random = 1.959963984540054·0.5 J =
     * 0.979981992270027 J, bound 1.179981992270027 J: consistent */
    erg_signature coarse;
    erg_signature_init(&coarse);
    snprintf(coarse.name, sizeof coarse.name, "coarse");
    coarse.static_power_w = 10;
    coarse.time_s = 1;
    coarse.dynamic_energy_j = 2;
    coarse.energy_var_j2 = 0.09;
    erg_report parts = report(11, 0.4, 10.2, 11.8, 1, ERG_GRADE_HW_SHUNT);
    parts.confidence = 0.95;
    parts.bias_bound_j = 0.2;
    erg_granularity g;
    assert_int_equal(erg_granularity_check(&coarse, &parts, &g, &d), ERG_OK);
    const char *p = erg_tmp_path(tmpdir, "gran.json");
    assert_int_equal(erg_granularity_write_json(p, &coarse, &parts, &g, 0.95, &d), ERG_OK);
    /* 10 significant digits */
    assert_string_equal(erg_tmp_slurp(p), "{\n"
                                          "  \"erg\": \"granularity/1\",\n"
                                          "  \"coarse_energy_j\": 12.0,\n"
                                          "  \"coarse_energy_sd_j\": 0.3,\n"
                                          "  \"parts_energy_j\": 11.0,\n"
                                          "  \"parts_energy_sd_j\": 0.4,\n"
                                          "  \"difference_j\": 1.0,\n"
                                          "  \"bias_j\": 0.2,\n"
                                          "  \"random_j\": 0.9799819923,\n"
                                          "  \"bound_j\": 1.179981992,\n"
                                          "  \"confidence\": 0.95,\n"
                                          "  \"consistent\": true\n"
                                          "}\n");
    /* 13 J coarse: |Δ| = 2 J > 1.18 J: inconsistent */
    coarse.dynamic_energy_j = 3;
    assert_int_equal(erg_granularity_check(&coarse, &parts, &g, &d), ERG_OK);
    assert_int_equal(erg_granularity_write_json(p, &coarse, &parts, &g, 0.95, &d), ERG_OK);
    assert_non_null(strstr(erg_tmp_slurp(p), "\"difference_j\": 2.0,"));
    assert_non_null(strstr(erg_tmp_slurp(p), "\"consistent\": false\n}\n"));
    assert_int_equal(erg_granularity_write_json(p, &coarse, NULL, &g, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_granularity_write_json(NULL, &coarse, &parts, &g, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_granularity_write_json(erg_tmp_path(tmpdir, "nodir/g.json"), &coarse,
                                                &parts, &g, 0.95, &d),
                     ERG_ENOENT);
}

/* A context report: E, sd, bias, tested against measured ± msd when msd ≥ 0. */
static erg_context_report ctx_report(double e, double sd, double bias, double measured, double msd)
{
    erg_context_report r;
    memset(&r, 0, sizeof r);
    r.report = report(e, sd, e - 2 * sd, e + 2 * sd, 3, ERG_GRADE_ESTIMATOR);
    r.report.bias_bound_j = bias;
    r.null_bias_bound_j = 2 * bias;
    r.covariance_j2 = 0.25;
    r.n_characterized = 1;
    r.n_nodes = 3;
    if (msd >= 0) {
        r.report.has_deviation = 1;
        r.report.measured_j = measured;
        r.report.measured_sd_j = msd;
        r.report.deviation_z = fabs(measured - e) / hypot(sd, msd);
        r.report.deviation_detected = r.report.deviation_z > 2;
    }
    return r;
}

static erg_refine_candidate candidate(int runtime, const char *a, const char *b)
{
    erg_refine_candidate c;
    memset(&c, 0, sizeof c);
    c.runtime = runtime;
    snprintf(c.a, sizeof c.a, "%s", a);
    snprintf(c.b, sizeof c.b, "%s", b);
    c.occurrences = 2;
    c.per_occurrence_j = 0.75;
    c.explain_j = 1.5;
    c.estimated_from_points = runtime;
    return c;
}

static void refine_command(void **state)
{
    (void)state;
    /* a set of two signatures: a's command has a quote, b's none; z is absent */
    erg_context_signature sigs[2];
    erg_context_signature_init(&sigs[0]);
    erg_context_signature_init(&sigs[1]);
    snprintf(sigs[0].null_context.name, sizeof sigs[0].null_context.name, "a");
    snprintf(sigs[0].command, sizeof sigs[0].command, "echo 'hi'");
    snprintf(sigs[1].null_context.name, sizeof sigs[1].null_context.name, "b");
    erg_context_set set;
    memset(&set, 0, sizeof set);
    set.n = 2;
    set.sigs = sigs;
    erg_refine_candidate c = candidate(0, "a", "b");
    char buf[ERG_REFINE_COMMAND_MAX];
    size_t n = sizeof buf;
    assert_int_equal(erg_refine_command(&c, &set, buf, &n), ERG_OK);
    const char *want =
        "erg characterize --name b --after a='echo '\\''hi'\\''' -o b.json -- sh -c 'CMD_OF_B'";
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
    /* too small by one: untouched, the bytes needed said (libuv's rule) */
    char small[128];
    memset(small, 'x', sizeof small);
    n = strlen(want);
    assert_int_equal(erg_refine_command(&c, &set, small, &n), ERG_ERANGE);
    assert_int_equal(n, strlen(want) + 1);
    assert_int_equal(small[0], 'x');
    n = strlen(want) + 1;
    assert_int_equal(erg_refine_command(&c, &set, small, &n), ERG_OK);
    assert_string_equal(small, want);
    /* a co-run, no set: placeholders for both */
    c = candidate(1, "z", "b");
    n = sizeof buf;
    assert_int_equal(erg_refine_command(&c, NULL, buf, &n), ERG_OK);
    assert_string_equal(
        buf, "erg characterize --name b --with z='CMD_OF_A' -o b.json -- sh -c 'CMD_OF_B'");
    /* the longest names and commands, every byte a quote, fit ERG_REFINE_COMMAND_MAX */
    memset(c.a, 'a', sizeof c.a - 1);
    c.a[sizeof c.a - 1] = '\0';
    memset(c.b, 'b', sizeof c.b - 1);
    c.b[sizeof c.b - 1] = '\0';
    memcpy(sigs[0].null_context.name, c.a, sizeof c.a);
    memcpy(sigs[1].null_context.name, c.b, sizeof c.b);
    memset(sigs[0].command, '\'', sizeof sigs[0].command - 1);
    sigs[0].command[sizeof sigs[0].command - 1] = '\0';
    memset(sigs[1].command, '\'', sizeof sigs[1].command - 1);
    sigs[1].command[sizeof sigs[1].command - 1] = '\0';
    n = sizeof buf;
    assert_int_equal(erg_refine_command(&c, &set, buf, &n), ERG_OK);
    /* 24 + 127 + 8 (" --with ") + 127 + 1 + 2·(2 + 4·255) + 4 + 127 + 15 */
    assert_int_equal(n, 24 + 127 + 8 + 127 + 1 + 2 * (2 + 4 * 255) + 4 + 127 + 15);
    assert_int_equal(erg_refine_command(NULL, &set, buf, &n), ERG_EINVAL);
    assert_int_equal(erg_refine_command(&c, &set, NULL, &n), ERG_EINVAL);
    assert_int_equal(erg_refine_command(&c, &set, buf, NULL), ERG_EINVAL);
}

static void refine_document(void **state)
{
    (void)state;
    erg_diag d;
    /* before: 6 J, sd 0.5 J, bias 0.125 J against 7 ± 0 J: z = 1 / 0.5 = 2, not > 2 */
    erg_context_report before = ctx_report(6, 0.5, 0.125, 7, 0);
    erg_refine_candidate cand[1] = {candidate(0, "a", "b")};
    erg_refine_point done[1];
    memset(done, 0, sizeof done);
    snprintf(done[0].signature, sizeof done[0].signature, "b");
    snprintf(done[0].point, sizeof done[0].point, "after:a");
    done[0].time_s = 1.25;
    done[0].energy_j = 3;
    done[0].null_energy_j = 2;
    erg_refine_outcome o = {&before, cand, 1, NULL, done, 1, NULL};
    const char *p = erg_tmp_path(tmpdir, "refine.json");
    assert_int_equal(erg_refine_write_json(p, &o, &d), ERG_OK);
    assert_string_equal(erg_tmp_slurp(p),
                        "{\n"
                        "  \"erg\": \"refine/1\",\n"
                        "  \"before\": {\n"
                        "    \"energy_j\": 6.0,\n"
                        "    \"energy_sd_j\": 0.5,\n"
                        "    \"interval_j\": [\n"
                        "      5.0,\n"
                        "      7.0\n"
                        "    ],\n"
                        "    \"time_s\": 3.0,\n"
                        "    \"bias_bound_j\": 0.125,\n"
                        "    \"null_bias_bound_j\": 0.25,\n"
                        "    \"covariance_j2\": 0.25,\n"
                        "    \"characterized_nodes\": 1,\n"
                        "    \"nodes\": 3,\n"
                        "    \"grade\": \"estimator\",\n"
                        "    \"deviation\": {\n"
                        "      \"measured_j\": 7.0,\n"
                        "      \"measured_sd_j\": 0.0,\n"
                        "      \"difference_j\": 1.0,\n"
                        "      \"z\": 2.0,\n"
                        "      \"detected\": false\n"
                        "    }\n"
                        "  },\n"
                        "  \"candidates\": [\n"
                        "    {\n"
                        "      \"kind\": \"entry\",\n"
                        "      \"a\": \"a\",\n"
                        "      \"b\": \"b\",\n"
                        "      \"occurrences\": 2,\n"
                        "      \"per_occurrence_j\": 0.75,\n"
                        "      \"explain_j\": 1.5,\n"
                        "      \"estimated_from_points\": false,\n"
                        "      \"command\": \"erg characterize --name b --after a='CMD_OF_A' -o "
                        "b.json -- sh -c 'CMD_OF_B'\"\n"
                        "    }\n"
                        "  ],\n"
                        "  \"characterized\": [\n"
                        "    {\n"
                        "      \"signature\": \"b\",\n"
                        "      \"point\": \"after:a\",\n"
                        "      \"time_s\": 1.25,\n"
                        "      \"energy_j\": 3.0,\n"
                        "      \"null_energy_j\": 2.0\n"
                        "    }\n"
                        "  ]\n"
                        "}\n");
    /* after refinement, untested (no "deviation"), a co-run candidate; nothing characterized */
    erg_context_report after = ctx_report(7, 0.5, 0, 0, -1);
    cand[0] = candidate(1, "a", "b");
    erg_refine_outcome o2 = {&before, cand, 1, NULL, NULL, 0, &after};
    assert_int_equal(erg_refine_write_json(p, &o2, &d), ERG_OK);
    const char *t = erg_tmp_slurp(p);
    assert_non_null(strstr(t, "\"kind\": \"runtime\","));
    assert_non_null(strstr(t, "\"estimated_from_points\": true,"));
    assert_non_null(strstr(t, "\"characterized\": [],\n"));
    assert_non_null(strstr(t, "  \"after\": {\n    \"energy_j\": 7.0,"));
    assert_non_null(strstr(t, "\"grade\": \"estimator\"\n  }\n}\n")); /* after has no deviation */
    /* no candidates: an empty list */
    erg_refine_outcome o3 = {&before, NULL, 0, NULL, NULL, 0, NULL};
    assert_int_equal(erg_refine_write_json(p, &o3, &d), ERG_OK);
    assert_non_null(strstr(erg_tmp_slurp(p), "\"candidates\": [],\n  \"characterized\": []\n}\n"));
    /* bad arguments: counts without arrays, no before, NULL; bad paths */
    erg_refine_outcome bad = {&before, NULL, 1, NULL, NULL, 0, NULL};
    assert_int_equal(erg_refine_write_json(p, &bad, &d), ERG_EINVAL);
    bad = (erg_refine_outcome){&before, cand, 1, NULL, NULL, 2, NULL};
    assert_int_equal(erg_refine_write_json(p, &bad, &d), ERG_EINVAL);
    bad = (erg_refine_outcome){NULL, cand, 1, NULL, NULL, 0, NULL};
    assert_int_equal(erg_refine_write_json(p, &bad, &d), ERG_EINVAL);
    assert_int_equal(erg_refine_write_json(p, NULL, &d), ERG_EINVAL);
    assert_int_equal(erg_refine_write_json(erg_tmp_path(tmpdir, "nodir/r.json"), &o, &d),
                     ERG_ENOENT);
    /* a symlink to nothing is not written through; one to a file stays a link, the file it
     * names is written */
    char target[512];
    snprintf(target, sizeof target, "%s", erg_tmp_path(tmpdir, "target.json"));
    assert_int_equal(symlink(target, erg_tmp_path(tmpdir, "link.json")), 0);
    assert_int_equal(erg_refine_write_json(erg_tmp_path(tmpdir, "link.json"), &o3, &d), ERG_ENOENT);
    assert_int_equal(access(target, F_OK), -1);
    assert_non_null(erg_tmp_put(tmpdir, "target.json", "old\n"));
    assert_int_equal(erg_refine_write_json(erg_tmp_path(tmpdir, "link.json"), &o3, &d), ERG_OK);
    struct stat st;
    assert_int_equal(lstat(erg_tmp_path(tmpdir, "link.json"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_non_null(strstr(erg_tmp_slurp(target), "\"erg\": \"refine/1\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(comparison_digits),    cmocka_unit_test(compare_document),
        cmocka_unit_test(granularity_document), cmocka_unit_test(refine_command),
        cmocka_unit_test(refine_document),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
