/* SPDX-License-Identifier: MIT */
/*
 * The repetition protocol (what `erg measure` does, for any caller): the stability wait (FECoM
 * Section 2.3), warm-up, measured runs each in one window, short work repeated inside a window
 * until it is long enough (FECoM and HYMELL repeat to >= 10 s), baseline subtraction (FECoM 2.4),
 * statistics as hyperfine gives them, the measuring process's own CPU cost, the work's share of
 * the machine's CPU time (Scaphandre's and Kepler's attribution), and a power timeline.
 */
#define _GNU_SOURCE /* secure_getenv */
#include "erg/measure.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/fsroot.h"
#include "measure/measure_internal.h"

#define MAX_RUNS 1000

void erg_protocol_options_init(erg_protocol_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->runs = 5;
    o->max_repetitions = 1000000;
    o->settle_max_s = 1.0;
    erg_stability_options_init(&o->stability);
    o->baseline = ERG_BASELINE_NONE;
}

const char *erg_baseline_source_name(erg_baseline_mode mode)
{
    return mode == ERG_BASELINE_CALIBRATED ? "calibration"
           : mode == ERG_BASELINE_FIXED_W  ? "fixed"
                                           : "none";
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int stopped(const erg_protocol_options *o)
{
    return o->interrupted && o->interrupted(o->interrupt_ud);
}

/* Sleep s seconds; wake early (returning 1) when the interrupted hook says so after a signal. */
static int sleep_or_stop(const erg_protocol_options *o, double s)
{
    double end = mono_s() + s;
    for (;;) {
        double left = end - mono_s();
        if (stopped(o))
            return 1;
        if (left <= 0)
            return 0;
        double slice = left > 0.25 ? 0.25 : left;
        struct timespec ts = {(time_t)slice, (long)((slice - (double)(time_t)slice) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

/* Busy CPU seconds of the whole machine from <root>/proc/stat's "cpu" line; NaN when unreadable.
 * Read through the root-fd seam (core/fsroot.h, hwloc's openat model): resolved inside root, a
 * symlink never leads out of it, and a FIFO or device there is refused, never waited on (opening
 * a FIFO for reading blocks until a writer comes). */
static double machine_busy_s(const char *root)
{
    char *text = NULL;
    size_t len;
    if (erg__fsroot_read(root, "proc/stat", 1u << 16, &text, &len) != 0)
        return NAN;
    unsigned long long v[8] = {0};
    int n = sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    free(text);
    if (n < 4)
        return NAN;
    /* user nice system idle iowait irq softirq steal: busy is all but idle and iowait */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    long hz = sysconf(_SC_CLK_TCK);
    return (double)busy / (double)(hz > 0 ? hz : 100);
}

__attribute__((format(printf, 2, 3))) static void warn(erg_protocol_result *r, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = realloc(r->warnings, (r->n_warnings + 1) * sizeof *w);
    if (!w)
        return;
    r->warnings = w;
    if ((w[r->n_warnings] = strdup(buf)))
        r->n_warnings++;
}

void erg_protocol_result_free(erg_protocol_result *r)
{
    if (!r)
        return;
    free(r->per_run);
    erg_summary_free(r->summary);
    for (size_t i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    if (r->command)
        for (char **a = r->command; *a; a++)
            free(*a);
    free(r->command);
    erg__timeline_free(r->timeline);
    free(r);
}

/* Free the n measurements of runs and the current one. */
static void release_runs(erg_measurement *runs, size_t n, erg_measurement *cur)
{
    for (size_t i = 0; i < n; i++)
        erg_measurement_release(&runs[i]);
    free(runs);
    erg_measurement_release(cur);
    free(cur);
}

/* Divide one window's figures by the repetitions it held. */
static void divide(erg_measurement *mm, size_t reps)
{
    if (reps <= 1)
        return;
    double k = (double)reps;
    mm->time_s /= k;
    mm->cpu_s /= k;
    mm->total_energy_j /= k;
    for (size_t i = 0; i < mm->n_channels; i++)
        mm->channels[i].energy_j /= k;
}

static void report(const erg_protocol_options *o, erg_protocol_phase ph, size_t done, size_t total,
                   double t0, double t, double e, const char *detail)
{
    if (!o->progress)
        return;
    erg_protocol_progress p = {ph, done, total, mono_s() - t0, t, e, detail ? detail : ""};
    o->progress(o->progress_ud, &p);
}

struct stable_hook {
    const erg_protocol_options *o;
    double t0;
};

static void stable_progress(void *ud, double waited_s, const char *why)
{
    struct stable_hook *h = ud;
    (void)waited_s;
    report(h->o, ERG_PHASE_STABLE, 0, 0, h->t0, NAN, NAN, why);
}

static int check_options(erg_meter *m, const erg_protocol_options *o, erg_diag *diag)
{
    if (!m || !o)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: NULL meter or options");
    if (!o->run)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: no run callback");
    if (o->runs < 1 || o->runs > MAX_RUNS)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: runs must be 1 to %d", MAX_RUNS);
    if (!(o->cooldown_s >= 0) || !isfinite(o->cooldown_s))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: cooldown must be >= 0 s");
    if (!(o->min_window_s >= 0) || !isfinite(o->min_window_s))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: min_window must be >= 0 s");
    if (o->max_repetitions < 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: max_repetitions must be >= 1");
    if (o->baseline == ERG_BASELINE_CALIBRATED && !o->calibration)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "protocol: a calibrated baseline needs a calibration");
    if (o->baseline == ERG_BASELINE_FIXED_W && !(o->baseline_w >= 0 && isfinite(o->baseline_w)))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: baseline power must be >= 0 W");
    if (o->stable && !o->calibration)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "protocol: the stability wait needs a calibration");
    if (o->timeline_period_s != 0 && !(o->timeline_period_s >= 0.001))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: timeline period must be >= 0.001 s");
    return ERG_OK;
}

/* Warnings that follow from the summary: each says what is wrong and what to do. */
static void summary_warnings(const erg_protocol_options *o, erg_protocol_result *r)
{
    const erg_summary *s = r->summary;
    const erg_calibration *cal = o->calibration;
    if (cal && cal->flags && (o->baseline == ERG_BASELINE_CALIBRATED || o->stable)) {
        char why[1800];
        erg_calibration_describe(cal, why, sizeof why);
        warn(r, "calibration %s: %s", o->calibration_path ? o->calibration_path : "", why);
    }
    if (!s)
        return;
    if (s->n_total && o->baseline == ERG_BASELINE_CALIBRATED)
        for (size_t i = 0; i < s->n_channels; i++)
            if (s->channels[i].in_total &&
                !isfinite(erg_calibration_idle_w(cal, s->channels[i].id)))
                warn(r,
                     "the calibration has no idle power for %s, which the total sums: its "
                     "baseline and static power count as 0 W; calibrate with the same backends",
                     s->channels[i].id);
    if (s->n_total && (s->total_flags & ERG_FLAG_BASELINE_EXCEEDS_GROSS))
        warn(r,
             "baseline_exceeds_gross: the baseline (%.4g J = %.4g W x %.4g s) exceeds the gross "
             "energy (%.4g J), so the net energy %.4g J is negative: the machine drew less than "
             "its calibrated idle power, so the load or state changed since calibration (or it "
             "was calibrated while busy). Net figures are reported unclamped; the signature's "
             "dynamic energy d is clamped at 0; recalibrate at rest with 'erg calibrate'.",
             s->total_baseline_j.mean,
             s->time_s.mean > 0 ? s->total_baseline_j.mean / s->time_s.mean : (double)NAN,
             s->time_s.mean, s->total_energy_j.mean, s->total_net_energy_j.mean);
    for (size_t i = 0; i < s->n_channels; i++)
        if (s->channels[i].state == ERG_READING_BELOW_RESOLUTION) {
            warn(r,
                 "%s: the window (%.3g s) is shorter than the counter's update period, so it "
                 "has no figure: repeat short work inside one window with --min-window S "
                 "(a second or more)",
                 s->channels[i].id, s->time_s.mean);
            break;
        }
}

int erg_protocol_run(erg_meter *m, const erg_protocol_options *o, erg_protocol_result **outp,
                     erg_diag *diag)
{
    if (outp)
        *outp = NULL;
    if (!outp)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol: NULL result");
    int rc = check_options(m, o, diag);
    if (rc != ERG_OK)
        return rc;
    const char *root = o->root; /* NULL: erg__fsroot_read takes $ERG_ROOT, else "/" */
    erg_protocol_result *r = calloc(1, sizeof *r);
    erg_measurement *ok = NULL, *cur = calloc(1, sizeof *cur);
    size_t nok = 0; /* measurements in ok */
    erg_monitor *mon = NULL;
    if (!r || !cur || !(r->per_run = calloc(o->runs, sizeof *r->per_run)) ||
        !(ok = calloc(o->runs, sizeof *ok))) {
        free(cur);
        free(ok);
        erg_protocol_result_free(r);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    r->runs_requested = o->runs;
    r->baseline = o->baseline;
    r->baseline_power_w = o->baseline == ERG_BASELINE_CALIBRATED ? o->calibration->idle_power_w
                          : o->baseline == ERG_BASELINE_FIXED_W  ? o->baseline_w
                                                                 : 0.0;
    r->attribution = (erg_attribution){NAN, NAN, ERG_GRADE_ESTIMATOR};
    if (o->command) {
        size_t n = 0;
        while (o->command[n])
            n++;
        if ((r->command = calloc(n + 1, sizeof *r->command)))
            for (size_t i = 0; i < n; i++)
                r->command[i] = strdup(o->command[i]);
    }
    double t0 = mono_s();
    rc = erg_monitor_open(m, &mon, diag);
    if (rc != ERG_OK)
        goto fail;
    /* the stability wait */
    if (o->stable) {
        erg_stability_options so = o->stability;
        struct stable_hook h = {o, t0};
        if (!so.progress && o->progress) {
            so.progress = stable_progress;
            so.progress_ud = &h;
        }
        if (!so.interrupted) {
            so.interrupted = o->interrupted;
            so.interrupt_ud = o->interrupt_ud;
        }
        r->stability_checked = 1;
        int s = erg_wait_stable(m, o->calibration, &so, &r->stability, diag);
        if (s == ERG_EINTR) {
            r->stop_status = ERG_EINTR;
            goto summarise;
        }
        if (s != ERG_OK) {
            rc = s;
            goto fail;
        }
        if (!r->stability.stable)
            warn(r, "not stable: %s; measured anyway (waited for %s)", r->stability.reason,
                 r->stability.waiting_for);
        else if (r->stability.estimator_only)
            warn(r, "stability judged from the estimator alone (modelled CPU load; no power "
                    "counter and no temperature sensor here): a steady load, not a thermal "
                    "steady state");
    }
    /* settle: the first windows must not carry erg's own start-up (threads libraries start) */
    if (o->settle_max_s > 0) {
        double s0 = mono_s(), frac = NAN;
        do {
            struct rusage a, b;
            getrusage(RUSAGE_SELF, &a);
            double w0 = mono_s();
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
            getrusage(RUSAGE_SELF, &b);
            double dt = mono_s() - w0;
            frac = (tv_s(b.ru_utime) - tv_s(a.ru_utime) + tv_s(b.ru_stime) - tv_s(a.ru_stime)) /
                   (dt > 0 ? dt : 0.02);
        } while (frac >= 0.02 && mono_s() - s0 < o->settle_max_s && !stopped(o));
        r->settle_s = mono_s() - s0;
        r->settle_self_cpu = frac;
    }
    /* warm-up: run, not measured */
    for (size_t k = 0; k < o->warmup; k++) {
        erg_run_outcome oc = {0, NAN, NAN, 0};
        if (stopped(o)) {
            r->stop_status = ERG_EINTR;
            goto summarise;
        }
        int s = o->run(o->run_ud, &oc);
        if (s != ERG_OK) {
            r->stop_status = s;
            goto summarise;
        }
        report(o, ERG_PHASE_WARMUP, k + 1, o->warmup, t0, NAN, NAN, NULL);
    }
    if (o->timeline_period_s > 0 &&
        erg__timeline_start(m, o->timeline_period_s, &r->timeline) != ERG_OK) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "cannot start the timeline thread");
        goto fail;
    }
    double share_cmd = 0.0, share_machine = 0.0;
    int share_known = 1;
    for (size_t k = 0; k < o->runs; k++) {
        if (k > 0 && o->cooldown_s > 0 && sleep_or_stop(o, o->cooldown_s)) {
            r->stop_status = ERG_EINTR;
            break;
        }
        if (stopped(o)) {
            r->stop_status = ERG_EINTR;
            break;
        }
        erg__timeline_set_run(r->timeline, k + 1);
        erg_run_record *rec = &r->per_run[k];
        memset(rec, 0, sizeof *rec);
        rec->energy_j = NAN;
        struct rusage self0, kids0, self1, kids1;
        double busy0 = machine_busy_s(root);
        getrusage(RUSAGE_SELF, &self0);
        getrusage(RUSAGE_CHILDREN, &kids0);
        /* a window that cannot begin gives no figure: the run is recorded, never summarised */
        int began = erg_window_begin(mon, "run", NULL) == ERG_OK;
        /* the window's length on the meter's clock: the one that stamps its readings */
        double w0 = erg_meter_now_s(m), user = 0, sys = 0;
        int user_known = 1, stop = 0;
        erg_run_outcome oc;
        size_t reps = 0;
        do {
            oc = (erg_run_outcome){0, NAN, NAN, 0};
            int s = o->run(o->run_ud, &oc);
            if (s != ERG_OK) {
                r->stop_status = s;
                stop = 1;
                break;
            }
            reps++;
            rec->flags |= oc.flags;
            if (isfinite(oc.user_cpu_s) && isfinite(oc.system_cpu_s)) {
                user += oc.user_cpu_s;
                sys += oc.system_cpu_s;
            } else {
                user_known = 0;
            }
            if (oc.status != 0)
                break;
            if (reps < o->max_repetitions && erg_meter_now_s(m) - w0 < o->min_window_s &&
                stopped(o)) {
                r->stop_status = ERG_EINTR;
                stop = 1;
                break;
            }
        } while (reps < o->max_repetitions && erg_meter_now_s(m) - w0 < o->min_window_s);
        int ended = 0;
        if (began) {
            if (stop) {
                rc = erg_window_cancel(mon, "run"); /* began above: fails only on a bug */
                if (rc != ERG_OK) {
                    rc = erg_diag_set(diag, rc, NULL, "cannot cancel the run window");
                    goto fail;
                }
            } else
                ended = erg_window_end(mon, "run", o->extra_busy_s * (double)(reps ? reps : 1), cur,
                                       NULL) == ERG_OK;
        }
        getrusage(RUSAGE_SELF, &self1);
        getrusage(RUSAGE_CHILDREN, &kids1);
        double busy1 = machine_busy_s(root);
        if (stop) {
            if (r->stop_status == ERG_EINTR)
                break; /* as perf stat -r: the runs completed are reported, this one is not */
            /* the work could not run at all: record the attempt */
            rec->status = -1;
            rec->begin_failed = !began;
            r->runs_attempted = k + 1;
            break;
        }
        r->runs_attempted = k + 1;
        double kreps = (double)(reps ? reps : 1);
        rec->status = oc.status;
        rec->repetitions = reps;
        if (!user_known) {
            user = tv_s(kids1.ru_utime) - tv_s(kids0.ru_utime);
            sys = tv_s(kids1.ru_stime) - tv_s(kids0.ru_stime);
        }
        rec->user_cpu_s = user / kreps;
        rec->system_cpu_s = sys / kreps;
        rec->erg_cpu_s = (tv_s(self1.ru_utime) - tv_s(self0.ru_utime) + tv_s(self1.ru_stime) -
                          tv_s(self0.ru_stime)) /
                         kreps;
        rec->machine_cpu_s = (busy1 - busy0) / kreps;
        r->run_flags |= rec->flags;
        if (!ended) {
            rec->begin_failed = 1;
            rec->time_s = (erg_meter_now_s(m) - w0) / kreps;
            continue;
        }
        divide(cur, reps);
        rec->time_s = cur->time_s;
        rec->energy_j = cur->total_energy_j;
        rec->grade = cur->total_grade;
        rec->has_total = cur->n_total > 0;
        if (rec->status == 0) {
            ok[nok++] = *cur; /* the run's readings move into ok; cur starts empty */
            memset(cur, 0, sizeof *cur);
            if (isfinite(rec->machine_cpu_s) && rec->machine_cpu_s >= 0) {
                share_cmd += rec->user_cpu_s + rec->system_cpu_s;
                share_machine += rec->machine_cpu_s;
            } else {
                share_known = 0;
            }
        }
        report(o, ERG_PHASE_RUN, k + 1, o->runs, t0, rec->time_s, rec->energy_j, NULL);
    }
    erg__timeline_stop(r->timeline);
    r->runs_ok = nok;
    if (nok) {
        rc = erg_summarize(ok, nok, o->baseline, o->calibration, o->baseline_w, &r->summary, diag);
        if (rc != ERG_OK)
            goto fail;
        rc = erg_summary_set_floors(r->summary, m);
        if (rc != ERG_OK) {
            rc = erg_diag_set(diag, rc, NULL, "cannot set the summary's floors");
            goto fail;
        }
        double *u = malloc(3 * nok * sizeof *u);
        if (u) {
            size_t j = 0;
            for (size_t k = 0; k < r->runs_attempted; k++) {
                const erg_run_record *rec = &r->per_run[k];
                if (rec->status == 0 && !rec->begin_failed) {
                    u[j] = rec->user_cpu_s;
                    u[nok + j] = rec->system_cpu_s;
                    u[2 * nok + j] = rec->erg_cpu_s;
                    j++;
                }
            }
            r->user_cpu_s = erg_mean_sd_of(u, nok);
            r->system_cpu_s = erg_mean_sd_of(u + nok, nok);
            r->erg_cpu_s = erg_mean_sd_of(u + 2 * nok, nok);
            free(u);
        }
        if (share_known && share_machine > 0) {
            double share = share_cmd / share_machine;
            r->attribution.cpu_share = share > 1 ? 1.0 : share;
            if (r->summary->n_total)
                r->attribution.attributed_energy_j =
                    r->attribution.cpu_share * r->summary->total_net_energy_j.mean;
        }
    } else {
        r->user_cpu_s = r->system_cpu_s = r->erg_cpu_s = erg_mean_sd_of(NULL, 0);
    }
    goto summarise_tail;
summarise:
    r->user_cpu_s = r->system_cpu_s = r->erg_cpu_s = erg_mean_sd_of(NULL, 0);
summarise_tail:
    summary_warnings(o, r);
    if (r->run_flags & ERG_RUN_LEFT_CHILDREN)
        warn(r, "background children of the work outlived it in some runs: their energy after "
                "the window is not measured, their CPU time not counted, and they may disturb "
                "the next runs");
    if (r->run_flags & ERG_RUN_TIMED_OUT)
        warn(r, "some runs ran past the timeout and were stopped (status 124)");
    for (size_t k = 0; k < r->runs_attempted; k++)
        if (r->per_run[k].begin_failed && r->per_run[k].status >= 0) {
            warn(r, "run %zu: the measurement window could not begin or end: no figure", k + 1);
            break;
        }
    erg_monitor_close(mon);
    release_runs(ok, nok, cur);
    *outp = r;
    return ERG_OK;
fail:
    erg__timeline_stop(r->timeline);
    erg_monitor_close(mon);
    release_runs(ok, nok, cur);
    erg_protocol_result_free(r);
    return rc;
}

int erg_protocol_signature(const erg_protocol_result *r, const char *name, erg_signature *out,
                           int *m1_raised, erg_diag *diag)
{
    if (!r || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol_signature: NULL argument");
    if (!r->summary)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "every run failed: no signature");
    if (!name)
        name = r->command && r->command[0] ? r->command[0] : "work";
    return erg_summary_signature(r->summary, name, NULL, out, m1_raised, diag);
}
