/* SPDX-License-Identifier: MIT */
/*
 * Property tests over random signatures and schedules (paper Section 5.1): ⊕ and ⊕multi commute,
 * all three operators associate, ⊗ over ⊕ differs by exactly d1 (Property 5.4), monotonicity in
 * the context-independent algebra (Corollary 5.2); a series-parallel DAG composes to the same
 * figures as its expression tree; the DAG's makespan variance against Monte Carlo.
 */
#include "support/erg_test.h"
#include "core/splitmix.h"
#include "support/erg_tmp.h"

#include "erg/calculus.h"
#include "erg/stats.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_state = 0x12345678u;

static double urand(void)
{
    return erg__splitmix_unit(&rng_state);
}

static double uniform(double a, double b)
{
    return a + (b - a) * urand();
}

/* A random measured signature on dev with static power s (Axiom M1 holds). */
static erg_signature rsig(const char *dev, double s)
{
    erg_signature g;
    erg_signature_init(&g);
    snprintf(g.device, sizeof g.device, "%s", dev);
    g.static_power_w = s;
    g.time_s = uniform(0.1, 3.0);
    g.dynamic_energy_j = uniform(0.0, 50.0);
    g.time_var_s2 = uniform(0.0, 0.05) * g.time_s * g.time_s;
    g.energy_var_j2 = s * s * g.time_var_s2 + uniform(0.0, 4.0);
    g.grade = (erg_grade)(urand() * 3);
    return g;
}

static double energy(const erg_signature *g)
{
    return erg_signature_energy_j(g);
}

static erg_signature op2(int (*f)(const erg_signature *, size_t, erg_signature *, erg_diag *),
                         erg_signature a, erg_signature b)
{
    erg_signature ops[2] = {a, b}, r;
    erg_diag d;
    if (f(ops, 2, &r, &d) != ERG_OK)
        fail_msg("operator failed: %s", d.detail);
    return r;
}

static erg_signature op3(int (*f)(const erg_signature *, size_t, erg_signature *, erg_diag *),
                         erg_signature a, erg_signature b, erg_signature c)
{
    erg_signature ops[3] = {a, b, c}, r;
    erg_diag d;
    if (f(ops, 3, &r, &d) != ERG_OK)
        fail_msg("operator failed: %s", d.detail);
    return r;
}

/* Property 5.1: ⊕ and ⊕multi commute, in energy and in every variance. */
static void parallel_operators_commute(void **state)
{
    (void)state;
    for (int it = 0; it < 500; it++) {
        double s = uniform(10, 300);
        erg_signature a = rsig("g", s), b = rsig("g", s);
        erg_signature ab = op2(erg_signature_par, a, b), ba = op2(erg_signature_par, b, a);
        erg_assert_rel(energy(&ab), energy(&ba), 1e-14);
        erg_assert_near(ab.energy_var_j2, ba.energy_var_j2, 1e-12 * ab.energy_var_j2 + 1e-300);
        erg_assert_near(ab.time_var_s2, ba.time_var_s2, 1e-12 * ab.time_var_s2 + 1e-300);
        erg_signature x = rsig("g0", uniform(10, 300)), y = rsig("g1", uniform(10, 300));
        erg_signature xy = op2(erg_signature_multi, x, y), yx = op2(erg_signature_multi, y, x);
        erg_assert_rel(energy(&xy), energy(&yx), 1e-14);
        erg_assert_near(xy.energy_var_j2, yx.energy_var_j2, 1e-12 * xy.energy_var_j2 + 1e-300);
        /* Corollary 5.1: ⊗ commutes in the context-independent algebra. */
        erg_signature p = op2(erg_signature_seq, x, y), q = op2(erg_signature_seq, y, x);
        erg_assert_rel(energy(&p), energy(&q), 1e-14);
    }
}

/* Property 5.2: all three associate. Energy, time and dynamic energy agree exactly; the n-ary form
 * equals every grouping's point values, and the nested (moment-matched) variance stays close to
 * the n-ary (exact for independent Gaussians) one. */
static void operators_associate(void **state)
{
    (void)state;
    for (int it = 0; it < 300; it++) {
        double s = uniform(10, 300);
        erg_signature a = rsig("g", s), b = rsig("g", s), c = rsig("g", s);
        erg_signature l = op2(erg_signature_seq, op2(erg_signature_seq, a, b), c);
        erg_signature r = op2(erg_signature_seq, a, op2(erg_signature_seq, b, c));
        erg_assert_rel(energy(&l), energy(&r), 1e-13);
        erg_assert_rel(l.energy_var_j2, r.energy_var_j2, 1e-13);
        erg_assert_rel(l.time_s, r.time_s, 1e-14);

        int (*ops[2])(const erg_signature *, size_t, erg_signature *,
                      erg_diag *) = {erg_signature_par, erg_signature_multi};
        for (int k = 0; k < 2; k++) {
            if (k == 1) {
                a = rsig("g0", uniform(10, 300));
                b = rsig("g1", uniform(10, 300));
                c = rsig("g2", uniform(10, 300));
            }
            erg_signature L = op2(ops[k], op2(ops[k], a, b), c);
            erg_signature R = op2(ops[k], a, op2(ops[k], b, c));
            erg_signature N = op3(ops[k], a, b, c), N2 = op3(ops[k], c, a, b);
            erg_assert_rel(energy(&L), energy(&R), 1e-13);
            erg_assert_rel(energy(&L), energy(&N), 1e-13);
            erg_assert_rel(L.time_s, N.time_s, 1e-14);
            erg_assert_rel(L.dynamic_energy_j, N.dynamic_energy_j, 1e-13);
            erg_assert_rel(N.energy_var_j2, N2.energy_var_j2, 1e-7); /* n-ary: no grouping */
        }
    }
    /* The n-ary Var(max) is exact for independent Gaussian times: check it by sampling. */
    for (int it = 0; it < 5; it++) {
        erg_signature ops[3];
        for (int i = 0; i < 3; i++)
            ops[i] = rsig("g", 100);
        ops[1].time_s = ops[0].time_s + uniform(-0.2, 0.2);
        ops[2].time_s = ops[0].time_s + uniform(-0.2, 0.2);
        erg_signature n3;
        assert_int_equal(erg_signature_par(ops, 3, &n3, NULL), ERG_OK);
        erg_running run = {0};
        for (int k = 0; k < 200000; k++) {
            double mx = -HUGE_VAL;
            for (int i = 0; i < 3; i++) {
                double u1 = urand(), u2 = urand();
                double z = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
                double t = ops[i].time_s + sqrt(ops[i].time_var_s2) * z;
                mx = t > mx ? t : mx;
            }
            erg_running_add(&run, mx);
        }
        erg_assert_rel(n3.time_var_s2, erg_running_var(&run), 0.03);
    }
}

/* Property 5.4: (e1 ⊗ e2) ⊕ (e1 ⊗ e3) − e1 ⊗ (e2 ⊕ e3) = d1 exactly (one device, one s). */
static void seq_over_par_differs_by_d1(void **state)
{
    (void)state;
    for (int it = 0; it < 500; it++) {
        double s = uniform(10, 300);
        erg_signature e1 = rsig("g", s), e2 = rsig("g", s), e3 = rsig("g", s);
        erg_signature lhs =
            op2(erg_signature_par, op2(erg_signature_seq, e1, e2), op2(erg_signature_seq, e1, e3));
        erg_signature rhs = op2(erg_signature_seq, e1, op2(erg_signature_par, e2, e3));
        erg_assert_near(energy(&lhs) - energy(&rhs), e1.dynamic_energy_j, 1e-10 * energy(&lhs));
        erg_assert_near(lhs.time_s, rhs.time_s, 1e-12); /* same makespan: static terms coincide */
    }
}

/* Random expression trees for monotonicity: leaves on devices g0..g2 with per-device static power.
 */
enum { T_LEAF, T_SEQ, T_PAR, T_MULTI };
struct tnode {
    int kind, n, kids[4];
    int in_par; /* a leaf under a par: its static power is its device's, shared */
    erg_signature leaf;
};
static struct tnode tree[4096];
static int n_tree;
static const double dev_s[3] = {40, 75, 120};
static const char *const dev_name[3] = {"g0", "g1", "g2"};

/* dev < 0: free context (multi over distinct devices allowed); else every leaf on dev. */
static int gen(int depth, int dev, int in_par)
{
    int me = n_tree++;
    struct tnode *t = &tree[me];
    double r = urand();
    t->in_par = in_par;
    if (depth == 0 || r < 0.25) {
        int d = dev >= 0 ? dev : (int)(urand() * 3);
        t->kind = T_LEAF;
        t->leaf = rsig(dev_name[d], dev_s[d]);
        return me;
    }
    if (dev < 0 && r < 0.5) {
        t->kind = T_MULTI;
        t->n = 2 + (int)(urand() * 2);
        int first = (int)(urand() * 3);
        for (int i = 0; i < t->n; i++) {
            int k = gen(depth - 1, (first + i) % 3, in_par);
            tree[me].kids[i] = k;
        }
        return me;
    }
    t->kind = dev >= 0 && r < 0.6 ? T_PAR : T_SEQ;
    t->n = 2 + (int)(urand() * 2);
    for (int i = 0; i < t->n; i++) {
        int k = gen(depth - 1, dev, in_par || tree[me].kind == T_PAR);
        tree[me].kids[i] = k;
    }
    return me;
}

static erg_signature eval_tree(int i)
{
    const struct tnode *t = &tree[i];
    if (t->kind == T_LEAF)
        return t->leaf;
    erg_signature ops[4], r;
    for (int k = 0; k < t->n; k++)
        ops[k] = eval_tree(t->kids[k]);
    erg_diag d;
    int rc = t->kind == T_SEQ   ? erg_signature_seq(ops, (size_t)t->n, &r, &d)
             : t->kind == T_PAR ? erg_signature_par(ops, (size_t)t->n, &r, &d)
                                : erg_signature_multi(ops, (size_t)t->n, &r, &d);
    if (rc != ERG_OK)
        fail_msg("tree evaluation: %s", d.detail);
    return r;
}

/* Corollary 5.2: replacing an element by one with no smaller s, T and d never decreases the
 * energy of any composition containing it (s only where no par shares it: a par's operands share
 * their device's single static power, Axiom P2). */
static void monotone_in_the_context_independent_algebra(void **state)
{
    (void)state;
    for (int it = 0; it < 400; it++) {
        n_tree = 0;
        gen(4, -1, 0);
        erg_signature base = eval_tree(0);
        double before = energy(&base);
        int leaf;
        do
            leaf = (int)(urand() * n_tree);
        while (tree[leaf].kind != T_LEAF);
        erg_signature saved = tree[leaf].leaf;
        tree[leaf].leaf.time_s += urand() < 0.5 ? 0.0 : uniform(0.0, 1.0);
        tree[leaf].leaf.dynamic_energy_j += urand() < 0.5 ? 0.0 : uniform(0.0, 10.0);
        if (!tree[leaf].in_par && urand() < 0.5) {
            double w = tree[leaf].leaf.static_power_w;
            tree[leaf].leaf.static_power_w += uniform(0.0, 50.0);
            tree[leaf].leaf.energy_var_j2 +=
                (tree[leaf].leaf.static_power_w * tree[leaf].leaf.static_power_w - w * w) *
                tree[leaf].leaf.time_var_s2; /* keep Axiom M1 */
        }
        erg_signature after = eval_tree(0);
        if (!(energy(&after) >= before - 1e-12 * before))
            fail_msg("energy decreased from %.17g to %.17g", before, energy(&after));
        tree[leaf].leaf = saved;
    }
}

/* ---- series-parallel DAG == its expression tree ---------------------------------------- */

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tmpdir, sizeof tmpdir, "props");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tmpdir);
}

struct buf {
    char *p;
    size_t len, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    if (!b->p) { /* start with a buffer, so vsnprintf never sees NULL */
        b->cap = 256;
        b->p = malloc(b->cap);
        assert_non_null(b->p);
        b->len = 0;
    }
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = 2 * b->cap + (size_t)n + 1;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

/* Canonical SP trees on one device: par operands are leaves or seqs, seq operands leaves or pars.
 */
static int gen_sp(int depth, int dev, int parent_kind)
{
    int me = n_tree++;
    struct tnode *t = &tree[me];
    if (depth == 0 || urand() < 0.3) {
        t->kind = T_LEAF;
        t->leaf = rsig(dev_name[dev], dev_s[dev]);
        return me;
    }
    t->kind = parent_kind == T_SEQ   ? T_PAR
              : parent_kind == T_PAR ? T_SEQ
                                     : (urand() < 0.5 ? T_SEQ : T_PAR);
    t->n = 2 + (int)(urand() * 2);
    for (int i = 0; i < t->n; i++) {
        int k = gen_sp(depth - 1, dev, tree[me].kind);
        tree[me].kids[i] = k;
    }
    return me;
}

static void expr_json(struct buf *b, int i)
{
    const struct tnode *t = &tree[i];
    if (t->kind == T_LEAF) {
        bprintf(b, "\"s%d\"", i);
        return;
    }
    bprintf(b, "{\"%s\": [", t->kind == T_SEQ ? "seq" : t->kind == T_PAR ? "par" : "multi");
    for (int k = 0; k < t->n; k++) {
        if (k)
            bprintf(b, ", ");
        expr_json(b, t->kids[k]);
    }
    bprintf(b, "]}");
}

/* Add node(s) for tree i after the nodes in preds; return its sinks in sinks (count). */
static int dag_build(erg_schedule *s, int i, const int *preds, int np, int *sinks)
{
    const struct tnode *t = &tree[i];
    char id[32], from[32];
    if (t->kind == T_LEAF) {
        snprintf(id, sizeof id, "s%d", i);
        assert_int_equal(erg_schedule_add_node(s, id, id, NULL, NAN, NULL), ERG_OK);
        for (int k = 0; k < np; k++) {
            snprintf(from, sizeof from, "s%d", preds[k]);
            assert_int_equal(erg_schedule_add_edge(s, from, id, NULL), ERG_OK);
        }
        sinks[0] = i;
        return 1;
    }
    if (t->kind == T_SEQ) {
        int cur[256], nc = np;
        if (np > 0)
            memcpy(cur, preds, (size_t)np * sizeof *preds);
        for (int k = 0; k < t->n; k++) {
            int out[256];
            int no = dag_build(s, t->kids[k], cur, nc, out);
            memcpy(cur, out, (size_t)no * sizeof *out);
            nc = no;
        }
        memcpy(sinks, cur, (size_t)nc * sizeof *cur);
        return nc;
    }
    int total = 0;
    for (int k = 0; k < t->n; k++)
        total += dag_build(s, t->kids[k], preds, np, sinks + total);
    return total;
}

static void sp_dag_equals_its_expression(void **state)
{
    (void)state;
    for (int it = 0; it < 150; it++) {
        n_tree = 0;
        /* Root: a multi over 1-3 devices whose operands are leaves or seqs (device timelines). */
        int ndev = 1 + (int)(urand() * 3);
        int root = n_tree++;
        tree[root].kind = T_MULTI;
        tree[root].n = ndev;
        for (int d = 0; d < ndev; d++) {
            int k = gen_sp(4, d, T_PAR); /* as under a par: a leaf or a seq */
            tree[root].kids[d] = k;
        }
        struct buf b = {0};
        bprintf(&b, "{\"erg\": \"schedule/1\", \"devices\": {");
        for (int d = 0; d < 3; d++)
            bprintf(&b, "%s\"%s\": {\"static_power_w\": %.17g}", d ? ", " : "", dev_name[d],
                    dev_s[d]);
        bprintf(&b, "}, \"signatures\": {");
        int first = 1;
        erg_schedule *dag = erg_schedule_new();
        for (int d = 0; d < 3; d++)
            assert_int_equal(erg_schedule_add_device(dag, dev_name[d], dev_s[d], NAN, NULL),
                             ERG_OK);
        for (int i = 0; i < n_tree; i++) {
            if (tree[i].kind != T_LEAF)
                continue;
            const erg_signature *g = &tree[i].leaf;
            bprintf(
                &b,
                "%s\"s%d\": {\"device\": \"%s\", \"time_s\": %.17g, \"dynamic_energy_j\": %.17g, "
                "\"time_var_s2\": %.17g, \"energy_var_j2\": %.17g}",
                first ? "" : ", ", i, g->device, g->time_s, g->dynamic_energy_j, g->time_var_s2,
                g->energy_var_j2);
            first = 0;
            erg_signature named = *g;
            snprintf(named.name, sizeof named.name, "s%d", i);
            named.grade = ERG_GRADE_HW_SHUNT;
            assert_int_equal(erg_schedule_add_signature(dag, &named, NULL), ERG_OK);
        }
        bprintf(&b, "}, \"expr\": ");
        expr_json(&b, root);
        bprintf(&b, "}\n");
        char path[512];
        snprintf(path, sizeof path, "%s/sp.json", tmpdir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(b.p, f);
        fclose(f);
        free(b.p);
        int sinks[256];
        for (int d = 0; d < ndev; d++)
            dag_build(dag, tree[root].kids[d], NULL, 0, sinks);

        erg_schedule *ex = NULL;
        erg_diag diag;
        assert_int_equal(erg_schedule_read_file(path, &ex, &diag), ERG_OK);
        erg_report re, rd;
        if (erg_schedule_compose(ex, NULL, &re, &diag) != ERG_OK)
            fail_msg("expr: %s", diag.detail);
        if (erg_schedule_compose(dag, NULL, &rd, &diag) != ERG_OK)
            fail_msg("dag: %s", diag.detail);
        erg_assert_rel(rd.energy_j, re.energy_j, 1e-12);
        erg_assert_rel(rd.time_s, re.time_s, 1e-12);
        erg_assert_rel(rd.static_energy_j, re.static_energy_j, 1e-12);
        erg_assert_rel(rd.dynamic_energy_j, re.dynamic_energy_j, 1e-12);
        erg_assert_rel(rd.time_sd_s, re.time_sd_s, 1e-6);
        erg_assert_rel(rd.energy_sd_j, re.energy_sd_j, 1e-6);
        /* The DAG sees which elements really overlap; the expression counts every operand of a
         * parallel operator as co-running: the DAG's bias bound is never larger. */
        assert_true(rd.bias_bound_j <= re.bias_bound_j * (1 + 1e-12));
        assert_int_equal(rd.n_devices, re.n_devices);
        for (size_t d = 0; d < rd.n_devices; d++) {
            assert_string_equal(rd.devices[d].id, re.devices[d].id);
            erg_assert_rel(rd.devices[d].static_energy_j, re.devices[d].static_energy_j, 1e-9);
            erg_assert_rel(rd.devices[d].busy_s, re.devices[d].busy_s, 1e-9);
        }
        erg_report_free(&re);
        erg_report_free(&rd);
        erg_schedule_free(ex);
        erg_schedule_free(dag);
    }
}

/* ---- makespan variance against Monte Carlo --------------------------------------------- */

static erg_schedule *random_dag(int n, int layers, double edge_p, int ndev)
{
    erg_schedule *s = erg_schedule_new();
    char id[32], from[32];
    for (int d = 0; d < ndev; d++) {
        snprintf(id, sizeof id, "d%d", d);
        assert_int_equal(erg_schedule_add_device(s, id, 50.0 + 10 * d, NAN, NULL), ERG_OK);
    }
    int per = n / layers;
    for (int i = 0; i < n; i++) {
        erg_signature g;
        erg_signature_init(&g);
        snprintf(g.name, sizeof g.name, "e%d", i);
        snprintf(g.device, sizeof g.device, "d%d", i % ndev);
        g.static_power_w = 50.0 + 10 * (i % ndev);
        g.time_s = uniform(0.5, 2.0);
        g.dynamic_energy_j = uniform(1, 20);
        g.time_var_s2 = 0.04 * g.time_s * g.time_s;
        g.energy_var_j2 = g.static_power_w * g.static_power_w * g.time_var_s2 + uniform(0, 2);
        assert_int_equal(erg_schedule_add_signature(s, &g, NULL), ERG_OK);
        assert_int_equal(erg_schedule_add_node(s, g.name, g.name, NULL, NAN, NULL), ERG_OK);
        int layer = i / per;
        if (layer == 0)
            continue;
        int linked = 0;
        for (int j = (layer - 1) * per; j < layer * per; j++)
            if (urand() < edge_p || (!linked && j == layer * per - 1)) {
                snprintf(from, sizeof from, "e%d", j);
                assert_int_equal(erg_schedule_add_edge(s, from, g.name, NULL), ERG_OK);
                linked = 1;
            }
    }
    return s;
}

static void dag_variance_matches_monte_carlo(void **state)
{
    (void)state;
    /* Series-parallel shapes (a chain; layers joined all-to-all): the propagation is Clark's
     * moment matching along the expression tree, within a few percent of Monte Carlo. */
    static const struct {
        int n, layers;
    } sp[] = {{12, 12}, {24, 3}, {30, 5}};
    for (size_t c = 0; c < sizeof sp / sizeof sp[0]; c++) {
        erg_schedule *s = random_dag(sp[c].n, sp[c].layers, 1.0, 3);
        erg_compose_options o;
        erg_compose_options_init(&o);
        o.mc_samples = 20000;
        o.mc_seed = 42 + c;
        erg_report r;
        erg_diag d;
        assert_int_equal(erg_schedule_compose(s, &o, &r, &d), ERG_OK);
        assert_true(r.has_mc);
        printf("  series-parallel %zu: sd_T %.5g (propagated) vs %.5g (Monte Carlo); sd_E %.5g vs "
               "%.5g\n",
               c, r.time_sd_s, r.mc_time_sd_s, r.energy_sd_j, r.mc_energy_sd_j);
        erg_assert_rel(r.time_sd_s, r.mc_time_sd_s, 0.04);
        erg_assert_rel(r.energy_sd_j, r.mc_energy_sd_j, 0.04);
        /* E[max] ≥ max of means: the Monte Carlo mean makespan is not below the point value. */
        assert_true(r.mc_time_s >= r.time_s - 3 * r.mc_time_sd_s / sqrt(20000.0));
        erg_report_free(&r);
        erg_schedule_free(s);
    }
    /* Random layered DAGs (not series-parallel): correlations off the tree of shared events are
     * neglected. Over 20 DAGs the relative error of sd_T stays small on average (measured: rms
     * about 5-8 %, worst about 20 % over 30 DAGs of each of several shapes). */
    double sum2 = 0.0, worst = 0.0;
    for (int k = 0; k < 20; k++) {
        erg_schedule *s = random_dag(40, 8, 0.3, 3);
        erg_compose_options o;
        erg_compose_options_init(&o);
        o.mc_samples = 5000;
        o.mc_seed = 100 + (uint64_t)k;
        erg_report r;
        erg_diag d;
        assert_int_equal(erg_schedule_compose(s, &o, &r, &d), ERG_OK);
        double e = r.time_sd_s / r.mc_time_sd_s - 1.0;
        sum2 += e * e;
        worst = fabs(e) > fabs(worst) ? e : worst;
        erg_report_free(&r);
        erg_schedule_free(s);
    }
    printf("  random layered DAGs: rms relative error of sd_T %.3f, worst %+.3f\n", sqrt(sum2 / 20),
           worst);
    assert_true(sqrt(sum2 / 20) < 0.10);
    assert_true(fabs(worst) < 0.30);
}

/* Monte Carlo of the expression form agrees with the propagated figures for the paper's example. */
static void expression_monte_carlo(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/pipeline-2gpu.json", ERG_TEST_SOURCE_DIR);
    erg_schedule *s = NULL;
    erg_diag d;
    assert_int_equal(erg_schedule_read_file(path, &s, &d), ERG_OK);
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.mc_samples = 40000;
    erg_report r;
    assert_int_equal(erg_schedule_compose(s, &o, &r, &d), ERG_OK);
    erg_assert_rel(r.mc_energy_sd_j, r.energy_sd_j, 0.05);
    erg_assert_rel(r.mc_time_sd_s, r.time_sd_s, 0.05);
    erg_assert_near(r.mc_energy_j, r.energy_j, 0.01 * r.energy_j);
    erg_report_free(&r);
    erg_schedule_free(s);
}

/* One Monte Carlo path: a schedule written as an expression and as the equivalent DAG draws the
 * same elements in the same order from the same seed, so the two Monte Carlo results agree to
 * rounding; both agree with the propagated mean and sd. multi(e@d1, f@d2, seq(a, b, c)@d0): the
 * expression's leaves depth first are e, f, a, b, c, the DAG's topological order is the same, and
 * both charge (s0 + s1 + s2) over the makespan plus the dynamic energies. */
static void monte_carlo_one_path(void **state)
{
    (void)state;
    static const char *const head =
        "{\"erg\": \"schedule/1\", \"devices\": {\"d0\": {\"static_power_w\": 40}, "
        "\"d1\": {\"static_power_w\": 55}, \"d2\": {\"static_power_w\": 70}}, \"signatures\": {"
        "\"a\": {\"device\": \"d0\", \"time_s\": 1.0, \"dynamic_energy_j\": 30, "
        "\"time_var_s2\": 0.01, \"energy_var_j2\": 20},"
        "\"b\": {\"device\": \"d0\", \"time_s\": 0.5, \"dynamic_energy_j\": 12, "
        "\"time_var_s2\": 0.0025, \"energy_var_j2\": 6},"
        "\"c\": {\"device\": \"d0\", \"time_s\": 0.8, \"dynamic_energy_j\": 25, "
        "\"time_var_s2\": 0.0064, \"energy_var_j2\": 14},"
        "\"e\": {\"device\": \"d1\", \"time_s\": 2.1, \"dynamic_energy_j\": 60, "
        "\"time_var_s2\": 0.04, \"energy_var_j2\": 130},"
        "\"f\": {\"device\": \"d2\", \"time_s\": 1.9, \"dynamic_energy_j\": 45, "
        "\"time_var_s2\": 0.03, \"energy_var_j2\": 160}},\n";
    const char *body[2] = {
        "\"expr\": {\"multi\": [\"e\", \"f\", {\"seq\": [\"a\", \"b\", \"c\"]}]}}\n",
        "\"nodes\": [{\"id\": \"e\", \"signature\": \"e\"}, {\"id\": \"f\", \"signature\": \"f\"}, "
        "{\"id\": \"a\", \"signature\": \"a\"}, {\"id\": \"b\", \"signature\": \"b\"}, "
        "{\"id\": \"c\", \"signature\": \"c\"}], \"edges\": [[\"a\", \"b\"], [\"b\", \"c\"]]}\n"};
    erg_report r[2];
    for (int k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/one-path-%d.json", tmpdir, k);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(head, f);
        fputs(body[k], f);
        fclose(f);
        erg_schedule *s = NULL;
        erg_diag d;
        if (erg_schedule_read_file(path, &s, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        erg_compose_options o;
        erg_compose_options_init(&o);
        o.mc_samples = 40000;
        o.mc_seed = 11;
        if (erg_schedule_compose(s, &o, &r[k], &d) != ERG_OK)
            fail_msg("compose: %s", d.detail);
        erg_schedule_free(s);
        /* The propagated figures: E and T as the point values; sd within Monte Carlo's error
         * (and Clark's moment matching at the one 3-way max). */
        erg_assert_rel(r[k].mc_time_sd_s, r[k].time_sd_s, 0.04);
        erg_assert_rel(r[k].mc_energy_sd_j, r[k].energy_sd_j, 0.04);
        erg_assert_near(r[k].mc_energy_j, r[k].energy_j, 0.01 * r[k].energy_j);
        assert_true(r[k].mc_time_s >= r[k].time_s - 4 * r[k].mc_time_sd_s / sqrt(40000.0));
    }
    /* The same draws: equal to rounding (a fresh seed gives other figures). */
    erg_assert_rel(r[1].time_s, r[0].time_s, 1e-12);
    erg_assert_rel(r[1].energy_j, r[0].energy_j, 1e-12);
    erg_assert_rel(r[1].mc_time_s, r[0].mc_time_s, 1e-12);
    erg_assert_rel(r[1].mc_time_sd_s, r[0].mc_time_sd_s, 1e-9);
    erg_assert_rel(r[1].mc_energy_j, r[0].mc_energy_j, 1e-12);
    erg_assert_rel(r[1].mc_energy_sd_j, r[0].mc_energy_sd_j, 1e-9);
    erg_report_free(&r[0]);
    erg_report_free(&r[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parallel_operators_commute),
        cmocka_unit_test(operators_associate),
        cmocka_unit_test(seq_over_par_differs_by_d1),
        cmocka_unit_test(monotone_in_the_context_independent_algebra),
        cmocka_unit_test(sp_dag_equals_its_expression),
        cmocka_unit_test(dag_variance_matches_monte_carlo),
        cmocka_unit_test(expression_monte_carlo),
        cmocka_unit_test(monte_carlo_one_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
