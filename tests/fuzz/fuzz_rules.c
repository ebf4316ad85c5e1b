/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: rules/1 reader (buffer path). */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Signature names resolve against an empty private folder, and never the user's store. */
    setenv("ERG_STORE", "/nonexistent/erg-fuzz.db", 1);
    if (!erg_fuzz_file("placeholder", NULL, 0))
        return 0;
    erg_rules *r = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_rules_read_buffer((const char *)data, size, "fuzz", erg_fuzz_dir, &r, &diag) == ERG_OK)
        erg_rules_free(r);
    return 0;
}
