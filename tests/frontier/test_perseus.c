/* SPDX-License-Identifier: MIT */
/* Real data: the frontier of Perseus's GPT-3 175B 1F1B pipeline (8 A100 stages, 12 microbatches)
 * from its measured stage profile, against the frontier Perseus computed from the same profile.
 * Under Perseus's accounting (durations floored to 1 ms, idle GPUs at the blocking power P_b),
 * erg's frontier must start at Perseus's fastest iteration time and lie on or below Perseus's
 * curve at every iteration time. Skips (77) when ../shared/data is absent. */
#include "perseus_dag.h"
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>

static char csv_path[1024], ref_path[1024];

static void perseus_frontier_is_at_least_as_good(void **state)
{
    (void)state;
    erg_opsched *os;
    assert_int_equal(perseus_build(csv_path, 86.3, 1, 12, &os), 0);
    erg_frontier f;
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_opsched_frontier(os, NULL, &f, &diag), ERG_OK);
    assert_int_equal(f.method, ERG_FRONTIER_RELAXATION);
    assert_int_equal(f.n_elements, 8 * 12 * 2);
    double *rt, *re;
    size_t rn;
    assert_int_equal(perseus_read_frontier(ref_path, &rt, &re, &rn), 0);
    assert_true(rn > 600);
    double rmin = INFINITY;
    for (size_t i = 0; i < rn; i++)
        rmin = fmin(rmin, rt[i]);
    /* Same fastest iteration time: 2.818 s. */
    erg_assert_near(f.points[0].time_s, rmin, 1e-9);
    erg_assert_near(f.points[0].time_s, 2.818, 1e-9);
    size_t compared = 0;
    for (size_t i = 0; i < rn; i++) {
        double best = INFINITY; /* erg's least energy finishing by rt[i] */
        for (size_t j = 0; j < f.n_points && f.points[j].time_s <= rt[i] + 1e-12; j++)
            best = f.points[j].energy_j;
        if (!(best <= re[i] + 1e-6))
            fail_msg("at %.4f s erg %.3f J is above Perseus %.3f J", rt[i], best, re[i]);
        compared++;
    }
    assert_int_equal(compared, rn);
    /* The rounding loses little against the relaxation. */
    for (size_t j = 0; j < f.n_points; j++) {
        assert_true(f.points[j].bound_j <= f.points[j].energy_j);
        assert_true(f.points[j].energy_j - f.points[j].bound_j < 0.005 * f.points[j].energy_j);
        erg_assert_rel(f.points[j].static_energy_j, 8 * 86.3 * f.points[j].time_s, 1e-9);
    }
    free(rt);
    free(re);
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

int main(void)
{
    const char *src = getenv("ERG_TEST_SOURCE_DIR");
    if (!src)
        src = ERG_TEST_SOURCE_DIR;
    snprintf(csv_path, sizeof csv_path, "%s/%s", src, PERSEUS_PROFILE);
    snprintf(ref_path, sizeof ref_path, "%s/%s", src, PERSEUS_FRONTIER);
    FILE *f = fopen(csv_path, "r"), *g = fopen(ref_path, "r");
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    if (!f || !g) {
        printf("skipped: %s or %s not found\n", csv_path, ref_path);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(perseus_frontier_is_at_least_as_good),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
