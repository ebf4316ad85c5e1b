/* SPDX-License-Identifier: MIT */
/* Named windows (nesting, overlap), the estimator, summaries, signatures and calibration files. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg/measure.h"

static const char *const root = fake_root;

static void pkg(uint64_t uj)
{
    fake_write_u64(root, "sys/class/powercap/intel-rapl:0/energy_uj", uj);
}

static const erg_channel_reading *chan(const erg_measurement *r, const char *id)
{
    for (size_t i = 0; i < r->n_channels; i++)
        if (strcmp(r->channels[i].id, id) == 0)
            return &r->channels[i];
    fail_msg("no channel %s", id);
    return NULL;
}

static void windows_nest_and_overlap(void **state)
{
    (void)state;
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    pkg(0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    erg_monitor *mon;
    assert_int_equal(erg_monitor_open(m, &mon, NULL), ERG_OK);
    erg_measurement a = {0}, b = {0}, c = {0};
    assert_int_equal(erg_window_begin(mon, "A", NULL), ERG_OK);
    fake_now_ns += 1000000000u;
    pkg(5000000);
    assert_int_equal(erg_window_begin(mon, "B", NULL), ERG_OK);
    erg_diag d;
    assert_int_equal(erg_window_begin(mon, "B", &d), ERG_EINVAL); /* names are distinct */
    assert_non_null(strstr(d.detail, "already open"));
    fake_now_ns += 1000000000u;
    pkg(8000000);
    assert_int_equal(erg_window_begin(mon, "C", NULL), ERG_OK); /* nested in B */
    fake_now_ns += 500000000u;
    pkg(8500000);
    assert_int_equal(erg_window_end(mon, "C", 0, &c, NULL), ERG_OK);
    assert_int_equal(erg_window_end(mon, "A", 0, &a, NULL), ERG_OK); /* overlaps B */
    fake_now_ns += 1000000000u;
    pkg(10500000);
    assert_int_equal(erg_window_end(mon, "B", 0, &b, NULL), ERG_OK);
    assert_int_equal(erg_window_end(mon, "B", 0, &b, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "no open window"));
    erg_assert_near(a.total_energy_j, 8.5, 1e-9);
    erg_assert_near(a.time_s, 2.5, 1e-9);
    erg_assert_near(b.total_energy_j, 5.5, 1e-9);
    erg_assert_near(b.time_s, 2.5, 1e-9);
    erg_assert_near(c.total_energy_j, 0.5, 1e-9);
    assert_int_equal(a.total_grade, ERG_GRADE_HW_SHUNT);
    assert_int_equal(erg_window_cancel(mon, "nope"), ERG_EINVAL);
    erg_measurement_release(&a);
    erg_measurement_release(&b);
    erg_measurement_release(&c);
    erg_monitor_close(mon);
    erg_meter_close(m);
}

static void estimator_is_the_labelled_last_resort(void **state)
{
    (void)state;
    fake_proc_stat(root, 1000, 1000);
    erg_meter *m = fake_open(root, NULL); /* every backend: only the estimator finds anything */
    erg_monitor *mon;
    erg_assert_ok(erg_monitor_open(m, &mon, NULL));
    fake_proc_stat(root, 1100, 1100);
    erg_assert_ok(erg_window_begin(mon, "w", NULL));
    /* 75 % busy over 2 s: P = 10 + (65 − 10)·0.75 = 51.25 W, E = 102.5 J */
    fake_proc_stat(root, 1100 + 300, 1100 + 100);
    fake_now_ns += 2000000000u;
    erg_measurement r = {0};
    erg_assert_ok(erg_window_end(mon, "w", 0, &r, NULL));
    const erg_channel_reading *e = chan(&r, "estimator:cpu");
    assert_int_equal(e->state, ERG_READING_OK);
    assert_int_equal(e->grade, ERG_GRADE_ESTIMATOR);
    erg_assert_near(e->energy_j, 102.5, 1e-6);
    erg_assert_near(r.total_energy_j, 102.5, 1e-6);
    assert_int_equal(r.total_grade, ERG_GRADE_ESTIMATOR);
    erg_measurement_release(&r);
    erg_monitor_close(mon);
    erg_meter_close(m);
}

static void estimator_yields_to_a_live_counter(void **state)
{
    (void)state;
    fake_proc_stat(root, 1000, 1000);
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    pkg(0);
    erg_meter *m = fake_open(root, "rapl-sysfs,estimator");
    erg_monitor *mon;
    erg_assert_ok(erg_monitor_open(m, &mon, NULL));
    erg_assert_ok(erg_window_begin(mon, "w", NULL));
    fake_now_ns += 1000000000u;
    pkg(20000000);
    erg_measurement r = {0};
    erg_assert_ok(erg_window_end(mon, "w", 0, &r, NULL));
    erg_assert_near(r.total_energy_j, 20.0, 1e-9);
    assert_int_equal(r.n_total, 1);
    assert_int_equal(chan(&r, "estimator:cpu")->in_total, 0);
    /* the counter freezes under load: the total falls back to the estimator, labelled */
    erg_assert_ok(erg_window_begin(mon, "w", NULL));
    fake_now_ns += 1000000000u;
    erg_assert_ok(erg_window_end(mon, "w", 0.5, &r, NULL));
    assert_int_equal(chan(&r, "rapl-sysfs:package-0")->state, ERG_READING_NOT_LIVE);
    assert_int_equal(chan(&r, "estimator:cpu")->in_total, 1);
    assert_int_equal(r.total_grade, ERG_GRADE_ESTIMATOR);
    erg_measurement_release(&r);
    erg_monitor_close(mon);
    erg_meter_close(m);
}

static erg_measurement one_run(double t, double e)
{
    erg_measurement r = {0};
    r.channels = calloc(2, sizeof *r.channels); /* owned by the caller's measurement */
    assert_non_null(r.channels);
    r.capacity = 2;
    r.time_s = t;
    r.n_channels = 2;
    strcpy(r.channels[0].id, "rapl-sysfs:package-0");
    r.channels[0].domain = ERG_DOMAIN_PACKAGE;
    r.channels[0].grade = ERG_GRADE_HW_SHUNT;
    r.channels[0].state = ERG_READING_OK;
    r.channels[0].energy_j = e;
    r.channels[0].in_total = 1;
    strcpy(r.channels[1].id, "rapl-sysfs:package-0/core");
    r.channels[1].domain = ERG_DOMAIN_CORE;
    r.channels[1].state = ERG_READING_OK;
    r.channels[1].energy_j = e / 2;
    r.total_energy_j = e;
    r.n_total = 1;
    return r;
}

static void summary_gross_baseline_net_and_signature(void **state)
{
    (void)state;
    erg_measurement runs[3] = {one_run(1.0, 30.0), one_run(2.0, 50.0), one_run(3.0, 70.0)};
    erg_calibration_channel cal_ch[1];
    erg_calibration cal;
    memset(&cal, 0, sizeof cal);
    memset(cal_ch, 0, sizeof cal_ch);
    cal.channels = cal_ch;
    cal.n_channels = 1;
    strcpy(cal.channels[0].id, "rapl-sysfs:package-0");
    cal.channels[0].idle_power_w = 10.0;
    cal.channels[0].cv = 0.01;
    cal.idle_power_w = 10.0;
    erg_summary *s = NULL;
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 3, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);
    erg_assert_near(s->time_s.mean, 2.0, 1e-12);
    erg_assert_near(s->time_s.sd, 1.0, 1e-12);
    erg_assert_near(s->total_energy_j.mean, 50.0, 1e-12);
    erg_assert_near(s->total_energy_j.sd, 20.0, 1e-12);
    erg_assert_near(s->total_baseline_j.mean, 20.0, 1e-12); /* 10 W × {1,2,3} s */
    erg_assert_near(s->total_net_energy_j.mean, 30.0, 1e-12);
    erg_assert_near(s->total_net_energy_j.sd, 10.0, 1e-12); /* net {20,30,40} */
    erg_assert_near(s->channels[0].baseline_j.mean, 20.0, 1e-12);
    erg_assert_near(s->channels[1].baseline_j.mean, 0.0, 0); /* not calibrated */
    assert_int_equal(s->n_total, 1);
    erg_assert_near(s->static_power_w, 10.0, 0);
    erg_signature sig;
    int raised = -1;
    assert_int_equal(erg_summary_signature(s, "work", "cpu", &sig, &raised, NULL), ERG_OK);
    erg_assert_near(sig.static_power_w, 10.0, 0);
    erg_assert_near(sig.time_s, 2.0, 1e-12);
    erg_assert_near(sig.dynamic_energy_j, 30.0, 1e-12); /* d = E − s·T = 50 − 20 */
    erg_assert_near(sig.time_var_s2, 1.0, 1e-12);
    erg_assert_near(sig.energy_var_j2, 400.0, 1e-9);
    assert_int_equal(raised, 0);
    assert_int_equal(sig.runs, 3);
    erg_assert_near(erg_signature_energy_j(&sig), 50.0, 1e-12);

    /* fixed baseline */
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 3, ERG_BASELINE_FIXED_W, NULL, 5.0, &s, NULL), ERG_OK);
    erg_assert_near(s->total_net_energy_j.mean, 40.0, 1e-12);
    /* a run whose channel was not ok makes the channel not ok, with its reason */
    runs[1].channels[1].state = ERG_READING_NOT_LIVE;
    strcpy(runs[1].channels[1].reason, "did not move");
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 3, ERG_BASELINE_NONE, NULL, 0, &s, NULL), ERG_OK);
    assert_int_equal(s->channels[1].state, ERG_READING_NOT_LIVE);
    assert_string_equal(s->channels[1].reason, "did not move");
    assert_true(isnan(s->channels[1].energy_j.mean));
    /* M1: var_E below s²·var_T is raised and said */
    runs[0].total_energy_j = runs[1].total_energy_j = runs[2].total_energy_j = 50.0;
    erg_summary_free(s);
    erg_assert_ok(erg_summarize(runs, 3, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL));
    erg_assert_ok(erg_summary_signature(s, NULL, NULL, &sig, &raised, NULL));
    assert_int_equal(raised, 1);
    erg_assert_near(sig.energy_var_j2, 100.0, 1e-9);
    erg_summary_free(s);
    for (int k = 0; k < 3; k++)
        erg_measurement_release(&runs[k]);
}

/* Trial finding 2: a baseline above the gross energy is flagged, and net is not clamped. */
/* Trial finding 9: unknown backend names are refused; an empty result says why per backend. */
static void unknown_backend_refused_absent_one_explained(void **state)
{
    (void)state;
    erg_meter_options o;
    fake_options(&o, root, "rapl-sysfs,bogus");
    erg_meter *m = NULL;
    erg_diag d;
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_EINVAL);
    assert_null(m);
    assert_string_equal(d.detail, "unknown backend 'bogus' in --backends (known: rapl-sysfs, "
                                  "rapl-msr, nvml, hwmon, estimator)");
    o.backends = "rapl-sysfs,,hwmon"; /* empty items ignored; nothing in the fake root */
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_ENODEV);
    if (!strstr(d.detail, "no backend found any channel: rapl-sysfs absent: ") ||
        !strstr(d.detail, "; hwmon absent: "))
        fail_msg("detail: %s", d.detail);
}

static void negative_net_is_flagged_not_clamped(void **state)
{
    (void)state;
    erg_measurement runs[2] = {one_run(1.0, 20.0), one_run(1.0, 24.0)};
    runs[0].channels[1].flags = ERG_FLAG_WRAP_CORRECTED; /* core: not summed */
    runs[1].channels[0].flags = ERG_FLAG_STALE;          /* package: summed */
    erg_calibration_channel cal_ch[1];
    erg_calibration cal;
    memset(&cal, 0, sizeof cal);
    memset(cal_ch, 0, sizeof cal_ch);
    cal.channels = cal_ch;
    cal.n_channels = 1;
    strcpy(cal.channels[0].id, "rapl-sysfs:package-0");
    cal.channels[0].idle_power_w = 30.0; /* calibrated under load: 30 W × 1 s > 22 J */
    cal.idle_power_w = 30.0;
    erg_summary *s = NULL;
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);
    erg_assert_near(s->total_energy_j.mean, 22.0, 1e-12);
    erg_assert_near(s->total_baseline_j.mean, 30.0, 1e-12);
    erg_assert_near(s->total_net_energy_j.mean, -8.0, 1e-12); /* unclamped */
    erg_assert_near(s->total_net_energy_j.sd, 2.8284271247461903, 1e-12);
    assert_int_equal(s->total_flags, ERG_FLAG_BASELINE_EXCEEDS_GROSS | ERG_FLAG_STALE);
    assert_true(s->channels[0].flags & ERG_FLAG_BASELINE_EXCEEDS_GROSS);
    assert_int_equal(s->channels[1].flags, ERG_FLAG_WRAP_CORRECTED); /* baseline 0 < 11 J */
    assert_string_equal(erg_flag_name(8), "baseline_exceeds_gross");
    assert_null(erg_flag_name(ERG_FLAG_COUNT));
    erg_summary_free(s);
    /* a baseline equal to the gross energy but for the last bits of a double (a saturated
     * estimator read exactly at its calibrated power) is not a change of state */
    cal.channels[0].idle_power_w = cal.idle_power_w = 22.0 * (1 + 1e-15);
    s = NULL;
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);
    assert_false(s->channels[0].flags & ERG_FLAG_BASELINE_EXCEEDS_GROSS);
    /* one part in a million above it is */
    erg_summary_free(s);
    cal.channels[0].idle_power_w = cal.idle_power_w = 22.0 * (1 + 1e-6);
    s = NULL;
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);
    assert_true(s->channels[0].flags & ERG_FLAG_BASELINE_EXCEEDS_GROSS);
    erg_summary_free(s); /* back to the case above for the checks below */
    cal.channels[0].idle_power_w = cal.idle_power_w = 30.0;
    s = NULL;
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);

    /* the signature clamps d at 0 (signature/1 needs d ≥ 0) and carries the flag */
    erg_signature sig;
    assert_int_equal(erg_summary_signature(s, "w", "cpu", &sig, NULL, NULL), ERG_OK);
    assert_int_equal(sig.flags, ERG_FLAG_BASELINE_EXCEEDS_GROSS | ERG_FLAG_STALE);
    erg_assert_near(sig.dynamic_energy_j, 0.0, 0);
    erg_assert_near(sig.static_power_w, 30.0, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/sig.json", root);
    assert_int_equal(erg_summary_write_signature(path, &sig, s, NULL), ERG_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "\"baseline_exceeds_gross\""));
    assert_non_null(strstr(buf, "\"stale\""));
    assert_null(strstr(buf, "\"wrap_corrected\"")); /* not a summed channel's */
    erg_signature back;
    assert_int_equal(erg_signature_read_file(path, &back, NULL), ERG_OK); /* channels ignored */
    erg_assert_near(back.static_power_w, 30.0, 0);
    assert_int_equal(back.flags, ERG_FLAG_BASELINE_EXCEEDS_GROSS | ERG_FLAG_STALE); /* flags kept */
    /* gross above baseline: no flag; the same with a fixed baseline */
    cal.channels[0].idle_power_w = 21.0; /* 21 J < 22 J on average, though run 1 had 20 J */
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_CALIBRATED, &cal, 0, &s, NULL), ERG_OK);
    assert_int_equal(s->total_flags, ERG_FLAG_STALE);
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_FIXED_W, NULL, 25.0, &s, NULL), ERG_OK);
    assert_int_equal(s->total_flags, ERG_FLAG_BASELINE_EXCEEDS_GROSS | ERG_FLAG_STALE);
    erg_assert_near(s->total_net_energy_j.mean, -3.0, 1e-12);
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_NONE, NULL, 0, &s, NULL), ERG_OK);
    assert_int_equal(s->total_flags, ERG_FLAG_STALE);
    erg_summary_free(s);
    erg_measurement_release(&runs[0]);
    erg_measurement_release(&runs[1]);
}

static void calibration_file_round_trip_and_errors(void **state)
{
    (void)state;
    erg_calibration_channel cal_ch[1];
    erg_calibration cal, *back = NULL;
    memset(&cal, 0, sizeof cal);
    memset(cal_ch, 0, sizeof cal_ch);
    cal.channels = cal_ch;
    cal.duration_s = 10;
    cal.window_s = 0.5;
    cal.idle_power_w = 12.5;
    cal.n_channels = 1;
    strcpy(cal.channels[0].id, "rapl-sysfs:package-0");
    cal.channels[0].domain = ERG_DOMAIN_PACKAGE;
    strcpy(cal.channels[0].device, "package-0");
    cal.channels[0].idle_power_w = 12.5;
    cal.channels[0].cv = 0.031;
    cal.channels[0].samples = 20;
    char path[512];
    snprintf(path, sizeof path, "%s/cal.json", root);
    assert_int_equal(erg_calibration_write_file(path, &cal, NULL), ERG_OK);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, NULL), ERG_OK);
    assert_int_equal(back->n_channels, 1);
    erg_assert_near(back->channels[0].cv, 0.031, 1e-12);
    erg_assert_near(erg_calibration_idle_w(back, "rapl-sysfs:package-0"), 12.5, 0);
    assert_true(isnan(erg_calibration_idle_w(back, "nvml:gpu-0")));
    assert_int_equal(back->channels[0].domain, ERG_DOMAIN_PACKAGE);
    assert_int_equal(back->flags, 0);
    assert_int_equal(back->channels[0].flags, 0);
    /* flags of a machine not at rest survive the round trip, with the sentence */
    cal.channels[0].flags = ERG_CAL_HIGH_CV;
    cal.channels[0].cv = 0.5;
    cal.flags = ERG_CAL_HIGH_CV;
    assert_int_equal(erg_calibration_write_file(path, &cal, NULL), ERG_OK);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, NULL), ERG_OK);
    assert_int_equal(back->flags, ERG_CAL_HIGH_CV);
    assert_int_equal(back->channels[0].flags, ERG_CAL_HIGH_CV);
    char why[1024];
    assert_true(erg_calibration_describe(back, why, sizeof why) > 0);
    if (!strstr(why, "rapl-sysfs:package-0 power varied with a CV of 0.5 (more than 0.2)"))
        fail_msg("describe: %s", why);
    /* a short buffer truncates and says how long the whole text is */
    char tiny[8];
    int need = erg_calibration_describe(back, tiny, sizeof tiny);
    assert_int_equal(need, (int)strlen(why));
    assert_int_equal(strlen(tiny), 7);
    /* unknown flag names (a newer erg) are ignored; flags that are not names are errors */
    erg_diag d0;
    fake_write(root, "fl.json",
               "{\"erg\": \"calibration/1\", \"idle_power_w\": 1, \"channels\": [{\"id\": \"x\", "
               "\"idle_power_w\": 1, \"cv\": 0, \"flags\": [\"busy\", \"from_the_future\"]}]}\n");
    snprintf(path, sizeof path, "%s/fl.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d0), ERG_OK);
    assert_int_equal(back->flags, ERG_CAL_BUSY);
    fake_write(root, "fl2.json",
               "{\"erg\": \"calibration/1\", \"idle_power_w\": 1, \"channels\": [{\"id\": \"x\", "
               "\"idle_power_w\": 1, \"cv\": 0, \"flags\": [1]}]}\n");
    snprintf(path, sizeof path, "%s/fl2.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d0), ERG_EPARSE);
    if (!strstr(d0.detail, "channels[0].flags[0]: not a string"))
        fail_msg("detail: %s", d0.detail);
    fake_write(root, "fl3.json",
               "{\"erg\": \"calibration/1\", \"idle_power_w\": 1, \"flags\": \"busy\", "
               "\"channels\": []}\n");
    snprintf(path, sizeof path, "%s/fl3.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d0), ERG_EPARSE);
    if (!strstr(d0.detail, "flags: not an array"))
        fail_msg("detail: %s", d0.detail);
    snprintf(path, sizeof path, "%s/cal.json", root);

    erg_diag d;
    fake_write(root, "bad.json",
               "{\"erg\": \"calibration/1\", \"idle_power_w\": 1,\n \"channels\": [{\"id\": \"x\", "
               "\"idle_power_w\": -3, \"cv\": 0}]}\n");
    snprintf(path, sizeof path, "%s/bad.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d), ERG_EPARSE);
    assert_non_null(strstr(d.where, "bad.json"));
    fake_write(root, "v2.json", "{\"erg\": \"calibration/2\"}\n");
    snprintf(path, sizeof path, "%s/v2.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d), ERG_EVERSION);
    fake_write(root, "syntax.json", "{\"erg\": \n");
    snprintf(path, sizeof path, "%s/syntax.json", root);
    erg_calibration_free(back);
    assert_int_equal(erg_calibration_read_file(path, &back, &d), ERG_EPARSE);
    assert_non_null(strstr(d.where, "syntax.json:"));
    assert_null(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(windows_nest_and_overlap, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(estimator_is_the_labelled_last_resort, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(estimator_yields_to_a_live_counter, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(summary_gross_baseline_net_and_signature, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(unknown_backend_refused_absent_one_explained, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(negative_net_is_flagged_not_clamped, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(calibration_file_round_trip_and_errors, fake_setup,
                                        fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
