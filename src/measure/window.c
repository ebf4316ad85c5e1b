/* SPDX-License-Identifier: MIT */
/*
 * Named windows in the style of Zeus (ZeusMonitor.begin_window/end_window): each window is a pair
 * of meter snapshots, so windows nest and overlap freely: the meter's accumulators only grow.
 */
#include "erg/measure.h"

#include <stdlib.h>
#include <string.h>

struct window {
    char name[64];
    erg_meter_snapshot *begin;
};

struct erg_monitor {
    erg_meter *m;
    struct window w[ERG_MONITOR_MAX_WINDOWS];
    size_t n;
    erg_meter_snapshot *end; /* scratch for end */
};

int erg_monitor_open(erg_meter *m, erg_monitor **out, erg_diag *diag)
{
    if (!m || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_monitor_open: NULL argument");
    erg_monitor *mon = calloc(1, sizeof *mon);
    if (!mon || !(mon->end = erg_meter_snapshot_new(m))) {
        free(mon);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    mon->m = m;
    *out = mon;
    return ERG_OK;
}

void erg_monitor_close(erg_monitor *mon)
{
    if (!mon)
        return;
    for (size_t i = 0; i < mon->n; i++)
        erg_meter_snapshot_free(mon->w[i].begin);
    erg_meter_snapshot_free(mon->end);
    free(mon);
}

static long find(const erg_monitor *mon, const char *name)
{
    for (size_t i = 0; i < mon->n; i++)
        if (strcmp(mon->w[i].name, name) == 0)
            return (long)i;
    return -1;
}

int erg_window_begin(erg_monitor *mon, const char *name, erg_diag *diag)
{
    if (!mon || !name || !*name || strlen(name) >= sizeof mon->w[0].name)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "window name must be 1 to 63 bytes");
    if (find(mon, name) >= 0)
        return erg_diag_set(diag, ERG_EINVAL, name, "a window named '%s' is already open", name);
    if (mon->n == ERG_MONITOR_MAX_WINDOWS)
        return erg_diag_set(diag, ERG_EINVAL, name, "too many open windows (limit %d)",
                            ERG_MONITOR_MAX_WINDOWS);
    erg_meter_snapshot *s = erg_meter_snapshot_new(mon->m);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    struct window *w = &mon->w[mon->n];
    strcpy(w->name, name);
    w->begin = s;
    int rc = erg_meter_snapshot_take(mon->m, s);
    if (rc != ERG_OK) {
        erg_meter_snapshot_free(s);
        return erg_diag_set(diag, rc, name, "snapshot failed");
    }
    mon->n++;
    return ERG_OK;
}

static void drop(erg_monitor *mon, size_t i)
{
    erg_meter_snapshot_free(mon->w[i].begin);
    mon->w[i] = mon->w[mon->n - 1];
    mon->n--;
}

int erg_window_end(erg_monitor *mon, const char *name, double extra_busy_s, erg_measurement *out,
                   erg_diag *diag)
{
    if (!mon || !name || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_window_end: NULL argument");
    long i = find(mon, name);
    if (i < 0)
        return erg_diag_set(diag, ERG_EINVAL, name, "no open window named '%s'", name);
    int rc = erg_meter_snapshot_take(mon->m, mon->end);
    if (rc == ERG_OK)
        rc = erg_meter_diff(mon->m, mon->w[i].begin, mon->end, extra_busy_s, out);
    drop(mon, (size_t)i);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, name, "window measurement failed");
    return ERG_OK;
}

int erg_window_cancel(erg_monitor *mon, const char *name)
{
    if (!mon || !name)
        return ERG_EINVAL;
    long i = find(mon, name);
    if (i < 0)
        return ERG_EINVAL;
    drop(mon, (size_t)i);
    return ERG_OK;
}
