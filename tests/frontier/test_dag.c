/* SPDX-License-Identifier: MIT */
/* DAG frontiers: exhaustive enumeration against brute force over every point, the LP relaxation's
 * rounded plans against the exact frontier, its lower bound, series-parallel DAG = expression. */
#include "erg/frontier.h"
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>

static erg_signature sig(const char *dev, double s, double t, double d)
{
    erg_signature g;
    erg_signature_init(&g);
    snprintf(g.device, sizeof g.device, "%s", dev);
    g.static_power_w = s;
    g.time_s = t;
    g.dynamic_energy_j = d;
    return g;
}

static void add(erg_opsched *os, const char *el, const char *dev, double s, double t, double d)
{
    erg_signature g = sig(dev, s, t, d);
    assert_int_equal(erg_opsched_add_point(os, el, &g, "", NULL), ERG_OK);
}

/* a (gpu0) -> c (gpu0); b (gpu1) -> c. s0 = 10, s1 = 5, so E = 15·M + Σ d.
 * a: (1, 8) (2, 3); b: (1.5, 4) (3, 1); c: (1, 2).
 * Plans: a0 b0: M = 2.5, d 14 -> 51.5; a1 b0: M 3, d 9 -> 54; a0 b1 / a1 b1: M 4, d 11 / 6 -> 66
 * / 66. Frontier: (2.5, 51.5) only... a1 b0 at 3 s is 54 > 51.5, dominated. */
static void dag_enumeration_hand_case(void **state)
{
    (void)state;
    erg_opsched *os = erg_opsched_new();
    assert_int_equal(erg_opsched_add_device(os, "gpu0", 10, NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_device(os, "gpu1", 5, NULL), ERG_OK);
    add(os, "A", "gpu0", 10, 1, 8);
    add(os, "A", "gpu0", 10, 2, 3);
    add(os, "B", "gpu1", 5, 1.5, 4);
    add(os, "B", "gpu1", 5, 3, 1);
    add(os, "C", "gpu0", 10, 1, 2);
    assert_int_equal(erg_opsched_add_node(os, "a", "A", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_node(os, "b", "B", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_node(os, "c", "C", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "a", "c", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "b", "c", NULL), ERG_OK);
    erg_frontier f;
    assert_int_equal(erg_opsched_frontier(os, NULL, &f, NULL), ERG_OK);
    assert_int_equal(f.method, ERG_FRONTIER_EXACT);
    assert_int_equal(f.n_points, 1);
    erg_assert_near(f.points[0].time_s, 2.5, 1e-12);
    erg_assert_near(f.points[0].energy_j, 51.5, 1e-12);
    erg_assert_near(f.points[0].static_energy_j, 37.5, 1e-12);
    assert_int_equal(f.choices[0], 0);
    assert_int_equal(f.choices[1], 0);
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

/* Non-convex operating set: (1, 10) (2, 8) (3, 3). The relaxation's hull at t = 2 gives 6.5 J, the
 * real point 8 J: the gap 1.5 J is reported. */
static void relaxation_reports_its_gap(void **state)
{
    (void)state;
    erg_opsched *os = erg_opsched_new();
    assert_int_equal(erg_opsched_add_device(os, "g", 1, NULL), ERG_OK);
    add(os, "X", "g", 1, 1, 10);
    add(os, "X", "g", 1, 2, 8);
    add(os, "X", "g", 1, 3, 3);
    assert_int_equal(erg_opsched_add_node(os, "x", "X", NULL), ERG_OK);
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.dag_method = ERG_DAG_RELAX;
    o.lp_deadlines = 3; /* deadlines 1, 2, 3 */
    erg_frontier f;
    assert_int_equal(erg_opsched_frontier(os, &o, &f, NULL), ERG_OK);
    assert_int_equal(f.method, ERG_FRONTIER_RELAXATION);
    assert_int_equal(f.n_points, 3);
    erg_assert_near(f.points[1].time_s, 2, 1e-12);
    erg_assert_near(f.points[1].energy_j, 2 + 8, 1e-9);
    erg_assert_near(f.points[1].bound_j, 2 + 6.5, 1e-7);
    erg_assert_near(f.points[2].energy_j, 3 + 3, 1e-9);
    erg_assert_near(f.points[2].bound_j, 3 + 3, 1e-7);
    erg_assert_near(f.max_gap_j, 1.5, 1e-7);
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

static uint64_t rng_state;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

#define MAXN 8
#define MAXP 4

struct rdag {
    size_t n, np[MAXN], ne;
    double t[MAXN][MAXP], d[MAXN][MAXP];
    size_t dev[MAXN];
    size_t edge[32][2];
    double sdev[3];
};

/* Makespan and energy of a choice by direct longest path (nodes are in topological order). */
static void eval_dag(const struct rdag *g, const size_t *c, double *M, double *E)
{
    double fin[MAXN], S = 0, D = 0, m = 0;
    int used[3] = {0};
    for (size_t k = 0; k < g->n; k++) {
        double st = 0;
        for (size_t e = 0; e < g->ne; e++)
            if (g->edge[e][1] == k && fin[g->edge[e][0]] > st)
                st = fin[g->edge[e][0]];
        fin[k] = st + g->t[k][c[k]];
        m = fin[k] > m ? fin[k] : m;
        D += g->d[k][c[k]];
        used[g->dev[k]] = 1;
    }
    for (int i = 0; i < 3; i++)
        S += used[i] ? g->sdev[i] : 0;
    *M = m;
    *E = S * m + D;
}

static void random_dags_enumeration_and_relaxation_against_brute_force(void **state)
{
    (void)state;
    size_t n_sp = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ull + 7;
        struct rdag g;
        memset(&g, 0, sizeof g);
        g.n = 3 + (size_t)(urand() * 5);
        for (int i = 0; i < 3; i++)
            g.sdev[i] = 1 + 5 * urand();
        erg_opsched *os = erg_opsched_new();
        for (int i = 0; i < 3; i++) {
            char id[32];
            snprintf(id, sizeof id, "d%d", i);
            assert_int_equal(erg_opsched_add_device(os, id, g.sdev[i], NULL), ERG_OK);
        }
        for (size_t k = 0; k < g.n; k++) {
            char el[32], id[32], dv[32];
            snprintf(el, sizeof el, "E%zu", k);
            snprintf(id, sizeof id, "n%zu", k);
            g.dev[k] = (size_t)(urand() * 3) % 3;
            snprintf(dv, sizeof dv, "d%zu", g.dev[k]);
            g.np[k] = 1 + (size_t)(urand() * MAXP) % MAXP;
            for (size_t p = 0; p < g.np[k]; p++) {
                g.t[k][p] = 0.2 + 2 * urand();
                g.d[k][p] = 10 * urand();
                add(os, el, dv, g.sdev[g.dev[k]], g.t[k][p], g.d[k][p]);
            }
            assert_int_equal(erg_opsched_add_node(os, id, el, NULL), ERG_OK);
            for (size_t j = 0; j < k; j++)
                if (urand() < 0.35 && g.ne < 32) {
                    char a[32];
                    snprintf(a, sizeof a, "n%zu", j);
                    g.edge[g.ne][0] = j;
                    g.edge[g.ne][1] = k;
                    g.ne++;
                    assert_int_equal(erg_opsched_add_edge(os, a, id, NULL), ERG_OK);
                }
        }
        /* Brute force over every point, staircase or not. */
        size_t total = 1;
        for (size_t k = 0; k < g.n; k++)
            total *= g.np[k];
        double *T = malloc(total * sizeof *T), *E = malloc(total * sizeof *E);
        size_t *idx = malloc(total * sizeof *idx), nk, c[MAXN];
        for (size_t i = 0; i < total; i++) {
            size_t r = i;
            for (size_t k = 0; k < g.n; k++) {
                c[k] = r % g.np[k];
                r /= g.np[k];
            }
            eval_dag(&g, c, &T[i], &E[i]);
        }
        assert_int_equal(erg_pareto_min(T, E, total, idx, &nk), ERG_OK);
        erg_frontier ex, rl;
        erg_frontier_options o;
        erg_frontier_options_init(&o);
        o.dag_method = ERG_DAG_ENUMERATE;
        assert_int_equal(erg_opsched_frontier(os, &o, &ex, NULL), ERG_OK);
        assert_int_equal(ex.n_points, nk);
        for (size_t i = 0; i < nk; i++) {
            erg_assert_rel(ex.points[i].time_s, T[idx[i]], 1e-12);
            erg_assert_rel(ex.points[i].energy_j, E[idx[i]], 1e-12);
        }
        /* Auto with enumeration off: series-parallel DAGs are solved exactly (and must match),
         * the others by the relaxation. */
        erg_frontier au;
        o.dag_method = ERG_DAG_AUTO;
        o.enum_limit = 0;
        assert_int_equal(erg_opsched_frontier(os, &o, &au, NULL), ERG_OK);
        if (au.method == ERG_FRONTIER_EXACT) {
            n_sp++;
            assert_int_equal(au.n_points, nk);
            for (size_t i = 0; i < nk; i++)
                erg_assert_rel(au.points[i].energy_j, E[idx[i]], 1e-12);
        }
        erg_frontier_free(&au);
        o.dag_method = ERG_DAG_RELAX;
        o.lp_deadlines = 50;
        assert_int_equal(erg_opsched_frontier(os, &o, &rl, NULL), ERG_OK);
        erg_assert_rel(rl.points[0].time_s, ex.points[0].time_s, 1e-12);
        for (size_t i = 0; i < rl.n_points; i++) {
            /* A real plan: its choices reproduce it. */
            double M, EE;
            for (size_t k = 0; k < g.n; k++)
                c[k] = rl.choices[i * rl.n_elements + k];
            eval_dag(&g, c, &M, &EE);
            erg_assert_rel(rl.points[i].time_s, M, 1e-12);
            erg_assert_rel(rl.points[i].energy_j, EE, 1e-12);
            /* Never better than the exact frontier; the bound never above it. */
            double best = INFINITY;
            for (size_t j = 0; j < ex.n_points; j++)
                if (ex.points[j].time_s <= M * (1 + 1e-12) && ex.points[j].energy_j < best)
                    best = ex.points[j].energy_j;
            assert_true(rl.points[i].energy_j >= best * (1 - 1e-12));
            assert_true(rl.points[i].bound_j <= best * (1 + 1e-9) + 1e-9);
        }
        erg_frontier_free(&ex);
        erg_frontier_free(&rl);
        free(T);
        free(E);
        free(idx);
        erg_opsched_free(os);
    }
    assert_true(n_sp >= 20); /* both paths exercised */
}

/* One device: the DAG a -> {b, c} -> d is series-parallel, and its frontier equals that of the
 * expression seq(a, par(b, c), d) (s·M + Σ d either way). */
static void series_parallel_dag_equals_expression(void **state)
{
    (void)state;
    rng_state = 4242;
    erg_opsched *dg = erg_opsched_new(), *ex = erg_opsched_new();
    const char *names[] = {"a", "b", "c", "d"};
    assert_int_equal(erg_opsched_add_device(dg, "g", 7, NULL), ERG_OK);
    for (int k = 0; k < 4; k++)
        for (int p = 0; p < 4; p++) {
            double t = 0.5 + urand(), d = 5 * urand();
            add(dg, names[k], "g", 7, t, d);
            add(ex, names[k], "g", 7, t, d);
        }
    for (int k = 0; k < 4; k++)
        assert_int_equal(erg_opsched_add_node(dg, names[k], names[k], NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(dg, "a", "b", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(dg, "a", "c", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(dg, "b", "d", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(dg, "c", "d", NULL), ERG_OK);
    size_t id[4], pc, root;
    for (int k = 0; k < 4; k++)
        assert_int_equal(erg_opsched_expr_leaf(ex, names[k], &id[k], NULL), ERG_OK);
    size_t bc[2] = {id[1], id[2]};
    assert_int_equal(erg_opsched_expr_op(ex, ERG_EXPR_PAR, bc, 2, &pc, NULL), ERG_OK);
    size_t sq[3] = {id[0], pc, id[3]};
    assert_int_equal(erg_opsched_expr_op(ex, ERG_EXPR_SEQ, sq, 3, &root, NULL), ERG_OK);
    erg_frontier f1, f2;
    assert_int_equal(erg_opsched_frontier(dg, NULL, &f1, NULL), ERG_OK);
    assert_int_equal(erg_opsched_frontier(ex, NULL, &f2, NULL), ERG_OK);
    assert_int_equal(f1.n_points, f2.n_points);
    assert_true(f1.n_points >= 2);
    for (size_t i = 0; i < f1.n_points; i++) {
        erg_assert_rel(f1.points[i].time_s, f2.points[i].time_s, 1e-12);
        erg_assert_rel(f1.points[i].energy_j, f2.points[i].energy_j, 1e-12);
    }
    erg_frontier_free(&f1);
    erg_frontier_free(&f2);
    erg_opsched_free(dg);
    erg_opsched_free(ex);
}

/* Random series-parallel DAGs (with redundant transitive edges) on three devices: the exact
 * series-parallel path (forced by enum_limit = 0) equals exhaustive enumeration. An N-shaped DAG is
 * not series-parallel and goes to the relaxation. */
struct spgen {
    erg_opsched *os;
    size_t n;
    int adj[16][16];
};

static void sp_build(struct spgen *s, int depth, size_t *src, size_t *nsrc, size_t *snk,
                     size_t *nsnk)
{
    if (depth == 0 || s->n >= 11 || urand() < 0.25) {
        size_t k = s->n++;
        char id[32], el[32], dv[32];
        snprintf(id, sizeof id, "n%zu", k);
        snprintf(el, sizeof el, "E%zu", k);
        snprintf(dv, sizeof dv, "d%zu", k % 3);
        for (int p = 0; p < 3; p++)
            add(s->os, el, dv, 1 + (double)(k % 3), 0.3 + urand(), 4 * urand());
        assert_int_equal(erg_opsched_add_node(s->os, id, el, NULL), ERG_OK);
        src[0] = snk[0] = k;
        *nsrc = *nsnk = 1;
        return;
    }
    size_t as[16], an, at[16], atn, bs[16], bn, bt[16], btn;
    sp_build(s, depth - 1, as, &an, at, &atn);
    sp_build(s, depth - 1, bs, &bn, bt, &btn);
    if (urand() < 0.5) { /* series */
        for (size_t i = 0; i < atn; i++)
            for (size_t j = 0; j < bn; j++)
                s->adj[at[i]][bs[j]] = 1;
        memcpy(src, as, an * sizeof *src);
        *nsrc = an;
        memcpy(snk, bt, btn * sizeof *snk);
        *nsnk = btn;
    } else {
        memcpy(src, as, an * sizeof *src);
        memcpy(src + an, bs, bn * sizeof *src);
        *nsrc = an + bn;
        memcpy(snk, at, atn * sizeof *snk);
        memcpy(snk + atn, bt, btn * sizeof *snk);
        *nsnk = atn + btn;
    }
}

static void series_parallel_dags_are_exact_at_any_size(void **state)
{
    (void)state;
    size_t checked_sp = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        rng_state = seed * 0x2545F4914F6CDD1Dull + 3;
        struct spgen g;
        memset(&g, 0, sizeof g);
        g.os = erg_opsched_new();
        for (int i = 0; i < 3; i++) {
            char id[32];
            snprintf(id, sizeof id, "d%d", i);
            assert_int_equal(erg_opsched_add_device(g.os, id, 1 + i, NULL), ERG_OK);
        }
        size_t src[16], ns, snk[16], nk;
        sp_build(&g, 4, src, &ns, snk, &nk);
        /* Transitive closure edges added at random are redundant. */
        for (size_t a = 0; a < g.n; a++)
            for (size_t b = 0; b < g.n; b++)
                for (size_t c = 0; c < g.n; c++)
                    if (g.adj[a][b] && g.adj[b][c] && urand() < 0.3)
                        g.adj[a][c] = 1;
        for (size_t a = 0; a < g.n; a++)
            for (size_t b = 0; b < g.n; b++)
                if (g.adj[a][b]) {
                    char x[32], y[32];
                    snprintf(x, sizeof x, "n%zu", a);
                    snprintf(y, sizeof y, "n%zu", b);
                    assert_int_equal(erg_opsched_add_edge(g.os, x, y, NULL), ERG_OK);
                }
        erg_frontier sp, en;
        erg_frontier_options o;
        erg_frontier_options_init(&o);
        o.enum_limit = 0;
        assert_int_equal(erg_opsched_frontier(g.os, &o, &sp, NULL), ERG_OK);
        assert_int_equal(sp.method, ERG_FRONTIER_EXACT);
        checked_sp++;
        o.enum_limit = 1e6;
        o.dag_method = ERG_DAG_ENUMERATE;
        assert_int_equal(erg_opsched_frontier(g.os, &o, &en, NULL), ERG_OK);
        assert_int_equal(sp.n_points, en.n_points);
        for (size_t i = 0; i < sp.n_points; i++) {
            erg_assert_rel(sp.points[i].time_s, en.points[i].time_s, 1e-12);
            erg_assert_rel(sp.points[i].energy_j, en.points[i].energy_j, 1e-12);
            erg_assert_rel(sp.points[i].dynamic_energy_j, en.points[i].dynamic_energy_j, 1e-12);
        }
        /* ε-approximate: every exact point covered within (1 + ε) by a point no slower. */
        erg_frontier ap;
        o.dag_method = ERG_DAG_AUTO;
        o.enum_limit = 0;
        o.epsilon = 0.05;
        assert_int_equal(erg_opsched_frontier(g.os, &o, &ap, NULL), ERG_OK);
        assert_int_equal(ap.method, ERG_FRONTIER_APPROX);
        for (size_t i = 0; i < en.n_points; i++) {
            int covered = 0;
            for (size_t j = 0; j < ap.n_points && !covered; j++)
                covered = ap.points[j].time_s <= en.points[i].time_s * (1 + 1e-12) &&
                          ap.points[j].energy_j <= 1.05 * en.points[i].energy_j * (1 + 1e-12);
            assert_true(covered);
        }
        erg_frontier_free(&ap);
        erg_frontier_free(&sp);
        erg_frontier_free(&en);
        erg_opsched_free(g.os);
    }
    assert_int_equal(checked_sp, 40);

    /* N: a -> c, b -> c, b -> d. */
    erg_opsched *os = erg_opsched_new();
    const char *ids[] = {"a", "b", "c", "d"};
    for (int k = 0; k < 4; k++) {
        add(os, "E", "g", 1, 1, 2);
        assert_int_equal(erg_opsched_add_node(os, ids[k], "E", NULL), ERG_OK);
    }
    add(os, "E", "g", 1, 2, 1);
    assert_int_equal(erg_opsched_add_edge(os, "a", "c", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "b", "c", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "b", "d", NULL), ERG_OK);
    erg_frontier f;
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.enum_limit = 0;
    assert_int_equal(erg_opsched_frontier(os, &o, &f, NULL), ERG_OK);
    assert_int_equal(f.method, ERG_FRONTIER_RELAXATION);
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

/* ---- transition elements in DAGs (Section 6.1) ---- */

static void addw(erg_opsched *os, const char *el, const char *dev, double s, double t, double d,
                 const char *omega)
{
    erg_signature g = sig(dev, s, t, d);
    assert_int_equal(erg_opsched_add_point(os, el, &g, omega, NULL), ERG_OK);
}

/* One device, s = p = 1 W; n1 -> n2, each with (1 s, 5 J) at f=1 and (2 s, 1 J) at f=0.
 * Switches cost 5 s and 100 J (at 1 W: (1 − 1)·5 = 0 J static extra).
 * Plans: hi,hi M 2, E 2 + 10 = 12; lo,lo M 4, E 4 + 2 = 6; hi,lo M 1 + 5 + 2 = 8,
 * E 8 + 6 + 100 = 114; lo,hi likewise. Frontier (2, 12) (4, 6). Without the transition the mixed
 * plan (3 s, 3 + 6 = 9 J) is on the frontier. */
static void dag_transition_hand_case(void **state)
{
    (void)state;
    for (int with_tr = 0; with_tr < 2; with_tr++) {
        erg_opsched *os = erg_opsched_new();
        assert_int_equal(erg_opsched_add_device(os, "g", 1, NULL), ERG_OK);
        addw(os, "A", "g", 1, 1, 5, "{\"f\":1}");
        addw(os, "A", "g", 1, 2, 1, "{\"f\":0}");
        if (with_tr) {
            erg_signature tr = sig("g", 1, 5, 100);
            assert_int_equal(
                erg_opsched_add_transition(os, "g", "{\"f\":1}", "{\"f\":0}", &tr, NULL), ERG_OK);
            assert_int_equal(
                erg_opsched_add_transition(os, "g", "{\"f\":0}", "{\"f\":1}", &tr, NULL), ERG_OK);
        }
        assert_int_equal(erg_opsched_add_node(os, "n1", "A", NULL), ERG_OK);
        assert_int_equal(erg_opsched_add_node(os, "n2", "A", NULL), ERG_OK);
        assert_int_equal(erg_opsched_add_edge(os, "n1", "n2", NULL), ERG_OK);
        erg_frontier f;
        assert_int_equal(erg_opsched_frontier(os, NULL, &f, NULL), ERG_OK);
        assert_int_equal(f.method, ERG_FRONTIER_EXACT);
        assert_int_equal(f.n_points, with_tr ? 2 : 3);
        erg_assert_near(f.points[0].time_s, 2, 1e-12);
        erg_assert_near(f.points[0].energy_j, 12, 1e-12);
        if (!with_tr) {
            erg_assert_near(f.points[1].time_s, 3, 1e-12);
            erg_assert_near(f.points[1].energy_j, 9, 1e-12);
        }
        erg_assert_near(f.points[f.n_points - 1].time_s, 4, 1e-12);
        erg_assert_near(f.points[f.n_points - 1].energy_j, 6, 1e-12);
        erg_frontier_free(&f);
        /* A switch, when forced (n2 has only f=0 points), is charged: 1 + 5 + 2 s, 8 + 6 + 100 J
         * at the fast end; its static part is the device's 1 W over 8 s. */
        if (with_tr) {
            erg_opsched_free(os);
            os = erg_opsched_new();
            assert_int_equal(erg_opsched_add_device(os, "g", 1, NULL), ERG_OK);
            addw(os, "A", "g", 1, 1, 5, "{\"f\":1}");
            addw(os, "B", "g", 1, 2, 1, "{\"f\":0}");
            erg_signature tr = sig("g", 3, 5, 100); /* 3 W during the switch: +10 J static */
            assert_int_equal(
                erg_opsched_add_transition(os, "g", "{\"f\":1}", "{\"f\":0}", &tr, NULL), ERG_OK);
            assert_int_equal(erg_opsched_add_node(os, "n1", "A", NULL), ERG_OK);
            /* no edge: the device order serialises */
            assert_int_equal(erg_opsched_add_node(os, "n2", "B", NULL), ERG_OK);
            assert_int_equal(erg_opsched_frontier(os, NULL, &f, NULL), ERG_OK);
            assert_int_equal(f.n_points, 1);
            erg_assert_near(f.points[0].time_s, 8, 1e-12);
            erg_assert_near(f.points[0].energy_j, 8 + 6 + 100 + 10, 1e-12);
            erg_assert_near(f.points[0].dynamic_energy_j, 106, 1e-12);
            erg_assert_near(f.points[0].static_energy_j, 18, 1e-12);
            erg_frontier_free(&f);
            /* The relaxation refuses, naming the reason. */
            erg_frontier_options o;
            erg_frontier_options_init(&o);
            o.dag_method = ERG_DAG_RELAX;
            erg_diag diag;
            erg_diag_clear(&diag);
            assert_int_equal(erg_opsched_frontier(os, &o, &f, &diag), ERG_EINVAL);
            assert_non_null(strstr(diag.detail, "transition"));
            /* Edges against the declaration order of a device's nodes: error. */
            assert_int_equal(erg_opsched_add_edge(os, "n2", "n1", NULL), ERG_OK);
            erg_diag_clear(&diag);
            assert_int_equal(erg_opsched_frontier(os, NULL, &f, &diag), ERG_ECYCLE);
            assert_non_null(strstr(diag.detail, "declared"));
        }
        erg_opsched_free(os);
    }
}

struct tdag {
    struct rdag g;
    int om[MAXN][MAXP]; /* ω_dev of each point: 0, 1 or 2 */
    int has[3][3][3];   /* device, from, to: transition declared */
    double tt[3][3][3], td[3][3][3], ts[3][3][3];
};

/* Brute force with transitions: nodes in declaration order (topological, edges j < k); between
 * consecutive nodes of a device at different ω_dev with a declared transition, the second starts
 * no earlier than the first's end plus the transition's time, which adds d_tr + (s_tr − s_dev)·t_tr
 * (every device used is held at s_dev for the makespan). */
static void eval_tdag(const struct tdag *x, const size_t *c, double *M, double *E)
{
    const struct rdag *g = &x->g;
    double fin[MAXN], S = 0, D = 0, m = 0;
    int used[3] = {0};
    for (size_t k = 0; k < g->n; k++) {
        double st = 0;
        for (size_t e = 0; e < g->ne; e++)
            if (g->edge[e][1] == k && fin[g->edge[e][0]] > st)
                st = fin[g->edge[e][0]];
        for (size_t j = k; j-- > 0;)
            if (g->dev[j] == g->dev[k]) {
                size_t v = g->dev[k];
                int a = x->om[j][c[j]], b = x->om[k][c[k]];
                if (a != b && x->has[v][a][b]) {
                    if (fin[j] + x->tt[v][a][b] > st)
                        st = fin[j] + x->tt[v][a][b];
                    D += x->td[v][a][b] + (x->ts[v][a][b] - g->sdev[v]) * x->tt[v][a][b];
                }
                break;
            }
        fin[k] = st + g->t[k][c[k]];
        m = fin[k] > m ? fin[k] : m;
        D += g->d[k][c[k]];
        used[g->dev[k]] = 1;
    }
    for (int i = 0; i < 3; i++)
        S += used[i] ? g->sdev[i] : 0;
    *M = m;
    *E = S * m + D;
}

static void random_dags_with_transitions_against_brute_force(void **state)
{
    (void)state;
    size_t n_charged = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        rng_state = seed * 0x2545F4914F6CDD1Dull + 11;
        struct tdag x;
        memset(&x, 0, sizeof x);
        struct rdag *g = &x.g;
        g->n = 2 + (size_t)(urand() * 5);
        size_t ndev = 1 + (size_t)(urand() * 2) % 2;
        for (int i = 0; i < 3; i++)
            g->sdev[i] = 1 + 5 * urand();
        erg_opsched *os = erg_opsched_new();
        for (size_t i = 0; i < ndev; i++) {
            char id[32];
            snprintf(id, sizeof id, "d%zu", i);
            assert_int_equal(erg_opsched_add_device(os, id, g->sdev[i], NULL), ERG_OK);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    if (a == b || urand() < 0.3)
                        continue;
                    char fa[32], fb[32];
                    snprintf(fa, sizeof fa, "{\"f\":%d}", a);
                    snprintf(fb, sizeof fb, "{\"f\":%d}", b);
                    x.has[i][a][b] = 1;
                    x.tt[i][a][b] = 0.5 * urand();
                    x.td[i][a][b] = 4 * urand();
                    x.ts[i][a][b] = 6 * urand();
                    erg_signature tr = sig(id, x.ts[i][a][b], x.tt[i][a][b], x.td[i][a][b]);
                    assert_int_equal(erg_opsched_add_transition(os, id, fa, fb, &tr, NULL), ERG_OK);
                }
        }
        for (size_t k = 0; k < g->n; k++) {
            char el[32], id[32], dv[32];
            snprintf(el, sizeof el, "E%zu", k);
            snprintf(id, sizeof id, "n%zu", k);
            g->dev[k] = (size_t)(urand() * (double)ndev) % ndev;
            snprintf(dv, sizeof dv, "d%zu", g->dev[k]);
            g->np[k] = 1 + (size_t)(urand() * MAXP) % MAXP;
            for (size_t p = 0; p < g->np[k]; p++) {
                char om[32];
                x.om[k][p] = (int)(urand() * 3) % 3;
                snprintf(om, sizeof om, "{\"f\":%d}", x.om[k][p]);
                g->t[k][p] = 0.2 + 2 * urand();
                g->d[k][p] = 10 * urand();
                addw(os, el, dv, g->sdev[g->dev[k]], g->t[k][p], g->d[k][p], om);
            }
            assert_int_equal(erg_opsched_add_node(os, id, el, NULL), ERG_OK);
            for (size_t j = 0; j < k; j++)
                if (urand() < 0.35 && g->ne < 32) {
                    char a[32];
                    snprintf(a, sizeof a, "n%zu", j);
                    g->edge[g->ne][0] = j;
                    g->edge[g->ne][1] = k;
                    g->ne++;
                    assert_int_equal(erg_opsched_add_edge(os, a, id, NULL), ERG_OK);
                }
        }
        size_t total = 1;
        for (size_t k = 0; k < g->n; k++)
            total *= g->np[k];
        double *T = malloc(total * sizeof *T), *E = malloc(total * sizeof *E);
        double *T0 = malloc(total * sizeof *T0), *E0 = malloc(total * sizeof *E0);
        size_t *idx = malloc(total * sizeof *idx), nk, nk0, c[MAXN];
        struct tdag none = x;
        memset(none.has, 0, sizeof none.has);
        for (size_t i = 0; i < total; i++) {
            size_t r = i;
            for (size_t k = 0; k < g->n; k++) {
                c[k] = r % g->np[k];
                r /= g->np[k];
            }
            eval_tdag(&x, c, &T[i], &E[i]);
            eval_tdag(&none, c, &T0[i], &E0[i]);
        }
        assert_int_equal(erg_pareto_min(T0, E0, total, idx, &nk0), ERG_OK);
        double area0 = 0;
        for (size_t i = 0; i < nk0; i++)
            area0 += E0[idx[i]] * (double)(i + 1) + T0[idx[i]];
        assert_int_equal(erg_pareto_min(T, E, total, idx, &nk), ERG_OK);
        double area = 0;
        for (size_t i = 0; i < nk; i++)
            area += E[idx[i]] * (double)(i + 1) + T[idx[i]];
        if (nk != nk0 || area != area0)
            n_charged++; /* the transitions changed the frontier */
        for (int mth = 0; mth < 2; mth++) {
            erg_frontier f;
            erg_frontier_options o;
            erg_frontier_options_init(&o);
            o.dag_method = mth ? ERG_DAG_AUTO : ERG_DAG_ENUMERATE;
            assert_int_equal(erg_opsched_frontier(os, &o, &f, NULL), ERG_OK);
            assert_int_equal(f.method, ERG_FRONTIER_EXACT);
            assert_int_equal(f.n_points, nk);
            for (size_t i = 0; i < nk; i++) {
                erg_assert_rel(f.points[i].time_s, T[idx[i]], 1e-12);
                erg_assert_rel(f.points[i].energy_j, E[idx[i]], 1e-12);
                /* The reported choice is a real plan with this (T, E). */
                double MM, EE;
                for (size_t k = 0; k < g->n; k++)
                    c[k] = f.choices[i * f.n_elements + k];
                eval_tdag(&x, c, &MM, &EE);
                erg_assert_rel(f.points[i].time_s, MM, 1e-12);
                erg_assert_rel(f.points[i].energy_j, EE, 1e-12);
            }
            erg_frontier_free(&f);
        }
        free(T);
        free(E);
        free(T0);
        free(E0);
        free(idx);
        erg_opsched_free(os);
    }
    assert_true(n_charged >= 30); /* transitions mattered in many cases */
}

static void cycles_and_limits_are_errors(void **state)
{
    (void)state;
    erg_opsched *os = erg_opsched_new();
    add(os, "A", "g", 1, 1, 1);
    assert_int_equal(erg_opsched_add_node(os, "x", "A", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_node(os, "y", "A", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "x", "y", NULL), ERG_OK);
    assert_int_equal(erg_opsched_add_edge(os, "y", "x", NULL), ERG_OK);
    erg_frontier f;
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_opsched_frontier(os, NULL, &f, &diag), ERG_ECYCLE);
    assert_non_null(strstr(diag.detail, "cycle"));
    erg_opsched_free(os);

    os = erg_opsched_new();
    for (int p = 0; p < 10; p++)
        add(os, "A", "g", 1, 1 + p, 10 - p);
    for (int k = 0; k < 7; k++) {
        char id[32];
        snprintf(id, sizeof id, "n%d", k);
        assert_int_equal(erg_opsched_add_node(os, id, "A", NULL), ERG_OK);
    }
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.dag_method = ERG_DAG_ENUMERATE;
    assert_int_equal(erg_opsched_frontier(os, &o, &f, &diag), ERG_EINVAL);
    assert_non_null(strstr(diag.detail, "above the limit"));
    erg_opsched_free(os);
    assert_int_equal(erg_opsched_add_edge(NULL, "a", "b", NULL), ERG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dag_enumeration_hand_case),
        cmocka_unit_test(relaxation_reports_its_gap),
        cmocka_unit_test(random_dags_enumeration_and_relaxation_against_brute_force),
        cmocka_unit_test(series_parallel_dag_equals_expression),
        cmocka_unit_test(series_parallel_dags_are_exact_at_any_size),
        cmocka_unit_test(cycles_and_limits_are_errors),
        cmocka_unit_test(dag_transition_hand_case),
        cmocka_unit_test(random_dags_with_transitions_against_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
