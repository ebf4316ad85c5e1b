/* SPDX-License-Identifier: MIT */
/*
 * Private backend interface of the meter (DESIGN.md, STYLE.md section 7). A backend finds its
 * channels at open, and reads all of them at once into raw unsigned ticks, on open file
 * descriptors, with no allocation and no logging. Wrap correction, plausibility, integration,
 * liveness and totals are done once, in meter.c, for every backend alike.
 */
#ifndef ERG_METER_BACKEND_H
#define ERG_METER_BACKEND_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fsroot.h"
#include "erg/meter.h"

#pragma GCC visibility push(hidden)

#define ERG__BACKEND_ABI 2 /* 2: busy() added */

/* What a backend sees of the meter: the root, the seam, the options. */
struct erg__env {
    int root_fd;           /* O_DIRECTORY fd of the root prefix */
    char root[512];        /* root prefix as given, for messages ("" for "/") */
    const char *nvml_path; /* library to dlopen */
    erg_io io;             /* seam, every member set */
    double estimator_idle_w, estimator_full_w;
};

/* A channel as a backend declares it. */
struct erg__chan {
    char id[ERG_METER_ID_MAX];
    char device[ERG_METER_ID_MAX];
    char label[ERG_METER_ID_MAX];
    erg_domain domain;
    erg_grade grade;
    erg_channel_kind kind;
    double joules_per_tick; /* COUNTER: J per tick; POWER/ESTIMATE: W per tick */
    uint64_t wrap_ticks;    /* COUNTER modulus (max_energy_range_uj + 1, 2^32); 0 none/unknown */
    int wrap_unknown;       /* 1 when the modulus could not be read (decreases are not wraps) */
    int no_wrap;            /* 1 for 64-bit counters that do not wrap (wrap_j 0, not unknown) */
    double min_interval_s;  /* update period, s */
    double max_power_w;     /* plausibility bound, W */
    int usable;             /* 0: declined at open, reason says why */
    int lacks;              /* declined, but a real domain whose figure a total needs (permission
                             * denied, unreadable counter): its absence makes a total incomplete */
    char reason[ERG_METER_REASON_MAX];
    int zone_type; /* backend-private grouping (e.g. 1 for intel-rapl-mmio) */
    int component; /* a rail inside a larger domain (a board or module rail): reported, never
                    * summed, never a mirror of anything */
};

/* Read status of one channel in one poll. */
enum { ERG__READ_OK = 0, ERG__READ_TRANSIENT = 1, ERG__READ_FATAL = 2 };

struct erg__backend_ops {
    unsigned abi;
    const char *name;
    /* Find channels. On success *chans points at n channels owned by *state (stable until close).
     * ERG_ENODEV: nothing here (diag->detail says why); ERG_EACCES; ERG_ENOLIB; other errors. */
    int (*open)(const struct erg__env *env, void **state, struct erg__chan **chans, size_t *n,
                erg_diag *diag);
    /* Read every channel: ticks[i] and st[i] (ERG__READ_*). No allocation. */
    void (*read)(void *state, uint64_t *ticks, int *st, size_t n);
    /* Temperatures (optional, may be NULL). */
    size_t (*temps)(void *state, erg_temperature *out, size_t max);
    void (*close)(void *state);
    /* Device utilisation in [0, 1] of each channel's device right now (optional, may be NULL;
     * GPU backends): integrated by the meter into busy time for the per-window liveness test.
     * A negative value means unknown. No allocation. */
    void (*busy)(void *state, double *util, size_t n);
};

extern const struct erg__backend_ops erg__backend_rapl_sysfs;
extern const struct erg__backend_ops erg__backend_rapl_msr;
extern const struct erg__backend_ops erg__backend_nvml;
extern const struct erg__backend_ops erg__backend_hwmon;
extern const struct erg__backend_ops erg__backend_estimator;

/* Helpers shared by backends (env.c). */

/* Open path (relative to the root) read-only and non-blocking through the seam; only a regular
 * file is kept (a FIFO, socket, directory or device gives -1 with errno EINVAL). -1 with errno. */
int erg__env_open(const struct erg__env *env, const char *rel);
/* The same, also accepting a character device (/dev/cpu/N/msr). */
int erg__env_open_dev(const struct erg__env *env, const char *rel);
/* readlink of rel (its directory resolved inside the root); the length, or -1 with errno. */
int erg__env_readlink(const struct erg__env *env, const char *rel, char *buf, size_t size);
/* strerror for an open made by erg__env_open: EINVAL "not a regular file ...", EXDEV "outside". */
const char *erg__open_error(int e);
/* erg__open_in_root, erg__secure, erg__getenv: core/fsroot.h (the one root-fd seam). */
/* Full path for messages: root + "/" + rel. */
void erg__env_path(const struct erg__env *env, const char *rel, char *buf, size_t size);
/* pread the whole small attribute at offset 0 into buf (NUL-terminated, trailing space
 * stripped). Returns the length or -errno (-EIO for an empty read). */
int erg__env_pread_text(const struct erg__env *env, int fd, char *buf, size_t size);
/* Parse an unsigned 64-bit decimal with checks (strtoull, end, ERANGE, no sign). 0 or -1. */
int erg__parse_u64(const char *text, uint64_t *out);
/* Read a small text file at rel into buf; returns length or -errno. */
int erg__env_read_text(const struct erg__env *env, const char *rel, char *buf, size_t size);
/* Read and parse a u64 file at rel; 0, or -errno (-EINVAL for a parse error). */
int erg__env_read_u64(const struct erg__env *env, const char *rel, uint64_t *out);
/* Vendor, family and model from <root>/proc/cpuinfo (first processor): *amd is 1 for AMD and
 * Hygon (AMD's RAPL registers). 0, or -1 when unreadable. */
int erg__env_cpu_id(const struct erg__env *env, int *amd, unsigned *family, unsigned *model);
/* Open a directory under the root for listing (through the seam's openat); NULL with errno. */
DIR *erg__env_opendir(const struct erg__env *env, const char *rel);
/* snprintf that truncates silently (for messages; gcc's truncation warnings do not apply). */
void erg__fmt(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copy with truncation; always NUL-terminates. */
void erg__strlcpy(char *dst, const char *src, size_t size);
/* The remedy text for EACCES on RAPL energy counters (CVE-2020-8694). */
extern const char erg__rapl_eacces_remedy[];

#pragma GCC visibility pop

#endif
