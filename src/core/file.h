/* SPDX-License-Identifier: MIT */
/* Private file helpers: whole-file reads and all-or-nothing writes. */
#ifndef ERG_CORE_FILE_H
#define ERG_CORE_FILE_H

#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/stat.h>

#include "erg/error.h"

/* Read all of path into a malloc'd, NUL-terminated buffer; *len excludes the NUL. "-" is stdin. */
/* Largest file erg__read_file reads whole (bytes): 1 GiB. Schedules and traces larger than that
 * are streamed by their own readers. */
#define ERG__READ_FILE_MAX (1ull << 30)
int erg__read_file(const char *path, char **out, size_t *len, erg_diag *diag);

/* The parts of erg__read_file, for a reader that streams a regular file: erg__open_read opens
 * path with the same checks and messages (NULL with the status in *status on failure) and sets
 * *seekable to 1 for a regular file, which may be read in chunks and read again, 0 for standard
 * input or a pipe; erg__read_all reads the rest of f whole (as erg__read_file: NUL-terminated,
 * at most ERG__READ_FILE_MAX bytes); erg__close_read closes f (never standard input). */
FILE *erg__open_read(const char *path, int *seekable, erg_diag *diag, int *status);
int erg__read_all(FILE *f, const char *path, char **out, size_t *len, erg_diag *diag);
void erg__close_read(FILE *f);

/* Write len bytes to path whole or not at all: write "<path>.tmp.XXXXXX" in the same folder,
 * fsync, rename over path. "-" writes stdout. */
int erg__write_file_atomic(const char *path, const void *data, size_t len, erg_diag *diag);

/* The same, streamed: erg__out_open, erg__out_write as often as needed (it is an erg__jw_sink),
 * then erg__out_commit (fsync, rename into place) or erg__out_abort (the temporary is removed:
 * nothing half-written). A symlink is followed, never replaced; a character device or FIFO is
 * written into (so whatever was written before an error stays there, as with any stream), a folder
 * or block device refused; "-" writes stdout. The usual terminating signals wait from open to
 * commit or abort, so that no temporary is left behind. */
typedef struct erg__out {
    int fd;
    int is_stdout;
    int exists; /* the target exists (st holds its mode and owner) */
    struct stat st;
    char *real; /* the symlink's target, malloc'd, or NULL */
    char *tmp;  /* the temporary beside the target, or NULL (stdout, device, FIFO) */
    const char *path;
    sigset_t old;
    int err; /* first write errno */
} erg__out;
int erg__out_open(erg__out *o, const char *path, erg_diag *diag);
/* Append len bytes; returns 0 or the first errno (kept for erg__out_commit). */
int erg__out_write(void *o, const char *data, size_t len);
int erg__out_commit(erg__out *o, erg_diag *diag);
void erg__out_abort(erg__out *o);

/* Directory part of path into buf ("." when there is none). */
void erg__dirname(const char *path, char *buf, size_t size);

#endif
