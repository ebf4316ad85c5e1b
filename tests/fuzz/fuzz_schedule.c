/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: schedule/1 reader (jansson expression path and yajl streaming DAG path). */
#include "fuzz_common.h"

#include <erg/calculus.h>
#include <erg/error.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("schedule.json", data, size);
    if (!path)
        return 0;
    erg_schedule *s = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_schedule_read_file(path, &s, &diag) == ERG_OK) {
        const char *out = erg_fuzz_file("out.json", NULL, 0);
        if (out)
            if (erg_schedule_write_file(out, s, &diag) != ERG_OK && diag.status == ERG_OK)
                abort(); /* a failure always says why */
    }
    erg_schedule_free(s);
    return 0;
}
