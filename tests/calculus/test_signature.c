/* SPDX-License-Identifier: MIT */
#include "support/erg_test.h"

#include "erg/signature.h"
#include "erg/stats.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static erg_signature sig(const char *dev, double s, double t, double d, double vt, double ve)
{
    erg_signature x;
    erg_signature_init(&x);
    snprintf(x.device, sizeof x.device, "%s", dev);
    x.static_power_w = s;
    x.time_s = t;
    x.dynamic_energy_j = d;
    x.time_var_s2 = vt;
    x.energy_var_j2 = ve;
    return x;
}

/* Paper Section 2.4: two A100s in lockstep, s = 120 W; prefix 1.55 ms, compute and AllReduce
 * 2.77 ms each, overlapping. Correct static energy 518.4 mJ; serialised 850.8 mJ. */
static void attention_layer_static_energy(void **state)
{
    (void)state;
    erg_signature prefix = sig("pair", 120, 1.55e-3, 1.0, 0, 0);
    erg_signature compute = sig("pair", 120, 2.77e-3, 1.2, 0, 0);
    erg_signature ar = sig("pair", 120, 2.77e-3, 0.6016, 0, 0);
    erg_signature region, layer, serial;
    erg_signature both[2] = {compute, ar};
    assert_int_equal(erg_signature_par(both, 2, &region, NULL), ERG_OK);
    erg_signature chain[2] = {prefix, region};
    assert_int_equal(erg_signature_seq(chain, 2, &layer, NULL), ERG_OK);
    erg_assert_near(erg_signature_static_energy_j(&layer), 0.5184, 1e-12);
    erg_assert_near(erg_signature_energy_j(&layer), 0.5184 + 2.8016, 1e-12);
    erg_signature all3[3] = {prefix, compute, ar};
    assert_int_equal(erg_signature_seq(all3, 3, &serial, NULL), ERG_OK);
    erg_assert_near(erg_signature_static_energy_j(&serial), 0.8508, 1e-12);
    erg_assert_near(erg_signature_static_energy_j(&serial) - erg_signature_static_energy_j(&layer),
                    0.3324, 1e-12);
}

static void seq_adds_energy_time_and_variances(void **state)
{
    (void)state;
    erg_signature a = sig("g", 50, 2.0, 10, 0.01, 30), b = sig("g", 80, 1.0, 5, 0.04, 300);
    erg_signature ops[2] = {a, b}, r;
    assert_int_equal(erg_signature_seq(ops, 2, &r, NULL), ERG_OK);
    erg_assert_near(r.time_s, 3.0, 1e-15);
    erg_assert_near(erg_signature_energy_j(&r), 50 * 2 + 10 + 80 * 1 + 5, 1e-12);
    erg_assert_near(r.static_power_w, (100.0 + 80.0) / 3.0, 1e-12); /* closure s' = (E - d)/T */
    erg_assert_near(r.energy_var_j2, 330, 1e-12);
    erg_assert_near(r.time_var_s2, 0.05, 1e-15);
    assert_string_equal(r.device, "g");
}

/* ⊕: E = s·max(T) + d1 + d2; var_E = var_d1 + var_d2 + s²·Var(max). */
static void par_uses_clark_variance(void **state)
{
    (void)state;
    erg_signature a = sig("g", 60, 1.0, 10, 0.01, 60 * 60 * 0.01 + 4),
                  b = sig("g", 60, 1.1, 7, 0.04, 60 * 60 * 0.04 + 1);
    erg_signature ops[2] = {a, b}, r;
    assert_int_equal(erg_signature_par(ops, 2, &r, NULL), ERG_OK);
    double vmax;
    erg_max2_normal(1.0, 0.01, 1.1, 0.04, NULL, &vmax);
    erg_assert_near(r.time_s, 1.1, 0);
    erg_assert_near(erg_signature_energy_j(&r), 60 * 1.1 + 17, 1e-12);
    erg_assert_near(r.energy_var_j2, 4 + 1 + 3600 * vmax, 1e-9);
    erg_assert_near(erg_signature_dynamic_var_j2(&r), 5, 1e-9);
}

static void par_rejects_mixed_devices_and_static_power(void **state)
{
    (void)state;
    erg_diag d;
    erg_signature ops[2] = {sig("g0", 60, 1, 1, 0, 0), sig("g1", 60, 1, 1, 0, 0)}, r;
    assert_int_equal(erg_signature_par(ops, 2, &r, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "different devices"));
    ops[1] = sig("g0", 70, 1, 1, 0, 0);
    assert_int_equal(erg_signature_par(ops, 2, &r, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "static power"));
    assert_int_equal(erg_signature_par(ops, 0, &r, &d), ERG_EINVAL);
}

/* ⊕multi: E = (s1 + s2)·max(T) + d1 + d2; the shorter device idles at its static power. */
static void multi_pads_shorter_device_with_idle(void **state)
{
    (void)state;
    erg_signature a = sig("g0", 60, 2.0, 100, 0, 0), b = sig("g1", 40, 1.5, 50, 0, 0);
    erg_signature ops[2] = {a, b}, r, idle, padded, check[2];
    assert_int_equal(erg_signature_multi(ops, 2, &r, NULL), ERG_OK);
    erg_assert_near(erg_signature_energy_j(&r), 100 * 2.0 + 150, 1e-12);
    /* The same by hand: b ⊗ idle(0.5 s at 40 W), then both sides' energies summed. */
    assert_int_equal(erg_signature_idle("g1", 40, 0.5, &idle), ERG_OK);
    check[0] = b;
    check[1] = idle;
    assert_int_equal(erg_signature_seq(check, 2, &padded, NULL), ERG_OK);
    erg_assert_near(erg_signature_energy_j(&r),
                    erg_signature_energy_j(&a) + erg_signature_energy_j(&padded), 1e-12);
    assert_string_equal(r.device, "");
    ops[1] = sig("g0", 60, 1, 1, 0, 0);
    assert_int_equal(erg_signature_multi(ops, 2, &r, NULL), ERG_EINVAL);
}

/* ⊕multi variance by hand: var_E = var_d1 + var_d2 + (s1 + s2)^2 Var(max(T1, T2)), with Clark's
 * Var(max) for T1 ~ N(2, 0.04), T2 ~ N(1.9, 0.09). */
static void multi_variance_by_hand(void **state)
{
    (void)state;
    erg_signature a = sig("g0", 60, 2.0, 100, 0.04, 60.0 * 60.0 * 0.04 + 9.0);
    erg_signature b = sig("g1", 40, 1.9, 50, 0.09, 40.0 * 40.0 * 0.09 + 16.0);
    erg_signature ops[2] = {a, b}, r;
    assert_int_equal(erg_signature_multi(ops, 2, &r, NULL), ERG_OK);
    /* Clark: theta = sqrt(0.13), alpha = 0.1/theta. */
    double th = sqrt(0.13), al = 0.1 / th;
    double p = erg_normal_cdf(al), q = erg_normal_cdf(-al), f = erg_normal_pdf(al);
    double m = 2.0 * p + 1.9 * q + th * f;
    double e2 = (4.0 + 0.04) * p + (1.9 * 1.9 + 0.09) * q + 3.9 * th * f;
    double vmax = e2 - m * m;
    erg_assert_near(r.time_var_s2, vmax, 1e-12);
    erg_assert_near(r.energy_var_j2, 9.0 + 16.0 + 100.0 * 100.0 * vmax, 1e-8);
    erg_assert_near(r.static_power_w, 100.0, 0);
    erg_assert_near(r.time_s, 2.0, 0);
}

static void check_enforces_axiom_m1(void **state)
{
    (void)state;
    erg_diag d;
    erg_signature s = sig("g", 100, 1, 1, 0.01, 99.0);
    assert_int_equal(erg_signature_check(&s, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "Axiom M1"));
    s.energy_var_j2 = 100.0;
    assert_int_equal(erg_signature_check(&s, &d), ERG_OK);
    s.time_s = -1;
    assert_int_equal(erg_signature_check(&s, &d), ERG_EINVAL);
    s.time_s = NAN;
    assert_int_equal(erg_signature_check(&s, &d), ERG_EINVAL);
}

static void grades_compose_to_the_weakest(void **state)
{
    (void)state;
    erg_signature a = sig("g", 1, 1, 1, 0, 0), b = sig("g", 1, 1, 1, 0, 0), r;
    b.grade = ERG_GRADE_MODEL_BASED;
    erg_signature ops[2] = {a, b};
    assert_int_equal(erg_signature_seq(ops, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.grade, ERG_GRADE_MODEL_BASED);
    erg_grade g;
    assert_int_equal(erg_grade_parse("estimator", &g), ERG_OK);
    assert_int_equal(g, ERG_GRADE_ESTIMATOR);
    assert_int_equal(erg_grade_parse("bogus", &g), ERG_EINVAL);
    assert_string_equal(erg_grade_name(ERG_GRADE_HW_SHUNT), "hw_shunt");
}

static void signature_file_round_trip_and_errors(void **state)
{
    (void)state;
    char dir[] = "/tmp/erg-sig-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/s.json", dir);
    erg_signature s = sig("gpu0", 60, 0.00277, 1.2, 1e-8, 60 * 60 * 1e-8 + 0.001), r;
    snprintf(s.name, sizeof s.name, "attn");
    snprintf(s.theta, sizeof s.theta, "{\"seq\":4096}");
    s.runs = 10;
    s.grade = ERG_GRADE_MODEL_BASED;
    assert_int_equal(erg_signature_write_file(path, &s, NULL), ERG_OK);
    assert_int_equal(erg_signature_read_file(path, &r, NULL), ERG_OK);
    erg_assert_near(r.time_s, s.time_s, 0);
    erg_assert_near(r.energy_var_j2, s.energy_var_j2, 0);
    assert_string_equal(r.name, "attn");
    assert_string_equal(r.theta, "{\"seq\":4096}");
    assert_int_equal(r.runs, 10);
    assert_int_equal(r.grade, ERG_GRADE_MODEL_BASED);

    erg_diag d;
    FILE *f = fopen(path, "w");
    fputs("{\"erg\": \"signature/1\",\n \"time_s\": 1,\n \"dynamic_energy_j\": -1, "
          "\"static_power_w\": 1}\n",
          f);
    fclose(f);
    assert_int_equal(erg_signature_read_file(path, &r, &d), ERG_EPARSE);
    assert_non_null(strstr(d.detail, "dynamic_energy_j"));
    f = fopen(path, "w");
    fputs(
        "{\"erg\": \"signature/3\", \"time_s\": 1, \"dynamic_energy_j\": 1, \"static_power_w\": 1}",
        f);
    fclose(f);
    assert_int_equal(erg_signature_read_file(path, &r, &d), ERG_EVERSION);
    /* Without "grade" a signature is an estimate: unstated provenance is never promoted. */
    f = fopen(path, "w");
    fputs(
        "{\"erg\": \"signature/1\", \"time_s\": 1, \"dynamic_energy_j\": 1, \"static_power_w\": 1}",
        f);
    fclose(f);
    assert_int_equal(erg_signature_read_file(path, &r, &d), ERG_OK);
    assert_int_equal(r.grade, ERG_GRADE_ESTIMATOR);
    f = fopen(path, "w");
    fputs("{\"erg\": \"signature/1\",\n \"time_s\": 1,,\n}", f);
    fclose(f);
    assert_int_equal(erg_signature_read_file(path, &r, &d), ERG_EPARSE);
    char want[300];
    snprintf(want, sizeof want, "%s:2:", path); /* the second comma */
    assert_memory_equal(d.where, want, strlen(want));
    remove(path);
    rmdir(dir);
}

/* Measurement flags (erg/flags.h): names both ways; a composite carries the union of its parts'
 * flags under ⊗, ⊕ and ⊕multi, nested too; an idle element has none. */
static void flags_name_parse_and_union(void **state)
{
    (void)state;
    unsigned bit = 0;
    assert_int_equal(erg_flag_parse("stale", &bit), ERG_OK);
    assert_int_equal(bit, ERG_FLAG_STALE);
    assert_int_equal(erg_flag_parse("incomplete", &bit), ERG_OK);
    assert_int_equal(bit, ERG_FLAG_INCOMPLETE);
    assert_int_equal(erg_flag_parse("Stale", &bit), ERG_EINVAL);
    assert_int_equal(erg_flag_parse("saturated", &bit), ERG_EINVAL);
    assert_int_equal(erg_flag_parse(NULL, &bit), ERG_EINVAL);
    for (unsigned i = 0; i < ERG_FLAG_COUNT; i++) { /* every name parses back to its bit */
        assert_int_equal(erg_flag_parse(erg_flag_name(i), &bit), ERG_OK);
        assert_int_equal(bit, 1u << i);
    }
    assert_null(erg_flag_name(ERG_FLAG_COUNT));
    char buf[64];
    assert_int_equal(
        erg_flags_text(ERG_FLAG_STALE | ERG_FLAG_WRAP_CORRECTED, ", ", buf, sizeof buf),
        strlen("wrap_corrected, stale"));
    assert_string_equal(buf, "wrap_corrected, stale");
    assert_int_equal(erg_flags_text(0, ",", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    char small[8]; /* truncated like snprintf; the full length is returned */
    assert_int_equal(erg_flags_text(ERG_FLAG_GLITCH | ERG_FLAG_STALE, ",", small, sizeof small),
                     strlen("glitch,stale"));
    assert_string_equal(small, "glitch,");

    erg_signature a = sig("g", 50, 2.0, 10, 0, 0), b = sig("g", 50, 1.0, 5, 0, 0),
                  c = sig("h", 30, 1.5, 2, 0, 0), r, q, idle;
    a.flags = ERG_FLAG_WRAP_CORRECTED;
    b.flags = ERG_FLAG_STALE;
    c.flags = ERG_FLAG_INCOMPLETE | ERG_FLAG_STALE;
    erg_signature ab[2] = {a, b};
    assert_int_equal(erg_signature_seq(ab, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_WRAP_CORRECTED | ERG_FLAG_STALE);
    assert_int_equal(erg_signature_par(ab, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_WRAP_CORRECTED | ERG_FLAG_STALE);
    erg_signature ac[2] = {a, c};
    assert_int_equal(erg_signature_multi(ac, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_WRAP_CORRECTED | ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE);
    /* nested: (a ⊗ idle) ⊕multi c; the idle element adds nothing */
    assert_int_equal(erg_signature_idle("g", 50, 1.0, &idle), ERG_OK);
    assert_int_equal(idle.flags, 0);
    erg_signature a_idle[2] = {a, idle};
    assert_int_equal(erg_signature_seq(a_idle, 2, &q, NULL), ERG_OK);
    assert_int_equal(q.flags, ERG_FLAG_WRAP_CORRECTED);
    erg_signature qc[2] = {q, c};
    assert_int_equal(erg_signature_multi(qc, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_WRAP_CORRECTED | ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE);
    erg_signature clean[2] = {idle, idle};
    assert_int_equal(erg_signature_seq(clean, 2, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, 0);
}

/* signature/1 "flags": written by name, read back to the same bits; absent or [] is none; an
 * unknown name, a non-string or a non-array is an error naming the file, the member and the name.
 */
static void flags_in_signature_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/erg-sigflags-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/s.json", dir);
    erg_signature s = sig("gpu0", 60, 0.5, 1.2, 0, 0), r;
    snprintf(s.name, sizeof s.name, "k");
    s.flags = ERG_FLAG_INCOMPLETE | ERG_FLAG_BACKWARDS;
    assert_int_equal(erg_signature_write_file(path, &s, NULL), ERG_OK);
    char text[4096];
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "\"flags\": [\n    \"backwards\",\n    \"incomplete\"\n  ]"));
    assert_int_equal(erg_signature_read_file(path, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_INCOMPLETE | ERG_FLAG_BACKWARDS);
    /* no flags: no key written, and none read */
    s.flags = 0;
    assert_int_equal(erg_signature_write_file(path, &s, NULL), ERG_OK);
    f = fopen(path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_null(strstr(text, "flags"));
    assert_int_equal(erg_signature_read_file(path, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, 0);
    static const struct {
        const char *flags, *want;
    } bad[] = {
        {"[\"stale\", \"saturated\"]",
         "signature.flags[1]: unknown flag \"saturated\" (known: wrap_corrected, "},
        {"[\"stale\", 3]", "signature.flags[1]: expected a flag name"},
        {"\"stale\"", "signature.flags: expected an array of flag names"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fprintf(f,
                "{\"erg\": \"signature/1\", \"time_s\": 1, \"dynamic_energy_j\": 1, "
                "\"static_power_w\": 1, \"flags\": %s}",
                bad[i].flags);
        fclose(f);
        erg_diag d;
        erg_diag_clear(&d);
        assert_int_equal(erg_signature_read_file(path, &r, &d), ERG_EPARSE);
        char where[sizeof d.where + 8];
        snprintf(where, sizeof where, "%s:1:", path); /* the line and column of the bad value */
        assert_memory_equal(d.where, where, strlen(where));
        assert_memory_equal(d.detail, bad[i].want, strlen(bad[i].want));
    }
    f = fopen(path, "w");
    fputs(
        "{\"erg\": \"signature/1\", \"time_s\": 1, \"dynamic_energy_j\": 1, \"static_power_w\": 1, "
        "\"flags\": []}",
        f);
    fclose(f);
    assert_int_equal(erg_signature_read_file(path, &r, NULL), ERG_OK);
    assert_int_equal(r.flags, 0);
    remove(path);
    rmdir(dir);
}

/* ⊕multi padded at the state each operand ends in (erg_signature_multi_end): a sequence of a
 * (10 W, 2 s, 5 J) then b (100 W, 1 s) beside c (0 W, 10 s) ends at 100 W: S = 20 + 100 + 100·7 =
 * 820 J, E = 825 J, s' = 82 W; the makespan variance is weighted by (Σ e)². With every end power
 * equal to the operand's s it is erg_signature_multi bit for bit. */
static void multi_end_pads_at_the_end_state(void **state)
{
    (void)state;
    erg_signature a = sig("g", 10, 2, 5, 0, 0), b = sig("g2", 100, 1, 0, 0, 0),
                  c = sig("h", 0, 10, 0, 0.01, 0), ab[2] = {a, b}, q, r, r2;
    assert_int_equal(erg_signature_seq(ab, 2, &q, NULL), ERG_OK);
    erg_assert_near(q.static_power_w, 40, 1e-12); /* the average, not a device's power */
    erg_signature ops[2] = {q, c};
    const double e[2] = {100, 0};
    assert_int_equal(erg_signature_multi_end(ops, e, 2, &r, NULL), ERG_OK);
    erg_assert_near(r.time_s, 10, 0);
    erg_assert_near(erg_signature_static_energy_j(&r), 820, 1e-9);
    erg_assert_near(erg_signature_energy_j(&r), 825, 1e-9);
    erg_assert_near(r.static_power_w, 82, 1e-12);
    /* T' = c's (it dominates by 70 sd): Var(max) = 0.01; weight (100 + 0)² */
    erg_assert_near(r.time_var_s2, 0.01, 1e-12);
    erg_assert_near(r.energy_var_j2, 100.0 * 100.0 * 0.01, 1e-9);
    assert_int_equal(erg_signature_multi(ops, 2, &r2, NULL), ERG_OK);
    erg_assert_near(erg_signature_energy_j(&r2), 40 * 10 + 5, 1e-9); /* averaged: 405 J */
    const double own[2] = {q.static_power_w, c.static_power_w};
    assert_int_equal(erg_signature_multi_end(ops, own, 2, &r, NULL), ERG_OK);
    assert_true(r.static_power_w == r2.static_power_w && r.time_s == r2.time_s &&
                r.dynamic_energy_j == r2.dynamic_energy_j && r.time_var_s2 == r2.time_var_s2 &&
                r.energy_var_j2 == r2.energy_var_j2);
    const double bad[2] = {-1, 0};
    erg_diag d;
    assert_int_equal(erg_signature_multi_end(ops, bad, 2, &r, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "multi operand 1"));
    assert_int_equal(erg_signature_multi_end(ops, NULL, 2, &r, &d), ERG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_layer_static_energy),
        cmocka_unit_test(seq_adds_energy_time_and_variances),
        cmocka_unit_test(par_uses_clark_variance),
        cmocka_unit_test(par_rejects_mixed_devices_and_static_power),
        cmocka_unit_test(multi_pads_shorter_device_with_idle),
        cmocka_unit_test(multi_variance_by_hand),
        cmocka_unit_test(check_enforces_axiom_m1),
        cmocka_unit_test(grades_compose_to_the_weakest),
        cmocka_unit_test(signature_file_round_trip_and_errors),
        cmocka_unit_test(flags_name_parse_and_union),
        cmocka_unit_test(flags_in_signature_files),
        cmocka_unit_test(multi_end_pads_at_the_end_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
