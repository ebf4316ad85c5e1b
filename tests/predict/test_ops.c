/* SPDX-License-Identifier: MIT */
/* Features, regimes and names of HYMELL's level-1 ops, against hand-computed values. */
#include "support/erg_test.h"

#include <string.h>

#include "erg/predict.h"
#include "predict/kernels.h"

static erg_op_dims gemm(int64_t m, int64_t n, int64_t k)
{
    erg_op_dims d;
    memset(&d, 0, sizeof d);
    d.op = ERG_OP_GEMM;
    d.m = m;
    d.n = n;
    d.k = k;
    return d;
}

static void gemm_features_match_section_3_3(void **state)
{
    (void)state;
    /* M=64, N=128, K=256, fp32: F = 4194304, B_in = (64+128)*256*4 = 196608,
     * B_out = 64*128*4 = 32768, AI = 4194304/229376 = 18.2857..., PF = 8192/256 = 32. */
    erg_op_dims d = gemm(64, 128, 256);
    double x[ERG_OP_MAX_FEATURES];
    assert_int_equal(erg_op_features(&d, x), 11);
    double ai = 4194304.0 / 229376.0;
    erg_assert_rel(x[0], 32.0 * 4194304.0, 1e-15); /* PF·F */
    erg_assert_rel(x[1], 32.0 * 196608.0, 1e-15);  /* PF·B_in */
    erg_assert_rel(x[2], ai * 196608.0, 1e-15);    /* AI·B_in */
    erg_assert_rel(x[3], 4194304.0, 1e-15);
    erg_assert_rel(x[4], 32.0, 1e-15);
    erg_assert_rel(x[5], ai, 1e-15);
    erg_assert_rel(x[6], 32768.0, 1e-15);
    erg_assert_rel(x[7], 196608.0, 1e-15);
    erg_assert_rel(x[8], log10(4194304.0), 1e-15);
    erg_assert_rel(x[9], 1.0 / 32.0, 1e-15);
    erg_assert_near(x[10], 1.0, 0);
    erg_assert_rel(erg_gemm_ai(&d), ai, 1e-15);
    d.dtype = ERG_DTYPE_BF16; /* b = 2 doubles AI */
    erg_assert_rel(erg_gemm_ai(&d), 2 * ai, 1e-15);
}

static void rmsnorm_and_softmax_features(void **state)
{
    (void)state;
    erg_op_dims d;
    memset(&d, 0, sizeof d);
    d.op = ERG_OP_RMSNORM;
    d.tokens = 8;
    d.d_model = 4096;
    double x[ERG_OP_MAX_FEATURES];
    assert_int_equal(erg_op_features(&d, x), 6);
    double want[6] = {32768, 8 * 12.0, 4096, 8, 12, 1};
    for (int i = 0; i < 6; i++)
        erg_assert_rel(x[i], want[i], 1e-15);
    erg_assert_near(erg_op_split_value(&d), 32768, 0);

    memset(&d, 0, sizeof d);
    d.op = ERG_OP_SOFTMAX;
    d.tokens = 1024; /* causal: N², N, log2 N, 1 */
    assert_int_equal(erg_op_features(&d, x), 4);
    erg_assert_near(x[0], 1048576, 0);
    erg_assert_near(x[1], 1024, 0);
    erg_assert_near(x[2], 10, 1e-15);
    erg_assert_near(erg_op_split_value(&d), 1024, 1e-12);
    d.tokens = 0; /* row-wise 4096 x 256: R·C, R, log2 C */
    d.m = 4096;
    d.n = 256;
    erg_op_features(&d, x);
    erg_assert_near(x[0], 1048576, 0);
    erg_assert_near(x[1], 4096, 0);
    erg_assert_near(x[2], 8, 1e-15);
    erg_assert_near(erg_op_split_value(&d), 1024, 1e-9);
}

static void regimes_follow_the_paper_thresholds(void **state)
{
    (void)state;
    erg_op_thresholds t;
    erg_op_thresholds_paper(&t);
    erg_assert_near(t.rms_nd, 2.5e6, 0);
    erg_assert_near(t.softmax_n, 1024, 0);
    erg_assert_near(t.gemm_f, 8.39e6, 0);
    /* F = 2·128³ = 4.19e6 < F_launch: launch-bound */
    erg_op_dims d = gemm(128, 128, 128);
    assert_int_equal(erg_op_regime(&d, &t), 0);
    /* square s, fp32: AI = s/6. s=480: AI 80 (memory); 600: 100 (bal-mem); 1200: 200 (bal-comp);
     * 1800: 300 (compute) */
    d = gemm(480, 480, 480);
    assert_int_equal(erg_op_regime(&d, &t), 1);
    d = gemm(600, 600, 600);
    assert_int_equal(erg_op_regime(&d, &t), 2);
    d = gemm(1200, 1200, 1200);
    assert_int_equal(erg_op_regime(&d, &t), 3);
    d = gemm(1800, 1800, 1800);
    assert_int_equal(erg_op_regime(&d, &t), 4);
    assert_string_equal(erg_op_regime_name(ERG_OP_GEMM, 3), "balanced_comp");
    memset(&d, 0, sizeof d);
    d.op = ERG_OP_SOFTMAX;
    d.tokens = 1023;
    assert_int_equal(erg_op_regime(&d, &t), 0);
    d.tokens = 1024;
    assert_int_equal(erg_op_regime(&d, &t), 1);
}

static void bad_dims_are_rejected(void **state)
{
    (void)state;
    erg_op_dims d = gemm(4, 0, 4);
    erg_diag diag;
    erg_diag_clear(&diag);
    assert_int_equal(erg_op_dims_check(&d, &diag), ERG_EINVAL);
    assert_non_null(strstr(diag.detail, "m, n, k"));
    d = gemm(-4, 4, 4);
    assert_int_equal(erg_op_dims_check(&d, NULL), ERG_EINVAL);
    double x[ERG_OP_MAX_FEATURES];
    assert_int_equal(erg_op_features(&d, x), 0);
    erg_op op;
    assert_int_equal(erg_op_parse("conv2d", &op), ERG_EINVAL);
    assert_int_equal(erg_op_parse("softmax", &op), ERG_OK);
    assert_int_equal(op, ERG_OP_SOFTMAX);
}

static void kernels_compute_what_they_claim(void **state)
{
    (void)state;
    enum { T = 3, D = 37, N = 19, M = 5, K = 7, NN = 6 };
    float x[T * D], w[D], y[T * D];
    for (int i = 0; i < T * D; i++)
        x[i] = (float)((i * 7 % 11) - 5) * 0.25f;
    for (int j = 0; j < D; j++)
        w[j] = 1.0f + 0.01f * (float)j;
    erg__rmsnorm_f32(x, w, y, T, D, 1e-6f);
    for (int i = 0; i < T; i++) {
        double ss = 0;
        for (int j = 0; j < D; j++)
            ss += (double)x[i * D + j] * (double)x[i * D + j];
        double r = 1.0 / sqrt(ss / D + 1e-6);
        for (int j = 0; j < D; j++)
            erg_assert_near((double)y[i * D + j], (double)x[i * D + j] * r * (double)w[j], 1e-5);
    }
    float s[N * N], p[N * N];
    for (int i = 0; i < N * N; i++)
        s[i] = (float)((i * 13 % 17) - 8) * 0.3f;
    erg__softmax_causal_f32(s, p, N);
    for (int i = 0; i < N; i++) {
        double sum = 0, z = 0, mx = (double)s[i * N];
        for (int j = 0; j <= i; j++)
            mx = fmax(mx, (double)s[i * N + j]);
        for (int j = 0; j <= i; j++)
            z += exp((double)s[i * N + j] - mx);
        for (int j = 0; j < N; j++) {
            if (j > i)
                erg_assert_near((double)p[i * N + j], 0.0, 0);
            else
                erg_assert_near((double)p[i * N + j], exp((double)s[i * N + j] - mx) / z, 1e-6);
            sum += (double)p[i * N + j];
        }
        erg_assert_near(sum, 1.0, 1e-5);
    }
    float a[M * K], b[K * NN], c[M * NN];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < K * NN; i++)
        b[i] = (float)(i % 3) + 0.5f;
    erg__gemm_f32(a, b, c, M, NN, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < NN; j++) {
            double r = 0;
            for (int q = 0; q < K; q++)
                r += (double)a[i * K + q] * (double)b[q * NN + j];
            erg_assert_near((double)c[i * NN + j], r, 1e-4);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_features_match_section_3_3),
        cmocka_unit_test(rmsnorm_and_softmax_features),
        cmocka_unit_test(regimes_follow_the_paper_thresholds),
        cmocka_unit_test(bad_dims_are_rejected),
        cmocka_unit_test(kernels_compute_what_they_claim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
