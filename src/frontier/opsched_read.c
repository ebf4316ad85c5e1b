/* SPDX-License-Identifier: MIT */
/* Operating schedules from schedule/1 files: the calculus module's one reader
 * (calculus/sched_read.h) with a builder whose element payload is an operating set ("points")
 * and which takes "transitions" (docs/frontier.md). */
#include "calculus/sched_read.h"
#include "calculus/sig_json.h"
#include "core/json.h"
#include "frontier/opsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    erg_opsched *os;
    const char *file;
    size_t n_idle;
    struct rd_known {     /* per signature name key: the node checked first with it */
        uint32_t dev_key; /* its device name key, or ERG__STRMAP_NONE */
        size_t elem;      /* FR_NONE: none yet */
    } * known;
    size_t n_known;
};

/* Re-raise a diagnostic from a nested call with the JSON path in front (copying the detail first:
 * erg_diag_set writes into the same buffer). */
static int wrap(erg_diag *diag, int status, const char *file, const char *path)
{
    char detail[sizeof diag->detail];
    snprintf(detail, sizeof detail, "%s", diag ? diag->detail : "");
    return erg_diag_set(diag, status, file, "%s: %s", path, detail);
}

/* Compact JSON text of obj[key] when it is an object; "" when absent. */
static int omega_text(const json_t *obj, const char *key, char **out, const char *file,
                      const char *path, erg_diag *diag)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = strdup("");
    } else if (!json_is_object(v)) {
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: expected an object", path, key);
    } else {
        *out = erg_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    }
    return *out ? ERG_OK : erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
}

/* Compact JSON text of the "device" part of a signature's ω text (erg's own JSON, read before):
 * *out NULL when there is none. A failure to parse or print it again is a lack of memory, never
 * a reason to group the point without its ω_dev. */
static int omega_device_text(const char *omega, char **out, const char *file, const char *path,
                             erg_diag *diag)
{
    *out = NULL;
    if (!omega[0])
        return ERG_OK;
    json_t *om = json_loads(omega, 0, NULL);
    if (!om)
        return erg_diag_set(diag, ERG_ENOMEM, file, "%s: out of memory", path);
    const json_t *dv = json_object_get(om, "device");
    if (json_is_object(dv) && !(*out = erg_json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS))) {
        json_decref(om);
        return erg_diag_set(diag, ERG_ENOMEM, file, "%s: out of memory", path);
    }
    json_decref(om);
    return ERG_OK;
}

/* A point (or a plain signature) holds signature keys plus its operating point's parts; anything
 * else is a typo that would otherwise drop a figure silently. */
static int check_point_members(const json_t *pt, const char *file, const char *path, erg_diag *diag)
{
    const char *key;
    const json_t *v;
    json_object_foreach(erg__json_mut(pt), key, v)
    {
        (void)v;
        if (erg__signature_key_known(key, strlen(key)) || strcmp(key, "omega_device") == 0 ||
            strcmp(key, "omega_element") == 0)
            continue;
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: unknown member of a signature or point",
                            path, key);
    }
    return ERG_OK;
}

static int read_point(struct rd *r, const char *name, const char *device, const json_t *pt,
                      const char *path, erg_diag *diag)
{
    if (json_is_object(pt)) {
        int crc = check_point_members(pt, r->file, path, diag);
        if (crc != ERG_OK)
            return crc;
    }
    double s_dev = NAN;
    size_t d = erg__fr_find_device(r->os, device);
    if (d != FR_NONE)
        s_dev = r->os->dev[d].static_power_w;
    erg_signature sig;
    int rc = erg__signature_from_json(pt, s_dev, r->file, path, &sig, diag);
    if (rc != ERG_OK)
        return rc;
    char *od = NULL, *oe = NULL;
    if ((rc = omega_text(pt, "omega_device", &od, r->file, path, diag)) != ERG_OK ||
        (rc = omega_text(pt, "omega_element", &oe, r->file, path, diag)) != ERG_OK) {
        free(od);
        free(oe);
        return rc;
    }
    if (!od[0] && sig.omega[0]) {
        /* A plain signature may carry ω as {"device": {...}, "element": {...}}. */
        char *dev = NULL;
        if ((rc = omega_device_text(sig.omega, &dev, r->file, path, diag)) != ERG_OK) {
            free(od);
            free(oe);
            return rc;
        }
        if (dev) {
            free(od);
            od = dev;
        }
    } else if (od[0] || oe[0]) {
        int n = snprintf(sig.omega, sizeof sig.omega, "{\"device\":%s,\"element\":%s}",
                         od[0] ? od : "{}", oe[0] ? oe : "{}");
        if (n < 0 || (size_t)n >= sizeof sig.omega)
            sig.omega[0] = '\0'; /* too long to keep as metadata; the group key keeps ω_dev */
    }
    snprintf(sig.device, sizeof sig.device, "%s", device);
    snprintf(sig.name, sizeof sig.name, "%s", name);
    erg_diag sub;
    erg_diag_clear(&sub);
    rc = erg_opsched_add_point(r->os, name, &sig, od ? od : "", &sub);
    free(od);
    free(oe);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc == ERG_ENOMEM ? rc : ERG_EPARSE, r->file, "%s: %s", path,
                            sub.detail);
    return ERG_OK;
}

static int fr_element(void *ctx, const char *name, const json_t *v, const char *dir,
                      const char *file, const char *path, erg_diag *diag)
{
    struct rd *r = ctx;
    r->file = file;
    if (json_is_string(v)) {
        char full[8192];
        erg__sched_signature_path(dir, json_string_value(v), full, sizeof full);
        erg_signature sig;
        int rc = erg_signature_read_file(full, &sig, diag);
        if (rc != ERG_OK)
            return rc;
        snprintf(sig.name, sizeof sig.name, "%s", name);
        char *od = NULL;
        if ((rc = omega_device_text(sig.omega, &od, r->file, path, diag)) != ERG_OK)
            return rc;
        rc = erg_opsched_add_point(r->os, name, &sig, od ? od : "", diag);
        free(od);
        if (rc != ERG_OK)
            return wrap(diag, rc, r->file, path);
        return ERG_OK;
    }
    if (!json_is_object(v))
        return erg_diag_set(diag, ERG_EPARSE, r->file,
                            "%s: expected a signature object, a path, or an operating set", path);
    char device[ERG_SIG_DEVICE_MAX] = "";
    int rc = erg__json_string(v, "device", 0, device, sizeof device, r->file, path, diag);
    if (rc != ERG_OK)
        return rc;
    const json_t *pts = json_object_get(v, "points");
    if (!pts)
        return read_point(r, name, device, v, path, diag);
    if (!json_is_array(pts))
        return erg_diag_set(diag, ERG_EPARSE, r->file, "%s.points: expected an array", path);
    if (json_array_size(pts) == 0)
        return erg_diag_set(diag, ERG_EPARSE, r->file, "%s.points: empty operating set", path);
    size_t i;
    const json_t *pt;
    json_array_foreach(pts, i, pt)
    {
        char ppath[600];
        snprintf(ppath, sizeof ppath, "%s.points[%zu]", path, i);
        if ((rc = read_point(r, name, device, pt, ppath, diag)) != ERG_OK)
            return rc;
    }
    return ERG_OK;
}

static int fr_transitions(void *ctx, const json_t *trs, const char *file, erg_diag *diag)
{
    struct rd *r = ctx;
    r->file = file;
    if (!json_is_array(trs))
        return erg_diag_set(diag, ERG_EPARSE, r->file, "transitions: expected an array");
    size_t i;
    const json_t *tv;
    json_array_foreach(trs, i, tv)
    {
        char path[64];
        snprintf(path, sizeof path, "transitions[%zu]", i);
        char device[ERG_SIG_DEVICE_MAX] = "";
        int rc;
        if ((rc = erg__json_string(tv, "device", ERG_JSON_REQUIRED, device, sizeof device, r->file,
                                   path, diag)))
            return rc;
        size_t d = erg__fr_find_device(r->os, device);
        erg_signature sig;
        if ((rc = erg__signature_from_json(
                 tv, d != FR_NONE ? r->os->dev[d].static_power_w : (double)NAN, r->file, path, &sig,
                 diag)))
            return rc;
        char *from = NULL, *to = NULL;
        if ((rc = omega_text(tv, "from", &from, r->file, path, diag)) == ERG_OK &&
            (rc = omega_text(tv, "to", &to, r->file, path, diag)) == ERG_OK) {
            rc = erg_opsched_add_transition(r->os, device, from, to, &sig, diag);
            if (rc != ERG_OK)
                rc = wrap(diag, ERG_EPARSE, r->file, path);
        }
        free(from);
        free(to);
        if (rc != ERG_OK)
            return rc;
    }
    return ERG_OK;
}

static int fr_device(void *ctx, const char *id, double static_w, double idle_w, erg_diag *sub)
{
    struct rd *r = ctx;
    int rc = erg_opsched_add_device(r->os, id, static_w, sub);
    if (rc == ERG_OK && !isnan(idle_w))
        rc = erg_opsched_set_idle_power(r->os, id, idle_w, sub);
    return rc == ERG_ENOMEM ? rc : rc != ERG_OK ? ERG_EPARSE : ERG_OK;
}

static int expr_id(size_t id, uint32_t *out, const char *file, erg_diag *diag)
{
    if (id >= UINT32_MAX)
        return erg_diag_set(diag, ERG_EINVAL, file, "too many expression parts");
    *out = (uint32_t)id;
    return ERG_OK;
}

static int fr_leaf(void *ctx, const char *name, const char *file, const char *path, uint32_t *out,
                   erg_diag *diag)
{
    struct rd *r = ctx;
    if (erg__fr_find_element(r->os, name) == FR_NONE)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: unknown signature \"%s\"", path, name);
    size_t id;
    int rc = erg_opsched_expr_leaf(r->os, name, &id, diag);
    return rc != ERG_OK ? rc : expr_id(id, out, file, diag);
}

static int fr_idle(void *ctx, const char *device, double t, const char *file, const char *sub,
                   uint32_t *out, erg_diag *diag)
{
    struct rd *r = ctx;
    if (erg__fr_find_device(r->os, device) == FR_NONE)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: undeclared device \"%s\"", sub, device);
    erg_signature sig;
    int rc = erg_signature_idle(device, erg__fr_device_idle_w(r->os, device), t, &sig);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, file, "%s: bad idle element", sub);
    char name[ERG_SIG_NAME_MAX];
    snprintf(name, sizeof name, "idle@%s#%zu", device, ++r->n_idle);
    snprintf(sig.name, sizeof sig.name, "%s", name);
    if ((rc = erg_opsched_add_point(r->os, name, &sig, "", diag)) != ERG_OK)
        return rc;
    size_t id;
    rc = erg_opsched_expr_leaf(r->os, name, &id, diag);
    return rc != ERG_OK ? rc : expr_id(id, out, file, diag);
}

static int fr_op(void *ctx, enum erg__sched_op op, const uint32_t *kids, uint32_t n, uint32_t *out,
                 const char *file, erg_diag *diag)
{
    struct rd *r = ctx;
    size_t *ids = malloc((size_t)n * sizeof *ids);
    if (!ids)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        ids[i] = kids[i];
    size_t id;
    int rc = erg_opsched_expr_op(r->os,
                                 op == ERG__SCHED_SEQ   ? ERG_EXPR_SEQ
                                 : op == ERG__SCHED_PAR ? ERG_EXPR_PAR
                                                        : ERG_EXPR_MULTI,
                                 ids, n, &id, diag);
    free(ids);
    return rc != ERG_OK ? rc : expr_id(id, out, file, diag);
}

static int fr_root(void *ctx, uint32_t id)
{
    (void)ctx;
    (void)id; /* the root is the last expression built (erg_opsched's convention) */
    return ERG_OK;
}

/* A node of the file: one whose (signature name, device name) pair was checked at an earlier node
 * is appended directly (erg__fr_append_node); the first of each pair goes through
 * erg_opsched_add_node_on, which checks it (and words the errors). */
static int fr_node(void *ctx, const char *id, size_t len, const char *sig, uint32_t sig_key,
                   const char *device, uint32_t dev_key, double start_s, erg_diag *sub)
{
    (void)start_s; /* accepted for schedule/1 compatibility; a frontier re-times nodes */
    struct rd *r = ctx;
    if (len > 0 && len < ERG_SIG_NAME_MAX && sig_key < r->n_known &&
        r->known[sig_key].elem != FR_NONE && r->known[sig_key].dev_key == dev_key)
        return erg__fr_append_node(r->os, id, len, r->known[sig_key].elem, device) == ERG_OK
                   ? ERG_OK
                   : erg_diag_set(sub, ERG_ENOMEM, NULL, "out of memory");
    int rc = erg_opsched_add_node_on(r->os, id, sig, device, sub);
    if (rc != ERG_OK)
        return rc == ERG_ENOMEM ? rc : ERG_EPARSE;
    if (sig_key >= r->n_known) {
        size_t n = r->n_known, cap = r->n_known;
        if (erg__fr_grow((void **)&r->known, &cap, (size_t)sig_key + 1, sizeof *r->known))
            return ERG_OK; /* only a cache */
        for (r->n_known = cap; n < cap; n++)
            r->known[n].elem = FR_NONE;
    }
    r->known[sig_key].elem = r->os->node[r->os->n_node - 1].elem;
    r->known[sig_key].dev_key = dev_key;
    return ERG_OK;
}

static int fr_edges(void *ctx, uint32_t (*e)[2], size_t n, size_t cap, erg_diag *sub)
{
    erg_opsched *os = ((struct rd *)ctx)->os;
    if (os->n_edge == 0) {
        free(os->edge);
        os->edge = e;
        os->n_edge = n;
        os->cap_edge = cap;
        return ERG_OK;
    }
    if (erg__fr_grow((void **)&os->edge, &os->cap_edge, os->n_edge + n, sizeof *os->edge)) {
        free(e);
        return erg_diag_set(sub, ERG_ENOMEM, NULL, "out of memory");
    }
    memcpy(os->edge + os->n_edge, e, n * sizeof *e);
    os->n_edge += n;
    free(e);
    return ERG_OK;
}

int erg_opsched_read_file(const char *path, erg_opsched **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    *out = NULL;
    struct rd r = {erg_opsched_new(), path, 0, NULL, 0};
    if (!r.os)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    const struct erg__sched_builder b = {&r,
                                         ERG__SB_DEVICES_OPTIONAL | ERG__SB_OPERATING_SETS,
                                         fr_device,
                                         fr_element,
                                         fr_transitions,
                                         fr_leaf,
                                         fr_idle,
                                         fr_op,
                                         fr_root,
                                         fr_node,
                                         fr_edges,
                                         NULL};
    int rc = erg__sched_read(path, &b, diag);
    free(r.known);
    if (rc == ERG_OK && strcmp(path, "-") != 0 && !(r.os->source = strdup(path)))
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    if (rc != ERG_OK) {
        erg_opsched_free(r.os);
        return rc;
    }
    *out = r.os;
    return ERG_OK;
}
