/* SPDX-License-Identifier: MIT */
/*
 * NVML, loaded with dlopen ($ERG_NVML_LIB, else libnvidia-ml.so.1), one channel per GPU named by
 * index, with name and UUID as label. The total-energy counter
 * (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded, Volta and newer; updated every
 * 20-100 ms) is graded hw_shunt. Where it is NOT_SUPPORTED, nvmlDeviceGetPowerUsage (mW) is
 * integrated and graded model_based; on current boards that reading is a 1 s average, so windows
 * under 1 s are refused (below_resolution). A GPU in MIG mode gives no figure (the counter covers
 * every instance, not the slice a process runs on). Any NVML error inside a window makes that
 * window give no figure.
 */
#include "meter/backend.h"
#include "meter/nvml_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPU 16

struct fns {
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, erg__nvml_dev *);
    int (*name)(erg__nvml_dev, char *, unsigned);
    int (*uuid)(erg__nvml_dev, char *, unsigned);
    int (*energy)(erg__nvml_dev, unsigned long long *);
    int (*power)(erg__nvml_dev, unsigned *);
    int (*temp)(erg__nvml_dev, int, unsigned *);
    int (*mig)(erg__nvml_dev, unsigned *, unsigned *); /* optional */
    int (*util)(erg__nvml_dev, unsigned *);            /* optional: nvmlUtilization_t */
};

struct state {
    void *lib;
    struct fns f;
    size_t n;
    erg__nvml_dev dev[MAX_GPU];
    int use_energy[MAX_GPU];
    struct erg__chan ch[MAX_GPU];
};

static void nv_close(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    if (s->f.shutdown)
        s->f.shutdown();
    if (s->lib)
        dlclose(s->lib);
    free(s);
}

/* dlsym into a typed function pointer (POSIX guarantees the conversion works on dlsym results). */
#define SYM(field, name)                                                                           \
    do {                                                                                           \
        void *p_ = dlsym(s->lib, name);                                                            \
        memcpy(&s->f.field, &p_, sizeof p_);                                                       \
    } while (0)

static int nv_open(const struct erg__env *env, void **out, struct erg__chan **chans, size_t *n,
                   erg_diag *diag)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->lib = dlopen(env->nvml_path, RTLD_NOW | RTLD_LOCAL);
    if (!s->lib) {
        const char *e = dlerror();
        free(s);
        return erg_diag_set(diag, ERG_ENOLIB, env->nvml_path,
                            "cannot load the NVML library (no NVIDIA driver?): %s", e ? e : "");
    }
    SYM(init, "nvmlInit_v2");
    SYM(shutdown, "nvmlShutdown");
    SYM(count, "nvmlDeviceGetCount_v2");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(name, "nvmlDeviceGetName");
    SYM(uuid, "nvmlDeviceGetUUID");
    SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(power, "nvmlDeviceGetPowerUsage");
    SYM(temp, "nvmlDeviceGetTemperature");
    SYM(mig, "nvmlDeviceGetMigMode");
    SYM(util, "nvmlDeviceGetUtilizationRates");
    const char *missing = !s->f.init       ? "nvmlInit_v2"
                          : !s->f.shutdown ? "nvmlShutdown"
                          : !s->f.count    ? "nvmlDeviceGetCount_v2"
                          : !s->f.handle   ? "nvmlDeviceGetHandleByIndex_v2"
                          : !s->f.name     ? "nvmlDeviceGetName"
                          : !s->f.uuid     ? "nvmlDeviceGetUUID"
                          : !s->f.energy   ? "nvmlDeviceGetTotalEnergyConsumption"
                          : !s->f.power    ? "nvmlDeviceGetPowerUsage"
                          : !s->f.temp     ? "nvmlDeviceGetTemperature"
                                           : NULL;
    if (missing) {
        s->f.shutdown = NULL;
        nv_close(s);
        return erg_diag_set(diag, ERG_ENOLIB, env->nvml_path, "not an NVML library: no symbol %s",
                            missing);
    }
    int rc = s->f.init();
    if (rc != ERG__NVML_SUCCESS) {
        s->f.shutdown = NULL;
        nv_close(s);
        return erg_diag_set(diag, rc == ERG__NVML_ERROR_NO_PERMISSION ? ERG_EACCES : ERG_ENODEV,
                            env->nvml_path, "nvmlInit failed (NVML error %d)%s", rc,
                            rc == ERG__NVML_ERROR_DRIVER_NOT_LOADED ? ": driver not loaded" : "");
    }
    unsigned count = 0;
    rc = s->f.count(&count);
    if (rc != ERG__NVML_SUCCESS || count == 0) {
        nv_close(s);
        return erg_diag_set(diag, ERG_ENODEV, env->nvml_path, "no NVIDIA GPU (NVML error %d)", rc);
    }
    if (count > MAX_GPU)
        count = MAX_GPU;
    for (unsigned i = 0; i < count; i++) {
        struct erg__chan *c = &s->ch[s->n];
        memset(c, 0, sizeof *c);
        erg__fmt(c->id, sizeof c->id, "nvml:gpu-%u", i);
        erg__fmt(c->device, sizeof c->device, "gpu-%u", i);
        c->domain = ERG_DOMAIN_GPU;
        c->max_power_w = 2000.0;
        c->usable = 1;
        erg__nvml_dev d = NULL;
        rc = s->f.handle(i, &d);
        s->dev[s->n] = d;
        s->n++;
        if (rc != ERG__NVML_SUCCESS) {
            c->usable = 0;
            erg__fmt(c->reason, sizeof c->reason, "no handle for GPU %u (NVML error %d)", i, rc);
            continue;
        }
        char name[96] = "", uuid[96] = "";
        s->f.name(d, name, sizeof name);
        s->f.uuid(d, uuid, sizeof uuid);
        erg__fmt(c->label, sizeof c->label, "%.30s %.32s", name, uuid);
        unsigned cur = 0, pend = 0;
        if (s->f.mig && s->f.mig(d, &cur, &pend) == ERG__NVML_SUCCESS &&
            cur == ERG__NVML_DEVICE_MIG_ENABLE) {
            c->usable = 0;
            erg__strlcpy(c->reason,
                         "MIG enabled: the counter covers every MIG instance, not one slice; no "
                         "figure rather than a wrong one",
                         sizeof c->reason);
            continue;
        }
        unsigned long long mj;
        unsigned mw;
        int re = s->f.energy(d, &mj);
        if (re == ERG__NVML_SUCCESS) {
            s->use_energy[s->n - 1] = 1;
            c->grade = ERG_GRADE_HW_SHUNT;
            c->kind = ERG_KIND_COUNTER;
            c->joules_per_tick = 1e-3; /* mJ */
            c->wrap_ticks = 0;         /* 64-bit: no wrap; a decrease is flagged */
            c->wrap_unknown = 1;
            c->no_wrap = 1;
            c->min_interval_s = 0.1; /* updated every 20-100 ms */
            continue;
        }
        int rp = s->f.power(d, &mw);
        if (rp == ERG__NVML_SUCCESS) {
            c->grade = ERG_GRADE_MODEL_BASED;
            c->kind = ERG_KIND_POWER;
            c->joules_per_tick = 1e-3; /* mW */
            c->min_interval_s = 1.0;   /* a 1 s average on current boards */
            erg__fmt(c->reason, sizeof c->reason,
                     "no energy counter (NVML error %d%s): power integrated; NVML power is a 1 s "
                     "average, refused for sub-second windows",
                     re, re == ERG__NVML_ERROR_NOT_SUPPORTED ? ", NOT_SUPPORTED: pre-Volta" : "");
            continue;
        }
        c->usable = 0;
        erg__fmt(c->reason, sizeof c->reason,
                 "neither energy (NVML error %d) nor power (NVML error %d) is supported", re, rp);
    }
    *out = s;
    *chans = s->ch;
    *n = s->n;
    return ERG_OK;
}

static void nv_read(void *st, uint64_t *ticks, int *status, size_t n)
{
    struct state *s = st;
    for (size_t i = 0; i < n && i < s->n; i++) {
        if (!s->ch[i].usable) {
            status[i] = ERG__READ_FATAL;
            continue;
        }
        int rc;
        if (s->use_energy[i]) {
            unsigned long long mj = 0;
            rc = s->f.energy(s->dev[i], &mj);
            ticks[i] = (uint64_t)mj;
        } else {
            unsigned mw = 0;
            rc = s->f.power(s->dev[i], &mw);
            ticks[i] = mw;
        }
        /* an NVML error mid-window: that window gives no figure */
        status[i] = rc == ERG__NVML_SUCCESS ? ERG__READ_OK : ERG__READ_FATAL;
    }
}

static void nv_busy(void *st, double *util, size_t n)
{
    struct state *s = st;
    for (size_t i = 0; i < n && i < s->n; i++) {
        unsigned u[2] = {0, 0}; /* nvmlUtilization_t: gpu %, memory % */
        util[i] = -1.0;
        if (s->f.util && s->dev[i] && s->f.util(s->dev[i], u) == ERG__NVML_SUCCESS && u[0] <= 100)
            util[i] = (double)u[0] / 100.0;
    }
}

static size_t nv_temps(void *st, erg_temperature *out, size_t max)
{
    struct state *s = st;
    size_t k = 0;
    for (size_t i = 0; i < s->n && k < max; i++) {
        unsigned t;
        if (!s->dev[i] || s->f.temp(s->dev[i], ERG__NVML_TEMPERATURE_GPU, &t) != ERG__NVML_SUCCESS)
            continue;
        erg__strlcpy(out[k].id, s->ch[i].id, sizeof out[k].id);
        out[k].is_gpu = 1;
        out[k].temp_c = (double)t;
        k++;
    }
    return k;
}

const struct erg__backend_ops erg__backend_nvml = {
    .abi = ERG__BACKEND_ABI,
    .name = "nvml",
    .open = nv_open,
    .read = nv_read,
    .temps = nv_temps,
    .close = nv_close,
    .busy = nv_busy,
};
