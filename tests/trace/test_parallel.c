/* SPDX-License-Identifier: MIT */
/* erg_trace_read_files: threads give exactly the trace that reading the files in turn gives. */
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/trace.h"
#include "trace/trace_internal.h"

static char dir[] = "/tmp/erg_trace_par_XXXXXX";
static char paths[6][600];

static void write_file(size_t i, const char *text)
{
    snprintf(paths[i], sizeof paths[i], "%s/r%zu.json", dir, i);
    FILE *f = fopen(paths[i], "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < 6; i++)
        if (paths[i][0])
            unlink(paths[i]);
    return rmdir(dir);
}

/* Rank files: explicit ranks 2 and 0, two without distributedInfo, shared and new names, unknown
 * categories in two files, an overlap on one stream, a B/E pair. */
static void make_files(void)
{
    write_file(0, "{\"distributedInfo\": {\"rank\": 2}, \"traceEvents\": ["
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":"
                  "10,\"dur\":5,"
                  "\"args\":{\"device\":0,\"stream\":7}},"
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"add\",\"pid\":0,\"tid\":7,\"ts\":12,"
                  "\"dur\":5},"
                  "{\"ph\":\"X\",\"cat\":\"odd\",\"name\":\"o\",\"ts\":1,\"dur\":1}],"
                  "\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\"}]}");
    write_file(
        1, "{\"traceEvents\": ["
           "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy "
           "HtoD\",\"pid\":1,\"tid\":3,\"ts\":20,\"dur\":2},"
           "{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"nccl_ar\",\"pid\":1,\"tid\":4,\"ts\":21},"
           "{\"ph\":\"E\",\"pid\":1,\"tid\":4,\"ts\":30},"
           "{\"ph\":\"X\",\"cat\":\"weird\",\"name\":\"w\",\"ts\":1,\"dur\":1},"
           "{\"ph\":\"X\",\"cat\":\"odd\",\"name\":\"o\",\"ts\":1,\"dur\":1}]}");
    write_file(2, "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":"
                  "11,\"dur\":6}]}");
    write_file(3, "[{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset\",\"pid\":0,\"tid\":7,"
                  "\"ts\":40,\"dur\":1}]");
}

static void assert_same(const erg_trace *a, const erg_trace *b)
{
    erg_trace_stats sa, sb;
    erg_trace_get_stats(a, &sa);
    erg_trace_get_stats(b, &sb);
    assert_memory_equal(&sa, &sb, sizeof sa);
    assert_int_equal(a->n_files, b->n_files);
    for (size_t f = 0; f < a->n_files; f++)
        assert_int_equal(a->file_rank[f], b->file_rank[f]);
    assert_string_equal(a->first_file, b->first_file);
    assert_int_equal(a->n_devs, b->n_devs);
    for (size_t d = 0; d < a->n_devs; d++) {
        assert_string_equal(a->devs[d].id, b->devs[d].id);
        assert_string_equal(a->devs[d].name, b->devs[d].name);
        assert_int_equal(a->devs[d].file, b->devs[d].file);
        assert_int_equal(a->devs[d].rank, b->devs[d].rank);
    }
    assert_int_equal(a->n_acts, b->n_acts);
    for (size_t i = 0; i < a->n_acts; i++) {
        const erg__act *x = &a->acts[i], *y = &b->acts[i];
        assert_true(x->start_ns == y->start_ns && x->dur_ns == y->dur_ns);
        assert_int_equal(x->cat, y->cat);
        assert_int_equal(x->device, y->device);
        assert_string_equal(erg__strtab_get(&a->names, x->name),
                            erg__strtab_get(&b->names, y->name));
        assert_string_equal(erg__strtab_get(&a->misc, x->stream),
                            erg__strtab_get(&b->misc, y->stream));
    }
    const char *na, *nb;
    size_t ca, cb;
    size_t k = 0;
    for (; erg_trace_unknown(a, k, &na, &ca) == ERG_OK; k++) {
        assert_int_equal(erg_trace_unknown(b, k, &nb, &cb), ERG_OK);
        assert_string_equal(na, nb);
        assert_int_equal(ca, cb);
    }
    assert_int_equal(erg_trace_unknown(b, k, &nb, &cb), ERG_ERANGE);
}

static erg_trace *sequential(const char *const *list, size_t n, const char *first)
{
    erg_diag d;
    erg_trace *t = erg_trace_new();
    if (first)
        assert_int_equal(erg_trace_read_file(t, first, &d), ERG_OK);
    for (size_t i = 0; i < n; i++)
        if (erg_trace_read_file(t, list[i], &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
    return t;
}

static erg_trace *parallel(const char *const *list, size_t n, const char *first, unsigned jobs)
{
    erg_diag d;
    erg_trace *t = erg_trace_new();
    if (first)
        assert_int_equal(erg_trace_read_file(t, first, &d), ERG_OK);
    if (erg_trace_read_files(t, list, n, jobs, &d) != ERG_OK)
        fail_msg("jobs %u: %s: %s", jobs, d.where, d.detail);
    return t;
}

static void threads_give_the_sequential_trace(void **state)
{
    (void)state;
    make_files();
    /* Ranks: r0 says 2, r1 falls back to 1 (its position), r2 says 0, r3 falls back to 3. */
    const char *const list[4] = {paths[0], paths[1], paths[2], paths[3]};
    for (unsigned jobs = 0; jobs <= 5; jobs++) {
        erg_trace *seq = sequential(list, 4, NULL), *par = parallel(list, 4, NULL, jobs);
        assert_same(seq, par);
        assert_int_equal(par->file_rank[1], 1);
        assert_int_equal(par->file_rank[3], 3);
        assert_string_equal(par->devs[0].id, "rank2/gpu0");
        assert_string_equal(par->devs[0].name, "NVIDIA A100-SXM4-80GB");
        erg_trace_stats s;
        erg_trace_get_stats(par, &s);
        assert_int_equal(s.files, 4);
        assert_int_equal(s.activities, 6);
        assert_int_equal(s.unknown_events, 3);
        assert_int_equal(s.stream_overlaps, 1);
        erg_trace_free(seq);
        erg_trace_free(par);
    }
    /* After a file already read (r3 takes rank 0): r0 says 2, r1 falls back past 2 to 3. */
    const char *const two[2] = {paths[0], paths[1]};
    erg_trace *seq = sequential(two, 2, paths[3]), *par = parallel(two, 2, paths[3], 2);
    assert_same(seq, par);
    assert_int_equal(par->file_rank[2], 3);
    erg_trace_free(seq);
    erg_trace_free(par);
}

static void one_bad_file_keeps_nothing(void **state)
{
    (void)state;
    make_files();
    write_file(4, "{\"traceEvents\": [{\"ph\": \"X\",, }]}");
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_file(t, paths[2], &d), ERG_OK); /* rank 0 */
    erg_trace_stats before, after;
    erg_trace_get_stats(t, &before);
    const char *const bad[3] = {paths[0], paths[4], paths[1]};
    assert_int_equal(erg_trace_read_files(t, bad, 3, 3, &d), ERG_EPARSE);
    assert_true(strncmp(d.where, paths[4], strlen(paths[4])) == 0);
    erg_trace_get_stats(t, &after);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(t->n_acts, 1);
    assert_int_equal(t->n_devs, 1);
    /* A rank taken twice is refused at the merge, and the merge is undone. */
    const char *const clash[3] = {paths[0], paths[1], paths[2]};
    assert_int_equal(erg_trace_read_files(t, clash, 3, 2, &d), ERG_EINVAL);
    assert_string_equal(d.where, paths[2]);
    assert_non_null(strstr(d.detail, "rank 0"));
    erg_trace_get_stats(t, &after);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(t->n_acts, 1);
    assert_int_equal(t->n_devs, 1);
    assert_int_equal(t->n_files, 1);
    assert_int_equal(t->n_unknown, 0);
    /* The trace still reads on. */
    assert_int_equal(erg_trace_read_files(t, clash, 2, 2, &d), ERG_OK);
    assert_int_equal(t->n_files, 3);
    erg_trace_free(t);
    assert_int_equal(erg_trace_read_files(NULL, clash, 2, 2, &d), ERG_EINVAL);
}

/* Ranks from the order of the files: distributedInfo (2, 0, 0) is ignored, in threads or not. */
static void rank_from_order_overrides_distributed_info(void **state)
{
    (void)state;
    make_files();
    write_file(5, "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"
                  "\"ts\":12,\"dur\":6}]}");
    const char *const order[3] = {paths[2], paths[5], paths[0]};
    for (unsigned jobs = 1; jobs <= 3; jobs += 2) {
        erg_diag d;
        erg_trace *t = erg_trace_new();
        assert_int_equal(erg_trace_read_files(t, order, 3, jobs, &d), ERG_EINVAL);
        assert_non_null(strstr(d.detail, "--rank-from-order"));
        erg_trace_set_rank_from_order(t, 1);
        assert_int_equal(erg_trace_read_files(t, order, 3, jobs, &d), ERG_OK);
        assert_int_equal(t->n_files, 3);
        for (int f = 0; f < 3; f++)
            assert_int_equal(t->file_rank[f], f);
        assert_int_equal(t->n_devs, 3);
        assert_string_equal(t->devs[1].id, "rank1/gpu0");
        assert_string_equal(t->devs[2].id, "rank2/gpu0");
        assert_string_equal(t->devs[2].name, "NVIDIA A100-SXM4-80GB");
        /* one more file continues the order */
        assert_int_equal(erg_trace_read_file(t, paths[2], &d), ERG_OK);
        assert_int_equal(t->file_rank[3], 3);
        erg_trace_free(t);
    }
    erg_trace_set_rank_from_order(NULL, 1); /* NULL-safe */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_give_the_sequential_trace),
        cmocka_unit_test(one_bad_file_keeps_nothing),
        cmocka_unit_test(rank_from_order_overrides_distributed_info),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
