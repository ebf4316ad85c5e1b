/* SPDX-License-Identifier: MIT */
/**
 * erg/error.h - status codes and diagnostics shared by every erg module.
 *
 * Every fallible function in liberg returns an int: ERG_OK (0) or a negative status from
 * ERG_STATUS_MAP. On Unix, statuses that mirror a system error are the negated errno (libuv's
 * model). Functions that read files or probe hardware also take an optional erg_diag, filled with
 * where the problem is (file:line:col, a sysfs path) and what to do about it. The library never
 * prints, exits or uses errno to report errors.
 *
 * Thread safety: all functions here are thread-safe; erg_diag is caller-owned.
 */
#ifndef ERG_ERROR_H
#define ERG_ERROR_H

#include <errno.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** X-macro of every status: name, value, message. */
#define ERG_STATUS_MAP(X)                                                                          \
    X(EINVAL, -EINVAL, "invalid argument")                                                         \
    X(ENOMEM, -ENOMEM, "out of memory")                                                            \
    X(EACCES, -EACCES, "permission denied")                                                        \
    X(ENOENT, -ENOENT, "no such file")                                                             \
    X(ENODEV, -ENODEV, "no such device or counter")                                                \
    X(EIO, -EIO, "i/o error")                                                                      \
    X(ENOTSUP, -ENOTSUP, "not supported by this backend")                                          \
    X(ERANGE, -ERANGE, "value out of range")                                                       \
    X(EPARSE, -4000, "malformed input")                                                            \
    X(ENOLIB, -4001, "backend library cannot be loaded")                                           \
    X(ESINGULAR, -4002, "regression system is singular")                                           \
    X(ECYCLE, -4003, "dependency cycle")                                                           \
    X(EVERSION, -4004, "unknown format version")                                                   \
    X(ENOTLIVE, -4005, "counter is present but not live")                                          \
    X(EBUSY, -EBUSY, "resource busy")                                                              \
    X(EINTR, -EINTR, "interrupted")

/** Status codes. ERG_OK is success; every other value is negative. */
enum erg_status {
    ERG_OK = 0,
#define ERG__STATUS_ENUM(n, v, s) ERG_##n = (v),
    ERG_STATUS_MAP(ERG__STATUS_ENUM)
#undef ERG__STATUS_ENUM
};

/** Human message for a status ("malformed input"); a static string. Unknown codes give "unknown
 * status". */
ERG_API const char *erg_strerror(int status);

/** Symbolic name of a status ("ERG_EPARSE"); a static string. */
ERG_API const char *erg_status_name(int status);

/**
 * Details of a failure, filled by functions that take one (it may always be NULL).
 * status: the status returned; where: the place ("file.json:3:14",
 * "/sys/class/powercap/intel-rapl:0/energy_uj"), possibly empty; detail: what is wrong and, where
 * one exists, the remedy.
 */
typedef struct erg_diag {
    int status;
    char where[256];
    char detail[512];
} erg_diag;

/** Clear a diagnostic (status ERG_OK, empty strings). NULL-safe. */
ERG_API void erg_diag_clear(erg_diag *diag);

/**
 * Fill a diagnostic and return status, so that `return erg_diag_set(d, ERG_EPARSE, path, "...")`
 * reads naturally. diag may be NULL; where may be NULL; fmt is printf-style. Thread-safe.
 */
ERG_API int erg_diag_set(erg_diag *diag, int status, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/**
 * Format a diagnostic as one line "<where>: <detail>" (or "<strerror>" when detail is empty) into
 * buf of size bytes; snprintf return semantics.
 */
ERG_API int erg_diag_format(const erg_diag *diag, char *buf, size_t size);

/**
 * Check, before long work, that path can take a result: "-" (stdout); an existing regular file or
 * a new one in an existing, writable folder (a symlink is followed to the file it names, which is
 * what erg writes: the link is never replaced); a character device or FIFO that is writable (erg
 * writes into it and never replaces it: `-o /dev/null` stays a device). Folders, block devices
 * and symlinks to missing files are refused.
 * Returns ERG_OK; ERG_EINVAL, ERG_ENOENT, ERG_EACCES, ERG_EIO with diag naming the path and why.
 */
ERG_API ERG_NODISCARD int erg_output_check(const char *path, erg_diag *diag);

/**
 * Write len bytes to path whole or not at all, as every file erg writes: a temporary beside it
 * renamed over it (the mode of a file replaced kept; terminating signals held off while the
 * temporary exists, so none is left behind), into a character device or FIFO without replacing
 * it, through a symlink to the file it names; "-" is stdout.
 * Returns ERG_OK; ERG_EINVAL (a folder or block device), ERG_ENOENT, ERG_EACCES, ERG_EIO (a full
 * disk included), ERG_ENOMEM, with diag naming the path.
 */
ERG_API ERG_NODISCARD int erg_file_write_whole(const char *path, const void *data, size_t len,
                                               erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
