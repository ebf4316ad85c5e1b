/* SPDX-License-Identifier: MIT */
/*
 * Root-prefixed file access through the I/O seam, and the parsing helpers backends share.
 *
 * Every host path is resolved inside the root (ERG_ROOT): openat2(2) with RESOLVE_IN_ROOT (Linux
 * 5.6), so that neither ".." nor a symlink, absolute or relative, leads out of it; where openat2
 * is missing (older kernels, seccomp filters) an equivalent walk opens one component at a time
 * with O_NOFOLLOW, follows symlinks itself (an absolute target starts again at the root) and
 * refuses a ".." that would climb above the root. Files are opened O_NONBLOCK and checked with
 * fstat: a FIFO, socket or block device under the root is refused, never waited on.
 * With elevated privilege (AT_SECURE: setuid, setgid or file capabilities) the environment
 * overrides ERG_ROOT and ERG_NVML_LIB are refused (secure_getenv semantics).
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

#ifndef RESOLVE_IN_ROOT
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_IN_ROOT 0x10
#endif
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture (asm-generic) */
#endif

/* struct open_how of openat2(2), declared here because glibc before 2.36 has no header for it */
struct erg__open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

int erg__secure_for_tests = -1;

int erg__secure(void)
{
    if (erg__secure_for_tests >= 0)
        return erg__secure_for_tests;
    return getauxval(AT_SECURE) != 0;
}

const char *erg__getenv(const char *name)
{
    return erg__secure() ? NULL : getenv(name);
}

/* The walk: rel resolved under rootfd one component at a time. */
static int walk_in_root(int rootfd, const char *rel, int flags)
{
    enum { MAX_DEPTH = 128, MAX_LINKS = 40 };
    char rest[4096];
    if (strlen(rel) >= sizeof rest) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(rest, rel, strlen(rel) + 1);
    int stack[MAX_DEPTH]; /* stack[0] is the root (not owned), deeper ones are owned O_PATH fds */
    size_t depth = 0;
    stack[0] = rootfd;
    int links = 0, result = -1, err = 0;
    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0') { /* the path named a directory: open it */
            result = openat(stack[depth], ".", flags);
            err = errno;
            break;
        }
        char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char comp[256];
        if (len >= sizeof comp) {
            err = ENAMETOOLONG;
            break;
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        p += len;
        int last = 1;
        for (const char *q = p; *q; q++)
            if (*q != '/') {
                last = 0;
                break;
            }
        if (strcmp(comp, ".") == 0) {
            if (last) {
                result = openat(stack[depth], ".", flags);
                err = errno;
                break;
            }
            continue;
        }
        if (strcmp(comp, "..") == 0) {
            if (depth == 0) {
                err = EXDEV; /* would climb above the root */
                break;
            }
            close(stack[depth--]);
            if (last) {
                result = openat(stack[depth], ".", flags);
                err = errno;
                break;
            }
            continue;
        }
        int fd = openat(stack[depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            err = errno;
            break;
        }
        struct stat st;
        if (fstat(fd, &st) != 0) {
            err = errno;
            close(fd);
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            close(fd);
            char target[4096];
            ssize_t n = readlinkat(stack[depth], comp, target, sizeof target - 1);
            if (n <= 0 || ++links > MAX_LINKS) {
                err = n <= 0 ? errno : ELOOP;
                break;
            }
            target[n] = '\0';
            if (strlen(target) + strlen(p) + 2 > sizeof rest) {
                err = ENAMETOOLONG;
                break;
            }
            size_t tl = strlen(target), pl = strlen(p);
            memmove(rest + tl, p, pl + 1); /* fits: checked above */
            memcpy(rest, target, tl);
            p = rest;
            if (target[0] == '/')
                while (depth > 0)
                    close(stack[depth--]); /* absolute: from the root, as RESOLVE_IN_ROOT does */
            continue;
        }
        if (last) {
            close(fd);
            result = openat(stack[depth], comp, flags | O_NOFOLLOW);
            err = errno;
            break;
        }
        if (!S_ISDIR(st.st_mode) || depth + 1 == MAX_DEPTH) {
            close(fd);
            err = S_ISDIR(st.st_mode) ? ENAMETOOLONG : ENOTDIR;
            break;
        }
        stack[++depth] = fd;
    }
    while (depth > 0)
        close(stack[depth--]);
    if (result < 0)
        errno = err ? err : EIO;
    return result;
}

static int openat2_missing;

int erg__open_in_root(int rootfd, const char *rel, int flags)
{
    while (*rel == '/')
        rel++;
    if (*rel == '\0')
        rel = ".";
    if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
        struct erg__open_how how = {(uint64_t)(unsigned)flags, 0,
                                    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        if (errno != ENOSYS && errno != EPERM && errno != E2BIG)
            return -1;
        __atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED); /* seccomp or an old kernel */
    }
    return walk_in_root(rootfd, rel, flags);
}

int erg__open_in_root_walk(int rootfd, const char *rel, int flags)
{
    while (*rel == '/')
        rel++;
    return walk_in_root(rootfd, *rel ? rel : ".", flags);
}

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
