/* SPDX-License-Identifier: MIT */
/*
 * The stable state of FECoM (Rajput et al., Section 2.3): idle power and the coefficient of
 * variation σ/μ of windowed power at rest, per channel; the calibration file; and the stability
 * wait (temperatures below thresholds, CV of the last 20 power samples ≤ the calibrated CV).
 */
#include "erg/measure.h"
#include "erg/stats.h"

#include "core/json.h"
#include "core/path.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

erg_calibration *erg_calibration_new(size_t n_channels)
{
    erg_calibration *cal = calloc(1, sizeof *cal);
    if (!cal || !(cal->channels = calloc(n_channels + 1, sizeof *cal->channels))) {
        free(cal);
        return NULL;
    }
    cal->n_channels = n_channels;
    for (size_t i = 0; i < n_channels; i++)
        cal->channels[i].utilisation = NAN;
    return cal;
}

void erg_calibration_free(erg_calibration *cal)
{
    if (!cal)
        return;
    free(cal->channels);
    free(cal);
}

double erg_calibration_idle_w(const erg_calibration *cal, const char *id)
{
    if (!cal || !id)
        return NAN;
    for (size_t i = 0; i < cal->n_channels; i++)
        if (strcmp(cal->channels[i].id, id) == 0)
            return cal->channels[i].idle_power_w;
    return NAN;
}

/* Sample windowed power: k windows of window_s each; calls back with each measurement. */
struct sampler {
    erg_meter *m;
    erg_meter_snapshot *a, *b;
    erg_measurement *r;
};

static int sampler_init(struct sampler *s, erg_meter *m)
{
    s->m = m;
    s->a = erg_meter_snapshot_new(m);
    s->b = erg_meter_snapshot_new(m);
    s->r = calloc(1, sizeof *s->r);
    if (!s->a || !s->b || !s->r)
        return ERG_ENOMEM;
    int rc = erg_meter_snapshot_take(m, s->a);
    /* an empty window sizes the measurement, so that no later window allocates */
    return rc == ERG_OK ? erg_meter_diff(m, s->a, s->a, 0.0, s->r) : rc;
}

static void sampler_free(struct sampler *s)
{
    erg_meter_snapshot_free(s->a);
    erg_meter_snapshot_free(s->b);
    erg_measurement_release(s->r);
    free(s->r);
}

/* One window: sleep, snapshot, diff against the previous end. Returns the meter's status
 * (ERG_EINVAL only when the snapshots are not this meter's: a bug, reported rather than hidden). */
static int sampler_next(struct sampler *s, double window_s)
{
    sleep_s(window_s);
    int rc = erg_meter_snapshot_take(s->m, s->b);
    if (rc == ERG_OK)
        rc = erg_meter_diff(s->m, s->a, s->b, 0.0, s->r);
    if (rc != ERG_OK)
        return rc;
    erg_meter_snapshot *t = s->a;
    s->a = s->b;
    s->b = t;
    return ERG_OK;
}

int erg_calibrate(erg_meter *m, double duration_s, double window_s, erg_calibration **outp,
                  erg_diag *diag)
{
    return erg_calibrate_with(m, duration_s, window_s, NULL, outp, diag);
}

int erg_calibrate_with(erg_meter *m, double duration_s, double window_s,
                       const erg_calibrate_hooks *hooks, erg_calibration **outp, erg_diag *diag)
{
    if (outp)
        *outp = NULL;
    /* the window count becomes a size_t and a window a time_t: both bounded (a week at most) */
    if (!m || !outp || !(window_s >= 0.01) || !(duration_s >= 2 * window_s) ||
        !(duration_s <= ERG_CAL_MAX_DURATION_S))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "calibration needs window >= 0.01 s and 2 windows <= duration <= %g s",
                            ERG_CAL_MAX_DURATION_S);
    struct sampler s;
    if (sampler_init(&s, m) != ERG_OK) {
        sampler_free(&s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    size_t nch = erg_meter_channel_count(m);
    erg_running *run = calloc(nch + 1, sizeof *run);
    int *in_total = calloc(nch + 1, sizeof *in_total);
    erg_calibration *out = erg_calibration_new(nch);
    if (!run || !in_total || !out) {
        free(run);
        free(in_total);
        erg_calibration_free(out);
        sampler_free(&s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    size_t k = (size_t)(duration_s / window_s);
    double t0 = mono_s();
    for (size_t w = 0; w < k; w++) {
        int rc = sampler_next(&s, window_s);
        if (rc != ERG_OK) {
            sampler_free(&s);
            free(run);
            free(in_total);
            erg_calibration_free(out);
            return erg_diag_set(diag, rc, NULL, "calibration: reading the meter failed");
        }
        for (size_t i = 0; i < nch; i++) {
            const erg_channel_reading *r = &s.r->channels[i];
            if (r->state != ERG_READING_OK || !(s.r->time_s > 0))
                continue;
            erg_running_add(&run[i], r->energy_j / s.r->time_s);
            in_total[i] = r->in_total;
        }
        if (hooks && hooks->progress)
            hooks->progress(hooks->progress_ud, mono_s() - t0, duration_s);
        if (hooks && hooks->interrupted && hooks->interrupted(hooks->interrupt_ud)) {
            sampler_free(&s);
            free(run);
            free(in_total);
            erg_calibration_free(out);
            return erg_diag_set(diag, ERG_EINTR, NULL, "calibration interrupted after %.1f s",
                                mono_s() - t0);
        }
    }
    out->n_channels = 0;
    out->duration_s = mono_s() - t0;
    out->window_s = window_s;
    for (size_t i = 0; i < nch; i++) {
        if (run[i].n < 2)
            continue;
        erg_channel_info info;
        if (erg_meter_channel_info(m, i, &info) != ERG_OK)
            continue; /* i < the meter's channel count: cannot fail */
        erg_calibration_channel *c = &out->channels[out->n_channels++];
        snprintf(c->id, sizeof c->id, "%s", info.id);
        c->domain = info.domain;
        snprintf(c->device, sizeof c->device, "%s", info.device);
        c->idle_power_w = run[i].mean;
        c->cv = c->idle_power_w > 0 ? sqrt(erg_running_var(&run[i])) / c->idle_power_w : 0.0;
        c->samples = run[i].n;
        c->utilisation = NAN;
        if (info.kind == ERG_KIND_ESTIMATE && info.model_full_w > info.model_idle_w) {
            double u =
                (c->idle_power_w - info.model_idle_w) / (info.model_full_w - info.model_idle_w);
            c->utilisation = u < 0 ? 0.0 : u > 1 ? 1.0 : u;
            if (c->utilisation > ERG_CAL_MAX_UTILISATION)
                c->flags |= ERG_CAL_BUSY;
            if (c->utilisation >= 0.95 && c->cv < 0.01)
                c->flags |= ERG_CAL_PINNED_AT_CEILING;
        }
        if (c->cv > ERG_CAL_MAX_CV)
            c->flags |= ERG_CAL_HIGH_CV;
        out->flags |= c->flags;
        if (in_total[i])
            out->idle_power_w += c->idle_power_w;
    }
    sampler_free(&s);
    free(run);
    free(in_total);
    if (out->n_channels == 0) {
        erg_calibration_free(out);
        return erg_diag_set(diag, ERG_ENODEV, NULL, "no channel gave two power windows at rest");
    }
    *outp = out;
    return ERG_OK;
}

const char *erg_calibration_flag_name(unsigned bit)
{
    static const char *const names[ERG_CAL_FLAG_COUNT] = {"busy", "pinned_at_ceiling", "high_cv"};
    return bit < ERG_CAL_FLAG_COUNT ? names[bit] : NULL;
}

/* Append to buf at *used (snprintf semantics; *used counts what the full text needs). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t size, size_t *used,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*used < size ? buf + *used : NULL, *used < size ? size - *used : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used += (size_t)w;
}

int erg_calibration_describe(const erg_calibration *cal, char *buf, size_t size)
{
    if (buf && size)
        buf[0] = '\0';
    if (!buf)
        size = 0;
    if (!cal || !cal->flags)
        return 0;
    size_t used = 0;
    append(buf, size, &used, "the machine was not at rest during calibration:");
    const char *sep = " ";
    for (size_t i = 0; i < cal->n_channels; i++) {
        const erg_calibration_channel *c = &cal->channels[i];
        if (!c->flags)
            continue;
        append(buf, size, &used, "%s%s", sep, c->id);
        sep = "; ";
        if (c->flags & ERG_CAL_PINNED_AT_CEILING)
            append(buf, size, &used,
                   " sat at its full-load ceiling throughout (%.4g W, utilisation %.0f %%; a CV "
                   "of about 0 here is saturation, not calm): the CPU was fully busy",
                   c->idle_power_w, 100 * c->utilisation);
        else if (c->flags & ERG_CAL_BUSY)
            append(buf, size, &used,
                   " saw a mean CPU utilisation of %.0f %% (more than %.0f %%), so its idle power "
                   "%.4g W is a busy power",
                   100 * c->utilisation, 100 * ERG_CAL_MAX_UTILISATION, c->idle_power_w);
        if (c->flags & ERG_CAL_HIGH_CV)
            append(buf, size, &used, "%s power varied with a CV of %.3g (more than %.2g)",
                   (c->flags & (ERG_CAL_BUSY | ERG_CAL_PINNED_AT_CEILING)) ? ", and its" : "",
                   c->cv, ERG_CAL_MAX_CV);
    }
    if (sep[0] == ' ')
        append(buf, size, &used, " the file is flagged so");
    append(buf, size, &used,
           ". Baselines and static power from this calibration are suspect (too high when the "
           "machine was busy): stop other work and run 'erg calibrate' again.");
    return (int)used;
}

int erg_calibration_default_path(char *buf, size_t *size)
{
    return erg__xdg_path("XDG_CACHE_HOME", "erg/calibration.json", buf, size);
}

static json_t *cal_flags_json(unsigned flags)
{
    json_t *a = json_array();
    for (unsigned b = 0; b < ERG_CAL_FLAG_COUNT; b++)
        if (flags & (1u << b))
            json_array_append_new(a, json_string(erg_calibration_flag_name(b)));
    return a;
}

/* Optional "flags": an array of names; names this version does not know are ignored (a newer
 * erg may add some). */
static int cal_flags_read(const json_t *o, unsigned *flags, const char *path, const char *jp,
                          erg_diag *diag)
{
    const json_t *a = json_object_get(o, "flags");
    *flags = 0;
    if (!a)
        return ERG_OK;
    if (!json_is_array(a))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s%sflags: not an array", jp, *jp ? "." : "");
    for (size_t k = 0; k < json_array_size(a); k++) {
        const char *name = json_string_value(json_array_get(a, k));
        if (!name)
            return erg_diag_set(diag, ERG_EPARSE, path, "%s%sflags[%zu]: not a string", jp,
                                *jp ? "." : "", k);
        for (unsigned b = 0; b < ERG_CAL_FLAG_COUNT; b++)
            if (strcmp(name, erg_calibration_flag_name(b)) == 0)
                *flags |= 1u << b;
    }
    return ERG_OK;
}

int erg_calibration_write_file(const char *path, const erg_calibration *cal, erg_diag *diag)
{
    if (!path || !cal)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "calibration_write_file: NULL argument");
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "erg", json_string("calibration/1"));
    erg__json_set_number(root, "duration_s", cal->duration_s);
    erg__json_set_number(root, "window_s", cal->window_s);
    erg__json_set_number(root, "idle_power_w", cal->idle_power_w);
    json_object_set_new(root, "not_at_rest", json_boolean(cal->flags != 0));
    json_object_set_new(root, "flags", cal_flags_json(cal->flags));
    if (cal->flags) {
        char why[2048];
        erg_calibration_describe(cal, why, sizeof why);
        json_object_set_new(root, "warning", json_string(why));
    }
    for (size_t i = 0; i < cal->n_channels; i++) {
        const erg_calibration_channel *c = &cal->channels[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(c->id));
        json_object_set_new(o, "domain", json_string(erg_domain_name(c->domain)));
        json_object_set_new(o, "device", json_string(c->device));
        erg__json_set_number(o, "idle_power_w", c->idle_power_w);
        erg__json_set_number(o, "cv", c->cv);
        json_object_set_new(o, "samples", json_integer((json_int_t)c->samples));
        if (isfinite(c->utilisation))
            erg__json_set_number(o, "utilisation", c->utilisation);
        json_object_set_new(o, "flags", cal_flags_json(c->flags));
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "channels", arr);
    int rc = erg__json_dump_file(root, path, JSON_INDENT(2), diag);
    json_decref(root);
    return rc;
}

int erg_calibration_read_file(const char *path, erg_calibration **out, erg_diag *diag)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "calibration_read_file: NULL argument");
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    json_t *arr0 = json_object_get(root, "channels");
    erg_calibration *cal = erg_calibration_new(json_is_array(arr0) ? json_array_size(arr0) : 0);
    if (!cal) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    cal->n_channels = 0;
    rc = erg__json_check_tag(root, "calibration", 1, path, diag);
    if (rc == ERG_OK)
        rc =
            erg__json_number(root, "duration_s", ERG_JSON_NONNEG, &cal->duration_s, path, "", diag);
    if (rc == ERG_OK)
        rc = erg__json_number(root, "window_s", ERG_JSON_NONNEG, &cal->window_s, path, "", diag);
    if (rc == ERG_OK)
        rc = erg__json_number(root, "idle_power_w", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                              &cal->idle_power_w, path, "", diag);
    unsigned top_flags = 0;
    if (rc == ERG_OK)
        rc = cal_flags_read(root, &top_flags, path, "", diag);
    json_t *arr = json_object_get(root, "channels");
    if (rc == ERG_OK && !json_is_array(arr))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "channels: missing or not an array");
    for (size_t i = 0; rc == ERG_OK && i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        char jp[64];
        snprintf(jp, sizeof jp, "channels[%zu]", i);
        erg_calibration_channel *c = &cal->channels[cal->n_channels];
        char dom[32] = "";
        double samples = 0;
        if (!json_is_object(o))
            rc = erg_diag_set(diag, ERG_EPARSE, path, "%s: not an object", jp);
        if (rc == ERG_OK)
            rc = erg__json_string(o, "id", ERG_JSON_REQUIRED, c->id, sizeof c->id, path, jp, diag);
        if (rc == ERG_OK)
            rc = erg__json_string(o, "domain", 0, dom, sizeof dom, path, jp, diag);
        if (rc == ERG_OK)
            rc = erg__json_string(o, "device", 0, c->device, sizeof c->device, path, jp, diag);
        if (rc == ERG_OK)
            rc = erg__json_number(o, "idle_power_w", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                                  &c->idle_power_w, path, jp, diag);
        if (rc == ERG_OK)
            rc = erg__json_number(o, "cv", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &c->cv, path, jp,
                                  diag);
        if (rc == ERG_OK)
            rc = erg__json_number(o, "samples", ERG_JSON_NONNEG, &samples, path, jp, diag);
        c->utilisation = NAN;
        if (rc == ERG_OK && json_object_get(o, "utilisation"))
            rc = erg__json_number(o, "utilisation", ERG_JSON_NONNEG, &c->utilisation, path, jp,
                                  diag);
        if (rc == ERG_OK)
            rc = cal_flags_read(o, &c->flags, path, jp, diag);
        cal->flags |= c->flags;
        c->samples = (size_t)samples;
        c->domain = ERG_DOMAIN_SYSTEM;
        for (int d = 0; d <= ERG_DOMAIN_SYSTEM; d++)
            if (strcmp(dom, erg_domain_name((erg_domain)d)) == 0)
                c->domain = (erg_domain)d;
        cal->n_channels++;
    }
    cal->flags |= top_flags;
    json_decref(root);
    if (rc != ERG_OK) {
        erg__json_diag_place_file(diag, path); /* the error path only: the file read again */
        erg_calibration_free(cal);
        return rc;
    }
    *out = cal;
    return ERG_OK;
}

void erg_stability_options_init(erg_stability_options *o)
{
    if (!o)
        return;
    o->cpu_max_c = 55.0; /* FECoM Section 3.5: 55 °C CPU, 40 °C GPU */
    o->gpu_max_c = 40.0;
    o->timeout_s = 120.0;
    o->sample_s = 0.0;
    o->n_samples = 20;
    o->progress = NULL;
    o->progress_ud = NULL;
    o->interrupted = NULL;
    o->interrupt_ud = NULL;
}

int erg_wait_stable(erg_meter *m, const erg_calibration *cal, const erg_stability_options *o,
                    erg_stability_result *out, erg_diag *diag)
{
    erg_stability_options def;
    if (!o) {
        erg_stability_options_init(&def);
        o = &def;
    }
    if (!m || !cal || !out || o->n_samples < 2 || o->n_samples > 10000 || !(o->timeout_s >= 0))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "wait_stable: bad arguments");
    double sample_s = o->sample_s > 0 ? o->sample_s : (cal->window_s > 0 ? cal->window_s : 0.1);
    size_t nch = erg_meter_channel_count(m);
    int *cal_idx = calloc(nch + 1, sizeof *cal_idx);
    if (!cal_idx)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < nch; i++) {
        erg_channel_info info;
        cal_idx[i] = -1;
        if (erg_meter_channel_info(m, i, &info) != ERG_OK)
            continue; /* i < the meter's channel count: cannot fail */
        for (size_t k = 0; k < cal->n_channels; k++)
            if (strcmp(cal->channels[k].id, info.id) == 0)
                cal_idx[i] = (int)k;
    }
    double *ring = calloc(nch * o->n_samples + 1, sizeof *ring);
    size_t *fill = calloc(nch + 1, sizeof *fill);
    double *cv_limit = calloc(nch + 1, sizeof *cv_limit);
    struct sampler s;
    memset(&s, 0, sizeof s);
    if (!ring || !fill || !cv_limit || sampler_init(&s, m) != ERG_OK) {
        free(ring);
        free(fill);
        free(cv_limit);
        free(cal_idx);
        sampler_free(&s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    memset(out, 0, sizeof *out);
    /* The limit each channel's fresh CV is held to: the calibrated CV widened by a one-sided
     * F-test at 5 % (n − 1 against m − 1 degrees of freedom), floored at the counter's resolution
     * over one window at the calibrated power (a channel calibrated at CV 0 otherwise fails on one
     * count's change). Only estimator channels compared and no temperature sensor: say so. */
    int n_compared = 0, n_estimator = 0;
    for (size_t i = 0; i < nch; i++) {
        if (cal_idx[i] < 0)
            continue;
        const erg_calibration_channel *cc = &cal->channels[cal_idx[i]];
        double df2 = cc->samples >= 2 ? (double)(cc->samples - 1) : (double)INFINITY;
        double f = erg_f_quantile(0.95, (double)(o->n_samples - 1), df2);
        double lim = cc->cv * sqrt(f);
        erg_channel_info info;
        if (erg_meter_channel_info(m, i, &info) != ERG_OK)
            memset(&info, 0, sizeof info); /* i < the channel count: cannot fail */
        if (info.resolution_j > 0 && cc->idle_power_w > 0) {
            double floor_cv = info.resolution_j / (sample_s * cc->idle_power_w);
            if (!(lim >= floor_cv))
                lim = floor_cv;
        }
        cv_limit[i] = lim;
        n_compared++;
        if (info.grade == ERG_GRADE_ESTIMATOR)
            n_estimator++;
    }
    {
        erg_temperature t[32];
        size_t nt = 0;
        if (erg_meter_temperatures(m, t, 32, &nt) != ERG_OK)
            nt = 0; /* only ERG_EINVAL (m NULL), ruled out above */
        out->estimator_only = n_compared > 0 && n_estimator == n_compared && nt == 0;
    }
    {
        /* say what the wait waits for: the thresholds and the calibrated CVs */
        size_t used = 0, size = sizeof out->waiting_for;
        append(out->waiting_for, size, &used,
               "temperatures at most %.0f °C (CPU) and %.0f °C (GPU); the CV of the last %zu "
               "power samples of %.3g s not significantly above the calibrated CV (",
               o->cpu_max_c, o->gpu_max_c, o->n_samples, sample_s);
        const char *sep = "";
        for (size_t i = 0; i < nch; i++)
            if (cal_idx[i] >= 0) {
                append(out->waiting_for, size, &used, "%s%s %.3g, limit %.3g", sep,
                       cal->channels[cal_idx[i]].id, cal->channels[cal_idx[i]].cv, cv_limit[i]);
                sep = ", ";
            }
        append(out->waiting_for, size, &used, "%s); at most %.0f s",
               sep[0] ? "" : "no calibrated channel here", o->timeout_s);
    }
    int rc = ERG_OK;
    double t0 = mono_s();
    for (;;) {
        rc = sampler_next(&s, sample_s);
        if (rc != ERG_OK) {
            snprintf(out->reason, sizeof out->reason, "reading the meter failed: %s",
                     erg_strerror(rc));
            erg_diag_set(diag, rc, NULL, "wait_stable: %s", out->reason);
            break;
        }
        char why[ERG_METER_REASON_MAX] = "";
        for (size_t i = 0; i < nch; i++) {
            const erg_channel_reading *r = &s.r->channels[i];
            if (cal_idx[i] < 0 || r->state != ERG_READING_OK || !(s.r->time_s > 0))
                continue;
            ring[i * o->n_samples + fill[i] % o->n_samples] = r->energy_j / s.r->time_s;
            fill[i]++;
        }
        int ok = 1;
        for (size_t i = 0; i < nch && ok; i++) {
            if (cal_idx[i] < 0)
                continue;
            if (fill[i] < o->n_samples) {
                ok = 0;
                snprintf(why, sizeof why, "%s: fewer than %zu power samples", s.r->channels[i].id,
                         o->n_samples);
                break;
            }
            double mu = 0, q = 0;
            for (size_t k = 0; k < o->n_samples; k++)
                mu += ring[i * o->n_samples + k];
            mu /= (double)o->n_samples;
            for (size_t k = 0; k < o->n_samples; k++) {
                double d = ring[i * o->n_samples + k] - mu;
                q += d * d;
            }
            double cv = mu > 0 ? sqrt(q / (double)(o->n_samples - 1)) / mu : 0.0;
            if (cv > cv_limit[i]) {
                ok = 0;
                snprintf(why, sizeof why,
                         "%s: power CV %.4f above the calibrated %.4f (limit %.4f, F-test at 5 %%)",
                         s.r->channels[i].id, cv, cal->channels[cal_idx[i]].cv, cv_limit[i]);
            }
        }
        erg_temperature t[32];
        size_t nt = 0;
        if (erg_meter_temperatures(m, t, 32, &nt) != ERG_OK)
            nt = 0; /* only ERG_EINVAL (m NULL), ruled out above: no temperature to judge */
        /* a sensor above its limit is named even while power samples are still missing: it is
         * what the wait is really waiting for */
        for (size_t k = 0; k < nt; k++) {
            double lim = t[k].is_gpu ? o->gpu_max_c : o->cpu_max_c;
            if (t[k].temp_c > lim) {
                ok = 0;
                snprintf(why, sizeof why, "%s at %.1f °C, above %.1f °C", t[k].id, t[k].temp_c,
                         lim);
                break;
            }
        }
        out->waited_s = mono_s() - t0;
        if (o->progress)
            o->progress(o->progress_ud, out->waited_s, ok ? "" : why);
        if (!ok && o->interrupted && o->interrupted(o->interrupt_ud)) {
            snprintf(out->reason, sizeof out->reason, "interrupted after %.1f s: %.200s",
                     out->waited_s, why);
            rc = ERG_EINTR;
            break;
        }
        if (ok) {
            out->stable = 1;
            break;
        }
        if (out->waited_s >= o->timeout_s) {
            out->stable = 0;
            snprintf(out->reason, sizeof out->reason,
                     "gave up after %.1f s (the --stable-timeout) with %.200s", out->waited_s, why);
            break;
        }
    }
    free(ring);
    free(fill);
    free(cv_limit);
    free(cal_idx);
    sampler_free(&s);
    return rc;
}
