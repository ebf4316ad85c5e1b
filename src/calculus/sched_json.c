/* SPDX-License-Identifier: MIT */
/* schedule/1 files: reader (expression and DAG forms) and writer. Format: docs/formats.md. */
#include "calculus/sched_read.h"
#include "calculus/schedule_impl.h"
#include "calculus/sig_json.h"
#include "calculus/sniff.h"
#include "core/file.h"
#include "core/json.h"

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
};

static int cal_device(void *ctx, const char *id, double sw, double iw, erg_diag *sub)
{
    return erg_schedule_add_device(((struct cal *)ctx)->s, id, sw, iw, sub);
}

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
                jp, json_is_string(v) ? " (in " : "", json_is_string(v) ? json_string_value(v) : "",
                json_is_string(v) ? ")" : "", name, sg.static_power_w, sg.device,
                dv->static_power_w, sg.device, sg.static_power_w);
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

static int cal_node(void *ctx, const char *id, const char *sig, const char *device, double start_s,
                    erg_diag *sub)
{
    return erg_schedule_add_node(((struct cal *)ctx)->s, id, sig, device, start_s, sub);
}

static int cal_edge(void *ctx, const char *from, const char *to, erg_diag *sub)
{
    return erg_schedule_add_edge(((struct cal *)ctx)->s, from, to, sub);
}

static void cal_edge_hint(void *ctx, const char *from, const char *to)
{
    erg__schedule_edge_hint(((struct cal *)ctx)->s, from, to);
}

/*
 * The reader streams the file with yajl: "nodes" and "edges" (the part that grows with the
 * schedule) are taken element by element without building a document, and keep their byte offsets
 * so that errors about them name file:line:column; "devices", "signatures" and "expr" are
 * re-emitted as small JSON texts and decoded with jansson by the functions above.
 */
enum member { M_NONE, M_TAG, M_SKIP, M_CAPTURE, M_NODES, M_EDGES };
enum { CAP_DEVICES, CAP_SIGNATURES, CAP_EXPR, CAP_TRANSITIONS, CAP_N };

struct pnode {
    size_t id, sig, dev; /* string references (keep_ref), or SIZE_MAX */
    double start_s;
    size_t off; /* byte offset of the node in the file */
};

struct pedge {
    size_t from, to;
    size_t off;
};

struct st {
    struct rd *r;
    const char *buf;
    size_t len;
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
    struct pnode *nodes;
    size_t n_nodes, cap_nodes;
    struct pedge *edges;
    size_t n_edges, cap_edges;
    char *strs;
    size_t strs_len, strs_cap;
    char *wbuf;   /* = buf: strings in it are terminated in place once the parse is done */
    int node_key; /* 0 id, 1 signature, 2 device, 3 start_s, -1 another key (skipped) */
    int edge_count;
    int seen_keys[CAP_N];
    char sig_name[64];    /* the signature being captured (depth 2 key of "signatures") */
    int seen_transitions; /* a frontier schedule's "transitions": refused once parsed */
    size_t transitions_off;
};

static const char *const node_keys[] = {"id", "signature", "device", "start_s"};

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
    line_col(t->buf, t->len, off, &line, &col);
    snprintf(where, sizeof where, "%s:%lu:%lu", t->r->file, line, col);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    t->rc = erg_diag_set(t->r->diag, status, where, "%s", detail);
    return 0;
}

static size_t here(struct st *t)
{
    return yajl_get_bytes_consumed(t->h);
}

static size_t keep_str(struct st *t, const char *v, size_t n)
{
    if (erg__grow((void **)&t->strs, &t->strs_cap, t->strs_len + n + 1, 1))
        return SIZE_MAX;
    memcpy(t->strs + t->strs_len, v, n);
    t->strs[t->strs_len + n] = '\0';
    size_t at = t->strs_len;
    t->strs_len += n + 1;
    return at;
}

/*
 * A string of "nodes" or "edges" by reference: one that yajl hands over inside the file buffer
 * (no escapes: it ends at the closing quote) stays there, 2·offset + 1, and is terminated in place
 * once the parse is over (terminate_refs); another (decoded escapes) is copied into strs, 2·offset.
 * SIZE_MAX (odd, but no file is 2^63 bytes) stays "absent". Schedules are mostly ids: this keeps
 * a second copy of every id from the reader's peak memory.
 */
static size_t keep_ref(struct st *t, const char *v, size_t n)
{
    if (v >= t->buf && n < t->len && (size_t)(v - t->buf) < t->len - n && v[n] == '"')
        return 2 * (size_t)(v - t->buf) + 1;
    size_t at = keep_str(t, v, n);
    return at == SIZE_MAX ? SIZE_MAX : 2 * at;
}

static void terminate_ref(struct st *t, size_t ref)
{
    if (ref != SIZE_MAX && ref % 2 == 1) {
        char *p = t->wbuf + ref / 2;
        p[strcspn(p, "\"")] = '\0'; /* the closing quote, or an earlier reference's NUL */
    }
}

static const char *str_of(const struct st *t, size_t ref)
{
    return ref % 2 == 1 ? t->wbuf + ref / 2 : t->strs + ref / 2;
}

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

static int node_scalar(struct st *t, int kind, const char *v, size_t n)
{
    size_t i = t->n_nodes - 1;
    struct pnode *nd = &t->nodes[i];
    if (t->node_key <= 2) {
        if (kind != K_STRING)
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].%s: expected a string", i,
                           node_keys[t->node_key]);
        if (memchr(v, '\0', n))
            return fail_at(t, here(t), ERG_EPARSE, "nodes[%zu].%s: contains a NUL character", i,
                           node_keys[t->node_key]);
        size_t at = keep_ref(t, v, n);
        if (at == SIZE_MAX)
            return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
        if (t->node_key == 0)
            nd->id = at;
        else if (t->node_key == 1)
            nd->sig = at;
        else
            nd->dev = at;
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

static int on_scalar(struct st *t, int kind, const char *v, size_t n)
{
    if (t->depth == 0)
        return fail_at(t, here(t), ERG_EPARSE, "expected a JSON object at the top level");
    switch (t->member) {
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
        if (kind != K_STRING || t->edge_count >= 2 || memchr(v, '\0', n))
            return fail_at(t, t->edges[t->n_edges - 1].off, ERG_EPARSE,
                           "edges[%zu]: expected [\"from\", \"to\"]", t->n_edges - 1);
        {
            size_t at = keep_ref(t, v, n);
            if (at == SIZE_MAX)
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            if (t->edge_count++ == 0)
                t->edges[t->n_edges - 1].from = at;
            else
                t->edges[t->n_edges - 1].to = at;
        }
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
    case M_CAPTURE:
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
            if (erg__grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            struct pnode *nd = &t->nodes[t->n_nodes++];
            nd->id = nd->sig = nd->dev = SIZE_MAX;
            nd->start_s = NAN;
            nd->off = here(t) ? here(t) - 1 : 0;
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
            if (erg__grow((void **)&t->edges, &t->cap_edges, t->n_edges + 1, sizeof *t->edges))
                return fail_at(t, here(t), ERG_ENOMEM, "out of memory");
            struct pedge *e = &t->edges[t->n_edges++];
            e->from = e->to = SIZE_MAX;
            e->off = here(t) ? here(t) - 1 : 0;
            t->edge_count = 0;
        } else if (t->depth >= 3) {
            return fail_at(t, t->edges[t->n_edges - 1].off, ERG_EPARSE,
                           "edges[%zu]: expected [\"from\", \"to\"]", t->n_edges - 1);
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
    if (t->member == M_NODES && t->depth == 2) {
        const struct pnode *nd = &t->nodes[t->n_nodes - 1];
        if (nd->id == SIZE_MAX)
            return fail_at(t, nd->off, ERG_EPARSE, "nodes[%zu].id: required string is missing",
                           t->n_nodes - 1);
        if (nd->sig == SIZE_MAX)
            return fail_at(t, nd->off, ERG_EPARSE,
                           "nodes[%zu].signature: required string is missing", t->n_nodes - 1);
    }
    if (t->member == M_EDGES && t->depth == 2 && t->edge_count != 2)
        return fail_at(t, t->edges[t->n_edges - 1].off, ERG_EPARSE,
                       "edges[%zu]: expected [\"from\", \"to\"]", t->n_edges - 1);
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

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
    struct st *t = ctx;
    if (t->member == M_CAPTURE) {
        if (t->cap_which == CAP_SIGNATURES && t->depth == 2)
            snprintf(t->sig_name, sizeof t->sig_name, "%.*s", (int)(n < 60 ? n : 60),
                     (const char *)k);
        if (t->cap_which == CAP_SIGNATURES && t->depth == 3 &&
            !(t->r->b->flags & ERG__SB_OPERATING_SETS) &&
            !erg__signature_key_known((const char *)k, n)) {
            size_t off = here(t) >= n + 2 ? here(t) - n - 2 : 0;
            if (n == 6 && memcmp(k, "points", 6) == 0)
                return fail_at(t, off, ERG_EPARSE,
                               "signatures.%s is an operating set (points): use erg frontier",
                               t->sig_name);
            return fail_at(t, off, ERG_EPARSE, "signatures.%s.%.*s: unknown member of a signature",
                           t->sig_name, (int)(n < 60 ? n : 60), (const char *)k);
        }
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
    if ((rc = load_cap(t, CAP_SIGNATURES, &sigs)) != ERG_OK)
        return rc;
    rc = read_signatures(r, sigs);
    json_decref(sigs);
    if (rc != ERG_OK)
        return rc;
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
    for (size_t i = 0; i < t->n_nodes; i++) {
        terminate_ref(t, t->nodes[i].id);
        terminate_ref(t, t->nodes[i].sig);
        terminate_ref(t, t->nodes[i].dev);
    }
    for (size_t i = 0; i < t->n_edges; i++) {
        terminate_ref(t, t->edges[i].from);
        terminate_ref(t, t->edges[i].to);
    }
    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct pnode *nd = &t->nodes[i];
        erg_diag sub;
        erg_diag_clear(&sub);
        rc = r->b->node(r->b->ctx, str_of(t, nd->id), str_of(t, nd->sig),
                        nd->dev == SIZE_MAX ? NULL : str_of(t, nd->dev), nd->start_s, &sub);
        if (rc != ERG_OK) {
            fail_at(t, nd->off, rc, "nodes[%zu]: %s", i, sub.detail);
            return t->rc;
        }
    }
    enum { EDGE_HINT_AHEAD = 16 }; /* node-id lookups are random in a large table: load ahead */
    for (size_t i = 0; i < t->n_edges; i++) {
        const struct pedge *e = &t->edges[i];
        if (r->b->edge_hint && i + EDGE_HINT_AHEAD < t->n_edges)
            r->b->edge_hint(r->b->ctx, str_of(t, e[EDGE_HINT_AHEAD].from),
                            str_of(t, e[EDGE_HINT_AHEAD].to));
        erg_diag sub;
        erg_diag_clear(&sub);
        rc = r->b->edge(r->b->ctx, str_of(t, e->from), str_of(t, e->to), &sub);
        if (rc != ERG_OK) {
            fail_at(t, e->off, rc, "edges[%zu]: %s", i, sub.detail);
            return t->rc;
        }
    }
    return ERG_OK;
}

/* The streaming parse failed with status rc. Unless the file declared "erg": "schedule/1" before
 * the failure, look at the whole text: a file of another kind (a signature, a model, a
 * calibration) is reported by its format tag, a Chrome/Kineto trace with the command that
 * converts it, an untagged well-formed file by its missing tag; rc's message stands otherwise. */
static int tag_first(struct st *t, int rc)
{
    if (t->seen_tag && strcmp(t->tag, "schedule/1") == 0)
        return rc;
    erg__sniff sn;
    if (erg__sniff_json(t->buf, t->len, &sn) != 0)
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

int erg__sched_read(const char *path, const struct erg__sched_builder *b, erg_diag *diag)
{
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    struct rd r = {.b = b, .file = name, .diag = diag};
    struct st t;
    memset(&t, 0, sizeof t);
    t.r = &r;
    t.buf = buf;
    t.wbuf = buf;
    t.len = len;
    t.h = yajl_alloc(&callbacks, NULL, &t);
    if (!t.h) {
        rc = erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
        goto done;
    }
    if (erg__is_gzip(buf, len)) {
        rc = erg_diag_set(diag, ERG_EPARSE, name,
                          "a gzip-compressed file, not a schedule/1 file; for a Chrome/Kineto "
                          "trace, " ERG__TRACE_HINT);
        goto done;
    }
    if (strcmp(path, "-") == 0)
        snprintf(r.dir, sizeof r.dir, ".");
    else
        erg__dirname(path, r.dir, sizeof r.dir);
    yajl_status ys = yajl_parse(t.h, (const unsigned char *)buf, len);
    int at_end = 0;
    if (ys == yajl_status_ok) {
        ys = yajl_complete_parse(t.h);
        at_end = 1;
    }
    if (ys == yajl_status_client_canceled) {
        rc = tag_first(&t, t.rc);
    } else if (ys != yajl_status_ok) {
        unsigned char *msg = yajl_get_error(t.h, 0, (const unsigned char *)buf, len);
        const char *m = msg ? (const char *)msg : "syntax error";
        size_t n = strlen(m);
        while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
            n--;
        fail_at(&t, at_end ? len : here(&t), ERG_EPARSE, "malformed JSON: %.*s", (int)n, m);
        if (msg)
            yajl_free_error(t.h, msg);
        rc = tag_first(&t, t.rc);
    } else if (t.depth != 0 || len == 0) {
        rc = erg_diag_set(diag, ERG_EPARSE, name, "malformed JSON: the document ends early");
    } else {
        rc = finish(&t);
    }
done:
    if (t.h)
        yajl_free(t.h);
    if (t.gen)
        yajl_gen_free(t.gen);
    for (int i = 0; i < CAP_N; i++)
        free(t.cap[i]);
    free(t.nodes);
    free(t.edges);
    free(t.strs);
    free(buf);
    return rc;
}

int erg_schedule_read_file(const char *path, erg_schedule **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_read_file: NULL argument");
    *out = NULL;
    struct cal c = {erg_schedule_new()};
    if (!c.s)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    const struct erg__sched_builder b = {&c,       0,        cal_device, cal_element,
                                         NULL,     cal_leaf, cal_idle,   cal_op,
                                         cal_root, cal_node, cal_edge,   cal_edge_hint};
    int rc = erg__sched_read(path, &b, diag);
    if (rc != ERG_OK) {
        erg_schedule_free(c.s);
        return rc;
    }
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
