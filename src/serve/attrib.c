/* SPDX-License-Identifier: MIT */
/* Per-process and per-cgroup attribution of the CPU-side energy, graded estimator.
 *
 * The model is Scaphandre's and Kepler's CPU-time ratio: over one sample interval, a process (or
 * a cgroup: the processes whose /proc/<pid>/cgroup names it) is charged
 *     E_p = E_cpu · Δcpu_p / Δbusy
 * where E_cpu is the interval's CPU-side energy (the root package/psys/dram channels), Δcpu_p the
 * process's user + system ticks (/proc/<pid>/stat fields 14 and 15, proc(5)) and Δbusy the whole
 * machine's busy ticks (/proc/stat's "cpu" line without idle and iowait). Idle energy is thereby
 * spread over the busy processes, as Scaphandre does; the figures sum to E_cpu whenever some
 * process was busy. It is an estimate (a process's share of CPU time is not its share of energy:
 * vector units, memory traffic and frequency differ), and is graded so.
 *
 * Series stay bounded: each interval the top consumers keep their own counter, the rest are added
 * to "other"; a process that exits keeps its counter until it would be replaced. */
#define _GNU_SOURCE /* secure_getenv */
#include "serve_internal.h"

#include "core/fsroot.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_MAX 256

typedef struct entry {
    char key[KEY_MAX];   /* "pid" or cgroup path */
    char comm[64];       /* process name (pids only) */
    uint64_t prev_ticks; /* last reading */
    uint64_t delta;      /* this interval */
    int seen;            /* seen this interval */
    int exported;        /* has its own counter */
    double energy_j;     /* cumulative */
} entry;

struct erg__attrib {
    int rootfd; /* the host's root (ERG_ROOT or the exporter's root), O_PATH; -1: no readings */
    erg_attribute kind;
    size_t top;
    entry *e;
    size_t n, cap;
    uint64_t prev_busy;
    int have_busy;
    double other_j;
    double unattributed_j;
    uint64_t intervals_without_figure;
};

void erg__serve_root(const char *explicit_root, char *buf, size_t size)
{
    const char *r = explicit_root;
    if (!r)
        r = secure_getenv("ERG_ROOT");
    if (!r || !*r)
        r = "";
    size_t len = strlen(r);
    while (len > 0 && r[len - 1] == '/')
        len--;
    snprintf(buf, size, "%.*s", (int)len, r);
}

/* Read a small /proc file (rel, e.g. "proc/stat") into buf (NUL-terminated), resolved inside the
 * root (core/fsroot.h: neither ".." nor a symlink leads out of ERG_ROOT). Refuses anything but a
 * regular file and never blocks on a FIFO. Returns the length, or -1. */
static ssize_t read_small(int rootfd, const char *rel, char *buf, size_t size)
{
    int fd = rootfd < 0
                 ? -1
                 : erg__open_in_root(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t k = read(fd, buf + got, size - 1 - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

int erg__attrib_new(const char *root, erg_attribute kind, size_t top, struct erg__attrib **out)
{
    struct erg__attrib *a = calloc(1, sizeof *a);
    if (!a)
        return ERG_ENOMEM;
    /* the readings' root; one that cannot be opened gives intervals without a figure */
    a->rootfd = open(root && *root ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    a->kind = kind;
    a->top = top;
    *out = a;
    erg__attrib_interval(a, NAN); /* the first readings */
    return ERG_OK;
}

void erg__attrib_free(struct erg__attrib *a)
{
    if (!a)
        return;
    if (a->rootfd >= 0)
        close(a->rootfd);
    free(a->e);
    free(a);
}

static entry *find_or_add(struct erg__attrib *a, const char *key)
{
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->e[i].key, key))
            return &a->e[i];
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        entry *ne = realloc(a->e, cap * sizeof *ne);
        if (!ne)
            return NULL;
        a->e = ne;
        a->cap = cap;
    }
    entry *x = &a->e[a->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->key, sizeof x->key, "%s", key);
    x->prev_ticks = UINT64_MAX; /* no reading yet */
    return x;
}

/* busy ticks of the machine from <root>/proc/stat's first line */
static int read_busy(const struct erg__attrib *a, uint64_t *busy)
{
    char buf[1024];
    if (read_small(a->rootfd, "proc/stat", buf, sizeof buf) <= 0 || strncmp(buf, "cpu ", 4) != 0)
        return -1;
    unsigned long long v[8] = {0};
    if (sscanf(buf + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) < 4)
        return -1;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* user nice system irq softirq steal */
    return 0;
}

/* utime + stime and comm of one pid */
static int read_pid(const struct erg__attrib *a, const char *pid, uint64_t *ticks, char *comm,
                    size_t comm_size)
{
    char rel[320], buf[2048];
    snprintf(rel, sizeof rel, "proc/%s/stat", pid);
    if (read_small(a->rootfd, rel, buf, sizeof buf) <= 0)
        return -1;
    char *open_p = strchr(buf, '(');
    char *close_p = strrchr(buf, ')'); /* comm may itself hold ')' */
    if (!open_p || !close_p || close_p < open_p)
        return -1;
    snprintf(comm, comm_size, "%.*s", (int)(close_p - open_p - 1), open_p + 1);
    /* after ") " come fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime stime */
    char *p = close_p + 1;
    unsigned long long ut = 0, st = 0;
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(p, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        field++;
        if (field == 14)
            ut = strtoull(tok, NULL, 10);
        else if (field == 15) {
            st = strtoull(tok, NULL, 10);
            break;
        }
    }
    if (field < 15)
        return -1;
    *ticks = ut + st;
    return 0;
}

/* the cgroup v2 path of a pid ("0::/system.slice/x.service"), or the first v1 line's path */
static int read_cgroup(const struct erg__attrib *a, const char *pid, char *out, size_t size)
{
    char rel[320], buf[4096];
    snprintf(rel, sizeof rel, "proc/%s/cgroup", pid);
    if (read_small(a->rootfd, rel, buf, sizeof buf) <= 0)
        return -1;
    char *line = buf, *first = NULL;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *c2 = strstr(line, "::");
        if (!strncmp(line, "0::", 3) && c2) {
            snprintf(out, size, "%s", c2 + 2);
            return 0;
        }
        if (!first) {
            char *c = strchr(line, ':');
            c = c ? strchr(c + 1, ':') : NULL;
            if (c)
                first = c + 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (first) {
        snprintf(out, size, "%s", first);
        return 0;
    }
    return -1;
}

static int by_delta_desc(const void *x, const void *y)
{
    const entry *a = *(const entry *const *)x, *b = *(const entry *const *)y;
    if (a->delta != b->delta)
        return a->delta < b->delta ? 1 : -1;
    return strcmp(a->key, b->key);
}

void erg__attrib_interval(struct erg__attrib *a, double cpu_j)
{
    uint64_t busy = 0;
    int have_busy = read_busy(a, &busy) == 0;
    for (size_t i = 0; i < a->n; i++) {
        a->e[i].seen = 0;
        a->e[i].delta = 0;
    }
    int pfd = a->rootfd < 0 ? -1
                            : erg__open_in_root(a->rootfd, "proc",
                                                O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    DIR *d = pfd < 0 ? NULL : fdopendir(pfd);
    if (!d && pfd >= 0)
        close(pfd);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!isdigit((unsigned char)de->d_name[0]))
                continue;
            uint64_t ticks;
            char comm[64];
            if (read_pid(a, de->d_name, &ticks, comm, sizeof comm) != 0)
                continue;
            char key[KEY_MAX];
            if (a->kind == ERG_ATTRIBUTE_CGROUPS) {
                if (read_cgroup(a, de->d_name, key, sizeof key) != 0)
                    continue;
                /* a cgroup sums its processes: keep per-pid readings under "pid@cgroup" */
                char pk[KEY_MAX];
                snprintf(pk, sizeof pk, "%.40s@%.200s", de->d_name, key);
                entry *p = find_or_add(a, pk);
                if (!p)
                    continue;
                uint64_t dt = p->prev_ticks != UINT64_MAX && ticks >= p->prev_ticks
                                  ? ticks - p->prev_ticks
                                  : 0;
                p->prev_ticks = ticks;
                p->seen = 1;
                p->exported = -1; /* bookkeeping only, never rendered */
                entry *g = find_or_add(a, key);
                if (!g)
                    continue;
                g->seen = 1;
                g->delta += dt;
            } else {
                entry *p = find_or_add(a, de->d_name);
                if (!p)
                    continue;
                p->delta = p->prev_ticks != UINT64_MAX && ticks >= p->prev_ticks
                               ? ticks - p->prev_ticks
                               : 0;
                p->prev_ticks = ticks;
                p->seen = 1;
                snprintf(p->comm, sizeof p->comm, "%s", comm);
            }
        }
        closedir(d);
    }
    uint64_t dbusy = have_busy && a->have_busy && busy >= a->prev_busy ? busy - a->prev_busy : 0;
    if (have_busy) {
        a->prev_busy = busy;
        a->have_busy = 1;
    }
    /* drop per-pid entries whose process is gone and which never got a counter */
    size_t w = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].seen || a->e[i].exported == 1)
            a->e[w++] = a->e[i];
    a->n = w;
    if (!isfinite(cpu_j)) {
        a->intervals_without_figure++;
        return;
    }
    if (dbusy == 0) {
        a->unattributed_j += cpu_j;
        return;
    }
    entry **order = malloc((a->n ? a->n : 1) * sizeof *order);
    if (!order)
        return;
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].exported != -1 && a->e[i].delta > 0)
            order[k++] = &a->e[i];
    qsort(order, k, sizeof *order, by_delta_desc);
    double given = 0;
    for (size_t i = 0; i < k; i++) {
        double share = cpu_j * (double)order[i]->delta / (double)dbusy;
        given += share;
        if (i < a->top || order[i]->exported == 1) {
            order[i]->energy_j += share;
            order[i]->exported = 1;
        } else {
            a->other_j += share;
        }
    }
    /* busy ticks of processes that ended within the interval (or kernel threads not listed) */
    if (cpu_j - given > 0)
        a->unattributed_j += cpu_j - given;
    free(order);
}

void erg__attrib_render(const struct erg__attrib *a, erg__sbuf *b)
{
    int pids = a->kind == ERG_ATTRIBUTE_PIDS;
    const char *name = pids ? "erg_process_energy_joules_total" : "erg_cgroup_energy_joules_total";
    erg__sbuf_printf(b,
                     "# HELP %s CPU-side energy charged to each %s by its share of the machine's "
                     "busy CPU time (Scaphandre's model), in joules; an estimate.\n"
                     "# TYPE %s counter\n",
                     name, pids ? "process" : "cgroup", name);
    for (size_t i = 0; i < a->n; i++) {
        const entry *x = &a->e[i];
        if (x->exported != 1)
            continue;
        if (pids) {
            erg__sbuf_printf(b, "%s{pid=", name);
            erg__sbuf_label(b, x->key);
            erg__sbuf_printf(b, ",comm=");
            erg__sbuf_label(b, x->comm);
        } else {
            erg__sbuf_printf(b, "%s{cgroup=", name);
            erg__sbuf_label(b, x->key);
        }
        erg__sbuf_printf(b, ",grade=\"estimator\"} %.17g\n", x->energy_j);
    }
    if (pids)
        erg__sbuf_printf(b, "%s{pid=\"other\",comm=\"other\",grade=\"estimator\"} %.17g\n", name,
                         a->other_j);
    else
        erg__sbuf_printf(b, "%s{cgroup=\"other\",grade=\"estimator\"} %.17g\n", name, a->other_j);
    erg__sbuf_printf(b,
                     "# HELP erg_unattributed_energy_joules_total CPU-side energy of intervals in "
                     "which no listed process was busy, or of processes that ended, in joules.\n"
                     "# TYPE erg_unattributed_energy_joules_total counter\n"
                     "erg_unattributed_energy_joules_total{grade=\"estimator\"} %.17g\n",
                     a->unattributed_j);
}
