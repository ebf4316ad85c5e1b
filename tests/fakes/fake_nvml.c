/* SPDX-License-Identifier: MIT */
/*
 * A fake NVML library for tests (built as libnvidia-ml.so.1, loaded through ERG_NVML_LIB). Its
 * state comes from the text file named by $FAKE_NVML_FILE, read on every call, so that a test, or
 * a command measured by `erg measure`, scripts counters and return codes by rewriting the file:
 *   line 1:   <gpu count> <nvmlInit return code>
 *   per GPU:  <energy mJ> <power mW> <energy rc> <power rc> <mig 0|1> <temperature °C> [<util %>]
 * Only the symbols erg resolves are exported.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXG 8
#define API __attribute__((visibility("default")))

struct gpu {
    unsigned long long energy_mj;
    unsigned power_mw;
    int energy_rc, power_rc;
    unsigned mig, temp_c, util;
};

static unsigned g_count;
static int g_init_rc;
static struct gpu g[MAXG];

/* Re-read the state file; on any problem keep the last state. */
static void load(void)
{
    const char *path = getenv("FAKE_NVML_FILE");
    if (!path)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    unsigned count;
    int rc;
    char line[256];
    if (fgets(line, sizeof line, f) && sscanf(line, "%u %d", &count, &rc) == 2 && count <= MAXG) {
        struct gpu t[MAXG];
        unsigned k = 0;
        for (; k < count && fgets(line, sizeof line, f); k++) {
            t[k].util = 0;
            if (sscanf(line, "%llu %u %d %d %u %u %u", &t[k].energy_mj, &t[k].power_mw,
                       &t[k].energy_rc, &t[k].power_rc, &t[k].mig, &t[k].temp_c, &t[k].util) < 6)
                break;
        }
        if (k == count) {
            g_count = count;
            g_init_rc = rc;
            memcpy(g, t, sizeof t[0] * count);
        }
    }
    fclose(f);
}

/* devices are the addresses of g[i] */
static int index_of(const void *dev)
{
    for (unsigned i = 0; i < MAXG; i++)
        if (dev == (const void *)&g[i])
            return (int)i;
    return -1;
}

API int nvmlInit_v2(void);
API int nvmlShutdown(void);
API int nvmlDeviceGetCount_v2(unsigned *n);
API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev);
API int nvmlDeviceGetName(void *dev, char *buf, unsigned len);
API int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len);
API int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj);
API int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw);
API int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *t);
API int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending);
API int nvmlDeviceGetUtilizationRates(void *dev, unsigned *util);

int nvmlInit_v2(void)
{
    load();
    return g_init_rc;
}

int nvmlShutdown(void)
{
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
    load();
    *n = g_count;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
    if (i >= g_count)
        return 2;
    *dev = &g[i];
    return 0;
}

int nvmlDeviceGetName(void *dev, char *buf, unsigned len)
{
    snprintf(buf, len, "Fake GPU %d", index_of(dev));
    return 0;
}

int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len)
{
    snprintf(buf, len, "GPU-fake-%04d", index_of(dev));
    return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
    load();
    int i = index_of(dev);
    if (i < 0)
        return 2;
    if (g[i].energy_rc)
        return g[i].energy_rc;
    *mj = g[i].energy_mj;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw)
{
    load();
    int i = index_of(dev);
    if (i < 0)
        return 2;
    if (g[i].power_rc)
        return g[i].power_rc;
    *mw = g[i].power_mw;
    return 0;
}

int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *t)
{
    int i = index_of(dev);
    if (i < 0 || sensor != 0)
        return 2;
    *t = g[i].temp_c;
    return 0;
}

int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending)
{
    int i = index_of(dev);
    if (i < 0)
        return 2;
    *cur = *pending = g[i].mig;
    return 0;
}

/* nvmlUtilization_t is {unsigned gpu; unsigned memory;} (percent) */
int nvmlDeviceGetUtilizationRates(void *dev, unsigned *util)
{
    load();
    int i = index_of(dev);
    if (i < 0)
        return 2;
    util[0] = g[i].util;
    util[1] = 0;
    return 0;
}
