/* SPDX-License-Identifier: MIT */
/* Temporary folders and files for tests: one per test group, removed whole at teardown. */
#ifndef ERG_TEST_TMP_H
#define ERG_TEST_TMP_H

#include "support/erg_test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Create /tmp/erg-<tag>.XXXXXX into dir (size bytes). Returns 0 or -1, as a cmocka setup does. */
static inline int erg_tmp_new(char *dir, size_t size, const char *tag)
{
    snprintf(dir, size, "/tmp/erg-%s.XXXXXX", tag);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int erg_tmp__rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Remove dir and everything under it. Returns 0 or -1, as a cmocka teardown does. */
static inline int erg_tmp_free(const char *dir)
{
    return dir[0] ? nftw(dir, erg_tmp__rm, 16, FTW_DEPTH | FTW_PHYS) : 0;
}

/* Write text to dir/name and return the path (a static buffer, valid until the next call). */
static inline const char *erg_tmp_put(const char *dir, const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* dir/name in one of eight static buffers (so up to eight paths can be held at once). */
static inline const char *erg_tmp_path(const char *dir, const char *name)
{
    static char p[8][512];
    static unsigned k;
    char *q = p[k++ % 8];
    snprintf(q, sizeof p[0], "%s/%s", dir, name);
    return q;
}

/* The whole text of the file at path, in a static 64 KiB buffer valid until the next call; the
 * test fails when the file cannot be read or does not fit. */
static inline char *erg_tmp_slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot be read", path);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n == sizeof buf)
        fail_msg("%s: longer than the test's %zu-byte buffer", path, sizeof buf - 1);
    buf[n] = '\0';
    return buf;
}

#endif
