/* SPDX-License-Identifier: MIT */
/* DAG composition when memory runs out (tests/support/failalloc.c fails the allocation), with and
 * without a workspace (erg_compose_workspace): each allocation of a composition failed in turn,
 * alone and with every later one, gives ERG_ENOMEM or the full report, bit for bit the one
 * composed with memory to spare, never a partial one; a workspace that could not grow stays
 * usable, and the next composition in it gives that report; nothing leaks (ASan's leak check in
 * CI). Schedules: the example two-GPU pipeline DAG, and 3 sources feeding 70 joins with the same
 * predecessor set (every source has 70 successors: the table of identical joins). */
#include "support/erg_test.h"
#include "support/failalloc.h"

#include "erg/calculus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same(const erg_report *a, const erg_report *b)
{
    assert_true(same_bits(a->energy_j, b->energy_j));
    assert_true(same_bits(a->energy_sd_j, b->energy_sd_j));
    assert_true(same_bits(a->time_s, b->time_s));
    assert_true(same_bits(a->time_sd_s, b->time_sd_s));
    assert_true(same_bits(a->bias_bound_j, b->bias_bound_j));
    assert_true(same_bits(a->mc_energy_j, b->mc_energy_j));
    assert_true(same_bits(a->mc_time_sd_s, b->mc_time_sd_s));
    assert_int_equal(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        assert_string_equal(a->devices[i].id, b->devices[i].id);
        assert_true(same_bits(a->devices[i].static_energy_j, b->devices[i].static_energy_j));
        assert_true(same_bits(a->devices[i].busy_s, b->devices[i].busy_s));
    }
}

static erg_schedule *pipeline(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/examples/pipeline-2gpu-dag.json", ERG_TEST_SOURCE_DIR);
    erg_schedule *s = NULL;
    erg_diag d;
    assert_int_equal(erg_schedule_read_file(path, &s, &d), ERG_OK);
    return s;
}

/* Sources a, b, c on one device, each an operand of 70 joins j0..j69 (one signature, 1 ms +- 0.1
 * ms at 50 W static power). */
static erg_schedule *twins(void)
{
    erg_schedule *s = erg_schedule_new();
    assert_non_null(s);
    erg_diag d;
    assert_int_equal(erg_schedule_add_device(s, "g", 50.0, 20.0, &d), ERG_OK);
    erg_signature g;
    erg_signature_init(&g);
    snprintf(g.name, sizeof g.name, "k");
    snprintf(g.device, sizeof g.device, "g");
    g.static_power_w = NAN;
    g.time_s = 1e-3;
    g.time_var_s2 = 1e-8;
    g.dynamic_energy_j = 0.1;
    g.energy_var_j2 = 50.0 * 50.0 * g.time_var_s2 + 1e-6;
    assert_int_equal(erg_schedule_add_signature(s, &g, &d), ERG_OK);
    static const char *src[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(erg_schedule_add_node(s, src[i], "k", NULL, NAN, &d), ERG_OK);
    for (int j = 0; j < 70; j++) {
        char id[16];
        snprintf(id, sizeof id, "j%d", j);
        assert_int_equal(erg_schedule_add_node(s, id, "k", NULL, NAN, &d), ERG_OK);
        for (int i = 0; i < 3; i++)
            assert_int_equal(erg_schedule_add_edge(s, src[i], id, &d), ERG_OK);
    }
    return s;
}

/* Compose s with each of its allocations failed in turn (alone, then with all later ones), in a
 * workspace or not: ERG_ENOMEM or the reference report; then once more in the same workspace, with
 * memory back: the reference. Returns the failures seen. */
static size_t each_failed(const erg_schedule *s, int use_ws, int and_after)
{
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.mc_samples = 8;
    erg_report ref, r;
    erg_diag d;
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg_schedule_compose(s, &o, &ref, &d), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    assert_true(calls > 0);
    size_t failures = 0;
    for (unsigned long n = 1; n <= calls; n++) {
        erg_failalloc_arm(0, 0);
        erg_compose_workspace *ws = use_ws ? erg_compose_workspace_new() : NULL;
        if (use_ws)
            assert_non_null(ws);
        o.workspace = ws;
        erg_failalloc_arm(n, and_after);
        int rc = erg_schedule_compose(s, &o, &r, &d);
        erg_failalloc_arm(0, 0);
        if (rc == ERG_OK) {
            assert_same(&ref, &r);
            erg_report_free(&r);
        } else {
            assert_int_equal(rc, ERG_ENOMEM);
            assert_null(r.devices); /* nothing half-written */
            failures++;
        }
        if (use_ws) { /* the workspace is still good */
            assert_int_equal(erg_schedule_compose(s, &o, &r, &d), ERG_OK);
            assert_same(&ref, &r);
            erg_report_free(&r);
        }
        erg_compose_workspace_free(ws);
    }
    erg_report_free(&ref);
    return failures;
}

static void compose_out_of_memory(void **state)
{
    (void)state;
    erg_schedule *p = pipeline(), *t = twins();
    for (int use_ws = 0; use_ws <= 1; use_ws++)
        for (int and_after = 0; and_after <= 1; and_after++) {
            assert_true(each_failed(p, use_ws, and_after) > 0);
            assert_true(each_failed(t, use_ws, and_after) > 0);
        }
    erg_schedule_free(p);
    erg_schedule_free(t);
}

/* A warm workspace asks for none of its working arrays again for a schedule it has composed: fewer
 * allocations than a composition in its own memory, and the workspace does not grow. A workspace
 * that cannot be had is NULL. */
static void warm_workspace_needs_less(void **state)
{
    (void)state;
    erg_schedule *p = pipeline();
    erg_compose_workspace *ws = erg_compose_workspace_new();
    assert_non_null(ws);
    erg_compose_options o;
    erg_compose_options_init(&o);
    erg_report r;
    erg_diag d;
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg_schedule_compose(p, &o, &r, &d), ERG_OK);
    unsigned long cold = erg_failalloc_calls();
    erg_report_free(&r);
    o.workspace = ws;
    assert_int_equal(erg_schedule_compose(p, &o, &r, &d), ERG_OK);
    erg_report_free(&r);
    size_t bytes = erg_compose_workspace_bytes(ws);
    assert_true(bytes > 0);
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg_schedule_compose(p, &o, &r, &d), ERG_OK);
    unsigned long warm = erg_failalloc_calls();
    erg_report_free(&r);
    assert_true(warm < cold); /* the working arrays are not asked for */
    assert_int_equal(erg_compose_workspace_bytes(ws), bytes); /* nor grown */
    erg_compose_workspace_free(ws);
    /* the workspace itself, when it cannot be had */
    erg_failalloc_arm(1, 0);
    assert_null(erg_compose_workspace_new());
    erg_failalloc_arm(0, 0);
    erg_schedule_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compose_out_of_memory),
        cmocka_unit_test(warm_workspace_needs_less),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
