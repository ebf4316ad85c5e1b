/* SPDX-License-Identifier: MIT */
/* Context dependence: context points in signature/1 and the store, insensitivity over
 * characterized sets (Eq. 11, 12, Section 4.1.3), the interaction graph, composition at realized
 * contexts (Section 4.4), non-commutativity (5.1.1), the monotonicity counterexample (5.1.5),
 * correlated noise (Appendix F.1-F.2, Monte Carlo cross-check), refinement candidates and
 * granularity (Eq. 24). Every expected number is computed by hand in the comments. */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "erg/calculus.h"
#include "erg/stats.h"
#include "erg/store.h"

#include <gsl/gsl_randist.h>
#include <jansson.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tmpdir, sizeof tmpdir, "context");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tmpdir);
}

static const char *put(const char *name, const char *text)
{
    return erg_tmp_put(tmpdir, name, text);
}

/* Release a context signature's points and free it (NULL-safe). */
static void cs_free(erg_context_signature *cs)
{
    erg_context_signature_release(cs);
    free(cs);
}

/* An element on "cpu" (s = 10 W) with sd_E = sd. */
static void element(erg_context_signature *cs, const char *name, double t, double d, double sd)
{
    erg_context_signature_init(cs);
    erg_signature *s = &cs->null_context;
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->device, sizeof s->device, "cpu");
    s->static_power_w = 10;
    s->time_s = t;
    s->dynamic_energy_j = d;
    s->energy_var_j2 = sd * sd;
}

static void point(erg_context_signature *cs, const char *name, const char *after,
                  const char *corunner, double t, double d, double sd)
{
    erg_context_point p;
    erg_context_point_init(&p);
    snprintf(p.name, sizeof p.name, "%s", name);
    if (after)
        snprintf(p.after, sizeof p.after, "%s", after);
    if (corunner) {
        p.mechanism = ERG_MECHANISM_CONTENTION;
        p.corunners = &corunner; /* add copies the names */
        p.n_corunners = 1;
    }
    p.static_power_w = 10;
    p.time_s = t;
    p.dynamic_energy_j = d;
    p.energy_var_j2 = sd * sd;
    erg_diag dg;
    if (erg_context_signature_add(cs, &p, &dg) != ERG_OK)
        fail_msg("add %s: %s", name, dg.detail);
}

/* ------------------------------------------------------------------ file form and store ---- */

static void file_round_trip(void **state)
{
    (void)state;
    const char *f =
        put("gemm.json",
            "{\"erg\": \"signature/1\", \"name\": \"gemm\", \"device\": \"cpu\",\n"
            " \"static_power_w\": 10, \"time_s\": 1, \"dynamic_energy_j\": 5,\n"
            " \"energy_var_j2\": 0.25, \"command\": \"./gemm 256\",\n"
            " \"contexts\": [\n"
            "  {\"name\": \"after:stream\", \"mechanism\": \"cache\", \"after\": "
            "\"stream\", \"cache\": \"cold\",\n"
            "   \"traffic_bytes\": 67108864, \"time_s\": 1.2, \"dynamic_energy_j\": "
            "5.5, \"energy_var_j2\": 0.3, \"runs\": 7},\n"
            "  {\"name\": \"with:copy\", \"mechanism\": \"contention\", "
            "\"corunners\": [\"copy\"],\n"
            "   \"temperature_c\": 61.5, \"time_s\": 1.05, \"dynamic_energy_j\": 5.2}]}\n");
    erg_context_signature *cs = calloc(1, sizeof *cs); /* zeroed: empty */
    erg_diag d;
    assert_int_equal(erg_context_signature_read_file(f, cs, &d), ERG_OK);
    assert_string_equal(cs->command, "./gemm 256");
    assert_int_equal(cs->n_points, 2);
    assert_string_equal(cs->points[0].after, "stream");
    assert_string_equal(cs->points[0].cache, "cold");
    erg_assert_near(cs->points[0].traffic_bytes, 67108864.0, 0);
    assert_int_equal(cs->points[0].runs, 7);
    /* the point's static power defaults to the null context's */
    erg_assert_near(cs->points[0].static_power_w, 10.0, 0);
    assert_int_equal(cs->points[1].mechanism, ERG_MECHANISM_CONTENTION);
    erg_assert_near(cs->points[1].temperature_c, 61.5, 0);
    const char *with[] = {"copy"};
    assert_int_equal(erg_context_signature_find(cs, "", with, 1), 1);
    assert_int_equal(erg_context_signature_find(cs, "stream", NULL, 0), 0);
    assert_int_equal(erg_context_signature_find(cs, "gemm", NULL, 0), -1);
    /* the plain reader keeps working and ignores the points */
    erg_signature plain;
    assert_int_equal(erg_signature_read_file(f, &plain, &d), ERG_OK);
    erg_assert_near(erg_signature_energy_j(&plain), 15.0, 1e-12);
    /* write and read back */
    char out[512];
    snprintf(out, sizeof out, "%s/back.json", tmpdir);
    assert_int_equal(erg_context_signature_write_file(out, cs, &d), ERG_OK);
    erg_context_signature *back = calloc(1, sizeof *back);
    assert_int_equal(erg_context_signature_read_file(out, back, &d), ERG_OK);
    assert_int_equal(back->n_points, 2);
    erg_assert_near(back->points[0].time_s, 1.2, 0);
    assert_string_equal(back->points[1].corunners[0], "copy");
    assert_true(isnan(back->points[0].temperature_c));
    /* and through the store */
    snprintf(out, sizeof out, "%s/s.db", tmpdir);
    erg_store *st;
    assert_int_equal(erg_store_open(out, 1, &st, &d), ERG_OK);
    assert_int_equal(erg_store_put_context(st, cs, &d), ERG_OK);
    erg_context_signature_release(back);
    assert_int_equal(erg_store_get_context(st, "gemm", back, &d), ERG_OK);
    assert_int_equal(back->n_points, 2);
    erg_assert_near(back->points[0].dynamic_energy_j, 5.5, 0);
    assert_string_equal(back->command, "./gemm 256");
    assert_int_equal(erg_store_get(st, "gemm", &plain, &d), ERG_OK);
    erg_assert_near(plain.time_s, 1.0, 0);
    erg_store_close(st);
    cs_free(back);
    cs_free(cs);
}

/* Points sized at run time: 40 points (more than the 16 the ABI once held inline) go through the
 * writer and the reader with every value exact (jansson writes doubles with 17 significant
 * digits, which round-trip), in order; adding by an existing name replaces in place; a copy owns
 * its own storage. Values are thirds and sevenths, not representable in short decimal form. */
/* Co-runner k of odd point i: "co<i>", "other", then names of 150 to 400 bytes, well past the
 * 128 bytes (ERG_SIG_NAME_MAX) a name had when co-runners were fixed arrays. */
static void corunner_name(char *buf, size_t size, int i, size_t k)
{
    if (k == 0)
        snprintf(buf, size, "co%d", i);
    else if (k == 1)
        snprintf(buf, size, "other");
    else {
        size_t len = 150 + (size_t)(i * 37 + (int)k * 53) % 251, n = 0;
        n += (size_t)snprintf(buf, size, "long-%d-%zu-", i, k);
        for (; n < len && n + 1 < size; n++)
            buf[n] = (char)('a' + (n + k) % 26);
        buf[n] = '\0';
    }
}

/* Odd point i has 2 + i % 9 co-runners: up to 10, more than the 4 a point once held. */
static size_t corunner_count(int i)
{
    return 2 + (size_t)(i % 9);
}

static void many_points_round_trip(void **state)
{
    (void)state;
    enum { N = 40, MAXC = 10 };
    static char names[MAXC][512];
    const char *np[MAXC];
    erg_context_signature *cs = malloc(sizeof *cs);
    element(cs, "many", 1, 5, 0.5);
    assert_null(cs->points);
    assert_int_equal(cs->capacity, 0);
    erg_diag d;
    for (int i = 0; i < N; i++) {
        erg_context_point p;
        erg_context_point_init(&p);
        snprintf(p.name, sizeof p.name, "p%d", i);
        if (i % 2) {
            p.mechanism = ERG_MECHANISM_CONTENTION;
            p.n_corunners = corunner_count(i);
            for (size_t k = 0; k < p.n_corunners; k++) {
                corunner_name(names[k], sizeof names[k], i, k);
                np[k] = names[k];
            }
            p.corunners = np; /* add copies them: names[] is reused for the next point */
            p.temperature_c = 40.0 + i / 7.0;
        } else {
            snprintf(p.after, sizeof p.after, "e%d", i);
            snprintf(p.cache, sizeof p.cache, "cold");
            p.traffic_bytes = 1048576.0 * (i + 1);
        }
        p.static_power_w = 10;
        p.time_s = 1.0 + i / 3.0;
        p.dynamic_energy_j = 5.0 + i / 7.0;
        p.time_var_s2 = 1e-4 * (i + 1) / 3.0;
        p.energy_var_j2 = 0.1 * (i + 1) / 7.0; /* ≥ s²·var(T) (Axiom M1) */
        p.runs = (unsigned)(i + 2);
        if (erg_context_signature_add(cs, &p, &d) != ERG_OK)
            fail_msg("add %d: %s", i, d.detail);
        assert_int_equal(cs->n_points, (size_t)i + 1);
        assert_true(cs->capacity >= cs->n_points);
    }
    assert_int_equal(cs->capacity, 64); /* 8, 16, 32, 64 */
    /* replace p3 by name: the count stays, the values change in place */
    erg_context_point r = cs->points[3];
    r.dynamic_energy_j = 9.0 / 7.0;
    assert_int_equal(erg_context_signature_add(cs, &r, &d), ERG_OK);
    assert_int_equal(cs->n_points, N);
    assert_true(cs->points[3].dynamic_energy_j == 9.0 / 7.0);
    char out[512];
    snprintf(out, sizeof out, "%s/many.json", tmpdir);
    assert_int_equal(erg_context_signature_write_file(out, cs, &d), ERG_OK);
    erg_context_signature *back = calloc(1, sizeof *back);
    if (erg_context_signature_read_file(out, back, &d) != ERG_OK)
        fail_msg("read back: %s", d.detail);
    assert_int_equal(back->n_points, N);
    assert_true(back->capacity >= N);
    for (int i = 0; i < N; i++) {
        const erg_context_point *a = &cs->points[i], *b = &back->points[i];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->mechanism, b->mechanism);
        assert_string_equal(a->after, b->after);
        assert_string_equal(a->cache, b->cache);
        assert_int_equal(a->n_corunners, b->n_corunners);
        assert_int_equal(b->n_corunners, i % 2 ? corunner_count(i) : 0);
        for (size_t k = 0; k < a->n_corunners; k++) {
            char want[512];
            corunner_name(want, sizeof want, i, k);
            assert_string_equal(a->corunners[k], want);
            assert_string_equal(b->corunners[k], want);
        }
        assert_true(isnan(a->traffic_bytes) ? isnan(b->traffic_bytes)
                                            : a->traffic_bytes == b->traffic_bytes);
        assert_true(isnan(a->temperature_c) ? isnan(b->temperature_c)
                                            : a->temperature_c == b->temperature_c);
        assert_true(a->static_power_w == b->static_power_w);
        assert_true(a->time_s == b->time_s);
        assert_true(a->dynamic_energy_j == b->dynamic_energy_j);
        assert_true(a->time_var_s2 == b->time_var_s2);
        assert_true(a->energy_var_j2 == b->energy_var_j2);
        assert_int_equal(a->runs, b->runs);
    }
    /* the longest co-runner list (point 17: 10 names, 8 of them 150-400 bytes) came back whole */
    assert_int_equal(back->points[17].n_corunners, 10);
    size_t longest = 0;
    for (size_t k = 0; k < 10; k++)
        if (strlen(back->points[17].corunners[k]) > longest)
            longest = strlen(back->points[17].corunners[k]);
    assert_true(longest > 300);
    /* the 17th point and the last, found by their contexts (a set: order does not matter) */
    const char *with16[MAXC];
    for (size_t k = 0; k < 10; k++)
        with16[9 - k] = back->points[17].corunners[k];
    assert_int_equal(erg_context_signature_find(back, "", with16, 10), 17);
    assert_int_equal(erg_context_signature_find(back, "", with16, 9), -1);
    assert_int_equal(erg_context_signature_find(back, "e38", NULL, 0), 38);
    assert_true(back->points[39].time_s == 1.0 + 39 / 3.0);
    /* a copy owns its storage: changing the original leaves it as it was */
    erg_context_signature *cp = malloc(sizeof *cp);
    assert_int_equal(erg_context_signature_copy(cp, back), ERG_OK);
    assert_true(cp->points != back->points);
    assert_true(cp->points[17].corunners != back->points[17].corunners);
    assert_string_equal(cp->points[17].corunners[9], back->points[17].corunners[9]);
    back->points[20].time_s = 99;
    erg_context_signature_release(back);
    char want9[512];
    corunner_name(want9, sizeof want9, 17, 9);
    assert_string_equal(cp->points[17].corunners[9], want9);
    assert_null(back->points);
    assert_int_equal(back->n_points, 0);
    assert_int_equal(cp->n_points, N);
    assert_true(cp->points[20].time_s == 1.0 + 20 / 3.0);
    assert_int_equal(erg_context_signature_copy(cp, cp), ERG_EINVAL);
    cs_free(cp);
    cs_free(back);
    cs_free(cs);
    erg_context_signature_release(NULL); /* NULL-safe */
}

static void bad_points(void **state)
{
    (void)state;
    static const struct {
        const char *point, *needle;
    } cases[] = {
        {"{\"name\": \"a\", \"mechanism\": \"cache\", \"after\": \"x\", \"time_s\": 1, "
         "\"dynamic_energy_j\": 1, \"time_var_s\": 1}",
         "signature.contexts[0].time_var_s: unknown member of a context point"},
        {"{\"name\": \"a\", \"mechanism\": \"magic\", \"after\": \"x\", \"time_s\": 1, "
         "\"dynamic_energy_j\": 1}",
         "signature.contexts[0].mechanism: expected"},
        {"{\"name\": \"a\", \"mechanism\": \"cache\", \"time_s\": 1, \"dynamic_energy_j\": 1}",
         "signature.contexts[0]: a context point states its context"},
        {"{\"name\": \"a\", \"mechanism\": \"cache\", \"after\": \"x\", \"time_s\": -1, "
         "\"dynamic_energy_j\": 1}",
         "signature.contexts[0].time_s: must not be negative"},
        {"{\"name\": \"a\", \"mechanism\": \"cache\", \"after\": \"x\", \"time_s\": 1, "
         "\"time_var_s2\": 1, \"energy_var_j2\": 1, \"dynamic_energy_j\": 1}",
         "Axiom M1"},
        {"{\"name\": \"a\", \"mechanism\": \"cache\", \"cache\": \"tepid\", \"time_s\": 1, "
         "\"dynamic_energy_j\": 1}",
         "signature.contexts[0].cache: expected \"cold\" or \"warm\""},
        {"{\"name\": \"a\", \"mechanism\": \"contention\", \"corunners\": [\"\"], \"time_s\": 1, "
         "\"dynamic_energy_j\": 1}",
         "corunners[0]: expected a non-empty name"},
        {"{\"name\": \"a\", \"mechanism\": \"contention\", \"corunners\": [\"x\", 3], "
         "\"time_s\": 1, \"dynamic_energy_j\": 1}",
         "signature.contexts[0].corunners[1]: expected a non-empty name"},
        {"{\"name\": \"a\", \"mechanism\": \"contention\", \"corunners\": \"x\", \"time_s\": 1, "
         "\"dynamic_energy_j\": 1}",
         "signature.contexts[0].corunners: expected an array of names"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"erg\": \"signature/1\", \"name\": \"g\", \"static_power_w\": 10, \"time_s\": "
                 "1, \"dynamic_energy_j\": 5, \"contexts\": [%s]}",
                 cases[i].point);
        const char *f = put("bad.json", text);
        erg_context_signature *cs = calloc(1, sizeof *cs); /* zeroed: empty */
        erg_diag d;
        erg_diag_clear(&d);
        int rc = erg_context_signature_read_file(f, cs, &d);
        cs_free(cs);
        if (rc == ERG_OK || !strstr(d.detail, cases[i].needle))
            fail_msg("case %zu: rc %d, detail '%s', expected '%s'", i, rc, d.detail,
                     cases[i].needle);
    }
    /* a duplicate point name */
    const char *f =
        put("dup.json", "{\"erg\": \"signature/1\", \"name\": \"g\", \"static_power_w\": 10, "
                        "\"time_s\": 1, \"dynamic_energy_j\": 5, \"contexts\": ["
                        "{\"name\": \"a\", \"mechanism\": \"cache\", \"after\": \"x\", \"time_s\": "
                        "1, \"dynamic_energy_j\": 1},"
                        "{\"name\": \"a\", \"mechanism\": \"cache\", \"after\": \"y\", \"time_s\": "
                        "1, \"dynamic_energy_j\": 1}]}");
    erg_context_signature *cs = calloc(1, sizeof *cs); /* zeroed: empty */
    erg_diag d;
    assert_int_equal(erg_context_signature_read_file(f, cs, &d), ERG_EPARSE);
    assert_non_null(strstr(d.detail, "duplicate point \"a\""));
    cs_free(cs);
    /* a bad value is placed by line and column (hand-counted: on line 6, 3 spaces, "corunners":
     * at 4-15, '[' at 17, "a" 18-20, "b\"]" 23-28, 7 at 31) */
    f = put("pos.json", "{\"erg\": \"signature/1\", \"name\": \"b\", \"device\": \"cpu\",\n"
                        " \"static_power_w\": 10, \"time_s\": 1, \"dynamic_energy_j\": 5,\n"
                        " \"contexts\": [\n"
                        "  {\"name\": \"after:a\", \"mechanism\": \"cache\", \"after\": \"a\", "
                        "\"time_s\": 1.2, \"dynamic_energy_j\": 5.5},\n"
                        "  {\"name\": \"with:[x]\", \"mechanism\": \"contention\",\n"
                        "   \"corunners\": [\"a\", \"b\\\"]\", 7],\n"
                        "   \"time_s\": 1.05, \"dynamic_energy_j\": 5.2}]}\n");
    cs = calloc(1, sizeof *cs);
    assert_int_equal(erg_context_signature_read_file(f, cs, &d), ERG_EPARSE);
    char want[600];
    snprintf(want, sizeof want, "%s:6:31", f);
    assert_string_equal(d.where, want);
    assert_string_equal(d.detail, "signature.contexts[1].corunners[2]: expected a non-empty name");
    cs_free(cs);
    /* the plain reader places the null context's values the same way (line 2, column 34) */
    erg_signature plain;
    f = put("pos2.json", "{\"erg\": \"signature/1\", \"name\": \"b\", \"device\": \"cpu\",\n"
                         " \"static_power_w\": 10, \"time_s\": -1, \"dynamic_energy_j\": 5}\n");
    assert_int_equal(erg_signature_read_file(f, &plain, &d), ERG_EPARSE);
    snprintf(want, sizeof want, "%s:2:34", f);
    assert_string_equal(d.where, want);
}

/* ------------------------------------------------------------------ insensitivity ----------- */

/* Null context of B: s = 10 W, T = 1 s, d = 5 J, σ_E = 0.5 J; c(0.95) = 1.959964, so the
 * tolerance is 0.979982 J.
 *   after:A  T = 1.2, d = 5.5:  lhs = 0.2·10 + 0.5 = 2.5 J  > 0.98: sensitive
 *   after:C  T = 1.02, d = 5.1: lhs = 0.02·10 + 0.1 = 0.3 J ≤ 0.98
 *   with:A   T = 1.05, d = 5.2: lhs = 0.5 + 0.2 = 0.7 J ≤ 0.98 */
static void insensitivity_over_sets(void **state)
{
    (void)state;
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    element(b, "B", 1, 5, 0.5);
    point(b, "after:A", "A", NULL, 1.2, 5.5, 0.5);
    point(b, "after:C", "C", NULL, 1.02, 5.1, 0.5);
    point(b, "with:A", NULL, "A", 1.05, 5.2, 0.5);
    element(a, "A", 1, 2, 0.1);
    point(a, "after:B", "B", NULL, 1.0, 2.05, 0.1); /* lhs 0.05 ≤ 1.96·0.1 = 0.196 */
    point(a, "with:B", NULL, "B", 1.0, 2.3, 0.1);   /* lhs 0.3 > 0.196 */
    erg_diag d;
    erg_set_insensitivity h;
    double tol = 1.959963984540054 * 0.5;
    assert_int_equal(erg_context_history_test(b, NULL, 0.95, &h, &d), ERG_OK);
    assert_int_equal(h.n_tested, 2);
    assert_int_equal(h.insensitive, 0);
    assert_string_equal(h.point, "after:A");
    erg_assert_near(h.lhs_j, 2.5, 1e-12);
    erg_assert_near(h.tolerance_j, tol, 1e-12);
    assert_int_equal(erg_context_history_test(b, "C", 0.95, &h, &d), ERG_OK);
    assert_int_equal(h.insensitive, 1);
    erg_assert_near(h.lhs_j, 0.3, 1e-12);
    assert_int_equal(erg_context_history_test(b, "Z", 0.95, &h, &d), ERG_OK);
    assert_int_equal(h.insensitive, -1); /* nothing characterized after Z */
    assert_int_equal(erg_context_interference_test(b, "A", 0.95, &h, &d), ERG_OK);
    assert_int_equal(h.insensitive, 1);
    erg_assert_near(h.lhs_j, 0.7, 1e-12);
    erg_pair_verdict v;
    assert_int_equal(erg_context_pair_test(a, b, 0.95, &v, &d), ERG_OK);
    assert_int_equal(v.history_a.insensitive, 1);
    erg_assert_near(v.history_a.lhs_j, 0.05, 1e-12);
    assert_int_equal(v.history_b.insensitive, 0);
    assert_int_equal(v.history, 0);
    assert_int_equal(v.interference_a.insensitive, 0);
    erg_assert_near(v.interference_a.lhs_j, 0.3, 1e-12);
    erg_assert_near(v.interference_a.tolerance_j, 1.959963984540054 * 0.1, 1e-12);
    assert_int_equal(v.interference_b.insensitive, 1);
    assert_int_equal(v.interference, 0);
    assert_int_equal(v.mutual, 0);
    /* C against B: B is history-insensitive after C, C has no points: not characterized */
    erg_context_signature *c = malloc(sizeof *c);
    element(c, "C", 1, 1, 0.1);
    assert_int_equal(erg_context_pair_test(c, b, 0.95, &v, &d), ERG_OK);
    assert_int_equal(v.history_b.insensitive, 1);
    assert_int_equal(v.history, -1);
    assert_int_equal(v.mutual, -1);
    /* insensitive-pair/1 and insensitive/1 are the library's: not characterized is null */
    char jdir[64], jpath[128];
    assert_int_equal(erg_tmp_new(jdir, sizeof jdir, "pairjson"), 0);
    snprintf(jpath, sizeof jpath, "%s/pair.json", jdir);
    assert_int_equal(erg_pair_verdict_write_json(jpath, "C", "B", &v, 0.95, &d), ERG_OK);
    json_t *doc = json_load_file(jpath, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "erg")), "insensitive-pair/1");
    assert_string_equal(json_string_value(json_object_get(doc, "a")), "C");
    assert_true(json_is_null(json_object_get(doc, "mutual")));
    assert_true(json_is_null(json_object_get(doc, "history")));
    const json_t *hb = json_object_get(doc, "history_b");
    assert_true(json_is_true(json_object_get(hb, "insensitive")));
    assert_int_equal(json_integer_value(json_object_get(hb, "points_tested")), 1);
    assert_string_equal(json_string_value(json_object_get(hb, "point")), "after:C");
    erg_assert_near(json_number_value(json_object_get(hb, "lhs_j")), 0.3, 1e-12);
    const json_t *ha = json_object_get(doc, "history_a");
    assert_true(json_is_null(json_object_get(ha, "insensitive")));
    assert_int_equal(json_integer_value(json_object_get(ha, "points_tested")), 0);
    json_decref(doc);
    erg_signature ref = a->null_context, ps;
    erg_insensitivity r;
    assert_int_equal(erg_context_point_signature(a, 0, &ps), ERG_OK); /* after:B */
    assert_int_equal(erg_context_insensitive(&ref, &ps, 0.95, &r, &d), ERG_OK);
    snprintf(jpath, sizeof jpath, "%s/one.json", jdir);
    assert_int_equal(erg_insensitivity_write_json(jpath, &r, 0.95, &d), ERG_OK);
    doc = json_load_file(jpath, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "erg")), "insensitive/1");
    erg_assert_near(json_number_value(json_object_get(doc, "lhs_j")), 0.05, 1e-11);
    erg_assert_near(json_number_value(json_object_get(doc, "tolerance_j")), 1.959963984540054 * 0.1,
                    1e-11);
    erg_assert_near(json_number_value(json_object_get(doc, "confidence")), 0.95, 0);
    assert_true(json_is_true(json_object_get(doc, "insensitive")));
    json_decref(doc);
    assert_int_equal(erg_insensitivity_write_json(jpath, NULL, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_pair_verdict_write_json(jpath, NULL, "B", &v, 0.95, &d), ERG_EINVAL);
    assert_int_equal(erg_tmp_free(jdir), 0);
    assert_int_equal(erg_context_pair_test(c, b, 1.5, &v, &d), ERG_EINVAL);
    /* the graph: A → B (2.5 J lhs, sensitive), C → B (insensitive), B → A, and the two co-run
     * endpoints A ↔ B carried separately */
    const erg_context_signature *all[] = {a, b, c};
    erg_interaction_graph g;
    assert_int_equal(erg_interaction_graph_build(all, 3, 0.95, &g, &d), ERG_OK);
    assert_int_equal(g.n_edges, 5);
    int seen = 0;
    for (size_t i = 0; i < g.n_edges; i++) {
        const erg_interaction_edge *e = &g.edges[i];
        if (e->directed && !strcmp(e->from, "A") && !strcmp(e->to, "B")) {
            seen |= 1;
            erg_assert_near(e->delta_energy_j, 2.5, 1e-12); /* 10·1.2 + 5.5 − 15 */
            assert_true(e->sensitive);
        }
        if (!e->directed && !strcmp(e->to, "A")) {
            seen |= 2;
            assert_string_equal(e->from, "B");
            erg_assert_near(e->delta_energy_j, 0.3, 1e-12);
            assert_true(e->sensitive);
        }
        if (!e->directed && !strcmp(e->to, "B")) {
            seen |= 4;
            assert_int_equal(e->mechanism, ERG_MECHANISM_CONTENTION);
            assert_false(e->sensitive);
        }
    }
    assert_int_equal(seen, 7);
    char path[512];
    snprintf(path, sizeof path, "%s/g.json", tmpdir);
    assert_int_equal(erg_interaction_graph_write_file(path, &g, 0.95, &d), ERG_OK);
    erg_interaction_graph_free(&g);
    erg_interaction_graph_free(&g);
    cs_free(a);
    cs_free(b);
    cs_free(c);
}

/* ------------------------------------------------------------------ composition ------------- */

/* A DAG on "cpu" (10 W): nodes of the given signatures, chained by edges when chain. */
static erg_schedule *dag(const erg_context_signature *const *sigs, size_t n,
                         const char *const *order, size_t k, int chain)
{
    erg_schedule *s = erg_schedule_new();
    erg_diag d;
    if (erg_schedule_add_device(s, "cpu", 10, NAN, &d) != ERG_OK)
        fail_msg("%s", d.detail);
    for (size_t i = 0; i < n; i++)
        if (erg_schedule_add_signature(s, &sigs[i]->null_context, &d) != ERG_OK)
            fail_msg("%s", d.detail);
    for (size_t i = 0; i < k; i++) {
        char id[16];
        snprintf(id, sizeof id, "n%zu", i);
        if (erg_schedule_add_node(s, id, order[i], "cpu", NAN, &d) != ERG_OK)
            fail_msg("%s", d.detail);
        if (chain && i > 0) {
            char prev[16];
            snprintf(prev, sizeof prev, "n%zu", i - 1);
            if (erg_schedule_add_edge(s, prev, id, &d) != ERG_OK)
                fail_msg("%s", d.detail);
        }
    }
    return s;
}

static double compose_e(const erg_context_signature *const *sigs, size_t n,
                        const char *const *order, size_t k, int chain, erg_context_report *r)
{
    erg_schedule *s = dag(sigs, n, order, k, chain);
    erg_diag d;
    if (erg_schedule_compose_context(s, sigs, n, NULL, 0, NULL, r, &d) != ERG_OK)
        fail_msg("compose: %s", d.detail);
    erg_schedule_free(s);
    return r->report.energy_j;
}

/* Section 5.1.1: A leaves state (cache pollution) B is sensitive to; B leaves nothing A feels.
 *   A: T = 1, d = 2 (E 12);  B: T = 1, d = 5 (E 15);  B after A: T = 1.2, d = 5.5 (E 17.5);
 *   A after B: T = 1, d = 2.05 (E 12.05).
 *   A ⊗ B = 12 + 17.5 = 29.5 J;  B ⊗ A = 15 + 12.05 = 27.05 J: ⊗ does not commute.
 *   Context-independent: both 27 J. Bias bound there: the second element's entry substitution,
 *   c·σ: A⊗B 1.96·0.5 = 0.98 J; with the characterized pair: 0. */
static void sequential_does_not_commute(void **state)
{
    (void)state;
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    element(a, "A", 1, 2, 0.1);
    element(b, "B", 1, 5, 0.5);
    point(b, "after:A", "A", NULL, 1.2, 5.5, 0.5);
    point(a, "after:B", "B", NULL, 1.0, 2.05, 0.1);
    const erg_context_signature *all[] = {a, b};
    const char *ab[] = {"A", "B"}, *ba[] = {"B", "A"};
    erg_context_report r;
    erg_assert_near(compose_e(all, 2, ab, 2, 1, &r), 29.5, 1e-9);
    assert_string_equal(r.nodes[1].after, "A");
    assert_string_equal(r.nodes[1].point, "after:A");
    assert_int_equal(r.n_characterized, 1);
    erg_assert_near(r.report.bias_bound_j, 0.0, 0);
    erg_assert_near(r.null_bias_bound_j, 1.959963984540054 * 0.5, 1e-12);
    erg_assert_near(r.report.time_s, 2.2, 1e-12);
    erg_context_report_free(&r);
    erg_assert_near(compose_e(all, 2, ba, 2, 1, &r), 27.05, 1e-9);
    erg_context_report_free(&r);
    /* the difference 2.45 J exceeds c·(σ_A + σ_B) = 1.96·0.6 = 1.18 J: the corollary of 5.1.1
     * (orderings agree within the summed bounds) needs mutual insensitivity, which fails */
    erg_pair_verdict v;
    erg_diag d;
    assert_int_equal(erg_context_pair_test(a, b, 0.95, &v, &d), ERG_OK);
    assert_int_equal(v.history, 0);
    /* without the points, both orders give the context-independent 27 J */
    const erg_context_signature *none[] = {NULL};
    erg_schedule *s = dag(all, 2, ab, 2, 1);
    assert_int_equal(erg_schedule_compose_context(s, none, 0, NULL, 0, NULL, &r, &d), ERG_OK);
    erg_assert_near(r.report.energy_j, 27.0, 1e-9);
    erg_context_report_free(&r);
    /* with the points, in a caller's composition workspace, twice (the second call reuses the
     * first's adjacency): the report of a call in its own memory, exactly */
    erg_context_report own, in_ws;
    assert_int_equal(erg_schedule_compose_context(s, all, 2, NULL, 0, NULL, &own, &d), ERG_OK);
    erg_assert_near(own.report.energy_j, 29.5, 1e-9);
    erg_compose_workspace *ws = erg_compose_workspace_new();
    assert_non_null(ws);
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.workspace = ws;
    for (int rep = 0; rep < 2; rep++) {
        assert_int_equal(erg_schedule_compose_context(s, all, 2, NULL, 0, &o, &in_ws, &d), ERG_OK);
        assert_true(in_ws.report.energy_j == own.report.energy_j);
        assert_true(in_ws.report.energy_sd_j == own.report.energy_sd_j);
        assert_true(in_ws.report.time_s == own.report.time_s);
        assert_true(in_ws.report.time_sd_s == own.report.time_sd_s);
        assert_true(in_ws.report.bias_bound_j == own.report.bias_bound_j);
        assert_true(in_ws.null_bias_bound_j == own.null_bias_bound_j);
        assert_int_equal(in_ws.n_nodes, own.n_nodes);
        erg_context_report_free(&in_ws);
    }
    assert_true(erg_compose_workspace_bytes(ws) > 0);
    erg_compose_workspace_free(ws);
    erg_context_report_free(&own);
    erg_schedule_free(s);
    cs_free(a);
    cs_free(b);
}

/* Section 5.1.5: replacing e1 by e1', no cheaper in any component (s equal, T 1.1 ≥ 1,
 * d 2.5 ≥ 2), lowers the total because e1' leaves e2's operands warm:
 *   e1 ⊗ e2  = (10·1 + 2) + (10·1.2 + 5.5) = 12 + 17.5 = 29.5 J
 *   e1'⊗ e2  = (10·1.1 + 2.5) + (10·0.8 + 4) = 13.5 + 12 = 25.5 J  < 29.5 J
 * while the context-independent algebra stays monotone: 27 J ≤ 28.5 J. */
static void monotonicity_counterexample(void **state)
{
    (void)state;
    erg_context_signature *e1 = malloc(sizeof *e1), *e1p = malloc(sizeof *e1p),
                          *e2 = malloc(sizeof *e2);
    element(e1, "e1", 1, 2, 0.1);
    element(e1p, "e1p", 1.1, 2.5, 0.1);
    element(e2, "e2", 1, 5, 0.5);
    point(e2, "after:e1", "e1", NULL, 1.2, 5.5, 0.5);
    point(e2, "after:e1p", "e1p", NULL, 0.8, 4.0, 0.5);
    const erg_context_signature *all[] = {e1, e1p, e2};
    const char *o1[] = {"e1", "e2"}, *o2[] = {"e1p", "e2"};
    erg_context_report r;
    double x = compose_e(all, 3, o1, 2, 1, &r);
    erg_context_report_free(&r);
    double y = compose_e(all, 3, o2, 2, 1, &r);
    erg_context_report_free(&r);
    erg_assert_near(x, 29.5, 1e-9);
    erg_assert_near(y, 25.5, 1e-9);
    assert_true(y < x);
    erg_diag d;
    erg_schedule *s1 = dag(all, 3, o1, 2, 1), *s2 = dag(all, 3, o2, 2, 1);
    erg_report r1, r2;
    assert_int_equal(erg_schedule_compose(s1, NULL, &r1, &d), ERG_OK);
    assert_int_equal(erg_schedule_compose(s2, NULL, &r2, &d), ERG_OK);
    erg_assert_near(r1.energy_j, 27.0, 1e-9);
    erg_assert_near(r2.energy_j, 28.5, 1e-9);
    erg_report_free(&r1);
    erg_report_free(&r2);
    erg_schedule_free(s1);
    erg_schedule_free(s2);
    cs_free(e1);
    cs_free(e1p);
    cs_free(e2);
}

/* Co-running A and B on cpu (no edges, both start at 0).
 *   Null: makespan 1 s, E = 10·1 + 2 + 5 = 17 J; bias = c·(0.1 + 0.5) = 1.176 J (isolation).
 *   A with B: T 1.3, d 2.4; B with A: T 1.5, d 6: E = 10·1.5 + 2.4 + 6 = 23.4 J, bias 0.
 *   Only B characterized: E = 10·1.5 + 2 + 6 = 23 J, bias c·0.1 = 0.196 J. */
static void corun_at_runtime_context(void **state)
{
    (void)state;
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    element(a, "A", 1, 2, 0.1);
    element(b, "B", 1, 5, 0.5);
    point(b, "with:A", NULL, "A", 1.5, 6.0, 0.5);
    const erg_context_signature *all[] = {a, b};
    const char *order[] = {"A", "B"};
    erg_context_report r;
    const double c = 1.959963984540054;
    erg_assert_near(compose_e(all, 2, order, 2, 0, &r), 23.0, 1e-9);
    erg_assert_near(r.report.bias_bound_j, c * 0.1, 1e-12);
    erg_assert_near(r.null_bias_bound_j, c * 0.6, 1e-12);
    assert_int_equal(r.nodes[0].n_corunners, 1);
    assert_int_equal(r.nodes[0].m_isolation, 1);
    assert_int_equal(r.nodes[1].m_isolation, 0);
    assert_int_equal(r.nodes[0].m_entry, 0); /* starts the composition at the null context */
    erg_context_report_free(&r);
    point(a, "with:B", NULL, "B", 1.3, 2.4, 0.1);
    erg_assert_near(compose_e(all, 2, order, 2, 0, &r), 23.4, 1e-9);
    erg_assert_near(r.report.bias_bound_j, 0.0, 0);
    erg_assert_near(r.report.time_s, 1.5, 1e-12);
    erg_context_report_free(&r);
    cs_free(a);
    cs_free(b);
}

/* A runtime context of any size (paper Section 3.1: ρ is a set of elements, with no bound). X
 * (T 1, d 2) co-runs with C1..C6 (each T 1, d 1), all on cpu from 0 (s = 10 W, makespan 1 s):
 *   null context: E = 10·1 + 2 + 6·1 = 18 J;
 *   X characterized with all six ("with:all": T 1, d 9): E = 10 + 9 + 6 = 25 J;
 *   X beside C1, C2, C1, C2, C1, C2 (six nodes, the set {C1, C2}; "with:two": T 1, d 7):
 *   E = 10 + 7 + 6 = 23 J (until co-runner names were sized at run time, a node overlapping more
 *   than 4 nodes was never matched, whatever their signatures);
 *   X beside C1..C5 only: no point has that set, so the null context: E = 10 + 2 + 5 = 17 J. */
static void corun_many_corunners(void **state)
{
    (void)state;
    enum { NC = 6 };
    erg_context_signature *sig[1 + NC];
    const char *cn[NC] = {"C1", "C2", "C3", "C4", "C5", "C6"};
    for (size_t i = 0; i <= NC; i++) {
        sig[i] = malloc(sizeof *sig[i]);
        element(sig[i], i ? cn[i - 1] : "X", 1, i ? 1 : 2, 0.1);
    }
    erg_context_point p;
    erg_context_point_init(&p);
    snprintf(p.name, sizeof p.name, "with:all");
    p.mechanism = ERG_MECHANISM_CONTENTION;
    const char *rev[NC] = {"C6", "C5", "C4", "C3", "C2", "C1"};
    p.corunners = rev;
    p.n_corunners = NC;
    p.static_power_w = 10;
    p.time_s = 1;
    p.dynamic_energy_j = 9;
    erg_diag d;
    assert_int_equal(erg_context_signature_add(sig[0], &p, &d), ERG_OK);
    snprintf(p.name, sizeof p.name, "with:two");
    const char *two[] = {"C2", "C1"};
    p.corunners = two;
    p.n_corunners = 2;
    p.dynamic_energy_j = 7;
    assert_int_equal(erg_context_signature_add(sig[0], &p, &d), ERG_OK);
    const erg_context_signature *all[1 + NC];
    for (size_t i = 0; i <= NC; i++)
        all[i] = sig[i];
    erg_context_report r;
    const char *o_all[] = {"X", "C1", "C2", "C3", "C4", "C5", "C6"};
    erg_assert_near(compose_e(all, 1 + NC, o_all, 7, 0, &r), 25.0, 1e-9);
    assert_string_equal(r.nodes[0].point, "with:all");
    assert_int_equal(r.nodes[0].n_corunners, 6);
    assert_int_equal(r.nodes[0].m_isolation, 0);
    assert_string_equal(r.nodes[0].corunners[ERG_CONTEXT_NODE_CORUNNERS - 1], "C4");
    assert_int_equal(r.n_characterized, 1);
    erg_context_report_free(&r);
    const char *o_two[] = {"X", "C1", "C2", "C1", "C2", "C1", "C2"};
    erg_assert_near(compose_e(all, 1 + NC, o_two, 7, 0, &r), 23.0, 1e-9);
    assert_string_equal(r.nodes[0].point, "with:two");
    assert_int_equal(r.nodes[0].n_corunners, 6);
    erg_context_report_free(&r);
    const char *o_five[] = {"X", "C1", "C2", "C3", "C4", "C5"};
    erg_assert_near(compose_e(all, 1 + NC, o_five, 6, 0, &r), 17.0, 1e-9);
    assert_string_equal(r.nodes[0].point, "");
    assert_int_equal(r.nodes[0].m_isolation, 1);
    erg_context_report_free(&r);
    for (size_t i = 0; i <= NC; i++)
        cs_free(sig[i]);
}

/* Appendix F.1: σ²(A ⊗ B) = σ²_A + σ²_B + 2·Cov = 0.01 + 0.25 + 2·0.5·0.1·0.5 = 0.31 J², checked
 * against Monte Carlo draws of correlated (E_A, E_B). F.2: co-running with zero time variance,
 * σ² = σ²_dA + σ²_dB + 2·Cov(d_A, d_B) = 0.31 J² as well. */
static void correlated_noise(void **state)
{
    (void)state;
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    element(a, "A", 1, 2, 0.1);
    element(b, "B", 1, 5, 0.5);
    const erg_context_signature *all[] = {a, b};
    const char *order[] = {"A", "B"};
    const char *group[] = {"A", "B"};
    erg_correlation corr = {group, 2, 0.5, NAN};
    erg_diag d;
    for (int chain = 1; chain >= 0; chain--) {
        erg_schedule *s = dag(all, 2, order, 2, chain);
        erg_context_report r;
        assert_int_equal(erg_schedule_compose_context(s, all, 2, &corr, 1, NULL, &r, &d), ERG_OK);
        erg_assert_near(r.report.energy_sd_j * r.report.energy_sd_j, 0.31, 1e-12);
        erg_assert_near(r.covariance_j2, 0.05, 1e-12);
        double c = 1.959963984540054;
        erg_assert_near(r.report.interval_j[1] - r.report.energy_j, c * sqrt(0.31), 1e-12);
        /* Monte Carlo: E_A = 12 + 0.1·z1, E_B = 15 + 0.5·(ρ z1 + sqrt(1 − ρ²) z2) */
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, 7);
        double sum = 0, sum2 = 0;
        const int n = 200000;
        for (int i = 0; i < n; i++) {
            double z1 = gsl_ran_gaussian(rng, 1), z2 = gsl_ran_gaussian(rng, 1);
            double e = (chain ? 12 : 2) + 0.1 * z1 + (chain ? 15 : 5) +
                       0.5 * (0.5 * z1 + sqrt(0.75) * z2) + (chain ? 0 : 10);
            sum += e;
            sum2 += e * e;
        }
        double mean = sum / n, var = sum2 / n - mean * mean;
        gsl_rng_free(rng);
        erg_assert_rel(var, 0.31, 0.02);
        erg_assert_near(mean, r.report.energy_j, 0.01);
        erg_context_report_free(&r);
        /* a stated covariance for the pair gives the same */
        erg_correlation cv = {group, 2, NAN, 0.025};
        assert_int_equal(erg_schedule_compose_context(s, all, 2, &cv, 1, NULL, &r, &d), ERG_OK);
        erg_assert_near(r.report.energy_sd_j * r.report.energy_sd_j, 0.31, 1e-12);
        erg_context_report_free(&r);
        /* bad groups */
        erg_correlation bad = {group, 2, 1.5, NAN};
        assert_int_equal(erg_schedule_compose_context(s, all, 2, &bad, 1, NULL, &r, &d),
                         ERG_EINVAL);
        erg_correlation one = {group, 1, 0.5, NAN};
        assert_int_equal(erg_schedule_compose_context(s, all, 2, &one, 1, NULL, &r, &d),
                         ERG_EINVAL);
        erg_schedule_free(s);
    }
    cs_free(a);
    cs_free(b);
}

/* Ranking: A → B twice (B has an entry point elsewhere: |ΔE| = 17.5 − 15 = 2.5 J per
 * occurrence), C → D once (D has no points: its E = 10·1 + 3 = 13 J). Deviation 4 J:
 * A → B explains min(4, 2·2.5) = 4 J; C → D min(4, 13) = 4 J; tie broken by the estimate from
 * points. */
static void refine_candidates_ranked(void **state)
{
    (void)state;
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b), *c = malloc(sizeof *c),
                          *dd = malloc(sizeof *dd);
    element(a, "A", 1, 2, 0.1);
    element(b, "B", 1, 5, 0.5);
    point(b, "cold", "", NULL, 1.2, 5.5, 0.5);
    snprintf(b->points[0].cache, sizeof b->points[0].cache, "cold");
    element(c, "C", 1, 1, 0.1);
    element(dd, "D", 1, 3, 0.1);
    const erg_context_signature *all[] = {a, b, c, dd};
    const char *order[] = {"A", "B", "A", "B", "C", "D"};
    erg_context_report r;
    compose_e(all, 4, order, 6, 1, &r);
    erg_refine_candidate cand[8];
    size_t n;
    erg_diag d;
    assert_int_equal(erg_refine_candidates(&r, all, 4, 4.0, cand, 8, &n, &d), ERG_OK);
    /* pairs realized: A→B (×2), B→A, B→C, C→D */
    assert_int_equal(n, 4);
    assert_string_equal(cand[0].a, "A");
    assert_string_equal(cand[0].b, "B");
    assert_int_equal(cand[0].occurrences, 2);
    erg_assert_near(cand[0].per_occurrence_j, 2.5, 1e-12);
    erg_assert_near(cand[0].explain_j, 4.0, 1e-12);
    assert_true(cand[0].estimated_from_points);
    /* −10 J: B → A (A's E 12 J), B → C (11 J), C → D (13 J) all explain the whole 10 J, A → B
     * only 5 J; ties go by name */
    assert_int_equal(erg_refine_candidates(&r, all, 4, -10.0, cand, 8, &n, &d), ERG_OK);
    assert_int_equal(n, 4);
    assert_string_equal(cand[0].b, "A");
    erg_assert_near(cand[0].explain_j, 10.0, 1e-12);
    erg_assert_near(cand[0].per_occurrence_j, 12.0, 1e-12);
    assert_string_equal(cand[1].b, "C");
    assert_string_equal(cand[2].b, "D");
    assert_string_equal(cand[3].b, "B");
    erg_assert_near(cand[3].explain_j, 5.0, 1e-12);
    assert_int_equal(erg_refine_candidates(&r, all, 4, -10.0, cand, 2, &n, &d), ERG_OK);
    assert_int_equal(n, 2);
    erg_context_report_free(&r);
    cs_free(a);
    cs_free(b);
    cs_free(c);
    cs_free(dd);
}

/* Eq. 24: parts E = 27 J, σ = sqrt(0.26), bias 0.98 J. Coarse E = 30 J, σ 0.5:
 * |30 − 27| = 3 > 0.98 + 1.96·sqrt(0.25 + 0.26) = 0.98 + 1.3997 = 2.3797: inconsistent;
 * coarse E = 28 J: 1 ≤ 2.3797: consistent. */
static void granularity(void **state)
{
    (void)state;
    erg_report parts;
    memset(&parts, 0, sizeof parts);
    parts.energy_j = 27;
    parts.energy_sd_j = sqrt(0.26);
    parts.bias_bound_j = 0.98;
    parts.confidence = 0.95;
    erg_signature coarse;
    erg_signature_init(&coarse);
    coarse.static_power_w = 10;
    coarse.time_s = 2;
    coarse.dynamic_energy_j = 10;
    coarse.energy_var_j2 = 0.25;
    erg_granularity g;
    erg_diag d;
    assert_int_equal(erg_granularity_check(&coarse, &parts, &g, &d), ERG_OK);
    erg_assert_near(g.difference_j, 3.0, 1e-12);
    erg_assert_near(g.bound_j, 0.98 + 1.959963984540054 * sqrt(0.51), 1e-12);
    assert_false(g.consistent);
    coarse.dynamic_energy_j = 8;
    assert_int_equal(erg_granularity_check(&coarse, &parts, &g, &d), ERG_OK);
    assert_true(g.consistent);
    coarse.time_s = -1;
    assert_int_equal(erg_granularity_check(&coarse, &parts, &g, &d), ERG_EINVAL);
}

/* The expression form is refused with a reason. */
static void expression_refused(void **state)
{
    (void)state;
    const char *f = put("e.json", "{\"erg\": \"schedule/1\", \"devices\": {\"cpu\": "
                                  "{\"static_power_w\": 10}}, \"signatures\": {\"a\": {\"device\": "
                                  "\"cpu\", \"time_s\": 1, \"dynamic_energy_j\": 1}}, \"expr\": "
                                  "{\"seq\": [\"a\", \"a\"]}}");
    erg_schedule *s;
    erg_diag d;
    assert_int_equal(erg_schedule_read_file(f, &s, &d), ERG_OK);
    erg_context_report r;
    assert_int_equal(erg_schedule_compose_context(s, NULL, 0, NULL, 0, NULL, &r, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "needs the DAG form"));
    erg_schedule_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_round_trip),
        cmocka_unit_test(many_points_round_trip),
        cmocka_unit_test(bad_points),
        cmocka_unit_test(insensitivity_over_sets),
        cmocka_unit_test(sequential_does_not_commute),
        cmocka_unit_test(monotonicity_counterexample),
        cmocka_unit_test(corun_at_runtime_context),
        cmocka_unit_test(corun_many_corunners),
        cmocka_unit_test(correlated_noise),
        cmocka_unit_test(refine_candidates_ranked),
        cmocka_unit_test(granularity),
        cmocka_unit_test(expression_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
