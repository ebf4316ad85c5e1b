/* SPDX-License-Identifier: MIT */
/* The exporter's accumulators and its Prometheus text rendering (erg/serve.h).
 *
 * Each sample diffs two meter snapshots, so every correction the meter makes (wrap-around on raw
 * ticks with the channel's own modulus, glitches, backwards steps after a counter reset, liveness)
 * is made once, in the meter; here an interval either has a figure, which is added, or has none,
 * which adds nothing and is counted under its state. The counters therefore never decrease, and a
 * backend that restarts or a counter that resets is carried over by construction.
 *
 * The text is rendered once per sample into a buffer swapped under a mutex; a scrape copies it,
 * so a thousand scrapes a second cost a thousand memcpy's, not a thousand meter reads. */
#include "erg/serve.h"

#include "serve_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct chan_acc {
    erg_channel_info info;
    const char *scope;
    double energy_j; /* cumulative, J */
    int has_value;   /* at least one interval gave a figure */
    double power_w;  /* last interval's mean, W; NaN when it had none */
    erg_reading_state last_state;
    uint64_t flagged[ERG_FLAG_COUNT];
    uint64_t errors; /* intervals in state "error" */
} chan_acc;

struct erg_exporter {
    erg_meter *meter;
    erg_exporter_options opt;
    char root[1024];
    size_t n;
    chan_acc *ch;
    erg_meter_snapshot *prev, *cur;
    erg_measurement *meas;
    double node_energy_j;
    int node_has_value;
    erg_grade node_grade;
    double node_power_w;
    uint64_t node_incomplete;
    uint64_t samples, missed;
    double last_sample_s;
    struct erg__attrib *attrib;
    /* the rendered text, swapped under lock */
    pthread_mutex_t lock;
    char *text;
    size_t text_len;
    /* sampler thread */
    pthread_t thread;
    int running;
    int stop;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
};

void erg_exporter_options_init(erg_exporter_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->interval_s = 1.0;
    o->attribute = ERG_ATTRIBUTE_NONE;
    o->attribute_top = 50;
    o->root = NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A sample value: the shortest of 15, 16 or 17 significant digits that reads back as the same
 * double (17 always does), so 0.2 prints as 0.2 and no figure loses a bit. */
static void value(erg__sbuf *b, double v)
{
    char s[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*g", p, v);
        if (strtod(s, NULL) == v)
            break;
    }
    erg__sbuf_printf(b, " %s\n", s);
}

static const char *scope_of(const erg_channel_info *ci)
{
    if (ci->deduplicated)
        return "mirror";
    return ci->parent >= 0 ? "component" : "root";
}

int erg_exporter_new(erg_meter *meter, const erg_exporter_options *o, erg_exporter **out,
                     erg_diag *diag)
{
    if (!meter || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no meter or no output");
    *out = NULL;
    erg_exporter_options def;
    if (!o) {
        erg_exporter_options_init(&def);
        o = &def;
    }
    if (!(o->interval_s >= 0.01 && o->interval_s <= 3600))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "the interval must be between 0.01 and 3600 s (got %g)", o->interval_s);
    if (o->attribute != ERG_ATTRIBUTE_NONE && o->attribute_top == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "attribution needs attribute_top >= 1");
    erg_exporter *e = calloc(1, sizeof *e);
    if (!e)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    e->meter = meter;
    e->opt = *o;
    erg__serve_root(o->root, e->root, sizeof e->root);
    e->opt.root = e->root;
    e->node_power_w = NAN;
    e->last_sample_s = NAN;
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->stop_lock, NULL);
    pthread_cond_init(&e->stop_cond, NULL);
    e->n = erg_meter_channel_count(meter);
    e->ch = calloc(e->n ? e->n : 1, sizeof *e->ch);
    e->prev = erg_meter_snapshot_new(meter);
    e->cur = erg_meter_snapshot_new(meter);
    e->meas = calloc(1, sizeof *e->meas); /* sized by the first erg_meter_diff */
    if (!e->ch || !e->prev || !e->cur || !e->meas)
        goto nomem;
    for (size_t i = 0; i < e->n; i++) {
        chan_acc *c = &e->ch[i];
        if (erg_meter_channel_info(meter, i, &c->info) != ERG_OK)
            c->info.usable = 0; /* i < the channel count: cannot fail; no info, declined */
        c->scope = scope_of(&c->info);
        c->power_w = NAN;
        c->last_state = c->info.usable ? ERG_READING_NO_DATA : ERG_READING_DECLINED;
    }
    if (o->attribute != ERG_ATTRIBUTE_NONE) {
        int rc = erg__attrib_new(e->root, o->attribute, o->attribute_top, &e->attrib);
        if (rc != ERG_OK) {
            erg_exporter_free(e);
            return erg_diag_set(diag, rc, NULL, "cannot set up attribution");
        }
    }
    if (erg_meter_snapshot_take(meter, e->prev) != ERG_OK)
        goto nomem;
    if (erg__exporter_rerender(e) != ERG_OK)
        goto nomem;
    *out = e;
    return ERG_OK;
nomem:
    erg_exporter_free(e);
    return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
}

/* Is the channel a CPU-side one whose energy attribution splits among processes? */
static int cpu_side(erg_domain d)
{
    return d == ERG_DOMAIN_PACKAGE || d == ERG_DOMAIN_DRAM || d == ERG_DOMAIN_PSYS ||
           d == ERG_DOMAIN_CORE || d == ERG_DOMAIN_UNCORE;
}

int erg_exporter_sample(erg_exporter *e)
{
    if (!e)
        return ERG_EINVAL;
    double t0 = now_s();
    if (erg_meter_snapshot_take(e->meter, e->cur) != ERG_OK)
        return ERG_EINVAL;
    erg_measurement *m = e->meas;
    if (erg_meter_diff(e->meter, e->prev, e->cur, 0.0, m) != ERG_OK)
        return ERG_EINVAL;
    erg_meter_snapshot *t = e->prev;
    e->prev = e->cur;
    e->cur = t;
    double cpu_j = 0; /* CPU-side energy of the interval, for attribution: the roots only */
    int cpu_ok = 0;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; i < m->n_channels && i < e->n; i++) {
        const erg_channel_reading *r = &m->channels[i];
        chan_acc *c = &e->ch[i];
        c->last_state = r->state;
        for (unsigned b = 0; b < ERG_FLAG_COUNT; b++)
            if (r->flags & (1u << b))
                c->flagged[b]++;
        if (r->state == ERG_READING_ERROR)
            c->errors++;
        if (r->state == ERG_READING_OK && isfinite(r->energy_j)) {
            c->energy_j += r->energy_j;
            c->has_value = 1;
            c->power_w = m->time_s > 0 ? r->energy_j / m->time_s : (double)NAN;
            if (cpu_side(r->domain) && !strcmp(c->scope, "root")) {
                cpu_j += r->energy_j;
                cpu_ok = 1;
            }
        } else {
            c->power_w = NAN;
        }
    }
    if (isfinite(m->total_energy_j)) {
        e->node_energy_j += m->total_energy_j;
        e->node_has_value = 1;
        e->node_grade = m->total_grade;
        e->node_power_w = m->time_s > 0 ? m->total_energy_j / m->time_s : (double)NAN;
    } else {
        e->node_power_w = NAN;
        e->node_incomplete++;
    }
    if (e->attrib)
        erg__attrib_interval(e->attrib, cpu_ok ? cpu_j : (double)NAN);
    e->samples++;
    e->last_sample_s = now_s() - t0;
    pthread_mutex_unlock(&e->lock);
    return erg__exporter_rerender(e);
}

static void header(erg__sbuf *b, const char *name, const char *type, const char *help)
{
    erg__sbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void chan_labels(erg__sbuf *b, const chan_acc *c)
{
    erg__sbuf_printf(b, "{channel=");
    erg__sbuf_label(b, c->info.id);
    erg__sbuf_printf(b, ",domain=\"%s\",device=", erg_domain_name(c->info.domain));
    erg__sbuf_label(b, c->info.device);
    erg__sbuf_printf(b, ",grade=\"%s\",scope=\"%s\"}", erg_grade_name(c->info.grade), c->scope);
}

static void id_label(erg__sbuf *b, const chan_acc *c)
{
    erg__sbuf_printf(b, "channel=");
    erg__sbuf_label(b, c->info.id);
}

/* Render the sample-time part of the exposition into a new buffer and swap it in. */
int erg__exporter_rerender(erg_exporter *e)
{
    erg__sbuf b = {0};
    pthread_mutex_lock(&e->lock);
    header(&b, "erg_energy_joules_total", "counter",
           "Energy a channel measured since the exporter started, in joules (wrap-corrected; "
           "intervals without a figure add nothing).");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        if (!c->has_value)
            continue;
        erg__sbuf_printf(&b, "erg_energy_joules_total");
        chan_labels(&b, c);
        value(&b, c->energy_j);
    }
    header(&b, "erg_power_watts", "gauge",
           "Mean power of a channel over the last sample interval, in watts.");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        if (!isfinite(c->power_w))
            continue;
        erg__sbuf_printf(&b, "erg_power_watts");
        chan_labels(&b, c);
        value(&b, c->power_w);
    }
    header(&b, "erg_node_energy_joules_total", "counter",
           "The meter's node total since the exporter started, in joules: every domain once "
           "(psys holds package holds core); intervals where the total is incomplete add nothing.");
    if (e->node_has_value) {
        erg__sbuf_printf(&b, "erg_node_energy_joules_total{grade=\"%s\"}",
                         erg_grade_name(e->node_grade));
        value(&b, e->node_energy_j);
    }
    header(&b, "erg_node_power_watts", "gauge",
           "The node total's mean power over the last sample interval, in watts.");
    if (isfinite(e->node_power_w)) {
        erg__sbuf_printf(&b, "erg_node_power_watts{grade=\"%s\"}", erg_grade_name(e->node_grade));
        value(&b, e->node_power_w);
    }
    header(
        &b, "erg_node_incomplete_intervals_total", "counter",
        "Sample intervals in which the node total had no figure (a channel it needs gave none).");
    erg__sbuf_printf(&b, "erg_node_incomplete_intervals_total");
    value(&b, (double)e->node_incomplete);
    header(&b, "erg_channel_info", "gauge",
           "Always 1: a channel's backend, kind, resolution (J) and wrap range (J, 0 = none).");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        static const char *const kinds[] = {"counter", "power", "estimate"};
        erg__sbuf_printf(&b, "erg_channel_info{");
        id_label(&b, c);
        erg__sbuf_printf(&b, ",backend=");
        erg__sbuf_label(&b, c->info.backend);
        erg__sbuf_printf(&b, ",label=");
        erg__sbuf_label(&b, c->info.label);
        erg__sbuf_printf(&b,
                         ",kind=\"%s\",usable=\"%d\",resolution_joules=\"%g\",wrap_joules=\"%g\"}",
                         kinds[c->info.kind <= ERG_KIND_ESTIMATE ? c->info.kind : 0],
                         c->info.usable, c->info.resolution_j, c->info.wrap_j);
        value(&b, 1);
    }
    header(&b, "erg_channel_live", "gauge",
           "1 when the channel was seen moving under load, 0 when seen frozen; absent when not "
           "judged.");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        if (c->info.live < 0)
            continue;
        erg__sbuf_printf(&b, "erg_channel_live{");
        id_label(&b, c);
        erg__sbuf_printf(&b, "}");
        value(&b, c->info.live ? 1 : 0);
    }
    header(&b, "erg_channel_state", "gauge",
           "1 for the state of the channel's last interval (ok, declined, not_live, "
           "below_resolution, ambiguous, unit_suspect, error, no_data).");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        erg__sbuf_printf(&b, "erg_channel_state{");
        id_label(&b, c);
        erg__sbuf_printf(&b, ",state=\"%s\"}", erg_reading_state_name(c->last_state));
        value(&b, 1);
    }
    header(&b, "erg_channel_flagged_intervals_total", "counter",
           "Sample intervals in which the meter set a flag on the channel (wrap_corrected, "
           "ambiguous_wrap, backwards, glitch, stale, unit_suspect, ...).");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        for (unsigned f = 0; f < ERG_FLAG_COUNT; f++) {
            if (!c->flagged[f])
                continue;
            erg__sbuf_printf(&b, "erg_channel_flagged_intervals_total{");
            id_label(&b, c);
            erg__sbuf_printf(&b, ",flag=\"%s\"}", erg_flag_name(f));
            value(&b, (double)c->flagged[f]);
        }
    }
    header(&b, "erg_meter_errors_total", "counter",
           "Sample intervals in which reading the channel failed.");
    for (size_t i = 0; i < e->n; i++) {
        const chan_acc *c = &e->ch[i];
        if (!c->info.usable)
            continue;
        erg__sbuf_printf(&b, "erg_meter_errors_total{");
        id_label(&b, c);
        erg__sbuf_printf(&b, "}");
        value(&b, (double)c->errors);
    }
    if (e->attrib)
        erg__attrib_render(e->attrib, &b);
    header(&b, "erg_exporter_samples_total", "counter", "Samples the exporter took.");
    erg__sbuf_printf(&b, "erg_exporter_samples_total");
    value(&b, (double)e->samples);
    header(&b, "erg_exporter_missed_samples_total", "counter",
           "Samples that started more than one interval late.");
    erg__sbuf_printf(&b, "erg_exporter_missed_samples_total");
    value(&b, (double)e->missed);
    header(&b, "erg_exporter_interval_seconds", "gauge", "The sample interval, in seconds.");
    erg__sbuf_printf(&b, "erg_exporter_interval_seconds");
    value(&b, e->opt.interval_s);
    header(&b, "erg_exporter_meter_poll_seconds", "gauge",
           "The meter's own polling period (faster than the interval when a counter could wrap), "
           "in seconds; 0 when its sampler is not running.");
    erg__sbuf_printf(&b, "erg_exporter_meter_poll_seconds");
    value(&b, erg_meter_sampler_period_s(e->meter));
    if (isfinite(e->last_sample_s)) {
        header(&b, "erg_exporter_sample_seconds", "gauge",
               "Wall time the last sample took (meter read, diff, render), in seconds.");
        erg__sbuf_printf(&b, "erg_exporter_sample_seconds");
        value(&b, e->last_sample_s);
    }
    pthread_mutex_unlock(&e->lock);
    if (b.failed) {
        free(b.buf);
        return ERG_ENOMEM;
    }
    pthread_mutex_lock(&e->lock);
    char *old = e->text;
    e->text = b.buf;
    e->text_len = b.len;
    pthread_mutex_unlock(&e->lock);
    free(old);
    return ERG_OK;
}

int erg_exporter_render(erg_exporter *e, double scrape_s, char **text, size_t *len)
{
    if (!e || !text || !len)
        return ERG_EINVAL;
    struct timespec cpu;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    char tail[1024];
    int k = snprintf(tail, sizeof tail,
                     "# HELP erg_exporter_cpu_seconds_total CPU time the exporter process used "
                     "(all its threads), in seconds.\n"
                     "# TYPE erg_exporter_cpu_seconds_total counter\n"
                     "erg_exporter_cpu_seconds_total %.9g\n",
                     (double)cpu.tv_sec + (double)cpu.tv_nsec * 1e-9);
    if (isfinite(scrape_s))
        k += snprintf(tail + k, sizeof tail - (size_t)k,
                      "# HELP erg_exporter_scrape_seconds Wall time the previous scrape took to "
                      "answer, in seconds.\n"
                      "# TYPE erg_exporter_scrape_seconds gauge\n"
                      "erg_exporter_scrape_seconds %.9g\n",
                      scrape_s);
    pthread_mutex_lock(&e->lock);
    size_t n = e->text_len + (size_t)k;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, e->text, e->text_len);
        memcpy(s + e->text_len, tail, (size_t)k + 1);
    }
    pthread_mutex_unlock(&e->lock);
    if (!s)
        return ERG_ENOMEM;
    *text = s;
    *len = n;
    return ERG_OK;
}

double erg_exporter_energy_j(erg_exporter *e, const char *channel_id)
{
    if (!e || !channel_id)
        return NAN;
    double v = NAN;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->ch[i].info.id, channel_id) && e->ch[i].has_value)
            v = e->ch[i].energy_j;
    pthread_mutex_unlock(&e->lock);
    return v;
}

void erg_exporter_counts(erg_exporter *e, uint64_t *samples, uint64_t *missed)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    if (samples)
        *samples = e->samples;
    if (missed)
        *missed = e->missed;
    pthread_mutex_unlock(&e->lock);
}

static void *sampler(void *arg)
{
    erg_exporter *e = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double period = e->opt.interval_s;
    long sec = (long)period;
    long nsec = (long)((period - (double)sec) * 1e9);
    pthread_mutex_lock(&e->stop_lock);
    while (!e->stop) {
        next.tv_sec += sec;
        next.tv_nsec += nsec;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        while (!e->stop && pthread_cond_timedwait(&e->stop_cond, &e->stop_lock, &next) != ETIMEDOUT)
            ;
        if (e->stop)
            break;
        pthread_mutex_unlock(&e->stop_lock);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double late =
            (double)(now.tv_sec - next.tv_sec) + (double)(now.tv_nsec - next.tv_nsec) * 1e-9;
        if (late > period) { /* woke more than a period late: count it and resynchronise */
            pthread_mutex_lock(&e->lock);
            e->missed++;
            pthread_mutex_unlock(&e->lock);
            next = now;
        }
        if (erg_exporter_sample(e) != ERG_OK) { /* out of memory rendering: a missed sample */
            pthread_mutex_lock(&e->lock);
            e->missed++;
            pthread_mutex_unlock(&e->lock);
        }
        pthread_mutex_lock(&e->stop_lock);
    }
    pthread_mutex_unlock(&e->stop_lock);
    return NULL;
}

int erg_exporter_start(erg_exporter *e)
{
    if (!e || e->running)
        return ERG_EINVAL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&e->stop_cond);
    pthread_cond_init(&e->stop_cond, &ca);
    pthread_condattr_destroy(&ca);
    e->stop = 0;
    if (pthread_create(&e->thread, NULL, sampler, e) != 0)
        return ERG_ENOMEM;
    e->running = 1;
    return ERG_OK;
}

void erg_exporter_stop(erg_exporter *e)
{
    if (!e || !e->running)
        return;
    pthread_mutex_lock(&e->stop_lock);
    e->stop = 1;
    pthread_cond_broadcast(&e->stop_cond);
    pthread_mutex_unlock(&e->stop_lock);
    pthread_join(e->thread, NULL);
    e->running = 0;
}

void erg_exporter_free(erg_exporter *e)
{
    if (!e)
        return;
    erg_exporter_stop(e);
    erg__attrib_free(e->attrib);
    erg_meter_snapshot_free(e->prev);
    erg_meter_snapshot_free(e->cur);
    erg_measurement_release(e->meas);
    free(e->meas);
    free(e->ch);
    free(e->text);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_destroy(&e->stop_lock);
    pthread_cond_destroy(&e->stop_cond);
    free(e);
}
