/* SPDX-License-Identifier: MIT */
/* hwmon on fake trees: identity by name/link/label, rails and domains, power integration with hold
 * semantics, averaged power refused for short windows, temperatures. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/meter.h"

static const char *const root = fake_root;

static void link_device(const char *dir, const char *target)
{
    char p[600];
    snprintf(p, sizeof p, "%s/sys/class/hwmon/%s/device", root, dir);
    if (symlink(target, p) != 0)
        fail_msg("symlink %s", p);
}

/* The board: an INA3221 (Jetson), an amdgpu, amd_energy, coretemp, one thermal zone; hwmon
 * numbers given by the caller so renumbering can be tested. */
static void board(int a, int b, int c, int d)
{
    char dir[64], rel[128];
#define W(file, ...)                                                                               \
    do {                                                                                           \
        snprintf(rel, sizeof rel, "sys/class/hwmon/%s/%s", dir, file);                             \
        fake_write(root, rel, __VA_ARGS__);                                                        \
    } while (0)
    snprintf(dir, sizeof dir, "hwmon%d", a);
    W("name", "ina3221\n");
    W("in1_label", "VDD_IN\n");
    W("in1_input", "5000\n");
    W("curr1_input", "2000\n");
    W("in2_label", "VDD_CPU_GPU_CV\n");
    W("in2_input", "5000\n");
    W("curr2_input", "1000\n");
    link_device(dir, "../../../1-0040");
    snprintf(dir, sizeof dir, "hwmon%d", b);
    W("name", "amdgpu\n");
    W("power1_average", "50000000\n");
    W("temp1_input", "45000\n");
    W("temp1_label", "edge\n");
    link_device(dir, "../../../0000:03:00.0");
    snprintf(dir, sizeof dir, "hwmon%d", c);
    W("name", "amd_energy\n");
    W("energy1_input", "1000000\n");
    W("energy1_label", "Esocket0\n");
    W("energy2_input", "2000000\n");
    W("energy2_label", "Ecore000\n");
    /* a big part: every core first, the second socket far down the list */
    for (int k = 3; k < 140; k++) {
        char f[32];
        snprintf(f, sizeof f, "energy%d_input", k);
        W(f, "%d\n", 1000 * k);
        snprintf(f, sizeof f, "energy%d_label", k);
        if (k == 139)
            W(f, "Esocket1\n");
        else
            W(f, "Ecore%03d\n", k - 2);
    }
    snprintf(dir, sizeof dir, "hwmon%d", d);
    W("name", "coretemp\n");
    W("temp1_input", "47000\n");
    W("temp1_label", "Package id 0\n");
#undef W
    fake_write(root, "sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
    fake_write(root, "sys/class/thermal/thermal_zone0/temp", "48000\n");
}

static erg_meter *open_meter(void)
{
    erg_meter *m = fake_open(root, "hwmon");
    return m;
}

static void devices_found_by_name_link_and_label(void **state)
{
    (void)state;
    board(3, 0, 7, 1);
    erg_meter *m = open_meter();
    erg_channel_info c;
    int i = fake_find(m, "hwmon:ina3221@1-0040/VDD_IN");
    assert_true(i >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_SYSTEM);
    assert_int_equal(c.grade, ERG_GRADE_MODEL_BASED);
    assert_int_equal(c.kind, ERG_KIND_POWER);
    i = fake_find(m, "hwmon:ina3221@1-0040/VDD_CPU_GPU_CV");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_non_null(strstr(c.reason, "never added to the total"));
    i = fake_find(m, "hwmon:amdgpu@0000:03:00.0/power1");
    assert_true(i >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_GPU);
    erg_assert_near(c.min_interval_s, 1.0, 0); /* an average: not for sub-second windows */
    i = fake_find(m, "hwmon:amd_energy/Esocket0");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
    assert_string_equal(c.device, "package-0");
    assert_int_equal(c.grade, ERG_GRADE_HW_SHUNT);
    i = fake_find(m, "hwmon:amd_energy/Esocket1"); /* found past 137 per-core counters */
    assert_true(i >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_string_equal(c.device, "package-1");
    assert_int_equal(fake_find(m, "hwmon:amd_energy/Ecore000"), -1); /* per-core: not channels */
    size_t n1 = erg_meter_channel_count(m);
    char ids[16][ERG_METER_ID_MAX];
    for (size_t k = 0; k < n1 && k < 16; k++) {
        erg_assert_ok(erg_meter_channel_info(m, k, &c));
        strcpy(ids[k], c.id);
    }
    erg_meter_close(m);
    /* renumbered hwmonN folders (another boot): the same channels, in the same order */
    fake_root_renew();
    board(0, 5, 2, 9);
    m = open_meter();
    assert_int_equal(erg_meter_channel_count(m), n1);
    for (size_t k = 0; k < n1 && k < 16; k++) {
        erg_assert_ok(erg_meter_channel_info(m, k, &c));
        assert_string_equal(c.id, ids[k]);
    }
    erg_meter_close(m);
}

static void power_integrated_with_hold_semantics(void **state)
{
    (void)state;
    board(3, 0, 7, 1);
    erg_meter *m = open_meter();
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    fake_now_ns += 500000000u; /* 10 W held since the first reading */
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += 1000000000u;
    fake_write(root, "sys/class/hwmon/hwmon3/curr1_input", "4000\n"); /* now 20 W */
    erg_assert_ok(erg_meter_poll(m));
    fake_now_ns += 1000000000u;
    fake_write(root, "sys/class/hwmon/hwmon3/curr1_input", "1000\n"); /* 5 W from here */
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_measurement r = {0};
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    int i = fake_find(m, "hwmon:ina3221@1-0040/VDD_IN");
    assert_int_equal(r.channels[i].state, ERG_READING_OK);
    /* 10 W held over the first second, 20 W over the second; the 5 W sample starts after */
    erg_assert_near(r.channels[i].energy_j, 30.0, 1e-9);
    /* the board's input holds everything: the total is that rail alone */
    erg_assert_near(r.total_energy_j, 30.0, 1e-9);
    assert_int_equal(r.n_total, 1);
    assert_int_equal(r.total_grade, ERG_GRADE_MODEL_BASED);
    /* the averaged GPU power over a 2 s window is fine */
    i = fake_find(m, "hwmon:amdgpu@0000:03:00.0/power1");
    erg_assert_near(r.channels[i].energy_j, 100.0, 1e-9);
    /* ... and refused below its 1 s averaging */
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += 300000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    assert_int_equal(r.channels[i].state, ERG_READING_BELOW_RESOLUTION);
    /* a reading that has not changed for over 10 s is flagged stale (still integrated) */
    int in = fake_find(m, "hwmon:ina3221@1-0040/VDD_IN");
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    for (int k = 0; k < 3; k++) {
        fake_now_ns += 6000000000u;
        erg_assert_ok(erg_meter_poll(m));
    }
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    assert_int_equal(r.channels[in].state, ERG_READING_OK);
    assert_true(r.channels[in].flags & ERG_FLAG_STALE);
    erg_assert_near(r.channels[in].energy_j, 5.0 * 18, 1e-9); /* 5 W × 18 s */
    /* an impossible reading is discarded and flagged */
    fake_write(root, "sys/class/hwmon/hwmon0/power1_average", "9000000000000\n");
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += 2000000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    assert_int_equal(r.channels[i].state, ERG_READING_UNIT_SUSPECT);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    erg_measurement_release(&r);
    erg_meter_close(m);
}

static void temperatures_for_the_stability_protocol(void **state)
{
    (void)state;
    board(3, 0, 7, 1);
    erg_meter *m = open_meter();
    erg_temperature t[8];
    size_t n = 0;
    assert_int_equal(erg_meter_temperatures(m, t, 8, &n), ERG_OK);
    assert_int_equal(n, 3);
    int seen = 0;
    for (size_t k = 0; k < n; k++) {
        if (strcmp(t[k].id, "hwmon:amdgpu@0000:03:00.0/edge") == 0) {
            erg_assert_near(t[k].temp_c, 45.0, 1e-12);
            assert_int_equal(t[k].is_gpu, 1);
            seen |= 1;
        } else if (strcmp(t[k].id, "hwmon:coretemp/Package id 0") == 0) {
            erg_assert_near(t[k].temp_c, 47.0, 1e-12);
            seen |= 2;
        } else if (strcmp(t[k].id, "thermal:x86_pkg_temp") == 0) {
            erg_assert_near(t[k].temp_c, 48.0, 1e-12);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    erg_meter_close(m);
}

/* A desktop as `sensors` shows it (Ryzen 7 2700X on an ASUS board): k10temp with Tctl carrying
 * the +10 °C offset AMD gives the 2700X and Tdie beside it (Documentation/hwmon/k10temp.rst: "Tctl
 * is a non-physical temperature"), a CCD; nct6779 with SYSTIN, CPUTIN and unconnected AUXTIN
 * inputs at +127 °C and -128 °C; an NVMe drive; acpitz and iwlwifi thermal zones. And a 16-core
 * coretemp, a package sensor and one per core. The stability protocol reads the processor's die
 * temperatures only: k10temp's Tdie and Tccd1 (not its offset Tctl), coretemp's package. */
static void desktop_temperatures_are_the_dies(void **state)
{
    (void)state;
    char rel[128];
#define T(dir, k, label, mc)                                                                       \
    do {                                                                                           \
        snprintf(rel, sizeof rel, "sys/class/hwmon/%s/temp%d_label", dir, k);                      \
        fake_write(root, rel, "%s\n", label);                                                      \
        snprintf(rel, sizeof rel, "sys/class/hwmon/%s/temp%d_input", dir, k);                      \
        fake_write(root, rel, "%d\n", mc);                                                         \
    } while (0)
    fake_write(root, "sys/class/hwmon/hwmon2/name", "k10temp\n");
    T("hwmon2", 1, "Tctl", 62000);
    T("hwmon2", 2, "Tdie", 52000);
    T("hwmon2", 3, "Tccd1", 50250);
    fake_write(root, "sys/class/hwmon/hwmon3/name", "nct6779\n");
    T("hwmon3", 1, "SYSTIN", 36000);
    T("hwmon3", 2, "CPUTIN", 45500);
    T("hwmon3", 3, "AUXTIN0", 127000);
    T("hwmon3", 4, "AUXTIN1", -128000);
    T("hwmon3", 7, "PECI Agent 0", 52000);
    fake_write(root, "sys/class/hwmon/hwmon1/name", "nvme\n");
    T("hwmon1", 1, "Composite", 58850);
    fake_write(root, "sys/class/thermal/thermal_zone0/type", "acpitz\n");
    fake_write(root, "sys/class/thermal/thermal_zone0/temp", "27800\n");
    fake_write(root, "sys/class/thermal/thermal_zone1/type", "iwlwifi_1\n");
    fake_write(root, "sys/class/thermal/thermal_zone1/temp", "61000\n");
    fake_proc_stat(root, 1000, 9000); /* no energy counter here: the estimator is the channel */
    erg_meter *m = fake_open(root, "hwmon,estimator");
    erg_temperature t[16];
    size_t n = 0;
    erg_assert_ok(erg_meter_temperatures(m, t, 16, &n));
    assert_int_equal(n, 2);
    assert_string_equal(t[0].id, "hwmon:k10temp/Tdie");
    erg_assert_near(t[0].temp_c, 52.0, 1e-12);
    assert_string_equal(t[1].id, "hwmon:k10temp/Tccd1");
    erg_assert_near(t[1].temp_c, 50.25, 1e-12);
    assert_int_equal(t[0].is_gpu, 0);
    erg_meter_close(m);
    /* k10temp without an offset shows Tctl alone (Zen 2 and later): it is the die's */
    fake_unlink(root, "sys/class/hwmon/hwmon2/temp2_label");
    fake_unlink(root, "sys/class/hwmon/hwmon2/temp2_input");
    /* and a coretemp: the package, not its 16 cores */
    fake_write(root, "sys/class/hwmon/hwmon4/name", "coretemp\n");
    T("hwmon4", 1, "Package id 0", 47000);
    for (int k = 2; k < 18; k++) {
        char label[16];
        snprintf(label, sizeof label, "Core %d", k - 2);
        T("hwmon4", k, label, 44000 + 1000 * (k % 3));
    }
#undef T
    m = fake_open(root, "hwmon,estimator");
    erg_assert_ok(erg_meter_temperatures(m, t, 16, &n));
    assert_int_equal(n, 3);
    int seen = 0;
    for (size_t k = 0; k < n; k++) {
        if (strcmp(t[k].id, "hwmon:k10temp/Tctl") == 0)
            seen |= 1;
        else if (strcmp(t[k].id, "hwmon:k10temp/Tccd1") == 0)
            seen |= 2;
        else if (strcmp(t[k].id, "hwmon:coretemp/Package id 0") == 0)
            seen |= 4;
    }
    assert_int_equal(seen, 7);
    erg_meter_close(m);
}

/* ---- real layouts ---- */

/* Write v and a newline to root/rel. */
static void wr(const char *rel, const char *fmt, const char *v)
{
    (void)fmt; /* always "%s\n" */
    fake_write(root, rel, "%s\n", v);
}

/* An ACPI power meter as NVIDIA Grace Hopper (GH200) firmware publishes it, one per domain and
 * socket (NVIDIA Grace Performance Tuning Guide, Power Telemetry; the OEM strings of NVIDIA's
 * edk2 ACPI tables; Alumet's and DCGM's Grace parsers): on kernels before 6.x the attributes are in
 * hwmonN/device/ and hwmonN/ has no name file. */
static void grace_meter(int hwmon, const char *oem, unsigned long uw, int with_device_name)
{
    char rel[160], v[32];
    snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon%d/device/power1_oem_info", hwmon);
    wr(rel, "%s\n", oem);
    snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon%d/device/power1_average", hwmon);
    snprintf(v, sizeof v, "%lu", uw);
    wr(rel, "%s\n", v);
    snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon%d/device/power1_average_interval", hwmon);
    wr(rel, "%s\n", "50");
    if (with_device_name) {
        snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon%d/device/name", hwmon);
        wr(rel, "%s\n", "power_meter");
    }
}

static erg_measurement *window_of(erg_meter *m, double s)
{
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += (uint64_t)(s * 1e9);
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_measurement *r = calloc(1, sizeof *r);
    erg_assert_ok(erg_meter_diff(m, a, b, 0, r));
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    return r;
}

static void grace_hopper_module_holds_its_rails(void **state)
{
    (void)state;
    /* GH200 NVL2: two sockets; module 0 draws 400 W, Grace 0 120 W (CPU 90, SysIO 20) */
    grace_meter(1, "Module Power Socket 0", 400000000, 1);
    grace_meter(2, "Grace Power Socket 0", 120000000, 0);
    grace_meter(3, "CPU Power Socket 0", 90000000, 0);
    grace_meter(4, "SysIO Power Socket 0", 20000000, 1);
    grace_meter(5, "Module Power Socket 1", 300000000, 0);
    grace_meter(6, "Grace Power Socket 1", 100000000, 0);
    grace_meter(7, "CPU Power Socket 1", 70000000, 0);
    grace_meter(8, "SysIO Power Socket 1", 20000000, 0);
    erg_meter *m = open_meter();
    assert_int_equal(erg_meter_channel_count(m), 8);
    erg_channel_info c;
    int mod0 = fake_find(m, "hwmon:power_meter/Module Power Socket 0");
    assert_true(mod0 >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)mod0, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_SYSTEM);
    assert_string_equal(c.device, "socket-0");
    assert_non_null(strstr(c.label, "GPU"));        /* the scope is stated */
    erg_assert_near(c.min_interval_s, 0.05, 1e-12); /* power1_average_interval, ms */
    int g1 = fake_find(m, "hwmon:power_meter/Grace Power Socket 1");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)g1, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
    assert_string_equal(c.device, "socket-1");
    int cpu1 = fake_find(m, "hwmon:power_meter/CPU Power Socket 1");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)cpu1, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_CORE);
    assert_int_equal(c.parent, g1); /* the CPU rail inside Grace */
    assert_non_null(strstr(c.reason, "never added"));
    erg_measurement *r = window_of(m, 2.0);
    /* the modules alone: 400 W + 300 W over 2 s; Grace, CPU and SysIO reported, not added */
    erg_assert_near(r->total_energy_j, 1400.0, 1e-6);
    assert_int_equal(r->n_total, 2);
    assert_int_equal(r->total_flags, 0);
    erg_assert_near(r->channels[cpu1].energy_j, 140.0, 1e-6);
    assert_int_equal(r->channels[cpu1].in_total, 0);
    assert_int_equal(r->channels[g1].in_total, 0);
    erg_measurement_release(r);
    free(r);
    /* module 1 fails a read: no total that is socket 0 alone */
    fake_write(root, "sys/class/hwmon/hwmon5/device/power1_average", "x\n");
    r = window_of(m, 2.0);
    assert_true(isnan(r->total_energy_j));
    assert_int_equal(r->total_flags, ERG_FLAG_INCOMPLETE);
    assert_non_null(strstr(r->total_reason, "Module Power Socket 1"));
    erg_measurement_release(r);
    free(r);
    erg_meter_close(m);
}

/* The Grace CPU Superchip (Grace-Grace): no module meter; the Grace meters are the packages. */
static void grace_superchip_sums_its_grace_meters(void **state)
{
    (void)state;
    grace_meter(0, "Grace Power Socket 0", 150000000, 0);
    grace_meter(1, "CPU Power Socket 0", 110000000, 0);
    grace_meter(2, "SysIO Power Socket 0", 25000000, 0);
    grace_meter(3, "Grace Power Socket 1", 140000000, 0);
    grace_meter(4, "CPU Power Socket 1", 100000000, 0);
    grace_meter(5, "SysIO Power Socket 1", 25000000, 0);
    erg_meter *m = open_meter();
    erg_measurement *r = window_of(m, 1.0);
    erg_assert_near(r->total_energy_j, 290.0, 1e-6);
    assert_int_equal(r->n_total, 2);
    erg_measurement_release(r);
    free(r);
    erg_meter_close(m);
}

/* Generic hwmon classes: duplicate labels, unlabelled channels, disabled channels, a 64-core
 * zenergy part (zenergy numbers 64 per-core counters before the socket's), two supplies on one
 * power monitor. */
static void hwmon_channels_are_unique_complete_and_enabled(void **state)
{
    (void)state;
    /* two sensors, one label */
    wr("sys/class/hwmon/hwmon0/name", "%s\n", "pmbus");
    wr("sys/class/hwmon/hwmon0/power1_input", "%s\n", "200000000");
    wr("sys/class/hwmon/hwmon0/power1_label", "%s\n", "PSU Input");
    wr("sys/class/hwmon/hwmon0/power2_input", "%s\n", "150000000");
    wr("sys/class/hwmon/hwmon0/power2_label", "%s\n", "PSU Input");
    /* unlabelled energy, and a disabled one */
    wr("sys/class/hwmon/hwmon1/name", "%s\n", "nct7802");
    wr("sys/class/hwmon/hwmon1/energy1_input", "%s\n", "1000000");
    wr("sys/class/hwmon/hwmon1/energy2_input", "%s\n", "1000000");
    wr("sys/class/hwmon/hwmon1/energy2_enable", "%s\n", "0");
    /* zenergy on a 64-core part */
    char rel[128], v[32];
    wr("sys/class/hwmon/hwmon2/name", "%s\n", "zenergy");
    for (int k = 1; k <= 65; k++) {
        snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon2/energy%d_input", k);
        snprintf(v, sizeof v, "%d", 1000 * k);
        wr(rel, "%s\n", v);
        snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon2/energy%d_label", k);
        if (k == 65)
            wr(rel, "%s\n", "Esocket0");
        else {
            snprintf(v, sizeof v, "Ecore%03d", k - 1);
            wr(rel, "%s\n", v);
        }
    }
    erg_meter *m = open_meter();
    int p1 = fake_find(m, "hwmon:pmbus/PSU Input");
    int p2 = fake_find(m, "hwmon:pmbus/PSU Input (power2)");
    assert_true(p1 >= 0 && p2 >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)p2, &c));
    assert_int_equal(c.deduplicated, 0); /* two supplies: both kept */
    assert_true(fake_find(m, "hwmon:nct7802/energy1") >= 0);
    assert_int_equal(fake_find(m, "hwmon:nct7802/energy1_label"), -1);
    assert_int_equal(fake_find(m, "hwmon:nct7802/energy2"), -1); /* disabled */
    int sock = fake_find(m, "hwmon:zenergy/Esocket0");
    assert_true(sock >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)sock, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
    assert_string_equal(c.device, "package-0");
    assert_int_equal(fake_find(m, "hwmon:zenergy/Ecore000"), -1);
    erg_measurement *r = window_of(m, 1.0);
    /* both supplies of the pmbus monitor (the whole-machine input): 350 J */
    assert_int_equal(r->channels[p1].in_total, 1);
    assert_int_equal(r->channels[p2].in_total, 1);
    erg_assert_near(r->total_energy_j, 350.0, 1e-6);
    erg_measurement_release(r);
    free(r);
    erg_meter_close(m);
    fake_root_renew();
    /* an ina3221 with a disabled channel (ina3221 driver: inN_enable) */
    wr("sys/class/hwmon/hwmon3/name", "%s\n", "ina3221");
    wr("sys/class/hwmon/hwmon3/in1_label", "%s\n", "VDD_IN");
    wr("sys/class/hwmon/hwmon3/in1_input", "%s\n", "5000");
    wr("sys/class/hwmon/hwmon3/curr1_input", "%s\n", "1000");
    wr("sys/class/hwmon/hwmon3/in2_input", "%s\n", "0");
    wr("sys/class/hwmon/hwmon3/curr2_input", "%s\n", "0");
    wr("sys/class/hwmon/hwmon3/in2_enable", "%s\n", "0");
    m = open_meter();
    assert_true(fake_find(m, "hwmon:ina3221/VDD_IN") >= 0);
    assert_int_equal(fake_find(m, "hwmon:ina3221/rail2"), -1); /* disabled */
    assert_int_equal(erg_meter_channel_count(m), 1);
    erg_meter_close(m);
}

/* Jetson Nano and TX2 on JetPack 4: the INA3221 through IIO (driver ina3221x), in_powerN_input in
 * mW and rail_name_N; the board's input (POM_5V_IN on the Nano, VDD_IN on the TX2) holds the
 * other rails. */
static void jetson_jetpack4_iio_rails(void **state)
{
    (void)state;
    const char *dev0 = "sys/devices/7000c400.i2c/i2c-1/1-0040/iio:device0";
    char rel[160];
    snprintf(rel, sizeof rel, "%s/name", dev0);
    wr(rel, "%s\n", "ina3221x");
    const char *rails[3][2] = {
        {"POM_5V_IN", "4000"}, {"POM_5V_GPU", "1000"}, {"POM_5V_CPU", "1500"}};
    for (int k = 0; k < 3; k++) {
        snprintf(rel, sizeof rel, "%s/rail_name_%d", dev0, k);
        wr(rel, "%s\n", rails[k][0]);
        snprintf(rel, sizeof rel, "%s/in_power%d_input", dev0, k);
        wr(rel, "%s\n", rails[k][1]);
    }
    fake_mkdir(root, "sys/bus/iio/devices");
    char p[600];
    snprintf(p, sizeof p, "%s/sys/bus/iio/devices/iio:device0", root);
    assert_int_equal(symlink("../../../devices/7000c400.i2c/i2c-1/1-0040/iio:device0", p), 0);
    erg_meter *m = open_meter();
    int in = fake_find(m, "hwmon:ina3221x@1-0040/POM_5V_IN");
    int gpu = fake_find(m, "hwmon:ina3221x@1-0040/POM_5V_GPU");
    assert_true(in >= 0 && gpu >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)gpu, &c));
    assert_non_null(strstr(c.reason, "never added"));
    erg_measurement *r = window_of(m, 2.0);
    erg_assert_near(r->channels[in].energy_j, 8.0, 1e-9); /* 4000 mW × 2 s */
    erg_assert_near(r->channels[gpu].energy_j, 2.0, 1e-9);
    erg_assert_near(r->total_energy_j, 8.0, 1e-9);
    assert_int_equal(r->n_total, 1);
    erg_measurement_release(r);
    free(r);
    erg_meter_close(m);
}

/* amd_energy since Linux 5.10: energy*_input is root-only (0400), the labels are not. On a
 * 64-core part read without privilege, every per-core counter is denied before the socket's:
 * the socket is still found (a denied file is not a gap in the numbering), as a declined package,
 * and a total over the CPU is incomplete rather than silent. */
static void denied_amd_energy_socket_is_a_declined_package(void **state)
{
    (void)state;
    char rel[128], v[32];
    wr("sys/class/hwmon/hwmon0/name", "%s\n", "amd_energy");
    for (int k = 1; k <= 65; k++) {
        snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon0/energy%d_input", k);
        wr(rel, "%s\n", "1000");
        snprintf(rel, sizeof rel, "sys/class/hwmon/hwmon0/energy%d_label", k);
        if (k == 65)
            wr(rel, "%s\n", "Esocket0");
        else {
            snprintf(v, sizeof v, "Ecore%03d", k - 1);
            wr(rel, "%s\n", v);
        }
    }
    fake_fail_open_suffix = "_input"; /* every energy input denied (EACCES) */
    erg_meter *m = open_meter();
    if (erg_meter_channel_count(m) != 1) {
        erg_channel_info x;
        erg_assert_ok(erg_meter_channel_info(m, 0, &x));
        fail_msg("%zu channels, the first %s", erg_meter_channel_count(m), x.id);
    }
    int i = fake_find(m, "hwmon:amd_energy/Esocket0");
    assert_true(i >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_false(c.usable);
    assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
    assert_non_null(strstr(c.reason, "permission denied"));
    erg_meter_close(m);
}

/* A real AMD APU laptop (Ryzen 7040 "Phoenix", Linux 6.x): the kernel's intel-rapl driver exposes
 * the Zen package and core zones (Linux 5.11, "powercap: Add AMD Fam17h RAPL support")
 * (sys/class/powercap entries are symlinks into sys/devices/virtual/powercap/intel-rapl,
 * max_energy_range_uj 65532610987 for AMD's 2^-16 J unit), and amdgpu's hwmon has
 * power1_input/power1_average labelled "PPT", which is the SoC's socket power: "On APUs this
 * includes the CPU" (Documentation/gpu/amdgpu/thermal.rst, drivers/gpu/drm/amd/pm/amdgpu_pm.c). An
 * APU is told by in1 "vddnb", which amdgpu_pm.c shows on APUs only ("only APUs have vddnb"). Its
 * PPT is reported, never added beside the package: the package already holds the CPU, and the total
 * would count it twice. A discrete amdgpu (no vddnb) is still a GPU, summed. */
static void pc_link(const char *cls, const char *target)
{
    char p[600];
    snprintf(p, sizeof p, "%s/sys/class/powercap/%s", root, cls);
    if (symlink(target, p) != 0)
        fail_msg("symlink %s", p);
}

/* Write text to the file `file` of the zone folder z0 (relative to the fake root). */
static void zone_write(const char *z0, const char *file, const char *text)
{
    char rel[200];
    snprintf(rel, sizeof rel, "%s/%s", z0, file);
    fake_write(root, rel, "%s", text);
}

static void amd_apu_tree(int apu)
{
    const char *z0 = "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0";
    fake_write(root, "proc/cpuinfo",
               "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 116\n"
               "model name\t: AMD Ryzen 7 7840U\n\n");
    fake_write(root, "sys/devices/virtual/powercap/intel-rapl/enabled", "1\n");
    zone_write(z0, "name", "package-0\n");
    zone_write(z0, "energy_uj", "1000000\n");
    zone_write(z0, "max_energy_range_uj", "65532610987\n");
    zone_write(z0, "enabled", "0\n"); /* power limiting off: the counter still counts */
    zone_write(z0, "constraint_0_name", "long_term\n");
    zone_write(z0, "intel-rapl:0:0/name", "core\n");
    zone_write(z0, "intel-rapl:0:0/energy_uj", "500000\n");
    zone_write(z0, "intel-rapl:0:0/max_energy_range_uj", "65532610987\n");
    fake_mkdir(root, "sys/class/powercap");
    pc_link("intel-rapl", "../../devices/virtual/powercap/intel-rapl");
    pc_link("intel-rapl:0", "../../devices/virtual/powercap/intel-rapl/intel-rapl:0");
    pc_link("intel-rapl:0:0",
            "../../devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0");
    fake_write(root, "sys/class/hwmon/hwmon4/name", "amdgpu\n");
    fake_write(root, "sys/class/hwmon/hwmon4/power1_input", "25000000\n"); /* 25 W */
    fake_write(root, "sys/class/hwmon/hwmon4/power1_average", "24000000\n");
    fake_write(root, "sys/class/hwmon/hwmon4/power1_label", "PPT\n");
    fake_write(root, "sys/class/hwmon/hwmon4/in0_input", "1100\n");
    fake_write(root, "sys/class/hwmon/hwmon4/in0_label", "vddgfx\n");
    if (apu) {
        fake_write(root, "sys/class/hwmon/hwmon4/in1_input", "900\n");
        fake_write(root, "sys/class/hwmon/hwmon4/in1_label", "vddnb\n");
    }
    fake_write(root, "sys/class/hwmon/hwmon4/temp1_input", "52000\n");
    fake_write(root, "sys/class/hwmon/hwmon4/temp1_label", "edge\n");
    link_device("hwmon4", "../../../0000:c4:00.0");
}

static void amd_apu_socket_power_is_not_added_to_the_package(void **state)
{
    (void)state;
    for (int apu = 1; apu >= 0; apu--) {
        if (apu == 0) {
            fake_root_renew();
            fake_io_reset();
        }
        amd_apu_tree(apu);
        erg_meter *m = fake_open(root, "rapl-sysfs,hwmon");
        erg_channel_info c;
        int pkg = fake_find(m, "rapl-sysfs:package-0");
        int core = fake_find(m, "rapl-sysfs:package-0/core");
        int ppt = fake_find(m, "hwmon:amdgpu@0000:c4:00.0/PPT");
        assert_true(pkg >= 0 && core >= 0 && ppt >= 0);
        assert_int_equal(fake_find(m, "rapl-sysfs:intel-rapl"), -1); /* the control type */
        erg_assert_ok(erg_meter_channel_info(m, (size_t)core, &c));
        assert_int_equal(c.domain, ERG_DOMAIN_CORE);
        /* AMD's core zone is one core's per-core register read on the package's first CPU (the
         * kernel's rapl_msr_priv_amd): not the package's cores, declined with the reason */
        assert_int_equal(c.usable, 0);
        assert_non_null(strstr(c.reason, "one core's"));
        erg_assert_ok(erg_meter_channel_info(m, (size_t)pkg, &c));
        erg_assert_near(c.wrap_j, 65532.610988, 1e-9); /* (max_energy_range_uj + 1) µJ */
        erg_assert_ok(erg_meter_channel_info(m, (size_t)ppt, &c));
        assert_int_equal(c.domain, ERG_DOMAIN_GPU);
        if (apu)
            assert_non_null(strstr(c.reason, "CPU"));
        erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
        erg_assert_ok(erg_meter_snapshot_take(m, a));
        fake_now_ns += 2000000000u;
        /* 15 W package, 6 W cores over 2 s, the counters advancing in place */
        fake_write(root, "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj",
                   "31000000\n");
        fake_write(root,
                   "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0/energy_uj",
                   "12500000\n");
        erg_assert_ok(erg_meter_snapshot_take(m, b));
        erg_measurement r = {0};
        erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
        erg_assert_near(r.channels[pkg].energy_j, 30.0, 1e-9);
        assert_int_equal(r.channels[core].state, ERG_READING_DECLINED);
        assert_true(isnan(r.channels[core].energy_j));
        erg_assert_near(r.channels[ppt].energy_j, 50.0, 1e-9); /* power1_input, 25 W */
        assert_int_equal(r.channels[core].in_total, 0);
        if (apu) {
            /* the package alone: the APU's socket power holds the same CPU */
            erg_assert_near(r.total_energy_j, 30.0, 1e-9);
            assert_int_equal(r.n_total, 1);
            assert_int_equal(r.channels[ppt].in_total, 0);
        } else {
            /* a discrete card: package + GPU */
            erg_assert_near(r.total_energy_j, 80.0, 1e-9);
            assert_int_equal(r.n_total, 2);
            assert_int_equal(r.channels[ppt].in_total, 1);
        }
        erg_measurement_release(&r);
        erg_meter_snapshot_free(a);
        erg_meter_snapshot_free(b);
        erg_meter_close(m);
    }
}

/* fam15h_power (Documentation/hwmon/fam15h_power.rst): an AMD Family 15h/16h processor's own
 * power figure for its package (power1_input, CurrPwrWatts, from the TDP algorithm; on model 60h
 * and later power1_average, PwrCPUave, over power1_average_interval ms of the compute units'
 * accumulators): a package, graded model_based, summed. zenpower (out of tree): the Zen core and
 * SoC rails from SVI2 telemetry, whose current scaling its README says was found by experiment
 * and depends on the board: rails inside the package, graded estimator, never summed. */
static void amd_fam15h_power_and_zenpower_scopes(void **state)
{
    (void)state;
    for (int avg = 0; avg < 2; avg++) {
        if (avg) {
            fake_root_renew();
            fake_io_reset();
        }
        fake_write(root, "sys/class/hwmon/hwmon0/name", "fam15h_power\n");
        if (avg) {
            fake_write(root, "sys/class/hwmon/hwmon0/power1_average", "30000000\n"); /* 30 W */
            fake_write(root, "sys/class/hwmon/hwmon0/power1_average_interval", "10\n");
        } else {
            fake_write(root, "sys/class/hwmon/hwmon0/power1_input", "45000000\n"); /* 45 W */
        }
        fake_write(root, "sys/class/hwmon/hwmon0/power1_crit", "95000000\n");
        link_device("hwmon0", "../../../0000:00:18.4");
        erg_meter *m = open_meter();
        assert_int_equal(erg_meter_channel_count(m), 1);
        int p = fake_find(m, "hwmon:fam15h_power@0000:00:18.4/power1");
        assert_true(p >= 0);
        erg_channel_info c;
        erg_assert_ok(erg_meter_channel_info(m, (size_t)p, &c));
        assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
        assert_int_equal(c.grade, ERG_GRADE_MODEL_BASED);
        assert_string_equal(c.label, "fam15h_power power1: AMD Family 15h/16h processor package");
        assert_string_equal(c.reason, "");
        erg_assert_near(c.min_interval_s, avg ? 0.01 : 0.1, 1e-12);
        erg_measurement *r = window_of(m, 2.0);
        erg_assert_near(r->total_energy_j, avg ? 60.0 : 90.0, 1e-6); /* 30 or 45 W over 2 s */
        assert_int_equal(r->n_total, 1);
        assert_int_equal(r->total_grade, ERG_GRADE_MODEL_BASED);
        erg_measurement_release(r);
        free(r);
        erg_meter_close(m);
    }
    fake_root_renew();
    fake_io_reset();
    fake_write(root, "sys/class/hwmon/hwmon2/name", "zenpower\n");
    fake_write(root, "sys/class/hwmon/hwmon2/power1_input", "30000000\n");
    fake_write(root, "sys/class/hwmon/hwmon2/power1_label", "SVI2_P_Core\n");
    fake_write(root, "sys/class/hwmon/hwmon2/power2_input", "8000000\n");
    fake_write(root, "sys/class/hwmon/hwmon2/power2_label", "SVI2_P_SoC\n");
    link_device("hwmon2", "../../../0000:00:18.3");
    erg_meter *m = open_meter();
    int core = fake_find(m, "hwmon:zenpower@0000:00:18.3/SVI2_P_Core");
    int soc = fake_find(m, "hwmon:zenpower@0000:00:18.3/SVI2_P_SoC");
    assert_true(core >= 0 && soc >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)core, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_CORE);
    assert_int_equal(c.grade, ERG_GRADE_ESTIMATOR);
    assert_string_equal(c.label, "zenpower SVI2_P_Core: Zen core rail, SVI2 estimate");
    assert_non_null(strstr(c.reason, "Zen core rail (VDDCR_CPU) from SVI2 telemetry"));
    assert_non_null(strstr(c.reason, "out-of-tree zenpower"));
    assert_non_null(strstr(c.reason, "never added"));
    erg_assert_ok(erg_meter_channel_info(m, (size_t)soc, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_UNCORE);
    assert_int_equal(c.grade, ERG_GRADE_ESTIMATOR);
    assert_string_equal(c.label, "zenpower SVI2_P_SoC: Zen SoC rail, SVI2 estimate");
    assert_non_null(strstr(c.reason, "Zen SoC rail (VDDCR_SOC)"));
    erg_measurement *r = window_of(m, 2.0);
    erg_assert_near(r->channels[core].energy_j, 60.0, 1e-6); /* 30 W over 2 s */
    erg_assert_near(r->channels[soc].energy_j, 16.0, 1e-6);  /* 8 W over 2 s */
    assert_int_equal(r->channels[core].in_total, 0);
    assert_int_equal(r->channels[soc].in_total, 0);
    assert_int_equal(r->n_total, 0);
    erg_measurement_release(r);
    free(r);
    erg_meter_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(devices_found_by_name_link_and_label, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(power_integrated_with_hold_semantics, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(temperatures_for_the_stability_protocol, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(desktop_temperatures_are_the_dies, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(grace_hopper_module_holds_its_rails, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(grace_superchip_sums_its_grace_meters, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(hwmon_channels_are_unique_complete_and_enabled, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(jetson_jetpack4_iio_rails, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(amd_fam15h_power_and_zenpower_scopes, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(amd_apu_socket_power_is_not_added_to_the_package,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(denied_amd_energy_socket_is_a_declined_package, fake_setup,
                                        fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
