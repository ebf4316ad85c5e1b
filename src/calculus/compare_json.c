/* SPDX-License-Identifier: MIT */
/* The comparison of two composed reports (paper Section 5.2.2) and its compare/1 document, and
 * the granularity/1 document of Eq. 24: what `erg compare --json` and `erg check-granularity
 * --json` print, written by the library (issue 13: every format erg writes is the library's). */
#include "core/json.h"
#include "erg/calculus.h"

#include <math.h>

/* 12 significant digits (compare/1), 10 (granularity/1): what the CLI printed before. */
#define COMPARE_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))
#define GRANULARITY_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

int erg_report_comparison(const erg_report *a, const erg_report *b, erg_comparison *out)
{
    if (!a || !b || !out)
        return ERG_EINVAL;
    erg_comparison c;
    c.verdict = erg_report_compare(a, b);
    c.difference_j = a->energy_j - b->energy_j;
    c.combined_sd_j = hypot(a->energy_sd_j, b->energy_sd_j);
    c.rounding_j = ERG_ROUNDING_REL * fmax(fabs(a->energy_j), fabs(b->energy_j));
    double mag = fabs(c.difference_j);
    c.digits = 6;
    if (mag <= c.rounding_j) {
        c.kind = ERG_DIFFERENCE_ROUNDING;
        c.difference_j = 0.0;
    } else if (mag < 0.01 * c.combined_sd_j) {
        c.kind = ERG_DIFFERENCE_NOISE;
    } else {
        c.kind = ERG_DIFFERENCE_REAL;
        int lead = (int)floor(log10(mag));
        if (c.combined_sd_j > 0.0)
            c.digits = lead - (int)floor(log10(c.combined_sd_j)) + 3;
        if (c.rounding_j > 0.0 && c.digits > lead - (int)floor(log10(c.rounding_j)))
            c.digits = lead - (int)floor(log10(c.rounding_j));
        c.digits = c.digits < 2 ? 2 : c.digits > 6 ? 6 : c.digits;
    }
    *out = c;
    return ERG_OK;
}

static int num(json_t *o, const char *key, double v)
{
    return erg__json_set_number(o, key, v);
}

/* [lo, hi], each null when not finite */
static json_t *pair(const double v[2])
{
    json_t *a = json_array();
    if (a && (json_array_append_new(a, isfinite(v[0]) ? json_real(v[0]) : json_null()) ||
              json_array_append_new(a, isfinite(v[1]) ? json_real(v[1]) : json_null()))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *side(const char *file, const erg_report *r)
{
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "file", json_string(file)) ||
        num(o, "energy_j", r->energy_j) || num(o, "energy_sd_j", r->energy_sd_j) ||
        json_object_set_new(o, "interval_j", pair(r->interval_j)) || num(o, "time_s", r->time_s) ||
        json_object_set_new(o, "grade", json_string(erg_grade_name(r->grade)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int dump(json_t *o, int bad, const char *path, size_t flags, erg_diag *diag)
{
    int rc = bad || !o ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                       : erg__json_dump_file(o, path, flags, diag);
    json_decref(o);
    return rc;
}

int erg_comparison_write_json(const char *path, const char *a_file, const erg_report *a,
                              const char *b_file, const erg_report *b, const erg_comparison *c,
                              double confidence, erg_diag *diag)
{
    if (!path || !a_file || !a || !b_file || !b || !c)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_comparison_write_json: NULL argument");
    const char *verdict = c->verdict < 0   ? "a_less"
                          : c->verdict > 0 ? "b_less"
                                           : "indistinguishable";
    json_t *o = json_object();
    int bad = !o || json_object_set_new(o, "erg", json_string("compare/1")) ||
              json_object_set_new(o, "a", side(a_file, a)) ||
              json_object_set_new(o, "b", side(b_file, b)) || num(o, "confidence", confidence) ||
              num(o, "difference_j", c->difference_j) ||
              num(o, "combined_sd_j", c->combined_sd_j) ||
              json_object_set_new(o, "verdict", json_string(verdict));
    return dump(o, bad, path, COMPARE_FLAGS, diag);
}

int erg_granularity_write_json(const char *path, const erg_signature *coarse,
                               const erg_report *parts, const erg_granularity *g, double confidence,
                               erg_diag *diag)
{
    if (!path || !coarse || !parts || !g)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_granularity_write_json: NULL argument");
    json_t *o = json_object();
    int bad = !o || json_object_set_new(o, "erg", json_string("granularity/1")) ||
              num(o, "coarse_energy_j", erg_signature_energy_j(coarse)) ||
              num(o, "coarse_energy_sd_j", sqrt(coarse->energy_var_j2)) ||
              num(o, "parts_energy_j", parts->energy_j) ||
              num(o, "parts_energy_sd_j", parts->energy_sd_j) ||
              num(o, "difference_j", g->difference_j) || num(o, "bias_j", g->bias_j) ||
              num(o, "random_j", g->random_j) || num(o, "bound_j", g->bound_j) ||
              num(o, "confidence", confidence) ||
              json_object_set_new(o, "consistent", json_boolean(g->consistent));
    return dump(o, bad, path, GRANULARITY_FLAGS, diag);
}
