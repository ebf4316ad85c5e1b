/* SPDX-License-Identifier: MIT */
/*
 * The estimator, the labelled last resort: whole-CPU power from utilisation,
 *   P = P_idle + (P_full − P_idle) · u,   u = busy jiffies / all jiffies over the interval,
 * from the first ("cpu") line of <root>/proc/stat (proc(5)); busy = user + nice + system + irq +
 * softirq + steal, idle = idle + iowait. The linear utilisation model is the classic one of
 * Fan, Weber and Barroso, "Power provisioning for a warehouse-sized computer" (ISCA 2007, Eq. 1).
 * P_idle and P_full default to 10 W and 65 W and are options ($ERG_ESTIMATOR_IDLE_W/_FULL_W).
 * Graded estimator: it is a guess, and says so.
 */
#include "meter/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct state {
    const struct erg__env *env;
    int fd;
    int have_prev;
    uint64_t prev_busy, prev_all;
    double last_u; /* utilisation of the last interval with elapsed jiffies */
    struct erg__chan ch;
};

/* Parse the "cpu" line: busy and all jiffies. 0 or -1. */
static int parse_stat(const char *buf, uint64_t *busy, uint64_t *all)
{
    if (strncmp(buf, "cpu ", 4) != 0)
        return -1;
    const char *p = buf + 4;
    uint64_t v[10] = {0};
    int k = 0;
    while (k < 10) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            break;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno == ERANGE)
            return -1;
        v[k++] = (uint64_t)x;
        p = end;
    }
    if (k < 4)
        return -1;
    /* guest and guest_nice (8, 9) are already counted in user and nice */
    uint64_t idle = v[3] + v[4];
    uint64_t b = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *busy = b;
    *all = b + idle;
    return 0;
}

static int read_stat(struct state *s, uint64_t *busy, uint64_t *all)
{
    char buf[512];
    ssize_t r = s->env->io.pread(s->env->io.ud, s->fd, buf, sizeof buf - 1, 0);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    return parse_stat(buf, busy, all);
}

static void est_close(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    if (s->fd >= 0)
        s->env->io.close(s->env->io.ud, s->fd);
    free(s);
}

static int est_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                    erg_diag *diag)
{
    char path[600];
    erg__env_path(env, "proc/stat", path, sizeof path);
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->env = env;
    s->fd = erg__env_open(env, "proc/stat");
    if (s->fd < 0) {
        int e = errno;
        free(s);
        return erg_diag_set(diag, ERG_ENODEV, path, "cannot read CPU utilisation: %s", strerror(e));
    }
    uint64_t b, a;
    if (read_stat(s, &b, &a) != 0) {
        est_close(s);
        return erg_diag_set(diag, ERG_EPARSE, path, "first line is not a 'cpu' jiffies line");
    }
    struct erg__chan *c = &s->ch;
    erg__strlcpy(c->id, "estimator:cpu", sizeof c->id);
    erg__strlcpy(c->device, "cpu", sizeof c->device);
    erg__fmt(c->label, sizeof c->label, "utilisation model %.0f-%.0f W", env->estimator_idle_w,
             env->estimator_full_w);
    c->domain = ERG_DOMAIN_PACKAGE;
    c->grade = ERG_GRADE_ESTIMATOR;
    c->kind = ERG_KIND_ESTIMATE;
    c->joules_per_tick = 1e-6; /* ticks are µW */
    c->min_interval_s = 0.01;  /* USER_HZ = 100 */
    c->max_power_w = env->estimator_full_w * 2 + 1;
    c->usable = 1;
    erg__strlcpy(c->reason, "estimate from CPU utilisation, not a measurement", sizeof c->reason);
    *out = s;
    *chans = c;
    *n = 1;
    return ERG_OK;
}

static void est_read(void *st, uint64_t *ticks, int *status, size_t n)
{
    struct state *s = st;
    if (n < 1)
        return;
    uint64_t b, a;
    if (read_stat(s, &b, &a) != 0) {
        status[0] = ERG__READ_TRANSIENT;
        return;
    }
    /* No jiffy elapsed since the last read (reads closer than 1/USER_HZ): hold the last
     * utilisation rather than call the interval idle. */
    double u = s->last_u;
    if (s->have_prev && a > s->prev_all && b >= s->prev_busy)
        u = (double)(b - s->prev_busy) / (double)(a - s->prev_all);
    if (u > 1.0)
        u = 1.0;
    s->last_u = u;
    s->have_prev = 1;
    s->prev_busy = b;
    s->prev_all = a;
    double w = s->env->estimator_idle_w + (s->env->estimator_full_w - s->env->estimator_idle_w) * u;
    ticks[0] = (uint64_t)(w * 1e6 + 0.5);
    status[0] = ERG__READ_OK;
}

const struct erg__backend_ops erg__backend_estimator = {
    .abi = ERG__BACKEND_ABI,
    .name = "estimator",
    .open = est_open,
    .read = est_read,
    .close = est_close,
};
