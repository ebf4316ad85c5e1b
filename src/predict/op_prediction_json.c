/* SPDX-License-Identifier: MIT */
/* The prediction/1 document of one op prediction (what `erg predict op ... --json` prints) and
 * the held-out accuracy that goes with it: the library writes it (issue 13: every format erg
 * writes is the library's), so that the CLI only parses and prints. */
#include "core/json.h"
#include "erg/predict.h"

#include <math.h>
#include <string.h>

void erg_op_prediction_held_out(const erg_op_model *m, erg_op op, const erg_op_prediction *p,
                                double *time_mape_pct, double *energy_mape_pct)
{
    erg_op_validation v, avg;
    /* no validation row (ERG_EINVAL: op or regime unknown to m) is no held-out figure */
    if (!m || !p || erg_op_model_validation(m, op, p->regime, &v) != ERG_OK)
        v.time_mape_pct = v.energy_mape_pct = v.roof_time_mape_pct = v.roof_energy_mape_pct = NAN;
    if (!m || erg_op_model_validation(m, op, ERG_OP_MAX_REGIMES, &avg) != ERG_OK)
        avg.time_mape_pct = avg.energy_mape_pct = avg.roof_time_mape_pct =
            avg.roof_energy_mape_pct = NAN;
    int roof = p && p->method == ERG_PREDICT_ROOFLINE;
    double t = roof ? v.roof_time_mape_pct : v.time_mape_pct;
    double e = roof ? v.roof_energy_mape_pct : v.energy_mape_pct;
    /* a regime without held-out points (or one that borrows a neighbour's fit): the average */
    if (time_mape_pct)
        *time_mape_pct = isfinite(t) ? t : roof ? avg.roof_time_mape_pct : avg.time_mape_pct;
    if (energy_mape_pct)
        *energy_mape_pct = isfinite(e) ? e : roof ? avg.roof_energy_mape_pct : avg.energy_mape_pct;
}

static int set_str(json_t *o, const char *key, const char *v)
{
    return json_object_set_new(o, key, json_string(v));
}

int erg_op_prediction_write_json(const char *path, const erg_op_model *m, const char *model_path,
                                 const erg_op_dims *d, const erg_op_prediction *p, erg_diag *diag)
{
    if (!path || !m || !model_path || !d || !p)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_op_prediction_write_json: NULL argument");
    const char *op = erg_op_name(d->op), *dtype = erg_dtype_name(d->dtype);
    if (strcmp(op, "?") == 0 || strcmp(dtype, "?") == 0) /* their names for an unknown value */
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_op_prediction_write_json: unknown %s",
                            strcmp(op, "?") == 0 ? "op" : "dtype");
    const char *regime = erg_op_regime_name(d->op, p->regime);
    double t_pct, e_pct;
    erg_op_prediction_held_out(m, d->op, p, &t_pct, &e_pct);
    json_t *o = json_object();
    int bad =
        !o || set_str(o, "erg", "prediction/1") || set_str(o, "op", op) ||
        set_str(o, "dtype", dtype) || erg__json_set_number(o, "time_s", p->time_s) ||
        erg__json_set_number(o, "energy_j", p->energy_j) || /* null: no energy model */
        erg__json_set_number(o, "power_w", p->power_w) ||
        json_object_set_new(o, "regime", regime ? json_string(regime) : json_null()) ||
        set_str(o, "method", p->method == ERG_PREDICT_ROOFLINE ? "roofline" : "fit") ||
        set_str(o, "grade", erg_op_model_has(m, d->op) == 2 ? erg_grade_name(p->grade) : "none") ||
        set_str(o, "model", model_path) ||
        json_object_set_new(o, "extrapolated", json_boolean(p->extrapolated)) ||
        json_object_set_new(o, "why", p->why[0] ? json_string(p->why) : json_null()) ||
        json_object_set_new(o, "time_bounded", json_boolean(p->time_bounded)) ||
        json_object_set_new(o, "energy_bounded", json_boolean(p->energy_bounded)) ||
        erg__json_set_number(o, "floor_time_s", p->floor_time_s) ||
        json_object_set_new(o, "fallback", json_boolean(p->fallback)) ||
        erg__json_set_number(o, "held_out_time_mape_pct", t_pct) ||
        erg__json_set_number(o, "held_out_energy_mape_pct", e_pct) ||
        set_str(o, "target", erg_op_model_target(m));
    int rc = bad ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                 : erg__json_dump_file(o, path, JSON_REAL_PRECISION(9), diag);
    json_decref(o);
    return rc;
}
