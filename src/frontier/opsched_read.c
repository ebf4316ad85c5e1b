/* SPDX-License-Identifier: MIT */
/* schedule/1 reader for operating schedules: schedule/1 plus "points" per element and
 * "transitions" (docs/frontier.md). */
#include "calculus/sig_json.h"
#include "core/file.h"
#include "core/json.h"
#include "frontier/opsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    erg_opsched *os;
    const char *file;
    char dir[1024];
    size_t n_idle;
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
        *out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    }
    return *out ? ERG_OK : erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
}

/* A point (or a plain signature) holds signature keys plus its operating point's parts; anything
 * else is a typo that would otherwise drop a figure silently. */
static int check_point_members(const json_t *pt, const char *file, const char *path, erg_diag *diag)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)pt, key, v)
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
        json_t *om = json_loads(sig.omega, 0, NULL);
        const json_t *dv = om ? json_object_get(om, "device") : NULL;
        if (json_is_object(dv)) {
            free(od);
            od = json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS);
        }
        json_decref(om);
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

static int read_signature(struct rd *r, const char *name, const json_t *v, erg_diag *diag)
{
    char path[512];
    snprintf(path, sizeof path, "signatures.%s", name);
    if (json_is_string(v)) {
        char full[2048];
        const char *p = json_string_value(v);
        if (p[0] == '/')
            snprintf(full, sizeof full, "%s", p);
        else
            snprintf(full, sizeof full, "%s/%s", r->dir, p);
        erg_signature sig;
        int rc = erg_signature_read_file(full, &sig, diag);
        if (rc != ERG_OK)
            return rc;
        snprintf(sig.name, sizeof sig.name, "%s", name);
        char *od = NULL;
        json_t *om = sig.omega[0] ? json_loads(sig.omega, 0, NULL) : NULL;
        const json_t *dv = om ? json_object_get(om, "device") : NULL;
        if (json_is_object(dv))
            od = json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(om);
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

static int read_expr(struct rd *r, const json_t *v, const char *path, size_t *id, erg_diag *diag)
{
    if (json_is_string(v)) {
        const char *name = json_string_value(v);
        if (erg__fr_find_element(r->os, name) == FR_NONE)
            return erg_diag_set(diag, ERG_EPARSE, r->file, "%s: unknown signature \"%s\"", path,
                                name);
        return erg_opsched_expr_leaf(r->os, name, id, diag);
    }
    if (!json_is_object(v) || json_object_size(v) != 1)
        return erg_diag_set(
            diag, ERG_EPARSE, r->file,
            "%s: expected a signature name or one of {\"seq\"|\"par\"|\"multi\": [...]}, "
            "{\"idle\": {...}}",
            path);
    const char *key = json_object_iter_key(json_object_iter((json_t *)v));
    const json_t *arg = json_object_get(v, key);
    char sub[700];
    if (strcmp(key, "idle") == 0) {
        snprintf(sub, sizeof sub, "%s.idle", path);
        char device[ERG_SIG_DEVICE_MAX] = "";
        double t = NAN;
        int rc;
        if ((rc = erg__json_string(arg, "device", ERG_JSON_REQUIRED, device, sizeof device, r->file,
                                   sub, diag)) ||
            (rc = erg__json_number(arg, "time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &t, r->file,
                                   sub, diag)))
            return rc;
        erg_signature sig;
        if (erg__fr_find_device(r->os, device) == FR_NONE)
            return erg_diag_set(diag, ERG_EPARSE, r->file, "%s: undeclared device \"%s\"", sub,
                                device);
        if ((rc = erg_signature_idle(device, erg__fr_device_idle_w(r->os, device), t, &sig)) !=
            ERG_OK)
            return erg_diag_set(diag, rc, r->file, "%s: bad idle element", sub);
        char name[ERG_SIG_NAME_MAX];
        snprintf(name, sizeof name, "idle@%s#%zu", device, ++r->n_idle);
        snprintf(sig.name, sizeof sig.name, "%s", name);
        if ((rc = erg_opsched_add_point(r->os, name, &sig, "", diag)) != ERG_OK)
            return rc;
        return erg_opsched_expr_leaf(r->os, name, id, diag);
    }
    erg_expr_op op;
    if (strcmp(key, "seq") == 0)
        op = ERG_EXPR_SEQ;
    else if (strcmp(key, "par") == 0)
        op = ERG_EXPR_PAR;
    else if (strcmp(key, "multi") == 0)
        op = ERG_EXPR_MULTI;
    else
        return erg_diag_set(diag, ERG_EPARSE, r->file, "%s: unknown operator \"%s\"", path, key);
    if (!json_is_array(arg) || json_array_size(arg) == 0)
        return erg_diag_set(diag, ERG_EPARSE, r->file, "%s.%s: expected a non-empty array", path,
                            key);
    size_t n = json_array_size(arg);
    size_t *ids = malloc(n * sizeof *ids);
    if (!ids)
        return erg_diag_set(diag, ERG_ENOMEM, r->file, "out of memory");
    int rc = ERG_OK;
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        snprintf(sub, sizeof sub, "%s.%s[%zu]", path, key, i);
        rc = read_expr(r, json_array_get(arg, i), sub, &ids[i], diag);
    }
    if (rc == ERG_OK)
        rc = erg_opsched_expr_op(r->os, op, ids, n, id, diag);
    free(ids);
    return rc;
}

static int read_doc(struct rd *r, const json_t *root, erg_diag *diag)
{
    int rc = erg__json_check_tag(root, "schedule", 1, r->file, diag);
    if (rc != ERG_OK)
        return rc;
    static const char *const known[] = {"erg",     "name",       "description",
                                        "devices", "signatures", "transitions",
                                        "expr",    "nodes",      "edges"};
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)root, key, val)
    {
        size_t i = 0;
        while (i < sizeof known / sizeof known[0] && strcmp(known[i], key) != 0)
            i++;
        if (i == sizeof known / sizeof known[0])
            return erg_diag_set(diag, ERG_EPARSE, r->file, "unknown key \"%s\" at the top level",
                                key);
    }
    const json_t *devs = json_object_get(root, "devices");
    if (devs) {
        if (!json_is_object(devs))
            return erg_diag_set(diag, ERG_EPARSE, r->file, "devices: expected an object");
        const char *id;
        const json_t *dv;
        json_object_foreach((json_t *)devs, id, dv)
        {
            char path[300];
            snprintf(path, sizeof path, "devices.%s", id);
            double s = NAN;
            if (!json_is_object(dv))
                return erg_diag_set(diag, ERG_EPARSE, r->file, "%s: expected an object", path);
            if ((rc = erg__json_number(dv, "static_power_w", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                                       &s, r->file, path, diag)))
                return rc;
            double idle = NAN;
            if ((rc = erg__json_number(dv, "idle_power_w", ERG_JSON_NONNEG, &idle, r->file, path,
                                       diag)))
                return rc;
            if ((rc = erg_opsched_add_device(r->os, id, s, diag)) != ERG_OK ||
                (!isnan(idle) &&
                 (rc = erg_opsched_set_idle_power(r->os, id, idle, diag)) != ERG_OK))
                return wrap(diag, ERG_EPARSE, r->file, path);
        }
    }
    const json_t *sigs = json_object_get(root, "signatures");
    if (!json_is_object(sigs) || json_object_size(sigs) == 0)
        return erg_diag_set(diag, ERG_EPARSE, r->file, "signatures: expected a non-empty object");
    const char *name;
    const json_t *sv;
    json_object_foreach((json_t *)sigs, name, sv)
    {
        if ((rc = read_signature(r, name, sv, diag)) != ERG_OK)
            return rc;
    }
    const json_t *trs = json_object_get(root, "transitions");
    if (trs) {
        if (!json_is_array(trs))
            return erg_diag_set(diag, ERG_EPARSE, r->file, "transitions: expected an array");
        size_t i;
        const json_t *tv;
        json_array_foreach(trs, i, tv)
        {
            char path[64];
            snprintf(path, sizeof path, "transitions[%zu]", i);
            char device[ERG_SIG_DEVICE_MAX] = "";
            if ((rc = erg__json_string(tv, "device", ERG_JSON_REQUIRED, device, sizeof device,
                                       r->file, path, diag)))
                return rc;
            size_t d = erg__fr_find_device(r->os, device);
            erg_signature sig;
            if ((rc = erg__signature_from_json(
                     tv, d != FR_NONE ? r->os->dev[d].static_power_w : (double)NAN, r->file, path,
                     &sig, diag)))
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
    }
    const json_t *expr = json_object_get(root, "expr");
    const json_t *nodes = json_object_get(root, "nodes");
    if (expr && nodes)
        return erg_diag_set(diag, ERG_EPARSE, r->file,
                            "give either \"expr\" or \"nodes\", not both");
    if (expr) {
        size_t id;
        return read_expr(r, expr, "expr", &id, diag);
    }
    if (!json_is_array(nodes) || json_array_size(nodes) == 0)
        return erg_diag_set(diag, ERG_EPARSE, r->file,
                            "expected \"expr\" or a non-empty \"nodes\" array");
    size_t i;
    const json_t *nv;
    json_array_foreach(nodes, i, nv)
    {
        char path[64];
        snprintf(path, sizeof path, "nodes[%zu]", i);
        char id[ERG_SIG_NAME_MAX] = "", sg[ERG_SIG_NAME_MAX] = "", dev[ERG_SIG_DEVICE_MAX] = "";
        double start = NAN; /* accepted for schedule/1 compatibility; a frontier re-times nodes */
        if ((rc = erg__json_string(nv, "id", ERG_JSON_REQUIRED, id, sizeof id, r->file, path,
                                   diag)) ||
            (rc = erg__json_string(nv, "signature", ERG_JSON_REQUIRED, sg, sizeof sg, r->file, path,
                                   diag)) ||
            (rc = erg__json_string(nv, "device", 0, dev, sizeof dev, r->file, path, diag)) ||
            (rc = erg__json_number(nv, "start_s", ERG_JSON_NONNEG, &start, r->file, path, diag)))
            return rc;
        if ((rc = erg_opsched_add_node_on(r->os, id, sg, dev, diag)) != ERG_OK)
            return wrap(diag, ERG_EPARSE, r->file, path);
    }
    const json_t *edges = json_object_get(root, "edges");
    if (edges && !json_is_array(edges))
        return erg_diag_set(diag, ERG_EPARSE, r->file, "edges: expected an array of [from, to]");
    const json_t *ev;
    json_array_foreach(edges, i, ev)
    {
        const char *a = json_string_value(json_array_get(ev, 0));
        const char *b = json_string_value(json_array_get(ev, 1));
        if (!json_is_array(ev) || json_array_size(ev) != 2 || !a || !b)
            return erg_diag_set(diag, ERG_EPARSE, r->file, "edges[%zu]: expected [from, to]", i);
        if ((rc = erg_opsched_add_edge(r->os, a, b, diag)) != ERG_OK) {
            char path[64];
            snprintf(path, sizeof path, "edges[%zu]", i);
            return wrap(diag, ERG_EPARSE, r->file, path);
        }
    }
    return ERG_OK;
}

int erg_opsched_read_file(const char *path, erg_opsched **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    *out = NULL;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    struct rd r = {erg_opsched_new(), path, "", 0};
    if (!r.os) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    erg__dirname(path, r.dir, sizeof r.dir);
    rc = read_doc(&r, root, diag);
    json_decref(root);
    if (rc != ERG_OK) {
        erg_opsched_free(r.os);
        return rc;
    }
    *out = r.os;
    return ERG_OK;
}
