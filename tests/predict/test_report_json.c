/* SPDX-License-Identifier: MIT */
/*
 * The documents of the CLI's reports, written by the library: fit-report/1
 * (erg_fit_report_write_json), model-prediction/1 (erg_model_prediction_write_json) and the whole
 * request it reports (erg_predict_request), model-sweep/1 (erg_model_sweep_*) and the sweep
 * (erg_predict_sweep, erg_phase_tokens_check), and eval/1
 * (erg_eval_write_json, erg_eval_summary). Figures are hand-computed from hand-made inputs or
 * read from the committed fixture; the sweep's text is compared byte for byte; bad paths (a
 * folder, a missing folder) write nothing, a symlink is followed and a FIFO written into.
 */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "erg/predict.h"

#define FIXTURE_OPS ERG_TEST_SOURCE_DIR "/models/cpu-amd-epyc.json"
#define TINY_LLAMA ERG_TEST_SOURCE_DIR "/tests/predict/configs/tiny-llama.json"
#define CPU_TARGET ERG_TEST_SOURCE_DIR "/models/cpu"

static char tdir[128];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tdir, sizeof tdir, "report-json");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tdir);
}

static const char *tpath(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", tdir, name);
    return p;
}

/* The tiny Llama's architecture into *a and the CPU target's predictor (the caller closes it). */
static erg_predictor *open_tiny(erg_arch *a, erg_diag *d)
{
    erg_predictor *p = NULL;
    erg_assert_ok(erg_arch_from_hf_config(TINY_LLAMA, a, d));
    erg_assert_ok(erg_predictor_open(CPU_TARGET, &p, d));
    return p;
}

/* only the names given are in tdir (no temporary left behind) */
static size_t entries(void)
{
    size_t n = 0;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", tdir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%zu", &n), 1);
    pclose(p);
    return n;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("%s is not a number", key);
    return json_number_value(v);
}

/* ---------------------------------------------------------------- fit-report/1 */

static void accuracy_average_skips_empty_rows_and_missing_figures(void **state)
{
    (void)state;
    erg_accuracy r[3] = {{2, 1.0, 0.5, NAN, 0.25, 4.0, 8.0},
                         {0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0}, /* no rows: left out */
                         {3, 3.0, 0.75, NAN, 0.75, 6.0, NAN}};
    erg_accuracy avg;
    erg_accuracy_average(r, 3, &avg);
    assert_int_equal(avg.n, 5);
    assert_true(avg.time_mape_pct == 2.0 && avg.time_r2 == 0.625);
    assert_true(isnan(avg.energy_mape_pct)); /* no row has it */
    assert_true(avg.energy_r2 == 0.5 && avg.base_time_mape_pct == 5.0);
    assert_true(avg.base_energy_mape_pct == 8.0); /* the one row that has it */
    erg_accuracy_average(NULL, 0, &avg);
    assert_int_equal(avg.n, 0);
    assert_true(isnan(avg.time_mape_pct));
}

static void fit_report_level1_has_the_fixture_validation(void **state)
{
    (void)state;
    erg_op_model *m = NULL;
    erg_diag d;
    erg_assert_ok(erg_op_model_load(FIXTURE_OPS, &m, &d));
    erg_fit_report r = {.level = 1, .model_path = "ops.json", .ops = m};
    erg_assert_ok(erg_fit_report_write_json(tpath("fit1.json"), &r, &d));
    const char *text = erg_tmp_slurp(tpath("fit1.json"));
    /* indented by 2, members in order */
    assert_non_null(strstr(text, "{\n  \"erg\": \"fit-report/1\",\n  \"model\": \"ops.json\",\n"));
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "target")), erg_op_model_target(m));
    assert_string_equal(json_string_value(json_object_get(doc, "grade")),
                        erg_grade_name(erg_op_model_grade(m)));
    /* the fixture's ops.gemm.average: n_train 59, n_test 15, time MAPE 22.15732238101208 %,
     * roofline time R² 0.9943912380589017, written with 6 significant digits */
    const json_t *avg =
        json_object_get(json_object_get(json_object_get(doc, "ops"), "gemm"), "average");
    assert_non_null(avg);
    assert_int_equal(json_integer_value(json_object_get(avg, "n_train")), 59);
    assert_int_equal(json_integer_value(json_object_get(avg, "n_test")), 15);
    assert_true(num(avg, "time_mape_pct") == 22.1573);
    assert_true(num(avg, "roofline_time_r2") == 0.994391);
    assert_true(num(avg, "energy_r2") == 0.97984);
    assert_true(json_is_false(json_object_get(avg, "fallback")));
    assert_string_equal(json_string_value(json_object_get(doc, "notes")), erg_op_model_notes(m));
    json_decref(doc);
    /* a level without its model, or no level, is refused; nothing written */
    erg_fit_report bad = {.level = 2, .model_path = "x", .ops = m};
    assert_int_equal(erg_fit_report_write_json(tpath("bad.json"), &bad, &d), ERG_EINVAL);
    bad.level = 4;
    assert_int_equal(erg_fit_report_write_json(tpath("bad.json"), &bad, &d), ERG_EINVAL);
    assert_int_equal(access(tpath("bad.json"), F_OK), -1);
    /* a folder is never replaced, a missing folder never created: nothing half-written */
    assert_int_not_equal(erg_fit_report_write_json(tdir, &r, &d), ERG_OK);
    assert_non_null(strstr(d.detail, "folder"));
    assert_int_not_equal(erg_fit_report_write_json(tpath("no/such/dir/f.json"), &r, &d), ERG_OK);
    assert_int_equal(entries(), 1); /* fit1.json only */
    assert_int_equal(unlink(tpath("fit1.json")), 0);
    erg_op_model_free(m);
}

/* ---------------------------------------------------------------- model-prediction/1 */

/* A hand-made prefill of 2 x 8 tokens: 4 attention blocks of 0.5 s and 3 J each (variances
 * 0.01 s², 0.04 J²), 4 FFN blocks of 0.25 s and 1 J; total 3 s, 16 J, variances 0.25 s², 1 J². */
static erg_model_prediction hand_prediction(int energy)
{
    erg_model_prediction m;
    memset(&m, 0, sizeof m);
    m.phase = (erg_phase_spec){ERG_PHASE_PREFILL, 2, 8, 0, 1};
    m.n_blocks = 2;
    snprintf(m.blocks[0].name, sizeof m.blocks[0].name, "attention");
    m.blocks[0].spec.block = ERG_BLOCK_ATTENTION;
    m.blocks[0].count = 4;
    m.blocks[0].each = (erg_estimate){0.5, energy ? 3.0 : (double)NAN, 0.01, 0.04, 2};
    snprintf(m.blocks[1].name, sizeof m.blocks[1].name, "ffn");
    m.blocks[1].spec.block = ERG_BLOCK_FFN;
    m.blocks[1].count = 4;
    m.blocks[1].each = (erg_estimate){0.25, energy ? 1.0 : (double)NAN, 0.0, 0.0, 1};
    m.blocks_time_s = 3.0;
    m.blocks_energy_j = energy ? 16.0 : (double)NAN;
    m.time_factor = m.energy_factor = 1.0;
    m.total = (erg_estimate){3.0, energy ? 16.0 : (double)NAN, 0.25, 1.0, 2};
    m.grade = ERG_GRADE_ESTIMATOR;
    return m;
}

static void model_prediction_document_has_the_figures(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    erg_predictor *p = open_tiny(&a, &d);
    erg_model_prediction m[2] = {hand_prediction(1), hand_prediction(1)};
    m[1].phase = (erg_phase_spec){ERG_PHASE_DECODE, 2, 0, 64, 1};
    /* a request of 2 x (8 + 5) tokens: 4 decode steps of 3 s; 10 J in all */
    erg_model_request q = {.batch = 2, .prompt = 8, .output = 5, .steps = 4};
    q.prefill_time_s = 3.0, q.decode_time_s = 12.0, q.time_s = 15.0, q.time_sd_s = 0.5;
    q.prefill_energy_j = 4.0, q.decode_energy_j = 6.0, q.energy_j = 10.0, q.energy_sd_j = 1.0;
    q.grade = ERG_GRADE_ESTIMATOR;
    const char *warn[1] = {"a warning"};
    erg_model_report r = {.config = "c.json",
                          .arch = &a,
                          .target = p,
                          .phases = m,
                          .n_phases = 2,
                          .has_serving = 1,
                          .serving_itl_s = 0.0125,
                          .serving_energy_per_token_j = 0.5,
                          .request = &q,
                          .warnings = warn,
                          .n_warnings = 1,
                          .schedule = "s.json"};
    erg_assert_ok(erg_model_prediction_write_json(tpath("m.json"), &r, &d));
    const char *text = erg_tmp_slurp(tpath("m.json"));
    assert_non_null(strstr(text, "{\"erg\": \"model-prediction/1\", \"config\": \"c.json\""));
    assert_int_equal(strchr(text, '\n') - text, (long)strlen(text) - 1); /* one line */
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    double active, params = erg_arch_params(&a, &active);
    assert_true(num(doc, "params") == params && num(doc, "active_params") == active);
    assert_string_equal(json_string_value(json_object_get(doc, "target")), erg_predictor_dir(p));
    assert_int_equal(json_integer_value(json_object_get(doc, "target_level")),
                     erg_predictor_level(p));
    const json_t *ph = json_array_get(json_object_get(doc, "phases"), 0);
    assert_true(num(ph, "time_s") == 3.0 && num(ph, "energy_j") == 16.0);
    assert_true(num(ph, "time_sd_s") == 0.5 && num(ph, "energy_sd_j") == 1.0);
    assert_string_equal(json_string_value(json_object_get(ph, "grade")), "estimator");
    assert_null(json_object_get(ph, "serving")); /* a prefill has none */
    const json_t *b = json_array_get(json_object_get(ph, "blocks"), 0);
    assert_true(num(b, "time_s") == 2.0 && num(b, "energy_j") == 12.0); /* 4 x 0.5 s, 4 x 3 J */
    assert_true(num(b, "time_s_each") == 0.5 && num(b, "energy_j_each") == 3.0);
    const json_t *sv =
        json_object_get(json_array_get(json_object_get(doc, "phases"), 1), "serving");
    assert_true(num(sv, "itl_s") == 0.0125 && num(sv, "energy_per_token_j") == 0.5);
    const json_t *rq = json_object_get(doc, "request");
    assert_int_equal(json_integer_value(json_object_get(rq, "decode_steps")), 4);
    assert_true(num(rq, "time_per_output_token_s") == 3.0);   /* 12 s / 4 steps */
    assert_true(num(rq, "energy_per_output_token_j") == 1.0); /* 10 J / (2 x 5 tokens) */
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "warnings"), 0)),
                        "a warning");
    assert_string_equal(json_string_value(json_object_get(doc, "schedule")), "s.json");
    json_decref(doc);
    /* a time-only target: energies and grades null; no request, no schedule: no members */
    m[0] = hand_prediction(0);
    r.n_phases = 1;
    r.request = NULL;
    r.schedule = NULL;
    r.n_warnings = 0;
    erg_assert_ok(erg_model_prediction_write_json(tpath("m.json"), &r, &d));
    doc = json_loads(erg_tmp_slurp(tpath("m.json")), 0, NULL);
    ph = json_array_get(json_object_get(doc, "phases"), 0);
    assert_true(json_is_null(json_object_get(ph, "energy_j")));
    assert_true(json_is_null(json_object_get(ph, "grade")));
    assert_true(json_is_null(
        json_object_get(json_array_get(json_object_get(ph, "blocks"), 1), "energy_j_each")));
    assert_null(json_object_get(doc, "request"));
    assert_null(json_object_get(doc, "schedule"));
    assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 0);
    json_decref(doc);
    r.arch = NULL;
    assert_int_equal(erg_model_prediction_write_json(tpath("m.json"), &r, &d), ERG_EINVAL);
    assert_int_equal(unlink(tpath("m.json")), 0);
    erg_predictor_free(p);
}

/* erg_predict_request sums the decode steps the caller could predict one by one, their sds
 * linearly and the prefill's in quadrature */
static void request_sums_the_decode_steps(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    erg_predictor *p = open_tiny(&a, &d);
    erg_phase_spec ps = {ERG_PHASE_PREFILL, 2, 16, 0, 0};
    erg_model_prediction pre, s1, s2;
    erg_assert_ok(erg_predict_model(p, &a, &ps, &pre, &d));
    erg_phase_spec d1 = {ERG_PHASE_DECODE, 2, 0, 17, 0}, d2 = {ERG_PHASE_DECODE, 2, 0, 18, 0};
    erg_assert_ok(erg_predict_model(p, &a, &d1, &s1, &d));
    erg_assert_ok(erg_predict_model(p, &a, &d2, &s2, &d));
    erg_model_request q;
    erg_assert_ok(erg_predict_request(p, &a, &pre, 3, &q, &d));
    assert_true(q.batch == 2 && q.prompt == 16 && q.output == 3 && q.steps == 2);
    erg_assert_rel(q.decode_time_s, s1.total.time_s + s2.total.time_s, 1e-15);
    erg_assert_rel(q.time_s, pre.total.time_s + s1.total.time_s + s2.total.time_s, 1e-15);
    erg_assert_rel(q.energy_j, pre.total.energy_j + s1.total.energy_j + s2.total.energy_j, 1e-15);
    double sd = sqrt(s1.total.time_var_s2) + sqrt(s2.total.time_var_s2);
    erg_assert_rel(q.time_sd_s, sqrt(pre.total.time_var_s2 + sd * sd), 1e-15);
    assert_true(q.grade == pre.grade);
    /* one output token: the prefill alone */
    erg_assert_ok(erg_predict_request(p, &a, &pre, 1, &q, &d));
    assert_true(q.steps == 0 && q.decode_time_s == 0 && q.time_s == pre.total.time_s);
    assert_int_equal(erg_predict_request(p, &a, &pre, 0, &q, &d), ERG_EINVAL);
    assert_int_equal(erg_predict_request(p, &a, &s1, 2, &q, &d), ERG_EINVAL); /* not a prefill */
    erg_predictor_free(p);
}

/* ---------------------------------------------------------------- model-sweep/1 */

static void sweep_document_is_streamed_whole(void **state)
{
    (void)state;
    const char *keys[2] = {"d_model", "heads"};
    erg_model_sweep_writer *w = NULL;
    erg_diag d;
    erg_assert_ok(erg_model_sweep_open(tpath("s.json"), "c.json", "models/t", keys, 2, &w, &d));
    erg_model_prediction m = hand_prediction(1);
    const int64_t v1[2] = {4096, 8}, v2[2] = {4096, 24}, v3[2] = {4096, 16};
    erg_assert_ok(erg_model_sweep_row(w, v1, &m));
    erg_assert_ok(erg_model_sweep_skip(w, v2, "heads: 24 does not divide d_model 4096"));
    m.blocks[1].spec.block = ERG_BLOCK_NORM; /* no FFN block: null */
    m.phase.phase = ERG_PHASE_DECODE;
    erg_assert_ok(erg_model_sweep_row(w, v3, &m));
    assert_int_equal(access(tpath("s.json"), F_OK), -1); /* not in place before the close */
    erg_assert_ok(erg_model_sweep_close(w, &d));
    assert_string_equal(
        erg_tmp_slurp(tpath("s.json")),
        "{\"erg\": \"model-sweep/1\", \"config\": \"c.json\", \"target\": \"models/t\", \"keys\": "
        "[\"d_model\", \"heads\"], \"rows\": [{\"d_model\": 4096, \"heads\": 8, \"phase\": "
        "\"prefill\", \"time_s\": 3.0, \"energy_j\": 16.0, \"attention_time_s\": 0.5, "
        "\"attention_energy_j\": 3.0, \"ffn_time_s\": 0.25, \"ffn_energy_j\": 1.0}, "
        "{\"d_model\": 4096, \"heads\": 16, \"phase\": \"decode\", \"time_s\": 3.0, "
        "\"energy_j\": 16.0, \"attention_time_s\": 0.5, \"attention_energy_j\": 3.0, "
        "\"ffn_time_s\": null, \"ffn_energy_j\": null}], \"skipped\": [{\"d_model\": 4096, "
        "\"heads\": 24, \"reason\": \"heads: 24 does not divide d_model 4096\"}]}\n");
    assert_int_equal(unlink(tpath("s.json")), 0);
    /* abandoned: no file, no temporary */
    erg_assert_ok(erg_model_sweep_open(tpath("s.json"), "c.json", "t", keys, 1, &w, &d));
    erg_assert_ok(erg_model_sweep_row(w, v1, &m));
    erg_model_sweep_abort(w);
    assert_int_equal(entries(), 0);
    /* bad arguments and a path that cannot be written */
    assert_int_equal(erg_model_sweep_open(tpath("s.json"), "c", "t", keys, 0, &w, &d), ERG_EINVAL);
    assert_null(w);
    assert_int_equal(erg_model_sweep_open(tpath("s.json"), "c", "t", keys, 17, &w, &d), ERG_EINVAL);
    assert_int_not_equal(erg_model_sweep_open(tdir, "c", "t", keys, 1, &w, &d), ERG_OK);
    assert_null(w);
    assert_int_not_equal(erg_model_sweep_open(tpath("none/s.json"), "c", "t", keys, 1, &w, &d),
                         ERG_OK);
    assert_int_equal(entries(), 0);
    assert_int_equal(erg_model_sweep_close(NULL, &d), ERG_EINVAL);
}

/* ---------------------------------------------------------------- the sweep itself */

static void tokens_check_at_two_to_the_forty(void **state)
{
    (void)state;
    char why[160];
    erg_assert_ok(erg_phase_tokens_check(3, 1024, (int64_t)1 << 30, 1, 0, why, sizeof why));
    assert_int_equal(erg_phase_tokens_check(1, 1024, ((int64_t)1 << 30) + 1, 1, 0, why, sizeof why),
                     ERG_EINVAL);
    assert_string_equal(why, "--batch 1024 x --prompt 1073741825 is more than 2^40 tokens");
    assert_int_equal(erg_phase_tokens_check(2, 2, 1, (int64_t)1 << 40, 0, why, sizeof why),
                     ERG_EINVAL);
    assert_string_equal(why, "--batch 2 x --kv 1099511627776 is more than 2^40 cached tokens");
    /* the decode's cache is not the prefill's business */
    erg_assert_ok(erg_phase_tokens_check(1, 2, 1, (int64_t)1 << 40, 0, why, sizeof why));
    /* a request: batch x (prompt + output) */
    assert_int_equal(erg_phase_tokens_check(3, 1024, (int64_t)1 << 30, 1, 1, why, sizeof why),
                     ERG_EINVAL);
    assert_int_equal(erg_phase_tokens_check(3, 0, 1, 1, 0, why, sizeof why), ERG_EINVAL);
}

struct sweep_seen {
    int64_t heads[16], batch[16];
    erg_phase phase[16];
    double time_s[16];
    size_t n, skips, stop_at;
    char reason[200];
};

static int seen_row(void *ctx, const int64_t *v, const erg_model_prediction *m)
{
    struct sweep_seen *s = ctx;
    if (s->n == s->stop_at)
        return ERG_EIO;
    assert_true(s->n < 16);
    s->heads[s->n] = v[0];
    s->batch[s->n] = v[1];
    s->phase[s->n] = m->phase.phase;
    s->time_s[s->n++] = m->total.time_s;
    return ERG_OK;
}

static int seen_skip(void *ctx, const int64_t *v, const char *reason)
{
    struct sweep_seen *s = ctx;
    assert_true(v[0] == 6); /* 6 heads do not divide d_model 256 */
    s->skips++;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    return ERG_OK;
}

static void sweep_predicts_every_point_it_can(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    erg_predictor *p = open_tiny(&a, &d);
    erg_sweep_range r[2] = {{"heads", 2, 8, 2}, {"batch", 1, 2, 1}};
    erg_phase_spec spec = {ERG_PHASE_PREFILL, 1, 16, 32, 1};
    struct sweep_seen s;
    memset(&s, 0, sizeof s);
    s.stop_at = 99;
    size_t rows = 0;
    erg_assert_ok(erg_predict_sweep(p, &a, &spec, 3, 1, r, 2, seen_row, seen_skip, &s, &rows, &d));
    /* heads 2, 4, 8 (6 skipped, twice) x batch 1, 2 x both phases, the last range fastest */
    assert_int_equal(rows, 12);
    assert_int_equal(s.n, 12);
    assert_int_equal(s.skips, 2);
    assert_non_null(strstr(s.reason, "divide"));
    static const int64_t heads[6] = {2, 2, 4, 4, 8, 8}, batch[6] = {1, 2, 1, 2, 1, 2};
    for (size_t i = 0; i < 12; i++) {
        assert_true(s.heads[i] == heads[i / 2] && s.batch[i] == batch[i / 2]);
        assert_true(s.phase[i] == (i % 2 ? ERG_PHASE_DECODE : ERG_PHASE_PREFILL));
        /* the same figure as predicting the point alone */
        erg_arch b = a;
        erg_assert_ok(erg_arch_set(&b, "heads", heads[i / 2], &d));
        erg_phase_spec one = {s.phase[i], batch[i / 2], i % 2 ? 0 : 16, i % 2 ? 32 : 0, 1};
        erg_model_prediction m;
        erg_assert_ok(erg_predict_model(p, &b, &one, &m, &d));
        assert_true(m.total.time_s == s.time_s[i]);
    }
    /* a callback's status stops the sweep */
    memset(&s, 0, sizeof s);
    s.stop_at = 2;
    assert_int_equal(erg_predict_sweep(p, &a, &spec, 3, 1, r, 2, seen_row, NULL, &s, &rows, &d),
                     ERG_EIO);
    assert_int_equal(rows, 2);
    /* bad ranges */
    erg_sweep_range bad = {"heads", 8, 2, 1};
    assert_int_equal(erg_predict_sweep(p, &a, &spec, 3, 1, &bad, 1, seen_row, NULL, &s, &rows, &d),
                     ERG_EINVAL);
    assert_int_equal(erg_predict_sweep(p, &a, &spec, 0, 1, r, 2, seen_row, NULL, &s, &rows, &d),
                     ERG_EINVAL);
    erg_predictor_free(p);
}

/* ---------------------------------------------------------------- eval/1 */

static void eval_summary_and_document(void **state)
{
    (void)state;
    /* file 0: one group of three rows, measured 1, 2, 4 s, predicted 1.5, 3, 5 s (relative
     * errors 0.5, 0.5, 0.25): MAPE 100 x 1.25 / 3 = 41.6666...%; SST = 21 - 49 / 3 = 14 / 3,
     * SSE = 0.25 + 1 + 1 = 2.25, R² = 1 - 2.25 x 3 / 14 = 0.517857142857...; the two worst
     * rows: 1 then 2 (a tie keeps the earlier). Another quantity of one row: R² null. */
    erg_eval_row rows[4] = {
        {0, 1, "level 1 (GEMM estimator)", NULL, "time_s", 1.0, 1.5},
        {0, 2, "level 1 (GEMM estimator)", NULL, "time_s", 2.0, 3.0},
        {0, 2, "level 3 (serving)", "decode", "itl_s", 0.5, 0.25},
        {0, 3, "level 1 (GEMM estimator)", NULL, "time_s", 4.0, 5.0},
    };
    erg_eval_skip skipped[1] = {{1, 0, "not a file erg predict eval compares"}};
    erg_eval e;
    memset(&e, 0, sizeof e);
    e.rows = rows;
    e.n_rows = 4;
    e.skipped = skipped;
    e.n_skipped = 1;
    snprintf(e.assumptions[0], sizeof e.assumptions[0], "an assumption");
    e.n_assumptions = 1;
    erg_eval_group *g = NULL;
    size_t ng = 0;
    erg_assert_ok(erg_eval_summary(&e, 0, 2, &g, &ng));
    assert_int_equal(ng, 2);
    assert_int_equal(g[0].n, 3);
    erg_assert_rel(g[0].mape_pct, 125.0 / 3.0, 1e-15);
    erg_assert_rel(g[0].r2, 1.0 - 2.25 * 3.0 / 14.0, 1e-14);
    assert_int_equal(g[0].n_worst, 2);
    assert_true(g[0].worst[0] == &rows[0] && g[0].worst[1] == &rows[1]);
    assert_true(g[1].first == &rows[2] && g[1].n == 1 && g[1].mape_pct == 50.0);
    assert_true(isnan(g[1].r2));
    free(g);
    erg_assert_ok(erg_eval_summary(&e, 1, 0, &g, &ng)); /* no comparison in file 1 */
    assert_true(g == NULL && ng == 0);
    assert_int_equal(erg_eval_summary(&e, 0, 17, &g, &ng), ERG_EINVAL);

    const char *files[2] = {"a.csv", "b.csv"};
    erg_diag d;
    erg_assert_ok(erg_eval_write_json(tpath("e.json"), &e, "models/h100", files, 2, 1, &d));
    const char *text = erg_tmp_slurp(tpath("e.json"));
    assert_non_null(strstr(text, "{\n \"erg\": \"eval/1\",\n \"target\": \"models/h100\",\n"));
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    const json_t *r = json_object_get(doc, "rows");
    assert_int_equal(json_array_size(r), 4);
    assert_true(json_is_null(json_object_get(json_array_get(r, 0), "phase")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "phase")),
                        "decode");
    assert_true(num(json_array_get(r, 3), "predicted") == 5.0);
    const json_t *s0 = json_array_get(json_object_get(doc, "summary"), 0);
    assert_string_equal(json_string_value(json_object_get(s0, "file")), "a.csv");
    assert_int_equal(json_integer_value(json_object_get(s0, "n")), 3);
    assert_true(num(s0, "mape_pct") == 41.6666667); /* 9 significant digits */
    assert_true(num(s0, "r2") == 0.517857143);
    const json_t *w = json_object_get(s0, "worst");
    assert_int_equal(json_array_size(w), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(w, 0), "row")), 1);
    assert_true(
        json_is_null(json_object_get(json_array_get(json_object_get(doc, "summary"), 1), "r2")));
    const json_t *sk = json_array_get(json_object_get(doc, "skipped"), 0);
    assert_string_equal(json_string_value(json_object_get(sk, "file")), "b.csv");
    assert_int_equal(json_integer_value(json_object_get(sk, "row")), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "assumptions"), 0)),
                        "an assumption");
    json_decref(doc);
    /* a row naming a file that was not given is refused, nothing written */
    assert_int_equal(unlink(tpath("e.json")), 0);
    assert_int_equal(erg_eval_write_json(tpath("e.json"), &e, "t", files, 1, 1, &d), ERG_EINVAL);
    assert_int_equal(entries(), 0);
}

/* ---------------------------------------------------------------- where a writer writes */

static void writers_follow_symlinks_and_write_into_fifos(void **state)
{
    (void)state;
    erg_eval e;
    memset(&e, 0, sizeof e);
    erg_diag d;
    /* a symlink stays a link: the file it names is written */
    char target[256];
    snprintf(target, sizeof target, "%s", tpath("real.json"));
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink("real.json", tpath("link.json")), 0);
    erg_assert_ok(erg_eval_write_json(tpath("link.json"), &e, "t", NULL, 0, 0, &d));
    struct stat st;
    assert_int_equal(lstat(tpath("link.json"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    static const char want[] = "{\n \"erg\": \"eval/1\",\n \"target\": \"t\",\n \"rows\": "
                               "[],\n \"summary\": [],\n \"skipped\": [],\n "
                               "\"assumptions\": []\n}\n";
    assert_string_equal(erg_tmp_slurp(target), want);
    /* a FIFO is written into, never replaced: a reader gets the document */
    assert_int_equal(mkfifo(tpath("fifo"), 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30); /* never hang the suite */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "cat '%s/fifo' > '%s/got.json'", tdir, tdir);
        _exit(system(cmd) == 0 ? 0 : 1);
    }
    alarm(60); /* a reader that never came: the test fails rather than hangs */
    erg_assert_ok(erg_eval_write_json(tpath("fifo"), &e, "t", NULL, 0, 0, &d));
    alarm(0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(lstat(tpath("fifo"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_string_equal(erg_tmp_slurp(tpath("got.json")), want);
    assert_int_equal(entries(), 4); /* link, real, fifo, got: no temporary */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accuracy_average_skips_empty_rows_and_missing_figures),
        cmocka_unit_test(fit_report_level1_has_the_fixture_validation),
        cmocka_unit_test(model_prediction_document_has_the_figures),
        cmocka_unit_test(request_sums_the_decode_steps),
        cmocka_unit_test(sweep_document_is_streamed_whole),
        cmocka_unit_test(tokens_check_at_two_to_the_forty),
        cmocka_unit_test(sweep_predicts_every_point_it_can),
        cmocka_unit_test(eval_summary_and_document),
        cmocka_unit_test(writers_follow_symlinks_and_write_into_fifos),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
