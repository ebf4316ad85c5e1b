/* SPDX-License-Identifier: MIT */
/*
 * bench_predict_model: the cost of whole-model predictions (HYMELL levels 1-3).
 * (1) one full prediction, prefill and decode, of a config at levels 1-3, median of many;
 * (2) a sweep of 100,000 configurations (d_model × heads × d_ff × layers × prompt), in seconds;
 * each beside the same at level 1 only (thread CPU time: other jobs on the machine do not count)
 * (the plain sum of the ops' level-1 predictions). The target is built in a temporary folder from
 * the committed CPU level-1 model and level-2/3 MLPs fitted to synthetic rows (the cost of a
 * prediction does not depend on the weights). bench_predict_model [CONFIG.json] [sweep-points]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erg/predict.h"

#ifndef ERG_SOURCE_DIR
#define ERG_SOURCE_DIR "."
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID,
                  &ts); /* CPU time: a shared machine does not inflate it */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Synthetic level-2 and level-3 rows: level 1 times a smooth factor. */
static int build_target(const char *dir, const erg_arch *a)
{
    char path[512];
    erg_op_model *l1;
    erg_diag d;
    if (erg_op_model_load(ERG_SOURCE_DIR "/models/cpu-amd-epyc.json", &l1, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return -1;
    }
    snprintf(path, sizeof path, "%s/ops.json", dir);
    if (erg_op_model_save(path, l1, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return -1;
    }
    enum { NB = 240 };
    erg_block_sample *s = calloc(NB, sizeof *s);
    size_t n = 0;
    for (int blk = 0; blk < ERG_BLOCK_COUNT; blk++)
        for (int i = 0; i < NB / ERG_BLOCK_COUNT; i++) {
            erg_block_sample *r = &s[n];
            snprintf(r->arch, sizeof r->arch, "a%d", i % 4);
            erg_block_spec *b = &r->spec;
            b->block = (erg_block)blk;
            b->phase = (erg_phase)(i % 2);
            b->batch = 1 + i % 3;
            b->prompt = b->phase == ERG_PHASE_PREFILL ? 16 << (i % 5) : 0;
            b->kv = b->phase == ERG_PHASE_DECODE ? 16 << (i % 5) : 0;
            b->d_model = 256 * (1 + i % 4);
            b->n_heads = b->n_kv_heads = 4;
            b->head_dim = b->d_model / 4;
            b->d_ff = 2 * b->d_model;
            b->gated = 1;
            b->n_experts = 8;
            b->top_k = 2;
            b->vocab = 1000;
            b->dtype = ERG_DTYPE_FP32;
            erg_estimate e;
            if (erg_block_level1(l1, b, &e, NULL) != ERG_OK)
                continue;
            r->time_s = e.time_s * (1.2 + 0.01 * i);
            r->energy_j = e.energy_j * (1.1 + 0.01 * i);
            r->has_grade = 1;
            r->grade = ERG_GRADE_ESTIMATOR;
            n++;
        }
    erg_mlp_options o;
    erg_mlp_options_init(&o);
    o.cross_validate = 0;
    o.max_epochs = 100;
    erg_block_model *l2;
    if (erg_block_model_fit(l1, s, n, &o, &l2, &d) != ERG_OK) {
        fprintf(stderr, "bench: level 2: %s\n", d.detail);
        return -1;
    }
    snprintf(path, sizeof path, "%s/blocks.json", dir);
    if (erg_block_model_save(path, l2, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return -1;
    }
    erg_model_sample *ms = calloc(40, sizeof *ms);
    erg_predictor *p;
    snprintf(path, sizeof path, "%s", dir);
    if (erg_predictor_open(path, &p, &d) != ERG_OK)
        return -1;
    for (int i = 0; i < 40; i++) {
        erg_model_sample *r = &ms[i];
        snprintf(r->arch, sizeof r->arch, "m%d", i % 4);
        r->model = *a;
        if (erg_arch_set(&r->model, "n_layers", 2 + i % 4, &d) != ERG_OK) {
            fprintf(stderr, "bench: %s\n", d.detail);
            return -1;
        }
        r->phase.phase = (erg_phase)(i % 2);
        r->phase.batch = 1;
        r->phase.prompt = r->phase.phase == ERG_PHASE_PREFILL ? 32 << (i % 4) : 0;
        r->phase.kv = r->phase.phase == ERG_PHASE_DECODE ? 32 << (i % 4) : 0;
        r->phase.logits_all = 1;
        erg_model_prediction mp;
        if (erg_predict_model(p, &r->model, &r->phase, &mp, &d) != ERG_OK) {
            fprintf(stderr, "bench: level 3 sample %d: %s\n", i, d.detail);
            return -1;
        }
        r->time_s = mp.total.time_s * (1.3 + 0.01 * i);
        r->energy_j = mp.total.energy_j * 1.2;
    }
    erg_predictor_free(p);
    erg_e2e_model *l3;
    if (erg_e2e_model_fit(l1, l2, ms, 40, &o, &l3, &d) != ERG_OK) {
        fprintf(stderr, "bench: level 3: %s\n", d.detail);
        return -1;
    }
    snprintf(path, sizeof path, "%s/e2e.json", dir);
    if (erg_e2e_model_save(path, l3, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return -1;
    }
    erg_e2e_model_free(l3);
    erg_block_model_free(l2);
    erg_op_model_free(l1);
    free(s);
    free(ms);
    return 0;
}

/* median µs of one prediction of both phases */
static double one(const erg_predictor *p, const erg_arch *a, int reps)
{
    double *t = malloc((size_t)reps * sizeof *t), sink = 0;
    erg_phase_spec pre = {ERG_PHASE_PREFILL, 1, 1024, 0, 1},
                   dec = {ERG_PHASE_DECODE, 1, 0, 1024, 1};
    for (int i = 0; i < reps; i++) {
        erg_model_prediction m;
        double t0 = now_s();
        if (erg_predict_model(p, a, &pre, &m, NULL) != ERG_OK)
            sink = NAN; /* a failed prediction makes the figure -1 below */
        sink += m.total.time_s;
        if (erg_predict_model(p, a, &dec, &m, NULL) != ERG_OK)
            sink = NAN;
        sink += m.total.time_s;
        t[i] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double med = t[reps / 2] * 1e6;
    free(t);
    return sink > 0 ? med : -1;
}

static double sweep(const erg_predictor *p, const erg_arch *base, long points, long *done)
{
    static const int64_t dm[] = {1024, 2048, 3072, 4096, 5120, 6144, 8192, 10240};
    static const int64_t heads[] = {8, 16, 32, 64};
    double t0 = now_s(), sink = 0;
    *done = 0;
    for (long i = 0; i < points; i++) {
        erg_arch a = *base;
        if (erg_arch_set(&a, "d_model", dm[i % 8], NULL) != ERG_OK ||
            erg_arch_set(&a, "heads", heads[(i / 8) % 4], NULL) != ERG_OK ||
            erg_arch_set(&a, "d_ff", dm[i % 8] * (2 + (i / 32) % 4), NULL) != ERG_OK ||
            erg_arch_set(&a, "n_layers", 8 + (i / 128) % 64, NULL) != ERG_OK)
            continue; /* not counted in *done */
        erg_phase_spec ph = {(erg_phase)(i % 2), 1, 128 + 64 * ((i / 8192) % 13), 0, 1};
        ph.kv = ph.prompt;
        if (ph.phase == ERG_PHASE_DECODE)
            ph.prompt = 0;
        erg_model_prediction m;
        if (erg_predict_model(p, &a, &ph, &m, NULL) == ERG_OK) {
            sink += m.total.time_s;
            (*done)++;
        }
    }
    return sink > 0 ? now_s() - t0 : -1;
}

int main(int argc, char **argv)
{
    const char *cfg = argc > 1 ? argv[1] : ERG_SOURCE_DIR "/tests/predict/configs/tiny-llama.json";
    long points = argc > 2 ? atol(argv[2]) : 100000;
    erg_arch a;
    erg_diag d;
    if (erg_arch_from_hf_config(cfg, &a, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return 2;
    }
    char dir[] = "/tmp/erg-bench-predict.XXXXXX", l1dir[600], path[700];
    if (!mkdtemp(dir))
        return 1;
    snprintf(l1dir, sizeof l1dir, "%s/l1", dir);
    mkdir(l1dir, 0755);
    if (build_target(dir, &a) != 0)
        return 1;
    snprintf(path, sizeof path, "%s/ops.json", dir);
    erg_op_model *l1;
    if (erg_op_model_load(path, &l1, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return 1;
    }
    snprintf(path, sizeof path, "%s/ops.json", l1dir);
    int saved = erg_op_model_save(path, l1, &d);
    erg_op_model_free(l1);
    if (saved != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return 1;
    }
    erg_predictor *p3, *p1;
    if (erg_predictor_open(dir, &p3, &d) != ERG_OK ||
        erg_predictor_open(l1dir, &p1, &d) != ERG_OK) {
        fprintf(stderr, "bench: %s: %s\n", d.where, d.detail);
        return 1;
    }
    printf("config %s (%s, %lld layers), prefill 1 x 1024 and decode at KV 1024\n", cfg, a.name,
           (long long)a.n_layers);
    double u3 = one(p3, &a, 20000), u1 = one(p1, &a, 20000);
    printf("one full prediction (both phases): levels 1-3 %.2f us, level 1 only (plain sum of "
           "op predictions) %.2f us, ratio %.2f\n",
           u3, u1, u3 / u1);
    long d3, d1;
    double s3 = sweep(p3, &a, points, &d3), s1 = sweep(p1, &a, points, &d1);
    printf("sweep of %ld configurations (%ld predicted): levels 1-3 %.3f s (%.2f us each), level 1 "
           "only %.3f s, ratio %.2f\n",
           points, d3, s3, 1e6 * s3 / (double)points, s1, s3 / s1);
    erg_predictor_free(p3);
    erg_predictor_free(p1);
    /* remove the temporary target */
    const char *files[] = {"ops.json", "blocks.json", "e2e.json", "l1/ops.json", "l1"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    rmdir(dir);
    return 0;
}
