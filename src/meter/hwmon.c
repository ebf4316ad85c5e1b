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

#define MAX_TEMPS 32

struct hch {
    int fd, fd2; /* fd2: the current file of a voltage × current rail */
};

struct temp {
    int fd;
    int is_gpu;
    char id[ERG_METER_ID_MAX];
};

/* Channels grow as found: no fixed table drops a channel (a 64-core part's per-core counters
 * once crowded out its socket counter). */
struct state {
    const struct erg__env *env;
    size_t n, cap;
    struct erg__chan *ch;
    struct hch *h;
    size_t nt;
    struct temp t[MAX_TEMPS];
    int oom;
};

/* one hwmon (or iio) device as found */
struct dev {
    char base[96];  /* folder relative to the root: "sys/class/hwmon/hwmon3" */
    char attr[112]; /* where its attributes live: base, or base + "/device" (ACPI power meters on
                     * older kernels and NVIDIA Grace) */
    char name[48];
    char ident[64]; /* name, plus the device link's last part when there is one */
    char oem[64];   /* ACPI power meters: power1_oem_info ("Module Power Socket 0"), else "" */
    int iio;        /* an IIO device (Jetson JetPack 4 ina3221x) */
    int apu;        /* an amdgpu APU: its power is the SoC's, CPU included */
};

/* By identity; devices that share one (same name, no device link) fall back to the numeric
 * order of their folders, the only order left. */
static int dev_cmp(const void *a, const void *b)
{
    const struct dev *p = a, *q = b;
    int c = strcmp(p->ident, q->ident);
    if (c)
        return c;
    c = strcmp(p->oem, q->oem);
    if (c)
        return c;
    const char *x = strrchr(p->base, '/'), *y = strrchr(q->base, '/');
    x = x ? x + 1 : p->base;
    y = y ? y + 1 : q->base;
    unsigned long u = strtoul(x + strcspn(x, "0123456789"), NULL, 10);
    unsigned long v = strtoul(y + strcspn(y, "0123456789"), NULL, 10);
    return u < v ? -1 : u > v;
}

static int contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return 1;
    return 0;
}

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The socket number in an ACPI power meter's OEM text ("Module Power Socket 1"), -1 when none. */
static long socket_of(const char *oem)
{
    for (const char *p = oem; *p; p++)
        if (strncasecmp(p, "socket", 6) == 0) {
            const char *q = p + 6;
            while (*q == ' ' || *q == '_' || *q == '-')
                q++;
            if (*q >= '0' && *q <= '9')
                return strtol(q, NULL, 10);
        }
    return -1;
}

/* What a rail is. domain; *component for a rail inside a larger one (reported, never summed);
 * device: the scope it belongs to; scope: a few words saying what the figure covers (in the
 * 64-byte label); detail: "" or a sentence that replaces scope in a component's reason; grade:
 * -1, or a grade below the caller's that the source's accuracy calls for. */
struct rail {
    erg_domain domain;
    int component;
    char device[ERG_METER_ID_MAX];
    const char *scope;
    const char *detail;
    int grade;
};

static int amd_energy_like(const char *name)
{
    return strcmp(name, "amd_energy") == 0 || strcmp(name, "zenergy") == 0;
}

static int power_meter_like(const char *name)
{
    return strcmp(name, "power_meter") == 0 || strcmp(name, "acpi_power_meter") == 0;
}

/* An INA3221 board rail: the board's input ("VDD_IN" on Xavier/Orin/TX2, "POM_5V_IN" on the
 * Nano, "VIN") holds the others ("VDD_CPU_GPU_CV", "POM_5V_GPU", "VDD_SYS_DDR"...). */
static int board_input(const char *label)
{
    return contains_ci(label, "VDD_IN") || ends_with_ci(label, "_IN") ||
           strcasecmp(label, "VIN") == 0;
}

static void rail_of(const struct dev *d, const char *label, const char *oem, struct rail *r)
{
    r->component = 0;
    r->scope = "";
    r->detail = "";
    r->grade = -1;
    erg__fmt(r->device, sizeof r->device, "%s", d->ident);
    if (d->apu) {
        /* amdgpu on an APU: power1_input/power1_average is the socket's power, "On APUs this
         * includes the CPU" (Documentation/gpu/amdgpu/thermal.rst). The CPU package (RAPL) holds
         * the same CPU: reported, never added beside it */
        r->domain = ERG_DOMAIN_GPU;
        r->component = 1;
        r->scope = "APU socket power, CPU included";
        return;
    }
    if (strcmp(d->name, "amdgpu") == 0 || strcmp(d->name, "nouveau") == 0 ||
        strcmp(d->name, "i915") == 0 || strcmp(d->name, "xe") == 0) {
        r->domain = ERG_DOMAIN_GPU;
        r->scope = "the GPU board";
        return;
    }
    if (amd_energy_like(d->name) && strncmp(label, "Esocket", 7) == 0) {
        /* amd_energy and zenergy: "Esocket0" per socket (RAPL package energy) */
        erg__fmt(r->device, sizeof r->device, "package-%lu", strtoul(label + 7, NULL, 10));
        r->domain = ERG_DOMAIN_PACKAGE;
        r->scope = "the CPU package";
        return;
    }
    if (strcmp(d->name, "fam15h_power") == 0) {
        /* fam15h_power (Documentation/hwmon/fam15h_power.rst), AMD Family 15h and 16h processors:
         * power1_input is CurrPwrWatts, "the current amount of power being consumed by the
         * processor", which the processor's TDP algorithm computes (northbridge registers); on
         * multi-node processors it is the whole package's (the driver binds internal node 0
         * only). power1_average is PwrCPUave, the average over power1_average_interval of the
         * compute units' power accumulators (MSR CpuSwPwrAcc). The processor's own estimate, no
         * shunt: model_based (the caller's). These processors have no RAPL package beside it. */
        r->domain = ERG_DOMAIN_PACKAGE;
        r->scope = "AMD Family 15h/16h processor package";
        return;
    }
    if (strcmp(d->name, "zenpower") == 0) {
        /* zenpower (github.com/ocerman/zenpower, out of tree; replaces k10temp): power1
         * "SVI2_P_Core" and power2 "SVI2_P_SoC" are the Zen core (VDDCR_CPU) and SoC
         * (VDDCR_SOC) rails, SVI2 voltage x current as the SMU reports them, with a current
         * scaling "discovered experimentally" that "may not be accurate on all systems
         * (depends on the board model)" (its README): rails inside the package, reported, never
         * summed, and graded estimator, below a vendor reading */
        int soc = contains_ci(label, "SoC");
        r->domain = soc ? ERG_DOMAIN_UNCORE : ERG_DOMAIN_CORE;
        r->component = 1;
        r->grade = ERG_GRADE_ESTIMATOR;
        r->scope = soc ? "Zen SoC rail, SVI2 estimate" : "Zen core rail, SVI2 estimate";
        r->detail = soc ? "Zen SoC rail (VDDCR_SOC) from SVI2 telemetry by the out-of-tree "
                          "zenpower driver, whose current scaling was found by experiment and "
                          "depends on the board"
                        : "Zen core rail (VDDCR_CPU) from SVI2 telemetry by the out-of-tree "
                          "zenpower driver, whose current scaling was found by experiment and "
                          "depends on the board";
        return;
    }
    if (power_meter_like(d->name)) {
        /* ACPI 4.0 power meters (drivers/hwmon/acpi_power_meter.c, hwmon name "power_meter").
         * Without OEM text: the machine's input. NVIDIA Grace and Grace Hopper publish one meter
         * per domain and socket, named by power1_oem_info (NVIDIA Grace Performance Tuning
         * Guide, Power Telemetry): the module (Grace, its memory and SysIO, and the Hopper GPU
         * on Grace Hopper) holds Grace, which holds the CPU and SysIO rails. */
        long k = socket_of(oem);
        if (!oem[0]) {
            r->domain = ERG_DOMAIN_SYSTEM;
            r->scope = "the machine (ACPI power meter)";
            return;
        }
        if (k >= 0)
            erg__fmt(r->device, sizeof r->device, "socket-%ld", k);
        if (contains_ci(oem, "module") || contains_ci(oem, "total")) {
            r->domain = ERG_DOMAIN_SYSTEM;
            r->scope = "holds Grace, memory, SysIO, its GPU";
        } else if (contains_ci(oem, "grace")) {
            r->domain = ERG_DOMAIN_PACKAGE;
            r->scope = "holds CPU, memory, SysIO";
        } else if (contains_ci(oem, "sysio")) {
            r->domain = ERG_DOMAIN_UNCORE;
            r->component = 1;
            r->scope = "SysIO rail, inside Grace";
        } else if (contains_ci(oem, "cpu")) {
            r->domain = ERG_DOMAIN_CORE;
            r->component = 1;
            r->scope = "CPU rail, inside Grace";
        } else {
            r->domain = ERG_DOMAIN_SYSTEM;
            r->component = 1;
            r->scope = "a component rail";
        }
        return;
    }
    r->domain = ERG_DOMAIN_SYSTEM;
    if (board_input(label) || contains_ci(label, "total") || contains_ci(label, "system") ||
        contains_ci(label, "psu")) {
        r->scope = "the board's input";
        return;
    }
    r->component = 1; /* a rail of the board (VDD_CPU_GPU_CV, VDD_SOC...): reported, not summed */
    r->scope = "a rail inside the board's input";
}

static int open_attr(const struct erg__env *env, const struct dev *d, const char *file)
{
    char rel[256];
    erg__fmt(rel, sizeof rel, "%s/%s", d->attr, file);
    return erg__env_open(env, rel);
}

static void read_attr(const struct erg__env *env, const struct dev *d, const char *file, char *buf,
                      size_t size)
{
    char rel[256];
    erg__fmt(rel, sizeof rel, "%s/%s", d->attr, file);
    if (erg__env_read_text(env, rel, buf, size) < 0)
        buf[0] = '\0';
}

/* 0 when the channel's enable attribute exists and reads 0 (disabled: no channel), else 1. */
static int enabled(const struct erg__env *env, const struct dev *d, const char *what)
{
    char file[64], rel[256];
    uint64_t v;
    erg__fmt(file, sizeof file, "%s_enable", what);
    erg__fmt(rel, sizeof rel, "%s/%s", d->attr, file);
    return erg__env_read_u64(env, rel, &v) == 0 && v == 0 ? 0 : 1;
}

/* A new channel of device d named by its label, or by its attribute (`energy1`) when it has
 * none; ids are unique even when two sensors carry one label (the attribute is added). Domain
 * and scope from the device, label and OEM text; values in µJ or µW (1e-6 per tick). NULL on
 * out of memory. */
static struct erg__chan *add(struct state *s, const struct dev *d, const char *label,
                             const char *what, const char *oem, erg_grade grade,
                             erg_channel_kind kind)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct erg__chan *c = realloc(s->ch, cap * sizeof *c);
        if (!c) {
            s->oom = 1;
            return NULL;
        }
        s->ch = c;
        struct hch *h = realloc(s->h, cap * sizeof *h);
        if (!h) {
            s->oom = 1;
            return NULL;
        }
        s->h = h;
        s->cap = cap;
    }
    struct erg__chan *c = &s->ch[s->n];
    memset(c, 0, sizeof *c);
    s->h[s->n].fd = s->h[s->n].fd2 = -1;
    const char *nm = oem[0] ? oem : label[0] ? label : what;
    erg__fmt(c->id, sizeof c->id, "hwmon:%.28s/%.28s", d->ident, nm);
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->ch[k].id, c->id) == 0) { /* two sensors, one label: keep both */
            erg__fmt(c->id, sizeof c->id, "hwmon:%.24s/%.20s (%.12s)", d->ident, nm, what);
            break;
        }
    struct rail r;
    rail_of(d, label, oem, &r);
    if (oem[0])
        erg__fmt(c->label, sizeof c->label, "%.28s: %s", oem, r.scope);
    else if (r.scope[0])
        erg__fmt(c->label, sizeof c->label, "%.24s %.32s: %s", d->name, nm, r.scope);
    else
        erg__fmt(c->label, sizeof c->label, "%.30s %.30s", d->name, nm);
    c->usable = 1;
    c->domain = r.domain;
    erg__strlcpy(c->device, r.device, sizeof c->device);
    c->component = r.component;
    c->grade = r.grade > (int)grade ? (erg_grade)r.grade : grade;
    c->kind = kind;
    c->joules_per_tick = 1e-6;
    if (d->apu)
        erg__fmt(c->reason, sizeof c->reason,
                 "%s: reported, never added beside the CPU package, which holds the same CPU",
                 r.scope);
    else if (r.component)
        erg__fmt(c->reason, sizeof c->reason,
                 "%s: reported, never added to the total that holds it",
                 r.detail[0] ? r.detail : r.scope);
    return c;
}

/* Whose temperatures a device reports. The stability protocol compares the CPU's and the GPU's
 * die temperatures with its limits (55 °C, 40 °C); a board's other sensors (nct6775's SYSTIN and
 * AUXTIN inputs, which read +127 °C or -128 °C when nothing is wired to them; NVMe, Wi-Fi, DIMM,
 * battery, ACPI zones) are not the processor's and are not read. */
enum temp_kind { TEMP_NONE, TEMP_CPU, TEMP_GPU };

static enum temp_kind temp_kind(const struct dev *d)
{
    static const char *const cpu[] = {"coretemp", "k10temp", "zenpower", "cpu_thermal",
                                      "cpu-thermal"};
    static const char *const gpu[] = {"amdgpu", "nouveau", "i915", "xe", "radeon"};
    for (size_t i = 0; i < sizeof cpu / sizeof cpu[0]; i++)
        if (strcmp(d->name, cpu[i]) == 0)
            return TEMP_CPU;
    for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
        if (strcmp(d->name, gpu[i]) == 0)
            return TEMP_GPU;
    return TEMP_NONE;
}

/* Is this temperature one the stability protocol judges? coretemp: the package ("Package id N",
 * "Physical id N" on old kernels) when there is one, not each core; k10temp and zenpower: Tdie and
 * the CCDs (Tccd1..8), and Tctl only without a Tdie, for "Tctl is a non-physical temperature on an
 * arbitrary scale" that carries an offset (+10 °C to +27 °C on Ryzen 2700X and Threadripper) where
 * the driver shows Tdie (Documentation/hwmon/k10temp.rst); amdgpu: the edge sensor ("junction" is
 * the hotspot, "mem" the memory) when there is one. */
static int temp_wanted(const struct dev *d, const char *label, int has_pkg, int has_tdie)
{
    switch (temp_kind(d)) {
    case TEMP_CPU:
        if (has_pkg)
            return strncmp(label, "Package", 7) == 0 || strncmp(label, "Physical", 8) == 0;
        if (strcmp(label, "Tctl") == 0)
            return !has_tdie;
        return 1;
    case TEMP_GPU:
        return strcmp(d->name, "amdgpu") != 0 || !label[0] || strcmp(label, "edge") == 0;
    default:
        return 0;
    }
}

static void scan_device(struct state *s, const struct dev *d)
{
    const struct erg__env *env = s->env;
    char file[64], label[64], what[32];
    const char *oem = d->oem;
    /* energy counters. Indices are 1-based and contiguous in practice (amd_energy numbers every
     * core before the sockets, so they run into the hundreds): stop after 16 misses in a row */
    for (int k = 0, miss = 0; k < 4096 && miss < 16; k++) {
        erg__fmt(what, sizeof what, "energy%d", k);
        erg__fmt(file, sizeof file, "energy%d_input", k);
        int fd = open_attr(env, d, file);
        int er = fd < 0 ? errno : 0;
        miss = fd < 0 && er != EACCES ? miss + 1 : 0; /* a denied file exists: not a miss */
        if (fd < 0) {
            /* amd_energy is root-only since Linux 5.10 (energy*_input 0400); its labels are not:
             * a denied socket is still a package, and a total without it is incomplete */
            if (er != EACCES)
                continue;
            erg__fmt(file, sizeof file, "energy%d_label", k);
            read_attr(env, d, file, label, sizeof label);
            erg__fmt(file, sizeof file, "energy%d_input", k);
            if (amd_energy_like(d->name) && strncmp(label, "Ecore", 5) == 0)
                continue;
            {
                struct erg__chan *c =
                    add(s, d, label, what, "", ERG_GRADE_HW_SHUNT, ERG_KIND_COUNTER);
                if (c) {
                    c->usable = 0;
                    c->lacks = !c->component;
                    erg__fmt(c->reason, sizeof c->reason,
                             "permission denied: %s/%s (a udev rule can make it group-readable: "
                             "docs/meters.md)",
                             d->attr, file);
                    s->n++;
                }
            }
            continue;
        }
        erg__fmt(file, sizeof file, "energy%d_label", k);
        read_attr(env, d, file, label, sizeof label);
        if (!enabled(env, d, what) ||
            (amd_energy_like(d->name) && strncmp(label, "Ecore", 5) == 0)) {
            /* disabled; or one core's counter (up to hundreds), inside its socket's counter,
             * which is kept: cores are not channels */
            env->io.close(env->io.ud, fd);
            continue;
        }
        struct erg__chan *c = add(s, d, label, what, "", ERG_GRADE_HW_SHUNT, ERG_KIND_COUNTER);
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
    for (int k = 0, miss = 0; k < 4096 && miss < 16; k++) {
        const char *kind = "input";
        erg__fmt(what, sizeof what, "power%d", k);
        erg__fmt(file, sizeof file, "power%d_input", k);
        int fd = open_attr(env, d, file);
        if (fd < 0) {
            kind = "average";
            erg__fmt(file, sizeof file, "power%d_average", k);
            fd = open_attr(env, d, file);
        }
        miss = fd < 0 ? miss + 1 : 0;
        if (fd < 0)
            continue;
        if (!enabled(env, d, what)) {
            env->io.close(env->io.ud, fd);
            continue;
        }
        erg__fmt(file, sizeof file, "power%d_label", k);
        read_attr(env, d, file, label, sizeof label);
        struct erg__chan *c = add(s, d, label, what, k == 1 ? oem : "", ERG_GRADE_MODEL_BASED,
                                  ERG_KIND_POWER); /* µW */
        if (!c) {
            env->io.close(env->io.ud, fd);
            return;
        }
        /* an averaged reading is only meaningful over its averaging interval (ms) */
        uint64_t ms = 0;
        char rel[256];
        erg__fmt(rel, sizeof rel, "%s/power%d_average_interval", d->attr, k);
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
            erg__fmt(what, sizeof what, "in%d", k);
            if (!enabled(env, d, what))
                continue;
            erg__fmt(file, sizeof file, "in%d_input", k);
            int fv = open_attr(env, d, file);
            if (fv < 0)
                continue;
            erg__fmt(file, sizeof file, "curr%d_input", k);
            int fc = open_attr(env, d, file);
            if (fc < 0) {
                env->io.close(env->io.ud, fv);
                continue;
            }
            erg__fmt(file, sizeof file, "in%d_label", k);
            read_attr(env, d, file, label, sizeof label);
            erg__fmt(what, sizeof what, "rail%d", k);
            /* mV × mA = µW */
            struct erg__chan *c = add(s, d, label, what, "", ERG_GRADE_MODEL_BASED, ERG_KIND_POWER);
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
    /* temperatures of the CPU and GPU dies (temp_wanted); coretemp's and k10temp's labels are
     * looked at first: a package sensor makes the per-core ones redundant, and k10temp's Tdie makes
     * its Tctl an offset control value */
    int has_pkg = 0, has_tdie = 0;
    if (temp_kind(d) == TEMP_CPU)
        for (int k = 0, miss = 0; k < 1024 && miss < 16; k++) {
            erg__fmt(file, sizeof file, "temp%d_label", k);
            read_attr(env, d, file, label, sizeof label);
            miss = label[0] ? 0 : miss + 1;
            has_pkg |= strncmp(label, "Package", 7) == 0 || strncmp(label, "Physical", 8) == 0;
            has_tdie |= strcmp(label, "Tdie") == 0;
        }
    for (int k = 0, miss = 0; k < 1024 && miss < 16 && s->nt < MAX_TEMPS; k++) {
        erg__fmt(file, sizeof file, "temp%d_input", k);
        int fd = open_attr(env, d, file);
        miss = fd < 0 ? miss + 1 : 0;
        if (fd < 0)
            continue;
        erg__fmt(file, sizeof file, "temp%d_label", k);
        read_attr(env, d, file, label, sizeof label);
        if (!temp_wanted(d, label, has_pkg, has_tdie)) {
            env->io.close(env->io.ud, fd);
            continue;
        }
        erg__fmt(what, sizeof what, "temp%d", k);
        struct temp *t = &s->t[s->nt++];
        t->fd = fd;
        t->is_gpu = temp_kind(d) == TEMP_GPU;
        erg__fmt(t->id, sizeof t->id, "hwmon:%.28s/%.28s", d->ident, label[0] ? label : what);
    }
}

/* Jetson boards on JetPack 4 (Nano, TX1, TX2; Linux 4.9) expose their INA3221 monitors through
 * IIO, not hwmon: <root>/sys/bus/iio/devices/iio:deviceN with name "ina3221x",
 * in_powerK_input in mW and rail_name_K (NVIDIA Jetson Linux Developer Guide, Power Monitor). */
static void scan_iio_device(struct state *s, const struct dev *d)
{
    const struct erg__env *env = s->env;
    for (int k = 0; k < 8; k++) {
        char file[64], label[64], what[32];
        erg__fmt(what, sizeof what, "in_power%d", k);
        erg__fmt(file, sizeof file, "in_power%d_input", k);
        int fd = open_attr(env, d, file);
        if (fd < 0)
            continue;
        erg__fmt(file, sizeof file, "rail_name_%d", k);
        read_attr(env, d, file, label, sizeof label);
        struct erg__chan *c = add(s, d, label, what, "", ERG_GRADE_MODEL_BASED, ERG_KIND_POWER);
        if (!c) {
            env->io.close(env->io.ud, fd);
            return;
        }
        c->joules_per_tick = 1e-3; /* mW */
        c->min_interval_s = 0.01;
        c->max_power_w = 5000.0;
        s->h[s->n].fd = fd;
        s->n++;
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
        /* the processor's zones only: x86_pkg_temp, cpu-thermal and the like, Intel's TCPU and
         * B0D4 (the processor participant), SoC and GPU zones; not acpitz, iwlwifi, pch... */
        if (!contains_ci(type, "cpu") && !contains_ci(type, "pkg") && !contains_ci(type, "soc") &&
            !contains_ci(type, "gpu") && strcmp(type, "B0D4") != 0)
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
    free(s->ch);
    free(s->h);
    free(s);
}

/* Does base/file exist under the root (a regular file)? */
static int has_file(const struct erg__env *env, const char *base, const char *file)
{
    char rel[256];
    erg__fmt(rel, sizeof rel, "%s/%s", base, file);
    int fd = erg__env_open(env, rel);
    if (fd < 0)
        return 0;
    env->io.close(env->io.ud, fd);
    return 1;
}

/* Fill d for the folder base (its entry name is entry): name, where the attributes live and the
 * identity. 0, or -1 when it is not a device erg reads. */
static int find_dev(const struct erg__env *env, const char *base, const char *entry, int iio,
                    struct dev *d)
{
    memset(d, 0, sizeof *d);
    d->iio = iio;
    erg__strlcpy(d->base, base, sizeof d->base);
    erg__strlcpy(d->attr, base, sizeof d->attr);
    char rel[256];
    erg__fmt(rel, sizeof rel, "%s/name", base);
    int have_name = erg__env_read_text(env, rel, d->name, sizeof d->name) > 0;
    if (!iio) {
        /* ACPI power meters on older kernels (and NVIDIA Grace) keep their attributes, the name
         * sometimes too, in hwmonN/device/ */
        char dev[128];
        erg__fmt(dev, sizeof dev, "%s/device", base);
        if (!has_file(env, base, "power1_average") && !has_file(env, base, "power1_input") &&
            !has_file(env, base, "energy1_input") &&
            (has_file(env, dev, "power1_average") || has_file(env, dev, "power1_oem_info"))) {
            erg__strlcpy(d->attr, dev, sizeof d->attr);
            if (!have_name) {
                erg__fmt(rel, sizeof rel, "%s/name", dev);
                have_name = erg__env_read_text(env, rel, d->name, sizeof d->name) > 0;
            }
            if (!have_name) {
                erg__strlcpy(d->name, "power_meter", sizeof d->name); /* acpi_power_meter */
                have_name = 1;
            }
        }
    }
    if (!have_name)
        return -1;
    if (power_meter_like(d->name))
        read_attr(env, d, "power1_oem_info", d->oem, sizeof d->oem);
    if (!iio && strcmp(d->name, "amdgpu") == 0) {
        /* amdgpu_pm.c shows in1 (label "vddnb", the northbridge rail) on APUs only */
        char nb[16];
        read_attr(env, d, "in1_label", nb, sizeof nb);
        d->apu = strcmp(nb, "vddnb") == 0;
    }
    /* the device link names the hardware (a PCI, platform or i2c address), stable across boots;
     * an IIO device's own link ends in .../1-0040/iio:device0 */
    char target[256];
    erg__fmt(rel, sizeof rel, iio ? "%s" : "%s/device", base);
    int l = erg__env_readlink(env, rel, target, sizeof target);
    const char *hw = NULL;
    if (l > 0) {
        char *slash = strrchr(target, '/');
        if (iio && slash && strcmp(slash + 1, entry) == 0) {
            *slash = '\0';
            slash = strrchr(target, '/');
        }
        hw = slash ? slash + 1 : target;
        if (!*hw || strcmp(hw, "..") == 0 || strcmp(hw, ".") == 0)
            hw = NULL;
    }
    if (hw)
        erg__fmt(d->ident, sizeof d->ident, "%.30s@%.30s", d->name, hw);
    else
        erg__strlcpy(d->ident, d->name, sizeof d->ident);
    return 0;
}

/* List the devices of one class folder into *devs (grown as needed). */
static void list_devs(const struct erg__env *env, const char *folder, const char *prefix, int iio,
                      struct dev **devs, size_t *nd, size_t *cap)
{
    DIR *dd = erg__env_opendir(env, folder);
    if (!dd)
        return;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL) {
        if (e->d_name[0] == '.' || strstr(e->d_name, "..") || strlen(e->d_name) >= 32 ||
            strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (*nd == *cap) {
            size_t c = *cap ? *cap * 2 : 16;
            struct dev *p = realloc(*devs, c * sizeof *p);
            if (!p)
                break;
            *devs = p;
            *cap = c;
        }
        char base[96];
        erg__fmt(base, sizeof base, "%s/%s", folder, e->d_name);
        struct dev *d = &(*devs)[*nd];
        if (find_dev(env, base, e->d_name, iio, d) != 0)
            continue;
        if (iio && strncmp(d->name, "ina3221", 7) != 0)
            continue; /* IIO: only the Jetson power monitors */
        (*nd)++;
    }
    closedir(dd);
}

static int hw_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                   erg_diag *diag)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->env = env;
    struct dev *devs = NULL;
    size_t nd = 0, cap = 0;
    list_devs(env, "sys/class/hwmon", "hwmon", 0, &devs, &nd, &cap);
    list_devs(env, "sys/bus/iio/devices", "iio:device", 1, &devs, &nd, &cap);
    /* order by identity, then make same-name devices without links distinct by that order */
    if (nd)
        qsort(devs, nd, sizeof devs[0], dev_cmp);
    for (size_t i = 0; i < nd;) {
        size_t j = i + 1;
        while (j < nd && strcmp(devs[j].ident, devs[i].ident) == 0 &&
               strcmp(devs[j].oem, devs[i].oem) == 0)
            j++;
        for (size_t k = i; j - i > 1 && k < j; k++) {
            char tmp[64];
            erg__fmt(tmp, sizeof tmp, "%.50s#%zu", devs[k].ident, k - i);
            erg__strlcpy(devs[k].ident, tmp, sizeof devs[k].ident);
        }
        i = j;
    }
    for (size_t i = 0; i < nd && !s->oom; i++) {
        if (devs[i].iio)
            scan_iio_device(s, &devs[i]);
        else
            scan_device(s, &devs[i]);
    }
    free(devs);
    if (s->oom) {
        hw_close(s);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
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
