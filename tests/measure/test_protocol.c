/* SPDX-License-Identifier: MIT */
/* The repetition protocol (erg_protocol_run) with a callable as the work: the callable advances
 * the fake counter file and the scripted clock as real work advances a counter, so every figure
 * is known exactly. Also the command runner, the files measure writes and their reader. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erg/measure.h"
#include "erg/stats.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    fake_io_reset();
    if (fake_root_new(root, sizeof root) != 0)
        return -1;
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    fake_write_u64(root, "sys/class/powercap/intel-rapl:0/energy_uj", 1000000);
    fake_proc_stat(root, 1000, 1000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_root_free(root);
    return 0;
}

static erg_meter *open_meter(void)
{
    erg_meter *m = fake_open(root, "rapl-sysfs");
    return m;
}

/* The work: each call is one repetition that draws energy_uj over dt_ns of the scripted clock
 * and busy jiffies of the machine; the k-th call (1-based) in fail_at exits 3; stop_after
 * calls make the interrupted hook say stop. */
struct work {
    uint64_t uj, energy_uj, dt_ns;
    uint64_t busy;
    unsigned calls, fail_at, stop_after;
    double sleep_s;
    int report_cpu;
};

static int work_run(void *ud, erg_run_outcome *out)
{
    struct work *w = ud;
    w->calls++;
    if (w->sleep_s > 0) {
        struct timespec ts = {0, (long)(w->sleep_s * 1e9)};
        nanosleep(&ts, NULL);
    }
    w->uj += w->energy_uj;
    fake_write_u64(root, "sys/class/powercap/intel-rapl:0/energy_uj", w->uj);
    fake_now_ns += w->dt_ns;
    w->busy += 2;
    fake_proc_stat(root, w->busy, 1000);
    out->status = w->calls == w->fail_at ? 3 : 0;
    if (w->report_cpu) {
        out->user_cpu_s = 0.01;
        out->system_cpu_s = 0.0;
    }
    return ERG_OK;
}

static int work_stop(void *ud)
{
    struct work *w = ud;
    return w->stop_after && w->calls >= w->stop_after;
}

/* A hand-made measurement/1 document; positions below are hand-counted on its lines. */
static const char meas_doc[] = "{\"erg\": \"measurement/1\", \"runs\": 3,\n"            /* 1 */
                               " \"time_s\": {\"mean\": 0.1, \"sd\": 0},\n"             /* 2 */
                               " \"total\": {\"energy_j\": {\"mean\": 5, \"sd\": 0},\n" /* 3 */
                               "  \"static_power_w\": 10, \"grade\": \"hw_shunt\"}}\n"; /* 4 */

/* meas_doc with the first `from` replaced by `to`, read: ERG_EPARSE at where_tail, detail. */
static void meas_bad(const char *from, const char *to, const char *where_tail, const char *detail)
{
    char text[512], path[512];
    const char *at = strstr(meas_doc, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - meas_doc), meas_doc, to, at + strlen(from));
    fake_write(root, "mbad.json", "%s", text);
    snprintf(path, sizeof path, "%s/mbad.json", root);
    erg_signature s;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_measurement_read_signature(path, &s, &d), ERG_EPARSE);
    char want[600];
    snprintf(want, sizeof want, "%s%s", path, where_tail);
    assert_string_equal(d.where, want);
    if (strncmp(d.detail, detail, strlen(detail)) != 0)
        fail_msg("detail '%s' does not start '%s'", d.detail, detail);
}

static void measurement_errors_are_placed(void)
{
    char path[512];
    fake_write(root, "mgood.json", "%s", meas_doc);
    snprintf(path, sizeof path, "%s/mgood.json", root);
    erg_signature s;
    assert_int_equal(erg_measurement_read_signature(path, &s, NULL), ERG_OK);
    erg_assert_near(s.dynamic_energy_j, 4.0, 1e-12); /* 5 J − 10 W × 0.1 s */
    /* wrong type: line 2 ` "time_s": {"mean": "0.1", ...`: '{' at 12, the value at 21 */
    meas_bad("0.1", "\"0.1\"", ":2:21", "time_s.mean: expected a number");
    /* out of range: line 4 `  "static_power_w": -1, ...`: -1 at 21 */
    meas_bad("10,", "-1,", ":4:21", "total.static_power_w: must not be negative (got -1)");
    /* missing: runs (the document, 1:1), total.grade (the total object, line 3 column 11) */
    meas_bad(" \"runs\": 3,", "", ":1:1", "runs: required number is missing");
    meas_bad(", \"grade\": \"hw_shunt\"", "", ":3:11", "total.grade: missing or not a grade");
    meas_bad("\"time_s\": {\"mean\": 0.1, \"sd\": 0},", "\"time\": 1,", ":1:1",
             "time_s: missing or not an object");
    /* truncated after line 3: jansson's place, line 4 before its first byte (column 0) */
    meas_bad("  \"static_power_w\": 10, \"grade\": \"hw_shunt\"}}\n", "", ":4:0",
             "malformed JSON: ");
}

static void protocol_runs_summarises_and_attributes(void **state)
{
    (void)state;
    erg_meter *m = open_meter();
    struct work w = {1000000, 5000000, 100000000, 1000, 0, 4, 0, 0, 1};
    erg_protocol_options o;
    erg_protocol_options_init(&o);
    o.runs = 4;
    o.warmup = 2;
    o.root = root;
    o.run = work_run;
    o.run_ud = &w;
    o.baseline = ERG_BASELINE_FIXED_W;
    o.baseline_w = 10.0;
    static const char *const cmd[] = {"./work", "--fast", NULL};
    o.command = cmd;
    erg_protocol_result *r = NULL;
    erg_diag d;
    assert_int_equal(erg_protocol_run(m, &o, &r, &d), ERG_OK);
    assert_int_equal(w.calls, 6); /* 2 warm-up + 4 measured */
    assert_int_equal(r->stop_status, ERG_OK);
    assert_int_equal(r->runs_attempted, 4);
    assert_int_equal(r->runs_ok, 3);
    /* the 4th call overall was measured run 2: it exited 3, is recorded, not averaged in */
    assert_int_equal(r->per_run[1].status, 3);
    assert_int_equal(r->per_run[0].repetitions, 1);
    const erg_summary *s = r->summary;
    assert_non_null(s);
    assert_int_equal(s->runs, 3);
    erg_assert_near(s->total_energy_j.mean, 5.0, 1e-9); /* 5 J in 0.1 s each run */
    erg_assert_near(s->total_energy_j.sd, 0.0, 1e-9);
    erg_assert_near(s->total_energy_j.median, 5.0, 1e-9);
    erg_assert_near(s->time_s.mean, 0.1, 1e-9);
    erg_assert_near(s->total_baseline_j.mean, 1.0, 1e-9); /* 10 W × 0.1 s */
    erg_assert_near(s->total_net_energy_j.mean, 4.0, 1e-9);
    erg_assert_near(s->static_power_w, 10.0, 0); /* --baseline W is the static power */
    /* CPU time the work reported; erg's own CPU time is measured, finite and >= 0 */
    erg_assert_near(r->user_cpu_s.mean, 0.01, 1e-12);
    assert_true(r->erg_cpu_s.mean >= 0);
    /* attribution: 0.01 s of the work against 2 busy jiffies (0.02 s at USER_HZ 100) */
    long hz = sysconf(_SC_CLK_TCK);
    double share = 0.01 / (2.0 / (double)hz);
    erg_assert_near(r->attribution.cpu_share, share > 1 ? 1.0 : share, 1e-9);
    erg_assert_near(r->attribution.attributed_energy_j, r->attribution.cpu_share * 4.0, 1e-9);
    assert_int_equal(r->attribution.grade, ERG_GRADE_ESTIMATOR);
    /* floors: resolution 1 µJ + 50 W × the update period, over √6 */
    assert_true(s->energy_floor_j > 0);
    /* the signature: name from the command, s = 10 W, d = 5 − 10·0.1 */
    erg_signature sig;
    int m1 = -1;
    assert_int_equal(erg_protocol_signature(r, NULL, &sig, &m1, &d), ERG_OK);
    assert_string_equal(sig.name, "./work");
    erg_assert_near(sig.static_power_w, 10.0, 0);
    erg_assert_near(sig.dynamic_energy_j, 4.0, 1e-9);
    /* sd 0 over 3 runs: the variance is raised to the meter's floor, never 0 */
    erg_assert_near(sig.energy_var_j2, s->energy_floor_j * s->energy_floor_j, 1e-15);
    assert_true(sig.energy_var_j2 > 0);

    /* measurement/1 round trip: the file's signature is the result's */
    char path[512];
    snprintf(path, sizeof path, "%s/m.json", root);
    assert_int_equal(erg_protocol_write_json(path, r, m1, &d), ERG_OK);
    erg_signature back;
    assert_int_equal(erg_measurement_read_signature(path, &back, &d), ERG_OK);
    assert_string_equal(back.name, "work");
    erg_assert_near(back.static_power_w, 10.0, 1e-9);
    erg_assert_near(back.time_s, 0.1, 1e-9);
    erg_assert_near(back.dynamic_energy_j, 4.0, 1e-9);
    erg_assert_rel(back.energy_var_j2, sig.energy_var_j2, 1e-6);
    assert_int_equal(back.runs, 3);
    measurement_errors_are_placed();
    /* CSV: header, one row per channel, the total */
    snprintf(path, sizeof path, "%s/m.csv", root);
    assert_int_equal(erg_protocol_write_csv(path, r, &d), ERG_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, f));
    assert_non_null(strstr(line, "energy_j_median,energy_j_min,energy_j_max"));
    int total = 0;
    /* time sd is 0 to rounding (1.7e-17 s), so the row is checked around it */
    static const char head[] = "total,,,hw_shunt,ok,,0.1,", tail[] = ",5,0,1,0,4,0,1,5,5,5\n";
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (strncmp(line, head, strlen(head)) == 0 && n > strlen(tail) &&
            strcmp(line + n - strlen(tail), tail) == 0)
            total = 1;
    }
    fclose(f);
    assert_true(total);
    assert_int_equal(erg_protocol_write_timeline(path, r, &d), ERG_EINVAL); /* none taken */
    size_t nr, nc;
    const double *ts, *pw;
    const size_t *rn;
    assert_int_equal(erg_protocol_timeline(r, &nr, &nc, &ts, &rn, &pw), ERG_EINVAL);
    assert_null(erg_protocol_timeline_channel(r, 0));
    erg_protocol_result_free(r);
    erg_meter_close(m);
}

static void one_run_has_unknown_variance_and_a_floor(void **state)
{
    (void)state;
    erg_meter *m = open_meter();
    struct work w = {1000000, 5000000, 100000000, 1000, 0, 0, 0, 0, 0};
    erg_protocol_options o;
    erg_protocol_options_init(&o);
    o.runs = 1;
    o.root = root;
    o.run = work_run;
    o.run_ud = &w;
    erg_protocol_result *r = NULL;
    assert_int_equal(erg_protocol_run(m, &o, &r, NULL), ERG_OK);
    assert_true(isnan(r->summary->total_energy_j.sd)); /* unknown, not 0 */
    erg_assert_near(r->summary->total_energy_j.mean, 5.0, 1e-9);
    erg_signature sig;
    assert_int_equal(erg_protocol_signature(r, "one", &sig, NULL, NULL), ERG_OK);
    /* the floor: u = 1 µJ + 50 W × update period, var = u²/6 */
    erg_channel_info ci;
    erg_assert_ok(erg_meter_channel_info(m, 0, &ci));
    double u = ci.resolution_j + 50.0 * ci.min_interval_s;
    erg_assert_rel(sig.energy_var_j2, u * u / 6.0, 1e-6);
    erg_assert_rel(sig.time_var_s2, ci.min_interval_s * ci.min_interval_s / 6.0, 1e-6);
    assert_true(sig.energy_var_j2 > 0);
    /* the work's CPU time was not reported: it comes from the children's rusage (none: 0) */
    erg_assert_near(r->user_cpu_s.mean, 0.0, 1e-3);
    erg_protocol_result_free(r);
    erg_meter_close(m);
}

static void short_work_repeats_inside_one_window(void **state)
{
    (void)state;
    erg_meter *m = open_meter();
    /* 1 J over 20 ms a call (scripted clock), and 20 ms of real time for the protocol's clock */
    struct work w = {1000000, 1000000, 20000000, 1000, 0, 0, 0, 0.02, 0};
    erg_protocol_options o;
    erg_protocol_options_init(&o);
    o.runs = 2;
    o.root = root;
    o.min_window_s = 0.05;
    o.run = work_run;
    o.run_ud = &w;
    erg_protocol_result *r = NULL;
    assert_int_equal(erg_protocol_run(m, &o, &r, NULL), ERG_OK);
    /* the window is timed on the meter's clock, which each call advances by 20 ms: 3 repetitions
     * (0.06 s) are the first to reach 0.05 s, however long the real sleeps take on a busy host;
     * the figures are per repetition */
    assert_int_equal(r->per_run[0].repetitions, 3);
    assert_int_equal(r->per_run[1].repetitions, 3);
    assert_int_equal(w.calls, r->per_run[0].repetitions + r->per_run[1].repetitions);
    erg_assert_near(r->summary->total_energy_j.mean, 1.0, 1e-9);
    erg_assert_near(r->summary->time_s.mean, 0.02, 1e-9);
    erg_protocol_result_free(r);
    erg_meter_close(m);
}

static void interruption_keeps_the_runs_completed(void **state)
{
    (void)state;
    erg_meter *m = open_meter();
    struct work w = {1000000, 2000000, 100000000, 1000, 0, 0, 3, 0, 0};
    erg_protocol_options o;
    erg_protocol_options_init(&o);
    o.runs = 10;
    o.root = root;
    o.run = work_run;
    o.run_ud = &w;
    o.interrupted = work_stop;
    o.interrupt_ud = &w;
    erg_protocol_result *r = NULL;
    assert_int_equal(erg_protocol_run(m, &o, &r, NULL), ERG_OK);
    assert_int_equal(r->stop_status, ERG_EINTR);
    assert_int_equal(r->runs_attempted, 3);
    assert_int_equal(r->runs_ok, 3);
    erg_assert_near(r->summary->total_energy_j.mean, 2.0, 1e-9);
    erg_protocol_result_free(r);
    erg_meter_close(m);
}

static void bad_options_are_refused(void **state)
{
    (void)state;
    erg_meter *m = open_meter();
    erg_protocol_options o;
    erg_protocol_options_init(&o);
    erg_protocol_result *r = (erg_protocol_result *)&o;
    erg_diag d;
    assert_int_equal(erg_protocol_run(m, &o, &r, &d), ERG_EINVAL); /* no run callback */
    assert_null(r);
    assert_non_null(strstr(d.detail, "no run callback"));
    o.run = work_run;
    o.runs = 0;
    assert_int_equal(erg_protocol_run(m, &o, &r, &d), ERG_EINVAL);
    o.runs = 1;
    o.baseline = ERG_BASELINE_CALIBRATED;
    assert_int_equal(erg_protocol_run(m, &o, &r, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "needs a calibration"));
    erg_meter_close(m);
}

static void command_runner_status_timeout_children(void **state)
{
    (void)state;
    erg_run_outcome oc;
    erg_command c;
    static const char *const exit3[] = {"sh", "-c", "exit 3", NULL};
    erg_command_init(&c, exit3);
    assert_int_equal(erg_command_run(&c, &oc), ERG_OK);
    assert_int_equal(oc.status, 3);
    assert_int_equal(oc.flags, 0);
    assert_true(oc.user_cpu_s >= 0 && oc.system_cpu_s >= 0);
    /* a timeout beyond poll's int milliseconds (10^12 s; it overflowed the cast to int, which
     * UBSan reports) waits like none */
    erg_command_init(&c, exit3);
    c.timeout_s = 1e12;
    assert_int_equal(erg_command_run(&c, &oc), ERG_OK);
    assert_int_equal(oc.status, 3);
    assert_int_equal(oc.flags, 0);
    /* a timeout stops the whole group: status 124 */
    static const char *const slow[] = {"sh", "-c", "sleep 30; exit 0", NULL};
    erg_command_init(&c, slow);
    c.timeout_s = 0.1;
    assert_int_equal(erg_command_run(&c, &oc), ERG_OK);
    assert_int_equal(oc.status, 124);
    assert_int_equal(oc.flags, ERG_RUN_TIMED_OUT);
    /* a background child that outlives the command is flagged */
    static const char *const bg[] = {"sh", "-c", "sleep 0.5 & exit 0", NULL};
    erg_command_init(&c, bg);
    assert_int_equal(erg_command_run(&c, &oc), ERG_OK);
    assert_int_equal(oc.status, 0);
    assert_int_equal(oc.flags, ERG_RUN_LEFT_CHILDREN);
    /* a command that does not exist: said, not a run */
    static const char *const none[] = {"/nonexistent/erg-no-such-command", NULL};
    erg_command_init(&c, none);
    assert_int_equal(erg_command_run(&c, &oc), ERG_ENOENT);
    assert_non_null(strstr(c.error, "cannot run"));
}

static int stop_now(void *ud)
{
    (void)ud;
    return 1;
}

static void command_runner_interrupted_kills_the_group(void **state)
{
    (void)state;
    char marker[512];
    snprintf(marker, sizeof marker, "%s/alive", root);
    /* the child's child would touch the marker after 1 s; the group is killed at once */
    static char script[700];
    snprintf(script, sizeof script, "(sleep 1; touch '%s') & sleep 30", marker);
    const char *const argv[] = {"sh", "-c", script, NULL};
    erg_command c;
    erg_command_init(&c, argv);
    c.interrupted = stop_now;
    erg_run_outcome oc;
    assert_int_equal(erg_command_run(&c, &oc), ERG_EINTR);
    struct timespec ts = {1, 500000000};
    nanosleep(&ts, NULL);
    assert_int_equal(access(marker, F_OK), -1); /* the background child died with the group */
}

static void writes_keep_devices_symlinks_and_modes(void **state)
{
    (void)state;
    erg_diag d;
    /* a device is written into, never replaced */
    assert_int_equal(erg_output_check("/dev/null", &d), ERG_OK);
    struct stat st;
    /* a symlink stays a link; the file it names is written, with its mode kept */
    char target[512], link[512], dir[512];
    snprintf(target, sizeof target, "%s/target.json", root);
    snprintf(link, sizeof link, "%s/link.json", root);
    snprintf(dir, sizeof dir, "%s/nodir/x.json", root);
    fake_write(root, "target.json", "old\n");
    chmod(target, 0600);
    assert_int_equal(symlink(target, link), 0);
    erg_calibration *cal = erg_calibration_new(0);
    assert_non_null(cal);
    assert_int_equal(erg_calibration_write_file(link, cal, &d), ERG_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    erg_calibration *back = NULL;
    assert_int_equal(erg_calibration_read_file(link, &back, &d), ERG_OK);
    erg_calibration_free(back);
    /* a folder that does not exist is said before anything runs */
    assert_int_equal(erg_output_check(dir, &d), ERG_ENOENT);
    assert_non_null(strstr(d.detail, "nodir: No such file or directory"));
    assert_int_equal(erg_output_check(root, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "is a folder"));
    /* a full device: the write fails with the reason */
    if (access("/dev/full", W_OK) == 0) {
        assert_int_equal(erg_calibration_write_file("/dev/full", cal, &d), ERG_EIO);
        assert_non_null(strstr(d.detail, "No space left on device"));
        assert_int_equal(stat("/dev/full", &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    erg_calibration_free(cal);
}

static void mean_sd_and_the_one_formatter(void **state)
{
    (void)state;
    const double x[] = {4.0, 1.0, 3.0, 2.0};
    erg_mean_sd v = erg_mean_sd_of(x, 4);
    erg_assert_near(v.mean, 2.5, 0);
    erg_assert_near(v.sd, sqrt(5.0 / 3.0), 1e-15);
    erg_assert_near(v.median, 2.5, 0);
    erg_assert_near(v.min, 1.0, 0);
    erg_assert_near(v.max, 4.0, 0);
    v = erg_mean_sd_of(x, 1);
    assert_true(isnan(v.sd));
    erg_assert_near(v.median, 4.0, 0);
    v = erg_mean_sd_of(x, 0);
    assert_true(isnan(v.mean) && isnan(v.median));
    char b[64];
    erg_format_mean_sd(68.1542, 0.0031, b, sizeof b);
    assert_string_equal(b, "68.1542 \u00b1 0.0031");
    erg_format_mean_sd(68.1542, 0.31, b, sizeof b);
    assert_string_equal(b, "68.15 \u00b1 0.31");
    erg_format_mean_sd(68.1542, 0.0996, b, sizeof b);
    assert_string_equal(b, "68.15 \u00b1 0.10");
    erg_format_mean_sd(1234.4, 56.0, b, sizeof b);
    assert_string_equal(b, "1234 \u00b1 56");
    erg_format_mean_sd(68.1542, (double)NAN, b, sizeof b);
    assert_string_equal(b, "68.15 \u00b1 ?");
    erg_format_mean_sd(5.0, 0.0, b, sizeof b);
    assert_string_equal(b, "5 \u00b1 0");
    erg_format_mean_sd((double)NAN, 1.0, b, sizeof b);
    assert_string_equal(b, "-");
}

/* Issue 16: a total the meter refused (a covered channel gave no figure) stays refused over runs,
 * flagged incomplete with the reason, and --min-grade cannot pass on it. */
static void an_incomplete_total_stays_refused(void **state)
{
    (void)state;
    erg_measurement *runs = calloc(2, sizeof *runs);
    assert_non_null(runs);
    for (int k = 0; k < 2; k++) {
        runs[k].time_s = 1.0;
        runs[k].channels = calloc(1, sizeof *runs[k].channels);
        assert_non_null(runs[k].channels);
        runs[k].capacity = 1;
        runs[k].n_channels = 1;
        strcpy(runs[k].channels[0].id, "rapl-sysfs:package-0/dram");
        runs[k].channels[0].state = ERG_READING_OK;
        runs[k].channels[0].energy_j = 2.0;
        runs[k].total_energy_j = NAN;
        runs[k].total_grade = ERG_GRADE_ESTIMATOR;
    }
    runs[1].total_flags = ERG_FLAG_INCOMPLETE;
    strcpy(runs[1].total_reason, "incomplete: no figure from rapl-sysfs:package-0");
    erg_summary *s = NULL;
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_NONE, NULL, 0, &s, NULL), ERG_OK);
    assert_int_equal(s->n_total, 0);
    assert_true(s->total_flags & ERG_FLAG_INCOMPLETE);
    assert_string_equal(s->total_reason, "incomplete: no figure from rapl-sysfs:package-0");
    assert_true(isnan(s->total_energy_j.mean));
    erg_signature sig;
    assert_int_equal(erg_summary_signature(s, "x", NULL, &sig, NULL, NULL), ERG_EINVAL);
    erg_summary_free(s);
    for (int k = 0; k < 2; k++)
        erg_measurement_release(&runs[k]);
    free(runs);
}

/* The net energy of a machine at exactly its baseline power is 0, not the residue of subtracting
 * idle power x time from a meter's sum of increments (1.8e-15 J printed as net energy); a real
 * difference of 0.1 J is kept. */
static void net_cancellation_residue_is_zero(void **state)
{
    (void)state;
    erg_measurement *runs = calloc(3, sizeof *runs);
    assert_non_null(runs);
    const double t = 0.2026;
    for (int k = 0; k < 3; k++) {
        runs[k].time_s = t;
        runs[k].channels = calloc(1, sizeof *runs[k].channels);
        assert_non_null(runs[k].channels);
        runs[k].capacity = 1;
        runs[k].n_channels = 1;
        strcpy(runs[k].channels[0].id, "estimator:cpu");
        runs[k].channels[0].state = ERG_READING_OK;
        runs[k].channels[0].in_total = 1;
        double e = 0.0; /* the meter's sum of 10 increments at 65 W */
        for (int i = 0; i < 10; i++)
            e += 65.0 * (t / 10);
        runs[k].channels[0].energy_j = e;
        runs[k].total_energy_j = k == 2 ? 65.0 * t + 0.1 : e;
        runs[k].total_grade = ERG_GRADE_ESTIMATOR;
    }
    assert_true(runs[0].total_energy_j != 65.0 * t); /* the residue this test is about */
    erg_summary *s = NULL;
    assert_int_equal(erg_summarize(runs, 2, ERG_BASELINE_FIXED_W, NULL, 65.0, &s, NULL), ERG_OK);
    assert_true(s->total_net_energy_j.mean == 0.0);
    assert_true(s->total_net_energy_j.sd == 0.0);
    erg_signature sig;
    assert_int_equal(erg_summary_signature(s, "x", "cpu", &sig, NULL, NULL), ERG_OK);
    assert_true(sig.dynamic_energy_j == 0.0); /* not 8.9e-16 J */
    erg_summary_free(s);
    assert_int_equal(erg_summarize(runs + 2, 1, ERG_BASELINE_FIXED_W, NULL, 65.0, &s, NULL),
                     ERG_OK);
    erg_assert_near(s->total_net_energy_j.mean, 0.1, 1e-12);
    erg_summary_free(s);
    for (int k = 0; k < 3; k++)
        erg_measurement_release(&runs[k]);
    free(runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(protocol_runs_summarises_and_attributes, setup, teardown),
        cmocka_unit_test_setup_teardown(one_run_has_unknown_variance_and_a_floor, setup, teardown),
        cmocka_unit_test_setup_teardown(short_work_repeats_inside_one_window, setup, teardown),
        cmocka_unit_test_setup_teardown(interruption_keeps_the_runs_completed, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_options_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(command_runner_status_timeout_children, setup, teardown),
        cmocka_unit_test_setup_teardown(command_runner_interrupted_kills_the_group, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(writes_keep_devices_symlinks_and_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(mean_sd_and_the_one_formatter, setup, teardown),
        cmocka_unit_test(net_cancellation_residue_is_zero),
        cmocka_unit_test_setup_teardown(an_incomplete_total_stays_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
