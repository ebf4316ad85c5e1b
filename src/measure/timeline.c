/* SPDX-License-Identifier: MIT */
/*
 * The power timeline: a thread takes a meter snapshot every period and records each channel's
 * mean power since the previous snapshot (energy / time of erg_meter_diff), labelled with the run
 * it falls in. It stops on a condition variable, so stopping does not wait out a period.
 */
#include "measure/measure_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct erg_timeline {
    erg_meter *m;
    double period_s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, stop;
    size_t run; /* current run label */
    size_t n_cols, n_rows, cap;
    double *t_s, *power_w;
    size_t *run_of;
    char (*ids)[ERG_METER_ID_MAX];
    double t0;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int append(struct erg_timeline *t, double when, size_t run, const erg_measurement *r)
{
    if (t->n_rows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        double *a = realloc(t->t_s, cap * sizeof *a);
        if (!a)
            return -1;
        t->t_s = a;
        size_t *b = realloc(t->run_of, cap * sizeof *b);
        if (!b)
            return -1;
        t->run_of = b;
        double *c = realloc(t->power_w, cap * (t->n_cols + 1) * sizeof *c);
        if (!c)
            return -1;
        t->power_w = c;
        t->cap = cap;
    }
    t->t_s[t->n_rows] = when;
    t->run_of[t->n_rows] = run;
    for (size_t j = 0; j < t->n_cols; j++) {
        const erg_channel_reading *c = &r->channels[j];
        t->power_w[t->n_rows * t->n_cols + j] =
            c->state == ERG_READING_OK && r->time_s > 0 ? c->energy_j / r->time_s : (double)NAN;
    }
    t->n_rows++;
    return 0;
}

static void *loop(void *arg)
{
    struct erg_timeline *t = arg;
    erg_meter_snapshot *a = erg_meter_snapshot_new(t->m), *b = erg_meter_snapshot_new(t->m);
    erg_measurement *r = malloc(sizeof *r);
    if (!a || !b || !r || erg_meter_snapshot_take(t->m, a) != ERG_OK)
        goto out; /* no timeline rows: the run's figures do not depend on them */
    pthread_mutex_lock(&t->mu);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        double ns = (double)until.tv_nsec + t->period_s * 1e9;
        until.tv_sec += (time_t)(ns / 1e9);
        until.tv_nsec = (long)fmod(ns, 1e9);
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &until) == 0) {
        }
        if (t->stop)
            break;
        size_t run = t->run;
        pthread_mutex_unlock(&t->mu);
        int ok = erg_meter_snapshot_take(t->m, b) == ERG_OK &&
                 erg_meter_diff(t->m, a, b, 0.0, r) == ERG_OK;
        double when = mono_s() - t->t0;
        erg_meter_snapshot *s = a;
        a = b;
        b = s;
        pthread_mutex_lock(&t->mu);
        if (ok)
            append(t, when, run, r);
    }
    pthread_mutex_unlock(&t->mu);
out:
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    free(r);
    return NULL;
}

int erg__timeline_start(erg_meter *m, double period_s, struct erg_timeline **out)
{
    struct erg_timeline *t = calloc(1, sizeof *t);
    if (!t)
        return ERG_ENOMEM;
    t->m = m;
    t->period_s = period_s;
    t->n_cols = erg_meter_channel_count(m);
    t->ids = calloc(t->n_cols + 1, sizeof *t->ids);
    if (!t->ids) {
        free(t);
        return ERG_ENOMEM;
    }
    for (size_t j = 0; j < t->n_cols; j++) {
        erg_channel_info ci;
        if (erg_meter_channel_info(m, j, &ci) == ERG_OK)
            memcpy(t->ids[j], ci.id, sizeof t->ids[j]);
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    t->t0 = mono_s();
    if (pthread_create(&t->thread, NULL, loop, t) != 0) {
        erg__timeline_free(t);
        return ERG_ENOMEM;
    }
    t->running = 1;
    *out = t;
    return ERG_OK;
}

void erg__timeline_set_run(struct erg_timeline *t, size_t k)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->run = k;
    pthread_mutex_unlock(&t->mu);
}

void erg__timeline_stop(struct erg_timeline *t)
{
    if (!t || !t->running)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    t->running = 0;
}

void erg__timeline_free(struct erg_timeline *t)
{
    if (!t)
        return;
    erg__timeline_stop(t);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t->t_s);
    free(t->run_of);
    free(t->power_w);
    free(t->ids);
    free(t);
}

void erg__timeline_view(const struct erg_timeline *t, struct erg_timeline_view *v)
{
    memset(v, 0, sizeof *v);
    if (!t)
        return;
    v->n_rows = t->n_rows;
    v->n_cols = t->n_cols;
    v->t_s = t->t_s;
    v->run = t->run_of;
    v->power_w = t->power_w;
    v->ids = t->ids;
}
