/* SPDX-License-Identifier: MIT */
/* The measured-shape map of a GPU target's GEMM (docs/predict.md, "GPU targets"): per cell of
 * (log2 m, log2 n, log2 k) at a step of 1/2 (a factor √2 per dimension), the median ratio of
 * the measured time to the level-1 estimator's and the median NVML power of the training
 * rows in that cell. A prediction inside a cell is the estimator's time × the cell's ratio,
 * and its energy the cell's power × that time; elsewhere the estimator answers alone. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/json.h"
#include "predict/model.h"

#define MAP_STEP 0.5
/* a cell needs this many training rows (more outvote an outlier row, but on the H200 table
 * every threshold above 1 lost more held-out accuracy than it saved: docs/predict.md) */
#define MAP_MIN_ROWS 1

static int32_t cell_of(int64_t v, double step)
{
    return (int32_t)floor(log2((double)v) / step + 0.5);
}

static int key_cmp(const int32_t *a, const int32_t *b)
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

void erg__gemm_map_free(struct erg__gemm_map *g)
{
    if (!g)
        return;
    free(g->key);
    free(g->ratio);
    free(g->power_w);
    free(g);
}

int erg__gemm_map_lookup(const struct erg__gemm_map *g, const erg_op_dims *d, double *ratio,
                         double *power_w)
{
    if (!g || d->op != ERG_OP_GEMM || d->m < 1 || d->n < 1 || d->k < 1)
        return 0;
    int32_t want[3] = {cell_of(d->m, g->step), cell_of(d->n, g->step), cell_of(d->k, g->step)};
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(g->key[mid], want);
        if (c == 0) {
            *ratio = g->ratio[mid];
            *power_w = g->power_w[mid];
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

struct obs {
    int32_t key[3];
    double ratio, power_w;
};

static int obs_cmp(const void *a, const void *b)
{
    return key_cmp(((const struct obs *)a)->key, ((const struct obs *)b)->key);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the finite values among v[0..n) (sorted in place); NaN when none. */
static double median_finite(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[k++] = v[i];
    if (!k)
        return NAN;
    qsort(v, k, sizeof *v, dbl_cmp);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int erg__gemm_map_build(erg_op_model *m, const erg_public_table *const *t, size_t nt,
                        const char *out, size_t *cells, size_t *rows, erg_diag *diag)
{
    if (!m || !out || (nt && !t))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg__gemm_map_build: NULL argument");
    if (!erg_op_model_has(m, ERG_OP_GEMM))
        return erg_diag_set(diag, ERG_EINVAL, out, "the level-1 model has no GEMM estimator");
    /* ratios against the estimator alone, never against an older map */
    erg__gemm_map_free(m->gemm_map);
    m->gemm_map = NULL;
    erg_dtype dt = m->op[ERG_OP_GEMM].dtype;
    const char *want = dt == ERG_DTYPE_BF16 ? "bfloat16" : dt == ERG_DTYPE_FP16 ? "float16" : "";
    size_t total = 0;
    for (size_t i = 0; i < nt; i++)
        if (t[i]->format == ERG_PUBLIC_AIC_GEMM)
            total += t[i]->n;
    struct obs *o = malloc((total ? total : 1) * sizeof *o);
    if (!o)
        return erg_diag_set(diag, ERG_ENOMEM, out, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < nt; i++) {
        if (t[i]->format != ERG_PUBLIC_AIC_GEMM)
            continue;
        for (size_t j = 0; j < t[i]->n; j++) {
            const erg_public_row *r = &t[i]->rows[j];
            if (strcmp(r->dtype, want) || !(r->time_s > 0))
                continue;
            erg_op_dims d = {.op = ERG_OP_GEMM, .dtype = dt, .m = r->m, .n = r->n, .k = r->k};
            erg_op_prediction p;
            if (erg_op_model_predict(m, &d, &p, NULL) != ERG_OK || p.extrapolated ||
                !(p.time_s > 0))
                continue;
            struct obs *x = &o[n++];
            x->key[0] = cell_of(r->m, MAP_STEP);
            x->key[1] = cell_of(r->n, MAP_STEP);
            x->key[2] = cell_of(r->k, MAP_STEP);
            x->ratio = r->time_s / p.time_s;
            x->power_w = r->power_w > 0 ? r->power_w : (double)NAN;
        }
    }
    if (!n) {
        free(o);
        return erg_diag_set(diag, ERG_EINVAL, out,
                            "no %s GEMM rows inside the level-1 model's range to map", want);
    }
    qsort(o, n, sizeof *o, obs_cmp);
    double *scratch = malloc(n * sizeof *scratch);
    json_t *root = json_object(), *arr = json_array();
    if (!scratch || !root || !arr) {
        free(o);
        free(scratch);
        json_decref(root);
        json_decref(arr);
        return erg_diag_set(diag, ERG_ENOMEM, out, "out of memory");
    }
    size_t nc = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && key_cmp(o[b].key, o[a].key) == 0)
            b++;
        if (b - a < MAP_MIN_ROWS) {
            a = b;
            continue;
        }
        for (size_t i = a; i < b; i++)
            scratch[i - a] = o[i].ratio;
        double ratio = median_finite(scratch, b - a);
        for (size_t i = a; i < b; i++)
            scratch[i - a] = o[i].power_w;
        double pw = median_finite(scratch, b - a);
        json_array_append_new(
            arr, json_pack("[i,i,i,f,o,i]", (int)o[a].key[0], (int)o[a].key[1], (int)o[a].key[2],
                           ratio, isfinite(pw) ? json_real(pw) : json_null(), (int)(b - a)));
        nc++;
        a = b;
    }
    free(o);
    free(scratch);
    json_object_set_new(root, "erg", json_string("gemm-map/1"));
    json_object_set_new(root, "target", json_string(m->target_kind));
    json_object_set_new(root, "dtype", json_string(erg_dtype_name(dt)));
    json_object_set_new(root, "step_log2", json_real(MAP_STEP));
    json_object_set_new(root, "cell",
                        json_string("[round(log2 m / step), round(log2 n / step), round(log2 k / "
                                    "step), median measured / estimator time, median power W "
                                    "(null: time only), training rows]"));
    json_object_set_new(root, "cells", arr);
    int rc = erg__json_dump_file(root, out, JSON_COMPACT | JSON_REAL_PRECISION(6), diag);
    json_decref(root);
    if (rc == ERG_OK) {
        if (cells)
            *cells = nc;
        if (rows)
            *rows = n;
    }
    return rc;
}

int erg__gemm_map_load(const char *path, erg_dtype dtype, struct erg__gemm_map **out,
                       erg_diag *diag)
{
    *out = NULL;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc)
        return rc;
    struct erg__gemm_map *g = calloc(1, sizeof *g);
    const char *tag = json_string_value(json_object_get(root, "erg"));
    const char *dt = json_string_value(json_object_get(root, "dtype"));
    json_t *cells = json_object_get(root, "cells");
    double step = json_number_value(json_object_get(root, "step_log2"));
    if (!g) {
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
        goto fail;
    }
    if (!tag || strcmp(tag, "gemm-map/1") || !json_is_array(cells) || !(step > 0)) {
        rc = erg_diag_set(diag, ERG_EPARSE, path,
                          "not a gemm-map/1 file (\"erg\", \"step_log2\" > 0 and \"cells\")");
        goto fail;
    }
    if (!dt || strcmp(dt, erg_dtype_name(dtype))) {
        rc = erg_diag_set(diag, ERG_EPARSE, path,
                          "dtype %s: the level-1 GEMM estimator beside it is %s", dt ? dt : "none",
                          erg_dtype_name(dtype));
        goto fail;
    }
    size_t n = json_array_size(cells);
    g->step = step;
    g->key = malloc((n ? n : 1) * sizeof *g->key);
    g->ratio = malloc((n ? n : 1) * sizeof *g->ratio);
    g->power_w = malloc((n ? n : 1) * sizeof *g->power_w);
    if (!g->key || !g->ratio || !g->power_w) {
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(cells, i);
        json_t *pw = json_array_get(c, 4);
        if (!json_is_array(c) || json_array_size(c) < 5 || !json_is_integer(json_array_get(c, 0)) ||
            !json_is_integer(json_array_get(c, 1)) || !json_is_integer(json_array_get(c, 2)) ||
            !json_is_number(json_array_get(c, 3)) ||
            !(json_number_value(json_array_get(c, 3)) > 0) ||
            !(json_is_null(pw) || json_number_value(pw) > 0)) {
            rc = erg_diag_set(diag, ERG_EPARSE, path,
                              "cells[%zu]: expected [i, j, l, ratio > 0, power > 0 or null, n]", i);
            goto fail;
        }
        for (int j = 0; j < 3; j++)
            g->key[i][j] = (int32_t)json_integer_value(json_array_get(c, (size_t)j));
        if (i && key_cmp(g->key[i - 1], g->key[i]) >= 0) {
            rc = erg_diag_set(diag, ERG_EPARSE, path,
                              "cells[%zu]: cells must be sorted and "
                              "distinct",
                              i);
            goto fail;
        }
        g->ratio[i] = json_number_value(json_array_get(c, 3));
        g->power_w[i] = json_is_null(pw) ? (double)NAN : json_number_value(pw);
    }
    g->n = n;
    json_decref(root);
    *out = g;
    return ERG_OK;
fail:
    json_decref(root);
    erg__gemm_map_free(g);
    return rc;
}

int erg_gemm_map_write(const char *out, const char *ops_path, const erg_public_table *const *t,
                       size_t n, size_t *cells, size_t *rows, erg_diag *diag)
{
    if (!ops_path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_gemm_map_write: NULL argument");
    erg_op_model *m = NULL;
    int rc = erg_op_model_load(ops_path, &m, diag);
    if (rc == ERG_OK)
        rc = erg__gemm_map_build(m, t, n, out, cells, rows, diag);
    erg_op_model_free(m);
    return rc;
}
