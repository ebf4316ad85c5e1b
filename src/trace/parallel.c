/* SPDX-License-Identifier: MIT */
/*
 * Several rank files parsed at once: each worker thread streams whole files into traces of their
 * own (no shared state while parsing), and the main thread then merges them in the order given,
 * so the result is exactly that of reading the files one after another.
 */
#include "trace_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct job {
    const char *const *paths;
    size_t n;
    size_t next; /* next file to parse, under lock */
    pthread_mutex_t lock;
    erg_trace **subs;
    int *status;
    erg_diag *diags;
    int yajl_only; /* the trace's reader choice (tests), for every file */
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n)
            return NULL;
        erg_diag_clear(&j->diags[i]);
        j->subs[i] = erg_trace_new();
        erg__trace_set_yajl_only(j->subs[i], j->yajl_only);
        j->status[i] = j->subs[i]
                           ? erg_trace_read_file(j->subs[i], j->paths[i], &j->diags[i])
                           : erg_diag_set(&j->diags[i], ERG_ENOMEM, j->paths[i], "out of memory");
    }
}

/* What a merge changes in dst, to undo it. */
typedef struct snapshot {
    size_t n_acts, n_devs, n_files, n_unknown;
    size_t *unknown_counts;
    erg_trace_stats stats;
    char first_file[sizeof(((struct erg_trace *)0)->first_file)];
} snapshot;

static int snap_take(const erg_trace *t, snapshot *s)
{
    s->n_acts = t->n_acts;
    s->n_devs = t->n_devs;
    s->n_files = t->n_files;
    s->n_unknown = t->n_unknown;
    s->stats = t->stats;
    memcpy(s->first_file, t->first_file, sizeof s->first_file);
    s->unknown_counts = NULL;
    if (t->n_unknown) {
        s->unknown_counts = malloc(t->n_unknown * sizeof *s->unknown_counts);
        if (!s->unknown_counts)
            return -1;
        for (size_t i = 0; i < t->n_unknown; i++)
            s->unknown_counts[i] = t->unknown[i].count;
    }
    return 0;
}

static void snap_restore(erg_trace *t, const snapshot *s)
{
    t->n_acts = s->n_acts;
    t->n_devs = s->n_devs;
    t->n_files = s->n_files;
    t->n_unknown = s->n_unknown;
    t->stats = s->stats;
    memcpy(t->first_file, s->first_file, sizeof s->first_file);
    for (size_t i = 0; i < s->n_unknown; i++)
        t->unknown[i].count = s->unknown_counts[i];
}

static void stats_add(erg_trace_stats *d, const erg_trace_stats *s)
{
    d->files += s->files;
    d->json_bytes += s->json_bytes;
    d->events += s->events;
    d->activities += s->activities;
    d->host_events += s->host_events;
    d->unknown_events += s->unknown_events;
    d->missing_duration += s->missing_duration;
    d->negative_duration += s->negative_duration;
    d->unmatched_end += s->unmatched_end;
    d->unclosed_begin += s->unclosed_begin;
    d->out_of_order += s->out_of_order;
    d->stream_overlaps += s->stream_overlaps;
    d->markers += s->markers;
}

/* Map every string of src into dst; *out[i] is dst's id of src's string i. */
static int map_strings(erg__strtab *dst, const erg__strtab *src, uint32_t **out)
{
    *out = malloc((src->n ? src->n : 1) * sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < src->n; i++) {
        (*out)[i] = erg__strtab_intern(dst, src->str[i], src->len[i]);
        if ((*out)[i] == ERG__NOID)
            return -1;
    }
    return 0;
}

/* Append src (one file) to dst as its next file. */
static int merge_one(erg_trace *dst, const erg_trace *src, const char *file, erg_diag *diag)
{
    int st = ERG_OK;
    uint32_t *names = NULL, *misc = NULL;
    if (src->n_files != 1)
        return erg_diag_set(diag, ERG_EINVAL, file, "internal: a sub-trace holds one file");
    int rank = -1;
    st = erg__trace_pick_rank(dst, src->file_has_rank[0], src->file_rank[0], file, &rank, diag);
    if (st != ERG_OK)
        return st;
    if (map_strings(&dst->names, &src->names, &names) != 0 ||
        map_strings(&dst->misc, &src->misc, &misc) != 0)
        goto nomem;
    if (dst->n_devs + src->n_devs > dst->devs_cap) {
        size_t cap = dst->n_devs + src->n_devs;
        erg__dev *p = realloc(dst->devs, cap * sizeof *p);
        if (!p)
            goto nomem;
        dst->devs = p;
        dst->devs_cap = cap;
    }
    size_t dev0 = dst->n_devs;
    for (size_t k = 0; k < src->n_devs; k++) {
        erg__dev d = src->devs[k];
        d.file = (unsigned)dst->n_files;
        erg__dev_set_id(&d, rank);
        dst->devs[dst->n_devs++] = d;
    }
    if (dst->n_acts + src->n_acts > dst->acts_cap) {
        size_t cap = dst->n_acts + src->n_acts;
        erg__act *p = realloc(dst->acts, cap * sizeof *p);
        if (!p)
            goto nomem;
        dst->acts = p;
        dst->acts_cap = cap;
    }
    for (size_t k = 0; k < src->n_acts; k++) {
        erg__act a = src->acts[k];
        a.name = names[a.name];
        a.device = (uint32_t)(dev0 + a.device);
        a.stream = misc[a.stream];
        dst->acts[dst->n_acts++] = a;
    }
    for (size_t k = 0; k < src->n_unknown; k++) {
        uint32_t id = misc[src->unknown[k].name];
        size_t u = 0;
        while (u < dst->n_unknown && dst->unknown[u].name != id)
            u++;
        if (u == dst->n_unknown) {
            if (dst->n_unknown == dst->unknown_cap) {
                size_t cap = dst->unknown_cap ? dst->unknown_cap * 2 : 8;
                erg__unknown *p = realloc(dst->unknown, cap * sizeof *p);
                if (!p)
                    goto nomem;
                dst->unknown = p;
                dst->unknown_cap = cap;
            }
            dst->unknown[dst->n_unknown++] = (erg__unknown){id, 0};
        }
        dst->unknown[u].count += src->unknown[k].count;
    }
    st = erg__trace_add_file(dst, rank, src->file_has_rank[0], src->first_file, diag);
    if (st == ERG_OK)
        stats_add(&dst->stats, &src->stats);
    free(names);
    free(misc);
    return st;
nomem:
    free(names);
    free(misc);
    return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
}

int erg_trace_read_files(erg_trace *trace, const char *const *paths, size_t n, unsigned jobs,
                         erg_diag *diag)
{
    if (!trace || (!paths && n))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no trace or no paths");
    if (n == 0)
        return ERG_OK;
    if (jobs == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (jobs > n)
        jobs = (unsigned)n;
    if (jobs == 1 && n == 1)
        return erg_trace_read_file(trace, paths[0], diag);

    job j = {paths, n, 0, PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, trace->yajl_only};
    j.subs = calloc(n, sizeof *j.subs);
    j.status = calloc(n, sizeof *j.status);
    j.diags = calloc(n, sizeof *j.diags);
    pthread_t *th = calloc(jobs, sizeof *th);
    int st = ERG_OK;
    snapshot snap = {0};
    if (!j.subs || !j.status || !j.diags || !th) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    unsigned started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&th[started], NULL, worker, &j) != 0)
            break;
    if (started == 0)
        worker(&j); /* no thread could start: parse here */
    for (unsigned k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    for (size_t i = 0; i < n; i++)
        if (j.status[i] != ERG_OK) {
            if (diag)
                *diag = j.diags[i];
            st = j.status[i];
            goto out;
        }
    if (snap_take(trace, &snap) != 0) {
        st = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && st == ERG_OK; i++) {
        st = merge_one(trace, j.subs[i], paths[i], diag);
        erg_trace_free(j.subs[i]); /* free as we go: peak memory stays near the files' total */
        j.subs[i] = NULL;
    }
    if (st != ERG_OK)
        snap_restore(trace, &snap);
out:
    free(snap.unknown_counts);
    if (j.subs)
        for (size_t i = 0; i < n; i++)
            erg_trace_free(j.subs[i]);
    free(j.subs);
    free(j.status);
    free(j.diags);
    free(th);
    pthread_mutex_destroy(&j.lock);
    return st;
}
