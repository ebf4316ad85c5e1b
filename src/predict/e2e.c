/* SPDX-License-Identifier: MIT */
/* HYMELL level 3 (Section 3.6): an MLP on the block sums and global features, log targets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "erg/predict.h"
#include "predict/corrector.h"
#include "predict/levels.h"

#define L3_KIND "hymell-level3-e2e"
#define L3_FEATURES 15

static const char *const l3_features[L3_FEATURES] = {"log_blocks_time_s",
                                                     "log_blocks_energy_j",
                                                     "log_attention_time_s",
                                                     "log_ffn_time_s",
                                                     "log_other_time_s",
                                                     "log_d_model",
                                                     "log_n_layers",
                                                     "log_tokens",
                                                     "log_batch",
                                                     "log1p_prompt",
                                                     "log1p_kv",
                                                     "decode",
                                                     "log1p_n_experts",
                                                     "log1p_top_k",
                                                     "log_vocab"};

/* What corrects a group's models (dense, MoE): the correction fitted on every row, one fitted on
 * the group's rows only, or none (the block sum as it is); chosen per group on held-out error. */
enum {
    USE_SHARED = ERG__USE_SHARED,
    USE_OWN = ERG__USE_OWN,
    USE_NONE = ERG__USE_NONE,
    USE_COUNT = ERG__USE_COUNT
};
#define use_names erg__use_names
#define N_GROUPS 4
static const char *const group_names[N_GROUPS] = {"prefill_dense", "decode_dense", "prefill_moe",
                                                  "decode_moe"};

/* accuracy cells: phase (prefill, decode, all) × architecture (dense, moe, all) */
struct erg_e2e_model {
    char target[128];
    struct erg__corrector corr;
    /* per group g = 2·moe + decode (prefill dense, decode dense, prefill MoE, decode MoE) */
    struct erg__corrector own[N_GROUPS]; /* present when use[g] == USE_OWN */
    int use[N_GROUPS];
    double use_score[N_GROUPS][USE_COUNT]; /* held-out MAPE (time + energy) of each option, % */
    int energy;
    erg_accuracy acc[3][3];
    erg_e2e_heldout_row *rows; /* the fit's rows (NULL when loaded) */
    size_t n_rows;
};

size_t erg_e2e_model_heldout(const erg_e2e_model *m, const erg_e2e_heldout_row **rows)
{
    if (rows)
        *rows = m ? m->rows : NULL;
    return m ? m->n_rows : 0;
}

static double lg(double v)
{
    return log(v > 0 ? v : 1e-30);
}

static int is_moe(const erg_arch *a)
{
    return a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE] > 0;
}

static void features(const erg_arch *a, const erg_model_prediction *p, double *x)
{
    double att = 0, ffn = 0, other = 0;
    for (size_t i = 0; i < p->n_blocks; i++) {
        const erg_model_block_estimate *b = &p->blocks[i];
        double t = (double)b->count * b->each.time_s;
        if (b->spec.block == ERG_BLOCK_ATTENTION)
            att += t;
        else if (b->spec.block == ERG_BLOCK_FFN || b->spec.block == ERG_BLOCK_MOE)
            ffn += t;
        else
            other += t;
    }
    int64_t tokens =
        p->phase.phase == ERG_PHASE_PREFILL ? p->phase.batch * p->phase.prompt : p->phase.batch;
    x[0] = lg(p->blocks_time_s);
    x[1] = isfinite(p->blocks_energy_j) ? lg(p->blocks_energy_j) : 0;
    x[2] = lg(att);
    x[3] = lg(ffn);
    x[4] = lg(other);
    x[5] = lg((double)a->d_model);
    x[6] = lg((double)a->n_layers);
    x[7] = lg((double)tokens);
    x[8] = lg((double)p->phase.batch);
    x[9] = log1p((double)(p->phase.phase == ERG_PHASE_PREFILL ? p->phase.prompt : 0));
    x[10] = log1p((double)(p->phase.phase == ERG_PHASE_DECODE ? p->phase.kv : 0));
    x[11] = p->phase.phase == ERG_PHASE_DECODE;
    x[12] = log1p((double)(is_moe(a) ? a->n_experts : 0));
    x[13] = log1p((double)(is_moe(a) ? a->top_k : 0));
    x[14] = lg((double)a->vocab);
}

void erg__e2e_apply(const erg_e2e_model *m, const erg_arch *a, erg_model_prediction *p)
{
    if (!m || !m->corr.present)
        return;
    int g = 2 * is_moe(a) + (p->phase.phase == ERG_PHASE_DECODE);
    if (m->use[g] == USE_NONE)
        return;
    const struct erg__corrector *c = m->use[g] == USE_OWN ? &m->own[g] : &m->corr;
    double x[L3_FEATURES], y[2];
    features(a, p, x);
    erg__corrector_apply(c, x, y);
    double ft = exp(y[0]), fe = exp(m->energy ? y[1] : y[0]);
    double st = c->sigma[0], se = m->energy ? c->sigma[1] : st;
    p->time_factor = ft;
    p->energy_factor = fe;
    double vt = 0, ve = 0;
    for (size_t i = 0; i < p->n_blocks; i++) {
        erg_estimate *e = &p->blocks[i].each;
        e->time_s *= ft;
        e->energy_j *= fe;
        e->time_var_s2 *= ft * ft;
        e->energy_var_j2 *= fe * fe;
        e->level = 3;
        double cnt = (double)p->blocks[i].count; /* shared by the instances (predictor.c) */
        vt += cnt * cnt * e->time_var_s2;
        ve += cnt * cnt * e->energy_var_j2;
    }
    p->total.time_s = p->blocks_time_s * ft;
    p->total.energy_j = p->blocks_energy_j * fe;
    p->model_time_var_s2 = (st * p->total.time_s) * (st * p->total.time_s);
    p->model_energy_var_j2 = (se * p->total.energy_j) * (se * p->total.energy_j);
    p->total.time_var_s2 = vt + p->model_time_var_s2;
    p->total.energy_var_j2 = ve + p->model_energy_var_j2;
    p->total.level = 3;
}

void erg_e2e_model_free(erg_e2e_model *m)
{
    if (!m)
        return;
    erg__corrector_free(&m->corr);
    for (int g = 0; g < N_GROUPS; g++)
        erg__corrector_free(&m->own[g]);
    free(m->rows);
    free(m);
}

/* Per group g (2·moe + decode): erg__corrector_choose on the group's rows (f->mask). */
static int choose_group(erg_e2e_model *m, int g, struct erg__fit_rows *f, const erg_mlp_options *o,
                        erg_diag *diag)
{
    return erg__corrector_choose(f->X, f->Y, f->grp, f->mask, f->n, L3_FEATURES, f->n_out, o,
                                 f->meas_t, f->meas_e, f->base_t, f->base_e, f->H, &m->own[g],
                                 &m->use[g], m->use_score[g], diag);
}

int erg_e2e_model_fit(const erg_op_model *l1, const erg_block_model *l2, const erg_model_sample *s,
                      size_t n, const erg_mlp_options *o, erg_e2e_model **out, erg_diag *diag)
{
    if (!l1 || !s || n == 0 || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no level-1 model or no model rows");
    *out = NULL;
    int energy = 1;
    for (size_t i = 0; i < n; i++)
        energy &= isfinite(s[i].energy_j) && s[i].energy_j > 0;
    erg_e2e_model *m = calloc(1, sizeof *m);
    if (!m)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    struct erg__fit_rows f;
    int rc = erg__fit_rows_init(&f, n, L3_FEATURES, energy, diag);
    if (rc != ERG_OK) {
        free(m);
        return rc;
    }
    m->energy = energy;
    for (int g = 0; g < N_GROUPS; g++)
        for (int u = 0; u < USE_COUNT; u++)
            m->use_score[g][u] = NAN;
    snprintf(m->target, sizeof m->target, "%s", erg_op_model_target(l1));
    for (size_t i = 0; i < n && rc == ERG_OK; i++) {
        erg_model_prediction p;
        rc = erg__predict_blocks(l1, l2, &s[i].model, &s[i].phase, &p, diag);
        if (rc != ERG_OK)
            break;
        features(&s[i].model, &p, f.X + i * L3_FEATURES);
        rc = erg__fit_rows_set(&f, i, s[i].arch, p.blocks_time_s, p.blocks_energy_j, s[i].time_s,
                               s[i].energy_j, erg_op_model_target(l1), "model", diag);
    }
    if (rc == ERG_OK)
        rc = erg__corrector_fit(f.X, f.Y, f.grp, n, L3_FEATURES, f.n_out, o, &m->corr, f.H, diag);
    /* with held-out predictions (two or more architectures): per group, the shared correction,
     * the group's own or none, whichever has the lower held-out MAPE on the group's rows */
    if (rc == ERG_OK && (!o || o->cross_validate) && m->corr.n_groups >= 2)
        for (int g = 0; g < N_GROUPS && rc == ERG_OK; g++) {
            for (size_t i = 0; i < n; i++)
                f.mask[i] = 2 * is_moe(&s[i].model) + (s[i].phase.phase == ERG_PHASE_DECODE) == g;
            rc = choose_group(m, g, &f, o, diag);
        }
    if (rc != ERG_OK)
        goto done;
    m->rows = calloc(n, sizeof *m->rows);
    if (!m->rows) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto done;
    }
    m->n_rows = n;
    erg__fit_rows_predict(&f);
    for (size_t i = 0; i < n; i++) {
        erg_e2e_heldout_row *r = &m->rows[i];
        snprintf(r->arch, sizeof r->arch, "%s", s[i].arch);
        r->phase = s[i].phase;
        r->time_s = s[i].time_s;
        r->energy_j = s[i].energy_j;
        r->predicted_time_s = f.pred_t[i];
        r->predicted_energy_j = f.pred_e[i];
    }
    for (int ph = 0; ph < 3; ph++)
        for (int mo = 0; mo < 3; mo++) {
            for (size_t i = 0; i < n; i++)
                f.mask[i] = (ph == 2 || (int)s[i].phase.phase == ph) &&
                            (mo == 2 || is_moe(&s[i].model) == mo);
            erg__fit_rows_accuracy(&f, &m->acc[ph][mo]);
        }
done:
    erg__fit_rows_free(&f);
    if (rc != ERG_OK) {
        erg_e2e_model_free(m);
        return rc;
    }
    *out = m;
    return ERG_OK;
}

int erg_e2e_model_accuracy(const erg_e2e_model *m, int phase, int moe, erg_accuracy *out)
{
    if (!m || !out || phase < -1 || phase > 1 || moe < -1 || moe > 1)
        return ERG_EINVAL;
    *out = m->acc[phase < 0 ? 2 : phase][moe < 0 ? 2 : moe];
    return out->n ? ERG_OK : ERG_EINVAL;
}

int erg_e2e_model_group(const erg_e2e_model *m, int phase, int moe, const char **use,
                        double mape_pct[3])
{
    if (!m || !use || moe < 0 || moe > 1 || phase < 0 || phase > 1)
        return ERG_EINVAL;
    int g = 2 * moe + phase;
    *use = use_names[m->use[g]];
    for (int u = 0; mape_pct && u < USE_COUNT; u++)
        mape_pct[u] = m->use_score[g][u];
    return ERG_OK;
}

static const char *const ph_names[3] = {"prefill", "decode", "all"};
static const char *const moe_names[3] = {"dense", "moe", "all"};

int erg_e2e_model_save(const char *path, const erg_e2e_model *m, erg_diag *diag)
{
    json_t *root = json_object(), *feat = json_array(), *acc = json_object();
    json_object_set_new(root, "erg", json_string("model/1"));
    json_object_set_new(root, "kind", json_string(L3_KIND));
    json_object_set_new(root, "target", json_string(m->target));
    json_object_set_new(root, "method",
                        json_string("MLP (FANN, RPROP, tanh hidden units) on standardised "
                                    "features, target log(measured / sum of the block "
                                    "estimates); held-out: leave-one-architecture-out"));
    for (int i = 0; i < L3_FEATURES; i++)
        json_array_append_new(feat, json_string(l3_features[i]));
    json_object_set_new(root, "features", feat);
    json_t *c = erg__corrector_to_json(&m->corr);
    json_object_set_new(c, "energy", json_boolean(m->energy));
    json_object_set_new(root, "model", c);
    json_t *sel = json_object();
    for (int g = 0; g < N_GROUPS; g++) {
        json_t *o = json_object(), *sc = json_object();
        json_object_set_new(o, "use", json_string(use_names[m->use[g]]));
        for (int u = 0; u < USE_COUNT; u++)
            if (isfinite(m->use_score[g][u]))
                json_object_set_new(sc, use_names[u], json_real(m->use_score[g][u]));
        json_object_set_new(o, "heldout_mape_pct", sc);
        if (m->use[g] == USE_OWN) {
            json_t *oc = erg__corrector_to_json(&m->own[g]);
            json_object_set_new(oc, "energy", json_boolean(m->energy));
            json_object_set_new(o, "model", oc);
        }
        json_object_set_new(sel, group_names[g], o);
    }
    json_object_set_new(root, "groups", sel);
    for (int ph = 0; ph < 3; ph++) {
        json_t *row = json_object();
        for (int mo = 0; mo < 3; mo++)
            json_object_set_new(row, moe_names[mo], erg__accuracy_to_json(&m->acc[ph][mo]));
        json_object_set_new(acc, ph_names[ph], row);
    }
    json_object_set_new(root, "heldout", acc);
    int rc = erg__json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

int erg_e2e_model_load(const char *path, erg_e2e_model **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, path, "no path or no output");
    *out = NULL;
    json_t *root;
    int rc = erg__model_kind_load(path, L3_KIND, &root, diag);
    if (rc != ERG_OK)
        return rc;
    erg_e2e_model *m = calloc(1, sizeof *m);
    if (!m) {
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    const char *t = json_string_value(json_object_get(root, "target"));
    snprintf(m->target, sizeof m->target, "%s", t ? t : "");
    for (int g = 0; g < N_GROUPS; g++)
        for (int u = 0; u < USE_COUNT; u++)
            m->use_score[g][u] = NAN;
    rc = erg__check_features(root, l3_features, L3_FEATURES, path, diag);
    const json_t *c = json_object_get(root, "model");
    if (rc == ERG_OK)
        rc = erg__corrector_from_json(c, L3_FEATURES, &m->corr, path, "model", diag);
    if (rc == ERG_OK) {
        m->energy = json_is_true(json_object_get(c, "energy"));
        if (m->energy != (m->corr.n_out == 2))
            rc = erg_diag_set(diag, ERG_EPARSE, path, "model.energy: disagrees with outputs");
    }
    /* "groups" (optional: files without it correct every model with "model") */
    const json_t *sel = json_object_get(root, "groups");
    for (int g = 0; rc == ERG_OK && sel && g < N_GROUPS; g++) {
        const json_t *o = json_object_get(sel, group_names[g]);
        const char *u = json_string_value(json_object_get(o, "use"));
        char where[32];
        snprintf(where, sizeof where, "groups.%s", group_names[g]);
        int k = -1;
        for (int j = 0; u && j < USE_COUNT; j++)
            if (strcmp(u, use_names[j]) == 0)
                k = j;
        if (k < 0) {
            rc = erg_diag_set(diag, ERG_EPARSE, path,
                              "%s.use: expected \"shared\", \"own\" or \"none\"", where);
            break;
        }
        m->use[g] = k;
        const json_t *sc = json_object_get(o, "heldout_mape_pct");
        for (int j = 0; j < USE_COUNT; j++) {
            const json_t *v = json_object_get(sc, use_names[j]);
            if (json_is_number(v))
                m->use_score[g][j] = json_number_value(v);
        }
        if (k == USE_OWN) {
            snprintf(where, sizeof where, "groups.%s.model", group_names[g]);
            rc = erg__corrector_from_json(json_object_get(o, "model"), L3_FEATURES, &m->own[g],
                                          path, where, diag);
            if (rc == ERG_OK && m->own[g].n_out != m->corr.n_out)
                rc = erg_diag_set(diag, ERG_EPARSE, path, "%s: %u outputs, \"model\" has %u", where,
                                  m->own[g].n_out, m->corr.n_out);
        }
    }
    const json_t *acc = json_object_get(root, "heldout");
    for (int ph = 0; rc == ERG_OK && ph < 3; ph++)
        for (int mo = 0; rc == ERG_OK && mo < 3; mo++) {
            char sub[96];
            snprintf(sub, sizeof sub, "heldout.%s.%s", ph_names[ph], moe_names[mo]);
            rc = erg__accuracy_from_json(
                json_object_get(json_object_get(acc, ph_names[ph]), moe_names[mo]), &m->acc[ph][mo],
                path, sub, diag);
        }
    json_decref(root);
    if (rc != ERG_OK) {
        erg__json_diag_place_file(diag, path);
        erg_e2e_model_free(m);
        return rc;
    }
    *out = m;
    return ERG_OK;
}
