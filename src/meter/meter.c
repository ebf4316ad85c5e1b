/* SPDX-License-Identifier: MIT */
/*
 * The meter: backend registry, polls, wrap correction, plausibility, integration of power-only
 * sources, anomaly counting, snapshots, per-window states and totals. Everything that decides
 * whether a number is a figure lives here, once, for every backend (the "fixed as a kind,
 * in the shared mechanism").
 */
#include "meter/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Anomaly counters kept per channel; a window's flags are the counters that moved in it. */
enum {
    EV_WRAP,
    EV_AMBIG,
    EV_BACKWARDS,
    EV_GLITCH,
    EV_UNIT,
    EV_TRANSIENT,
    EV_FATAL,
    EV_STALE,
    EV_COUNT
};

/* CPU (or GPU) time below which a frozen counter is not judged (the issue: 10 ms). */
#define LIVENESS_BUSY_S 0.010

struct chan {
    const struct erg__chan *c;
    size_t backend;
    size_t backend_slot; /* index within its backend's channels */
    int parent;
    int live;
    int dedup;
    int usable;
    char reason[ERG_METER_REASON_MAX];
    /* poll state (under mu) */
    int have_prev;
    uint64_t prev; /* last accepted raw value (counter) or held power ticks */
    uint64_t prev_t_ns;
    int pending; /* a rejected reading is waiting for confirmation */
    uint64_t rej_val, rej_t_ns;
    int rej_up; /* the rejected reading was an upward jump */
    uint64_t acc_ticks;
    double acc_j;
    uint64_t n_reads;
    uint64_t changed_t_ns; /* power: when the reading last changed */
    double util;           /* last device utilisation (held), < 0 unknown */
    uint64_t util_t_ns;
    double busy_s; /* integrated device busy time */
    int last_ok;
    uint64_t ev[EV_COUNT];
    double rej_w; /* power implied by the last rejected jump, W */
    /* mirror test: a counter that read the same as an earlier one (mirror_of) at open is a
     * candidate; it becomes a mirror (dedup) once the two have moved together at MIRROR_MOVES
     * reads, and stops being one the first time they differ */
    int mirror_of;
    int mirror_moves;
    uint64_t mirror_last;
};

/* Reads at which two counters must have moved to the same value before one is called a mirror
 * of the other (one equal reading at open is a coincidence as often as a mirror). */
#define MIRROR_MOVES 2

struct backend {
    const struct erg__backend_ops *ops;
    void *state;
    struct erg__chan *chans;
    size_t n;
    size_t first; /* index of its first channel in m->ch */
    erg_backend_info info;
    uint64_t *ticks; /* scratch for read, n entries */
    int *st;
    double *util; /* scratch for busy, n entries */
};

struct erg_meter {
    struct erg__env env;
    erg_meter_options opts;
    struct backend be[8];
    size_t n_be;
    struct chan *ch; /* n_ch channels, room for cap_ch */
    size_t n_ch, cap_ch;
    pthread_mutex_t mu;
    /* sampler */
    pthread_t thread;
    pthread_cond_t cv;
    int running, stop;
    double period_s;
    uint64_t last_poll_ns;
};

struct snap_chan {
    uint64_t acc_ticks;
    double acc_j;
    double busy_s;
    uint64_t n_reads;
    int have_prev, last_ok, dedup;
    uint64_t ev[EV_COUNT];
    double rej_w;
};

struct erg_meter_snapshot {
    const erg_meter *m;
    uint64_t t_ns;
    uint64_t cpu_ns;
    size_t n;
    struct snap_chan ch[];
};

static const struct erg__backend_ops *const registry[] = {
    &erg__backend_rapl_sysfs,
#ifdef ERG_HAVE_MSR
    &erg__backend_rapl_msr,
#endif
#ifdef ERG_HAVE_NVML
    &erg__backend_nvml,
#endif
    &erg__backend_hwmon,      &erg__backend_estimator,
};

/* ---- names ---- */

const char *erg_domain_name(erg_domain d)
{
    static const char *const names[] = {"package", "core", "uncore", "dram",
                                        "psys",    "gpu",  "system"};
    return (unsigned)d < sizeof names / sizeof names[0] ? names[d] : "unknown";
}

const char *erg_backend_state_name(erg_backend_state s)
{
    static const char *const names[] = {"found", "absent", "denied", "error", "skipped"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

const char *erg_reading_state_name(erg_reading_state s)
{
    static const char *const names[] = {"ok",        "declined",     "not_live", "below_resolution",
                                        "ambiguous", "unit_suspect", "error",    "no_data"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

/* ---- default seam ---- */

/* Every path is resolved inside the root: no "..", no symlink leads out of it (env.c). */
static int io_openat(void *ud, int dirfd, const char *path, int flags)
{
    (void)ud;
    return erg__open_in_root(dirfd, path, flags);
}
static ssize_t io_pread(void *ud, int fd, void *buf, size_t size, off_t off)
{
    (void)ud;
    return pread(fd, buf, size, off);
}
static int io_close(void *ud, int fd)
{
    (void)ud;
    return close(fd);
}
static uint64_t io_now_ns(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_time_ns(void)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    getrusage(RUSAGE_CHILDREN, &b);
    uint64_t us = 0;
    us += (uint64_t)a.ru_utime.tv_sec * 1000000u + (uint64_t)a.ru_utime.tv_usec;
    us += (uint64_t)a.ru_stime.tv_sec * 1000000u + (uint64_t)a.ru_stime.tv_usec;
    us += (uint64_t)b.ru_utime.tv_sec * 1000000u + (uint64_t)b.ru_utime.tv_usec;
    us += (uint64_t)b.ru_stime.tv_sec * 1000000u + (uint64_t)b.ru_stime.tv_usec;
    return us * 1000u;
}

/* ---- options ---- */

void erg_meter_options_init(erg_meter_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->sampler_period_s = 0.1;
    o->estimator_idle_w = 10.0;
    o->estimator_full_w = 65.0;
}

/* A non-negative power in W from the environment variable name into *out (left as is when the
 * variable is unset or empty). A value that is not a finite number >= 0 is an error naming the
 * variable, never silently replaced by the default. */
static int env_power_w(const char *name, double *out, erg_diag *diag)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return ERG_OK;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d))
        return erg_diag_set(diag, ERG_EINVAL, name,
                            "expects a power in W (a number >= 0), got '%s'", v);
    if (d < 0)
        return erg_diag_set(diag, ERG_EINVAL, name, "must be >= 0 W, got '%s'", v);
    *out = d;
    return ERG_OK;
}

/* Is backend name selected by the comma-separated list (NULL: all)? */
static int selected(const char *list, const char *name)
{
    if (!list || !*list)
        return 1;
    size_t n = strlen(name);
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* Every backend name erg knows, built in or not (rapl-msr and nvml depend on the build). */
static const char *const known_backends[] = {"rapl-sysfs", "rapl-msr", "nvml", "hwmon",
                                             "estimator"};

/* Is name one of the backends compiled into this build? */
static int built_in(const char *name, size_t len)
{
    for (size_t r = 0; r < sizeof registry / sizeof registry[0]; r++)
        if (strlen(registry[r]->name) == len && strncmp(registry[r]->name, name, len) == 0)
            return 1;
    return 0;
}

/* Check a comma-separated backend list (empty items are ignored): every name must be known.
 * ERG_OK, or ERG_EINVAL naming the first unknown one and the known ones. */
static int check_backend_list(const char *list, const char *origin, erg_diag *diag)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int known = len == 0;
        for (size_t k = 0; !known && k < sizeof known_backends / sizeof known_backends[0]; k++)
            known = strlen(known_backends[k]) == len && strncmp(known_backends[k], p, len) == 0;
        if (!known)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "unknown backend '%.*s' in %s (known: rapl-sysfs, rapl-msr, nvml, "
                                "hwmon, estimator)",
                                (int)(len < 64 ? len : 64), p, origin);
        if (!e)
            break;
        p = e + 1;
    }
    return ERG_OK;
}

/* ---- open ---- */

static int same_key(const struct chan *a, const struct chan *b)
{
    return a->c->domain == b->c->domain && strcmp(a->c->device, b->c->device) == 0;
}

/* Deduplicate: the same domain and device seen twice (intel-rapl and intel-rapl-mmio or TPMI,
 * sysfs and MSR) is counted once at open. Two counters of one backend that read identically at
 * open (die zones mirroring a socket's counter, or two packages that happen to read the same
 * once) are only candidates: the polls decide (mirror_check). The earlier channel is kept. */
/* Is die a die of package pkg's device: "package-0-die-1" of "package-0" (powercap names its zones
 * per die where RAPL is die-scoped, Cascade Lake-AP; a sub-zone takes its parent's device)? */
static int die_of(const char *die, const char *pkg)
{
    size_t n = strlen(pkg);
    return strncmp(die, pkg, n) == 0 && strncmp(die + n, "-die-", 5) == 0;
}

static void deduplicate(erg_meter *m)
{
    for (size_t j = 0; j < m->n_ch; j++)
        m->ch[j].mirror_of = -1;
    /* A package another backend reads die by die: the MSR backend reads a package through one CPU,
     * which sees its own die only, while the die zones cover the package. The per-package channel
     * (package, dram...) is counted once, through the dies. */
    for (size_t j = 0; j < m->n_ch; j++) {
        struct chan *b = &m->ch[j];
        if (!b->usable || b->c->component)
            continue;
        for (size_t i = 0; i < m->n_ch; i++) {
            const struct chan *a = &m->ch[i];
            if (i == j || !a->usable || a->c->component || a->backend == b->backend ||
                a->c->domain != b->c->domain || !die_of(a->c->device, b->c->device))
                continue;
            b->dedup = 1;
            erg__fmt(b->reason, sizeof b->reason,
                     "its dies are read as %s and its other dies; counted once, through them",
                     a->c->id);
            break;
        }
    }
    for (size_t j = 0; j < m->n_ch; j++) {
        struct chan *b = &m->ch[j];
        if (!b->usable || b->c->component || b->dedup)
            continue;
        for (size_t i = 0; i < j; i++) {
            struct chan *a = &m->ch[i];
            if (!a->usable || a->dedup || a->c->component || a->mirror_of >= 0)
                continue;
            /* one domain seen by two backends or two control types; two rails of one backend and
             * type (two system inputs of one hwmon device) are two rails, both kept */
            if (same_key(a, b) &&
                (a->backend != b->backend || a->c->zone_type != b->c->zone_type)) {
                b->dedup = 1;
                b->mirror_of = -1;
                erg__fmt(b->reason, sizeof b->reason, "same domain and device as %s; counted once",
                         a->c->id);
                break;
            }
            int candidate = a->backend == b->backend && a->c->kind == ERG_KIND_COUNTER &&
                            b->c->kind == ERG_KIND_COUNTER && a->c->domain == b->c->domain &&
                            a->have_prev && b->have_prev && a->prev == b->prev && a->prev != 0 &&
                            a->c->joules_per_tick == b->c->joules_per_tick;
            if (candidate && b->mirror_of < 0) {
                b->mirror_of = (int)i;
                b->mirror_moves = 0;
                b->mirror_last = b->prev;
            }
        }
    }
}

/* After a poll: a candidate mirror that moved to the same value as its original again counts one
 * more joint move (MIRROR_MOVES make it a mirror); one that differs is no mirror, for good. */
static void mirror_check(erg_meter *m)
{
    for (size_t j = 0; j < m->n_ch; j++) {
        struct chan *b = &m->ch[j];
        if (b->mirror_of < 0)
            continue;
        struct chan *a = &m->ch[b->mirror_of];
        if (!a->last_ok || !b->last_ok || a->pending || b->pending)
            continue;
        if (a->prev != b->prev || !a->usable || !b->usable) {
            b->mirror_of = -1;
            if (b->dedup) {
                b->dedup = 0;
                b->reason[0] = '\0';
            }
            continue;
        }
        if (b->prev != b->mirror_last) {
            b->mirror_last = b->prev;
            if (++b->mirror_moves >= MIRROR_MOVES && !b->dedup) {
                b->dedup = 1;
                erg__fmt(b->reason, sizeof b->reason,
                         "mirrors %s (the same value at %d reads as both moved); counted once",
                         a->c->id, b->mirror_moves);
            }
        }
    }
}

/* The socket a device name states: "package-N" (also "package-N-die-M") and "psys-N" give N,
 * "psys" 0 (the kernel's name for the first package's platform zone); -1 for any other. */
static int socket_of(const char *device)
{
    const char *p = NULL;
    if (strcmp(device, "psys") == 0)
        return 0;
    if (strncmp(device, "package-", 8) == 0)
        p = device + 8;
    else if (strncmp(device, "psys-", 5) == 0)
        p = device + 5;
    if (!p || *p < '0' || *p > '9')
        return -1;
    long v = 0;
    for (; *p >= '0' && *p <= '9' && v < 1000000; p++)
        v = v * 10 + (*p - '0');
    return *p == '\0' || *p == '-' ? (int)v : -1;
}

/* Hierarchy by domain semantics, not by sysfs nesting: psys ⊃ package ⊃ core/uncore; dram is
 * beside package (a sysfs child of it, but not inside its energy), inside psys. */
static void build_hierarchy(erg_meter *m)
{
    for (size_t j = 0; j < m->n_ch; j++) {
        struct chan *b = &m->ch[j];
        b->parent = -1;
        erg_domain want;
        int same_device;
        switch (b->c->domain) {
        case ERG_DOMAIN_CORE:
        case ERG_DOMAIN_UNCORE:
            want = ERG_DOMAIN_PACKAGE;
            same_device = 1;
            break;
        case ERG_DOMAIN_PACKAGE:
        case ERG_DOMAIN_DRAM:
            want = ERG_DOMAIN_PSYS;
            same_device = 0;
            break;
        default:
            continue;
        }
        /* per-socket psys zones ("psys", "psys-1", ...): a package or dram's own socket's */
        int sock = want == ERG_DOMAIN_PSYS ? socket_of(b->c->device) : -1, sock_match = 0;
        for (size_t i = 0; sock >= 0 && i < m->n_ch; i++)
            sock_match |= m->ch[i].c->domain == ERG_DOMAIN_PSYS && !m->ch[i].dedup &&
                          socket_of(m->ch[i].c->device) == sock;
        for (int pass = 0; pass < 2 && b->parent < 0; pass++)
            for (size_t i = 0; i < m->n_ch; i++) {
                struct chan *a = &m->ch[i];
                if (i == j || a->c->domain != want || a->dedup)
                    continue;
                if (pass == 0 && a->backend != b->backend)
                    continue;
                if (sock_match && socket_of(a->c->device) != sock)
                    continue;
                if (same_device && strcmp(a->c->device, b->c->device) != 0)
                    continue;
                b->parent = (int)i;
                break;
            }
    }
}

static void close_backends(erg_meter *m)
{
    for (size_t i = 0; i < m->n_be; i++) {
        struct backend *b = &m->be[i];
        if (b->state && b->ops->close)
            b->ops->close(b->state);
        free(b->ticks);
        free(b->st);
        free(b->util);
        b->util = NULL;
        b->state = NULL;
        b->ticks = NULL;
        b->st = NULL;
    }
}

/* Undo a partial erg_meter_open: the backends opened so far, the lock, the root and m itself.
 * Returns ERG_ENOMEM with diag set to "<what>: out of memory" (what may be NULL). */
static int open_out_of_memory(erg_meter *m, const char *what, erg_diag *diag)
{
    close_backends(m);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    close(m->env.root_fd);
    free(m->ch); /* the channels of the backends opened before */
    free(m);
    return what ? erg_diag_set(diag, ERG_ENOMEM, NULL, "%s: out of memory", what)
                : erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
}

static void poll_locked(erg_meter *m);

int erg_meter_open(const erg_meter_options *opts, erg_meter **out, erg_diag *diag)
{
    if (!out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_meter_open: out is NULL");
    *out = NULL;
    {
        const char *l = opts && opts->backends ? opts->backends : getenv("ERG_BACKENDS");
        int r =
            check_backend_list(l, opts && opts->backends ? "--backends" : "$ERG_BACKENDS", diag);
        if (r != ERG_OK)
            return r;
    }
    /* the sampler keeps its period in nanoseconds (uint64_t): a day at most */
    if (opts && (isnan(opts->sampler_period_s) || opts->sampler_period_s > ERG_METER_MAX_PERIOD_S))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "sampler period %g s: expected at most %g s (<= 0: the default)",
                            opts->sampler_period_s, ERG_METER_MAX_PERIOD_S);
    erg_meter *m = calloc(1, sizeof *m);
    if (!m)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (opts)
        m->opts = *opts;
    else
        erg_meter_options_init(&m->opts);
    if (!(m->opts.sampler_period_s > 0))
        m->opts.sampler_period_s = 0.1;
    m->env.root_fd = -1;
    m->env.io.openat = (m->opts.io && m->opts.io->openat) ? m->opts.io->openat : io_openat;
    m->env.io.pread = (m->opts.io && m->opts.io->pread) ? m->opts.io->pread : io_pread;
    m->env.io.close = (m->opts.io && m->opts.io->close) ? m->opts.io->close : io_close;
    m->env.io.now_ns = (m->opts.io && m->opts.io->now_ns) ? m->opts.io->now_ns : io_now_ns;
    m->env.io.ud = m->opts.io ? m->opts.io->ud : NULL;

    /* With elevated privilege (setuid, file capabilities: AT_SECURE) the overrides that choose
     * what is read or loaded are refused, not followed: ERG_ROOT would let a user read any file
     * through symlinks or labels, ERG_NVML_LIB load their code with erg's privilege. */
    static const char *const guarded[] = {"ERG_ROOT", "ERG_NVML_LIB"};
    for (size_t k = 0; k < sizeof guarded / sizeof guarded[0]; k++) {
        const char *v = getenv(guarded[k]);
        if (v && *v && erg__secure() &&
            !(k == 0 ? m->opts.root != NULL : m->opts.nvml_path != NULL)) {
            free(m);
            return erg_diag_set(diag, ERG_EACCES, guarded[k],
                                "refused: erg runs with elevated privilege (setuid or file "
                                "capabilities), so it does not take %s from the environment; "
                                "unset it, or run erg without privilege",
                                guarded[k]);
        }
    }
    const char *root = m->opts.root ? m->opts.root : erg__getenv("ERG_ROOT");
    if (!root || !*root)
        root = "/";
    erg__strlcpy(m->env.root, strcmp(root, "/") == 0 ? "" : root, sizeof m->env.root);
    size_t rl = strlen(m->env.root);
    while (rl > 0 && m->env.root[rl - 1] == '/')
        m->env.root[--rl] = '\0';
    m->env.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m->env.root_fd < 0) {
        int e = errno;
        free(m);
        return erg_diag_set(diag, e == EACCES ? ERG_EACCES : ERG_ENOENT, root,
                            "cannot open the root prefix (ERG_ROOT): %s", strerror(e));
    }
    m->env.nvml_path = m->opts.nvml_path ? m->opts.nvml_path : erg__getenv("ERG_NVML_LIB");
    if (!m->env.nvml_path || !*m->env.nvml_path)
        m->env.nvml_path = "libnvidia-ml.so.1";
    m->env.estimator_idle_w = m->opts.estimator_idle_w;
    m->env.estimator_full_w = m->opts.estimator_full_w;
    {
        int r = env_power_w("ERG_ESTIMATOR_IDLE_W", &m->env.estimator_idle_w, diag);
        if (r == ERG_OK)
            r = env_power_w("ERG_ESTIMATOR_FULL_W", &m->env.estimator_full_w, diag);
        if (r != ERG_OK) {
            close(m->env.root_fd);
            free(m);
            return r;
        }
    }
    if (!(m->env.estimator_full_w >= m->env.estimator_idle_w) || !(m->env.estimator_idle_w >= 0)) {
        double iw = m->env.estimator_idle_w, fw = m->env.estimator_full_w;
        close(m->env.root_fd);
        free(m);
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "estimator powers must satisfy 0 <= idle (%g W) <= full load (%g W)",
                            iw, fw);
    }
    const char *list = m->opts.backends ? m->opts.backends : getenv("ERG_BACKENDS");
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &ca);
    pthread_condattr_destroy(&ca);

    for (size_t r = 0; r < sizeof registry / sizeof registry[0]; r++) {
        struct backend *b = &m->be[m->n_be++];
        b->ops = registry[r];
        erg__strlcpy(b->info.name, b->ops->name, sizeof b->info.name);
        if (!selected(list, b->ops->name)) {
            b->info.state = ERG_BACKEND_SKIPPED;
            erg__fmt(b->info.reason, sizeof b->info.reason, "not in ERG_BACKENDS / --backends");
            continue;
        }
        erg_diag d;
        erg_diag_clear(&d);
        int rc = b->ops->open(&m->env, &b->state, &b->chans, &b->n, &d);
        if (rc == ERG_ENOMEM) {
            /* not a property of the host: opening without this backend would silently measure
             * fewer channels (or report no meter, exit 3) */
            b->state = NULL;
            b->n = 0;
            return open_out_of_memory(m, registry[r]->name, diag);
        }
        if (rc != ERG_OK) {
            b->state = NULL;
            b->n = 0;
            b->info.state = rc == ERG_ENODEV || rc == ERG_ENOLIB || rc == ERG_ENOENT
                                ? ERG_BACKEND_ABSENT
                            : rc == ERG_EACCES ? ERG_BACKEND_DENIED
                                               : ERG_BACKEND_ERROR;
            char msg[sizeof d.where + sizeof d.detail + 4];
            if (d.where[0])
                erg__fmt(msg, sizeof msg, "%s: %s", d.where, d.detail);
            else
                erg__fmt(msg, sizeof msg, "%s", d.detail[0] ? d.detail : erg_strerror(rc));
            erg__strlcpy(b->info.reason, msg, sizeof b->info.reason);
            continue;
        }
        b->info.state = b->n ? ERG_BACKEND_FOUND : ERG_BACKEND_ABSENT;
        if (!b->n)
            erg__fmt(b->info.reason, sizeof b->info.reason, "no channels");
        b->ticks = calloc(b->n ? b->n : 1, sizeof *b->ticks);
        b->st = calloc(b->n ? b->n : 1, sizeof *b->st);
        b->util = calloc(b->n ? b->n : 1, sizeof *b->util);
        if (!b->ticks || !b->st || !b->util)
            return open_out_of_memory(m, NULL, diag);
        b->first = m->n_ch;
        if (m->n_ch + b->n > m->cap_ch) { /* every channel kept: no limit */
            size_t cap = m->cap_ch ? m->cap_ch : 16;
            while (cap < m->n_ch + b->n)
                cap *= 2;
            struct chan *nc = realloc(m->ch, cap * sizeof *nc);
            if (!nc)
                return open_out_of_memory(m, NULL, diag);
            m->ch = nc;
            m->cap_ch = cap;
        }
        for (size_t i = 0; i < b->n; i++) {
            struct chan *c = &m->ch[m->n_ch++];
            memset(c, 0, sizeof *c);
            c->c = &b->chans[i];
            c->backend = m->n_be - 1;
            c->backend_slot = i;
            c->usable = b->chans[i].usable;
            c->live = -1;
            c->util = -1.0;
            c->mirror_of = -1;
            erg__strlcpy(c->reason, b->chans[i].reason, sizeof c->reason);
            b->info.n_channels++;
        }
        size_t usable = 0;
        for (size_t i = 0; i < b->n; i++)
            usable += b->chans[i].usable != 0;
        if (b->n && !usable) {
            /* every channel declined: say why the backend as a whole gives nothing */
            b->info.state = strncmp(b->chans[0].reason, "permission denied", 17) == 0
                                ? ERG_BACKEND_DENIED
                                : ERG_BACKEND_ERROR;
            erg__strlcpy(b->info.reason, b->chans[0].reason, sizeof b->info.reason);
        }
    }
    pthread_mutex_lock(&m->mu);
    poll_locked(m); /* first reading: no value until the second */
    pthread_mutex_unlock(&m->mu);
    deduplicate(m);
    build_hierarchy(m);
    if (m->n_ch == 0) {
        /* say why each backend tried gave nothing (the listing would; a short error must too) */
        char why[480] = "";
        size_t used = 0;
        for (size_t b = 0; b < m->n_be && used < sizeof why; b++) {
            const erg_backend_info *bi = &m->be[b].info;
            if (bi->state == ERG_BACKEND_SKIPPED)
                continue;
            int w = snprintf(why + used, sizeof why - used, "%s%s %s: %s", used ? "; " : ": ",
                             bi->name, erg_backend_state_name(bi->state), bi->reason);
            used = w < 0 ? sizeof why : used + (size_t)w;
        }
        for (const char *p = list; p && *p && used < sizeof why;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len && !built_in(p, len)) {
                int w = snprintf(why + used, sizeof why - used, "%s%.*s: not built into this erg",
                                 used ? "; " : ": ", (int)len, p);
                used = w < 0 ? sizeof why : used + (size_t)w;
            }
            if (!e)
                break;
            p = e + 1;
        }
        erg_meter_close(m);
        return erg_diag_set(diag, ERG_ENODEV, NULL, "no backend found any channel%s", why);
    }
    *out = m;
    return ERG_OK;
}

void erg_meter_close(erg_meter *m)
{
    if (!m)
        return;
    erg_meter_sampler_stop(m);
    close_backends(m);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    if (m->env.root_fd >= 0)
        close(m->env.root_fd);
    free(m->ch);
    free(m);
}

size_t erg_meter_backend_count(const erg_meter *m)
{
    return m ? m->n_be : 0;
}

int erg_meter_backend_info(const erg_meter *m, size_t i, erg_backend_info *out)
{
    if (!m || !out || i >= m->n_be)
        return ERG_EINVAL;
    *out = m->be[i].info;
    return ERG_OK;
}

double erg_meter_now_s(const erg_meter *m)
{
    return (double)m->env.io.now_ns(m->env.io.ud) * 1e-9;
}

size_t erg_meter_channel_count(const erg_meter *m)
{
    return m ? m->n_ch : 0;
}

int erg_meter_channel_info(const erg_meter *m, size_t i, erg_channel_info *out)
{
    if (!m || !out || i >= m->n_ch)
        return ERG_EINVAL;
    const struct chan *c = &m->ch[i];
    memset(out, 0, sizeof *out);
    erg__strlcpy(out->id, c->c->id, sizeof out->id);
    erg__strlcpy(out->backend, m->be[c->backend].ops->name, sizeof out->backend);
    out->domain = c->c->domain;
    erg__strlcpy(out->device, c->c->device, sizeof out->device);
    erg__strlcpy(out->label, c->c->label, sizeof out->label);
    out->grade = c->c->grade;
    out->kind = c->c->kind;
    out->resolution_j = c->c->kind == ERG_KIND_COUNTER
                            ? c->c->joules_per_tick
                            : c->c->joules_per_tick * c->c->min_interval_s;
    out->wrap_j = c->c->kind != ERG_KIND_COUNTER || c->c->no_wrap ? 0.0
                  : c->c->wrap_unknown ? (double)NAN /* wraps at a modulus we could not read */
                                       : (double)c->c->wrap_ticks * c->c->joules_per_tick;
    out->min_interval_s = c->c->min_interval_s;
    out->max_power_w = c->c->max_power_w;
    out->parent = c->parent;
    out->usable = c->usable;
    out->live = c->live;
    out->deduplicated = c->dedup;
    erg__strlcpy(out->reason, c->reason, sizeof out->reason);
    if (c->c->kind == ERG_KIND_ESTIMATE) {
        out->model_idle_w = m->env.estimator_idle_w;
        out->model_full_w = m->env.estimator_full_w;
    }
    return ERG_OK;
}

/* ---- polls ---- */

/* Most energy a channel can plausibly gain over dt seconds, in ticks. */
static double plausible_ticks(const struct erg__chan *c, double dt_s)
{
    return c->max_power_w * (dt_s + c->min_interval_s) / c->joules_per_tick;
}

static void update_counter(struct chan *ch, uint64_t v, uint64_t t)
{
    const struct erg__chan *c = ch->c;
    if (!ch->have_prev) {
        ch->have_prev = 1;
        ch->prev = v;
        ch->prev_t_ns = t;
        ch->n_reads++;
        return;
    }
    double dt_s = (double)(t - ch->prev_t_ns) * 1e-9;
    uint64_t d = 0;
    int wrapped = 0, ok = 1, up = 1;
    if (v >= ch->prev) {
        d = v - ch->prev;
    } else if (c->wrap_ticks && !c->wrap_unknown && ch->prev < c->wrap_ticks && v < c->wrap_ticks) {
        d = c->wrap_ticks - ch->prev + v; /* the domain's own modulus, never 2^64 */
        wrapped = 1;
    } else {
        ok = 0; /* a decrease with no usable modulus: never negative energy */
        up = 0;
    }
    if (ok && (double)d > plausible_ticks(c, dt_s)) {
        ok = 0; /* implies impossible power: a step backwards (if "wrapped") or a jump */
        up = !wrapped;
    }
    if (ok) {
        if (c->wrap_ticks && !c->wrap_unknown &&
            dt_s > (double)c->wrap_ticks * c->joules_per_tick / c->max_power_w)
            ch->ev[EV_AMBIG]++; /* read too rarely: a whole wrap could hide in this interval */
        if (wrapped)
            ch->ev[EV_WRAP]++;
        ch->acc_ticks += d;
        ch->prev = v;
        ch->prev_t_ns = t;
        ch->pending = 0;
        ch->n_reads++;
        return;
    }
    /* Rejected. If it confirms an earlier rejected reading (the counter really moved there and
     * goes on moving from it at a plausible rate: a reset), re-baseline there: the jump interval is
     * skipped, never counted twice. Two implausible climbs in a row mean the units are wrong. */
    if (ch->pending) {
        if (v == ch->rej_val)
            return; /* still held at the rejected value: wait for it to move */
        double dt2 = (double)(t - ch->rej_t_ns) * 1e-9;
        if (v > ch->rej_val && (double)(v - ch->rej_val) <= plausible_ticks(c, dt2)) {
            ch->prev = v;
            ch->prev_t_ns = t;
            ch->pending = 0;
            ch->n_reads++;
            return;
        }
        if (up && ch->rej_up && v > ch->rej_val)
            ch->ev[EV_UNIT]++;
    }
    ch->ev[up ? EV_GLITCH : EV_BACKWARDS]++;
    ch->rej_w = dt_s > 0 && up ? (double)(v - ch->prev) * c->joules_per_tick / dt_s : 0.0;
    ch->pending = 1;
    ch->rej_val = v;
    ch->rej_t_ns = t;
    ch->rej_up = up;
}

static void update_power(struct chan *ch, uint64_t v, uint64_t t)
{
    const struct erg__chan *c = ch->c;
    double w = (double)v * c->joules_per_tick;
    if (w > c->max_power_w) {
        ch->ev[EV_UNIT]++; /* discarded; the held value goes on */
        return;
    }
    if (c->kind == ERG_KIND_POWER) {
        /* hold semantics: the previous sample holds until this one, over the actual time */
        if (ch->have_prev)
            ch->acc_j += (double)ch->prev * c->joules_per_tick * (double)(t - ch->prev_t_ns) * 1e-9;
        /* a vendor reading that has not changed for 10 s is stale (JouleClaw notes: a value held
         * 10 s gives no live figure); flagged */
        if (!ch->have_prev || v != ch->prev)
            ch->changed_t_ns = t;
        else if (t - ch->changed_t_ns > 10000000000ull)
            ch->ev[EV_STALE]++;
    } else {
        /* estimate: the value is the mean power over the interval that ends now */
        if (ch->have_prev)
            ch->acc_j += w * (double)(t - ch->prev_t_ns) * 1e-9;
    }
    ch->have_prev = 1;
    ch->prev = v;
    ch->prev_t_ns = t;
    ch->n_reads++;
}

/* One poll: read every backend, then stamp the whole poll with one CLOCK_MONOTONIC time, so that
 * integration intervals and window times are the same intervals. */
static void poll_locked(erg_meter *m)
{
    for (size_t bi = 0; bi < m->n_be; bi++) {
        struct backend *b = &m->be[bi];
        if (b->state && b->n) {
            b->ops->read(b->state, b->ticks, b->st, b->n);
            if (b->ops->busy)
                b->ops->busy(b->state, b->util, b->n);
        }
    }
    uint64_t t = m->env.io.now_ns(m->env.io.ud);
    m->last_poll_ns = t;
    for (size_t bi = 0; bi < m->n_be; bi++) {
        struct backend *b = &m->be[bi];
        if (!b->state || !b->n)
            continue;
        for (size_t k = 0; k < b->n && b->first + k < m->n_ch; k++) {
            struct chan *ch = &m->ch[b->first + k];
            if (!ch->usable)
                continue;
            if (b->ops->busy) {
                /* busy time: the held utilisation over the actual interval */
                if (ch->util >= 0 && ch->util_t_ns)
                    ch->busy_s += ch->util * (double)(t - ch->util_t_ns) * 1e-9;
                ch->util = b->util[k];
                ch->util_t_ns = t;
            }
            if (b->st[k] != ERG__READ_OK) {
                ch->ev[b->st[k] == ERG__READ_FATAL ? EV_FATAL : EV_TRANSIENT]++;
                ch->last_ok = 0;
                continue;
            }
            ch->last_ok = 1;
            if (ch->c->kind == ERG_KIND_COUNTER)
                update_counter(ch, b->ticks[k], t);
            else
                update_power(ch, b->ticks[k], t);
        }
    }
    mirror_check(m);
}

int erg_meter_poll(erg_meter *m)
{
    if (!m)
        return ERG_EINVAL;
    pthread_mutex_lock(&m->mu);
    poll_locked(m);
    pthread_mutex_unlock(&m->mu);
    return ERG_OK;
}

/* ---- snapshots and windows ---- */

erg_meter_snapshot *erg_meter_snapshot_new(const erg_meter *m)
{
    if (!m)
        return NULL;
    erg_meter_snapshot *s = calloc(1, sizeof *s + m->n_ch * sizeof s->ch[0]);
    if (!s)
        return NULL;
    s->m = m;
    s->n = m->n_ch;
    return s;
}

void erg_meter_snapshot_free(erg_meter_snapshot *s)
{
    free(s);
}

int erg_meter_snapshot_take(erg_meter *m, erg_meter_snapshot *s)
{
    if (!m || !s || s->m != m)
        return ERG_EINVAL;
    pthread_mutex_lock(&m->mu);
    poll_locked(m);
    s->t_ns = m->last_poll_ns;
    s->cpu_ns = cpu_time_ns();
    for (size_t i = 0; i < s->n; i++) {
        const struct chan *c = &m->ch[i];
        struct snap_chan *o = &s->ch[i];
        o->acc_ticks = c->acc_ticks;
        o->acc_j = c->acc_j;
        o->busy_s = c->busy_s;
        o->n_reads = c->n_reads;
        o->have_prev = c->have_prev;
        o->last_ok = c->last_ok;
        o->dedup = c->dedup;
        o->rej_w = c->rej_w;
        memcpy(o->ev, c->ev, sizeof o->ev);
    }
    pthread_mutex_unlock(&m->mu);
    return ERG_OK;
}

static int cpu_side(erg_domain d)
{
    return d == ERG_DOMAIN_PACKAGE || d == ERG_DOMAIN_PSYS || d == ERG_DOMAIN_DRAM;
}

/* Is channel i one a total stands on: a hardware package, dram, psys, system or GPU channel that
 * is neither a component rail nor a counted-once mirror? */
static int coverable(const erg_meter *m, size_t i, const erg_meter_snapshot *b)
{
    const struct erg__chan *c = m->ch[i].c;
    return !b->ch[i].dedup && !c->component && c->kind != ERG_KIND_ESTIMATE &&
           (c->usable || c->lacks);
}

/* Add "id (state: reason)" to the missing list. */
static void add_missing(char *buf, size_t size, const erg_channel_reading *r)
{
    size_t n = strlen(buf);
    if (n + 8 >= size)
        return;
    erg__fmt(buf + n, size - n, "%s%s (%s)", n ? "; " : "", r->id,
             erg_reading_state_name(r->state));
}

/* Choose the channels a total sums, so that no domain is counted twice:
 * a system channel holds everything; else psys holds the packages and dram; else packages and
 * dram per device; the estimator (a model of package power) only when no package or psys channel
 * has a figure; GPUs per device. A total covers what it claims: when a package, dram or GPU it
 * would sum (or stand in for) has no figure, there is no total (ERG_FLAG_INCOMPLETE, the channels
 * named), never a sum that leaves one out. */
static void select_total(const erg_meter *m, erg_measurement *out, const erg_meter_snapshot *b)
{
    erg_channel_reading *r = out->channels;
    size_t n = out->n_channels;
/* channel i has a figure a total may sum */
#define OK(i) (r[i].state == ERG_READING_OK && !b->ch[i].dedup && !m->ch[i].c->component)
    for (size_t i = 0; i < n; i++)
        r[i].in_total = 0;
    char missing[ERG_METER_REASON_MAX] = "";
    /* best-graded ok channel of a domain and device not yet taken */
    int sys = -1;
    for (size_t i = 0; i < n; i++)
        if (OK(i) && r[i].domain == ERG_DOMAIN_SYSTEM && (sys < 0 || r[i].grade < r[sys].grade))
            sys = (int)i;
    if (sys >= 0 && strncmp(r[sys].device, "socket-", 7) == 0) {
        /* per-socket module meters (NVIDIA Grace Hopper "Module Power Socket N") partition the
         * machine: one per socket, every socket, and a socket without a figure leaves the total
         * incomplete. The module holds the GPU: no GPU figure is added to it. */
        for (size_t i = 0; i < n; i++) {
            if (r[i].domain != ERG_DOMAIN_SYSTEM || strncmp(r[i].device, "socket-", 7) != 0)
                continue;
            int better = 0, covered = OK(i);
            for (size_t j = 0; j < n; j++)
                if (j != i && OK(j) && r[j].domain == ERG_DOMAIN_SYSTEM &&
                    strcmp(r[j].device, r[i].device) == 0) {
                    covered = 1;
                    if (r[j].grade < r[i].grade || (r[j].grade == r[i].grade && j < i))
                        better = 1;
                }
            if (OK(i) && !better)
                r[i].in_total = 1;
            else if (!covered && coverable(m, i, b))
                add_missing(missing, sizeof missing, &r[i]);
        }
    } else if (sys >= 0) {
        /* the best whole-machine input; a second input channel of the same monitor (two supplies
         * on one power monitor) is a second input, summed, never dropped */
        for (size_t i = 0; i < n; i++) {
            if (r[i].domain != ERG_DOMAIN_SYSTEM || strcmp(r[i].device, r[sys].device) != 0 ||
                m->ch[i].backend != m->ch[sys].backend)
                continue;
            if (OK(i))
                r[i].in_total = 1;
            else if (coverable(m, i, b))
                add_missing(missing, sizeof missing, &r[i]);
        }
    } else {
        int psys = -1;
        for (size_t i = 0; i < n; i++)
            if (OK(i) && r[i].domain == ERG_DOMAIN_PSYS && m->ch[i].c->kind != ERG_KIND_ESTIMATE &&
                (psys < 0 || r[i].grade < r[psys].grade))
                psys = (int)i;
                /* one psys per socket (powercap "psys", "psys-1", ...): whether each holds its
                 * socket or the whole platform is not said, so none is taken for the total and the
                 * parts are */
#define PSYS_OK(i)                                                                                 \
    (OK(i) && r[i].domain == ERG_DOMAIN_PSYS && m->ch[i].c->kind != ERG_KIND_ESTIMATE)
        size_t n_psys = 0;
        for (size_t i = 0; psys >= 0 && i < n; i++) {
            int first = PSYS_OK(i);
            for (size_t j = 0; j < i && first; j++)
                if (PSYS_OK(j) && strcmp(r[j].device, r[i].device) == 0)
                    first = 0;
            n_psys += (size_t)first;
        }
#undef PSYS_OK
        if (n_psys > 1) {
            for (size_t i = 0; i < n; i++)
                if (OK(i) && r[i].domain == ERG_DOMAIN_PSYS)
                    erg__fmt(r[i].reason, sizeof r[i].reason,
                             "one of %zu psys zones (one per socket; whether each holds its "
                             "socket or the platform is not known): the packages and dram are "
                             "summed instead",
                             n_psys);
            psys = -1;
        }
        if (psys >= 0) {
            /* psys contains the packages and dram: if it reads less than they do, it is not the
             * container it claims to be here, and the parts are summed instead */
            double parts = 0.0;
            for (size_t i = 0; i < n; i++)
                if (OK(i) && m->ch[i].c->kind == ERG_KIND_COUNTER &&
                    (r[i].domain == ERG_DOMAIN_PACKAGE || r[i].domain == ERG_DOMAIN_DRAM))
                    parts += r[i].energy_j;
            if (r[psys].energy_j < parts * 0.99 - 1e-3) {
                erg__fmt(r[psys].reason, sizeof r[psys].reason,
                         "read %.6g J, less than the %.6g J of the packages and dram it contains: "
                         "not summed",
                         r[psys].energy_j, parts);
                psys = -1;
            }
        }
        int any_cpu = 0;
        if (psys >= 0) {
            r[psys].in_total = 1;
            any_cpu = 1;
        } else {
            for (size_t i = 0; i < n; i++) {
                if (!OK(i) || m->ch[i].c->kind == ERG_KIND_ESTIMATE ||
                    (r[i].domain != ERG_DOMAIN_PACKAGE && r[i].domain != ERG_DOMAIN_DRAM))
                    continue;
                int better = 0;
                for (size_t j = 0; j < n; j++)
                    if (j != i && OK(j) && r[j].domain == r[i].domain &&
                        m->ch[j].c->kind != ERG_KIND_ESTIMATE &&
                        strcmp(r[j].device, r[i].device) == 0 &&
                        (r[j].grade < r[i].grade || (r[j].grade == r[i].grade && j < i)))
                        better = 1;
                if (!better) {
                    r[i].in_total = 1;
                    if (r[i].domain == ERG_DOMAIN_PACKAGE)
                        any_cpu = 1; /* dram alone does not stand for the CPU */
                }
            }
            /* every package and dram the sum stands on must be in it: one without a figure (and
             * no other channel of its domain and device with one) leaves the total incomplete */
            int cpu_missing = 0;
            for (size_t i = 0; i < n; i++) {
                if (OK(i) || !coverable(m, i, b) ||
                    (r[i].domain != ERG_DOMAIN_PACKAGE && r[i].domain != ERG_DOMAIN_DRAM))
                    continue;
                int covered = 0;
                for (size_t j = 0; j < n && !covered; j++)
                    covered = OK(j) && r[j].domain == r[i].domain &&
                              m->ch[j].c->kind != ERG_KIND_ESTIMATE &&
                              strcmp(r[j].device, r[i].device) == 0;
                if (!covered) {
                    cpu_missing = 1;
                    add_missing(missing, sizeof missing, &r[i]);
                }
            }
            /* no hardware CPU figure at all: the estimator stands for the whole CPU, labelled */
            if (cpu_missing && !any_cpu)
                for (size_t i = 0; i < n; i++)
                    if (OK(i) && m->ch[i].c->kind == ERG_KIND_ESTIMATE && cpu_side(r[i].domain)) {
                        for (size_t k = 0; k < n; k++)
                            r[k].in_total = 0;
                        missing[0] = '\0';
                        any_cpu = 0;
                        break;
                    }
        }
        if (!any_cpu)
            for (size_t i = 0; i < n; i++)
                if (OK(i) && m->ch[i].c->kind == ERG_KIND_ESTIMATE && cpu_side(r[i].domain)) {
                    r[i].in_total = 1;
                    break;
                }
        for (size_t i = 0; i < n; i++) {
            if (r[i].domain != ERG_DOMAIN_GPU)
                continue;
            int better = 0;
            for (size_t j = 0; j < n; j++)
                if (j != i && OK(j) && r[j].domain == ERG_DOMAIN_GPU &&
                    strcmp(r[j].device, r[i].device) == 0 &&
                    (r[j].grade < r[i].grade || (r[j].grade == r[i].grade && j < i)))
                    better = 1;
            if (OK(i) && !better)
                r[i].in_total = 1;
            else if (!OK(i) && !better && coverable(m, i, b))
                add_missing(missing, sizeof missing, &r[i]);
        }
    }
    out->total_energy_j = 0.0;
    out->total_grade = ERG_GRADE_HW_SHUNT;
    out->n_total = 0;
    out->total_flags = 0;
    out->total_reason[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (r[i].in_total) {
            out->total_energy_j += r[i].energy_j;
            out->total_grade = erg_grade_weakest(out->total_grade, r[i].grade);
            out->n_total++;
        }
    if (missing[0]) {
        /* a total that silently left these out would look complete: give none, say why */
        for (size_t i = 0; i < n; i++)
            r[i].in_total = 0;
        out->n_total = 0;
        out->total_flags = ERG_FLAG_INCOMPLETE;
        erg__fmt(out->total_reason, sizeof out->total_reason,
                 "incomplete: no figure from %s; no total rather than one that leaves them out",
                 missing);
    }
    if (out->n_total == 0) {
        out->total_energy_j = NAN;
        out->total_grade = ERG_GRADE_ESTIMATOR;
        if (!out->total_reason[0])
            erg__fmt(out->total_reason, sizeof out->total_reason, "no channel has a figure");
    }
#undef OK
}

int erg_meter_diff(const erg_meter *m, const erg_meter_snapshot *a, const erg_meter_snapshot *b,
                   double extra_busy_s, erg_measurement *out)
{
    if (!m || !a || !b || !out || a->m != m || b->m != m || b->t_ns < a->t_ns)
        return ERG_EINVAL;
    if (!(extra_busy_s >= 0))
        extra_busy_s = 0;
    if (out->capacity < m->n_ch || !out->channels) {
        erg_channel_reading *nc =
            realloc(out->channels, (m->n_ch ? m->n_ch : 1) * sizeof *out->channels);
        if (!nc)
            return ERG_ENOMEM;
        out->channels = nc;
        out->capacity = m->n_ch ? m->n_ch : 1;
    }
    out->time_s = (double)(b->t_ns - a->t_ns) * 1e-9;
    out->cpu_s = b->cpu_ns >= a->cpu_ns ? (double)(b->cpu_ns - a->cpu_ns) * 1e-9 : 0.0;
    out->n_channels = m->n_ch;
    for (size_t i = 0; i < m->n_ch; i++) {
        const struct chan *ch = &m->ch[i];
        const struct erg__chan *c = ch->c;
        const struct snap_chan *x = &a->ch[i], *y = &b->ch[i];
        erg_channel_reading *r = &out->channels[i];
        erg__strlcpy(r->id, c->id, sizeof r->id);
        r->domain = c->domain;
        erg__strlcpy(r->device, c->device, sizeof r->device);
        r->grade = c->grade;
        r->flags = y->dedup ? ERG_FLAG_DEDUPLICATED : 0;
        r->reason[0] = '\0';
        r->energy_j = NAN;
        r->in_total = 0;
        if (!ch->usable) {
            r->state = ERG_READING_DECLINED;
            erg__strlcpy(r->reason, ch->reason, sizeof r->reason);
            continue;
        }
        uint64_t ev[EV_COUNT];
        for (int k = 0; k < EV_COUNT; k++)
            ev[k] = y->ev[k] - x->ev[k];
        if (ev[EV_WRAP])
            r->flags |= ERG_FLAG_WRAP_CORRECTED;
        if (ev[EV_AMBIG])
            r->flags |= ERG_FLAG_AMBIGUOUS_WRAP;
        if (ev[EV_BACKWARDS])
            r->flags |= ERG_FLAG_BACKWARDS;
        if (ev[EV_GLITCH])
            r->flags |= ERG_FLAG_GLITCH;
        if (ev[EV_UNIT])
            r->flags |= ERG_FLAG_UNIT_SUSPECT;
        if (ev[EV_TRANSIENT] || ev[EV_STALE])
            r->flags |= ERG_FLAG_STALE;
        /* the work's busy time on this channel's device: CPU time for CPU-side domains, the
         * device's integrated utilisation (NVML) for GPUs; plus what the caller reports */
        double busy_s =
            (c->domain == ERG_DOMAIN_GPU ? y->busy_s - x->busy_s : out->cpu_s) + extra_busy_s;
        uint64_t dticks = y->acc_ticks - x->acc_ticks;
        if (y->dedup)
            erg__strlcpy(r->reason, ch->reason, sizeof r->reason);
        if (ev[EV_FATAL]) {
            r->state = ERG_READING_ERROR;
            erg__fmt(r->reason, sizeof r->reason,
                     "%llu device error(s) inside the window: no figure rather than a wrong one",
                     (unsigned long long)ev[EV_FATAL]);
        } else if (!x->last_ok || !y->last_ok) {
            r->state = ERG_READING_ERROR;
            erg__fmt(r->reason, sizeof r->reason, "the read at the window's %s failed",
                     !x->last_ok ? "begin" : "end");
        } else if (!x->have_prev) {
            r->state = ERG_READING_NO_DATA;
            erg__fmt(r->reason, sizeof r->reason, "no reading before the window began");
        } else if (out->time_s < c->min_interval_s) {
            r->state = ERG_READING_BELOW_RESOLUTION;
            r->flags |= ERG_FLAG_BELOW_RESOLUTION;
            erg__fmt(r->reason, sizeof r->reason,
                     "window of %.3g s is shorter than the update period %.3g s", out->time_s,
                     c->min_interval_s);
        } else if (ev[EV_UNIT]) {
            r->state = ERG_READING_UNIT_SUSPECT;
            erg__fmt(r->reason, sizeof r->reason,
                     "readings imply power above %.0f W: units suspect, no figure", c->max_power_w);
        } else if (ev[EV_AMBIG]) {
            r->state = ERG_READING_AMBIGUOUS;
            erg__fmt(r->reason, sizeof r->reason,
                     "read too rarely: a wrap of %.6g J may be hidden; not guessed",
                     (double)c->wrap_ticks * c->joules_per_tick);
        } else if (c->kind == ERG_KIND_COUNTER && dticks == 0 && ev[EV_GLITCH]) {
            /* it moved, but by a jump no hardware makes: held, not counted, and said so */
            r->state = ERG_READING_UNIT_SUSPECT;
            r->flags |= ERG_FLAG_UNIT_SUSPECT;
            erg__fmt(r->reason, sizeof r->reason,
                     "implausible jump implying %.0f W (bound %.0f W): reading held, not counted; "
                     "no figure",
                     y->rej_w, c->max_power_w);
        } else if (c->kind == ERG_KIND_COUNTER && dticks == 0 && ev[EV_BACKWARDS]) {
            r->state = ERG_READING_ERROR;
            erg__fmt(r->reason, sizeof r->reason,
                     "went backwards without a wrap it could account for%s: reading held, no "
                     "figure",
                     c->wrap_unknown && !c->no_wrap ? " (its wrap range is unknown)" : "");
        } else if (c->kind == ERG_KIND_COUNTER && dticks == 0 && busy_s >= LIVENESS_BUSY_S &&
                   c->domain != ERG_DOMAIN_UNCORE) {
            /* uncore (PP1, client graphics) may legitimately idle at 0 W while the CPU works;
             * package, core, dram (refresh alone draws watts), psys and GPUs may not */
            r->state = ERG_READING_NOT_LIVE;
            erg__fmt(r->reason, sizeof r->reason,
                     "counter did not move while the work used %.0f ms of %s time: not live, "
                     "no %s figure",
                     busy_s * 1e3, c->domain == ERG_DOMAIN_GPU ? "GPU" : "CPU",
                     erg_grade_name(c->grade));
        } else {
            r->state = ERG_READING_OK;
            r->energy_j = c->kind == ERG_KIND_COUNTER ? (double)dticks * c->joules_per_tick
                                                      : y->acc_j - x->acc_j;
            if (r->flags & (ERG_FLAG_BACKWARDS | ERG_FLAG_GLITCH))
                erg__fmt(r->reason, sizeof r->reason,
                         "anomalous interval(s) skipped, never counted twice");
        }
    }
    select_total(m, out, b);
    return ERG_OK;
}

/* ---- liveness probe ---- */

int erg_meter_probe_liveness(erg_meter *m, double busy_s, erg_diag *diag)
{
    if (!m || !(busy_s >= 0.01 && busy_s <= 5))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "liveness probe: busy time must be in [0.01, 5] s");
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    if (!a || !b) {
        free(a);
        free(b);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int rc = erg_meter_snapshot_take(m, a);
    if (rc != ERG_OK)
        goto out;
    /* spin until this thread has used busy_s of CPU time (on a loaded machine that takes longer
     * than busy_s of wall time), giving up after 20·busy_s of wall time */
    struct timespec c0, c1, w0, w1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    volatile double sink = 0;
    do {
        for (int i = 0; i < 10000; i++)
            sink += sqrt((double)i);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        clock_gettime(CLOCK_MONOTONIC, &w1);
    } while ((double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9 < busy_s &&
             (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) * 1e-9 <
                 20 * busy_s);
    (void)sink;
    rc = erg_meter_snapshot_take(m, b);
    if (rc != ERG_OK)
        goto out;
    double cpu_s = (double)(b->cpu_ns - a->cpu_ns) * 1e-9;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n_ch; i++) {
        struct chan *ch = &m->ch[i];
        const struct erg__chan *c = ch->c;
        if (!ch->usable || c->kind != ERG_KIND_COUNTER || !a->ch[i].last_ok || !b->ch[i].last_ok)
            continue;
        if (b->ch[i].acc_ticks != a->ch[i].acc_ticks) {
            ch->live = 1;
        } else if (cpu_s >= LIVENESS_BUSY_S && c->domain != ERG_DOMAIN_GPU &&
                   c->domain != ERG_DOMAIN_UNCORE) {
            ch->live = 0;
            ch->usable = 0;
            erg__fmt(ch->reason, sizeof ch->reason,
                     "frozen: did not move across %.0f ms of CPU load; no %s figure", cpu_s * 1e3,
                     erg_grade_name(c->grade));
        }
    }
    pthread_mutex_unlock(&m->mu);
out:
    free(a);
    free(b);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, NULL, "liveness probe: cannot read the meter");
    return ERG_OK;
}

/* ---- sampler ---- */

static void *sampler_main(void *arg)
{
    erg_meter *m = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    uint64_t period_ns = (uint64_t)(m->period_s * 1e9);
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        poll_locked(m);
        uint64_t nn = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec + period_ns;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
        if (nn < now_ns)
            nn = now_ns; /* overran its period: keep going, poll again at once */
        next.tv_sec = (time_t)(nn / 1000000000u);
        next.tv_nsec = (long)(nn % 1000000000u);
        while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &next) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int erg_meter_sampler_start(erg_meter *m, double period_s)
{
    /* NaN or beyond a day: refused (the period becomes a uint64_t count of nanoseconds) */
    if (!m || m->running || isnan(period_s) || period_s > ERG_METER_MAX_PERIOD_S)
        return ERG_EINVAL;
    double p = period_s > 0 ? period_s : m->opts.sampler_period_s;
    for (size_t i = 0; i < m->n_ch; i++) {
        const struct erg__chan *c = m->ch[i].c;
        if (!m->ch[i].usable || c->kind != ERG_KIND_COUNTER || !c->wrap_ticks || c->wrap_unknown)
            continue;
        double wrap_s = (double)c->wrap_ticks * c->joules_per_tick / c->max_power_w;
        if (wrap_s / 2 < p)
            p = wrap_s / 2; /* never two wraps unseen */
    }
    if (p < 1e-3)
        p = 1e-3;
    m->period_s = p;
    m->stop = 0;
    if (pthread_create(&m->thread, NULL, sampler_main, m) != 0)
        return ERG_EIO;
    m->running = 1;
    return ERG_OK;
}

void erg_meter_sampler_stop(erg_meter *m)
{
    if (!m || !m->running)
        return;
    pthread_mutex_lock(&m->mu);
    m->stop = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    m->running = 0;
}

double erg_meter_sampler_period_s(const erg_meter *m)
{
    return m && m->running ? m->period_s : 0.0;
}

int erg_meter_temperatures(erg_meter *m, erg_temperature *out, size_t max, size_t *n)
{
    if (!m || !n || (!out && max))
        return ERG_EINVAL;
    *n = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n_be && *n < max; i++)
        if (m->be[i].state && m->be[i].ops->temps)
            *n += m->be[i].ops->temps(m->be[i].state, out + *n, max - *n);
    pthread_mutex_unlock(&m->mu);
    return ERG_OK;
}

/* ---- measurements ---- */

int erg_measurement_copy(erg_measurement *dst, const erg_measurement *src)
{
    if (!dst || !src || (dst->channels && dst->channels == src->channels))
        return ERG_EINVAL;
    erg_channel_reading *ch = dst->channels;
    size_t cap = dst->capacity;
    if (cap < src->n_channels || !ch) {
        cap = src->n_channels ? src->n_channels : 1;
        ch = realloc(dst->channels, cap * sizeof *ch);
        if (!ch)
            return ERG_ENOMEM;
    }
    if (src->n_channels)
        memcpy(ch, src->channels, src->n_channels * sizeof *ch);
    *dst = *src;
    dst->channels = ch;
    dst->capacity = cap;
    return ERG_OK;
}

void erg_measurement_release(erg_measurement *r)
{
    if (!r)
        return;
    free(r->channels);
    memset(r, 0, sizeof *r);
}
