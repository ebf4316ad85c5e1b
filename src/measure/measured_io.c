/* SPDX-License-Identifier: MIT */
/* Work measured directly as an operand of the calculus: a signature/1 or measurement/1 file where
 * a schedule (`erg compare`) or a measured energy (`erg refine --measured`) is expected. Was the
 * CLI's (cmd_compare.c, cmd_refine.c): the library owns it, so C and Python callers read these
 * files as the commands do. The measure module may use the calculus (it writes signatures). */
#include "erg/measure.h"

#include "core/json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { KIND_OTHER, KIND_SIGNATURE, KIND_MEASUREMENT };

/* The kind the "erg" tag of root declares. */
static int kind_of(const json_t *root)
{
    const char *tag = json_string_value(json_object_get(root, "erg"));
    if (!tag)
        return KIND_OTHER;
    if (strncmp(tag, "signature/", 10) == 0)
        return KIND_SIGNATURE;
    if (strncmp(tag, "measurement/", 12) == 0)
        return KIND_MEASUREMENT;
    return KIND_OTHER;
}

static int read_kind(const char *path, int kind, erg_signature *out, erg_diag *diag)
{
    return kind == KIND_SIGNATURE ? erg_signature_read_file(path, out, diag)
                                  : erg_measurement_read_signature(path, out, diag);
}

int erg_measured_read_signature(const char *path, erg_signature *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "measured_read_signature: NULL argument");
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    int kind = kind_of(root);
    json_decref(root);
    if (kind == KIND_OTHER)
        return erg_diag_set(diag, ERG_EPARSE, path,
                            "expected a signature/1 (erg characterize --schedule) or a "
                            "measurement/1 (erg measure --json)");
    return read_kind(path, kind, out, diag);
}

int erg_measured_read(const char *path, erg_measured *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "measured_read: NULL argument");
    erg_signature s;
    int rc = erg_measured_read_signature(path, &s, diag);
    if (rc != ERG_OK)
        return rc;
    out->runs = s.runs ? s.runs : 1;
    out->energy_j = erg_signature_energy_j(&s);
    out->energy_sd_j = sqrt(s.energy_var_j2 / (double)out->runs);
    return ERG_OK;
}

int erg_compose_file(const char *path, const erg_compose_options *opts, erg_report *out,
                     erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "compose_file: NULL argument");
    /* a file that does not load as JSON, or carries another tag, goes to the schedule reader,
     * which names what it is (a trace, a gzip file, another erg format) and where it breaks */
    json_t *root = NULL;
    erg_diag sniff;
    erg_diag_clear(&sniff);
    int kind = erg__json_load_file(path, &root, &sniff) == ERG_OK ? kind_of(root) : KIND_OTHER;
    json_decref(root);
    erg_schedule *s = NULL;
    int rc;
    if (kind == KIND_OTHER) {
        rc = erg_schedule_read_file(path, &s, diag);
    } else {
        erg_signature sig;
        rc = read_kind(path, kind, &sig, diag);
        if (rc == ERG_OK)
            rc = erg_schedule_of_signature(&sig, &s, diag);
    }
    if (rc == ERG_OK)
        rc = erg_schedule_compose(s, opts, out, diag);
    erg_schedule_free(s);
    if (rc != ERG_OK && diag && !diag->where[0])
        snprintf(diag->where, sizeof diag->where, "%s", path);
    return rc;
}
