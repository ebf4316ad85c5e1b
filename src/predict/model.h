/* SPDX-License-Identifier: MIT */
/* Private: the in-memory level-1 model shared by fit.c and model_io.c. */
#ifndef ERG_PREDICT_MODEL_H
#define ERG_PREDICT_MODEL_H

#include "erg/predict.h"

#define ERG__FALLBACK_POOLED ERG_OP_MAX_REGIMES /* fallback_to: one fit over all regimes */

struct erg__lsq {
    int present;
    double scale[ERG_OP_MAX_FEATURES]; /* column scales s_j */
    double coef[ERG_OP_MAX_FEATURES];  /* coefficients in scaled features */
    double w[ERG_OP_MAX_FEATURES];     /* coef_j / s_j, for prediction */
    double lambda;                     /* Tikhonov parameter chosen by GCV (0: truncated SVD) */
};

struct erg__regime {
    unsigned n_train;
    int fallback; /* uses regime fallback_to's fit (or the pooled fit) */
    unsigned fallback_to;
    struct erg__lsq time, energy;
};

/* Physical bounds of an op measured on its training rows (docs/predict.md, "Bounds"). */
struct erg__bounds {
    int present;
    double peak_flop_s;       /* largest FLOP/s of the op's training rows */
    double bandwidth_bytes_s; /* largest bytes/s of any training row (all ops) */
    double launch_time_s;     /* fixed cost of a call t0: intercept of t = t0 + s·roofline over
                                 the half of the rows with the least work, in [0, min t] */
    double work_lo, work_hi;  /* split value (F, N·d, √(R·C)) over the training rows */
    double ai_lo, ai_hi;      /* GEMM arithmetic intensity over the training rows (else 0) */
    double eta; /* median (t − t0) / roofline time over the quarter of the training rows with the
                   most work (at least 1): the efficiency of large work */
    double eta_hi; /* max (t − launch_time_s) / roofline time over all training rows: the worst
                      efficiency seen; launch + eta_hi · roofline bounds every row from above */
    double power_lo_w, power_med_w, power_hi_w; /* E/t over the training rows (NaN: no energy) */
};

struct erg__op_est {
    int present, has_energy;
    erg_dtype dtype;
    char kappa[64];
    unsigned nfeat, nreg;
    int chosen;                       /* thresholds chosen from data */
    int64_t range_lo[5], range_hi[5]; /* m, n, k, tokens, d_model over the training samples */
    struct erg__regime reg[ERG_OP_MAX_REGIMES];
    struct erg__lsq pooled_time, pooled_energy;
    erg_op_validation val[ERG_OP_MAX_REGIMES + 1];
    struct erg__bounds bnd;
    int form;           /* GEMM: ERG_GEMM_FORM_PAPER or ERG_GEMM_FORM_CACHE */
    double cache_bytes; /* ERG_GEMM_FORM_CACHE: the footprint up to which weights are cached */
};

/* The features of d under e's form (erg_op_features, or erg_gemm_cache_features). */
unsigned erg__op_est_features(const struct erg__op_est *e, const erg_op_dims *d, double *x);

struct erg_op_model {
    char target_kind[128];
    char target_desc[256];
    int has_grade;
    erg_grade grade;
    erg_op_thresholds th;
    double test_fraction;
    uint64_t seed;
    size_t n_samples;
    double peak_flop_s, bandwidth_bytes_s, mean_power_w;
    double call_time_s; /* one eager framework call (erg_op_model_call_time_s); 0: none */
    struct erg__op_est op[ERG_OP_COUNT];
    char notes[2048];
    /* A GPU target's measured fused kernels (gpu.json beside ops.json; NULL: none): level 1
     * answers a block's attention core (QK^T, softmax, ·V) with them (block_level1.c). */
    erg_gpu_kernels *kernels;
    /* A GPU target's measured-shape GEMM map (gemm-map.json beside ops.json; NULL: none). */
    struct erg__gemm_map *gemm_map;
};

/* The measured-shape GEMM map (gemm_map.c; built by gemm_map_build.c): cells of
 * (log2 m, log2 n, log2 k) / step, sorted, each the median measured / estimator time ratio and
 * median power (NaN: none). */
struct erg__gemm_map {
    double step;
    size_t n;
    int32_t (*key)[3];
    double *ratio, *power_w;
};
void erg__gemm_map_free(struct erg__gemm_map *g);
/* The cell index of a dimension v >= 1: round(log2 v / step). */
int32_t erg__gemm_map_cell(int64_t v, double step);
/* Order of two cell keys (3 indices), lexicographic: <0, 0, >0. */
int erg__gemm_map_key_cmp(const int32_t *a, const int32_t *b);
/* 1 and the cell's ratio and power when d (a GEMM) falls in a cell, else 0. */
int erg__gemm_map_lookup(const struct erg__gemm_map *g, const erg_op_dims *d, double *ratio,
                         double *power_w);
/* Build the map of m's GEMM estimator from the aic-gemm rows of t (m's dtype, inside its range)
 * and write it to out (gemm-map/1 JSON, whole or not at all); m's own map is dropped first.
 * Errors: ERG_EINVAL (no GEMM estimator, no usable row), ERG_EIO, ERG_ENOMEM. */
int erg__gemm_map_build(erg_op_model *m, const erg_public_table *const *t, size_t nt,
                        const char *out, size_t *cells, size_t *rows, erg_diag *diag);
/* Load a gemm-map/1 file for a GEMM estimator of dtype. Errors: ERG_ENOENT, ERG_EIO, ERG_EPARSE
 * (file, member), ERG_ENOMEM. */
int erg__gemm_map_load(const char *path, erg_dtype dtype, struct erg__gemm_map **out,
                       erg_diag *diag);

/* Fill lsq->w from coef and scale. */
void erg__lsq_finish(struct erg__lsq *l, unsigned p);

/* Fit used by a regime (its own, its neighbour's, or the pooled one); NULL when none. */
const struct erg__lsq *erg__regime_fit(const struct erg__op_est *e, unsigned r, int energy);

/* Roofline work of a configuration: FLOPs and bytes moved (docs/predict.md). */
void erg__roofline_work(const erg_op_dims *d, double *flops, double *bytes);

/* Roofline lower bound on the time of d: max(FLOPs / op peak, bytes / bandwidth) from the op's
 * bounds (0 when the bounds are absent). */
double erg__roofline_time(const struct erg__bounds *b, const erg_op_dims *d);

/* The op's calibrated roofline with overhead: launch_time_s + eta · erg__roofline_time. */
double erg__roofline_predict(const struct erg__bounds *b, const erg_op_dims *d);

/* Path of a data file (sub "models" or "grids"): $<env_dir>/file when that variable is set;
 * else $ERG_DATA_DIR/sub/file when set; else the first readable of <program dir>/<bindir→datadir>/
 * erg/sub/file (a relocated install), <configured datadir>/erg/sub/file and <source tree>/sub/file;
 * none readable: the configured install path. Into buf of *size bytes by core/path.h's rule
 * (ERG_OK and the length in *size, or ERG_ERANGE and the size needed). */
int erg__data_path(const char *sub, const char *env_dir, const char *file, char *buf, size_t *size);

/* The names of the sub-folders holding member (e.g. "ops.json") in every folder erg__data_path
 * searches for sub (only $<env_dir>, or only $ERG_DATA_DIR/sub, when set), sorted, without
 * repeats, ", "-separated into buf of size bytes (truncated at a whole name; "" when none).
 * Returns how many there are (at most 64 are listed). */
size_t erg__data_list(const char *sub, const char *env_dir, const char *member, char *buf,
                      size_t size);

#endif
