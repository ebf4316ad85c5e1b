/* SPDX-License-Identifier: MIT */
/* The op profiler: HYMELL Section 5.1's protocol on the CPU. */
#define _GNU_SOURCE 1
#include "erg/predict.h"
#include "core/splitmix.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fsroot.h"
#include "core/file.h"
#include "predict/kernels.h"
#include "predict/model.h"

void erg_profile_options_init(erg_profile_options *o)
{
    memset(o, 0, sizeof *o);
    o->target = ERG_TARGET_CPU;
    o->min_time_s = 1.0;
    o->batches = 20;
    o->min_window_s = 0.02;
    o->min_weight_sets = 2;
    o->rotate_bytes = (size_t)64 << 20;
    o->max_weight_sets = 64;
    o->max_set_bytes = (size_t)1 << 30;
    o->threads = 1;
    o->est_power_w = 15.0;
}

int erg_profile_supports(erg_target target, erg_op op, erg_dtype dtype)
{
    if (target != ERG_TARGET_CPU)
        return 0;
    if (dtype == ERG_DTYPE_FP32)
        return 1;
    return op == ERG_OP_GEMM && dtype == ERG_DTYPE_BF16 && erg__find_sbgemm() != NULL;
}

static double clock_now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The built-in energy estimator: a static power model, graded "estimator" (DESIGN.md grades). */
struct est_state {
    double power_w;
};

static int est_begin(void *ud, erg_diag *diag)
{
    (void)ud;
    (void)diag;
    return ERG_OK;
}

static int est_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag)
{
    (void)diag;
    const struct est_state *st = ud;
    *energy_j = st->power_w * elapsed_s;
    *grade = ERG_GRADE_ESTIMATOR;
    return ERG_OK;
}

/* One configuration's rotating input sets. */
struct sets {
    size_t count, set_bytes;
    float **in1, **in2, **out; /* rmsnorm: x, w, y; softmax: s, -, p; gemm: A, B, C */
    uint16_t **h1, **h2;       /* bf16 GEMM inputs */
};

static void sets_free(struct sets *s)
{
    for (size_t i = 0; i < s->count; i++) {
        if (s->in1)
            free(s->in1[i]);
        if (s->in2)
            free(s->in2[i]);
        if (s->out)
            free(s->out[i]);
        if (s->h1)
            free(s->h1[i]);
        if (s->h2)
            free(s->h2[i]);
    }
    free(s->in1);
    free(s->in2);
    free(s->out);
    free(s->h1);
    free(s->h2);
    memset(s, 0, sizeof *s);
}

/* Deterministic fill in [-1, 1) (splitmix64), different for every set. */
static void fill(float *p, size_t n, uint64_t seed)
{
    uint64_t x = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = erg__splitmix64(&x);
        p[i] = (float)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

static void to_bf16(const float *f, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &f[i], sizeof u);
        h[i] = (uint16_t)(u >> 16);
    }
}

static float *alloc_f(size_t n)
{
    return malloc((n ? n : 1) * sizeof(float));
}

/* *r = a·b; 1 when the product does not fit a size_t */
static int mul_wraps(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 1;
    *r = a * b;
    return 0;
}

static int sets_make(const erg_profile_options *o, const erg_op_dims *d, struct sets *s,
                     erg_diag *diag)
{
    memset(s, 0, sizeof *s);
    /* element counts in size_t; a product that wraps (m = 2^62, k = 4 made 0 elements and a
     * "profile" of nothing) or a GEMM dimension beyond BLAS's int is out of range */
    size_t n1 = 0, n2 = 0, no = 0;
    int wraps = 0;
    switch (d->op) {
    case ERG_OP_RMSNORM:
        wraps = mul_wraps((size_t)d->tokens, (size_t)d->d_model, &n1);
        n2 = (size_t)d->d_model;
        no = n1;
        break;
    case ERG_OP_SOFTMAX: {
        size_t r = d->tokens ? (size_t)d->tokens : (size_t)d->m;
        size_t c = d->tokens ? (size_t)d->tokens : (size_t)d->n;
        wraps = mul_wraps(r, c, &n1);
        no = n1;
        break;
    }
    case ERG_OP_GEMM:
        wraps = d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX ||
                mul_wraps((size_t)d->m, (size_t)d->k, &n1) ||
                mul_wraps((size_t)d->k, (size_t)d->n, &n2) ||
                mul_wraps((size_t)d->m, (size_t)d->n, &no);
        break;
    }
    int bf16 = d->dtype == ERG_DTYPE_BF16;
    size_t in_bytes = 0, out_bytes = 0;
    if (wraps || n1 > SIZE_MAX - n2 || mul_wraps(n1 + n2, bf16 ? 2u : 4u, &in_bytes) ||
        mul_wraps(no, 4u, &out_bytes) || in_bytes > SIZE_MAX - out_bytes)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "%s: dimensions too large (a GEMM dimension above 2^31 - 1, BLAS's "
                            "int, or an input set beyond size_t)",
                            erg_op_name(d->op));
    s->set_bytes = in_bytes + out_bytes;
    if (s->set_bytes > o->max_set_bytes)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "%s: one input set needs %zu bytes, over the limit of %zu",
                            erg_op_name(d->op), s->set_bytes, o->max_set_bytes);
    size_t count = o->min_weight_sets ? o->min_weight_sets : 1;
    while (count < o->max_weight_sets && count * s->set_bytes < o->rotate_bytes)
        count++;
    s->in1 = calloc(count, sizeof *s->in1);
    s->in2 = calloc(count, sizeof *s->in2);
    s->out = calloc(count, sizeof *s->out);
    if (bf16) {
        s->h1 = calloc(count, sizeof *s->h1);
        s->h2 = calloc(count, sizeof *s->h2);
    }
    if (!s->in1 || !s->in2 || !s->out || (bf16 && (!s->h1 || !s->h2)))
        goto nomem;
    for (size_t i = 0; i < count; i++) {
        s->count = i + 1;
        s->in1[i] = alloc_f(n1);
        s->in2[i] = alloc_f(n2);
        s->out[i] = alloc_f(no);
        if (!s->in1[i] || !s->in2[i] || !s->out[i])
            goto nomem;
        /* Set 0 gets pseudo-random values, the others copies of it: rotation needs distinct
         * memory, not distinct values, and a copy costs a fraction of generating. */
        if (i == 0) {
            fill(s->in1[i], n1, 1);
            fill(s->in2[i], n2, 2);
        } else {
            memcpy(s->in1[i], s->in1[0], n1 * sizeof(float));
            memcpy(s->in2[i], s->in2[0], n2 * sizeof(float));
        }
        memset(s->out[i], 0, no * sizeof(float));
        if (bf16) {
            s->h1[i] = malloc((n1 ? n1 : 1) * sizeof(uint16_t));
            s->h2[i] = malloc((n2 ? n2 : 1) * sizeof(uint16_t));
            if (!s->h1[i] || !s->h2[i])
                goto nomem;
            to_bf16(s->in1[i], s->h1[i], n1);
            to_bf16(s->in2[i], s->h2[i], n2);
            /* fp32 copies of sets > 0 are not needed: keep the footprint honest (set 0 stays as
             * the source of the copies until the end) */
            if (i > 0) {
                free(s->in1[i]);
                free(s->in2[i]);
                s->in1[i] = NULL;
                s->in2[i] = NULL;
            }
        }
    }
    return ERG_OK;
nomem:
    sets_free(s);
    return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory for %s input sets",
                        erg_op_name(d->op));
}

erg__profile_exec_fn erg__profile_exec_hook;
void *erg__profile_exec_hook_ud;

static void run_once(const erg_op_dims *d, const struct sets *s, size_t i, erg__sbgemm_fn sb)
{
    if (erg__profile_exec_hook)
        erg__profile_exec_hook(erg__profile_exec_hook_ud, i, s->count,
                               d->dtype == ERG_DTYPE_BF16 ? (const void *)s->h1[i]
                                                          : (const void *)s->in1[i]);
    switch (d->op) {
    case ERG_OP_RMSNORM:
        erg__rmsnorm_f32(s->in1[i], s->in2[i], s->out[i], (size_t)d->tokens, (size_t)d->d_model,
                         1e-6f);
        break;
    case ERG_OP_SOFTMAX:
        if (d->tokens)
            erg__softmax_causal_f32(s->in1[i], s->out[i], (size_t)d->tokens);
        else
            erg__softmax_rows_f32(s->in1[i], s->out[i], (size_t)d->m, (size_t)d->n);
        break;
    case ERG_OP_GEMM:
        if (d->dtype == ERG_DTYPE_BF16)
            erg__gemm_bf16(sb, s->h1[i], s->h2[i], s->out[i], (size_t)d->m, (size_t)d->n,
                           (size_t)d->k);
        else
            erg__gemm_f32(s->in1[i], s->in2[i], s->out[i], (size_t)d->m, (size_t)d->n,
                          (size_t)d->k);
        break;
    }
}

static void kappa_of(const erg_profile_options *o, const erg_op_dims *d, char *buf, size_t size)
{
    if (d->op == ERG_OP_GEMM) {
        char ver[32], core[32];
        erg__blas_identity(ver, sizeof ver, core, sizeof core);
        snprintf(buf, size, "openblas-%.15s-%s-%.15s-t%d", ver,
                 d->dtype == ERG_DTYPE_BF16 ? "sbgemm" : "sgemm", core, o->threads);
    } else if (d->op == ERG_OP_SOFTMAX) {
        snprintf(buf, size, "erg-c-%s", d->tokens ? "causal" : "rows");
    } else {
        snprintf(buf, size, "%s", "erg-c");
    }
}

#define MAX_BATCHES 1024

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* 1.4826·MAD of v (n ≥ 3; the sample sd for n = 2); v is reordered. */
static double robust_sd(double *v, size_t n)
{
    if (n < 2)
        return 0.0;
    if (n == 2)
        return fabs(v[0] - v[1]) / sqrt(2.0);
    qsort(v, n, sizeof *v, cmp_dbl);
    double med = median_sorted(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    qsort(v, n, sizeof *v, cmp_dbl);
    return 1.4826 * median_sorted(v, n);
}

/* The profiling clock (o->clock, or the caller's o->now_s) and the wall clock of the energy
 * windows (CLOCK_MONOTONIC); with o->clock monotonic and no caller's clock they are one clock. */
struct clocks {
    const erg_profile_options *o;
    clockid_t clk;
    int same;
};

static double now_s(const struct clocks *c)
{
    return c->o->now_s ? c->o->now_s(c->o->now_ud) : clock_now_s(c->clk);
}

static double wall_s(void)
{
    return clock_now_s(CLOCK_MONOTONIC);
}

/* Profile one configuration (HYMELL Section 5.1). */
static int profile_one(const erg_profile_options *o, const erg_energy_window *ew,
                       const erg_op_dims *d, erg__sbgemm_fn sb, erg_op_sample *out, erg_diag *diag)
{
    struct clocks clk = {
        o, o->clock == ERG_PROFILE_CLOCK_THREAD_CPU ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, 0};
    clk.same = o->now_s == NULL && o->clock == ERG_PROFILE_CLOCK_MONOTONIC;
    int rc = erg_op_dims_check(d, diag);
    if (rc != ERG_OK)
        return rc;
    if (!erg_profile_supports(o->target, d->op, d->dtype))
        return erg_diag_set(diag, ERG_ENOTSUP, NULL,
                            "%s in %s is not available on this target (Debian's OpenBLAS has no "
                            "cblas_sbgemm; the own kernels are fp32 only)",
                            erg_op_name(d->op), erg_dtype_name(d->dtype));
    struct sets s;
    if ((rc = sets_make(o, d, &s, diag)) != ERG_OK)
        return rc;
    memset(out, 0, sizeof *out);
    out->dims = *d;
    kappa_of(o, d, out->kappa, sizeof out->kappa);

    /* Warm-up on set 0 (OpenBLAS buffers allocated, code paged in), timed to size the batches:
     * a second execution unless the first already took 50 ms (then the warm-up effects are
     * small next to it). Every set's pages were touched when it was written. */
    double t_est = 0.0;
    for (int i = 0; i < 2; i++) {
        double t0 = now_s(&clk);
        run_once(d, &s, 0, sb);
        t_est = now_s(&clk) - t0;
        if (t_est >= 0.05)
            break;
    }
    if (!(t_est > 0))
        t_est = 1e-9;
    unsigned batches = o->batches >= 2 ? o->batches : 2;
    double per_batch_s = fmax(o->min_time_s / batches, o->min_window_s);
    /* repetitions per batch: at most 10^15 (a day of 0.1 ns executions), so the casts from double
     * below are defined whatever the clock says */
    uint64_t b = per_batch_s > t_est ? (uint64_t)fmin(ceil(per_batch_s / t_est), 1e15) : 1;
    double bt[MAX_BATCHES], be[MAX_BATCHES], total_t = 0, total_e = 0;
    uint64_t reps = 0, nb = 0;
    unsigned discarded = 0;
    size_t next = 0;
    erg_grade grade = ERG_GRADE_HW_SHUNT;
    while (total_t < o->min_time_s || nb < 2) {
        if ((rc = ew->begin(ew->ud, diag)) != ERG_OK)
            goto done;
        double w0 = clk.same ? 0.0 : wall_s();
        double t0 = now_s(&clk);
        for (uint64_t r = 0; r < b; r++) {
            run_once(d, &s, next, sb);
            next = next + 1 == s.count ? 0 : next + 1;
        }
        double dt = now_s(&clk) - t0;
        double dw = clk.same ? dt : wall_s() - w0; /* the energy window's duration */
        double e_j;
        erg_grade g;
        if (dw < o->min_window_s && discarded < 20) {
            /* too short for the meter's update period: discard, grow the batch, repeat */
            ew->end(ew->ud, dw, &e_j, &g, NULL);
            double grow = dw > 0 ? 1.25 * o->min_window_s / dw : 2.0;
            b = (uint64_t)fmin(ceil((double)b * fmax(grow, 2.0)), 1e15);
            discarded++;
            continue;
        }
        if ((rc = ew->end(ew->ud, dw, &e_j, &g, diag)) != ERG_OK)
            goto done;
        /* Energy and time on one time base: the window's mean power e_j/dw times the batch's
         * time on the profiling clock. With the thread clock the window (wall time) is longer
         * than dt whenever the thread was descheduled, and e_j/dt would imply a power the meter
         * never saw. With one clock dt = dw and e_j is kept as measured. */
        if (!clk.same && dw > 0)
            e_j *= dt / dw;
        grade = erg_grade_weakest(grade, g);
        if (nb < MAX_BATCHES) {
            bt[nb] = dt / (double)b;
            be[nb] = e_j / (double)b;
        }
        total_t += dt;
        total_e += e_j;
        reps += b;
        nb++;
    }
    out->reps = reps;
    out->time_s = total_t / (double)reps;
    out->energy_j = total_e / (double)reps;
    {
        /* sd of one execution, as honestly as batches allow: the spread across batches of the
         * per-execution mean of each batch (batch time / b), estimated robustly as 1.4826·MAD so
         * that one batch hit by an interrupt does not dominate it. It is deliberately not scaled
         * by √b: that would assume the batch-to-batch noise comes from independent executions,
         * whereas on a real machine it is mostly shared by the whole batch (frequency, other
         * processes, cache state), and scaling it by √b (b up to 10⁶) turned it into an sd many
         * times the mean. What it measures: the run-to-run variation of the per-execution cost
         * at the batch time scale (≥ min_window_s); the jitter of single executions far below
         * the clock's resolution averages out inside a batch and is not included. */
        size_t k = nb < MAX_BATCHES ? (size_t)nb : MAX_BATCHES;
        out->time_sd_s = robust_sd(bt, k);
        out->energy_sd_j = robust_sd(be, k);
    }
    out->grade = grade;
    out->has_grade = 1;
done:
    sets_free(&s);
    return rc;
}

int erg_profile_ops(const erg_profile_options *o, const erg_op_dims *grid, size_t n,
                    erg_op_sample *out, size_t *done, erg_diag *diag)
{
    if (done)
        *done = 0;
    /* the times bound the repetition counts (uint64_t) cast from their ratios: a day each */
    if (!o || (!grid && n) || (!out && n) || !(o->min_time_s >= 0 && o->min_time_s <= 86400) ||
        !(o->min_window_s >= 0 && o->min_window_s <= 86400) || o->threads < 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "bad profiler options");
    if (o->clock == ERG_PROFILE_CLOCK_THREAD_CPU && o->threads != 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "the thread CPU clock needs threads = 1 (OpenBLAS workers would not be "
                            "counted)");
    if (o->target == ERG_TARGET_CUDA)
        return erg_diag_set(
            diag, ERG_ENOTSUP, NULL,
            "target cuda is an extension point not built into this erg (it needs "
            "cuBLAS timed by CUDA events and NVML energy windows; see docs/predict.md)");
    if (o->target != ERG_TARGET_CPU)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown target");
    struct est_state est = {o->est_power_w};
    erg_energy_window builtin = {&est, est_begin, est_end};
    const erg_energy_window *ew = o->energy ? o->energy : &builtin;
    erg__blas_set_threads(o->threads);
    erg__sbgemm_fn sb = erg__find_sbgemm();
    int rc = ERG_OK;
    for (size_t i = 0; i < n; i++) {
        rc = profile_one(o, ew, &grid[i], sb, &out[i], diag);
        if (rc != ERG_OK) {
            if (diag && diag->where[0] == '\0')
                snprintf(diag->where, sizeof diag->where, "grid row %zu", i + 1);
            break;
        }
        if (done)
            *done = i + 1;
        if (o->progress)
            o->progress(o->progress_ud, i + 1, n, &out[i]);
    }
    /* BLAS threads stay off outside the profiler (issue 13): the caller's process goes on with
     * one, as it was loaded */
    erg__blas_set_threads(1);
    return rc;
}

void erg_target_identity(char *kind, size_t kind_size, char *desc, size_t desc_size)
{
    /* through the meter's root-fd seam: resolved inside $ERG_ROOT (not taken under elevated
     * privilege), only a regular file read */
    char model[128] = "unknown";
    char *buf;
    size_t len;
    if (erg__fsroot_read(NULL, "proc/cpuinfo", 1u << 20, &buf, &len) == 0) {
        char *p = strstr(buf, "model name");
        if (p && (p = strchr(p, ':'))) {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t i = 0;
            while (p[i] && p[i] != '\n' && i + 1 < sizeof model) {
                model[i] = p[i];
                i++;
            }
            model[i] = '\0';
        }
        free(buf);
    }
    char k[128] = "cpu-";
    size_t j = 4;
    int dash = 1;
    for (const char *q = model; *q && j + 1 < sizeof k; q++) {
        if (isalnum((unsigned char)*q)) {
            k[j++] = (char)tolower((unsigned char)*q);
            dash = 0;
        } else if (!dash) {
            k[j++] = '-';
            dash = 1;
        }
    }
    while (j > 4 && k[j - 1] == '-')
        j--;
    k[j] = '\0';
    snprintf(kind, kind_size, "%s", k);
    char ver[32], core[32];
    erg__blas_identity(ver, sizeof ver, core, sizeof core);
    snprintf(desc, desc_size, "%s; OpenBLAS %s core %s", model, ver, core);
}

int erg_profile_default_grid(erg_target target, char *buf, size_t *size)
{
    return erg__data_path("grids", "ERG_GRID_DIR",
                          target == ERG_TARGET_CUDA ? "cuda.csv" : "cpu.csv", buf, size);
}
