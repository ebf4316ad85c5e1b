/* SPDX-License-Identifier: MIT */
/*
 * hwmon (<root>/sys/class/hwmon/hwmon*, Documentation/hwmon/sysfs-interface.rst): energyN_input
 * (µJ), a counter, graded hw_shunt; powerN_input / powerN_average (µW), integrated, model_based;
 * the INA3221 rails of Jetson boards as inN_input (mV) × currN_input (mA) = µW, model_based;
 * tempN_input (m°C) and the thermal zones (<root>/sys/class/thermal/thermal_zoneN) for the
 * stability protocol. Devices are identified by their `name` file, their `device` link and their
 * labels, never by the hwmonN index, which changes from boot to boot.
 */
#include "meter/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_CH 48
#define MAX_TEMPS 32

struct hch {
    int fd, fd2; /* fd2: the current file of a voltage × current rail */
};

struct temp {
    int fd;
    int is_gpu;
    char id[ERG_METER_ID_MAX];
};

struct state {
    const struct erg__env *env;
    size_t n;
    struct erg__chan ch[MAX_CH];
    struct hch h[MAX_CH];
    size_t nt;
    struct temp t[MAX_TEMPS];
};

/* one hwmon device as found */
struct dev {
    char dir[64];
    char name[48];
    char ident[64]; /* name, plus the device link's last part when there is one */
};

/* By identity; devices that share one (same name, no device link) fall back to the numeric
 * order of their hwmonN folders, the only order left. */
static int dev_cmp(const void *a, const void *b)
{
    const struct dev *p = a, *q = b;
    int c = strcmp(p->ident, q->ident);
    if (c)
        return c;
    unsigned long x = strtoul(p->dir + strcspn(p->dir, "0123456789"), NULL, 10);
    unsigned long y = strtoul(q->dir + strcspn(q->dir, "0123456789"), NULL, 10);
    return x < y ? -1 : x > y;
}

static int contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return 1;
    return 0;
}

/* Domain of a power or energy rail from the device name and its label. *component is set for a
 * rail that is part of a larger one (never summed). */
static erg_domain rail_domain(const char *name, const char *label, int *component, char *device,
                              size_t dsize, const char *ident)
{
    *component = 0;
    if (strcmp(name, "amdgpu") == 0 || strcmp(name, "nouveau") == 0 || strcmp(name, "i915") == 0 ||
        strcmp(name, "xe") == 0) {
        erg__fmt(device, dsize, "%s", ident);
        return ERG_DOMAIN_GPU;
    }
    if (strcmp(name, "amd_energy") == 0 && label[0] == 'E') {
        /* amd_energy: "Esocket0" per socket, "Ecore000" per core */
        const char *digits = label + strcspn(label, "0123456789");
        unsigned long k = strtoul(digits, NULL, 10);
        if (strncmp(label, "Esocket", 7) == 0) {
            erg__fmt(device, dsize, "package-%lu", k);
            return ERG_DOMAIN_PACKAGE;
        }
        erg__fmt(device, dsize, "core-%lu", k);
        *component = 1;
        return ERG_DOMAIN_CORE;
    }
    erg__fmt(device, dsize, "%s", ident);
    if (strcmp(name, "acpi_power_meter") == 0 || contains_ci(label, "VDD_IN") ||
        contains_ci(label, "total") || contains_ci(label, "system") || contains_ci(label, "psu"))
        return ERG_DOMAIN_SYSTEM;
    *component = 1; /* a rail of the board (VDD_CPU_GPU_CV, VDD_SOC...): reported, not summed */
    return ERG_DOMAIN_SYSTEM;
}

static int open_rel(const struct erg__env *env, const char *dir, const char *file)
{
    char rel[256];
    erg__fmt(rel, sizeof rel, "sys/class/hwmon/%s/%s", dir, file);
    return erg__env_open(env, rel);
}

static void read_label(const struct erg__env *env, const char *dir, const char *file, char *buf,
                       size_t size)
{
    char rel[256];
    erg__fmt(rel, sizeof rel, "sys/class/hwmon/%s/%s", dir, file);
    if (erg__env_read_text(env, rel, buf, size) < 0)
        buf[0] = '\0';
}

/* A new channel of device d: identity, domain from the rail's name and label (a rail inside a
 * larger domain is reported, not summed), grade and kind; values in µJ or µW (1e-6 per tick).
 * NULL when the channel table is full. */
static struct erg__chan *add(struct state *s, const struct dev *d, const char *label,
                             const char *what, erg_grade grade, erg_channel_kind kind)
{
    if (s->n == MAX_CH)
        return NULL;
    struct erg__chan *c = &s->ch[s->n];
    memset(c, 0, sizeof *c);
    s->h[s->n].fd = s->h[s->n].fd2 = -1;
    erg__fmt(c->id, sizeof c->id, "hwmon:%.28s/%.28s", d->ident, label[0] ? label : what);
    erg__fmt(c->label, sizeof c->label, "%.30s %.30s", d->name, label[0] ? label : what);
    c->usable = 1;
    int comp;
    c->domain = rail_domain(d->name, label, &comp, c->device, sizeof c->device, d->ident);
    c->component = comp;
    c->grade = grade;
    c->kind = kind;
    c->joules_per_tick = 1e-6;
    if (comp)
        erg__strlcpy(c->reason, "a rail inside a larger domain: reported, not summed",
                     sizeof c->reason);
    return c;
}

static void scan_device(struct state *s, const struct dev *d)
{
    const struct erg__env *env = s->env;
    char file[64], label[64];
    /* energy counters */
    /* indices are 1-based and contiguous in practice (amd_energy numbers every core before the
     * sockets, so they can run into the hundreds); stop after 16 misses in a row */
    for (int k = 0, miss = 0; k < 1024 && miss < 16; k++) {
        erg__fmt(file, sizeof file, "energy%d_input", k);
        int fd = open_rel(env, d->dir, file);
        miss = fd < 0 ? miss + 1 : 0;
        if (fd < 0) {
            if (errno == EACCES) {
                struct erg__chan *c = add(s, d, "", file, ERG_GRADE_HW_SHUNT, ERG_KIND_COUNTER);
                if (c) {
                    c->domain = ERG_DOMAIN_SYSTEM;
                    c->component = 0;
                    c->usable = 0;
                    erg__fmt(c->reason, sizeof c->reason,
                             "permission denied: %s/%s (a udev rule can make it group-readable: "
                             "docs/meters.md)",
                             d->dir, file);
                    s->n++;
                }
            }
            continue;
        }
        erg__fmt(file, sizeof file, "energy%d_label", k);
        read_label(env, d->dir, file, label, sizeof label);
        if (strcmp(d->name, "amd_energy") == 0 && strncmp(label, "Ecore", 5) == 0) {
            /* one counter per core (up to hundreds): inside the socket's counter, and they would
             * crowd out every other channel; the socket counters are kept */
            env->io.close(env->io.ud, fd);
            continue;
        }
        struct erg__chan *c = add(s, d, label, file, ERG_GRADE_HW_SHUNT, ERG_KIND_COUNTER);
        if (!c) {
            env->io.close(env->io.ud, fd);
            return;
        }
        c->wrap_ticks = 0; /* 64-bit µJ counters: no wrap in practice; a decrease is flagged */
        c->wrap_unknown = 1;
        c->no_wrap = 1;
        c->min_interval_s = 1e-3;
        c->max_power_w = c->domain == ERG_DOMAIN_SYSTEM ? 20000.0 : 2000.0;
        s->h[s->n].fd = fd;
        s->n++;
    }
    /* power readings */
    for (int k = 0, miss = 0; k < 1024 && miss < 16; k++) {
        const char *kind = "input";
        erg__fmt(file, sizeof file, "power%d_input", k);
        int fd = open_rel(env, d->dir, file);
        if (fd < 0) {
            kind = "average";
            erg__fmt(file, sizeof file, "power%d_average", k);
            fd = open_rel(env, d->dir, file);
        }
        miss = fd < 0 ? miss + 1 : 0;
        if (fd < 0)
            continue;
        erg__fmt(file, sizeof file, "power%d_label", k);
        read_label(env, d->dir, file, label, sizeof label);
        char what[32];
        erg__fmt(what, sizeof what, "power%d", k);
        struct erg__chan *c =
            add(s, d, label, what, ERG_GRADE_MODEL_BASED, ERG_KIND_POWER); /* µW */
        if (!c) {
            env->io.close(env->io.ud, fd);
            return;
        }
        /* an averaged reading is only meaningful over its averaging interval */
        uint64_t ms = 0;
        char rel[256];
        erg__fmt(rel, sizeof rel, "sys/class/hwmon/%s/power%d_average_interval", d->dir, k);
        if (strcmp(kind, "average") == 0 && erg__env_read_u64(env, rel, &ms) == 0 && ms > 0)
            c->min_interval_s = (double)ms * 1e-3;
        else
            c->min_interval_s = strcmp(kind, "average") == 0 ? 1.0 : 0.1;
        c->max_power_w = c->domain == ERG_DOMAIN_SYSTEM ? 20000.0 : 2000.0;
        s->h[s->n].fd = fd;
        s->n++;
    }
    /* INA3221-style rails: inN_input (mV) × currN_input (mA) = µW, labelled by inN_label */
    if (strncmp(d->name, "ina3221", 7) == 0 || strncmp(d->name, "ina2", 4) == 0) {
        for (int k = 0; k <= 8; k++) {
            erg__fmt(file, sizeof file, "in%d_input", k);
            int fv = open_rel(env, d->dir, file);
            if (fv < 0)
                continue;
            erg__fmt(file, sizeof file, "curr%d_input", k);
            int fc = open_rel(env, d->dir, file);
            if (fc < 0) {
                env->io.close(env->io.ud, fv);
                continue;
            }
            erg__fmt(file, sizeof file, "in%d_label", k);
            read_label(env, d->dir, file, label, sizeof label);
            char what[32];
            erg__fmt(what, sizeof what, "rail%d", k);
            /* mV × mA = µW */
            struct erg__chan *c = add(s, d, label, what, ERG_GRADE_MODEL_BASED, ERG_KIND_POWER);
            if (!c) {
                env->io.close(env->io.ud, fv);
                env->io.close(env->io.ud, fc);
                return;
            }
            c->min_interval_s = 0.01;
            c->max_power_w = 5000.0;
            s->h[s->n].fd = fv;
            s->h[s->n].fd2 = fc;
            s->n++;
        }
    }
    /* temperatures */
    for (int k = 0, miss = 0; k < 1024 && miss < 16 && s->nt < MAX_TEMPS; k++) {
        erg__fmt(file, sizeof file, "temp%d_input", k);
        int fd = open_rel(env, d->dir, file);
        miss = fd < 0 ? miss + 1 : 0;
        if (fd < 0)
            continue;
        erg__fmt(file, sizeof file, "temp%d_label", k);
        read_label(env, d->dir, file, label, sizeof label);
        char what[16];
        erg__fmt(what, sizeof what, "temp%d", k);
        struct temp *t = &s->t[s->nt++];
        t->fd = fd;
        t->is_gpu = strcmp(d->name, "amdgpu") == 0 || strcmp(d->name, "nouveau") == 0;
        erg__fmt(t->id, sizeof t->id, "hwmon:%.28s/%.28s", d->ident, label[0] ? label : what);
    }
}

static void scan_thermal(struct state *s)
{
    DIR *dd = erg__env_opendir(s->env, "sys/class/thermal");
    if (!dd)
        return;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL && s->nt < MAX_TEMPS) {
        if (strncmp(e->d_name, "thermal_zone", 12) != 0 || strstr(e->d_name, ".."))
            continue;
        char rel[256], type[48];
        erg__fmt(rel, sizeof rel, "sys/class/thermal/%s/type", e->d_name);
        if (erg__env_read_text(s->env, rel, type, sizeof type) < 0)
            continue;
        erg__fmt(rel, sizeof rel, "sys/class/thermal/%s/temp", e->d_name);
        int fd = erg__env_open(s->env, rel);
        if (fd < 0)
            continue;
        struct temp *t = &s->t[s->nt++];
        t->fd = fd;
        t->is_gpu = contains_ci(type, "gpu");
        erg__fmt(t->id, sizeof t->id, "thermal:%.40s", type);
    }
    closedir(dd);
}

static void hw_close(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (s->h[i].fd >= 0)
            s->env->io.close(s->env->io.ud, s->h[i].fd);
        if (s->h[i].fd2 >= 0)
            s->env->io.close(s->env->io.ud, s->h[i].fd2);
    }
    for (size_t i = 0; i < s->nt; i++)
        s->env->io.close(s->env->io.ud, s->t[i].fd);
    free(s);
}

static int hw_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                   erg_diag *diag)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->env = env;
    struct dev devs[64];
    size_t nd = 0;
    DIR *dd = erg__env_opendir(env, "sys/class/hwmon");
    if (dd) {
        struct dirent *e;
        while ((e = readdir(dd)) != NULL && nd < 64) {
            if (e->d_name[0] == '.' || strstr(e->d_name, "..") ||
                strlen(e->d_name) >= sizeof devs[0].dir)
                continue;
            struct dev *d = &devs[nd];
            erg__strlcpy(d->dir, e->d_name, sizeof d->dir);
            char rel[256];
            erg__fmt(rel, sizeof rel, "sys/class/hwmon/%s/name", d->dir);
            if (erg__env_read_text(env, rel, d->name, sizeof d->name) <= 0)
                continue;
            /* the device link names the hardware (a PCI or platform address), stable across boots
             */
            char link[256], target[256];
            erg__fmt(link, sizeof link, "sys/class/hwmon/%s/device", d->dir);
            int l = erg__env_readlink(env, link, target, sizeof target);
            if (l > 0) {
                const char *base = strrchr(target, '/');
                erg__fmt(d->ident, sizeof d->ident, "%.30s@%.30s", d->name,
                         base ? base + 1 : target);
            } else {
                erg__strlcpy(d->ident, d->name, sizeof d->ident);
            }
            nd++;
        }
        closedir(dd);
    }
    /* order by identity, then make same-name devices without links distinct by that order */
    qsort(devs, nd, sizeof devs[0], dev_cmp);
    for (size_t i = 0; i < nd;) {
        size_t j = i + 1;
        while (j < nd && strcmp(devs[j].ident, devs[i].ident) == 0)
            j++;
        for (size_t k = i; j - i > 1 && k < j; k++) {
            char tmp[64];
            erg__fmt(tmp, sizeof tmp, "%.50s#%zu", devs[k].ident, k - i);
            erg__strlcpy(devs[k].ident, tmp, sizeof devs[k].ident);
        }
        i = j;
    }
    for (size_t i = 0; i < nd; i++)
        scan_device(s, &devs[i]);
    scan_thermal(s);
    if (s->n == 0 && s->nt == 0) {
        hw_close(s);
        char path[600];
        erg__env_path(env, "sys/class/hwmon", path, sizeof path);
        return erg_diag_set(diag, ERG_ENODEV, path, "no hwmon energy, power or temperature inputs");
    }
    *out = s;
    *chans = s->ch;
    *n = s->n;
    return ERG_OK;
}

static int read_fd_u64(const struct erg__env *env, int fd, uint64_t *v)
{
    char buf[32];
    int r = erg__env_pread_text(env, fd, buf, sizeof buf);
    if (r < 0)
        return r;
    return erg__parse_u64(buf, v) == 0 ? 0 : -EINVAL;
}

static void hw_read(void *st, uint64_t *ticks, int *status, size_t n)
{
    struct state *s = st;
    for (size_t i = 0; i < n && i < s->n; i++) {
        if (s->h[i].fd < 0) {
            status[i] = ERG__READ_FATAL;
            continue;
        }
        uint64_t a, b = 1;
        int r = read_fd_u64(s->env, s->h[i].fd, &a);
        if (r == 0 && s->h[i].fd2 >= 0)
            r = read_fd_u64(s->env, s->h[i].fd2, &b);
        if (r != 0) {
            status[i] = (r == -ENODEV || r == -ENOENT) ? ERG__READ_FATAL : ERG__READ_TRANSIENT;
            continue;
        }
        ticks[i] = a * b;
        status[i] = ERG__READ_OK;
    }
}

static size_t hw_temps(void *st, erg_temperature *out, size_t max)
{
    struct state *s = st;
    size_t k = 0;
    for (size_t i = 0; i < s->nt && k < max; i++) {
        char buf[32];
        if (erg__env_pread_text(s->env, s->t[i].fd, buf, sizeof buf) < 0)
            continue;
        char *end;
        long v = strtol(buf, &end, 10);
        if (end == buf)
            continue;
        erg__strlcpy(out[k].id, s->t[i].id, sizeof out[k].id);
        out[k].is_gpu = s->t[i].is_gpu;
        out[k].temp_c = (double)v * 1e-3;
        k++;
    }
    return k;
}

const struct erg__backend_ops erg__backend_hwmon = {
    .abi = ERG__BACKEND_ABI,
    .name = "hwmon",
    .open = hw_open,
    .read = hw_read,
    .temps = hw_temps,
    .close = hw_close,
};
