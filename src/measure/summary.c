/* SPDX-License-Identifier: MIT */
/*
 * Summaries over repeated runs: gross, baseline and net energy (FECoM Section 2.4: net energy is
 * the gross energy less the stable-state energy over the same time), mean ± sample sd, and the
 * run's signature/1 (energy calculus paper Section 4.3, Axiom M1).
 */
#include "erg/measure.h"

#include "calculus/sig_json.h"
#include "core/json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

erg_mean_sd erg_mean_sd_of(const double *x, size_t n)
{
    erg_mean_sd r = {NAN, NAN, NAN, NAN, NAN};
    if (n == 0 || !x)
        return r;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    r.mean = s / (double)n;
    double q = 0;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - r.mean) * (x[i] - r.mean);
    /* one run: the variance is unknown, not 0 */
    r.sd = n > 1 ? sqrt(q / (double)(n - 1)) : (double)NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) {
        r.median = r.min = r.max = NAN;
        return r;
    }
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    r.min = c[0];
    r.max = c[n - 1];
    r.median = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return r;
}

static const erg_mean_sd no_figure = {NAN, NAN, NAN, NAN, NAN};

void erg_summary_free(erg_summary *s)
{
    if (!s)
        return;
    free(s->channels);
    free(s);
}

/* Does the baseline exceed the gross energy? Only beyond rounding: a machine whose estimator reads
 * exactly its calibrated power (a saturated CPU) gives a baseline equal to the gross energy up to
 * the last bits of a double, which is no change of state (it was reported as one). */
static int exceeds(double baseline_j, double gross_j)
{
    return baseline_j - gross_j > 1e-9 * fmax(fabs(baseline_j), fabs(gross_j));
}

/* gross - baseline, with the cancellation residue of two figures computed along different paths
 * (a meter's sum of increments against idle power x time) set to 0: a difference within a few
 * ulps of the operands is below their own resolution, not energy (it would print as 1.8e-15 J). */
static double net_of(double gross, double base)
{
    double d = gross - base;
    return fabs(d) <= 8 * DBL_EPSILON * fmax(fabs(gross), fabs(base)) ? 0.0 : d;
}

int erg_summarize(const erg_measurement *runs, size_t n, erg_baseline_mode mode,
                  const erg_calibration *cal, double fixed_w, erg_summary **outp, erg_diag *diag)
{
    if (outp)
        *outp = NULL;
    if (!runs || !outp || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "summarize: need at least 1 run");
    if (mode == ERG_BASELINE_CALIBRATED && !cal)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "calibrated baseline needs a calibration");
    if (mode == ERG_BASELINE_FIXED_W && !(fixed_w >= 0 && isfinite(fixed_w)))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "baseline power must be finite and >= 0");
    for (size_t k = 1; k < n; k++)
        if (runs[k].n_channels != runs[0].n_channels)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "runs come from different meters");
    erg_summary *out = calloc(1, sizeof *out);
    double *g = malloc(3 * n * sizeof *g);
    if (!out || !g || !(out->channels = calloc(runs[0].n_channels + 1, sizeof *out->channels))) {
        free(g);
        erg_summary_free(out);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    double *b = g + n, *net = g + 2 * n;
    out->runs = n;
    for (size_t k = 0; k < n; k++)
        g[k] = runs[k].time_s;
    out->time_s = erg_mean_sd_of(g, n);
    out->n_channels = runs[0].n_channels;
    for (size_t i = 0; i < out->n_channels; i++) {
        erg_channel_summary *c = &out->channels[i];
        const erg_channel_reading *r0 = &runs[0].channels[i];
        memcpy(c->id, r0->id, sizeof c->id);
        c->domain = r0->domain;
        memcpy(c->device, r0->device, sizeof c->device);
        c->grade = r0->grade;
        c->state = ERG_READING_OK;
        c->in_total = 1;
        double idle = mode == ERG_BASELINE_CALIBRATED ? erg_calibration_idle_w(cal, c->id) : 0.0;
        if (!isfinite(idle))
            idle = 0.0;
        for (size_t k = 0; k < n; k++) {
            const erg_channel_reading *r = &runs[k].channels[i];
            if (strcmp(r->id, c->id) != 0) {
                free(g);
                erg_summary_free(out);
                return erg_diag_set(diag, ERG_EINVAL, NULL, "runs come from different meters");
            }
            c->flags |= r->flags;
            c->in_total &= r->in_total;
            if (r->state != ERG_READING_OK && c->state == ERG_READING_OK) {
                c->state = r->state;
                memcpy(c->reason, r->reason, sizeof c->reason);
            }
            if (c->state == ERG_READING_OK && r->reason[0] && !c->reason[0])
                memcpy(c->reason, r->reason, sizeof c->reason);
            g[k] = r->energy_j;
            b[k] = idle * runs[k].time_s;
            net[k] = net_of(g[k], b[k]);
        }
        if (c->state == ERG_READING_OK) {
            c->energy_j = erg_mean_sd_of(g, n);
            c->baseline_j = erg_mean_sd_of(b, n);
            c->net_energy_j = erg_mean_sd_of(net, n);
            if (exceeds(c->baseline_j.mean, c->energy_j.mean))
                c->flags |= ERG_FLAG_BASELINE_EXCEEDS_GROSS;
        } else {
            c->energy_j = c->baseline_j = c->net_energy_j = no_figure;
            c->in_total = 0;
        }
    }
    /* the total: the same channels summed in every run */
    int same = 1;
    for (size_t k = 1; k < n && same; k++)
        for (size_t i = 0; i < out->n_channels; i++)
            if (runs[k].channels[i].in_total != runs[0].channels[i].in_total)
                same = 0;
    out->total_grade = ERG_GRADE_HW_SHUNT;
    double s_w = 0.0;
    for (size_t i = 0; i < out->n_channels; i++) {
        if (!(same && runs[0].channels[i].in_total)) {
            out->channels[i].in_total = 0;
            continue;
        }
        out->channels[i].in_total = 1;
        out->n_total++;
        out->total_flags |= out->channels[i].flags & ~(unsigned)ERG_FLAG_BASELINE_EXCEEDS_GROSS;
        out->total_grade = erg_grade_weakest(out->total_grade, out->channels[i].grade);
        if (cal) {
            double w = erg_calibration_idle_w(cal, out->channels[i].id);
            if (isfinite(w))
                s_w += w;
        }
    }
    if (!same || out->n_total == 0) {
        for (size_t i = 0; i < out->n_channels; i++)
            out->channels[i].in_total = 0;
        out->n_total = 0;
        out->total_flags = 0;
        /* a total a run's meter refused (incomplete) stays refused, and says why */
        for (size_t k = 0; k < n; k++) {
            out->total_flags |= runs[k].total_flags;
            if (!out->total_reason[0] && runs[k].total_reason[0])
                snprintf(out->total_reason, sizeof out->total_reason, "%s", runs[k].total_reason);
        }
        if (!same && !out->total_reason[0])
            snprintf(out->total_reason, sizeof out->total_reason,
                     "the runs summed different channels");
        out->total_energy_j = out->total_baseline_j = out->total_net_energy_j = no_figure;
        out->total_grade = ERG_GRADE_ESTIMATOR;
        out->static_power_w = 0.0;
        free(g);
        *outp = out;
        return ERG_OK;
    }
    /* --baseline W states the static power: it wins over a calibration found beside it */
    if (mode == ERG_BASELINE_FIXED_W)
        s_w = fixed_w;
    out->static_power_w = s_w;
    for (size_t k = 0; k < n; k++) {
        g[k] = runs[k].total_energy_j;
        double base = 0.0;
        if (mode == ERG_BASELINE_FIXED_W)
            base = fixed_w * runs[k].time_s;
        else if (mode == ERG_BASELINE_CALIBRATED)
            for (size_t i = 0; i < out->n_channels; i++)
                if (runs[k].channels[i].in_total) {
                    double w = erg_calibration_idle_w(cal, runs[k].channels[i].id);
                    if (isfinite(w))
                        base += w * runs[k].time_s;
                }
        b[k] = base;
        net[k] = net_of(g[k], base);
    }
    out->total_energy_j = erg_mean_sd_of(g, n);
    out->total_baseline_j = erg_mean_sd_of(b, n);
    out->total_net_energy_j = erg_mean_sd_of(net, n);
    if (exceeds(out->total_baseline_j.mean, out->total_energy_j.mean))
        out->total_flags |= ERG_FLAG_BASELINE_EXCEEDS_GROSS;
    free(g);
    *outp = out;
    return ERG_OK;
}

int erg_summary_set_floors(erg_summary *s, const erg_meter *m)
{
    if (!s || !m)
        return ERG_EINVAL;
    double var_j2 = 0.0, t_max = 0.0;
    size_t nch = erg_meter_channel_count(m);
    for (size_t i = 0; i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        if (!c->in_total || s->n_total == 0)
            continue;
        for (size_t j = 0; j < nch; j++) {
            erg_channel_info info;
            if (erg_meter_channel_info(m, j, &info) != ERG_OK || strcmp(info.id, c->id) != 0)
                continue;
            double p_w = s->time_s.mean > 0 && isfinite(c->energy_j.mean)
                             ? c->energy_j.mean / s->time_s.mean
                             : 0.0;
            double upd = info.min_interval_s > 0 ? info.min_interval_s : 0.0;
            double u = (info.resolution_j > 0 ? info.resolution_j : 0.0) + p_w * upd;
            var_j2 += u * u / 6.0;
            if (upd > t_max)
                t_max = upd;
            break;
        }
    }
    s->energy_floor_j = sqrt(var_j2);
    s->time_floor_s = t_max / sqrt(6.0);
    return ERG_OK;
}

int erg_summary_signature(const erg_summary *s, const char *name, const char *device,
                          erg_signature *out, int *m1_raised, erg_diag *diag)
{
    if (!s || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "summary_signature: NULL argument");
    if (s->n_total == 0 || !isfinite(s->total_energy_j.mean))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "no total energy figure: the run has no signature");
    erg_signature_init(out);
    double T = s->time_s.mean, E = s->total_energy_j.mean;
    out->static_power_w = s->static_power_w;
    out->time_s = T;
    out->dynamic_energy_j = net_of(E, s->static_power_w * T);
    if (out->dynamic_energy_j < 0)
        out->dynamic_energy_j = 0.0;
    /* one run has no sample variance (sd NaN): the floors stand for it */
    double sd_t = isfinite(s->time_s.sd) ? s->time_s.sd : 0.0;
    double sd_e = isfinite(s->total_energy_j.sd) ? s->total_energy_j.sd : 0.0;
    out->time_var_s2 = fmax(sd_t * sd_t, s->time_floor_s * s->time_floor_s);
    out->energy_var_j2 = fmax(sd_e * sd_e, s->energy_floor_j * s->energy_floor_j);
    double floor_j2 = s->static_power_w * s->static_power_w * out->time_var_s2;
    int raised = 0;
    if (out->energy_var_j2 < floor_j2) {
        out->energy_var_j2 = floor_j2;
        raised = 1;
    }
    if (m1_raised)
        *m1_raised = raised;
    out->grade = s->total_grade;
    out->flags = s->total_flags;
    out->runs = (unsigned)s->runs;
    if (name)
        snprintf(out->name, sizeof out->name, "%s", name);
    if (device) {
        snprintf(out->device, sizeof out->device, "%s", device);
    } else {
        /* the device of the summed channels when they share one, else the whole host */
        const char *dev = NULL;
        for (size_t i = 0; i < s->n_channels; i++)
            if (s->channels[i].in_total) {
                if (!dev)
                    dev = s->channels[i].device;
                else if (strcmp(dev, s->channels[i].device) != 0)
                    dev = "host";
            }
        snprintf(out->device, sizeof out->device, "%s", dev ? dev : "host");
    }
    return erg_signature_check(out, diag);
}

int erg_summary_write_signature(const char *path, const erg_signature *sig, const erg_summary *s,
                                erg_diag *diag)
{
    if (!path || !sig || !s)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "summary_write_signature: NULL argument");
    if (erg_signature_check(sig, diag) != ERG_OK)
        return ERG_EINVAL;
    json_t *body = erg__signature_to_json(sig);
    /* "flags" always (an empty array says the measurement raised none) */
    json_t *ids = json_array(), *fl = erg__flags_to_json(sig->flags | s->total_flags);
    int bad = !body || !ids || !fl;
    for (size_t i = 0; !bad && i < s->n_channels; i++)
        if (s->n_total && s->channels[i].in_total)
            bad |= json_array_append_new(ids, json_string(s->channels[i].id));
    if (!bad) { /* json_object_set_new takes the value over, even when it fails */
        bad = json_object_set_new(body, "flags", fl) != 0;
        fl = NULL;
        bad |= json_object_set_new(body, "channels", ids) != 0;
        ids = NULL;
    }
    if (bad) {
        json_decref(fl);
        json_decref(ids);
        json_decref(body);
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the signature");
    }
    return erg__signature_file_dump(path, body, diag);
}
