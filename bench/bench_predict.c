/* SPDX-License-Identifier: MIT */
/*
 * bench_predict: (1) level-1 predictions per second for each op on one core, from a model fitted
 * to synthetic data (the cost of a prediction does not depend on the coefficients); (2) the op
 * profiler's overhead beyond the kernels it times: wall time of erg_profile_ops minus the kernel
 * time it reports (Σ reps · time_s), per configuration.
 *   bench_predict [predictions-per-op] [profile-min-time-s]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erg/predict.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static erg_op_model *synthetic_model(void)
{
    enum { N = 400 };
    erg_op_sample *s = calloc(N, sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < N; i++) {
        erg_op_dims *d = &s[i].dims;
        unsigned op = (unsigned)(i % 3);
        d->op = (erg_op)op;
        int64_t a = 1 + (int64_t)((i * 2654435761u) % 4096),
                b = 16 + (int64_t)((i * 40503u) % 8192);
        if (op == ERG_OP_RMSNORM) {
            d->tokens = a;
            d->d_model = b;
        } else if (op == ERG_OP_SOFTMAX) {
            d->tokens = a;
        } else {
            d->m = a;
            d->n = b;
            d->k = 1 + (int64_t)((i * 7919u) % 4096);
        }
        double x[ERG_OP_MAX_FEATURES];
        unsigned p = erg_op_features(d, x);
        double t = 1e-6;
        for (unsigned j = 0; j + 1 < p; j++)
            t += 1e-13 * fabs(x[j]);
        s[i].time_s = t;
        s[i].energy_j = 20 * t;
        s[i].grade = ERG_GRADE_ESTIMATOR;
        s[i].has_grade = 1;
    }
    erg_fit_options o;
    erg_fit_options_init(&o);
    o.target_kind = "bench";
    o.target_desc = "synthetic";
    erg_op_model *m = NULL;
    erg_diag diag;
    if (erg_op_model_fit(s, N, &o, &m, &diag) != ERG_OK)
        fprintf(stderr, "fit failed: %s\n", diag.detail);
    free(s);
    return m;
}

int main(int argc, char **argv)
{
    long npred = argc > 1 ? atol(argv[1]) : 5000000;
    double min_time = argc > 2 ? atof(argv[2]) : 0.05;
    erg_op_model *m = synthetic_model();
    if (!m)
        return 1;
    printf("predictions (one core, erg_op_model_predict, dims varying every call):\n");
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        erg_op_dims d;
        memset(&d, 0, sizeof d);
        d.op = (erg_op)op;
        double sink = 0;
        double t0 = now_s();
        for (long i = 0; i < npred; i++) {
            int64_t v = 1 + (i & 4095);
            if (op == ERG_OP_GEMM) {
                d.m = v;
                d.n = 4096;
                d.k = 64 + (i & 1023);
            } else if (op == ERG_OP_RMSNORM) {
                d.tokens = v;
                d.d_model = 4096;
            } else {
                d.tokens = v;
            }
            erg_op_prediction p;
            if (erg_op_model_predict(m, &d, &p, NULL) == ERG_OK)
                sink += p.time_s + p.energy_j;
            else
                sink = NAN; /* shows in the checksum: the figure is not to be trusted */
        }
        double dt = now_s() - t0;
        printf("  %-8s %10.3g predictions/s  (%.1f ns each; checksum %.3g)\n",
               erg_op_name((erg_op)op), (double)npred / dt, 1e9 * dt / (double)npred, sink);
    }
    erg_op_model_free(m);

    /* profiler overhead */
    erg_op_dims g[6];
    memset(g, 0, sizeof g);
    g[0].op = ERG_OP_RMSNORM;
    g[0].tokens = 8;
    g[0].d_model = 4096;
    g[1].op = ERG_OP_RMSNORM;
    g[1].tokens = 1024;
    g[1].d_model = 4096;
    g[2].op = ERG_OP_SOFTMAX;
    g[2].tokens = 128;
    g[3].op = ERG_OP_SOFTMAX;
    g[3].tokens = 2048;
    g[4].op = ERG_OP_GEMM;
    g[4].m = g[4].n = g[4].k = 64;
    g[5].op = ERG_OP_GEMM;
    g[5].m = g[5].n = g[5].k = 512;
    erg_op_sample out[6];
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = min_time;
    double t0 = now_s();
    erg_diag diag;
    if (erg_profile_ops(&o, g, 6, out, NULL, &diag) != ERG_OK) {
        fprintf(stderr, "profile failed: %s\n", diag.detail);
        return 1;
    }
    double wall = now_s() - t0, kern = 0;
    printf("\nprofiler (min-time %g s, built-in estimator energy):\n", min_time);
    for (int i = 0; i < 6; i++) {
        double k = (double)out[i].reps * out[i].time_s;
        kern += k;
        printf("  %-8s reps %-9llu kernel time %.4f s\n", erg_op_name(out[i].dims.op),
               (unsigned long long)out[i].reps, k);
    }
    printf("  wall %.4f s, kernels %.4f s: overhead %.4f s = %.1f%% of wall, %.1f ms per "
           "configuration (input sets, warm-up, windows)\n",
           wall, kern, wall - kern, 100 * (wall - kern) / wall, 1e3 * (wall - kern) / 6);
    return 0;
}
