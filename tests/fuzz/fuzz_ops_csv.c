/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: ops.csv / grid CSV reader. The first byte picks the form (grid or ops). */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/predict.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int grid = data[0] & 1;
    const char *path = erg_fuzz_file("ops.csv", data + 1, size - 1);
    if (!path)
        return 0;
    erg_op_sample *s = NULL;
    size_t n = 0;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_ops_csv_read(path, grid, &s, &n, &diag) == ERG_OK)
        free(s);
    return 0;
}
