/* SPDX-License-Identifier: MIT */
/*
 * Private: every host read through one root fd (hwloc's hwloc_openat model, STYLE.md "Every host
 * read through one root fd"), for every module: the meter's sysfs, procfs and /dev reads, the
 * predictor's /proc/cpuinfo. ERG_ROOT names the root (a captured machine tree in tests); a path
 * is resolved inside it by openat2(2) RESOLVE_IN_ROOT (Linux 5.6), so that neither ".." nor a
 * symlink, absolute or relative, leads out; where openat2 is missing (older kernels, seccomp
 * filters) an equivalent walk opens one component at a time with O_NOFOLLOW, follows symlinks
 * itself (an absolute target starts again at the root) and refuses a ".." that would climb above
 * the root (EXDEV). With elevated privilege (AT_SECURE: setuid, setgid or file capabilities) the
 * environment's ERG_ROOT is not taken (secure_getenv's rule).
 */
#ifndef ERG_CORE_FSROOT_H
#define ERG_CORE_FSROOT_H

#include <stddef.h>

/* openat of rel resolved inside the directory rootfd: openat2 RESOLVE_IN_ROOT, else a component
 * walk with O_NOFOLLOW (symlinks followed by hand, absolute ones from the root, ".." above the
 * root refused with EXDEV). What the meter's default seam's openat does. -1 with errno. */
int erg__open_in_root(int rootfd, const char *rel, int flags);
/* The walk alone (tests check it where openat2 exists too). */
int erg__open_in_root_walk(int rootfd, const char *rel, int flags);
/* 1 when the process runs with elevated privilege (getauxval(AT_SECURE): setuid, setgid, file
 * capabilities); erg__secure_for_tests >= 0 overrides it (tests). */
int erg__secure(void);
extern int erg__secure_for_tests;
/* getenv, but NULL under elevated privilege (secure_getenv's rule). */
const char *erg__getenv(const char *name);

/* Read the host file rel (e.g. "proc/cpuinfo") whole, resolved inside root (NULL: $ERG_ROOT by
 * erg__getenv, else "/"), into a malloc'd NUL-terminated buffer (*len without the NUL, at most
 * max bytes read). Only a regular file is read: a FIFO, socket or device is refused (EINVAL),
 * never waited on. 0, or -1 with errno (ENOENT, EACCES, EXDEV outside the root, ENOMEM). */
int erg__fsroot_read(const char *root, const char *rel, size_t max, char **out, size_t *len);

#endif
