/* SPDX-License-Identifier: MIT */
/* Building the measured-shape GEMM map (gemm_map.c; docs/predict.md, "GPU targets") from a
 * level-1 model's GEMM estimator and the aic-gemm rows of measured tables: the median measured /
 * estimator time ratio and the median power of the rows in each cell, written as gemm-map/1. */
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

struct obs {
    int32_t key[3];
    double ratio, power_w;
};

static int obs_cmp(const void *a, const void *b)
{
    return erg__gemm_map_key_cmp(((const struct obs *)a)->key, ((const struct obs *)b)->key);
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
            x->key[0] = erg__gemm_map_cell(r->m, MAP_STEP);
            x->key[1] = erg__gemm_map_cell(r->n, MAP_STEP);
            x->key[2] = erg__gemm_map_cell(r->k, MAP_STEP);
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
        while (b < n && erg__gemm_map_key_cmp(o[b].key, o[a].key) == 0)
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
