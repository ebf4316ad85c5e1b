/* SPDX-License-Identifier: MIT */
/* The profiler's energy window over erg's meters: one measure window per batch. */
#include <math.h>
#include <stdlib.h>

#include "erg/measure.h"
#include "erg/predict.h"

static const char window_name[] = "erg-profile-batch";

static int mon_begin(void *ud, erg_diag *diag)
{
    return erg_window_begin(ud, window_name, diag);
}

static int mon_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag)
{
    (void)elapsed_s;                        /* the meter keeps its own clock */
    erg_measurement *r = malloc(sizeof *r); /* per-channel readings: too big for the stack */
    if (!r) { /* drop the window: it fails only when none is open, and ENOMEM is what to say */
        int cancel_rc = erg_window_cancel(ud, window_name);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory%s",
                            cancel_rc == ERG_OK ? "" : " (no profiling window was open)");
    }
    int rc = erg_window_end(ud, window_name, 0, r, diag);
    if (rc == ERG_OK && !isfinite(r->total_energy_j))
        rc = erg_diag_set(
            diag, ERG_ENODEV, NULL,
            "the meter gave no total energy for a profiling window (see 'erg meters')");
    if (rc == ERG_OK) {
        *energy_j = r->total_energy_j;
        *grade = r->total_grade;
    }
    free(r);
    return rc;
}

int erg_profile_energy_monitor(struct erg_monitor *mon, erg_energy_window *out)
{
    if (!mon || !out)
        return ERG_EINVAL;
    out->ud = mon;
    out->begin = mon_begin;
    out->end = mon_end;
    return ERG_OK;
}
