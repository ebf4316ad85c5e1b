/* SPDX-License-Identifier: MIT */
/* Measurement flag names (erg/flags.h): one table for the meter, the measure module, signatures,
 * schedules, reports and the store. */
#include "erg/flags.h"

#include "erg/error.h"

#include <stdio.h>
#include <string.h>

static const char *const names[ERG_FLAG_COUNT] = {
    "wrap_corrected",         "ambiguous_wrap", "backwards",    "glitch",
    "below_resolution",       "stale",          "unit_suspect", "deduplicated",
    "baseline_exceeds_gross", "incomplete"};

const char *erg_flag_name(unsigned bit)
{
    return bit < ERG_FLAG_COUNT ? names[bit] : NULL;
}

int erg_flag_parse(const char *name, unsigned *bit)
{
    if (!name || !bit)
        return ERG_EINVAL;
    for (unsigned i = 0; i < ERG_FLAG_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *bit = 1u << i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

size_t erg_flags_text(unsigned flags, const char *sep, char *buf, size_t size)
{
    size_t need = 0;
    if (!sep)
        sep = ",";
    if (buf && size)
        buf[0] = '\0';
    for (unsigned i = 0; i < ERG_FLAG_COUNT; i++) {
        if (!(flags & (1u << i)))
            continue;
        const char *pre = need ? sep : "";
        if (buf && need < size)
            (void)snprintf(buf + need, size - need, "%s%s", pre, names[i]);
        need += strlen(pre) + strlen(names[i]);
    }
    return need;
}
