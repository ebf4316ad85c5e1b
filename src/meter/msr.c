/* SPDX-License-Identifier: MIT */
/*
 * RAPL through the MSR driver (<root>/dev/cpu/N/msr, one reader per package), read with pread at
 * the register address as the msr(4) driver expects.
 * Intel (SDM Vol. 3B, section 14.10 "Platform Specific Power Management Support"):
 *   MSR_RAPL_POWER_UNIT 0x606, energy status unit ESU = bits 12:8, one tick = 1/2^ESU J;
 *   MSR_PKG_ENERGY_STATUS 0x611, MSR_PP0 (core) 0x639, MSR_PP1 (uncore/graphics) 0x641,
 *   MSR_DRAM 0x619, MSR_PLATFORM_ENERGY_STATUS (psys) 0x64D; 32-bit counters.
 * AMD (PPR for family 17h/19h): unit 0xC0010299 (same ESU field), core 0xC001029A,
 *   package 0xC001029B. The core register is per physical core (SMT siblings share it): one
 *   reader per (package, core_id) from sysfs topology, summed into one `core` channel per
 *   package, so that a 128-core part needs two channels per socket, not 129. Each core's 32-bit
 *   counter is unwrapped on its own in every read (the meter polls the sum often enough that no
 *   core, drawing less than the sum, can wrap twice unseen) and the running sum is handed to the
 *   meter as a 32-bit counter, so wrap, ambiguity, glitch and liveness are judged on it like any
 *   other counter. A core whose read fails makes the whole sum a missing sample for that poll
 *   (its energy is picked up at the next good read), never a partial sum.
 * Server parts count DRAM energy in a fixed unit of 2^-16 J (15.3 µJ) whatever ESU says; the
 * models are kept as data (turbostat's has_fixed_rapl_unit), not as if chains.
 */
#include "meter/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PKG 64 /* HPE Superdome Flex and the like reach 32 sockets */
#define MAX_CH (MAX_PKG * 4 + 1)

/* Intel family-6 models whose DRAM domain uses the fixed 2^-16 J unit (turbostat
 * platform_features.has_fixed_rapl_unit; Intel SDM Vol. 3B 14.10.1 footnote on server DRAM). */
static const struct dram_quirk {
    unsigned model;
    const char *what;
} fixed_dram_unit[] = {
    {0x3F, "Haswell-X"},
    {0x4F, "Broadwell-X"},
    {0x56, "Broadwell-D"},
    {0x55, "Skylake-X/Cascade Lake/Cooper Lake"},
    {0x57, "Xeon Phi Knights Landing"},
    {0x85, "Xeon Phi Knights Mill"},
    {0x6A, "Ice Lake-X"},
    {0x6C, "Ice Lake-D"},
    {0x8F, "Sapphire Rapids-X"},
    {0xCF, "Emerald Rapids-X"},
    {0xAD, "Granite Rapids-X"},
    {0xAE, "Granite Rapids-D"},
};

struct reg {
    unsigned addr;
    erg_domain domain;
    const char *name;
};

static const struct reg intel_regs[] = {
    {0x611, ERG_DOMAIN_PACKAGE, "package"},
    {0x639, ERG_DOMAIN_CORE, "core"},
    {0x641, ERG_DOMAIN_UNCORE, "uncore"},
    {0x619, ERG_DOMAIN_DRAM, "dram"},
};
#define INTEL_UNIT 0x606u
#define INTEL_PSYS 0x64Du
static const struct reg amd_regs[] = {
    {0xC001029Bu, ERG_DOMAIN_PACKAGE, "package"},
};
#define AMD_UNIT 0xC0010299u
#define AMD_CORE 0xC001029Au
#define MAX_CPU 4096

/* One per-core reader of the AMD core energy register. */
struct core_rd {
    int fd;
    uint32_t last; /* last raw reading */
};

struct state {
    const struct erg__env *env;
    size_t n;
    struct erg__chan ch[MAX_CH];
    int fd[MAX_CH]; /* borrowed from pkg_fd */
    unsigned addr[MAX_CH];
    size_t npkg;
    int pkg_fd[MAX_PKG];
    /* AMD core sums: channel i with ncore[i] > 0 sums cores[core0[i] .. core0[i] + ncore[i]) */
    size_t core0[MAX_CH], ncore[MAX_CH];
    uint64_t acc[MAX_CH]; /* running sum of the cores' unwrapped ticks */
    struct core_rd *cores;
    size_t n_cores;
};

static int rd_msr(const struct erg__env *env, int fd, unsigned addr, uint64_t *v)
{
    ssize_t r = env->io.pread(env->io.ud, fd, v, sizeof *v, (off_t)addr);
    return r == (ssize_t)sizeof *v ? 0 : -1;
}

/* Parse a cpulist ("0-3,5,7-9") from <root>/sys/devices/system/cpu/online into online[]; 1 when
 * read, 0 when absent or unparsable (every CPU with a topology is then taken as online). */
static int read_online(const struct erg__env *env, unsigned char *online)
{
    char buf[4096];
    if (erg__env_read_text(env, "sys/devices/system/cpu/online", buf, sizeof buf) <= 0)
        return 0;
    const char *p = buf;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9')
            return 0;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            if (p[1] < '0' || p[1] > '9')
                return 0;
            b = strtoul(p + 1, &end, 10);
            p = end;
        }
        if (b < a)
            return 0;
        for (unsigned long k = a; k <= b && k < MAX_CPU; k++)
            online[k] = 1;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return 0;
    }
    return 1;
}

/* A physical core: the first CPU of its (package, core_id). */
struct phys_core {
    int cpu;
    unsigned pkg;
    uint64_t core_id;
};

/* AMD: the `core` channel of package p, the sum of its physical cores' core energy registers
 * (0xC001029A), each read through its own /dev/cpu/N/msr. A core whose register cannot be read
 * at open is left out and the label says how many were summed; none readable: no channel. */
static void amd_core_sum(struct state *s, size_t p, double jpt, const struct phys_core *phys,
                         size_t nphys)
{
    size_t first = s->n_cores;
    uint64_t sum = 0;
    size_t want = 0;
    for (size_t k = 0; k < nphys; k++) {
        if (phys[k].pkg != p)
            continue;
        want++;
        char rel[64];
        erg__fmt(rel, sizeof rel, "dev/cpu/%d/msr", phys[k].cpu);
        int fd = erg__env_open_dev(s->env, rel);
        uint64_t v;
        if (fd < 0)
            continue;
        if (rd_msr(s->env, fd, AMD_CORE, &v) != 0) {
            s->env->io.close(s->env->io.ud, fd);
            continue;
        }
        s->cores[s->n_cores++] = (struct core_rd){fd, (uint32_t)v};
        sum += v & 0xffffffffu;
    }
    size_t got = s->n_cores - first;
    if (got == 0)
        return;
    struct erg__chan *c = &s->ch[s->n];
    memset(c, 0, sizeof *c);
    c->domain = ERG_DOMAIN_CORE;
    erg__fmt(c->device, sizeof c->device, "package-%zu", p);
    erg__fmt(c->id, sizeof c->id, "rapl-msr:package-%zu/core", p);
    if (got == want)
        erg__fmt(c->label, sizeof c->label, "MSR %#x, sum of %zu cores", AMD_CORE, got);
    else
        erg__fmt(c->label, sizeof c->label, "MSR %#x, sum of %zu of %zu cores", AMD_CORE, got,
                 want);
    c->grade = ERG_GRADE_HW_SHUNT;
    c->kind = ERG_KIND_COUNTER;
    c->joules_per_tick = jpt;
    c->wrap_ticks = 1ull << 32; /* the sum is handed on as a 32-bit counter */
    c->min_interval_s = 1e-3;
    c->max_power_w = 1000.0;
    c->usable = 1;
    s->fd[s->n] = -1;
    s->addr[s->n] = AMD_CORE;
    s->core0[s->n] = first;
    s->ncore[s->n] = got;
    s->acc[s->n] = sum;
    s->n++;
}

static void msr_close(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    for (size_t i = 0; i < s->npkg; i++)
        if (s->pkg_fd[i] >= 0)
            s->env->io.close(s->env->io.ud, s->pkg_fd[i]);
    for (size_t i = 0; i < s->n_cores; i++)
        if (s->cores[i].fd >= 0)
            s->env->io.close(s->env->io.ud, s->cores[i].fd);
    free(s->cores);
    free(s);
}

static int msr_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                    erg_diag *diag)
{
    char path[600];
    int amd = 0;
    unsigned family = 0, model = 0;
    erg__env_path(env, "proc/cpuinfo", path, sizeof path);
    if (erg__env_cpu_id(env, &amd, &family, &model) != 0)
        return erg_diag_set(diag, ERG_ENODEV, path, "cannot tell the CPU vendor and model");
    if (!amd && family != 6)
        return erg_diag_set(diag, ERG_ENODEV, path, "no RAPL MSRs on this CPU (family %u)", family);
    if (amd && family < 0x17)
        return erg_diag_set(diag, ERG_ENODEV, path, "AMD family %#x has no RAPL MSRs", family);
    /* CPUs can be offline, cpu0 included (its MSR file is then gone): packages are read through
     * online CPUs only (<root>/sys/devices/system/cpu/online, a cpulist such as "1-3,5-7") */
    unsigned char *online = calloc(MAX_CPU, 1);
    if (!online)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    int have_online = read_online(env, online);
    struct state *s = calloc(1, sizeof *s);
    if (!s) {
        free(online);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    s->env = env;
    /* one reader per package: the first CPU of each physical_package_id; on AMD also one per
     * physical core: the first CPU of each (package, core_id) */
    int pkg_cpu[MAX_PKG];
    for (size_t k = 0; k < MAX_PKG; k++)
        pkg_cpu[k] = -1;
    struct phys_core *phys = NULL;
    size_t nphys = 0;
    if (amd && !(phys = calloc(MAX_CPU, sizeof *phys))) {
        free(s);
        free(online);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int any_topology = 0, first_online = -1;
    for (int cpu = 0, miss = 0; cpu < MAX_CPU && miss < 64; cpu++) {
        char rel[128];
        uint64_t pkg, core_id;
        if (have_online && !online[cpu]) {
            miss++;
            continue; /* offline: no topology, no MSR file */
        }
        if (first_online < 0)
            first_online = cpu;
        erg__fmt(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        if (erg__env_read_u64(env, rel, &pkg) != 0) {
            miss++;
            continue;
        }
        miss = 0;
        any_topology = 1;
        if (pkg < MAX_PKG && pkg_cpu[pkg] < 0)
            pkg_cpu[pkg] = cpu;
        erg__fmt(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        if (!phys || pkg >= MAX_PKG || erg__env_read_u64(env, rel, &core_id) != 0)
            continue;
        size_t k = 0;
        while (k < nphys && !(phys[k].pkg == pkg && phys[k].core_id == core_id))
            k++;
        if (k == nphys) /* an SMT sibling shares its core's register: read once */
            phys[nphys++] = (struct phys_core){cpu, (unsigned)pkg, core_id};
    }
    if (!any_topology && first_online >= 0)
        pkg_cpu[0] = first_online; /* no topology: one package, read through an online CPU */
    free(online);
    if (phys && nphys && !(s->cores = calloc(nphys, sizeof *s->cores))) {
        free(phys);
        free(s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int denied = 0, missing = 0;
    /* why a package gave no channel, when others did: it is then a declined package, and a
     * total without it says so (incomplete) instead of covering the other packages only */
    char failed[MAX_PKG][160];
    memset(failed, 0, sizeof failed);
    for (size_t p = 0; p < MAX_PKG; p++) {
        if (pkg_cpu[p] < 0)
            continue;
        char rel[64];
        erg__fmt(rel, sizeof rel, "dev/cpu/%d/msr", pkg_cpu[p]);
        int fd = erg__env_open_dev(env, rel);
        size_t pi = s->npkg++;
        s->pkg_fd[pi] = fd;
        if (fd < 0) {
            if (errno == EACCES || errno == EPERM)
                denied = 1;
            else
                missing = 1;
            erg__env_path(env, rel, path, sizeof path);
            erg__fmt(failed[p], sizeof failed[p], "%s: %s", rel,
                     errno == EACCES || errno == EPERM ? "permission denied"
                                                       : erg__open_error(errno));
            continue;
        }
        uint64_t unit;
        if (rd_msr(env, fd, amd ? AMD_UNIT : INTEL_UNIT, &unit) != 0) {
            erg__fmt(failed[p], sizeof failed[p], "%s: the energy unit register %#x cannot be read",
                     rel, amd ? AMD_UNIT : INTEL_UNIT);
            continue;
        }
        unsigned esu = (unsigned)(unit >> 8) & 0x1f;
        double jpt = 1.0 / (double)(1ull << esu);
        const struct reg *regs = amd ? amd_regs : intel_regs;
        size_t nregs =
            amd ? sizeof amd_regs / sizeof amd_regs[0] : sizeof intel_regs / sizeof intel_regs[0];
        for (size_t r = 0; r <= nregs && s->n < MAX_CH; r++) {
            struct reg rg;
            if (r == nregs) {
                if (amd || p != 0)
                    break;
                rg = (struct reg){INTEL_PSYS, ERG_DOMAIN_PSYS, "psys"}; /* platform: once */
            } else {
                rg = regs[r];
            }
            uint64_t v;
            if (rd_msr(env, fd, rg.addr, &v) != 0 || (v & 0xffffffffu) == 0)
                continue; /* not implemented on this model: no channel rather than a dead one */
            struct erg__chan *c = &s->ch[s->n];
            memset(c, 0, sizeof *c);
            c->domain = rg.domain;
            if (rg.domain == ERG_DOMAIN_PSYS) {
                erg__strlcpy(c->device, "psys", sizeof c->device);
                erg__strlcpy(c->id, "rapl-msr:psys", sizeof c->id);
            } else {
                erg__fmt(c->device, sizeof c->device, "package-%zu", p);
                if (rg.domain == ERG_DOMAIN_PACKAGE)
                    erg__fmt(c->id, sizeof c->id, "rapl-msr:package-%zu", p);
                else
                    erg__fmt(c->id, sizeof c->id, "rapl-msr:package-%zu/%s", p, rg.name);
            }
            erg__fmt(c->label, sizeof c->label, "MSR %#x", rg.addr);
            c->grade = ERG_GRADE_HW_SHUNT;
            c->kind = ERG_KIND_COUNTER;
            c->joules_per_tick = jpt;
            if (!amd && rg.domain == ERG_DOMAIN_DRAM)
                for (size_t q = 0; q < sizeof fixed_dram_unit / sizeof fixed_dram_unit[0]; q++)
                    if (fixed_dram_unit[q].model == model) {
                        c->joules_per_tick = 1.0 / 65536.0; /* fixed DRAM unit, 15.3 µJ */
                        erg__fmt(c->label, sizeof c->label, "MSR %#x, fixed DRAM unit (%s)",
                                 rg.addr, fixed_dram_unit[q].what);
                    }
            c->wrap_ticks = 1ull << 32; /* 32-bit counters */
            c->min_interval_s = 1e-3;
            c->max_power_w = rg.domain == ERG_DOMAIN_PSYS   ? 3000.0
                             : rg.domain == ERG_DOMAIN_DRAM ? 500.0
                                                            : 1000.0;
            c->usable = 1;
            s->fd[s->n] = fd;
            s->addr[s->n] = rg.addr;
            s->n++;
        }
        if (amd && s->n < MAX_CH)
            amd_core_sum(s, p, jpt, phys, nphys);
    }
    free(phys);
    for (size_t p = 0; s->n && p < MAX_PKG && s->n < MAX_CH; p++) {
        if (!failed[p][0])
            continue;
        struct erg__chan *c = &s->ch[s->n];
        memset(c, 0, sizeof *c);
        c->domain = ERG_DOMAIN_PACKAGE;
        erg__fmt(c->device, sizeof c->device, "package-%zu", p);
        erg__fmt(c->id, sizeof c->id, "rapl-msr:package-%zu", p);
        c->grade = ERG_GRADE_HW_SHUNT;
        c->kind = ERG_KIND_COUNTER;
        c->joules_per_tick = 1.0;
        c->usable = 0;
        c->lacks = 1;
        erg__fmt(c->reason, sizeof c->reason, "package %zu unreadable: %s", p, failed[p]);
        s->fd[s->n] = -1;
        s->n++;
    }
    if (s->n == 0) {
        msr_close(s);
        if (denied)
            return erg_diag_set(diag, ERG_EACCES, path,
                                "permission denied: MSRs need root (CAP_SYS_RAWIO); prefer "
                                "powercap made group-readable by a udev rule (docs/meters.md, "
                                "'Giving erg counter access'); a capability given to erg makes it "
                                "refuse ERG_ROOT and ERG_NVML_LIB");
        if (missing)
            return erg_diag_set(diag, ERG_ENODEV, path,
                                "no MSR device (load the msr module: modprobe msr)");
        return erg_diag_set(diag, ERG_ENODEV, path, "no RAPL energy register reads");
    }
    *out = s;
    *chans = s->ch;
    *n = s->n;
    return ERG_OK;
}

static void msr_read(void *st, uint64_t *ticks, int *status, size_t n)
{
    struct state *s = st;
    for (size_t i = 0; i < n && i < s->n; i++) {
        uint64_t v;
        if (s->ncore[i]) { /* AMD core sum: unwrap each core, a failed core makes it missing */
            int ok = 1;
            for (size_t k = s->core0[i]; k < s->core0[i] + s->ncore[i]; k++) {
                struct core_rd *cr = &s->cores[k];
                if (rd_msr(s->env, cr->fd, AMD_CORE, &v) != 0) {
                    ok = 0;
                    continue;
                }
                s->acc[i] += (uint32_t)((uint32_t)v - cr->last); /* mod 2^32 */
                cr->last = (uint32_t)v;
            }
            ticks[i] = s->acc[i] & 0xffffffffu;
            status[i] = ok ? ERG__READ_OK : ERG__READ_TRANSIENT;
            continue;
        }
        if (s->fd[i] < 0) { /* a declined package */
            status[i] = ERG__READ_FATAL;
            continue;
        }
        if (rd_msr(s->env, s->fd[i], s->addr[i], &v) != 0) {
            status[i] = ERG__READ_TRANSIENT;
            continue;
        }
        ticks[i] = v & 0xffffffffu;
        status[i] = ERG__READ_OK;
    }
}

const struct erg__backend_ops erg__backend_rapl_msr = {
    .abi = ERG__BACKEND_ABI,
    .name = "rapl-msr",
    .open = msr_open,
    .read = msr_read,
    .close = msr_close,
};
