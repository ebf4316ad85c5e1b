/* SPDX-License-Identifier: MIT */
/* Private: the CPU kernels the profiler times. */
#ifndef ERG_PREDICT_KERNELS_H
#define ERG_PREDICT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* y[i,:] = x[i,:] / sqrt(mean(x[i,:]²) + eps) · w, for tokens rows of d floats (RMSNorm,
 * Zhang & Sennrich 2019). */
void erg__rmsnorm_f32(const float *x, const float *w, float *y, size_t tokens, size_t d, float eps);

/* Causal softmax of an n × n row-major score matrix: row i is normalised over columns 0..i and
 * columns i+1..n-1 are set to 0 (the mask). */
void erg__softmax_causal_f32(const float *s, float *p, size_t n);

/* Row-wise softmax of an m × n matrix (no mask). */
void erg__softmax_rows_f32(const float *s, float *p, size_t m, size_t n);

/* C(m×n) = A(m×k) · B(k×n), row-major, through OpenBLAS cblas_sgemm. */
void erg__gemm_f32(const float *a, const float *b, float *c, size_t m, size_t n, size_t k);

/* cblas_sbgemm (bf16 inputs as uint16_t bit patterns, fp32 output), looked up once with
 * erg__find_sbgemm(): NULL when the linked OpenBLAS does not export it. */
typedef void (*erg__sbgemm_fn)(int, int, int, int, int, int, float, const uint16_t *, int,
                               const uint16_t *, int, float, float *, int);
erg__sbgemm_fn erg__find_sbgemm(void);

/* C(m×n) = A·B in bf16 through f. */
void erg__gemm_bf16(erg__sbgemm_fn f, const uint16_t *a, const uint16_t *b, float *c, size_t m,
                    size_t n, size_t k);

/* OpenBLAS identity: version ("0.3.21") and core ("Zen"); set the thread count. */
void erg__blas_identity(char *version, size_t vsize, char *core, size_t csize);
void erg__blas_set_threads(int threads);

/* Test seam of the profiler (profile.c; NULL in use): called before every execution it runs,
 * warm-up and timed, with the index of the input set the execution uses, the number of sets
 * of the configuration, and the first input's buffer as passed to the kernel. Lets tests check
 * the weight-set rotation of HYMELL Section 5.1. Not thread-safe: set it, profile, clear it. */
typedef void (*erg__profile_exec_fn)(void *ud, size_t set, size_t nsets, const void *input);
extern erg__profile_exec_fn erg__profile_exec_hook;
extern void *erg__profile_exec_hook_ud;

#endif
