/* SPDX-License-Identifier: MIT */
/*
 * Frontier of a DAG schedule with a choice of operating point per node. Every device is held at its
 * static power for the whole makespan M, so E = (Σ_dev s_dev)·M + Σ_k d_k (schedule/1 DAG
 * semantics; paper Section 3.3). Minimising Σ d under a deadline is the discrete time–cost
 * trade-off problem (NP-hard; De et al. 1997), so:
 * - small instances are enumerated exhaustively (exact);
 * - otherwise each node's (T, d) points are replaced by their lower convex hull and the minimum
 *   dynamic energy for a deadline is a linear program (GLPK simplex, warm-started across
 *   deadlines). Its durations are rounded down to real points (always feasible), then every node
 *   takes the least-energy point that fits its slack (critical-path slack reclamation). The LP
 *   optimum at the plan's makespan is a lower bound on the true frontier; the gap is reported.
 */
#include "calculus/graph.h"
#include "core/dynlib.h"
#include "frontier/opsched.h"

#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stair { /* a node's (T, d) Pareto staircase: T ascending, d strictly decreasing */
    size_t n;
    double *t, *d;
    size_t *pt; /* index in the element's operating set */
    int *grp;   /* the point's (device, ω_dev) group */
};

struct dag {
    const erg_opsched *os;
    size_t n, m;
    erg__graph gr;             /* adjacency and order (calculus/graph.h) */
    uint32_t *topo;            /* topological order (with transitions: also each device's order) */
    uint32_t *pred_off, *pred; /* CSR of predecessors (gr's) */
    uint32_t *succ_off, *succ; /* CSR of successors (gr's) */
    struct stair *st;
    double static_w; /* Σ_dev p_dev: every device held for the makespan at its idle power */
    double *cstat;   /* per node: s_dev − p_dev, the extra static power while it runs */
    double *dur, *fin, *lst; /* scratch: durations, finish times, latest finish */
    /* Transition elements (Section 6.1): has_tr when some pair of nodes consecutive on a device
     * (in the order the nodes are declared) can be at two ω_dev with a declared transition. Then
     * devprev[k] is the node before k on its device (FR_NONE for the first), topo also orders each
     * device's nodes, staircases are kept per ω_dev group, and grp[k] (scratch) is the group of
     * node k's current point. */
    int has_tr;
    size_t *devprev;
    int *grp;
};

static void dag_free(struct dag *g)
{
    free(g->topo);
    erg__graph_free(&g->gr);
    if (g->st)
        for (size_t k = 0; k < g->n; k++) {
            free(g->st[k].t);
            free(g->st[k].d);
            free(g->st[k].pt);
            free(g->st[k].grp);
        }
    free(g->st);
    free(g->dur);
    free(g->fin);
    free(g->lst);
    free(g->cstat);
    free(g->devprev);
    free(g->grp);
}

struct td {
    double t, d;
    size_t i;
};

static int cmp_td(const void *pa, const void *pb)
{
    const struct td *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* The declared transition from group `from` to group `to` on device, or NULL (same group, none
 * declared: undeclared switches cost nothing, as in the expression form). */
static const struct fr_transition *dag_tr(const erg_opsched *os, const char *device, int from,
                                          int to)
{
    const struct fr_transition *tr = erg__fr_find_tr(os, from, to);
    return tr && strcmp(os->group[from].device, device) == 0 ? tr : NULL;
}

static int dag_build(const erg_opsched *os, struct dag *g, erg_diag *diag)
{
    memset(g, 0, sizeof *g);
    g->os = os;
    g->n = os->n_node;
    g->m = os->n_edge;
    size_t n = g->n, m = g->m;
    g->topo = malloc((n + 1) * sizeof *g->topo);
    g->st = calloc(n + 1, sizeof *g->st);
    g->dur = malloc((n + 1) * sizeof *g->dur);
    g->fin = malloc((n + 1) * sizeof *g->fin);
    g->lst = malloc((n + 1) * sizeof *g->lst);
    g->cstat = malloc((n + 1) * sizeof *g->cstat);
    g->devprev = malloc((n + 1) * sizeof *g->devprev);
    g->grp = calloc(n + 1, sizeof *g->grp);
    uint32_t *indeg = calloc(n + 1, sizeof *indeg);
    if (!g->topo || !g->st || !g->dur || !g->fin || !g->lst || !g->cstat || !g->devprev ||
        !g->grp || !indeg) {
        free(indeg);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    int grc = erg__graph_init(&g->gr, (uint32_t)n, m, (const uint32_t(*)[2])os->edge);
    g->pred_off = g->gr.pred_off;
    g->pred = g->gr.pred;
    g->succ_off = g->gr.succ_off;
    g->succ = g->gr.succ;
    if (grc == ERG_ENOMEM) {
        free(indeg);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    if (grc == ERG_ECYCLE) {
        free(indeg);
        uint32_t *cyc, len;
        if (erg__graph_cycle(&g->gr, &cyc, &len) != ERG_OK)
            return erg_diag_set(diag, ERG_ECYCLE, NULL, "the DAG has a cycle");
        char buf[400];
        size_t used = 0;
        uint32_t j = 0;
        buf[0] = '\0';
        for (; j <= len && used < 300; j++) { /* an entry takes at most 68 bytes */
            int w = snprintf(buf + used, sizeof buf - used, "%s\"%.60s\"", j ? " -> " : "",
                             erg__fr_node_id(os, cyc[j % len]));
            used += w > 0 ? (size_t)w : 0;
        }
        if (j <= len)
            snprintf(buf + used, sizeof buf - used, " -> ... (%u nodes)", len);
        free(cyc);
        return erg_diag_set(diag, ERG_ECYCLE, NULL, "the DAG has a cycle: %s", buf);
    }
    memcpy(g->topo, g->gr.order, n * sizeof *g->topo);
    /* Device order: the declaration order of the nodes on each device. A transition can apply
     * between consecutive nodes a, b when some point of a and some point of b are at ω_dev groups
     * with a declared transition between them. first[d]: the first node on device d (the
     * schedule's device numbers), devfirst[k] = first[k's device], devlast: the last one seen so
     * far, devnext: the inverse of devprev. */
    size_t *first = malloc((os->n_node_dev + 1) * sizeof *first),
           *devfirst = malloc((n + 1) * sizeof *devfirst),
           *devlast = malloc((n + 1) * sizeof *devlast);
    size_t *devnext = malloc((n + 1) * sizeof *devnext);
    int mrc = first && devfirst && devlast && devnext ? ERG_OK : ERG_ENOMEM;
    for (size_t d = 0; d < os->n_node_dev && mrc == ERG_OK; d++)
        first[d] = FR_NONE;
    for (size_t k = 0; k < n && mrc == ERG_OK; k++) {
        size_t f = first[os->node[k].device];
        if (f == FR_NONE) {
            f = first[os->node[k].device] = k;
            devlast[k] = FR_NONE;
        }
        devfirst[k] = f;
        g->devprev[k] = devlast[f];
        devnext[k] = FR_NONE;
        if (devlast[f] != FR_NONE)
            devnext[devlast[f]] = k;
        devlast[f] = k;
    }
    free(first);
    if (mrc != ERG_OK) {
        free(devfirst);
        free(devlast);
        free(devnext);
        free(indeg);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t k = 0; k < n && os->n_tr && !g->has_tr; k++) {
        if (g->devprev[k] == FR_NONE)
            continue;
        const struct fr_element *ea = &os->elem[os->node[g->devprev[k]].elem];
        const struct fr_element *eb = &os->elem[os->node[k].elem];
        for (size_t i = 0; i < ea->n && !g->has_tr; i++)
            for (size_t j = 0; j < eb->n && !g->has_tr; j++)
                g->has_tr = dag_tr(os, erg__fr_node_device(os, k), ea->pts[i].group,
                                   eb->pts[j].group) != NULL;
    }
    /* With transitions, order again by the edges plus the device order (a switch happens between
     * consecutive nodes of a device, so it is a precedence too). */
    if (g->has_tr) {
        for (size_t k = 0; k < n; k++)
            indeg[k] = g->pred_off[k + 1] - g->pred_off[k] + (g->devprev[k] != FR_NONE);
        size_t head = 0, tail = 0;
        for (size_t k = 0; k < n; k++)
            if (indeg[k] == 0)
                g->topo[tail++] = (uint32_t)k;
        while (head < tail) {
            size_t a = g->topo[head++];
            for (size_t j = g->succ_off[a]; j < g->succ_off[a + 1]; j++)
                if (--indeg[g->succ[j]] == 0)
                    g->topo[tail++] = g->succ[j];
            size_t b = devnext[a];
            if (b != FR_NONE && --indeg[b] == 0)
                g->topo[tail++] = (uint32_t)b;
        }
        if (tail < n) {
            size_t k = 0;
            while (indeg[k] == 0)
                k++;
            free(indeg);
            free(devfirst);
            free(devlast);
            free(devnext);
            return erg_diag_set(diag, ERG_ECYCLE, NULL,
                                "node %s: the edges contradict the order in which the nodes of "
                                "device %s are declared (the order transition elements are "
                                "charged in); declare each device's nodes in an order the "
                                "edges allow",
                                erg__fr_node_id(os, k), erg__fr_node_device(os, k));
        }
    }
    free(indeg);
    /* Every device once, held at its idle power; a node adds s − p while it runs (gaps are idle
     * elements, schedule/1 DAG semantics). */
    for (size_t k = 0; k < n; k++) {
        const char *dev = erg__fr_node_device(os, k);
        if (devfirst[k] == k) {
            g->cstat[k] = erg__fr_device_static_w(os, dev) - erg__fr_device_idle_w(os, dev);
            g->static_w += erg__fr_device_idle_w(os, dev);
        } else {
            g->cstat[k] = g->cstat[devfirst[k]];
        }
    }
    free(devfirst);
    free(devlast);
    free(devnext);
    /* Per-node staircases. */
    for (size_t k = 0; k < n; k++) {
        const struct fr_element *el = &os->elem[os->node[k].elem];
        struct td *v = malloc(el->n * sizeof *v);
        struct stair *s = &g->st[k];
        s->t = malloc(el->n * sizeof *s->t);
        s->d = malloc(el->n * sizeof *s->d);
        s->pt = malloc(el->n * sizeof *s->pt);
        s->grp = malloc(el->n * sizeof *s->grp);
        if (!v || !s->t || !s->d || !s->pt || !s->grp) {
            free(v);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        for (size_t i = 0; i < el->n; i++)
            v[i] = (struct td){
                el->pts[i].sig.time_s,
                el->pts[i].sig.dynamic_energy_j + g->cstat[k] * el->pts[i].sig.time_s, i};
        for (size_t i = 0; i < el->n; i++)
            if (!isfinite(v[i].t) || !isfinite(v[i].d)) {
                free(v);
                return erg_diag_set(diag, ERG_ERANGE, NULL,
                                    "node %s: element %s: a point's energy is not finite (it "
                                    "overflows a double; check its units: seconds and joules)",
                                    erg__fr_node_id(os, k), el->name);
            }
        qsort(v, el->n, sizeof *v, cmp_td);
        /* (T, d) Pareto-min; with transitions, per ω_dev group (a dominated point at another
         * ω_dev may avoid a switch). */
        for (size_t i = 0; i < el->n; i++) {
            int grp = el->pts[v[i].i].group, dom = 0;
            if (!g->has_tr) /* one staircase: d decreases along it, its last d is the least */
                dom = s->n > 0 && s->d[s->n - 1] <= v[i].d;
            for (size_t j = 0; g->has_tr && j < s->n && !dom; j++)
                dom = s->d[j] <= v[i].d && s->grp[j] == grp;
            if (!dom) {
                s->t[s->n] = v[i].t;
                s->d[s->n] = v[i].d;
                s->pt[s->n] = v[i].i;
                s->grp[s->n] = grp;
                s->n++;
            }
        }
        free(v);
    }
    /* Every plan's makespan is at most Σ_k max T_k (plus the slowest transitions) and its energy at
     * most P·that + Σ_k max |d'_k|: when these bounds are finite no plan overflows a double. A
     * bound that is not is refused, naming the node at which it stops being finite. */
    double tsum = 0.0, dsum = 0.0, trmax_t = 0.0, trmax_e = 0.0;
    for (size_t i = 0; g->has_tr && i < os->n_tr; i++) {
        const erg_signature *ts = &os->tr[i].sig;
        trmax_t = fmax(trmax_t, ts->time_s);
        trmax_e = fmax(trmax_e, fabs(ts->dynamic_energy_j) + ts->static_power_w * ts->time_s);
    }
    for (size_t k = 0; k < n; k++) {
        const struct stair *s = &g->st[k];
        double dmax = 0.0;
        for (size_t i = 0; i < s->n; i++)
            dmax = fmax(dmax, fabs(s->d[i]));
        tsum += s->t[s->n - 1] + trmax_t;
        dsum += dmax + trmax_e;
        if (!isfinite(tsum) || !isfinite(dsum) || !isfinite(g->static_w * tsum + dsum))
            return erg_diag_set(diag, ERG_ERANGE, NULL,
                                "node %s: the schedule's time or energy up to this node is not "
                                "finite (it overflows a double; check the element's units: "
                                "seconds and joules)",
                                erg__fr_node_id(os, k));
    }
    return ERG_OK;
}

/* Longest path with durations g->dur; fills g->fin, returns the makespan. */
static double forward(struct dag *g)
{
    double M = 0;
    for (size_t q = 0; q < g->n; q++) {
        size_t k = g->topo[q];
        double st = 0;
        for (size_t j = g->pred_off[k]; j < g->pred_off[k + 1]; j++)
            st = fmax(st, g->fin[g->pred[j]]);
        if (g->has_tr && g->devprev[k] != FR_NONE) {
            size_t a = g->devprev[k];
            const struct fr_transition *tr =
                dag_tr(g->os, erg__fr_node_device(g->os, k), g->grp[a], g->grp[k]);
            if (tr)
                st = fmax(st, g->fin[a] + tr->sig.time_s);
        }
        g->fin[k] = st + g->dur[k];
        M = fmax(M, g->fin[k]);
    }
    return M;
}

/* Latest finish times for makespan M; fills g->lst. */
static void backward(struct dag *g, double M)
{
    for (size_t q = g->n; q-- > 0;) {
        size_t k = g->topo[q];
        double lf = M;
        for (size_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++)
            lf = fmin(lf, g->lst[g->succ[j]] - g->dur[g->succ[j]]);
        g->lst[k] = lf;
    }
}

/* Index in node k's staircase of the least-energy point with T ≤ t (the fastest when none). */
static size_t stair_at(const struct stair *s, double t)
{
    double tol = 1e-9 * fmax(1.0, fabs(t));
    size_t lo = 0, hi = s->n; /* first index with T > t + tol */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->t[mid] <= t + tol)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

/* Give every node the least-energy point that fits its slack under makespan target M. */
static void reclaim(struct dag *g, size_t *sel, double M)
{
    for (size_t k = 0; k < g->n; k++)
        g->dur[k] = g->st[k].t[sel[k]];
    for (size_t q = g->n; q-- > 0;) {
        size_t k = g->topo[q];
        if (sel[k] + 1 >= g->st[k].n)
            continue;
        forward(g);
        backward(g, M);
        double es = g->fin[k] - g->dur[k];
        size_t s = stair_at(&g->st[k], g->lst[k] - es);
        if (s > sel[k]) {
            sel[k] = s;
            g->dur[k] = g->st[k].t[s];
        }
    }
}

struct plan {
    double M, E, D; /* makespan, energy, dynamic energy Σ d (s) */
    size_t *sel;
};

/* Makespan of choice sel (staircase indices); *E its energy, *Dtrue its dynamic part. Every device
 * is held at its idle power p for the makespan; a node adds d + (s − p)·T; a transition charged
 * between consecutive nodes of a device (Section 6.1) delays the second by its time and adds
 * d_tr + (s_tr − p)·T_tr. */
static double eval_sel(struct dag *g, const size_t *sel, double *E, double *Dtrue)
{
    double D = 0, Dt = 0;
    for (size_t k = 0; k < g->n; k++) {
        g->dur[k] = g->st[k].t[sel[k]];
        g->grp[k] = g->st[k].grp[sel[k]];
        D += g->st[k].d[sel[k]];
        Dt += g->st[k].d[sel[k]] - g->cstat[k] * g->st[k].t[sel[k]];
    }
    for (size_t k = 0; g->has_tr && k < g->n; k++) {
        if (g->devprev[k] == FR_NONE)
            continue;
        const struct fr_transition *tr =
            dag_tr(g->os, erg__fr_node_device(g->os, k), g->grp[g->devprev[k]], g->grp[k]);
        if (tr) {
            double p = erg__fr_device_idle_w(g->os, erg__fr_node_device(g->os, k));
            D += tr->sig.dynamic_energy_j + (tr->sig.static_power_w - p) * tr->sig.time_s;
            Dt += tr->sig.dynamic_energy_j;
        }
    }
    double M = forward(g);
    *E = g->static_w * M + D;
    if (Dtrue)
        *Dtrue = Dt;
    return M;
}

static int add_plan(struct plan **pl, size_t *n, size_t *cap, struct dag *g, const size_t *sel)
{
    double E, Dtrue;
    double M = eval_sel(g, sel, &E, &Dtrue);
    if (erg__fr_grow((void **)pl, cap, *n + 1, sizeof **pl))
        return ERG_ENOMEM;
    size_t *c = malloc(g->n * sizeof *c);
    if (!c)
        return ERG_ENOMEM;
    memcpy(c, sel, g->n * sizeof *c);
    (*pl)[*n] = (struct plan){M, E, Dtrue, c};
    (*n)++;
    return ERG_OK;
}

/* GLPK, loaded on the first relaxation (core/dynlib.h), not with every erg process. */
#define GLPK_FUNCS(X)                                                                              \
    X(glp_add_cols)                                                                                \
    X(glp_add_rows)                                                                                \
    X(glp_adv_basis)                                                                               \
    X(glp_create_prob)                                                                             \
    X(glp_delete_prob)                                                                             \
    X(glp_get_col_prim)                                                                            \
    X(glp_get_obj_val)                                                                             \
    X(glp_get_status)                                                                              \
    X(glp_init_smcp)                                                                               \
    X(glp_load_matrix)                                                                             \
    X(glp_set_col_bnds)                                                                            \
    X(glp_set_obj_coef)                                                                            \
    X(glp_set_obj_dir)                                                                             \
    X(glp_set_row_bnds)                                                                            \
    X(glp_simplex)

struct glpk {
    GLPK_FUNCS(ERG__DYNLIB_FIELD)
};
static struct erg__dynlib glpk_lib =
    ERG__DYNLIB_INIT("libglpk.so.40", "the frontier's LP relaxation", "libglpk40");
static struct glpk glpk_fns;

static int glpk_bind(void *handle, void *table, const char **missing)
{
    struct glpk *t = table;
    GLPK_FUNCS(ERG__DYNLIB_BIND)
    return ERG_OK;
}

struct lp {
    const struct glpk *G; /* the GLPK functions */
    glp_prob *p;
    size_t n_dl;
    int *dl_rows;
};

static int lp_build(struct dag *g, struct lp *lp, erg_diag *diag)
{
    size_t n = g->n;
    size_t nrows = g->m, nz = 3 * g->m;
    for (size_t k = 0; k < n; k++) {
        if (g->succ_off[k + 1] == g->succ_off[k]) {
            nrows++;
            nz += 2;
        }
        if (g->st[k].n > 1) {
            nrows += g->st[k].n - 1;
            nz += 2 * (g->st[k].n - 1);
        }
    }
    if (nrows > (size_t)INT32_MAX / 2 || nz > (size_t)INT32_MAX / 2 ||
        3 * n > (size_t)INT32_MAX / 2)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "DAG too large for the LP");
    int rc = erg__dynlib_load(&glpk_lib, glpk_bind, &glpk_fns, diag);
    if (rc != ERG_OK)
        return rc;
    const struct glpk *G = lp->G = &glpk_fns;
    int *ia = malloc((nz + 1) * sizeof *ia), *ja = malloc((nz + 1) * sizeof *ja);
    double *ar = malloc((nz + 1) * sizeof *ar);
    lp->dl_rows = malloc((n + 1) * sizeof *lp->dl_rows);
    lp->p = G->glp_create_prob();
    if (!ia || !ja || !ar || !lp->dl_rows || !lp->p) {
        free(ia);
        free(ja);
        free(ar);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    glp_prob *p = lp->p;
    G->glp_set_obj_dir(p, GLP_MIN);
    G->glp_add_cols(p, (int)(3 * n));
    G->glp_add_rows(p, (int)(nrows ? nrows : 1));
    /* Columns: x_k start (3k+1), t_k duration (3k+2), δ_k dynamic energy (3k+3). */
    for (size_t k = 0; k < n; k++) {
        const struct stair *s = &g->st[k];
        int c = (int)(3 * k);
        G->glp_set_col_bnds(p, c + 1, GLP_LO, 0.0, 0.0);
        double t0 = s->t[0], t1 = s->t[s->n - 1];
        G->glp_set_col_bnds(p, c + 2, t1 > t0 ? GLP_DB : GLP_FX, t0, t1);
        G->glp_set_col_bnds(p, c + 3, GLP_LO, s->d[s->n - 1], 0.0);
        G->glp_set_obj_coef(p, c + 3, 1.0);
    }
    int r = 0, z = 0;
    for (size_t e = 0; e < g->m; e++) { /* x_b − x_a − t_a ≥ 0 */
        size_t a = g->os->edge[e][0], b = g->os->edge[e][1];
        r++;
        G->glp_set_row_bnds(p, r, GLP_LO, 0.0, 0.0);
        ia[++z] = r, ja[z] = (int)(3 * b + 1), ar[z] = 1.0;
        ia[++z] = r, ja[z] = (int)(3 * a + 1), ar[z] = -1.0;
        ia[++z] = r, ja[z] = (int)(3 * a + 2), ar[z] = -1.0;
    }
    lp->n_dl = 0;
    for (size_t k = 0; k < n; k++) {
        if (g->succ_off[k + 1] == g->succ_off[k]) { /* sink: x_k + t_k ≤ T* */
            r++;
            G->glp_set_row_bnds(p, r, GLP_UP, 0.0, 0.0);
            lp->dl_rows[lp->n_dl++] = r;
            ia[++z] = r, ja[z] = (int)(3 * k + 1), ar[z] = 1.0;
            ia[++z] = r, ja[z] = (int)(3 * k + 2), ar[z] = 1.0;
        }
        /* Lower convex hull of the staircase: δ_k ≥ a·t_k + b on every hull segment. Segments
         * between all consecutive staircase points are not enough (not convex), so take the hull
         * with a monotone chain first. */
        const struct stair *s = &g->st[k];
        size_t *h = malloc(s->n * sizeof *h), nh = 0;
        if (!h) {
            free(ia);
            free(ja);
            free(ar);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        for (size_t i = 0; i < s->n; i++) {
            while (nh >= 2) {
                size_t o = h[nh - 2], a = h[nh - 1];
                double cr = (s->t[a] - s->t[o]) * (s->d[i] - s->d[o]) -
                            (s->d[a] - s->d[o]) * (s->t[i] - s->t[o]);
                if (cr <= 0)
                    nh--; /* a lies on or above the chord o→i */
                else
                    break;
            }
            h[nh++] = i;
        }
        for (size_t i = 0; i + 1 < nh; i++) {
            double t0 = s->t[h[i]], d0 = s->d[h[i]], t1 = s->t[h[i + 1]], d1 = s->d[h[i + 1]];
            double a = (d1 - d0) / (t1 - t0), b = d0 - a * t0;
            r++;
            G->glp_set_row_bnds(p, r, GLP_LO, b, 0.0);
            ia[++z] = r, ja[z] = (int)(3 * k + 3), ar[z] = 1.0;
            ia[++z] = r, ja[z] = (int)(3 * k + 2), ar[z] = -a;
        }
        free(h);
    }
    if (r == 0) { /* keep GLPK happy with one empty row */
        r = 1;
        G->glp_set_row_bnds(p, 1, GLP_FR, 0.0, 0.0);
    }
    G->glp_load_matrix(p, z, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    return ERG_OK;
}

/* Solve the LP for deadline T; *obj = min Σ δ. ERG_OK, or ERG_EIO when GLPK fails. */
static int lp_solve(struct lp *lp, double T, double *obj)
{
    const struct glpk *G = lp->G;
    for (size_t i = 0; i < lp->n_dl; i++)
        G->glp_set_row_bnds(lp->p, lp->dl_rows[i], GLP_UP, 0.0, T);
    glp_smcp parm;
    G->glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = GLP_DUALP;
    int rc = G->glp_simplex(lp->p, &parm);
    if (rc != 0 || G->glp_get_status(lp->p) != GLP_OPT) {
        /* The warm basis can go bad; retry from an advanced basis once. */
        G->glp_adv_basis(lp->p, 0);
        rc = G->glp_simplex(lp->p, &parm);
        if (rc != 0 || G->glp_get_status(lp->p) != GLP_OPT)
            return ERG_EIO;
    }
    *obj = G->glp_get_obj_val(lp->p);
    return ERG_OK;
}

static int cmp_plan(const void *pa, const void *pb)
{
    const struct plan *a = pa, *b = pb;
    if (a->M != b->M)
        return a->M < b->M ? -1 : 1;
    return a->E < b->E ? -1 : (a->E > b->E);
}

static int finish(struct dag *g, struct plan *pl, size_t np, struct lp *lp,
                  erg_frontier_method method, erg_frontier *out, erg_diag *diag)
{
    qsort(pl, np, sizeof *pl, cmp_plan);
    size_t nk = 0;
    double best = INFINITY;
    for (size_t i = 0; i < np; i++) {
        if (pl[i].E < best) {
            best = pl[i].E;
            struct plan keep = pl[i];
            pl[i].sel = NULL;
            pl[nk++] = keep;
        } else {
            free(pl[i].sel);
            pl[i].sel = NULL;
        }
    }
    out->n_points = nk;
    out->n_elements = g->n;
    out->points = calloc(nk + 1, sizeof *out->points);
    out->choices = malloc((nk * g->n + 1) * sizeof *out->choices);
    out->element_names = calloc(g->n + 1, sizeof *out->element_names);
    int rc = ERG_OK;
    if (!out->points || !out->choices || !out->element_names)
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    for (size_t k = 0; k < g->n && rc == ERG_OK; k++)
        if (!(out->element_names[k] = strdup(erg__fr_node_id(g->os, k))))
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    out->method = method;
    for (size_t i = 0; i < nk && rc == ERG_OK; i++) {
        erg_frontier_point *p = &out->points[i];
        p->time_s = pl[i].M;
        p->energy_j = pl[i].E;
        p->dynamic_energy_j = pl[i].D;
        p->static_energy_j = pl[i].E - pl[i].D;
        p->bound_j = p->energy_j;
        if (lp) {
            double obj;
            if (lp_solve(lp, pl[i].M, &obj) != ERG_OK) {
                rc = erg_diag_set(diag, ERG_EIO, NULL, "GLPK failed on the relaxation at %g s",
                                  pl[i].M);
                break;
            }
            p->bound_j = fmin(p->energy_j, g->static_w * pl[i].M + obj);
        }
        out->max_gap_j = fmax(out->max_gap_j, p->energy_j - p->bound_j);
        for (size_t k = 0; k < g->n; k++)
            out->choices[i * g->n + k] = g->st[k].pt[pl[i].sel[k]];
    }
    for (size_t i = 0; i < nk; i++)
        free(pl[i].sel);
    if (rc != ERG_OK)
        erg_frontier_free(out);
    return rc;
}

static int enumerate(struct dag *g, erg_frontier *out, erg_diag *diag)
{
    size_t n = g->n;
    size_t *sel = calloc(n + 1, sizeof *sel);
    struct plan *pl = NULL;
    size_t np = 0, cap = 0;
    int rc = sel ? ERG_OK : ERG_ENOMEM;
    /* Mixed-radix walk over every staircase combination (off-staircase points are dominated in
     * (T, d) and never help: E = S·M + Σ d is monotone in every T and d). */
    while (rc == ERG_OK) {
        double E, M = eval_sel(g, sel, &E, NULL);
        /* Keep the candidate only if no stored plan dominates it (cheap online filter). */
        int dom = 0;
        for (size_t i = 0; i < np && !dom; i++)
            dom = pl[i].M <= M && pl[i].E <= E;
        if (!dom) {
            size_t w = 0;
            for (size_t i = 0; i < np; i++) {
                if (M <= pl[i].M && E <= pl[i].E)
                    free(pl[i].sel);
                else
                    pl[w++] = pl[i];
            }
            np = w;
            rc = add_plan(&pl, &np, &cap, g, sel);
        }
        size_t k = 0;
        while (k < n && ++sel[k] == g->st[k].n)
            sel[k++] = 0;
        if (k == n)
            break;
    }
    free(sel);
    if (rc != ERG_OK) {
        for (size_t i = 0; i < np; i++)
            free(pl[i].sel);
        free(pl);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    rc = finish(g, pl, np, NULL, ERG_FRONTIER_EXACT, out, diag);
    free(pl);
    return rc;
}

static int relax(struct dag *g, const erg_frontier_options *opts, erg_frontier *out, erg_diag *diag)
{
    size_t n = g->n;
    struct lp lp = {0};
    int rc = lp_build(g, &lp, diag);
    size_t *sel = malloc((n + 1) * sizeof *sel);
    struct plan *pl = NULL;
    size_t np = 0, cap = 0;
    if (rc == ERG_OK && !sel)
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    double tfast = 0, tslow = 0;
    if (rc == ERG_OK) {
        for (size_t k = 0; k < n; k++)
            g->dur[k] = g->st[k].t[0];
        tfast = forward(g);
        for (size_t k = 0; k < n; k++)
            g->dur[k] = g->st[k].t[g->st[k].n - 1];
        tslow = forward(g);
    }
    size_t K = opts->lp_deadlines ? opts->lp_deadlines : 1;
    if (!(tslow > tfast))
        K = 1;
    for (size_t q = 0; q < K && rc == ERG_OK; q++) {
        double T = K == 1 ? tfast : tfast + (tslow - tfast) * (double)q / (double)(K - 1);
        double obj;
        if (lp_solve(&lp, T, &obj) != ERG_OK) {
            rc = erg_diag_set(diag, ERG_EIO, NULL, "GLPK failed on the relaxation at deadline %g s",
                              T);
            break;
        }
        for (size_t k = 0; k < n; k++)
            sel[k] = stair_at(&g->st[k], lp.G->glp_get_col_prim(lp.p, (int)(3 * k + 2)));
        /* Two real plans per deadline: slack filled up to the rounded plan's own makespan, and up
         * to the deadline itself. */
        for (size_t k = 0; k < n; k++)
            g->dur[k] = g->st[k].t[sel[k]];
        double M = forward(g);
        size_t *sel2 = malloc((n + 1) * sizeof *sel2);
        if (!sel2) {
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
            break;
        }
        memcpy(sel2, sel, n * sizeof *sel);
        reclaim(g, sel, M);
        reclaim(g, sel2, fmax(M, T));
        if (add_plan(&pl, &np, &cap, g, sel) || add_plan(&pl, &np, &cap, g, sel2))
            rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        free(sel2);
    }
    free(sel);
    if (rc == ERG_OK)
        rc = finish(g, pl, np, &lp, ERG_FRONTIER_RELAXATION, out, diag);
    else
        for (size_t i = 0; i < np; i++)
            free(pl[i].sel);
    free(pl);
    if (lp.p)
        lp.G->glp_delete_prob(lp.p);
    free(lp.dl_rows);
    return rc;
}

/* ---- series-parallel DAGs: exact by the operator rules ---- */

/* Expression ids in t for the series-parallel tree tr: a join of the same kind as its parent is
 * flattened into the parent's n-ary operator (so ε-mode sequences merge as balanced trees). Runs
 * without recursion (a 10^5-node chain is a tree 10^5 deep). leaf[k]: node k's leaf expression. */
static int sp_exprs(erg_opsched *t, const erg__sp_tree *tr, const size_t *leaf, size_t *root)
{
    size_t cap = tr->n + 1;
    size_t *id = malloc(cap * sizeof *id), *ids = malloc(cap * sizeof *ids);
    uint32_t *stack = malloc(2 * cap * sizeof *stack), *gather = malloc(cap * sizeof *gather);
    uint32_t *parent_kind = malloc(cap * sizeof *parent_kind);
    int rc = id && ids && stack && gather && parent_kind ? ERG_OK : ERG_ENOMEM;
    /* Post-order: children are created before their parents. */
    size_t sp = 0;
    if (rc == ERG_OK) {
        parent_kind[tr->root] = ERG__SP_LEAF;
        stack[sp++] = tr->root;
    }
    while (sp > 0 && rc == ERG_OK) {
        uint32_t x = stack[sp - 1] & 0x7fffffffu;
        int visited = (stack[sp - 1] & 0x80000000u) != 0;
        const struct erg__sp_node *nd = &tr->node[x];
        if (nd->kind == ERG__SP_LEAF) {
            id[x] = leaf[nd->a];
            sp--;
            continue;
        }
        if (!visited) {
            stack[sp - 1] |= 0x80000000u;
            parent_kind[nd->b] = parent_kind[nd->a] = nd->kind;
            stack[sp++] = nd->b;
            stack[sp++] = nd->a;
            continue;
        }
        sp--;
        if (parent_kind[x] == nd->kind)
            continue; /* flattened into its parent */
        /* Gather the operands of this maximal run of one kind, left to right. */
        size_t ng = 0, n_ids = 0;
        gather[ng++] = x;
        while (ng > 0) {
            uint32_t y = gather[--ng];
            const struct erg__sp_node *ny = &tr->node[y];
            if (ny->kind == nd->kind) {
                gather[ng++] = ny->b;
                gather[ng++] = ny->a;
            } else {
                ids[n_ids++] = id[y];
            }
        }
        rc = erg_opsched_expr_op(t, nd->kind == ERG__SP_SEQ ? ERG_EXPR_SEQ : ERG_EXPR_PAR, ids,
                                 n_ids, &id[x], NULL);
    }
    if (rc == ERG_OK)
        *root = id[tr->root];
    free(id);
    free(ids);
    free(stack);
    free(gather);
    free(parent_kind);
    return rc;
}

/*
 * If the DAG's transitive reduction is series-parallel (the graph layer's decomposition), its
 * frontier follows from the operator rules exactly: with every device held for the makespan,
 * E = P·M + Σ d'_k (d' = d + (s − p)·T), and minimising Σ d' under a makespan is ⊗ (Minkowski
 * sum) along series and ⊕ (Σ min d' finishing by T*) across parallel branches, with no static
 * power inside. Returns 1 (nothing done) when the DAG is not series-parallel.
 */
static int sp_frontier(struct dag *g, double epsilon, erg_frontier *out, erg_diag *diag)
{
    size_t n = g->n;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < g->st[k].n; i++)
            if (g->st[k].d[i] < 0)
                return 1; /* idle power above static power: d' < 0 is not a signature */
    erg__sp_tree tr;
    int rc = erg__graph_sp(&g->gr, &tr);
    if (rc != 0)
        return rc == 1 ? 1 : erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    erg_opsched *t = erg_opsched_new();
    size_t *leaf = malloc((n + 1) * sizeof *leaf);
    if (!t || !leaf)
        rc = ERG_ENOMEM;
    /* Element k of t is node k (named after it), its points the node's staircase (T, d'). */
    for (size_t k = 0; k < n && rc == ERG_OK; k++) {
        const struct stair *st = &g->st[k];
        for (size_t i = 0; i < st->n && rc == ERG_OK; i++) {
            erg_signature sg;
            erg_signature_init(&sg);
            sg.time_s = st->t[i];
            sg.dynamic_energy_j = st->d[i];
            rc = erg_opsched_add_point(t, erg__fr_node_id(g->os, k), &sg, "", NULL);
        }
        if (rc == ERG_OK)
            rc = erg_opsched_expr_leaf(t, erg__fr_node_id(g->os, k), &leaf[k], NULL);
    }
    size_t root = FR_NONE;
    if (rc == ERG_OK)
        rc = sp_exprs(t, &tr, leaf, &root);
    erg__sp_free(&tr);
    free(leaf);
    if (rc == ERG_OK && root != t->n_expr - 1)
        rc = erg_opsched_expr_op(t, ERG_EXPR_SEQ, &root, 1, &root, NULL);
    if (rc != ERG_OK)
        goto done;
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.epsilon = epsilon; /* E' = P·T' + d'' ≤ P·T + (1+ε)·d' ≤ (1+ε)·E */
    erg_frontier tf;
    if ((rc = erg__fr_expr_frontier(t, &o, &tf, diag)) != ERG_OK)
        goto done;
    struct plan *pl = NULL;
    size_t np = 0, cap = 0;
    size_t *sel = malloc((n + 1) * sizeof *sel);
    size_t *slot_node = malloc((tf.n_elements + 1) * sizeof *slot_node);
    if (!sel || !slot_node)
        rc = ERG_ENOMEM;
    /* Each slot is a leaf named after its node (each node is used once): element index = node. */
    for (size_t k = 0; k < tf.n_elements && rc == ERG_OK; k++)
        slot_node[k] = erg__fr_find_element(t, tf.element_names[k]);
    for (size_t i = 0; i < tf.n_points && rc == ERG_OK; i++) {
        for (size_t k = 0; k < tf.n_elements; k++)
            sel[slot_node[k]] = tf.choices[i * tf.n_elements + k];
        rc = add_plan(&pl, &np, &cap, g, sel);
    }
    free(sel);
    free(slot_node);
    erg_frontier_free(&tf);
    if (rc == ERG_OK)
        rc = finish(g, pl, np, NULL, epsilon > 0 ? ERG_FRONTIER_APPROX : ERG_FRONTIER_EXACT, out,
                    diag);
    else
        for (size_t i = 0; i < np; i++)
            free(pl[i].sel);
    free(pl);
    if (rc == ERG_OK && epsilon > 0) {
        out->epsilon = epsilon;
        out->max_gap_j = 0;
        for (size_t i = 0; i < out->n_points; i++) {
            out->points[i].bound_j = out->points[i].energy_j / (1 + epsilon);
            out->max_gap_j = fmax(out->max_gap_j, out->points[i].energy_j - out->points[i].bound_j);
        }
    }
done:
    if (rc == ERG_ENOMEM)
        erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    erg_opsched_free(t);
    return rc;
}

int erg__fr_dag_frontier(const erg_opsched *os, const erg_frontier_options *opts, erg_frontier *out,
                         erg_diag *diag)
{
    struct dag g;
    int rc = dag_build(os, &g, diag);
    if (rc == ERG_OK) {
        double combos = 1;
        for (size_t k = 0; k < g.n; k++)
            combos *= (double)g.st[k].n;
        erg_dag_method m = opts->dag_method;
        if (g.has_tr && m != ERG_DAG_ENUMERATE) {
            /* A transition's cost depends on the ω_dev chosen at two nodes, which neither the
             * per-node convex hulls of the LP nor the series-parallel reduction (whose ⊗
             * adjacency is not the device order) can carry: enumerate (exact) or refuse. */
            if (m == ERG_DAG_RELAX || combos > opts->enum_limit) {
                if (m == ERG_DAG_RELAX)
                    rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                                      "the convex relaxation cannot charge the transition "
                                      "elements this DAG declares (their cost depends on the "
                                      "omega_device of two nodes); use enumeration (%.3g choice "
                                      "combinations)",
                                      combos);
                else
                    rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                                      "this DAG declares transition elements, which are charged "
                                      "only by exact enumeration, and its %.3g choice "
                                      "combinations exceed the enumeration limit %.3g",
                                      combos, opts->enum_limit);
                dag_free(&g);
                return rc;
            }
            m = ERG_DAG_ENUMERATE;
        }
        if (m == ERG_DAG_AUTO) {
            /* Series-parallel: exact by the operator rules, at any size. */
            rc = sp_frontier(&g, opts->epsilon, out, diag);
            if (rc <= 0) {
                dag_free(&g);
                return rc;
            }
            rc = ERG_OK;
            m = combos <= opts->enum_limit ? ERG_DAG_ENUMERATE : ERG_DAG_RELAX;
        }
        if (m == ERG_DAG_ENUMERATE && combos > opts->enum_limit)
            rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                              "enumeration of %.3g choice combinations is above the limit %.3g",
                              combos, opts->enum_limit);
        else if (m == ERG_DAG_ENUMERATE)
            rc = enumerate(&g, out, diag);
        else
            rc = relax(&g, opts, out, diag);
    }
    dag_free(&g);
    return rc;
}
