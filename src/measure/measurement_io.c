/* SPDX-License-Identifier: MIT */
/*
 * The files a measurement writes: measurement/1 (JSON), its CSV form, the power timeline (CSV),
 * and the reader that turns a measurement/1 file back into the signature it describes.
 */
#include "erg/measure.h"

#include "core/file.h"
#include "core/json.h"
#include "measure/measure_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *stat_json(erg_mean_sd v)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "mean", num(v.mean), "sd", num(v.sd), "median",
                     num(v.median), "min", num(v.min), "max", num(v.max));
}

static json_t *flags_json(unsigned flags)
{
    json_t *a = json_array();
    for (unsigned b = 0; b < ERG_FLAG_COUNT; b++)
        if (flags & (1u << b))
            json_array_append_new(a, json_string(erg_flag_name(b)));
    return a;
}

static json_t *run_flags_json(unsigned flags)
{
    json_t *a = json_array();
    if (flags & ERG_RUN_TIMED_OUT)
        json_array_append_new(a, json_string("timed_out"));
    if (flags & ERG_RUN_LEFT_CHILDREN)
        json_array_append_new(a, json_string("left_children"));
    return a;
}

/* The sentence every output carries about scope. */
static const char scope_note[] =
    "figures are machine-wide: every process on the host and the idle draw are in them; the "
    "attribution estimates the work's share by CPU time (graded estimator)";

static json_t *to_json(const erg_protocol_result *r, int m1_raised)
{
    const erg_summary *s = r->summary;
    json_t *root = json_object();
    json_object_set_new(root, "erg", json_string("measurement/1"));
    json_t *argv = json_array();
    if (r->command)
        for (char **a = r->command; *a; a++)
            json_array_append_new(argv, json_string(*a));
    json_object_set_new(root, "command", argv);
    json_object_set_new(root, "scope", json_string("machine"));
    json_object_set_new(root, "runs", json_integer((json_int_t)r->runs_ok));
    json_object_set_new(root, "runs_attempted", json_integer((json_int_t)r->runs_attempted));
    int first_fail = 0;
    json_t *sts = json_array(), *per = json_array();
    for (size_t k = 0; k < r->runs_attempted; k++) {
        const erg_run_record *p = &r->per_run[k];
        json_array_append_new(sts, json_integer(p->status));
        if (p->status != 0 && first_fail == 0)
            first_fail = p->status;
        json_array_append_new(
            per,
            json_pack("{s:i, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:b}", "exit_status",
                      p->status, "time_s", num(p->time_s), "energy_j", num(p->energy_j), "grade",
                      p->has_total ? json_string(erg_grade_name(p->grade)) : json_null(),
                      "repetitions", (json_int_t)p->repetitions, "user_cpu_s", num(p->user_cpu_s),
                      "system_cpu_s", num(p->system_cpu_s), "erg_cpu_s", num(p->erg_cpu_s),
                      "machine_cpu_s", num(p->machine_cpu_s), "flags", run_flags_json(p->flags),
                      "window_failed", p->begin_failed));
    }
    json_object_set_new(root, "exit_status", json_integer(first_fail));
    json_object_set_new(root, "exit_statuses", sts);
    json_object_set_new(root, "per_run", per);
    json_object_set_new(root, "runs_requested", json_integer((json_int_t)r->runs_requested));
    json_object_set_new(root, "interrupted", json_boolean(r->stop_status == ERG_EINTR));
    erg_mean_sd none = erg_mean_sd_of(NULL, 0);
    json_object_set_new(root, "time_s", stat_json(s ? s->time_s : none));
    json_object_set_new(root, "user_cpu_s", stat_json(r->user_cpu_s));
    json_object_set_new(root, "system_cpu_s", stat_json(r->system_cpu_s));
    json_object_set_new(root, "erg_cpu_s", stat_json(r->erg_cpu_s));
    json_object_set_new(
        root, "settle",
        json_pack("{s:o, s:o}", "waited_s", num(r->settle_s), "self_cpu", num(r->settle_self_cpu)));
    json_t *ca = json_array();
    for (size_t i = 0; s && i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(c->id));
        json_object_set_new(o, "domain", json_string(erg_domain_name(c->domain)));
        json_object_set_new(o, "device", json_string(c->device));
        json_object_set_new(o, "grade", json_string(erg_grade_name(c->grade)));
        json_object_set_new(o, "state", json_string(erg_reading_state_name(c->state)));
        json_object_set_new(o, "reason", json_string(c->reason));
        json_object_set_new(o, "flags", flags_json(c->flags));
        json_object_set_new(o, "energy_j", stat_json(c->energy_j));
        json_object_set_new(o, "baseline_j", stat_json(c->baseline_j));
        json_object_set_new(o, "net_energy_j", stat_json(c->net_energy_j));
        json_object_set_new(o, "in_total", json_boolean(c->in_total));
        json_array_append_new(ca, o);
    }
    json_object_set_new(root, "channels", ca);
    json_t *tot = json_object(), *ids = json_array();
    json_object_set_new(tot, "energy_j", stat_json(s ? s->total_energy_j : none));
    json_object_set_new(tot, "baseline_j", stat_json(s ? s->total_baseline_j : none));
    json_object_set_new(tot, "net_energy_j", stat_json(s ? s->total_net_energy_j : none));
    json_object_set_new(tot, "flags", flags_json(s ? s->total_flags : 0));
    json_object_set_new(
        tot, "grade", s && s->n_total ? json_string(erg_grade_name(s->total_grade)) : json_null());
    for (size_t i = 0; s && s->n_total && i < s->n_channels; i++)
        if (s->channels[i].in_total)
            json_array_append_new(ids, json_string(s->channels[i].id));
    json_object_set_new(tot, "channels", ids);
    json_object_set_new(tot, "reason", json_string(s ? s->total_reason : "every run failed"));
    json_object_set_new(tot, "static_power_w",
                        num(s && s->n_total ? s->static_power_w : (double)NAN));
    json_object_set_new(tot, "energy_floor_j", num(s ? s->energy_floor_j : (double)NAN));
    json_object_set_new(tot, "time_floor_s", num(s ? s->time_floor_s : (double)NAN));
    /* one run has an unknown variance: comparisons use the meters' floor, and say so */
    json_object_set_new(tot, "sd_source", json_string(s && s->runs > 1 ? "runs" : "meter_floor"));
    json_object_set_new(root, "total", tot);
    json_object_set_new(root, "baseline",
                        json_pack("{s:s, s:o}", "source", erg_baseline_source_name(r->baseline),
                                  "power_w", num(r->baseline_power_w)));
    json_object_set_new(root, "attribution",
                        json_pack("{s:s, s:o, s:o, s:s, s:s}", "method", "cpu_time_share",
                                  "cpu_share", num(r->attribution.cpu_share), "energy_j",
                                  num(r->attribution.attributed_energy_j), "grade",
                                  erg_grade_name(r->attribution.grade), "note", scope_note));
    if (r->stability_checked)
        json_object_set_new(root, "stable",
                            json_pack("{s:b, s:b, s:f, s:s, s:s}", "reached", r->stability.stable,
                                      "estimator_only", r->stability.estimator_only, "waited_s",
                                      r->stability.waited_s, "waiting_for",
                                      r->stability.waiting_for, "reason", r->stability.reason));
    if (s && s->n_total && s->total_grade == ERG_GRADE_ESTIMATOR)
        json_object_set_new(root, "note",
                            json_string("the total rests on the estimator (no live "
                                        "hardware counter for the CPU): it is an "
                                        "estimate"));
    json_t *wa = json_array();
    for (size_t k = 0; k < r->n_warnings; k++)
        json_array_append_new(wa, json_string(r->warnings[k]));
    json_object_set_new(root, "warnings", wa);
    if (m1_raised)
        json_object_set_new(root, "signature_note",
                            json_string("var_E raised to s^2 var_T (Axiom M1)"));
    return root;
}

int erg_protocol_write_json(const char *path, const erg_protocol_result *r, int m1_raised,
                            erg_diag *diag)
{
    if (!path || !r)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol_write_json: NULL argument");
    json_t *root = to_json(r, m1_raised);
    if (!root)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    int rc = erg__json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10), diag);
    json_decref(root);
    return rc;
}

/* A growing text buffer. */
struct buf {
    char *p;
    size_t n, cap;
    int oom;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)w;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* A CSV number: empty when unknown. */
static void put_num(struct buf *b, double v)
{
    if (isfinite(v))
        put(b, ",%.9g", v);
    else
        put(b, ",");
}

static void put_flags(struct buf *b, unsigned flags)
{
    put(b, ",");
    const char *sep = "";
    for (unsigned k = 0; k < ERG_FLAG_COUNT; k++)
        if (flags & (1u << k)) {
            put(b, "%s%s", sep, erg_flag_name(k));
            sep = ";";
        }
}

static int flush(struct buf *b, const char *path, erg_diag *diag)
{
    if (b->oom) {
        free(b->p);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    int rc = erg__write_file_atomic(path, b->p ? b->p : "", b->n, diag);
    free(b->p);
    return rc;
}

int erg_protocol_write_csv(const char *path, const erg_protocol_result *r, erg_diag *diag)
{
    if (!path || !r)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "protocol_write_csv: NULL argument");
    struct buf b = {0};
    const erg_summary *s = r->summary;
    erg_mean_sd none = erg_mean_sd_of(NULL, 0), t = s ? s->time_s : none;
    put(&b, "id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,energy_j_sd,"
            "baseline_j_mean,baseline_j_sd,net_energy_j_mean,net_energy_j_sd,in_total,"
            "energy_j_median,energy_j_min,energy_j_max\n");
    for (size_t i = 0; s && i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        put(&b, "%s,%s,%s,%s,%s", c->id, erg_domain_name(c->domain), c->device,
            erg_grade_name(c->grade), erg_reading_state_name(c->state));
        put_flags(&b, c->flags);
        put_num(&b, t.mean);
        put_num(&b, t.sd);
        put_num(&b, c->energy_j.mean);
        put_num(&b, c->energy_j.sd);
        put_num(&b, c->baseline_j.mean);
        put_num(&b, c->baseline_j.sd);
        put_num(&b, c->net_energy_j.mean);
        put_num(&b, c->net_energy_j.sd);
        put(&b, ",%d", c->in_total);
        put_num(&b, c->energy_j.median);
        put_num(&b, c->energy_j.min);
        put_num(&b, c->energy_j.max);
        put(&b, "\n");
    }
    int has = s && s->n_total;
    put(&b, "total,,,%s,%s", has ? erg_grade_name(s->total_grade) : "", has ? "ok" : "no_data");
    put_flags(&b, has ? s->total_flags : 0);
    erg_mean_sd e = has ? s->total_energy_j : none, bl = has ? s->total_baseline_j : none,
                n = has ? s->total_net_energy_j : none;
    put_num(&b, t.mean);
    put_num(&b, t.sd);
    put_num(&b, e.mean);
    put_num(&b, e.sd);
    put_num(&b, bl.mean);
    put_num(&b, bl.sd);
    put_num(&b, n.mean);
    put_num(&b, n.sd);
    put(&b, ",1");
    put_num(&b, e.median);
    put_num(&b, e.min);
    put_num(&b, e.max);
    put(&b, "\n");
    return flush(&b, path, diag);
}

int erg_protocol_write_timeline(const char *path, const erg_protocol_result *r, erg_diag *diag)
{
    if (!path || !r || !r->timeline)
        return erg_diag_set(diag, ERG_EINVAL, path, "no timeline was taken");
    struct erg_timeline_view v;
    erg__timeline_view(r->timeline, &v);
    struct buf b = {0};
    put(&b, "t_s,run");
    for (size_t j = 0; j < v.n_cols; j++)
        put(&b, ",%s_w", v.ids[j]);
    put(&b, "\n");
    for (size_t i = 0; i < v.n_rows; i++) {
        put(&b, "%.6f,%zu", v.t_s[i], v.run[i]);
        for (size_t j = 0; j < v.n_cols; j++)
            put_num(&b, v.power_w[i * v.n_cols + j]);
        put(&b, "\n");
    }
    return flush(&b, path, diag);
}

int erg_protocol_timeline(const erg_protocol_result *r, size_t *n_rows, size_t *n_cols,
                          const double **t_s, const size_t **run, const double **power_w)
{
    if (!r || !r->timeline || !n_rows || !n_cols || !t_s || !run || !power_w)
        return ERG_EINVAL;
    struct erg_timeline_view v;
    erg__timeline_view(r->timeline, &v);
    *n_rows = v.n_rows;
    *n_cols = v.n_cols;
    *t_s = v.t_s;
    *run = v.run;
    *power_w = v.power_w;
    return ERG_OK;
}

const char *erg_protocol_timeline_channel(const erg_protocol_result *r, size_t j)
{
    if (!r || !r->timeline)
        return NULL;
    struct erg_timeline_view v;
    erg__timeline_view(r->timeline, &v);
    return j < v.n_cols ? v.ids[j] : NULL;
}

/* mean and sd of stats object o.key; sd NaN when null. */
static int read_stat(const json_t *o, const char *key, double *mean, double *sd, const char *path,
                     const char *jp, erg_diag *diag)
{
    const json_t *v = json_object_get(o, key);
    char sub[128];
    snprintf(sub, sizeof sub, "%s%s%s", jp, jp[0] ? "." : "", key);
    if (!json_is_object(v))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s: missing or not an object", sub);
    const json_t *m = json_object_get(v, "mean");
    if (json_is_null(m))
        return erg_diag_set(diag, ERG_EINVAL, path, "%s.mean: null: the measurement has no figure",
                            sub);
    int rc =
        erg__json_number(v, "mean", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, mean, path, sub, diag);
    if (rc != ERG_OK)
        return rc;
    *sd = NAN;
    if (json_is_number(json_object_get(v, "sd")))
        rc = erg__json_number(v, "sd", ERG_JSON_NONNEG, sd, path, sub, diag);
    return rc;
}

int erg_measurement_read_signature(const char *path, erg_signature *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "measurement_read_signature: NULL argument");
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__json_check_tag(root, "measurement", 1, path, diag);
    double t = 0, t_sd = NAN, e = 0, e_sd = NAN, s_w = 0, fe = 0, ft = 0, runs = 0;
    const json_t *tot = json_object_get(root, "total");
    if (rc == ERG_OK && !json_is_object(tot))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "total: missing or not an object");
    if (rc == ERG_OK)
        rc = read_stat(root, "time_s", &t, &t_sd, path, "", diag);
    if (rc == ERG_OK)
        rc = read_stat(tot, "energy_j", &e, &e_sd, path, "total", diag);
    if (rc == ERG_OK && json_is_number(json_object_get(tot, "static_power_w")))
        rc = erg__json_number(tot, "static_power_w", ERG_JSON_NONNEG, &s_w, path, "total", diag);
    if (rc == ERG_OK && json_is_number(json_object_get(tot, "energy_floor_j")))
        rc = erg__json_number(tot, "energy_floor_j", ERG_JSON_NONNEG, &fe, path, "total", diag);
    if (rc == ERG_OK && json_is_number(json_object_get(tot, "time_floor_s")))
        rc = erg__json_number(tot, "time_floor_s", ERG_JSON_NONNEG, &ft, path, "total", diag);
    if (rc == ERG_OK)
        rc = erg__json_number(root, "runs", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &runs, path, "",
                              diag);
    erg_grade g = ERG_GRADE_ESTIMATOR;
    const char *gs = json_string_value(json_object_get(tot, "grade"));
    if (rc == ERG_OK && (!gs || erg_grade_parse(gs, &g) != ERG_OK))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "total.grade: missing or not a grade");
    if (rc == ERG_OK) {
        erg_signature_init(out);
        const json_t *cmd = json_array_get(json_object_get(root, "command"), 0);
        const char *slash = json_string_value(cmd) ? strrchr(json_string_value(cmd), '/') : NULL;
        snprintf(out->name, sizeof out->name, "%s",
                 slash                    ? slash + 1
                 : json_string_value(cmd) ? json_string_value(cmd)
                                          : "work");
        snprintf(out->device, sizeof out->device, "host");
        out->static_power_w = s_w;
        out->time_s = t;
        out->dynamic_energy_j = fmax(0.0, e - s_w * t);
        double st = isfinite(t_sd) ? t_sd : 0.0, se = isfinite(e_sd) ? e_sd : 0.0;
        out->time_var_s2 = fmax(st * st, ft * ft);
        out->energy_var_j2 = fmax(fmax(se * se, fe * fe), s_w * s_w * out->time_var_s2);
        out->grade = g;
        out->runs = (unsigned)runs;
        rc = erg_signature_check(out, diag);
    }
    json_decref(root);
    if (rc != ERG_OK) /* the error path only: the file is read again to place the value */
        erg__json_diag_place_file(diag, path);
    return rc;
}
