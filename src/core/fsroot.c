/* SPDX-License-Identifier: MIT */
/* Every host read through one root fd: core/fsroot.h. */
#define _GNU_SOURCE 1
#include "core/fsroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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

int erg__fsroot_read(const char *root, const char *rel, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!root)
        root = erg__getenv("ERG_ROOT");
    if (!root || !root[0])
        root = "/";
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return -1;
    int fd = erg__open_in_root(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int err = errno;
    close(rootfd);
    if (fd < 0) {
        errno = err;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL; /* a FIFO, socket, directory or device: never read, never waited on */
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf && n < max) {
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t want = cap - n < max - n ? cap - n : max - n;
        ssize_t r = read(fd, buf + n, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            err = errno;
            free(buf);
            close(fd);
            errno = err;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
