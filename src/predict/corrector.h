/* SPDX-License-Identifier: MIT */
/* Private: a correction of log(measured / base) learnt by an MLP (or a constant when the data is
 * too thin), with leave-one-architecture-out held-out predictions and the sd of their
 * residuals. Shared by level 2 (blocks.c) and level 3 (e2e.c). */
#ifndef ERG_PREDICT_CORRECTOR_H
#define ERG_PREDICT_CORRECTOR_H

#include <jansson.h>

#include "erg/predict.h"
#include "predict/mlp.h"

/* Fewer rows (or one architecture): a constant correction, the mean log ratio. */
#define ERG__CORRECTOR_MIN_ROWS 8

struct erg__corrector {
    int present;
    unsigned n_in, n_out;
    int constant;    /* 1: c[] only */
    int linear;      /* 1: mlp is a ridge regression (no hidden layer) */
    char method[40]; /* the candidate chosen: "constant", "linear l=0.1", "mlp 2x16" */
    double score[8]; /* held-out score of each candidate (NaN: not tried) */
    unsigned n_candidates;
    double c[ERG__MLP_MAX_OUT];     /* the mean log ratio (constant correction) */
    struct erg__mlp mlp;            /* when !constant */
    double sigma[ERG__MLP_MAX_OUT]; /* sd of the held-out log residuals (training residuals
                                       when no hold-out was possible: sigma_from "training") */
    int sigma_heldout;              /* 1 when sigma comes from held-out residuals */
    size_t n_rows;
    unsigned n_groups;
};

/* Fit on n rows. Candidates: a constant, ridge regressions (λ 0.01, 0.1, 1) and MLPs (1 × 8,
 * and o's layers × width); with o->cross_validate and two or more groups, the one with the
 * lowest leave-one-group-out score (Σ over outputs of the mean squared held-out residual over
 * the output's variance) is kept, else the MLP (the constant under ERG__CORRECTOR_MIN_ROWS).
 * Fit (X n × n_in, Y n × n_out, group[i] the architecture index of row i). heldout
 * (n × n_out, may be NULL) receives each row's prediction by a fit that saw no row of its
 * group (NaN when o->cross_validate is 0 or there is one group). Errors: ERG_EINVAL, ERG_ENOMEM. */
int erg__corrector_fit(const double *X, const double *Y, const int *group, size_t n, unsigned n_in,
                       unsigned n_out, const erg_mlp_options *o, struct erg__corrector *out,
                       double *heldout, erg_diag *diag);

/* What corrects a subset of the rows (a group: e.g. one phase): the correction fitted on every
 * row, one fitted on the subset's rows only, or none (the base as it is). */
enum { ERG__USE_SHARED, ERG__USE_OWN, ERG__USE_NONE, ERG__USE_COUNT };
extern const char *const erg__use_names[ERG__USE_COUNT];

/* For the rows with mask[i] (of n; X n × n_in, Y n × n_out, grp the architectures): fit own on
 * those rows alone (leave-one-architecture-out within them) and choose *use among the shared
 * correction (whose held-out predictions H holds), own and none by the held-out MAPE of
 * base·exp(ŷ) against measured (mt, me; bases bt, be; time and energy when n_out is 2) on the
 * subset; score[] gets each option's MAPE (%, NaN when not tried). H is overwritten, for the
 * subset, with the chosen option's held-out predictions (0 for none); own is freed unless
 * chosen. Errors: ERG_ENOMEM, those of erg__corrector_fit. */
int erg__corrector_choose(const double *X, const double *Y, const int *grp, const int *mask,
                          size_t n, unsigned n_in, unsigned n_out, const erg_mlp_options *o,
                          const double *mt, const double *me, const double *bt, const double *be,
                          double *H, struct erg__corrector *own, int *use,
                          double score[ERG__USE_COUNT], erg_diag *diag);

/* The correction ŷ (n_out values) at x. No allocation. */
void erg__corrector_apply(const struct erg__corrector *c, const double *x, double *y);

void erg__corrector_free(struct erg__corrector *c);

json_t *erg__corrector_to_json(const struct erg__corrector *c);
int erg__corrector_from_json(const json_t *j, unsigned n_in, struct erg__corrector *out,
                             const char *file, const char *path, erg_diag *diag);

/* Accuracy of predicted against measured over the rows with mask[i] (mask NULL: all): MAPE (%),
 * R²; base (may be NULL) gives the base MAPE. Rows with a non-finite value are skipped. */
void erg__accuracy(const double *measured, const double *predicted, const double *base,
                   const int *mask, size_t n, size_t *count, double *mape_pct, double *r2,
                   double *base_mape_pct);

/*
 * The rows of a level-2 or level-3 fit (blocks.c per block kind, e2e.c per model row): for each
 * row the lower level's estimate (base), what was measured, the features and the log-ratio
 * targets log(measured / base); after the fit, the held-out corrections H and the predictions
 * base · exp(H). Arrays are n long unless said otherwise.
 */
struct erg__fit_rows {
    size_t n;
    unsigned n_in, n_out;    /* features per row; 2 outputs (time, energy) or 1 (time only) */
    double *X;               /* n × n_in features (the caller writes row r at X + r·n_in) */
    double *Y;               /* n × n_out: log(measured / base) */
    double *H;               /* n × n_out held-out corrections (erg__corrector_fit) */
    double *base_t, *base_e; /* the lower level's time (s) and energy (J) */
    double *meas_t, *meas_e; /* measured time (s) and energy (J; NAN with one output) */
    double *pred_t, *pred_e; /* base · exp(H) (erg__fit_rows_predict) */
    int *grp;                /* each row's architecture index, in order of first appearance */
    int *mask;               /* the caller's row selection for erg__fit_rows_accuracy */
    const char **arch;       /* architecture names by index (not owned), n_arch of them */
    int n_arch;
};

/* Allocate for n ≥ 1 rows of n_in features; energy: whether every row has a measured energy (two
 * outputs). Errors: ERG_ENOMEM (nothing left to free). */
int erg__fit_rows_init(struct erg__fit_rows *f, size_t n, unsigned n_in, int energy,
                       erg_diag *diag);

/* Fill row r (its features apart): targets, base, measured values and the architecture's group.
 * arch is kept, not copied. With two outputs a base energy that is not finite and > 0 is
 * ERG_EINVAL naming target: "the level-1 model has no energy, but the <what> rows have". */
int erg__fit_rows_set(struct erg__fit_rows *f, size_t r, const char *arch, double base_t,
                      double base_e, double time_s, double energy_j, const char *target,
                      const char *what, erg_diag *diag);

/* pred = base · exp(H) for every row (energy NAN with one output). */
void erg__fit_rows_predict(struct erg__fit_rows *f);

/* Accuracy of pred against meas over the rows with f->mask[i] (erg__accuracy, time and energy). */
void erg__fit_rows_accuracy(const struct erg__fit_rows *f, erg_accuracy *a);

/* Free what erg__fit_rows_init allocated; NULL-safe, idempotent. */
void erg__fit_rows_free(struct erg__fit_rows *f);

json_t *erg__accuracy_to_json(const erg_accuracy *a);
/* Read what erg__accuracy_to_json wrote; a count that is not a whole number >= 0: ERG_EPARSE
 * naming file and path.n. */
int erg__accuracy_from_json(const json_t *j, erg_accuracy *a, const char *file, const char *path,
                            erg_diag *diag);

#endif
