/* SPDX-License-Identifier: MIT */
/*
 * Work measured directly as an operand (src/measure/measured_io.c): erg_measured_read_signature,
 * erg_measured_read (the measured side of Eq. 23 for `erg refine --measured`), erg_compose_file
 * (each side of `erg compare`) and the one-node schedule it builds (erg_schedule_of_signature).
 * Figures are hand-computed from hand-made files; bad files give the status and place named.
 */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include <string.h>

#include "erg/calculus.h"
#include "erg/measure.h"

static char tdir[128];

/* runs 3: T 0.5 s (sd 0.01), E 7 J (sd 0.2), s 2 W, floors 0.01 J and 0.001 s. */
static const char meas_a[] =
    "{\"erg\": \"measurement/1\", \"command\": [\"/bin/work\", \"x\"], \"runs\": 3,\n"
    " \"time_s\": {\"mean\": 0.5, \"sd\": 0.01},\n"
    " \"total\": {\"energy_j\": {\"mean\": 7.0, \"sd\": 0.2}, \"static_power_w\": 2.0,\n"
    "  \"energy_floor_j\": 0.01, \"time_floor_s\": 0.001, \"grade\": \"hw_shunt\"}}\n";
/* one run, no sd: the floors 0.05 J and 0.002 s are its sd. */
static const char meas_b[] =
    "{\"erg\": \"measurement/1\", \"command\": [\"work2\"], \"runs\": 1,\n"
    " \"time_s\": {\"mean\": 0.6, \"sd\": null},\n"
    " \"total\": {\"energy_j\": {\"mean\": 9.0, \"sd\": null}, \"static_power_w\": 2.0,\n"
    "  \"energy_floor_j\": 0.05, \"time_floor_s\": 0.002, \"grade\": \"model_based\"}}\n";
/* s 1 W, T 0.25 s, d 3 J: E 3.25 J; σ²_E 0.0016 J² over 4 runs. */
static const char sig_c[] =
    "{\"erg\": \"signature/1\", \"name\": \"c\", \"device\": \"cpu\", \"static_power_w\": 1.0,\n"
    " \"time_s\": 0.25, \"dynamic_energy_j\": 3.0, \"time_var_s2\": 0.0001,\n"
    " \"energy_var_j2\": 0.0016, \"grade\": \"hw_shunt\", \"runs\": 4}\n";

static int setup(void **state)
{
    (void)state;
    if (erg_tmp_new(tdir, sizeof tdir, "measured-io"))
        return -1;
    erg_tmp_put(tdir, "a.json", meas_a);
    erg_tmp_put(tdir, "b.json", meas_b);
    erg_tmp_put(tdir, "c.json", sig_c);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tdir);
}

static const char *at(const char *name)
{
    return erg_tmp_path(tdir, name);
}

/* measurement/1: s = the baseline, d = E − s·T = 7 − 1 = 6 J, σ²_T = max(0.01², 0.001²) =
 * 1e-4 s², σ²_E = max(0.2², 0.01², s²·σ²_T = 4e-4) = 0.04 J²; the measured mean E = 7 J with
 * the sd of the mean sqrt(0.04 / 3) = 0.11547 J. One run: σ²_E = max(0, 0.05², 4·0.002²) =
 * 0.0025: sd 0.05 J. signature/1: E = 1·0.25 + 3 = 3.25 J, sd sqrt(0.0016 / 4) = 0.02 J. */
static void measured_files_read_as_the_mean_and_its_sd(void **state)
{
    (void)state;
    erg_diag d;
    erg_signature s;
    erg_assert_ok(erg_measured_read_signature(at("a.json"), &s, &d));
    assert_string_equal(s.name, "work");
    erg_assert_near(s.static_power_w, 2.0, 1e-12);
    erg_assert_near(s.dynamic_energy_j, 6.0, 1e-12);
    erg_assert_near(s.time_var_s2, 1e-4, 1e-15);
    erg_assert_near(s.energy_var_j2, 0.04, 1e-15);
    erg_assert_ok(erg_measured_read_signature(at("c.json"), &s, &d));
    assert_string_equal(s.name, "c");
    erg_measured m;
    erg_assert_ok(erg_measured_read(at("a.json"), &m, &d));
    erg_assert_near(m.energy_j, 7.0, 1e-12);
    erg_assert_near(m.energy_sd_j, sqrt(0.04 / 3.0), 1e-12);
    assert_int_equal(m.runs, 3);
    erg_assert_ok(erg_measured_read(at("b.json"), &m, &d));
    erg_assert_near(m.energy_j, 9.0, 1e-12);
    erg_assert_near(m.energy_sd_j, 0.05, 1e-12);
    assert_int_equal(m.runs, 1);
    erg_assert_ok(erg_measured_read(at("c.json"), &m, &d));
    erg_assert_near(m.energy_j, 3.25, 1e-12);
    erg_assert_near(m.energy_sd_j, 0.02, 1e-12);
    assert_int_equal(m.runs, 4);
}

/* Bad files: the status, the file (and line:col for a syntax error) and what is wrong. */
static void bad_measured_files_are_named(void **state)
{
    (void)state;
    erg_diag d;
    erg_measured m;
    struct {
        const char *name, *text;
        int status;
        const char *where, *detail;
    } c[] = {
        {"syntax.json", "{\"erg\": \"measurement/1\",\n \"runs\": 2,\n  \"total\": {,}\n}\n",
         ERG_EPARSE, "syntax.json:3:13", "string or '}' expected"},
        {"other.json", "{\"erg\": \"calibration/1\"}\n", ERG_EPARSE, "other.json",
         "expected a signature/1 (erg characterize --schedule) or a measurement/1"},
        {"sched.json", "{\"erg\": \"schedule/1\", \"expr\": \"x\"}\n", ERG_EPARSE, "sched.json",
         "expected a signature/1"},
        {"v2.json", "{\"erg\": \"measurement/2\", \"runs\": 1}\n", ERG_EVERSION, "v2.json",
         "unknown format version \"measurement/2\""},
        {"neg.json",
         "{\"erg\": \"measurement/1\", \"runs\": 1, \"time_s\": {\"mean\": 0.6},\n"
         " \"total\": {\"energy_j\": {\"mean\": -9.0}, \"grade\": \"hw_shunt\"}}\n",
         ERG_EPARSE, "neg.json", "total.energy_j.mean: must not be negative"},
        {"badsig.json",
         "{\"erg\": \"signature/1\", \"name\": \"x\", \"device\": \"cpu\", \"static_power_w\": "
         "1,\n \"time_s\": -1, \"dynamic_energy_j\": 1}\n",
         0, "badsig.json", "time_s"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *p = erg_tmp_put(tdir, c[i].name, c[i].text);
        char path[512];
        snprintf(path, sizeof path, "%s", p);
        erg_diag_clear(&d);
        int rc = erg_measured_read(path, &m, &d);
        if (rc == ERG_OK || (c[i].status && rc != c[i].status))
            fail_msg("%s: status %d, expected %d", c[i].name, rc, c[i].status);
        if (!strstr(d.where, c[i].where) || !strstr(d.detail, c[i].detail))
            fail_msg("%s: '%s: %s', expected '%s' and '%s'", c[i].name, d.where, d.detail,
                     c[i].where, c[i].detail);
    }
    erg_diag_clear(&d);
    assert_int_equal(erg_measured_read(at("missing.json"), &m, &d), ERG_ENOENT);
    assert_non_null(strstr(d.where, "missing.json"));
    assert_int_equal(erg_measured_read(NULL, &m, &d), ERG_EINVAL);
    assert_int_equal(erg_measured_read(at("a.json"), NULL, &d), ERG_EINVAL);
}

/* A one-node schedule composes to its element: E 3.25 J, σ²_E 0.0016 (σ²_d = 0.0016 − 1²·1e-4
 * = 0.0015, plus s²·σ²_T = 1e-4), T 0.25 s, static 0.25 J, dynamic 3 J. */
static void one_element_schedule_composes_to_its_signature(void **state)
{
    (void)state;
    erg_diag d;
    erg_signature s;
    erg_assert_ok(erg_measured_read_signature(at("c.json"), &s, &d));
    erg_schedule *sch = NULL;
    erg_assert_ok(erg_schedule_of_signature(&s, &sch, &d));
    erg_report r;
    memset(&r, 0, sizeof r);
    erg_assert_ok(erg_schedule_compose(sch, NULL, &r, &d));
    erg_assert_near(r.energy_j, 3.25, 1e-12);
    erg_assert_near(r.energy_sd_j, 0.04, 1e-12);
    erg_assert_near(r.time_s, 0.25, 1e-12);
    erg_assert_near(r.static_energy_j, 0.25, 1e-12);
    erg_assert_near(r.dynamic_energy_j, 3.0, 1e-12);
    erg_report_free(&r);
    erg_schedule_free(sch);
    /* an invalid signature (negative static power) is refused, nothing returned */
    s.static_power_w = -1.0;
    sch = (erg_schedule *)&s;
    assert_int_equal(erg_schedule_of_signature(&s, &sch, &d), ERG_EINVAL);
    assert_null(sch);
    assert_int_equal(erg_schedule_of_signature(NULL, &sch, &d), ERG_EINVAL);
}

/* erg_compose_file: each kind of file; a measurement's E 7 J ± 0.2 J (σ²_E as read above), a
 * schedule of c then c on one device 6.5 J with σ²_E = 2·0.0015 + 1²·(2·1e-4) = 0.0032. */
static void compose_file_takes_schedules_signatures_and_measurements(void **state)
{
    (void)state;
    erg_diag d;
    erg_report r;
    memset(&r, 0, sizeof r);
    erg_compose_options o;
    erg_compose_options_init(&o);
    erg_assert_ok(erg_compose_file(at("a.json"), &o, &r, &d));
    erg_assert_near(r.energy_j, 7.0, 1e-12);
    erg_assert_near(r.energy_sd_j, 0.2, 1e-12);
    erg_report_free(&r);
    erg_assert_ok(erg_compose_file(at("c.json"), NULL, &r, &d));
    erg_assert_near(r.energy_j, 3.25, 1e-12);
    erg_report_free(&r);
    erg_tmp_put(tdir, "cc.json",
                "{\"erg\": \"schedule/1\", \"devices\": {\"cpu\": {\"static_power_w\": 1}},\n"
                " \"signatures\": {\"c\": \"c.json\"},\n"
                " \"nodes\": [{\"id\": \"n0\", \"signature\": \"c\"}, {\"id\": \"n1\", "
                "\"signature\": \"c\"}],\n \"edges\": [[\"n0\", \"n1\"]]}\n");
    erg_assert_ok(erg_compose_file(at("cc.json"), &o, &r, &d));
    erg_assert_near(r.energy_j, 6.5, 1e-12);
    erg_assert_near(r.energy_sd_j, sqrt(0.0032), 1e-12);
    erg_report_free(&r);
    /* bad: a syntax error goes to the schedule reader, which names the file and line */
    erg_tmp_put(tdir, "broken.json", "{\"erg\": \"schedule/1\",\n \"nodes\": [,]}\n");
    erg_diag_clear(&d);
    assert_int_equal(erg_compose_file(at("broken.json"), &o, &r, &d), ERG_EPARSE);
    assert_non_null(strstr(d.where, "broken.json:2:"));
    erg_diag_clear(&d);
    assert_int_equal(erg_compose_file(at("none.json"), &o, &r, &d), ERG_ENOENT);
    assert_non_null(strstr(d.where, "none.json"));
    assert_int_equal(erg_compose_file(NULL, &o, &r, &d), ERG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_files_read_as_the_mean_and_its_sd),
        cmocka_unit_test(bad_measured_files_are_named),
        cmocka_unit_test(one_element_schedule_composes_to_its_signature),
        cmocka_unit_test(compose_file_takes_schedules_signatures_and_measurements),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
