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
};

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
    struct erg__op_est op[ERG_OP_COUNT];
    char notes[2048];
};

/* Fill lsq->w from coef and scale. */
void erg__lsq_finish(struct erg__lsq *l, unsigned p);

/* Fit used by a regime (its own, its neighbour's, or the pooled one); NULL when none. */
const struct erg__lsq *erg__regime_fit(const struct erg__op_est *e, unsigned r, int energy);

/* Roofline work of a configuration: FLOPs and bytes moved (docs/predict.md). */
void erg__roofline_work(const erg_op_dims *d, double *flops, double *bytes);

#endif
