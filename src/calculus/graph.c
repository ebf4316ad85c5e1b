/* SPDX-License-Identifier: MIT */
/* The graph layer of DAG schedules (graph.h): adjacency, topological order, cycles,
 * series-parallel decomposition. */
#define _DEFAULT_SOURCE 1 /* madvise, MADV_HUGEPAGE */
#include "calculus/graph.h"

#include "erg/error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *erg__graph_alloc(size_t bytes, int zero)
{
    enum { PAGE_2M = 2u << 20 };
    if (bytes < PAGE_2M)
        return zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
    size_t size = (bytes + PAGE_2M - 1) / PAGE_2M * PAGE_2M;
    void *p = aligned_alloc(PAGE_2M, size);
    if (!p)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, size, MADV_HUGEPAGE); /* advice only: without it, 4 KiB pages */
#endif
    if (zero)
        memset(p, 0, bytes);
    return p;
}

void erg__graph_free(erg__graph *g)
{
    if (!g)
        return;
    free(g->succ_off);
    free(g->succ);
    free(g->pred_off);
    free(g->pred);
    free(g->order);
    free(g->indeg);
    memset(g, 0, sizeof *g);
}

int erg__graph_init(erg__graph *g, uint32_t n, size_t m, const uint32_t (*edges)[2])
{
    memset(g, 0, sizeof *g);
    g->succ_off = erg__graph_alloc(((size_t)n + 1) * sizeof *g->succ_off, 0);
    g->pred_off = erg__graph_alloc(((size_t)n + 1) * sizeof *g->pred_off, 0);
    g->succ = erg__graph_alloc((m + 1) * sizeof *g->succ, 0);
    g->pred = erg__graph_alloc((m + 1) * sizeof *g->pred, 0);
    g->order = erg__graph_alloc(((size_t)n + 1) * sizeof *g->order, 0);
    g->indeg = erg__graph_alloc(((size_t)n + 1) * sizeof *g->indeg, 0);
    if (!g->succ_off || !g->pred_off || !g->succ || !g->pred || !g->order || !g->indeg)
        return ERG_ENOMEM;
    return erg__graph_build(g, n, m, edges);
}

int erg__graph_build(erg__graph *g, uint32_t n, size_t m, const uint32_t (*edges)[2])
{
    g->n = n;
    g->m = m;
    g->n_ordered = 0;
    uint32_t *indeg = g->indeg;
    memset(g->succ_off, 0, ((size_t)n + 1) * sizeof *g->succ_off);
    memset(g->pred_off, 0, ((size_t)n + 1) * sizeof *g->pred_off);
    /* Local restrict pointers, each block its own: every array here holds uint32_t, and
     * without them each store would make the compiler reload the others. */
    const uint32_t(*restrict ed)[2] = edges;
    uint32_t head = 0, tail = 0;
    {
        uint32_t *restrict soff = g->succ_off, *restrict poff = g->pred_off;
        uint32_t *restrict order = g->order, *restrict deg = indeg;
        for (size_t k = 0; k < m; k++) { /* counts, at each node's own index */
            soff[ed[k][0]]++;
            poff[ed[k][1]]++;
        }
        /* Inclusive prefix sums: off[i] is where list i ends; Kahn's in-degrees and first
         * sources (in index order) in the same pass. */
        uint32_t ss = 0, ps = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = poff[i];
            deg[i] = d;
            if (d == 0)
                order[tail++] = i;
            ss += soff[i];
            ps += d;
            soff[i] = ss;
            poff[i] = ps;
        }
        soff[n] = ss;
        poff[n] = ps;
    }
    { /* one pass fills both lists, from the last edge back, each end moving down to its start:
       * the lists keep the edges' order */
        uint32_t *restrict soff = g->succ_off, *restrict poff = g->pred_off;
        uint32_t *restrict sw = g->succ, *restrict pw = g->pred;
        for (size_t k = m; k-- > 0;) {
            uint32_t a = ed[k][0], b = ed[k][1];
            sw[--soff[a]] = b;
            pw[--poff[b]] = a;
        }
    }
    /* Kahn's algorithm. A successor is written at the queue's tail whether or not its last
     * predecessor has gone, and the tail moves past it only when it has: no branch on the
     * in-degree, which the data make unpredictable (the tail stays below n while a node is being
     * taken, and order has n + 1 entries). */
    {
        const uint32_t *restrict soff = g->succ_off, *restrict succ = g->succ;
        uint32_t *restrict order = g->order, *restrict deg = indeg;
        while (head < tail) {
            uint32_t v = order[head++];
            for (uint32_t k = soff[v], end = soff[v + 1]; k < end; k++) {
                uint32_t w = succ[k], d = --deg[w];
                order[tail] = w;
                tail += d == 0;
            }
        }
    }
    indeg[n] = 0;
    g->n_ordered = tail;
    return tail == n ? ERG_OK : ERG_ECYCLE;
}

int erg__graph_cycle(const erg__graph *g, uint32_t **cyc_out, uint32_t *len)
{
    *cyc_out = NULL;
    *len = 0;
    if (g->n_ordered >= g->n)
        return ERG_EINVAL;
    unsigned char *done = calloc(g->n, 1);
    uint32_t *mark = calloc(g->n, sizeof *mark);
    if (!done || !mark) {
        free(done);
        free(mark);
        return ERG_ENOMEM;
    }
    for (uint32_t i = 0; i < g->n_ordered; i++)
        done[g->order[i]] = 1;
    uint32_t v = 0;
    while (done[v])
        v++;
    /* Walk backwards along not-yet-ordered predecessors until a node repeats (every unordered
     * node has an unordered predecessor, so the walk never stops short). */
    uint32_t step = 1;
    while (!mark[v]) {
        mark[v] = step++;
        uint32_t next = v;
        for (uint32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
            if (!done[g->pred[k]]) {
                next = g->pred[k];
                break;
            }
        v = next;
    }
    uint32_t n_in = step - mark[v];
    uint32_t *back = malloc((size_t)n_in * sizeof *back), *cyc = malloc((size_t)n_in * sizeof *cyc);
    if (!back || !cyc) {
        free(back);
        free(cyc);
        free(done);
        free(mark);
        return ERG_ENOMEM;
    }
    uint32_t u = v;
    for (uint32_t i = 0; i < n_in; i++) {
        back[i] = u;
        for (uint32_t k = g->pred_off[u]; k < g->pred_off[u + 1]; k++)
            if (!done[g->pred[k]] && mark[g->pred[k]] >= mark[v]) {
                u = g->pred[k];
                break;
            }
    }
    /* back holds the cycle against the edges; turn it round from its least node. */
    uint32_t first = 0;
    for (uint32_t i = 1; i < n_in; i++)
        if (back[i] < back[first])
            first = i;
    for (uint32_t j = 0; j < n_in; j++)
        cyc[j] = back[(first + n_in - j) % n_in];
    free(back);
    free(done);
    free(mark);
    *cyc_out = cyc;
    *len = n_in;
    return ERG_OK;
}

void erg__sp_free(erg__sp_tree *t)
{
    if (!t)
        return;
    free(t->node);
    memset(t, 0, sizeof *t);
}

static uint32_t sp_add(erg__sp_tree *t, uint8_t kind, uint32_t a, uint32_t b)
{
    /* The tree has n leaves and at most n - 1 joins: capacity 2n is reserved up front. */
    t->node[t->n] = (struct erg__sp_node){kind, a, b};
    return (uint32_t)t->n++;
}

struct spe { /* an edge of the two-terminal multigraph: junction u -> junction v */
    uint32_t u, v, tree;
    int alive;
};

static int cmp_spe(const void *pa, const void *pb)
{
    const struct spe *a = pa, *b = pb;
    if (a->alive != b->alive)
        return a->alive > b->alive ? -1 : 1;
    if (a->u != b->u)
        return a->u < b->u ? -1 : 1;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->tree < b->tree ? -1 : (a->tree > b->tree);
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : (a > b);
}

static uint64_t hash_list(const uint32_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ULL ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

/* Keep flags per successor entry: 0 for a transitive edge (n <= ERG__SP_REDUCE_MAX only). */
static int reduce(const erg__graph *g, unsigned char *keep)
{
    uint32_t n = g->n;
    memset(keep, 1, g->m + 1);
    if (n > ERG__SP_REDUCE_MAX)
        return ERG_OK;
    size_t words = ((size_t)n + 63) / 64;
    uint64_t *reach = calloc((size_t)n * words + 1, sizeof *reach);
    if (!reach)
        return ERG_ENOMEM;
    for (uint32_t q = n; q-- > 0;) {
        uint32_t k = g->order[q];
        for (uint32_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++) {
            uint32_t c = g->succ[j];
            reach[k * words + c / 64] |= (uint64_t)1 << (c % 64);
            for (size_t w = 0; w < words; w++)
                reach[k * words + w] |= reach[c * words + w];
        }
    }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++) {
            uint32_t b = g->succ[j];
            int redundant = 0;
            for (uint32_t jj = g->succ_off[k]; jj < g->succ_off[k + 1] && !redundant; jj++) {
                uint32_t c = g->succ[jj];
                redundant = c != b && (reach[c * words + b / 64] >> (b % 64) & 1);
            }
            keep[j] = !redundant;
        }
    free(reach);
    return ERG_OK;
}

/* Junction of each node's input: 0 for no predecessor, else an id (>= 2) shared by the nodes
 * with the same set of kept predecessors (sorted, deduplicated lists, hashed). */
static int junctions(const erg__graph *g, const unsigned char *keep, uint32_t *pid, uint32_t *njunc)
{
    uint32_t n = g->n;
    uint32_t *off = calloc((size_t)n + 1, sizeof *off), *lst = malloc((g->m + 1) * sizeof *lst);
    uint32_t *cur = malloc(((size_t)n + 1) * sizeof *cur);
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot); /* node + 1, 0 empty */
    uint64_t *hv = malloc(((size_t)n + 1) * sizeof *hv);
    uint32_t *len = malloc(((size_t)n + 1) * sizeof *len);
    int rc = ERG_OK;
    if (!off || !lst || !cur || !slot || !hv || !len) {
        rc = ERG_ENOMEM;
        goto done;
    }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++)
            if (keep[j])
                off[g->succ[j] + 1]++;
    for (uint32_t k = 0; k < n; k++)
        off[k + 1] += off[k];
    memcpy(cur, off, (size_t)n * sizeof *cur);
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++)
            if (keep[j])
                lst[cur[g->succ[j]]++] = k;
    *njunc = 2; /* 0 source, 1 sink */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t *p = lst + off[k], c = off[k + 1] - off[k], w = 0;
        qsort(p, c, sizeof *p, cmp_u32);
        for (uint32_t i = 0; i < c; i++)
            if (w == 0 || p[w - 1] != p[i])
                p[w++] = p[i];
        len[k] = w;
        if (w == 0) {
            pid[k] = 0;
            continue;
        }
        hv[k] = hash_list(p, w);
        size_t i = (size_t)hv[k] & (cap - 1);
        for (;; i = (i + 1) & (cap - 1)) {
            if (slot[i] == 0) {
                slot[i] = k + 1;
                pid[k] = (*njunc)++;
                break;
            }
            uint32_t o = slot[i] - 1;
            if (hv[o] == hv[k] && len[o] == w && memcmp(lst + off[o], p, w * sizeof *p) == 0) {
                pid[k] = pid[o];
                break;
            }
        }
    }
done:
    free(off);
    free(lst);
    free(cur);
    free(slot);
    free(hv);
    free(len);
    return rc;
}

int erg__graph_sp(const erg__graph *g, erg__sp_tree *t)
{
    memset(t, 0, sizeof *t);
    uint32_t n = g->n;
    if (n == 0 || g->n_ordered != n)
        return 1;
    unsigned char *keep = malloc(g->m + 1);
    uint32_t *pid = malloc(((size_t)n + 1) * sizeof *pid);
    struct spe *e = malloc(((size_t)n + 1) * sizeof *e);
    uint32_t *ine = NULL, *oute = NULL, *indeg = NULL, *outdeg = NULL;
    t->cap = 2 * (size_t)n;
    t->node = malloc(t->cap * sizeof *t->node);
    uint32_t nv = 0;
    int rc = ERG_OK;
    if (!keep || !pid || !e || !t->node || reduce(g, keep) != ERG_OK ||
        junctions(g, keep, pid, &nv) != ERG_OK) {
        rc = ERG_ENOMEM;
        goto done;
    }
    /* Inverse line digraph: node k becomes an edge from its input junction to the input junction
     * shared by all its kept successors (the sink when it has none); successors with different
     * predecessor sets mean the reduced DAG is not series-parallel. */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t outj = 1;
        for (uint32_t j = g->succ_off[k]; j < g->succ_off[k + 1]; j++) {
            if (!keep[j])
                continue;
            if (outj == 1)
                outj = pid[g->succ[j]];
            else if (outj != pid[g->succ[j]]) {
                rc = 1;
                goto done;
            }
        }
        e[k] = (struct spe){pid[k], outj, sp_add(t, ERG__SP_LEAF, k, 0), 1};
    }
    ine = malloc(((size_t)nv + 1) * sizeof *ine);
    oute = malloc(((size_t)nv + 1) * sizeof *oute);
    indeg = malloc(((size_t)nv + 1) * sizeof *indeg);
    outdeg = malloc(((size_t)nv + 1) * sizeof *outdeg);
    if (!ine || !oute || !indeg || !outdeg) {
        rc = ERG_ENOMEM;
        goto done;
    }
    size_t ne = n, alive = n;
    int changed = 1;
    while (changed && alive > 1) {
        changed = 0;
        /* Parallel reductions: edges with the same ends. */
        qsort(e, ne, sizeof *e, cmp_spe);
        while (ne > 0 && !e[ne - 1].alive)
            ne--;
        for (size_t i = 0; i + 1 < ne; i++) {
            size_t j = i + 1;
            while (j < ne && e[j].u == e[i].u && e[j].v == e[i].v) {
                e[i].tree = sp_add(t, ERG__SP_PAR, e[i].tree, e[j].tree);
                e[j].alive = 0;
                alive--;
                changed = 1;
                j++;
            }
            i = j - 1;
        }
        /* Series reductions: a junction with one edge in and one edge out. */
        for (uint32_t w = 0; w < nv; w++)
            indeg[w] = outdeg[w] = 0;
        for (size_t i = 0; i < ne; i++)
            if (e[i].alive) {
                outdeg[e[i].u]++;
                indeg[e[i].v]++;
                oute[e[i].u] = (uint32_t)i;
                ine[e[i].v] = (uint32_t)i;
            }
        for (uint32_t w = 2; w < nv; w++) {
            if (indeg[w] != 1 || outdeg[w] != 1)
                continue;
            uint32_t a = ine[w], b = oute[w];
            if (!e[a].alive || !e[b].alive || a == b)
                continue;
            e[a].tree = sp_add(t, ERG__SP_SEQ, e[a].tree, e[b].tree);
            e[a].v = e[b].v;
            e[b].alive = 0;
            ine[e[a].v] = a;
            indeg[w] = outdeg[w] = 0;
            alive--;
            changed = 1;
        }
    }
    rc = 1;
    for (size_t i = 0; i < ne; i++)
        if (e[i].alive && alive == 1 && e[i].u == 0 && e[i].v == 1) {
            t->root = e[i].tree;
            rc = 0;
        }
done:
    free(keep);
    free(pid);
    free(e);
    free(ine);
    free(oute);
    free(indeg);
    free(outdeg);
    if (rc != 0)
        erg__sp_free(t);
    return rc;
}
