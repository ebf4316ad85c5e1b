/* SPDX-License-Identifier: MIT */
#include "predict/kernels.h"
#include "core/dynlib.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * OpenBLAS is loaded only when the profiler first needs it (core/dynlib.h, the seam cairo, GLPK and
 * libmicrohttpd are loaded through), not with every erg process:
 * when linked it starts a thread pool at load time whose server thread spins on sched_yield
 * (~0.09 s of CPU in every process, perturbing the energy erg measures) and which kills the
 * process at start-up when a process or thread limit refuses the threads. It is loaded with one
 * thread (OPENBLAS_NUM_THREADS=1 while dlopen runs, unless the user set it); the profiler then sets
 * the count it wants (erg__blas_set_threads). Without OpenBLAS, GSL's own CBLAS answers (slower,
 * and named "gslcblas" in the profile's identity): unlike the other on-demand libraries its
 * absence is no error (ERG_ENOLIB is not passed on).
 */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
struct blas_fns {
    sgemm_fn sgemm;        /* required: without it, GSL's CBLAS */
    erg__sbgemm_fn sbgemm; /* the others optional: NULL when the build lacks them */
    char *(*config)(void);
    char *(*corename)(void);
    void (*set_threads)(int);
};
static struct blas_fns blas;
static struct erg__dynlib openblas_lib =
    ERG__DYNLIB_INIT("libopenblas.so.0", "the profiler's GEMMs", "libopenblas0");
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static int blas_bind(void *handle, void *table, const char **missing)
{
    struct blas_fns *t = table;
    if (!erg__dynlib_sym(handle, "cblas_sgemm", &t->sgemm, sizeof t->sgemm)) {
        *missing = "cblas_sgemm";
        return ERG_ENOLIB;
    }
    erg__dynlib_sym(handle, "cblas_sbgemm", &t->sbgemm, sizeof t->sbgemm);
    erg__dynlib_sym(handle, "openblas_get_config", &t->config, sizeof t->config);
    erg__dynlib_sym(handle, "openblas_get_corename", &t->corename, sizeof t->corename);
    erg__dynlib_sym(handle, "openblas_set_num_threads", &t->set_threads, sizeof t->set_threads);
    return ERG_OK;
}

static void blas_load(void)
{
    int set = getenv("OPENBLAS_NUM_THREADS") == NULL;
    if (set)
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
    if (erg__dynlib_load(&openblas_lib, blas_bind, &blas, NULL) != ERG_OK)
        memset(&blas, 0, sizeof blas); /* GSL's CBLAS answers */
    if (set)
        unsetenv("OPENBLAS_NUM_THREADS");
}

/* Reductions keep 16 independent partial sums so that the compiler vectorises them without
 * -ffast-math (a single float accumulator is a serial dependency chain). */
#define LANES 16

static float sum_squares(const float *x, size_t d)
{
    float acc[LANES] = {0};
    size_t j = 0;
    for (; j + LANES <= d; j += LANES)
        for (size_t l = 0; l < LANES; l++)
            acc[l] += x[j + l] * x[j + l];
    float s = 0.0f;
    for (size_t l = 0; l < LANES; l++)
        s += acc[l];
    for (; j < d; j++)
        s += x[j] * x[j];
    return s;
}

void erg__rmsnorm_f32(const float *x, const float *w, float *y, size_t tokens, size_t d, float eps)
{
    for (size_t i = 0; i < tokens; i++) {
        const float *xi = x + i * d;
        float *yi = y + i * d;
        float r = 1.0f / sqrtf(sum_squares(xi, d) / (float)d + eps);
        for (size_t j = 0; j < d; j++)
            yi[j] = xi[j] * r * w[j];
    }
}

static void softmax_row(const float *s, float *p, size_t len)
{
    float mx[LANES];
    for (size_t l = 0; l < LANES; l++)
        mx[l] = s[0];
    size_t j = 0;
    for (; j + LANES <= len; j += LANES)
        for (size_t l = 0; l < LANES; l++)
            mx[l] = s[j + l] > mx[l] ? s[j + l] : mx[l];
    float m = mx[0];
    for (size_t l = 1; l < LANES; l++)
        m = mx[l] > m ? mx[l] : m;
    for (; j < len; j++)
        m = s[j] > m ? s[j] : m;
    float sum = 0.0f;
    for (j = 0; j < len; j++) {
        p[j] = expf(s[j] - m);
        sum += p[j];
    }
    float inv = 1.0f / sum;
    for (j = 0; j < len; j++)
        p[j] *= inv;
}

void erg__softmax_causal_f32(const float *s, float *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        softmax_row(s + i * n, p + i * n, i + 1);
        memset(p + i * n + i + 1, 0, (n - i - 1) * sizeof *p);
    }
}

void erg__softmax_rows_f32(const float *s, float *p, size_t m, size_t n)
{
    for (size_t i = 0; i < m; i++)
        softmax_row(s + i * n, p + i * n, n);
}

void erg__gemm_f32(const float *a, const float *b, float *c, size_t m, size_t n, size_t k)
{
    pthread_once(&blas_once, blas_load);
    if (blas.sgemm)
        blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                   (int)k, b, (int)n, 0.0f, c, (int)n);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)n, 0.0f, c, (int)n);
}

/* Debian's OpenBLAS 0.3.21 declares cblas_sbgemm in its header but is built without
 * BUILD_BFLOAT16, so the symbol is absent: NULL then. */
erg__sbgemm_fn erg__find_sbgemm(void)
{
    pthread_once(&blas_once, blas_load);
    return blas.sbgemm;
}

void erg__gemm_bf16(erg__sbgemm_fn f, const uint16_t *a, const uint16_t *b, float *c, size_t m,
                    size_t n, size_t k)
{
    f(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)n,
      0.0f, c, (int)n);
}

void erg__blas_identity(char *version, size_t vsize, char *core, size_t csize)
{
    pthread_once(&blas_once, blas_load);
    if (!blas.sgemm) {
        snprintf(version, vsize, "gslcblas");
        snprintf(core, csize, "generic");
        return;
    }
    /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    const char *cfg = blas.config ? blas.config() : NULL;
    const char *cn = blas.corename ? blas.corename() : NULL;
    char v[32] = "unknown";
    if (cfg && strncmp(cfg, "OpenBLAS ", 9) == 0) {
        size_t i = 0;
        for (const char *q = cfg + 9; *q && *q != ' ' && i + 1 < sizeof v; q++)
            v[i++] = *q;
        v[i] = '\0';
    }
    snprintf(version, vsize, "%s", v);
    snprintf(core, csize, "%s", cn ? cn : "unknown");
}

void erg__blas_set_threads(int threads)
{
    pthread_once(&blas_once, blas_load);
    if (blas.set_threads)
        blas.set_threads(threads);
}
