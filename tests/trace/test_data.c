/* SPDX-License-Identifier: MIT */
/* The shared HTA traces (../shared/data/traces): counts from SOURCES.md, and the report's figures
 * against an independent computation (a Python json.load of the same file with the default rules'
 * numbers, done once by hand: makespan 660.551005 ms, busy 157.500 ms, d = 28.5211042 J,
 * σ = 0.46539685 J, E = 68.1541645 J). Exits 77 (skipped) when the data are absent. */
#include "support/erg_test.h"

#include <string.h>
#include <unistd.h>

#include "erg/trace.h"
#include "trace/trace_internal.h"

#define TRACES ERG_TEST_SOURCE_DIR "/../shared/data/traces/"
static const char alex[] = TRACES "hta_alexnet_a100_critical_path.json.gz";
static const char nccl[] = TRACES "hta_nccl_2xa100_rank0.json.gz";

static void alexnet_counts(void **state)
{
    (void)state;
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_file(t, alex, &d), ERG_OK);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    /* SOURCES.md: 1408 events, 79 kernels; the file also has 16 memcpy and 3 memset. */
    assert_int_equal(s.events, 1408);
    assert_int_equal(s.activities, 79 + 16 + 3);
    assert_int_equal(s.unknown_events, 0);
    erg_trace_free(t);
}

static void nccl_counts_and_report(void **state)
{
    (void)state;
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_file(t, nccl, &d), ERG_OK);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    /* SOURCES.md: 40573 events, 2700 kernels of which 21 NCCL; plus 960 memcpy, 114 memset. */
    assert_int_equal(s.events, 40573);
    assert_int_equal(s.activities, 2700 + 960 + 114);
    size_t coll = 0;
    for (size_t i = 0; i < t->n_acts; i++)
        coll += t->acts[i].cat == ERG_TRACE_CAT_COLLECTIVE;
    assert_int_equal(coll, 21);
    assert_string_equal(t->devs[0].name, "NVIDIA A100-PG509-200");
    assert_string_equal(t->devs[0].id, "rank0/gpu0");

    erg_rules *r = NULL;
    assert_int_equal(erg_rules_default(&r, &d), ERG_OK);
    erg_trace_report rep;
    int st = erg_trace_report_make(t, r, NULL, &rep, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_rel(rep.time_s, 0.660551005, 1e-9);
    erg_assert_rel(rep.devices[0].busy_s, 0.1575, 1e-6);
    erg_assert_rel(rep.dynamic_energy_j, 28.5211042, 1e-7);
    erg_assert_rel(rep.energy_sd_j, 0.46539685, 1e-7);
    erg_assert_rel(rep.energy_j, 68.1541645, 1e-8);
    assert_int_equal(rep.unmatched, 0);
    assert_int_equal(rep.categories[ERG_TRACE_CAT_COLLECTIVE].count, 21);
    /* Compute and AllReduce overlap on this rank (cross-stream). */
    assert_true(rep.overlap_s > 0 && rep.overlap_s < rep.communication_s);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
}

int main(void)
{
    if (access(alex, R_OK) != 0 || access(nccl, R_OK) != 0) {
        printf("skipped: %s not found\n", TRACES);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alexnet_counts),
        cmocka_unit_test(nccl_counts_and_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
