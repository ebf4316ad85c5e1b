/* SPDX-License-Identifier: MIT */
/* hwmon on fake trees: identity by name/link/label, rails and domains, power integration with hold
 * semantics, averaged power refused for short windows, temperatures. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/meter.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    fake_io_reset();
    return fake_root_new(root, sizeof root);
}

static int teardown(void **state)
{
    (void)state;
    fake_root_free(root);
    return 0;
}

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
    erg_meter_options o;
    fake_options(&o, root, "hwmon");
    erg_meter *m = NULL;
    erg_diag dg;
    if (erg_meter_open(&o, &m, &dg) != ERG_OK)
        fail_msg("open: %s %s", dg.where, dg.detail);
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
    erg_meter_channel_info(m, (size_t)i, &c);
    assert_int_equal(c.domain, ERG_DOMAIN_SYSTEM);
    assert_int_equal(c.grade, ERG_GRADE_MODEL_BASED);
    assert_int_equal(c.kind, ERG_KIND_POWER);
    i = fake_find(m, "hwmon:ina3221@1-0040/VDD_CPU_GPU_CV");
    erg_meter_channel_info(m, (size_t)i, &c);
    assert_non_null(strstr(c.reason, "not summed"));
    i = fake_find(m, "hwmon:amdgpu@0000:03:00.0/power1");
    assert_true(i >= 0);
    erg_meter_channel_info(m, (size_t)i, &c);
    assert_int_equal(c.domain, ERG_DOMAIN_GPU);
    erg_assert_near(c.min_interval_s, 1.0, 0); /* an average: not for sub-second windows */
    i = fake_find(m, "hwmon:amd_energy/Esocket0");
    erg_meter_channel_info(m, (size_t)i, &c);
    assert_int_equal(c.domain, ERG_DOMAIN_PACKAGE);
    assert_string_equal(c.device, "package-0");
    assert_int_equal(c.grade, ERG_GRADE_HW_SHUNT);
    i = fake_find(m, "hwmon:amd_energy/Esocket1"); /* found past 137 per-core counters */
    assert_true(i >= 0);
    erg_meter_channel_info(m, (size_t)i, &c);
    assert_string_equal(c.device, "package-1");
    assert_int_equal(fake_find(m, "hwmon:amd_energy/Ecore000"), -1); /* per-core: not channels */
    size_t n1 = erg_meter_channel_count(m);
    char ids[16][ERG_METER_ID_MAX];
    for (size_t k = 0; k < n1 && k < 16; k++) {
        erg_meter_channel_info(m, k, &c);
        strcpy(ids[k], c.id);
    }
    erg_meter_close(m);
    /* renumbered hwmonN folders (another boot): the same channels, in the same order */
    fake_root_free(root);
    fake_root_new(root, sizeof root);
    board(0, 5, 2, 9);
    m = open_meter();
    assert_int_equal(erg_meter_channel_count(m), n1);
    for (size_t k = 0; k < n1 && k < 16; k++) {
        erg_meter_channel_info(m, k, &c);
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
    erg_meter_snapshot_take(m, a);
    fake_now_ns += 1000000000u;
    fake_write(root, "sys/class/hwmon/hwmon3/curr1_input", "4000\n"); /* now 20 W */
    erg_meter_poll(m);
    fake_now_ns += 1000000000u;
    fake_write(root, "sys/class/hwmon/hwmon3/curr1_input", "1000\n"); /* 5 W from here */
    erg_meter_snapshot_take(m, b);
    erg_measurement r;
    erg_meter_diff(m, a, b, 0, &r);
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
    erg_meter_snapshot_take(m, a);
    fake_now_ns += 300000000u;
    erg_meter_snapshot_take(m, b);
    erg_meter_diff(m, a, b, 0, &r);
    assert_int_equal(r.channels[i].state, ERG_READING_BELOW_RESOLUTION);
    /* a reading that has not changed for over 10 s is flagged stale (still integrated) */
    int in = fake_find(m, "hwmon:ina3221@1-0040/VDD_IN");
    erg_meter_snapshot_take(m, a);
    for (int k = 0; k < 3; k++) {
        fake_now_ns += 6000000000u;
        erg_meter_poll(m);
    }
    erg_meter_snapshot_take(m, b);
    erg_meter_diff(m, a, b, 0, &r);
    assert_int_equal(r.channels[in].state, ERG_READING_OK);
    assert_true(r.channels[in].flags & ERG_FLAG_STALE);
    erg_assert_near(r.channels[in].energy_j, 5.0 * 18, 1e-9); /* 5 W × 18 s */
    /* an impossible reading is discarded and flagged */
    fake_write(root, "sys/class/hwmon/hwmon0/power1_average", "9000000000000\n");
    erg_meter_snapshot_take(m, a);
    fake_now_ns += 2000000000u;
    erg_meter_snapshot_take(m, b);
    erg_meter_diff(m, a, b, 0, &r);
    assert_int_equal(r.channels[i].state, ERG_READING_UNIT_SUSPECT);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(devices_found_by_name_link_and_label, setup, teardown),
        cmocka_unit_test_setup_teardown(power_integrated_with_hold_semantics, setup, teardown),
        cmocka_unit_test_setup_teardown(temperatures_for_the_stability_protocol, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
