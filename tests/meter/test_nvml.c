/* SPDX-License-Identifier: MIT */
/* NVML through the fake library: energy counter vs power fallback, 1 s average refused for short
 * windows, errors mid-window, MIG, GPU liveness, missing library and symbols. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>

#include "erg/meter.h"

static char root[256], state_file[512];

static int setup(void **state)
{
    (void)state;
    fake_io_reset();
    if (fake_root_new(root, sizeof root))
        return -1;
    snprintf(state_file, sizeof state_file, "%s/nvml.txt", root);
    setenv("FAKE_NVML_FILE", state_file, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_root_free(root);
    return 0;
}

/* two GPUs: gpu-0 with an energy counter, gpu-1 pre-Volta (NOT_SUPPORTED: power only) */
static void gpus(unsigned long long e0, int rc0, unsigned mig0, unsigned p1)
{
    fake_write(root, "nvml.txt", "2 0\n%llu 50000 %d 0 %u 41\n0 %u 3 0 0 38\n", e0, rc0, mig0, p1);
}

static erg_meter *open_meter(const char *lib)
{
    erg_meter_options o;
    fake_options(&o, root, "nvml");
    o.nvml_path = lib;
    erg_meter *m = NULL;
    erg_diag d;
    if (erg_meter_open(&o, &m, &d) != ERG_OK)
        return NULL;
    return m;
}

static void win(erg_meter *m, double dt_s, double busy_s, erg_measurement *r, void (*mid)(void))
{
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += (uint64_t)(dt_s / 2 * 1e9);
    if (mid)
        mid();
    erg_assert_ok(erg_meter_poll(m));
    fake_now_ns += (uint64_t)(dt_s / 2 * 1e9);
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, busy_s, r));
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
}

static void mid_energy(void)
{
    gpus(1000 + 2000, 0, 0, 100000);
}
static void end_energy(void)
{
    gpus(1000 + 5000, 0, 0, 100000);
}
static void mid_lost(void)
{
    gpus(1000, 15, 0, 100000); /* GPU_IS_LOST */
}

static void end_energy_one(void)
{
    fake_write(root, "nvml.txt", "1 0\n%d 50000 0 0 0 41\n", 1000 + 5000);
}

static void energy_counter_and_power_fallback(void **state)
{
    (void)state;
    gpus(1000, 0, 0, 100000);
    erg_meter *m = open_meter(NULL); /* ERG_NVML_LIB points at the fake */
    assert_non_null(m);
    assert_int_equal(erg_meter_channel_count(m), 2);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_string_equal(c.id, "nvml:gpu-0");
    assert_string_equal(c.label, "Fake GPU 0 GPU-fake-0000");
    assert_int_equal(c.grade, ERG_GRADE_HW_SHUNT);
    erg_assert_near(c.resolution_j, 1e-3, 0);
    erg_assert_ok(erg_meter_channel_info(m, 1, &c));
    assert_int_equal(c.grade, ERG_GRADE_MODEL_BASED);
    assert_non_null(strstr(c.reason, "NOT_SUPPORTED"));
    assert_non_null(strstr(c.reason, "1 s average"));

    /* the measured work advances the counter by 5 J over 2 s; gpu-1 draws 100 W */
    erg_measurement r;
    gpus(1000, 0, 0, 100000);
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += 1000000000u;
    mid_energy();
    erg_assert_ok(erg_meter_poll(m));
    fake_now_ns += 1000000000u;
    end_energy();
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    assert_int_equal(r.channels[0].state, ERG_READING_OK);
    erg_assert_near(r.channels[0].energy_j, 5.0, 1e-12);    /* mJ → J */
    erg_assert_near(r.channels[1].energy_j, 200.0, 1e-9);   /* 100 W × 2 s */
    erg_assert_near(r.total_energy_j, 205.0, 1e-9);         /* two devices */
    assert_int_equal(r.total_grade, ERG_GRADE_MODEL_BASED); /* the weakest part */

    /* a half-second window: the counter is fine, the 1 s average is refused */
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    fake_now_ns += 500000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_assert_ok(erg_meter_diff(m, a, b, 0, &r));
    assert_int_equal(r.channels[0].state, ERG_READING_OK);
    assert_int_equal(r.channels[1].state, ERG_READING_BELOW_RESOLUTION);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);

    /* an NVML error mid-window: no figure for that window, never a wrong one */
    win(m, 2.0, 0, &r, mid_lost);
    assert_int_equal(r.channels[0].state, ERG_READING_ERROR);
    assert_true(isnan(r.channels[0].energy_j));
    gpus(1000 + 7000, 0, 0, 100000);
    win(m, 2.0, 0, &r, NULL);
    assert_int_equal(r.channels[0].state, ERG_READING_OK);

    /* GPU liveness: a frozen counter while the GPU was busy (caller-reported) is not live */
    win(m, 2.0, 0.5, &r, NULL);
    assert_int_equal(r.channels[0].state, ERG_READING_NOT_LIVE);
    assert_non_null(strstr(r.channels[0].reason, "GPU"));
    /* CPU time alone does not make a GPU counter not live */
    win(m, 2.0, 0.0, &r, NULL);
    assert_int_equal(r.channels[0].state, ERG_READING_OK);
    /* ... but NVML's own utilisation does: 50 % over 2 s is 1 s of GPU time */
    fake_write(root, "nvml.txt", "2 0\n8000 50000 0 0 0 41 50\n0 100000 3 0 0 38 0\n");
    erg_assert_ok(erg_meter_poll(m)); /* the utilisation is held from this sample on */
    win(m, 2.0, 0.0, &r, NULL);
    assert_int_equal(r.channels[0].state, ERG_READING_NOT_LIVE);
    assert_non_null(strstr(r.channels[0].reason, "1000 ms of GPU time"));

    erg_temperature t[4];
    size_t nt;
    erg_assert_ok(erg_meter_temperatures(m, t, 4, &nt));
    assert_int_equal(nt, 2);
    erg_assert_near(t[0].temp_c, 41.0, 0);
    assert_int_equal(t[0].is_gpu, 1);
    erg_meter_close(m);
}

static void mig_gives_no_figure(void **state)
{
    (void)state;
    gpus(1000, 0, 1, 100000);
    erg_meter *m = open_meter(NULL);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_int_equal(c.usable, 0);
    assert_non_null(strstr(c.reason, "MIG"));
    erg_meter_close(m);
}

static void missing_library_symbol_or_driver(void **state)
{
    (void)state;
    fake_proc_stat(root, 1, 1);
    erg_meter_options o;
    fake_options(&o, root, "nvml,estimator");
    erg_backend_info b;
    erg_meter *m;
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    assert_int_equal(erg_meter_open(&o, &m, NULL), ERG_OK);
    erg_assert_ok(erg_meter_backend_info(m, 2, &b));
    assert_string_equal(b.name, "nvml");
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "cannot load"));
    erg_meter_close(m);
    o.nvml_path = "libm.so.6"; /* a library, but not NVML */
    assert_int_equal(erg_meter_open(&o, &m, NULL), ERG_OK);
    erg_assert_ok(erg_meter_backend_info(m, 2, &b));
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "no symbol nvmlInit_v2"));
    erg_meter_close(m);
    o.nvml_path = NULL;
    fake_write(root, "nvml.txt", "0 9\n"); /* DRIVER_NOT_LOADED */
    assert_int_equal(erg_meter_open(&o, &m, NULL), ERG_OK);
    erg_assert_ok(erg_meter_backend_info(m, 2, &b));
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "driver not loaded"));
    erg_meter_close(m);
    fake_write(root, "nvml.txt", "0 0\n");
    assert_int_equal(erg_meter_open(&o, &m, NULL), ERG_OK);
    erg_assert_ok(erg_meter_backend_info(m, 2, &b));
    assert_non_null(strstr(b.reason, "no NVIDIA GPU"));
    erg_meter_close(m);
}

/* NVIDIA Grace Hopper: the module meter (ACPI power meter, "Module Power Socket 0") holds the
 * Hopper GPU that NVML also reads: the total is the module alone, never module + GPU. Without a
 * module meter (only Grace's), the GPU is added to Grace. */
static void grace_hopper_module_is_never_added_to_its_gpu(void **state)
{
    (void)state;
    fake_write(root, "nvml.txt", "1 0\n1000 50000 0 0 0 41\n");
    fake_write(root, "sys/class/hwmon/hwmon1/device/power1_oem_info", "Module Power Socket 0\n");
    fake_write(root, "sys/class/hwmon/hwmon1/device/power1_average", "500000000\n");
    fake_write(root, "sys/class/hwmon/hwmon2/device/power1_oem_info", "Grace Power Socket 0\n");
    fake_write(root, "sys/class/hwmon/hwmon2/device/power1_average", "100000000\n");
    erg_meter_options o;
    fake_options(&o, root, "nvml,hwmon");
    erg_meter *m = NULL;
    erg_diag d;
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_OK);
    erg_measurement r;
    win(m, 2.0, 0, &r, NULL);
    int gpu = fake_find(m, "nvml:gpu-0");
    assert_true(gpu >= 0);
    assert_int_equal(r.channels[gpu].in_total, 0);
    erg_assert_near(r.total_energy_j, 1000.0, 1e-6); /* 500 W × 2 s, the module alone */
    assert_int_equal(r.n_total, 1);
    erg_meter_close(m);
    /* no module meter: Grace (100 W) plus the GPU's counter */
    fake_unlink(root, "sys/class/hwmon/hwmon1/device/power1_average");
    fake_unlink(root, "sys/class/hwmon/hwmon1/device/power1_oem_info");
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_OK);
    win(m, 2.0, 0, &r, end_energy_one);
    erg_assert_near(r.total_energy_j, 200.0 + 5.0, 1e-6);
    assert_int_equal(r.n_total, 2);
    erg_meter_close(m);
}

int main(void)
{
    if (!getenv("ERG_NVML_LIB")) {
        fprintf(stderr, "skipped: ERG_NVML_LIB (the fake NVML library) not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(energy_counter_and_power_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(mig_gives_no_figure, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_library_symbol_or_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(grace_hopper_module_is_never_added_to_its_gpu, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
