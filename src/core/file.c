/* SPDX-License-Identifier: MIT */
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int status_from_errno(int e)
{
    switch (e) {
    case ENOENT:
        return ERG_ENOENT;
    case EACCES:
    case EPERM:
        return ERG_EACCES;
    case ENOMEM:
        return ERG_ENOMEM;
    default:
        return ERG_EIO;
    }
}

/* Open path for a whole-file read: a regular file or a pipe (a shell's <(...)), never a device
 * (/dev/zero would be read until memory runs out) or a folder. The open does not block: a FIFO
 * nobody writes to reads as empty instead of hanging. The size is bounded either way (1 GiB).
 * "-" is standard input, whatever it is. */
static FILE *open_regular(const char *path, erg_diag *diag, int *status)
{
    if (strcmp(path, "-") == 0)
        return stdin;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        *status = erg_diag_set(diag, status_from_errno(e), path, "cannot open: %s", strerror(e));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(fd);
        *status = erg_diag_set(diag, ERG_EINVAL, path,
                               "not a regular file (a device or a folder): erg reads files");
        return NULL;
    }
    if ((uint64_t)st.st_size > ERG__READ_FILE_MAX) {
        close(fd);
        *status = erg_diag_set(
            diag, ERG_EINVAL, path, "%llu bytes: larger than the %llu bytes erg reads whole",
            (unsigned long long)st.st_size, (unsigned long long)ERG__READ_FILE_MAX);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        *status = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    return f;
}

FILE *erg__open_read(const char *path, int *seekable, erg_diag *diag, int *status)
{
    *seekable = 0;
    FILE *f = open_regular(path, diag, status);
    struct stat st;
    if (f && f != stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        *seekable = 1;
    return f;
}

void erg__close_read(FILE *f)
{
    if (f && f != stdin)
        fclose(f);
}

int erg__read_all(FILE *f, const char *path, char **out, size_t *len, erg_diag *diag)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory reading the file");
    for (;;) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                return erg_diag_set(diag, ERG_EIO, path, "read error: %s", strerror(e));
            }
            break;
        }
        if (cap >= ERG__READ_FILE_MAX) { /* standard input, or a file that grew while read */
            free(buf);
            return erg_diag_set(diag, ERG_EINVAL, path,
                                "larger than the %llu bytes erg reads whole",
                                (unsigned long long)ERG__READ_FILE_MAX);
        }
        char *nb = realloc(buf, 2 * cap + 1);
        if (!nb) {
            free(buf);
            return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory reading the file");
        }
        buf = nb;
        cap *= 2;
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return ERG_OK;
}

int erg__read_file(const char *path, char **out, size_t *len, erg_diag *diag)
{
    int status = ERG_EIO;
    FILE *f = open_regular(path, diag, &status);
    if (!f)
        return status;
    int rc = erg__read_all(f, path, out, len, diag);
    erg__close_read(f);
    return rc;
}

void erg__dirname(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else if (slash == path)
        snprintf(buf, size, "/");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* Write all of data to fd; 0 or errno. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* What writing to path would replace: 0 and *st when it exists (after following symlinks into
 * *real, a malloc'd path or NULL), ENOENT when it does not, another errno otherwise. */
static int resolve(const char *path, char **real, struct stat *st)
{
    *real = NULL;
    struct stat ls;
    if (lstat(path, &ls) != 0)
        return errno;
    if (S_ISLNK(ls.st_mode)) {
        /* a symlink is never replaced: the file it points to is written */
        char *r = realpath(path, NULL);
        if (!r)
            return errno == ENOENT ? ELOOP : errno;
        *real = r;
        if (stat(r, st) != 0)
            return errno;
        return 0;
    }
    *st = ls;
    return 0;
}

int erg_output_check(const char *path, erg_diag *diag)
{
    if (!path || !*path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "empty output path");
    if (strcmp(path, "-") == 0)
        return ERG_OK;
    char *real;
    struct stat st;
    int e = resolve(path, &real, &st);
    const char *target = real ? real : path;
    int rc = ERG_OK;
    if (e == ELOOP) {
        rc = erg_diag_set(diag, ERG_ENOENT, path, "a symlink to a missing file: not written");
    } else if (e == 0 && S_ISDIR(st.st_mode)) {
        rc = erg_diag_set(diag, ERG_EINVAL, path, "is a folder, not a file");
    } else if (e == 0 && S_ISBLK(st.st_mode)) {
        rc = erg_diag_set(diag, ERG_EINVAL, path, "is a block device: erg does not write there");
    } else if (e == 0 && !S_ISREG(st.st_mode)) {
        /* a character device or FIFO is written into, never replaced */
        if (access(target, W_OK) != 0)
            rc = erg_diag_set(diag, status_from_errno(errno), path, "cannot write: %s",
                              strerror(errno));
    } else if (e == 0 || e == ENOENT) {
        char dir[4096];
        erg__dirname(target, dir, sizeof dir);
        struct stat ds;
        if (stat(dir, &ds) != 0)
            rc = erg_diag_set(diag, status_from_errno(errno), path, "%s: %s", dir, strerror(errno));
        else if (!S_ISDIR(ds.st_mode))
            rc = erg_diag_set(diag, ERG_EINVAL, path, "%s: not a folder", dir);
        else if (access(dir, W_OK | X_OK) != 0)
            rc = erg_diag_set(diag, status_from_errno(errno), path, "%s: %s", dir, strerror(errno));
    } else {
        rc = erg_diag_set(diag, status_from_errno(e), path, "cannot write: %s", strerror(e));
    }
    free(real);
    return rc;
}

int erg__out_open(erg__out *o, const char *path, erg_diag *diag)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->path = path;
    if (strcmp(path, "-") == 0) {
        if (fflush(stdout) != 0)
            return erg_diag_set(diag, ERG_EIO, "<stdout>", "write error");
        o->fd = STDOUT_FILENO;
        o->is_stdout = 1;
        return ERG_OK;
    }
    int e = resolve(path, &o->real, &o->st);
    if (e == ELOOP)
        return erg_diag_set(diag, ERG_ENOENT, path, "a symlink to a missing file: not written");
    if (e != 0 && e != ENOENT) {
        free(o->real);
        o->real = NULL;
        return erg_diag_set(diag, status_from_errno(e), path, "cannot write: %s", strerror(e));
    }
    if (e == 0 && (S_ISDIR(o->st.st_mode) || S_ISBLK(o->st.st_mode))) {
        free(o->real);
        o->real = NULL;
        return erg_diag_set(diag, ERG_EINVAL, path, "%s: not written",
                            S_ISDIR(o->st.st_mode) ? "is a folder" : "is a block device");
    }
    o->exists = e == 0;
    const char *target = o->real ? o->real : path;
    if (e == 0 && !S_ISREG(o->st.st_mode)) {
        /* a device (-o /dev/null) or FIFO: write into it; replacing it would turn it into a
         * regular file */
        o->fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (o->fd < 0) {
            int er = errno;
            free(o->real);
            o->real = NULL;
            return erg_diag_set(diag, status_from_errno(er), path, "write error: %s", strerror(er));
        }
        return ERG_OK;
    }
    size_t tlen = strlen(target) + 16;
    o->tmp = malloc(tlen);
    if (!o->tmp) {
        free(o->real);
        o->real = NULL;
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    snprintf(o->tmp, tlen, "%s.tmp.XXXXXX", target);
    /* no temporary is left behind by an interruption: the usual terminating signals wait until
     * the file is renamed into place or removed */
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &block, &o->old);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int er = errno;
        pthread_sigmask(SIG_SETMASK, &o->old, NULL);
        free(o->tmp);
        free(o->real);
        o->tmp = o->real = NULL;
        return erg_diag_set(diag, status_from_errno(er), path,
                            "cannot create a temporary file beside it: %s", strerror(er));
    }
    return ERG_OK;
}

int erg__out_write(void *out, const char *data, size_t len)
{
    erg__out *o = out;
    if (o->err == 0)
        o->err = write_all(o->fd, data, len);
    return o->err;
}

static void out_release(erg__out *o)
{
    if (o->tmp)
        pthread_sigmask(SIG_SETMASK, &o->old, NULL);
    free(o->tmp);
    free(o->real);
    o->tmp = o->real = NULL;
    o->fd = -1;
}

void erg__out_abort(erg__out *o)
{
    if (o->fd >= 0 && !o->is_stdout)
        close(o->fd);
    if (o->tmp)
        unlink(o->tmp);
    out_release(o);
}

int erg__out_commit(erg__out *o, erg_diag *diag)
{
    int w = o->err;
    if (o->is_stdout) {
        o->fd = -1;
        return w ? erg_diag_set(diag, ERG_EIO, "<stdout>", "write error") : ERG_OK;
    }
    if (!o->tmp) { /* a device or FIFO */
        if (close(o->fd) != 0 && w == 0)
            w = errno;
        out_release(o);
        if (w != 0)
            return erg_diag_set(diag, status_from_errno(w), o->path, "write error: %s",
                                strerror(w));
        return ERG_OK;
    }
    if (w == 0) {
        /* keep the mode (and, where allowed, the owner) of a file being replaced; a new file
         * gets 0666 less the umask */
        if (o->exists) {
            (void)fchmod(o->fd, o->st.st_mode & 07777);
            if (fchown(o->fd, o->st.st_uid, o->st.st_gid) != 0) {
                /* not allowed for others' files: the mode still holds */
            }
        } else {
            mode_t um = umask(0);
            umask(um);
            (void)fchmod(o->fd, 0666 & ~um);
        }
        if (fsync(o->fd) != 0)
            w = errno;
    }
    if (close(o->fd) != 0 && w == 0)
        w = errno;
    o->fd = -1;
    int rc = ERG_OK;
    if (w != 0) {
        unlink(o->tmp);
        rc = erg_diag_set(diag, status_from_errno(w), o->path, "write error: %s", strerror(w));
    } else if (rename(o->tmp, o->real ? o->real : o->path) != 0) {
        int er = errno;
        unlink(o->tmp);
        rc = erg_diag_set(diag, status_from_errno(er), o->path, "cannot rename into place: %s",
                          strerror(er));
    }
    out_release(o);
    return rc;
}

int erg__write_file_atomic(const char *path, const void *data, size_t len, erg_diag *diag)
{
    erg__out o;
    int rc = erg__out_open(&o, path, diag);
    if (rc != ERG_OK)
        return rc;
    (void)erg__out_write(&o, data, len);
    return erg__out_commit(&o, diag);
}

int erg_file_write_whole(const char *path, const void *data, size_t len, erg_diag *diag)
{
    if (!path || (!data && len))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "write: NULL argument");
    return erg__write_file_atomic(path, data ? data : "", len, diag);
}
