/* SPDX-License-Identifier: MIT */
/* RAPL MSRs on a sparse file standing in for /dev/cpu/N/msr: units, the DRAM quirk table, 32-bit
 * wrap, AMD registers, dedup against powercap, permission errors through the seam. */
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/meter.h"

static const char *const root = fake_root;

static void wrmsr(int cpu, unsigned addr, uint64_t v)
{
    char p[600];
    snprintf(p, sizeof p, "%s/dev/cpu/%d", root, cpu);
    fake_mkdir(root, p + strlen(root) + 1);
    snprintf(p, sizeof p, "%s/dev/cpu/%d/msr", root, cpu);
    int fd = open(p, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    off_t off = (off_t)addr * (off_t)fake_msr_stride; /* the seam's register layout */
    assert_int_equal(pwrite(fd, &v, sizeof v, off), (ssize_t)sizeof v);
    close(fd);
}

static void cpuinfo(const char *vendor, unsigned family, unsigned model)
{
    fake_write(
        root, "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\nmodel name\t: x\n\n",
        vendor, family, model);
}

static void topology(int cpu, int pkg)
{
    char rel[128];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    fake_write(root, rel, "%d\n", pkg);
}

static double window(erg_meter *m, const char *id, void (*step)(void), erg_channel_reading *out)
{
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    step();
    fake_now_ns += 1000000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_measurement *r = calloc(1, sizeof *r);
    erg_assert_ok(erg_meter_diff(m, a, b, 0, r));
    int i = fake_find(m, id);
    assert_true(i >= 0);
    *out = r->channels[i];
    double total = r->total_energy_j;
    erg_measurement_release(r);
    free(r);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    return total;
}

static void skx(void)
{
    cpuinfo("GenuineIntel", 6, 0x55);
    topology(0, 0);
    topology(1, 0);
    topology(2, 1);
    for (int cpu = 0; cpu <= 2; cpu += 2) {
        wrmsr(cpu, 0x606, 0xA0E03);               /* ESU 14: 61.035 µJ */
        wrmsr(cpu, 0x611, 0xDEAD000000001000ull); /* high bits reserved: masked */
        wrmsr(cpu, 0x619, 500);
    }
}

static void step_skx(void)
{
    wrmsr(0, 0x611, 0x1000 + 16384); /* +1 J at 2^-14 J */
    wrmsr(0, 0x619, 500 + 65536);    /* +1 J at the fixed 2^-16 J DRAM unit */
    wrmsr(2, 0x611, 0xFFFFF000u);    /* far forward ... */
}

static void step_wrap(void)
{
    wrmsr(2, 0x611, 0x00001000u); /* ... and across 2^32: +0x2000 ticks = 0.5 J */
}

static void units_quirks_and_32bit_wrap(void **state)
{
    (void)state;
    skx();
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 4);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-0"), &c));
    erg_assert_near(c.resolution_j, 1.0 / 16384, 1e-15);
    erg_assert_near(c.wrap_j, 4294967296.0 / 16384, 1e-6); /* 2^32 × unit, never 2^64 */
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-1/dram"), &c));
    erg_assert_near(c.resolution_j, 1.0 / 65536, 1e-15);
    assert_non_null(strstr(c.label, "Skylake-X"));
    erg_channel_reading r;
    window(m, "rapl-msr:package-0", step_skx, &r);
    assert_int_equal(r.state, ERG_READING_OK);
    erg_assert_near(r.energy_j, 1.0, 1e-12);
    window(m, "rapl-msr:package-0/dram", step_skx, &r);
    erg_assert_near(r.energy_j, 0.0, 1e-12); /* already advanced in the last window */
    /* package-1 went from 0x1000 to 0xFFFFF000 in the first window: 65535 J in 1 s is
     * impossible: flagged, not counted; then the wrap to 0x1000 confirms nothing */
    erg_meter_close(m);

    /* a plausible 32-bit wrap */
    wrmsr(2, 0x611, 0xFFFFF000u);
    m = fake_open(root, "rapl-msr");
    window(m, "rapl-msr:package-1", step_wrap, &r);
    assert_int_equal(r.state, ERG_READING_OK);
    assert_true(r.flags & ERG_FLAG_WRAP_CORRECTED);
    erg_assert_near(r.energy_j, 0x2000 / 16384.0, 1e-12);
    erg_meter_close(m);
}

static void client_parts_use_esu_for_dram(void **state)
{
    (void)state;
    cpuinfo("GenuineIntel", 6, 0x8C); /* Tiger Lake: no fixed DRAM unit */
    wrmsr(0, 0x606, 0xA0E03);
    wrmsr(0, 0x611, 100);
    wrmsr(0, 0x639, 200); /* PP0 */
    wrmsr(0, 0x641, 300); /* PP1 */
    wrmsr(0, 0x619, 400);
    wrmsr(0, 0x64D, 500); /* psys */
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 5);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-0/dram"), &c));
    erg_assert_near(c.resolution_j, 1.0 / 16384, 1e-15);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-0/core"), &c));
    assert_int_equal(c.parent, fake_find(m, "rapl-msr:package-0"));
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-0"), &c));
    assert_int_equal(c.parent, fake_find(m, "rapl-msr:psys"));
    erg_meter_close(m);
}

static void amd_registers(void **state)
{
    (void)state;
    cpuinfo("AuthenticAMD", 25, 1);
    wrmsr(0, 0xC0010299u, 0xA1003); /* ESU = bits 12:8 = 0x10 = 16 */
    wrmsr(0, 0xC001029Bu, 1000);
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 1);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, 0, &c));
    assert_string_equal(c.id, "rapl-msr:package-0");
    erg_assert_near(c.resolution_j, 1.0 / 65536, 1e-15);
    erg_meter_close(m);
}

static void core_topology(int cpu, int pkg, int core)
{
    char rel[128];
    topology(cpu, pkg);
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    fake_write(root, rel, "%d\n", core);
}

/* Two packages of two physical cores each, with SMT siblings (cpus 4 and 5) that share their
 * core's register: one `core` channel per package, the sum of its cores, each core unwrapped on
 * its own; the siblings' files are never read. */
static void amd_two_packages(void)
{
    fake_msr_stride = 8; /* core 0xC001029A and package 0xC001029B, 1 byte apart */
    cpuinfo("AuthenticAMD", 25, 17);
    core_topology(0, 0, 0);
    core_topology(1, 0, 1);
    core_topology(2, 1, 0);
    core_topology(3, 1, 1);
    core_topology(4, 0, 0); /* sibling of cpu 0 */
    core_topology(5, 1, 1); /* sibling of cpu 3 */
    for (int cpu = 0; cpu <= 2; cpu += 2) {
        wrmsr(cpu, 0xC0010299u, 0xA1003); /* ESU 16: 15.26 µJ */
        wrmsr(cpu, 0xC001029Bu, 100000);
    }
    wrmsr(0, 0xC001029Au, 0xFFFFF000u); /* core 0 of package 0, near its 2^32 wrap */
    wrmsr(1, 0xC001029Au, 1000);
    wrmsr(2, 0xC001029Au, 5000);
    wrmsr(3, 0xC001029Au, 7000);
    wrmsr(4, 0xC001029Au, 123);         /* a sibling: must not be read */
    wrmsr(5, 0xC001029Au, 0x7FFFFFFFu); /* idem */
}

static void step_amd_cores(void)
{
    wrmsr(0, 0xC001029Au, 0x00001000u);        /* wraps: +0x2000 ticks = 0.125 J */
    wrmsr(1, 0xC001029Au, 1000 + 65536);       /* +1 J */
    wrmsr(2, 0xC001029Au, 5000 + 32768);       /* +0.5 J */
    wrmsr(4, 0xC001029Au, 0x40000000u);        /* a sibling moving: ignored */
    wrmsr(0, 0xC001029Bu, 100000 + 3 * 65536); /* package 0: +3 J */
}

static void step_amd_more(void)
{
    wrmsr(3, 0xC001029Au, 7000 + 131072); /* package 1, core 1: +2 J */
}

static void amd_core_energy_summed_per_package(void **state)
{
    (void)state;
    amd_two_packages();
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 4); /* 2 packages + 2 core sums, not 4 cores */
    erg_channel_info c;
    int c0 = fake_find(m, "rapl-msr:package-0/core"), c1 = fake_find(m, "rapl-msr:package-1/core");
    assert_true(c0 >= 0 && c1 >= 0);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)c0, &c));
    assert_int_equal(c.domain, ERG_DOMAIN_CORE);
    assert_string_equal(c.device, "package-0");
    assert_int_equal(c.grade, ERG_GRADE_HW_SHUNT);
    assert_non_null(strstr(c.label, "0xc001029a, sum of 2 cores"));
    assert_int_equal(c.parent, fake_find(m, "rapl-msr:package-0")); /* core inside package */
    erg_assert_near(c.resolution_j, 1.0 / 65536, 1e-15);
    erg_assert_near(c.wrap_j, 4294967296.0 / 65536, 1e-6);

    erg_channel_reading r;
    double total = window(m, "rapl-msr:package-0/core", step_amd_cores, &r);
    assert_int_equal(r.state, ERG_READING_OK);
    erg_assert_near(r.energy_j, 0.125 + 1.0, 1e-12); /* per-core wrap corrected inside the sum */
    erg_assert_near(total, 3.0 + 0.0, 1e-12);        /* packages only: cores are inside them */
    window(m, "rapl-msr:package-1/core", step_amd_more, &r);
    assert_int_equal(r.state, ERG_READING_OK);
    erg_assert_near(r.energy_j, 2.0, 1e-12);
    erg_meter_close(m);
}

static void step_amd_core_fails(void)
{
    wrmsr(3, 0xC001029Au, 7000 + 65536); /* +1 J, but the next read fails once */
    fake_fail_pread_count = 1;
}

static void amd_core_read_error_is_a_missing_sample(void **state)
{
    (void)state;
    amd_two_packages();
    fake_fail_pread_suffix = "cpu/3/msr"; /* marked at open; fails once a count is set */
    erg_meter *m = fake_open(root, "rapl-msr");
    int i = fake_find(m, "rapl-msr:package-1/core");
    /* a window whose end read fails on one core: no figure, never a partial sum */
    erg_channel_reading r;
    window(m, "rapl-msr:package-1/core", step_amd_core_fails, &r);
    assert_int_not_equal(r.state, ERG_READING_OK);
    assert_false(r.energy_j > 0 && r.energy_j < 1.0);
    /* the next good read picks the core's energy up, counted once */
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    wrmsr(3, 0xC001029Au, 7000 + 65536 + 16384); /* +0.25 J */
    fake_fail_pread_count = 1;
    fake_now_ns += 500000000u;
    erg_assert_ok(erg_meter_poll(m)); /* a missing sample in the middle */
    fake_now_ns += 500000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_measurement *mr = calloc(1, sizeof *mr);
    erg_assert_ok(erg_meter_diff(m, a, b, 0, mr));
    assert_int_equal(mr->channels[i].state, ERG_READING_OK);
    assert_true(mr->channels[i].flags & ERG_FLAG_STALE);
    erg_assert_near(mr->channels[i].energy_j, 0.25, 1e-12);
    erg_measurement_release(mr);
    free(mr);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    erg_meter_close(m);
}

static void amd_without_topology_reads_no_core_sum(void **state)
{
    (void)state;
    fake_msr_stride = 8;
    cpuinfo("AuthenticAMD", 23, 49); /* Zen 2, no sysfs topology in this tree */
    wrmsr(0, 0xC0010299u, 0xA1003);
    wrmsr(0, 0xC001029Bu, 1000);
    wrmsr(0, 0xC001029Au, 500);
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 1); /* cpu0's core alone is not the package's */
    erg_meter_close(m);
}

static void same_package_through_powercap_counted_once(void **state)
{
    (void)state;
    skx();
    fake_powercap_2s(root, 0);
    erg_meter *m = fake_open(root, "rapl-sysfs,rapl-msr");
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)fake_find(m, "rapl-msr:package-0"), &c));
    assert_int_equal(c.deduplicated, 1);
    assert_non_null(strstr(c.reason, "rapl-sysfs:package-0"));
    erg_meter_close(m);
}

/* Cascade Lake-AP (Xeon Platinum 9200): two dies per package, each with its own RAPL counters
 * (MSR_PKG_ENERGY_STATUS and MSR_DRAM_ENERGY_STATUS are die-scoped there), so the powercap driver
 * names its zones "package-P-die-D" (intel_rapl_common.c; raplcap parses the same names). The MSR
 * backend reads a package through its first online CPU, which sees that CPU's die only: beside the
 * die zones, its package and dram would count die 0 a second time. The die zones cover the
 * package: the MSR channels of a package whose dies powercap reads are counted once (deduplicated).
 */
static void clx_ap(void)
{
    cpuinfo("GenuineIntel", 6, 0x55);
    for (int cpu = 0; cpu < 4; cpu++) {
        char rel[128];
        topology(cpu, cpu / 2);
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/die_id", cpu);
        fake_write(root, rel, "%d\n", cpu % 2);
        wrmsr(cpu, 0x606, 0xA0E03); /* ESU 14 */
        wrmsr(cpu, 0x611, 0x1000);
        wrmsr(cpu, 0x619, 500);
    }
    for (int z = 0; z < 4; z++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sys/class/powercap/intel-rapl:%d/name", z);
        fake_write(root, rel, "package-%d-die-%d\n", z / 2, z % 2);
        snprintf(rel, sizeof rel, "sys/class/powercap/intel-rapl:%d/intel-rapl:%d:0/name", z, z);
        fake_write(root, rel, "dram\n");
        snprintf(rel, sizeof rel, "sys/class/powercap/intel-rapl:%d:0", z);
        char target[64], p[600];
        snprintf(target, sizeof target, "intel-rapl:%d/intel-rapl:%d:0", z, z);
        snprintf(p, sizeof p, "%s/%s", root, rel);
        assert_int_equal(symlink(target, p), 0);
        for (int k = 0; k < 2; k++) {
            char d[64];
            if (k)
                snprintf(d, sizeof d, "intel-rapl:%d/intel-rapl:%d:0", z, z);
            else
                snprintf(d, sizeof d, "intel-rapl:%d", z);
            snprintf(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", d);
            fake_write(root, rel, "262143328850\n");
            snprintf(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", d);
            fake_write(root, rel, "%d\n", 1000000 * (z + 1) + k);
        }
    }
}

static void step_clx_ap(void)
{
    /* dies of package 0: 10 J and 12 J; of package 1: 8 J and 9 J; each die's dram 1 J */
    static const int pkg_j[4] = {10, 12, 8, 9};
    for (int z = 0; z < 4; z++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sys/class/powercap/intel-rapl:%d/energy_uj", z);
        fake_write(root, rel, "%d\n", 1000000 * (z + 1) + 1000000 * pkg_j[z]);
        snprintf(rel, sizeof rel, "sys/class/powercap/intel-rapl:%d/intel-rapl:%d:0/energy_uj", z,
                 z);
        fake_write(root, rel, "%d\n", 1000000 * (z + 1) + 1 + 1000000);
        wrmsr(z, 0x611, 0x1000 + 16384u * (unsigned)pkg_j[z]); /* the same die, through MSRs */
        wrmsr(z, 0x619, 500 + 65536);
    }
}

static void die_zones_and_msr_packages_counted_once(void **state)
{
    (void)state;
    clx_ap();
    erg_meter *m = fake_open(root, "rapl-sysfs,rapl-msr");
    erg_channel_info c;
    const char *ids[] = {"rapl-msr:package-0", "rapl-msr:package-1", "rapl-msr:package-0/dram",
                         "rapl-msr:package-1/dram"};
    for (int k = 0; k < 4; k++) {
        int i = fake_find(m, ids[k]);
        if (i < 0)
            fail_msg("no channel %s", ids[k]);
        erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
        assert_int_equal(c.deduplicated, 1);
        assert_non_null(strstr(c.reason, "-die-0"));
    }
    erg_channel_reading r;
    double total = window(m, "rapl-sysfs:package-0-die-1", step_clx_ap, &r);
    erg_assert_near(r.energy_j, 12.0, 1e-9);
    /* every die and its dram once: 10 + 12 + 8 + 9 + 4 × 1 J */
    erg_assert_near(total, 43.0, 1e-6);
    erg_meter_close(m);
}

static void permission_denied_and_missing_driver(void **state)
{
    (void)state;
    skx();
    fake_proc_stat(root, 1, 1);
    fake_fail_open_suffix = "/msr";
    erg_meter *m = fake_open(root, "rapl-msr,estimator");
    erg_backend_info b;
    erg_assert_ok(erg_meter_backend_info(m, 1, &b));
    assert_string_equal(b.name, "rapl-msr");
    assert_int_equal(b.state, ERG_BACKEND_DENIED);
    assert_non_null(strstr(b.reason, "CAP_SYS_RAWIO"));
    erg_meter_close(m);
    fake_io_reset();
    fake_unlink(root, "dev/cpu/0/msr");
    fake_unlink(root, "dev/cpu/2/msr");
    m = fake_open(root, "rapl-msr,estimator");
    erg_assert_ok(erg_meter_backend_info(m, 1, &b));
    assert_string_equal(b.name, "rapl-msr");
    assert_int_equal(b.state, ERG_BACKEND_ABSENT);
    assert_non_null(strstr(b.reason, "modprobe msr"));
    erg_meter_close(m);
}

/* A two-socket Sapphire Rapids with cpu0 and cpu4 offline (echo 0 > cpuN/online): their
 * topology folders and /dev/cpu/N/msr are gone, and /sys/devices/system/cpu/online reads
 * "1-3,5-7". Each package is read through an online CPU of it. */
static void step_offline(void)
{
    wrmsr(1, 0x611, 0x1000 + 3 * 16384); /* package 0 through cpu1: +3 J */
    wrmsr(5, 0x611, 0x9000 + 5 * 16384); /* package 1 through cpu5: +5 J */
}

static void offline_cpus_and_cpu0_are_skipped(void **state)
{
    (void)state;
    cpuinfo("GenuineIntel", 6, 0x8F);
    fake_write(root, "sys/devices/system/cpu/online", "1-3,5-7\n");
    for (int cpu = 1; cpu < 8; cpu++)
        if (cpu != 4)
            topology(cpu, cpu < 4 ? 0 : 1);
    wrmsr(1, 0x606, 0xA0E03);
    wrmsr(1, 0x611, 0x1000);
    wrmsr(5, 0x606, 0xA0E03);
    wrmsr(5, 0x611, 0x9000);
    erg_meter *m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 2);
    erg_channel_reading r;
    double total = window(m, "rapl-msr:package-1", step_offline, &r);
    assert_int_equal(r.state, ERG_READING_OK);
    erg_assert_near(r.energy_j, 5.0, 1e-12);
    erg_assert_near(total, 8.0, 1e-12);
    erg_meter_close(m);
    /* no topology at all and cpu0 offline: the package is read through the first online CPU */
    fake_root_renew();
    cpuinfo("GenuineIntel", 6, 0x8F);
    fake_write(root, "sys/devices/system/cpu/online", "2-3\n");
    wrmsr(2, 0x606, 0xA0E03);
    wrmsr(2, 0x611, 0x4000);
    m = fake_open(root, "rapl-msr");
    assert_int_equal(erg_meter_channel_count(m), 1);
    erg_meter_close(m);
}

/* Hygon Dhyana (vendor HygonGenuine, family 0x18) has AMD's RAPL MSRs. */
static void hygon_reads_amd_registers(void **state)
{
    (void)state;
    fake_msr_stride = 8;
    fake_write(root, "proc/cpuinfo",
               "processor\t: 0\nvendor_id\t: HygonGenuine\ncpu family\t: 24\nmodel\t\t: 1\n"
               "model name\t: Hygon C86 7185 32-core Processor\n\n");
    topology(0, 0);
    wrmsr(0, 0xC0010299u, 0xA1003); /* ESU 16 */
    wrmsr(0, 0xC001029Bu, 70000);
    erg_meter *m = fake_open(root, "rapl-msr");
    int i = fake_find(m, "rapl-msr:package-0");
    assert_true(i >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_non_null(strstr(c.label, "0xc001029b"));
    erg_assert_near(c.resolution_j, 1.0 / 65536, 1e-15);
    erg_meter_close(m);
}

/* Two die readers of one package register (the same counter seen twice) move together at every
 * read: a mirror, counted once; two packages that read alike only at open are not. */
static void step_mirror(void)
{
    static uint64_t v = 0x5000;
    v += 16384;
    wrmsr(0, 0x611, v);
    wrmsr(2, 0x611, v);
}

static void msr_mirror_decided_over_reads(void **state)
{
    (void)state;
    cpuinfo("GenuineIntel", 6, 0x55);
    topology(0, 0);
    topology(2, 1);
    for (int cpu = 0; cpu <= 2; cpu += 2) {
        wrmsr(cpu, 0x606, 0xA0E03);
        wrmsr(cpu, 0x611, 0x5000);
    }
    erg_meter *m = fake_open(root, "rapl-msr");
    erg_channel_info c;
    int i = fake_find(m, "rapl-msr:package-1");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 0);
    erg_channel_reading r;
    window(m, "rapl-msr:package-1", step_mirror, &r);
    double total = window(m, "rapl-msr:package-1", step_mirror, &r);
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_int_equal(c.deduplicated, 1);
    assert_true(r.flags & ERG_FLAG_DEDUPLICATED);
    erg_assert_near(total, 1.0, 1e-12); /* counted once */
    erg_meter_close(m);
}

/* One package's MSR file denied (or its unit register unreadable) while the other reads: the
 * package is a declined channel, and a total over the CPU says it is incomplete rather than
 * giving package 0 alone as the machine's figure (issue 16). */
static void step_pkg0(void)
{
    wrmsr(0, 0x611, 0x1000 + 16384); /* +1 J */
}

static void one_unreadable_package_makes_the_total_incomplete(void **state)
{
    (void)state;
    skx();
    fake_fail_open_suffix = "cpu/2/msr";
    erg_meter *m = fake_open(root, "rapl-msr");
    int i = fake_find(m, "rapl-msr:package-1");
    assert_true(i >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_false(c.usable);
    assert_non_null(strstr(c.reason, "permission denied"));
    erg_meter_snapshot *a = erg_meter_snapshot_new(m), *b = erg_meter_snapshot_new(m);
    erg_assert_ok(erg_meter_snapshot_take(m, a));
    step_pkg0();
    fake_now_ns += 1000000000u;
    erg_assert_ok(erg_meter_snapshot_take(m, b));
    erg_measurement *r = calloc(1, sizeof *r);
    erg_assert_ok(erg_meter_diff(m, a, b, 0, r));
    assert_true(isnan(r->total_energy_j));
    assert_int_equal(r->total_flags, ERG_FLAG_INCOMPLETE);
    assert_non_null(strstr(r->total_reason, "rapl-msr:package-1 (declined)"));
    int p0 = fake_find(m, "rapl-msr:package-0");
    erg_assert_near(r->channels[p0].energy_j, 1.0, 1e-12); /* the channel keeps its figure */
    erg_measurement_release(r);
    free(r);
    erg_meter_snapshot_free(a);
    erg_meter_snapshot_free(b);
    erg_meter_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(units_quirks_and_32bit_wrap, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(client_parts_use_esu_for_dram, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(amd_registers, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(amd_core_energy_summed_per_package, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(amd_core_read_error_is_a_missing_sample, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(amd_without_topology_reads_no_core_sum, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(same_package_through_powercap_counted_once, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(die_zones_and_msr_packages_counted_once, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(permission_denied_and_missing_driver, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(offline_cpus_and_cpu0_are_skipped, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(hygon_reads_amd_registers, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(msr_mirror_decided_over_reads, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(one_unreadable_package_makes_the_total_incomplete,
                                        fake_setup, fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
