/* SPDX-License-Identifier: MIT */
/* A schedule of one element (erg_schedule_of_signature): what a signature or a measurement
 * stands for where a schedule is expected (`erg compare A B`). */
#include "erg/calculus.h"

#include <math.h>

int erg_schedule_of_signature(const erg_signature *sig, erg_schedule **out, erg_diag *diag)
{
    if (!sig || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "schedule_of_signature: NULL argument");
    *out = NULL;
    erg_schedule *s = erg_schedule_new();
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    int rc = erg_schedule_add_device(s, sig->device, sig->static_power_w, (double)NAN, diag);
    if (rc == ERG_OK)
        rc = erg_schedule_add_signature(s, sig, diag);
    if (rc == ERG_OK)
        rc = erg_schedule_add_node(s, "work", sig->name, NULL, (double)NAN, diag);
    if (rc != ERG_OK) {
        erg_schedule_free(s);
        return rc;
    }
    *out = s;
    return ERG_OK;
}
