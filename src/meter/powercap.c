/* SPDX-License-Identifier: MIT */
/*
 * RAPL through the powercap sysfs interface (<root>/sys/class/powercap), Intel and AMD alike
 * (both drivers register "intel-rapl" zones), plus "intel-rapl-mmio" and "intel-rapl-tpmi".
 * Zone indices are hexadecimal (the powercap core names zones with %x: intel-rapl:a is the
 * eleventh package). Zones are identified by their `name` files and their parents, never by
 * directory index: intel-rapl:0:2 named "dram" belongs to package-0, intel-rapl:1:2 to
 * package-1; intel-rapl:10 (0x10) sorts after intel-rapl:a (numeric sort); psys is not a socket.
 * A domain seen through two control types (MSR and TPMI, MSR and MMIO) is one domain: the meter
 * keeps the first and marks the other deduplicated. energy_uj is read with pread on a descriptor
 * kept open; the modulus is the zone's own max_energy_range_uj + 1 (powercap sysfs ABI,
 * Documentation/power/powercap/powercap.rst: energy_uj wraps after max_energy_range_uj).
 */
#include "meter/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The control types read, in order of preference when two mirror one domain (the same name):
 * the MSR-backed intel-rapl, the MMIO one of client parts, and TPMI (Granite Rapids and later). */
static const struct ctype {
    const char *prefix; /* directory prefix, with the colon */
    const char *id;     /* channel id prefix */
} ctypes[] = {
    {"intel-rapl:", "rapl-sysfs:"},
    {"intel-rapl-mmio:", "rapl-sysfs:mmio/"},
    {"intel-rapl-tpmi:", "rapl-sysfs:tpmi/"},
};

struct zone {
    int type;      /* index in ctypes */
    unsigned a, b; /* intel-rapl:a[:b], hexadecimal */
    int sub;       /* has b */
    char dir[64];
    char name[64];
    int fd;
};

struct state {
    const struct erg__env *env;
    size_t n;
    size_t cap;
    struct zone *z; /* grown as zones are found: no fixed table drops a zone */
    struct erg__chan *ch;
};

/* One hexadecimal zone index: the powercap core names zones "%s:%x" (drivers/powercap/
 * powercap_sys.c), so the eleventh package is intel-rapl:a and its first sub-zone intel-rapl:a:0.
 */
static int parse_hex(const char **p, unsigned *out)
{
    const char *q = *p;
    unsigned long v = 0;
    size_t n = 0;
    for (; (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'); q++, n++) {
        v = v * 16 + (unsigned long)(*q <= '9' ? *q - '0' : *q - 'a' + 10);
        if (n >= 7)
            return -1;
    }
    if (n == 0)
        return -1;
    *out = (unsigned)v;
    *p = q;
    return 0;
}

static int parse_zone_dir(const char *d, struct zone *z)
{
    const char *p = NULL;
    for (size_t t = 0; t < sizeof ctypes / sizeof ctypes[0]; t++) {
        size_t l = strlen(ctypes[t].prefix);
        if (strncmp(d, ctypes[t].prefix, l) == 0) {
            z->type = (int)t;
            p = d + l;
            break;
        }
    }
    if (!p || parse_hex(&p, &z->a) != 0)
        return -1;
    z->sub = 0;
    z->b = 0;
    if (*p == ':') {
        p++;
        if (parse_hex(&p, &z->b) != 0)
            return -1;
        z->sub = 1;
    }
    if (*p != '\0' || strlen(d) >= sizeof z->dir)
        return -1;
    erg__strlcpy(z->dir, d, sizeof z->dir);
    return 0;
}

static int zone_cmp(const void *x, const void *y)
{
    const struct zone *p = x, *q = y;
    if (p->type != q->type)
        return p->type - q->type;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->sub != q->sub)
        return p->sub - q->sub;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* "psys-N": the platform domain of socket N > 0 where every socket has one (the kernel's
 * intel_rapl_common.c names the first package's "psys" and the others' "psys-%d" by physical
 * package id) */
static int is_psys_n(const char *name)
{
    if (strncmp(name, "psys-", 5) != 0 || name[5] == '\0')
        return 0;
    for (const char *p = name + 5; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int domain_of(const char *name, erg_domain *d)
{
    if (strncmp(name, "package-", 8) == 0)
        *d = ERG_DOMAIN_PACKAGE;
    else if (strcmp(name, "core") == 0)
        *d = ERG_DOMAIN_CORE;
    else if (strcmp(name, "uncore") == 0)
        *d = ERG_DOMAIN_UNCORE;
    else if (strcmp(name, "dram") == 0)
        *d = ERG_DOMAIN_DRAM;
    else if (strcmp(name, "psys") == 0 || is_psys_n(name))
        *d = ERG_DOMAIN_PSYS;
    else
        return -1;
    return 0;
}

static double max_power(erg_domain d)
{
    switch (d) {
    case ERG_DOMAIN_PSYS:
        return 3000.0;
    case ERG_DOMAIN_DRAM:
    case ERG_DOMAIN_UNCORE:
        return 500.0;
    default:
        return 1000.0;
    }
}

static void pc_close(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->z[i].fd >= 0)
            s->env->io.close(s->env->io.ud, s->z[i].fd);
    free(s->z);
    free(s->ch);
    free(s);
}

static int pc_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                   erg_diag *diag)
{
    char path[600];
    erg__env_path(env, "sys/class/powercap", path, sizeof path);
    DIR *d = erg__env_opendir(env, "sys/class/powercap");
    if (!d)
        return erg_diag_set(diag, errno == EACCES ? ERG_EACCES : ERG_ENODEV, path,
                            "no powercap interface (not exposed in most VMs and containers): %s",
                            strerror(errno));
    struct state *s = calloc(1, sizeof *s);
    if (!s) {
        closedir(d);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    s->env = env;
    struct dirent *e;
    int oom = 0;
    while ((e = readdir(d)) != NULL && !oom) {
        if (strstr(e->d_name, "..") || strchr(e->d_name, '/'))
            continue;
        struct zone z;
        if (parse_zone_dir(e->d_name, &z) != 0)
            continue;
        z.fd = -1;
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 16;
            struct zone *p = realloc(s->z, cap * sizeof *p);
            if (!p) {
                oom = 1;
                break;
            }
            s->z = p;
            s->cap = cap;
        }
        s->z[s->n++] = z;
    }
    closedir(d);
    if (!oom && s->n && !(s->ch = calloc(s->n, sizeof *s->ch)))
        oom = 1;
    if (oom) {
        pc_close(s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    if (s->n == 0) {
        pc_close(s);
        return erg_diag_set(diag, ERG_ENODEV, path,
                            "no intel-rapl zones (empty powercap tree: VM, container or no RAPL "
                            "driver)");
    }
    qsort(s->z, s->n, sizeof s->z[0], zone_cmp);
    int amd = 0;
    unsigned family, model;
    if (erg__env_cpu_id(env, &amd, &family, &model) != 0)
        amd = 0;

    for (size_t i = 0; i < s->n; i++) {
        struct zone *z = &s->z[i];
        struct erg__chan *c = &s->ch[i];
        char rel[200];
        memset(c, 0, sizeof *c);
        c->grade = ERG_GRADE_HW_SHUNT;
        c->kind = ERG_KIND_COUNTER;
        c->joules_per_tick = 1e-6; /* energy_uj */
        c->min_interval_s = 1e-3;  /* RAPL updates about every millisecond */
        c->zone_type = z->type;
        c->usable = 1;
        erg__fmt(rel, sizeof rel, "sys/class/powercap/%s/name", z->dir);
        int r = erg__env_read_text(env, rel, z->name, sizeof z->name);
        if (r < 0) {
            erg__env_path(env, rel, path, sizeof path);
            erg__fmt(c->id, sizeof c->id, "rapl-sysfs:%s", z->dir);
            erg__strlcpy(c->device, z->dir, sizeof c->device);
            c->domain = ERG_DOMAIN_PACKAGE;
            c->usable = 0;
            erg__fmt(c->reason, sizeof c->reason, "dangling or unreadable zone: %s: %s", path,
                     strerror(-r));
            continue;
        }
        erg__strlcpy(c->label, z->name, sizeof c->label);
        if (domain_of(z->name, &c->domain) != 0) {
            erg__fmt(c->id, sizeof c->id, "rapl-sysfs:%s", z->dir);
            erg__strlcpy(c->device, z->dir, sizeof c->device);
            c->domain = ERG_DOMAIN_PACKAGE;
            c->usable = 0;
            erg__fmt(c->reason, sizeof c->reason, "unknown zone name '%.60s'", z->name);
            continue;
        }
        /* device: top-level zones name themselves; sub-zones belong to their parent zone */
        const char *dev = z->name;
        if (z->sub) {
            dev = NULL;
            for (size_t k = 0; k < s->n; k++)
                if (!s->z[k].sub && s->z[k].type == z->type && s->z[k].a == z->a && s->z[k].name[0])
                    dev = s->z[k].name;
            if (!dev) {
                erg__fmt(c->id, sizeof c->id, "rapl-sysfs:%s", z->dir);
                erg__strlcpy(c->device, z->dir, sizeof c->device);
                c->usable = 0;
                erg__fmt(c->reason, sizeof c->reason, "sub-zone %s has no readable parent zone",
                         z->dir);
                continue;
            }
        }
        erg__strlcpy(c->device, dev, sizeof c->device);
        const char *prefix = ctypes[z->type].id;
        if (z->sub)
            erg__fmt(c->id, sizeof c->id, "%s%.24s/%.24s", prefix, dev, z->name);
        else
            erg__fmt(c->id, sizeof c->id, "%s%.40s", prefix, dev);
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->ch[k].id, c->id) == 0) {
                size_t l = strlen(c->id);
                erg__fmt(c->id + l, sizeof c->id - l, "@%s", z->dir);
                break;
            }
        c->max_power_w = max_power(c->domain);
        if (amd && c->domain == ERG_DOMAIN_CORE) {
            /* AMD's core energy register (0xC001029A, CORE_ENERGY_STAT) is per core; the driver
             * reads it on the package's first CPU (intel_rapl_msr.c, rapl_msr_priv_amd), so the
             * zone holds one core's energy, not the package's cores */
            c->usable = 0;
            erg__fmt(c->reason, sizeof c->reason,
                     "AMD: this zone reads one core's energy register (0xC001029A, per core) on "
                     "the package's first CPU, not the package's cores; rapl-msr sums every core");
            continue;
        }
        erg__fmt(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", z->dir);
        uint64_t range;
        r = erg__env_read_u64(env, rel, &range);
        if (r == 0 && range > 0 && range < UINT64_MAX) {
            c->wrap_ticks = range + 1;
        } else {
            c->wrap_unknown = 1; /* a decrease is then never turned into energy */
        }
        erg__fmt(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", z->dir);
        z->fd = erg__env_open(env, rel);
        if (z->fd < 0) {
            int er = errno;
            erg__env_path(env, rel, path, sizeof path);
            c->usable = 0;
            c->lacks = er == EACCES || er == EPERM;
            if (er == EACCES || er == EPERM)
                erg__fmt(c->reason, sizeof c->reason, "permission denied: %.150s (%s)", path,
                         erg__rapl_eacces_remedy);
            else
                erg__fmt(c->reason, sizeof c->reason, "domain has no counter: %.80s: %s", path,
                         erg__open_error(er));
            continue;
        }
        char buf[64];
        uint64_t v;
        r = erg__env_pread_text(env, z->fd, buf, sizeof buf);
        if (r == -EACCES || r == -EPERM) {
            erg__env_path(env, rel, path, sizeof path);
            c->usable = 0;
            c->lacks = 1;
            erg__fmt(c->reason, sizeof c->reason, "permission denied: %.150s (%s)", path,
                     erg__rapl_eacces_remedy);
        } else if (r < 0 || erg__parse_u64(buf, &v) != 0) {
            erg__env_path(env, rel, path, sizeof path);
            c->usable = 0;
            c->lacks = 1;
            erg__fmt(c->reason, sizeof c->reason, "unreadable counter %.80s: %s", path,
                     r < 0 ? strerror(-r) : "not an unsigned integer");
        }
    }
    *out = s;
    *chans = s->ch;
    *n = s->n;
    return ERG_OK;
}

static void pc_read(void *st, uint64_t *ticks, int *status, size_t n)
{
    struct state *s = st;
    char buf[32];
    for (size_t i = 0; i < n && i < s->n; i++) {
        if (s->z[i].fd < 0) {
            status[i] = ERG__READ_FATAL;
            continue;
        }
        int r = erg__env_pread_text(s->env, s->z[i].fd, buf, sizeof buf);
        if (r < 0) {
            status[i] = (r == -ENODEV || r == -ENOENT) ? ERG__READ_FATAL : ERG__READ_TRANSIENT;
            continue;
        }
        status[i] = erg__parse_u64(buf, &ticks[i]) == 0 ? ERG__READ_OK : ERG__READ_TRANSIENT;
    }
}

const struct erg__backend_ops erg__backend_rapl_sysfs = {
    .abi = ERG__BACKEND_ABI,
    .name = "rapl-sysfs",
    .open = pc_open,
    .read = pc_read,
    .close = pc_close,
};
