/* SPDX-License-Identifier: MIT */
/* Reading a reference frontier (time, energy) from CSV, columns found by header name. */
#include "core/csv.h"
#include "core/diag.h"
#include "core/file.h"
#include "frontier/opsched.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int field_is(const struct erg__csv_cell *f, const char *name)
{
    size_t n = strlen(name);
    return f->len == n && strncasecmp(f->s, name, n) == 0;
}

static int is_blank(const char *b, const char *e)
{
    for (; b < e; b++)
        if (!isspace((unsigned char)*b))
            return 0;
    return 1;
}

#define MAX_FIELDS 4096

int erg_frontier_read_reference(const char *path, double **time_s, double **energy_j, size_t *n,
                                erg_diag *diag)
{
    if (!path || !time_s || !energy_j || !n)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    *time_s = *energy_j = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = erg__read_file(path, &text, &len, diag);
    if (rc != ERG_OK)
        return rc;
    struct erg__csv_cell *fs = malloc(MAX_FIELDS * sizeof *fs);
    double *t = NULL, *e = NULL;
    size_t cnt = 0, cap = 0, line_no = 0, n_header = 0, tcol = 0, ecol = 0;
    if (!fs) {
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
        goto out;
    }
    const char *p = text, *end = text + len;
    int have_t = 0, have_e = 0;
    while (p < end || line_no == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        line_no++;
        if (line_no == 1) {
            if (is_blank(p, le)) {
                rc = erg__diag_at(diag, ERG_EPARSE, path, 1, 1,
                                  "%s; expected a header line naming a time column (time_s or "
                                  "time) and an energy column (energy_j or energy)",
                                  p == end ? "empty file" : "empty first line");
                goto out;
            }
            n_header = erg__csv_split(p, le, fs, MAX_FIELDS);
            if (n_header > MAX_FIELDS) {
                rc = erg__diag_at(diag, ERG_EPARSE, path, 1, 1, "more than %d columns", MAX_FIELDS);
                goto out;
            }
            for (size_t k = 0; k < n_header; k++) {
                int is_t = field_is(&fs[k], "time_s") || field_is(&fs[k], "time");
                int is_e = field_is(&fs[k], "energy_j") || field_is(&fs[k], "energy");
                if ((is_t && have_t) || (is_e && have_e)) {
                    rc = erg__diag_at(diag, ERG_EPARSE, path, 1, fs[k].col,
                                      "a second %s column '%.*s'", is_t ? "time" : "energy",
                                      (int)fs[k].len, fs[k].s);
                    goto out;
                }
                if (is_t)
                    tcol = k, have_t = 1;
                if (is_e)
                    ecol = k, have_e = 1;
            }
            if (!have_t || !have_e) {
                rc = erg__diag_at(diag, ERG_EPARSE, path, 1, 1,
                                  "the header '%.*s%s' has no %s column (%s); the first line "
                                  "must name the columns",
                                  (int)(le - p > 60 ? 60 : le - p), p, le - p > 60 ? "..." : "",
                                  have_t ? "energy" : "time",
                                  have_t ? "energy_j or energy" : "time_s or time");
                goto out;
            }
        } else if (!is_blank(p, le)) {
            size_t nf = erg__csv_split(p, le, fs, MAX_FIELDS);
            if (nf != n_header) {
                rc = erg__diag_at(diag, ERG_EPARSE, path, line_no, 1,
                                  "%zu field%s, the header has %zu", nf, nf == 1 ? "" : "s",
                                  n_header);
                goto out;
            }
            double v[2];
            size_t cols[2] = {tcol, ecol};
            for (int j = 0; j < 2; j++) {
                const struct erg__csv_cell *f = &fs[cols[j]];
                char buf[64];
                size_t fl = f->len;
                char *stop = buf;
                if (fl > 0 && fl < sizeof buf) {
                    memcpy(buf, f->s, fl);
                    buf[fl] = '\0';
                    v[j] = strtod(buf, &stop);
                }
                if (fl == 0 || fl >= sizeof buf || *stop != '\0' || stop == buf ||
                    !isfinite(v[j]) || v[j] < 0) {
                    rc = erg__diag_at(diag, ERG_EPARSE, path, line_no, f->col,
                                      "%s: expected a finite non-negative number, got '%.*s'",
                                      j ? "energy" : "time", (int)(fl > 40 ? 40 : fl), f->s);
                    goto out;
                }
            }
            if (cnt == cap) {
                size_t nc = cap ? 2 * cap : 256;
                double *nt = realloc(t, nc * sizeof *nt);
                if (nt)
                    t = nt;
                double *ne = nt ? realloc(e, nc * sizeof *ne) : NULL;
                if (ne)
                    e = ne;
                if (!nt || !ne) {
                    rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
                    goto out;
                }
                cap = nc;
            }
            t[cnt] = v[0];
            e[cnt] = v[1];
            cnt++;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (cnt == 0) {
        rc = erg__diag_at(diag, ERG_EPARSE, path, 2, 1, "no data rows after the header");
        goto out;
    }
    *time_s = t;
    *energy_j = e;
    *n = cnt;
    t = e = NULL;
out:
    free(t);
    free(e);
    free(fs);
    free(text);
    return rc;
}
