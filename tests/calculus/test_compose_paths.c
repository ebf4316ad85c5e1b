/* SPDX-License-Identifier: MIT */
/*
 * DAG composition's fast paths against its general ones, bit for bit, on random DAGs: the common
 * ancestor and keys of a join in one walk per operand (keys_fast) against the step-by-step lca
 * fold and key walks, and the bucket sort of starts against the radix sort. The private probe
 * (calculus/schedule_impl.h) switches the fast paths off and counts which paths ran, so that each
 * shape below is known to reach the path it is meant for (walks cut off at the cap, joins wider
 * than the fast path takes, fixed starts, starts that all coincide). Also composition in a
 * caller's workspace (erg_compose_workspace) against composition in a call's own memory, bit for
 * bit, with one workspace reused across DAGs of growing and shrinking size, an expression
 * schedule and a failing one.
 */
#include "support/erg_test.h"
#include "core/splitmix.h"

#include "calculus/schedule_impl.h"
#include "erg/calculus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEVICES = 3, SIGS = 12 };

/* A schedule with DEVICES devices and SIGS signatures per device (some without variance). */
static erg_schedule *new_schedule(uint64_t *st)
{
    erg_schedule *s = erg_schedule_new();
    assert_non_null(s);
    erg_diag d;
    char id[32];
    for (unsigned dv = 0; dv < DEVICES; dv++) {
        double w = 40.0 + 10.0 * dv;
        snprintf(id, sizeof id, "gpu%u", dv);
        assert_int_equal(erg_schedule_add_device(s, id, w, 0.5 * w, &d), ERG_OK);
        for (unsigned k = 0; k < SIGS; k++) {
            erg_signature g;
            erg_signature_init(&g);
            snprintf(g.name, sizeof g.name, "k%u@gpu%u", k, dv);
            snprintf(g.device, sizeof g.device, "gpu%u", dv);
            g.static_power_w = NAN;
            g.time_s = 1e-4 + 4e-3 * erg__splitmix_unit(st);
            g.time_var_s2 = k % 5 == 0 ? 0.0 : 0.04 * g.time_s * g.time_s * erg__splitmix_unit(st);
            g.dynamic_energy_j = 150.0 * g.time_s * erg__splitmix_unit(st);
            g.energy_var_j2 = w * w * g.time_var_s2 + 1e-4 * erg__splitmix_unit(st);
            assert_int_equal(erg_schedule_add_signature(s, &g, &d), ERG_OK);
        }
    }
    return s;
}

static void add_node(erg_schedule *s, uint64_t *st, size_t i, double start_s)
{
    char id[32], sig[32];
    erg_diag d;
    unsigned dv = (unsigned)(erg__splitmix64(st) % DEVICES);
    snprintf(id, sizeof id, "n%zu", i);
    snprintf(sig, sizeof sig, "k%u@gpu%u", (unsigned)(erg__splitmix64(st) % SIGS), dv);
    assert_int_equal(erg_schedule_add_node(s, id, sig, NULL, start_s, &d), ERG_OK);
}

static void add_edge(erg_schedule *s, size_t from, size_t to)
{
    char a[32], b[32];
    erg_diag d;
    snprintf(a, sizeof a, "n%zu", from);
    snprintf(b, sizeof b, "n%zu", to);
    assert_int_equal(erg_schedule_add_edge(s, a, b, &d), ERG_OK);
}

/* n nodes; node i > 0 has 1..max_preds predecessors among the previous window (repeats allowed);
 * with fixed_every > 0, every fixed_every-th node has a start late enough for its predecessors. */
static erg_schedule *window_dag(uint64_t seed, size_t n, size_t window, unsigned max_preds,
                                size_t fixed_every)
{
    uint64_t st = seed;
    erg_schedule *s = new_schedule(&st);
    for (size_t i = 0; i < n; i++)
        add_node(s, &st, i,
                 fixed_every && i % fixed_every == fixed_every - 1 ? 10.0 * (double)i
                                                                   : (double)NAN);
    for (size_t i = 1; i < n; i++) {
        unsigned k = 1 + (unsigned)(erg__splitmix64(&st) % max_preds);
        size_t w = i < window ? i : window;
        for (unsigned j = 0; j < k; j++)
            add_edge(s, i - 1 - (size_t)(erg__splitmix64(&st) % w), i);
    }
    return s;
}

/* Two chains of forks of the given lengths from a common fork, joined at the end; every chain
 * node also feeds a sink of its own (so it is a fork, a tree event). A join of the chains' ends
 * walks len_a + len_b + 2 events up to their common one: past the cap the general path takes
 * over. With three_way, a third, short chain joins too (keys_fast); without, the join has two
 * operands (max_two). */
static erg_schedule *chains_dag(uint64_t seed, size_t len_a, size_t len_b, int three_way)
{
    uint64_t st = seed;
    erg_schedule *s = new_schedule(&st);
    size_t id = 0;
    add_node(s, &st, id++, NAN); /* 0: the common fork */
    size_t ends[3];
    size_t lens[3] = {len_a, len_b, 3};
    int chains = three_way ? 3 : 2;
    for (int c = 0; c < chains; c++) {
        size_t prev = 0;
        for (size_t j = 0; j < lens[c]; j++) {
            size_t v = id++, leaf = id++;
            add_node(s, &st, v, NAN);
            add_node(s, &st, leaf, NAN);
            add_edge(s, prev, v);
            add_edge(s, v, leaf);
            prev = v;
        }
        ends[c] = prev;
    }
    size_t join = id++;
    add_node(s, &st, join, NAN);
    for (int c = 0; c < chains; c++)
        add_edge(s, ends[c], join);
    return s;
}

/* Bitwise equality of two doubles (NaN payloads included). */
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same_report(const erg_report *a, const erg_report *b)
{
    assert_true(same_bits(a->energy_j, b->energy_j));
    assert_true(same_bits(a->energy_sd_j, b->energy_sd_j));
    assert_true(same_bits(a->time_s, b->time_s));
    assert_true(same_bits(a->time_sd_s, b->time_sd_s));
    assert_true(same_bits(a->static_energy_j, b->static_energy_j));
    assert_true(same_bits(a->dynamic_energy_j, b->dynamic_energy_j));
    assert_true(same_bits(a->bias_bound_j, b->bias_bound_j));
    assert_true(same_bits(a->total.time_var_s2, b->total.time_var_s2));
    assert_true(same_bits(a->total.energy_var_j2, b->total.energy_var_j2));
    assert_int_equal(a->n_elements, b->n_elements);
    assert_int_equal(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        assert_string_equal(a->devices[i].id, b->devices[i].id);
        assert_true(same_bits(a->devices[i].static_energy_j, b->devices[i].static_energy_j));
        assert_true(same_bits(a->devices[i].dynamic_energy_j, b->devices[i].dynamic_energy_j));
        assert_true(same_bits(a->devices[i].busy_s, b->devices[i].busy_s));
        assert_true(same_bits(a->devices[i].idle_s, b->devices[i].idle_s));
    }
}

/* Compose s with the fast paths and with the general ones only; the reports must agree bit for
 * bit. The probe's counts of the fast run are added to *fast. */
static void cross_check(erg_schedule *s, struct erg__compose_probe *fast)
{
    erg_report r_fast, r_gen;
    erg_diag d;
    struct erg__compose_probe pf, pg;
    memset(&pf, 0, sizeof pf);
    memset(&pg, 0, sizeof pg);
    pg.general = 1;
    erg__compose_probe = &pf;
    int rc_fast = erg_schedule_compose(s, NULL, &r_fast, &d);
    erg__compose_probe = &pg;
    int rc_gen = erg_schedule_compose(s, NULL, &r_gen, &d);
    erg__compose_probe = NULL;
    assert_int_equal(rc_fast, ERG_OK);
    assert_int_equal(rc_gen, ERG_OK);
    assert_same_report(&r_fast, &r_gen);
    assert_int_equal(pg.fast_keys, 0); /* the general run took no fast path */
    assert_int_equal(pg.bucket_sorts, 0);
    assert_int_equal(pf.fast_keys + pf.general_keys, pg.general_keys); /* the same joins */
    fast->fast_keys += pf.fast_keys;
    fast->general_keys += pf.general_keys;
    fast->bucket_sorts += pf.bucket_sorts;
    fast->radix_sorts += pf.radix_sorts;
    erg_report_free(&r_fast);
    erg_report_free(&r_gen);
    erg_schedule_free(s);
}

/* Random window DAGs like bench_calculus's (1-3 predecessors among the last 16) and narrower and
 * wider ones: almost every join takes the fast path, and the starts the bucket sort. */
static void window_dags_agree(void **state)
{
    (void)state;
    struct erg__compose_probe p;
    memset(&p, 0, sizeof p);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        size_t window = seed % 3 == 0 ? 2 : seed % 3 == 1 ? 16 : 40;
        cross_check(window_dag(seed, 1500 + 100 * seed, window, 3, 0), &p);
    }
    assert_true(p.fast_keys > 1000);
    assert_true(p.bucket_sorts >= 12);
}

/* Joins of up to 24 predecessors (wider than 16: the general path) and fixed starts (operands at
 * the root: the general path); the fast path still takes the others. */
static void wide_joins_and_fixed_starts_agree(void **state)
{
    (void)state;
    struct erg__compose_probe p;
    memset(&p, 0, sizeof p);
    for (uint64_t seed = 20; seed < 26; seed++)
        cross_check(window_dag(seed, 800, 30, 24, seed % 2 ? 7 : 0), &p);
    assert_true(p.fast_keys > 100);
    assert_true(p.general_keys > 100);
}

/* Chains whose join walks 64, 65, 66 and more events to their common fork, with three operands
 * (keys_fast) and with two (max_two): the fast walk gives up exactly where lca does, also when
 * one chain is much longer than the other (the deeper side alone exceeds the cap). */
static void walks_at_the_cap_agree(void **state)
{
    (void)state;
    for (int three_way = 0; three_way <= 1; three_way++) {
        struct erg__compose_probe p;
        memset(&p, 0, sizeof p);
        for (size_t len = 28; len <= 36; len++)
            cross_check(chains_dag(30 + len, len, len + (len % 2), three_way), &p);
        cross_check(chains_dag(99, 120, 5, three_way), &p);
        cross_check(chains_dag(98, 64, 0, three_way), &p);
        cross_check(chains_dag(97, 66, 1, three_way), &p);
        assert_true(p.fast_keys > 0);
        assert_true(p.general_keys > 0);
    }
}

/* Sources only, all at 0 s: every start coincides, the bucket sort declines and the radix sort
 * orders them (ties in index order); a few later nodes keep the sort non-trivial. */
static void coinciding_starts_agree(void **state)
{
    (void)state;
    struct erg__compose_probe p;
    memset(&p, 0, sizeof p);
    uint64_t st = 77;
    erg_schedule *s = new_schedule(&st);
    for (size_t i = 0; i < 300; i++)
        add_node(s, &st, i, NAN);
    for (size_t i = 300; i < 310; i++) {
        add_node(s, &st, i, NAN);
        add_edge(s, i - 300, i);
        add_edge(s, i - 290, i);
    }
    cross_check(s, &p);
    assert_true(p.radix_sorts >= 1);
}

/* assert_same_report and the Monte Carlo figures. */
static void assert_same_report_mc(const erg_report *a, const erg_report *b)
{
    assert_same_report(a, b);
    assert_int_equal(a->has_mc, b->has_mc);
    assert_true(same_bits(a->mc_energy_j, b->mc_energy_j));
    assert_true(same_bits(a->mc_energy_sd_j, b->mc_energy_sd_j));
    assert_true(same_bits(a->mc_time_s, b->mc_time_s));
    assert_true(same_bits(a->mc_time_sd_s, b->mc_time_sd_s));
}

/* Compose s without a workspace and in ws (options o otherwise): the same status and, when it
 * succeeds, the same report bit for bit. Returns the status. */
static int compose_both(const erg_schedule *s, erg_compose_options o, erg_compose_workspace *ws)
{
    erg_report a, b;
    erg_diag da, db;
    o.workspace = NULL;
    int rc = erg_schedule_compose(s, &o, &a, &da);
    o.workspace = ws;
    assert_int_equal(erg_schedule_compose(s, &o, &b, &db), rc);
    if (rc == ERG_OK)
        assert_same_report_mc(&a, &b);
    else
        assert_string_equal(da.detail, db.detail);
    erg_report_free(&a);
    erg_report_free(&b);
    return rc;
}

/* One workspace through DAGs of 1500 to 4000 nodes and back (it grows to the largest and keeps
 * it: at least the per-node and per-edge arrays, 60 bytes a node and 8 an edge), with and
 * without Monte Carlo, a warm start, cut-off walks and coinciding starts: every report agrees
 * bit for bit with composition in the call's own memory. A schedule with a cycle fails the same
 * way in the workspace and leaves it usable. */
static void workspace_agrees(void **state)
{
    (void)state;
    erg_compose_workspace *ws = erg_compose_workspace_new();
    assert_non_null(ws);
    assert_int_equal(erg_compose_workspace_bytes(ws), 0);
    assert_int_equal(erg_compose_workspace_bytes(NULL), 0);
    erg_compose_options o;
    erg_compose_options_init(&o);
    assert_null(o.workspace); /* the default: memory per call */
    static const size_t sizes[] = {1500, 4000, 300, 2500, 4000, 1};
    size_t prev = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        erg_schedule *s =
            window_dag(40 + i, sizes[i], i % 2 ? 16 : 3, i == 3 ? 24 : 3, i == 2 ? 5 : 0);
        o.mc_samples = i % 2 ? 25 : 0;
        o.warm_start = i == 3;
        assert_int_equal(compose_both(s, o, ws), ERG_OK);
        size_t bytes = erg_compose_workspace_bytes(ws);
        if (sizes[i] == 4000)
            assert_true(bytes >= 60 * sizes[i] + 8 * (sizes[i] - 1));
        assert_true(bytes >= prev); /* never shrinks */
        if (i == 2)                 /* a smaller DAG fits in what the larger one left */
            assert_int_equal(bytes, prev);
        prev = bytes;
        erg_schedule_free(s);
    }
    erg_compose_options_init(&o);
    erg_schedule *c = chains_dag(5, 70, 3, 1); /* past the walk cap: the general path */
    assert_int_equal(compose_both(c, o, ws), ERG_OK);
    erg_schedule_free(c);
    uint64_t st = 3;
    erg_schedule *cyc = new_schedule(&st);
    for (size_t i = 0; i < 4; i++)
        add_node(cyc, &st, i, NAN);
    add_edge(cyc, 0, 1);
    add_edge(cyc, 1, 2);
    add_edge(cyc, 2, 1);
    add_edge(cyc, 2, 3);
    assert_int_equal(compose_both(cyc, o, ws), ERG_ECYCLE);
    erg_schedule_free(cyc);
    erg_schedule *again = window_dag(41, 4000, 16, 3, 0);
    assert_int_equal(compose_both(again, o, ws), ERG_OK);
    erg_schedule_free(again);
    erg_compose_workspace_free(ws);
    erg_compose_workspace_free(NULL);
}

/* n nodes of window_dag's kind, one predecessor each among the previous 8 (n - 1 edges), the
 * edges added first to last or last to first: the same nodes and edge set, listed in another
 * order (another adjacency order, hence another topological order). */
static erg_schedule *ordered_dag(uint64_t seed, size_t n, int reversed)
{
    uint64_t st = seed;
    erg_schedule *s = new_schedule(&st);
    for (size_t i = 0; i < n; i++)
        add_node(s, &st, i, NAN);
    size_t *from = malloc(n * sizeof *from);
    assert_non_null(from);
    for (size_t i = 1; i < n; i++)
        from[i] = i - 1 - (size_t)(erg__splitmix64(&st) % (i < 8 ? i : 8));
    for (size_t j = 1; j < n; j++) {
        size_t i = reversed ? n - j : j;
        add_edge(s, from[i], i);
    }
    free(from);
    return s;
}

/* A workspace keeps the adjacency and order of the DAG it last composed and reuses them for a
 * DAG with the same edges (compared exactly): composing one schedule again and again in it, and
 * switching between schedules of the same size whose edges differ only in their order (or not at
 * all), gives each one's own report, bit for bit, every time. */
static void workspace_reuses_graph(void **state)
{
    (void)state;
    erg_compose_workspace *ws = erg_compose_workspace_new();
    assert_non_null(ws);
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.mc_samples = 12;
    erg_schedule *fwd = ordered_dag(7, 900, 0), *rev = ordered_dag(7, 900, 1);
    erg_schedule *win = window_dag(8, 900, 16, 3, 0), *win2 = window_dag(8, 900, 16, 3, 0);
    const erg_schedule *seq[] = {fwd, fwd, rev, fwd, rev, rev, win, win, win2, win, fwd};
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++)
        assert_int_equal(compose_both(seq[i], o, ws), ERG_OK);
    erg_report a, b;
    erg_diag d;
    o.workspace = NULL;
    assert_int_equal(erg_schedule_compose(fwd, &o, &a, &d), ERG_OK);
    assert_int_equal(erg_schedule_compose(rev, &o, &b, &d), ERG_OK);
    /* the premise: the two orders are told apart (Monte Carlo draws in topological order) */
    assert_false(same_bits(a.mc_energy_j, b.mc_energy_j));
    erg_report_free(&a);
    erg_report_free(&b);
    erg_schedule_free(fwd);
    erg_schedule_free(rev);
    erg_schedule_free(win);
    erg_schedule_free(win2);
    erg_compose_workspace_free(ws);
}

/* An expression schedule does not use the workspace: the same report, and the workspace holds
 * what it held. */
static void workspace_expression(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/attention-layer.json", ERG_TEST_SOURCE_DIR);
    erg_schedule *s = NULL;
    erg_diag d;
    assert_int_equal(erg_schedule_read_file(path, &s, &d), ERG_OK);
    erg_compose_workspace *ws = erg_compose_workspace_new();
    assert_non_null(ws);
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.mc_samples = 10;
    assert_int_equal(compose_both(s, o, ws), ERG_OK);
    assert_int_equal(erg_compose_workspace_bytes(ws), 0);
    erg_schedule_free(s);
    erg_compose_workspace_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_dags_agree),
        cmocka_unit_test(wide_joins_and_fixed_starts_agree),
        cmocka_unit_test(walks_at_the_cap_agree),
        cmocka_unit_test(coinciding_starts_agree),
        cmocka_unit_test(workspace_agrees),
        cmocka_unit_test(workspace_reuses_graph),
        cmocka_unit_test(workspace_expression),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
