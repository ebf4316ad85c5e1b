/* SPDX-License-Identifier: MIT */
/*
 * Nested leave-one-architecture-out accuracy of HYMELL levels 2 and 3: the whole fit, with its
 * model choices, repeated without each architecture, then scored on that architecture's rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "erg/predict.h"
#include "predict/corrector.h"
#include "predict/levels.h"

/* Measured, predicted and base values of one set of rows (blocks or models), n long each. */
struct cols {
    double *mt, *me, *pt, *pe, *bt, *be;
};

static int cols_alloc(struct cols *c, size_t n)
{
    double *d = malloc((n ? n : 1) * 6 * sizeof *d);
    if (!d)
        return ERG_ENOMEM;
    for (size_t i = 0; i < 6 * (n ? n : 1); i++)
        d[i] = NAN;
    c->mt = d;
    c->me = d + n;
    c->pt = d + 2 * n;
    c->pe = d + 3 * n;
    c->bt = d + 4 * n;
    c->be = d + 5 * n;
    return ERG_OK;
}

/* As level 3 groups models (e2e.c): any MoE layer makes a MoE model. */
static int is_moe(const erg_arch *a)
{
    return a->layers[ERG_LAYER_FULL_MOE] + a->layers[ERG_LAYER_SLIDING_MOE] > 0;
}

/* MAPE and R² of time and energy over the rows with mask[i]; n 0 when there is none. */
static void cell(const struct cols *c, const int *mask, size_t n, erg_accuracy *a)
{
    size_t ne = 0;
    erg__accuracy(c->mt, c->pt, c->bt, mask, n, &a->n, &a->time_mape_pct, &a->time_r2,
                  &a->base_time_mape_pct);
    erg__accuracy(c->me, c->pe, c->be, mask, n, &ne, &a->energy_mape_pct, &a->energy_r2,
                  &a->base_energy_mape_pct);
}

/* The distinct architecture names of both row sets, in order of first appearance. */
static size_t arch_names(const erg_block_sample *bs, size_t nb, const erg_model_sample *ms,
                         size_t nm, const char **names)
{
    size_t k = 0;
    for (size_t i = 0; i < nb + nm; i++) {
        const char *a = i < nm ? ms[i].arch : bs[i - nm].arch;
        size_t j = 0;
        while (j < k && strcmp(names[j], a) != 0)
            j++;
        if (j == k)
            names[k++] = a;
    }
    return k;
}

/* One fold: fit levels 2 and 3 without architecture `out`, predict its rows into b and m. */
static int fold(const erg_op_model *l1, const erg_block_sample *bs, size_t nb,
                const erg_model_sample *ms, size_t nm, const erg_mlp_options *o, const char *out,
                erg_block_sample *bsub, erg_model_sample *msub, struct cols *b, struct cols *m,
                erg_diag *diag)
{
    size_t kb = 0, km = 0;
    for (size_t i = 0; i < nb; i++)
        if (strcmp(bs[i].arch, out) != 0)
            bsub[kb++] = bs[i];
    for (size_t i = 0; i < nm; i++)
        if (strcmp(ms[i].arch, out) != 0)
            msub[km++] = ms[i];
    erg_block_model *l2 = NULL;
    erg_e2e_model *l3 = NULL;
    int rc = ERG_OK;
    if (kb)
        rc = erg_block_model_fit(l1, bsub, kb, o, &l2, diag);
    if (rc == ERG_OK && km)
        rc = erg_e2e_model_fit(l1, l2, msub, km, o, &l3, diag);
    for (size_t i = 0; i < nb && rc == ERG_OK; i++) {
        if (strcmp(bs[i].arch, out) != 0)
            continue;
        erg_estimate e1, e2;
        rc = erg_block_level1(l1, &bs[i].spec, &e1, diag);
        if (rc == ERG_OK)
            rc = erg_block_model_predict(l2, l1, &bs[i].spec, &e2, diag);
        b->bt[i] = e1.time_s;
        b->be[i] = e1.energy_j;
        b->pt[i] = e2.time_s;
        b->pe[i] = e2.energy_j;
    }
    for (size_t i = 0; i < nm && rc == ERG_OK; i++) {
        if (strcmp(ms[i].arch, out) != 0)
            continue;
        erg_model_prediction p;
        rc = erg__predict_blocks(l1, l2, &ms[i].model, &ms[i].phase, &p, diag);
        if (rc != ERG_OK)
            break;
        m->bt[i] = p.blocks_time_s;
        m->be[i] = p.blocks_energy_j;
        erg__e2e_apply(l3, &ms[i].model, &p);
        m->pt[i] = p.total.time_s;
        m->pe[i] = p.total.energy_j;
    }
    if (rc != ERG_OK) {
        erg_diag held = *diag;
        erg_diag_set(diag, rc, held.where[0] ? held.where : NULL, "holding out %s: %s", out,
                     held.detail);
    }
    erg_block_model_free(l2);
    erg_e2e_model_free(l3);
    return rc;
}

int erg_levels_nested_accuracy(const erg_op_model *l1, const erg_block_sample *bs, size_t nb,
                               const erg_model_sample *ms, size_t nm, const erg_mlp_options *o,
                               erg_nested_accuracy *out, erg_diag *diag)
{
    if (!l1 || !ms || nm == 0 || !out || (nb && !bs))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no level-1 model or no model rows");
    memset(out, 0, sizeof *out);
    const char **names = malloc((nb + nm) * sizeof *names);
    erg_block_sample *bsub = malloc((nb ? nb : 1) * sizeof *bsub);
    erg_model_sample *msub = malloc(nm * sizeof *msub);
    int *mask = malloc((nb > nm ? nb : nm) * sizeof *mask);
    struct cols b = {0}, m = {0};
    int rc = ERG_OK;
    if (!names || !bsub || !msub || !mask || cols_alloc(&b, nb) || cols_alloc(&m, nm)) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto done;
    }
    size_t na = arch_names(bs, nb, ms, nm, names);
    if (na < 3) {
        rc = erg_diag_set(diag, ERG_EINVAL, NULL,
                          "nested accuracy needs three or more architectures (the rows have %zu): "
                          "each fold chooses its model leave-one-architecture-out among the rest",
                          na);
        goto done;
    }
    for (size_t i = 0; i < nb; i++) {
        b.mt[i] = bs[i].time_s;
        b.me[i] = bs[i].energy_j;
    }
    for (size_t i = 0; i < nm; i++) {
        m.mt[i] = ms[i].time_s;
        m.me[i] = ms[i].energy_j;
    }
    for (size_t a = 0; a < na && rc == ERG_OK; a++)
        rc = fold(l1, bs, nb, ms, nm, o, names[a], bsub, msub, &b, &m, diag);
    if (rc != ERG_OK)
        goto done;
    out->n_folds = na;
    for (int k = 0; k < ERG_BLOCK_COUNT; k++)
        for (int ph = 0; ph < 2; ph++) {
            for (size_t i = 0; i < nb; i++)
                mask[i] =
                    (int)bs[i].spec.block == k && (bs[i].spec.phase == ERG_PHASE_DECODE) == ph;
            cell(&b, mask, nb, &out->blocks[k][ph]);
        }
    for (int ph = 0; ph < 2; ph++)
        for (int moe = 0; moe < 2; moe++) {
            for (size_t i = 0; i < nm; i++)
                mask[i] =
                    (ms[i].phase.phase == ERG_PHASE_DECODE) == ph && is_moe(&ms[i].model) == moe;
            cell(&m, mask, nm, &out->e2e[ph][moe]);
        }
done:
    free(names);
    free(bsub);
    free(msub);
    free(mask);
    free(b.mt);
    free(m.mt);
    return rc;
}
