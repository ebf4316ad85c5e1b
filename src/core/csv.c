/* SPDX-License-Identifier: MIT */
/* erg's one CSV reader: the line splitter and the table reader (core/csv.h). */
#include "core/csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/file.h"

int erg__csv_error(erg_diag *diag, const struct erg__csv_row *r, size_t c, const char *name,
                   const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return erg__diag_at(diag, ERG_EPARSE, r->path, r->line, r->col[c], "column '%s': %s", name,
                        what);
}

/* An empty cell reads as absent: *present (when given) says whether the cell has text. */
static int empty_cell(const char *s, int *present)
{
    if (present)
        *present = s[0] != '\0';
    return s[0] == '\0';
}

int erg__csv_int(const struct erg__csv_row *r, size_t c, const char *name, int64_t *out,
                 int *present, erg_diag *diag)
{
    const char *s = r->cell[c];
    if (empty_cell(s, present)) {
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
    if (empty_cell(s, present)) {
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

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

size_t erg__csv_split(const char *line, const char *end, struct erg__csv_cell *cells, size_t max)
{
    size_t n = 0;
    const char *p = line;
    for (;;) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        if (n < max) {
            const char *b = p, *e = q;
            while (b < e && blank(*b))
                b++;
            while (e > b && blank(e[-1]))
                e--;
            if (e - b >= 2 && *b == '"' && e[-1] == '"')
                b++, e--;
            cells[n] = (struct erg__csv_cell){b, (size_t)(e - b), (size_t)(b - line) + 1};
        }
        n++;
        if (q >= end)
            return n;
        p = q + 1;
    }
}

size_t erg__csv_split_inplace(char *line, struct erg__csv_cell *cells, size_t max)
{
    size_t n = erg__csv_split(line, line + strlen(line), cells, max);
    for (size_t i = 0; i < n && i < max; i++)
        line[cells[i].col - 1 + cells[i].len] = '\0'; /* the cell's end, inside line */
    return n;
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
    struct erg__csv_cell cells[ERG__CSV_MAX_COLS + 1];
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
        size_t n = erg__csv_split_inplace(line, cells, ERG__CSV_MAX_COLS + 1);
        if (!have_header) {
            if (line[0] == '{' || line[0] == '[') {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "not %s (it is JSON)", what);
                break;
            }
            if (n > ERG__CSV_MAX_COLS) {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "not %s: %zu columns in the header", what,
                                  n);
                break;
            }
            int seen[ERG__CSV_MAX_COLS] = {0};
            for (size_t i = 0; i < n && rc == ERG_OK; i++) {
                map[i] = -1;
                for (size_t k = 0; k < n_names; k++)
                    if (strcmp(cells[i].s, names[k]) == 0)
                        map[i] = (int)k;
                if (map[i] < 0)
                    rc = erg__diag_at(diag, ERG_EPARSE, path, lineno, cells[i].col,
                                      "unknown column '%s' (not %s, or a misspelt name)",
                                      cells[i].s, what);
                else if (seen[map[i]]++)
                    rc = erg__diag_at(diag, ERG_EPARSE, path, lineno, cells[i].col,
                                      "column '%s' appears twice", cells[i].s);
            }
            for (size_t k = 0; k < n_names && rc == ERG_OK; k++)
                if (required[k] && !seen[k])
                    rc = erg__diag_at(diag, ERG_EPARSE, path, lineno, 1, "missing column '%s' (%s)",
                                      names[k], what);
            n_file = n;
            have_header = 1;
            continue;
        }
        if (n != n_file) {
            rc = erg__diag_at(diag, ERG_EPARSE, path, lineno, 1,
                              "expected %zu cells as in the header, got %zu", n_file, n);
            break;
        }
        r.line = lineno;
        for (size_t k = 0; k < n_names; k++) {
            r.cell[k] = "";
            r.col[k] = 1;
        }
        for (size_t i = 0; i < n; i++) {
            r.cell[map[i]] = cells[i].s;
            r.col[map[i]] = cells[i].col;
        }
        rc = row(ud, &r, diag);
    }
    if (rc == ERG_OK && !have_header)
        rc = erg_diag_set(diag, ERG_EPARSE, path, "no header line (%s)", what);
    free(buf);
    return rc;
}
