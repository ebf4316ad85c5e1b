/* SPDX-License-Identifier: MIT */
/* Fake host trees under a temporary ERG_ROOT, a scripted clock and an I/O seam with injected
 * failures, shared by the meter and measure tests. */
#ifndef ERG_TEST_FAKE_TREE_H
#define ERG_TEST_FAKE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "erg/meter.h"

/* Make a fresh temporary root into buf (size ≥ 64). Returns 0 or -1. */
int fake_root_new(char *buf, size_t size);
/* Remove a root recursively. */
void fake_root_free(const char *root);
/* The root of the common cmocka fixture: fake_setup resets the seam (fake_io_reset) and makes a
 * fresh root here; fake_teardown removes it. Returns 0 or -1, as cmocka wants. */
extern char fake_root[256];
int fake_setup(void **state);
int fake_teardown(void **state);
/* Replace fake_root by a fresh, empty root (the seam is left as it is); aborts when it cannot. */
void fake_root_renew(void);
/* Write text to root/rel in place (mkdir -p; O_TRUNC, so open descriptors see the change). */
void fake_write(const char *root, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write a u64 to root/rel. */
void fake_write_u64(const char *root, const char *rel, uint64_t v);
/* mkdir -p root/rel. */
void fake_mkdir(const char *root, const char *rel);
/* Remove root/rel. */
void fake_unlink(const char *root, const char *rel);

/* The scripted seam: clock at fake_now_ns; openat fails with fake_fail_open_errno for existing
 * paths that end with fake_fail_open_suffix; pread fails with EIO fake_fail_pread_count times for
 * fds whose path ended with fake_fail_pread_suffix. */
extern uint64_t fake_now_ns;
extern const char *fake_fail_open_suffix;
extern int fake_fail_open_errno;
extern const char *fake_fail_pread_suffix;
extern int fake_fail_pread_count;
/* Register layout of the fake /dev/cpu/N/msr files: the seam reads register r at file offset
 * r * fake_msr_stride (default 1, the msr(4) layout). AMD's unit, core and package registers
 * are adjacent addresses (0xC0010299..B), whose 8-byte values overlap in a flat file: tests of
 * them set 8, so that each register has its own 8 bytes. */
extern unsigned fake_msr_stride;
extern const erg_io fake_io;
void fake_io_reset(void);

/* Standard options for a fake root with the fake seam (sampler not started). */
void fake_options(erg_meter_options *o, const char *root, const char *backends);
/* erg_meter_open with fake_options(root, backends); when the meter does not open, the diagnostic
 * goes to stderr and the process aborts (the running test fails). */
erg_meter *fake_open(const char *root, const char *backends);

/* A two-socket powercap tree: package-0 (core, uncore, dram), package-1 (dram), psys, with
 * max_energy_range_uj 262143328850 and the given starting values. */
void fake_powercap_2s(const char *root, int with_psys);

/* A /proc/stat with the given busy and idle jiffies. */
void fake_proc_stat(const char *root, uint64_t busy, uint64_t idle);

/* Find a channel by id; -1 when absent. */
int fake_find(const erg_meter *m, const char *id);

#endif
