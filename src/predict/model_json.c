/* SPDX-License-Identifier: MIT */
/* The model-prediction/1 and model-sweep/1 documents (what `erg predict model --json` and `erg
 * predict sweep --json` print) and the whole request they report: the library writes them
 * (issue 13: every format erg writes is the library's), so that the CLI only parses and prints.
 */
#include "core/file.h"
#include "core/json.h"
#include "erg/predict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int erg_predict_request(const erg_predictor *p, const erg_arch *a,
                        const erg_model_prediction *prefill, int64_t output, erg_model_request *out,
                        erg_diag *diag)
{
    if (!p || !a || !prefill || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_predict_request: NULL argument");
    if (prefill->phase.phase != ERG_PHASE_PREFILL || output < 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_predict_request: %s",
                            output < 1 ? "output must be at least 1 token"
                                       : "the request starts with a prefill prediction");
    erg_model_prediction *m = malloc(sizeof *m);
    if (!m)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    erg_model_request r;
    memset(&r, 0, sizeof r);
    r.batch = prefill->phase.batch;
    r.prompt = prefill->phase.prompt;
    r.output = output;
    r.steps = output - 1;
    double sd_t = 0, sd_e = 0;
    for (int64_t i = 1; i < output; i++) {
        erg_phase_spec s = {ERG_PHASE_DECODE, r.batch, 0, r.prompt + i, prefill->phase.logits_all};
        int rc = erg_predict_model(p, a, &s, m, diag);
        if (rc != ERG_OK) {
            free(m);
            return rc;
        }
        r.decode_time_s += m->total.time_s;
        r.decode_energy_j += m->total.energy_j;
        sd_t += sqrt(m->total.time_var_s2);
        sd_e += sqrt(m->total.energy_var_j2);
    }
    free(m);
    r.prefill_time_s = prefill->total.time_s;
    r.prefill_energy_j = prefill->total.energy_j;
    r.time_s = r.prefill_time_s + r.decode_time_s;
    r.energy_j = r.prefill_energy_j + r.decode_energy_j;
    r.time_sd_s = sqrt(prefill->total.time_var_s2 + sd_t * sd_t);
    r.energy_sd_j = sqrt(prefill->total.energy_var_j2 + sd_e * sd_e);
    r.grade = prefill->grade;
    *out = r;
    return ERG_OK;
}

/* json_object_set_new that fails on a NULL value (an allocation that failed) */
static int set(json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new(o, key, v) : -1;
}

static int set_str(json_t *o, const char *key, const char *v)
{
    return set(o, key, json_string(v));
}

static int set_int(json_t *o, const char *key, int64_t v)
{
    return set(o, key, json_integer((json_int_t)v));
}

/* One phase: totals, level-3 factors and the blocks; NULL on out of memory. */
static json_t *phase_json(const erg_model_prediction *m)
{
    json_t *o = json_object(), *blocks = json_array();
    int bad =
        !o || !blocks || set_str(o, "phase", erg_phase_name(m->phase.phase)) ||
        set_int(o, "batch", m->phase.batch) || set_int(o, "prompt", m->phase.prompt) ||
        set_int(o, "kv", m->phase.kv) || erg__json_set_number(o, "time_s", m->total.time_s) ||
        erg__json_set_number(o, "energy_j", m->total.energy_j) ||
        erg__json_set_number(o, "time_sd_s", sqrt(m->total.time_var_s2)) ||
        erg__json_set_number(o, "energy_sd_j", sqrt(m->total.energy_var_j2)) ||
        set_int(o, "level", m->total.level) ||
        erg__json_set_number(o, "blocks_time_s", m->blocks_time_s) ||
        erg__json_set_number(o, "blocks_energy_j", m->blocks_energy_j) ||
        erg__json_set_number(o, "time_factor", m->time_factor) ||
        erg__json_set_number(o, "energy_factor", m->energy_factor) ||
        /* a time-only target has no energy, so no energy grade (null, as time-only models/1 say) */
        set(o, "grade",
            isfinite(m->total.energy_j) ? json_string(erg_grade_name(m->grade)) : json_null());
    for (size_t i = 0; i < m->n_blocks && !bad; i++) {
        const erg_model_block_estimate *b = &m->blocks[i];
        json_t *bo = json_object();
        bad = !bo || json_array_append_new(blocks, bo) || set_str(bo, "name", b->name) ||
              set_str(bo, "block", erg_block_name(b->spec.block)) ||
              set_int(bo, "count", b->count) || set_int(bo, "level", b->each.level) ||
              erg__json_set_number(bo, "time_s_each", b->each.time_s) ||
              erg__json_set_number(bo, "energy_j_each", b->each.energy_j) ||
              erg__json_set_number(bo, "time_s", (double)b->count * b->each.time_s) ||
              erg__json_set_number(bo, "energy_j", (double)b->count * b->each.energy_j);
    }
    if (bad || json_object_set_new(o, "blocks", blocks)) {
        if (bad)
            json_decref(blocks);
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *request_json(const erg_model_request *q)
{
    json_t *rq = json_object();
    int bad =
        !rq || set_int(rq, "batch", q->batch) || set_int(rq, "prompt", q->prompt) ||
        set_int(rq, "output", q->output) || set_int(rq, "decode_steps", q->steps) ||
        erg__json_set_number(rq, "time_s", q->time_s) ||
        erg__json_set_number(rq, "time_sd_s", q->time_sd_s) ||
        erg__json_set_number(rq, "energy_j", q->energy_j) ||
        erg__json_set_number(rq, "energy_sd_j", q->energy_sd_j) ||
        erg__json_set_number(rq, "prefill_time_s", q->prefill_time_s) ||
        erg__json_set_number(rq, "decode_time_s", q->decode_time_s) ||
        erg__json_set_number(rq, "prefill_energy_j", q->prefill_energy_j) ||
        erg__json_set_number(rq, "decode_energy_j", q->decode_energy_j) ||
        erg__json_set_number(rq, "time_per_output_token_s",
                             q->steps > 0 ? q->decode_time_s / (double)q->steps : (double)NAN) ||
        erg__json_set_number(rq, "energy_per_output_token_j",
                             q->energy_j / ((double)q->batch * (double)q->output)) ||
        set(rq, "grade",
            isfinite(q->energy_j) ? json_string(erg_grade_name(q->grade)) : json_null());
    if (bad) {
        json_decref(rq);
        return NULL;
    }
    return rq;
}

int erg_model_prediction_write_json(const char *path, const erg_model_report *r, erg_diag *diag)
{
    if (!path || !r || !r->config || !r->arch || !r->target || (!r->phases && r->n_phases) ||
        (!r->warnings && r->n_warnings))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "erg_model_prediction_write_json: NULL argument");
    const erg_arch *a = r->arch;
    double active, params = erg_arch_params(a, &active);
    json_t *o = json_object(), *phases = json_array();
    int bad = !o || !phases || set_str(o, "erg", "model-prediction/1") ||
              set_str(o, "config", r->config) || set_str(o, "arch", a->name) ||
              set_str(o, "family", a->family) || set(o, "params", json_real(params)) ||
              set(o, "active_params", json_real(active)) ||
              set_str(o, "target", erg_predictor_dir(r->target)) ||
              set_int(o, "target_level", erg_predictor_level(r->target));
    if (bad)
        json_decref(phases);
    else
        bad = json_object_set_new(o, "phases", phases);
    for (size_t i = 0; i < r->n_phases && !bad; i++) {
        json_t *ph = phase_json(&r->phases[i]);
        bad = !ph || json_array_append_new(phases, ph);
        if (!bad && r->phases[i].phase.phase == ERG_PHASE_DECODE) {
            json_t *sv = json_null();
            if (r->has_serving) {
                sv = json_object();
                bad = !sv || erg__json_set_number(sv, "itl_s", r->serving_itl_s) ||
                      erg__json_set_number(sv, "energy_per_token_j", r->serving_energy_per_token_j);
            }
            bad = bad ? (json_decref(sv), 1) : json_object_set_new(ph, "serving", sv);
        }
    }
    if (!bad && r->request)
        bad = set(o, "request", request_json(r->request));
    json_t *wa = bad ? NULL : json_array();
    bad = bad || set(o, "warnings", wa);
    for (size_t i = 0; i < r->n_warnings && !bad; i++)
        bad = json_array_append_new(wa, json_string(r->warnings[i])) != 0;
    if (!bad && r->schedule)
        bad = set_str(o, "schedule", r->schedule);
    int rc = bad ? erg_diag_set(diag, ERG_ENOMEM, path, "out of memory")
                 : erg__json_dump_file(o, path, JSON_REAL_PRECISION(9), diag);
    json_decref(o);
    return rc;
}

int erg_model_prediction_first_blocks(const erg_model_prediction *m, erg_estimate *attention,
                                      erg_estimate *ffn)
{
    int have = 0;
    if (attention)
        memset(attention, 0, sizeof *attention);
    if (ffn)
        memset(ffn, 0, sizeof *ffn);
    for (size_t b = 0; m && b < m->n_blocks; b++) {
        const erg_model_block_estimate *e = &m->blocks[b];
        if (e->spec.block == ERG_BLOCK_ATTENTION && !(have & 1)) {
            if (attention)
                *attention = e->each;
            have |= 1;
        }
        if ((e->spec.block == ERG_BLOCK_FFN || e->spec.block == ERG_BLOCK_MOE) && !(have & 2)) {
            if (ffn)
                *ffn = e->each;
            have |= 2;
        }
    }
    return have;
}

/* ---------------------------------------------------------------- model-sweep/1, streamed */

#define SWEEP_BUF (64 * 1024)

struct erg_model_sweep_writer {
    erg__out out;
    char *keys[16];
    size_t n_keys, n_rows;
    json_t *skipped;
    char *buf; /* what is not written yet (cap bytes): flushed to out when full, so nothing is
                * written before the first row (the header fits) */
    size_t n, cap;
};

static void sweep_free(erg_model_sweep_writer *w)
{
    for (size_t i = 0; i < w->n_keys; i++)
        free(w->keys[i]);
    json_decref(w->skipped);
    free(w->buf);
    free(w);
}

static void sweep_flush(erg_model_sweep_writer *w)
{
    if (w->n)
        (void)erg__out_write(&w->out, w->buf, w->n); /* a failure is kept in out.err */
    w->n = 0;
}

static void sweep_put(erg_model_sweep_writer *w, const char *s)
{
    size_t len = strlen(s);
    if (w->n + len > w->cap)
        sweep_flush(w);
    if (len > w->cap) {
        (void)erg__out_write(&w->out, s, len);
        return;
    }
    memcpy(w->buf + w->n, s, len);
    w->n += len;
}

int erg_model_sweep_open(const char *path, const char *config, const char *target,
                         const char *const *keys, size_t n_keys, erg_model_sweep_writer **out,
                         erg_diag *diag)
{
    if (out)
        *out = NULL;
    if (!path || !config || !target || !keys || !out || n_keys < 1 || n_keys > 16)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "erg_model_sweep_open: NULL argument or not 1-16 keys");
    for (size_t i = 0; i < n_keys; i++)
        if (!keys[i])
            return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_model_sweep_open: NULL key");
    erg_model_sweep_writer *w = calloc(1, sizeof *w);
    if (!w)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    w->out.fd = -1;
    json_t *jo = json_object(), *jk = json_array();
    int bad = !(w->skipped = json_array()) || !jo || !jk;
    for (size_t i = 0; i < n_keys && !bad; i++) {
        bad = !(w->keys[i] = strdup(keys[i])) || json_array_append_new(jk, json_string(keys[i]));
        w->n_keys += w->keys[i] != NULL;
    }
    bad = bad || set_str(jo, "erg", "model-sweep/1") || set_str(jo, "config", config) ||
          set_str(jo, "target", target);
    if (!bad) {
        bad = json_object_set_new(jo, "keys", jk); /* takes jk, also when it fails */
        jk = NULL;
    }
    char *head = bad ? NULL : erg_json_dumps(jo, JSON_REAL_PRECISION(9));
    json_decref(jo);
    json_decref(jk);
    if (!head) {
        sweep_free(w);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    w->cap = strlen(head) + 32 > SWEEP_BUF ? strlen(head) + 32 : SWEEP_BUF;
    if (!(w->buf = malloc(w->cap))) {
        free(head);
        sweep_free(w);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    int rc = erg__out_open(&w->out, path, diag);
    if (rc != ERG_OK) {
        free(head);
        sweep_free(w);
        return rc;
    }
    /* the header without its closing brace, then the rows as they come */
    head[strlen(head) - 1] = '\0';
    sweep_put(w, head);
    sweep_put(w, ", \"rows\": [");
    free(head);
    *out = w;
    return ERG_OK;
}

/* {"KEY": value, ...} of one point */
static json_t *point_json(const erg_model_sweep_writer *w, const int64_t *values)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < w->n_keys; i++)
        if (set_int(o, w->keys[i], values[i])) {
            json_decref(o);
            return NULL;
        }
    return o;
}

int erg_model_sweep_row(erg_model_sweep_writer *w, const int64_t *values,
                        const erg_model_prediction *m)
{
    if (!w || !values || !m)
        return ERG_EINVAL;
    erg_estimate at, ffn;
    int have = erg_model_prediction_first_blocks(m, &at, &ffn);
    json_t *row = point_json(w, values);
    int bad =
        !row || set_str(row, "phase", erg_phase_name(m->phase.phase)) ||
        erg__json_set_number(row, "time_s", m->total.time_s) ||
        erg__json_set_number(row, "energy_j", m->total.energy_j) ||
        erg__json_set_number(row, "attention_time_s", have & 1 ? at.time_s : (double)NAN) ||
        erg__json_set_number(row, "attention_energy_j", have & 1 ? at.energy_j : (double)NAN) ||
        erg__json_set_number(row, "ffn_time_s", have & 2 ? ffn.time_s : (double)NAN) ||
        erg__json_set_number(row, "ffn_energy_j", have & 2 ? ffn.energy_j : (double)NAN);
    char *t = bad ? NULL : erg_json_dumps(row, JSON_REAL_PRECISION(9));
    json_decref(row);
    if (!t)
        return ERG_ENOMEM;
    erg_json_shorten_reals(t);
    if (w->n_rows++)
        sweep_put(w, ", ");
    sweep_put(w, t);
    free(t);
    return w->out.err ? ERG_EIO : ERG_OK;
}

int erg_model_sweep_skip(erg_model_sweep_writer *w, const int64_t *values, const char *reason)
{
    if (!w || !values || !reason)
        return ERG_EINVAL;
    json_t *sk = point_json(w, values);
    if (!sk || set_str(sk, "reason", reason) || json_array_append_new(w->skipped, sk))
        return ERG_ENOMEM; /* sk is freed by the failed set or append */
    return ERG_OK;
}

int erg_model_sweep_close(erg_model_sweep_writer *w, erg_diag *diag)
{
    if (!w)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_model_sweep_close: NULL writer");
    char *t = erg_json_dumps(w->skipped, JSON_REAL_PRECISION(9));
    if (!t) {
        erg_model_sweep_abort(w);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    sweep_put(w, "], \"skipped\": ");
    sweep_put(w, t);
    sweep_put(w, "}\n");
    free(t);
    sweep_flush(w);
    int rc = erg__out_commit(&w->out, diag);
    sweep_free(w);
    return rc;
}

void erg_model_sweep_abort(erg_model_sweep_writer *w)
{
    if (!w)
        return;
    erg__out_abort(&w->out); /* what was streamed to stdout, a device or FIFO stays there */
    sweep_free(w);
}
