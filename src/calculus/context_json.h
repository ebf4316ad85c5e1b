/* SPDX-License-Identifier: MIT */
/* Private: context points of a signature <-> JSON ("contexts", "command"), shared by the calculus
 * module (signature/1 files, schedules) and the store. */
#ifndef ERG_CALCULUS_CONTEXT_JSON_H
#define ERG_CALCULUS_CONTEXT_JSON_H

#include <jansson.h>

#include "erg/signature.h"

/* Decode a signature object with its "contexts" and "command" (absent: no points). The null
 * context is decoded as erg__signature_from_json does (default_static_w as there). file and path
 * name the location in messages. Errors: ERG_EPARSE, ERG_EINVAL. */
int erg__context_signature_from_json(const json_t *obj, double default_static_w, const char *file,
                                     const char *path, erg_context_signature *out, erg_diag *diag);

/* Encode as a new JSON object (no tag): the signature's members plus "command" and "contexts"
 * when present. NULL when out of memory. */
json_t *erg__context_signature_to_json(const erg_context_signature *cs);

#endif
