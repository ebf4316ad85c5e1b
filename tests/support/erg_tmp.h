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

#endif
