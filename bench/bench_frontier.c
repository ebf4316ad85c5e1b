/* SPDX-License-Identifier: MIT */
/* Frontier composition time against the number of elements and points per element (⊗ exact and
 * ε-approximate, ⊕, ⊕multi), and the DAG frontier time on the Perseus GPT-3 pipeline.
 * Usage: bench_frontier [SOURCE_DIR]   (SOURCE_DIR holds ../shared/data; default the build's) */
#include "erg/frontier.h"
#include "perseus_dag.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The builders cannot fail on these inputs; a failure is a bug to stop at. */
#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != ERG_OK)                                                                      \
            abort();                                                                               \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* n elements with p DVFS-like points each (T up, d down, convex-ish with noise), composed by op;
 * multi puts each element on its own device. */
static erg_opsched *make(erg_expr_op op, size_t n, size_t p)
{
    erg_opsched *os = erg_opsched_new();
    size_t *ids = malloc(n * sizeof *ids);
    for (size_t k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "e%zu", k);
        double base = 0.5 + urand();
        for (size_t i = 0; i < p; i++) {
            erg_signature s;
            erg_signature_init(&s);
            snprintf(s.device, sizeof s.device, op == ERG_EXPR_MULTI ? "g%zu" : "g",
                     op == ERG_EXPR_MULTI ? k : 0);
            double x = (double)i / (double)(p > 1 ? p - 1 : 1);
            s.static_power_w = 60;
            s.time_s = base * (1 + 0.6 * x) * (1 + 0.01 * urand());
            s.dynamic_energy_j = base * 300 * (1 - 0.5 * x + 0.3 * x * x) * (1 + 0.02 * urand());
            OK(erg_opsched_add_point(os, name, &s, "", NULL));
        }
        OK(erg_opsched_expr_leaf(os, name, &ids[k], NULL));
    }
    size_t r;
    OK(erg_opsched_expr_op(os, op, ids, n, &r, NULL));
    free(ids);
    return os;
}

static void bench_expr(const char *label, erg_expr_op op, size_t n, size_t p, double eps)
{
    erg_opsched *os = make(op, n, p);
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.epsilon = eps;
    erg_frontier f;
    int reps = 0;
    double t0 = now_s(), t1;
    do {
        if (reps)
            erg_frontier_free(&f);
        if (erg_opsched_frontier(os, &o, &f, NULL) != ERG_OK) {
            printf("%-10s n=%4zu p=%3zu: failed\n", label, n, p);
            erg_opsched_free(os);
            return;
        }
        reps++;
        t1 = now_s();
    } while (t1 - t0 < 0.2 && reps < 200);
    printf("%-10s n=%4zu p=%3zu eps=%-5g  %10.3f ms  %6zu frontier points\n", label, n, p, eps,
           1e3 * (t1 - t0) / reps, f.n_points);
    fflush(stdout);
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

/* Random series-parallel DAG of about n nodes with p points each on 8 devices: a chain of
 * fork-join blocks of random width. */
static double bench_sp_dag(size_t n, size_t p, double eps, size_t *npts)
{
    erg_opsched *os = erg_opsched_new();
    for (int d = 0; d < 8; d++) {
        char id[16];
        snprintf(id, sizeof id, "g%d", d);
        OK(erg_opsched_add_device(os, id, 60, NULL));
    }
    char prev[64] = "";
    size_t k = 0;
    while (k < n) {
        size_t w = 1 + (size_t)(urand() * 4), start = k;
        for (size_t j = 0; j < w && k < n; j++, k++) {
            char id[64];
            snprintf(id, sizeof id, "n%zu", k);
            double base = 0.5 + urand();
            for (size_t i = 0; i < p; i++) {
                erg_signature s;
                erg_signature_init(&s);
                snprintf(s.device, sizeof s.device, "g%zu", j % 8);
                double x = (double)i / (double)(p > 1 ? p - 1 : 1);
                s.static_power_w = 60;
                s.time_s = base * (1 + 0.6 * x);
                s.dynamic_energy_j = base * 300 * (1 - 0.5 * x + 0.3 * x * x);
                OK(erg_opsched_add_point(os, id, &s, "", NULL));
            }
            OK(erg_opsched_add_node(os, id, id, NULL));
            if (prev[0])
                OK(erg_opsched_add_edge(os, prev, id, NULL));
        }
        /* Join node closing the block. */
        char jid[64];
        snprintf(jid, sizeof jid, "j%zu", k);
        erg_signature s;
        erg_signature_init(&s);
        snprintf(s.device, sizeof s.device, "g0");
        s.static_power_w = 60;
        s.time_s = 0.01;
        s.dynamic_energy_j = 1;
        OK(erg_opsched_add_point(os, jid, &s, "", NULL));
        OK(erg_opsched_add_node(os, jid, jid, NULL));
        for (size_t j = start; j < k; j++) {
            char id[64];
            snprintf(id, sizeof id, "n%zu", j);
            OK(erg_opsched_add_edge(os, id, jid, NULL));
        }
        snprintf(prev, sizeof prev, "%s", jid);
    }
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.enum_limit = 0;
    o.epsilon = eps;
    erg_frontier f;
    double t0 = now_s();
    int rc = erg_opsched_frontier(os, &o, &f, NULL);
    double t1 = now_s();
    *npts = 0;
    if (rc == ERG_OK) {
        *npts = f.method != ERG_FRONTIER_RELAXATION ? f.n_points : 0;
        erg_frontier_free(&f);
    }
    erg_opsched_free(os);
    return t1 - t0;
}

int main(int argc, char **argv)
{
    const char *src = argc > 1 ? argv[1] : ERG_SOURCE_DIR;
    printf("# expression frontiers (mean wall time per frontier)\n");
    size_t ns[] = {10, 50, 200}, ps[] = {4, 16, 38};
    /* The exact frontier of a long chain grows with the number of distinct sums (tens of
     * thousands of points at 50 x 38): exact up to 50 elements, ε-approximate beyond. */
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < 3; b++)
            bench_expr("seq", ERG_EXPR_SEQ, ns[a], ps[b], 0);
    size_t ln[] = {10, 50, 200, 1000};
    for (size_t a = 0; a < 4; a++) {
        bench_expr("seq", ERG_EXPR_SEQ, ln[a], 38, 0.01);
        if (ln[a] <= 200)
            bench_expr("seq", ERG_EXPR_SEQ, ln[a], 38, 0.001);
    }
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++)
            bench_expr("par", ERG_EXPR_PAR, ns[a], ps[b], 0);
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++)
            bench_expr("multi", ERG_EXPR_MULTI, ns[a], ps[b], 0);

    printf("# series-parallel DAG frontier (exact, fork-join blocks, 8 devices)\n");
    struct {
        size_t n, p;
        double eps;
    } cases[] = {{20, 4, 0}, {20, 16, 0}, {50, 4, 0}, {200, 16, 0.01}, {1000, 16, 0.01}};
    for (size_t a = 0; a < sizeof cases / sizeof cases[0]; a++) {
        size_t np;
        double dt = bench_sp_dag(cases[a].n, cases[a].p, cases[a].eps, &np);
        printf("sp-dag     n=%4zu p=%3zu eps=%-5g  %10.3f ms  %6zu frontier points%s\n", cases[a].n,
               cases[a].p, cases[a].eps, 1e3 * dt, np, np ? "" : " (not series-parallel?)");
        fflush(stdout);
    }
    printf("# DAG frontier: Perseus GPT-3 175B, 8 stages x 12 microbatches 1F1B (192 nodes x 38 "
           "points)\n");
    char csv[1024];
    snprintf(csv, sizeof csv, "%s/%s", src, PERSEUS_PROFILE);
    size_t dls[] = {50, 200, 640};
    for (int q = 1; q >= 0; q--)
        for (size_t i = 0; i < 3; i++) {
            erg_opsched *os;
            int rc = perseus_build(csv, 86.3, q, 12, &os);
            if (rc == 77) {
                printf("skipped: %s not found\n", csv);
                return 0;
            }
            if (rc != 0) {
                printf("cannot build the Perseus DAG\n");
                return 1;
            }
            erg_frontier_options o;
            erg_frontier_options_init(&o);
            o.lp_deadlines = dls[i];
            erg_frontier f;
            double t0 = now_s();
            rc = erg_opsched_frontier(os, &o, &f, NULL);
            double t1 = now_s();
            if (rc == ERG_OK) {
                printf("perseus %s deadlines=%4zu  %8.1f ms  %4zu points  fastest %.4f s %.1f J  "
                       "least %.4f s %.1f J  max gap %.2f J\n",
                       q ? "ms-floored" : "measured  ", dls[i], 1e3 * (t1 - t0), f.n_points,
                       f.points[0].time_s, f.points[0].energy_j, f.points[f.n_points - 1].time_s,
                       f.points[f.n_points - 1].energy_j, f.max_gap_j);
                erg_frontier_free(&f);
            }
            erg_opsched_free(os);
        }
    return 0;
}
