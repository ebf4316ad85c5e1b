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
    char who[ERG_SIG_NAME_MAX + 16];
    snprintf(who, sizeof who, "node \"%.*s\": ", ERG_SIG_NAME_MAX - 1, id);
    if (check_p2(s, &s->sigs[si], di, who, diag) != ERG_OK)
        return ERG_EINVAL;
    if (!isnan(start_s) && (!isfinite(start_s) || start_s < 0.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "node \"%s\": start_s must be finite and >= 0 (got %g)", id, start_s);
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

int erg_schedule_add_edge(erg_schedule *s, const char *from, const char *to, erg_diag *diag)
{
    if (!s || !from || !to)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "an edge needs two node ids");
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
    double hi = -INFINITY;
    for (size_t i = 0; i < k; i++)
        if (m[i] - 10.0 * sqrt(v[i]) > hi)
            hi = m[i] - 10.0 * sqrt(v[i]);
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (!(m[i] + 10.0 * sqrt(v[i]) < hi)) {
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

/* ---------------------------------------------------------------- DAG composition --------------
 */

struct dag {
    const erg_schedule *s;
    size_t n;
    double origin0;            /* start of free sources, s */
    double origin;             /* earliest start, s */
    erg__graph gr;             /* adjacency and order (calculus/graph.h) */
    uint32_t *pred_off, *pred; /* CSR of predecessors (gr's) */
    uint32_t *succ_off, *succ; /* CSR of successors (gr's) */
    uint32_t *order;           /* topological order (gr's) */
    double *start, *fin;       /* point values, s */
    /* Variance propagation. Every finish F_v is expressed as E_a + X, with E_a an event of the
     * tree of shared events (anchor[v]) and X independent of everything before E_a; vt[v] is
     * Var(F_v). Tree events: the finish of a fork node (id v, two or more successors), the start
     * of a join node (id n + v, two or more operands) and the makespan (id 2n); the root (NONE)
     * is the deterministic origin. */
    uint32_t *anchor;
    double *vt;
    uint32_t *tparent, *tdepth; /* per tree event: parent event and depth (root: 0) */
    double *tvar;               /* per tree event: its variance */
    uint32_t *sanchor;          /* per join node: the anchor of its start (for identical joins) */
    double *svar;               /* per join node: Var(start) */
};

static double vt_of(const struct dag *g, uint32_t b)
{
    return b == NONE ? 0.0 : g->tvar[b];
}

static uint32_t depth_of(const struct dag *g, uint32_t b)
{
    return b == NONE ? 0 : g->tdepth[b];
}

/* The tree position of a finish as a join operand: the fork's own event, else its anchor. */
static uint32_t pos_of(const struct dag *g, uint32_t p)
{
    return g->succ_off[p + 1] - g->succ_off[p] >= 2 ? p : g->anchor[p];
}

static uint32_t lca(const struct dag *g, uint32_t a, uint32_t b)
{
    for (int steps = 0; a != b; steps++) {
        if (steps > LCA_WALK_MAX)
            return NONE;
        if (depth_of(g, a) >= depth_of(g, b))
            a = g->tparent[a];
        else
            b = g->tparent[b];
    }
    return a;
}

static void dag_free(struct dag *g)
{
    erg__graph_free(&g->gr);
    free(g->start);
    free(g->fin);
    free(g->anchor);
    free(g->vt);
    free(g->tparent);
    free(g->tdepth);
    free(g->tvar);
    free(g->sanchor);
    free(g->svar);
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

/* Sort node indexes by start time (non-negative doubles order as their bit patterns): LSD radix
 * sort on 16-bit digits, linear in n. */
static int sort_by_start(const double *start, size_t n, uint32_t *out)
{
    uint64_t *key = malloc(n * sizeof *key), *key2 = malloc(n * sizeof *key2);
    uint32_t *tmp = malloc(n * sizeof *tmp);
    size_t *count = malloc(65536 * sizeof *count);
    if (!key || !key2 || !tmp || !count) {
        free(key);
        free(key2);
        free(tmp);
        free(count);
        return ERG_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        double x = start[i] > 0.0 ? start[i] : 0.0;
        memcpy(&key[i], &x, sizeof x);
        out[i] = (uint32_t)i;
    }
    for (int pass = 0; pass < 4; pass++) {
        int sh = 16 * pass;
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(key[i] >> sh) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t p = count[(key[i] >> sh) & 0xffff]++;
            key2[p] = key[i];
            tmp[p] = out[i];
        }
        uint64_t *kt = key;
        key = key2;
        key2 = kt;
        memcpy(out, tmp, n * sizeof *out);
    }
    free(key);
    free(key2);
    free(tmp);
    free(count);
    return ERG_OK;
}

static int alloc_dag(struct dag *g, const erg_schedule *s)
{
    size_t n = s->n_nodes, e = s->n_edges;
    g->s = s;
    g->n = n;
    (void)e;
    g->start = malloc(n * sizeof *g->start);
    g->fin = malloc(n * sizeof *g->fin);
    g->anchor = malloc(n * sizeof *g->anchor);
    g->vt = malloc(n * sizeof *g->vt);
    g->tparent = malloc((2 * n + 1) * sizeof *g->tparent);
    g->tdepth = malloc((2 * n + 1) * sizeof *g->tdepth);
    g->tvar = malloc((2 * n + 1) * sizeof *g->tvar);
    g->sanchor = malloc(n * sizeof *g->sanchor);
    g->svar = malloc(n * sizeof *g->svar);
    if (!g->start || !g->fin || !g->anchor || !g->vt || !g->tparent || !g->tdepth || !g->tvar ||
        !g->sanchor || !g->svar)
        return ERG_ENOMEM;
    return ERG_OK;
}

/* Static power of a node: its signature's, or its device's when the signature has none. */
static double node_s(const erg_schedule *s, uint32_t v)
{
    const struct erg__node *nd = &s->nodes[v];
    double w = s->sigs[nd->sig].static_power_w;
    return isnan(w) ? s->devices[nd->device].static_power_w : w;
}

static double node_vd(const erg_schedule *s, uint32_t v)
{
    const erg_signature *g = &s->sigs[s->nodes[v].sig];
    double w = node_s(s, v);
    double x = g->energy_var_j2 - w * w * g->time_var_s2;
    return x > 0.0 ? x : 0.0;
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

/* Join operands: point finish means, tree positions and total variances. */
struct opnd;
struct joinbuf {
    double *m, *tot;
    uint32_t *b;
    struct opnd *op;
};

/* A join operand: a finish (or a fixed start) with its tree position, point mean and total
 * variance; key is its ancestor just below the operands' common ancestor. */
struct opnd {
    uint32_t pos, key;
    size_t orig;
    double m, tot;
};

static int cmp_key(const void *a, const void *b)
{
    uint32_t x = ((const struct opnd *)a)->key, y = ((const struct opnd *)b)->key;
    return x < y ? -1 : x > y;
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
        *m_out = op[0].m;
        *v_out = op[0].tot;
        *anchor_out = op[0].pos;
        *single_out = (long)op[0].orig;
        return ERG_OK;
    }
    uint32_t l = op[0].pos;
    for (size_t i = 1; i < k && l != NONE; i++)
        l = lca(g, l, op[i].pos);
    for (size_t i = 0; i < k; i++) {
        uint32_t u = op[i].pos;
        op[i].key = NONE;
        if (u == l || depth >= LCA_WALK_MAX)
            continue;
        int steps = 0;
        while (u != NONE && g->tparent[u] != l && steps++ < LCA_WALK_MAX)
            u = g->tparent[u];
        if (u != NONE && g->tparent[u] == l)
            op[i].key = u;
    }
    if (k <= 16) { /* insertion sort: joins are small */
        for (size_t i = 1; i < k; i++)
            for (size_t j = i; j > 0 && op[j - 1].key > op[j].key; j--) {
                struct opnd t = op[j];
                op[j] = op[j - 1];
                op[j - 1] = t;
            }
    } else {
        qsort(op, k, sizeof *op, cmp_key);
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
            gm[ng] = op[i].m;
            gtot[ng] = op[i].tot;
            ganc[ng] = op[i].pos;
            gsingle[ng] = (long)op[i].orig;
        }
        gv[ng] = fmax(0.0, gtot[ng] - vl);
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
    memcpy(mcopy, gm, ng * sizeof *gm);
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
    g->tparent[event] = anc;
    g->tdepth[event] = depth_of(g, anc) + 1;
    g->tvar[event] = v;
    *anchor_out = event;
    *var_out = v;
    return ERG_OK;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int compose_dag(const erg_schedule *s, const erg_compose_options *opts, double c,
                       struct dag *g, struct outcome *o, erg_diag *diag)
{
    size_t n = s->n_nodes, e = s->n_edges;
    if (n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "the schedule has neither nodes nor an expr");
    int rc = alloc_dag(g, s);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, NULL, "out of memory for %zu nodes", n);
    for (size_t i = 0; i < n; i++) {
        const erg_signature *sg = &s->sigs[s->nodes[i].sig];
        double w = node_s(s, (uint32_t)i);
        if (check_m1(sg, w, "", NULL) == ERG_OK)
            continue; /* the node's label is formatted only for a message */
        char who[200];
        snprintf(who, sizeof who, "node \"%.120s\"", erg__node_id(s, (uint32_t)i));
        return check_m1(sg, w, who, diag);
    }
    /* Adjacency (both directions) and Kahn's topological order: the graph layer. */
    rc = erg__graph_init(&g->gr, (uint32_t)n, e, (const uint32_t(*)[2])s->edges);
    g->pred_off = g->gr.pred_off;
    g->pred = g->gr.pred;
    g->succ_off = g->gr.succ_off;
    g->succ = g->gr.succ;
    g->order = g->gr.order;
    if (rc == ERG_ENOMEM)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (rc == ERG_ECYCLE)
        return report_cycle(g, diag);
    /* Sources without a start time start at 0 s. */
    g->origin0 = 0.0;
    size_t maxk = n + 1;
    struct joinbuf jb = {malloc(maxk * sizeof(double)), malloc(maxk * sizeof(double)),
                         malloc(maxk * sizeof(uint32_t)), NULL};
    jb.op = malloc(maxk * sizeof *jb.op);
    uint32_t *byst = malloc(n * sizeof *byst), *bydev = malloc(n * sizeof *bydev);
    size_t *dcount = calloc(s->n_devices + 1, sizeof *dcount);
    uint64_t *hkeys = NULL;
    uint32_t *hnode = NULL, *stamp = NULL;
    if (!jb.m || !jb.tot || !jb.b || !jb.op || !byst || !bydev || !dcount) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    /* Joins with the same operand set share one start event (a series composition of parallel
     * blocks is written with every source of the second block after every sink of the first):
     * a table keyed by a commutative hash of the predecessor set, checked exactly. */
    size_t hcap = 16;
    while (hcap < 2 * n)
        hcap *= 2;
    hkeys = malloc(hcap * sizeof *hkeys);
    hnode = malloc(hcap * sizeof *hnode);
    stamp = calloc(n, sizeof *stamp);
    if (!hkeys || !hnode || !stamp) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < hcap; i++)
        hnode[i] = NONE;
    uint32_t gen = 0;
    /* Forward pass: point start and finish of every node, and the variance of every finish. */
    for (size_t oi = 0; oi < n; oi++) {
        uint32_t v = g->order[oi];
        const struct erg__node *nd = &s->nodes[v];
        const erg_signature *sg = &s->sigs[nd->sig];
        size_t k = 0;
        double latest = -HUGE_VAL;
        uint32_t latest_p = NONE;
        uint64_t h = 0;
        for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++) {
            uint32_t p = g->pred[q];
            jb.m[k] = g->fin[p];
            jb.b[k] = pos_of(g, p);
            jb.tot[k] = g->vt[p];
            h += mix64(p);
            if (g->fin[p] > latest) {
                latest = g->fin[p];
                latest_p = p;
            }
            k++;
        }
        if (!isnan(nd->start_s)) {
            if (k > 0 && latest > nd->start_s + 1e-9 * fmax(1.0, nd->start_s)) {
                rc = erg_diag_set(
                    diag, ERG_EINVAL, NULL,
                    "node \"%s\" starts at %.9g s, before its predecessor \"%s\" ends at %.9g s",
                    erg__node_id(s, v), nd->start_s, erg__node_id(s, latest_p), latest);
                goto out;
            }
            jb.m[k] = nd->start_s;
            jb.b[k] = NONE;
            jb.tot[k] = 0.0;
            k++;
        }
        double st, svar;
        uint32_t sanch;
        uint32_t twin = NONE;
        size_t slot = 0;
        if (k >= 2 && isnan(nd->start_s)) {
            /* Look for an earlier join with the same predecessor set. */
            h ^= mix64(k);
            for (slot = (size_t)h & (hcap - 1); hnode[slot] != NONE;
                 slot = (slot + 1) & (hcap - 1)) {
                uint32_t u = hnode[slot];
                if (hkeys[slot] != h || g->pred_off[u + 1] - g->pred_off[u] != k)
                    continue;
                int same = 1;
                gen++;
                for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++)
                    stamp[g->pred[q]] = gen;
                for (uint32_t q = g->pred_off[u]; q < g->pred_off[u + 1] && same; q++)
                    same = stamp[g->pred[q]] == gen;
                gen++;
                for (uint32_t q = g->pred_off[u]; q < g->pred_off[u + 1]; q++)
                    stamp[g->pred[q]] = gen;
                for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1] && same; q++)
                    same = stamp[g->pred[q]] == gen;
                if (same) {
                    twin = u;
                    break;
                }
            }
        }
        if (k == 0) {
            st = g->origin0;
            sanch = NONE;
            svar = 0.0;
        } else if (twin != NONE) {
            st = g->start[twin];
            sanch = g->sanchor[twin];
            svar = g->svar[twin];
        } else if ((rc = join(g, &jb, k, (uint32_t)(n + v), &st, &sanch, &svar)) != ERG_OK) {
            erg_diag_set(diag, rc, NULL, "variance of the start of node \"%s\"",
                         erg__node_id(s, v));
            goto out;
        }
        if (k >= 2 && isnan(nd->start_s) && twin == NONE) {
            hnode[slot] = v;
            hkeys[slot] = h;
        }
        g->sanchor[v] = sanch;
        g->svar[v] = svar;
        g->start[v] = st;
        g->fin[v] = st + sg->time_s;
        g->anchor[v] = sanch;
        g->vt[v] = svar + sg->time_var_s2;
        if (g->succ_off[v + 1] - g->succ_off[v] >= 2) { /* a fork: its finish is a tree event */
            g->tparent[v] = sanch;
            g->tdepth[v] = depth_of(g, sanch) + 1;
            g->tvar[v] = g->vt[v];
        }
    }
    /* Makespan: the join of every node without successors. */
    double end;
    size_t k = 0;
    g->origin = HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        if (g->start[i] < g->origin)
            g->origin = g->start[i];
        if (g->succ_off[i + 1] == g->succ_off[i]) {
            jb.m[k] = g->fin[i];
            jb.b[k] = pos_of(g, (uint32_t)i);
            jb.tot[k] = g->vt[i];
            k++;
        }
    }
    uint32_t manch;
    if ((rc = join(g, &jb, k, (uint32_t)(2 * n), &end, &manch, &o->var_t)) != ERG_OK) {
        erg_diag_set(diag, rc, NULL, "variance of the makespan");
        goto out;
    }
    o->time_s = end - g->origin;
    /* Per device (nodes by device, then by start): busy union at the elements' static power,
     * gaps as idle elements at the device's idle power; every device held for the makespan. */
    if (sort_by_start(g->start, n, byst) != ERG_OK) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        dcount[s->nodes[i].device + 1]++;
    for (size_t d = 0; d < s->n_devices; d++)
        dcount[d + 1] += dcount[d];
    for (size_t i = 0; i < n; i++) {
        uint32_t v = byst[i];
        bydev[dcount[s->nodes[v].device]++] = v;
    }
    double tol = 1e-12 * fmax(1.0, fabs(end));
    double vd = 0.0;
    erg_grade grade = ERG_GRADE_HW_SHUNT;
    size_t pos = 0;
    for (size_t d = 0; d < s->n_devices; d++) {
        size_t stop = dcount[d];
        if (pos == stop)
            continue;
        o->dev_used[d] = 1;
        double cur_end = g->origin, busy = 0.0, stat = 0.0, run_s = 0.0, ddyn = 0.0;
        uint32_t run_node = NONE;
        for (; pos < stop; pos++) {
            uint32_t v = bydev[pos];
            const erg_signature *sg = &s->sigs[s->nodes[v].sig];
            double w = node_s(s, v), st = g->start[v], en = g->fin[v];
            if (st >= cur_end - tol) {
                double a = st > cur_end ? st : cur_end;
                run_s = w;
                run_node = v;
                if (en > a) {
                    busy += en - a;
                    stat += run_s * (en - a);
                    cur_end = en;
                }
            } else {
                if (fabs(w - run_s) > 1e-9 * fmax(1.0, run_s)) {
                    rc = erg_diag_set(
                        diag, ERG_EINVAL, NULL,
                        "nodes \"%s\" and \"%s\" overlap on device \"%s\" but have different "
                        "static power (%g W and %g W); a device has a single static power (Axiom "
                        "P2)",
                        erg__node_id(s, run_node), erg__node_id(s, v), s->devices[d].id, run_s, w);
                    goto out;
                }
                if (en > cur_end) {
                    busy += en - cur_end;
                    stat += run_s * (en - cur_end);
                    cur_end = en;
                }
            }
            ddyn += sg->dynamic_energy_j;
            vd += node_vd(s, v);
            grade = erg_grade_weakest(grade, sg->grade);
        }
        double idle = fmax(0.0, o->time_s - busy);
        stat += s->devices[d].idle_power_w * idle;
        o->dev_static[d] = stat;
        o->dev_dynamic[d] = ddyn;
        o->dev_busy[d] = busy;
        o->dev_held[d] = o->time_s;
        o->static_j += stat;
        o->dynamic_j += ddyn;
    }
    /* Bias bound (Eq. 13): m_i counts an entry-state substitution, dropped for elements that
     * start with the composition at the null context, plus an isolation substitution for
     * elements that co-run with another (their intervals overlap, on any device). */
    double pmax = -INFINITY, bias = 0.0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = byst[i];
        int corun =
            (pmax > g->start[v] + tol) || (i + 1 < n && g->start[byst[i + 1]] < g->fin[v] - tol);
        if (g->fin[v] > pmax)
            pmax = g->fin[v];
        int first = g->pred_off[v + 1] == g->pred_off[v] && g->start[v] <= g->origin + tol;
        int m = (first && !opts->warm_start ? 0 : 1) + corun;
        bias += m * c * sqrt(s->sigs[s->nodes[v].sig].energy_var_j2);
    }
    o->energy_j = o->static_j + o->dynamic_j;
    o->s_w = o->time_s > 0.0 ? o->static_j / o->time_s : 0.0;
    o->var_e = vd + o->s_w * o->s_w * o->var_t;
    o->bias_j = bias;
    o->grade = grade;
    o->n_elements = n;
    rc = ERG_OK;
out:
    free(jb.m);
    free(jb.tot);
    free(jb.b);
    free(jb.op);
    free(byst);
    free(bydev);
    free(dcount);
    free(hkeys);
    free(hnode);
    free(stamp);
    return rc;
}

/* Monte Carlo over the DAG (Appendix F.4): times T_i ~ N(T_i, var_T_i) truncated at 0, dynamic
 * energies d_i ~ N(d_i, var_d_i); each sample replays the schedule (start = max(given start,
 * predecessors' finishes)) and charges the composite static power over its makespan. */
static int mc_dag(const erg_schedule *s, const struct dag *g, const struct outcome *o,
                  uint64_t samples, uint64_t seed, erg_report *r)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *fin = malloc(s->n_nodes * sizeof *fin);
    if (!rng || !fin) {
        gsl_rng_free(rng);
        free(fin);
        return ERG_ENOMEM;
    }
    gsl_rng_set(rng, (unsigned long)seed);
    erg_running re = {0}, rt = {0};
    for (uint64_t it = 0; it < samples; it++) {
        double end = -INFINITY, dyn = 0.0;
        for (size_t oi = 0; oi < s->n_nodes; oi++) {
            uint32_t v = g->order[oi];
            const struct erg__node *nd = &s->nodes[v];
            const erg_signature *sg = &s->sigs[nd->sig];
            double st = isnan(nd->start_s) ? -HUGE_VAL : nd->start_s;
            for (uint32_t q = g->pred_off[v]; q < g->pred_off[v + 1]; q++)
                if (fin[g->pred[q]] > st)
                    st = fin[g->pred[q]];
            if (st == -HUGE_VAL)
                st = g->origin0;
            double t = sg->time_s +
                       (sg->time_var_s2 > 0.0 ? gsl_ran_gaussian(rng, sqrt(sg->time_var_s2)) : 0.0);
            fin[v] = st + (t > 0.0 ? t : 0.0);
            if (fin[v] > end)
                end = fin[v];
            double vd = node_vd(s, v);
            dyn += sg->dynamic_energy_j + (vd > 0.0 ? gsl_ran_gaussian(rng, sqrt(vd)) : 0.0);
        }
        double m = end - g->origin;
        erg_running_add(&rt, m);
        erg_running_add(&re, o->s_w * m + dyn);
    }
    r->mc_energy_j = re.mean;
    r->mc_energy_sd_j = sqrt(erg_running_var(&re));
    r->mc_time_s = rt.mean;
    r->mc_time_sd_s = sqrt(erg_running_var(&rt));
    gsl_rng_free(rng);
    free(fin);
    return ERG_OK;
}

/* ---------------------------------------------------------------- expression composition -------
 */

struct ectx {
    const erg_schedule *s;
    const erg_compose_options *opts;
    double c;
    double *s_w; /* per expr node: static power of its point composite (for Monte Carlo) */
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
        x->s_w[ei] = out->static_power_w;
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
        x->s_w[ei] = out->static_power_w;
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
        if (rc == ERG_OK)
            *out = accsig;
    } else {
        /* ⊕ / ⊕multi: all operands at once (n-ary Var(max)), per-device figures combined after. */
        int is_par = ex->kind == ERG__EX_PAR;
        erg_signature *ops = calloc((size_t)ex->n, sizeof *ops);
        double *cacc = malloc(nd * A_N * sizeof *cacc + 1);
        double *comb = calloc(nd * A_N + 1, sizeof *comb);
        if (!ops || !cacc || !comb) {
            free(ops);
            free(cacc);
            free(comb);
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
            double ti = ops[i].time_s;
            for (size_t d = 0; d < nd; d++) {
                double *a = cacc + d * A_N, *b = comb + d * A_N;
                if (a[A_HELD] == 0.0 && a[A_STAT] == 0.0 && a[A_DYN] == 0.0 && a[A_BUSY] == 0.0)
                    continue;
                b[A_DYN] += a[A_DYN];
                b[A_BUSY] = fmax(b[A_BUSY], a[A_BUSY]);
                b[A_HELD] = 1.0; /* marks the device used; set to T' below */
                if (is_par)
                    b[A_STAT] = fmax(b[A_STAT], ti > 0.0 ? a[A_STAT] / ti : 0.0); /* static power */
                else
                    b[A_STAT] += ti > 0.0 ? a[A_STAT] / ti : 0.0; /* summed static powers */
            }
        }
        if (rc == ERG_OK) {
            erg_diag sub;
            erg_diag_clear(&sub);
            rc = is_par ? erg_signature_par(ops, ex->n, out, &sub)
                        : erg_signature_multi(ops, ex->n, out, &sub);
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
            /* Every participating device is held for T' (the shorter operands padded by idle
             * elements at their static power); its static energy is its static power times T',
             * scaled so that the devices' parts add up to the composite's static energy. */
            double tp = out->time_s, sum = 0.0, want = erg_signature_static_energy_j(out);
            for (size_t d = 0; d < nd; d++)
                if (comb[d * A_N + A_HELD] != 0.0)
                    sum += comb[d * A_N + A_STAT] * tp;
            for (size_t d = 0; d < nd; d++) {
                double *b = comb + d * A_N, *a = acc + d * A_N;
                if (b[A_HELD] == 0.0)
                    continue;
                a[A_STAT] += sum > 0.0 ? b[A_STAT] * tp * want / sum : 0.0;
                a[A_DYN] += b[A_DYN];
                a[A_BUSY] += b[A_BUSY];
                a[A_HELD] += tp;
            }
        }
        free(ops);
        free(cacc);
        free(comb);
    }
    x->depth--;
    if (rc == ERG_OK)
        x->s_w[ei] = out->static_power_w;
    return rc;
}

/* One Monte Carlo sample of an expression: time and energy, from sampled leaves (Appendix F.4). */
static void sample_expr(const struct ectx *x, gsl_rng *rng, uint32_t ei, double *t_out,
                        double *e_out)
{
    const erg_schedule *s = x->s;
    const struct erg__expr *ex = &s->expr[ei];
    if (ex->kind == ERG__EX_SIG) {
        const erg_signature *sg = &s->sigs[ex->ref];
        double w = x->s_w[ei];
        double t = sg->time_s +
                   (sg->time_var_s2 > 0.0 ? gsl_ran_gaussian(rng, sqrt(sg->time_var_s2)) : 0.0);
        double vd = sg->energy_var_j2 - w * w * sg->time_var_s2;
        double d = sg->dynamic_energy_j + (vd > 0.0 ? gsl_ran_gaussian(rng, sqrt(vd)) : 0.0);
        t = t > 0.0 ? t : 0.0;
        *t_out = t;
        *e_out = w * t + d;
        return;
    }
    if (ex->kind == ERG__EX_IDLE) {
        *t_out = ex->time_s;
        *e_out = x->s_w[ei] * ex->time_s;
        return;
    }
    double t = 0.0, e = 0.0, dyn = 0.0, sw = 0.0;
    for (uint32_t i = 0; i < ex->n; i++) {
        uint32_t ci = s->expr_kids[ex->first + i];
        double ti, eci;
        sample_expr(x, rng, ci, &ti, &eci);
        if (ex->kind == ERG__EX_SEQ) {
            t += ti;
            e += eci;
        } else {
            t = i == 0 ? ti : fmax(t, ti);
            dyn +=
                eci - x->s_w[ci] * ti; /* the operand's dynamic part at its constant static power */
            sw = ex->kind == ERG__EX_PAR ? x->s_w[ci] : sw + x->s_w[ci];
        }
    }
    if (ex->kind != ERG__EX_SEQ)
        e = sw * t + dyn;
    *t_out = t;
    *e_out = e;
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
        e += node_s(s, v) * sg->time_s + sg->dynamic_energy_j;
        if (!isfinite(g->fin[v]) || !isfinite(g->vt[v]) || !isfinite(e))
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
        erg_signature tot;
        erg_signature_init(&tot);
        if (!x.s_w)
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
        rc = compose_dag(s, &opts, c, &g, &o, diag);
        for (size_t i = 0; i < s->n_nodes; i++)
            flags |= s->sigs[s->nodes[i].sig].flags;
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
            if (s->has_expr) {
                gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
                if (!rng) {
                    rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
                } else {
                    gsl_rng_set(rng, (unsigned long)opts.mc_seed);
                    erg_running re = {0}, rt = {0};
                    for (uint64_t it = 0; it < opts.mc_samples; it++) {
                        double t, e;
                        sample_expr(&x, rng, s->expr_root, &t, &e);
                        erg_running_add(&rt, t);
                        erg_running_add(&re, e);
                    }
                    r->mc_energy_j = re.mean;
                    r->mc_energy_sd_j = sqrt(erg_running_var(&re));
                    r->mc_time_s = rt.mean;
                    r->mc_time_sd_s = sqrt(erg_running_var(&rt));
                    gsl_rng_free(rng);
                }
            } else if (mc_dag(s, &g, &o, opts.mc_samples, opts.mc_seed, r) != ERG_OK) {
                rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
            }
            if (rc == ERG_OK && !(isfinite(r->mc_energy_j) && isfinite(r->mc_energy_sd_j) &&
                                  isfinite(r->mc_time_s) && isfinite(r->mc_time_sd_s)))
                rc = erg_diag_set(diag, ERG_ERANGE, NULL,
                                  "the Monte Carlo samples' time or energy " ERG__OVERFLOW_HINT);
        }
    }
    if (rc != ERG_OK)
        erg_report_free(r);
    dag_free(&g);
    free(x.s_w);
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
    out->insensitive = out->lhs_j <= out->tolerance_j;
    return ERG_OK;
}
