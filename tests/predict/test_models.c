/* SPDX-License-Identifier: MIT */
/* The committed models load and reproduce the data they were fitted on. */
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>

#include "erg/predict.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cpu_model_reproduces_its_profile(void **state)
{
    (void)state;
    erg_op_model *m;
    erg_diag diag;
    assert_int_equal(erg_op_model_load(ERG_TEST_SOURCE_DIR "/models/cpu-amd-epyc.json", &m, &diag),
                     ERG_OK);
    assert_string_equal(erg_op_model_target(m), "cpu-amd-epyc");
    assert_int_equal(erg_op_model_grade(m), ERG_GRADE_ESTIMATOR);
    for (unsigned op = 0; op < ERG_OP_COUNT; op++)
        assert_int_equal(erg_op_model_has(m, (erg_op)op), 2);
    erg_op_sample *s;
    size_t n;
    assert_int_equal(
        erg_ops_csv_read(ERG_TEST_SOURCE_DIR "/models/cpu-amd-epyc.ops.csv", 0, &s, &n, &diag),
        ERG_OK);
    assert_int_equal(n, 170);
    double ape[ERG_OP_COUNT][128];
    size_t extrap = 0;
    size_t k[ERG_OP_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s[i].grade, ERG_GRADE_ESTIMATOR);
        erg_op_prediction p;
        assert_int_equal(erg_op_model_predict(m, &s[i].dims, &p, NULL), ERG_OK);
        extrap += p.extrapolated; /* only held-out rows can lie outside the training range */
        unsigned op = s[i].dims.op;
        ape[op][k[op]++] = fabs(p.time_s - s[i].time_s) / s[i].time_s;
    }
    assert_true(extrap <= n / 5);
    /* median relative time error over all rows (training and held-out) under 10% per op */
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        qsort(ape[op], k[op], sizeof(double), cmp);
        double med = ape[op][k[op] / 2];
        if (!(med < 0.10))
            fail_msg("%s: median time error %.1f%%", erg_op_name((erg_op)op), 100 * med);
    }
    free(s);
    erg_op_model_free(m);
}

static void a100_model_predicts_llmcompass_gemm(void **state)
{
    (void)state;
    erg_op_model *m;
    assert_int_equal(
        erg_op_model_load(ERG_TEST_SOURCE_DIR "/models/a100-llmcompass.json", &m, NULL), ERG_OK);
    assert_int_equal(erg_op_model_has(m, ERG_OP_GEMM), 1); /* time only */
    erg_op_dims d;
    memset(&d, 0, sizeof d);
    d.op = ERG_OP_GEMM;
    d.dtype = ERG_DTYPE_FP16;
    d.m = 4096; /* LLMCompass: 4096 x 12288 x 12288 measured 4.4576 ms on A100 */
    d.n = 12288;
    d.k = 12288;
    erg_op_prediction p;
    assert_int_equal(erg_op_model_predict(m, &d, &p, NULL), ERG_OK);
    erg_assert_rel(p.time_s, 4.4576e-3, 0.10);
    assert_true(isnan(p.energy_j));
    d.dtype = ERG_DTYPE_FP32; /* fitted on fp16 only */
    assert_int_equal(erg_op_model_predict(m, &d, &p, NULL), ERG_ENOTSUP);
    erg_op_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_model_reproduces_its_profile),
        cmocka_unit_test(a100_model_predicts_llmcompass_gemm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
