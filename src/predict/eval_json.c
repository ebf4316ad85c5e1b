/* SPDX-License-Identifier: MIT */
/* The eval/1 document (what `erg predict eval --json` prints): the library writes it (issue 13:
 * every format erg writes is the library's), so that the CLI only parses and prints. */
#include "core/json.h"
#include "erg/predict.h"

#include <stdlib.h>

/* json_object_set_new that fails on a NULL value (an allocation that failed) */
static int set(json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new(o, key, v) : -1;
}

/* append a new object to a; NULL on out of memory */
static json_t *append_object(json_t *a)
{
    json_t *o = json_object();
    return o && json_array_append_new(a, o) == 0 ? o : NULL;
}

static int summary(json_t *sum, const erg_eval *e, size_t file, const char *name, unsigned worst)
{
    erg_eval_group *g = NULL;
    size_t ng = 0;
    if (erg_eval_summary(e, file, worst, &g, &ng) != ERG_OK)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < ng && !bad; i++) {
        const erg_eval_group *x = &g[i];
        json_t *o = append_object(sum), *w = json_array();
        bad = !o || !w;
        for (size_t q = 0; q < x->n_worst && !bad; q++) {
            json_t *wo = append_object(w);
            bad = !wo || set(wo, "row", json_integer((json_int_t)x->worst[q]->row)) ||
                  erg__json_set_number(wo, "measured", x->worst[q]->measured) ||
                  erg__json_set_number(wo, "predicted", x->worst[q]->predicted);
        }
        bad = bad || set(o, "file", json_string(name)) ||
              set(o, "level", json_string(x->first->level)) ||
              set(o, "phase", x->first->phase ? json_string(x->first->phase) : json_null()) ||
              set(o, "quantity", json_string(x->first->quantity)) ||
              set(o, "n", json_integer((json_int_t)x->n)) ||
              erg__json_set_number(o, "mape_pct", x->mape_pct) ||
              erg__json_set_number(o, "r2", x->r2);
        if (bad)
            json_decref(w);
        else
            bad = json_object_set_new(o, "worst", w);
    }
    free(g);
    return bad ? -1 : 0;
}

int erg_eval_write_json(const char *path, const erg_eval *e, const char *target_dir,
                        const char *const *files, size_t n_files, unsigned worst, erg_diag *diag)
{
    if (!path || !e || !target_dir || (!files && n_files) || worst > ERG_EVAL_MAX_WORST)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_eval_write_json: bad argument");
    for (size_t i = 0; i < e->n_rows; i++)
        if (e->rows[i].file >= n_files)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "erg_eval_write_json: row %zu names file %zu of %zu", i,
                                e->rows[i].file, n_files);
    for (size_t i = 0; i < e->n_skipped; i++)
        if (e->skipped[i].file >= n_files)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "erg_eval_write_json: skip %zu names file %zu of %zu", i,
                                e->skipped[i].file, n_files);
    json_t *root = json_object(), *rows = json_array(), *sum = json_array(), *sk = json_array(),
           *as = json_array();
    int bad = !root || !rows || !sum || !sk || !as;
    for (size_t i = 0; i < e->n_rows && !bad; i++) {
        const erg_eval_row *x = &e->rows[i];
        json_t *o = append_object(rows);
        bad = !o || set(o, "file", json_string(files[x->file])) ||
              set(o, "row", json_integer((json_int_t)x->row)) ||
              set(o, "phase", x->phase ? json_string(x->phase) : json_null()) ||
              set(o, "quantity", json_string(x->quantity)) ||
              erg__json_set_number(o, "measured", x->measured) ||
              erg__json_set_number(o, "predicted", x->predicted);
    }
    for (size_t i = 0; i < n_files && !bad; i++)
        bad = summary(sum, e, i, files[i], worst);
    for (size_t i = 0; i < e->n_skipped && !bad; i++) {
        json_t *o = append_object(sk);
        bad = !o || set(o, "file", json_string(files[e->skipped[i].file])) ||
              set(o, "row", json_integer((json_int_t)e->skipped[i].row)) ||
              set(o, "reason", json_string(e->skipped[i].reason));
    }
    for (size_t i = 0; i < e->n_assumptions && !bad; i++)
        bad = json_array_append_new(as, json_string(e->assumptions[i])) != 0;
    if (!bad) {
        /* each set takes its array, also when it fails */
        bad =
            set(root, "erg", json_string("eval/1")) || set(root, "target", json_string(target_dir));
        json_t *parts[4] = {rows, sum, sk, as};
        static const char *const keys[4] = {"rows", "summary", "skipped", "assumptions"};
        for (int k = 0; k < 4; k++) {
            if (bad)
                json_decref(parts[k]);
            else
                bad = json_object_set_new(root, keys[k], parts[k]);
        }
    } else {
        json_decref(rows);
        json_decref(sum);
        json_decref(sk);
        json_decref(as);
    }
    int rc = bad ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                 : erg__json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(9), diag);
    json_decref(root);
    return rc;
}
