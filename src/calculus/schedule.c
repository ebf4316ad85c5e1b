/* SPDX-License-Identifier: MIT */
/*
 * Schedules: the builder, and composition of expression trees and DAGs (paper Sections 3.3,
 * 3.3.4, 4.2 Eq. 13, 5.2, Appendix F). See include/erg/calculus.h and docs/formats.md.
 */
#include "calculus/graph.h"
#include "calculus/schedule_impl.h"
#include "erg/stats.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE ERG__STRMAP_NONE
/* A join's operands are compared to its latest common ancestor join; the walk up the tree of
 * joins is capped so that composition stays linear (past the cap, operands count as independent).
 */
#define LCA_WALK_MAX 64

/* Small functions of the joins' hot path, inlined into every caller (gcc at -O2 left them as
 * calls). */
#define HOT static inline __attribute__((always_inline))
/* Joins with more operands than this (after pruning) fold Clark's pairwise form instead of
 * integrating numerically. */
#define MAXN_INTEGRATE_MAX 64

/* ---------------------------------------------------------------- builder ----------------------
 */

int erg__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return -1;
        c *= 2;
    }
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

static const char *device_key(const void *ctx, uint32_t i)
{
    return ((const erg_schedule *)ctx)->devices[i].id;
}

static const char *sig_key(const void *ctx, uint32_t i)
{
    return ((const erg_schedule *)ctx)->sigs[i].name;
}

static const char *node_key(const void *ctx, uint32_t i)
{
    const erg_schedule *s = ctx;
    return s->ids + s->nodes[i].id_off;
}

/* The node map holds nodes 0 .. node_map.n - 1: nodes appended by erg__schedule_append_node (the
 * file reader, which hashed their ids itself) are hashed here when a lookup by id first needs
 * them. 0, or -1 when out of memory. */
static int node_map_sync(erg_schedule *s)
{
    while (s->node_map.n < s->n_nodes)
        if (erg__strmap_insert(&s->node_map, (uint32_t)s->node_map.n, node_key, s))
            return -1;
    return 0;
}

uint32_t erg__device_index(const erg_schedule *s, const char *id)
{
    return erg__strmap_find(&s->device_map, id, device_key, s);
}

uint32_t erg__sig_index(const erg_schedule *s, const char *name)
{
    return erg__strmap_find(&s->sig_map, name, sig_key, s);
}

const char *erg__node_id(const erg_schedule *s, uint32_t node)
{
    return s->ids + s->nodes[node].id_off;
}

uint32_t erg__expr_add(erg_schedule *s, const struct erg__expr *e)
{
    if (s->n_expr >= NONE - 1 ||
        erg__grow((void **)&s->expr, &s->cap_expr, s->n_expr + 1, sizeof *s->expr))
        return NONE;
    s->expr[s->n_expr] = *e;
    return (uint32_t)s->n_expr++;
}

erg_schedule *erg_schedule_new(void)
{
    erg_schedule *s = calloc(1, sizeof *s);
    if (s)
        s->expr_root = NONE;
    return s;
}

void erg_schedule_free(erg_schedule *s)
{
    if (!s)
        return;
    free(s->devices);
    erg__strmap_free(&s->device_map);
    free(s->sigs);
    erg__strmap_free(&s->sig_map);
    free(s->nodes);
    erg__strmap_free(&s->node_map);
    free(s->ids);
    free(s->edges);
    free(s->expr);
    free(s->expr_kids);
    free(s);
}

int erg_schedule_add_device(erg_schedule *s, const char *id, double static_power_w,
                            double idle_power_w, erg_diag *diag)
{
    if (!s || !id || !id[0])
        return erg_diag_set(diag, ERG_EINVAL, NULL, "a device needs a non-empty id");
    if (strlen(id) >= ERG_SIG_DEVICE_MAX)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "device id \"%.40s...\" is longer than %d bytes", id,
                            ERG_SIG_DEVICE_MAX - 1);
    if (!isfinite(static_power_w) || static_power_w < 0.0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "device \"%s\": static_power_w must be finite and >= 0 (got %g)", id,
                            static_power_w);
    if (!isnan(idle_power_w) && (!isfinite(idle_power_w) || idle_power_w < 0.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "device \"%s\": idle_power_w must be finite and >= 0 (got %g)", id,
                            idle_power_w);
    if (erg__device_index(s, id) != NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "device \"%s\" is declared twice", id);
    if (s->n_devices >= NONE - 1 ||
        erg__grow((void **)&s->devices, &s->cap_devices, s->n_devices + 1, sizeof *s->devices))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    struct erg__device *d = &s->devices[s->n_devices];
    snprintf(d->id, sizeof d->id, "%s", id);
    d->static_power_w = static_power_w;
    d->idle_power_w = isnan(idle_power_w) ? static_power_w : idle_power_w;
    if (erg__strmap_insert(&s->device_map, (uint32_t)s->n_devices, device_key, s))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->n_devices++;
    return ERG_OK;
}

int erg__static_power_agrees(double sig_w, double dev_w)
{
    return isnan(sig_w) || fabs(sig_w - dev_w) <= ERG__P2_REL * fmax(fabs(sig_w), fabs(dev_w));
}

/* Axiom P2: a signature that states a static power must state its device's. */
static int check_p2(const erg_schedule *s, const erg_signature *sig, uint32_t di, const char *who,
                    erg_diag *diag)
{
    if (di == NONE || erg__static_power_agrees(sig->static_power_w, s->devices[di].static_power_w))
        return ERG_OK;
    return erg_diag_set(diag, ERG_EINVAL, NULL,
                        "%ssignature \"%s\" has static_power_w %.10g W but its device \"%s\" "
                        "declares %.10g W; a device has one static power (Axiom P2): drop "
                        "static_power_w from the signature to take the device's, or declare the "
                        "device with %.10g W",
                        who, sig->name, sig->static_power_w, s->devices[di].id,
                        s->devices[di].static_power_w, sig->static_power_w);
}

int erg_schedule_add_signature(erg_schedule *s, const erg_signature *sig, erg_diag *diag)
{
    if (!s || !sig || !sig->name[0])
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "a schedule's signature needs a non-empty name");
    if (memchr(sig->name, '\0', sizeof sig->name) == NULL)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "signature name is not terminated");
    erg_signature chk = *sig;
    if (isnan(chk.static_power_w)) /* the device's, checked again once resolved */
        chk.static_power_w = 0.0;
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(&chk, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "%s", sub.detail);
    if (erg__sig_index(s, sig->name) != NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "signature \"%s\" is defined twice", sig->name);
    if (sig->device[0] && check_p2(s, sig, erg__device_index(s, sig->device), "", diag) != ERG_OK)
        return ERG_EINVAL;
    if (s->n_sigs >= NONE - 1 ||
        erg__grow((void **)&s->sigs, &s->cap_sigs, s->n_sigs + 1, sizeof *s->sigs))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->sigs[s->n_sigs] = *sig;
    if (erg__strmap_insert(&s->sig_map, (uint32_t)s->n_sigs, sig_key, s))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->n_sigs++;
    return ERG_OK;
}

int erg_schedule_add_node(erg_schedule *s, const char *id, const char *sig_name, const char *device,
                          double start_s, erg_diag *diag)
{
    if (!s || !id || !id[0])
        return erg_diag_set(diag, ERG_EINVAL, NULL, "a node needs a non-empty id");
    if (!sig_name)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node \"%s\" has no signature", id);
    uint32_t si = erg__sig_index(s, sig_name);
    if (si == NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node \"%s\": unknown signature \"%s\"", id,
                            sig_name);
    const char *dev = device && device[0] ? device : s->sigs[si].device;
    if (!dev[0])
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "node \"%s\": no device (give the node a device or its signature one)",
                            id);
    uint32_t di = erg__device_index(s, dev);
    if (di == NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node \"%s\" is on undeclared device \"%s\"",
                            id, dev);
    if (check_p2(s, &s->sigs[si], di, "", NULL) != ERG_OK) { /* the label only for a message */
        char who[ERG_SIG_NAME_MAX + 16];
        snprintf(who, sizeof who, "node \"%.*s\": ", ERG_SIG_NAME_MAX - 1, id);
        return check_p2(s, &s->sigs[si], di, who, diag);
    }
    if (!isnan(start_s) && (!isfinite(start_s) || start_s < 0.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "node \"%s\": start_s must be finite and >= 0 (got %g)", id, start_s);
    if (node_map_sync(s) != 0)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (erg__strmap_find(&s->node_map, id, node_key, s) != NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node \"%s\" is defined twice", id);
    size_t len = strlen(id) + 1;
    if (s->n_nodes >= NONE - 1 ||
        erg__grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof *s->nodes) ||
        erg__grow((void **)&s->ids, &s->ids_cap, s->ids_len + len, 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    memcpy(s->ids + s->ids_len, id, len);
    struct erg__node *n = &s->nodes[s->n_nodes];
    n->sig = si;
    n->device = di;
    n->id_off = s->ids_len;
    n->start_s = start_s;
    s->ids_len += len;
    if (erg__strmap_insert(&s->node_map, (uint32_t)s->n_nodes, node_key, s))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->n_nodes++;
    return ERG_OK;
}

int erg__schedule_append_node(erg_schedule *s, const char *id, size_t len, uint32_t sig,
                              uint32_t device, double start_s)
{
    if (s->n_nodes >= NONE - 1 ||
        erg__grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof *s->nodes) ||
        erg__grow((void **)&s->ids, &s->ids_cap, s->ids_len + len + 1, 1))
        return ERG_ENOMEM;
    memcpy(s->ids + s->ids_len, id, len);
    s->ids[s->ids_len + len] = '\0';
    s->nodes[s->n_nodes] = (struct erg__node){sig, device, s->ids_len, start_s};
    s->ids_len += len + 1;
    s->n_nodes++;
    return ERG_OK;
}

int erg_schedule_add_edge(erg_schedule *s, const char *from, const char *to, erg_diag *diag)
{
    if (!s || !from || !to)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "an edge needs two node ids");
    if (node_map_sync(s) != 0)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    uint32_t a = erg__strmap_find(&s->node_map, from, node_key, s);
    uint32_t b = erg__strmap_find(&s->node_map, to, node_key, s);
    if (a == NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "edge [\"%s\", \"%s\"]: no node \"%s\"", from,
                            to, from);
    if (b == NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "edge [\"%s\", \"%s\"]: no node \"%s\"", from,
                            to, to);
    if (erg__grow((void **)&s->edges, &s->cap_edges, s->n_edges + 1, sizeof *s->edges))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    s->edges[s->n_edges][0] = a;
    s->edges[s->n_edges][1] = b;
    s->n_edges++;
    return ERG_OK;
}

void erg_compose_options_init(erg_compose_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->confidence = 0.95;
    opts->mc_seed = 1;
}

void erg_report_free(erg_report *r)
{
    if (!r)
        return;
    free(r->devices);
    r->devices = NULL;
    r->n_devices = 0;
}

/* ---------------------------------------------------------------- shared helpers ---------------
 */

/* A signature with its static power resolved against its device (NAN: the device's). */
static int resolve_sig(const erg_schedule *s, uint32_t si, uint32_t di, erg_signature *out,
                       erg_diag *diag)
{
    *out = s->sigs[si];
    if (check_p2(s, out, di, "", diag) != ERG_OK)
        return ERG_EINVAL;
    if (isnan(out->static_power_w)) {
        if (di == NONE)
            return erg_diag_set(
                diag, ERG_EINVAL, NULL,
                "signature \"%s\" has no static_power_w and no declared device to take it from",
                out->name);
        out->static_power_w = s->devices[di].static_power_w;
    }
    if (di != NONE && !out->device[0])
        snprintf(out->device, sizeof out->device, "%s", s->devices[di].id);
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(out, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "%s", sub.detail);
    return ERG_OK;
}

/*
 * Variance of the maximum of k independent Gaussians (means m, variances v; both arrays are
 * compacted in place). Operands that another operand exceeds by more than 10 standard deviations
 * of both are dropped first. *survivor is the one remaining operand's index in the original
 * order, or -1 when the maximum is a true join.
 */
static int var_of_max(double *m, double *v, size_t *idx, size_t k, double *var_out, long *survivor)
{
    if (k == 0)
        return ERG_EINVAL;
    enum { SD_SMALL = 16 };
    double sd[SD_SMALL]; /* the operands' standard deviations, when they fit */
    double hi = -INFINITY;
    for (size_t i = 0; i < k; i++) {
        double si = sqrt(v[i]);
        if (i < SD_SMALL)
            sd[i] = si;
        if (m[i] - 10.0 * si > hi)
            hi = m[i] - 10.0 * si;
    }
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (!(m[i] + 10.0 * (i < SD_SMALL ? sd[i] : sqrt(v[i])) < hi)) {
            m[w] = m[i];
            v[w] = v[i];
            idx[w] = idx[i];
            w++;
        }
    *survivor = -1;
    if (w == 1) {
        *var_out = v[0];
        *survivor = (long)idx[0];
        return ERG_OK;
    }
    if (w == 2) {
        erg_max2_normal(m[0], v[0], m[1], v[1], NULL, var_out);
        return ERG_OK;
    }
    if (w <= MAXN_INTEGRATE_MAX && erg_maxn_normal(m, v, w, NULL, var_out) == ERG_OK)
        return ERG_OK;
    /* Fold Clark pairwise (moment matching), the classic PERT/SSTA approximation. */
    double cm = m[0], cv = v[0];
    for (size_t i = 1; i < w; i++)
        erg_max2_normal(cm, cv, m[i], v[i], &cm, &cv);
    *var_out = cv;
    return ERG_OK;
}

/* var_of_max for two operands (m, v are left as they are): the same tests and the same figures,
 * without the compaction. */
HOT int var_of_max2(const double *m, const double *v, double *var_out, long *survivor)
{
    double s0 = sqrt(v[0]), s1 = sqrt(v[1]), hi = -INFINITY;
    if (m[0] - 10.0 * s0 > hi)
        hi = m[0] - 10.0 * s0;
    if (m[1] - 10.0 * s1 > hi)
        hi = m[1] - 10.0 * s1;
    int k0 = !(m[0] + 10.0 * s0 < hi), k1 = !(m[1] + 10.0 * s1 < hi);
    *survivor = -1;
    if (k0 && k1) {
        erg_max2_normal(m[0], v[0], m[1], v[1], NULL, var_out);
        return ERG_OK;
    }
    if (k0 || k1) {
        *var_out = k0 ? v[0] : v[1];
        *survivor = k0 ? 0 : 1;
        return ERG_OK;
    }
    double mc[2] = {m[0], m[1]}, vc[2] = {v[0], v[1]}; /* neither (NaN): the general path */
    size_t idx[2] = {0, 1};
    return var_of_max(mc, vc, idx, 2, var_out, survivor);
}

/* ---------------------------------------------------------------- DAG composition --------------
 */

/* A join operand: a finish (or a fixed start) with its tree position, point mean and total
 * variance; key is its ancestor just below the operands' common ancestor. */
struct opnd {
    uint32_t pos, key;
    size_t orig;
    double m, tot;
};

/* Join operands: point finish means, tree positions and total variances. */
struct joinbuf {
    double *m, *tot;
    uint32_t *b;
    struct opnd *op;
};

struct tev {
    uint32_t parent, depth;
};

/* The compact record of a signature in the hot loops (an erg_signature is 816 bytes). */
struct csig {
    double time_s, time_var_s2, dynamic_energy_j, energy_var_j2;
    double static_power_w; /* NAN: the node's device's */
    double sd_e_j;         /* sqrt(energy_var_j2) */
    int m1_ok;             /* Axiom M1 holds for every node of it (dag_prepare) */
};

/* A node's signature and device, dense (an erg__node is 24 bytes with its id and start). */
struct nodec {
    uint32_t sig;
    uint32_t dev; /* device index, | NODEC_FIXED (a fixed start), | NODEC_FORK (successors >= 2),
                   * | its successor count capped at NODEC_NSUCC_CAP << NODEC_NSUCC_SHIFT */
};
#define NODEC_FIXED 0x80000000u
#define NODEC_FORK 0x40000000u
#define NODEC_NSUCC_SHIFT 24
#define NODEC_NSUCC_CAP 63u /* this many successors or more */
#define NODEC_NSUCC(c) (((c).dev >> NODEC_NSUCC_SHIFT) & NODEC_NSUCC_CAP)
#define NODEC_DEV_LIMIT (1u << NODEC_NSUCC_SHIFT) /* device indexes stay below */
#define NODEC_DEV(c) ((c).dev & (NODEC_DEV_LIMIT - 1u))

/* The working arrays of DAG composition, one slot each; a slot is replaced (not copied) when a
 * call needs more than it holds. */
enum ws_slot {
    WS_CS,
    WS_NC,
    WS_START,
    WS_ANCHOR,
    WS_SVAR,
    WS_TEV,
    WS_SUCC_OFF,
    WS_PRED_OFF,
    WS_SUCC,
    WS_PRED,
    WS_ORDER,
    WS_INDEG,
    WS_JB_M,
    WS_JB_TOT,
    WS_JB_B,
    WS_JB_OP,
    WS_EDGES,
    WS_SLOTS
};

struct erg_compose_workspace {
    void *p[WS_SLOTS];
    size_t cap[WS_SLOTS]; /* bytes */
    /* The adjacency and topological order in the WS_SUCC_OFF .. WS_INDEG slots, kept for the
     * next call when gr_n > 0: a DAG of gr_n nodes whose gr.m edges are copied in WS_EDGES. */
    erg__graph gr;
    size_t gr_n;
};

erg_compose_workspace *erg_compose_workspace_new(void)
{
    return calloc(1, sizeof(erg_compose_workspace));
}

size_t erg_compose_workspace_bytes(const erg_compose_workspace *ws)
{
    size_t b = 0;
    for (int i = 0; ws && i < WS_SLOTS; i++)
        b += ws->cap[i];
    return b;
}

/* Free the arrays, keep the workspace (empty). */
static void ws_release(erg_compose_workspace *ws)
{
    for (int i = 0; i < WS_SLOTS; i++) {
        free(ws->p[i]);
        ws->p[i] = NULL;
        ws->cap[i] = 0;
    }
    ws->gr_n = 0;
}

void erg_compose_workspace_free(erg_compose_workspace *ws)
{
    if (!ws)
        return;
    ws_release(ws);
    free(ws);
}

/* Slot i with room for at least `bytes` (contents undefined); NULL when out of memory (the slot
 * is then empty). */
static void *ws_take(erg_compose_workspace *ws, enum ws_slot i, size_t bytes)
{
    bytes = bytes ? bytes : 1;
    if (bytes > ws->cap[i]) {
        free(ws->p[i]);
        ws->p[i] = erg__graph_alloc(bytes, 0);
        ws->cap[i] = ws->p[i] ? bytes : 0;
    }
    return ws->p[i];
}

struct dag {
    const erg_schedule *s;
    erg_compose_workspace *ws; /* where the working arrays live (the caller's or a call's own) */
    int keep_graph;            /* keep the adjacency in ws for the next call (the caller's ws) */
    size_t n;
    struct csig *cs;           /* per signature */
    struct nodec *nc;          /* per node */
    double origin0;            /* start of free sources, s */
    double origin;             /* earliest start, s */
    erg__graph gr;             /* adjacency and order (calculus/graph.h) */
    uint32_t *pred_off, *pred; /* CSR of predecessors (gr's) */
    uint32_t *succ_off, *succ; /* CSR of successors (gr's) */
    uint32_t *order;           /* topological order (gr's) */
    double *start;             /* point start, s; the finish is start + T (fin_of) */
    /* Variance propagation. Every finish F_v is expressed as E_a + X, with E_a an event of the
     * tree of shared events and X independent of everything before E_a. anchor[v] is the event
     * v's start hangs below, svar[v] is Var(start) (-1 until v is composed), and Var(F_v) is
     * svar[v] + σ²_T (vt_node). Tree events: the finish of a fork node (id v, two or more
     * successors), the start of a join node (id n + v, two or more operands) and the makespan
     * (id 2n); the root (NONE) is the deterministic origin. */
    uint32_t *anchor;
    double *svar;
    struct tev *tev;     /* per tree event: parent event and depth (root: 0), together for walks */
    double var_makespan; /* the variance of the makespan event (2n) */
    const erg_compose_options *opts;
    double c;          /* two-sided multiplier of opts->confidence */
    struct joinbuf jb; /* a join's operands (maxk of them at most) */
    size_t maxk;
    /* Identical joins whose every predecessor has many successors: a table keyed by a hash of
     * the predecessor set (allocated when first needed); stamps for comparing large sets. */
    uint64_t *hkeys;
    uint32_t *hnode, *stamp;
    size_t hcap, hn;
    uint32_t gen;    /* the current stamp */
    uint32_t *byst;  /* nodes by start time */
    uint32_t *phash; /* per node: a commutative hash of its predecessor set (set_hash), written
                      * in the forward pass (in the graph layer's in-degrees, all 0 by then) */
    double end;      /* the makespan's point end, s */
    double tol;      /* overlap tolerance, s */
    double vd;       /* Σ σ²_d, J² */
    int general;     /* take the general paths only (erg__compose_probe) */
    unsigned long n_fast_keys, n_general_keys, n_bucket_sorts, n_radix_sorts;
    erg_grade grade; /* the weakest grade */
    unsigned flags;  /* the union of the nodes' measurement flags */
};

static const struct csig *csig_of(const struct dag *g, uint32_t v)
{
    return &g->cs[g->nc[v].sig];
}

/* Point finish of a composed node, s. */
static double fin_of(const struct dag *g, uint32_t v)
{
    return g->start[v] + csig_of(g, v)->time_s;
}

/* Var(finish) of a composed node, s². */
static double vt_node(const struct dag *g, uint32_t v)
{
    return g->svar[v] + csig_of(g, v)->time_var_s2;
}

/* The variance of tree event b: a fork's finish (b < n) is its Var(finish); a join's start (n + v)
 * is Var(start) of its node, which the join set; the makespan's is kept apart. */
HOT double vt_of(const struct dag *g, uint32_t b)
{
    if (b == NONE)
        return 0.0;
    if (b < g->n)
        return vt_node(g, b);
    return b < 2 * g->n ? g->svar[b - g->n] : g->var_makespan;
}

static uint32_t depth_of(const struct dag *g, uint32_t b)
{
    return b == NONE ? 0 : g->tev[b].depth;
}

/* The tree position of a finish as a join operand: the fork's own event, else its anchor. */
static uint32_t pos_of(const struct dag *g, uint32_t p)
{
    /* a mask rather than a branch: whether a node is a fork follows no pattern */
    uint32_t fork = 0u - ((g->nc[p].dev & NODEC_FORK) != 0), anc = g->anchor[p];
    return (p & fork) | (anc & ~fork);
}

static uint32_t lca(const struct dag *g, uint32_t a, uint32_t b)
{
    for (int steps = 0; a != b; steps++) {
        if (steps > LCA_WALK_MAX)
            return NONE;
        if (depth_of(g, a) >= depth_of(g, b))
            a = g->tev[a].parent;
        else
            b = g->tev[b].parent;
    }
    return a;
}

/*
 * lca with the events just below the meeting point: walks a and b up to their latest common
 * event *l, giving up as lca does (more than LCA_WALK_MAX + 1 moves in all), with *ca and *cb
 * the last events on each side before it (NONE for a side that is *l itself). The deeper side
 * climbs to the other's depth, then both climb in step: depth(parent) = depth - 1, so a move is
 * one load, and the two sides' loads are independent. The sides are swapped with masks so that
 * a is the deeper (one climbing loop, no branch on which side is deeper), and swapped back at
 * the end. 0, or -1 when the walk gives up or meets only at the root (the caller then takes the
 * general path). Inlined into its three callers (a call cost a tenth of its instructions and
 * sent its three results through memory).
 */
HOT int lca_below(const struct dag *g, uint32_t a, uint32_t b, uint32_t *l, uint32_t *ca,
                  uint32_t *cb)
{
    uint32_t da = depth_of(g, a), db = depth_of(g, b), pa = NONE, pb = NONE;
    uint32_t sw = 0u - (uint32_t)(da < db); /* all ones: swap */
    uint32_t x = (a ^ b) & sw, y = (da ^ db) & sw;
    a ^= x;
    b ^= x;
    da ^= y;
    db ^= y;
    uint32_t moves = da - db;
    if (moves > LCA_WALK_MAX + 1)
        return -1; /* the climb to equal depths alone would give up */
    for (uint32_t gap = moves; gap > 0; gap--) {
        pa = a;
        a = g->tev[a].parent;
    }
    while (a != b) {
        if ((moves += 2) > LCA_WALK_MAX + 1)
            return -1;
        pa = a;
        pb = b;
        a = g->tev[a].parent;
        b = g->tev[b].parent;
    }
    if (a == NONE)
        return -1;
    uint32_t z = (pa ^ pb) & sw;
    *l = a;
    *ca = pa ^ z;
    *cb = pb ^ z;
    return 0;
}

/* fmax(0.0, x) of the joins' relative variances, inline: 0 for NaN and for x < 0, else x
 * (-0.0 too, as x86-64's maxsd gives it). */
static double max0(double x)
{
    return isnan(x) || x < 0.0 ? 0.0 : x;
}

/* Joins up to this many operands take keys_fast. */
#define KEYS_FAST_MAX 16

/*
 * max_rec's common ancestor l of the operands and their keys (each operand's ancestor just below
 * l, NONE for l itself or when that is more than LCA_WALK_MAX steps up), in one walk per operand:
 * folding the operands in, l moves up only, and when it does every earlier operand's key becomes
 * the event just below the new l on the side of the old one. The same l and keys as lca's fold
 * and the walks from each operand; 0, or -1 when a walk gives up or reaches the root (the caller
 * then computes them the general way).
 */
static int keys_fast(const struct dag *g, struct opnd *op, size_t k, uint32_t *l_out)
{
    uint32_t l = op[0].pos;
    op[0].key = NONE;
    for (size_t i = 1; i < k; i++) {
        uint32_t nl, cl, ci;
        if (lca_below(g, l, op[i].pos, &nl, &cl, &ci) != 0)
            return -1;
        if (nl != l)
            for (size_t j = 0; j < i; j++)
                op[j].key = cl;
        op[i].key = ci;
        l = nl;
    }
    uint32_t dl = depth_of(g, l);
    for (size_t i = 0; i < k; i++) { /* with a mask: whether an operand is l follows no pattern */
        uint32_t far = depth_of(g, op[i].pos) - dl - 1 > LCA_WALK_MAX; /* (wraps for l itself) */
        uint32_t keep = 0u - (uint32_t)((op[i].key != NONE) & !far);
        op[i].key = (op[i].key & keep) | (NONE & ~keep);
    }
    *l_out = l;
    return 0;
}

/* Free what a composition allocated for itself (the working arrays stay in the workspace). */
static void dag_free(struct dag *g)
{
    free(g->hkeys);
    free(g->hnode);
    free(g->stamp);
}

/* Name a cycle among the nodes Kahn's algorithm could not order (the graph layer finds it). */
static int report_cycle(const struct dag *g, erg_diag *diag)
{
    const erg_schedule *s = g->s;
    uint32_t *cyc, n_in;
    if (erg__graph_cycle(&g->gr, &cyc, &n_in) != ERG_OK)
        return erg_diag_set(diag, ERG_ECYCLE, NULL, "the DAG has a cycle");
    char buf[400];
    size_t len = 0;
    buf[0] = '\0';
    uint32_t j = 0;
    for (; j <= n_in && len < 300; j++) /* an entry takes at most 68 bytes */
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s\"%.60s\"", j ? " -> " : "",
                                erg__node_id(s, cyc[j % n_in]));
    if (j <= n_in)
        snprintf(buf + len, sizeof buf - len, " -> ... (%u nodes)", n_in);
    free(cyc);
    return erg_diag_set(diag, ERG_ECYCLE, NULL, "the DAG has a cycle: %s", buf);
}

/* Buckets of at most this many keys are insertion sorted; a fuller one sends the whole sort to
 * the radix sort. */
#define BUCKET_SORT_MAX 32

/* sort_by_start's first try: the keys spread into n equal-width buckets between their least and
 * greatest (a bucket's index grows with the key), every bucket insertion sorted by (key, index).
 * Two passes over the keys and one over the buckets when the starts are spread out, as a
 * schedule's are. 0, 1 when a bucket holds more than BUCKET_SORT_MAX keys (or the spread is not
 * finite; nothing is written then). cnt (n + 2 counters) and bk (n) are its working arrays. */
static int bucket_sort(const uint64_t *key, size_t n, uint32_t *out, uint32_t *cnt, uint32_t *bk)
{
    uint64_t lo = key[0], hi = key[0];
    for (size_t i = 1; i < n; i++) {
        lo = key[i] < lo ? key[i] : lo;
        hi = key[i] > hi ? key[i] : hi;
    }
    double dlo, dhi;
    memcpy(&dlo, &lo, sizeof dlo);
    memcpy(&dhi, &hi, sizeof dhi);
    double scale = (double)n / (dhi - dlo);
    if (!(dhi > dlo) || !isfinite(scale) || !(scale > 0.0))
        return 1;
    memset(cnt, 0, (n + 2) * sizeof *cnt);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, &key[i], sizeof x);
        double f = (x - dlo) * scale; /* monotone in x; at most about n */
        uint32_t b = f < (double)n ? (uint32_t)f : (uint32_t)n;
        bk[i] = b;
        if (++cnt[b + 1] > BUCKET_SORT_MAX) {
            rc = 1;
            break;
        }
    }
    if (rc == 0) {
        for (size_t b = 0; b <= n; b++)
            cnt[b + 1] += cnt[b];
        for (size_t i = 0; i < n; i++)
            out[cnt[bk[i]]++] = (uint32_t)i; /* index order within a bucket */
        /* One insertion sort over the whole array: a key never moves past its bucket's start,
         * as every key of an earlier bucket is smaller (the bucket index grows with the key),
         * so this sorts each bucket as a sort per bucket would, without a loop per bucket. */
        for (size_t i = 1; i < n; i++) {
            uint32_t v = out[i];
            uint64_t kv = key[v];
            size_t j = i;
            for (; j > 0 && key[out[j - 1]] > kv; j--)
                out[j] = out[j - 1];
            out[j] = v;
        }
    }
    return rc;
}

/* Sort node indexes by start time (non-negative doubles order as their bit patterns), stable
 * (ties keep index order), linear in n: bucket_sort when the starts are spread out, else an LSD
 * radix sort on 11-bit digits (a digit's 2048 counters stay in cache; a digit that every key
 * shares is skipped). work: 16 n + 8 bytes, 8-byte aligned, for the keys and the bucket sort's
 * arrays (dag_devices lends it the tree of events' memory, done with by then, so that the sort
 * touches no new pages); the radix sort allocates its own. */
static int sort_by_start(struct dag *g, const double *start, size_t n, uint32_t *out, void *work)
{
    enum { BITS = 11, NB = 1 << BITS, PASSES = (64 + BITS - 1) / BITS };
    uint64_t *key = work;
    for (size_t i = 0; i < n; i++) {
        double x = start[i] > 0.0 ? start[i] : 0.0;
        memcpy(&key[i], &x, sizeof x);
    }
    uint32_t *bk = (uint32_t *)(key + n), *cnt = bk + n; /* 8 n + 4 n + 4 (n + 2) bytes */
    int brc = n > 0 && !g->general ? bucket_sort(key, n, out, cnt, bk) : 1;
    g->n_bucket_sorts += brc == 0;
    g->n_radix_sorts += brc == 1;
    if (brc != 1)
        return brc;
    uint64_t *key2 = erg__graph_alloc(n * sizeof *key2, 0), *key2_own = key2;
    uint32_t *tmp = erg__graph_alloc(n * sizeof *tmp, 0);
    size_t(*count)[NB] = calloc(PASSES, sizeof *count);
    if (!key2 || !tmp || !count) {
        free(key2);
        free(tmp);
        free(count);
        return ERG_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = (uint32_t)i;
        for (int p = 0; p < PASSES; p++)
            count[p][(key[i] >> (BITS * p)) & (NB - 1)]++;
    }
    uint32_t *src = out, *dst = tmp;
    for (int p = 0; p < PASSES; p++) {
        size_t *c = count[p], sum = 0;
        int trivial = 0;
        for (size_t b = 0; b < NB && !trivial; b++)
            trivial = c[b] == n;
        if (trivial)
            continue;
        for (size_t b = 0; b < NB; b++) {
            size_t cb = c[b];
            c[b] = sum;
            sum += cb;
        }
        int sh = BITS * p;
        for (size_t i = 0; i < n; i++) {
            size_t at = c[(key[i] >> sh) & (NB - 1)]++;
            key2[at] = key[i];
            dst[at] = src[i];
        }
        uint64_t *kt = key;
        key = key2;
        key2 = kt;
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != out)
        memcpy(out, src, n * sizeof *out);
    free(key2_own);
    free(tmp);
    free(count);
    return ERG_OK;
}

static int alloc_dag(struct dag *g)
{
    const erg_schedule *s = g->s;
    size_t n = g->n;
    erg_compose_workspace *ws = g->ws;
    g->cs = ws_take(ws, WS_CS, (s->n_sigs + 1) * sizeof *g->cs);
    g->nc = ws_take(ws, WS_NC, (n + 1) * sizeof *g->nc);
    g->start = ws_take(ws, WS_START, n * sizeof *g->start);
    g->anchor = ws_take(ws, WS_ANCHOR, n * sizeof *g->anchor);
    g->svar = ws_take(ws, WS_SVAR, n * sizeof *g->svar);
    g->tev = ws_take(ws, WS_TEV, (2 * n + 1) * sizeof *g->tev);
    if (!g->cs || !g->nc || !g->start || !g->anchor || !g->svar || !g->tev)
        return ERG_ENOMEM;
    for (size_t i = 0; i < s->n_sigs; i++) {
        const erg_signature *sg = &s->sigs[i];
        struct csig *c = &g->cs[i];
        c->time_s = sg->time_s;
        c->time_var_s2 = sg->time_var_s2;
        c->dynamic_energy_j = sg->dynamic_energy_j;
        c->energy_var_j2 = sg->energy_var_j2;
        c->static_power_w = sg->static_power_w;
        c->sd_e_j = sqrt(sg->energy_var_j2);
    }
    return ERG_OK; /* the node records: dag_prepare, with Axiom M1 */
}

/* Static power of a node: its signature's, or its device's when the signature has none. */
static double node_s(const struct dag *g, uint32_t v)
{
    struct nodec c = g->nc[v];
    double w = g->cs[c.sig].static_power_w;
    return isnan(w) ? g->s->devices[NODEC_DEV(c)].static_power_w : w;
}

/* Axiom M1 once the static power is known: var_E ≥ s²·var_T. */
static int check_m1(const erg_signature *g, double w, const char *who, erg_diag *diag)
{
    double floor = w * w * g->time_var_s2;
    if (g->energy_var_j2 < floor * (1.0 - 1e-9) - 1e-300)
        return erg_diag_set(
            diag, ERG_EINVAL, NULL,
            "%s: energy_var_j2 (%g J^2) is below static_power_w^2 * time_var_s2 (%g J^2) "
            "with the device's static power %g W (Axiom M1)",
            who, g->energy_var_j2, floor, w);
    return ERG_OK;
}

struct outcome {
    double energy_j, var_e, time_s, var_t, static_j, dynamic_j, bias_j, s_w;
    erg_grade grade;
    double *dev_static, *dev_dynamic, *dev_busy, *dev_held; /* per declared device */
    unsigned char *dev_used;
    size_t n_elements;
    char device[ERG_SIG_DEVICE_MAX]; /* common device or "" */
};

static int cmp_key(const void *a, const void *b)
{
    uint32_t x = ((const struct opnd *)a)->key, y = ((const struct opnd *)b)->key;
    return x < y ? -1 : x > y;
}

/*
 * Sort a wide join's operands by key, stably (glibc's qsort is a merge sort, and the ties keep
 * their order). In a wide join (the makespan's) most operands are deeper than the walk limit
 * below the common event and have key NONE, the largest: those keep their order at the end, and
 * only the others are sorted. 0 or ERG_ENOMEM.
 */
static int sort_keys(struct opnd *op, size_t k)
{
    size_t nk = 0;
    for (size_t i = 0; i < k; i++)
        nk += op[i].key != NONE;
    if (nk == k) {
        qsort(op, k, sizeof *op, cmp_key);
        return ERG_OK;
    }
    struct opnd *tmp = malloc((k - nk) * sizeof *tmp);
    if (!tmp)
        return ERG_ENOMEM;
    size_t w = 0, t = 0;
    for (size_t i = 0; i < k; i++) {
        if (op[i].key != NONE)
            op[w++] = op[i];
        else
            tmp[t++] = op[i];
    }
    memcpy(op + nk, tmp, t * sizeof *tmp);
    free(tmp);
    if (nk > 1)
        qsort(op, nk, sizeof *op, cmp_key);
    return ERG_OK;
}

/*
 * max_rec for two operands keyed by lca_below: their common event l, each one's key the event
 * just below l on its side (NONE for l itself; lca_below's walk limit bounds each side at
 * LCA_WALK_MAX + 1 moves, so keys_fast's cap never applies), ordered by key, never grouped
 * (distinct sides have distinct keys), their variances taken relative to l. The same operations
 * in the same order as max_rec's; 0, or 1 when lca_below gives up (the caller takes the general
 * path).
 */
static int max_two(struct dag *g, const struct opnd *op, double *m_out, double *v_out,
                   uint32_t *anchor_out, long *single_out)
{
    uint32_t l, key[2];
    if (lca_below(g, op[0].pos, op[1].pos, &l, &key[0], &key[1]) != 0)
        return 1;
    g->n_fast_keys++;
    const struct opnd *o[2];
    int swap = key[1] < key[0];
    o[0] = &op[swap];
    o[1] = &op[!swap];
    double vl = vt_of(g, l);
    double m[2] = {o[0]->m, o[1]->m};
    double v[2] = {max0(o[0]->tot - vl), max0(o[1]->tot - vl)};
    double pt = -HUGE_VAL, tot;
    for (int i = 0; i < 2; i++)
        if (m[i] > pt)
            pt = m[i];
    long surv;
    (void)var_of_max2(m, v, &tot, &surv); /* k = 2: always ERG_OK */
    *m_out = pt;
    if (surv >= 0) {
        *v_out = o[surv]->tot;
        *anchor_out = o[surv]->pos;
        *single_out = (long)o[surv]->orig;
    } else {
        *v_out = vl + tot;
        *anchor_out = l;
        *single_out = -1;
    }
    return 0;
}

/* A group of max_rec (and join3) that is a single operand: its own point mean, total variance and
 * tree position, and its index among the join's operands. */
static void group_single(const struct opnd *o, double *m, double *tot, uint32_t *anc, long *single)
{
    *m = o->m;
    *tot = o->tot;
    *anc = o->pos;
    *single = (long)o->orig;
}

/*
 * Max of k operands: the point value is the max of the means (as the paper does); the variance
 * is Var(max) of Gaussians (Clark's form for two, integration for more; the result is moment
 * matched to a Gaussian, Clark 1961). Operands are taken relative to their latest common tree
 * event L, and operands that share an event below L are first combined among themselves
 * (recursively), so that for a series-parallel DAG the computation is the expression tree's.
 * Correlations that do not follow the tree are neglected.
 * Outputs: *v_out total variance, *anchor_out the event the max is relative to, *single_out the
 * original index of the one operand the max reduces to (pruning), or -1.
 */
static int max_rec(struct dag *g, struct opnd *op, size_t k, int depth, double *m_out,
                   double *v_out, uint32_t *anchor_out, long *single_out)
{
    if (k == 1) {
        group_single(&op[0], m_out, v_out, anchor_out, single_out);
        return ERG_OK;
    }
    uint32_t l;
    int fast = depth < LCA_WALK_MAX && !g->general;
    if (fast && k == 2) {
        if (max_two(g, op, m_out, v_out, anchor_out, single_out) == 0)
            return ERG_OK;
        fast = 0; /* keys_fast would give up too */
    }
    if (fast && k <= KEYS_FAST_MAX && keys_fast(g, op, k, &l) == 0) {
        g->n_fast_keys++;
        goto keyed;
    }
    g->n_general_keys++;
    l = op[0].pos;
    for (size_t i = 1; i < k && l != NONE; i++)
        l = lca(g, l, op[i].pos);
    for (size_t i = 0; i < k; i++) {
        uint32_t u = op[i].pos;
        op[i].key = NONE;
        if (u == l || depth >= LCA_WALK_MAX)
            continue;
        /* u's ancestor just below l, within LCA_WALK_MAX steps up: l is the operands' common
         * ancestor (or the root), so that is depth(u) - depth(l) - 1 steps, or none. */
        uint32_t du = depth_of(g, u), dl = depth_of(g, l);
        if (du <= dl || du - dl - 1 > LCA_WALK_MAX)
            continue;
        for (uint32_t m = du - dl - 1; m > 0; m--)
            u = g->tev[u].parent;
        if (g->tev[u].parent == l)
            op[i].key = u;
    }
keyed:
    if (k <= 16) { /* insertion sort: joins are small */
        for (size_t i = 1; i < k; i++)
            for (size_t j = i; j > 0 && op[j - 1].key > op[j].key; j--) {
                struct opnd t = op[j];
                op[j] = op[j - 1];
                op[j - 1] = t;
            }
    } else if (sort_keys(op, k) != ERG_OK) {
        return ERG_ENOMEM;
    }
    enum { SMALL = 16 };
    double sgm[SMALL], sgv[SMALL], sgtot[SMALL], smc[SMALL];
    size_t sgidx[SMALL];
    uint32_t sganc[SMALL];
    long sgsingle[SMALL];
    int heap = k > SMALL;
    double *gm = heap ? malloc(k * sizeof *gm) : sgm, *gv = heap ? malloc(k * sizeof *gv) : sgv;
    double *gtot = heap ? malloc(k * sizeof *gtot) : sgtot,
           *mcopy = heap ? malloc(k * sizeof *mcopy) : smc;
    size_t *gidx = heap ? malloc(k * sizeof *gidx) : sgidx;
    uint32_t *ganc = heap ? malloc(k * sizeof *ganc) : sganc;
    long *gsingle = heap ? malloc(k * sizeof *gsingle) : sgsingle;
    int rc = ERG_OK;
    if (!gm || !gv || !gtot || !mcopy || !gidx || !ganc || !gsingle) {
        rc = ERG_ENOMEM;
        goto done;
    }
    double vl = vt_of(g, l);
    size_t ng = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i + 1;
        if (op[i].key != NONE)
            while (j < k && op[j].key == op[i].key)
                j++;
        if (j - i >= 2) {
            rc = max_rec(g, op + i, j - i, depth + 1, &gm[ng], &gtot[ng], &ganc[ng], &gsingle[ng]);
            if (rc != ERG_OK)
                goto done;
        } else {
            group_single(&op[i], &gm[ng], &gtot[ng], &ganc[ng], &gsingle[ng]);
        }
        gv[ng] = max0(gtot[ng] - vl);
        gidx[ng] = ng;
        ng++;
        i = j;
    }
    double pt = -HUGE_VAL;
    for (size_t i = 0; i < ng; i++)
        if (gm[i] > pt)
            pt = gm[i];
    double tot[1];
    long surv;
    for (size_t i = 0; i < ng; i++)
        mcopy[i] = gm[i];
    rc = var_of_max(mcopy, gv, gidx, ng, tot, &surv);
    if (rc != ERG_OK)
        goto done;
    *m_out = pt;
    if (surv >= 0) {
        *v_out = gtot[surv];
        *anchor_out = ganc[surv];
        *single_out = gsingle[surv];
    } else {
        *v_out = vl + tot[0];
        *anchor_out = l;
        *single_out = -1;
    }
done:
    if (heap) {
        free(gm);
        free(gv);
        free(gtot);
        free(mcopy);
        free(gidx);
        free(ganc);
        free(gsingle);
    }
    return rc;
}

/* Combine k operand finishes (in jb) into the start of a node (tree event id n + node) or the
 * makespan (id 2n). */
static int join(struct dag *g, struct joinbuf *jb, size_t k, uint32_t event, double *start_out,
                uint32_t *anchor_out, double *var_out)
{
    if (k == 1) {
        *start_out = jb->m[0];
        *anchor_out = jb->b[0];
        *var_out = jb->tot[0];
        return ERG_OK;
    }
    struct opnd *op = jb->op;
    for (size_t i = 0; i < k; i++) {
        op[i].pos = jb->b[i];
        op[i].orig = i;
        op[i].m = jb->m[i];
        op[i].tot = jb->tot[i];
    }
    double v;
    uint32_t anc;
    long single;
    int rc = max_rec(g, op, k, 0, start_out, &v, &anc, &single);
    if (rc != ERG_OK)
        return rc;
    if (single >= 0) {
        *anchor_out = jb->b[single];
        *var_out = jb->tot[single];
        return ERG_OK;
    }
    /* The join event hangs below its most likely critical operand (the largest mean) rather than
     * below the operands' common ancestor: later joins that meet this path again then see the
     * correlation through it. For a series-parallel DAG nothing outside the block meets the path
     * before the join, so the result is unchanged there. */
    size_t crit = 0;
    for (size_t i = 1; i < k; i++)
        if (jb->m[i] > jb->m[crit])
            crit = i;
    anc = jb->b[crit];
    g->tev[event].parent = anc;
    g->tev[event].depth = depth_of(g, anc) + 1;
    if (event == 2 * g->n)
        g->var_makespan = v; /* a node's join: vt_of reads its Var(start), set by the caller */
    *anchor_out = event;
    *var_out = v;
    return ERG_OK;
}

/*
 * join for the commonest case, two operands (finishes m0, m1 with total variances tot0, tot1 and
 * tree positions b0, b1) joined at node v's start, without the operand records: the same
 * operations in the same order as join -> max_rec -> max_two, so the figures are bit-identical.
 * 0, or 1 when lca_below gives up or the general paths are asked for (the caller then takes join).
 */
static int join2(struct dag *g, uint32_t v, double m0, double tot0, uint32_t b0, double m1,
                 double tot1, uint32_t b1, double *start_out, uint32_t *anchor_out, double *var_out)
{
    uint32_t l, key0, key1;
    if (g->general || lca_below(g, b0, b1, &l, &key0, &key1) != 0)
        return 1;
    g->n_fast_keys++;
    int swap = key1 < key0; /* max_two's operands in key order */
    double om[2] = {swap ? m1 : m0, swap ? m0 : m1},
           otot[2] = {swap ? tot1 : tot0, swap ? tot0 : tot1};
    uint32_t ob[2] = {swap ? b1 : b0, swap ? b0 : b1};
    double vl = vt_of(g, l);
    double m[2] = {om[0], om[1]};
    double vv[2] = {max0(otot[0] - vl), max0(otot[1] - vl)};
    double pt = -HUGE_VAL, tot;
    for (int i = 0; i < 2; i++)
        if (m[i] > pt)
            pt = m[i];
    long surv;
    (void)var_of_max2(m, vv, &tot, &surv); /* k = 2: always ERG_OK */
    *start_out = pt;
    if (surv >= 0) {
        *anchor_out = ob[surv];
        *var_out = otot[surv];
        return 0;
    }
    /* join's event below the most likely critical operand (the first of the largest means) */
    uint32_t anc = m1 > m0 ? b1 : b0, event = (uint32_t)(g->n + v);
    g->tev[event].parent = anc;
    g->tev[event].depth = depth_of(g, anc) + 1;
    *anchor_out = event;
    *var_out = vl + tot;
    return 0;
}

/*
 * join for three operands (finishes m[], total variances tot[], tree positions b[]) at node v's
 * start, on max_rec's fast path without its general machinery: keys_fast, the operands in key
 * order, a pair that shares a key joined first (max_two), then var_of_max over the groups; the
 * same operations in the same order as join -> max_rec, so the figures are bit-identical. 0, or
 * 1 (nothing changed) where max_rec would leave the fast path or recurse deeper: the caller then
 * takes join.
 */
static int join3(struct dag *g, uint32_t v, const double *m, const double *tot, const uint32_t *b,
                 double *start_out, uint32_t *anchor_out, double *var_out)
{
    struct opnd op[3];
    for (size_t i = 0; i < 3; i++) {
        op[i].pos = b[i];
        op[i].orig = i;
        op[i].m = m[i];
        op[i].tot = tot[i];
    }
    uint32_t l;
    if (g->general || keys_fast(g, op, 3, &l) != 0)
        return 1;
    { /* max_rec's insertion sort, as the network (0,1) (1,2) (0,1) of exchanges when the first
       * key is greater (the same order, stable), on indexes with masks rather than branches */
        uint32_t ix[3] = {0, 1, 2}, ky[3] = {op[0].key, op[1].key, op[2].key};
        static const int pair[3][2] = {{0, 1}, {1, 2}, {0, 1}};
        for (int e = 0; e < 3; e++) {
            int x = pair[e][0], y = pair[e][1];
            uint32_t sw = 0u - (uint32_t)(ky[x] > ky[y]);
            uint32_t dk = (ky[x] ^ ky[y]) & sw, di = (ix[x] ^ ix[y]) & sw;
            ky[x] ^= dk;
            ky[y] ^= dk;
            ix[x] ^= di;
            ix[y] ^= di;
        }
        struct opnd so[3] = {op[ix[0]], op[ix[1]], op[ix[2]]};
        memcpy(op, so, sizeof so);
    }
    double gm[3] = {0.0, 0.0, 0.0}, gv[3], gtot[3];
    size_t gidx[3];
    uint32_t ganc[3];
    long gsingle[3];
    double vl = vt_of(g, l);
    size_t ng = 0;
    unsigned long fast0 = g->n_fast_keys;
    for (size_t i = 0; i < 3;) {
        size_t j = i + 1;
        if (op[i].key != NONE)
            while (j < 3 && op[j].key == op[i].key)
                j++;
        if (j - i == 3 ||
            (j - i == 2 && max_two(g, op + i, &gm[ng], &gtot[ng], &ganc[ng], &gsingle[ng]) != 0)) {
            g->n_fast_keys = fast0;
            return 1;
        }
        if (j - i == 1)
            group_single(&op[i], &gm[ng], &gtot[ng], &ganc[ng], &gsingle[ng]);
        gv[ng] = max0(gtot[ng] - vl);
        gidx[ng] = ng;
        ng++;
        i = j;
    }
    g->n_fast_keys++; /* max_rec counts its own keys_fast after its operands' */
    double pt = -HUGE_VAL, mcopy[3], vt;
    for (size_t i = 0; i < ng; i++)
        if (gm[i] > pt)
            pt = gm[i];
    memcpy(mcopy, gm, sizeof mcopy); /* all three: no loop on ng */
    long surv;
    if ((ng == 2 ? var_of_max2(mcopy, gv, &vt, &surv)
                 : var_of_max(mcopy, gv, gidx, ng, &vt, &surv)) != ERG_OK) {
        g->n_fast_keys = fast0;
        return 1;
    }
    *start_out = pt;
    if (surv >= 0) { /* join: the one operand's own position and variance */
        long o = gsingle[surv];
        if (o >= 0) {
            *anchor_out = b[o];
            *var_out = tot[o];
            return 0;
        }
        *var_out = gtot[surv]; /* a joined pair: hung below as a true join is */
    } else {
        *var_out = vl + vt;
    }
    size_t crit = 0;
    for (size_t i = 1; i < 3; i++)
        if (m[i] > m[crit])
            crit = i;
    uint32_t anc = b[crit], event = (uint32_t)(g->n + v);
    g->tev[event].parent = anc;
    g->tev[event].depth = depth_of(g, anc) + 1;
    *anchor_out = event;
    return 0;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/*
 * DAG composition runs in phases over one struct dag:
 *   1. dag_prepare       the working arrays, the compact signature records, and Axiom M1 for
 *                        every node with its device's static power;
 *   2. dag_build         adjacency and topological order (graph layer; a cycle is named);
 *   3. dag_forward       point start and finish of every node and the variance of every finish
 *                        (joins: join, identical joins: dag_twin);
 *   4. dag_makespan      the join of every sink;
 *   5. dag_devices       one sweep in start order: per device, busy union at the elements'
 *                        static power, gaps as idle elements at the device's idle power, held
 *                        for the makespan; the Reduction Theorem's bias bound (Eq. 13); the
 *                        totals.
 * Messages name nodes; their labels are formatted only on an error.
 */

/* Phase 1. */
static int dag_prepare(struct dag *g, erg_diag *diag)
{
    const erg_schedule *s = g->s;
    if (s->n_devices >= NODEC_DEV_LIMIT || alloc_dag(g) != ERG_OK)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory for %zu nodes", g->n);
    /* M1 once per signature where that settles every node: its own static power, or the largest
     * device's (s²·σ²_T grows with s for s, σ²_T >= 0, and so does its rounding); the others, and
     * every node of a signature that fails, are checked one by one below, in node order. */
    double wmax = 0.0;
    int wmono = 1;
    for (size_t d = 0; d < s->n_devices; d++) {
        double w = s->devices[d].static_power_w;
        wmono = wmono && isfinite(w) && w >= 0.0 && isfinite(w * w);
        wmax = w > wmax ? w : wmax;
    }
    for (size_t i = 0; i < s->n_sigs; i++) {
        struct csig *c = &g->cs[i];
        double w = isnan(c->static_power_w) ? wmax : c->static_power_w;
        c->m1_ok = (!isnan(c->static_power_w) || (wmono && c->time_var_s2 >= 0.0)) &&
                   !(c->energy_var_j2 < w * w * c->time_var_s2 * (1.0 - 1e-9) - 1e-300);
    }
    for (size_t i = 0; i < g->n; i++) { /* the node records, checked as they are written */
        const struct erg__node *nd = &s->nodes[i];
        g->nc[i].sig = nd->sig;
        g->nc[i].dev = nd->device | (isnan(nd->start_s) ? 0u : NODEC_FIXED);
        g->svar[i] = -1.0; /* not composed yet */
        const struct csig *c = csig_of(g, (uint32_t)i);
        if (c->m1_ok)
            continue;
        double w = node_s(g, (uint32_t)i);
        if (!(c->energy_var_j2 < w * w * c->time_var_s2 * (1.0 - 1e-9) - 1e-300))
            continue; /* check_m1's test */
        char who[200];
        snprintf(who, sizeof who, "node \"%.120s\"", erg__node_id(s, (uint32_t)i));
        return check_m1(&s->sigs[s->nodes[i].sig], w, who, diag);
    }
    return ERG_OK;
}

/* Phase 2. The join buffer holds the largest join: a node's predecessors and its fixed start,
 * or the sinks. */
static int dag_build(struct dag *g, erg_diag *diag)
{
    const erg_schedule *s = g->s;
    erg_compose_workspace *ws = g->ws;
    size_t n = g->n, m = s->n_edges;
    erg__graph *gr = &g->gr;
    int rc = ERG_OK;
    if (ws->gr_n == n && ws->gr.m == m &&
        (m == 0 || memcmp(ws->p[WS_EDGES], s->edges, m * sizeof *s->edges) == 0)) {
        *gr = ws->gr; /* the DAG the workspace last composed: its adjacency and order as they are
                       * (the in-degrees hold that call's hashes: see dag_twin) */
    } else {
        ws->gr_n = 0;
        gr->succ_off = ws_take(ws, WS_SUCC_OFF, (n + 1) * sizeof *gr->succ_off);
        gr->pred_off = ws_take(ws, WS_PRED_OFF, (n + 1) * sizeof *gr->pred_off);
        gr->succ = ws_take(ws, WS_SUCC, (m + 1) * sizeof *gr->succ);
        gr->pred = ws_take(ws, WS_PRED, (m + 1) * sizeof *gr->pred);
        gr->order = ws_take(ws, WS_ORDER, (n + 1) * sizeof *gr->order);
        gr->indeg = ws_take(ws, WS_INDEG, (n + 1) * sizeof *gr->indeg);
        if (!gr->succ_off || !gr->pred_off || !gr->succ || !gr->pred || !gr->order || !gr->indeg)
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        rc = erg__graph_build(gr, (uint32_t)n, m, (const uint32_t(*)[2])s->edges);
        /* kept for the next call in a caller's workspace (a failed copy only keeps nothing) */
        if (rc == ERG_OK && g->keep_graph && m > 0) {
            void *e = ws_take(ws, WS_EDGES, m * sizeof *s->edges);
            if (e) {
                memcpy(e, s->edges, m * sizeof *s->edges);
                ws->gr = *gr;
                ws->gr_n = n;
            }
        }
    }
    g->pred_off = gr->pred_off;
    g->pred = gr->pred;
    g->succ_off = gr->succ_off;
    g->succ = gr->succ;
    g->order = gr->order;
    if (rc == ERG_ECYCLE)
        return report_cycle(g, diag);
    g->phash = gr->indeg; /* zeroed by Kahn's algorithm (a kept graph's: the last call's hashes) */
    size_t maxk = 1, sinks = 0;
    for (size_t v = 0; v < n; v++) {
        size_t k = (size_t)(g->pred_off[v + 1] - g->pred_off[v]) + 1;
        maxk = k > maxk ? k : maxk;
        sinks += g->succ_off[v + 1] == g->succ_off[v];
        uint32_t ns = g->succ_off[v + 1] - g->succ_off[v];
        if (ns >= 2)
            g->nc[v].dev |= NODEC_FORK;
        g->nc[v].dev |= (ns < NODEC_NSUCC_CAP ? ns : NODEC_NSUCC_CAP) << NODEC_NSUCC_SHIFT;
    }
    g->maxk = maxk > sinks ? maxk : sinks;
    g->jb.m = ws_take(ws, WS_JB_M, g->maxk * sizeof *g->jb.m);
    g->jb.tot = ws_take(ws, WS_JB_TOT, g->maxk * sizeof *g->jb.tot);
    g->jb.b = ws_take(ws, WS_JB_B, g->maxk * sizeof *g->jb.b);
    g->jb.op = ws_take(ws, WS_JB_OP, g->maxk * sizeof *g->jb.op);
    if (!g->jb.m || !g->jb.tot || !g->jb.b || !g->jb.op)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    return ERG_OK;
}

/* Whether joins u and v, with k predecessors each, have the same predecessor set. */
static int same_preds(struct dag *g, uint32_t u, uint32_t v, size_t k)
{
    const uint32_t *pu = g->pred + g->pred_off[u], *pv = g->pred + g->pred_off[v];
    if (k <= 8) { /* small sets: each side's members are the other's */
        for (size_t i = 0; i < k; i++) {
            int in_u = 0, in_v = 0;
            for (size_t j = 0; j < k && !in_u; j++)
                in_u = pv[i] == pu[j];
            for (size_t j = 0; j < k && !in_v; j++)
                in_v = pu[i] == pv[j];
            if (!in_u || !in_v)
                return 0;
        }
        return 1;
    }
    if (!g->stamp && !(g->stamp = calloc(g->n, sizeof *g->stamp)))
        return -1;
    int same = 1;
    uint32_t gen = ++g->gen;
    for (size_t i = 0; i < k; i++)
        g->stamp[pv[i]] = gen;
    for (size_t i = 0; i < k && same; i++)
        same = g->stamp[pu[i]] == gen;
    gen = ++g->gen;
    for (size_t i = 0; i < k; i++)
        g->stamp[pu[i]] = gen;
    for (size_t i = 0; i < k && same; i++)
        same = g->stamp[pv[i]] == gen;
    return same;
}

/* Successors scanned for an identical join; past this, the table. */
#define TWIN_SCAN_MAX 64

/* Insert join v (hash h) into the table of identical joins. 0 or ERG_ENOMEM. */
static int twin_insert(struct dag *g, uint32_t v, uint64_t h)
{
    if (2 * (g->hn + 1) > g->hcap) {
        size_t cap = g->hcap ? 2 * g->hcap : 1024;
        uint64_t *keys = malloc(cap * sizeof *keys);
        uint32_t *node = malloc(cap * sizeof *node);
        if (!keys || !node) {
            free(keys);
            free(node);
            return ERG_ENOMEM;
        }
        for (size_t i = 0; i < cap; i++)
            node[i] = NONE;
        for (size_t j = 0; j < g->hcap; j++) {
            if (g->hnode[j] == NONE)
                continue;
            size_t i = (size_t)g->hkeys[j] & (cap - 1);
            while (node[i] != NONE)
                i = (i + 1) & (cap - 1);
            node[i] = g->hnode[j];
            keys[i] = g->hkeys[j];
        }
        free(g->hkeys);
        free(g->hnode);
        g->hkeys = keys;
        g->hnode = node;
        g->hcap = cap;
    }
    size_t i = (size_t)h & (g->hcap - 1);
    while (g->hnode[i] != NONE)
        i = (i + 1) & (g->hcap - 1);
    g->hnode[i] = v;
    g->hkeys[i] = h;
    g->hn++;
    return ERG_OK;
}

/*
 * Joins with the same operand set share one start event (a series composition of parallel
 * blocks is written with every source of the second block after every sink of the first). An
 * earlier join u with v's predecessor set is a successor of each of them, in particular of the
 * one with the fewest successors, p: when p has at most TWIN_SCAN_MAX successors they are
 * scanned; otherwise (then every predecessor of u and v has that many) u and v meet in a table
 * keyed by a commutative hash of the set. Either way the sets are compared exactly. Returns the
 * earlier join, NONE (v is new; *insert says whether it goes into the table, with hash *h), or
 * ERG_ENOMEM as -1 in *insert.
 */
static uint32_t dag_twin(struct dag *g, uint32_t v, size_t k, int *insert, uint64_t *h)
{
    const uint32_t *pv = g->pred + g->pred_off[v];
    uint32_t p = pv[0], np = NODEC_NSUCC(g->nc[p]);
    for (size_t i = 1; i < k; i++) { /* the node records' capped counts settle most cases */
        uint32_t ni = NODEC_NSUCC(g->nc[pv[i]]), lt = 0u - (uint32_t)(ni < np); /* masks */
        p = (pv[i] & lt) | (p & ~lt);
        np = (ni & lt) | (np & ~lt);
    }
    *insert = 0;
    if (np == 1)
        return NONE;           /* v is p's only successor: no earlier join shares p */
    if (np == NODEC_NSUCC_CAP) /* every one is at the cap: the exact counts */
        for (size_t i = 1; i < k; i++)
            if (g->succ_off[pv[i] + 1] - g->succ_off[pv[i]] < g->succ_off[p + 1] - g->succ_off[p])
                p = pv[i];
    if (g->succ_off[p + 1] - g->succ_off[p] <= TWIN_SCAN_MAX) {
        uint32_t ph = g->phash[v];
        for (uint32_t q = g->succ_off[p]; q < g->succ_off[p + 1]; q++) {
            uint32_t u = g->succ[q];
            /* u != v with v's hash of the set (nearly always "no": one branch, one load), then
             * composed and a join that may share its start: k >= 2 operands, all of them
             * predecessors (k of them, no fixed start) */
            if ((g->phash[u] != ph) | (u == v))
                continue;
            if (g->svar[u] < 0.0 || g->pred_off[u + 1] - g->pred_off[u] != k ||
                (g->nc[u].dev & NODEC_FIXED))
                continue;
            int same = same_preds(g, u, v, k);
            if (same < 0) {
                *insert = -1;
                return NONE;
            }
            if (same)
                return u;
        }
        return NONE;
    }
    uint64_t hv = mix64(k);
    for (size_t i = 0; i < k; i++)
        hv += mix64(pv[i]);
    *h = hv;
    *insert = 1;
    for (size_t i = g->hcap ? (size_t)hv & (g->hcap - 1) : 0; g->hcap && g->hnode[i] != NONE;
         i = (i + 1) & (g->hcap - 1)) {
        uint32_t u = g->hnode[i];
        if (g->hkeys[i] != hv || g->pred_off[u + 1] - g->pred_off[u] != k)
            continue;
        int same = same_preds(g, u, v, k);
        if (same < 0) {
            *insert = -1;
            return NONE;
        }
        if (same) {
            *insert = 0;
            return u;
        }
    }
    return NONE;
}

/* A node's term in the hash of a predecessor set (a sum of these, so the order of the edges does
 * not matter): a multiplicative hash of the node index with its high half folded in (not linear,
 * so that sets with equal sums of indexes differ). A filter only: sets are compared exactly. */
static uint32_t set_hash(uint32_t p)
{
    p *= 0x9e3779b1u;
    return p ^ (p >> 16);
}

/* Phase 3: forward pass in topological order. */
static int dag_forward(struct dag *g, erg_diag *diag)
{
    const erg_schedule *s = g->s;
    size_t n = g->n;
    struct joinbuf *jb = &g->jb;
    g->origin0 = 0.0; /* sources without a start time start at 0 s */
    for (size_t oi = 0; oi < n; oi++) {
        uint32_t v = g->order[oi];
        int fixed = (g->nc[v].dev & NODEC_FIXED) != 0;
        size_t k = 0;
        uint32_t ph = 0;
        for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++) {
            uint32_t p = g->pred[q];
            jb->m[k] = fin_of(g, p);
            jb->b[k] = pos_of(g, p);
            jb->tot[k] = vt_node(g, p);
            ph += set_hash(p);
            k++;
        }
        g->phash[v] = ph;
        if (fixed) {
            const struct erg__node *nd = &s->nodes[v];
            double latest = -HUGE_VAL;
            uint32_t latest_p = NONE;
            for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++)
                if (jb->m[q - g->pred_off[v]] > latest) {
                    latest = jb->m[q - g->pred_off[v]];
                    latest_p = g->pred[q];
                }
            if (k > 0 && latest > nd->start_s + 1e-9 * fmax(1.0, nd->start_s))
                return erg_diag_set(
                    diag, ERG_EINVAL, NULL,
                    "node \"%s\" starts at %.9g s, before its predecessor \"%s\" ends at %.9g s",
                    erg__node_id(s, v), nd->start_s, erg__node_id(s, latest_p), latest);
            jb->m[k] = nd->start_s;
            jb->b[k] = NONE;
            jb->tot[k] = 0.0;
            k++;
        }
        double st, svar;
        uint32_t sanch, twin = NONE;
        int insert = 0;
        uint64_t h = 0;
        if (k >= 2 && !fixed) {
            twin = dag_twin(g, v, k, &insert, &h);
            if (insert < 0)
                return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        if (k == 0) {
            st = g->origin0;
            sanch = NONE;
            svar = 0.0;
        } else if (twin != NONE) {
            st = g->start[twin];
            sanch = g->anchor[twin];
            svar = g->svar[twin];
        } else {
            int rc = ERG_OK;
            if (k == 2 ? join2(g, v, jb->m[0], jb->tot[0], jb->b[0], jb->m[1], jb->tot[1], jb->b[1],
                               &st, &sanch, &svar) != 0
                       : k != 3 || join3(g, v, jb->m, jb->tot, jb->b, &st, &sanch, &svar) != 0)
                rc = join(g, jb, k, (uint32_t)(n + v), &st, &sanch, &svar);
            if (rc != ERG_OK)
                return erg_diag_set(diag, rc, NULL, "variance of the start of node \"%s\"",
                                    erg__node_id(s, v));
            if (insert && twin_insert(g, v, h) != ERG_OK)
                return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        g->anchor[v] = sanch;
        g->svar[v] = svar;
        g->start[v] = st;
        /* a fork's finish is a tree event (vt_of: svar + σ²_T); written for every node, without
         * a branch: no event id refers to the finish of a node that is not a fork */
        g->tev[v].parent = sanch;
        g->tev[v].depth = depth_of(g, sanch) + 1;
    }
    return ERG_OK;
}

/* Phase 4: the makespan is the join of every node without successors. The successor lists and
 * the tree of events are not needed after it. */
static int dag_makespan(struct dag *g, struct outcome *o, erg_diag *diag)
{
    struct joinbuf *jb = &g->jb;
    size_t n = g->n, k = 0;
    g->origin = HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        if (g->start[i] < g->origin)
            g->origin = g->start[i];
        if (g->succ_off[i + 1] == g->succ_off[i]) {
            jb->m[k] = fin_of(g, (uint32_t)i);
            jb->b[k] = pos_of(g, (uint32_t)i);
            jb->tot[k] = vt_node(g, (uint32_t)i);
            k++;
        }
    }
    uint32_t manch;
    int rc = join(g, jb, k, (uint32_t)(2 * n), &g->end, &manch, &o->var_t);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, NULL, "variance of the makespan");
    o->time_s = g->end - g->origin;
    /* The tree of events and the anchors are done with (Var(start) stays: dag_not_finite);
     * dag_devices takes their memory for its arrays. */
    return ERG_OK;
}

/* A device's running state in the sweep of dag_devices. */
struct devrun {
    double cur_end, busy, stat, run_s, ddyn;
    uint32_t run_node;        /* the node whose static power the current busy run has */
    uint32_t clash, clash_at; /* the first pair that breaks Axiom P2 (clash NONE: none) */
};

/* Phase 5 and 6: one sweep of the nodes in start order. Per device: busy union at the elements'
 * static power, gaps as idle elements at the device's idle power, every device held for the
 * makespan; a device's nodes come in start order, as a sweep of that device alone would take
 * them, so its figures are that sweep's. Σ σ²_d is summed in start order (the last bits of σ_E
 * depend on that order). The bias bound (Eq. 13): m_i counts an entry-state substitution,
 * dropped for elements that start with the composition at the null context, plus an isolation
 * substitution for elements that co-run with another (their intervals overlap, on any device). */
static int dag_devices(struct dag *g, struct outcome *o, erg_diag *diag)
{
    const erg_schedule *s = g->s;
    size_t n = g->n, nd = s->n_devices;
    /* byst in the anchors' n entries, the sort's working arrays in the tree of events'
     * (2 n + 1) * 8 bytes: no new pages to touch */
    g->byst = g->anchor;
    g->anchor = NULL;
    struct devrun *dr = malloc((nd + 1) * sizeof *dr);
    unsigned char *used = calloc(s->n_sigs + 1, 1); /* the signatures the nodes use */
    int src = dr && used ? sort_by_start(g, g->start, n, g->byst, g->tev) : ERG_ENOMEM;
    g->tev = NULL;
    if (src != ERG_OK) {
        free(dr);
        free(used);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t d = 0; d < nd; d++)
        dr[d] = (struct devrun){g->origin, 0.0, 0.0, 0.0, 0.0, NONE, NONE, NONE};
    g->tol = 1e-12 * fmax(1.0, fabs(g->end));
    const uint32_t *byst = g->byst;
    double tol = g->tol, vd = 0.0, pmax = -INFINITY, bias = 0.0, mc = g->c;
    double first_m = g->opts->warm_start ? 1.0 : 0.0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = byst[i];
        struct nodec c = g->nc[v];
        const struct csig *cs = &g->cs[c.sig];
        struct devrun *r = &dr[NODEC_DEV(c)];
        used[c.sig] = 1;
        o->dev_used[NODEC_DEV(c)] = 1;
        double w = isnan(cs->static_power_w) ? s->devices[NODEC_DEV(c)].static_power_w
                                             : cs->static_power_w;
        double st = g->start[v], en = st + cs->time_s;
        if (st >= r->cur_end - tol) {
            double a0 = st > r->cur_end ? st : r->cur_end;
            r->run_s = w;
            r->run_node = v;
            if (en > a0) {
                r->busy += en - a0;
                r->stat += r->run_s * (en - a0);
                r->cur_end = en;
            }
        } else {
            if (w != r->run_s && fabs(w - r->run_s) > 1e-9 * (r->run_s > 1.0 ? r->run_s : 1.0) &&
                r->clash == NONE) {
                r->clash = r->run_node;
                r->clash_at = v;
            }
            if (en > r->cur_end) {
                r->busy += en - r->cur_end;
                r->stat += r->run_s * (en - r->cur_end);
                r->cur_end = en;
            }
        }
        r->ddyn += cs->dynamic_energy_j;
        double x = cs->energy_var_j2 - w * w * cs->time_var_s2; /* σ²_d = σ²_E − s²·σ²_T, >= 0 */
        vd += x > 0.0 ? x : 0.0;
        /* co-runs: an earlier start ends after v starts, or the next start is before v ends */
        int corun = (pmax > st + tol) || (i + 1 < n && g->start[byst[i + 1]] < en - tol);
        if (en > pmax)
            pmax = en;
        int first = g->pred_off[v + 1] == g->pred_off[v] && st <= g->origin + tol;
        double m = (first ? first_m : 1.0) + corun;
        bias += m * mc * cs->sd_e_j;
    }
    int rc = ERG_OK;
    for (size_t d = 0; d < nd; d++) /* the first device, in declaration order, that breaks P2 */
        if (dr[d].clash != NONE) {
            rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                              "nodes \"%s\" and \"%s\" overlap on device \"%s\" but have different "
                              "static power (%g W and %g W); a device has a single static power "
                              "(Axiom P2)",
                              erg__node_id(s, dr[d].clash), erg__node_id(s, dr[d].clash_at),
                              s->devices[d].id, node_s(g, dr[d].clash), node_s(g, dr[d].clash_at));
            break;
        }
    for (size_t d = 0; d < nd && rc == ERG_OK; d++) {
        if (!o->dev_used[d])
            continue;
        double idle = fmax(0.0, o->time_s - dr[d].busy);
        double stat = dr[d].stat + s->devices[d].idle_power_w * idle;
        o->dev_static[d] = stat;
        o->dev_dynamic[d] = dr[d].ddyn;
        o->dev_busy[d] = dr[d].busy;
        o->dev_held[d] = o->time_s;
        o->static_j += stat;
        o->dynamic_j += dr[d].ddyn;
    }
    free(dr);
    g->vd = vd;
    g->grade = ERG_GRADE_HW_SHUNT;
    /* The weakest grade and the union of the flags: over the signatures the nodes use. */
    if (rc == ERG_OK) {
        for (size_t i = 0; i < s->n_sigs; i++)
            if (used[i]) {
                g->grade = erg_grade_weakest(g->grade, s->sigs[i].grade);
                g->flags |= s->sigs[i].flags;
            }
        o->energy_j = o->static_j + o->dynamic_j;
        o->s_w = o->time_s > 0.0 ? o->static_j / o->time_s : 0.0;
        o->var_e = g->vd + o->s_w * o->s_w * o->var_t;
        o->bias_j = bias;
        o->grade = g->grade;
        o->n_elements = n;
    }
    free(used);
    return rc;
}

struct erg__compose_probe *erg__compose_probe;

static int compose_dag(struct dag *g, struct outcome *o, erg_diag *diag)
{
    if (g->n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "the schedule has neither nodes nor an expr");
    struct erg__compose_probe *probe = erg__compose_probe;
    g->general = probe && probe->general;
    int rc;
    if ((rc = dag_prepare(g, diag)) == ERG_OK && (rc = dag_build(g, diag)) == ERG_OK &&
        (rc = dag_forward(g, diag)) == ERG_OK && (rc = dag_makespan(g, o, diag)) == ERG_OK)
        rc = dag_devices(g, o, diag);
    if (probe) {
        probe->fast_keys += g->n_fast_keys;
        probe->general_keys += g->n_general_keys;
        probe->bucket_sorts += g->n_bucket_sorts;
        probe->radix_sorts += g->n_radix_sorts;
    }
    return rc;
}

/* ---------------------------------------------------------------- Monte Carlo ------------------
 */

/*
 * One Monte Carlo path for expressions and DAGs (Appendix F.4). A plan lists the schedule's
 * elements in draw order; each sample draws every element's time T ~ N(T, σ²_T) truncated at 0
 * and dynamic energy d ~ N(d, σ²_d) (time first, then energy, element by element, from one
 * Mersenne Twister seeded with the seed), then the plan's replay turns the drawn elements into
 * the schedule's time and energy: a DAG replays its order (start = max(given start,
 * predecessors' finishes)) and charges the composite static power over the makespan; an
 * expression evaluates its tree (⊗ sums, ⊕/⊕multi take the longest operand at the composite's
 * static power plus the operands' dynamic parts).
 */
struct mc_elem {
    double time_s, time_sd_s, dyn_j, dyn_sd_j;
};

struct mc_plan {
    size_t n;           /* elements */
    struct mc_elem *el; /* in draw order */
    /* One sample of the schedule from drawn times t[] and dynamic energies d[] (draw order). */
    void (*replay)(const void *ctx, const double *t, const double *d, double *time_s,
                   double *energy_j);
    const void *ctx;
};

static struct mc_elem mc_elem_of(const erg_signature *sg, double w)
{
    struct mc_elem e;
    double vd = sg->energy_var_j2 - w * w * sg->time_var_s2;
    e.time_s = sg->time_s;
    e.time_sd_s = sg->time_var_s2 > 0.0 ? sqrt(sg->time_var_s2) : 0.0;
    e.dyn_j = sg->dynamic_energy_j;
    e.dyn_sd_j = vd > 0.0 ? sqrt(vd) : 0.0;
    return e;
}

static int mc_run(const struct mc_plan *p, uint64_t samples, uint64_t seed, erg_report *r)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *t = malloc((p->n + 1) * sizeof *t), *d = malloc((p->n + 1) * sizeof *d);
    if (!rng || !t || !d) {
        gsl_rng_free(rng);
        free(t);
        free(d);
        return ERG_ENOMEM;
    }
    gsl_rng_set(rng, (unsigned long)seed);
    erg_running re = {0}, rt = {0};
    for (uint64_t it = 0; it < samples; it++) {
        for (size_t i = 0; i < p->n; i++) {
            const struct mc_elem *e = &p->el[i];
            double ti =
                e->time_s + (e->time_sd_s > 0.0 ? gsl_ran_gaussian(rng, e->time_sd_s) : 0.0);
            t[i] = ti > 0.0 ? ti : 0.0;
            d[i] = e->dyn_j + (e->dyn_sd_j > 0.0 ? gsl_ran_gaussian(rng, e->dyn_sd_j) : 0.0);
        }
        double time_s, energy_j;
        p->replay(p->ctx, t, d, &time_s, &energy_j);
        erg_running_add(&rt, time_s);
        erg_running_add(&re, energy_j);
    }
    r->mc_energy_j = re.mean;
    r->mc_energy_sd_j = sqrt(erg_running_var(&re));
    r->mc_time_s = rt.mean;
    r->mc_time_sd_s = sqrt(erg_running_var(&rt));
    gsl_rng_free(rng);
    free(t);
    free(d);
    return ERG_OK;
}

/* A DAG's replay: elements in topological order (element i is node order[i]). */
struct mc_dag {
    const struct dag *g;
    double s_w; /* the composite's static power, W */
    double *fin;
    double *st0; /* per element (draw order): its fixed start, or -HUGE_VAL */
};

static void mc_dag_replay(const void *ctx, const double *t, const double *d, double *time_s,
                          double *energy_j)
{
    const struct mc_dag *m = ctx;
    const struct dag *g = m->g;
    double *fin = m->fin, end = -INFINITY, dyn = 0.0;
    for (size_t oi = 0; oi < g->n; oi++) {
        uint32_t v = g->order[oi];
        double st = m->st0[oi];
        for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++)
            if (fin[g->pred[q]] > st)
                st = fin[g->pred[q]];
        if (st == -HUGE_VAL)
            st = g->origin0;
        fin[v] = st + t[oi];
        if (fin[v] > end)
            end = fin[v];
        dyn += d[oi];
    }
    double mk = end - g->origin;
    *time_s = mk;
    *energy_j = m->s_w * mk + dyn;
}

static int mc_dag(const struct dag *g, const struct outcome *o, uint64_t samples, uint64_t seed,
                  erg_report *r)
{
    const erg_schedule *s = g->s;
    struct mc_dag m = {g, o->s_w, malloc(g->n * sizeof(double)), malloc(g->n * sizeof(double))};
    struct mc_plan p = {g->n, malloc(g->n * sizeof *p.el), mc_dag_replay, &m};
    int rc = ERG_ENOMEM;
    if (m.fin && m.st0 && p.el) {
        for (size_t oi = 0; oi < g->n; oi++) {
            uint32_t v = g->order[oi];
            const struct erg__node *nd = &s->nodes[v];
            p.el[oi] = mc_elem_of(&s->sigs[nd->sig], node_s(g, v));
            m.st0[oi] = isnan(nd->start_s) ? -HUGE_VAL : nd->start_s;
        }
        rc = mc_run(&p, samples, seed, r);
    }
    free(m.fin);
    free(m.st0);
    free(p.el);
    return rc;
}

/* ---------------------------------------------------------------- expression composition -------
 */

struct ectx {
    const erg_schedule *s;
    const erg_compose_options *opts;
    double c;
    double *s_w; /* per expr node: static power of its point composite (for Monte Carlo) */
    /* per expr node: the static power of the state it ends in (its last part's; a multi's: the
     * sum of its operands') and that state's device (NONE: several); ⊕multi pads at these */
    double *he;
    uint32_t *end_dev;
    double bias;
    erg_grade grade;
    size_t n_elements;
    size_t nd; /* number of devices */
    /* where we are, for messages */
    uint32_t path[64];
    uint32_t path_idx[64];
    size_t depth;
};

static const char *kind_name(uint8_t k)
{
    switch (k) {
    case ERG__EX_SEQ:
        return "seq";
    case ERG__EX_PAR:
        return "par";
    case ERG__EX_MULTI:
        return "multi";
    case ERG__EX_IDLE:
        return "idle";
    default:
        return "signature";
    }
}

static int expr_fail(struct ectx *x, int rc, const char *detail, erg_diag *diag)
{
    char where[256] = "expr";
    size_t len = 4;
    for (size_t i = 0; i < x->depth && i < 64 && len < sizeof where - 24; i++)
        len += (size_t)snprintf(where + len, sizeof where - len, ".%s[%u]",
                                kind_name(x->s->expr[x->path[i]].kind), x->path_idx[i]);
    char d[512];
    snprintf(d, sizeof d, "%s", detail);
    return erg_diag_set(diag, rc, NULL, "%s: %s", where, d);
}

/* Whether a (composed) signature's time, energies and variances are finite numbers. */
static int sig_finite(const erg_signature *g)
{
    return isfinite(g->time_s) && isfinite(g->dynamic_energy_j) &&
           isfinite(g->static_power_w * g->time_s) &&
           isfinite(g->static_power_w * g->time_s + g->dynamic_energy_j) &&
           isfinite(g->time_var_s2) && isfinite(g->energy_var_j2);
}

#define ERG__OVERFLOW_HINT "overflows a double (check the element's units: seconds and joules)"

/* Per-device accumulators: 4 doubles per device (static J, dynamic J, busy s, held s). */
enum { A_STAT, A_DYN, A_BUSY, A_HELD, A_N };

static int eval(struct ectx *x, uint32_t ei, int at_origin, int corun, erg_signature *out,
                double *acc, erg_diag *diag)
{
    const erg_schedule *s = x->s;
    const struct erg__expr *ex = &s->expr[ei];
    int rc;
    if (ex->kind == ERG__EX_SIG) {
        const erg_signature *sg = &s->sigs[ex->ref];
        uint32_t di = sg->device[0] ? erg__device_index(s, sg->device) : NONE;
        erg_diag sub;
        erg_diag_clear(&sub);
        if ((rc = resolve_sig(s, ex->ref, di, out, &sub)) != ERG_OK)
            return expr_fail(x, rc, sub.detail, diag);
        if (!sig_finite(out)) {
            char d[300];
            snprintf(d, sizeof d, "signature \"%.120s\": its energy " ERG__OVERFLOW_HINT, sg->name);
            return expr_fail(x, ERG_ERANGE, d, diag);
        }
        if (di != NONE) {
            double *a = acc + (size_t)di * A_N;
            a[A_STAT] += erg_signature_static_energy_j(out);
            a[A_DYN] += out->dynamic_energy_j;
            a[A_BUSY] += out->time_s;
            a[A_HELD] += out->time_s;
        }
        int m = (at_origin && !x->opts->warm_start ? 0 : 1) + (corun ? 1 : 0);
        x->bias += m * x->c * sqrt(out->energy_var_j2);
        x->grade = erg_grade_weakest(x->grade, out->grade);
        x->n_elements++;
        x->s_w[ei] = x->he[ei] = out->static_power_w;
        x->end_dev[ei] = di;
        return ERG_OK;
    }
    if (ex->kind == ERG__EX_IDLE) {
        const struct erg__device *d = &s->devices[ex->ref];
        if (erg_signature_idle(d->id, d->idle_power_w, ex->time_s, out) != ERG_OK ||
            !sig_finite(out))
            return expr_fail(x, ERG_ERANGE, "the idle element's energy " ERG__OVERFLOW_HINT, diag);
        double *a = acc + (size_t)ex->ref * A_N;
        a[A_STAT] += d->idle_power_w * ex->time_s;
        a[A_HELD] += ex->time_s;
        x->s_w[ei] = x->he[ei] = out->static_power_w;
        x->end_dev[ei] = ex->ref;
        return ERG_OK;
    }
    if (x->depth >= 64)
        return expr_fail(x, ERG_EINVAL, "expression nested deeper than 64 levels", diag);
    size_t nd = x->nd;
    x->path[x->depth] = ei;
    x->depth++;
    rc = ERG_OK;
    if (ex->kind == ERG__EX_SEQ) {
        /* ⊗ folds exactly (sums), so the children are composed one at a time. */
        erg_signature accsig, child, pair[2];
        erg_signature_init(&accsig);
        for (uint32_t i = 0; i < ex->n; i++) {
            x->path_idx[x->depth - 1] = i;
            if ((rc = eval(x, s->expr_kids[ex->first + i], at_origin && i == 0, corun, &child, acc,
                           diag)) != ERG_OK)
                break;
            if (i == 0) {
                accsig = child;
            } else {
                pair[0] = accsig;
                pair[1] = child;
                erg_diag sub;
                erg_diag_clear(&sub);
                if ((rc = erg_signature_seq(pair, 2, &accsig, &sub)) != ERG_OK) {
                    rc = expr_fail(x, rc, sub.detail, diag);
                    break;
                }
                if (!sig_finite(&accsig)) {
                    rc = expr_fail(
                        x, ERG_ERANGE,
                        "the sequence's time or energy up to this element " ERG__OVERFLOW_HINT,
                        diag);
                    break;
                }
            }
        }
        if (rc == ERG_OK) {
            *out = accsig;
            uint32_t last = s->expr_kids[ex->first + ex->n - 1];
            x->he[ei] = x->he[last]; /* a sequence ends in the state its last part ends in */
            x->end_dev[ei] = x->end_dev[last];
        }
    } else {
        /* ⊕ / ⊕multi: all operands at once (n-ary Var(max)), per-device figures combined after. */
        int is_par = ex->kind == ERG__EX_PAR;
        erg_signature *ops = calloc((size_t)ex->n, sizeof *ops);
        double *cacc = malloc(nd * A_N * sizeof *cacc + 1);
        double *comb = calloc(nd * A_N + 1, sizeof *comb);
        /* multi: per operand the power it is padded at; per device the padding's power and
         * Σ power·T_i, so that its padding energy is pad[2d]·T' − pad[2d+1] */
        double *hend = malloc((size_t)ex->n * sizeof *hend + 1);
        double *pad = calloc(2 * nd + 1, sizeof *pad);
        if (!ops || !cacc || !comb || !hend || !pad) {
            free(ops);
            free(cacc);
            free(comb);
            free(hend);
            free(pad);
            x->depth--;
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        int child_corun = corun || ex->n > 1;
        for (uint32_t i = 0; i < ex->n && rc == ERG_OK; i++) {
            x->path_idx[x->depth - 1] = i;
            memset(cacc, 0, nd * A_N * sizeof *cacc);
            if ((rc = eval(x, s->expr_kids[ex->first + i], at_origin, child_corun, &ops[i], cacc,
                           diag)) != ERG_OK)
                break;
            double ti = ops[i].time_s, own = 0.0;
            uint32_t ci = s->expr_kids[ex->first + i];
            hend[i] = x->he[ci];
            for (size_t d = 0; d < nd; d++)
                own += cacc[d * A_N + A_STAT];
            for (size_t d = 0; d < nd; d++) {
                double *a = cacc + d * A_N, *b = comb + d * A_N;
                if (a[A_HELD] == 0.0 && a[A_STAT] == 0.0 && a[A_DYN] == 0.0 && a[A_BUSY] == 0.0)
                    continue;
                b[A_DYN] += a[A_DYN];
                b[A_BUSY] = fmax(b[A_BUSY], a[A_BUSY]);
                b[A_HELD] = 1.0; /* marks the device used; set to T' below */
                if (is_par) {
                    b[A_STAT] = fmax(b[A_STAT], ti > 0.0 ? a[A_STAT] / ti : 0.0); /* static power */
                } else {
                    b[A_STAT] += a[A_STAT]; /* the operand's own static energy */
                    /* its padding: on the device it ends on, else shared as its static energy */
                    double share = x->end_dev[ci] != NONE ? (d == x->end_dev[ci] ? 1.0 : 0.0)
                                   : own > 0.0            ? a[A_STAT] / own
                                                          : 0.0;
                    pad[2 * d] += share * hend[i];
                    pad[2 * d + 1] += share * hend[i] * ti;
                }
            }
        }
        if (rc == ERG_OK) {
            erg_diag sub;
            erg_diag_clear(&sub);
            rc = is_par ? erg_signature_par(ops, ex->n, out, &sub)
                        : erg_signature_multi_end(ops, hend, ex->n, out, &sub);
            if (rc != ERG_OK)
                rc = expr_fail(x, rc, sub.detail, diag);
            if (rc == ERG_OK && !sig_finite(out)) {
                x->depth--; /* name the operator itself */
                rc = expr_fail(x, ERG_ERANGE,
                               is_par ? "the par's time or energy " ERG__OVERFLOW_HINT
                                      : "the multi's time or energy " ERG__OVERFLOW_HINT,
                               diag);
                x->depth++;
            }
        }
        if (rc == ERG_OK) {
            /* Every participating device is held for T': par, at the device's static power;
             * multi, each operand's own static energy plus its idle element from its end to T'
             * at the static power of the state it ends in (erg_signature_multi_end); scaled so
             * that the devices' parts add up to the composite's static energy (rounding). */
            double tp = out->time_s, sum = 0.0, want = erg_signature_static_energy_j(out);
            for (size_t d = 0; d < nd; d++) {
                if (comb[d * A_N + A_HELD] == 0.0)
                    continue;
                if (is_par)
                    comb[d * A_N + A_STAT] *= tp;
                else
                    comb[d * A_N + A_STAT] += fmax(0.0, pad[2 * d] * tp - pad[2 * d + 1]);
                sum += comb[d * A_N + A_STAT];
            }
            for (size_t d = 0; d < nd; d++) {
                double *b = comb + d * A_N, *a = acc + d * A_N;
                if (b[A_HELD] == 0.0)
                    continue;
                a[A_STAT] += sum > 0.0 ? b[A_STAT] * want / sum : 0.0;
                a[A_DYN] += b[A_DYN];
                a[A_BUSY] += b[A_BUSY];
                a[A_HELD] += tp;
            }
        }
        if (rc == ERG_OK) {
            double h = 0.0;
            for (uint32_t i = 0; !is_par && i < ex->n; i++)
                h += hend[i];
            x->he[ei] = is_par ? out->static_power_w : h;
            x->end_dev[ei] = is_par ? x->end_dev[s->expr_kids[ex->first]] : NONE;
        }
        free(ops);
        free(cacc);
        free(comb);
        free(hend);
        free(pad);
    }
    x->depth--;
    if (rc == ERG_OK)
        x->s_w[ei] = out->static_power_w;
    return rc;
}

/* An expression's elements in draw order: its signature leaves, depth first, left to right. */
static void mc_expr_elems(const struct ectx *x, uint32_t ei, struct mc_elem *el, size_t *n)
{
    const erg_schedule *s = x->s;
    const struct erg__expr *ex = &s->expr[ei];
    if (ex->kind == ERG__EX_SIG)
        el[(*n)++] = mc_elem_of(&s->sigs[ex->ref], x->s_w[ei]);
    else if (ex->kind != ERG__EX_IDLE)
        for (uint32_t i = 0; i < ex->n; i++)
            mc_expr_elems(x, s->expr_kids[ex->first + i], el, n);
}

/* One sample of the subtree ei from the drawn elements, the next of which is *cur. */
static void replay_expr(const struct ectx *x, uint32_t ei, const double *t, const double *d,
                        size_t *cur, double *t_out, double *e_out)
{
    const erg_schedule *s = x->s;
    const struct erg__expr *ex = &s->expr[ei];
    if (ex->kind == ERG__EX_SIG) {
        size_t i = (*cur)++;
        *t_out = t[i];
        *e_out = x->s_w[ei] * t[i] + d[i];
        return;
    }
    if (ex->kind == ERG__EX_IDLE) {
        *t_out = ex->time_s;
        *e_out = x->s_w[ei] * ex->time_s;
        return;
    }
    double tt = 0.0, e = 0.0, dyn = 0.0, sw = 0.0;
    for (uint32_t i = 0; i < ex->n; i++) {
        uint32_t ci = s->expr_kids[ex->first + i];
        double ti, eci;
        replay_expr(x, ci, t, d, cur, &ti, &eci);
        if (ex->kind == ERG__EX_SEQ) {
            tt += ti;
            e += eci;
        } else {
            tt = i == 0 ? ti : fmax(tt, ti);
            /* par: the operand's dynamic part at its constant static power; multi: its energy
             * less its padding power × its time, the padding (at the state it ends in) being
             * added back over the makespan below */
            double w = ex->kind == ERG__EX_PAR ? x->s_w[ci] : x->he[ci];
            dyn += eci - w * ti;
            sw = ex->kind == ERG__EX_PAR ? w : sw + w;
        }
    }
    if (ex->kind != ERG__EX_SEQ)
        e = sw * tt + dyn;
    *t_out = tt;
    *e_out = e;
}

static void mc_expr_replay(const void *ctx, const double *t, const double *d, double *time_s,
                           double *energy_j)
{
    const struct ectx *x = ctx;
    size_t cur = 0;
    replay_expr(x, x->s->expr_root, t, d, &cur, time_s, energy_j);
}

static int mc_expr(const struct ectx *x, uint64_t samples, uint64_t seed, erg_report *r)
{
    struct mc_plan p = {0, malloc((x->n_elements + 1) * sizeof *p.el), mc_expr_replay, x};
    if (!p.el)
        return ERG_ENOMEM;
    mc_expr_elems(x, x->s->expr_root, p.el, &p.n);
    int rc = mc_run(&p, samples, seed, r);
    free(p.el);
    return rc;
}

/* ---------------------------------------------------------------- entry point ------------------
 */

static int outcome_finite(const struct outcome *o)
{
    return isfinite(o->energy_j) && isfinite(o->var_e) && isfinite(o->time_s) &&
           isfinite(o->var_t) && isfinite(o->static_j) && isfinite(o->dynamic_j) &&
           isfinite(o->bias_j);
}

/* Name the first node, in topological order, at which the DAG's finish time, its variance or the
 * running energy stops being finite (else the devices' static energy over the makespan). */
static int dag_not_finite(const erg_schedule *s, const struct dag *g, erg_diag *diag)
{
    double e = 0.0;
    for (size_t q = 0; q < g->n; q++) {
        uint32_t v = g->order[q];
        const erg_signature *sg = &s->sigs[s->nodes[v].sig];
        e += node_s(g, v) * sg->time_s + sg->dynamic_energy_j;
        if (!isfinite(fin_of(g, v)) || !isfinite(vt_node(g, v)) || !isfinite(e))
            return erg_diag_set(diag, ERG_ERANGE, NULL,
                                "node \"%.120s\": the schedule's time or energy up to this "
                                "node " ERG__OVERFLOW_HINT,
                                erg__node_id(s, v));
    }
    return erg_diag_set(diag, ERG_ERANGE, NULL,
                        "the devices' static energy over the makespan " ERG__OVERFLOW_HINT);
}

int erg_schedule_compose(const erg_schedule *s, const erg_compose_options *opts_in, erg_report *r,
                         erg_diag *diag)
{
    if (!s || !r)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_compose: NULL argument");
    erg_compose_options opts;
    if (opts_in)
        opts = *opts_in;
    else
        erg_compose_options_init(&opts);
    memset(r, 0, sizeof *r);
    if (!(opts.confidence > 0.0 && opts.confidence < 1.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "confidence must lie strictly between 0 and 1 (got %g)",
                            opts.confidence);
    double c = erg_two_sided_multiplier(opts.confidence);
    size_t nd = s->n_devices;
    struct outcome o;
    memset(&o, 0, sizeof o);
    double *devbuf = calloc(nd * A_N + 1, sizeof *devbuf);
    o.dev_used = calloc(nd + 1, 1);
    if (!devbuf || !o.dev_used) {
        free(devbuf);
        free(o.dev_used);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int rc;
    struct dag g;
    memset(&g, 0, sizeof g);
    erg_compose_workspace own; /* the call's own working memory when the caller gives none */
    memset(&own, 0, sizeof own);
    g.ws = opts.workspace ? opts.workspace : &own;
    g.keep_graph = opts.workspace != NULL;
    struct ectx x;
    memset(&x, 0, sizeof x);
    unsigned flags = 0; /* the union of the composed elements' measurement flags */
    if (s->has_expr) {
        x.s = s;
        x.opts = &opts;
        x.c = c;
        x.nd = nd;
        x.grade = ERG_GRADE_HW_SHUNT;
        x.s_w = calloc(s->n_expr + 1, sizeof *x.s_w);
        x.he = calloc(s->n_expr + 1, sizeof *x.he);
        x.end_dev = calloc(s->n_expr + 1, sizeof *x.end_dev);
        erg_signature tot;
        erg_signature_init(&tot);
        if (!x.s_w || !x.he || !x.end_dev)
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        else
            rc = eval(&x, s->expr_root, 1, 0, &tot, devbuf, diag);
        if (rc == ERG_OK) {
            o.energy_j = erg_signature_energy_j(&tot);
            o.var_e = tot.energy_var_j2;
            o.time_s = tot.time_s;
            o.var_t = tot.time_var_s2;
            o.static_j = erg_signature_static_energy_j(&tot);
            o.dynamic_j = tot.dynamic_energy_j;
            o.s_w = tot.static_power_w;
            o.bias_j = x.bias;
            o.grade = x.grade;
            flags = tot.flags; /* ⊗, ⊕ and ⊕multi carry the union up */
            o.n_elements = x.n_elements;
            for (size_t d = 0; d < nd; d++) {
                double *a = devbuf + d * A_N;
                if (a[A_HELD] > 0.0 || a[A_STAT] > 0.0 || a[A_DYN] > 0.0) {
                    o.dev_used[d] = 1;
                }
            }
        }
    } else {
        o.dev_static = devbuf;
        o.dev_dynamic = devbuf + nd;
        o.dev_busy = devbuf + 2 * nd;
        o.dev_held = devbuf + 3 * nd;
        g.s = s;
        g.n = s->n_nodes;
        g.opts = &opts;
        g.c = c;
        rc = compose_dag(&g, &o, diag);
        flags = g.flags;
        if (rc == ERG_OK && !outcome_finite(&o))
            rc = dag_not_finite(s, &g, diag);
    }
    if (rc == ERG_OK && !outcome_finite(&o))
        rc = erg_diag_set(diag, ERG_ERANGE, NULL,
                          "expr: the schedule's time or energy " ERG__OVERFLOW_HINT);
    if (rc == ERG_OK) {
        size_t used = 0;
        for (size_t d = 0; d < nd; d++)
            used += o.dev_used[d];
        r->devices = calloc(used + 1, sizeof *r->devices);
        if (!r->devices)
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        for (size_t d = 0, k = 0; rc == ERG_OK && d < nd; d++) {
            if (!o.dev_used[d])
                continue;
            erg_device_report *dr = &r->devices[k++];
            snprintf(dr->id, sizeof dr->id, "%s", s->devices[d].id);
            double st, dy, bu, he;
            if (s->has_expr) {
                const double *a = devbuf + d * A_N;
                st = a[A_STAT];
                dy = a[A_DYN];
                bu = a[A_BUSY];
                he = a[A_HELD];
            } else {
                st = o.dev_static[d];
                dy = o.dev_dynamic[d];
                bu = o.dev_busy[d];
                he = o.dev_held[d];
            }
            dr->static_energy_j = st;
            dr->dynamic_energy_j = dy;
            dr->busy_s = bu;
            dr->idle_s = fmax(0.0, he - bu);
            r->n_devices = k;
        }
    }
    if (rc == ERG_OK) {
        erg_signature_init(&r->total);
        r->total.static_power_w = o.s_w;
        r->total.time_s = o.time_s;
        r->total.dynamic_energy_j = o.dynamic_j;
        r->total.time_var_s2 = o.var_t;
        r->total.energy_var_j2 = o.var_e;
        r->total.grade = o.grade;
        r->total.flags = flags;
        if (r->n_devices == 1)
            snprintf(r->total.device, sizeof r->total.device, "%s", r->devices[0].id);
        r->energy_j = o.energy_j;
        r->energy_sd_j = sqrt(fmax(0.0, o.var_e));
        r->time_s = o.time_s;
        r->time_sd_s = sqrt(fmax(0.0, o.var_t));
        r->static_energy_j = o.static_j;
        r->dynamic_energy_j = o.dynamic_j;
        r->confidence = opts.confidence;
        r->interval_j[0] = o.energy_j - c * r->energy_sd_j;
        r->interval_j[1] = o.energy_j + c * r->energy_sd_j;
        r->bias_bound_j = o.bias_j;
        r->grade = o.grade;
        r->flags = flags;
        r->n_elements = o.n_elements;
        if (opts.mc_samples > 0) {
            r->has_mc = 1;
            r->mc_samples = opts.mc_samples;
            int mrc = s->has_expr ? mc_expr(&x, opts.mc_samples, opts.mc_seed, r)
                                  : mc_dag(&g, &o, opts.mc_samples, opts.mc_seed, r);
            if (mrc != ERG_OK)
                rc = erg_diag_set(diag, mrc, NULL, "out of memory");
            if (rc == ERG_OK && !(isfinite(r->mc_energy_j) && isfinite(r->mc_energy_sd_j) &&
                                  isfinite(r->mc_time_s) && isfinite(r->mc_time_sd_s)))
                rc = erg_diag_set(diag, ERG_ERANGE, NULL,
                                  "the Monte Carlo samples' time or energy " ERG__OVERFLOW_HINT);
        }
    }
    if (rc != ERG_OK)
        erg_report_free(r);
    dag_free(&g);
    ws_release(&own);
    free(x.s_w);
    free(x.he);
    free(x.end_dev);
    free(devbuf);
    free(o.dev_used);
    return rc;
}

/* ---------------------------------------------------------------- report helpers ---------------
 */

int erg_report_deviation(erg_report *r, double measured_j, double measured_sd_j, erg_diag *diag)
{
    if (!r)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no report");
    if (!isfinite(measured_j) || measured_j < 0.0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "measured energy must be finite and >= 0 J (got %g)", measured_j);
    if (!isfinite(measured_sd_j) || measured_sd_j < 0.0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "measured standard deviation must be finite and >= 0 J (got %g)",
                            measured_sd_j);
    double c = erg_two_sided_multiplier(r->confidence);
    double sd = sqrt(r->energy_sd_j * r->energy_sd_j + measured_sd_j * measured_sd_j);
    double diff = fabs(r->energy_j - measured_j);
    r->has_deviation = 1;
    r->measured_j = measured_j;
    r->measured_sd_j = measured_sd_j;
    r->deviation_z = sd > 0.0 ? diff / sd : (diff > 0.0 ? HUGE_VAL : 0.0);
    r->deviation_detected = diff > c * sd;
    return ERG_OK;
}

int erg_report_compare(const erg_report *a, const erg_report *b)
{
    double tol = ERG_ROUNDING_REL * fmax(fabs(a->energy_j), fabs(b->energy_j));
    if (a->interval_j[1] + tol < b->interval_j[0])
        return -1;
    if (b->interval_j[1] + tol < a->interval_j[0])
        return 1;
    return 0;
}

int erg_context_insensitive(const erg_signature *ref, const erg_signature *other, double confidence,
                            erg_insensitivity *out, erg_diag *diag)
{
    if (!ref || !other || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_insensitive: NULL argument");
    if (!(confidence > 0.0 && confidence < 1.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "confidence must lie strictly between 0 and 1 (got %g)", confidence);
    int rc;
    if ((rc = erg_signature_check(ref, diag)) != ERG_OK ||
        (rc = erg_signature_check(other, diag)) != ERG_OK)
        return rc;
    double c = erg_two_sided_multiplier(confidence);
    out->delta_s_w = fabs(other->static_power_w - ref->static_power_w);
    out->delta_t_s = fabs(other->time_s - ref->time_s);
    out->delta_d_j = fabs(other->dynamic_energy_j - ref->dynamic_energy_j);
    out->lhs_j = out->delta_s_w * ref->time_s + out->delta_t_s * ref->static_power_w +
                 out->delta_s_w * out->delta_t_s + out->delta_d_j;
    out->tolerance_j = c * sqrt(ref->energy_var_j2);
    if (!isfinite(out->lhs_j))
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "%s: the test's left-hand side overflows a double", other->name);
    out->insensitive = out->lhs_j <= out->tolerance_j;
    return ERG_OK;
}
