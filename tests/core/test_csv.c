/* SPDX-License-Identifier: MIT */
/* core/csv and core/diag: the one CSV line splitter (cells and the columns they start at) and the
 * one position format of diagnostics (FILE:LINE:COL), on hand-counted lines. */
#include <string.h>

#include "core/csv.h"
#include "core/diag.h"
#include "erg/error.h"
#include "support/erg_test.h"

static void split_gives_cells_and_their_columns(void **state)
{
    (void)state;
    /* columns counted by hand:   1234567890123456789012 */
    const char *line = "op, gemm ,\"bf16\",,  42\r";
    struct erg__csv_cell c[8];
    size_t n = erg__csv_split(line, line + strlen(line), c, 8);
    assert_int_equal(n, 5);
    assert_int_equal(c[0].len, 2);
    assert_memory_equal(c[0].s, "op", 2);
    assert_int_equal(c[0].col, 1);
    assert_int_equal(c[1].len, 4); /* blanks trimmed */
    assert_memory_equal(c[1].s, "gemm", 4);
    assert_int_equal(c[1].col, 5);
    assert_int_equal(c[2].len, 4); /* one pair of double quotes dropped */
    assert_memory_equal(c[2].s, "bf16", 4);
    assert_int_equal(c[2].col, 12);
    assert_int_equal(c[3].len, 0); /* an empty cell */
    assert_int_equal(c[4].len, 2); /* the CR trimmed */
    assert_memory_equal(c[4].s, "42", 2);
    assert_int_equal(c[4].col, 21);
    /* more cells than room: the count, only max stored */
    assert_int_equal(erg__csv_split(line, line + strlen(line), c, 2), 5);
    /* an empty line is one empty cell */
    assert_int_equal(erg__csv_split(line, line, c, 8), 1);
    assert_int_equal(c[0].len, 0);
}

static void split_inplace_terminates_each_cell(void **state)
{
    (void)state;
    char line[] = " a ,\"b c\", d";
    struct erg__csv_cell c[4];
    assert_int_equal(erg__csv_split_inplace(line, c, 4), 3);
    assert_string_equal(c[0].s, "a");
    assert_string_equal(c[1].s, "b c");
    assert_string_equal(c[2].s, "d");
    assert_int_equal(c[2].col, 12);
}

static void diag_at_writes_file_line_column(void **state)
{
    (void)state;
    erg_diag d;
    assert_int_equal(erg__diag_at(&d, ERG_EPARSE, "ops.csv", 3, 14, "bad %s", "cell"), ERG_EPARSE);
    assert_string_equal(d.where, "ops.csv:3:14");
    assert_string_equal(d.detail, "bad cell");
    assert_int_equal(d.status, ERG_EPARSE);
    erg__diag_at(&d, ERG_EPARSE, "t.csv", 7, 0, "x");
    assert_string_equal(d.where, "t.csv:7");
    erg__diag_at(&d, ERG_EIO, "t.csv", 0, 0, "x");
    assert_string_equal(d.where, "t.csv");
    char buf[64];
    erg_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "t.csv: x");
    assert_int_equal(erg__diag_at(NULL, ERG_EIO, "f", 1, 1, "x"), ERG_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_gives_cells_and_their_columns),
        cmocka_unit_test(split_inplace_terminates_each_cell),
        cmocka_unit_test(diag_at_writes_file_line_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
