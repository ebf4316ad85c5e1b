/* SPDX-License-Identifier: MIT */
/* A CSV table with a header naming its columns (blocks.csv, models.csv). */
#include "predict/csv_table.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"

int erg__csv_error(erg_diag *diag, const struct erg__csv_row *r, size_t c, const char *name,
                   const char *fmt, ...)
{
    char where[256], what[400];
    snprintf(where, sizeof where, "%s:%zu:%zu", r->path, r->line, r->col[c]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return erg_diag_set(diag, ERG_EPARSE, where, "column '%s': %s", name, what);
}

int erg__csv_int(const struct erg__csv_row *r, size_t c, const char *name, int64_t *out,
                 int *present, erg_diag *diag)
{
    const char *s = r->cell[c];
    if (present)
        *present = s[0] != '\0';
    if (!s[0]) {
        *out = 0;
        return ERG_OK;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE)
        return erg__csv_error(diag, r, c, name, "expected an integer, got '%s'", s);
    if (v < 0)
        return erg__csv_error(diag, r, c, name, "must not be negative, got '%s'", s);
    *out = (int64_t)v;
    return ERG_OK;
}

int erg__csv_num(const struct erg__csv_row *r, size_t c, const char *name, double *out,
                 int *present, erg_diag *diag)
{
    const char *s = r->cell[c];
    if (present)
        *present = s[0] != '\0';
    if (!s[0]) {
        *out = NAN;
        return ERG_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return erg__csv_error(diag, r, c, name, "expected a number, got '%s'", s);
    if (v < 0)
        return erg__csv_error(diag, r, c, name, "must not be negative, got '%s'", s);
    *out = v;
    return ERG_OK;
}

/* Split at commas in place, trimming blanks; cols[i] the 1-based column of cell i. */
static size_t split(char *line, char **cells, size_t *cols, size_t max)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *start = p;
        while (*p && *p != ',')
            p++;
        char *end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--;
        int last = *p == '\0';
        *end = '\0';
        if (n < max) {
            cells[n] = start;
            cols[n] = (size_t)(start - line) + 1;
        }
        n++;
        if (last)
            return n;
        p++;
    }
}

int erg__csv_read(const char *path, const char *const *names, const int *required, size_t n_names,
                  const char *what,
                  int (*row)(void *ud, const struct erg__csv_row *r, erg_diag *diag), void *ud,
                  erg_diag *diag)
{
    if (n_names > ERG__CSV_MAX_COLS)
        return erg_diag_set(diag, ERG_EINVAL, path, "too many columns");
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    int map[ERG__CSV_MAX_COLS]; /* file column → caller's index */
    size_t n_file = 0, lineno = 0;
    int have_header = 0;
    char *cells[ERG__CSV_MAX_COLS + 1];
    size_t cols[ERG__CSV_MAX_COLS + 1];
    struct erg__csv_row r;
    r.path = path;
    char *next = buf;
    while (rc == ERG_OK && next && *next) {
        char *line = next;
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        lineno++;
        const char *q = line;
        while (*q == ' ' || *q == '\t' || *q == '\r')
            q++;
        if (*q == '\0' || *q == '#')
            continue;
        size_t n = split(line, cells, cols, ERG__CSV_MAX_COLS + 1);
        if (!have_header) {
            if (line[0] == '{' || line[0] == '[') {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "not %s (it is JSON)", what);
                break;
            }
            if (n > ERG__CSV_MAX_COLS) {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "not %s: %zu columns in the header",
                                  what, n);
                break;
            }
            int seen[ERG__CSV_MAX_COLS] = {0};
            for (size_t i = 0; i < n && rc == ERG_OK; i++) {
                map[i] = -1;
                for (size_t k = 0; k < n_names; k++)
                    if (strcmp(cells[i], names[k]) == 0)
                        map[i] = (int)k;
                if (map[i] < 0) {
                    char where[256];
                    snprintf(where, sizeof where, "%s:%zu:%zu", path, lineno, cols[i]);
                    rc = erg_diag_set(diag, ERG_EPARSE, where,
                                      "unknown column '%s' (not %s, or a misspelt name)", cells[i],
                                      what);
                } else if (seen[map[i]]++) {
                    char where[256];
                    snprintf(where, sizeof where, "%s:%zu:%zu", path, lineno, cols[i]);
                    rc = erg_diag_set(diag, ERG_EPARSE, where, "column '%s' appears twice",
                                      cells[i]);
                }
            }
            for (size_t k = 0; k < n_names && rc == ERG_OK; k++)
                if (required[k] && !seen[k]) {
                    char where[256];
                    snprintf(where, sizeof where, "%s:%zu:1", path, lineno);
                    rc = erg_diag_set(diag, ERG_EPARSE, where, "missing column '%s' (%s)",
                                      names[k], what);
                }
            n_file = n;
            have_header = 1;
            continue;
        }
        if (n != n_file) {
            char where[256];
            snprintf(where, sizeof where, "%s:%zu:1", path, lineno);
            rc = erg_diag_set(diag, ERG_EPARSE, where, "expected %zu cells as in the header, got %zu",
                              n_file, n);
            break;
        }
        r.line = lineno;
        for (size_t k = 0; k < n_names; k++) {
            r.cell[k] = "";
            r.col[k] = 1;
        }
        for (size_t i = 0; i < n; i++) {
            r.cell[map[i]] = cells[i];
            r.col[map[i]] = cols[i];
        }
        rc = row(ud, &r, diag);
    }
    if (rc == ERG_OK && !have_header)
        rc = erg_diag_set(diag, ERG_EPARSE, path, "no header line (%s)", what);
    free(buf);
    return rc;
}
