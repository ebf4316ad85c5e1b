/* SPDX-License-Identifier: MIT */
/* Private: what level 3 and the predictor share. */
#ifndef ERG_PREDICT_LEVELS_H
#define ERG_PREDICT_LEVELS_H

#include <jansson.h>

#include "erg/predict.h"

/* The blocks of one phase at level 2 (l2 may be NULL: level 1), factors 1, total = the sum
 * (blocks.c). */
int erg__predict_blocks(const erg_op_model *l1, const erg_block_model *l2, const erg_arch *a,
                        const erg_phase_spec *ph, erg_model_prediction *out, erg_diag *diag);

/* Apply the level-3 correction (m may be NULL: none) to a prediction from erg__predict_blocks
 * (e2e.c). */
void erg__e2e_apply(const erg_e2e_model *m, const erg_arch *a, erg_model_prediction *p);

/* Shared model/1 helpers (blocks.c). */
int erg__check_features(const json_t *root, const char *const *want, int n, const char *file,
                        erg_diag *diag);
int erg__model_kind_load(const char *path, const char *kind, json_t **root, erg_diag *diag);

#endif
