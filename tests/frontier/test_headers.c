/* SPDX-License-Identifier: MIT */
/* erg/frontier.h and erg/predict.h (and the other public headers) compile in one translation unit:
 * the frontier's expression operators are erg_expr_op / ERG_EXPR_*, predict's primitive ops erg_op
 * / ERG_OP_*. Both are used here. */
#include "erg/calculus.h"
#include "erg/frontier.h"
#include "erg/predict.h"
#include "erg/signature.h"
#include "support/erg_test.h"

#include <string.h>

static void frontier_and_predict_ops_coexist(void **state)
{
    (void)state;
    /* predict's op names are untouched. */
    assert_string_equal(erg_op_name(ERG_OP_GEMM), "gemm");
    erg_op op;
    assert_int_equal(erg_op_parse("softmax", &op), ERG_OK);
    assert_int_equal(op, ERG_OP_SOFTMAX);

    /* a ⊗ b with the frontier's operator: two points each, Minkowski sum Pareto-min. */
    erg_opsched *os = erg_opsched_new();
    assert_non_null(os);
    assert_int_equal(erg_opsched_add_device(os, "g", 1, NULL), ERG_OK);
    const double pts[2][2][2] = {{{1, 5}, {2, 1}}, {{1, 4}, {3, 1}}};
    const char *names[2] = {"a", "b"};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++) {
            erg_signature s;
            erg_signature_init(&s);
            snprintf(s.device, sizeof s.device, "g");
            s.static_power_w = 1;
            s.time_s = pts[k][j][0];
            s.dynamic_energy_j = pts[k][j][1];
            assert_int_equal(erg_opsched_add_point(os, names[k], &s, NULL, NULL), ERG_OK);
        }
    size_t ids[2], root;
    assert_int_equal(erg_opsched_expr_leaf(os, "a", &ids[0], NULL), ERG_OK);
    assert_int_equal(erg_opsched_expr_leaf(os, "b", &ids[1], NULL), ERG_OK);
    erg_expr_op seq = ERG_EXPR_SEQ;
    assert_int_equal(erg_opsched_expr_op(os, seq, ids, 2, &root, NULL), ERG_OK);
    erg_frontier f;
    assert_int_equal(erg_opsched_frontier(os, NULL, &f, NULL), ERG_OK);
    /* Sums (T, d): (2, 9), (4, 6), (3, 5), (5, 2); E = 1 W·T + d = 11, 10, 8, 7. Pareto-min in
     * (T, E): (2, 11) a0 b0, (3, 8) a1 b0, (5, 7) a1 b1; (4, 10) is dominated by (3, 8). */
    const double want[3][2] = {{2, 11}, {3, 8}, {5, 7}};
    const size_t choice[3][2] = {{0, 0}, {1, 0}, {1, 1}};
    assert_int_equal(f.n_points, 3);
    assert_int_equal(f.n_elements, 2);
    for (size_t i = 0; i < 3; i++) {
        erg_assert_near(f.points[i].time_s, want[i][0], 1e-12);
        erg_assert_near(f.points[i].energy_j, want[i][1], 1e-12);
        assert_int_equal(f.choices[2 * i], choice[i][0]);
        assert_int_equal(f.choices[2 * i + 1], choice[i][1]);
    }
    erg_frontier_free(&f);
    erg_opsched_free(os);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(frontier_and_predict_ops_coexist)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
