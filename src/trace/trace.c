/* SPDX-License-Identifier: MIT */
/*
 * From imported GPU activities to an erg schedule and a report.
 *
 * Energy accounting follows the energy calculus (arXiv 2607.11087, Section 3.3): every
 * participating device is held at its static power s for the whole makespan (gaps are idle
 * elements), overlapping activities on one device share that static power (⊕, Axiom P2), devices
 * compose cross-device (⊕multi), and dynamic energies add: E = Σ_dev s_dev·T + Σ_i d_i. Each
 * activity's T is its traced duration, taken as exact (σ²_T = 0), so σ²_E = Σ_i σ²_d_i. The totals
 * reported are erg_schedule_compose's on the very schedule `erg trace import` writes.
 */
#include "trace_internal.h"
#include "erg/stats.h"
#include "calculus/sig_json.h"

#include "core/file.h"
#include "core/json.h"
#include "core/jwrite.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cat_names[ERG_TRACE_CAT_COUNT] = {"kernel", "gpu_memcpy", "gpu_memset",
                                                           "collective"};

const char *erg_trace_category_name(erg_trace_category cat)
{
    return (unsigned)cat < ERG_TRACE_CAT_COUNT ? cat_names[cat] : "unknown";
}

int erg_trace_align_parse(const char *text, erg_trace_align *out)
{
    if (!text || !out)
        return ERG_EINVAL;
    if (strcmp(text, "none") == 0)
        *out = ERG_TRACE_ALIGN_NONE;
    else if (strcmp(text, "first-kernel") == 0)
        *out = ERG_TRACE_ALIGN_FIRST_KERNEL;
    else
        return ERG_EINVAL;
    return ERG_OK;
}

void erg_trace_set_rank_from_order(erg_trace *t, int on)
{
    if (t)
        t->rank_from_order = on ? 1 : 0;
}

erg_trace *erg_trace_new(void)
{
    erg_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    erg__strtab_init(&t->names);
    erg__strtab_init(&t->misc);
    erg__strtab_init(&t->devkeys);
    return t;
}

void erg_trace_free(erg_trace *t)
{
    if (!t)
        return;
    erg__strtab_free(&t->names);
    erg__strtab_free(&t->misc);
    erg__strtab_free(&t->devkeys);
    free(t->dev_of_key);
    free(t->acts);
    free(t->devs);
    free(t->file_rank);
    free(t->file_has_rank);
    free(t->unknown);
    free(t);
}

void erg_trace_get_stats(const erg_trace *t, erg_trace_stats *out)
{
    if (t && out)
        *out = t->stats;
}

int erg_trace_first_dropped(const erg_trace *t, const char **where, const char **why)
{
    if (!t)
        return ERG_EINVAL;
    if (!t->drop_where[0])
        return ERG_ENOENT;
    if (where)
        *where = t->drop_where;
    if (why)
        *why = t->drop_why;
    return ERG_OK;
}

int erg_trace_unknown(const erg_trace *t, size_t i, const char **name, size_t *count)
{
    if (!t || i >= t->n_unknown)
        return ERG_ERANGE;
    if (name)
        *name = erg__strtab_get(&t->misc, t->unknown[i].name);
    if (count)
        *count = t->unknown[i].count;
    return ERG_OK;
}

void erg_trace_options_init(erg_trace_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->align = ERG_TRACE_ALIGN_NONE;
    o->top_n = 10;
    o->max_start_spread_s = ERG_TRACE_MAX_START_SPREAD_S;
}

/* ---------------------------------------------------------------------------------------------- */
/* Preparation shared by the schedule and the report: alignment, device powers, activity energies.
 */

typedef struct prep {
    int64_t *start_ns;  /* per activity, relative to the first activity over all files */
    double *dyn_j;      /* dynamic energy of each activity, J */
    double *dyn_var_j2; /* its variance, J² */
    erg_grade *grade;   /* grade of each activity's figures */
    long *rule;         /* rule index or -1 (unmatched) */
    double *static_w;   /* per device */
    double *idle_w;     /* per device, NAN = same as static */
    int64_t makespan_ns;
    int64_t start_spread_ns; /* latest first activity of a file − earliest, after alignment */
    const erg_rules *rules;  /* the rules matched (rule[i] indexes rules->rules) */
} prep;

static void prep_free(prep *p)
{
    free(p->start_ns);
    free(p->dyn_j);
    free(p->dyn_var_j2);
    free(p->grade);
    free(p->rule);
    free(p->static_w);
    free(p->idle_w);
}

static int prepare(const erg_trace *t, const erg_rules *rules, const erg_trace_options *opts,
                   prep *p, erg_diag *diag)
{
    memset(p, 0, sizeof *p);
    p->rules = rules;
    if (!t || !rules)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no trace or no rules");
    erg_trace_options dflt;
    if (!opts) {
        erg_trace_options_init(&dflt);
        opts = &dflt;
    }
    size_t n = t->n_acts;
    if (n == 0) {
        char where[300];
        if (t->n_files > 1)
            snprintf(where, sizeof where, "%s and %zu more", t->first_file, t->n_files - 1);
        else
            snprintf(where, sizeof where, "%s", t->n_files ? t->first_file : "trace");
        return erg_diag_set(diag, ERG_EINVAL, where,
                            "no GPU activity (kernel, gpu_memcpy, gpu_memset) in %zu events of "
                            "%zu file%s: was the profiler run with CUDA activities on?",
                            t->stats.events, t->n_files, t->n_files == 1 ? "" : "s");
    }
    size_t nf = t->n_files ? t->n_files : 1;
    int64_t *first_kernel = malloc(nf * sizeof *first_kernel);
    int64_t *first_any = malloc(nf * sizeof *first_any);
    p->start_ns = malloc(n * sizeof *p->start_ns);
    p->dyn_j = malloc(n * sizeof *p->dyn_j);
    p->dyn_var_j2 = malloc(n * sizeof *p->dyn_var_j2);
    p->grade = malloc(n * sizeof *p->grade);
    p->rule = malloc(n * sizeof *p->rule);
    p->static_w = malloc(t->n_devs * sizeof *p->static_w);
    p->idle_w = malloc(t->n_devs * sizeof *p->idle_w);
    int st = ERG_OK;
    int32_t *memo = NULL;
    size_t *group = NULL;
    erg_grade *dev_grade = NULL;
    if (!first_kernel || !first_any || !p->start_ns || !p->dyn_j || !p->dyn_var_j2 || !p->grade ||
        !p->rule || !p->static_w || !p->idle_w) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }

    /* Alignment: per file, the shift that puts its first kernel (else first activity) at 0. */
    for (size_t f = 0; f < nf; f++)
        first_kernel[f] = first_any[f] = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        unsigned f = t->devs[a->device].file;
        if (a->start_ns < first_any[f])
            first_any[f] = a->start_ns;
        if ((a->cat == ERG_TRACE_CAT_KERNEL || a->cat == ERG_TRACE_CAT_COLLECTIVE) &&
            a->start_ns < first_kernel[f])
            first_kernel[f] = a->start_ns;
    }
    int64_t origin = INT64_MAX, end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        unsigned f = t->devs[a->device].file;
        int64_t shift = 0;
        if (opts->align == ERG_TRACE_ALIGN_FIRST_KERNEL)
            shift = first_kernel[f] != INT64_MAX ? first_kernel[f] : first_any[f];
        p->start_ns[i] = a->start_ns - shift;
        if (p->start_ns[i] < origin)
            origin = p->start_ns[i];
        if (p->start_ns[i] + a->dur_ns > end)
            end = p->start_ns[i] + a->dur_ns;
    }
    for (size_t i = 0; i < n; i++)
        p->start_ns[i] -= origin;
    p->makespan_ns = end - origin;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t f_lo = 0, f_hi = 0;
    for (size_t f = 0; f < nf; f++) {
        if (first_any[f] == INT64_MAX)
            continue; /* a file without activities */
        int64_t sh = opts->align == ERG_TRACE_ALIGN_FIRST_KERNEL
                         ? (first_kernel[f] != INT64_MAX ? first_kernel[f] : first_any[f])
                         : 0;
        int64_t v = first_any[f] - sh;
        if (v < lo) {
            lo = v;
            f_lo = f;
        }
        if (v > hi) {
            hi = v;
            f_hi = f;
        }
    }
    p->start_spread_ns = hi >= lo ? hi - lo : 0;
    /* One clock for files that start hours (or 10⁹ s) apart would make the makespan and the static
     * energy absurd: refuse rather than compose them (the bound is documented in erg/trace.h). */
    if (opts->align == ERG_TRACE_ALIGN_NONE && t->n_files > 1 &&
        (double)p->start_spread_ns / 1e9 > opts->max_start_spread_s) {
        char where[300];
        snprintf(where, sizeof where, "%s and %zu more", t->first_file, t->n_files - 1);
        st = erg_diag_set(diag, ERG_EINVAL, where,
                          "the files' first GPU activities are %.6g s apart (file %zu of %zu, in "
                          "the order given, starts that long after file %zu), more than the %.6g s "
                          "one shared clock allows: the files' clocks differ; align each file to "
                          "its first kernel (--align first-kernel)",
                          (double)p->start_spread_ns / 1e9, f_hi + 1, t->n_files, f_lo + 1,
                          opts->max_start_spread_s);
        goto out;
    }

    /* Devices: static and idle power; devices sharing a name share rule decisions (memo). */
    group = malloc(t->n_devs * sizeof *group);
    dev_grade = malloc(t->n_devs * sizeof *dev_grade);
    if (!group || !dev_grade) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    size_t n_groups = 0;
    for (size_t d = 0; d < t->n_devs; d++) {
        const erg__dev *dv = &t->devs[d];
        const erg__dev_rule *dr = erg__rules_device(rules, dv->name);
        if (!dr) {
            st = erg_diag_set(diag, ERG_EINVAL, dv->id,
                              "device \"%s\" matches no device entry of the rules and the rules "
                              "have no default_device",
                              dv->name[0] ? dv->name : "(no deviceProperties)");
            goto out;
        }
        p->static_w[d] = dr->static_power_w;
        p->idle_w[d] = dr->idle_power_w;
        dev_grade[d] = dr->grade;
        group[d] = n_groups;
        for (size_t e = 0; e < d; e++)
            if (strcmp(t->devs[e].name, dv->name) == 0) {
                group[d] = group[e];
                break;
            }
        if (group[d] == n_groups)
            n_groups++;
    }
    size_t n_names = t->names.n;
    size_t memo_n = n_names * ERG_TRACE_CAT_COUNT * n_groups;
    memo = malloc(memo_n * sizeof *memo);
    if (!memo) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < memo_n; k++)
        memo[k] = -2;
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        size_t k = ((size_t)a->name * ERG_TRACE_CAT_COUNT + a->cat) * n_groups + group[a->device];
        if (memo[k] == -2)
            memo[k] = (int32_t)erg__rules_match(rules, cat_names[a->cat],
                                                erg__strtab_get(&t->names, a->name),
                                                t->devs[a->device].name);
        long r = memo[k];
        p->rule[i] = r;
        double dur_s = (double)a->dur_ns / 1e9;
        if (r < 0) {
            p->dyn_j[i] = 0;
            p->dyn_var_j2[i] = 0;
            p->grade[i] = ERG_GRADE_ESTIMATOR;
            continue;
        }
        const erg__rule *ru = &rules->rules[r];
        if (ru->has_signature) {
            /* A characterized element whose time the trace measured: keep its dynamic power
             * d/T and scale d and σ_d with the traced duration. */
            double ratio = dur_s / ru->sig.time_s;
            double var_d = erg_signature_dynamic_var_j2(&ru->sig);
            p->dyn_j[i] = ru->sig.dynamic_energy_j * ratio;
            p->dyn_var_j2[i] = (var_d > 0 ? var_d : 0) * ratio * ratio;
        } else {
            p->dyn_j[i] = ru->dynamic_power_w * dur_s;
            double sd = ru->dynamic_power_sd_w * dur_s;
            p->dyn_var_j2[i] = sd * sd;
        }
        /* A figure is only as good as its weakest part: the rule's and the device's static power.
         */
        p->grade[i] = erg_grade_weakest(ru->grade, dev_grade[a->device]);
    }
out:
    free(first_kernel);
    free(first_any);
    free(memo);
    free(group);
    free(dev_grade);
    if (st != ERG_OK)
        prep_free(p);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */

/* Activities with the same name, category, device, stream and duration have the same signature
 * (their rule and figures are functions of these), so they share one: real traces repeat kernels
 * (the HTA NCCL trace has 2152 distinct of 3774), and the schedule shrinks accordingly. */
static uint64_t act_key_hash(const erg__act *a)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[4] = {a->name, ((uint64_t)a->device << 8) | a->cat, a->stream,
                         (uint64_t)a->dur_ns};
    for (int i = 0; i < 4; i++) {
        h ^= parts[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static int same_key(const erg__act *a, const erg__act *b)
{
    return a->name == b->name && a->device == b->device && a->cat == b->cat &&
           a->stream == b->stream && a->dur_ns == b->dur_ns;
}

/* The signature of activity i, the k-th distinct one: named "<k>:<name>". */
static void make_signature(const erg_trace *t, const prep *p, size_t i, size_t k,
                           erg_signature *sig)
{
    const erg__act *a = &t->acts[i];
    erg_signature_init(sig);
    snprintf(sig->name, sizeof sig->name, "%zu:%s", k, erg__strtab_get(&t->names, a->name));
    snprintf(sig->device, sizeof sig->device, "%s", t->devs[a->device].id);
    snprintf(sig->kappa, sizeof sig->kappa, "%s", cat_names[a->cat]);
    char stream[32]; /* stream text made safe inside a JSON string */
    const char *sp = erg__strtab_get(&t->misc, a->stream);
    size_t n = 0;
    for (; sp[n] && n + 1 < sizeof stream; n++)
        stream[n] = sp[n] == '"' || sp[n] == '\\' || (unsigned char)sp[n] < 0x20 ||
                            (unsigned char)sp[n] >= 0x7f
                        ? '_'
                        : sp[n];
    stream[n] = '\0';
    snprintf(sig->theta, sizeof sig->theta, "{\"category\":\"%s\",\"stream\":\"%s\"%s}",
             cat_names[a->cat], stream, p->rule[i] < 0 ? ",\"unmatched\":true" : "");
    sig->static_power_w = p->static_w[a->device];
    sig->time_s = (double)a->dur_ns / 1e9;
    sig->dynamic_energy_j = p->dyn_j[i];
    sig->time_var_s2 = 0;
    sig->energy_var_j2 = p->dyn_var_j2[i];
    sig->grade = p->grade[i];
    /* a characterized element's measurement flags follow it into every activity it prices */
    if (p->rule[i] >= 0 && p->rules->rules[p->rule[i]].has_signature)
        sig->flags = p->rules->rules[p->rule[i]].sig.flags;
}

static int add_signature_for(erg_schedule *s, const erg_trace *t, const prep *p, size_t i, size_t k,
                             char *name_out, size_t name_size, erg_diag *diag)
{
    erg_signature sig;
    make_signature(t, p, i, k, &sig);
    snprintf(name_out, name_size, "%s", sig.name);
    return erg_schedule_add_signature(s, &sig, diag);
}

/* Number the activities' signatures (one per distinct same_key): sig_of[i] is activity i's, in
 * the order of first use, so activity i defines a new one when sig_of[i] equals the count so far.
 */
static int number_signatures(const erg_trace *t, size_t **sig_of_out, erg_diag *diag)
{
    size_t n = t->n_acts, cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof *slot); /* activity index of a signature's first use + 1 */
    size_t *sig_of = malloc((n ? n : 1) * sizeof *sig_of);
    if (!slot || !sig_of) {
        free(slot);
        free(sig_of);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    size_t n_sigs = 0;
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        size_t h = (size_t)act_key_hash(a) & (cap - 1);
        while (slot[h] && !same_key(&t->acts[slot[h] - 1], a))
            h = (h + 1) & (cap - 1);
        if (slot[h]) {
            sig_of[i] = sig_of[slot[h] - 1];
        } else {
            slot[h] = i + 1;
            sig_of[i] = n_sigs++;
        }
    }
    free(slot);
    *sig_of_out = sig_of;
    return ERG_OK;
}

static int build_schedule(const erg_trace *t, const prep *p, erg_schedule **out, erg_diag *diag)
{
    erg_schedule *s = erg_schedule_new();
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    size_t n = t->n_acts, n_sigs = 0, *sig_of = NULL;
    char *used = calloc(t->n_devs ? t->n_devs : 1, 1);
    if (!used) {
        erg_schedule_free(s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int st = number_signatures(t, &sig_of, diag);
    if (st != ERG_OK)
        goto fail;
    for (size_t i = 0; i < n; i++)
        used[t->acts[i].device] = 1;
    for (size_t d = 0; d < t->n_devs; d++) {
        if (!used[d])
            continue;
        st = erg_schedule_add_device(s, t->devs[d].id, p->static_w[d], p->idle_w[d], diag);
        if (st != ERG_OK)
            goto fail;
    }
    char sig_name[ERG_SIG_NAME_MAX];
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        if (sig_of[i] == n_sigs) { /* first use: same_key activities share the name */
            st = add_signature_for(s, t, p, i, n_sigs++, sig_name, sizeof sig_name, diag);
            if (st != ERG_OK)
                goto fail;
        } else {
            snprintf(sig_name, sizeof sig_name, "%zu:%s", sig_of[i],
                     erg__strtab_get(&t->names, a->name));
        }
        char id[32];
        snprintf(id, sizeof id, "a%zu", i);
        st = erg_schedule_add_node(s, id, sig_name, t->devs[a->device].id,
                                   (double)p->start_ns[i] / 1e9, diag);
        if (st != ERG_OK)
            goto fail;
    }
    free(used);
    free(sig_of);
    *out = s;
    return ERG_OK;
fail:
    free(used);
    free(sig_of);
    erg_schedule_free(s);
    return st;
}

int erg_trace_schedule(const erg_trace *trace, const erg_rules *rules,
                       const erg_trace_options *opts, erg_schedule **out, erg_diag *diag)
{
    if (!out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no output");
    *out = NULL;
    prep p;
    int st = prepare(trace, rules, opts, &p, diag);
    if (st != ERG_OK)
        return st;
    st = build_schedule(trace, &p, out, diag);
    prep_free(&p);
    return st;
}

/* What erg_schedule_add_device, _add_signature and _add_node would refuse in build_schedule, and
 * what jansson could not encode, checked before a byte is written: ERG_EINVAL with their
 * messages, ERG_ENOMEM "cannot encode the schedule" for a name that is not UTF-8 (a kernel name
 * cut inside a character by the signature's name field). */
static int check_schedule(const erg_trace *t, const prep *p, const char *used, const size_t *sig_of,
                          const char *path, erg_diag *diag)
{
    for (size_t d = 0; d < t->n_devs; d++) {
        if (!used[d])
            continue;
        const char *id = t->devs[d].id;
        double w = p->static_w[d], idle = p->idle_w[d];
        if (!id[0])
            return erg_diag_set(diag, ERG_EINVAL, NULL, "a device needs a non-empty id");
        if (!isfinite(w) || w < 0.0)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "device \"%s\": static_power_w must be finite and >= 0 (got %g)",
                                id, w);
        if (!isnan(idle) && (!isfinite(idle) || idle < 0.0))
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "device \"%s\": idle_power_w must be finite and >= 0 (got %g)", id,
                                idle);
        if (!erg__utf8_valid(id, strlen(id)))
            return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the schedule");
    }
    size_t n_sigs = 0;
    for (size_t i = 0; i < t->n_acts; i++) {
        if (sig_of[i] == n_sigs) {
            erg_signature sig;
            make_signature(t, p, i, n_sigs++, &sig);
            erg_diag sub;
            erg_diag_clear(&sub);
            if (erg_signature_check(&sig, &sub) != ERG_OK)
                return erg_diag_set(diag, ERG_EINVAL, NULL, "%s", sub.detail);
            if (!erg__utf8_valid(sig.name, strlen(sig.name)))
                return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the schedule");
        }
        double start_s = (double)p->start_ns[i] / 1e9;
        if (!isfinite(start_s) || start_s < 0.0)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "node \"a%zu\": start_s must be finite and >= 0 (got %g)", i,
                                start_s);
    }
    return ERG_OK;
}

/* The schedule/1 document of build_schedule's schedule, as erg_schedule_write_file writes it
 * (sched_json.c), element by element. */
static void write_schedule(erg__jw *w, const erg_trace *t, const prep *p, const char *used,
                           const size_t *sig_of)
{
    erg__jw_begin_object(w);
    erg__jw_key(w, "erg");
    erg__jw_string(w, "schedule/1");
    erg__jw_key(w, "devices");
    erg__jw_begin_object(w);
    for (size_t d = 0; d < t->n_devs && !w->err; d++) {
        if (!used[d])
            continue;
        double idle = isnan(p->idle_w[d]) ? p->static_w[d] : p->idle_w[d];
        erg__jw_key(w, t->devs[d].id);
        erg__jw_begin_object(w);
        erg__jw_key(w, "static_power_w");
        erg__jw_real(w, p->static_w[d]);
        if (idle != p->static_w[d]) {
            erg__jw_key(w, "idle_power_w");
            erg__jw_real(w, idle);
        }
        erg__jw_end_object(w);
    }
    erg__jw_end_object(w);
    erg__jw_key(w, "signatures");
    erg__jw_begin_object(w);
    size_t n_sigs = 0;
    for (size_t i = 0; i < t->n_acts && !w->err; i++) {
        if (sig_of[i] != n_sigs)
            continue;
        erg_signature sig;
        make_signature(t, p, i, n_sigs++, &sig);
        json_t *o = erg__signature_to_json(&sig);
        if (!o) {
            w->err = ENOMEM;
            break;
        }
        json_object_del(o, "name");
        erg__jw_key(w, sig.name);
        erg__jw_json(w, o);
        json_decref(o);
    }
    erg__jw_end_object(w);
    erg__jw_key(w, "nodes");
    erg__jw_begin_array(w);
    char id[32], sig_name[ERG_SIG_NAME_MAX];
    for (size_t i = 0; i < t->n_acts && !w->err; i++) {
        const erg__act *a = &t->acts[i];
        snprintf(id, sizeof id, "a%zu", i);
        snprintf(sig_name, sizeof sig_name, "%zu:%s", sig_of[i],
                 erg__strtab_get(&t->names, a->name));
        erg__jw_begin_object(w);
        erg__jw_key(w, "id");
        erg__jw_string(w, id);
        erg__jw_key(w, "signature");
        erg__jw_string(w, sig_name);
        erg__jw_key(w, "device");
        erg__jw_string(w, t->devs[a->device].id);
        erg__jw_key(w, "start_s");
        erg__jw_real(w, (double)p->start_ns[i] / 1e9);
        erg__jw_end_object(w);
    }
    erg__jw_end_array(w);
    erg__jw_key(w, "edges");
    erg__jw_begin_array(w);
    erg__jw_end_array(w);
    erg__jw_end_object(w);
    erg__jw_newline(w);
}

int erg_trace_schedule_write_file(const char *path, const erg_trace *trace, const erg_rules *rules,
                                  const erg_trace_options *opts, erg_diag *diag)
{
    if (!trace || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_trace_schedule_write_file: NULL argument");
    prep p;
    int st = prepare(trace, rules, opts, &p, diag);
    if (st != ERG_OK)
        return st;
    size_t *sig_of = NULL;
    char *used = calloc(trace->n_devs ? trace->n_devs : 1, 1);
    if (!used) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < trace->n_acts; i++)
        used[trace->acts[i].device] = 1;
    st = number_signatures(trace, &sig_of, diag);
    if (st == ERG_OK)
        st = check_schedule(trace, &p, used, sig_of, path, diag);
    if (st != ERG_OK)
        goto out;
    erg__out o;
    st = erg__out_open(&o, path, diag);
    if (st != ERG_OK)
        goto out;
    erg__jw w;
    (void)erg__jw_init(&w, erg__out_write, &o);
    if (!w.err)
        write_schedule(&w, trace, &p, used, sig_of);
    int we = erg__jw_finish(&w);
    if (we != 0 && o.err == 0) { /* not the file's: the writer's own (memory, encoding) */
        erg__out_abort(&o);
        st = erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the schedule");
    } else {
        st = erg__out_commit(&o, diag);
    }
out:
    free(used);
    free(sig_of);
    prep_free(&p);
    return st;
}

int erg_trace_unmatched(const erg_trace *trace, const erg_rules *rules, size_t *count,
                        erg_diag *diag)
{
    if (!count)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no output");
    *count = 0;
    /* Rule matching does not depend on the clocks: no alignment check here. */
    erg_trace_options o;
    erg_trace_options_init(&o);
    o.max_start_spread_s = INFINITY;
    prep p;
    int st = prepare(trace, rules, &o, &p, diag);
    if (st != ERG_OK)
        return st;
    for (size_t i = 0; i < trace->n_acts; i++)
        *count += p.rule[i] < 0;
    prep_free(&p);
    return ERG_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* The report's own accounting. */

typedef struct order {
    uint32_t device;
    size_t i;
    int64_t start;
} order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Measure (ns) of the union of the intervals of v[from..to) whose category is in mask. */
static int64_t union_ns(const erg_trace *t, const prep *p, const order *v, size_t from, size_t to,
                        unsigned mask)
{
    int64_t total = 0, cur_s = 0, cur_e = 0;
    int open = 0;
    for (size_t k = from; k < to; k++) {
        const erg__act *a = &t->acts[v[k].i];
        if (!(mask & (1u << a->cat)))
            continue;
        int64_t s = p->start_ns[v[k].i], e = s + a->dur_ns;
        if (!open) {
            cur_s = s;
            cur_e = e;
            open = 1;
        } else if (s <= cur_e) {
            if (e > cur_e)
                cur_e = e;
        } else {
            total += cur_e - cur_s;
            cur_s = s;
            cur_e = e;
        }
    }
    if (open)
        total += cur_e - cur_s;
    return total;
}

typedef struct agg {
    size_t count;
    double time_s, energy_j;
    uint32_t name;
    int cat;
} agg;

static int cmp_agg_energy(const void *a, const void *b)
{
    const agg *x = a, *y = b;
    if (x->energy_j != y->energy_j)
        return x->energy_j > y->energy_j ? -1 : 1;
    if (x->time_s != y->time_s)
        return x->time_s > y->time_s ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_agg_count(const void *a, const void *b)
{
    const agg *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->cat - y->cat;
}

void erg_trace_report_free(erg_trace_report *r)
{
    if (!r)
        return;
    free(r->devices);
    free(r->top);
    free(r->unmatched_names);
    r->devices = NULL;
    r->top = NULL;
    r->unmatched_names = NULL;
}

static int fill_accounting(const erg_trace *t, const prep *p, size_t top_n, erg_trace_report *r,
                           erg_diag *diag)
{
    size_t n = t->n_acts;
    order *v = malloc(n * sizeof *v);
    agg *by_name = calloc(t->names.n, sizeof *by_name);
    agg *unm = calloc(t->names.n * ERG_TRACE_CAT_COUNT, sizeof *unm);
    r->devices = calloc(t->n_devs, sizeof *r->devices);
    if (!v || !by_name || !unm || !r->devices) {
        free(v);
        free(by_name);
        free(unm);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (order){t->acts[i].device, i, p->start_ns[i]};
    qsort(v, n, sizeof *v, cmp_order);

    for (int c = 0; c < ERG_TRACE_CAT_COUNT; c++) {
        r->categories[c].name = cat_names[c];
        r->categories[c].category = c;
    }
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &t->acts[i];
        double dur_s = (double)a->dur_ns / 1e9;
        erg_trace_group *g = &r->categories[a->cat];
        g->count++;
        g->time_s += dur_s;
        g->energy_j += p->dyn_j[i];
        agg *b = &by_name[a->name];
        b->cat =
            b->count == 0 || b->cat == a->cat ? a->cat : -1; /* -1: the name spans categories */
        b->name = a->name;
        b->count++;
        b->time_s += dur_s;
        b->energy_j += p->dyn_j[i];
        if (p->rule[i] < 0) {
            r->unmatched++;
            agg *u = &unm[(size_t)a->name * ERG_TRACE_CAT_COUNT + a->cat];
            u->name = a->name;
            u->cat = a->cat;
            u->count++;
            u->time_s += dur_s;
        }
    }

    /* Devices, in the order they were read; each is held at its static power over the makespan. */
    const unsigned compute = 1u << ERG_TRACE_CAT_KERNEL, comm = 1u << ERG_TRACE_CAT_COLLECTIVE;
    size_t nd = 0;
    for (size_t k = 0; k < n;) {
        size_t from = k;
        uint32_t d = v[k].device;
        while (k < n && v[k].device == d)
            k++;
        erg_trace_device *rd = &r->devices[nd++];
        snprintf(rd->id, sizeof rd->id, "%s", t->devs[d].id);
        snprintf(rd->name, sizeof rd->name, "%s", t->devs[d].name);
        rd->static_power_w = p->static_w[d];
        rd->default_rules =
            erg__rules_device(p->rules, t->devs[d].name) == erg__rules_device(p->rules, NULL);
        rd->activities = k - from;
        int64_t busy = union_ns(t, p, v, from, k, 0xfu);
        int64_t uc = union_ns(t, p, v, from, k, compute);
        int64_t um = union_ns(t, p, v, from, k, comm);
        int64_t ub = union_ns(t, p, v, from, k, compute | comm);
        rd->busy_s = (double)busy / 1e9;
        rd->idle_s = (double)(p->makespan_ns - busy) / 1e9;
        /* Held over the whole makespan: static power while busy, and its idle power (the
         * static power unless the rules give idle_power_w) over the gaps, as erg_schedule_compose
         * does with its idle elements. */
        double idle_w = isnan(p->idle_w[d]) ? p->static_w[d] : p->idle_w[d];
        rd->idle_power_w = idle_w;
        rd->idle_static_energy_j = idle_w * rd->idle_s;
        rd->static_energy_j = rd->static_power_w * rd->busy_s + rd->idle_static_energy_j;
        for (size_t q = from; q < k; q++)
            rd->dynamic_energy_j += p->dyn_j[v[q].i];
        rd->compute_s = (double)uc * 1e-9;
        rd->communication_s = (double)um * 1e-9;
        rd->overlap_s = (double)(uc + um - ub) * 1e-9; /* |C ∩ M| = |C| + |M| − |C ∪ M| */
        r->idle_static_energy_j += rd->idle_static_energy_j;
        r->compute_s += rd->compute_s;
        r->communication_s += rd->communication_s;
        r->overlap_s += rd->overlap_s;
    }
    r->n_devices = nd;
    free(v);

    /* Top names by dynamic energy. */
    size_t m = 0;
    for (size_t k = 0; k < t->names.n; k++)
        if (by_name[k].count)
            by_name[m++] = by_name[k];
    qsort(by_name, m, sizeof *by_name, cmp_agg_energy);
    r->n_top = m < top_n ? m : top_n;
    r->top = calloc(r->n_top ? r->n_top : 1, sizeof *r->top);
    size_t mu = 0;
    for (size_t k = 0; k < t->names.n * ERG_TRACE_CAT_COUNT; k++)
        if (unm[k].count)
            unm[mu++] = unm[k];
    qsort(unm, mu, sizeof *unm, cmp_agg_count);
    r->n_unmatched_names = mu;
    r->unmatched_names = calloc(mu ? mu : 1, sizeof *r->unmatched_names);
    if (!r->top || !r->unmatched_names) {
        free(by_name);
        free(unm);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t k = 0; k < r->n_top; k++) {
        r->top[k] = (erg_trace_group){erg__strtab_get(&t->names, by_name[k].name), by_name[k].cat,
                                      by_name[k].count, by_name[k].time_s, by_name[k].energy_j};
    }
    for (size_t k = 0; k < mu; k++)
        r->unmatched_names[k] = (erg_trace_group){erg__strtab_get(&t->names, unm[k].name),
                                                  unm[k].cat, unm[k].count, unm[k].time_s, 0};
    free(by_name);
    free(unm);
    return ERG_OK;
}

/* The figures of each activity's signature pass erg_signature_check, as they do when
 * erg_trace_schedule adds them to a schedule (finite, >= 0): the report refuses what the schedule
 * would. */
static int check_activity_figures(const erg_trace *t, const prep *p, erg_diag *diag)
{
    for (size_t i = 0; i < t->n_acts; i++) {
        const erg__act *a = &t->acts[i];
        double d = p->dyn_j[i], v = p->dyn_var_j2[i], w = p->static_w[a->device];
        if (isfinite(d) && isfinite(v) && isfinite(w) && d >= 0 && v >= 0 && w >= 0)
            continue;
        erg_signature sig;
        erg_signature_init(&sig);
        snprintf(sig.name, sizeof sig.name, "%s", erg__strtab_get(&t->names, a->name));
        sig.static_power_w = w;
        sig.time_s = (double)a->dur_ns / 1e9;
        sig.dynamic_energy_j = d;
        sig.energy_var_j2 = v;
        sig.grade = p->grade[i];
        erg_diag sub;
        erg_diag_clear(&sub);
        if (erg_signature_check(&sig, &sub) == ERG_OK) /* cannot be: a figure is bad */
            snprintf(sub.detail, sizeof sub.detail, "%s: a figure is not finite", sig.name);
        return erg_diag_set(diag, ERG_EINVAL, NULL, "%s", sub.detail);
    }
    return ERG_OK;
}

/* The totals erg_schedule_compose gives on the schedule erg_trace_schedule makes (Energy Calculus,
 * arXiv 2607.11087, Section 3.3; every node has a fixed start and σ²_T = 0, so no join has a
 * variance): each device held over the makespan, at its static power while busy and its idle power
 * over the gaps, plus the activities' dynamic energies; σ²_E = Σ σ²_d; the weakest grade. They come
 * from the per-device accounting (fill_accounting) instead of from a schedule of one 816-byte
 * signature per distinct activity, so that the report needs little more memory than the import
 * (issue 13). tests/trace/test_report.c and test_cli.c check them against erg_schedule_compose on
 * the schedule and on the file import writes. */
static int compose_totals(const erg_trace *t, const prep *p, erg_trace_report *r, erg_diag *diag)
{
    double stat = 0, dyn = 0, var = 0;
    erg_grade grade = ERG_GRADE_HW_SHUNT;
    unsigned flags = 0;
    for (size_t k = 0; k < r->n_devices; k++) {
        stat += r->devices[k].static_energy_j;
        dyn += r->devices[k].dynamic_energy_j;
    }
    for (size_t i = 0; i < t->n_acts; i++) {
        var += p->dyn_var_j2[i];
        grade = erg_grade_weakest(grade, p->grade[i]);
        /* a signature rule's measurement flags go with every activity it prices */
        if (p->rule[i] >= 0 && p->rules->rules[p->rule[i]].has_signature)
            flags |= p->rules->rules[p->rule[i]].sig.flags;
    }
    r->static_energy_j = stat;
    r->dynamic_energy_j = dyn;
    r->energy_j = stat + dyn;
    r->energy_sd_j = sqrt(var);
    r->time_s = (double)p->makespan_ns / 1e9;
    r->grade = grade;
    r->flags = flags;
    if (!isfinite(r->energy_j) || !isfinite(var) || !isfinite(r->time_s))
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "the trace's energy, its variance or its time is not finite (it "
                            "overflows a double)");
    return ERG_OK;
}

int erg_trace_report_make(const erg_trace *trace, const erg_rules *rules,
                          const erg_trace_options *opts, erg_trace_report *out, erg_diag *diag)
{
    if (!out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no output");
    memset(out, 0, sizeof *out);
    erg_trace_options dflt;
    if (!opts) {
        erg_trace_options_init(&dflt);
        opts = &dflt;
    }
    prep p;
    int st = prepare(trace, rules, opts, &p, diag);
    if (st != ERG_OK)
        return st;
    st = check_activity_figures(trace, &p, diag);
    if (st == ERG_OK)
        st = fill_accounting(trace, &p, opts->top_n, out, diag);
    if (st == ERG_OK)
        st = compose_totals(trace, &p, out, diag);
    out->stats = trace->stats;
    out->start_spread_s = (double)p.start_spread_ns / 1e9;
    snprintf(out->rules, sizeof out->rules, "%s", rules->name);
    prep_free(&p);
    if (st != ERG_OK)
        erg_trace_report_free(out);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */

static json_t *group_json(const erg_trace_group *g, int with_name, int with_energy)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    if (with_name)
        bad |= json_object_set_new(o, "name", json_string(g->name ? g->name : ""));
    if (with_name && g->category >= 0)
        bad |= json_object_set_new(
            o, "category", json_string(erg_trace_category_name((erg_trace_category)g->category)));
    bad |= json_object_set_new(o, "count", json_integer((json_int_t)g->count));
    bad |= erg__json_set_number(o, "time_s", g->time_s);
    if (with_energy)
        bad |= erg__json_set_number(o, "energy_j", g->energy_j);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int num(json_t *o, const char *k, double v)
{
    return erg__json_set_number(o, k, v) ? 1 : 0;
}

static int cnt(json_t *o, const char *k, size_t v)
{
    return json_object_set_new(o, k, json_integer((json_int_t)v)) ? 1 : 0;
}

int erg_trace_report_json(const erg_trace *trace, const erg_trace_report *r, char **out,
                          erg_diag *diag)
{
    if (!r || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no report");
    *out = NULL;
    json_t *root = json_object();
    json_t *devs = json_object(), *cats = json_object(), *top = json_array();
    json_t *unm = json_array(), *ov = json_object(), *prob = json_object(), *ign = json_object();
    json_t *unk = json_object();
    int bad = !root || !devs || !cats || !top || !unm || !ov || !prob || !ign || !unk;
    if (bad) {
        json_decref(root);
        json_decref(devs);
        json_decref(cats);
        json_decref(top);
        json_decref(unm);
        json_decref(ov);
        json_decref(prob);
        json_decref(ign);
        json_decref(unk);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    bad |= json_object_set_new(root, "erg", json_string("trace-report/1")) ? 1 : 0;
    bad |= num(root, "energy_j", r->energy_j);
    bad |= num(root, "energy_sd_j", r->energy_sd_j);
    bad |= num(root, "time_s", r->time_s);
    bad |= num(root, "static_energy_j", r->static_energy_j);
    bad |= num(root, "dynamic_energy_j", r->dynamic_energy_j);
    bad |= num(root, "idle_static_energy_j", r->idle_static_energy_j);
    bad |= json_object_set_new(root, "grade", json_string(erg_grade_name(r->grade))) ? 1 : 0;
    bad |= json_object_set_new(root, "flags", erg__flags_to_json(r->flags)) ? 1 : 0;
    bad |= cnt(root, "unmatched", r->unmatched);
    bad |= json_object_set_new(root, "rules", json_string(r->rules)) ? 1 : 0;
    for (size_t k = 0; k < r->n_unmatched_names; k++)
        bad |= json_array_append_new(unm, group_json(&r->unmatched_names[k], 1, 0)) ? 1 : 0;
    bad |= json_object_set_new(root, "unmatched_names", unm) ? 1 : 0;
    for (size_t k = 0; k < r->n_devices; k++) {
        const erg_trace_device *d = &r->devices[k];
        json_t *o = json_object();
        if (!o) {
            bad = 1;
            break;
        }
        bad |= json_object_set_new(o, "name", json_string(d->name)) ? 1 : 0;
        bad |= num(o, "static_power_w", d->static_power_w);
        bad |= num(o, "idle_power_w", d->idle_power_w);
        bad |= json_object_set_new(o, "default_rules", json_boolean(d->default_rules)) ? 1 : 0;
        bad |= cnt(o, "activities", d->activities);
        bad |= num(o, "busy_s", d->busy_s);
        bad |= num(o, "idle_s", d->idle_s);
        bad |= num(o, "static_energy_j", d->static_energy_j);
        bad |= num(o, "idle_static_energy_j", d->idle_static_energy_j);
        bad |= num(o, "dynamic_energy_j", d->dynamic_energy_j);
        bad |= num(o, "compute_s", d->compute_s);
        bad |= num(o, "communication_s", d->communication_s);
        bad |= num(o, "overlap_s", d->overlap_s);
        bad |= json_object_set_new(devs, d->id, o) ? 1 : 0;
    }
    bad |= json_object_set_new(root, "devices", devs) ? 1 : 0;
    for (int c = 0; c < ERG_TRACE_CAT_COUNT; c++)
        bad |= json_object_set_new(cats, erg_trace_category_name((erg_trace_category)c),
                                   group_json(&r->categories[c], 0, 1))
                   ? 1
                   : 0;
    bad |= json_object_set_new(root, "categories", cats) ? 1 : 0;
    for (size_t k = 0; k < r->n_top; k++)
        bad |= json_array_append_new(top, group_json(&r->top[k], 1, 1)) ? 1 : 0;
    bad |= json_object_set_new(root, "top", top) ? 1 : 0;
    bad |= num(ov, "compute_s", r->compute_s);
    bad |= num(ov, "communication_s", r->communication_s);
    bad |= num(ov, "overlap_s", r->overlap_s);
    bad |= num(ov, "communication_overlapped_fraction",
               r->communication_s > 0 ? r->overlap_s / r->communication_s : 0.0);
    bad |= json_object_set_new(root, "overlap", ov) ? 1 : 0;
    const erg_trace_stats *s = &r->stats;
    bad |= cnt(prob, "missing_duration", s->missing_duration);
    const char *dw, *dy;
    if (trace && erg_trace_first_dropped(trace, &dw, &dy) == ERG_OK) {
        char first[512];
        snprintf(first, sizeof first, "%s: %s", dw, dy);
        bad |= json_object_set_new(prob, "first_missing_duration", json_string(first)) ? 1 : 0;
    }
    bad |= cnt(prob, "negative_duration", s->negative_duration);
    bad |= cnt(prob, "unmatched_end", s->unmatched_end);
    bad |= cnt(prob, "unclosed_begin", s->unclosed_begin);
    bad |= cnt(prob, "stream_overlaps", s->stream_overlaps);
    bad |= cnt(prob, "out_of_order", s->out_of_order);
    bad |= json_object_set_new(root, "problems", prob) ? 1 : 0;
    bad |= cnt(ign, "host_events", s->host_events);
    bad |= cnt(ign, "unknown_events", s->unknown_events);
    bad |= cnt(ign, "markers", s->markers);
    const char *un;
    size_t uc;
    for (size_t k = 0; trace && erg_trace_unknown(trace, k, &un, &uc) == ERG_OK; k++)
        bad |= cnt(unk, un, uc);
    bad |= json_object_set_new(ign, "unknown_categories", unk) ? 1 : 0;
    bad |= json_object_set_new(root, "ignored", ign) ? 1 : 0;
    bad |= cnt(root, "files", s->files);
    bad |= num(root, "start_spread_s", r->start_spread_s);
    bad |= cnt(root, "events", s->events);
    bad |= cnt(root, "activities", s->activities);
    char *text = bad ? NULL : erg_json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    erg_json_shorten_reals(text);
    json_decref(root);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "cannot encode the report as JSON");
    *out = text;
    return ERG_OK;
}
