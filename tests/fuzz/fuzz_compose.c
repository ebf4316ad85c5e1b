/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: schedule/1 read and composed (expression and DAG, with a few Monte Carlo
 * samples), then the report written; a composed figure is never NaN or infinite. */
#include "fuzz_common.h"

#include <erg/calculus.h>
#include <erg/error.h>

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("compose.json", data, size);
    if (!path)
        return 0;
    erg_schedule *s = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_schedule_read_file(path, &s, &diag) != ERG_OK)
        return 0;
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.mc_samples = size % 2 ? 8 : 0;
    o.warm_start = size % 4 >= 2;
    erg_report r;
    if (erg_schedule_compose(s, &o, &r, &diag) == ERG_OK) {
        if (!isfinite(r.energy_j) || !isfinite(r.time_s) || !isfinite(r.energy_sd_j) ||
            !isfinite(r.time_sd_s) || !isfinite(r.static_energy_j) ||
            !isfinite(r.dynamic_energy_j) || (r.has_mc && !isfinite(r.mc_energy_j)))
            abort(); /* compose promises finite figures or ERG_ERANGE */
        const char *out = erg_fuzz_file("report.json", NULL, 0);
        if (out)
            if (erg_report_write_file(out, &r, &diag) != ERG_OK && diag.status == ERG_OK)
                abort(); /* a failure always says why */
        erg_report_free(&r);
    }
    erg_schedule_free(s);
    return 0;
}
