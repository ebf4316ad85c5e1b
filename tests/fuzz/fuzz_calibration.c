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
    erg_calibration cal;
    erg_diag diag;
    erg_diag_clear(&diag);
    (void)erg_calibration_read_file(path, &cal, &diag);
    return 0;
}
