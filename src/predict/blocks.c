/* SPDX-License-Identifier: MIT */
/* HYMELL level 2 (Sections 3.4-3.5): per block kind, an MLP correction of the level-1 sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "erg/predict.h"
#include "predict/corrector.h"
#include "predict/levels.h"

#define L2_KIND "hymell-level2-blocks"
#define L2_FEATURES 17

static const char *const l2_features[L2_FEATURES] = {
    "log_l1_time_s", "log_l1_energy_j",    "log_tokens",     "log1p_kv",   "log_d_model",
    "log1p_n_heads", "log1p_n_kv_heads",   "log1p_head_dim", "log1p_d_ff", "log1p_n_experts",
    "log1p_top_k",   "log1p_shared_width", "log1p_attended", "decode",     "gated",
    "log_batch",     "log1p_vocab"};

enum { PH_PREFILL, PH_DECODE, PH_ALL, PH_COUNT };

struct erg_block_model {
    char target[128];
    struct erg__corrector corr[ERG_BLOCK_COUNT];
    /* per block kind and phase: the shared correction (corr), the phase's own or none (level 1
     * as it is), chosen on held-out error (erg__corrector_choose); ERG__USE_SHARED by default */
    struct erg__corrector own[ERG_BLOCK_COUNT][2];
    int use[ERG_BLOCK_COUNT][2];
    double use_score[ERG_BLOCK_COUNT][2][ERG__USE_COUNT]; /* NaN: not tried */
    int energy[ERG_BLOCK_COUNT]; /* 1: the correction has an energy output */
    erg_accuracy acc[ERG_BLOCK_COUNT][PH_COUNT];
};

static double lg(double v)
{
    return log(v > 0 ? v : 1e-30);
}

static void features(const erg_block_spec *s, const erg_estimate *l1, double *x)
{
    int64_t att = 0;
    if (s->block == ERG_BLOCK_ATTENTION) {
        att = s->phase == ERG_PHASE_PREFILL ? s->prompt : s->kv;
        if (s->window > 0 && s->window < att)
            att = s->window;
    }
    x[0] = lg(l1->time_s);
    x[1] = isfinite(l1->energy_j) ? lg(l1->energy_j) : 0;
    x[2] = lg((double)erg_block_tokens(s));
    x[3] = log1p((double)s->kv);
    x[4] = lg((double)s->d_model);
    x[5] = log1p((double)s->n_heads);
    x[6] = log1p((double)s->n_kv_heads);
    x[7] = log1p((double)s->head_dim);
    x[8] = log1p((double)s->d_ff);
    x[9] = log1p((double)s->n_experts);
    x[10] = log1p((double)s->top_k);
    x[11] = log1p((double)s->n_shared * (double)s->d_ff_shared);
    x[12] = log1p((double)att);
    x[13] = s->phase == ERG_PHASE_DECODE;
    x[14] = s->gated;
    x[15] = lg((double)s->batch);
    x[16] = log1p((double)s->vocab);
}

void erg_block_model_free(erg_block_model *m)
{
    if (!m)
        return;
    for (int b = 0; b < ERG_BLOCK_COUNT; b++) {
        erg__corrector_free(&m->corr[b]);
        erg__corrector_free(&m->own[b][0]);
        erg__corrector_free(&m->own[b][1]);
    }
    free(m);
}

int erg_block_model_has(const erg_block_model *m, erg_block b)
{
    return m && (unsigned)b < ERG_BLOCK_COUNT && m->corr[b].present;
}

static int fit_kind(erg_block_model *m, const erg_op_model *l1, const erg_block_sample *s, size_t n,
                    erg_block b, const erg_mlp_options *o, erg_diag *diag)
{
    size_t k = 0;
    int energy = 1;
    for (size_t i = 0; i < n; i++)
        if (s[i].spec.block == b) {
            k++;
            energy &= isfinite(s[i].energy_j) && s[i].energy_j > 0;
        }
    if (k == 0)
        return ERG_OK;
    struct erg__fit_rows f;
    int rc = erg__fit_rows_init(&f, k, L2_FEATURES, energy, diag);
    if (rc != ERG_OK)
        return rc;
    size_t r = 0;
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        if (s[i].spec.block != b)
            continue;
        erg_estimate e;
        rc = erg_block_level1(l1, &s[i].spec, &e, diag);
        if (rc != ERG_OK)
            break;
        features(&s[i].spec, &e, f.X + r * L2_FEATURES);
        rc = erg__fit_rows_set(&f, r, s[i].arch, e.time_s, e.energy_j, s[i].time_s, s[i].energy_j,
                               erg_op_model_target(l1), erg_block_name(b), diag);
        r++;
    }
    if (rc == ERG_OK)
        rc =
            erg__corrector_fit(f.X, f.Y, f.grp, k, L2_FEATURES, f.n_out, o, &m->corr[b], f.H, diag);
    /* with held-out predictions and rows of both phases: per phase, the shared correction, one
     * fitted on the phase's rows alone, or none, by the held-out MAPE on the phase's rows */
    size_t nph[2] = {0, 0};
    for (size_t i = 0; i < n; i++)
        if (s[i].spec.block == b)
            nph[s[i].spec.phase == ERG_PHASE_DECODE]++;
    if (rc == ERG_OK && (!o || o->cross_validate) && m->corr[b].n_groups >= 2 && nph[0] && nph[1])
        for (int ph = 0; ph < 2 && rc == ERG_OK; ph++) {
            size_t ri = 0;
            for (size_t i = 0; i < n; i++)
                if (s[i].spec.block == b)
                    f.mask[ri++] = (int)s[i].spec.phase == ph;
            rc = erg__corrector_choose(f.X, f.Y, f.grp, f.mask, k, L2_FEATURES, f.n_out, o,
                                       f.meas_t, f.meas_e, f.base_t, f.base_e, f.H, &m->own[b][ph],
                                       &m->use[b][ph], m->use_score[b][ph], diag);
        }
    if (rc == ERG_OK) {
        m->energy[b] = energy;
        erg__fit_rows_predict(&f);
        for (int ph = 0; ph < PH_COUNT; ph++) {
            size_t ri = 0;
            for (size_t i = 0; i < n; i++)
                if (s[i].spec.block == b)
                    f.mask[ri++] = ph == PH_ALL || (int)s[i].spec.phase == ph;
            erg__fit_rows_accuracy(&f, &m->acc[b][ph]);
        }
    }
    erg__fit_rows_free(&f);
    return rc;
}

int erg_block_model_fit(const erg_op_model *l1, const erg_block_sample *s, size_t n,
                        const erg_mlp_options *o, erg_block_model **out, erg_diag *diag)
{
    if (!l1 || !s || n == 0 || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no level-1 model or no block rows");
    *out = NULL;
    erg_block_model *m = calloc(1, sizeof *m);
    if (!m)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    snprintf(m->target, sizeof m->target, "%s", erg_op_model_target(l1));
    for (int b = 0; b < ERG_BLOCK_COUNT; b++)
        for (int ph = 0; ph < PH_COUNT; ph++) {
            erg_accuracy *a = &m->acc[b][ph];
            a->n = 0;
            a->time_mape_pct = a->time_r2 = a->energy_mape_pct = a->energy_r2 = NAN;
            a->base_time_mape_pct = a->base_energy_mape_pct = NAN;
        }
    for (int b = 0; b < ERG_BLOCK_COUNT; b++)
        for (int ph = 0; ph < 2; ph++)
            for (int u = 0; u < ERG__USE_COUNT; u++)
                m->use_score[b][ph][u] = NAN;
    for (int b = 0; b < ERG_BLOCK_COUNT; b++) {
        int rc = fit_kind(m, l1, s, n, (erg_block)b, o, diag);
        if (rc != ERG_OK) {
            erg_block_model_free(m);
            return rc;
        }
    }
    *out = m;
    return ERG_OK;
}

int erg_block_model_predict(const erg_block_model *m, const erg_op_model *l1,
                            const erg_block_spec *s, erg_estimate *out, erg_diag *diag)
{
    int rc = erg_block_level1(l1, s, out, diag);
    if (rc != ERG_OK || !m || !m->corr[s->block].present)
        return rc;
    int ph = s->phase == ERG_PHASE_DECODE, use = m->use[s->block][ph];
    if (use == ERG__USE_NONE) /* level 1 answers this phase: no correction improved it */
        return ERG_OK;
    const struct erg__corrector *c =
        use == ERG__USE_OWN ? &m->own[s->block][ph] : &m->corr[s->block];
    double x[L2_FEATURES], y[ERG__MLP_MAX_OUT];
    features(s, out, x);
    erg__corrector_apply(c, x, y);
    double t = out->time_s * exp(y[0]);
    double e = m->energy[s->block] ? out->energy_j * exp(y[1]) : out->energy_j * exp(y[0]);
    out->time_s = t;
    out->energy_j = e;
    out->time_var_s2 = (c->sigma[0] * t) * (c->sigma[0] * t);
    double se = m->energy[s->block] ? c->sigma[1] : c->sigma[0];
    out->energy_var_j2 = isfinite(e) ? (se * e) * (se * e) : (double)NAN;
    out->level = 2;
    return ERG_OK;
}

int erg__predict_blocks(const erg_op_model *l1, const erg_block_model *l2, const erg_arch *a,
                        const erg_phase_spec *ph, erg_model_prediction *out, erg_diag *diag)
{
    erg_model_work w;
    int rc = erg_model_work_build(a, ph, &w, diag);
    if (rc != ERG_OK)
        return rc;
    memset(out, 0, sizeof *out);
    out->phase = *ph;
    out->time_factor = out->energy_factor = 1;
    out->grade = erg_op_model_grade(l1);
    double vt = 0, ve = 0;
    int level = 2;
    for (size_t i = 0; i < w.n_blocks; i++) {
        erg_model_block_estimate *b = &out->blocks[out->n_blocks++];
        snprintf(b->name, sizeof b->name, "%s", w.blocks[i].name);
        b->spec = w.blocks[i].spec;
        b->count = w.blocks[i].count;
        rc = erg_block_model_predict(l2, l1, &b->spec, &b->each, diag);
        if (rc != ERG_OK)
            return rc;
        if (b->each.level < level)
            level = b->each.level;
        double c = (double)b->count;
        out->blocks_time_s += c * b->each.time_s;
        out->blocks_energy_j += c * b->each.energy_j;
        /* the instances of one block kind are the same work predicted by the same estimators:
         * they share one error, so their sds add (variance count^2 x instance); different kinds
         * are independent, as different ops inside a block are (erg_block_level1) */
        vt += c * c * b->each.time_var_s2;
        ve += c * c * b->each.energy_var_j2;
    }
    out->total.time_s = out->blocks_time_s;
    out->total.energy_j = out->blocks_energy_j;
    out->total.time_var_s2 = vt;
    out->total.energy_var_j2 = ve;
    out->total.level = level;
    return ERG_OK;
}

int erg_block_model_accuracy(const erg_block_model *m, erg_block b, int phase, erg_accuracy *out)
{
    if (!m || !out || (unsigned)b >= ERG_BLOCK_COUNT || !m->corr[b].present || phase < -1 ||
        phase > 1)
        return ERG_EINVAL;
    *out = m->acc[b][phase < 0 ? PH_ALL : phase];
    return ERG_OK;
}

/* ---------------------------------------------------------------- model/1 files */

int erg_block_model_phase(const erg_block_model *m, erg_block b, int phase, const char **use,
                          double mape_pct[3])
{
    if (!m || !use || (unsigned)b >= ERG_BLOCK_COUNT || !m->corr[b].present || phase < 0 ||
        phase > 1)
        return ERG_EINVAL;
    *use = erg__use_names[m->use[b][phase]];
    for (int u = 0; mape_pct && u < ERG__USE_COUNT; u++)
        mape_pct[u] = m->use_score[b][phase][u];
    return ERG_OK;
}

static const char *const ph_names[PH_COUNT] = {"prefill", "decode", "all"};

int erg_block_model_save(const char *path, const erg_block_model *m, erg_diag *diag)
{
    json_t *root = json_object(), *feat = json_array(), *blocks = json_object();
    json_object_set_new(root, "erg", json_string("model/1"));
    json_object_set_new(root, "kind", json_string(L2_KIND));
    json_object_set_new(root, "target", json_string(m->target));
    json_object_set_new(root, "method",
                        json_string("per block kind: MLP (FANN, RPROP, tanh hidden units) on "
                                    "standardised features, target log(measured / level-1 "
                                    "sum); held-out: leave-one-architecture-out"));
    for (int i = 0; i < L2_FEATURES; i++)
        json_array_append_new(feat, json_string(l2_features[i]));
    json_object_set_new(root, "features", feat);
    for (int b = 0; b < ERG_BLOCK_COUNT; b++) {
        if (!m->corr[b].present)
            continue;
        json_t *o = erg__corrector_to_json(&m->corr[b]);
        json_object_set_new(o, "energy", json_boolean(m->energy[b]));
        json_t *acc = json_object();
        for (int ph = 0; ph < PH_COUNT; ph++)
            json_object_set_new(acc, ph_names[ph], erg__accuracy_to_json(&m->acc[b][ph]));
        json_object_set_new(o, "heldout", acc);
        if (isfinite(m->use_score[b][0][ERG__USE_SHARED])) {
            json_t *sel = json_object();
            for (int ph = 0; ph < 2; ph++) {
                json_t *po = json_object(), *sc = json_object();
                json_object_set_new(po, "use", json_string(erg__use_names[m->use[b][ph]]));
                for (int u = 0; u < ERG__USE_COUNT; u++)
                    if (isfinite(m->use_score[b][ph][u]))
                        json_object_set_new(sc, erg__use_names[u],
                                            json_real(m->use_score[b][ph][u]));
                json_object_set_new(po, "heldout_mape_pct", sc);
                if (m->use[b][ph] == ERG__USE_OWN)
                    json_object_set_new(po, "model", erg__corrector_to_json(&m->own[b][ph]));
                json_object_set_new(sel, ph_names[ph], po);
            }
            json_object_set_new(o, "phases", sel);
        }
        json_object_set_new(blocks, erg_block_name((erg_block)b), o);
    }
    json_object_set_new(root, "blocks", blocks);
    int rc = erg__json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

/* The feature list must be erg's, in order: a model of another erg version is refused. */
int erg__check_features(const json_t *root, const char *const *want, int n, const char *file,
                        erg_diag *diag)
{
    const json_t *f = json_object_get(root, "features");
    if (!json_is_array(f) || n < 0 || json_array_size(f) != (size_t)n)
        return erg_diag_set(diag, ERG_EPARSE, file, "features: expected erg's %d features", n);
    for (int i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(f, (size_t)i));
        if (!s || strcmp(s, want[i]) != 0)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "features[%d]: expected \"%s\" (a model of another erg version?)",
                                i, want[i]);
    }
    return ERG_OK;
}

int erg__model_kind_load(const char *path, const char *kind, json_t **root, erg_diag *diag)
{
    int rc = erg__json_load_file(path, root, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__json_check_tag(*root, "model", 1, path, diag);
    const char *k = json_string_value(json_object_get(*root, "kind"));
    if (rc == ERG_OK && (!k || strcmp(k, kind) != 0))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "kind: expected \"%s\", got %s%s%s", kind,
                          k ? "\"" : "", k ? k : "none", k ? "\"" : "");
    if (rc != ERG_OK) {
        json_decref(*root);
        *root = NULL;
        erg__json_diag_place_file(diag, path);
    }
    return rc;
}

int erg_block_model_load(const char *path, erg_block_model **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, path, "no path or no output");
    *out = NULL;
    json_t *root;
    int rc = erg__model_kind_load(path, L2_KIND, &root, diag);
    if (rc != ERG_OK)
        return rc;
    erg_block_model *m = calloc(1, sizeof *m);
    if (!m) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    for (int b = 0; b < ERG_BLOCK_COUNT; b++)
        for (int ph = 0; ph < 2; ph++)
            for (int u = 0; u < ERG__USE_COUNT; u++)
                m->use_score[b][ph][u] = NAN;
    snprintf(m->target, sizeof m->target, "%s",
             json_string_value(json_object_get(root, "target"))
                 ? json_string_value(json_object_get(root, "target"))
                 : "");
    rc = erg__check_features(root, l2_features, L2_FEATURES, path, diag);
    const json_t *blocks = json_object_get(root, "blocks");
    if (rc == ERG_OK && !json_is_object(blocks))
        rc = erg_diag_set(diag, ERG_EPARSE, path, "blocks: expected an object");
    const char *key;
    const json_t *v;
    if (rc == ERG_OK)
        json_object_foreach(erg__json_mut(blocks), key, v)
        {
            erg_block b;
            char where[128];
            snprintf(where, sizeof where, "blocks.%s", key);
            if (erg_block_parse(key, &b) != ERG_OK) {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "%s: unknown block", where);
                break;
            }
            rc = erg__corrector_from_json(v, L2_FEATURES, &m->corr[b], path, where, diag);
            if (rc != ERG_OK)
                break;
            m->energy[b] = json_is_true(json_object_get(v, "energy"));
            if (m->energy[b] != (m->corr[b].n_out == 2)) {
                rc = erg_diag_set(diag, ERG_EPARSE, path, "%s.energy: disagrees with outputs",
                                  where);
                break;
            }
            const json_t *acc = json_object_get(v, "heldout");
            for (int ph = 0; rc == ERG_OK && ph < PH_COUNT; ph++) {
                char sub[160];
                snprintf(sub, sizeof sub, "%s.heldout.%s", where, ph_names[ph]);
                rc = erg__accuracy_from_json(json_object_get(acc, ph_names[ph]), &m->acc[b][ph],
                                             path, sub, diag);
            }
            /* "phases" (optional: without it the correction answers both phases) */
            const json_t *sel = json_object_get(v, "phases");
            for (int ph = 0; rc == ERG_OK && sel && ph < 2; ph++) {
                char sub[160];
                snprintf(sub, sizeof sub, "%s.phases.%s", where, ph_names[ph]);
                const json_t *po = json_object_get(sel, ph_names[ph]);
                const char *u = json_string_value(json_object_get(po, "use"));
                int k = -1;
                for (int j = 0; u && j < ERG__USE_COUNT; j++)
                    if (strcmp(u, erg__use_names[j]) == 0)
                        k = j;
                if (k < 0) {
                    rc = erg_diag_set(diag, ERG_EPARSE, path,
                                      "%s.use: expected \"shared\", \"own\" or \"none\"", sub);
                    break;
                }
                m->use[b][ph] = k;
                const json_t *sc = json_object_get(po, "heldout_mape_pct");
                for (int j = 0; j < ERG__USE_COUNT; j++) {
                    const json_t *x = json_object_get(sc, erg__use_names[j]);
                    if (json_is_number(x))
                        m->use_score[b][ph][j] = json_number_value(x);
                }
                if (k == ERG__USE_OWN) {
                    char mw[176];
                    snprintf(mw, sizeof mw, "%s.model", sub);
                    rc = erg__corrector_from_json(json_object_get(po, "model"), L2_FEATURES,
                                                  &m->own[b][ph], path, mw, diag);
                    if (rc == ERG_OK && m->own[b][ph].n_out != m->corr[b].n_out)
                        rc = erg_diag_set(diag, ERG_EPARSE, path, "%s: %u outputs, the block's %u",
                                          mw, m->own[b][ph].n_out, m->corr[b].n_out);
                }
            }
            if (rc != ERG_OK)
                break;
        }
    json_decref(root);
    if (rc != ERG_OK) {
        erg__json_diag_place_file(diag, path);
        erg_block_model_free(m);
        return rc;
    }
    *out = m;
    return ERG_OK;
}
