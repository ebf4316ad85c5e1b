/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: a Chrome/Kineto trace read, matched against the default rules and reported
 * (schedule, composition and per-device accounting: erg trace report). */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/trace.h>

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static erg_rules *rules;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (!rules && erg_rules_default(&rules, &diag) != ERG_OK)
        abort();
    erg_trace *t = erg_trace_new();
    if (!t)
        return 0;
    if (erg_trace_read_buffer(t, data, size, "fuzz", &diag) == ERG_OK) {
        erg_trace_options o;
        erg_trace_options_init(&o);
        erg_trace_report r;
        if (erg_trace_report_make(t, rules, &o, &r, &diag) == ERG_OK) {
            if (!isfinite(r.energy_j) || !isfinite(r.time_s))
                abort();
            erg_trace_report_free(&r);
        }
    }
    erg_trace_free(t);
    return 0;
}
