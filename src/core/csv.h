/* SPDX-License-Identifier: MIT */
/* Private: erg's one CSV reader, for every module (ops, grids, blocks and models CSVs, the public
 * tables of predict, the frontier's reference): a line splitter that knows each cell's column,
 * and a table reader over it (a header naming the columns, read whole). Errors name
 * FILE:LINE:COL through erg__diag_at. No quoted commas: none of these formats has them; a cell
 * wrapped in one pair of double quotes loses them. */
#ifndef ERG_CORE_CSV_H
#define ERG_CORE_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "erg/error.h"

#define ERG__CSV_MAX_COLS 40

/* One cell of a line: [s, s + len) after trimming blanks, a CR and one pair of double quotes;
 * col is the 1-based column of its first character. */
struct erg__csv_cell {
    const char *s;
    size_t len;
    size_t col;
};

/* Split the line [line, end) at commas into cells[0..max); returns how many cells the line has
 * (more than max: only max are stored). An empty line is one empty cell. */
size_t erg__csv_split(const char *line, const char *end, struct erg__csv_cell *cells, size_t max);

/* The same over a NUL-terminated line that may be modified: every stored cell is NUL-terminated
 * in place, so cells[i].s is a C string. */
size_t erg__csv_split_inplace(char *line, struct erg__csv_cell *cells, size_t max);

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
