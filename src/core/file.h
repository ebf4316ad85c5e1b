/* SPDX-License-Identifier: MIT */
/* Private file helpers: whole-file reads and all-or-nothing writes. */
#ifndef ERG_CORE_FILE_H
#define ERG_CORE_FILE_H

#include <stddef.h>

#include "erg/error.h"

/* Read all of path into a malloc'd, NUL-terminated buffer; *len excludes the NUL. "-" is stdin. */
/* Largest file erg__read_file reads whole (bytes): 1 GiB. Schedules and traces larger than that
 * are streamed by their own readers. */
#define ERG__READ_FILE_MAX (1ull << 30)
int erg__read_file(const char *path, char **out, size_t *len, erg_diag *diag);

/* Write len bytes to path whole or not at all: write "<path>.tmp.XXXXXX" in the same folder,
 * fsync, rename over path. "-" writes stdout. */
int erg__write_file_atomic(const char *path, const void *data, size_t len, erg_diag *diag);

/* Directory part of path into buf ("." when there is none). */
void erg__dirname(const char *path, char *buf, size_t size);

#endif
