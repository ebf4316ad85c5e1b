/* SPDX-License-Identifier: MIT */
/* docs/meters.md's C API block, run verbatim: tests/meter/CMakeLists.txt copies the doc's ```c
 * block into doc_api_block.c.in, included below as the body of one function, so a change of the
 * API that the doc does not follow fails to compile. Run on the estimator backend alone
 * (ERG_BACKENDS=estimator), the window is too short for a figure or gives an estimator one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "erg/error.h"
#include "erg/signature.h"
#include "erg/meter.h"
#include "erg/measure.h"

static void doc_block_runs(void **state)
{
    (void)state;
    erg_diag diag = {0};
#include "doc_api_block.c.in"
    /* r was filled by erg_window_end: a window of this process's few microseconds. */
    assert_true(r.time_s >= 0.0 && r.time_s < 60.0);
    assert_true(r.n_channels >= 1);
    if (!isnan(r.total_energy_j)) {
        assert_true(r.total_energy_j >= 0.0);
        assert_int_equal(r.total_grade, ERG_GRADE_ESTIMATOR);
    }
    return;
fail: /* the block's error path: every call it makes is checked */
    fail_msg("%s: %s (status %d)", diag.where, diag.detail, diag.status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(doc_block_runs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
