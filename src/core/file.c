/* SPDX-License-Identifier: MIT */
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
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

int erg__read_file(const char *path, char **out, size_t *len, erg_diag *diag)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return erg_diag_set(diag, status_from_errno(errno), path, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        if (f != stdin)
            fclose(f);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory reading the file");
    }
    for (;;) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                if (f != stdin)
                    fclose(f);
                return erg_diag_set(diag, ERG_EIO, path, "read error: %s", strerror(e));
            }
            break;
        }
        char *nb = realloc(buf, 2 * cap + 1);
        if (!nb) {
            free(buf);
            if (f != stdin)
                fclose(f);
            return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory reading the file");
        }
        buf = nb;
        cap *= 2;
    }
    if (f != stdin)
        fclose(f);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return ERG_OK;
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

int erg__write_file_atomic(const char *path, const void *data, size_t len, erg_diag *diag)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
            return erg_diag_set(diag, ERG_EIO, "<stdout>", "write error");
        return ERG_OK;
    }
    size_t tlen = strlen(path) + 16;
    char *tmp = malloc(tlen);
    if (!tmp)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    snprintf(tmp, tlen, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return erg_diag_set(diag, status_from_errno(e), path, "cannot create a temporary file beside it: %s",
                            strerror(e));
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return erg_diag_set(diag, ERG_EIO, path, "write error: %s", strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    /* mkstemp creates 0600; give the file the usual 0644 less the umask. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return erg_diag_set(diag, ERG_EIO, path, "write error: %s", strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return erg_diag_set(diag, status_from_errno(e), path, "cannot rename into place: %s", strerror(e));
    }
    free(tmp);
    return ERG_OK;
}
