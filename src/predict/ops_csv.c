/* SPDX-License-Identifier: MIT */
/* ops.csv and grid files: one configuration per row, errors located as file:line:col. */
#include "erg/predict.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csv.h"
#include "core/diag.h"
#include "core/file.h"

enum col {
    C_OP,
    C_KAPPA,
    C_M,
    C_N,
    C_K,
    C_TOKENS,
    C_DMODEL,
    C_DTYPE,
    C_REPS,
    C_TIME,
    C_TIME_SD,
    C_ENERGY,
    C_ENERGY_SD,
    C_GRADE,
    C_COUNT
};
#define GRID_COLS (C_DTYPE + 1)

static const char *const col_names[C_COUNT] = {
    "op",    "kappa", "m",      "n",         "k",        "tokens",      "d_model",
    "dtype", "reps",  "time_s", "time_sd_s", "energy_j", "energy_sd_j", "grade"};

#define MAX_CELLS 32

static int parse_dim(const struct erg__csv_cell *c, int64_t *out, const char *path, size_t line,
                     const char *name, erg_diag *diag)
{
    if (c->s[0] == '\0') {
        *out = 0;
        return ERG_OK;
    }
    char *end;
    errno = 0;
    long long v = strtoll(c->s, &end, 10);
    if (end == c->s || *end != '\0' || errno == ERANGE)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c->col,
                            "column '%s': expected an integer, got '%s'", name, c->s);
    if (v < 0)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c->col,
                            "column '%s': dimensions must not be negative, got '%s'", name, c->s);
    *out = (int64_t)v;
    return ERG_OK;
}

static int parse_num(const struct erg__csv_cell *c, double *out, int required, const char *path,
                     size_t line, const char *name, erg_diag *diag)
{
    if (c->s[0] == '\0') {
        if (required)
            return erg__diag_at(diag, ERG_EPARSE, path, line, c->col,
                                "column '%s': a value is required%s", name, "");
        *out = NAN;
        return ERG_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(c->s, &end);
    if (end == c->s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return erg__diag_at(diag, ERG_EPARSE, path, line, c->col,
                            "column '%s': expected a number, got '%s'", name, c->s);
    if (v < 0)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c->col,
                            "column '%s': must not be negative, got '%s'", name, c->s);
    *out = v;
    return ERG_OK;
}

static int parse_row(struct erg__csv_cell *cells, const int *map, int grid, const char *path,
                     size_t line, erg_op_sample *s, erg_diag *diag)
{
    static const struct erg__csv_cell empty = {"", 0, 1};
    const struct erg__csv_cell *c[C_COUNT];
    for (int i = 0; i < C_COUNT; i++)
        c[i] = map[i] >= 0 ? &cells[map[i]] : &empty;
    memset(s, 0, sizeof *s);
    s->energy_j = NAN;
    s->energy_sd_j = NAN;
    if (erg_op_parse(c[C_OP]->s, &s->dims.op) != ERG_OK)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_OP]->col,
                            "column '%s': unknown op '%s' (expected rmsnorm, softmax or gemm)",
                            "op", c[C_OP]->s);
    if (strlen(c[C_KAPPA]->s) >= sizeof s->kappa)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_KAPPA]->col,
                            "column '%s': too long: '%s'", "kappa", c[C_KAPPA]->s);
    strcpy(s->kappa, c[C_KAPPA]->s);
    int rc;
    int64_t *dims[5] = {&s->dims.m, &s->dims.n, &s->dims.k, &s->dims.tokens, &s->dims.d_model};
    for (int i = 0; i < 5; i++)
        if ((rc = parse_dim(c[C_M + i], dims[i], path, line, col_names[C_M + i], diag)) != ERG_OK)
            return rc;
    if (c[C_DTYPE]->s[0] == '\0')
        s->dims.dtype = ERG_DTYPE_FP32;
    else if (erg_dtype_parse(c[C_DTYPE]->s, &s->dims.dtype) != ERG_OK)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_DTYPE]->col,
                            "column '%s': unknown dtype '%s' (expected fp32, bf16 or fp16)",
                            "dtype", c[C_DTYPE]->s);
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_op_dims_check(&s->dims, &sub) != ERG_OK)
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_OP]->col, "%s", sub.detail);
    if (grid)
        return ERG_OK;
    int64_t reps;
    if ((rc = parse_dim(c[C_REPS], &reps, path, line, "reps", diag)) != ERG_OK)
        return rc;
    s->reps = (uint64_t)reps;
    if ((rc = parse_num(c[C_TIME], &s->time_s, 1, path, line, "time_s", diag)) != ERG_OK)
        return rc;
    if (!(s->time_s > 0))
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_TIME]->col,
                            "column '%s': must be positive, got '%s'", "time_s", c[C_TIME]->s);
    if ((rc = parse_num(c[C_TIME_SD], &s->time_sd_s, 0, path, line, "time_sd_s", diag)) != ERG_OK)
        return rc;
    if ((rc = parse_num(c[C_ENERGY], &s->energy_j, 0, path, line, "energy_j", diag)) != ERG_OK)
        return rc;
    if ((rc = parse_num(c[C_ENERGY_SD], &s->energy_sd_j, 0, path, line, "energy_sd_j", diag)) !=
        ERG_OK)
        return rc;
    if (c[C_GRADE]->s[0] != '\0') {
        if (erg_grade_parse(c[C_GRADE]->s, &s->grade) != ERG_OK)
            return erg__diag_at(
                diag, ERG_EPARSE, path, line, c[C_GRADE]->col,
                "column '%s': unknown grade '%s' (hw_shunt, model_based, estimator)", "grade",
                c[C_GRADE]->s);
        s->has_grade = 1;
    } else if (!isnan(s->energy_j)) {
        return erg__diag_at(diag, ERG_EPARSE, path, line, c[C_GRADE]->col,
                            "column '%s': energy_j is given, so its grade is required%s", "grade",
                            "");
    }
    return ERG_OK;
}

/* The header every reader expects, for messages about a file that is not one. */
static const char *expected_header(int grid)
{
    return grid ? "op,kappa,m,..." : "op,kappa,m,...,grade";
}

/* A file that is not a CSV with our header at all (JSON, another CSV, text): say so, instead
 * of naming its first token as an unknown column. For JSON, name its "erg" kind when it has
 * one, so that a schedule or a model passed by mistake is recognised. */
static int not_a_csv(erg_diag *diag, const char *path, size_t line, size_t col, int grid,
                     const char *json_kind, int is_json)
{
    char what[128] = "";
    if (json_kind)
        snprintf(what, sizeof what, ": it is JSON (\"erg\": \"%.64s\")", json_kind);
    else if (is_json)
        snprintf(what, sizeof what, "%s", ": it is JSON");
    return erg__diag_at(diag, ERG_EPARSE, path, line, col, "not %s (expected the header %s)%s",
                        grid ? "a grid CSV" : "an ops CSV", expected_header(grid), what);
}

int erg_ops_csv_read(const char *path, int grid, erg_op_sample **out, size_t *n_out, erg_diag *diag)
{
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    /* A NUL byte would end the text early and silently drop the rows after it. */
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        size_t line = 1, col = 1;
        for (const char *p = buf; p < nul; p++, col++)
            if (*p == '\n') {
                line++;
                col = 0;
            }
        free(buf);
        return erg__diag_at(diag, ERG_EPARSE, name, line, col, "a NUL byte (a binary file, not %s)",
                            grid ? "a grid CSV" : "an ops CSV");
    }
    /* JSON where a CSV belongs: recognised before its first line is split into cells. */
    size_t skip = strspn(buf, " \t\r\n");
    if (buf[skip] == '{' || buf[skip] == '[') {
        size_t line1 = 1, col1 = 1;
        for (size_t i = 0; i < skip; i++, col1++)
            if (buf[i] == '\n') {
                line1++;
                col1 = 0;
            }
        json_t *root = json_loadb(buf, len, 0, NULL);
        json_t *tag = json_is_object(root) ? json_object_get(root, "erg") : NULL;
        rc = not_a_csv(diag, name, line1, col1, grid,
                       json_is_string(tag) ? json_string_value(tag) : NULL, 1);
        json_decref(root);
        free(buf);
        return rc;
    }
    erg_op_sample *rows = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    int map[C_COUNT];
    int have_header = 0;
    size_t ncols = 0;
    struct erg__csv_cell cells[MAX_CELLS];
    char *p = buf;
    while (*p) {
        char *line = p;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p);
        }
        lineno++;
        const char *q = line;
        while (*q == ' ' || *q == '\t' || *q == '\r')
            q++;
        if (*q == '\0' || *q == '#')
            continue;
        size_t nc = erg__csv_split_inplace(line, cells, MAX_CELLS);
        if (nc > MAX_CELLS && !have_header) {
            rc = not_a_csv(diag, name, lineno, 1, grid, NULL, 0);
            goto fail;
        }
        if (nc > MAX_CELLS) {
            rc = erg__diag_at(diag, ERG_EPARSE, name, lineno, 1, "too many columns (%s%s)",
                              "max 32", "");
            goto fail;
        }
        if (!have_header) {
            for (int i = 0; i < C_COUNT; i++)
                map[i] = -1;
            size_t known = 0;
            for (size_t j = 0; j < nc; j++)
                for (int i = 0; i < C_COUNT; i++)
                    known += strcmp(cells[j].s, col_names[i]) == 0;
            if (known == 0) {
                rc = not_a_csv(diag, name, lineno, cells[0].col, grid, NULL, 0);
                goto fail;
            }
            for (size_t j = 0; j < nc; j++) {
                int found = -1;
                for (int i = 0; i < C_COUNT; i++)
                    if (strcmp(cells[j].s, col_names[i]) == 0)
                        found = i;
                if (found < 0 || (grid && found >= GRID_COLS)) {
                    rc = erg__diag_at(diag, ERG_EPARSE, name, lineno, cells[j].col,
                                      "unknown column '%s'%s", cells[j].s,
                                      grid ? " in a grid file (op..dtype)" : "");
                    goto fail;
                }
                if (map[found] >= 0) {
                    rc = erg__diag_at(diag, ERG_EPARSE, name, lineno, cells[j].col,
                                      "column '%s' appears twice%s", cells[j].s, "");
                    goto fail;
                }
                map[found] = (int)j;
            }
            int need = grid ? GRID_COLS : C_COUNT;
            for (int i = 0; i < need; i++)
                if (map[i] < 0) {
                    rc = erg__diag_at(diag, ERG_EPARSE, name, lineno, 1, "missing column '%s'%s",
                                      col_names[i], grid ? "" : " (ops.csv needs op..grade)");
                    goto fail;
                }
            ncols = nc;
            have_header = 1;
            continue;
        }
        if (nc != ncols) {
            char want[32];
            snprintf(want, sizeof want, "%zu", ncols);
            rc = erg__diag_at(diag, ERG_EPARSE, name, lineno, 1,
                              "expected %s cells as in the header, got %s", want,
                              nc < ncols ? "fewer" : "more");
            goto fail;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            erg_op_sample *r = realloc(rows, ncap * sizeof *r);
            if (!r) {
                rc = erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
                goto fail;
            }
            rows = r;
            cap = ncap;
        }
        if ((rc = parse_row(cells, map, grid, name, lineno, &rows[n], diag)) != ERG_OK)
            goto fail;
        n++;
    }
    if (!have_header) {
        rc = erg_diag_set(diag, ERG_EPARSE, name, "no header line (expected %s)",
                          expected_header(grid));
        goto fail;
    }
    free(buf);
    *out = rows;
    *n_out = n;
    return ERG_OK;
fail:
    free(buf);
    free(rows);
    return rc;
}

static int fmt_dim(char *b, size_t size, int64_t v)
{
    return v > 0 ? snprintf(b, size, "%lld", (long long)v) : snprintf(b, size, "%s", "");
}

static int fmt_num(char *b, size_t size, double v)
{
    return isfinite(v) ? snprintf(b, size, "%.9g", v) : snprintf(b, size, "%s", "");
}

int erg_ops_csv_write(const char *path, const erg_op_sample *s, size_t n, erg_diag *diag)
{
    size_t cap = 256 + n * 256, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    len += (size_t)snprintf(buf, cap, "%s", col_names[0]);
    for (int i = 1; i < C_COUNT; i++)
        len += (size_t)snprintf(buf + len, cap - len, ",%s", col_names[i]);
    len += (size_t)snprintf(buf + len, cap - len, "\n");
    for (size_t i = 0; i < n; i++) {
        char d[5][24], t[4][32];
        fmt_dim(d[0], sizeof d[0], s[i].dims.m);
        fmt_dim(d[1], sizeof d[1], s[i].dims.n);
        fmt_dim(d[2], sizeof d[2], s[i].dims.k);
        fmt_dim(d[3], sizeof d[3], s[i].dims.tokens);
        fmt_dim(d[4], sizeof d[4], s[i].dims.d_model);
        fmt_num(t[0], sizeof t[0], s[i].time_s);
        fmt_num(t[1], sizeof t[1], s[i].time_sd_s);
        fmt_num(t[2], sizeof t[2], s[i].energy_j);
        fmt_num(t[3], sizeof t[3], s[i].energy_sd_j);
        len +=
            (size_t)snprintf(buf + len, cap - len, "%s,%s,%s,%s,%s,%s,%s,%s,%llu,%s,%s,%s,%s,%s\n",
                             erg_op_name(s[i].dims.op), s[i].kappa, d[0], d[1], d[2], d[3], d[4],
                             erg_dtype_name(s[i].dims.dtype), (unsigned long long)s[i].reps, t[0],
                             t[1], t[2], t[3], s[i].has_grade ? erg_grade_name(s[i].grade) : "");
    }
    int rc = erg__write_file_atomic(path, buf, len, diag);
    free(buf);
    return rc;
}
