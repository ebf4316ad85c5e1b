/* SPDX-License-Identifier: MIT */
/*
 * Summaries over repeated runs: gross, baseline and net energy (FECoM Section 2.4: net energy is
 * the gross energy less the stable-state energy over the same time), mean ± sample sd, and the
 * run's signature/1 (energy calculus paper Section 4.3, Axiom M1).
 */
#include "erg/measure.h"

#include "calculus/sig_json.h"
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static erg_mean_sd mean_sd(const double *x, size_t n)
{
    erg_mean_sd r = {NAN, NAN};
    if (n == 0)
        return r;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    r.mean = s / (double)n;
    double q = 0;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - r.mean) * (x[i] - r.mean);
    r.sd = n > 1 ? sqrt(q / (double)(n - 1)) : 0.0;
    return r;
}

#define MAX_RUNS_STACK 1024

int erg_summarize(const erg_measurement *runs, size_t n, erg_baseline_mode mode,
                  const erg_calibration *cal, double fixed_w, erg_summary *out, erg_diag *diag)
{
    if (!runs || !out || n == 0 || n > MAX_RUNS_STACK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "summarize: need 1 to %d runs", MAX_RUNS_STACK);
    if (mode == ERG_BASELINE_CALIBRATED && !cal)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "calibrated baseline needs a calibration");
    if (mode == ERG_BASELINE_FIXED_W && !(fixed_w >= 0 && isfinite(fixed_w)))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "baseline power must be finite and >= 0");
    for (size_t k = 1; k < n; k++)
        if (runs[k].n_channels != runs[0].n_channels)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "runs come from different meters");
    memset(out, 0, sizeof *out);
    static _Thread_local double g[MAX_RUNS_STACK], b[MAX_RUNS_STACK], net[MAX_RUNS_STACK];
    out->runs = n;
    for (size_t k = 0; k < n; k++)
        g[k] = runs[k].time_s;
    out->time_s = mean_sd(g, n);
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
            if (strcmp(r->id, c->id) != 0)
                return erg_diag_set(diag, ERG_EINVAL, NULL, "runs come from different meters");
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
            net[k] = g[k] - b[k];
        }
        if (c->state == ERG_READING_OK) {
            c->energy_j = mean_sd(g, n);
            c->baseline_j = mean_sd(b, n);
            c->net_energy_j = mean_sd(net, n);
            if (c->baseline_j.mean > c->energy_j.mean)
                c->flags |= ERG_FLAG_BASELINE_EXCEEDS_GROSS;
        } else {
            c->energy_j = c->baseline_j = c->net_energy_j = (erg_mean_sd){NAN, NAN};
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
    for (size_t i = 0; i < out->n_channels; i++)
        if (same && runs[0].channels[i].in_total) {
            size_t len = strlen(out->channels[i].id);
            memcpy(out->total_ids[out->n_total], out->channels[i].id, len + 1);
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
        out->n_total = 0;
        out->total_flags = 0;
        out->total_energy_j = out->total_baseline_j = out->total_net_energy_j =
            (erg_mean_sd){NAN, NAN};
        out->total_grade = ERG_GRADE_ESTIMATOR;
        out->static_power_w = 0.0;
        return ERG_OK;
    }
    if (!cal && mode == ERG_BASELINE_FIXED_W)
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
        net[k] = g[k] - base;
    }
    out->total_energy_j = mean_sd(g, n);
    out->total_baseline_j = mean_sd(b, n);
    out->total_net_energy_j = mean_sd(net, n);
    if (out->total_baseline_j.mean > out->total_energy_j.mean)
        out->total_flags |= ERG_FLAG_BASELINE_EXCEEDS_GROSS;
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
    out->dynamic_energy_j = E - s->static_power_w * T;
    if (out->dynamic_energy_j < 0)
        out->dynamic_energy_j = 0.0;
    out->time_var_s2 = s->time_s.sd * s->time_s.sd;
    out->energy_var_j2 = s->total_energy_j.sd * s->total_energy_j.sd;
    double floor_j2 = s->static_power_w * s->static_power_w * out->time_var_s2;
    int raised = 0;
    if (out->energy_var_j2 < floor_j2) {
        out->energy_var_j2 = floor_j2;
        raised = 1;
    }
    if (m1_raised)
        *m1_raised = raised;
    out->grade = s->total_grade;
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
    json_t *body = erg__signature_to_json(sig), *root = json_object();
    if (!body || !root) {
        json_decref(body);
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    json_object_set_new(root, "erg", json_string("signature/1"));
    json_object_update(root, body);
    json_decref(body);
    unsigned flags = s->total_flags;
    json_t *ids = json_array(), *fl = json_array();
    for (unsigned b = 0; b < ERG_FLAG_COUNT; b++)
        if (flags & (1u << b))
            json_array_append_new(fl, json_string(erg_flag_name(b)));
    for (size_t i = 0; i < s->n_total; i++)
        json_array_append_new(ids, json_string(s->total_ids[i]));
    json_object_set_new(root, "flags", fl);
    json_object_set_new(root, "channels", ids);
    int rc = erg__json_dump_file(
        root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}
