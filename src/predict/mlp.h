/* SPDX-License-Identifier: MIT */
/* Private: the small multilayer perceptrons of HYMELL levels 2 and 3 (Sections 3.4-3.6).
 * Trained with FANN (RPROP, deterministic initial weights from a seeded generator, early
 * stopping on a seeded validation share); evaluated by erg's own forward pass, which is
 * allocation-free and thread-safe (fann_run writes into the network). */
#ifndef ERG_PREDICT_MLP_H
#define ERG_PREDICT_MLP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/splitmix.h"

#include "erg/error.h"

#define ERG__MLP_MAX_IN 24
#define ERG__MLP_MAX_OUT 2
#define ERG__MLP_MAX_WIDTH 64
#define ERG__MLP_MAX_LAYERS 6 /* input, up to 4 hidden, output */

struct erg__mlp {
    unsigned n_layers;                  /* including input and output */
    unsigned size[ERG__MLP_MAX_LAYERS]; /* size[0] inputs, size[n_layers-1] outputs */
    double in_mean[ERG__MLP_MAX_IN], in_sd[ERG__MLP_MAX_IN];
    double out_mean[ERG__MLP_MAX_OUT], out_sd[ERG__MLP_MAX_OUT];
    double out_lo[ERG__MLP_MAX_OUT], out_hi[ERG__MLP_MAX_OUT]; /* clamp of the outputs */
    double *w; /* layer l ≥ 1: size[l] rows of size[l-1] + 1 (bias last), row-major */
    size_t n_w;
    unsigned epochs; /* epochs of the kept weights */
};

struct erg__mlp_options {
    unsigned hidden_layers; /* default 2 */
    unsigned width;         /* default 16 */
    unsigned max_epochs;    /* default 600 */
    double val_fraction;    /* early-stopping share (default 0.2; none under 20 rows) */
    uint64_t seed;          /* default 42 */
};

void erg__mlp_options_init(struct erg__mlp_options *o);

/* Train on n rows: X is n × n_in, Y n × n_out (row-major). Inputs and outputs are standardised
 * with the training rows' mean and sd; hidden units tanh, outputs linear. Outputs are clamped at
 * prediction into the training range widened by half its width on each side. Errors:
 * ERG_EINVAL (sizes), ERG_ENOMEM. */
int erg__mlp_train(const double *X, const double *Y, size_t n, unsigned n_in, unsigned n_out,
                   const struct erg__mlp_options *o, struct erg__mlp *out, erg_diag *diag);

/* A ridge regression in standardised inputs (a network without hidden layers: linear output):
 * minimises Σ(ŷ − y)² + λ·n·|w|² per output. Errors: ERG_EINVAL, ERG_ESINGULAR, ERG_ENOMEM. */
int erg__linear_train(const double *X, const double *Y, size_t n, unsigned n_in, unsigned n_out,
                      double lambda, struct erg__mlp *out, erg_diag *diag);

/* Forward pass (raw inputs → raw outputs). No allocation. */
void erg__mlp_run(const struct erg__mlp *m, const double *x, double *y);

void erg__mlp_free(struct erg__mlp *m);

/* {"layers": [...], "in_mean", "in_sd", "out_mean", "out_sd", "out_lo", "out_hi", "weights",
 *  "epochs"}; NULL on allocation failure. */
json_t *erg__mlp_to_json(const struct erg__mlp *m);

/* Read what erg__mlp_to_json wrote, checking n_in and n_out and every array's length; errors
 * ERG_EPARSE naming file and path. */
int erg__mlp_from_json(const json_t *j, unsigned n_in, unsigned n_out, struct erg__mlp *out,
                       const char *file, const char *path, erg_diag *diag);

#endif
