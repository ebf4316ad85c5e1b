/* SPDX-License-Identifier: MIT */
/* Signatures as functions of context: characterized entry and runtime context points beside the
 * null-context isolation values (energy-calculus paper Sections 3.1, 3.2, 3.4, 4.4), and their
 * signature/1 form ("contexts", "command"). */
#include "calculus/context_json.h"
#include "calculus/sig_json.h"
#include "core/file.h"
#include "core/json.h"
#include "erg/calculus.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mechanism_names[] = {"thermal", "cache", "power_delivery", "contention"};

const char *erg_mechanism_name(erg_mechanism m)
{
    return (unsigned)m < 4 ? mechanism_names[m] : NULL;
}

int erg_mechanism_parse(const char *name, erg_mechanism *out)
{
    for (unsigned i = 0; name && i < 4; i++)
        if (strcmp(name, mechanism_names[i]) == 0) {
            *out = (erg_mechanism)i;
            return ERG_OK;
        }
    return ERG_EINVAL;
}

void erg_context_point_init(erg_context_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->mechanism = ERG_MECHANISM_CACHE;
    pt->traffic_bytes = NAN;
    pt->temperature_c = NAN;
}

void erg_context_signature_init(erg_context_signature *cs)
{
    memset(cs, 0, sizeof *cs);
    erg_signature_init(&cs->null_context);
}

/* A copy of names[0..n) in one block that names_free releases: the n pointers, then the
 * strings. *out is NULL when n is 0. Errors: ERG_ENOMEM (*out NULL). */
static int names_dup(const char *const *names, size_t n, const char *const **out)
{
    *out = NULL;
    if (!n)
        return ERG_OK;
    if (n > SIZE_MAX / sizeof(char *))
        return ERG_ENOMEM;
    size_t bytes = n * sizeof(char *);
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(names[k]) + 1;
        if (bytes > SIZE_MAX - len)
            return ERG_ENOMEM;
        bytes += len;
    }
    char **blk = malloc(bytes);
    if (!blk)
        return ERG_ENOMEM;
    char *text = (char *)(blk + n);
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(names[k]) + 1;
        memcpy(text, names[k], len);
        blk[k] = text;
        text += len;
    }
    *out = (const char *const *)blk;
    return ERG_OK;
}

/* Free a names_dup block (a point's names are const to its readers; the cast goes through
 * uintptr_t, as erg__json_mut's, so that -Wcast-qual stays quiet). */
static void names_free(const char *const *names)
{
    free((void *)(uintptr_t)names);
}

void erg_context_signature_release(erg_context_signature *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n_points; i++)
        names_free(cs->points[i].corunners);
    free(cs->points);
    erg_context_signature_init(cs);
}

int erg_context_signature_copy(erg_context_signature *dst, const erg_context_signature *src)
{
    if (!dst || !src || dst == src)
        return ERG_EINVAL;
    erg_context_point *pts = NULL;
    if (src->n_points) {
        pts = malloc(src->n_points * sizeof *pts);
        if (!pts)
            return ERG_ENOMEM;
        memcpy(pts, src->points, src->n_points * sizeof *pts);
        for (size_t i = 0; i < src->n_points; i++)
            if (names_dup(src->points[i].corunners, src->points[i].n_corunners,
                          &pts[i].corunners) != ERG_OK) {
                while (i-- > 0)
                    names_free(pts[i].corunners);
                free(pts);
                return ERG_ENOMEM;
            }
    }
    *dst = *src;
    dst->points = pts;
    dst->capacity = src->n_points;
    return ERG_OK;
}

static void point_as_signature(const erg_signature *null_ctx, const erg_context_point *pt,
                               erg_signature *out)
{
    *out = *null_ctx;
    out->static_power_w = pt->static_power_w;
    out->time_s = pt->time_s;
    out->dynamic_energy_j = pt->dynamic_energy_j;
    out->time_var_s2 = pt->time_var_s2;
    out->energy_var_j2 = pt->energy_var_j2;
    out->runs = pt->runs;
}

int erg_context_point_signature(const erg_context_signature *cs, size_t i, erg_signature *out)
{
    if (!cs || !out || i >= cs->n_points)
        return ERG_EINVAL;
    point_as_signature(&cs->null_context, &cs->points[i], out);
    return ERG_OK;
}

/* The checks of erg_context_signature_add. */
static int point_check(const erg_context_signature *cs, const erg_context_point *pt, erg_diag *diag)
{
    if (!pt->name[0])
        return erg_diag_set(diag, ERG_EINVAL, NULL, "a context point needs a name");
    if (!erg_mechanism_name(pt->mechanism))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "context point %s: unknown mechanism",
                            pt->name);
    if (pt->n_corunners && !pt->corunners)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "context point %s: %zu co-runners, no names",
                            pt->name, pt->n_corunners);
    for (size_t k = 0; k < pt->n_corunners; k++)
        if (!pt->corunners[k] || !pt->corunners[k][0])
            return erg_diag_set(diag, ERG_EINVAL, NULL, "context point %s: empty co-runner name",
                                pt->name);
    if (!(isnan(pt->traffic_bytes) || (isfinite(pt->traffic_bytes) && pt->traffic_bytes >= 0)))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "context point %s: traffic_bytes must be >= 0 (got %g)", pt->name,
                            pt->traffic_bytes);
    if (!(isnan(pt->temperature_c) || isfinite(pt->temperature_c)))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "context point %s: temperature_c not finite",
                            pt->name);
    erg_signature sig;
    point_as_signature(&cs->null_context, pt, &sig);
    if (isnan(sig.static_power_w)) /* left to the device, as the null context's may be */
        sig.static_power_w = 0.0;
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(&sig, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "context point %s: %s", pt->name, sub.detail);
    return ERG_OK;
}

/* Put pt, a checked point whose co-runner names the signature is to own, into cs (replacing the
 * point of its name). Errors: ERG_ENOMEM (cs unchanged; pt's names stay the caller's). */
static int point_insert(erg_context_signature *cs, const erg_context_point *pt, erg_diag *diag)
{
    for (size_t i = 0; i < cs->n_points; i++)
        if (strcmp(cs->points[i].name, pt->name) == 0) {
            names_free(cs->points[i].corunners);
            cs->points[i] = *pt;
            return ERG_OK;
        }
    if (cs->n_points == cs->capacity) {
        /* realloc leaves the old storage as it was when it fails: cs unchanged */
        size_t cap = cs->capacity ? 2 * cs->capacity : 8;
        if (cap < cs->capacity || cap > SIZE_MAX / sizeof *cs->points)
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "context point %s: too many points",
                                pt->name);
        erg_context_point *grown = realloc(cs->points, cap * sizeof *grown);
        if (!grown)
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "context point %s: out of memory",
                                pt->name);
        cs->points = grown;
        cs->capacity = cap;
    }
    cs->points[cs->n_points++] = *pt;
    return ERG_OK;
}

int erg_context_signature_add(erg_context_signature *cs, const erg_context_point *pt,
                              erg_diag *diag)
{
    if (!cs || !pt)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_signature_add: NULL argument");
    int rc = point_check(cs, pt, diag);
    if (rc != ERG_OK)
        return rc;
    erg_context_point own = *pt;
    if (names_dup(pt->corunners, pt->n_corunners, &own.corunners) != ERG_OK)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "context point %s: out of memory", pt->name);
    rc = point_insert(cs, &own, diag);
    if (rc != ERG_OK)
        names_free(own.corunners);
    return rc;
}

static int in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(list[k], name) == 0)
            return 1;
    return 0;
}

int erg_context_signature_find(const erg_context_signature *cs, const char *after,
                               const char *const *corunners, size_t n)
{
    if (!cs)
        return -1;
    if (!after)
        after = "";
    for (size_t i = 0; i < cs->n_points; i++) {
        const erg_context_point *p = &cs->points[i];
        if (strcmp(p->after, after) != 0)
            continue;
        int same = 1;
        const char *const *pc = p->corunners;
        for (size_t k = 0; same && k < p->n_corunners; k++)
            same = in_list(pc[k], corunners, n);
        for (size_t k = 0; same && k < n; k++)
            same = in_list(corunners[k], pc, p->n_corunners);
        if (same)
            return (int)i;
    }
    return -1;
}

/* ------------------------------------------------------------------------------ JSON ---------- */

static const char *const point_keys[] = {
    "name",          "mechanism",     "after",          "cache",  "traffic_bytes",
    "temperature_c", "corunners",     "static_power_w", "time_s", "dynamic_energy_j",
    "time_var_s2",   "energy_var_j2", "runs",           NULL};

static int point_from_json(const json_t *o, const erg_signature *null_ctx, const char *file,
                           const char *path, erg_context_point *pt, erg_diag *diag)
{
    if (!json_is_object(o))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected a context point object", path);
    const char *key;
    const json_t *v;
    json_object_foreach(erg__json_mut(o), key, v)
    {
        int known = 0;
        for (const char *const *k = point_keys; *k; k++)
            known |= strcmp(*k, key) == 0;
        if (!known)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.%.60s: unknown member of a context point", path, key);
    }
    erg_context_point_init(pt);
    pt->static_power_w = null_ctx->static_power_w;
    char mech[32] = "cache";
    int rc;
    if ((rc = erg__json_string(o, "name", ERG_JSON_REQUIRED, pt->name, sizeof pt->name, file, path,
                               diag)) ||
        (rc = erg__json_string(o, "mechanism", ERG_JSON_REQUIRED, mech, sizeof mech, file, path,
                               diag)) ||
        (rc = erg__json_string(o, "after", 0, pt->after, sizeof pt->after, file, path, diag)) ||
        (rc = erg__json_string(o, "cache", 0, pt->cache, sizeof pt->cache, file, path, diag)) ||
        (rc = erg__json_number(o, "traffic_bytes", ERG_JSON_NONNEG, &pt->traffic_bytes, file, path,
                               diag)) ||
        (rc = erg__json_number(o, "temperature_c", 0, &pt->temperature_c, file, path, diag)) ||
        (rc = erg__json_number(o, "static_power_w", ERG_JSON_NONNEG, &pt->static_power_w, file,
                               path, diag)) ||
        (rc = erg__json_number(o, "time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &pt->time_s, file,
                               path, diag)) ||
        (rc = erg__json_number(o, "dynamic_energy_j", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                               &pt->dynamic_energy_j, file, path, diag)) ||
        (rc = erg__json_number(o, "time_var_s2", ERG_JSON_NONNEG, &pt->time_var_s2, file, path,
                               diag)) ||
        (rc = erg__json_number(o, "energy_var_j2", ERG_JSON_NONNEG, &pt->energy_var_j2, file, path,
                               diag)))
        return rc;
    if (!pt->name[0])
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.name: must not be empty", path);
    if (erg_mechanism_parse(mech, &pt->mechanism) != ERG_OK)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.mechanism: expected \"thermal\", \"cache\", \"power_delivery\" or "
                            "\"contention\" (got \"%s\")",
                            path, mech);
    if (pt->cache[0] && strcmp(pt->cache, "cold") != 0 && strcmp(pt->cache, "warm") != 0)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.cache: expected \"cold\" or \"warm\" (got \"%s\")", path,
                            pt->cache);
    const json_t *r = json_object_get(o, "runs");
    if (r && !json_is_null(r)) {
        if (!json_is_integer(r) || json_integer_value(r) < 0 || json_integer_value(r) > 1000000000)
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.runs: expected a non-negative integer",
                                path);
        pt->runs = (unsigned)json_integer_value(r);
    }
    const json_t *cr = json_object_get(o, "corunners");
    if (cr && !json_is_null(cr)) {
        if (!json_is_array(cr))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.corunners: expected an array of names",
                                path);
        size_t k, n = json_array_size(cr);
        json_t *e;
        json_array_foreach(cr, k, e)
        {
            const char *s = json_string_value(e);
            if (!s || !s[0])
                return erg_diag_set(diag, ERG_EPARSE, file,
                                    "%s.corunners[%zu]: expected a non-empty name", path, k);
        }
        if (n) {
            /* the names as jansson holds them, then one owned copy (names_dup) */
            const char **view = malloc(n * sizeof *view);
            if (!view)
                return erg_diag_set(diag, ERG_ENOMEM, file, "%s.corunners: out of memory", path);
            for (k = 0; k < n; k++)
                view[k] = json_string_value(json_array_get(cr, k));
            rc = names_dup(view, n, &pt->corunners);
            free(view);
            if (rc != ERG_OK)
                return erg_diag_set(diag, ERG_ENOMEM, file, "%s.corunners: out of memory", path);
            pt->n_corunners = n;
        }
    }
    if (!pt->after[0] && !pt->n_corunners && !pt->cache[0] && isnan(pt->temperature_c))
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s: a context point states its context: \"after\", \"cache\", "
                            "\"temperature_c\" or \"corunners\"",
                            path);
    return ERG_OK;
}

int erg__context_signature_from_json(const json_t *obj, double default_static_w, const char *file,
                                     const char *path, erg_context_signature *out, erg_diag *diag)
{
    erg_context_signature *cs = malloc(sizeof *cs);
    if (!cs)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    erg_context_signature_init(cs);
    int rc =
        isnan(default_static_w) && json_is_object(obj) && !json_object_get(obj, "static_power_w") &&
                json_object_get(obj, "device")
            ? erg__signature_from_json_opt(obj, file, path, &cs->null_context, diag)
            : erg__signature_from_json(obj, default_static_w, file, path, &cs->null_context, diag);
    if (rc == ERG_OK)
        rc = erg__json_string(obj, "command", 0, cs->command, sizeof cs->command, file, path, diag);
    const json_t *ctx = rc == ERG_OK ? json_object_get(obj, "contexts") : NULL;
    if (ctx && !json_is_null(ctx)) {
        if (!json_is_array(ctx))
            rc = erg_diag_set(diag, ERG_EPARSE, file, "%s.contexts: expected an array of points",
                              path);
        size_t i;
        json_t *e;
        json_array_foreach(ctx, i, e)
        {
            if (rc != ERG_OK)
                break;
            char p[256];
            snprintf(p, sizeof p, "%s.contexts[%zu]", path, i);
            erg_context_point pt;
            erg_context_point_init(&pt);
            rc = point_from_json(e, &cs->null_context, file, p, &pt, diag);
            if (rc == ERG_OK) {
                for (size_t k = 0; k < cs->n_points; k++)
                    if (strcmp(cs->points[k].name, pt.name) == 0)
                        rc = erg_diag_set(diag, ERG_EPARSE, file, "%s.name: duplicate point \"%s\"",
                                          p, pt.name);
            }
            if (rc == ERG_OK) {
                /* the signature takes pt's co-runner names (no second copy) */
                erg_diag sub;
                erg_diag_clear(&sub);
                if (point_check(cs, &pt, &sub) != ERG_OK || point_insert(cs, &pt, &sub) != ERG_OK)
                    rc = erg_diag_set(diag, sub.status == ERG_ENOMEM ? ERG_ENOMEM : ERG_EINVAL,
                                      file, "%s: %s", p, sub.detail);
                else
                    pt.corunners = NULL;
            }
            names_free(pt.corunners);
        }
    }
    if (rc == ERG_OK)
        *out = *cs; /* the points move to out */
    else
        erg_context_signature_release(cs);
    free(cs);
    return rc;
}

static json_t *point_to_json(const erg_context_point *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "name", json_string(p->name));
    bad |= json_object_set_new(o, "mechanism", json_string(erg_mechanism_name(p->mechanism)));
    if (p->after[0])
        bad |= json_object_set_new(o, "after", json_string(p->after));
    if (p->cache[0])
        bad |= json_object_set_new(o, "cache", json_string(p->cache));
    if (!isnan(p->traffic_bytes))
        bad |= erg__json_set_number(o, "traffic_bytes", p->traffic_bytes);
    if (!isnan(p->temperature_c))
        bad |= erg__json_set_number(o, "temperature_c", p->temperature_c);
    if (p->n_corunners) {
        json_t *a = json_array();
        for (size_t k = 0; a && k < p->n_corunners; k++)
            bad |= json_array_append_new(a, json_string(p->corunners[k]));
        bad |= json_object_set_new(o, "corunners", a);
    }
    bad |= erg__json_set_number(o, "static_power_w", p->static_power_w);
    bad |= erg__json_set_number(o, "time_s", p->time_s);
    bad |= erg__json_set_number(o, "dynamic_energy_j", p->dynamic_energy_j);
    bad |= erg__json_set_number(o, "time_var_s2", p->time_var_s2);
    bad |= erg__json_set_number(o, "energy_var_j2", p->energy_var_j2);
    if (p->runs)
        bad |= json_object_set_new(o, "runs", json_integer((json_int_t)p->runs));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *erg__context_signature_to_json(const erg_context_signature *cs)
{
    json_t *o = erg__signature_to_json(&cs->null_context);
    if (!o)
        return NULL;
    int bad = 0;
    if (cs->command[0])
        bad |= json_object_set_new(o, "command", json_string(cs->command));
    if (cs->n_points) {
        json_t *a = json_array();
        if (!a)
            bad = 1;
        for (size_t i = 0; a && i < cs->n_points; i++) {
            json_t *p = point_to_json(&cs->points[i]);
            bad |= !p || json_array_append_new(a, p);
        }
        bad |= json_object_set_new(o, "contexts", a);
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int erg_context_signature_read_file(const char *path, erg_context_signature *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_signature_read_file: NULL");
    json_t *root;
    const char *name;
    int rc = erg__signature_file_load(path, &root, &name, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__context_signature_from_json(root, NAN, name, "signature", out, diag);
    json_decref(root);
    return rc;
}

int erg_context_signature_write_file(const char *path, const erg_context_signature *cs,
                                     erg_diag *diag)
{
    if (!path || !cs)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_signature_write_file: NULL");
    return erg__signature_file_dump(path, erg__context_signature_to_json(cs), diag);
}

/* ------------------------------------------------------------ the signatures of a schedule --- */

void erg_context_set_free(erg_context_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        free(set->paths ? set->paths[i] : NULL);
    free(set->paths);
    for (size_t i = 0; set->sigs && i < set->n; i++)
        erg_context_signature_release(&set->sigs[i]);
    free(set->sigs);
    for (size_t k = 0; k < set->n_corr; k++) {
        /* the set owns the names it read (read_correlations); the public view is const */
        char **names = (char **)(uintptr_t)set->corr[k].signatures;
        for (size_t j = 0; names && j < set->corr[k].n; j++)
            free(names[j]);
        free(names);
    }
    free(set->corr);
    memset(set, 0, sizeof *set);
}

erg_context_signature *erg_context_set_find(const erg_context_set *set, const char *name)
{
    for (size_t i = 0; set && name && i < set->n; i++)
        if (strcmp(set->sigs[i].null_context.name, name) == 0)
            return &set->sigs[i];
    return NULL;
}

static int read_correlations(const json_t *a, const char *file, erg_context_set *out,
                             erg_diag *diag)
{
    if (!json_is_array(a))
        return erg_diag_set(diag, ERG_EPARSE, file, "correlations: expected an array of groups");
    out->corr = calloc(json_array_size(a) + 1, sizeof *out->corr);
    if (!out->corr)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    size_t k;
    json_t *g;
    json_array_foreach(a, k, g)
    {
        char path[64];
        snprintf(path, sizeof path, "correlations[%zu]", k);
        if (!json_is_object(g))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected an object", path);
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)g, key, v)
        {
            if (strcmp(key, "signatures") && strcmp(key, "rho") && strcmp(key, "covariance_j2"))
                return erg_diag_set(diag, ERG_EPARSE, file,
                                    "%s.%.60s: unknown member of a correlation group", path, key);
        }
        erg_correlation *c = &out->corr[out->n_corr++];
        c->rho = NAN;
        c->covariance_j2 = NAN;
        const json_t *names = json_object_get(g, "signatures");
        if (!json_is_array(names) || json_array_size(names) < 2)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.signatures: expected an array of at least two names", path);
        char **arr = calloc(json_array_size(names), sizeof *arr);
        if (!arr)
            return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
        c->signatures = (const char *const *)arr;
        size_t j;
        json_t *nm;
        json_array_foreach(names, j, nm)
        {
            const char *sname = json_string_value(nm);
            if (!sname)
                return erg_diag_set(diag, ERG_EPARSE, file, "%s.signatures[%zu]: expected a name",
                                    path, j);
            if (!erg_context_set_find(out, sname))
                return erg_diag_set(diag, ERG_EPARSE, file,
                                    "%s.signatures[%zu]: unknown signature \"%.60s\"", path, j,
                                    sname);
            arr[j] = strdup(sname);
            c->n = j + 1;
            if (!arr[j])
                return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
        }
        int rc;
        if ((rc = erg__json_number(g, "rho", 0, &c->rho, file, path, diag)) ||
            (rc = erg__json_number(g, "covariance_j2", 0, &c->covariance_j2, file, path, diag)))
            return rc;
        int has_rho = !isnan(c->rho), has_cov = !isnan(c->covariance_j2);
        if (has_rho == has_cov)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s: give exactly one of \"rho\" and \"covariance_j2\"", path);
        if (has_rho && !(c->rho >= -1.0 && c->rho <= 1.0))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.rho: must lie in [-1, 1] (got %g)",
                                path, c->rho);
        if (has_cov && c->n != 2)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.covariance_j2: a covariance is for a pair of signatures", path);
    }
    return ERG_OK;
}

int erg_context_set_read_schedule(const char *path, erg_context_set *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_set_read_schedule: NULL");
    memset(out, 0, sizeof *out);
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__json_check_tag(root, "schedule", 1, path, diag);
    const json_t *sigs = json_object_get(root, "signatures");
    const json_t *devs = json_object_get(root, "devices");
    size_t n = json_is_object(sigs) ? json_object_size(sigs) : 0;
    if (rc == ERG_OK) {
        out->sigs = calloc(n + 1, sizeof *out->sigs);
        out->paths = calloc(n + 1, sizeof *out->paths);
        if (!out->sigs || !out->paths)
            rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    char dir[1024];
    erg__dirname(path, dir, sizeof dir);
    const char *key;
    json_t *v;
    if (rc == ERG_OK && n)
        json_object_foreach(erg__json_mut(sigs), key, v)
        {
            erg_context_signature *cs = &out->sigs[out->n];
            char jp[192];
            snprintf(jp, sizeof jp, "signatures.%.120s", key);
            if (json_is_string(v)) {
                const char *rel = json_string_value(v);
                char full[2048];
                if (rel[0] == '/')
                    snprintf(full, sizeof full, "%s", rel);
                else
                    snprintf(full, sizeof full, "%s/%s", dir, rel);
                rc = erg_context_signature_read_file(full, cs, diag);
                if (rc == ERG_OK && !(out->paths[out->n] = strdup(full)))
                    rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
            } else {
                rc = erg__signature_check_members(v, 0, path, jp, diag);
                if (rc == ERG_OK)
                    rc = erg__context_signature_from_json(v, NAN, path, jp, cs, diag);
            }
            if (rc != ERG_OK) {
                erg_context_signature_release(cs); /* read, but not counted in out->n yet */
                break;
            }
            snprintf(cs->null_context.name, sizeof cs->null_context.name, "%s", key);
            const json_t *dv = json_is_object(devs) && cs->null_context.device[0]
                                   ? json_object_get(devs, cs->null_context.device)
                                   : NULL;
            const json_t *sw = dv ? json_object_get(dv, "static_power_w") : NULL;
            if (isnan(cs->null_context.static_power_w) && json_is_number(sw))
                cs->null_context.static_power_w = json_number_value(sw);
            for (size_t i = 0; i < cs->n_points; i++)
                if (isnan(cs->points[i].static_power_w))
                    cs->points[i].static_power_w = cs->null_context.static_power_w;
            out->n++;
        }
    const json_t *corr = rc == ERG_OK ? json_object_get(root, "correlations") : NULL;
    if (corr)
        rc = read_correlations(corr, path, out, diag);
    json_decref(root);
    if (rc != ERG_OK)
        erg_context_set_free(out);
    return rc;
}
