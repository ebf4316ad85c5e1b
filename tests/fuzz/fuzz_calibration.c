/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: calibration/1 reader (erg_calibration_read_file). */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/measure.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("calibration.json", data, size);
    if (!path)
        return 0;
    erg_calibration *cal = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_calibration_read_file(path, &cal, &diag) == ERG_OK)
        erg_calibration_free(cal);
    else if (cal)
        abort(); /* NULL on failure */
    return 0;
}
