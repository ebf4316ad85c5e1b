/* SPDX-License-Identifier: MIT */
/* Root-prefixed file access through the I/O seam, and the parsing helpers backends share. */
#include "meter/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char erg__rapl_eacces_remedy[] =
    "energy_uj is readable by root only on kernels patched for CVE-2020-8694 (PLATYPUS); run as "
    "root, or grant read access (e.g. a udev rule or 'chmod o+r' on the energy_uj files), or use "
    "hwmon/NVML";

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

int erg__env_open(const struct erg__env *env, const char *rel)
{
    while (*rel == '/')
        rel++;
    return env->io.openat(env->io.ud, env->root_fd, rel, O_RDONLY | O_CLOEXEC);
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
    int fd = env->io.openat(env->io.ud, env->root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
