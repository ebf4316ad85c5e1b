/* SPDX-License-Identifier: MIT */
/*
 * Root-prefixed file access through the I/O seam, and the parsing helpers backends share.
 *
 * Every host path is resolved inside the root (ERG_ROOT) by core/fsroot (erg__open_in_root:
 * openat2 RESOLVE_IN_ROOT, or a component walk), the one root-fd seam of every module. Files are
 * opened O_NONBLOCK and checked with fstat: a FIFO, socket or block device under the root is
 * refused, never waited on. With elevated privilege (AT_SECURE) the environment overrides
 * ERG_ROOT and ERG_NVML_LIB are refused (erg__getenv, secure_getenv semantics).
 */
#define _GNU_SOURCE 1
#include "meter/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char erg__rapl_eacces_remedy[] =
    "root-only since CVE-2020-8694; a udev rule can make it group-readable (docs/meters.md), "
    "never o+r";

void erg__fmt(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

void erg__strlcpy(char *dst, const char *src, size_t size)
{
    if (size == 0)
        return;
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Open rel for reading without blocking, and keep it only if it is a regular file (or, with
 * allow_chr, a character device such as /dev/cpu/N/msr). */
static int open_kind(const struct erg__env *env, const char *rel, int allow_chr)
{
    while (*rel == '/')
        rel++;
    int fd = env->io.openat(env->io.ud, env->root_fd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (allow_chr && S_ISCHR(st.st_mode)))) {
        env->io.close(env->io.ud, fd);
        errno = EINVAL; /* a FIFO, socket, directory or block device: never read, never waited on */
        return -1;
    }
    return fd;
}

const char *erg__open_error(int e)
{
    return e == EINVAL  ? "not a regular file (a FIFO, socket or device is never read)"
           : e == EXDEV ? "resolves outside ERG_ROOT (refused)"
                        : strerror(e);
}

int erg__env_open(const struct erg__env *env, const char *rel)
{
    return open_kind(env, rel, 0);
}

int erg__env_open_dev(const struct erg__env *env, const char *rel)
{
    return open_kind(env, rel, 1);
}

int erg__env_readlink(const struct erg__env *env, const char *rel, char *buf, size_t size)
{
    char dir[512];
    while (*rel == '/')
        rel++;
    erg__strlcpy(dir, rel, sizeof dir);
    char *slash = strrchr(dir, '/');
    const char *base = rel;
    if (slash) {
        *slash = '\0';
        base = rel + (slash - dir) + 1;
    } else {
        erg__strlcpy(dir, ".", sizeof dir);
    }
    int dfd = env->io.openat(env->io.ud, env->root_fd, dir,
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (dfd < 0)
        return -1;
    ssize_t n = readlinkat(dfd, base, buf, size - 1);
    int e = errno;
    env->io.close(env->io.ud, dfd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return (int)n;
}

void erg__env_path(const struct erg__env *env, const char *rel, char *buf, size_t size)
{
    while (*rel == '/')
        rel++;
    erg__fmt(buf, size, "%s/%s", env->root, rel);
}

int erg__env_pread_text(const struct erg__env *env, int fd, char *buf, size_t size)
{
    ssize_t r = env->io.pread(env->io.ud, fd, buf, size - 1, 0);
    if (r < 0)
        return errno ? -errno : -EIO;
    if (r == 0)
        return -EIO;
    size_t n = (size_t)r;
    while (n > 0 &&
           (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    return (int)n;
}

int erg__parse_u64(const char *text, uint64_t *out)
{
    while (*text == ' ' || *text == '\t')
        text++;
    if (*text < '0' || *text > '9')
        return -1; /* no sign, no empty */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return -1;
    while (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r')
        end++;
    if (*end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int erg__env_read_text(const struct erg__env *env, const char *rel, char *buf, size_t size)
{
    int fd = erg__env_open(env, rel);
    if (fd < 0)
        return errno ? -errno : -EIO;
    int r = erg__env_pread_text(env, fd, buf, size);
    env->io.close(env->io.ud, fd);
    return r;
}

int erg__env_read_u64(const struct erg__env *env, const char *rel, uint64_t *out)
{
    char buf[64];
    int r = erg__env_read_text(env, rel, buf, sizeof buf);
    if (r < 0)
        return r;
    return erg__parse_u64(buf, out) == 0 ? 0 : -EINVAL;
}

DIR *erg__env_opendir(const struct erg__env *env, const char *rel)
{
    while (*rel == '/')
        rel++;
    int fd = env->io.openat(env->io.ud, env->root_fd, rel,
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        env->io.close(env->io.ud, fd);
        errno = e;
    }
    return d;
}

int erg__env_cpu_id(const struct erg__env *env, int *amd, unsigned *family, unsigned *model)
{
    int fd = erg__env_open(env, "proc/cpuinfo");
    if (fd < 0)
        return -1;
    char buf[4096];
    ssize_t r = env->io.pread(env->io.ud, fd, buf, sizeof buf - 1, 0);
    env->io.close(env->io.ud, fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    const char *v = strstr(buf, "vendor_id");
    const char *f = strstr(buf, "cpu family");
    const char *m = strstr(buf, "\nmodel\t");
    if (!v || !f || !m)
        return -1;
    /* Hygon (HygonGenuine, family 0x18, Dhyana) is AMD's Zen with AMD's RAPL MSRs (Linux
     * arch/x86/events/rapl.c and powercap intel_rapl_msr treat it as AMD) */
    const char *eol = strchr(v, '\n');
    const char *a = strstr(v, "AuthenticAMD"), *h = strstr(v, "HygonGenuine");
    *amd = (a && (!eol || a < eol)) || (h && (!eol || h < eol));
    f = strchr(f, ':');
    m = strchr(m, ':');
    if (!f || !m)
        return -1;
    *family = (unsigned)strtoul(f + 1, NULL, 10);
    *model = (unsigned)strtoul(m + 1, NULL, 10);
    return 0;
}
