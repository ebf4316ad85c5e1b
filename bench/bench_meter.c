/* SPDX-License-Identifier: MIT */
/*
 * Meter benchmarks (run by hand, never by ctest):
 *  1. the cost of one window (begin + end: two snapshots and a diff) per channel, for each backend
 *     on fake trees, and on this machine's real root;
 *  2. the sampler thread's CPU use at 100 ms and 10 ms periods.
 * Usage: bench_meter [seconds-per-sampler-run (default 2)]
 */
#include "meter/fake_tree.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "erg/meter.h"

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t usable(const erg_meter *m)
{
    size_t k = 0;
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info c;
        k += erg_meter_channel_info(m, i, &c) == ERG_OK && c.usable != 0;
    }
    return k;
}

static erg_meter *open_at(const char *root, const char *backends, const char *nvml)
{
    erg_meter_options o;
    erg_meter_options_init(&o);
    o.root = root;
    o.backends = backends;
    o.nvml_path = nvml;
    erg_meter *m = NULL;
    erg_diag d;
    if (erg_meter_open(&o, &m, &d) != ERG_OK)
        return NULL;
    return m;
}

/* One measurement window, as erg_window_end makes it: two snapshots and their difference. */
static int one_window(erg_meter *m, erg_meter_snapshot *a, erg_meter_snapshot *b,
                      erg_measurement *r)
{
    int rc = erg_meter_snapshot_take(m, a);
    if (rc == ERG_OK)
        rc = erg_meter_snapshot_take(m, b);
    if (rc == ERG_OK)
        rc = erg_meter_diff(m, a, b, 0, r);
    return rc;
}

static void window_cost(const char *what, erg_meter *m)
{
    if (!m || usable(m) == 0) {
        printf("  %-28s (no usable channel)\n", what);
        erg_meter_close(m);
        return;
    }
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_measurement *r = calloc(1, sizeof *r);
    const int n = 2000;
    int rc = a && b && r ? ERG_OK : ERG_ENOMEM;
    for (int k = 0; k < 50 && rc == ERG_OK; k++) /* warm up */
        rc = one_window(m, a, b, r);
    double t0 = now_s(CLOCK_MONOTONIC);
    for (int k = 0; k < n && rc == ERG_OK; k++)
        rc = one_window(m, a, b, r);
    double dt = now_s(CLOCK_MONOTONIC) - t0;
    size_t ch = usable(m);
    if (rc != ERG_OK)
        printf("  %-28s a window failed: %s\n", what, erg_strerror(rc));
    else
        printf("  %-28s %2zu channel(s): %8.2f us per window, %8.2f us per window per channel\n",
               what, ch, dt / n * 1e6, dt / n / (double)ch * 1e6);
    erg_measurement_release(r);
    free(r);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    erg_meter_close(m);
}

static void sampler_cpu(const char *what, erg_meter *m, double period_s, double secs)
{
    if (!m) {
        printf("  %-28s (no meter)\n", what);
        return;
    }
    double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
    if (erg_meter_sampler_start(m, period_s) != ERG_OK) {
        printf("  %-28s (the sampler thread did not start)\n", what);
        return;
    }
    double actual = erg_meter_sampler_period_s(m);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    erg_meter_sampler_stop(m);
    double c = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0, w = now_s(CLOCK_MONOTONIC) - w0;
    printf("  %-28s period %6.3f s (used %6.3f s): CPU %7.4f %% of one core (%.2f ms CPU per "
           "second)\n",
           what, period_s, actual, c / w * 100, c / w * 1e3);
}

static void rapl_tree(const char *root)
{
    fake_powercap_2s(root, 1);
    fake_proc_stat(root, 100, 100);
}

static void hwmon_tree(const char *root)
{
    fake_write(root, "sys/class/hwmon/hwmon0/name", "ina3221\n");
    fake_write(root, "sys/class/hwmon/hwmon0/in1_label", "VDD_IN\n");
    fake_write(root, "sys/class/hwmon/hwmon0/in1_input", "5000\n");
    fake_write(root, "sys/class/hwmon/hwmon0/curr1_input", "2000\n");
    fake_write(root, "sys/class/hwmon/hwmon1/name", "amd_energy\n");
    fake_write(root, "sys/class/hwmon/hwmon1/energy1_input", "1000\n");
    fake_write(root, "sys/class/hwmon/hwmon1/energy1_label", "Esocket0\n");
}

static void msr_tree(const char *root)
{
    fake_write(root, "proc/cpuinfo", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n");
    char p[600];
    snprintf(p, sizeof p, "%s/dev/cpu/0", root);
    fake_mkdir(root, "dev/cpu/0");
    snprintf(p, sizeof p, "%s/dev/cpu/0/msr", root);
    int fd = open(p, O_RDWR | O_CREAT, 0600);
    uint64_t v = 0xA0E03;
    if (pwrite(fd, &v, 8, 0x606) != 8)
        perror("pwrite");
    v = 1000;
    if (pwrite(fd, &v, 8, 0x611) != 8 || pwrite(fd, &v, 8, 0x619) != 8 ||
        pwrite(fd, &v, 8, 0x639) != 8)
        perror("pwrite");
    close(fd);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    if (!(secs > 0))
        secs = 2.0;
    char root[256];
    if (fake_root_new(root, sizeof root)) {
        perror("mkdtemp");
        return 1;
    }
    rapl_tree(root);
    hwmon_tree(root);
    msr_tree(root);
    char nvml_state[512];
    snprintf(nvml_state, sizeof nvml_state, "%s/nvml.txt", root);
    fake_write(root, "nvml.txt", "2 0\n1000 50000 0 0 0 40\n0 100000 3 0 0 40\n");
    setenv("FAKE_NVML_FILE", nvml_state, 1);
#ifdef BENCH_FAKE_NVML
    const char *nvml = BENCH_FAKE_NVML;
#else
    const char *nvml = getenv("ERG_NVML_LIB");
#endif
    printf("Cost of one window (begin + end = 2 polls + diff), fake trees under %s:\n", root);
    window_cost("rapl-sysfs (7 zones, fake)", open_at(root, "rapl-sysfs", NULL));
    window_cost("rapl-msr (sparse file)", open_at(root, "rapl-msr", NULL));
    window_cost("hwmon (fake)", open_at(root, "hwmon", NULL));
    if (nvml)
        window_cost("nvml (fake library)", open_at(root, "nvml", nvml));
    else
        printf("  nvml: no fake library given (ERG_NVML_LIB)\n");
    window_cost("estimator (fake /proc/stat)", open_at(root, "estimator", NULL));
    printf("On this machine (root /):\n");
    erg_meter *real = open_at("/", NULL, NULL);
    if (real)
        for (size_t i = 0; i < erg_meter_backend_count(real); i++) {
            erg_backend_info b;
            if (erg_meter_backend_info(real, i, &b) == ERG_OK)
                printf("  backend %-11s %-7s %s\n", b.name, erg_backend_state_name(b.state),
                       b.reason);
        }
    window_cost("all backends, real root", real);

    printf("Sampler CPU use over %.1f s:\n", secs);
    erg_meter *m = open_at(root, "rapl-sysfs,estimator", NULL);
    sampler_cpu("fake rapl-sysfs + estimator", m, 0.1, secs);
    sampler_cpu("fake rapl-sysfs + estimator", m, 0.01, secs);
    erg_meter_close(m);
    m = open_at("/", NULL, NULL);
    sampler_cpu("real root", m, 0.1, secs);
    sampler_cpu("real root", m, 0.01, secs);
    erg_meter_close(m);
    fake_root_free(root);
    return 0;
}
