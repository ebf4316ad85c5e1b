/* SPDX-License-Identifier: MIT */
/* The measured-shape map of a GPU target's GEMM (docs/predict.md, "GPU targets"): per cell of
 * (log2 m, log2 n, log2 k) at a step of 1/2 (a factor √2 per dimension), the median ratio of
 * the measured time to the level-1 estimator's and the median NVML power of the training
 * rows in that cell. A prediction inside a cell is the estimator's time × the cell's ratio,
 * and its energy the cell's power × that time; elsewhere the estimator answers alone.
 * This file holds the map as the level-1 model reads and uses it (load, lookup, free);
 * gemm_map_build.c builds one from a fitted model and measured rows. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "predict/model.h"

int32_t erg__gemm_map_cell(int64_t v, double step)
{
    return (int32_t)floor(log2((double)v) / step + 0.5);
}

int erg__gemm_map_key_cmp(const int32_t *a, const int32_t *b)
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
    int32_t want[3] = {erg__gemm_map_cell(d->m, g->step), erg__gemm_map_cell(d->n, g->step),
                       erg__gemm_map_cell(d->k, g->step)};
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = erg__gemm_map_key_cmp(g->key[mid], want);
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
        if (i && erg__gemm_map_key_cmp(g->key[i - 1], g->key[i]) >= 0) {
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
    erg__json_diag_place_file(diag, path);
    erg__gemm_map_free(g);
    return rc;
}
