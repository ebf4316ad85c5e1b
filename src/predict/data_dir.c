/* SPDX-License-Identifier: MIT */
/* Where the committed models and default grids are found: $ERG_MODEL_DIR / $ERG_GRID_DIR,
 * $ERG_DATA_DIR, the install data dir (relative to the running program, then the configured
 * prefix), the source tree (for the build tree). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/path.h"
#include "predict/model.h"

#ifndef ERG_PREDICT_SOURCE_DATA_DIR
#define ERG_PREDICT_SOURCE_DATA_DIR "."
#endif
#ifndef ERG_PREDICT_INSTALL_DATA_DIR
#define ERG_PREDICT_INSTALL_DATA_DIR "/usr/local/share/erg"
#endif
#ifndef ERG_PREDICT_BIN_TO_DATA
#define ERG_PREDICT_BIN_TO_DATA "../share/erg"
#endif

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* path, without "bin/.." and links, into buf */
static int found(const char *path, char *buf, size_t *size)
{
    char real[PATH_MAX];
    return erg__path_put(buf, size, "%s", realpath(path, real) ? real : path);
}

int erg__data_path(const char *sub, const char *env_dir, const char *file, char *buf, size_t *size)
{
    const char *dir = getenv(env_dir);
    if (dir && *dir) /* the folder itself, as named: no fallback */
        return erg__path_put(buf, size, "%s/%s", dir, file);
    dir = getenv("ERG_DATA_DIR");
    if (dir && *dir)
        return erg__path_put(buf, size, "%s/%s/%s", dir, sub, file);
    char cand[PATH_MAX + 64];
    /* An installed erg, wherever the prefix was moved to (cmake --install --prefix, DESTDIR):
     * <bindir>/<relative path to datadir>/erg, from the running program's directory. */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand, sizeof cand, "%s/%s/%s/%s", exe, ERG_PREDICT_BIN_TO_DATA, sub, file);
            if (readable(cand))
                return found(cand, buf, size);
        }
    }
    snprintf(cand, sizeof cand, "%s/%s/%s", ERG_PREDICT_INSTALL_DATA_DIR, sub, file);
    if (readable(cand))
        return found(cand, buf, size);
    snprintf(cand, sizeof cand, "%s/%s/%s", ERG_PREDICT_SOURCE_DATA_DIR, sub, file);
    if (readable(cand))
        return found(cand, buf, size);
    /* none exists: name where an installed erg keeps it */
    return erg__path_put(buf, size, "%s/%s/%s", ERG_PREDICT_INSTALL_DATA_DIR, sub, file);
}

/* Add to names[*n] (at most cap, each < 64 bytes) the sub-folders of dir holding member. */
static void list_dir(const char *dir, const char *member, char names[][64], size_t cap, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *n < cap) {
        char cand[PATH_MAX + 64];
        if (e->d_name[0] == '.' || strlen(e->d_name) >= 64)
            continue;
        int w = snprintf(cand, sizeof cand, "%s/%s/%s", dir, e->d_name, member);
        if (w < 0 || (size_t)w >= sizeof cand || !readable(cand))
            continue;
        size_t i = 0;
        while (i < *n && strcmp(names[i], e->d_name) != 0)
            i++;
        if (i == *n)
            snprintf(names[(*n)++], 64, "%s", e->d_name);
    }
    closedir(d);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

size_t erg__data_list(const char *sub, const char *env_dir, const char *member, char *buf,
                      size_t size)
{
    char dirs[3][PATH_MAX];
    int nd = 0;
    const char *dir = getenv(env_dir);
    const char *data = getenv("ERG_DATA_DIR");
    if (dir && *dir)
        snprintf(dirs[nd++], sizeof dirs[0], "%.4000s", dir);
    else if (data && *data)
        snprintf(dirs[nd++], sizeof dirs[0], "%.3900s/%.50s", data, sub);
    else {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
        if (slash) {
            *slash = '\0';
            snprintf(dirs[nd++], sizeof dirs[0], "%.3500s/%.400s/%.50s", exe,
                     ERG_PREDICT_BIN_TO_DATA, sub);
        }
        snprintf(dirs[nd++], sizeof dirs[0], "%.3900s/%.50s", ERG_PREDICT_INSTALL_DATA_DIR, sub);
        snprintf(dirs[nd++], sizeof dirs[0], "%.3900s/%.50s", ERG_PREDICT_SOURCE_DATA_DIR, sub);
    }
    char names[64][64];
    size_t n = 0;
    for (int i = 0; i < nd; i++)
        list_dir(dirs[i], member, names, 64, &n);
    qsort(names, n, sizeof names[0], by_name);
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < n && size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
    return n;
}
