/* SPDX-License-Identifier: MIT */
/* ops.csv and grid files: round trip, and every bad input located as file:line:col. */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/predict.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(dir, sizeof dir, "csv");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(dir);
}

static const char *write_tmp(const char *name, const char *text)
{
    return erg_tmp_put(dir, name, text);
}

#define HEADER                                                                                     \
    "op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade\n"

static void round_trip_keeps_every_field(void **state)
{
    (void)state;
    erg_op_sample s[3];
    memset(s, 0, sizeof s);
    s[0].dims.op = ERG_OP_GEMM;
    s[0].dims.m = 64;
    s[0].dims.n = 128;
    s[0].dims.k = 256;
    strcpy(s[0].kappa, "openblas-sgemm");
    s[0].reps = 1000;
    s[0].time_s = 1.25e-5;
    s[0].time_sd_s = 1e-7;
    s[0].energy_j = 1.875e-4;
    s[0].energy_sd_j = 1.5e-6;
    s[0].grade = ERG_GRADE_ESTIMATOR;
    s[0].has_grade = 1;
    s[1].dims.op = ERG_OP_RMSNORM;
    s[1].dims.tokens = 8;
    s[1].dims.d_model = 4096;
    s[1].reps = 3;
    s[1].time_s = 2e-6;
    s[1].time_sd_s = 0;
    s[1].energy_j = 3e-5;
    s[1].energy_sd_j = 0;
    s[1].grade = ERG_GRADE_HW_SHUNT;
    s[1].has_grade = 1;
    s[2].dims.op = ERG_OP_SOFTMAX; /* time only */
    s[2].dims.tokens = 512;
    s[2].dims.dtype = ERG_DTYPE_BF16;
    s[2].time_s = 1e-4;
    s[2].time_sd_s = NAN;
    s[2].energy_j = NAN;
    s[2].energy_sd_j = NAN;
    char path[128];
    snprintf(path, sizeof path, "%s/rt.csv", dir);
    assert_int_equal(erg_ops_csv_write(path, s, 3, NULL), ERG_OK);
    erg_op_sample *r;
    size_t n;
    erg_diag diag;
    assert_int_equal(erg_ops_csv_read(path, 0, &r, &n, &diag), ERG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(r[0].dims.op, ERG_OP_GEMM);
    assert_int_equal(r[0].dims.k, 256);
    assert_int_equal(r[0].dims.tokens, 0);
    assert_string_equal(r[0].kappa, "openblas-sgemm");
    assert_int_equal(r[0].reps, 1000);
    erg_assert_rel(r[0].time_s, 1.25e-5, 1e-9);
    erg_assert_rel(r[0].energy_sd_j, 1.5e-6, 1e-9);
    assert_int_equal(r[0].grade, ERG_GRADE_ESTIMATOR);
    assert_int_equal(r[1].dims.d_model, 4096);
    assert_int_equal(r[1].grade, ERG_GRADE_HW_SHUNT);
    assert_int_equal(r[2].dims.dtype, ERG_DTYPE_BF16);
    assert_true(isnan(r[2].energy_j));
    assert_int_equal(r[2].has_grade, 0);
    free(r);
    /* the file's first line is the specified header */
    FILE *f = fopen(path, "r");
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, HEADER);
}

static void grid_files_take_columns_up_to_dtype(void **state)
{
    (void)state;
    const char *p = write_tmp("g.csv", "# a grid\nop,kappa,m,n,k,tokens,d_model,dtype\n"
                                       "gemm,,8,16,32,,,fp32\n\nrmsnorm,,,,,4,256,\n");
    erg_op_sample *r;
    size_t n;
    assert_int_equal(erg_ops_csv_read(p, 1, &r, &n, NULL), ERG_OK);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].dims.n, 16);
    assert_int_equal(r[1].dims.dtype, ERG_DTYPE_FP32);
    free(r);
    /* a grid file is not an ops.csv: time_s is missing */
    erg_diag diag;
    assert_int_equal(erg_ops_csv_read(p, 0, &r, &n, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "missing column 'reps'"));
}

struct bad {
    const char *text, *where_suffix, *detail;
};

/* The committed default grid reads, and covers what docs/predict.md says it does: the call
 * overhead (a 1×1×1 GEMM) and decode-time GEMMs with one row, as well as the large sizes; the
 * committed default-grid profile has one row per configuration. */
static void committed_default_grid_covers_small_and_decode_gemms(void **state)
{
    (void)state;
    erg_op_sample *g, *p;
    size_t n, np;
    erg_diag diag;
    assert_int_equal(erg_ops_csv_read(ERG_TEST_SOURCE_DIR "/grids/cpu.csv", 1, &g, &n, &diag),
                     ERG_OK);
    assert_int_equal(n, 186);
    size_t count[ERG_OP_COUNT] = {0}, one_row = 0, cube1 = 0;
    int64_t max_nd = 0, max_sm = 0;
    for (size_t i = 0; i < n; i++) {
        count[g[i].dims.op]++;
        const erg_op_dims *d = &g[i].dims;
        if (d->op == ERG_OP_GEMM && d->m == 1 && d->n >= 4096 && d->k >= 4096)
            one_row++;
        if (d->op == ERG_OP_GEMM && d->m == 1 && d->n == 1 && d->k == 1)
            cube1++;
        if (d->op == ERG_OP_RMSNORM && d->tokens * d->d_model > max_nd)
            max_nd = d->tokens * d->d_model;
        if (d->op == ERG_OP_SOFTMAX && d->tokens > max_sm)
            max_sm = d->tokens;
    }
    assert_int_equal(count[ERG_OP_RMSNORM], 45);
    assert_int_equal(count[ERG_OP_SOFTMAX], 25);
    assert_int_equal(count[ERG_OP_GEMM], 116);
    assert_int_equal(cube1, 1);
    assert_int_equal(one_row, 3); /* 1×4096×4096, 1×11008×4096, 1×4096×11008 */
    assert_int_equal(max_nd, 4096 * 8192);
    assert_int_equal(max_sm, 4096);
    assert_int_equal(erg_ops_csv_read(ERG_TEST_SOURCE_DIR
                                      "/models/cpu-amd-epyc.default-grid.ops.csv",
                                      0, &p, &np, &diag),
                     ERG_OK);
    assert_int_equal(np, n);
    for (size_t i = 0; i < np; i++) {
        assert_memory_equal(&p[i].dims, &g[i].dims, sizeof p[i].dims); /* the grid, in order */
        assert_true(p[i].time_s > 0 && p[i].reps >= 2);
        assert_int_equal(p[i].grade, ERG_GRADE_ESTIMATOR);
    }
    free(p);
    free(g);
}

static void bad_inputs_name_file_line_and_column(void **state)
{
    (void)state;
    static const struct bad cases[] = {
        {"op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j\n", ":1:1",
         "missing column 'grade'"},
        {HEADER "gemm,x,8,abc,8,,,fp32,1,1e-3,,,,\n", ":2:10", "column 'n': expected an integer"},
        {HEADER "gemm,x,8,-8,8,,,fp32,1,1e-3,,,,\n", ":2:10", "must not be negative"},
        {HEADER "conv,x,8,8,8,,,fp32,1,1e-3,,,,\n", ":2:1", "unknown op 'conv'"},
        {HEADER "gemm,x,8,8,8,,,fp32,1,fast,,,,\n", ":2:23", "column 'time_s': expected a number"},
        {HEADER "gemm,x,8,8,8,,,fp32,1,,,,,\n", ":2:23", "column 'time_s': a value is required"},
        {HEADER "gemm,x,8,8,8,,,fp32,1,1e-3,,2e-3,,\n", ":2:35", "its grade is required"},
        {HEADER "gemm,x,8,8,8,,,fp32,1,1e-3,,2e-3,,bogus\n", ":2:35", "unknown grade 'bogus'"},
        {HEADER "gemm,x,8,8,8,,,fp64,1,1e-3,,,,\n", ":2:16", "unknown dtype 'fp64'"},
        {HEADER "gemm,x,8,8\n", ":2:1", "expected 14 cells"},
        {HEADER "rmsnorm,x,,,,8,,fp32,1,1e-3,,,,\n", ":2:1", "rmsnorm needs tokens > 0"},
        {"op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade,x\n",
         ":1:86", "unknown column 'x'"},
        {"", "", "no header line"},
        /* not a CSV with our header at all: say so, not "unknown column '{'" */
        {"{\n  \"erg\": \"schedule/1\",\n  \"name\": \"x\"\n}\n", ":1:1",
         "not an ops CSV (expected the header op,kappa,m,...,grade): it is JSON (\"erg\": "
         "\"schedule/1\")"},
        {"\n\n  [1, 2, 3]\n", ":3:3",
         "not an ops CSV (expected the header op,kappa,m,...,grade): it is JSON"},
        {"{ truncated", ":1:1",
         "not an ops CSV (expected the header op,kappa,m,...,grade): it is JSON"},
        {"time,energy\n1,2\n", ":1:1", "not an ops CSV (expected the header op,kappa,m,...,grade)"},
        {"a,b,c,d,e,f,g,h,i,j,k,l,m2,n2,o,p,q,r,s,t,u,v,w,x,y,z,a1,b1,c1,d1,e1,f1,g1,h1\n", ":1:1",
         "not an ops CSV"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = write_tmp("bad.csv", cases[i].text);
        erg_op_sample *r = NULL;
        size_t n = 0;
        erg_diag diag;
        erg_diag_clear(&diag);
        int rc = erg_ops_csv_read(p, 0, &r, &n, &diag);
        if (rc != ERG_EPARSE)
            fail_msg("case %zu: status %d", i, rc);
        char want[600];
        snprintf(want, sizeof want, "%s%s", p, cases[i].where_suffix);
        if (strcmp(diag.where, want) != 0)
            fail_msg("case %zu: where '%s', expected '%s' (%s)", i, diag.where, want, diag.detail);
        if (!strstr(diag.detail, cases[i].detail))
            fail_msg("case %zu: detail '%s' lacks '%s'", i, diag.detail, cases[i].detail);
        assert_null(r);
    }
    erg_op_sample *r;
    size_t n;
    assert_int_equal(erg_ops_csv_read("/nonexistent/ops.csv", 0, &r, &n, NULL), ERG_ENOENT);
}

/* A grid reader given a JSON file (the trial: examples/attention-layer.json passed to --grid)
 * or a CSV with another header names what it expected, not the first token as a column. */
static void grid_reader_refuses_what_is_not_a_grid_csv(void **state)
{
    (void)state;
    erg_op_sample *r = NULL;
    size_t n = 0;
    erg_diag diag;
    erg_diag_clear(&diag);
    const char *path = ERG_TEST_SOURCE_DIR "/examples/attention-layer.json";
    assert_int_equal(erg_ops_csv_read(path, 1, &r, &n, &diag), ERG_EPARSE);
    char want[600];
    snprintf(want, sizeof want, "%s:1:1", path);
    assert_string_equal(diag.where, want);
    assert_string_equal(diag.detail, "not a grid CSV (expected the header op,kappa,m,...): it is "
                                     "JSON (\"erg\": \"schedule/1\")");
    assert_null(r);
    const char *p = write_tmp("notgrid.csv", "# a grid?\nname,value\nx,1\n");
    erg_diag_clear(&diag);
    assert_int_equal(erg_ops_csv_read(p, 1, &r, &n, &diag), ERG_EPARSE);
    snprintf(want, sizeof want, "%s:2:1", p);
    assert_string_equal(diag.where, want);
    assert_string_equal(diag.detail, "not a grid CSV (expected the header op,kappa,m,...)");
    /* one known column is a grid header with a mistake: the old message still names it */
    p = write_tmp("typo.csv", "op,kapa,m,n,k,tokens,d_model,dtype\n");
    erg_diag_clear(&diag);
    assert_int_equal(erg_ops_csv_read(p, 1, &r, &n, &diag), ERG_EPARSE);
    assert_non_null(strstr(diag.detail, "unknown column 'kapa'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_every_field),
        cmocka_unit_test(grid_files_take_columns_up_to_dtype),
        cmocka_unit_test(bad_inputs_name_file_line_and_column),
        cmocka_unit_test(grid_reader_refuses_what_is_not_a_grid_csv),
        cmocka_unit_test(committed_default_grid_covers_small_and_decode_gemms),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
