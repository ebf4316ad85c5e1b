/* SPDX-License-Identifier: MIT */
/* frontier/1 JSON and CSV writers. */
#include "core/file.h"
#include "core/json.h"
#include "frontier/opsched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *method_name(erg_frontier_method m)
{
    switch (m) {
    case ERG_FRONTIER_APPROX:
        return "epsilon-approximate";
    case ERG_FRONTIER_RELAXATION:
        return "lp-relaxation-rounded";
    default:
        return "exact";
    }
}

static json_t *point_json(const erg_frontier *f, size_t i)
{
    const erg_frontier_point *p = &f->points[i];
    json_t *o = json_object(), *ch = json_object();
    if (!o || !ch) {
        json_decref(o);
        json_decref(ch);
        return NULL;
    }
    int bad = erg__json_set_number(o, "time_s", p->time_s) ||
              erg__json_set_number(o, "energy_j", p->energy_j) ||
              erg__json_set_number(o, "static_energy_j", p->static_energy_j) ||
              erg__json_set_number(o, "dynamic_energy_j", p->dynamic_energy_j) ||
              erg__json_set_number(o, "bound_j", p->bound_j);
    for (size_t k = 0; k < f->n_elements && !bad; k++)
        bad = json_object_set_new(ch, f->element_names[k],
                                  json_integer((json_int_t)f->choices[i * f->n_elements + k]));
    if (bad)
        json_decref(ch); /* not yet o's: set_new takes ch only when it is called */
    else
        bad = json_object_set_new(o, "choice", ch);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int erg_frontier_write_json(const char *path, const erg_frontier *f, size_t plan_idx,
                            erg_diag *diag)
{
    if (!f || !path || (plan_idx != ERG_FRONTIER_NO_PLAN && plan_idx >= f->n_points))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "bad frontier or plan index");
    json_t *root = json_object(), *pts = json_array();
    int bad = !root || !pts;
    bad = bad || json_object_set_new(root, "erg", json_string("frontier/1"));
    bad = bad || json_object_set_new(root, "method", json_string(method_name(f->method)));
    bad = bad || erg__json_set_number(root, "epsilon", f->epsilon);
    bad = bad || erg__json_set_number(root, "max_gap_j", f->max_gap_j);
    for (size_t i = 0; i < f->n_points && !bad; i++) {
        json_t *o = point_json(f, i);
        bad = !o || json_array_append_new(pts, o);
    }
    bad = bad || json_object_set(root, "points", pts);
    if (!bad && plan_idx != ERG_FRONTIER_NO_PLAN) {
        json_t *o = point_json(f, plan_idx);
        bad = !o || json_object_set_new(root, "plan", o);
    }
    json_decref(pts);
    int rc = bad ? erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory")
                 : erg__json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER, diag);
    json_decref(root);
    return rc;
}

/* Append printf output to a growing buffer. */
struct buf {
    char *p;
    size_t n, cap;
    int err;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void bprintf(struct buf *b, const char *fmt, ...)
{
    if (b->err)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->err = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->n + (size_t)k)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->err = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

int erg_frontier_write_csv(const char *path, const erg_frontier *f, size_t plan_idx, erg_diag *diag)
{
    if (!f || !path || (plan_idx != ERG_FRONTIER_NO_PLAN && plan_idx >= f->n_points))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "bad frontier or plan index");
    struct buf b = {0};
    bprintf(&b, "time_s,energy_j,static_energy_j,dynamic_energy_j,bound_j,plan");
    for (size_t k = 0; k < f->n_elements; k++)
        bprintf(&b, ",%s", f->element_names[k]);
    bprintf(&b, "\n");
    for (size_t i = 0; i < f->n_points; i++) {
        const erg_frontier_point *p = &f->points[i];
        bprintf(&b, "%.9g,%.9g,%.9g,%.9g,%.9g,%d", p->time_s, p->energy_j, p->static_energy_j,
                p->dynamic_energy_j, p->bound_j, i == plan_idx);
        for (size_t k = 0; k < f->n_elements; k++)
            bprintf(&b, ",%zu", f->choices[i * f->n_elements + k]);
        bprintf(&b, "\n");
    }
    int rc = b.err ? erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory")
                   : erg__write_file_atomic(path, b.p, b.n, diag);
    free(b.p);
    return rc;
}
