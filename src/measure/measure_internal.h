/* SPDX-License-Identifier: MIT */
/* Private to measure/: the power timeline taken beside the protocol's runs. */
#ifndef ERG_MEASURE_INTERNAL_H
#define ERG_MEASURE_INTERNAL_H

#include "erg/measure.h"

/* Start a thread that every period_s takes a snapshot of m and records each channel's mean power
 * since the previous one. ERG_OK or ERG_ENOMEM. */
int erg__timeline_start(erg_meter *m, double period_s, struct erg_timeline **out);
/* Label the rows that follow with run k (1-based). NULL-safe. */
void erg__timeline_set_run(struct erg_timeline *t, size_t k);
/* Stop the thread (the rows stay). NULL-safe; idempotent. */
void erg__timeline_stop(struct erg_timeline *t);
/* Free. NULL-safe. */
void erg__timeline_free(struct erg_timeline *t);
/* Rows: n_rows, n_cols channels; t_s[i], run[i], power_w[i * n_cols + j]; ids[j]. */
struct erg_timeline_view {
    size_t n_rows, n_cols;
    const double *t_s;
    const size_t *run;
    const double *power_w;
    char (*ids)[ERG_METER_ID_MAX];
};
void erg__timeline_view(const struct erg_timeline *t, struct erg_timeline_view *v);

#endif
