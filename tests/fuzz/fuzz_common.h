/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer harnesses: most erg readers take a path, so each input is written to a
 * file in a private temporary folder (made once per process) and read back from there. */
#ifndef ERG_FUZZ_COMMON_H
#define ERG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char erg_fuzz_dir[64];

/* Write data to <tmpdir>/<name> and return its path (static buffer), or NULL on failure. */
static inline const char *erg_fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[128];
    if (!erg_fuzz_dir[0]) {
        snprintf(erg_fuzz_dir, sizeof erg_fuzz_dir, "/tmp/erg-fuzz-XXXXXX");
        if (!mkdtemp(erg_fuzz_dir)) {
            erg_fuzz_dir[0] = '\0';
            return NULL;
        }
    }
    snprintf(path, sizeof path, "%s/%s", erg_fuzz_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return NULL;
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
