/* SPDX-License-Identifier: MIT */
/* The refine/1 document (what `erg refine --json` prints: the composition at realized contexts
 * before and after refinement, the ranked candidates with the commands that characterize them,
 * the points measured) and those commands, written by the library (issue 13: every format erg
 * writes is the library's; the CLI only parses and prints). */
#include "core/json.h"
#include "erg/calculus.h"

#include <math.h>
#include <string.h>

#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* Append s single-quoted for a POSIX shell (a ' becomes '\'') at buf + *k, counting what does
 * not fit (buf NULL: count only). */
static void put(char *buf, size_t cap, size_t *k, const char *s, size_t n)
{
    if (buf && *k + n < cap)
        memcpy(buf + *k, s, n);
    *k += n;
}

static void put_quoted(char *buf, size_t cap, size_t *k, const char *s)
{
    put(buf, cap, k, "'", 1);
    for (const char *p = s; *p; p++)
        if (*p == '\'')
            put(buf, cap, k, "'\\''", 4);
        else
            put(buf, cap, k, p, 1);
    put(buf, cap, k, "'", 1);
}

static void put_str(char *buf, size_t cap, size_t *k, const char *s)
{
    put(buf, cap, k, s, strlen(s));
}

/* Build the command into buf (cap bytes, may be NULL) and return its length. */
static size_t command(const erg_refine_candidate *c, const erg_context_set *set, char *buf,
                      size_t cap)
{
    const erg_context_signature *a = set ? erg_context_set_find(set, c->a) : NULL,
                                *b = set ? erg_context_set_find(set, c->b) : NULL;
    size_t k = 0;
    put_str(buf, cap, &k, "erg characterize --name ");
    put_str(buf, cap, &k, c->b);
    put_str(buf, cap, &k, c->runtime ? " --with " : " --after ");
    put_str(buf, cap, &k, c->a);
    put_str(buf, cap, &k, "=");
    put_quoted(buf, cap, &k, a && a->command[0] ? a->command : "CMD_OF_A");
    put_str(buf, cap, &k, " -o ");
    put_str(buf, cap, &k, c->b);
    put_str(buf, cap, &k, ".json -- sh -c ");
    put_quoted(buf, cap, &k, b && b->command[0] ? b->command : "CMD_OF_B");
    return k;
}

int erg_refine_command(const erg_refine_candidate *c, const erg_context_set *set, char *buf,
                       size_t *size)
{
    if (!c || !buf || !size)
        return ERG_EINVAL;
    size_t n = command(c, set, NULL, 0);
    if (n + 1 > *size) {
        *size = n + 1;
        return ERG_ERANGE;
    }
    command(c, set, buf, *size);
    buf[n] = '\0';
    *size = n;
    return ERG_OK;
}

static int num(json_t *o, const char *key, double v)
{
    return erg__json_set_number(o, key, v);
}

/* A member that takes v (NULL: out of memory, reported as failure) */
static int set(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v);
}

static json_t *finish(json_t *o, int bad)
{
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *report_json(const erg_context_report *r)
{
    const erg_report *p = &r->report;
    json_t *o = json_object(), *iv = json_array();
    int bad = !o || !iv || num(o, "energy_j", p->energy_j) ||
              num(o, "energy_sd_j", p->energy_sd_j) ||
              json_array_append_new(iv, isfinite(p->interval_j[0]) ? json_real(p->interval_j[0])
                                                                   : json_null()) ||
              json_array_append_new(iv, isfinite(p->interval_j[1]) ? json_real(p->interval_j[1])
                                                                   : json_null());
    if (bad) {
        json_decref(iv);
        return finish(o, 1);
    }
    bad = set(o, "interval_j", iv) || num(o, "time_s", p->time_s) ||
          num(o, "bias_bound_j", p->bias_bound_j) ||
          num(o, "null_bias_bound_j", r->null_bias_bound_j) ||
          num(o, "covariance_j2", r->covariance_j2) ||
          set(o, "characterized_nodes", json_integer((json_int_t)r->n_characterized)) ||
          set(o, "nodes", json_integer((json_int_t)r->n_nodes)) ||
          set(o, "grade", json_string(erg_grade_name(p->grade)));
    if (!bad && p->has_deviation) {
        json_t *dv = json_object();
        bad = !dv || num(dv, "measured_j", p->measured_j) ||
              num(dv, "measured_sd_j", p->measured_sd_j) ||
              num(dv, "difference_j", p->measured_j - p->energy_j) ||
              num(dv, "z", p->deviation_z) ||
              set(dv, "detected", json_boolean(p->deviation_detected));
        if (bad)
            json_decref(dv);
        else
            bad = set(o, "deviation", dv);
    }
    return finish(o, bad);
}

static json_t *candidate_json(const erg_refine_candidate *c, const erg_context_set *cs)
{
    char cmd[ERG_REFINE_COMMAND_MAX];
    size_t n = sizeof cmd;
    if (erg_refine_command(c, cs, cmd, &n) != ERG_OK)
        return NULL; /* cannot happen: ERG_REFINE_COMMAND_MAX holds any */
    json_t *o = json_object();
    int bad = !o || set(o, "kind", json_string(c->runtime ? "runtime" : "entry")) ||
              set(o, "a", json_string(c->a)) || set(o, "b", json_string(c->b)) ||
              set(o, "occurrences", json_integer((json_int_t)c->occurrences)) ||
              num(o, "per_occurrence_j", c->per_occurrence_j) ||
              num(o, "explain_j", c->explain_j) ||
              set(o, "estimated_from_points", json_boolean(c->estimated_from_points)) ||
              set(o, "command", json_string(cmd));
    return finish(o, bad);
}

static json_t *point_json(const erg_refine_point *p)
{
    json_t *o = json_object();
    int bad = !o || set(o, "signature", json_string(p->signature)) ||
              set(o, "point", json_string(p->point)) || num(o, "time_s", p->time_s) ||
              num(o, "energy_j", p->energy_j) || num(o, "null_energy_j", p->null_energy_j);
    return finish(o, bad);
}

int erg_refine_write_json(const char *path, const erg_refine_outcome *o, erg_diag *diag)
{
    if (!path || !o || !o->before || (o->n_candidates && !o->candidates) ||
        (o->n_characterized && !o->characterized))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_refine_write_json: NULL argument");
    json_t *root = json_object(), *jc = json_array(), *jd = json_array();
    int bad = !root || !jc || !jd;
    for (size_t i = 0; !bad && i < o->n_candidates; i++)
        bad = json_array_append_new(jc, candidate_json(&o->candidates[i], o->set));
    for (size_t i = 0; !bad && i < o->n_characterized; i++)
        bad = json_array_append_new(jd, point_json(&o->characterized[i]));
    if (bad) {
        json_decref(jc);
        json_decref(jd);
    } else {
        bad = set(root, "erg", json_string("refine/1")) ||
              set(root, "before", report_json(o->before));
        if (bad) {
            json_decref(jc);
            json_decref(jd);
        } else {
            bad = set(root, "candidates", jc);
            bad = set(root, "characterized", jd) || bad;
            if (!bad && o->after)
                bad = set(root, "after", report_json(o->after));
        }
    }
    int rc = bad || !root ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                          : erg__json_dump_file(root, path, FLAGS, diag);
    json_decref(root);
    return rc;
}
