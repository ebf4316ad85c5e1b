/* SPDX-License-Identifier: MIT */
/* Calibration at rest and the stability wait (FECoM 2.3) on fake trees with the real clock, and
 * the sampler going on when a poll overruns its period. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "erg/measure.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    fake_io_reset();
    if (fake_root_new(root, sizeof root))
        return -1;
    fake_write(root, "sys/class/hwmon/hwmon0/name", "ina3221\n");
    fake_write(root, "sys/class/hwmon/hwmon0/in1_label", "VDD_IN\n");
    fake_write(root, "sys/class/hwmon/hwmon0/in1_input", "5000\n");
    fake_write(root, "sys/class/hwmon/hwmon0/curr1_input", "2000\n"); /* 10 W */
    fake_write(root, "sys/class/hwmon/hwmon1/name", "coretemp\n");
    fake_write(root, "sys/class/hwmon/hwmon1/temp1_input", "40000\n");
    return 0;
}

static erg_calibration *last_cal; /* calibrate_at's */

static int teardown(void **state)
{
    (void)state;
    erg_calibration_free(last_cal);
    last_cal = NULL;
    fake_root_free(root);
    return 0;
}

static erg_meter *open_real_clock(const erg_io *io)
{
    erg_meter_options o;
    erg_meter_options_init(&o);
    o.root = root;
    o.backends = "hwmon";
    o.io = io;
    erg_meter *m = NULL;
    if (erg_meter_open(&o, &m, NULL) != ERG_OK)
        fail_msg("open");
    return m;
}

static void calibration_gives_idle_power_and_cv(void **state)
{
    (void)state;
    erg_meter *m = open_real_clock(NULL);
    erg_calibration *cal = NULL;
    erg_diag d;
    assert_int_equal(erg_calibrate(m, 0.2, 0.02, &cal, &d), ERG_OK);
    assert_int_equal(cal->n_channels, 1);
    assert_string_equal(cal->channels[0].id, "hwmon:ina3221/VDD_IN");
    erg_assert_rel(cal->channels[0].idle_power_w, 10.0, 1e-9); /* a constant 10 W, held */
    erg_assert_near(cal->channels[0].cv, 0.0, 1e-9);
    assert_true(cal->channels[0].samples >= 5);
    erg_assert_rel(cal->idle_power_w, 10.0, 1e-9);
    erg_calibration_free(cal);
    assert_int_equal(erg_calibrate(m, 0.01, 0.02, &cal, &d), ERG_EINVAL);
    /* no duration whose window count overflows size_t (1e300 / 0.01 was cast from double) */
    assert_int_equal(erg_calibrate(m, 1e300, 0.01, &cal, &d), ERG_EINVAL);
    assert_int_equal(erg_calibrate(m, INFINITY, 0.5, &cal, &d), ERG_EINVAL);
    assert_int_equal(erg_calibrate(m, ERG_CAL_MAX_DURATION_S * 2, 0.5, &cal, &d), ERG_EINVAL);
    assert_null(cal);
    erg_meter_close(m);
}

/* A /proc/stat whose jiffies advance at every read: busy_step busy and idle_step idle jiffies
 * (alternating with busy_step2/idle_step2 when those are set), so the estimator sees a chosen
 * utilisation whatever the timing. Only the estimator is open, so every read is /proc/stat. */
static uint64_t stat_busy, stat_idle, busy_step, idle_step, busy_step2, idle_step2, stat_reads;
static ssize_t stat_pread(void *ud, int fd, void *buf, size_t size, off_t off)
{
    (void)ud;
    (void)fd;
    (void)off;
    int odd = (stat_reads++ & 1) && (busy_step2 | idle_step2);
    stat_busy += odd ? busy_step2 : busy_step;
    stat_idle += odd ? idle_step2 : idle_step;
    int n = snprintf(buf, size, "cpu  %llu 0 0 %llu 0 0 0 0 0 0\n", (unsigned long long)stat_busy,
                     (unsigned long long)stat_idle);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

static erg_meter *open_estimator(uint64_t busy, uint64_t idle, uint64_t busy2, uint64_t idle2)
{
    static const erg_io io = {NULL, stat_pread, NULL, NULL, NULL};
    stat_busy = stat_idle = stat_reads = 0;
    busy_step = busy;
    idle_step = idle;
    busy_step2 = busy2;
    idle_step2 = idle2;
    fake_proc_stat(root, 0, 0); /* opened through the seam; read through stat_pread */
    erg_meter_options o;
    erg_meter_options_init(&o);
    o.root = root;
    o.backends = "estimator";
    o.io = &io;
    o.estimator_idle_w = 10;
    o.estimator_full_w = 65;
    erg_meter *m = NULL;
    erg_diag d;
    if (erg_meter_open(&o, &m, &d) != ERG_OK)
        fail_msg("open: %s", d.detail);
    return m;
}

static erg_calibration *calibrate_at(uint64_t busy, uint64_t idle, uint64_t busy2, uint64_t idle2)
{
    erg_meter *m = open_estimator(busy, idle, busy2, idle2);
    erg_diag d;
    /* the last one is kept for the caller to read, and freed at the next call (and by teardown) */
    erg_calibration_free(last_cal);
    last_cal = NULL;
    assert_int_equal(erg_calibrate(m, 0.2, 0.02, &last_cal, &d), ERG_OK);
    erg_meter_close(m);
    assert_int_equal(last_cal->n_channels, 1);
    assert_string_equal(last_cal->channels[0].id, "estimator:cpu");
    return last_cal;
}

/* Trial finding 3: a busy machine is noticed by calibrate, through the estimator's utilisation. */
static void calibration_notices_a_busy_machine(void **state)
{
    (void)state;
    /* every CPU busy: pinned at the 65 W ceiling, CV 0 (saturation, not calm) */
    erg_calibration *cal = calibrate_at(100, 0, 0, 0);
    erg_assert_rel(cal->channels[0].idle_power_w, 65.0, 1e-6);
    erg_assert_near(cal->channels[0].cv, 0.0, 1e-6);
    erg_assert_near(cal->channels[0].utilisation, 1.0, 1e-6);
    assert_int_equal(cal->channels[0].flags, ERG_CAL_BUSY | ERG_CAL_PINNED_AT_CEILING);
    assert_int_equal(cal->flags, ERG_CAL_BUSY | ERG_CAL_PINNED_AT_CEILING);
    char why[1024];
    erg_calibration_describe(cal, why, sizeof why);
    if (!strstr(why,
                "estimator:cpu sat at its full-load ceiling throughout (65 W, utilisation 100 %") ||
        !strstr(why, "run 'erg calibrate' again"))
        fail_msg("describe: %s", why);
    /* half busy: 10 + 55 × 0.5 = 37.5 W, busy but not pinned */
    cal = calibrate_at(50, 50, 0, 0);
    erg_assert_rel(cal->channels[0].idle_power_w, 37.5, 1e-6);
    erg_assert_near(cal->channels[0].utilisation, 0.5, 1e-6);
    assert_int_equal(cal->flags, ERG_CAL_BUSY);
    erg_calibration_describe(cal, why, sizeof why);
    if (!strstr(why, "mean CPU utilisation of 50 % (more than 10 %), so its idle power 37.5 W"))
        fail_msg("describe: %s", why);
    /* at rest: 2 % busy, 11.1 W, nothing flagged, no sentence */
    cal = calibrate_at(2, 98, 0, 0);
    erg_assert_rel(cal->channels[0].idle_power_w, 11.1, 1e-6);
    erg_assert_near(cal->channels[0].utilisation, 0.02, 1e-6);
    assert_int_equal(cal->flags, 0);
    assert_int_equal(erg_calibration_describe(cal, why, sizeof why), 0);
    assert_string_equal(why, "");
    /* either side of the 10 % threshold */
    cal = calibrate_at(9, 91, 0, 0);
    erg_assert_near(cal->channels[0].utilisation, 0.09, 1e-6);
    assert_int_equal(cal->flags, 0);
    cal = calibrate_at(11, 89, 0, 0);
    assert_int_equal(cal->flags, ERG_CAL_BUSY);
    /* utilisation swinging between 0 and 100 % at every read: high CV as well as busy */
    cal = calibrate_at(100, 0, 0, 100);
    assert_true(cal->channels[0].cv > ERG_CAL_MAX_CV);
    assert_int_equal(cal->flags, ERG_CAL_BUSY | ERG_CAL_HIGH_CV);
    erg_calibration_describe(cal, why, sizeof why);
    if (!strstr(why, ", and its power varied with a CV of"))
        fail_msg("describe: %s", why);
}

static void stability_wait_reaches_or_gives_up_with_reason(void **state)
{
    (void)state;
    erg_meter *m = open_real_clock(NULL);
    erg_calibration_channel cal_ch[1];
    erg_calibration cal;
    memset(&cal, 0, sizeof cal);
    memset(cal_ch, 0, sizeof cal_ch);
    cal.channels = cal_ch;
    cal.window_s = 0.01;
    cal.n_channels = 1;
    strcpy(cal.channels[0].id, "hwmon:ina3221/VDD_IN");
    cal.channels[0].idle_power_w = 10;
    cal.channels[0].cv = 0.05;
    erg_stability_options o;
    erg_stability_options_init(&o);
    o.n_samples = 3;
    o.timeout_s = 5;
    erg_stability_result r;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    assert_int_equal(r.stable, 1);         /* constant power: CV 0 ≤ 0.05; 40 °C < 55 °C */
    assert_int_equal(r.estimator_only, 0); /* a power rail and a temperature sensor */
    /* the limit: 0.05 · sqrt(F_0.95(2, ∞)) = 0.05 · sqrt(5.9915 / 2) = 0.08654 (the calibration
     * does not say its window count, so its CV is taken as exact) */
    if (!strstr(r.waiting_for, "hwmon:ina3221/VDD_IN 0.05, limit 0.0865"))
        fail_msg("waiting_for: %s", r.waiting_for);
    /* 30 calibration windows: 0.05 · sqrt(F_0.95(2, 29)) = 0.05 · sqrt(3.3277) = 0.09121 */
    cal.channels[0].samples = 30;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    if (!strstr(r.waiting_for, "limit 0.0912"))
        fail_msg("waiting_for: %s", r.waiting_for);
    /* too hot: gives up at the timeout and names the sensor (named even when a loaded host has
     * not yet given the wait its power samples) */
    fake_write(root, "sys/class/hwmon/hwmon1/temp1_input", "70000\n");
    o.timeout_s = 0.1;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    assert_int_equal(r.stable, 0);
    if (!strstr(r.reason, "hwmon:coretemp/temp1"))
        fail_msg("reason: %s", r.reason);
    assert_non_null(strstr(r.reason, "gave up"));
    assert_true(r.waited_s >= 0.1);
    /* 1000 samples of 10 ms cannot be in by 0.1 s: the hot sensor is still what is named */
    o.n_samples = 1000;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    assert_int_equal(r.stable, 0);
    if (!strstr(r.reason, "hwmon:coretemp/temp1 at 70.0"))
        fail_msg("reason: %s", r.reason);
    erg_meter_close(m);
}

/* Fresh-user finding: with only the estimator and no temperature sensor, "stable" rests on the
 * modelled CPU load alone; the result says so. The estimator's power alternates between
 * utilisations 0.4 and 0.6 (32 and 43 W): a CV of about 0.15 per sample is far above a calibrated
 * CV of 0.01 at rest and the wait gives up naming the channel; at a calibrated 0.2 it passes. */
static void stability_wait_on_the_estimator_alone_says_so(void **state)
{
    (void)state;
    erg_meter *m = open_estimator(40, 60, 60, 40);
    erg_calibration_channel cal_ch[1];
    erg_calibration cal;
    memset(&cal, 0, sizeof cal);
    memset(cal_ch, 0, sizeof cal_ch);
    cal.channels = cal_ch;
    cal.window_s = 0.01;
    cal.n_channels = 1;
    strcpy(cal.channels[0].id, "estimator:cpu");
    cal.channels[0].idle_power_w = 11;
    cal.channels[0].cv = 0.2;
    cal.channels[0].samples = 30;
    erg_stability_options o;
    erg_stability_options_init(&o);
    o.n_samples = 4;
    o.timeout_s = 5;
    erg_stability_result r;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    assert_int_equal(r.stable, 1);
    assert_int_equal(r.estimator_only, 1);
    cal.channels[0].cv = 0.01;
    /* 4 samples of 10 ms are due long before the timeout, even on a loaded host (the reason
     * would otherwise be "fewer than 4 power samples") */
    o.timeout_s = 1.0;
    assert_int_equal(erg_wait_stable(m, &cal, &o, &r, NULL), ERG_OK);
    assert_int_equal(r.stable, 0);
    if (!strstr(r.reason, "estimator:cpu: power CV") || !strstr(r.reason, "F-test at 5 %"))
        fail_msg("reason: %s", r.reason);
    erg_meter_close(m);
}

/* a pread that takes 30 ms: the sampler at 5 ms overruns every period and must keep polling */
static atomic_int reads;
static ssize_t slow_pread(void *ud, int fd, void *buf, size_t size, off_t off)
{
    (void)ud;
    atomic_fetch_add(&reads, 1);
    struct timespec ts = {0, 30000000};
    nanosleep(&ts, NULL);
    return pread(fd, buf, size, off);
}

static void sampler_that_overruns_keeps_going(void **state)
{
    (void)state;
    static const erg_io slow = {NULL, slow_pread, NULL, NULL, NULL};
    erg_meter *m = open_real_clock(&slow);
    atomic_store(&reads, 0);
    assert_int_equal(erg_meter_sampler_start(m, 0.005), ERG_OK);
    assert_int_equal(erg_meter_sampler_start(m, 0.005), ERG_EINVAL); /* already running */
    /* wait (up to 10 s) for 8 more reads: a sampler that stopped after an overrun never gets there
     */
    for (int k = 0; k < 1000 && atomic_load(&reads) < 8; k++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    erg_meter_sampler_stop(m);
    assert_true(atomic_load(&reads) >= 8);
    erg_meter_sampler_stop(m); /* idempotent */
    erg_meter_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(calibration_gives_idle_power_and_cv, setup, teardown),
        cmocka_unit_test_setup_teardown(calibration_notices_a_busy_machine, setup, teardown),
        cmocka_unit_test_setup_teardown(stability_wait_reaches_or_gives_up_with_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stability_wait_on_the_estimator_alone_says_so, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sampler_that_overruns_keeps_going, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
