/* SPDX-License-Identifier: MIT */
/* The exporter on fake powercap trees with a scripted clock: cumulative counters through a wrap
 * and a counter reset, scopes, absent figures, the text format, and per-process / per-cgroup
 * attribution on a fake /proc (hand-computed shares). */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg/meter.h"
#include "erg/serve.h"

static const char *const root = fake_root;

#define RANGE_UJ 262143328850ull /* max_energy_range_uj of the fake zones */

static erg_meter *open_meter(void)
{
    erg_meter *m = fake_open(root, "rapl-sysfs");
    return m;
}

static void set_uj(const char *zone, uint64_t v)
{
    char rel[256];
    snprintf(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", zone);
    fake_write_u64(root, rel, v);
}

/* The value of the sample whose line starts with prefix (name{labels}), or NaN when absent. */
static double sample_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, prefix, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NAN;
}

static char *render(erg_exporter *e)
{
    char *t = NULL;
    size_t len = 0;
    assert_int_equal(erg_exporter_render(e, NAN, &t, &len), ERG_OK);
    assert_int_equal(strlen(t), len);
    assert_true(len > 0 && t[len - 1] == '\n');
    return t;
}

#define PKG0                                                                                       \
    "erg_energy_joules_total{channel=\"rapl-sysfs:package-0\",domain=\"package\","                 \
    "device=\"package-0\",grade=\"hw_shunt\",scope=\"root\"}"

static void counters_accumulate_through_a_wrap_and_a_reset(void **state)
{
    (void)state;
    /* one package with its core zone */
    fake_powercap_2s(root, 0);
    fake_unlink(root, "sys/class/powercap/intel-rapl:1/energy_uj");
    set_uj("intel-rapl:0", RANGE_UJ - 8000000);
    erg_meter *m = open_meter();
    erg_exporter_options o;
    erg_exporter_options_init(&o);
    erg_exporter *e = NULL;
    assert_int_equal(erg_exporter_new(m, &o, &e, NULL), ERG_OK);
    /* no interval yet: the counter is absent, never 0 */
    char *t = render(e);
    assert_true(isnan(sample_of(t, PKG0)));
    free(t);
    assert_true(isnan(erg_exporter_energy_j(e, "rapl-sysfs:package-0")));

    /* +5 J in 1 s */
    fake_now_ns += 1000000000u;
    set_uj("intel-rapl:0", RANGE_UJ - 3000000);
    set_uj("intel-rapl:0:0", 2000000 + 5000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    erg_assert_near(erg_exporter_energy_j(e, "rapl-sysfs:package-0"), 5.0, 1e-9);
    /* across the wrap (modulus max_energy_range_uj + 1): from RANGE - 3 J to 9 J - 1 µJ is
     * (RANGE + 1) - (RANGE - 3e6) + 9e6 - 1 = 12e6 µJ */
    fake_now_ns += 1000000000u;
    set_uj("intel-rapl:0", 9000000 - 1);
    set_uj("intel-rapl:0:0", 2000000 + 6000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    erg_assert_near(erg_exporter_energy_j(e, "rapl-sysfs:package-0"), 17.0, 1e-9);
    double before_reset = erg_exporter_energy_j(e, "rapl-sysfs:package-0");
    /* a counter reset (driver reload): backwards, not a wrap: nothing added, never a decrease */
    fake_now_ns += 1000000000u;
    set_uj("intel-rapl:0", 1000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    assert_true(erg_exporter_energy_j(e, "rapl-sysfs:package-0") >= before_reset);
    /* the meter re-baselines once the counter goes on from its new value (the interval that
     * confirms the reset is skipped: +3 J not counted), then counting resumes: +4 J */
    fake_now_ns += 1000000000u;
    set_uj("intel-rapl:0", 1000 + 3000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    erg_assert_near(erg_exporter_energy_j(e, "rapl-sysfs:package-0"), before_reset, 1e-9);
    fake_now_ns += 1000000000u;
    set_uj("intel-rapl:0", 1000 + 7000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    double final_j = erg_exporter_energy_j(e, "rapl-sysfs:package-0");
    erg_assert_near(final_j, before_reset + 4.0, 1e-9);

    t = render(e);
    /* the text says the same, with 17 significant digits */
    erg_assert_near(sample_of(t, PKG0), final_j, 1e-9);
    /* core is inside package: scope component */
    assert_true(!isnan(sample_of(t, "erg_energy_joules_total{channel=\"rapl-sysfs:package-0/core\","
                                    "domain=\"core\",device=\"package-0\",grade=\"hw_shunt\","
                                    "scope=\"component\"}")));
    /* the last interval's power: 4 J over 1 s */
    erg_assert_near(sample_of(t,
                              "erg_power_watts{channel=\"rapl-sysfs:package-0\",domain=\"package\","
                              "device=\"package-0\",grade=\"hw_shunt\",scope=\"root\"}"),
                    4.0, 1e-6);
    /* the wrap was counted as a flagged interval */
    assert_true(sample_of(t, "erg_channel_flagged_intervals_total{channel=\"rapl-sysfs:package-0\","
                             "flag=\"wrap_corrected\"}") >= 1);
    assert_non_null(strstr(t, "# TYPE erg_energy_joules_total counter\n"));
    assert_non_null(strstr(t, "# TYPE erg_power_watts gauge\n"));
    assert_int_equal((int)sample_of(t, "erg_exporter_samples_total"), 5);
    assert_true(!isnan(sample_of(t, "erg_exporter_cpu_seconds_total")));
    free(t);
    erg_exporter_free(e);
    erg_meter_close(m);
}

static void psys_holds_the_packages(void **state)
{
    (void)state;
    fake_powercap_2s(root, 1);
    erg_meter *m = open_meter();
    erg_exporter *e = NULL;
    assert_int_equal(erg_exporter_new(m, NULL, &e, NULL), ERG_OK);
    fake_now_ns += 2000000000u;
    set_uj("intel-rapl:0", 1000000 + 20000000);
    set_uj("intel-rapl:1", 5000000 + 10000000);
    set_uj("intel-rapl:2", 7000000 + 50000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    char *t = render(e);
    assert_true(!isnan(sample_of(t, "erg_energy_joules_total{channel=\"rapl-sysfs:psys\","
                                    "domain=\"psys\",device=\"psys\",grade=\"hw_shunt\","
                                    "scope=\"root\"}")));
    assert_true(!isnan(sample_of(t, "erg_energy_joules_total{channel=\"rapl-sysfs:package-0\","
                                    "domain=\"package\",device=\"package-0\",grade=\"hw_shunt\","
                                    "scope=\"component\"}")));
    /* the node total is psys alone: 50 J, 25 W */
    erg_assert_near(sample_of(t, "erg_node_energy_joules_total{grade=\"hw_shunt\"}"), 50.0, 1e-9);
    erg_assert_near(sample_of(t, "erg_node_power_watts{grade=\"hw_shunt\"}"), 25.0, 1e-9);
    free(t);
    erg_exporter_free(e);
    erg_meter_close(m);
}

static void proc_pid(const char *pid, const char *comm, unsigned long ut, unsigned long st,
                     const char *cgroup)
{
    char rel[128];
    snprintf(rel, sizeof rel, "proc/%s/stat", pid);
    /* pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     */
    fake_write(root, rel, "%s (%s) S 1 1 1 0 -1 4194304 10 0 0 0 %lu %lu 0 0 20 0 1 0 100\n", pid,
               comm, ut, st);
    snprintf(rel, sizeof rel, "proc/%s/cgroup", pid);
    fake_write(root, rel, "0::%s\n", cgroup);
}

static void attribution_splits_by_cpu_time(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    fake_unlink(root, "sys/class/powercap/intel-rapl:1/energy_uj");
    fake_proc_stat(root, 1000, 5000);
    proc_pid("100", "trainer", 100, 0, "/job/a");
    proc_pid("200", "odd) name", 50, 50, "/job/a");
    proc_pid("300", "logger", 10, 0, "/job/b");
    erg_meter *m = open_meter();
    erg_exporter_options o;
    erg_exporter_options_init(&o);
    o.attribute = ERG_ATTRIBUTE_PIDS;
    o.attribute_top = 2;
    o.root = root;
    erg_exporter *e = NULL;
    assert_int_equal(erg_exporter_new(m, &o, &e, NULL), ERG_OK);
    /* one interval: 100 busy ticks; pid 100 +60, pid 200 +30 (20 user + 10 system), pid 300
     * +10; the package and its dram moved 40 J + 4 J (core is a component, not added) */
    fake_now_ns += 1000000000u;
    fake_proc_stat(root, 1100, 5100);
    proc_pid("100", "trainer", 160, 0, "/job/a");
    proc_pid("200", "odd) name", 70, 60, "/job/a");
    proc_pid("300", "logger", 20, 0, "/job/b");
    set_uj("intel-rapl:0", 1000000 + 40000000);
    set_uj("intel-rapl:0:2", 4000000 + 4000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    char *t = render(e);
    /* CPU-side roots: package 40 J + dram 4 J = 44 J; shares 0.6, 0.3, 0.1 */
    erg_assert_near(sample_of(t, "erg_process_energy_joules_total{pid=\"100\",comm=\"trainer\","
                                 "grade=\"estimator\"}"),
                    26.4, 1e-9);
    erg_assert_near(sample_of(t, "erg_process_energy_joules_total{pid=\"200\",comm=\"odd) name\","
                                 "grade=\"estimator\"}"),
                    13.2, 1e-9);
    /* top 2: pid 300 goes to "other" */
    assert_true(isnan(sample_of(t, "erg_process_energy_joules_total{pid=\"300\",comm=\"logger\","
                                   "grade=\"estimator\"}")));
    erg_assert_near(sample_of(t, "erg_process_energy_joules_total{pid=\"other\",comm=\"other\","
                                 "grade=\"estimator\"}"),
                    4.4, 1e-9);
    free(t);
    erg_exporter_free(e);

    /* the same interval by cgroup: /job/a = 0.9, /job/b = 0.1 */
    fake_proc_stat(root, 1000, 5000);
    proc_pid("100", "trainer", 100, 0, "/job/a");
    proc_pid("200", "odd) name", 50, 50, "/job/a");
    proc_pid("300", "logger", 10, 0, "/job/b");
    o.attribute = ERG_ATTRIBUTE_CGROUPS;
    o.attribute_top = 10;
    assert_int_equal(erg_exporter_new(m, &o, &e, NULL), ERG_OK);
    fake_now_ns += 1000000000u;
    fake_proc_stat(root, 1100, 5100);
    proc_pid("100", "trainer", 160, 0, "/job/a");
    proc_pid("200", "odd) name", 70, 60, "/job/a");
    proc_pid("300", "logger", 20, 0, "/job/b");
    set_uj("intel-rapl:0", 1000000 + 40000000 + 10000000);
    set_uj("intel-rapl:0:2", 4000000 + 4000000 + 1000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    t = render(e);
    erg_assert_near(sample_of(t, "erg_cgroup_energy_joules_total{cgroup=\"/job/a\","
                                 "grade=\"estimator\"}"),
                    9.9, 1e-9);
    erg_assert_near(sample_of(t, "erg_cgroup_energy_joules_total{cgroup=\"/job/b\","
                                 "grade=\"estimator\"}"),
                    1.1, 1e-9);
    free(t);
    erg_exporter_free(e);
    erg_meter_close(m);
}

/* A /proc entry of the captured tree that is a symlink out of it (absolute, as /proc/self is)
 * resolves inside the root (core/fsroot.h), so the host's files it points at are never read: the
 * process "escaped" outside the root stays out of the attribution (it used to be read and charged
 * 60 % of the interval). */
static void proc_symlink_out_of_the_root_is_not_followed(void **state)
{
    (void)state;
    char outside[] = "/tmp/erg-attrib-outside.XXXXXX", dir[300], file[340];
    assert_non_null(mkdtemp(outside));
    snprintf(dir, sizeof dir, "%s/400", outside);
    snprintf(file, sizeof file, "%s/stat", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "400 (escaped) S 1 1 1 0 -1 4194304 10 0 0 0 100 0 0 0 20 0 1 0 100\n");
    fclose(f);
    fake_powercap_2s(root, 0);
    fake_unlink(root, "sys/class/powercap/intel-rapl:1/energy_uj");
    fake_proc_stat(root, 1000, 5000);
    proc_pid("100", "trainer", 100, 0, "/job/a");
    char link[300];
    snprintf(link, sizeof link, "%s/proc/400", root);
    assert_int_equal(symlink(dir, link), 0); /* absolute: /tmp/erg-attrib-outside.../400 */
    erg_meter *m = open_meter();
    erg_exporter_options o;
    erg_exporter_options_init(&o);
    o.attribute = ERG_ATTRIBUTE_PIDS;
    o.attribute_top = 10;
    o.root = root;
    erg_exporter *e = NULL;
    assert_int_equal(erg_exporter_new(m, &o, &e, NULL), ERG_OK);
    /* 100 busy ticks: pid 100 +40; the file outside +60 */
    fake_now_ns += 1000000000u;
    fake_proc_stat(root, 1100, 5100);
    proc_pid("100", "trainer", 140, 0, "/job/a");
    f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "400 (escaped) S 1 1 1 0 -1 4194304 10 0 0 0 160 0 0 0 20 0 1 0 100\n");
    fclose(f);
    set_uj("intel-rapl:0", 1000000 + 40000000);
    set_uj("intel-rapl:0:2", 4000000 + 4000000);
    assert_int_equal(erg_exporter_sample(e), ERG_OK);
    char *t = render(e);
    assert_null(strstr(t, "escaped"));
    /* 44 J x 40 / 100 */
    erg_assert_near(sample_of(t, "erg_process_energy_joules_total{pid=\"100\",comm=\"trainer\","
                                 "grade=\"estimator\"}"),
                    17.6, 1e-9);
    free(t);
    erg_exporter_free(e);
    erg_meter_close(m);
    unlink(file);
    rmdir(dir);
    rmdir(outside);
}

static void bad_options_are_refused(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = open_meter();
    erg_exporter_options o;
    erg_exporter_options_init(&o);
    erg_exporter *e = NULL;
    erg_diag d;
    o.interval_s = 0;
    assert_int_equal(erg_exporter_new(m, &o, &e, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "interval"));
    o.interval_s = NAN;
    assert_int_equal(erg_exporter_new(m, &o, &e, &d), ERG_EINVAL);
    o.interval_s = 1;
    o.attribute = ERG_ATTRIBUTE_PIDS;
    o.attribute_top = 0;
    assert_int_equal(erg_exporter_new(m, &o, &e, &d), ERG_EINVAL);
    assert_null(e);
    assert_int_equal(erg_exporter_new(NULL, NULL, &e, &d), ERG_EINVAL);
    erg_exporter_free(NULL);
    erg_http_stop(NULL);
    /* listen addresses */
    assert_true(erg_http_is_loopback("127.0.0.1:9942"));
    assert_true(erg_http_is_loopback("[::1]:9942"));
    assert_false(erg_http_is_loopback("0.0.0.0:9942"));
    assert_false(erg_http_is_loopback("10.1.2.3:9942"));
    erg_exporter_options_init(&o);
    assert_int_equal(erg_exporter_new(m, &o, &e, NULL), ERG_OK);
    erg_http *h = NULL;
    assert_int_equal(erg_http_start(e, "nonsense", NULL, &h, &d), ERG_EINVAL);
    assert_int_equal(erg_http_start(e, "127.0.0.1:99999", NULL, &h, &d), ERG_EINVAL);
    assert_int_equal(erg_http_start(e, "127.0.0.1:0", NULL, &h, &d), ERG_OK);
    unsigned port = erg_http_port(h);
    assert_true(port > 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    erg_http *h2 = NULL;
    assert_int_equal(erg_http_start(e, addr, NULL, &h2, &d), ERG_EBUSY);
    assert_non_null(strstr(d.detail, "in use"));
    erg_http_stop(h);
    erg_exporter_free(e);
    erg_meter_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counters_accumulate_through_a_wrap_and_a_reset, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(psys_holds_the_packages, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(attribution_splits_by_cpu_time, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(proc_symlink_out_of_the_root_is_not_followed, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(bad_options_are_refused, fake_setup, fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
