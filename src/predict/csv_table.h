/* SPDX-License-Identifier: MIT */
/* Private: a CSV table with a header naming its columns, read whole, errors as file:line:col. */
#ifndef ERG_PREDICT_CSV_TABLE_H
#define ERG_PREDICT_CSV_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "erg/error.h"

#define ERG__CSV_MAX_COLS 40

struct erg__csv_row {
    const char *path;
    size_t line;
    const char *cell[ERG__CSV_MAX_COLS]; /* by the caller's column index; "" when absent */
    size_t col[ERG__CSV_MAX_COLS];       /* 1-based column of each cell (1 when absent) */
};

/* Read path: the first non-comment line is the header; every name in it must be one of
 * names[0..n_names) (else ERG_EPARSE naming it); names whose required[i] is 1 must be present.
 * For each data row, row() is called (return non-zero to stop with that status). what names the
 * file kind in messages ("a blocks CSV"). */
int erg__csv_read(const char *path, const char *const *names, const int *required, size_t n_names,
                  const char *what,
                  int (*row)(void *ud, const struct erg__csv_row *r, erg_diag *diag), void *ud,
                  erg_diag *diag);

/* Errors located at a cell: ERG_EPARSE, where "path:line:col", detail "column 'NAME': ...". */
int erg__csv_error(erg_diag *diag, const struct erg__csv_row *r, size_t c, const char *name,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A non-negative integer cell (empty: *out = 0, *present 0). */
int erg__csv_int(const struct erg__csv_row *r, size_t c, const char *name, int64_t *out,
                 int *present, erg_diag *diag);
/* A non-negative finite number cell (empty: NaN, *present 0). */
int erg__csv_num(const struct erg__csv_row *r, size_t c, const char *name, double *out,
                 int *present, erg_diag *diag);

#endif
