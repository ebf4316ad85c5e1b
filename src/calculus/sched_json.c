/* SPDX-License-Identifier: MIT */
/* schedule/1 files: reader (expression and DAG forms) and writer. Format: docs/formats.md. */
#include "calculus/schedule_impl.h"
#include "calculus/sig_json.h"
#include "core/file.h"
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE ERG__STRMAP_NONE

struct rd {
    erg_schedule *s;
    const char *file;
    char dir[4096];
    erg_diag *diag;
};

/* Re-issue a builder's diagnostic with the file as the place and the JSON path in front. */
static int relay(struct rd *r, int rc, const char *jpath, const erg_diag *sub)
{
    return erg_diag_set(r->diag, rc, r->file, "%s: %s", jpath, sub->detail);
}

static int read_devices(struct rd *r, const json_t *devs)
{
    if (!devs)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "devices: missing (an object of id -> {\"static_power_w\": W})");
    if (!json_is_object(devs))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "devices: expected an object of id -> device");
    const char *id;
    const json_t *d;
    json_object_foreach((json_t *)devs, id, d) {
        char jp[200];
        snprintf(jp, sizeof jp, "devices.%.150s", id);
        if (!json_is_object(d))
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expected an object", jp);
        double sw = NAN, iw = NAN;
        int rc;
        if ((rc = erg__json_number(d, "static_power_w", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &sw, r->file, jp,
                                   r->diag)) ||
            (rc = erg__json_number(d, "idle_power_w", ERG_JSON_NONNEG, &iw, r->file, jp, r->diag)))
            return rc;
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = erg_schedule_add_device(r->s, id, sw, iw, &sub)) != ERG_OK)
            return relay(r, rc, jp, &sub);
    }
    return ERG_OK;
}

static int read_signatures(struct rd *r, const json_t *sigs)
{
    if (!sigs)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "signatures: missing (an object of name -> signature)");
    if (!json_is_object(sigs))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "signatures: expected an object of name -> signature");
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)sigs, name, v) {
        char jp[200];
        snprintf(jp, sizeof jp, "signatures.%.150s", name);
        if (strlen(name) >= ERG_SIG_NAME_MAX || !name[0])
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: name empty or longer than %d bytes", jp,
                                ERG_SIG_NAME_MAX - 1);
        erg_signature sg;
        int rc;
        if (json_is_string(v)) {
            /* A path to a signature/1 file, relative to this file's folder. */
            const char *p = json_string_value(v);
            char full[8192];
            if (p[0] == '/')
                snprintf(full, sizeof full, "%s", p);
            else
                snprintf(full, sizeof full, "%s/%s", r->dir, p);
            erg_diag sub;
            erg_diag_clear(&sub);
            if ((rc = erg_signature_read_file(full, &sg, &sub)) != ERG_OK) {
                char msg[1024];
                erg_diag_format(&sub, msg, sizeof msg);
                return erg_diag_set(r->diag, rc, r->file, "%s: %s", jp, msg);
            }
        } else if (json_is_object(v)) {
            /* The device's static power is the default; the device must be declared. */
            char dev[ERG_SIG_DEVICE_MAX] = "";
            if ((rc = erg__json_string(v, "device", 0, dev, sizeof dev, r->file, jp, r->diag)) != ERG_OK)
                return rc;
            double def = NAN;
            if (dev[0]) {
                uint32_t di = erg__device_index(r->s, dev);
                if (di == NONE)
                    return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s.device: undeclared device \"%s\"", jp, dev);
                def = r->s->devices[di].static_power_w;
            }
            rc = dev[0] ? erg__signature_from_json(v, def, r->file, jp, &sg, r->diag)
                        : erg__signature_from_json_opt(v, r->file, jp, &sg, r->diag);
            if (rc != ERG_OK)
                return rc;
        } else {
            return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                                "%s: expected a signature object or the path of a signature/1 file", jp);
        }
        if (sg.device[0] && erg__device_index(r->s, sg.device) == NONE)
            return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s.device: undeclared device \"%s\"", jp, sg.device);
        snprintf(sg.name, sizeof sg.name, "%s", name);
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = erg_schedule_add_signature(r->s, &sg, &sub)) != ERG_OK)
            return relay(r, rc, jp, &sub);
    }
    return ERG_OK;
}

static int read_expr(struct rd *r, const json_t *v, const char *jp, int depth, uint32_t *out)
{
    if (depth > 64)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expression nested deeper than 64 levels", jp);
    struct erg__expr e;
    memset(&e, 0, sizeof e);
    if (json_is_string(v)) {
        const char *name = json_string_value(v);
        uint32_t si = erg__sig_index(r->s, name);
        if (si == NONE)
            return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s: unknown signature \"%s\"", jp, name);
        const erg_signature *sg = &r->s->sigs[si];
        if (isnan(sg->static_power_w) && !sg->device[0])
            return erg_diag_set(r->diag, ERG_EINVAL, r->file,
                                "%s: signature \"%s\" has neither static_power_w nor a device", jp, name);
        e.kind = ERG__EX_SIG;
        e.ref = si;
    } else if (json_is_object(v)) {
        if (json_object_size(v) != 1)
            return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                                "%s: expected one of {\"seq\": [...]}, {\"par\": [...]}, {\"multi\": [...]}, "
                                "{\"idle\": {...}}",
                                jp);
        const char *key = json_object_iter_key(json_object_iter((json_t *)v));
        const json_t *arg = json_object_get(v, key);
        char sub[512];
        if (strcmp(key, "idle") == 0) {
            snprintf(sub, sizeof sub, "%s.idle", jp);
            if (!json_is_object(arg))
                return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expected {\"device\": D, \"time_s\": t}", sub);
            char dev[ERG_SIG_DEVICE_MAX] = "";
            double t = 0.0;
            int rc;
            if ((rc = erg__json_string(arg, "device", ERG_JSON_REQUIRED, dev, sizeof dev, r->file, sub, r->diag)) ||
                (rc = erg__json_number(arg, "time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &t, r->file, sub,
                                       r->diag)))
                return rc;
            uint32_t di = erg__device_index(r->s, dev);
            if (di == NONE)
                return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s.device: undeclared device \"%s\"", sub, dev);
            e.kind = ERG__EX_IDLE;
            e.ref = di;
            e.time_s = t;
        } else {
            if (strcmp(key, "seq") == 0)
                e.kind = ERG__EX_SEQ;
            else if (strcmp(key, "par") == 0)
                e.kind = ERG__EX_PAR;
            else if (strcmp(key, "multi") == 0)
                e.kind = ERG__EX_MULTI;
            else
                return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                                    "%s: unknown operator \"%s\" (expected seq, par, multi or idle)", jp, key);
            if (!json_is_array(arg))
                return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s.%s: expected an array of operands", jp, key);
            size_t n = json_array_size(arg);
            if (n == 0)
                return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s.%s: empty operator (it needs at least one operand)",
                                    jp, key);
            uint32_t *kids = malloc(n * sizeof *kids);
            if (!kids)
                return erg_diag_set(r->diag, ERG_ENOMEM, r->file, "out of memory");
            for (size_t i = 0; i < n; i++) {
                snprintf(sub, sizeof sub, "%s.%s[%zu]", jp, key, i);
                int rc = read_expr(r, json_array_get(arg, i), sub, depth + 1, &kids[i]);
                if (rc != ERG_OK) {
                    free(kids);
                    return rc;
                }
            }
            erg_schedule *s = r->s;
            if (erg__grow((void **)&s->expr_kids, &s->cap_kids, s->n_kids + n, sizeof *s->expr_kids)) {
                free(kids);
                return erg_diag_set(r->diag, ERG_ENOMEM, r->file, "out of memory");
            }
            e.first = (uint32_t)s->n_kids;
            e.n = (uint32_t)n;
            memcpy(s->expr_kids + s->n_kids, kids, n * sizeof *kids);
            s->n_kids += n;
            free(kids);
        }
    } else {
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "%s: expected a signature name or an operator object", jp);
    }
    *out = erg__expr_add(r->s, &e);
    if (*out == NONE)
        return erg_diag_set(r->diag, ERG_ENOMEM, r->file, "out of memory");
    return ERG_OK;
}

static int read_dag(struct rd *r, const json_t *nodes, const json_t *edges)
{
    if (!json_is_array(nodes))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "nodes: expected an array of nodes");
    if (json_array_size(nodes) == 0)
        return erg_diag_set(r->diag, ERG_EINVAL, r->file, "nodes: empty (a schedule needs at least one element)");
    size_t i;
    const json_t *nd;
    json_array_foreach(nodes, i, nd) {
        char jp[64];
        snprintf(jp, sizeof jp, "nodes[%zu]", i);
        if (!json_is_object(nd))
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expected an object", jp);
        const char *id = json_string_value(json_object_get(nd, "id"));
        const char *sig = json_string_value(json_object_get(nd, "signature"));
        if (!id)
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s.id: required string is missing", jp);
        if (!sig)
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s.signature: required string is missing", jp);
        char dev[ERG_SIG_DEVICE_MAX] = "";
        double st = NAN;
        int rc;
        if ((rc = erg__json_string(nd, "device", 0, dev, sizeof dev, r->file, jp, r->diag)) ||
            (rc = erg__json_number(nd, "start_s", ERG_JSON_NONNEG, &st, r->file, jp, r->diag)))
            return rc;
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = erg_schedule_add_node(r->s, id, sig, dev[0] ? dev : NULL, st, &sub)) != ERG_OK)
            return relay(r, rc, jp, &sub);
    }
    if (!edges)
        return ERG_OK;
    if (!json_is_array(edges))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "edges: expected an array of [from, to] pairs");
    const json_t *ed;
    json_array_foreach(edges, i, ed) {
        char jp[64];
        snprintf(jp, sizeof jp, "edges[%zu]", i);
        const char *a = json_string_value(json_array_get(ed, 0));
        const char *b = json_string_value(json_array_get(ed, 1));
        if (!json_is_array(ed) || json_array_size(ed) != 2 || !a || !b)
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expected [\"from\", \"to\"]", jp);
        erg_diag sub;
        erg_diag_clear(&sub);
        int rc = erg_schedule_add_edge(r->s, a, b, &sub);
        if (rc != ERG_OK)
            return relay(r, rc, jp, &sub);
    }
    return ERG_OK;
}

static int read_root(struct rd *r, const json_t *root)
{
    static const char *const known[] = {"erg", "name", "description", "devices", "signatures",
                                        "expr", "nodes", "edges"};
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(known[k], key) != 0)
            k++;
        if (k == sizeof known / sizeof known[0])
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: unknown member of a schedule/1 file", key);
    }
    int rc;
    if ((rc = read_devices(r, json_object_get(root, "devices"))) != ERG_OK ||
        (rc = read_signatures(r, json_object_get(root, "signatures"))) != ERG_OK)
        return rc;
    const json_t *expr = json_object_get(root, "expr"), *nodes = json_object_get(root, "nodes");
    const json_t *edges = json_object_get(root, "edges");
    if (expr && (nodes || edges))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "expr: a schedule has either expr or nodes + edges, not both");
    if (expr) {
        uint32_t root_ix;
        if ((rc = read_expr(r, expr, "expr", 0, &root_ix)) != ERG_OK)
            return rc;
        r->s->has_expr = 1;
        r->s->expr_root = root_ix;
        return ERG_OK;
    }
    if (!nodes)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "a schedule needs an expr or nodes (+ edges)");
    return read_dag(r, nodes, edges);
}

int erg_schedule_read_file(const char *path, erg_schedule **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_read_file: NULL argument");
    *out = NULL;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if ((rc = erg__json_check_tag(root, "schedule", 1, name, diag)) != ERG_OK) {
        json_decref(root);
        return rc;
    }
    struct rd r = {.s = erg_schedule_new(), .file = name, .diag = diag};
    if (!r.s) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
    }
    if (strcmp(path, "-") == 0)
        snprintf(r.dir, sizeof r.dir, ".");
    else
        erg__dirname(path, r.dir, sizeof r.dir);
    rc = read_root(&r, root);
    json_decref(root);
    if (rc != ERG_OK) {
        erg_schedule_free(r.s);
        return rc;
    }
    *out = r.s;
    return ERG_OK;
}

/* ---------------------------------------------------------------- writer ----------------------- */

static json_t *expr_json(const erg_schedule *s, uint32_t ei)
{
    const struct erg__expr *e = &s->expr[ei];
    switch (e->kind) {
    case ERG__EX_SIG:
        return json_string(s->sigs[e->ref].name);
    case ERG__EX_IDLE: {
        json_t *o = json_object();
        if (!o || erg__json_set_number(o, "time_s", e->time_s) ||
            json_object_set_new(o, "device", json_string(s->devices[e->ref].id))) {
            json_decref(o);
            return NULL;
        }
        return json_pack("{s:o}", "idle", o);
    }
    default: {
        json_t *a = json_array();
        if (!a)
            return NULL;
        for (uint32_t i = 0; i < e->n; i++) {
            json_t *c = expr_json(s, s->expr_kids[e->first + i]);
            if (!c || json_array_append_new(a, c)) {
                json_decref(a);
                return NULL;
            }
        }
        const char *k = e->kind == ERG__EX_SEQ ? "seq" : e->kind == ERG__EX_PAR ? "par" : "multi";
        return json_pack("{s:o}", k, a);
    }
    }
}

static json_t *schedule_json(const erg_schedule *s)
{
    json_t *root = json_object(), *devs = json_object(), *sigs = json_object();
    if (!root || !devs || !sigs) {
        json_decref(root);
        json_decref(devs);
        json_decref(sigs);
        return NULL;
    }
    int bad = json_object_set_new(root, "erg", json_string("schedule/1"));
    bad |= json_object_set_new(root, "devices", devs);
    bad |= json_object_set_new(root, "signatures", sigs);
    for (size_t i = 0; i < s->n_devices && !bad; i++) {
        json_t *d = json_object();
        bad |= !d || erg__json_set_number(d, "static_power_w", s->devices[i].static_power_w);
        if (!bad && s->devices[i].idle_power_w != s->devices[i].static_power_w)
            bad |= erg__json_set_number(d, "idle_power_w", s->devices[i].idle_power_w);
        bad |= json_object_set_new(devs, s->devices[i].id, d);
    }
    for (size_t i = 0; i < s->n_sigs && !bad; i++) {
        json_t *o = erg__signature_to_json(&s->sigs[i]);
        bad |= !o;
        if (o) {
            json_object_del(o, "name");
            if (isnan(s->sigs[i].static_power_w))
                json_object_del(o, "static_power_w");
            bad |= json_object_set_new(sigs, s->sigs[i].name, o);
        }
    }
    if (!bad && s->has_expr) {
        json_t *e = expr_json(s, s->expr_root);
        bad |= !e || json_object_set_new(root, "expr", e);
    } else if (!bad) {
        json_t *nodes = json_array(), *edges = json_array();
        bad |= !nodes || !edges;
        for (size_t i = 0; i < s->n_nodes && !bad; i++) {
            const struct erg__node *n = &s->nodes[i];
            json_t *o = json_pack("{s:s,s:s,s:s}", "id", erg__node_id(s, (uint32_t)i), "signature",
                                  s->sigs[n->sig].name, "device", s->devices[n->device].id);
            bad |= !o;
            if (o && !isnan(n->start_s))
                bad |= erg__json_set_number(o, "start_s", n->start_s);
            bad |= json_array_append_new(nodes, o);
        }
        for (size_t k = 0; k < s->n_edges && !bad; k++)
            bad |= json_array_append_new(edges, json_pack("[s,s]", erg__node_id(s, s->edges[k][0]),
                                                          erg__node_id(s, s->edges[k][1])));
        bad |= json_object_set_new(root, "nodes", nodes);
        bad |= json_object_set_new(root, "edges", edges);
    }
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int erg_schedule_write_file(const erg_schedule *s, const char *path, erg_diag *diag)
{
    if (!s || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_write_file: NULL argument");
    json_t *root = schedule_json(s);
    if (!root)
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the schedule");
    int rc = erg__json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- report ----------------------- */

int erg_report_write_file(const erg_report *r, const char *path, erg_diag *diag)
{
    json_t *o = json_object(), *devs = json_object(), *iv = json_array();
    int bad = !o || !devs || !iv;
    if (!bad) {
        bad |= json_object_set_new(o, "erg", json_string("report/1"));
        bad |= erg__json_set_number(o, "energy_j", r->energy_j);
        bad |= erg__json_set_number(o, "energy_sd_j", r->energy_sd_j);
        bad |= erg__json_set_number(o, "time_s", r->time_s);
        bad |= erg__json_set_number(o, "time_sd_s", r->time_sd_s);
        bad |= erg__json_set_number(o, "static_energy_j", r->static_energy_j);
        bad |= erg__json_set_number(o, "dynamic_energy_j", r->dynamic_energy_j);
        bad |= json_array_append_new(iv, json_real(r->interval_j[0]));
        bad |= json_array_append_new(iv, json_real(r->interval_j[1]));
        bad |= json_object_set(o, "interval_j", iv);
        bad |= erg__json_set_number(o, "confidence", r->confidence);
        bad |= erg__json_set_number(o, "bias_bound_j", r->bias_bound_j);
        bad |= json_object_set_new(o, "grade", json_string(erg_grade_name(r->grade)));
        bad |= json_object_set_new(o, "elements", json_integer((json_int_t)r->n_elements));
        for (size_t i = 0; i < r->n_devices && !bad; i++) {
            const erg_device_report *d = &r->devices[i];
            json_t *x = json_object();
            bad |= !x || erg__json_set_number(x, "static_energy_j", d->static_energy_j) ||
                   erg__json_set_number(x, "dynamic_energy_j", d->dynamic_energy_j) ||
                   erg__json_set_number(x, "busy_s", d->busy_s) || erg__json_set_number(x, "idle_s", d->idle_s);
            bad |= json_object_set_new(devs, d->id, x);
        }
        bad |= json_object_set(o, "devices", devs);
        if (!bad && r->has_deviation) {
            json_t *x = json_object();
            bad |= !x || erg__json_set_number(x, "measured_j", r->measured_j) ||
                   erg__json_set_number(x, "measured_sd_j", r->measured_sd_j) ||
                   erg__json_set_number(x, "z", r->deviation_z) ||
                   json_object_set_new(x, "detected", json_boolean(r->deviation_detected));
            bad |= json_object_set_new(o, "deviation", x);
        }
        if (!bad && r->has_mc) {
            json_t *x = json_object();
            bad |= !x || json_object_set_new(x, "samples", json_integer((json_int_t)r->mc_samples)) ||
                   erg__json_set_number(x, "energy_j", r->mc_energy_j) ||
                   erg__json_set_number(x, "energy_sd_j", r->mc_energy_sd_j) ||
                   erg__json_set_number(x, "time_s", r->mc_time_s) ||
                   erg__json_set_number(x, "time_sd_s", r->mc_time_sd_s);
            bad |= json_object_set_new(o, "monte_carlo", x);
        }
    }
    json_decref(devs);
    json_decref(iv);
    if (bad) {
        json_decref(o);
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the report");
    }
    int rc = erg__json_dump_file(o, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12), diag);
    json_decref(o);
    return rc;
}
