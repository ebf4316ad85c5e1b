/* SPDX-License-Identifier: MIT */
/* RAPL through powercap sysfs on fake trees: identity, hierarchy, totals, wrap-around, every
 * anomaly kind, permission errors through the I/O seam. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg/meter.h"

#include <jansson.h>

static const char *const root = fake_root;

static void set_uj(const char *dir, uint64_t v)
{
    char rel[256];
    snprintf(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", dir);
    fake_write_u64(root, rel, v);
}

static void advance(double s)
{
    fake_now_ns += (uint64_t)(s * 1e9);
}

/* Measure one window: begin, the steps the callback makes, end. */
struct win {
    erg_meter_snapshot *a, *b;
    erg_measurement r;
};

static void win_begin(erg_meter *m, struct win *w)
{
    w->a = erg_meter_snapshot_new(m);
    w->b = erg_meter_snapshot_new(m);
    assert_int_equal(erg_meter_snapshot_take(m, w->a), ERG_OK);
}

static const erg_channel_reading *win_end(erg_meter *m, struct win *w, double busy_s,
                                          const char *id)
{
    assert_int_equal(erg_meter_snapshot_take(m, w->b), ERG_OK);
    assert_int_equal(erg_meter_diff(m, w->a, w->b, busy_s, &w->r), ERG_OK);
    erg_meter_snapshot_free(w->a);
    erg_meter_snapshot_free(w->b);
    int i = fake_find(m, id);
    assert_true(i >= 0);
    return &w->r.channels[i];
}

static void zones_are_identified_by_name_and_parent(void **state)
{
    (void)state;
    fake_powercap_2s(root, 1);
    /* intel-rapl:10 sorts after intel-rapl:2; per-socket dram zones stay distinct */
    fake_write(root, "sys/class/powercap/intel-rapl:10/name", "package-2\n");
    fake_write(root, "sys/class/powercap/intel-rapl:10/max_energy_range_uj", "262143328850\n");
    fake_write(root, "sys/class/powercap/intel-rapl:10/energy_uj", "8000000\n");
    fake_write(root, "sys/class/powercap/intel-rapl/enabled", "1\n"); /* control type: ignored */
    erg_meter *m = fake_open(root, "rapl-sysfs");
    const char *want[] = {
        "rapl-sysfs:package-0",      "rapl-sysfs:package-0/core", "rapl-sysfs:package-0/uncore",
        "rapl-sysfs:package-0/dram", "rapl-sysfs:package-1",      "rapl-sysfs:package-1/dram",
        "rapl-sysfs:psys",           "rapl-sysfs:package-2"};
    assert_int_equal(erg_meter_channel_count(m), 8);
    for (size_t i = 0; i < 8; i++) {
        erg_channel_info c;
        erg_assert_ok(erg_meter_channel_info(m, i, &c));
        assert_string_equal(c.id, want[i]);
        assert_int_equal(c.grade, ERG_GRADE_HW_SHUNT);
        assert_true(c.usable);
        erg_assert_near(c.resolution_j, 1e-6, 0);
        erg_assert_near(c.wrap_j, 262143.328851, 1e-6);
    }
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 5, &c));
    assert_string_equal(c.device, "package-1");
    assert_int_equal(c.domain, ERG_DOMAIN_DRAM);
    /* hierarchy by domain: core ⊂ package-0 ⊂ psys; dram ⊂ psys, not ⊂ package */
    erg_assert_ok(erg_meter_channel_info(m, 1, &c));
    assert_int_equal(c.parent, 0);
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_int_equal(c.parent, 6);
    erg_assert_ok(erg_meter_channel_info(m, 3, &c));
    assert_int_equal(c.parent, 6);
    erg_assert_ok(erg_meter_channel_info(m, 6, &c));
    assert_int_equal(c.parent, -1);
    assert_int_equal(c.domain, ERG_DOMAIN_PSYS);
    erg_meter_close(m);
}

static void totals_never_double_count(void **state)
{
    (void)state;
    fake_powercap_2s(root, 1);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 10000000);  /* package-0 +10 J */
    set_uj("intel-rapl:0:0", 2000000 + 6000000); /* core +6 J (inside package) */
    set_uj("intel-rapl:0:1", 3000000 + 1000000); /* uncore +1 J */
    set_uj("intel-rapl:0:2", 4000000 + 2000000); /* dram-0 +2 J */
    set_uj("intel-rapl:1", 5000000 + 8000000);   /* package-1 +8 J */
    set_uj("intel-rapl:1:0", 6000000 + 3000000); /* dram-1 +3 J */
    set_uj("intel-rapl:2", 7000000 + 30000000);  /* psys +30 J */
    advance(1.0);
    win_end(m, &w, 0, "rapl-sysfs:psys");
    /* psys holds everything: the total is psys alone */
    erg_assert_near(w.r.total_energy_j, 30.0, 1e-9);
    assert_int_equal(w.r.n_total, 1);
    assert_int_equal(w.r.total_grade, ERG_GRADE_HW_SHUNT);
    erg_assert_near(w.r.channels[1].energy_j, 6.0, 1e-9);
    assert_int_equal(w.r.channels[1].in_total, 0);

    /* a psys that reads less than the packages and dram it contains is not trusted as the total */
    win_begin(m, &w);
    set_uj("intel-rapl:0", 11000000 + 10000000); /* +10 J */
    set_uj("intel-rapl:1", 13000000 + 1000000);  /* package-1 +1 J */
    set_uj("intel-rapl:2", 37000000 + 5000000);  /* psys +5 J < 11 J */
    advance(1.0);
    const erg_channel_reading *ps = win_end(m, &w, 0, "rapl-sysfs:psys");
    assert_int_equal(ps->in_total, 0);
    assert_non_null(strstr(ps->reason, "not summed"));
    erg_assert_near(w.r.total_energy_j, 11.0, 1e-9); /* packages (+ drams at 0 J) */
    assert_int_equal(w.r.n_total, 4);
    erg_meter_close(m);

    /* without psys: packages + drams, never core/uncore */
    fake_root_renew();
    fake_powercap_2s(root, 0);
    m = fake_open(root, "rapl-sysfs");
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 10000000);
    set_uj("intel-rapl:0:0", 2000000 + 6000000);
    set_uj("intel-rapl:0:1", 3000000 + 1000000);
    set_uj("intel-rapl:0:2", 4000000 + 2000000);
    set_uj("intel-rapl:1", 5000000 + 8000000);
    set_uj("intel-rapl:1:0", 6000000 + 3000000);
    advance(1.0);
    win_end(m, &w, 0, "rapl-sysfs:package-0");
    erg_assert_near(w.r.total_energy_j, 10.0 + 2.0 + 8.0 + 3.0, 1e-9);
    assert_int_equal(w.r.n_total, 4);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* Two sockets, each with its own platform zone: the kernel (intel_rapl_common.c) names the first
 * package's "psys" and the others' "psys-%d" by physical package id. Both are psys channels (the
 * second used to be declined as an unknown zone name), each socket's package and dram sit in its
 * own; whether each psys holds its socket or the platform is not said, so the total is the
 * packages and dram, never a psys, and the psys readings say why. */
static void per_socket_psys_zones(void **state)
{
    (void)state;
    fake_powercap_2s(root, 1);
    fake_write(root, "sys/class/powercap/intel-rapl:3/name", "psys-1\n");
    fake_write(root, "sys/class/powercap/intel-rapl:3/max_energy_range_uj", "262143328850\n");
    fake_write(root, "sys/class/powercap/intel-rapl:3/energy_uj", "9000000\n");
    /* not a socket number: still an unknown zone */
    fake_write(root, "sys/class/powercap/intel-rapl:4/name", "psys-x\n");
    fake_write(root, "sys/class/powercap/intel-rapl:4/energy_uj", "1\n");
    erg_meter *m = fake_open(root, "rapl-sysfs");
    int p0 = fake_find(m, "rapl-sysfs:psys"), p1 = fake_find(m, "rapl-sysfs:psys-1");
    assert_true(p0 >= 0 && p1 >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)p1, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_PSYS);
    assert_string_equal(c.device, "psys-1");
    assert_true(c.usable);
    assert_int_equal(c.parent, -1);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-sysfs:package-0"), &c));
    assert_int_equal(c.parent, p0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-sysfs:package-1"), &c));
    assert_int_equal(c.parent, p1);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-sysfs:package-1/dram"), &c));
    assert_int_equal(c.parent, p1);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-sysfs:intel-rapl:4"), &c));
    assert_false(c.usable);
    assert_non_null(strstr(c.reason, "unknown zone name 'psys-x'"));

    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 10000000);  /* package-0 +10 J */
    set_uj("intel-rapl:0:2", 4000000 + 2000000); /* dram-0 +2 J */
    set_uj("intel-rapl:1", 5000000 + 8000000);   /* package-1 +8 J */
    set_uj("intel-rapl:1:0", 6000000 + 3000000); /* dram-1 +3 J */
    set_uj("intel-rapl:2", 7000000 + 14000000);  /* psys +14 J */
    set_uj("intel-rapl:3", 9000000 + 12000000);  /* psys-1 +12 J */
    advance(1.0);
    const erg_channel_reading *ps = win_end(m, &w, 0, "rapl-sysfs:psys-1");
    erg_assert_near(ps->energy_j, 12.0, 1e-9);
    assert_int_equal(ps->in_total, 0);
    assert_non_null(strstr(ps->reason, "one of 2 psys zones"));
    assert_int_equal(w.r.channels[p0].in_total, 0);
    erg_assert_near(w.r.total_energy_j, 10.0 + 2.0 + 8.0 + 3.0, 1e-9);
    assert_int_equal(w.r.n_total, 4);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void mmio_and_mirrored_dies_counted_once(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    fake_write(root, "sys/class/powercap/intel-rapl-mmio:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl-mmio:0/max_energy_range_uj", "262143328850\n");
    fake_write(root, "sys/class/powercap/intel-rapl-mmio:0/energy_uj", "123456789\n");
    /* two die zones mirroring one socket's counter: identical readings */
    fake_write(root, "sys/class/powercap/intel-rapl:3/name", "package-3-die-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:3/max_energy_range_uj", "262143328850\n");
    fake_write(root, "sys/class/powercap/intel-rapl:3/energy_uj", "987654321\n");
    fake_write(root, "sys/class/powercap/intel-rapl:4/name", "package-3-die-1\n");
    fake_write(root, "sys/class/powercap/intel-rapl:4/max_energy_range_uj", "262143328850\n");
    fake_write(root, "sys/class/powercap/intel-rapl:4/energy_uj", "987654321\n");
    erg_meter *m = fake_open(root, "rapl-sysfs");
    erg_channel_info c;
    int i = fake_find(m, "rapl-sysfs:mmio/package-0");
    assert_true(i >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 1);
    assert_non_null(strstr(c.reason, "rapl-sysfs:package-0"));
    /* one equal reading at open proves nothing: not yet a mirror */
    i = fake_find(m, "rapl-sysfs:package-3-die-1");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 0);
    /* moving together, read after read: a mirror */
    set_uj("intel-rapl:3", 987654321 + 1000000);
    set_uj("intel-rapl:4", 987654321 + 1000000);
    advance(0.5);
    erg_assert_ok(erg_meter_poll(m));
    set_uj("intel-rapl:3", 987654321 + 2000000);
    set_uj("intel-rapl:4", 987654321 + 2000000);
    advance(0.5);
    erg_assert_ok(erg_meter_poll(m));
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 1);
    assert_non_null(strstr(c.reason, "mirrors rapl-sysfs:package-3-die-0"));
    i = fake_find(m, "rapl-sysfs:package-3-die-0");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 0);

    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 5000000);
    set_uj("intel-rapl-mmio:0", 123456789 + 5000000);
    set_uj("intel-rapl:3", 987654321 + 6000000);
    set_uj("intel-rapl:4", 987654321 + 6000000);
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:mmio/package-0");
    assert_true(r->flags & ERG_FLAG_DEDUPLICATED);
    assert_int_equal(r->in_total, 0);
    erg_assert_near(w.r.total_energy_j, 5.0 + 4.0, 1e-9); /* drams did not move: 0 J each */
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void wrap_at_max_energy_range_counts_forward(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    set_uj("intel-rapl:0", 262143000000ull);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 500000); /* wrapped: modulus 262143328851 */
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_OK);
    assert_true(r->flags & ERG_FLAG_WRAP_CORRECTED);
    erg_assert_near(r->energy_j, (262143328851.0 - 262143000000.0 + 500000.0) * 1e-6, 1e-9);

    /* several wraps in one window, each seen by a poll (the sampler's job) */
    win_begin(m, &w);
    uint64_t v = 500000;
    double expect = 0;
    for (int k = 0; k < 3; k++) {
        /* +200 J per step, over 1 s each: plausible; the counter wraps once per ~1310 steps, so
         * jump close to the modulus and across it */
        uint64_t next = (v + 262143328851ull - 100000000ull) % 262143328851ull; /* wraps */
        expect += (double)((next + 262143328851ull - v) % 262143328851ull) * 1e-6;
        advance(300.0); /* too long: ambiguous... */
        set_uj("intel-rapl:0", next);
        erg_assert_ok(erg_meter_poll(m));
        v = next;
    }
    r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    /* 300 s between reads exceeds the wrap time at max power (262 s): flagged, not guessed */
    assert_int_equal(r->state, ERG_READING_AMBIGUOUS);
    assert_true(r->flags & ERG_FLAG_AMBIGUOUS_WRAP);
    assert_true(isnan(r->energy_j));
    (void)expect;
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void several_wraps_seen_by_polls_are_all_corrected(void **state)
{
    (void)state;
    /* a small modulus so that wraps come fast: 10 J range (max_energy_range_uj 9999999) */
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "9999999\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "0\n");
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    uint64_t v = 0;
    for (int k = 0; k < 5; k++) { /* 7 J every 5 ms = 1400 W > 1000 W max? no: 7 J / 5 ms */
        v = (v + 7000000) % 10000000;
        advance(0.008); /* 7 J in 8 ms = 875 W: plausible; wrap time at 1 kW is 10 ms */
        set_uj("intel-rapl:0", v);
        erg_assert_ok(erg_meter_poll(m));
    }
    advance(0.001);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_OK);
    assert_true(r->flags & ERG_FLAG_WRAP_CORRECTED);
    erg_assert_near(r->energy_j, 35.0, 1e-9); /* never 2^64-based, never negative */
    /* a period that is no number of nanoseconds is refused, not cast (it was UB before) */
    assert_int_equal(erg_meter_sampler_start(m, NAN), ERG_EINVAL);
    assert_int_equal(erg_meter_sampler_start(m, INFINITY), ERG_EINVAL);
    assert_int_equal(erg_meter_sampler_start(m, 1e300), ERG_EINVAL);
    assert_int_equal(erg_meter_sampler_start(m, ERG_METER_MAX_PERIOD_S * 1.000001), ERG_EINVAL);
    /* the sampler must poll at least twice per wrap time: 10 J / 1000 W / 2 = 5 ms */
    assert_int_equal(erg_meter_sampler_start(m, 0.1), ERG_OK);
    erg_assert_near(erg_meter_sampler_period_s(m), 0.005, 1e-12);
    erg_meter_sampler_stop(m);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
    /* the same for the option's period, at open */
    erg_meter_options o;
    fake_options(&o, root, "rapl-sysfs");
    o.sampler_period_s = INFINITY;
    erg_meter *bad = NULL;
    erg_diag d;
    assert_int_equal(erg_meter_open(&o, &bad, &d), ERG_EINVAL);
    assert_null(bad);
    assert_non_null(strstr(d.detail, "sampler period inf s"));
}

static void unreadable_range_never_turns_a_decrease_into_energy(void **state)
{
    (void)state;
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "5000000\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "garbage\n");
    erg_meter *m = fake_open(root, "rapl-sysfs");
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_true(isnan(c.wrap_j)); /* unknown, never shown as 0 */
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    set_uj("intel-rapl:0", 6000000); /* +1 J */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 100); /* a decrease with no modulus */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_true(r->flags & ERG_FLAG_BACKWARDS);
    assert_int_equal(r->state, ERG_READING_OK);
    erg_assert_near(r->energy_j, 1.0, 1e-9);
    assert_true(w.r.total_energy_j >= 0);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void backwards_step_and_glitch_are_skipped_never_counted_twice(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    set_uj("intel-rapl:0", 100000000); /* 100 J */
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    set_uj("intel-rapl:0", 500); /* backwards, far from the modulus (as a wrap: 262 kJ in 1 s) */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 150000000); /* recovered: +50 J over 2 s from the last good 100 J */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 9000000000000ull); /* upward glitch: 9 MJ */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 160000000); /* recovered: +10 J */
    erg_assert_ok(erg_meter_poll(m));
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_OK);
    assert_true(r->flags & ERG_FLAG_BACKWARDS);
    assert_true(r->flags & ERG_FLAG_GLITCH);
    assert_false(r->flags & ERG_FLAG_WRAP_CORRECTED);
    erg_assert_near(r->energy_j, 60.0, 1e-9);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void counter_reset_rebaselines_after_confirmation(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    set_uj("intel-rapl:0", 100000000);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    set_uj("intel-rapl:0", 10); /* reset */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 20000010); /* +20 J from the reset value: confirms it */
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 30000010); /* +10 J */
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_true(r->flags & ERG_FLAG_BACKWARDS);
    erg_assert_near(r->energy_j, 10.0, 1e-9); /* the unknown reset interval is skipped */
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void implausible_rates_are_unit_suspect(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    uint64_t v = 1000000;
    for (int k = 0; k < 4; k++) {
        v += 5000000000ull; /* 5 kJ per second: 5 kW on a package */
        advance(1.0);
        set_uj("intel-rapl:0", v);
        erg_assert_ok(erg_meter_poll(m));
    }
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_UNIT_SUSPECT);
    assert_true(r->flags & ERG_FLAG_UNIT_SUSPECT);
    assert_true(isnan(r->energy_j));
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void frozen_counter_is_not_live_in_a_busy_window(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    set_uj("intel-rapl:0:2", 4000000 + 1000000); /* only dram moves */
    const erg_channel_reading *r = win_end(m, &w, 0.5, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_NOT_LIVE);
    assert_non_null(strstr(r->reason, "not live"));
    assert_true(isnan(r->energy_j));
    assert_int_equal(r->in_total, 0);
    /* an idle window (no CPU time) may legitimately not move */
    win_begin(m, &w);
    advance(1.0);
    r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    /* this process may have used a little CPU: accept either ok with 0 J or not_live */
    if (w.r.cpu_s < 0.010) {
        assert_int_equal(r->state, ERG_READING_OK);
        erg_assert_near(r->energy_j, 0.0, 0);
    }
    /* the liveness probe declines a frozen counter for good */
    assert_int_equal(erg_meter_probe_liveness(m, 0.02, NULL), ERG_OK);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_int_equal(c.usable, 0);
    assert_int_equal(c.live, 0);
    assert_non_null(strstr(c.reason, "frozen"));
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void short_window_is_below_resolution(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(0.0005);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_BELOW_RESOLUTION);
    assert_true(r->flags & ERG_FLAG_BELOW_RESOLUTION);
    assert_true(isnan(r->energy_j));
    assert_true(isnan(w.r.total_energy_j));
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void permission_denied_names_file_and_remedy(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    fake_fail_open_suffix = "intel-rapl:0/energy_uj";
    erg_meter *m = fake_open(root, "rapl-sysfs");
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_int_equal(c.usable, 0);
    assert_non_null(strstr(c.reason, "permission denied"));
    assert_non_null(strstr(c.reason, "intel-rapl:0/energy_uj"));
    assert_non_null(strstr(c.reason, "CVE-2020-8694"));
    /* the other channels are still measured */
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:1", 5000000 + 2000000);
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-1");
    assert_int_equal(r->state, ERG_READING_OK);
    erg_assert_near(r->energy_j, 2.0, 1e-9);
    assert_int_equal(w.r.channels[0].state, ERG_READING_DECLINED);
    assert_true(isnan(w.r.channels[0].energy_j)); /* unavailable is not zero */
    erg_meter_close(m);

    /* every zone denied: the backend is "denied" */
    fake_fail_open_suffix = "energy_uj";
    m = fake_open(root, "rapl-sysfs,estimator");
    erg_backend_info b;
    erg_assert_ok(erg_meter_backend_info(m, 0, &b));
    assert_string_equal(b.name, "rapl-sysfs");
    assert_int_equal(b.state, ERG_BACKEND_DENIED);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void empty_or_dangling_trees_are_declined_with_reason(void **state)
{
    (void)state;
    fake_mkdir(root, "sys/class/powercap");
    fake_proc_stat(root, 100, 100);
    erg_meter *m = fake_open(root, "rapl-sysfs,estimator");
    erg_backend_info b;
    erg_assert_ok(erg_meter_backend_info(m, 0, &b));
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "no intel-rapl zones"));
    assert_int_equal(erg_meter_channel_count(m), 1); /* the estimator, as last resort */
    erg_meter_close(m);

    fake_mkdir(root, "sys/class/powercap/intel-rapl:0"); /* a zone with no files */
    m = fake_open(root, "rapl-sysfs");
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_int_equal(c.usable, 0);
    assert_non_null(strstr(c.reason, "dangling"));
    erg_meter_close(m);

    /* no powercap at all */
    fake_root_renew();
    fake_proc_stat(root, 100, 100);
    m = fake_open(root, "rapl-sysfs,estimator");
    erg_assert_ok(erg_meter_backend_info(m, 0, &b));
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "powercap"));
    erg_meter_close(m);
}

static void transient_read_error_is_a_missing_sample_not_zero(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    fake_fail_pread_suffix = "intel-rapl:0/energy_uj";
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    set_uj("intel-rapl:0", 1000000 + 3000000);
    fake_fail_pread_count = 1;
    erg_assert_ok(erg_meter_poll(m)); /* fails: a missing sample */
    advance(1.0);
    set_uj("intel-rapl:0", 1000000 + 4000000);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_OK);
    assert_true(r->flags & ERG_FLAG_STALE);
    erg_assert_near(r->energy_j, 4.0, 1e-9);
    /* a failed read at a window's end gives no figure */
    win_begin(m, &w);
    advance(1.0);
    fake_fail_pread_count = 1;
    r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_ERROR);
    assert_true(isnan(r->energy_j));
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

static void garbage_counter_text_is_not_a_reading(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    advance(1.0);
    fake_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "-5\n");
    erg_assert_ok(erg_meter_poll(m));
    fake_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "99999999999999999999999\n");
    erg_assert_ok(erg_meter_poll(m));
    advance(1.0);
    set_uj("intel-rapl:0", 2000000);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_OK);
    assert_true(r->flags & ERG_FLAG_STALE);
    erg_assert_near(r->energy_j, 1.0, 1e-9);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* A 16-socket machine (HPE Superdome Flex / Lenovo SR950 class): the powercap core names zones
 * with %x, so packages 10..15 are intel-rapl:a..f and their dram sub-zones intel-rapl:a:0..f:0
 * (drivers/powercap/powercap_sys.c, dev_set_name "%s:%x"); package-10 used to be dropped. */
static void hexadecimal_zone_ids_are_all_read(void **state)
{
    (void)state;
    char dir[64], name[32];
    for (unsigned k = 0; k < 16; k++) {
        snprintf(dir, sizeof dir, "intel-rapl:%x", k);
        snprintf(name, sizeof name, "package-%u", k);
        char rel[128];
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", dir);
        fake_write(root, rel, "%s\n", name);
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", dir);
        fake_write(root, rel, "262143328850\n");
        set_uj(dir, 1000000u * (k + 1));
        snprintf(dir, sizeof dir, "intel-rapl:%x:0", k);
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", dir);
        fake_write(root, rel, "dram\n");
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", dir);
        fake_write(root, rel, "65712999613\n");
        set_uj(dir, 500000u * (k + 1) + 7);
    }
    erg_meter *m = fake_open(root, "rapl-sysfs");
    assert_int_equal(erg_meter_channel_count(m), 32);
    erg_channel_info c;
    /* numeric order: package-9 (intel-rapl:9) before package-10 (intel-rapl:a) */
    erg_assert_ok(erg_meter_channel_info(m, 18, &c));
    assert_string_equal(c.id, "rapl-sysfs:package-9");
    erg_assert_ok(erg_meter_channel_info(m, 20, &c));
    assert_string_equal(c.id, "rapl-sysfs:package-10");
    erg_assert_ok(erg_meter_channel_info(m, 21, &c));
    assert_string_equal(c.id, "rapl-sysfs:package-10/dram");
    assert_string_equal(c.device, "package-10");
    erg_assert_ok(erg_meter_channel_info(m, 31, &c));
    assert_string_equal(c.id, "rapl-sysfs:package-15/dram");
    /* every package and dram in the total: 16 × (1 J + 0.5 J) */
    struct win w = {0};
    win_begin(m, &w);
    for (unsigned k = 0; k < 16; k++) {
        snprintf(dir, sizeof dir, "intel-rapl:%x", k);
        set_uj(dir, 1000000u * (k + 1) + 1000000u);
        snprintf(dir, sizeof dir, "intel-rapl:%x:0", k);
        set_uj(dir, 500000u * (k + 1) + 7 + 500000u);
    }
    advance(1.0);
    win_end(m, &w, 0, "rapl-sysfs:package-10");
    assert_int_equal(w.r.n_total, 32);
    erg_assert_near(w.r.total_energy_j, 16 * 1.5, 1e-9);
    assert_int_equal(w.r.total_flags, 0);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
    /* not hexadecimal, or upper case (the kernel writes lower case): not a zone */
    fake_root_renew();
    fake_write(root, "sys/class/powercap/intel-rapl:A/name", "package-10\n");
    fake_write(root, "sys/class/powercap/intel-rapl:A/energy_uj", "1\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0g/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0g/energy_uj", "1\n");
    erg_meter_options o;
    fake_options(&o, root, "rapl-sysfs");
    erg_diag d;
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_ENODEV);
}

/* Granite Rapids with both drivers loaded: intel_rapl_msr registers intel-rapl:N and
 * intel_rapl_tpmi intel-rapl-tpmi:N for the same packages (and the TPMI ones also carry dram and
 * psys on some parts); one domain seen twice is counted once, the MSR view first. */
static void tpmi_zones_read_and_mirrors_counted_once(void **state)
{
    (void)state;
    const char *zones[][3] = {
        {"intel-rapl:0", "package-0", "10000000"},      {"intel-rapl:1", "package-1", "20000000"},
        {"intel-rapl-tpmi:0", "package-0", "10000000"}, {"intel-rapl-tpmi:0:0", "dram", "3000000"},
        {"intel-rapl-tpmi:1", "package-1", "20000000"}, {"intel-rapl-tpmi:1:0", "dram", "4000000"},
    };
    for (size_t k = 0; k < sizeof zones / sizeof zones[0]; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", zones[k][0]);
        fake_write(root, rel, "%s\n", zones[k][1]);
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", zones[k][0]);
        fake_write(root, rel, "262143328850\n");
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", zones[k][0]);
        fake_write(root, rel, "%s\n", zones[k][2]);
    }
    erg_meter *m = fake_open(root, "rapl-sysfs");
    assert_int_equal(erg_meter_channel_count(m), 6);
    int i = fake_find(m, "rapl-sysfs:tpmi/package-0");
    assert_true(i >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 1);
    i = fake_find(m, "rapl-sysfs:tpmi/package-1/dram");
    assert_true(i >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 0);
    assert_string_equal(c.device, "package-1");
    assert_int_equal(c.domain, ERG_DOMAIN_DRAM);
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 10000000 + 5000000);
    set_uj("intel-rapl-tpmi:0", 10000000 + 5000000);
    set_uj("intel-rapl:1", 20000000 + 7000000);
    set_uj("intel-rapl-tpmi:1", 20000000 + 7000000);
    set_uj("intel-rapl-tpmi:0:0", 3000000 + 1000000);
    set_uj("intel-rapl-tpmi:1:0", 4000000 + 2000000);
    advance(1.0);
    win_end(m, &w, 0, "rapl-sysfs:package-0");
    erg_assert_near(w.r.total_energy_j, 5.0 + 7.0 + 1.0 + 2.0, 1e-9);
    assert_int_equal(w.r.n_total, 4);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* Two packages that read the same value once (both near a fresh boot, or a coincidence) are two
 * packages: they are told apart by the next reads, never deduplicated on one reading. */
static void equal_once_is_not_a_mirror(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    set_uj("intel-rapl:1", 1000000); /* package-1 reads what package-0 reads */
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 3000000);
    set_uj("intel-rapl:1", 1000000 + 9000000);
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-1");
    assert_int_equal(r->flags & ERG_FLAG_DEDUPLICATED, 0);
    assert_int_equal(r->in_total, 1);
    erg_assert_near(w.r.total_energy_j, 3.0 + 9.0, 1e-9); /* drams did not move */
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* Issue 16: a package whose counter fails a read in the window, or is unreadable from the start,
 * left a "dram only" total graded hw_shunt. The total covers what it claims or gives none. */
static void a_total_never_silently_leaves_out_a_package(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 10000000);
    set_uj("intel-rapl:0:2", 4000000 + 2000000);
    set_uj("intel-rapl:1:0", 6000000 + 3000000);
    fake_write(root, "sys/class/powercap/intel-rapl:1/energy_uj", "garbage\n"); /* end read fails */
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0, "rapl-sysfs:package-1");
    assert_int_equal(r->state, ERG_READING_ERROR);
    assert_true(isnan(w.r.total_energy_j));
    assert_int_equal(w.r.n_total, 0);
    assert_int_equal(w.r.total_flags, ERG_FLAG_INCOMPLETE);
    assert_non_null(strstr(w.r.total_reason, "rapl-sysfs:package-1 (error)"));
    for (size_t i = 0; i < w.r.n_channels; i++)
        assert_int_equal(w.r.channels[i].in_total, 0);
    erg_meter_close(m);

    /* denied package-1, readable core and dram zones: no silent dram-only or core total */
    fake_root_renew();
    fake_powercap_2s(root, 0);
    fake_fail_open_suffix = "intel-rapl:0/energy_uj";
    m = fake_open(root, "rapl-sysfs");
    win_begin(m, &w);
    set_uj("intel-rapl:0:0", 2000000 + 6000000);
    set_uj("intel-rapl:1", 5000000 + 8000000);
    advance(1.0);
    win_end(m, &w, 0, "rapl-sysfs:package-0/core");
    assert_true(isnan(w.r.total_energy_j));
    assert_int_equal(w.r.total_flags, ERG_FLAG_INCOMPLETE);
    assert_non_null(strstr(w.r.total_reason, "rapl-sysfs:package-0 (declined)"));
    erg_meter_close(m);

    /* ... with the estimator present and no package readable at all, the labelled estimate
     * stands for the CPU (graded estimator), as before */
    fake_root_renew();
    fake_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "1000\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0:0/name", "core\n");
    fake_write(root, "sys/class/powercap/intel-rapl:0:0/energy_uj", "1000\n");
    fake_proc_stat(root, 100, 900);
    m = fake_open(root, "rapl-sysfs,estimator");
    win_begin(m, &w);
    fake_proc_stat(root, 150, 950);
    set_uj("intel-rapl:0:0", 2001000);
    advance(1.0);
    win_end(m, &w, 0, "estimator:cpu");
    assert_int_equal(w.r.n_total, 1);
    assert_int_equal(w.r.total_grade, ERG_GRADE_ESTIMATOR);
    assert_int_equal(w.r.total_flags, 0);
    /* 10 W + 55 W × 0.5 over 1 s */
    erg_assert_near(w.r.total_energy_j, 37.5, 1e-6);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* A jump no hardware makes is reported as a jump (unit_suspect, the implied power named), not as
 * a counter that "did not move". */
static void an_implausible_jump_is_named_as_such(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs");
    struct win w = {0};
    win_begin(m, &w);
    set_uj("intel-rapl:0", 1000000 + 200000000000ull); /* +200 kJ in 1 s */
    advance(1.0);
    const erg_channel_reading *r = win_end(m, &w, 0.5, "rapl-sysfs:package-0");
    assert_int_equal(r->state, ERG_READING_UNIT_SUSPECT);
    assert_true(r->flags & ERG_FLAG_GLITCH);
    assert_non_null(strstr(r->reason, "implausible jump implying 200000 W (bound 1000 W)"));
    assert_null(strstr(r->reason, "did not move"));
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* The channel count is not part of the ABI (issue 13): 40 packages with core, uncore and dram
 * each are 160 zones, more than the 64 the meter once kept. Every one is a channel, measured
 * whole: package k moves k+1 J, its core (k+1)/2 J, its dram (k+1)/10 J, its uncore nothing; the
 * total sums the packages and drams, 820 J + 82 J = 902 J, with no channel left out. */
static void many_zones_are_measured_without_truncation(void **state)
{
    (void)state;
    enum { PKGS = 40 };
    const char *subs[] = {"core", "uncore", "dram"};
    for (unsigned k = 0; k < PKGS; k++) {
        char dir[64], rel[128], name[32];
        snprintf(dir, sizeof dir, "intel-rapl:%x", k);
        snprintf(name, sizeof name, "package-%u", k);
        snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", dir);
        fake_write(root, rel, "%s\n", name);
        set_uj(dir, 1000000);
        for (unsigned j = 0; j < 3; j++) {
            snprintf(dir, sizeof dir, "intel-rapl:%x:%u", k, j);
            snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", dir);
            fake_write(root, rel, "%s\n", subs[j]);
            set_uj(dir, 1000000 + j);
        }
    }
    erg_meter *m = fake_open(root, "rapl-sysfs");
    assert_int_equal(erg_meter_channel_count(m), 4 * PKGS);
    erg_backend_info b;
    erg_assert_ok(erg_meter_backend_info(m, 0, &b));
    assert_int_equal(b.n_channels, 4 * PKGS);
    struct win w = {0};
    win_begin(m, &w);
    for (unsigned k = 0; k < PKGS; k++) {
        char dir[64];
        snprintf(dir, sizeof dir, "intel-rapl:%x", k);
        set_uj(dir, 1000000 + (k + 1) * 1000000ull);
        snprintf(dir, sizeof dir, "intel-rapl:%x:0", k);
        set_uj(dir, 1000000 + (k + 1) * 500000ull);
        snprintf(dir, sizeof dir, "intel-rapl:%x:2", k);
        set_uj(dir, 1000002 + (k + 1) * 100000ull);
    }
    advance(1.0);
    const erg_channel_reading *last = win_end(m, &w, 0, "rapl-sysfs:package-39/dram");
    assert_int_equal(w.r.n_channels, 4 * PKGS);
    assert_true(w.r.capacity >= w.r.n_channels);
    assert_int_equal(last->state, ERG_READING_OK);
    erg_assert_near(last->energy_j, 4.0, 1e-9);
    erg_assert_near(w.r.channels[fake_find(m, "rapl-sysfs:package-39")].energy_j, 40.0, 1e-9);
    erg_assert_near(w.r.channels[fake_find(m, "rapl-sysfs:package-39/core")].energy_j, 20.0, 1e-9);
    assert_int_equal(w.r.total_flags, 0);
    assert_string_equal(w.r.total_reason, "");
    assert_int_equal(w.r.n_total, 2 * PKGS);
    erg_assert_near(w.r.total_energy_j, 902.0, 1e-6);
    /* a copy owns its own readings */
    erg_measurement copy = {0};
    assert_int_equal(erg_measurement_copy(&copy, &w.r), ERG_OK);
    assert_ptr_not_equal(copy.channels, w.r.channels);
    assert_int_equal(copy.n_channels, 4 * PKGS);
    erg_assert_near(copy.channels[fake_find(m, "rapl-sysfs:package-39/dram")].energy_j, 4.0, 1e-9);
    assert_int_equal(erg_measurement_copy(&copy, &copy), ERG_EINVAL);
    erg_measurement_release(&copy);
    assert_null(copy.channels);
    erg_measurement_release(&w.r);
    erg_meter_close(m);
}

/* meters/1 is the library's (erg_meter_write_json): a denied package zone is named in
 * "incomplete" and by erg_meter_declined_totals (snprintf's rule), the figures come from hardware
 * (package-1 is read), so there is no note; an estimator-only meter says its figures are estimates.
 */
static void meters_json_is_written_by_the_library(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    fake_proc_stat(root, 100, 900);
    fake_fail_open_suffix = "intel-rapl:0/energy_uj";
    erg_meter *m = fake_open(root, "rapl-sysfs,estimator");
    assert_int_equal(erg_meter_has_hardware(m), 1);
    char buf[64];
    assert_int_equal(erg_meter_note(m, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(erg_meter_declined_totals(m, buf, sizeof buf), strlen("rapl-sysfs:package-0"));
    assert_string_equal(buf, "rapl-sysfs:package-0");
    assert_int_equal(erg_meter_declined_totals(m, buf, 5), strlen("rapl-sysfs:package-0"));
    assert_string_equal(buf, "rapl");
    char path[512];
    snprintf(path, sizeof path, "%s/meters.json", root);
    erg_diag d;
    erg_assert_ok(erg_meter_write_json(path, m, &d));
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "erg")), "meters/1");
    assert_true(json_is_true(json_object_get(o, "hardware")));
    assert_null(json_object_get(o, "note"));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(o, "incomplete"), "declined")),
        "rapl-sysfs:package-0");
    const json_t *ch = json_object_get(o, "channels");
    assert_int_equal(json_array_size(ch), erg_meter_channel_count(m));
    int i = fake_find(m, "rapl-sysfs:package-1");
    assert_true(i >= 0);
    const json_t *c1 = json_array_get(ch, (size_t)i);
    assert_string_equal(json_string_value(json_object_get(c1, "domain")), "package");
    assert_string_equal(json_string_value(json_object_get(c1, "kind")), "counter");
    assert_true(json_is_true(json_object_get(c1, "usable")));
    erg_assert_near(json_number_value(json_object_get(c1, "resolution_j")), 1e-6, 1e-15);
    /* max_energy_range_uj 262143328850 + 1 µJ, written with 10 significant digits */
    erg_assert_near(json_number_value(json_object_get(c1, "wrap_j")), 262143.328851, 1e-4);
    const json_t *c0 = json_array_get(ch, (size_t)fake_find(m, "rapl-sysfs:package-0"));
    assert_true(json_is_false(json_object_get(c0, "usable")));
    assert_non_null(strstr(json_string_value(json_object_get(c0, "reason")), "CVE-2020-8694"));
    json_decref(o);
    /* a folder that does not exist: an error naming the path, nothing written */
    snprintf(path, sizeof path, "%s/no/such/meters.json", root);
    assert_int_not_equal(erg_meter_write_json(path, m, &d), ERG_OK);
    assert_non_null(strstr(d.where, "no/such"));
    assert_int_equal(erg_meter_write_json(path, NULL, &d), ERG_EINVAL);
    erg_meter_close(m);

    m = fake_open(root, "estimator");
    assert_int_equal(erg_meter_has_hardware(m), 0);
    size_t n = erg_meter_note(m, buf, sizeof buf);
    assert_true(n > sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_int_equal(strncmp(buf, "no hardware energy counter is usable here", 41), 0);
    snprintf(path, sizeof path, "%s/est.json", root);
    erg_assert_ok(erg_meter_write_json(path, m, &d));
    o = json_load_file(path, 0, &je);
    assert_non_null(o);
    assert_true(json_is_false(json_object_get(o, "hardware")));
    assert_int_equal(strlen(json_string_value(json_object_get(o, "note"))), n);
    assert_null(json_object_get(o, "incomplete"));
    json_decref(o);
    erg_meter_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(zones_are_identified_by_name_and_parent, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(totals_never_double_count, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(per_socket_psys_zones, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(mmio_and_mirrored_dies_counted_once, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(wrap_at_max_energy_range_counts_forward, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(several_wraps_seen_by_polls_are_all_corrected, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(unreadable_range_never_turns_a_decrease_into_energy,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(backwards_step_and_glitch_are_skipped_never_counted_twice,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(counter_reset_rebaselines_after_confirmation, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(implausible_rates_are_unit_suspect, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(frozen_counter_is_not_live_in_a_busy_window, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(short_window_is_below_resolution, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(permission_denied_names_file_and_remedy, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(empty_or_dangling_trees_are_declined_with_reason,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(transient_read_error_is_a_missing_sample_not_zero,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(garbage_counter_text_is_not_a_reading, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(hexadecimal_zone_ids_are_all_read, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(tpmi_zones_read_and_mirrors_counted_once, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(equal_once_is_not_a_mirror, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(a_total_never_silently_leaves_out_a_package, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(an_implausible_jump_is_named_as_such, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(many_zones_are_measured_without_truncation, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(meters_json_is_written_by_the_library, fake_setup,
                                        fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
