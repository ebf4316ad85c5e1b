/* SPDX-License-Identifier: MIT */
#include "predict/kernels.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f,
                a, (blasint)k, b, (blasint)n, 0.0f, c, (blasint)n);
}

/* Debian's OpenBLAS 0.3.21 declares cblas_sbgemm in its header but is built without
 * BUILD_BFLOAT16, so the symbol is absent: look it up at run time instead of linking it. */
erg__sbgemm_fn erg__find_sbgemm(void)
{
    void *self = dlopen(NULL, RTLD_NOW);
    if (!self)
        return NULL;
    void *sym = dlsym(self, "cblas_sbgemm");
    dlclose(self);
    if (!sym)
        return NULL;
    erg__sbgemm_fn f;
    memcpy(&f, &sym, sizeof f); /* object-to-function pointer without a pedantic cast */
    return f;
}

void erg__gemm_bf16(erg__sbgemm_fn f, const uint16_t *a, const uint16_t *b, float *c, size_t m,
                    size_t n, size_t k)
{
    f(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)n,
      0.0f, c, (int)n);
}

void erg__blas_identity(char *version, size_t vsize, char *core, size_t csize)
{
    const char *cfg = openblas_get_config(); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    const char *cn = openblas_get_corename();
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
    openblas_set_num_threads(threads);
}
