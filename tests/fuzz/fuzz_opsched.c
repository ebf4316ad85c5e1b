/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: frontier operating-set schedule reader. */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/frontier.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("opsched.json", data, size);
    if (!path)
        return 0;
    erg_opsched *os = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_opsched_read_file(path, &os, &diag) == ERG_OK)
        erg_opsched_free(os);
    return 0;
}
