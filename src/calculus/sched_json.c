/* SPDX-License-Identifier: MIT */
/* schedule/1 files: reader (expression and DAG forms) and writer. Format: docs/formats.md. */
#include "calculus/sched_read.h"
#include "calculus/schedule_impl.h"
#include "calculus/sig_json.h"
#include "calculus/sniff.h"
#include "core/file.h"
#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#define NONE ERG__STRMAP_NONE

struct rd {
    const struct erg__sched_builder *b;
    const char *file;
    char dir[4096];
    erg_diag *diag;
};

/* Re-issue a builder's diagnostic with the file as the place and the JSON path in front. */
static int relay(struct rd *r, int rc, const char *jpath, const erg_diag *sub)
{
    return erg_diag_set(r->diag, rc, r->file, "%s: %s", jpath, sub->detail);
}

void erg__sched_signature_path(const char *dir, const char *p, char *full, size_t size)
{
    if (p[0] == '/')
        snprintf(full, size, "%s", p);
    else
        snprintf(full, size, "%s/%s", dir, p);
}

static int read_devices(struct rd *r, const json_t *devs)
{
    if (!devs && (r->b->flags & ERG__SB_DEVICES_OPTIONAL))
        return ERG_OK;
    if (!devs)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "devices: missing (an object of id -> {\"static_power_w\": W})");
    if (!json_is_object(devs))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "devices: expected an object of id -> device");
    const char *id;
    const json_t *d;
    json_object_foreach(erg__json_mut(devs), id, d)
    {
        char jp[200];
        snprintf(jp, sizeof jp, "devices.%.150s", id);
        if (!json_is_object(d))
            return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s: expected an object", jp);
        double sw = NAN, iw = NAN;
        int rc;
        if ((rc = erg__json_number(d, "static_power_w", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &sw,
                                   r->file, jp, r->diag)) ||
            (rc = erg__json_number(d, "idle_power_w", ERG_JSON_NONNEG, &iw, r->file, jp, r->diag)))
            return rc;
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = r->b->device(r->b->ctx, id, sw, iw, &sub)) != ERG_OK)
            return relay(r, rc, jp, &sub);
    }
    return ERG_OK;
}

static int read_signatures(struct rd *r, const json_t *sigs)
{
    if (!sigs)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "signatures: missing (an object of name -> signature)");
    if (!json_is_object(sigs))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "signatures: expected an object of name -> signature");
    const char *name;
    const json_t *v;
    json_object_foreach(erg__json_mut(sigs), name, v)
    {
        char jp[200];
        snprintf(jp, sizeof jp, "signatures.%.150s", name);
        if (strlen(name) >= ERG_SIG_NAME_MAX || !name[0])
            return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                                "%s: name empty or longer than %d bytes", jp, ERG_SIG_NAME_MAX - 1);
        int rc = r->b->element(r->b->ctx, name, v, r->dir, r->file, jp, r->diag);
        if (rc != ERG_OK)
            return rc;
    }
    return ERG_OK;
}

static int read_expr(struct rd *r, const json_t *v, const char *jp, int depth, uint32_t *out)
{
    if (depth > 64)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "%s: expression nested deeper than 64 levels", jp);
    if (json_is_string(v))
        return r->b->leaf(r->b->ctx, json_string_value(v), r->file, jp, out, r->diag);
    if (!json_is_object(v))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "%s: expected a signature name or an operator object", jp);
    if (json_object_size(v) != 1)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "%s: expected one of {\"seq\": [...]}, {\"par\": [...]}, "
                            "{\"multi\": [...]}, {\"idle\": {...}}",
                            jp);
    const char *key = json_object_iter_key(json_object_iter(erg__json_mut(v)));
    const json_t *arg = json_object_get(v, key);
    char sub[512];
    if (strcmp(key, "idle") == 0) {
        snprintf(sub, sizeof sub, "%s.idle", jp);
        if (!json_is_object(arg))
            return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                                "%s: expected {\"device\": D, \"time_s\": t}", sub);
        char dev[ERG_SIG_DEVICE_MAX] = "";
        double t = 0.0;
        int rc;
        if ((rc = erg__json_string(arg, "device", ERG_JSON_REQUIRED, dev, sizeof dev, r->file, sub,
                                   r->diag)) ||
            (rc = erg__json_number(arg, "time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &t, r->file,
                                   sub, r->diag)))
            return rc;
        return r->b->idle(r->b->ctx, dev, t, r->file, sub, out, r->diag);
    }
    enum erg__sched_op op;
    if (strcmp(key, "seq") == 0)
        op = ERG__SCHED_SEQ;
    else if (strcmp(key, "par") == 0)
        op = ERG__SCHED_PAR;
    else if (strcmp(key, "multi") == 0)
        op = ERG__SCHED_MULTI;
    else
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "%s: unknown operator \"%s\" (expected seq, par, multi or idle)", jp,
                            key);
    if (!json_is_array(arg))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file, "%s.%s: expected an array of operands",
                            jp, key);
    size_t n = json_array_size(arg);
    if (n == 0)
        return erg_diag_set(r->diag, ERG_EINVAL, r->file,
                            "%s.%s: empty operator (it needs at least one operand)", jp, key);
    if (n >= UINT32_MAX)
        return erg_diag_set(r->diag, ERG_EINVAL, r->file, "%s.%s: too many operands", jp, key);
    uint32_t *kids = malloc(n * sizeof *kids);
    if (!kids)
        return erg_diag_set(r->diag, ERG_ENOMEM, r->file, "out of memory");
    int rc = ERG_OK;
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        snprintf(sub, sizeof sub, "%s.%s[%zu]", jp, key, i);
        rc = read_expr(r, json_array_get(arg, i), sub, depth + 1, &kids[i]);
    }
    if (rc == ERG_OK)
        rc = r->b->op(r->b->ctx, op, kids, (uint32_t)n, out, r->file, r->diag);
    free(kids);
    return rc;
}

/* ---- the calculus builder: an erg_schedule ---- */

struct cal {
    erg_schedule *s;
    struct cal_known {    /* per signature name key: the node checked first with it */
        uint32_t dev_key; /* its device name key, or NONE */
        uint32_t sig, device;
    } * known;
    size_t n_known;
};

static int cal_device(void *ctx, const char *id, double sw, double iw, erg_diag *sub)
{
    return erg_schedule_add_device(((struct cal *)ctx)->s, id, sw, iw, sub);
}

static int cal_accept(erg_schedule *s, const char *name, const erg_signature *sgp,
                      const char *fpath, const char *file, const char *jp, erg_diag *diag);

static int cal_element(void *ctx, const char *name, const json_t *v, const char *dir,
                       const char *file, const char *jp, erg_diag *diag)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    erg_signature sg;
    int rc;
    if (json_is_string(v)) {
        /* A path to a signature/1 file, relative to this file's folder. */
        char full[8192];
        erg__sched_signature_path(dir, json_string_value(v), full, sizeof full);
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = erg_signature_read_file(full, &sg, &sub)) != ERG_OK) {
            char msg[1024];
            erg_diag_format(&sub, msg, sizeof msg);
            return erg_diag_set(diag, rc, file, "%s: %s", jp, msg);
        }
    } else if (json_is_object(v)) {
        /* The device's static power is the default; the device must be declared. */
        char dev[ERG_SIG_DEVICE_MAX] = "";
        if ((rc = erg__json_string(v, "device", 0, dev, sizeof dev, file, jp, diag)) != ERG_OK)
            return rc;
        double def = NAN;
        if (dev[0]) {
            uint32_t di = erg__device_index(s, dev);
            if (di == NONE)
                return erg_diag_set(diag, ERG_EINVAL, file, "%s.device: undeclared device \"%s\"",
                                    jp, dev);
            def = s->devices[di].static_power_w;
        }
        if ((rc = erg__signature_check_members(v, 0, file, jp, diag)) != ERG_OK)
            return rc;
        rc = dev[0] ? erg__signature_from_json(v, def, file, jp, &sg, diag)
                    : erg__signature_from_json_opt(v, file, jp, &sg, diag);
        if (rc != ERG_OK)
            return rc;
    } else {
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s: expected a signature object or the path of a signature/1 file",
                            jp);
    }
    return cal_accept(s, name, &sg, json_is_string(v) ? json_string_value(v) : NULL, file, jp,
                      diag);
}

/* A signature decoded while streaming (the reader's fast path): the checks that cal_element's
 * erg__signature_from_json(_opt) makes once the device's static power is known, in its order. */
static int cal_signature(void *ctx, const char *name, const erg_signature *in, const char *file,
                         const char *jp, erg_diag *diag)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    erg_signature sg = *in;
    if (sg.device[0]) {
        uint32_t di = erg__device_index(s, sg.device);
        if (di == NONE)
            return erg_diag_set(diag, ERG_EINVAL, file, "%s.device: undeclared device \"%s\"", jp,
                                sg.device);
        if (isnan(sg.static_power_w))
            sg.static_power_w = s->devices[di].static_power_w;
    }
    int rc = erg__signature_check_pending(&sg, file, jp, diag);
    if (rc != ERG_OK)
        return rc;
    return cal_accept(s, name, &sg, NULL, file, jp, diag);
}

/* The checks common to both: the device, its static power (Axiom P2), the name. fpath: the
 * signature/1 file the element names, or NULL for an inline object. */
static int cal_accept(erg_schedule *s, const char *name, const erg_signature *sgp,
                      const char *fpath, const char *file, const char *jp, erg_diag *diag)
{
    int rc;
    erg_signature sg = *sgp;
    if (sg.device[0] && erg__device_index(s, sg.device) == NONE)
        return erg_diag_set(diag, ERG_EINVAL, file, "%s.device: undeclared device \"%s\"", jp,
                            sg.device);
    if (sg.device[0]) {
        const struct erg__device *dv = &s->devices[erg__device_index(s, sg.device)];
        if (!erg__static_power_agrees(sg.static_power_w, dv->static_power_w))
            return erg_diag_set(
                diag, ERG_EINVAL, file,
                "%s.static_power_w%s%s%s: signature \"%s\" has %.10g W but its device \"%s\" "
                "declares %.10g W; a device has one static power (Axiom P2): drop one of them "
                "(static_power_w from the signature to take the device's, or set "
                "devices.%s.static_power_w to %.10g)",
                jp, fpath ? " (in " : "", fpath ? fpath : "", fpath ? ")" : "", name,
                sg.static_power_w, sg.device, dv->static_power_w, sg.device, sg.static_power_w);
    }
    snprintf(sg.name, sizeof sg.name, "%s", name);
    erg_diag sub;
    erg_diag_clear(&sub);
    if ((rc = erg_schedule_add_signature(s, &sg, &sub)) != ERG_OK)
        return erg_diag_set(diag, rc, file, "%s: %s", jp, sub.detail);
    return ERG_OK;
}

static int cal_add(erg_schedule *s, const struct erg__expr *e, uint32_t *out, const char *file,
                   erg_diag *diag)
{
    *out = erg__expr_add(s, e);
    if (*out == NONE)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    return ERG_OK;
}

static int cal_leaf(void *ctx, const char *name, const char *file, const char *jp, uint32_t *out,
                    erg_diag *diag)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    uint32_t si = erg__sig_index(s, name);
    if (si == NONE)
        return erg_diag_set(diag, ERG_EINVAL, file, "%s: unknown signature \"%s\"", jp, name);
    const erg_signature *sg = &s->sigs[si];
    if (isnan(sg->static_power_w) && !sg->device[0])
        return erg_diag_set(diag, ERG_EINVAL, file,
                            "%s: signature \"%s\" has neither static_power_w nor a device", jp,
                            name);
    struct erg__expr e;
    memset(&e, 0, sizeof e);
    e.kind = ERG__EX_SIG;
    e.ref = si;
    return cal_add(s, &e, out, file, diag);
}

static int cal_idle(void *ctx, const char *dev, double t, const char *file, const char *jp,
                    uint32_t *out, erg_diag *diag)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    uint32_t di = erg__device_index(s, dev);
    if (di == NONE)
        return erg_diag_set(diag, ERG_EINVAL, file, "%s.device: undeclared device \"%s\"", jp, dev);
    struct erg__expr e;
    memset(&e, 0, sizeof e);
    e.kind = ERG__EX_IDLE;
    e.ref = di;
    e.time_s = t;
    return cal_add(s, &e, out, file, diag);
}

static int cal_op(void *ctx, enum erg__sched_op op, const uint32_t *kids, uint32_t n, uint32_t *out,
                  const char *file, erg_diag *diag)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    if (erg__grow((void **)&s->expr_kids, &s->cap_kids, s->n_kids + n, sizeof *s->expr_kids))
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    struct erg__expr e;
    memset(&e, 0, sizeof e);
    e.kind = op == ERG__SCHED_SEQ   ? ERG__EX_SEQ
             : op == ERG__SCHED_PAR ? ERG__EX_PAR
                                    : ERG__EX_MULTI;
    e.first = (uint32_t)s->n_kids;
    e.n = n;
    memcpy(s->expr_kids + s->n_kids, kids, n * sizeof *kids);
    s->n_kids += n;
    return cal_add(s, &e, out, file, diag);
}

static int cal_root(void *ctx, uint32_t id)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    s->has_expr = 1;
    s->expr_root = id;
    return ERG_OK;
}

/* A node of the file: one whose (signature name, device name) pair was checked at an earlier node
 * is appended directly (erg__schedule_append_node); the first of each pair goes through
 * erg_schedule_add_node, which checks it (and words the errors). */
static int cal_node(void *ctx, const char *id, size_t len, const char *sig, uint32_t sig_key,
                    const char *device, uint32_t dev_key, double start_s, erg_diag *sub)
{
    struct cal *c = ctx;
    erg_schedule *s = c->s;
    if (len > 0 && sig_key < c->n_known && c->known[sig_key].sig != NONE &&
        c->known[sig_key].dev_key == dev_key) {
        if (erg__schedule_append_node(s, id, len, c->known[sig_key].sig, c->known[sig_key].device,
                                      start_s) != ERG_OK)
            return erg_diag_set(sub, ERG_ENOMEM, NULL, "out of memory");
        return ERG_OK;
    }
    int rc = erg_schedule_add_node(s, id, sig, device, start_s, sub);
    if (rc != ERG_OK)
        return rc;
    if (sig_key >= c->n_known) {
        size_t n = c->n_known, cap = c->n_known;
        if (erg__grow((void **)&c->known, &cap, (size_t)sig_key + 1, sizeof *c->known))
            return ERG_OK; /* only a cache */
        for (c->n_known = cap; n < cap; n++)
            c->known[n].sig = NONE;
    }
    const struct erg__node *nd = &s->nodes[s->n_nodes - 1];
    c->known[sig_key].sig = nd->sig;
    c->known[sig_key].device = nd->device;
    c->known[sig_key].dev_key = dev_key;
    return ERG_OK;
}

static int cal_edges(void *ctx, uint32_t (*e)[2], size_t n, size_t cap, erg_diag *sub)
{
    erg_schedule *s = ((struct cal *)ctx)->s;
    if (s->n_edges == 0) {
        free(s->edges);
        s->edges = e;
        s->n_edges = n;
        s->cap_edges = cap;
        return ERG_OK;
    }
    if (erg__grow((void **)&s->edges, &s->cap_edges, s->n_edges + n, sizeof *s->edges)) {
        free(e);
        return erg_diag_set(sub, ERG_ENOMEM, NULL, "out of memory");
    }
    memcpy(s->edges + s->n_edges, e, n * sizeof *e);
    s->n_edges += n;
    free(e);
    return ERG_OK;
}

/*
 * The reader streams the file with yajl, a chunk at a time (standard input and pipes, which cannot
 * be read twice, are read whole first). "nodes" and "edges", the part that grows with the
 * schedule, are taken element by element as they pass: a node keeps its id (hashed once, into the
 * reader's id table), its signature and device names (interned: a small table of distinct names)
 * and its start; an edge endpoint is hashed as it passes and looked up some endpoints later (its
 * hash slot loaded meanwhile), so that edges become index pairs without a second pass. An
 * endpoint not found (edges before nodes in the file, or an unknown id) waits with its text until
 * all nodes are known. "signatures" is decoded as it passes, for a builder that takes decoded
 * signatures (sf_* below; a file of many distinct signatures, as `erg trace import` writes,
 * reads at the rate of one of few). "devices", "expr", "transitions" (and "signatures"
 * otherwise) are re-emitted as small JSON texts and decoded with jansson by the functions above.
 * Errors name file:line:column: the text up to the place is read again only then, and the place of
 * the i-th node or edge found by a second scan.
 */
enum member { M_NONE, M_TAG, M_SKIP, M_CAPTURE, M_NODES, M_EDGES, M_SIGS };
enum { CAP_DEVICES, CAP_SIGNATURES, CAP_EXPR, CAP_TRANSITIONS, CAP_N };

enum { CHUNK = 1 << 16, RING = 32, RING_KEY = 48 };

struct pnode {
    size_t id;         /* offset of the id in ids, or SIZE_MAX */
    uint32_t sig, dev; /* interned names, or NONE */
    double start_s;
};

/* An endpoint whose lookup waits in the ring (its slot being loaded), or in pend (its text in
 * pstrs) until all nodes are known. */
struct ring_e {
    uint32_t h, len;
    size_t edge;
    int which;
    char key[RING_KEY];
};

struct pend {
    size_t edge;
    int which;
    size_t str; /* offset in pstrs */
};

struct st {
    struct rd *r;
    const char *path;
    int streamed; /* a regular file read a chunk at a time (whole is NULL until an error) */
    char *whole;  /* the whole text: standard input, a pipe, or read again for an error */
    size_t whole_len;
    size_t base;      /* offset of the chunk being parsed */
    const char *text; /* the chunk being parsed, or the whole text; NULL once parsed */
    size_t text_len;
    size_t len; /* bytes parsed so far (all of them once the parse is over) */
    yajl_handle h;
    int rc;
    int depth;
    enum member member;
    int cap_which;
    yajl_gen gen;
    char *cap[CAP_N];
    size_t cap_off[CAP_N];
    int seen_tag, seen_nodes, seen_edges;
    char tag[64];
    size_t member_off;
    /* nodes */
    struct pnode *nodes;
    size_t n_nodes, cap_nodes;
    char *ids; /* NUL-separated node ids */
    size_t ids_len, ids_cap;
    erg__strmap id_map;
    uint32_t cur_h;   /* hash of the current node's id */
    size_t cur_len;   /* its length */
    size_t cur_off;   /* offset of the current node or edge */
    size_t first_dup; /* the first node whose id an earlier node has, or SIZE_MAX */
    int node_key;     /* 0 id, 1 signature, 2 device, 3 start_s, -1 another key (skipped) */
    /* interned signature and device names */
    char *names;
    size_t names_len, names_cap;
    size_t *name_off;
    size_t n_names, cap_names;
    erg__strmap name_map;
    /* edges */
    uint32_t (*pairs)[2];
    size_t n_edges, cap_edges;
    int edge_count;
    struct nring_e {
        uint32_t node, h;
    } nring[RING];
    size_t nring_head, nring_n;
    struct ring_e ring[RING];
    size_t ring_head, ring_n;
    struct pend *pend;
    size_t n_pend, cap_pend;
    char *pstrs;
    size_t pstrs_len, pstrs_cap;
    int seen_keys[CAP_N];
    char sig_name[64];    /* the signature being captured (depth 2 key of "signatures") */
    int seen_transitions; /* a frontier schedule's "transitions": refused once parsed */
    size_t transitions_off;
    /* "signatures" decoded while streaming (M_SIGS; see sf_* below) */
    int sf_active;          /* the member was streamed: its text lies at [sf_off, sf_end) */
    int sf_clean;           /* every element so far decoded cleanly */
    size_t sf_off, sf_end;  /* where its value opens and ends in the text */
    erg_signature *sf_sigs; /* the decoded elements, in file order */
    size_t sf_n, sf_cap;
    char *sf_names; /* their names (NUL-separated), at sf_name_off[i] */
    size_t sf_names_len, sf_names_cap;
    size_t *sf_name_off;
    size_t sf_name_cap;
    erg__strmap sf_map;   /* name -> element, for duplicates */
    size_t sf_pending;    /* offset of the name of the element being read */
    int sf_in;            /* inside an element's object */
    unsigned sf_seen;     /* the element's members seen (bits of erg__signature_keys) */
    unsigned sf_set;      /* its numbers given (not null) */
    int sf_key;           /* the member being read */
    int sf_flags;         /* inside its "flags" array */
    erg_signature sf_cur; /* the element being read */
    json_t *sf_root;      /* a nested member (theta, omega, contexts, ...) being built */
    json_t *sf_stack[64];
    int sf_sp;
    char sf_pkey[256]; /* its pending object key */
};

static const char *const node_keys[] = {"id", "signature", "device", "start_s"};

static const char *id_key(const void *ctx, uint32_t i)
{
    const struct st *t = ctx;
    return t->ids + t->nodes[i].id;
}

static const char *name_key(const void *ctx, uint32_t i)
{
    const struct st *t = ctx;
    return t->names + t->name_off[i];
}

/* The whole text, for a diagnostic: a streamed file is read again (NULL when that fails). */
static const char *whole(struct st *t, size_t *len)
{
    if (!t->whole && t->streamed) {
        erg_diag d;
        erg_diag_clear(&d);
        if (erg__read_file(t->path, &t->whole, &t->whole_len, &d) != ERG_OK)
            t->whole = NULL;
    }
    *len = t->whole ? t->whole_len : 0;
    return t->whole;
}

static void line_col(const char *buf, size_t len, size_t off, unsigned long *line,
                     unsigned long *col)
{
    unsigned long l = 1, c = 1;
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        if (buf[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int fail_at(struct st *t, size_t off, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(struct st *t, size_t off, int status, const char *fmt, ...)
{
    char where[300], detail[512];
    unsigned long line, col;
    size_t len;
    const char *text = whole(t, &len);
    if (text) {
        line_col(text, len, off, &line, &col);
        snprintf(where, sizeof where, "%s:%lu:%lu", t->r->file, line, col);
    } else {
        snprintf(where, sizeof where, "%s", t->r->file);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    t->rc = erg_diag_set(t->r->diag, status, where, "%s", detail);
    return 0;
}

static size_t here(struct st *t)
{
    return t->base + yajl_get_bytes_consumed(t->h);
}

/* Where the index-th element of the top-level member key ("nodes", "edges") opens: a second scan
 * of the text, for a diagnostic (0 when it cannot be found). */
struct locate {
    yajl_handle h;
    const char *key;
    size_t index, seen, off;
    int depth, in, found;
};

static int loc_open(void *ctx)
{
    struct locate *l = ctx;
    if (l->in && l->depth == 2 && l->seen++ == l->index) {
        size_t c = yajl_get_bytes_consumed(l->h);
        l->off = c ? c - 1 : 0;
        l->found = 1;
        return 0;
    }
    l->depth++;
    return 1;
}

static int loc_close(void *ctx)
{
    struct locate *l = ctx;
    if (--l->depth == 1)
        l->in = 0;
    return 1;
}

static int loc_key(void *ctx, const unsigned char *k, size_t n)
{
    struct locate *l = ctx;
    if (l->depth == 1)
        l->in = strlen(l->key) == n && memcmp(l->key, k, n) == 0;
    return 1;
}

static int loc_scalar(void *ctx)
{
    struct locate *l = ctx;
    if (l->in && l->depth == 1)
        l->in = 0;
    return 1;
}

static int loc_null(void *ctx)
{
    return loc_scalar(ctx);
}

static int loc_bool(void *ctx, int b)
{
    (void)b;
    return loc_scalar(ctx);
}

static int loc_num(void *ctx, const char *v, size_t n)
{
    (void)v;
    (void)n;
    return loc_scalar(ctx);
}

static int loc_str(void *ctx, const unsigned char *v, size_t n)
{
    (void)v;
    (void)n;
    return loc_scalar(ctx);
}

static size_t locate(struct st *t, const char *key, size_t index)
{
    static const yajl_callbacks cb = {loc_null, loc_bool, NULL,      NULL,     loc_num,  loc_str,
                                      loc_open, loc_key,  loc_close, loc_open, loc_close};
    size_t len;
    const char *text = whole(t, &len);
    struct locate l = {.key = key, .index = index};
    if (!text || !(l.h = yajl_alloc(&cb, NULL, &l)))
        return 0;
    yajl_parse(l.h, (const unsigned char *)text, len);
    yajl_free(l.h);
    return l.found ? l.off : 0;
}

static int add_bytes(char **buf, size_t *len, size_t *cap, const char *v, size_t n, size_t *at)
{
    if (erg__grow((void **)buf, cap, *len + n + 1, 1))
        return -1;
    memcpy(*buf + *len, v, n);
    (*buf)[*len + n] = '\0';
    *at = *len;
    *len += n + 1;
    return 0;
}

/* The interned key of a signature or device name (NONE: out of memory). */
static uint32_t intern(struct st *t, const char *v, size_t n)
{
    uint32_t h = erg__strmap_hashn(v, n);
    uint32_t k = erg__strmap_find_h(&t->name_map, v, n, h, name_key, t);
    if (k != NONE)
        return k;
    size_t at;
    if (t->n_names >= NONE - 1 ||
        erg__grow((void **)&t->name_off, &t->cap_names, t->n_names + 1, sizeof *t->name_off) ||
        add_bytes(&t->names, &t->names_len, &t->names_cap, v, n, &at))
        return NONE;
    t->name_off[t->n_names] = at;
    if (erg__strmap_insert_h(&t->name_map, (uint32_t)t->n_names, h))
        return NONE;
    return (uint32_t)t->n_names++;
}

/* Look an endpoint up: its node index into the pair, or its text into pend. 0, or -1 when out of
 * memory. */
static int resolve(struct st *t, size_t edge, int which, const char *key, size_t len, uint32_t h)
{
    uint32_t i = erg__strmap_find_h(&t->id_map, key, len, h, id_key, t);
    if (i != NONE) {
        t->pairs[edge][which] = i;
        return 0;
    }
    size_t at;
    if (erg__grow((void **)&t->pend, &t->cap_pend, t->n_pend + 1, sizeof *t->pend) ||
        add_bytes(&t->pstrs, &t->pstrs_len, &t->pstrs_cap, key, len, &at))
        return -1;
    t->pend[t->n_pend++] = (struct pend){edge, which, at};
    return 0;
}

/* Resolve the oldest endpoint of the ring. */
static int ring_pop(struct st *t)
{
    const struct ring_e *e = &t->ring[t->ring_head];
    t->ring_head = (t->ring_head + 1) % RING;
    t->ring_n--;
    return resolve(t, e->edge, e->which, e->key, e->len, e->h);
}

static int ring_flush(struct st *t)
{
    while (t->ring_n > 0)
        if (ring_pop(t))
            return -1;
    return 0;
}

/* An endpoint as it passes: hashed, its slot loaded, and looked up RING endpoints later. */
static int endpoint(struct st *t, size_t edge, int which, const char *v, size_t n)
{
    uint32_t h = erg__strmap_hashn(v, n);
    if (n >= RING_KEY)
        return ring_flush(t) || resolve(t, edge, which, v, n, h);
    if (t->ring_n == RING && ring_pop(t))
        return -1;
    erg__strmap_prefetch(&t->id_map, h);
    struct ring_e *e = &t->ring[(t->ring_head + t->ring_n++) % RING];
    e->h = h;
    e->len = (uint32_t)n;
    e->edge = edge;
    e->which = which;
    memcpy(e->key, v, n);
    return 0;
}

static int node_flush(struct st *t);

/* The current member's value ended (a scalar at depth 1, or its container closed). */
static int member_done(struct st *t)
{
    if (t->member == M_CAPTURE) {
        const unsigned char *text;
        size_t n;
        yajl_gen_get_buf(t->gen, &text, &n);
        t->cap[t->cap_which] = malloc(n + 1);
        if (!t->cap[t->cap_which])
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        memcpy(t->cap[t->cap_which], text, n);
        t->cap[t->cap_which][n] = '\0';
        yajl_gen_free(t->gen);
        t->gen = NULL;
    }
    if (t->member == M_SIGS)
        t->sf_end = here(t);
    if ((t->member == M_EDGES && ring_flush(t)) || (t->member == M_NODES && node_flush(t)))
        return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
    t->member = M_NONE;
    return 1;
}

/* A member is re-emitted for jansson through yajl_gen, whose nesting is bounded (YAJL_MAX_DEPTH,
 * 128): deeper input is refused as such, with the documented limit, not as an internal error. */
#define GEN(call)                                                                                  \
    do {                                                                                           \
        yajl_gen_status gs_ = (call);                                                              \
        if (gs_ == yajl_max_depth_exceeded)                                                        \
            return fail_at(t, here(t), ERG_EPARSE,                                                 \
                           "nested too deeply (an expression may nest 64 levels)");                \
        if (gs_ != yajl_gen_status_ok)                                                             \
            return fail_at(t, here(t), ERG_ENOMEM, "cannot re-emit JSON");                         \
    } while (0)

enum { K_NULL, K_BOOL, K_NUMBER, K_STRING };

/* Whether a string yajl hands over holds a NUL: only a decoded escape (\u0000) can, and yajl
 * decodes escapes into a buffer of its own; a string that lies in the text being parsed has none
 * (yajl refuses raw control characters), so only the others are searched. */
static int has_nul(const struct st *t, const char *v, size_t n)
{
    if ((uintptr_t)v >= (uintptr_t)t->text && (uintptr_t)v - (uintptr_t)t->text < t->text_len)
        return 0;
    return memchr(v, '\0', n) != NULL;
}

static int node_scalar(struct st *t, int kind, const char *v, size_t n)
{
    size_t i = t->n_nodes - 1;
    struct pnode *nd = &t->nodes[i];
    if (t->node_key <= 2) {
        if (kind != K_STRING)
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].%s: expected a string", i,
                           node_keys[t->node_key]);
        if (has_nul(t, v, n))
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].%s: contains a NUL character", i,
                           node_keys[t->node_key]);
        if (t->node_key == 0) {
            if (add_bytes(&t->ids, &t->ids_len, &t->ids_cap, v, n, &nd->id))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            t->cur_h = erg__strmap_hashn(v, n);
            t->cur_len = n;
            return 1;
        }
        uint32_t k = intern(t, v, n);
        if (k == NONE)
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        if (t->node_key == 1)
            nd->sig = k;
        else
            nd->dev = k;
        return 1;
    }
    if (kind == K_NULL)
        return 1;
    if (kind != K_NUMBER)
        return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].start_s: expected a number", i);
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)n, v);
    double x = strtod(num, NULL);
    if (x < 0.0)
        return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].start_s: must not be negative (got %g)",
                       i, x);
    nd->start_s = x;
    return 1;
}

/* Take a node's id into the id table, unless an earlier node has it. 0, or -1 out of memory. */
static int node_insert(struct st *t, uint32_t i, uint32_t h)
{
    const char *id = t->ids + t->nodes[i].id;
    if (erg__strmap_find_h(&t->id_map, id, strlen(id), h, id_key, t) != NONE) {
        if (t->first_dup == SIZE_MAX || i < t->first_dup)
            t->first_dup = i;
        return 0;
    }
    return erg__strmap_insert_h(&t->id_map, i, h);
}

/* Nodes wait in a ring too (their slots loading) before their ids go in; all are in once the
 * nodes end. */
static int node_flush(struct st *t)
{
    for (; t->nring_n > 0; t->nring_n--) {
        const struct nring_e *e = &t->nring[t->nring_head];
        t->nring_head = (t->nring_head + 1) % RING;
        if (node_insert(t, e->node, e->h))
            return -1;
    }
    return 0;
}

/* The current node closed. */
static int node_done(struct st *t)
{
    size_t i = t->n_nodes - 1;
    const struct pnode *nd = &t->nodes[i];
    if (nd->id == SIZE_MAX)
        return fail_at(t, t->cur_off, ERG_EPARSE, "nodes[%zu].id: required string is missing", i);
    if (nd->sig == NONE)
        return fail_at(t, t->cur_off, ERG_EPARSE,
                       "nodes[%zu].signature: required string is missing", i);
    if (t->nring_n == RING) {
        const struct nring_e *e = &t->nring[t->nring_head];
        t->nring_head = (t->nring_head + 1) % RING;
        t->nring_n--;
        if (node_insert(t, e->node, e->h))
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
    }
    /* the table grows before the slot is loaded, so that the load is for the slot probed */
    if (t->id_map.n + t->nring_n + 1 > t->id_map.cap / 2 && node_flush(t))
        return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
    erg__strmap_prefetch(&t->id_map, t->cur_h);
    t->nring[(t->nring_head + t->nring_n++) % RING] = (struct nring_e){(uint32_t)i, t->cur_h};
    return 1;
}

/*
 * "signatures" decoded as it streams (the calculus builder's signature hook): each element's
 * members go straight into an erg_signature, with no JSON tree but for the small nested members
 * (theta, omega: kept as compact sorted JSON text, as erg__signature_from_json keeps them; and
 * channels, contexts, command: built only to refuse what jansson refuses, then dropped). The fast
 * path decides nothing on its own: whatever the jansson path would refuse or treat otherwise (a
 * wrong type, a duplicate, a negative or unknown value, a path to a signature/1 file, an integer
 * jansson cannot hold, a NUL character) makes the member "unclean", and then the whole member is
 * re-read from the text and goes through jansson and the element hook exactly as before: the
 * same accepted language and the same messages, the error path alone paying for the second
 * reading.
 */
static const char *sf_name_key(const void *ctx, uint32_t i)
{
    const struct st *t = ctx;
    return t->sf_names + t->sf_name_off[i];
}

static void sf_unclean(struct st *t)
{
    t->sf_clean = 0;
    json_decref(t->sf_root);
    t->sf_root = NULL;
    t->sf_sp = 0;
}

/* A number as jansson reads it: an integer (no '.', 'e', 'E') held by json_int_t, or a real.
 * 0, or -1 where jansson refuses it. */
static int sf_number(const char *v, size_t n, double *d, int *is_int, long long *ll)
{
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)n, v);
    *is_int = !memchr(v, '.', n) && !memchr(v, 'e', n) && !memchr(v, 'E', n);
    errno = 0;
    if (*is_int) {
        *ll = strtoll(num, NULL, 10);
        if (errno == ERANGE)
            return -1;
        *d = (double)*ll;
        return 0;
    }
    *d = strtod(num, NULL);
    return isfinite(*d) ? 0 : -1;
}

/* Attach v (a new reference; NULL: out of memory) to the nested member being built. 1, or 0 with
 * the failure in t->rc. */
static int sf_attach(struct st *t, json_t *v, int push)
{
    if (!v)
        return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
    if (t->sf_sp == 0) {
        t->sf_root = v;
    } else {
        json_t *parent = t->sf_stack[t->sf_sp - 1];
        if (json_is_object(parent)) {
            if (json_object_get(parent, t->sf_pkey)) {
                json_decref(v);
                sf_unclean(t); /* a duplicate key: jansson's message */
                return 1;
            }
            if (json_object_set_new(parent, t->sf_pkey, v))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        } else if (json_array_append_new(parent, v)) {
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        }
    }
    if (push) {
        if (t->sf_sp == (int)(sizeof t->sf_stack / sizeof t->sf_stack[0])) {
            sf_unclean(t);
            return 1;
        }
        t->sf_stack[t->sf_sp++] = v;
    }
    return 1;
}

static int sf_scalar_json(struct st *t, int kind, const char *v, size_t n)
{
    double d;
    int is_int;
    long long ll;
    switch (kind) {
    case K_NULL:
        return sf_attach(t, json_null(), 0);
    case K_BOOL:
        return sf_attach(t, json_boolean(n != 0), 0);
    case K_NUMBER:
        if (sf_number(v, n, &d, &is_int, &ll)) {
            sf_unclean(t);
            return 1;
        }
        return sf_attach(t, is_int ? json_integer((json_int_t)ll) : json_real(d), 0);
    default:
        if (has_nul(t, v, n)) {
            sf_unclean(t);
            return 1;
        }
        return sf_attach(t, json_stringn(v, n), 0);
    }
}

enum {
    SF_STATIC,
    SF_TIME,
    SF_DYN,
    SF_TVAR,
    SF_EVAR,
    SF_NAME,
    SF_DEVICE,
    SF_THETA,
    SF_OMEGA,
    SF_KAPPA,
    SF_GRADE,
    SF_RUNS,
    SF_FLAGS
};

/* A scalar member of the element being read. */
static int sf_member_scalar(struct st *t, int kind, const char *v, size_t n)
{
    erg_signature *g = &t->sf_cur;
    if (kind == K_NULL)
        return 1; /* as absent */
    double d;
    int is_int;
    long long ll;
    char buf[ERG_SIG_NAME_MAX];
    switch (t->sf_key) {
    case SF_STATIC:
    case SF_TIME:
    case SF_DYN:
    case SF_TVAR:
    case SF_EVAR: {
        if (kind != K_NUMBER || sf_number(v, n, &d, &is_int, &ll) || d < 0.0)
            break;
        double *f[] = {&g->static_power_w, &g->time_s, &g->dynamic_energy_j, &g->time_var_s2,
                       &g->energy_var_j2};
        *f[t->sf_key] = d;
        t->sf_set |= 1u << t->sf_key;
        return 1;
    }
    case SF_NAME:
    case SF_DEVICE:
    case SF_KAPPA:
    case SF_GRADE: {
        if (kind != K_STRING || has_nul(t, v, n))
            break;
        char *dst = t->sf_key == SF_NAME     ? g->name
                    : t->sf_key == SF_DEVICE ? g->device
                    : t->sf_key == SF_KAPPA  ? g->kappa
                                             : buf;
        size_t size = t->sf_key == SF_NAME     ? sizeof g->name
                      : t->sf_key == SF_DEVICE ? sizeof g->device
                      : t->sf_key == SF_KAPPA  ? sizeof g->kappa
                                               : sizeof buf;
        if (n >= size)
            break;
        memcpy(dst, v, n);
        dst[n] = '\0';
        if (t->sf_key == SF_GRADE && erg_grade_parse(buf, &g->grade) != ERG_OK)
            break;
        return 1;
    }
    case SF_RUNS:
        if (kind != K_NUMBER || sf_number(v, n, &d, &is_int, &ll) || !is_int || ll < 0 ||
            ll > 1000000000)
            break;
        g->runs = (unsigned)ll;
        return 1;
    case SF_THETA:
    case SF_OMEGA:
    case SF_FLAGS:
        break; /* an object or an array is expected */
    default:   /* channels, contexts, command: not read here, but refused where jansson refuses */
        if (kind == K_STRING && has_nul(t, v, n))
            break;
        if (kind == K_NUMBER && sf_number(v, n, &d, &is_int, &ll))
            break;
        return 1;
    }
    sf_unclean(t);
    return 1;
}

/* A scalar inside "signatures" (depth >= 2). */
static int sf_scalar(struct st *t, int kind, const char *v, size_t n)
{
    if (!t->sf_clean)
        return 1;
    if (t->depth == 2) {
        sf_unclean(t); /* a path to a signature/1 file, or not a signature */
        return 1;
    }
    if (t->depth == 3)
        return sf_member_scalar(t, kind, v, n);
    if (t->sf_flags && t->depth == 4) {
        unsigned bit;
        char name[64];
        if (kind != K_STRING || has_nul(t, v, n) || n >= sizeof name) {
            sf_unclean(t);
            return 1;
        }
        memcpy(name, v, n);
        name[n] = '\0';
        if (erg_flag_parse(name, &bit) != ERG_OK) {
            sf_unclean(t);
            return 1;
        }
        t->sf_cur.flags |= bit;
        return 1;
    }
    return sf_scalar_json(t, kind, v, n);
}

/* An object or array opens inside "signatures" at depth (before it is entered). */
static int sf_open(struct st *t, int is_map)
{
    if (!t->sf_clean)
        return 1;
    if (t->depth == 2) {
        if (!is_map) {
            sf_unclean(t);
            return 1;
        }
        erg_signature_init(&t->sf_cur);
        /* A figure of unstated provenance is never promoted: without "grade" it is an estimate. */
        t->sf_cur.grade = ERG_GRADE_ESTIMATOR;
        t->sf_cur.static_power_w = NAN;
        t->sf_in = 1;
        t->sf_seen = 0;
        t->sf_set = 0;
        return 1;
    }
    if (t->depth == 3) {
        if (t->sf_key == SF_FLAGS) {
            if (is_map) {
                sf_unclean(t);
                return 1;
            }
            t->sf_flags = 1;
            return 1;
        }
        if ((t->sf_key == SF_THETA || t->sf_key == SF_OMEGA) ? !is_map : t->sf_key < SF_FLAGS) {
            sf_unclean(t); /* a number, string, grade or runs member given a container */
            return 1;
        }
    } else if (t->sf_flags) {
        sf_unclean(t);
        return 1;
    }
    return sf_attach(t, is_map ? json_object() : json_array(), 1);
}

/* A key inside "signatures" (the unknown-member check is cb_key's). */
static int sf_key(struct st *t, const char *k, size_t n)
{
    if (!t->sf_clean)
        return 1;
    if (t->depth == 2) {
        size_t at;
        uint32_t h;
        if (n == 0 || n >= ERG_SIG_NAME_MAX || has_nul(t, k, n) ||
            erg__strmap_find_h(&t->sf_map, k, n, (h = erg__strmap_hashn(k, n)), sf_name_key, t) !=
                NONE) {
            sf_unclean(t); /* read_signatures' or jansson's message */
            return 1;
        }
        if (t->sf_n >= NONE - 1 ||
            erg__grow((void **)&t->sf_name_off, &t->sf_name_cap, t->sf_n + 1,
                      sizeof *t->sf_name_off) ||
            add_bytes(&t->sf_names, &t->sf_names_len, &t->sf_names_cap, k, n, &at))
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        t->sf_name_off[t->sf_n] = at;
        if (erg__strmap_insert_h(&t->sf_map, (uint32_t)t->sf_n, h))
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        t->sf_pending = at;
        return 1;
    }
    if (t->depth == 3) {
        int key = -1;
        for (int i = 0; erg__signature_keys[i]; i++)
            if (strlen(erg__signature_keys[i]) == n && memcmp(erg__signature_keys[i], k, n) == 0)
                key = i;
        if (key < 0 || (t->sf_seen & (1u << key))) {
            sf_unclean(t);
            return 1;
        }
        t->sf_seen |= 1u << key;
        t->sf_key = key;
        return 1;
    }
    if (n >= sizeof t->sf_pkey || has_nul(t, k, n)) {
        sf_unclean(t);
        return 1;
    }
    memcpy(t->sf_pkey, k, n);
    t->sf_pkey[n] = '\0';
    return 1;
}

/* An object or array closed inside "signatures" (depth: the one now left in). */
static int sf_close(struct st *t)
{
    if (!t->sf_clean)
        return 1;
    if (t->depth == 2) { /* an element closed */
        if (!(t->sf_set & (1u << SF_TIME)) || !(t->sf_set & (1u << SF_DYN))) {
            sf_unclean(t); /* a required number is missing */
            return 1;
        }
        if (erg__grow((void **)&t->sf_sigs, &t->sf_cap, t->sf_n + 1, sizeof *t->sf_sigs))
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        t->sf_sigs[t->sf_n++] = t->sf_cur;
        t->sf_in = 0;
        return 1;
    }
    if (t->depth == 3 && t->sf_flags) {
        t->sf_flags = 0;
        return 1;
    }
    if (t->sf_sp > 0)
        t->sf_sp--;
    if (t->depth > 3)
        return 1;
    /* a nested member is whole */
    if (t->sf_key == SF_THETA || t->sf_key == SF_OMEGA) {
        char *dst = t->sf_key == SF_THETA ? t->sf_cur.theta : t->sf_cur.omega;
        char *text = erg_json_dumps(t->sf_root, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        size_t len = strlen(text);
        if (len >= ERG_SIG_META_MAX) {
            free(text);
            sf_unclean(t);
            return 1;
        }
        memcpy(dst, text, len + 1);
        free(text);
    }
    json_decref(t->sf_root);
    t->sf_root = NULL;
    return 1;
}

static int rg_null(void *g)
{
    return yajl_gen_null(g) == yajl_gen_status_ok;
}
static int rg_bool(void *g, int b)
{
    return yajl_gen_bool(g, b) == yajl_gen_status_ok;
}
static int rg_number(void *g, const char *v, size_t n)
{
    return yajl_gen_number(g, v, n) == yajl_gen_status_ok;
}
static int rg_string(void *g, const unsigned char *v, size_t n)
{
    return yajl_gen_string(g, v, n) == yajl_gen_status_ok;
}
static int rg_open_map(void *g)
{
    return yajl_gen_map_open(g) == yajl_gen_status_ok;
}
static int rg_close_map(void *g)
{
    return yajl_gen_map_close(g) == yajl_gen_status_ok;
}
static int rg_open_array(void *g)
{
    return yajl_gen_array_open(g) == yajl_gen_status_ok;
}
static int rg_close_array(void *g)
{
    return yajl_gen_array_close(g) == yajl_gen_status_ok;
}

/* The streamed "signatures" did not decode cleanly: re-emit its text as the capture would have
 * (the same events into yajl_gen), for the jansson path. */
static int sf_recapture(struct st *t)
{
    static const yajl_callbacks rg = {rg_null,      rg_bool,       NULL,          NULL,
                                      rg_number,    rg_string,     rg_open_map,   rg_string,
                                      rg_close_map, rg_open_array, rg_close_array};
    if (!t->whole && t->streamed) {
        int rc = erg__read_file(t->path, &t->whole, &t->whole_len, t->r->diag);
        if (rc != ERG_OK) {
            t->whole = NULL;
            return rc; /* ERG_ENOMEM, or the file cannot be read again */
        }
    }
    size_t len;
    const char *text = whole(t, &len);
    if (!text || t->sf_end > len || t->sf_off >= t->sf_end)
        return erg_diag_set(t->r->diag, ERG_EIO, t->r->file, "the file changed while read");
    yajl_gen g = yajl_gen_alloc(NULL);
    yajl_handle h = g ? yajl_alloc(&rg, NULL, g) : NULL;
    int ok = h &&
             yajl_parse(h, (const unsigned char *)text + t->sf_off, t->sf_end - t->sf_off) ==
                 yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    const unsigned char *buf;
    size_t n;
    if (ok) {
        yajl_gen_get_buf(g, &buf, &n);
        t->cap[CAP_SIGNATURES] = malloc(n + 1);
        if (t->cap[CAP_SIGNATURES]) {
            memcpy(t->cap[CAP_SIGNATURES], buf, n);
            t->cap[CAP_SIGNATURES][n] = '\0';
        }
    }
    if (h)
        yajl_free(h);
    if (g)
        yajl_gen_free(g);
    if (!t->cap[CAP_SIGNATURES])
        return erg_diag_set(t->r->diag, ERG_ENOMEM, t->r->file, "out of memory");
    return ERG_OK;
}

static int on_scalar(struct st *t, int kind, const char *v, size_t n)
{
    if (t->depth == 0)
        return fail_at(t, here(t), ERG_EPARSE, "expected a JSON object at the top level");
    switch (t->member) {
    case M_SIGS:
        if (!sf_scalar(t, kind, v, n))
            return 0;
        break;
    case M_CAPTURE:
        if (kind == K_NULL)
            GEN(yajl_gen_null(t->gen));
        else if (kind == K_BOOL)
            GEN(yajl_gen_bool(t->gen, n != 0));
        else if (kind == K_NUMBER)
            GEN(yajl_gen_number(t->gen, v, n));
        else
            GEN(yajl_gen_string(t->gen, (const unsigned char *)v, n));
        break;
    case M_TAG:
        if (kind != K_STRING || n >= sizeof t->tag || memchr(v, '\0', n))
            return fail_at(t, here(t), ERG_EPARSE,
                           "format tag \"erg\" is not a string, expected \"schedule/1\"");
        memcpy(t->tag, v, n);
        t->tag[n] = '\0';
        t->seen_tag = 1;
        break;
    case M_NODES:
        if (t->depth == 1)
            return fail_at(t, here(t), ERG_EPARSE, "nodes: expected an array of nodes");
        if (t->depth == 2)
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu]: expected an object", t->n_nodes);
        if (t->depth == 3 && t->node_key >= 0 && !node_scalar(t, kind, v, n))
            return 0;
        break;
    case M_EDGES:
        if (t->depth == 1)
            return fail_at(t, here(t), ERG_EPARSE, "edges: expected an array of [from, to] pairs");
        if (t->depth == 2)
            return fail_at(t, here(t), ERG_EPARSE, "edges[%zu]: expected [\"from\", \"to\"]",
                           t->n_edges);
        if (kind != K_STRING || t->edge_count >= 2 || has_nul(t, v, n))
            return fail_at(t, t->cur_off, ERG_EPARSE, "edges[%zu]: expected [\"from\", \"to\"]",
                           t->n_edges - 1);
        if (endpoint(t, t->n_edges - 1, t->edge_count++, v, n))
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        break;
    default:
        break;
    }
    if (t->depth == 1)
        return member_done(t);
    return 1;
}

static int cb_null(void *ctx)
{
    return on_scalar(ctx, K_NULL, NULL, 0);
}

static int cb_bool(void *ctx, int b)
{
    return on_scalar(ctx, K_BOOL, NULL, (size_t)(b != 0));
}

static int cb_number(void *ctx, const char *v, size_t n)
{
    struct st *t = ctx;
    char num[64];
    if (n >= sizeof num)
        return fail_at(t, here(t), ERG_EPARSE, "malformed JSON: number %.20s... is too long", v);
    snprintf(num, sizeof num, "%.*s", (int)n, v);
    if (!isfinite(strtod(num, NULL)))
        return fail_at(t, here(t), ERG_EPARSE, "malformed JSON: number %s is out of range", num);
    return on_scalar(ctx, K_NUMBER, v, n);
}

static int cb_string(void *ctx, const unsigned char *v, size_t n)
{
    return on_scalar(ctx, K_STRING, (const char *)v, n);
}

static int cb_start(struct st *t, int is_map)
{
    if (t->depth == 0) {
        if (!is_map)
            return fail_at(t, here(t), ERG_EPARSE, "expected a JSON object at the top level");
        t->depth = 1;
        return 1;
    }
    switch (t->member) {
    case M_SIGS:
        /* as deep as the capture re-emitted it (yajl_gen: YAJL_MAX_DEPTH from "signatures") */
        if (t->depth >= 128)
            return fail_at(t, here(t), ERG_EPARSE,
                           "nested too deeply (an expression may nest 64 levels)");
        if (!sf_open(t, is_map))
            return 0;
        break;
    case M_CAPTURE:
        if (t->cap_which == CAP_SIGNATURES && t->depth == 1 && is_map && t->r->b->signature &&
            !(t->r->b->flags & ERG__SB_OPERATING_SETS)) {
            /* decoded as it streams (sf_* above) */
            yajl_gen_free(t->gen);
            t->gen = NULL;
            t->member = M_SIGS;
            t->sf_active = 1;
            t->sf_clean = 1;
            t->sf_off = here(t) ? here(t) - 1 : 0;
            break;
        }
        GEN(is_map ? yajl_gen_map_open(t->gen) : yajl_gen_array_open(t->gen));
        break;
    case M_TAG:
        return fail_at(t, here(t), ERG_EPARSE,
                       "format tag \"erg\" is not a string, expected \"schedule/1\"");
    case M_NODES:
        if (t->depth == 1 && is_map)
            return fail_at(t, here(t), ERG_EPARSE, "nodes: expected an array of nodes");
        if (t->depth == 2) {
            if (!is_map)
                return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu]: expected an object",
                               t->n_nodes);
            if (t->n_nodes >= NONE - 1)
                return fail_at(t, here(t), ERG_EINVAL, "nodes: more than %u nodes", NONE - 2);
            if (erg__grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            t->nodes[t->n_nodes++] = (struct pnode){SIZE_MAX, NONE, NONE, NAN};
            t->cur_off = here(t) ? here(t) - 1 : 0;
            t->node_key = -1;
        } else if (t->depth == 3 && t->node_key >= 0) {
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].%s: expected a %s", t->n_nodes - 1,
                           node_keys[t->node_key], t->node_key == 3 ? "number" : "string");
        }
        break;
    case M_EDGES:
        if (t->depth == 1 && is_map)
            return fail_at(t, here(t), ERG_EPARSE, "edges: expected an array of [from, to] pairs");
        if (t->depth == 2) {
            if (is_map)
                return fail_at(t, here(t), ERG_EPARSE, "edges[%zu]: expected [\"from\", \"to\"]",
                               t->n_edges);
            if (erg__grow((void **)&t->pairs, &t->cap_edges, t->n_edges + 1, sizeof *t->pairs))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            t->pairs[t->n_edges][0] = t->pairs[t->n_edges][1] = NONE;
            t->n_edges++;
            t->cur_off = here(t) ? here(t) - 1 : 0;
            t->edge_count = 0;
        } else if (t->depth >= 3) {
            return fail_at(t, t->cur_off, ERG_EPARSE, "edges[%zu]: expected [\"from\", \"to\"]",
                           t->n_edges - 1);
        }
        break;
    default:
        break;
    }
    t->depth++;
    return 1;
}

static int cb_start_map(void *ctx)
{
    return cb_start(ctx, 1);
}

static int cb_start_array(void *ctx)
{
    return cb_start(ctx, 0);
}

static int cb_end(struct st *t, int is_map)
{
    t->depth--;
    if (t->depth == 0)
        return 1;
    if (t->member == M_CAPTURE)
        GEN(is_map ? yajl_gen_map_close(t->gen) : yajl_gen_array_close(t->gen));
    if (t->member == M_SIGS && t->depth >= 2 && !sf_close(t))
        return 0;
    if (t->member == M_NODES && t->depth == 2 && !node_done(t))
        return 0;
    if (t->member == M_EDGES && t->depth == 2 && t->edge_count != 2)
        return fail_at(t, t->cur_off, ERG_EPARSE, "edges[%zu]: expected [\"from\", \"to\"]",
                       t->n_edges - 1);
    if (t->depth == 1)
        return member_done(t);
    return 1;
}

static int cb_end_map(void *ctx)
{
    return cb_end(ctx, 1);
}

static int cb_end_array(void *ctx)
{
    return cb_end(ctx, 0);
}

/* A member k (n bytes) of signatures.<sig_name> that a signature does not have: refused at the
 * key (an operating set's "points" with a pointer to erg frontier). Returns fail_at's 0. */
static int unknown_sig_key(struct st *t, const unsigned char *k, size_t n)
{
    size_t off = here(t) >= n + 2 ? here(t) - n - 2 : 0;
    if (n == 6 && memcmp(k, "points", 6) == 0)
        return fail_at(t, off, ERG_EPARSE,
                       "signatures.%s is an operating set (points): use erg frontier", t->sig_name);
    return fail_at(t, off, ERG_EPARSE, "signatures.%s.%.*s: unknown member of a signature",
                   t->sig_name, (int)(n < 60 ? n : 60), (const char *)k);
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
    struct st *t = ctx;
    if (t->member == M_SIGS) {
        if (t->depth == 2)
            snprintf(t->sig_name, sizeof t->sig_name, "%.*s", (int)(n < 60 ? n : 60),
                     (const char *)k);
        if (t->depth == 3 && !erg__signature_key_known((const char *)k, n))
            return unknown_sig_key(t, k, n);
        return sf_key(t, (const char *)k, n);
    }
    if (t->member == M_CAPTURE) {
        if (t->cap_which == CAP_SIGNATURES && t->depth == 2)
            snprintf(t->sig_name, sizeof t->sig_name, "%.*s", (int)(n < 60 ? n : 60),
                     (const char *)k);
        if (t->cap_which == CAP_SIGNATURES && t->depth == 3 &&
            !(t->r->b->flags & ERG__SB_OPERATING_SETS) &&
            !erg__signature_key_known((const char *)k, n))
            return unknown_sig_key(t, k, n);
        GEN(yajl_gen_string(t->gen, k, n));
        return 1;
    }
    if (t->member == M_NODES && t->depth == 3) {
        t->node_key = -1;
        for (int i = 0; i < 4; i++)
            if (strlen(node_keys[i]) == n && memcmp(node_keys[i], k, n) == 0)
                t->node_key = i;
        return 1;
    }
    if (t->depth != 1)
        return 1; /* inside a skipped value */
    t->member_off = here(t) >= n + 2 ? here(t) - n - 2 : 0;
    static const char *const known[] = {"erg",        "name", "description", "devices",
                                        "signatures", "expr", "nodes",       "edges"};
    int which = -1;
    for (int i = 0; i < 8; i++)
        if (strlen(known[i]) == n && memcmp(known[i], k, n) == 0)
            which = i;
    if (which < 0 && n == 12 && memcmp(k, "correlations", 12) == 0) {
        t->member = M_SKIP; /* correlated noise: erg_context_set_read_schedule (context.c) */
        return 1;
    }
    if (which < 0 && n == 11 && memcmp(k, "transitions", 11) == 0 && t->r->b->transitions) {
        which = 8; /* captured for the builder */
    } else if (which < 0 && n == 11 && memcmp(k, "transitions", 11) == 0) {
        /* A frontier schedule: refused after the parse, so that an operating set in
         * "signatures" is named first wherever the members stand. */
        t->seen_transitions = 1;
        t->transitions_off = t->member_off;
        t->member = M_SKIP;
        return 1;
    }
    if (which < 0)
        return fail_at(t, t->member_off, ERG_EPARSE, "%.*s: unknown member of a schedule/1 file",
                       (int)(n < 60 ? n : 60), (const char *)k);
    switch (which) {
    case 0:
        if (t->seen_tag)
            return fail_at(t, t->member_off, ERG_EPARSE, "erg: duplicate member");
        t->member = M_TAG;
        break;
    case 1:
    case 2:
        t->member = M_SKIP;
        break;
    case 3:
    case 4:
    case 5:
    case 8:
        t->cap_which = which == 8 ? CAP_TRANSITIONS : which - 3;
        if (t->seen_keys[t->cap_which]++)
            return fail_at(t, t->member_off, ERG_EPARSE, "%s: duplicate member",
                           which == 8 ? "transitions" : known[which]);
        t->cap_off[t->cap_which] = t->member_off;
        t->gen = yajl_gen_alloc(NULL);
        if (!t->gen)
            return fail_at(t, t->member_off, ERG_ENOMEM, "out of memory");
        t->member = M_CAPTURE;
        break;
    case 6:
        if (t->seen_nodes++)
            return fail_at(t, t->member_off, ERG_EPARSE, "nodes: duplicate member");
        t->member = M_NODES;
        break;
    default:
        if (t->seen_edges++)
            return fail_at(t, t->member_off, ERG_EPARSE, "edges: duplicate member");
        t->member = M_EDGES;
        break;
    }
    return 1;
}

static const yajl_callbacks callbacks = {cb_null,    cb_bool,        NULL,         NULL,
                                         cb_number,  cb_string,      cb_start_map, cb_key,
                                         cb_end_map, cb_start_array, cb_end_array};

/* Decode a captured member with jansson. */
static int load_cap(struct st *t, int which, json_t **out)
{
    *out = NULL;
    if (!t->cap[which])
        return ERG_OK;
    json_error_t err;
    *out = json_loads(t->cap[which], JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    if (!*out) {
        static const char *const names[] = {"devices", "signatures", "expr", "transitions"};
        fail_at(t, t->cap_off[which], ERG_EPARSE, "%s: %s", names[which], err.text);
        return t->rc;
    }
    return ERG_OK;
}

/* The text of an edge's endpoint: its node's id, or the text that waits in pend. */
static const char *endpoint_text(const struct st *t, size_t edge, int which)
{
    if (t->pairs[edge][which] != NONE)
        return id_key(t, t->pairs[edge][which]);
    for (size_t k = 0; k < t->n_pend; k++)
        if (t->pend[k].edge == edge && t->pend[k].which == which)
            return t->pstrs + t->pend[k].str;
    return "";
}

/* Hand the nodes and the edges to the builder (all other members are in). */
static int finish_graph(struct st *t)
{
    struct rd *r = t->r;
    int rc;
    /* Endpoints that waited: all nodes are known now. The first unknown one is reported after
     * the nodes' own errors, as the nodes come first. */
    size_t bad = SIZE_MAX;
    for (size_t k = 0; k < t->n_pend && bad == SIZE_MAX; k++) {
        const struct pend *p = &t->pend[k];
        uint32_t i = erg__strmap_find(&t->id_map, t->pstrs + p->str, id_key, t);
        if (i == NONE)
            bad = k;
        else
            t->pairs[p->edge][p->which] = i;
    }
    erg__strmap_free(&t->id_map); /* the ids are unique and the edges resolved */
    erg__strmap_free(&t->name_map);
    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct pnode *nd = &t->nodes[i];
        const char *id = t->ids + nd->id;
        erg_diag sub;
        erg_diag_clear(&sub);
        if (i == t->first_dup) {
            fail_at(t, locate(t, "nodes", i), ERG_EINVAL,
                    "nodes[%zu]: node \"%s\" is defined twice", i, id);
            return t->rc;
        }
        rc = r->b->node(r->b->ctx, id, strlen(id), t->names + t->name_off[nd->sig], nd->sig,
                        nd->dev == NONE ? NULL : t->names + t->name_off[nd->dev], nd->dev,
                        nd->start_s, &sub);
        if (rc != ERG_OK) {
            fail_at(t, locate(t, "nodes", i), rc, "nodes[%zu]: %s", i, sub.detail);
            return t->rc;
        }
    }
    if (bad != SIZE_MAX) {
        const struct pend *p = &t->pend[bad];
        fail_at(t, locate(t, "edges", p->edge), ERG_EINVAL,
                "edges[%zu]: edge [\"%s\", \"%s\"]: no node \"%s\"", p->edge,
                endpoint_text(t, p->edge, 0), endpoint_text(t, p->edge, 1), t->pstrs + p->str);
        return t->rc;
    }
    free(t->nodes);
    free(t->ids);
    t->nodes = NULL;
    t->ids = NULL;
    if (t->n_edges == 0)
        return ERG_OK;
    if (t->cap_edges > t->n_edges) { /* give back the growth slack */
        uint32_t(*p)[2] = realloc(t->pairs, t->n_edges * sizeof *p);
        if (p) {
            t->pairs = p;
            t->cap_edges = t->n_edges;
        }
    }
    erg_diag sub;
    erg_diag_clear(&sub);
    rc = r->b->edges(r->b->ctx, t->pairs, t->n_edges, t->cap_edges, &sub);
    t->pairs = NULL;
    if (rc != ERG_OK)
        return erg_diag_set(r->diag, rc, r->file, "edges: %s", sub.detail);
    return ERG_OK;
}

static int finish(struct st *t)
{
    struct rd *r = t->r;
    int rc;
    json_t *tagobj = json_object();
    if (!tagobj)
        return erg_diag_set(r->diag, ERG_ENOMEM, r->file, "out of memory");
    if (t->seen_tag)
        json_object_set_new(tagobj, "erg", json_string(t->tag));
    rc = erg__json_check_tag(tagobj, "schedule", 1, r->file, r->diag);
    json_decref(tagobj);
    if (rc != ERG_OK)
        return rc;
    if (t->seen_transitions) {
        fail_at(t, t->transitions_off, ERG_EPARSE,
                "transitions: transition elements belong to operating sets (a frontier "
                "schedule): use erg frontier");
        return t->rc;
    }
    json_t *devs, *sigs, *expr;
    if ((rc = load_cap(t, CAP_DEVICES, &devs)) != ERG_OK)
        return rc;
    rc = read_devices(r, devs);
    json_decref(devs);
    if (rc != ERG_OK)
        return rc;
    if (t->sf_active && t->sf_clean) {
        erg__strmap_free(&t->sf_map);
        for (size_t i = 0; i < t->sf_n; i++) {
            const char *name = t->sf_names + t->sf_name_off[i];
            char jp[200];
            snprintf(jp, sizeof jp, "signatures.%.150s", name);
            if ((rc = r->b->signature(r->b->ctx, name, &t->sf_sigs[i], r->file, jp, r->diag)) !=
                ERG_OK)
                return rc;
        }
    } else {
        if (t->sf_active && (rc = sf_recapture(t)) != ERG_OK)
            return rc;
        if ((rc = load_cap(t, CAP_SIGNATURES, &sigs)) != ERG_OK)
            return rc;
        rc = read_signatures(r, sigs);
        json_decref(sigs);
        if (rc != ERG_OK)
            return rc;
    }
    if (t->cap[CAP_TRANSITIONS]) {
        json_t *trs;
        if ((rc = load_cap(t, CAP_TRANSITIONS, &trs)) != ERG_OK)
            return rc;
        rc = r->b->transitions(r->b->ctx, trs, r->file, r->diag);
        json_decref(trs);
        if (rc != ERG_OK)
            return rc;
    }
    if (t->cap[CAP_EXPR] && (t->seen_nodes || t->seen_edges))
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "expr: a schedule has either expr or nodes + edges, not both");
    if (t->cap[CAP_EXPR]) {
        if ((rc = load_cap(t, CAP_EXPR, &expr)) != ERG_OK)
            return rc;
        uint32_t root_ix;
        rc = read_expr(r, expr, "expr", 0, &root_ix);
        json_decref(expr);
        if (rc != ERG_OK)
            return rc;
        return r->b->root(r->b->ctx, root_ix);
    }
    if (!t->seen_nodes)
        return erg_diag_set(r->diag, ERG_EPARSE, r->file,
                            "a schedule needs an expr or nodes (+ edges)");
    if (t->n_nodes == 0)
        return erg_diag_set(r->diag, ERG_EINVAL, r->file,
                            "nodes: empty (a schedule needs at least one element)");
    return finish_graph(t);
}

/* A check on a decoded member (devices, signatures, transitions, expr) or on the whole schedule
 * failed with where = the file and detail "<JSON path>: what is wrong": put the line and column
 * of the value the path names into where, the detail kept (jansson keeps no positions, so
 * erg__json_diag_place walks the text again: only the error path pays). A path that names no value
 * in the text (a missing key, a name holding '.', a member of a signature file named by path)
 * gives the position of its nearest enclosing value. Other diagnostics are left as they are. */
static int place(struct st *t, int rc)
{
    erg_diag *d = t->r->diag;
    if (rc != ERG_OK && d && d->status == rc && strcmp(d->where, t->r->file) == 0) {
        size_t len;
        const char *text = whole(t, &len);
        erg__json_diag_place(d, text, len, t->r->file);
    }
    return rc;
}

/* The streaming parse failed with status rc. Unless the file declared "erg": "schedule/1" before
 * the failure, look at the whole text: a file of another kind (a signature, a model, a
 * calibration) is reported by its format tag, a Chrome/Kineto trace with the command that
 * converts it, an untagged well-formed file by its missing tag; rc's message stands otherwise. */
static int tag_first(struct st *t, int rc)
{
    if (t->seen_tag && strcmp(t->tag, "schedule/1") == 0)
        return rc;
    size_t len;
    const char *text = whole(t, &len);
    erg__sniff sn;
    if (!text || erg__sniff_json(text, len, &sn) != 0)
        return rc;
    if (sn.tag_kind) {
        json_t *o = json_pack("{s:o}", "erg", sn.tag_kind == 1 ? json_string(sn.tag) : json_null());
        erg_diag sub;
        erg_diag_clear(&sub);
        int trc = o ? erg__json_check_tag(o, "schedule", 1, t->r->file, &sub) : ERG_OK;
        json_decref(o);
        if (trc == ERG_OK)
            return rc;
        const char *hint = "";
        if (sn.tag_kind == 1 && strncmp(sn.tag, "signature/", 10) == 0)
            hint = " (a signature/1 file is one element: name it in a schedule's \"signatures\")";
        fail_at(t, sn.tag_off, trc, "%s%s", sub.detail, hint);
        return t->rc;
    }
    if (sn.trace)
        return erg_diag_set(t->r->diag, ERG_EPARSE, t->r->file,
                            "a Chrome/Kineto trace, not a schedule/1 file: " ERG__TRACE_HINT);
    if (sn.complete && sn.top_object)
        return erg_diag_set(t->r->diag, ERG_EPARSE, t->r->file,
                            "missing format tag \"erg\": \"schedule/1\" (not a schedule file?)");
    return rc;
}

/* Feed the text to the parser: a regular file a chunk at a time, else the whole text read first.
 * ERG_OK with the parser's status in *ys, or a read error. */
static int feed(struct st *t, FILE *f, int seekable, yajl_status *ys, erg_diag *diag)
{
    const char *name = t->r->file;
    *ys = yajl_status_ok;
    if (!seekable) {
        int rc = erg__read_all(f, t->path, &t->whole, &t->whole_len, diag);
        if (rc != ERG_OK)
            return rc;
        if (erg__is_gzip(t->whole, t->whole_len))
            goto gzip;
        t->len = t->whole_len;
        t->text = t->whole;
        t->text_len = t->whole_len;
        *ys = yajl_parse(t->h, (const unsigned char *)t->whole, t->whole_len);
        return ERG_OK;
    }
    char *chunk = malloc(CHUNK);
    if (!chunk)
        return erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
    int rc = ERG_OK;
    for (;;) {
        size_t n = fread(chunk, 1, CHUNK, f);
        if (n == 0) {
            if (ferror(f))
                rc = erg_diag_set(diag, ERG_EIO, name, "read error: %s", strerror(errno));
            break;
        }
        if (t->len == 0 && erg__is_gzip(chunk, n)) {
            free(chunk);
            goto gzip;
        }
        t->base = t->len;
        t->text = chunk;
        t->text_len = n;
        *ys = yajl_parse(t->h, (const unsigned char *)chunk, n);
        t->len += n;
        if (*ys != yajl_status_ok)
            break;
    }
    t->text = NULL;
    t->text_len = 0;
    free(chunk);
    return rc;
gzip:
    return erg_diag_set(diag, ERG_EPARSE, name,
                        "a gzip-compressed file, not a schedule/1 file; for a Chrome/Kineto "
                        "trace, " ERG__TRACE_HINT);
}

int erg__sched_read(const char *path, const struct erg__sched_builder *b, erg_diag *diag)
{
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    struct rd r = {.b = b, .file = name, .diag = diag};
    int rc, seekable = 0;
    FILE *f = erg__open_read(path, &seekable, diag, &rc);
    if (!f)
        return rc;
    struct st t;
    memset(&t, 0, sizeof t);
    t.r = &r;
    t.path = path;
    t.streamed = seekable;
    t.first_dup = SIZE_MAX;
    t.h = yajl_alloc(&callbacks, NULL, &t);
    if (!t.h) {
        erg__close_read(f);
        return erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
    }
    if (strcmp(path, "-") == 0)
        snprintf(r.dir, sizeof r.dir, ".");
    else
        erg__dirname(path, r.dir, sizeof r.dir);
    yajl_status ys;
    rc = feed(&t, f, seekable, &ys, diag);
    erg__close_read(f);
    if (rc != ERG_OK)
        goto done;
    int at_end = 0;
    if (ys == yajl_status_ok) {
        t.base = t.len;
        ys = yajl_complete_parse(t.h);
        at_end = 1;
    }
    if (ys == yajl_status_client_canceled) {
        rc = tag_first(&t, t.rc);
    } else if (ys != yajl_status_ok) {
        unsigned char *msg = yajl_get_error(t.h, 0, NULL, 0);
        const char *m = msg ? (const char *)msg : "syntax error";
        size_t n = strlen(m);
        while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
            n--;
        fail_at(&t, at_end ? t.len : here(&t), ERG_EPARSE, "malformed JSON: %.*s", (int)n, m);
        if (msg)
            yajl_free_error(t.h, msg);
        rc = tag_first(&t, t.rc);
    } else if (t.depth != 0 || t.len == 0) {
        rc = erg_diag_set(diag, ERG_EPARSE, name, "malformed JSON: the document ends early");
    } else {
        rc = place(&t, finish(&t));
    }
done:
    yajl_free(t.h);
    if (t.gen)
        yajl_gen_free(t.gen);
    for (int i = 0; i < CAP_N; i++)
        free(t.cap[i]);
    free(t.whole);
    free(t.nodes);
    free(t.ids);
    erg__strmap_free(&t.id_map);
    free(t.names);
    free(t.name_off);
    erg__strmap_free(&t.name_map);
    free(t.pairs);
    free(t.pend);
    free(t.pstrs);
    free(t.sf_sigs);
    free(t.sf_names);
    free(t.sf_name_off);
    erg__strmap_free(&t.sf_map);
    json_decref(t.sf_root);
    return rc;
}

/* Give back the growth slack of the node arrays (the file's nodes are all in). */
static void shrink(erg_schedule *s)
{
    if (s->n_nodes > 0 && s->cap_nodes > s->n_nodes) {
        struct erg__node *p = realloc(s->nodes, s->n_nodes * sizeof *p);
        if (p) {
            s->nodes = p;
            s->cap_nodes = s->n_nodes;
        }
    }
    if (s->ids_len > 0 && s->ids_cap > s->ids_len) {
        char *p = realloc(s->ids, s->ids_len);
        if (p) {
            s->ids = p;
            s->ids_cap = s->ids_len;
        }
    }
}

int erg_schedule_read_file(const char *path, erg_schedule **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_read_file: NULL argument");
    *out = NULL;
    struct cal c = {erg_schedule_new(), NULL, 0};
    if (!c.s)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    const struct erg__sched_builder b = {&c,       0,        cal_device, cal_element,
                                         NULL,     cal_leaf, cal_idle,   cal_op,
                                         cal_root, cal_node, cal_edges,  cal_signature};
    int rc = erg__sched_read(path, &b, diag);
    free(c.known);
    if (rc != ERG_OK) {
        erg_schedule_free(c.s);
        return rc;
    }
    shrink(c.s);
    *out = c.s;
    return ERG_OK;
}

/* ---------------------------------------------------------------- writer -----------------------
 */

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

int erg_schedule_write_file(const char *path, const erg_schedule *s, erg_diag *diag)
{
    if (!s || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_write_file: NULL argument");
    json_t *root = schedule_json(s);
    if (!root)
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the schedule");
    int rc = erg__json_dump_file(
        root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- report -----------------------
 */

int erg_report_write_file(const char *path, const erg_report *r, erg_diag *diag)
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
        bad |= json_object_set_new(o, "flags", erg__flags_to_json(r->flags));
        bad |= json_object_set_new(o, "elements", json_integer((json_int_t)r->n_elements));
        for (size_t i = 0; i < r->n_devices && !bad; i++) {
            const erg_device_report *d = &r->devices[i];
            json_t *x = json_object();
            bad |= !x || erg__json_set_number(x, "static_energy_j", d->static_energy_j) ||
                   erg__json_set_number(x, "dynamic_energy_j", d->dynamic_energy_j) ||
                   erg__json_set_number(x, "busy_s", d->busy_s) ||
                   erg__json_set_number(x, "idle_s", d->idle_s);
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
            bad |= !x ||
                   json_object_set_new(x, "samples", json_integer((json_int_t)r->mc_samples)) ||
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
    int rc = erg__json_dump_file(
        o, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12), diag);
    json_decref(o);
    return rc;
}
