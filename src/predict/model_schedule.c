/* SPDX-License-Identifier: MIT */
/* A whole-model prediction as a schedule/1: the layers in sequence (⊗), their blocks inside,
 * so that the energy calculus composes the blocks back to the predicted totals. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "erg/predict.h"

/* The document is built with put/push, which record in *bad that a member could not be added (a
 * NULL value or container when memory ran out; jansson then frees what it was given): the file
 * is written only when nothing was dropped. */
static void put(int *bad, json_t *obj, const char *key, json_t *v)
{
    if (json_object_set_new(obj, key, v))
        *bad = 1;
}

static void push(int *bad, json_t *arr, json_t *v)
{
    if (json_array_append_new(arr, v))
        *bad = 1;
}

static int add_sig(int *bad, json_t *sigs, const char *name, const erg_estimate *e, double s,
                   erg_grade grade, erg_diag *diag)
{
    if (!isfinite(e->energy_j))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "the target has no energy: no schedule can be written");
    double d = e->energy_j - s * e->time_s;
    if (d < -1e-12 * e->energy_j)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "static power %g W times the predicted %.4g s exceeds the predicted "
                            "%.4g J of %s",
                            s, e->time_s, e->energy_j, name);
    json_t *o = json_object();
    put(bad, o, "device", json_string("target"));
    put(bad, o, "time_s", json_real(e->time_s));
    put(bad, o, "dynamic_energy_j", json_real(d > 0 ? d : 0));
    put(bad, o, "time_var_s2", json_real(e->time_var_s2));
    /* Axiom M1: σ²_E ≥ s²·σ²_T */
    put(bad, o, "energy_var_j2", json_real(fmax(e->energy_var_j2, s * s * e->time_var_s2)));
    put(bad, o, "grade", json_string(erg_grade_name(grade)));
    put(bad, sigs, name, o);
    return ERG_OK;
}

static json_t *ref(const char *ph, const char *blk)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", ph, blk);
    return json_string(name);
}

static int phase(int *bad, const erg_arch *a, const erg_model_prediction *m, double s, json_t *sigs,
                 json_t *seq, erg_diag *diag)
{
    const char *ph = erg_phase_name(m->phase.phase);
    char name[64];
    for (size_t i = 0; i < m->n_blocks; i++) {
        snprintf(name, sizeof name, "%s.%s", ph, m->blocks[i].name);
        int rc = add_sig(bad, sigs, name, &m->blocks[i].each, s, m->grade, diag);
        if (rc != ERG_OK)
            return rc;
    }
    push(bad, seq, ref(ph, "embedding"));
    int64_t n = a->n_layers;
    int64_t sliding = a->layers[ERG_LAYER_SLIDING_DENSE] + a->layers[ERG_LAYER_SLIDING_MOE];
    int64_t moe = a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE];
    for (int64_t i = 0; i < n; i++) {
        /* spread the sliding and MoE layers evenly (the totals do not depend on the order) */
        int sl = (i + 1) * sliding / n > i * sliding / n;
        int mo = (i + 1) * moe / n > i * moe / n;
        json_t *layer = json_array(), *lo = json_object();
        push(bad, layer, ref(ph, "norm"));
        push(bad, layer, ref(ph, sl ? "attention_sliding" : "attention"));
        for (int k = 2; k < a->norms_per_layer; k++) /* Gemma 2's post-norms */
            push(bad, layer, ref(ph, "norm"));
        if (a->norms_per_layer >= 2)
            push(bad, layer, ref(ph, "norm"));
        push(bad, layer, ref(ph, mo ? "moe" : "ffn"));
        put(bad, lo, "seq", layer);
        push(bad, seq, lo);
    }
    push(bad, seq, ref(ph, "norm"));
    push(bad, seq, ref(ph, "lm_head"));
    /* The calculus adds the variances of the elements above as independent (count x instance);
     * the prediction shares one error among the instances of a block kind (count^2 x instance):
     * the difference is one element of zero time, so that compose gives the prediction's sd. */
    double shared_t = 0, shared_e = 0;
    for (size_t i = 0; i < m->n_blocks; i++) {
        double c = (double)m->blocks[i].count;
        shared_t += (c * c - c) * m->blocks[i].each.time_var_s2;
        shared_e += (c * c - c) * m->blocks[i].each.energy_var_j2;
    }
    if (shared_t > 0 || shared_e > 0) {
        erg_estimate e = {0, 0, shared_t, shared_e, m->total.level};
        snprintf(name, sizeof name, "%s.shared_error", ph);
        int rc = add_sig(bad, sigs, name, &e, s, m->grade, diag);
        if (rc != ERG_OK)
            return rc;
        push(bad, seq, json_string(name));
    }
    if (m->model_time_var_s2 > 0 || m->model_energy_var_j2 > 0) {
        erg_estimate e = {0, 0, m->model_time_var_s2, m->model_energy_var_j2, 3};
        snprintf(name, sizeof name, "%s.model_error", ph);
        int rc = add_sig(bad, sigs, name, &e, s, m->grade, diag);
        if (rc != ERG_OK)
            return rc;
        push(bad, seq, json_string(name));
    }
    return ERG_OK;
}

int erg_model_schedule_write(const char *path, const erg_arch *a, const erg_model_prediction *p,
                             size_t n, double static_power_w, const char *name, erg_diag *diag)
{
    if (!a || !p || n == 0 || !path)
        return erg_diag_set(diag, ERG_EINVAL, path, "no architecture, prediction or path");
    if (!(static_power_w >= 0) || !isfinite(static_power_w))
        return erg_diag_set(diag, ERG_EINVAL, path, "static power must be finite and >= 0");
    if (a->norms_per_layer < 1)
        return erg_diag_set(diag, ERG_EINVAL, path, "an architecture without norms");
    json_t *root = json_object(), *dev = json_object(), *d0 = json_object();
    json_t *sigs = json_object(), *seq = json_array(), *expr = json_object();
    int bad = !root || !dev || !d0 || !sigs || !seq || !expr;
    put(&bad, root, "erg", json_string("schedule/1"));
    if (name)
        put(&bad, root, "name", json_string(name));
    put(&bad, d0, "static_power_w", json_real(static_power_w));
    put(&bad, dev, "target", d0);
    put(&bad, root, "devices", dev);
    int rc = ERG_OK;
    for (size_t i = 0; i < n && rc == ERG_OK; i++)
        rc = phase(&bad, a, &p[i], static_power_w, sigs, seq, diag);
    put(&bad, root, "signatures", sigs);
    put(&bad, expr, "seq", seq);
    put(&bad, root, "expr", expr);
    if (rc == ERG_OK && bad)
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    else if (rc == ERG_OK)
        rc = erg__json_dump_file(root, path, JSON_COMPACT | JSON_REAL_PRECISION(17), diag);
    else if (diag && !diag->where[0])
        snprintf(diag->where, sizeof diag->where, "%s", path);
    json_decref(root);
    return rc;
}
