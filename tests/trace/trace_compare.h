/* SPDX-License-Identifier: MIT */
/* Shared by tests/trace/test_parse.c and the fuzz harness tests/fuzz/fuzz_trace.c: read the same
 * bytes with the trace reader's fast tokenizer and with yajl alone, and compare everything the two
 * leave behind (status, message, statistics, activities, devices, unknown categories). */
#ifndef ERG_TESTS_TRACE_COMPARE_H
#define ERG_TESTS_TRACE_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "erg/trace.h"
#include "trace/trace_internal.h"

/* 0 when the two reads agree; otherwise 1 with what differs in why. */
static inline int trace_reads_differ(const erg_trace *a, int st_a, const erg_diag *da,
                                     const erg_trace *b, int st_b, const erg_diag *db, char *why,
                                     size_t size)
{
    if (st_a != st_b) {
        snprintf(why, size, "status %d vs %d (%.100s: %.120s | %.100s: %.120s)", st_a, st_b,
                 da->where, da->detail, db->where, db->detail);
        return 1;
    }
    if (st_a != ERG_OK &&
        (strcmp(da->where, db->where) != 0 || strcmp(da->detail, db->detail) != 0)) {
        snprintf(why, size, "message '%.100s: %.120s' vs '%.100s: %.120s'", da->where, da->detail,
                 db->where, db->detail);
        return 1;
    }
    if (memcmp(&a->stats, &b->stats, sizeof a->stats) != 0) {
        snprintf(why, size, "statistics (events %zu vs %zu, activities %zu vs %zu)",
                 a->stats.events, b->stats.events, a->stats.activities, b->stats.activities);
        return 1;
    }
    if (a->n_acts != b->n_acts || a->n_devs != b->n_devs || a->n_unknown != b->n_unknown ||
        a->n_files != b->n_files) {
        snprintf(why, size, "counts: %zu/%zu activities, %zu/%zu devices, %zu/%zu unknown",
                 a->n_acts, b->n_acts, a->n_devs, b->n_devs, a->n_unknown, b->n_unknown);
        return 1;
    }
    for (size_t i = 0; i < a->n_acts; i++) {
        const erg__act *x = &a->acts[i], *y = &b->acts[i];
        if (x->start_ns != y->start_ns || x->dur_ns != y->dur_ns || x->cat != y->cat ||
            x->device != y->device ||
            strcmp(erg__strtab_get(&a->names, x->name), erg__strtab_get(&b->names, y->name)) ||
            strcmp(erg__strtab_get(&a->misc, x->stream), erg__strtab_get(&b->misc, y->stream))) {
            snprintf(why, size, "activity %zu differs", i);
            return 1;
        }
    }
    for (size_t i = 0; i < a->n_devs; i++)
        if (strcmp(a->devs[i].id, b->devs[i].id) || strcmp(a->devs[i].name, b->devs[i].name) ||
            strcmp(a->devs[i].key, b->devs[i].key) || a->devs[i].rank != b->devs[i].rank) {
            snprintf(why, size, "device %zu: %s vs %s", i, a->devs[i].id, b->devs[i].id);
            return 1;
        }
    for (size_t i = 0; i < a->n_unknown; i++)
        if (a->unknown[i].count != b->unknown[i].count ||
            strcmp(erg__strtab_get(&a->misc, a->unknown[i].name),
                   erg__strtab_get(&b->misc, b->unknown[i].name))) {
            snprintf(why, size, "unknown category %zu", i);
            return 1;
        }
    return 0;
}

/* Read buf (len bytes) with both readers, from memory (path NULL) or from the file path holding the
 * same bytes; 0 when they agree, else 1 with why. */
static inline int trace_readers_differ(const void *buf, size_t len, const char *path, char *why,
                                       size_t size)
{
    erg_trace *a = erg_trace_new(), *b = erg_trace_new();
    if (!a || !b) {
        erg_trace_free(a);
        erg_trace_free(b);
        snprintf(why, size, "out of memory");
        return 1;
    }
    erg__trace_set_yajl_only(b, 1);
    erg_diag da, db;
    erg_diag_clear(&da);
    erg_diag_clear(&db);
    int sa =
        path ? erg_trace_read_file(a, path, &da) : erg_trace_read_buffer(a, buf, len, "t", &da);
    int sb =
        path ? erg_trace_read_file(b, path, &db) : erg_trace_read_buffer(b, buf, len, "t", &db);
    int d = trace_reads_differ(a, sa, &da, b, sb, &db, why, size);
    erg_trace_free(a);
    erg_trace_free(b);
    return d;
}

#endif
