/* SPDX-License-Identifier: MIT */
/* The insensitive/1 and insensitive-pair/1 documents (what `erg insensitive [--pair] --json`
 * prints): the library writes them (issue 13: every format erg writes is the library's), so that
 * the CLI only parses and prints. */
#include "core/json.h"
#include "erg/calculus.h"

#include <stdio.h>

#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))

/* A number member (null when not finite: JSON has no NaN). */
static int num(json_t *o, const char *key, double v)
{
    return erg__json_set_number(o, key, v);
}

/* true, false or null (-1: not known) */
static json_t *tristate(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static int dump(json_t *o, int bad, const char *path, erg_diag *diag)
{
    int rc = bad || !o ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                       : erg__json_dump_file(o, path, FLAGS, diag);
    json_decref(o);
    return rc;
}

int erg_insensitivity_write_json(const char *path, const erg_insensitivity *r, double confidence,
                                 erg_diag *diag)
{
    if (!path || !r)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_insensitivity_write_json: NULL argument");
    json_t *o = json_object();
    int bad = !o || json_object_set_new(o, "erg", json_string("insensitive/1")) ||
              num(o, "delta_s_w", r->delta_s_w) || num(o, "delta_t_s", r->delta_t_s) ||
              num(o, "delta_d_j", r->delta_d_j) || num(o, "lhs_j", r->lhs_j) ||
              num(o, "tolerance_j", r->tolerance_j) || num(o, "confidence", confidence) ||
              json_object_set_new(o, "insensitive", json_boolean(r->insensitive));
    return dump(o, bad, path, diag);
}

static json_t *side_json(const erg_set_insensitivity *x)
{
    json_t *o = json_object();
    int bad = !o ||
              json_object_set_new(o, "points_tested", json_integer((json_int_t)x->n_tested)) ||
              json_object_set_new(o, "insensitive", tristate(x->insensitive)) ||
              num(o, "lhs_j", x->lhs_j) || num(o, "tolerance_j", x->tolerance_j) ||
              json_object_set_new(o, "point", json_string(x->point));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int erg_pair_verdict_write_json(const char *path, const char *a, const char *b,
                                const erg_pair_verdict *v, double confidence, erg_diag *diag)
{
    if (!path || !a || !b || !v)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_pair_verdict_write_json: NULL argument");
    json_t *o = json_object();
    int bad = !o || json_object_set_new(o, "erg", json_string("insensitive-pair/1")) ||
              json_object_set_new(o, "a", json_string(a)) ||
              json_object_set_new(o, "b", json_string(b)) || num(o, "confidence", confidence) ||
              json_object_set_new(o, "history_a", side_json(&v->history_a)) ||
              json_object_set_new(o, "history_b", side_json(&v->history_b)) ||
              json_object_set_new(o, "interference_a", side_json(&v->interference_a)) ||
              json_object_set_new(o, "interference_b", side_json(&v->interference_b)) ||
              json_object_set_new(o, "history", tristate(v->history)) ||
              json_object_set_new(o, "interference", tristate(v->interference)) ||
              json_object_set_new(o, "mutual", tristate(v->mutual));
    return dump(o, bad, path, diag);
}
