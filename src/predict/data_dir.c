/* SPDX-License-Identifier: MIT */
/* Where the committed models and default grids are found: $ERG_MODEL_DIR / $ERG_GRID_DIR,
 * $ERG_DATA_DIR, the install data dir (relative to the running program, then the configured
 * prefix), the source tree (for the build tree). */
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
