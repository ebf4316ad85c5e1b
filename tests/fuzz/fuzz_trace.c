/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: Chrome/Kineto trace reader (plain JSON, from a buffer and from a file). */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    erg_trace *t = erg_trace_new();
    if (!t)
        return 0;
    erg_diag diag;
    erg_diag_clear(&diag);
    /* Any status is fine for arbitrary bytes, but a failure must say so in the diagnostic. */
    int rc = erg_trace_read_buffer(t, data, size, "fuzz", &diag);
    if (rc != ERG_OK && diag.status != rc)
        abort();
    /* The file path sniffs gzip too; read the same bytes again as a second rank. */
    const char *path = erg_fuzz_file("trace.json", data, size);
    if (path) {
        erg_diag_clear(&diag);
        rc = erg_trace_read_file(t, path, &diag);
        if (rc != ERG_OK && diag.status != rc)
            abort();
    }
    erg_trace_stats st;
    erg_trace_get_stats(t, &st);
    erg_trace_free(t);
    return 0;
}
