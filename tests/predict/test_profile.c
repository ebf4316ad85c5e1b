/* SPDX-License-Identifier: MIT */
/* The profiler's protocol, without timed assertions: repetitions, rotation, energy windows. */
#include "support/erg_test.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "erg/measure.h"
#include "erg/meter.h"
#include "erg/predict.h"
#include "predict/kernels.h"

struct fake_meter {
    unsigned begins, ends;
    double joules_per_s;
};

static int fake_begin(void *ud, erg_diag *diag)
{
    (void)diag;
    ((struct fake_meter *)ud)->begins++;
    return ERG_OK;
}

static int fake_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag)
{
    (void)diag;
    struct fake_meter *f = ud;
    f->ends++;
    *energy_j = f->joules_per_s * elapsed_s + 1e-3; /* 1 mJ offset per window */
    *grade = ERG_GRADE_HW_SHUNT;
    return ERG_OK;
}

static int failing_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade,
                       erg_diag *diag)
{
    (void)ud;
    (void)elapsed_s;
    (void)energy_j;
    (void)grade;
    return erg_diag_set(diag, ERG_ENOTLIVE, "fake", "counter frozen");
}

static erg_op_dims dims(erg_op op, int64_t a, int64_t b, int64_t c)
{
    erg_op_dims d;
    memset(&d, 0, sizeof d);
    d.op = op;
    if (op == ERG_OP_GEMM) {
        d.m = a;
        d.n = b;
        d.k = c;
    } else if (op == ERG_OP_RMSNORM) {
        d.tokens = a;
        d.d_model = b;
    } else {
        d.tokens = a;
    }
    return d;
}

static void builtin_estimator_profile(void **state)
{
    (void)state;
    erg_op_dims g[3] = {dims(ERG_OP_RMSNORM, 4, 256, 0), dims(ERG_OP_SOFTMAX, 64, 0, 0),
                        dims(ERG_OP_GEMM, 32, 48, 64)};
    erg_op_sample out[3];
    erg_profile_options o;
    erg_profile_options_init(&o);
    erg_assert_near(o.min_time_s, 1.0, 0);
    o.min_time_s = 0.005;
    o.est_power_w = 20.0;
    size_t done = 0;
    erg_diag diag;
    assert_int_equal(erg_profile_ops(&o, g, 3, out, &done, &diag), ERG_OK);
    assert_int_equal(done, 3);
    for (int i = 0; i < 3; i++) {
        assert_true(out[i].reps >= 2); /* at least two batches */
        assert_true(out[i].time_s > 0);
        assert_true(out[i].time_sd_s >= 0);
        /* cumulative time reached the minimum: reps · mean ≥ min_time */
        assert_true((double)out[i].reps * out[i].time_s >= o.min_time_s * (1 - 1e-9));
        /* the estimator is P·t, graded as such */
        erg_assert_rel(out[i].energy_j, 20.0 * out[i].time_s, 1e-9);
        assert_int_equal(out[i].grade, ERG_GRADE_ESTIMATOR);
        assert_int_equal(out[i].has_grade, 1);
        assert_int_equal(out[i].dims.op, g[i].op);
    }
    assert_string_equal(out[0].kappa, "erg-c");
    assert_string_equal(out[1].kappa, "erg-c-causal");
    assert_non_null(strstr(out[2].kappa, "openblas-"));
    assert_non_null(strstr(out[2].kappa, "-sgemm-"));
}

static void energy_comes_through_the_window(void **state)
{
    (void)state;
    struct fake_meter f = {0, 0, 100.0};
    erg_energy_window w = {&f, fake_begin, fake_end};
    erg_op_dims g = dims(ERG_OP_GEMM, 16, 16, 16);
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 0.002;
    o.min_window_s = 0; /* every batch counts, so the 1 mJ offsets can be tallied */
    o.batches = 4;
    o.energy = &w;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, NULL), ERG_OK);
    assert_true(f.begins >= 2);
    assert_int_equal(f.begins, f.ends);
    assert_int_equal(out.grade, ERG_GRADE_HW_SHUNT);
    /* energy per execution = (100 W · total time + windows · 1 mJ) / reps */
    erg_assert_rel(out.energy_j,
                   (100.0 * out.time_s * (double)out.reps + 1e-3 * f.ends) / (double)out.reps,
                   1e-9);
    w.end = failing_end;
    erg_diag diag;
    erg_diag_clear(&diag);
    size_t done = 7;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, &done, &diag), ERG_ENOTLIVE);
    assert_int_equal(done, 0);
    assert_string_equal(diag.detail, "counter frozen");
}

/* Like the meter's estimator: no figure for a window shorter than its 10 ms update period. */
static int coarse_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade,
                      erg_diag *diag)
{
    (void)ud;
    if (elapsed_s < 0.01)
        return erg_diag_set(diag, ERG_ENODEV, NULL, "below resolution");
    *energy_j = 50.0 * elapsed_s;
    *grade = ERG_GRADE_ESTIMATOR;
    return ERG_OK;
}

static void short_batches_grow_past_the_meter_resolution(void **state)
{
    (void)state;
    struct fake_meter f = {0, 0, 0};
    erg_energy_window w = {&f, fake_begin, coarse_end};
    erg_op_dims g = dims(ERG_OP_RMSNORM, 1, 256, 0); /* ~100 ns per execution */
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    erg_assert_near(o.min_window_s, 0.02, 0);
    o.min_time_s = 0.001; /* would ask for 50 µs batches */
    o.min_window_s = 0.012;
    o.energy = &w;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, NULL), ERG_OK);
    erg_assert_rel(out.energy_j, 50.0 * out.time_s, 1e-9);
    assert_true((double)out.reps * out.time_s >= 2 * 0.012);
}

static void energy_through_erg_meter_windows_is_graded(void **state)
{
    (void)state;
    erg_meter_options mo;
    erg_meter_options_init(&mo);
    mo.backends = "estimator"; /* the backend every machine has; no counters needed */
    erg_meter *m = NULL;
    erg_diag diag;
    assert_int_equal(erg_meter_open(&mo, &m, &diag), ERG_OK);
    assert_int_equal(erg_meter_sampler_start(m, 0.01), ERG_OK);
    erg_monitor *mon = NULL;
    assert_int_equal(erg_monitor_open(m, &mon, &diag), ERG_OK);
    erg_energy_window w;
    assert_int_equal(erg_profile_energy_monitor(NULL, &w), ERG_EINVAL);
    assert_int_equal(erg_profile_energy_monitor(mon, &w), ERG_OK);
    erg_op_dims g = dims(ERG_OP_GEMM, 64, 64, 64);
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 0.05;
    o.energy = &w;
    int rc = erg_profile_ops(&o, &g, 1, &out, NULL, &diag);
    if (rc != ERG_OK)
        fail_msg("profile through the meter: %s", diag.detail);
    assert_int_equal(out.grade, ERG_GRADE_ESTIMATOR);
    assert_true(out.energy_j > 0);
    /* a busy CPU core at the estimator's defaults (10-65 W for the whole CPU) draws between
     * 0.1 W and 65 W: energy per execution divided by time per execution lands there */
    double p_w = out.energy_j / out.time_s;
    if (!(p_w > 0.1 && p_w < 65.0 * 1.5))
        fail_msg("implied power %g W", p_w);
    erg_monitor_close(mon);
    erg_meter_sampler_stop(m);
    erg_meter_close(m);
}

/* 100 W, except that the second window also gets a 1 J spike (another process, an interrupt). */
/* A batch that draws 150 W instead of 100 W (a power spike in the second batch). */
static int spiky_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag)
{
    (void)diag;
    struct fake_meter *f = ud;
    f->ends++;
    *energy_j = (f->ends == 2 ? 150.0 : 100.0) * elapsed_s;
    *grade = ERG_GRADE_HW_SHUNT;
    return ERG_OK;
}

/* A scripted profiling clock: the warm-up execution takes 0.25 s, batch i (of b = 64 executions)
 * takes 64 × 0.25·(1 + 0.01·i) s. */
struct script_clock {
    unsigned calls;
    double t;
};

/* A scripted clock with equal batches: warm-up execution 0.25 s, every batch 64 × 0.25 s. */
static double flat_now(void *ud)
{
    struct script_clock *c = ud;
    unsigned k = c->calls++;
    if (k == 1)
        c->t += 0.25;
    else if (k >= 3 && k % 2 == 1)
        c->t += 64 * 0.25;
    return c->t;
}

static void one_spiky_batch_moves_the_mean_not_the_spread(void **state)
{
    (void)state;
    struct script_clock clk = {0, 0};
    struct fake_meter f = {0, 0, 0};
    erg_energy_window w = {&f, fake_begin, spiky_end};
    erg_op_dims g = dims(ERG_OP_RMSNORM, 1, 16, 0);
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 80; /* 5 batches of 16 s: b = 64 */
    o.batches = 5;
    o.min_window_s = 0;
    o.energy = &w;
    o.now_s = flat_now;
    o.now_ud = &clk;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, NULL), ERG_OK);
    assert_int_equal(f.ends, 5);
    assert_int_equal(out.reps, 320);
    /* hand-computed: batches of 1600 J except one of 2400 J, 8800 J over 320 executions */
    erg_assert_rel(out.time_s, 0.25, 1e-12);
    erg_assert_rel(out.energy_j, 8800.0 / 320.0, 1e-9);
    /* the spread is robust: four of five per-execution batch means are 25 J, so the MAD is 0,
     * whereas a plain sd of the batch means would be 5.6 J */
    erg_assert_near(out.time_sd_s, 0.0, 1e-15);
    erg_assert_near(out.energy_sd_j, 0.0, 1e-12);
}

static double script_now(void *ud)
{
    struct script_clock *c = ud;
    unsigned k = c->calls++;
    if (k == 1)
        c->t += 0.25;
    else if (k >= 3 && k % 2 == 1)
        c->t += 64 * 0.25 * (1 + 0.01 * (double)((k - 3) / 2));
    return c->t;
}

/* 100 W over the window the profiler reports (its wall-clock duration). */
static int watts100_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade,
                        erg_diag *diag)
{
    (void)diag;
    ((struct fake_meter *)ud)->ends++;
    *energy_j = 100.0 * elapsed_s;
    *grade = ERG_GRADE_HW_SHUNT;
    return ERG_OK;
}

static void sd_of_one_run_is_the_spread_of_batch_means(void **state)
{
    (void)state;
    struct script_clock clk = {0, 0};
    struct fake_meter f = {0, 0, 0};
    erg_energy_window w = {&f, fake_begin, watts100_end};
    erg_op_dims g = dims(ERG_OP_RMSNORM, 1, 16, 0);
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 64; /* 4 batches of 16 s: b = 16 / 0.25 = 64 */
    o.batches = 4;
    o.min_window_s = 0;
    o.energy = &w;
    o.now_s = script_now;
    o.now_ud = &clk;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, NULL), ERG_OK);
    assert_int_equal(f.ends, 4);
    assert_int_equal(out.reps, 256);
    /* mean 0.25·(1 + 0.015); per-execution batch means 0.25·{1, 1.01, 1.02, 1.03}: median
     * 0.25375, absolute deviations {3.75, 1.25, 1.25, 3.75}e-3, MAD 2.5e-3, sd 1.4826·MAD (the
     * old sd·√b estimate was 8× that, far above the spread of any batch) */
    erg_assert_rel(out.time_s, 0.25375, 1e-12);
    erg_assert_rel(out.time_sd_s, 1.4826 * 2.5e-3, 1e-9);
    /* energy on the same time base as time: 100 W × the scripted time, whatever the wall time */
    erg_assert_rel(out.energy_j, 100.0 * out.time_s, 1e-9);
    erg_assert_rel(out.energy_sd_j, 100.0 * out.time_sd_s, 1e-6);
}

/* Like erg's meter windows: 100 W over the window's own wall-clock duration, whatever the caller
 * says the batch took. */
struct own_clock_meter {
    struct timespec t0;
};

static int own_begin(void *ud, erg_diag *diag)
{
    (void)diag;
    clock_gettime(CLOCK_MONOTONIC, &((struct own_clock_meter *)ud)->t0);
    return ERG_OK;
}

static int own_end(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag)
{
    (void)diag;
    (void)elapsed_s;
    struct timespec t1, *t0 = &((struct own_clock_meter *)ud)->t0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *energy_j =
        100.0 * ((double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec));
    *grade = ERG_GRADE_ESTIMATOR;
    return ERG_OK;
}

/* A profiling clock that runs at a quarter of wall time, as a thread's CPU clock does when the
 * thread gets a quarter of a core. */
static double quarter_now(void *ud)
{
    (void)ud;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 0.25 * ((double)t.tv_sec + 1e-9 * (double)t.tv_nsec);
}

static void energy_and_time_share_one_time_base(void **state)
{
    (void)state;
    struct own_clock_meter mtr;
    erg_energy_window w = {&mtr, own_begin, own_end};
    erg_op_dims g = dims(ERG_OP_GEMM, 32, 32, 32);
    erg_op_sample out;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 0.02; /* profiling-clock seconds: 80 ms of wall time */
    o.min_window_s = 0.01;
    o.energy = &w;
    o.now_s = quarter_now;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, NULL), ERG_OK);
    /* the meter saw 100 W: energy / time must say 100 W, not 400 W (wall-clock energy over
     * profiling-clock time); a descheduling between begin() and the first clock read adds a
     * little, hence the one-sided margin */
    double p_w = out.energy_j / out.time_s;
    if (!(p_w > 99.0 && p_w < 150.0))
        fail_msg("implied power %g W, the meter said 100 W", p_w);
}

static void unsupported_targets_and_types(void **state)
{
    (void)state;
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 0.001;
    erg_op_dims g = dims(ERG_OP_GEMM, 8, 8, 8);
    erg_op_sample out;
    erg_diag diag;
    o.target = ERG_TARGET_CUDA;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, &diag), ERG_ENOTSUP);
    assert_non_null(strstr(diag.detail, "extension point"));
    o.target = ERG_TARGET_CPU;
    /* bf16 GEMM exactly when the linked OpenBLAS exports cblas_sbgemm (Debian 12's does not) */
    g.dtype = ERG_DTYPE_BF16;
    int have = erg__find_sbgemm() != NULL;
    assert_int_equal(erg_profile_supports(ERG_TARGET_CPU, ERG_OP_GEMM, ERG_DTYPE_BF16), have);
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, &diag), have ? ERG_OK : ERG_ENOTSUP);
    /* bf16 RMSNorm never (own kernels are fp32) */
    erg_op_dims r = dims(ERG_OP_RMSNORM, 2, 64, 0);
    r.dtype = ERG_DTYPE_BF16;
    assert_int_equal(erg_profile_ops(&o, &r, 1, &out, NULL, &diag), ERG_ENOTSUP);
    assert_string_equal(diag.where, "grid row 1");
    /* a set too large is refused before allocating */
    o.max_set_bytes = 1000;
    erg_op_dims big = dims(ERG_OP_GEMM, 64, 64, 64);
    assert_int_equal(erg_profile_ops(&o, &big, 1, &out, NULL, &diag), ERG_ERANGE);
    /* element counts that wrap size_t: m·k = m·n = 2^64 made sets of 0 elements that passed the
     * limit, and BLAS was handed (int)2^62 = 0; a dimension above BLAS's int too */
    o.max_set_bytes = (size_t)1 << 30;
    erg_op_dims wrap = dims(ERG_OP_GEMM, (int64_t)1 << 62, 4, 4);
    erg_diag_clear(&diag);
    assert_int_equal(erg_profile_ops(&o, &wrap, 1, &out, NULL, &diag), ERG_ERANGE);
    assert_non_null(strstr(diag.detail, "gemm: dimensions too large"));
    erg_op_dims wide = dims(ERG_OP_GEMM, 1, (int64_t)INT_MAX + 1, 1);
    assert_int_equal(erg_profile_ops(&o, &wide, 1, &out, NULL, &diag), ERG_ERANGE);
    /* a causal softmax of 2^32 tokens: 2^64 elements wrapped to 0, and the kernel then wrote
     * 2^32 rows into a one-element buffer */
    erg_op_dims sq = dims(ERG_OP_SOFTMAX, (int64_t)1 << 32, 0, 0);
    assert_int_equal(erg_profile_ops(&o, &sq, 1, &out, NULL, &diag), ERG_ERANGE);
    /* times whose ratio to an execution's time is no uint64_t repetition count are refused */
    o.min_time_s = 1e300;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, &diag), ERG_EINVAL);
    o.min_time_s = 0.01;
    o.min_window_s = INFINITY;
    assert_int_equal(erg_profile_ops(&o, &g, 1, &out, NULL, &diag), ERG_EINVAL);
    o.min_window_s = 0.001;
    erg_op_dims neg = dims(ERG_OP_GEMM, -1, 4, 4);
    assert_int_equal(erg_profile_ops(&o, &neg, 1, &out, NULL, &diag), ERG_EINVAL);
}

static void target_identity_is_file_name_safe(void **state)
{
    (void)state;
    char kind[128], desc[256];
    erg_target_identity(kind, sizeof kind, desc, sizeof desc);
    assert_true(strncmp(kind, "cpu-", 4) == 0);
    for (const char *p = kind; *p; p++)
        assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    assert_non_null(strstr(desc, "OpenBLAS"));
}

/* Weight-set rotation (HYMELL Section 5.1): the number of sets follows min_weight_sets,
 * rotate_bytes and max_weight_sets, and the timed executions cycle through every set in turn,
 * each on its own memory, so no repetition finds its inputs left in cache by the previous one. */
struct exec_log {
    size_t n, nsets, set[4096];
    const void *input[4096];
};

static void log_exec(void *ud, size_t set, size_t nsets, const void *input)
{
    struct exec_log *l = ud;
    l->nsets = nsets;
    if (l->n < 4096) {
        l->set[l->n] = set;
        l->input[l->n] = input;
    }
    l->n++;
}

static void rotation_case(erg_op_dims d, unsigned min_sets, size_t rotate_bytes, unsigned max_sets,
                          size_t want_sets)
{
    static struct exec_log l;
    memset(&l, 0, sizeof l);
    erg_profile_options o;
    erg_profile_options_init(&o);
    o.min_time_s = 1e-3;
    o.min_window_s = 1e-4;
    o.min_weight_sets = min_sets;
    o.rotate_bytes = rotate_bytes;
    o.max_weight_sets = max_sets;
    erg_op_sample out;
    erg__profile_exec_hook = log_exec;
    erg__profile_exec_hook_ud = &l;
    int rc = erg_profile_ops(&o, &d, 1, &out, NULL, NULL);
    erg__profile_exec_hook = NULL;
    erg__profile_exec_hook_ud = NULL;
    assert_int_equal(rc, ERG_OK);
    assert_int_equal(l.nsets, want_sets);
    size_t n = l.n < 4096 ? l.n : 4096;
    assert_true(n > 2 * want_sets + 2);
    /* warm-up on set 0 (one or two executions), then the timed ones start again at set 0 */
    size_t w = l.set[1] == 0 ? 2 : 1;
    assert_int_equal(l.set[0], 0);
    assert_true(l.n - w >= out.reps); /* every counted repetition went through the seam */
    for (size_t i = w; i < n; i++)
        assert_int_equal(l.set[i], (i - w) % want_sets); /* round robin, none skipped */
    /* every set is distinct memory, and a set always passes the same buffer */
    for (size_t a = 0; a < want_sets; a++)
        for (size_t b = a + 1; b < want_sets; b++)
            assert_ptr_not_equal(l.input[w + a], l.input[w + b]);
    for (size_t i = w + want_sets; i < n; i++)
        assert_ptr_equal(l.input[i], l.input[w + (i - w) % want_sets]);
}

static void weight_sets_rotate(void **state)
{
    (void)state;
    /* GEMM 8×8×8 fp32: (64 + 64 + 64) floats = 768 bytes a set */
    erg_op_dims g = dims(ERG_OP_GEMM, 8, 8, 8);
    rotation_case(g, 2, 3000, 64, 4); /* 4 · 768 ≥ 3000 */
    rotation_case(g, 2, 3000, 3, 3);  /* capped */
    rotation_case(g, 5, 100, 64, 5);  /* at least min_weight_sets */
    /* RMSNorm 4 × 256: x, y 1024 floats each, w 256: 9216 bytes a set */
    rotation_case(dims(ERG_OP_RMSNORM, 4, 256, 0), 2, 30000, 64, 4);
    rotation_case(dims(ERG_OP_SOFTMAX, 16, 0, 0), 3, 0, 64, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_estimator_profile),
        cmocka_unit_test(energy_comes_through_the_window),
        cmocka_unit_test(short_batches_grow_past_the_meter_resolution),
        cmocka_unit_test(energy_through_erg_meter_windows_is_graded),
        cmocka_unit_test(one_spiky_batch_moves_the_mean_not_the_spread),
        cmocka_unit_test(sd_of_one_run_is_the_spread_of_batch_means),
        cmocka_unit_test(energy_and_time_share_one_time_base),
        cmocka_unit_test(unsupported_targets_and_types),
        cmocka_unit_test(target_identity_is_file_name_safe),
        cmocka_unit_test(weight_sets_rotate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
