/* SPDX-License-Identifier: MIT */
/* Report and schedule of a hand-computed two-GPU trace (tests/trace/data/two_gpus.json).
 *
 * Times in µs from the first activity (ts 1000):
 *   gpu0 (A100, s = 60 W, idle = s): gemm [0,100] 200±20 W, add [50,150] 100±10 W (stream 8),
 *        allreduce [120,200] 50 W, memcpy [300,350] 30 W
 *   gpu1 (unknown name → default_device s = 40 W, idle 10 W): add [100,300] 100±10 W,
 *        memset [310,320] unmatched
 * makespan 350; gpu0 busy [0,200]∪[300,350] = 250, idle 100; compute [0,150], comm [120,200],
 * overlap 30; gpu1 busy 210, idle 140.
 * dynamic: gpu0 0.02+0.01+0.004+0.0015 = 0.0355 J; gpu1 0.02 J.
 * static: gpu0 60·350e-6 = 0.021 J; gpu1 40·210e-6 + 10·140e-6 = 0.0098 J.
 * E = 0.0863 J; σ²_E = (20·1e-4)² + (10·1e-4)² + (10·2e-4)² = 9e-6 J², σ = 0.003 J.
 */
#include "support/erg_test.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/calculus.h"
#include "erg/trace.h"

#define DATA ERG_TEST_SOURCE_DIR "/tests/trace/data/"

static erg_trace *load_two(void)
{
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_non_null(t);
    int st = erg_trace_read_file(t, DATA "two_gpus.json", &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    return t;
}

static erg_rules *load_rules(void)
{
    erg_diag d;
    erg_rules *r = NULL;
    int st = erg_rules_read_file(DATA "two_gpus_rules.json", &r, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    return r;
}

static void report_matches_hand_computed_values(void **state)
{
    (void)state;
    erg_trace *t = load_two();
    erg_rules *r = load_rules();
    erg_trace_report rep;
    erg_diag d;
    int st = erg_trace_report_make(t, r, NULL, &rep, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_rel(rep.time_s, 350e-6, 1e-12);
    erg_assert_rel(rep.energy_j, 0.0863, 1e-9);
    erg_assert_rel(rep.energy_sd_j, 0.003, 1e-9);
    erg_assert_rel(rep.static_energy_j, 0.021 + 0.0098, 1e-9);
    erg_assert_rel(rep.dynamic_energy_j, 0.0555, 1e-9);
    erg_assert_rel(rep.idle_static_energy_j, 0.006 + 0.0014, 1e-9);
    assert_int_equal(rep.grade, ERG_GRADE_ESTIMATOR);
    assert_int_equal(rep.flags, 0); /* power rules carry no measurement flags */
    assert_int_equal(rep.unmatched, 1);
    size_t unm = 0;
    assert_int_equal(erg_trace_unmatched(t, r, &unm, &d), ERG_OK);
    assert_int_equal(unm, 1);
    assert_int_equal(rep.n_unmatched_names, 1);
    assert_string_equal(rep.unmatched_names[0].name, "Memset (Device)");
    assert_int_equal(rep.unmatched_names[0].category, ERG_TRACE_CAT_MEMSET);

    assert_int_equal(rep.n_devices, 2);
    const erg_trace_device *g0 = &rep.devices[0], *g1 = &rep.devices[1];
    assert_string_equal(g0->id, "rank0/gpu0");
    assert_string_equal(g0->name, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(g1->id, "rank0/gpu1");
    assert_string_equal(g1->name, "Mystery GPU");
    assert_int_equal(g0->activities, 4);
    erg_assert_rel(g0->busy_s, 250e-6, 1e-12);
    erg_assert_rel(g0->idle_s, 100e-6, 1e-12);
    erg_assert_rel(g0->static_energy_j, 0.021, 1e-12);
    erg_assert_rel(g0->idle_static_energy_j, 0.006, 1e-12);
    erg_assert_rel(g0->dynamic_energy_j, 0.0355, 1e-12);
    erg_assert_rel(g0->compute_s, 150e-6, 1e-12);
    erg_assert_rel(g0->communication_s, 80e-6, 1e-12);
    erg_assert_rel(g0->overlap_s, 30e-6, 1e-12);
    erg_assert_rel(g1->busy_s, 210e-6, 1e-12);
    erg_assert_rel(g1->idle_s, 140e-6, 1e-12);
    erg_assert_rel(g1->static_energy_j, 0.0098, 1e-12);
    erg_assert_rel(g1->idle_static_energy_j, 0.0014, 1e-12);
    erg_assert_near(g1->idle_power_w, 10, 0);
    erg_assert_near(g0->idle_power_w, 60, 0);
    erg_assert_rel(g1->dynamic_energy_j, 0.02, 1e-12);
    erg_assert_near(g1->overlap_s, 0, 0);

    /* The report's own accounting adds up to the composed totals. */
    erg_assert_rel(g0->static_energy_j + g1->static_energy_j, rep.static_energy_j, 1e-9);
    erg_assert_rel(g0->dynamic_energy_j + g1->dynamic_energy_j, rep.dynamic_energy_j, 1e-9);

    const erg_trace_group *k = &rep.categories[ERG_TRACE_CAT_KERNEL];
    assert_string_equal(k->name, "kernel");
    assert_int_equal(k->count, 3);
    erg_assert_rel(k->time_s, 400e-6, 1e-12);
    erg_assert_rel(k->energy_j, 0.05, 1e-12);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_COLLECTIVE].count, 1);
    erg_assert_rel(rep.categories[ERG_TRACE_CAT_COLLECTIVE].energy_j, 0.004, 1e-12);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_MEMCPY].count, 1);
    erg_assert_rel(rep.categories[ERG_TRACE_CAT_MEMCPY].energy_j, 0.0015, 1e-12);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_MEMSET].count, 1);
    erg_assert_near(rep.categories[ERG_TRACE_CAT_MEMSET].energy_j, 0, 0);

    assert_int_equal(rep.n_top, 5);
    assert_string_equal(rep.top[0].name, "elementwise_add");
    assert_int_equal(rep.top[0].count, 2);
    erg_assert_rel(rep.top[0].time_s, 300e-6, 1e-12);
    erg_assert_rel(rep.top[0].energy_j, 0.03, 1e-12);
    assert_string_equal(rep.top[1].name, "ampere_sgemm_128x64_tn");
    assert_int_equal(rep.top[2].category, ERG_TRACE_CAT_COLLECTIVE);
    assert_string_equal(rep.top[4].name, "Memset (Device)");

    assert_int_equal(rep.stats.activities, 6);
    assert_int_equal(rep.stats.host_events, 5);
    assert_int_equal(rep.stats.unknown_events, 1);
    assert_int_equal(rep.stats.events, 12);
    erg_trace_report_free(&rep);

    /* --top 2 keeps the two largest. */
    erg_trace_options o;
    erg_trace_options_init(&o);
    o.top_n = 2;
    assert_int_equal(erg_trace_report_make(t, r, &o, &rep, &d), ERG_OK);
    assert_int_equal(rep.n_top, 2);
    assert_string_equal(rep.top[1].name, "ampere_sgemm_128x64_tn");
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

/* The schedule composes to the report's totals, and so does the schedule/1 file written from it. */
static void schedule_file_composes_to_the_report_totals(void **state)
{
    (void)state;
    erg_trace *t = load_two();
    erg_rules *r = load_rules();
    erg_diag d;
    erg_schedule *s = NULL;
    int st = erg_trace_schedule(t, r, NULL, &s, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    char path[] = "/tmp/erg_trace_sched_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    st = erg_schedule_write_file(path, s, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_schedule *back = NULL;
    st = erg_schedule_read_file(path, &back, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    unlink(path);
    erg_compose_options co;
    erg_compose_options_init(&co);
    erg_report a, b;
    assert_int_equal(erg_schedule_compose(s, &co, &a, &d), ERG_OK);
    assert_int_equal(erg_schedule_compose(back, &co, &b, &d), ERG_OK);
    erg_assert_rel(a.energy_j, 0.0863, 1e-9);
    erg_assert_rel(b.energy_j, a.energy_j, 1e-9);
    erg_assert_rel(b.energy_sd_j, a.energy_sd_j, 1e-9);
    erg_assert_rel(b.time_s, 350e-6, 1e-9);
    erg_assert_rel(b.static_energy_j, a.static_energy_j, 1e-9);
    erg_assert_rel(b.dynamic_energy_j, a.dynamic_energy_j, 1e-9);
    assert_int_equal(b.grade, ERG_GRADE_ESTIMATOR);
    erg_report_free(&a);
    erg_report_free(&b);
    erg_schedule_free(s);
    erg_schedule_free(back);
    erg_trace_free(t);

    /* Odd stream and device texts (quotes, backslashes, UTF-8) still make a readable file. */
    static const char odd[] = "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
                              "\"k\\\"q\",\"pid\":\"GPU \\\"0\\\"\",\"tid\":\"str\\\\eam \\u00e9\","
                              "\"ts\":1,\"dur\":2}]}";
    t = erg_trace_new();
    st = erg_trace_read_buffer(t, odd, strlen(odd), "odd.json", &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    assert_int_equal(erg_trace_schedule(t, r, NULL, &s, &d), ERG_OK);
    memcpy(path + strlen(path) - 6, "XXXXXX", 6);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(erg_schedule_write_file(path, s, &d), ERG_OK);
    st = erg_schedule_read_file(path, &back, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    unlink(path);
    assert_int_equal(erg_schedule_compose(back, &co, &b, &d), ERG_OK);
    erg_assert_rel(b.energy_j, 40 * 2e-6 + 100 * 2e-6, 1e-9);
    erg_report_free(&b);
    erg_schedule_free(s);
    erg_schedule_free(back);
    erg_rules_free(r);
    erg_trace_free(t);
}

/* Files whose first activities are more than max_start_spread_s apart (default 1 h) are refused
 * with align none, by the schedule and the report alike; first-kernel alignment composes them. */
static void far_apart_clocks_are_refused(void **state)
{
    (void)state;
    static const char r0[] = "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
                             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                             "\"ts\":1000,\"dur\":100}]}";
    /* 3600 s + 1 ms after rank 0's first activity */
    static const char r1[] = "{\"distributedInfo\": {\"rank\": 1}, \"traceEvents\": ["
                             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                             "\"ts\":3600002000,\"dur\":300}]}";
    /* exactly 3600 s after it: still one clock */
    static const char r1_hour[] = "{\"distributedInfo\": {\"rank\": 1}, \"traceEvents\": ["
                                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                                  "\"tid\":7,\"ts\":3600001000,\"dur\":300}]}";
    static const char rules[] =
        "{\"erg\":\"rules/1\",\"default_device\":{\"static_power_w\":10},"
        "\"rules\":[{\"category\":\"*\",\"name\":\"*\",\"dynamic_power_w\":100}]}";
    erg_diag d;
    erg_rules *ru = NULL;
    assert_int_equal(erg_rules_read_buffer(rules, strlen(rules), "r", ".", &ru, &d), ERG_OK);
    erg_trace_options o;
    erg_trace_options_init(&o);
    erg_assert_rel(o.max_start_spread_s, 3600.0, 0);
    erg_trace_report rep;
    erg_schedule *s = NULL;

    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, r1, strlen(r1), "late.json", &d), ERG_OK);
    assert_int_equal(erg_trace_read_buffer(t, r0, strlen(r0), "early.json", &d), ERG_OK);
    erg_diag_clear(&d);
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_EINVAL);
    assert_string_equal(d.where, "late.json and 1 more");
    assert_non_null(strstr(d.detail, "3600 s apart"));
    assert_non_null(strstr(d.detail, "file 1 of 2"));
    assert_non_null(strstr(d.detail, "after file 2"));
    assert_non_null(strstr(d.detail, "--align first-kernel"));
    assert_null(rep.devices); /* nothing half-filled */
    erg_diag_clear(&d);
    assert_int_equal(erg_trace_schedule(t, ru, &o, &s, &d), ERG_EINVAL);
    assert_null(s);
    assert_non_null(strstr(d.detail, "3600 s apart"));
    /* NULL options are the defaults: refused too. */
    assert_int_equal(erg_trace_schedule(t, ru, NULL, &s, &d), ERG_EINVAL);
    /* Rule matching does not look at clocks. */
    size_t unmatched = 99;
    assert_int_equal(erg_trace_unmatched(t, ru, &unmatched, &d), ERG_OK);
    assert_int_equal(unmatched, 0);
    /* first-kernel: both kernels at 0, makespan 300 µs. */
    o.align = ERG_TRACE_ALIGN_FIRST_KERNEL;
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    erg_assert_rel(rep.time_s, 300e-6, 1e-12);
    erg_assert_rel(rep.energy_j, 2 * 10 * 300e-6 + 100 * 400e-6, 1e-9);
    erg_trace_report_free(&rep);
    /* A larger bound, or none, accepts the one-clock composition: 3600.0013 s makespan. */
    o.align = ERG_TRACE_ALIGN_NONE;
    o.max_start_spread_s = INFINITY;
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    erg_assert_rel(rep.time_s, 3600.0013, 1e-12);
    erg_assert_rel(rep.start_spread_s, 3600.001, 1e-12);
    erg_trace_report_free(&rep);
    erg_trace_free(t);

    /* Exactly the bound: accepted. */
    erg_trace_options_init(&o);
    t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, r0, strlen(r0), "early.json", &d), ERG_OK);
    assert_int_equal(erg_trace_read_buffer(t, r1_hour, strlen(r1_hour), "hour.json", &d), ERG_OK);
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    erg_assert_rel(rep.start_spread_s, 3600.0, 1e-12);
    erg_trace_report_free(&rep);
    /* A tighter bound refuses it. */
    o.max_start_spread_s = 60;
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "more than the 60 s"));
    erg_trace_free(t);

    /* One file is never checked, however late it starts. */
    t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, r1, strlen(r1), "late.json", &d), ERG_OK);
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    erg_trace_report_free(&rep);
    erg_trace_free(t);
    erg_rules_free(ru);
}

/* Two ranks: align none keeps the clock (rank 1 starts 4000 µs later); first-kernel aligns both. */
static void ranks_compose_cross_device_with_alignment(void **state)
{
    (void)state;
    static const char r0[] = "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
                             "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy "
                             "HtoD\",\"pid\":0,\"tid\":7,\"ts\":900,\"dur\":50},"
                             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                             "\"ts\":1000,\"dur\":100}]}";
    static const char r1[] = "{\"distributedInfo\": {\"rank\": 1}, \"traceEvents\": ["
                             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                             "\"ts\":5000,\"dur\":300}]}";
    static const char rules[] =
        "{\"erg\":\"rules/1\",\"default_device\":{\"static_power_w\":10},"
        "\"rules\":[{\"category\":\"*\",\"name\":\"*\",\"dynamic_power_w\":100}]}";
    erg_diag d;
    erg_rules *ru = NULL;
    assert_int_equal(erg_rules_read_buffer(rules, strlen(rules), "r", ".", &ru, &d), ERG_OK);
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, r1, strlen(r1), "rank1.json", &d), ERG_OK);
    assert_int_equal(erg_trace_read_buffer(t, r0, strlen(r0), "rank0.json", &d), ERG_OK);
    erg_trace_options o;
    erg_trace_options_init(&o);
    erg_trace_report rep;
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    /* none: makespan from 900 to 5300 µs; two devices held at 10 W each. */
    assert_int_equal(rep.n_devices, 2);
    assert_string_equal(rep.devices[0].id, "rank1/gpu0");
    assert_string_equal(rep.devices[1].id, "rank0/gpu0");
    erg_assert_rel(rep.time_s, 4400e-6, 1e-12);
    erg_assert_rel(rep.start_spread_s, 4100e-6, 1e-12); /* first activities at 900 and 5000 µs */
    erg_assert_rel(rep.energy_j, 2 * 10 * 4400e-6 + 100 * 450e-6, 1e-9);
    erg_trace_report_free(&rep);
    /* first-kernel: rank 0 shifted by −1000 (its memcpy at −100), rank 1 by −5000: −100 .. 300. */
    o.align = ERG_TRACE_ALIGN_FIRST_KERNEL;
    assert_int_equal(erg_trace_report_make(t, ru, &o, &rep, &d), ERG_OK);
    erg_assert_rel(rep.time_s, 400e-6, 1e-12);
    erg_assert_rel(rep.start_spread_s, 100e-6, 1e-12); /* −100 (memcpy) and 0 */
    erg_assert_rel(rep.energy_j, 2 * 10 * 400e-6 + 100 * 450e-6, 1e-9);
    erg_assert_rel(rep.devices[0].busy_s, 300e-6, 1e-12);
    erg_assert_rel(rep.devices[1].busy_s, 150e-6, 1e-12);
    erg_assert_rel(rep.devices[1].idle_s, 250e-6, 1e-12);
    erg_trace_report_free(&rep);

    /* A third file claiming rank 1 is refused, and the trace is unchanged. */
    assert_int_equal(erg_trace_read_buffer(t, r1, strlen(r1), "again.json", &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "rank 1"));
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.files, 2);
    assert_int_equal(s.activities, 3);
    erg_trace_free(t);
    erg_rules_free(ru);
}

/* Repeated kernels (same name, device, stream and duration) share one signature in the schedule. */
static void repeated_kernels_share_a_signature(void **state)
{
    (void)state;
    static const char j[] =
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":11},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":8,\"ts\":60,\"dur\":10}]"
        "}";
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, j, strlen(j), "rep.json", &d), ERG_OK);
    erg_rules *r = load_rules();
    erg_schedule *s = NULL;
    assert_int_equal(erg_trace_schedule(t, r, NULL, &s, &d), ERG_OK);
    char path[] = "/tmp/erg_trace_share_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(erg_schedule_write_file(path, s, &d), ERG_OK);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    unlink(path);
    assert_non_null(root);
    assert_int_equal(json_object_size(json_object_get(root, "signatures")), 3);
    assert_int_equal(json_array_size(json_object_get(root, "nodes")), 5);
    json_decref(root);
    erg_compose_options co;
    erg_compose_options_init(&co);
    erg_report rep;
    assert_int_equal(erg_schedule_compose(s, &co, &rep, &d), ERG_OK);
    /* 51 µs of 100 W kernels, sd 10 W each, no deviceProperties: default device 40 W busy 71 µs
     * of the makespan 0..71 (gaps 10..20, 30..40, 50..60: 30 µs idle at 10 W). */
    erg_assert_rel(rep.dynamic_energy_j, 100 * 51e-6, 1e-9);
    erg_assert_rel(rep.static_energy_j, 40 * 41e-6 + 10 * 30e-6, 1e-9);
    erg_assert_rel(rep.energy_sd_j, sqrt(4 * pow(10 * 10e-6, 2) + pow(10 * 11e-6, 2)), 1e-9);
    erg_report_free(&rep);
    erg_schedule_free(s);
    erg_rules_free(r);
    erg_trace_free(t);
}

static void trace_without_gpu_activity_is_a_clear_error(void **state)
{
    (void)state;
    static const char j[] =
        "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\","
        "\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5}]}";
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, j, strlen(j), "cpu.json", &d), ERG_OK);
    erg_rules *r = NULL;
    assert_int_equal(erg_rules_default(&r, &d), ERG_OK);
    erg_trace_report rep;
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "no GPU activity"));
    assert_string_equal(d.where, "cpu.json");
    erg_schedule *s = (erg_schedule *)(void *)t; /* any non-NULL value: must be reset to NULL */
    assert_int_equal(erg_trace_schedule(t, r, NULL, &s, &d), ERG_EINVAL);
    assert_null(s);
    erg_rules_free(r);
    erg_trace_free(t);
}

static void device_without_entry_needs_default_device(void **state)
{
    (void)state;
    static const char rules[] = "{\"erg\":\"rules/1\",\"devices\":[{\"match\":\"NVIDIA H100*\","
                                "\"static_power_w\":100}],\"rules\":[]}";
    erg_diag d;
    erg_rules *r = NULL;
    assert_int_equal(erg_rules_read_buffer(rules, strlen(rules), "r", ".", &r, &d), ERG_OK);
    erg_trace *t = load_two();
    erg_trace_report rep;
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_EINVAL);
    assert_string_equal(d.where, "rank0/gpu0");
    assert_non_null(strstr(d.detail, "NVIDIA A100-SXM4-80GB"));
    erg_rules_free(r);
    erg_trace_free(t);
}

/* Default rules on the fixture: A100 (60 W) and unknown → default_device (60 W). */
static void default_rules_give_estimator_figures(void **state)
{
    (void)state;
    erg_diag d;
    erg_rules *r = NULL;
    assert_int_equal(erg_rules_default(&r, &d), ERG_OK);
    erg_trace *t = load_two();
    erg_trace_report rep;
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_OK);
    assert_int_equal(rep.grade, ERG_GRADE_ESTIMATOR);
    assert_int_equal(rep.unmatched, 0);
    /* gemm 290 W·100 µs + add 185 W·(100+200) µs + collective 60 W·80 µs + copy/set 50 W·60 µs */
    double dyn = 290 * 100e-6 + 185 * 300e-6 + 60 * 80e-6 + 50 * 60e-6;
    erg_assert_rel(rep.dynamic_energy_j, dyn, 1e-9);
    erg_assert_rel(rep.static_energy_j, 2 * 60 * 350e-6, 1e-9);
    /* the A100 matches the rules' A100 entry; a device without a name takes the default */
    for (size_t k = 0; k < rep.n_devices; k++)
        assert_int_equal(rep.devices[k].default_rules,
                         strcmp(rep.devices[k].name, "NVIDIA A100-SXM4-80GB") != 0);
    assert_int_equal(rep.n_devices, 2);
    double var = pow(50 * 100e-6, 2) + pow(60 * 100e-6, 2) + pow(60 * 200e-6, 2) +
                 pow(30 * 80e-6, 2) + pow(25 * 50e-6, 2) + pow(25 * 10e-6, 2);
    erg_assert_rel(rep.energy_sd_j, sqrt(var), 1e-9);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

static void report_json_has_the_documented_keys(void **state)
{
    (void)state;
    erg_trace *t = load_two();
    erg_rules *r = load_rules();
    erg_trace_report rep;
    erg_diag d;
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_OK);
    char *text = NULL;
    assert_int_equal(erg_trace_report_json(t, &rep, &text, &d), ERG_OK);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    static const char *const keys[] = {
        "energy_j", "energy_sd_j", "time_s",  "static_energy_j", "dynamic_energy_j",
        "grade",    "unmatched",   "devices", "categories",      "top"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!json_object_get(j, keys[i]))
            fail_msg("missing key %s", keys[i]);
    /* tagged like every erg JSON output, tag first */
    assert_string_equal(json_object_iter_key(json_object_iter(j)), "erg");
    assert_string_equal(json_string_value(json_object_get(j, "erg")), "trace-report/1");
    erg_assert_rel(json_real_value(json_object_get(j, "energy_j")), 0.0863, 1e-9);
    assert_string_equal(json_string_value(json_object_get(j, "grade")), "estimator");
    assert_string_equal(json_string_value(json_object_get(j, "rules")), DATA "two_gpus_rules.json");
    assert_int_equal(json_integer_value(json_object_get(j, "unmatched")), 1);
    json_t *g1 = json_object_get(json_object_get(j, "devices"), "rank0/gpu1");
    assert_non_null(g1);
    static const char *const dkeys[] = {"busy_s", "idle_s", "static_energy_j",
                                        "idle_static_energy_j", "dynamic_energy_j"};
    for (size_t i = 0; i < sizeof dkeys / sizeof dkeys[0]; i++)
        if (!json_object_get(g1, dkeys[i]))
            fail_msg("missing device key %s", dkeys[i]);
    erg_assert_rel(json_real_value(json_object_get(g1, "idle_static_energy_j")), 0.0014, 1e-12);
    json_t *kc = json_object_get(json_object_get(j, "categories"), "kernel");
    assert_int_equal(json_integer_value(json_object_get(kc, "count")), 3);
    erg_assert_rel(json_real_value(json_object_get(kc, "time_s")), 400e-6, 1e-12);
    erg_assert_rel(json_real_value(json_object_get(kc, "energy_j")), 0.05, 1e-12);
    json_t *top0 = json_array_get(json_object_get(j, "top"), 0);
    assert_string_equal(json_string_value(json_object_get(top0, "name")), "elementwise_add");
    assert_int_equal(json_integer_value(json_object_get(top0, "count")), 2);
    json_t *unk = json_object_get(json_object_get(j, "ignored"), "unknown_categories");
    assert_int_equal(json_integer_value(json_object_get(unk, "mystery_cat")), 1);
    json_decref(j);
    free(text);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

/* A rule for category "kernel" also takes collective kernels (they are kernels in the trace) unless
 * an earlier "collective" rule took them: with the kernel rules first, the 80 µs NCCL kernel of
 * two_gpus.json draws the "kernel *" 100 W instead of the collective 50 W: +50 W × 80 µs =
 * +0.004 J over the hand-computed 0.0863 J. */
static void kernel_rules_take_collectives_unless_a_collective_rule_came_first(void **state)
{
    (void)state;
    erg_trace *t = load_two();
    const char *json =
        "{\"erg\": \"rules/1\", \"devices\": [{\"match\": \"NVIDIA A100*\", \"static_power_w\": "
        "60}],"
        " \"default_device\": {\"static_power_w\": 40, \"idle_power_w\": 10}, \"rules\": ["
        "{\"category\": \"kernel\", \"name\": \"*gemm*\", \"dynamic_power_w\": 200, "
        "\"dynamic_power_sd_w\": 20},"
        "{\"category\": \"kernel\", \"name\": \"*\", \"dynamic_power_w\": 100, "
        "\"dynamic_power_sd_w\": 10},"
        "{\"category\": \"collective\", \"name\": \"*\", \"dynamic_power_w\": 50},"
        "{\"category\": \"gpu_memcpy\", \"name\": \"*\", \"dynamic_power_w\": 30}]}";
    erg_rules *r = NULL;
    erg_diag d;
    assert_int_equal(erg_rules_read_buffer(json, strlen(json), "kernel-first.json", ".", &r, &d),
                     ERG_OK);
    erg_trace_report rep;
    int st = erg_trace_report_make(t, r, NULL, &rep, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_rel(rep.energy_j, 0.0863 + 50 * 80e-6, 1e-9);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

/* ROCm (roctracer) traces name GPU i by its HSA agent id: on a two-socket node the CPU agents are
 * 0 and 1, so GPU 0 appears as pid 2 / args.device 2, while deviceProperties lists the four GPUs
 * with ids 0..3. The layout of HTA's tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto
 * trace (ROCm 6.2, MI250): four "AMD Radeon Graphics" deviceProperties, process_labels "GPU 0"
 * .. "GPU 15", every kernel and copy on device 2. Mapped, the device rules match. */
static const char rocm_head[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": ["
    "{\"id\": 0, \"name\": \"AMD Radeon Graphics\", \"computeMajor\": 9, \"numSms\": 104},"
    "{\"id\": 1, \"name\": \"AMD Radeon Graphics\", \"computeMajor\": 9, \"numSms\": 104},"
    "{\"id\": 2, \"name\": \"AMD Radeon Graphics\", \"computeMajor\": 9, \"numSms\": 104},"
    "{\"id\": 3, \"name\": \"AMD Radeon Graphics\", \"computeMajor\": 9, \"numSms\": 104}],"
    " \"traceEvents\": ["
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 597913, \"tid\": 0, "
    "\"args\": {\"labels\": \"CPU\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 0, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 0\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 1, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 1\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 2, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 2\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 3, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 3\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 4, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 4\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 5, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 5\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 6, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 6\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 7, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 7\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 8, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 8\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 9, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 9\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 10, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 10\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 11, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 11\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 12, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 12\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 13, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 13\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 14, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 14\"}},"
    "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 15, \"tid\": 0, \"args\": "
    "{\"labels\": \"GPU 15\"}},"
    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Host -> Device)\", \"pid\": "
    "2, \"tid\": 0,"
    " \"ts\": 1000, \"dur\": 100, \"args\": {\"device\": 2, \"stream\": 0, \"kind\": \"HtoD\"}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"Cijk_Alik_Bljk_SB_MT64x16x32\", \"pid\": 2, "
    "\"tid\": 0,"
    " \"ts\": 1100, \"dur\": 300, \"args\": {\"device\": 2, \"stream\": 0}},"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipLaunchKernel\", \"pid\": 597913, "
    "\"tid\": 597913,"
    " \"ts\": 1090, \"dur\": 5, \"args\": {\"correlation\": 1}}";
/* a second GPU of the node used too: agent 5 is GPU 3 */
static const char rocm_gpu3[] =
    ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"Cijk_Alik_Bljk_SB_MT64x16x32\", \"pid\": "
    "5, \"tid\": 0,"
    " \"ts\": 1000, \"dur\": 400, \"args\": {\"device\": 5, \"stream\": 0}}";

static const char rocm_rules[] = "{\"erg\": \"rules/1\", \"devices\": [{\"match\": \"AMD Radeon "
                                 "Graphics\", \"static_power_w\": 90}],"
                                 " \"rules\": [{\"device\": \"AMD*\", \"category\": \"kernel\", "
                                 "\"name\": \"Cijk_*\", \"dynamic_power_w\": 300},"
                                 " {\"device\": \"AMD*\", \"category\": \"gpu_memcpy\", \"name\": "
                                 "\"*\", \"dynamic_power_w\": 40}]}";

static void rocm_agent_ids_map_to_device_properties(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        char json[sizeof rocm_head + sizeof rocm_gpu3 + 8];
        snprintf(json, sizeof json, "%s%s]}", rocm_head, variant ? rocm_gpu3 : "");
        erg_trace *t = erg_trace_new();
        erg_diag d;
        if (erg_trace_read_buffer(t, json, strlen(json), "rocm.json", &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        erg_rules *r = NULL;
        assert_int_equal(
            erg_rules_read_buffer(rocm_rules, strlen(rocm_rules), "rocm_rules.json", ".", &r, &d),
            ERG_OK);
        erg_trace_report rep;
        if (erg_trace_report_make(t, r, NULL, &rep, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        assert_int_equal(rep.n_devices, (size_t)(variant ? 2 : 1));
        int g0 = strcmp(rep.devices[0].id, "rank0/gpu0") == 0 ? 0 : 1;
        assert_string_equal(rep.devices[g0].id, "rank0/gpu0");
        assert_string_equal(rep.devices[g0].name, "AMD Radeon Graphics");
        erg_assert_near(rep.devices[g0].static_power_w, 90, 0);
        assert_int_equal(rep.devices[g0].default_rules, 0); /* the rules name this GPU */
        assert_int_equal(rep.unmatched, 0);
        if (!variant) {
            /* the built-in rules name no AMD GPU: the device takes the default (the A100's
             * 60 W) and says so, where it used to pass for a device the rules describe */
            erg_rules *dr = NULL;
            assert_int_equal(erg_rules_default(&dr, &d), ERG_OK);
            erg_trace_report rd;
            if (erg_trace_report_make(t, dr, NULL, &rd, &d) != ERG_OK)
                fail_msg("%s: %s", d.where, d.detail);
            assert_int_equal(rd.n_devices, 1);
            assert_int_equal(rd.devices[0].default_rules, 1);
            erg_assert_near(rd.devices[0].static_power_w, 60, 0);
            erg_assert_rel(rd.static_energy_j, 60 * 400e-6, 1e-9);
            erg_trace_report_free(&rd);
            erg_rules_free(dr);
        }
        if (!variant) {
            /* dynamic 300 W × 300 µs + 40 W × 100 µs; static 90 W × 400 µs */
            erg_assert_rel(rep.dynamic_energy_j, 0.09 + 0.004, 1e-9);
            erg_assert_rel(rep.energy_j, 0.094 + 0.036, 1e-9);
        } else {
            assert_string_equal(rep.devices[1 - g0].id, "rank0/gpu3");
            assert_string_equal(rep.devices[1 - g0].name, "AMD Radeon Graphics");
            /* + GPU 3: 300 W × 400 µs dynamic, 90 W × 400 µs static */
            erg_assert_rel(rep.energy_j, 0.130 + 0.12 + 0.036, 1e-9);
        }
        erg_trace_report_free(&rep);
        erg_rules_free(r);
        erg_trace_free(t);
    }
}

/* Kineto on ROCm before July 2023 (PyTorch 2.0 and older; kineto RoctracerActivityApi.cpp before
 * c23a1fdb) logged every async HIP op in category "kernel": a copy named "CopyHostToDevice" or
 * "CopyDeviceToHost", a fill "FillBuffer", a barrier packet "Marker", on pid = HSA agent, tid =
 * queue, without args.device (pytorch/pytorch issue 97167: MI250, ROCm 5.4, '"cat": "kernel",
 * "name": "CopyHostToDevice", "pid": 2, "tid": 0'). A copy is priced as a copy, a fill as a
 * memset, and a barrier, which waits and does no work, is no activity. A fixture of that shape,
 * written here. */
static const char rocm54_trace[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"AMD Instinct MI250X / "
    "MI250\", \"computeMajor\": 9, \"numSms\": 110}],"
    " \"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"CopyHostToDevice\", \"pid\": 2, \"tid\": 0,"
    " \"ts\": 1000, \"dur\": 100, \"args\": {\"correlation\": 7}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"Cijk_Ailk_Bljk_HHS_BH_MT128x128x16\", "
    "\"pid\": "
    "2, \"tid\": 0, \"ts\": 1100, \"dur\": 300, \"args\": {\"correlation\": 8}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"Marker\", \"pid\": 2, \"tid\": 0,"
    " \"ts\": 1400, \"dur\": 500, \"args\": {\"correlation\": 9}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"FillBuffer\", \"pid\": 2, \"tid\": 0,"
    " \"ts\": 1900, \"dur\": 50, \"args\": {\"correlation\": 10}},"
    "{\"ph\": \"B\", \"cat\": \"kernel\", \"name\": \"Marker\", \"pid\": 2, \"tid\": 1, \"ts\": "
    "1950},"
    "{\"ph\": \"E\", \"pid\": 2, \"tid\": 1, \"ts\": 2950},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"CopyDeviceToHost\", \"pid\": 2, \"tid\": 0,"
    " \"ts\": 1950, \"dur\": 50, \"args\": {\"correlation\": 11}},"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipMemcpyWithStream\", \"pid\": 41, "
    "\"tid\": 41, \"ts\": 990, \"dur\": 120, \"args\": {\"correlation\": 7}}]}";

static void rocm_kineto_before_2023_copies_fills_and_markers(void **state)
{
    (void)state;
    erg_trace *t = erg_trace_new();
    erg_diag d;
    if (erg_trace_read_buffer(t, rocm54_trace, strlen(rocm54_trace), "rocm54.json", &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    static const char rules[] =
        "{\"erg\": \"rules/1\", \"devices\": [{\"match\": \"AMD*\", \"static_power_w\": 90}],"
        " \"rules\": [{\"category\": \"gpu_memcpy\", \"name\": \"*\", \"dynamic_power_w\": 40},"
        " {\"category\": \"gpu_memset\", \"name\": \"*\", \"dynamic_power_w\": 20},"
        " {\"category\": \"kernel\", \"name\": \"*\", \"dynamic_power_w\": 300}]}";
    erg_rules *r = NULL;
    assert_int_equal(erg_rules_read_buffer(rules, strlen(rules), "r.json", ".", &r, &d), ERG_OK);
    erg_trace_report rep;
    if (erg_trace_report_make(t, r, NULL, &rep, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    assert_int_equal(rep.n_devices, 1);
    assert_string_equal(rep.devices[0].id, "rank0/gpu0"); /* agent 2 is GPU 0 */
    assert_string_equal(rep.devices[0].name, "AMD Instinct MI250X / MI250");
    assert_int_equal(rep.stats.activities, 4);
    assert_int_equal(rep.stats.markers, 2);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_KERNEL].count, 1);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_MEMCPY].count, 2);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_MEMSET].count, 1);
    assert_int_equal(rep.unmatched, 0);
    /* 300 W × 300 µs + 40 W × 150 µs + 20 W × 50 µs; the 500 µs barrier adds nothing */
    erg_assert_rel(rep.dynamic_energy_j, 0.09 + 0.006 + 0.001, 1e-9);
    /* static 90 W over 1000..2000 µs, the span of the four activities */
    erg_assert_rel(rep.static_energy_j, 90 * 1e-3, 1e-9);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

/* The report's totals (per-device accounting, no schedule built) equal erg_schedule_compose's on
 * the schedule erg_trace_schedule makes of the same trace. */
/* The streamed schedule (erg_trace_schedule_write_file) is the file the tree gives
 * (erg_trace_schedule, then erg_schedule_write_file through jansson): the same bytes, and the
 * same parsed document. */
static void streamed_schedule_equals_the_tree(const erg_trace *t, const erg_rules *r,
                                              const erg_trace_options *o, const char *label)
{
    erg_diag d;
    erg_schedule *s = NULL;
    if (erg_trace_schedule(t, r, o, &s, &d) != ERG_OK)
        fail_msg("%s: schedule: %s: %s", label, d.where, d.detail);
    char tree[] = "/tmp/erg_trace_tree_XXXXXX", streamed[] = "/tmp/erg_trace_stream_XXXXXX";
    int fd = mkstemp(tree);
    assert_true(fd >= 0);
    close(fd);
    fd = mkstemp(streamed);
    assert_true(fd >= 0);
    close(fd);
    if (erg_schedule_write_file(tree, s, &d) != ERG_OK)
        fail_msg("%s: tree: %s: %s", label, d.where, d.detail);
    erg_schedule_free(s);
    if (erg_trace_schedule_write_file(streamed, t, r, o, &d) != ERG_OK)
        fail_msg("%s: streamed: %s: %s", label, d.where, d.detail);
    json_error_t je;
    json_t *a = json_load_file(tree, 0, &je), *b = json_load_file(streamed, 0, &je);
    if (!a || !b)
        fail_msg("%s: not JSON: %s", label, je.text);
    if (!json_equal(a, b))
        fail_msg("%s: the streamed schedule differs from the tree's", label);
    assert_string_equal(json_string_value(json_object_get(b, "erg")), "schedule/1");
    /* byte for byte */
    FILE *fa = fopen(tree, "rb"), *fb = fopen(streamed, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    size_t n = 0;
    for (;;) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            fail_msg("%s: the files differ at byte %zu", label, n);
        if (ca == EOF)
            break;
        n++;
    }
    assert_true(n > 0);
    fclose(fa);
    fclose(fb);
    json_decref(a);
    json_decref(b);
    unlink(tree);
    unlink(streamed);
}

static void report_equals_compose(const erg_trace *t, const erg_rules *r,
                                  const erg_trace_options *o, const char *label)
{
    erg_diag d;
    erg_trace_report rep;
    if (erg_trace_report_make(t, r, o, &rep, &d) != ERG_OK)
        fail_msg("%s: report: %s: %s", label, d.where, d.detail);
    erg_schedule *s = NULL;
    if (erg_trace_schedule(t, r, o, &s, &d) != ERG_OK)
        fail_msg("%s: schedule: %s: %s", label, d.where, d.detail);
    erg_compose_options co;
    erg_compose_options_init(&co);
    erg_report c;
    if (erg_schedule_compose(s, &co, &c, &d) != ERG_OK)
        fail_msg("%s: compose: %s: %s", label, d.where, d.detail);
    erg_assert_rel(rep.energy_j, c.energy_j, 1e-9);
    erg_assert_rel(rep.energy_sd_j, c.energy_sd_j, 1e-9);
    erg_assert_rel(rep.time_s, c.time_s, 1e-9);
    erg_assert_rel(rep.static_energy_j, c.static_energy_j, 1e-9);
    erg_assert_rel(rep.dynamic_energy_j, c.dynamic_energy_j, 1e-9);
    assert_int_equal(rep.grade, c.grade);
    assert_int_equal(rep.flags, c.flags);
    erg_report_free(&c);
    erg_schedule_free(s);
    erg_trace_report_free(&rep);
    streamed_schedule_equals_the_tree(t, r, o, label);
}

static void report_totals_equal_the_composed_schedule(void **state)
{
    (void)state;
    erg_trace *t = load_two();
    erg_rules *r = load_rules(), *dflt = NULL;
    erg_diag d;
    assert_int_equal(erg_rules_default(&dflt, &d), ERG_OK);
    report_equals_compose(t, r, NULL, "two_gpus");
    report_equals_compose(t, dflt, NULL, "two_gpus, default rules");
    erg_trace_free(t);

    /* A random trace: 4 devices over 2 files, overlaps on one device and one stream, gaps, idle
     * power below static (rules), collectives, copies, unmatched memsets, B/E pairs. */
    for (int align = 0; align < 2; align++) {
        t = erg_trace_new();
        uint64_t x = 88172645463325252ull;
        for (int f = 0; f < 2; f++) {
            size_t cap = 1 << 20, n = 0;
            char *buf = malloc(cap);
            assert_non_null(buf);
            n += (size_t)snprintf(buf + n, cap - n,
                                  "{\"distributedInfo\":{\"rank\":%d},\"traceEvents\":[", f);
            for (int i = 0; i < 400; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                static const char *const cats[] = {"kernel", "kernel", "gpu_memcpy", "gpu_memset"};
                static const char *const names[] = {"gemm_a", "add", "ncclAllReduce", "copy"};
                unsigned dev = (unsigned)(x % 2), stream = (unsigned)(x >> 8) % 3;
                unsigned ts = (unsigned)(x >> 16) % 100000 + (unsigned)f * 7000;
                unsigned dur = (unsigned)(x >> 40) % 900;
                if (i % 50 == 49) /* a B/E pair */
                    n +=
                        (size_t)snprintf(buf + n, cap - n,
                                         "%s{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"be\","
                                         "\"pid\":%u,\"tid\":9,\"ts\":%u},{\"ph\":\"E\",\"pid\":%u,"
                                         "\"tid\":9,\"ts\":%u.5}",
                                         i ? "," : "", dev, ts, dev, ts + dur);
                else
                    n += (size_t)snprintf(
                        buf + n, cap - n,
                        "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%u.%03u,\"dur\":%u.%03u}",
                        i ? "," : "", cats[x % 4 == 3 ? 3 : (x >> 3) % 3], names[(x >> 5) % 4], dev,
                        stream, ts, (unsigned)(x % 1000), dur, (unsigned)((x >> 20) % 1000));
            }
            n += (size_t)snprintf(buf + n, cap - n, "]}");
            char name[32];
            snprintf(name, sizeof name, "rank%d.json", f);
            if (erg_trace_read_buffer(t, buf, n, name, &d) != ERG_OK)
                fail_msg("%s: %s", d.where, d.detail);
            free(buf);
        }
        erg_trace_options o;
        erg_trace_options_init(&o);
        o.align = align ? ERG_TRACE_ALIGN_FIRST_KERNEL : ERG_TRACE_ALIGN_NONE;
        report_equals_compose(t, r, &o, align ? "random, first-kernel" : "random, none");
        report_equals_compose(t, dflt, &o, "random, default rules");
        erg_trace_free(t);
    }

    /* The shared NCCL trace, when present. */
    const char *nccl = ERG_TEST_SOURCE_DIR "/../shared/data/traces/hta_nccl_2xa100_rank0.json.gz";
    if (access(nccl, R_OK) == 0) {
        t = erg_trace_new();
        if (erg_trace_read_file(t, nccl, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        report_equals_compose(t, dflt, NULL, "hta_nccl_2xa100_rank0");
        erg_trace_free(t);
    } else {
        print_message("skipped the NCCL trace: not found\n");
    }
    const char *alex =
        ERG_TEST_SOURCE_DIR "/../shared/data/traces/hta_alexnet_a100_critical_path.json.gz";
    if (access(alex, R_OK) == 0) {
        t = erg_trace_new();
        if (erg_trace_read_file(t, alex, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        report_equals_compose(t, dflt, NULL, "hta_alexnet_a100_critical_path");
        erg_trace_free(t);
    } else {
        print_message("skipped the AlexNet trace: not found\n");
    }
    erg_rules_free(dflt);
    erg_rules_free(r);
}

/* A signature rule's measurement flags follow it into every activity it prices: the imported
 * schedule's signatures and the report's flags (the union); the gemm rule's figures are the
 * signature's dynamic power 200 W scaled to the traced 100 µs, as without flags. */
static void signature_rule_flags_reach_the_report(void **state)
{
    (void)state;
    char dir[] = "/tmp/erg-trace-flags.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sig[256], rules[256];
    snprintf(sig, sizeof sig, "%s/gemm.json", dir);
    snprintf(rules, sizeof rules, "%s/rules.json", dir);
    FILE *f = fopen(sig, "w");
    fputs("{\"erg\": \"signature/1\", \"static_power_w\": 60, \"time_s\": 1, \"dynamic_energy_j\": "
          "200,"
          " \"grade\": \"hw_shunt\", \"flags\": [\"stale\", \"wrap_corrected\"]}\n",
          f);
    fclose(f);
    f = fopen(rules, "w");
    fputs("{\"erg\": \"rules/1\",\n"
          " \"devices\": [{\"match\": \"NVIDIA A100*\", \"static_power_w\": 60}],\n"
          " \"default_device\": {\"static_power_w\": 40, \"idle_power_w\": 10},\n"
          " \"rules\": [{\"category\": \"kernel\", \"name\": \"*gemm*\", \"signature\": "
          "\"gemm.json\"},\n"
          "   {\"category\": \"kernel\", \"name\": \"*\", \"dynamic_power_w\": 100}]}\n",
          f);
    fclose(f);
    erg_trace *t = load_two();
    erg_rules *r = NULL;
    erg_diag d;
    if (erg_rules_read_file(rules, &r, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_trace_report rep;
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_OK);
    assert_int_equal(rep.flags, ERG_FLAG_STALE | ERG_FLAG_WRAP_CORRECTED);
    erg_assert_rel(rep.categories[ERG_TRACE_CAT_KERNEL].energy_j, 200 * 100e-6 + 100 * 300e-6,
                   1e-9);
    char *js = NULL;
    assert_int_equal(erg_trace_report_json(t, &rep, &js, &d), ERG_OK);
    json_t *root = json_loads(js, 0, NULL), *fl = json_object_get(root, "flags");
    assert_int_equal(json_array_size(fl), 2);
    assert_string_equal(json_string_value(json_array_get(fl, 0)), "wrap_corrected");
    assert_string_equal(json_string_value(json_array_get(fl, 1)), "stale");
    json_decref(root);
    free(js);
    erg_trace_report_free(&rep);
    erg_schedule *s = NULL;
    assert_int_equal(erg_trace_schedule(t, r, NULL, &s, &d), ERG_OK);
    erg_report cr;
    assert_int_equal(erg_schedule_compose(s, NULL, &cr, &d), ERG_OK);
    assert_int_equal(cr.flags, ERG_FLAG_STALE | ERG_FLAG_WRAP_CORRECTED);
    erg_report_free(&cr);
    erg_schedule_free(s);
    erg_rules_free(r);
    erg_trace_free(t);
    remove(sig);
    remove(rules);
    rmdir(dir);
}

/* Names that need escaping (quotes, backslashes, control characters, '/', UTF-8, a name long
 * enough to be cut by the signature's name field) stream as jansson writes them; a name cut inside
 * a UTF-8 character is refused by both writers alike, and the streamed one writes nothing. */
static void streamed_schedule_escapes_as_jansson_does(void **state)
{
    (void)state;
    char j[4096];
    char longname[400];
    size_t k = 0;
    while (k < 120)
        longname[k++] = 'n';
    longname[k] = '\0';
    snprintf(j, sizeof j,
             "{\"traceEvents\": ["
             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\\"q\\\\b/\\t\\n\\u0001\\u001f "
             "\\u00e9\\u4e2d\\ud83d\\ude00\",\"pid\":\"GPU \\\"0\\\"\",\"tid\":\"s\\\\t \\u00e9\","
             "\"ts\":1,\"dur\":2},"
             "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"%s\",\"pid\":1,\"tid\":2,"
             "\"ts\":1.5,\"dur\":1e-3},"
             "{\"ph\":\"X\",\"cat\":\"Memset\",\"name\":\"%s\",\"pid\":1,\"tid\":2,"
             "\"ts\":4458676983543.183,\"dur\":0}]}",
             longname, longname);
    erg_diag d;
    erg_trace *t = erg_trace_new();
    erg_trace_options o;
    erg_trace_options_init(&o);
    o.align = ERG_TRACE_ALIGN_FIRST_KERNEL;
    if (erg_trace_read_buffer(t, j, strlen(j), "odd.json", &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_rules *r = load_rules(), *dflt = NULL;
    assert_int_equal(erg_rules_default(&dflt, &d), ERG_OK);
    streamed_schedule_equals_the_tree(t, r, &o, "odd names");
    streamed_schedule_equals_the_tree(t, dflt, &o, "odd names, default rules");
    erg_trace_free(t);

    /* "0:" and 124 ASCII bytes, then 'é' (2 bytes) straddles the 128-byte name field's end */
    k = 0;
    while (k < 124)
        longname[k++] = 'm';
    memcpy(longname + k, "\\u00e9\\u00e9", 12);
    longname[k + 12] = '\0';
    snprintf(j, sizeof j,
             "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,"
             "\"tid\":7,\"ts\":0,\"dur\":10}]}",
             longname);
    t = erg_trace_new();
    if (erg_trace_read_buffer(t, j, strlen(j), "cut.json", &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_schedule *s = NULL;
    assert_int_equal(erg_trace_schedule(t, r, NULL, &s, &d), ERG_OK);
    char path[] = "/tmp/erg_trace_cut_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    assert_int_equal(erg_schedule_write_file(path, s, &d), ERG_ENOMEM);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(erg_trace_schedule_write_file(path, t, r, NULL, &d), ERG_ENOMEM);
    assert_non_null(strstr(d.detail, "cannot encode the schedule"));
    assert_int_equal(access(path, F_OK), -1);
    erg_schedule_free(s);
    erg_trace_free(t);
    erg_rules_free(r);
    erg_rules_free(dflt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rocm_agent_ids_map_to_device_properties),
        cmocka_unit_test(rocm_kineto_before_2023_copies_fills_and_markers),
        cmocka_unit_test(kernel_rules_take_collectives_unless_a_collective_rule_came_first),
        cmocka_unit_test(report_matches_hand_computed_values),
        cmocka_unit_test(report_totals_equal_the_composed_schedule),
        cmocka_unit_test(schedule_file_composes_to_the_report_totals),
        cmocka_unit_test(ranks_compose_cross_device_with_alignment),
        cmocka_unit_test(far_apart_clocks_are_refused),
        cmocka_unit_test(repeated_kernels_share_a_signature),
        cmocka_unit_test(trace_without_gpu_activity_is_a_clear_error),
        cmocka_unit_test(device_without_entry_needs_default_device),
        cmocka_unit_test(default_rules_give_estimator_figures),
        cmocka_unit_test(report_json_has_the_documented_keys),
        cmocka_unit_test(signature_rule_flags_reach_the_report),
        cmocka_unit_test(streamed_schedule_escapes_as_jansson_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
