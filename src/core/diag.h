/* SPDX-License-Identifier: MIT */
/* Private: the one place a diagnostic's position is written. erg's messages about input read
 * "erg: FILE:LINE:COL: what is wrong" (the CLI prints "erg: " and erg_diag_format's
 * "<where>: <detail>"); every reader sets where through erg__diag_at, so the position has one
 * form (GNU's "file:line:column", the one editors and compilers use) whoever reports it. */
#ifndef ERG_CORE_DIAG_H
#define ERG_CORE_DIAG_H

#include <stddef.h>

#include "erg/error.h"

/* erg_diag_set with where = "FILE:LINE:COL" (col 0: "FILE:LINE"; line 0: "FILE"); returns
 * status. diag may be NULL. */
int erg__diag_at(erg_diag *diag, int status, const char *file, size_t line, size_t col,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
