/* SPDX-License-Identifier: MIT */
/* The fit-report/1 document of a level-1, level-2 or level-3 fit (what `erg fit ... --json`
 * prints): the library writes it (issue 13: every format erg writes is the library's), in one
 * place for the three levels, so that the CLI only parses and prints. */
#include "core/json.h"
#include "erg/predict.h"

#include <math.h>
#include <string.h>

void erg_accuracy_average(const erg_accuracy *rows, size_t n, erg_accuracy *avg)
{
    memset(avg, 0, sizeof *avg);
    double *f[6] = {&avg->time_mape_pct,      &avg->time_r2,
                    &avg->energy_mape_pct,    &avg->energy_r2,
                    &avg->base_time_mape_pct, &avg->base_energy_mape_pct};
    for (int k = 0; k < 6; k++) {
        double s = 0;
        int m = 0;
        for (size_t i = 0; i < n; i++) {
            const double src[6] = {rows[i].time_mape_pct,      rows[i].time_r2,
                                   rows[i].energy_mape_pct,    rows[i].energy_r2,
                                   rows[i].base_time_mape_pct, rows[i].base_energy_mape_pct};
            if (rows[i].n && isfinite(src[k])) {
                s += src[k];
                m++;
            }
        }
        *f[k] = m ? s / m : (double)NAN;
    }
    for (size_t i = 0; i < n; i++)
        avg->n += rows[i].n;
}

/* {"n", "time_mape_pct", ...}; NULL on out of memory */
static json_t *acc_json(const erg_accuracy *a)
{
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "n", json_integer((json_int_t)a->n)) ||
        erg__json_set_number(o, "time_mape_pct", a->time_mape_pct) ||
        erg__json_set_number(o, "time_r2", a->time_r2) ||
        erg__json_set_number(o, "energy_mape_pct", a->energy_mape_pct) ||
        erg__json_set_number(o, "energy_r2", a->energy_r2) ||
        erg__json_set_number(o, "base_time_mape_pct", a->base_time_mape_pct) ||
        erg__json_set_number(o, "base_energy_mape_pct", a->base_energy_mape_pct)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* json_object_set_new that fails on a NULL value (an allocation that failed) */
static int set(json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new(o, key, v) : -1;
}

/* Level 1: per op and regime, erg_op_model_validation (HYMELL Tables 1-3). 0 or -1 (memory). */
static int level1(json_t *root, const erg_op_model *m)
{
    int energy = 0;
    for (unsigned op = 0; op < ERG_OP_COUNT; op++)
        energy |= erg_op_model_has(m, (erg_op)op) == 2;
    if (set(root, "target", json_string(erg_op_model_target(m))) ||
        set(root, "grade",
            energy ? json_string(erg_grade_name(erg_op_model_grade(m))) : json_null()))
        return -1;
    json_t *ops = json_object();
    if (set(root, "ops", ops))
        return -1;
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        if (!erg_op_model_has(m, (erg_op)op))
            continue;
        json_t *rows = json_object();
        if (set(ops, erg_op_name((erg_op)op), rows))
            return -1;
        unsigned nreg = erg_op_regime_count((erg_op)op);
        for (unsigned r = 0; r <= nreg; r++) {
            unsigned rr = r == nreg ? ERG_OP_MAX_REGIMES : r;
            erg_op_validation v;
            if (erg_op_model_validation(m, (erg_op)op, rr, &v) != ERG_OK)
                continue; /* rr is one of op's regimes or the average: cannot fail */
            json_t *o = json_object();
            if (set(rows, erg_op_regime_name((erg_op)op, rr), o) ||
                set(o, "n_train", json_integer(v.n_train)) ||
                set(o, "n_test", json_integer(v.n_test)) ||
                erg__json_set_number(o, "time_mape_pct", v.time_mape_pct) ||
                erg__json_set_number(o, "time_r2", v.time_r2) ||
                erg__json_set_number(o, "energy_mape_pct", v.energy_mape_pct) ||
                erg__json_set_number(o, "energy_r2", v.energy_r2) ||
                erg__json_set_number(o, "roofline_time_mape_pct", v.roof_time_mape_pct) ||
                erg__json_set_number(o, "roofline_time_r2", v.roof_time_r2) ||
                erg__json_set_number(o, "roofline_energy_mape_pct", v.roof_energy_mape_pct) ||
                erg__json_set_number(o, "roofline_energy_r2", v.roof_energy_r2) ||
                set(o, "fallback", json_boolean(r < nreg && v.fallback)))
                return -1;
        }
    }
    return set(root, "notes", json_string(erg_op_model_notes(m)));
}

/* Level 2: per fitted block kind and phase with rows (HYMELL Tables 4-5). */
static int level2(json_t *root, const erg_block_model *m)
{
    static const char *const ph[3] = {"prefill", "decode", "all"};
    json_t *b = json_object();
    if (set(root, "heldout", b))
        return -1;
    for (int k = 0; k < ERG_BLOCK_COUNT; k++) {
        if (!erg_block_model_has(m, (erg_block)k))
            continue;
        json_t *bo = json_object();
        if (set(b, erg_block_name((erg_block)k), bo))
            return -1;
        erg_accuracy a;
        for (int p = -1; p < 2; p++)
            if (erg_block_model_accuracy(m, (erg_block)k, p, &a) == ERG_OK && a.n &&
                set(bo, ph[p < 0 ? 2 : p], acc_json(&a)))
                return -1;
    }
    return 0;
}

static const char *const e2e_rows[4] = {"Prefill (Dense)", "Decode (Dense)", "Prefill (MoE)",
                                        "Decode (MoE)"};

/* The four rows of Table 6 (those with rows) and their "Average" into o. */
static int table6(json_t *o, const erg_accuracy a[4])
{
    erg_accuracy avg;
    erg_accuracy_average(a, 4, &avg);
    for (int i = 0; i < 4; i++)
        if (a[i].n && set(o, e2e_rows[i], acc_json(&a[i])))
            return -1;
    return set(o, "Average", acc_json(&avg));
}

static int nested_json(json_t *root, const erg_nested_accuracy *acc)
{
    static const char *const ph[2] = {"prefill", "decode"};
    json_t *j = json_object(), *blocks = json_object(), *e2e = json_object();
    if (set(root, "nested", j) || !blocks || !e2e) {
        json_decref(blocks);
        json_decref(e2e);
        return -1;
    }
    if (set(j, "folds", json_integer((json_int_t)acc->n_folds)) || set(j, "blocks", blocks)) {
        json_decref(e2e);
        return -1;
    }
    if (set(j, "e2e", e2e))
        return -1;
    for (int b = 0; b < ERG_BLOCK_COUNT; b++) {
        if (!acc->blocks[b][0].n && !acc->blocks[b][1].n)
            continue;
        json_t *k = json_object();
        if (set(blocks, erg_block_name((erg_block)b), k))
            return -1;
        for (int p = 0; p < 2; p++)
            if (acc->blocks[b][p].n && set(k, ph[p], acc_json(&acc->blocks[b][p])))
                return -1;
    }
    erg_accuracy a[4];
    for (int i = 0; i < 4; i++)
        a[i] = acc->e2e[i % 2][i / 2];
    return table6(e2e, a);
}

/* Level 3: Table 6 of the fit and, when run, the nested accuracy. */
static int level3(json_t *root, const erg_fit_report *r)
{
    if (set(root, "blocks_level", json_integer(r->blocks_level)))
        return -1;
    erg_accuracy a[4];
    for (int i = 0; i < 4; i++)
        if (erg_e2e_model_accuracy(r->e2e, i % 2, i / 2, &a[i]) != ERG_OK)
            memset(&a[i], 0, sizeof a[i]);
    json_t *rows = json_object();
    if (set(root, "heldout", rows) || table6(rows, a))
        return -1;
    return r->nested ? nested_json(root, r->nested) : 0;
}

int erg_fit_report_write_json(const char *path, const erg_fit_report *r, erg_diag *diag)
{
    if (!path || !r || !r->model_path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_fit_report_write_json: NULL argument");
    if ((r->level == 1 && !r->ops) || (r->level == 2 && !r->blocks) || (r->level == 3 && !r->e2e) ||
        r->level < 1 || r->level > 3)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "erg_fit_report_write_json: level %d without its model", r->level);
    json_t *root = json_object();
    int bad = !root || set(root, "erg", json_string("fit-report/1"));
    if (!bad && r->level > 1)
        bad = set(root, "level", json_integer(r->level));
    if (!bad)
        bad = set(root, "model", json_string(r->model_path));
    if (!bad && r->level > 1)
        bad = set(root, "rows", json_integer((json_int_t)r->rows));
    if (!bad)
        bad = r->level == 1   ? level1(root, r->ops)
              : r->level == 2 ? level2(root, r->blocks)
                              : level3(root, r);
    /* level 1's tables are indented (they are read by people); levels 2 and 3 are one line */
    size_t flags = JSON_REAL_PRECISION(6) | (r->level == 1 ? JSON_INDENT(2) : 0);
    int rc = bad ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                 : erg__json_dump_file(root, path, flags, diag);
    json_decref(root);
    return rc;
}
