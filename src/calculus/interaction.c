/* SPDX-License-Identifier: MIT */
/* Context dependence: insensitivity over characterized sets (paper Eq. 11, 12, Section 4.1.3), the
 * interaction graph (Section 4.4), composition at the contexts a schedule realizes, correlated
 * noise (Appendix F.1-F.2), refinement candidates and granularity consistency (Eq. 24). */
#include "calculus/schedule_impl.h"
#include "core/json.h"
#include "erg/calculus.h"
#include "erg/stats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_conf(double confidence, erg_diag *diag)
{
    if (!(confidence > 0.0 && confidence < 1.0))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "confidence must lie strictly between 0 and 1 (got %g)", confidence);
    return ERG_OK;
}

static double energy_of(const erg_signature *s)
{
    return s->static_power_w * s->time_s + s->dynamic_energy_j;
}

/* Fold one test into a set outcome: the first failure decides; otherwise the point closest to
 * failing (largest lhs/tolerance). */
static void fold(erg_set_insensitivity *out, const erg_insensitivity *t, const char *point)
{
    double ratio = t->tolerance_j > 0 ? t->lhs_j / t->tolerance_j : (t->lhs_j > 0 ? HUGE_VAL : 0);
    double cur = out->n_tested == 0     ? -1.0
                 : out->tolerance_j > 0 ? out->lhs_j / out->tolerance_j
                                        : (out->lhs_j > 0 ? HUGE_VAL : 0);
    int take = out->n_tested == 0 || (out->insensitive == 1 && (!t->insensitive || ratio > cur));
    out->n_tested++;
    if (take) {
        out->lhs_j = t->lhs_j;
        out->tolerance_j = t->tolerance_j;
        snprintf(out->point, sizeof out->point, "%s", point);
        out->insensitive = t->insensitive;
    }
}

static void set_init(erg_set_insensitivity *out)
{
    memset(out, 0, sizeof *out);
    out->insensitive = -1;
}

int erg_context_history_test(const erg_context_signature *cs, const char *other, double confidence,
                             erg_set_insensitivity *out, erg_diag *diag)
{
    if (!cs || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_history_test: NULL argument");
    int rc = check_conf(confidence, diag);
    if (rc)
        return rc;
    set_init(out);
    for (size_t i = 0; i < cs->n_points; i++) {
        const erg_context_point *p = &cs->points[i];
        if (p->n_corunners || (other && strcmp(p->after, other) != 0))
            continue;
        erg_signature ps;
        if ((rc = erg_context_point_signature(cs, i, &ps)))
            return rc; /* i < n_points: cannot fail */
        erg_insensitivity t;
        if ((rc = erg_context_insensitive(&cs->null_context, &ps, confidence, &t, diag)))
            return rc;
        fold(out, &t, p->name);
    }
    return ERG_OK;
}

static int has_corunner(const erg_context_point *p, const char *name)
{
    for (size_t k = 0; k < p->n_corunners; k++)
        if (strcmp(p->corunners[k], name) == 0)
            return 1;
    return 0;
}

int erg_context_interference_test(const erg_context_signature *cs, const char *other,
                                  double confidence, erg_set_insensitivity *out, erg_diag *diag)
{
    if (!cs || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_interference_test: NULL argument");
    int rc = check_conf(confidence, diag);
    if (rc)
        return rc;
    set_init(out);
    for (size_t i = 0; i < cs->n_points; i++) {
        const erg_context_point *p = &cs->points[i];
        if (!p->n_corunners || (other && !has_corunner(p, other)))
            continue;
        /* isolation at the same entry context (Section 4.1.3) */
        erg_signature ref = cs->null_context, ps;
        if (p->after[0]) {
            int e = erg_context_signature_find(cs, p->after, NULL, 0);
            if (e < 0)
                continue; /* no isolation values at that entry context: not testable */
            if ((rc = erg_context_point_signature(cs, (size_t)e, &ref)))
                return rc;
        }
        if ((rc = erg_context_point_signature(cs, i, &ps)))
            return rc;
        erg_insensitivity t;
        if ((rc = erg_context_insensitive(&ref, &ps, confidence, &t, diag)))
            return rc;
        fold(out, &t, p->name);
    }
    return ERG_OK;
}

static int both(int a, int b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a == 1 && b == 1)
        return 1;
    return -1;
}

int erg_context_pair_test(const erg_context_signature *a, const erg_context_signature *b,
                          double confidence, erg_pair_verdict *out, erg_diag *diag)
{
    if (!a || !b || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_context_pair_test: NULL argument");
    memset(out, 0, sizeof *out);
    const char *na = a->null_context.name, *nb = b->null_context.name;
    int rc;
    if ((rc = erg_context_history_test(a, nb, confidence, &out->history_a, diag)) ||
        (rc = erg_context_history_test(b, na, confidence, &out->history_b, diag)) ||
        (rc = erg_context_interference_test(a, nb, confidence, &out->interference_a, diag)) ||
        (rc = erg_context_interference_test(b, na, confidence, &out->interference_b, diag)))
        return rc;
    out->history = both(out->history_a.insensitive, out->history_b.insensitive);
    out->interference = both(out->interference_a.insensitive, out->interference_b.insensitive);
    out->mutual = both(out->history, out->interference);
    return ERG_OK;
}

/* ------------------------------------------------------------------ interaction graph -------- */

void erg_interaction_graph_free(erg_interaction_graph *g)
{
    if (!g)
        return;
    free(g->edges);
    g->edges = NULL;
    g->n_edges = 0;
}

static int push_edge(erg_interaction_graph *g, size_t *cap, const erg_interaction_edge *e)
{
    if (g->n_edges == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        erg_interaction_edge *ne = realloc(g->edges, nc * sizeof *ne);
        if (!ne)
            return -1;
        g->edges = ne;
        *cap = nc;
    }
    g->edges[g->n_edges++] = *e;
    return 0;
}

int erg_interaction_graph_build(const erg_context_signature *const *sigs, size_t n,
                                double confidence, erg_interaction_graph *out, erg_diag *diag)
{
    if ((!sigs && n) || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_interaction_graph_build: NULL argument");
    int rc = check_conf(confidence, diag);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    for (size_t s = 0; s < n; s++) {
        const erg_context_signature *cs = sigs[s];
        for (size_t i = 0; i < cs->n_points; i++) {
            const erg_context_point *p = &cs->points[i];
            erg_signature ref = cs->null_context, ps;
            rc = erg_context_point_signature(cs, i, &ps);
            if (!rc && p->n_corunners && p->after[0]) {
                int e = erg_context_signature_find(cs, p->after, NULL, 0);
                if (e >= 0)
                    rc = erg_context_point_signature(cs, (size_t)e, &ref);
            }
            if (rc) { /* indices from the set itself: cannot fail */
                erg_interaction_graph_free(out);
                return rc;
            }
            erg_insensitivity t;
            if ((rc = erg_context_insensitive(&ref, &ps, confidence, &t, diag))) {
                erg_interaction_graph_free(out);
                return rc;
            }
            erg_interaction_edge e;
            memset(&e, 0, sizeof e);
            snprintf(e.to, sizeof e.to, "%s", cs->null_context.name);
            e.mechanism = p->mechanism;
            snprintf(e.point, sizeof e.point, "%s", p->name);
            e.delta_energy_j = energy_of(&ps) - energy_of(&ref);
            e.lhs_j = t.lhs_j;
            e.tolerance_j = t.tolerance_j;
            e.sensitive = !t.insensitive;
            if (!p->n_corunners) {
                if (!p->after[0])
                    continue; /* a generic state (a flushed cache): no pair */
                e.directed = 1;
                snprintf(e.from, sizeof e.from, "%s", p->after);
                if (push_edge(out, &cap, &e)) {
                    erg_interaction_graph_free(out);
                    return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
                }
                continue;
            }
            for (size_t k = 0; k < p->n_corunners; k++) {
                snprintf(e.from, sizeof e.from, "%s", p->corunners[k]);
                if (push_edge(out, &cap, &e)) {
                    erg_interaction_graph_free(out);
                    return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
                }
            }
        }
    }
    return ERG_OK;
}

int erg_interaction_graph_write_file(const char *path, const erg_interaction_graph *g,
                                     double confidence, erg_diag *diag)
{
    if (!g || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_interaction_graph_write_file: NULL");
    json_t *root = json_object(), *a = json_array();
    int bad = !root || !a;
    for (size_t i = 0; !bad && i < g->n_edges; i++) {
        const erg_interaction_edge *e = &g->edges[i];
        json_t *o = json_object();
        bad |= !o;
        if (bad)
            break;
        if (e->directed) {
            bad |= json_object_set_new(o, "from", json_string(e->from));
            bad |= json_object_set_new(o, "to", json_string(e->to));
        } else {
            bad |= json_object_set_new(o, "between", json_pack("[s,s]", e->from, e->to));
            bad |= json_object_set_new(o, "perturbed", json_string(e->to));
        }
        bad |= json_object_set_new(o, "kind", json_string(e->directed ? "entry" : "runtime"));
        bad |= json_object_set_new(o, "mechanism", json_string(erg_mechanism_name(e->mechanism)));
        bad |= json_object_set_new(o, "point", json_string(e->point));
        bad |= erg__json_set_number(o, "delta_energy_j", e->delta_energy_j);
        bad |= erg__json_set_number(o, "lhs_j", e->lhs_j);
        bad |= erg__json_set_number(o, "tolerance_j", e->tolerance_j);
        bad |= json_object_set_new(o, "sensitive", json_boolean(e->sensitive));
        bad |= json_array_append_new(a, o);
    }
    if (!bad) {
        bad |= json_object_set_new(root, "erg", json_string("interactions/1"));
        bad |= erg__json_set_number(root, "confidence", confidence);
        bad |= json_object_set_new(root, "edges", a);
        a = NULL;
    }
    if (bad) {
        json_decref(a);
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the interaction graph");
    }
    int rc = erg__json_dump_file(
        root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12), diag);
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------- composition at realized contexts ---- */

void erg_context_report_free(erg_context_report *r)
{
    if (!r)
        return;
    erg_report_free(&r->report);
    free(r->nodes);
    r->nodes = NULL;
    r->n_nodes = 0;
}

/* Scratch of one composition. */
struct cctx {
    const erg_schedule *s;
    size_t n;
    const erg_context_signature **csig; /* per schedule signature, or NULL */
    uint32_t *order;                    /* topological order */
    uint32_t *off, *adj;                /* CSR successors */
    double *start, *fin, *tim;
    int *point;                                  /* chosen point per node, -1 null */
    int *entry_ch, *run_ch;                      /* characterized substitutions */
    uint32_t *pred;                              /* device predecessor or UINT32_MAX */
    uint32_t *byfin;                             /* node indices sorted by (device, finish) */
    uint32_t *bystart;                           /* node indices sorted by start */
    size_t *ncor;                                /* nodes overlapping each node */
    uint32_t (*cor)[ERG_CONTEXT_NODE_CORUNNERS]; /* the first of them, for the report */
    /* The realized runtime context as a set of signatures: per node up to kmax overlapping nodes
     * of distinct signatures (dist[v * kmax ...]), kmax the most co-runners of any point of the
     * context signatures; ndist[v] = kmax + 1 when there are more, which no point can equal. */
    size_t kmax;
    uint32_t *dist;
    size_t *ndist;
    const char **names; /* kmax names: choose's scratch */
};

static const struct cctx *sort_ctx;

static int cmp_fin(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const struct cctx *c = sort_ctx;
    uint32_t dx = c->s->nodes[x].device, dy = c->s->nodes[y].device;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    if (c->fin[x] != c->fin[y])
        return c->fin[x] < c->fin[y] ? -1 : 1;
    if (c->start[x] != c->start[y])
        return c->start[x] < c->start[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_start(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const struct cctx *c = sort_ctx;
    if (c->start[x] != c->start[y])
        return c->start[x] < c->start[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static const erg_signature *node_sig(const struct cctx *c, uint32_t v)
{
    return &c->s->sigs[c->s->nodes[v].sig];
}

static double node_time(const struct cctx *c, uint32_t v)
{
    const erg_context_signature *cs = c->csig[c->s->nodes[v].sig];
    if (c->point[v] >= 0)
        return cs->points[c->point[v]].time_s;
    return node_sig(c, v)->time_s;
}

static int build_topo(struct cctx *c)
{
    const erg_schedule *s = c->s;
    size_t n = c->n;
    uint32_t *indeg = calloc(n ? n : 1, sizeof *indeg);
    c->off = calloc(n + 1, sizeof *c->off);
    c->adj = malloc((s->n_edges ? s->n_edges : 1) * sizeof *c->adj);
    c->order = malloc((n ? n : 1) * sizeof *c->order);
    if (!indeg || !c->off || !c->adj || !c->order) {
        free(indeg);
        return -1;
    }
    for (size_t k = 0; k < s->n_edges; k++) {
        c->off[s->edges[k][0] + 1]++;
        indeg[s->edges[k][1]]++;
    }
    for (size_t v = 0; v < n; v++)
        c->off[v + 1] += c->off[v];
    uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
    if (!fill) {
        free(indeg);
        return -1;
    }
    memcpy(fill, c->off, n * sizeof *fill);
    for (size_t k = 0; k < s->n_edges; k++)
        c->adj[fill[s->edges[k][0]]++] = s->edges[k][1];
    free(fill);
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < n; v++)
        if (!indeg[v])
            c->order[tail++] = (uint32_t)v;
    while (head < tail) {
        uint32_t v = c->order[head++];
        for (uint32_t k = c->off[v]; k < c->off[v + 1]; k++)
            if (--indeg[c->adj[k]] == 0)
                c->order[tail++] = c->adj[k];
    }
    free(indeg);
    return tail == n ? 0 : -2;
}

/* Mean-time schedule with the current point assignment. */
static void times(struct cctx *c)
{
    const erg_schedule *s = c->s;
    for (size_t v = 0; v < c->n; v++)
        c->start[v] = isnan(s->nodes[v].start_s) ? 0.0 : s->nodes[v].start_s;
    for (size_t i = 0; i < c->n; i++) {
        uint32_t v = c->order[i];
        c->fin[v] = c->start[v] + node_time(c, v);
        for (uint32_t k = c->off[v]; k < c->off[v + 1]; k++) {
            uint32_t w = c->adj[k];
            if (isnan(s->nodes[w].start_s) && c->fin[v] > c->start[w])
                c->start[w] = c->fin[v];
        }
    }
}

/* u overlaps v: count it, list it among v's first ones, add its signature to v's set. */
static void add_corunner(struct cctx *c, uint32_t v, uint32_t u)
{
    if (c->ncor[v] < ERG_CONTEXT_NODE_CORUNNERS)
        c->cor[v][c->ncor[v]] = u;
    c->ncor[v]++;
    if (c->ndist[v] > c->kmax)
        return;
    if (!c->kmax) { /* no point has co-runners: any co-runner is more than a point can equal */
        c->ndist[v] = 1;
        return;
    }
    uint32_t *d = c->dist + (size_t)v * c->kmax, sig = c->s->nodes[u].sig;
    for (size_t k = 0; k < c->ndist[v]; k++)
        if (c->s->nodes[d[k]].sig == sig)
            return;
    if (c->ndist[v] < c->kmax)
        d[c->ndist[v]] = u;
    c->ndist[v]++;
}

/* Realized contexts: device predecessor and co-runners of every node. */
static void contexts(struct cctx *c, double eps)
{
    size_t n = c->n;
    for (size_t v = 0; v < n; v++) {
        c->byfin[v] = c->bystart[v] = (uint32_t)v;
        c->ncor[v] = 0;
        c->ndist[v] = 0;
        c->pred[v] = UINT32_MAX;
    }
    sort_ctx = c;
    qsort(c->byfin, n, sizeof *c->byfin, cmp_fin);
    qsort(c->bystart, n, sizeof *c->bystart, cmp_start);
    sort_ctx = NULL;
    /* predecessor: on the same device, the latest finish at or before the start */
    for (size_t v = 0; v < n; v++) {
        uint32_t dv = c->s->nodes[v].device;
        size_t lo = 0, hi = n; /* first index with (device, fin) > (dv, start_v + eps) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            uint32_t u = c->byfin[mid];
            uint32_t du = c->s->nodes[u].device;
            if (du < dv || (du == dv && c->fin[u] <= c->start[v] + eps))
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k-- > 0;) {
            uint32_t u = c->byfin[k];
            if (c->s->nodes[u].device != dv)
                break;
            if (u != v) {
                c->pred[v] = u;
                break;
            }
        }
    }
    /* overlaps: sweep by start */
    for (size_t i = 0; i < n; i++) {
        uint32_t v = c->bystart[i];
        for (size_t j = i + 1; j < n; j++) {
            uint32_t u = c->bystart[j];
            if (c->start[u] >= c->fin[v] - eps)
                break;
            if (c->fin[u] - c->start[u] <= eps || c->fin[v] - c->start[v] <= eps)
                continue;
            add_corunner(c, v, u);
            add_corunner(c, u, v);
        }
    }
}

/* Choose each node's point; returns the number of nodes whose choice changed. */
static size_t choose(struct cctx *c)
{
    size_t changed = 0;
    for (size_t v = 0; v < c->n; v++) {
        const erg_context_signature *cs = c->csig[c->s->nodes[v].sig];
        int pt = -1, ech = 0, rch = c->ncor[v] == 0;
        if (cs) {
            const char *after = c->pred[v] != UINT32_MAX ? node_sig(c, c->pred[v])->name : "";
            /* the set of co-runner signatures (find ignores order and repeats) */
            const char **names = c->names;
            size_t nc = c->ndist[v];
            if (nc <= c->kmax)
                for (size_t k = 0; k < nc; k++)
                    names[k] = node_sig(c, c->dist[v * c->kmax + k])->name;
            if (nc == 0) {
                if (after[0] && (pt = erg_context_signature_find(cs, after, NULL, 0)) >= 0)
                    ech = 1;
            } else if (nc <= c->kmax) {
                if ((pt = erg_context_signature_find(cs, after, names, nc)) >= 0) {
                    rch = 1;
                    ech = after[0] != 0;
                } else if (after[0] && (pt = erg_context_signature_find(cs, "", names, nc)) >= 0) {
                    rch = 1;
                } else if (after[0] && (pt = erg_context_signature_find(cs, after, NULL, 0)) >= 0) {
                    ech = 1;
                }
            } else if (after[0] && (pt = erg_context_signature_find(cs, after, NULL, 0)) >= 0) {
                ech = 1;
            }
        }
        if (pt != c->point[v])
            changed++;
        c->point[v] = pt;
        c->entry_ch[v] = ech;
        c->run_ch[v] = rch;
    }
    return changed;
}

static void cctx_free(struct cctx *c)
{
    free(c->csig);
    free(c->order);
    free(c->off);
    free(c->adj);
    free(c->start);
    free(c->fin);
    free(c->tim);
    free(c->point);
    free(c->entry_ch);
    free(c->run_ch);
    free(c->pred);
    free(c->byfin);
    free(c->bystart);
    free(c->ncor);
    free(c->cor);
    free(c->dist);
    free(c->ndist);
    free(c->names);
}

/* The substituted signature of node v: the point's values with the device's static power; a point
 * static power above or below it enters as dynamic energy (E is kept, Axiom P2). */
static void substituted(const struct cctx *c, uint32_t v, erg_signature *out)
{
    const erg_schedule *s = c->s;
    const erg_signature *base = node_sig(c, v);
    const erg_context_signature *cs = c->csig[s->nodes[v].sig];
    const erg_context_point *p = &cs->points[c->point[v]];
    *out = *base;
    double s_ref = !isnan(base->static_power_w) ? base->static_power_w
                                                : s->devices[s->nodes[v].device].static_power_w;
    double sp = isnan(p->static_power_w) ? s_ref : p->static_power_w;
    out->time_s = p->time_s;
    out->dynamic_energy_j = fmax(0.0, p->dynamic_energy_j + (sp - s_ref) * p->time_s);
    out->time_var_s2 = p->time_var_s2;
    out->energy_var_j2 = fmax(p->energy_var_j2, s_ref * s_ref * p->time_var_s2);
    out->runs = p->runs;
    snprintf(out->name, sizeof out->name, "%.60s@%.60s", base->name, p->name);
}

static int copy_schedule(const struct cctx *c, erg_schedule **out, erg_diag *diag)
{
    const erg_schedule *s = c->s;
    erg_schedule *t = erg_schedule_new();
    if (!t)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    int rc = ERG_OK;
    for (size_t d = 0; rc == ERG_OK && d < s->n_devices; d++)
        rc = erg_schedule_add_device(t, s->devices[d].id, s->devices[d].static_power_w,
                                     s->devices[d].idle_power_w, diag);
    for (size_t i = 0; rc == ERG_OK && i < s->n_sigs; i++)
        rc = erg_schedule_add_signature(t, &s->sigs[i], diag);
    for (size_t v = 0; rc == ERG_OK && v < c->n; v++) {
        const char *sig = node_sig(c, (uint32_t)v)->name;
        erg_signature sub;
        if (c->point[v] >= 0) {
            substituted(c, (uint32_t)v, &sub);
            if (erg__sig_index(t, sub.name) == ERG__STRMAP_NONE)
                rc = erg_schedule_add_signature(t, &sub, diag);
            sig = sub.name;
        }
        if (rc == ERG_OK)
            rc =
                erg_schedule_add_node(t, erg__node_id(s, (uint32_t)v), sig,
                                      s->devices[s->nodes[v].device].id, s->nodes[v].start_s, diag);
    }
    for (size_t k = 0; rc == ERG_OK && k < s->n_edges; k++)
        rc = erg_schedule_add_edge(t, erg__node_id(s, s->edges[k][0]),
                                   erg__node_id(s, s->edges[k][1]), diag);
    if (rc != ERG_OK) {
        erg_schedule_free(t);
        return rc;
    }
    *out = t;
    return ERG_OK;
}

static int in_group(const erg_correlation *g, const char *name)
{
    for (size_t k = 0; k < g->n; k++)
        if (g->signatures[k] && strcmp(g->signatures[k], name) == 0)
            return 1;
    return 0;
}

int erg_schedule_compose_context(const erg_schedule *s, const erg_context_signature *const *sigs,
                                 size_t n_sigs, const erg_correlation *corr, size_t n_corr,
                                 const erg_compose_options *opts_in, erg_context_report *out,
                                 erg_diag *diag)
{
    if (!s || !out || (!sigs && n_sigs) || (!corr && n_corr))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_schedule_compose_context: NULL argument");
    memset(out, 0, sizeof *out);
    if (s->has_expr)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "composition at realized contexts needs the DAG form (nodes and "
                            "edges): an expression does not say which element precedes which on "
                            "a device");
    for (size_t k = 0; k < n_corr; k++) {
        const erg_correlation *g = &corr[k];
        if (g->n < 2 || !g->signatures)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "correlations[%zu]: a group names at least two signatures", k);
        if (isnan(g->rho) ? !(isfinite(g->covariance_j2) && g->n == 2)
                          : !(g->rho >= -1.0 && g->rho <= 1.0))
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "correlations[%zu]: rho must lie in [-1, 1], or a pair states "
                                "covariance_j2",
                                k);
    }
    erg_compose_options opts;
    if (opts_in)
        opts = *opts_in;
    else
        erg_compose_options_init(&opts);
    /* Both compositions below are of the same DAG (the second with the chosen points' figures):
     * in one workspace, the second reuses the first's memory and adjacency. The caller's, or one
     * of this call's own (without it, when even that is out of memory: each allocates its own). */
    erg_compose_workspace *own_ws = opts.workspace ? NULL : erg_compose_workspace_new();
    if (own_ws)
        opts.workspace = own_ws;
    /* the context-independent composition first: it validates the schedule (cycles, Axiom P2)
     * and gives the null-context bias bound */
    erg_report base;
    int rc = erg_schedule_compose(s, &opts, &base, diag);
    if (rc != ERG_OK) {
        erg_compose_workspace_free(own_ws);
        return rc;
    }
    out->null_bias_bound_j = base.bias_bound_j;
    erg_report_free(&base);

    struct cctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.n = s->n_nodes;
    size_t n = c.n ? c.n : 1;
    c.csig = calloc(s->n_sigs ? s->n_sigs : 1, sizeof *c.csig);
    c.start = calloc(n, sizeof *c.start);
    c.fin = calloc(n, sizeof *c.fin);
    c.point = malloc(n * sizeof *c.point);
    c.entry_ch = calloc(n, sizeof *c.entry_ch);
    c.run_ch = calloc(n, sizeof *c.run_ch);
    c.pred = calloc(n, sizeof *c.pred);
    c.byfin = calloc(n, sizeof *c.byfin);
    c.bystart = calloc(n, sizeof *c.bystart);
    c.ncor = calloc(n, sizeof *c.ncor);
    c.cor = calloc(n, sizeof *c.cor);
    c.ndist = calloc(n, sizeof *c.ndist);
    out->nodes = calloc(n, sizeof *out->nodes);
    if (!c.csig || !c.start || !c.fin || !c.point || !c.entry_ch || !c.run_ch || !c.pred ||
        !c.byfin || !c.bystart || !c.ncor || !c.cor || !c.ndist || !out->nodes ||
        build_topo(&c) != 0) {
        cctx_free(&c);
        erg_context_report_free(out);
        erg_compose_workspace_free(own_ws);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < s->n_sigs; i++)
        for (size_t k = 0; k < n_sigs; k++)
            if (sigs[k] && strcmp(sigs[k]->null_context.name, s->sigs[i].name) == 0)
                c.csig[i] = sigs[k];
    for (size_t i = 0; i < s->n_sigs; i++)
        for (size_t k = 0; c.csig[i] && k < c.csig[i]->n_points; k++)
            if (c.csig[i]->points[k].n_corunners > c.kmax)
                c.kmax = c.csig[i]->points[k].n_corunners;
    if (c.kmax) {
        c.dist =
            c.kmax <= SIZE_MAX / sizeof *c.dist / n ? malloc(n * c.kmax * sizeof *c.dist) : NULL;
        c.names = malloc(c.kmax * sizeof *c.names);
        if (!c.dist || !c.names) {
            cctx_free(&c);
            erg_context_report_free(out);
            erg_compose_workspace_free(own_ws);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
    }
    for (size_t v = 0; v < c.n; v++)
        c.point[v] = -1;
    /* fixed point: contexts from times, points from contexts, times from points */
    double span = 0;
    for (size_t v = 0; v < s->n_sigs; v++)
        span += s->sigs[v].time_s;
    double eps = 1e-12 * (span > 0 ? span : 1.0);
    int it;
    out->converged = 0;
    for (it = 1; it <= 16; it++) {
        times(&c);
        contexts(&c, eps);
        if (choose(&c) == 0) {
            out->converged = 1;
            break;
        }
    }
    if (!out->converged) {
        times(&c);
        contexts(&c, eps);
        it = 16;
    }
    out->iterations = it;
    erg_schedule *t = NULL;
    rc = copy_schedule(&c, &t, diag);
    if (rc == ERG_OK)
        rc = erg_schedule_compose(t, &opts, &out->report, diag);
    erg_schedule_free(t);
    erg_compose_workspace_free(own_ws);
    if (rc != ERG_OK) {
        cctx_free(&c);
        erg_context_report_free(out);
        return rc;
    }
    double cst = erg_two_sided_multiplier(opts.confidence);
    double t0 = HUGE_VAL;
    for (size_t v = 0; v < c.n; v++)
        t0 = fmin(t0, c.start[v]);
    double bias = 0.0;
    double *sd = calloc(n, sizeof *sd);
    if (!sd) {
        cctx_free(&c);
        erg_context_report_free(out);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    out->n_nodes = c.n;
    for (size_t v = 0; v < c.n; v++) {
        erg_context_node *nd = &out->nodes[v];
        erg_signature used = *node_sig(&c, (uint32_t)v);
        if (c.point[v] >= 0) {
            substituted(&c, (uint32_t)v, &used);
            out->n_characterized++;
            snprintf(nd->point, sizeof nd->point, "%s",
                     c.csig[s->nodes[v].sig]->points[c.point[v]].name);
        }
        double sw = !isnan(used.static_power_w) ? used.static_power_w
                                                : s->devices[s->nodes[v].device].static_power_w;
        snprintf(nd->id, sizeof nd->id, "%s", erg__node_id(s, (uint32_t)v));
        snprintf(nd->signature, sizeof nd->signature, "%s", node_sig(&c, (uint32_t)v)->name);
        snprintf(nd->device, sizeof nd->device, "%s", s->devices[s->nodes[v].device].id);
        if (c.pred[v] != UINT32_MAX)
            snprintf(nd->after, sizeof nd->after, "%s", node_sig(&c, c.pred[v])->name);
        nd->n_corunners = c.ncor[v];
        for (size_t k = 0; k < c.ncor[v] && k < ERG_CONTEXT_NODE_CORUNNERS; k++)
            snprintf(nd->corunners[k], sizeof nd->corunners[k], "%s",
                     node_sig(&c, c.cor[v][k])->name);
        int at_origin = c.start[v] <= t0 + eps && !opts.warm_start;
        nd->m_entry = !at_origin && !c.entry_ch[v];
        nd->m_isolation = c.ncor[v] > 0 && !c.run_ch[v];
        nd->start_s = c.start[v];
        nd->finish_s = c.fin[v];
        nd->energy_j = sw * used.time_s + used.dynamic_energy_j;
        sd[v] = sqrt(fmax(0.0, used.energy_var_j2));
        nd->energy_sd_j = sd[v];
        bias += (nd->m_entry + nd->m_isolation) * cst * sd[v];
    }
    /* correlated noise: Σ_{i<j} 2·Cov(E_i, E_j) over the nodes of each group */
    double cov = 0.0;
    for (size_t k = 0; k < n_corr; k++) {
        const erg_correlation *g = &corr[k];
        for (size_t i = 0; i < c.n; i++) {
            const char *ni = node_sig(&c, (uint32_t)i)->name;
            if (!in_group(g, ni))
                continue;
            for (size_t j = i + 1; j < c.n; j++) {
                const char *nj = node_sig(&c, (uint32_t)j)->name;
                if (!in_group(g, nj))
                    continue;
                if (isnan(g->rho)) {
                    if (strcmp(ni, nj) != 0)
                        cov += 2.0 * g->covariance_j2;
                } else {
                    cov += 2.0 * g->rho * sd[i] * sd[j];
                }
            }
        }
    }
    free(sd);
    erg_report *r = &out->report;
    out->covariance_j2 = cov;
    double var = fmax(0.0, r->energy_sd_j * r->energy_sd_j + cov);
    r->energy_sd_j = sqrt(var);
    r->total.energy_var_j2 =
        fmax(var, r->total.static_power_w * r->total.static_power_w * r->total.time_var_s2);
    r->interval_j[0] = r->energy_j - cst * r->energy_sd_j;
    r->interval_j[1] = r->energy_j + cst * r->energy_sd_j;
    r->bias_bound_j = bias;
    cctx_free(&c);
    return ERG_OK;
}

/* ------------------------------------------------------------------ refinement ---------------- */

static const erg_context_signature *find_sig(const erg_context_signature *const *sigs, size_t n,
                                             const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (sigs[k] && strcmp(sigs[k]->null_context.name, name) == 0)
            return sigs[k];
    return NULL;
}

/* Largest |E(point) − E(null)| among the points of one kind (runtime or entry); -1 when none. */
static double point_spread(const erg_context_signature *cs, int runtime)
{
    double best = -1.0;
    if (!cs)
        return best;
    double e0 = energy_of(&cs->null_context);
    for (size_t i = 0; i < cs->n_points; i++) {
        if ((cs->points[i].n_corunners > 0) != runtime)
            continue;
        erg_signature ps;
        if (erg_context_point_signature(cs, i, &ps) == ERG_OK) /* i < n_points: always */
            best = fmax(best, fabs(energy_of(&ps) - e0));
    }
    return best;
}

static int cmp_cand(const void *a, const void *b)
{
    const erg_refine_candidate *x = a, *y = b;
    if (x->explain_j != y->explain_j)
        return x->explain_j > y->explain_j ? -1 : 1;
    if (x->estimated_from_points != y->estimated_from_points)
        return x->estimated_from_points > y->estimated_from_points ? -1 : 1;
    int c = strcmp(x->b, y->b);
    return c ? c : strcmp(x->a, y->a);
}

int erg_refine_candidates(const erg_context_report *r, const erg_context_signature *const *sigs,
                          size_t n_sigs, double deviation_j, erg_refine_candidate *out, size_t max,
                          size_t *n_out, erg_diag *diag)
{
    if (!r || (!sigs && n_sigs) || (!out && max) || !n_out || !isfinite(deviation_j))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_refine_candidates: bad argument");
    size_t cap = 2 * r->n_nodes * (1 + ERG_CONTEXT_NODE_CORUNNERS) + 1, n = 0;
    erg_refine_candidate *all = calloc(cap, sizeof *all);
    if (!all)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    for (size_t v = 0; v < r->n_nodes; v++) {
        const erg_context_node *nd = &r->nodes[v];
        const erg_context_signature *cs = find_sig(sigs, n_sigs, nd->signature);
        for (int kind = 0; kind < 2; kind++) {
            size_t na = kind == 0 ? (nd->m_entry && nd->after[0] ? 1 : 0)
                                  : (nd->m_isolation ? nd->n_corunners : 0);
            if (na > ERG_CONTEXT_NODE_CORUNNERS)
                na = ERG_CONTEXT_NODE_CORUNNERS;
            double spread = point_spread(cs, kind);
            for (size_t k = 0; k < na; k++) {
                const char *a = kind == 0 ? nd->after : nd->corunners[k];
                size_t j;
                for (j = 0; j < n; j++)
                    if (all[j].runtime == kind && strcmp(all[j].a, a) == 0 &&
                        strcmp(all[j].b, nd->signature) == 0)
                        break;
                if (j == n) {
                    erg_refine_candidate *c = &all[n++];
                    c->runtime = kind;
                    snprintf(c->a, sizeof c->a, "%s", a);
                    snprintf(c->b, sizeof c->b, "%s", nd->signature);
                    c->estimated_from_points = spread >= 0;
                    c->per_occurrence_j = spread >= 0 ? spread : nd->energy_j;
                }
                all[j].occurrences++;
            }
        }
    }
    for (size_t j = 0; j < n; j++)
        all[j].explain_j =
            fmin(fabs(deviation_j), (double)all[j].occurrences * all[j].per_occurrence_j);
    qsort(all, n, sizeof *all, cmp_cand);
    *n_out = n < max ? n : max;
    if (*n_out)
        memcpy(out, all, *n_out * sizeof *out);
    free(all);
    return ERG_OK;
}

int erg_granularity_check(const erg_signature *coarse, const erg_report *parts,
                          erg_granularity *out, erg_diag *diag)
{
    if (!coarse || !parts || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_granularity_check: NULL argument");
    int rc = check_conf(parts->confidence, diag);
    if (rc)
        return rc;
    if ((rc = erg_signature_check(coarse, diag)))
        return rc;
    double c = erg_two_sided_multiplier(parts->confidence);
    out->difference_j = fabs(energy_of(coarse) - parts->energy_j);
    out->bias_j = parts->bias_bound_j;
    out->random_j = c * sqrt(coarse->energy_var_j2 + parts->energy_sd_j * parts->energy_sd_j);
    out->bound_j = out->bias_j + out->random_j;
    out->consistent = out->difference_j <= out->bound_j;
    return ERG_OK;
}

/* ------------------------------------------------------------------ DAG access ---------------- */

size_t erg_schedule_node_count(const erg_schedule *s)
{
    return s && !s->has_expr ? s->n_nodes : 0;
}

int erg_schedule_node_info(const erg_schedule *s, size_t i, const char **id, const char **signature,
                           const char **device)
{
    if (!s || s->has_expr || i >= s->n_nodes)
        return ERG_EINVAL;
    if (id)
        *id = erg__node_id(s, (uint32_t)i);
    if (signature)
        *signature = s->sigs[s->nodes[i].sig].name;
    if (device)
        *device = s->devices[s->nodes[i].device].id;
    return ERG_OK;
}

size_t erg_schedule_edge_count(const erg_schedule *s)
{
    return s && !s->has_expr ? s->n_edges : 0;
}

int erg_schedule_edge_info(const erg_schedule *s, size_t k, size_t *from, size_t *to)
{
    if (!s || s->has_expr || k >= s->n_edges)
        return ERG_EINVAL;
    if (from)
        *from = s->edges[k][0];
    if (to)
        *to = s->edges[k][1];
    return ERG_OK;
}
