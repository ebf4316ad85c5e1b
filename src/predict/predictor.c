/* SPDX-License-Identifier: MIT */
/* A target's levels 1-3 and whole-model predictions (HYMELL Section 3.6). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "erg/predict.h"
#include "predict/levels.h"
#include "predict/model.h"

struct erg_predictor {
    char dir[1024];
    erg_op_model *l1;
    erg_block_model *l2;
    erg_e2e_model *l3;
    double memory_bytes; /* one device's, from gpu.json's memory_gib; NaN when absent */
};

void erg_predictor_free(erg_predictor *p)
{
    if (!p)
        return;
    erg_op_model_free(p->l1);
    erg_block_model_free(p->l2);
    erg_e2e_model_free(p->l3);
    free(p);
}

const char *erg_predictor_dir(const erg_predictor *p)
{
    return p ? p->dir : "";
}

double erg_predictor_memory_bytes(const erg_predictor *p)
{
    return p ? p->memory_bytes : (double)NAN;
}

size_t erg_predict_targets(char *buf, size_t size)
{
    return erg__data_list("models", "ERG_MODEL_DIR", "ops.json", buf, size);
}

/* gpu.json's optional memory_gib (the device's memory) into p->memory_bytes. */
static int memory_load(erg_predictor *p, erg_diag *diag)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/gpu.json", p->dir);
    p->memory_bytes = (double)NAN;
    struct stat st;
    if (stat(path, &st) != 0)
        return ERG_OK;
    json_t *root;
    int rc = erg__json_load_file(path, &root, diag);
    if (rc != ERG_OK)
        return rc;
    json_t *m = json_object_get(root, "memory_gib");
    double gib = json_is_number(m) ? json_number_value(m) : (double)NAN;
    if (m && !(gib > 0 && isfinite(gib)))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "memory_gib: must be a positive number (GiB)");
    else if (m)
        p->memory_bytes = gib * 1073741824.0;
    json_decref(root);
    if (rc != ERG_OK) /* the error path only: the file is read again to place the value */
        erg__json_diag_place_file(diag, path);
    return rc;
}

int erg_predictor_level(const erg_predictor *p)
{
    return !p ? 0 : p->l3 ? 3 : p->l2 ? 2 : 1;
}

const erg_op_model *erg_predictor_ops(const erg_predictor *p)
{
    return p ? p->l1 : NULL;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int erg_predictor_open(const char *target, erg_predictor **out, erg_diag *diag)
{
    if (!target || !*target || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no target");
    *out = NULL;
    erg_predictor *p = calloc(1, sizeof *p);
    if (!p)
        return erg_diag_set(diag, ERG_ENOMEM, target, "out of memory");
    if (strchr(target, '/') || is_dir(target))
        snprintf(p->dir, sizeof p->dir, "%s", target);
    else if (strchr(target, '.') == target || strlen(target) > 200 ||
             erg__data_path("models", "ERG_MODEL_DIR", target, p->dir, &(size_t){sizeof p->dir}) !=
                 ERG_OK)
        p->dir[0] = '\0';
    if (!p->dir[0] || !is_dir(p->dir)) {
        char names[512];
        erg_predict_targets(names, sizeof names);
        int rc = erg_diag_set(diag, ERG_ENOENT, target,
                              "unknown target: no folder %s; the targets: %s (a target is a "
                              "folder models/<name>/ with ops.json; looked up in $ERG_MODEL_DIR, "
                              "$ERG_DATA_DIR/models, the installed share/erg/models and the "
                              "source tree)",
                              p->dir[0] ? p->dir : target, names[0] ? names : "none");
        free(p);
        return rc;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/ops.json", p->dir);
    int rc = erg_op_model_load(path, &p->l1, diag);
    if (rc == ERG_ENOENT)
        erg_diag_set(diag, ERG_ENOENT, path,
                     "the target %s has no level-1 model (fit one with 'erg fit ops ... -o %s')",
                     target, path);
    if (rc == ERG_OK)
        rc = memory_load(p, diag);
    snprintf(path, sizeof path, "%s/blocks.json", p->dir);
    if (rc == ERG_OK) {
        rc = erg_block_model_load(path, &p->l2, diag);
        if (rc == ERG_ENOENT)
            rc = ERG_OK;
    }
    snprintf(path, sizeof path, "%s/e2e.json", p->dir);
    if (rc == ERG_OK) {
        rc = erg_e2e_model_load(path, &p->l3, diag);
        if (rc == ERG_ENOENT)
            rc = ERG_OK;
    }
    if (rc != ERG_OK) {
        erg_predictor_free(p);
        return rc;
    }
    *out = p;
    return ERG_OK;
}

int erg_predict_model(const erg_predictor *p, const erg_arch *a, const erg_phase_spec *ph,
                      erg_model_prediction *out, erg_diag *diag)
{
    if (!p || !a || !ph || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no target, architecture, phase or output");
    int rc = erg__predict_blocks(p->l1, p->l2, a, ph, out, diag);
    if (rc == ERG_OK)
        erg__e2e_apply(p->l3, a, out);
    return rc;
}
