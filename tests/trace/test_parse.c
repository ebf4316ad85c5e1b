/* SPDX-License-Identifier: MIT */
/* Streaming import: formats, phases, categories, devices, timestamps, and bad or odd input. */
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "erg/trace.h"
#include "trace/trace_internal.h"
#include "trace/trace_compare.h"

static int read_str(erg_trace *t, const char *json, erg_diag *d)
{
    return erg_trace_read_buffer(t, json, strlen(json), "t.json", d);
}

static erg_trace *ok_trace(const char *json)
{
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_non_null(t);
    if (read_str(t, json, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    return t;
}

static const char *act_name(const erg_trace *t, size_t i)
{
    return erg__strtab_get(&t->names, t->acts[i].name);
}

static void kineto_object_format_keeps_gpu_activities(void **state)
{
    (void)state;
    /* deviceProperties after the events; distributedInfo before; fractional µs timestamps. */
    erg_trace *t = ok_trace(
        "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3, \"pg_config\": [{\"ranks\": "
        "[0]}]},"
        " \"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": 7,"
        "  \"ts\": 4458676983543.183, \"dur\": 41.407, \"args\": {\"device\": 0, \"stream\": 7,"
        "  \"grid\": [512, 1, 1], \"nested\": {\"device\": 5}}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float\","
        "  \"pid\": 0, \"tid\": 40, \"ts\": 4458677009853.422, \"dur\": 2636.669,"
        "  \"args\": {\"device\": 0, \"stream\": 40}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"my_allgather\", \"pid\": 0, \"tid\": 41,"
        "  \"ts\": 4458677009853, \"dur\": 1, \"args\": {\"Collective name\": \"allgather\","
        "  \"device\": 0, \"stream\": 41}},"
        "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD\", \"pid\": 0, \"tid\": "
        "7,"
        "  \"ts\": 4458677052061.431, \"dur\": 5.088, \"args\": {\"device\": 0, \"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 2, "
        "\"tid\": 3,"
        "  \"ts\": 10, \"dur\": 2},"
        "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"old_spelling\", \"pid\": 0, \"tid\": 7,"
        "  \"ts\": 1e3, \"dur\": 0.5e1, \"args\": {\"device\": 0, \"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 9, \"tid\": 9, "
        "\"ts\": 1, \"dur\": 1},"
        "{\"ph\": \"f\", \"cat\": \"ac2g\", \"id\": 1, \"pid\": 9, \"tid\": 9, \"ts\": 1, \"bp\": "
        "\"e\"},"
        "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"x\"}},"
        "{\"ph\": \"X\", \"cat\": \"weird\", \"name\": \"w\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
        "\"dur\": 1},"
        "{\"ph\": \"X\", \"name\": \"no category\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"weird\", \"name\": \"w2\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
        "\"dur\": 1}"
        "], \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-PG509-200\", \"numSms\": "
        "108}],"
        " \"traceName\": \"x\"}");
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.files, 1);
    assert_int_equal(s.events, 12);
    assert_int_equal(s.activities, 6);
    assert_int_equal(s.host_events, 3);
    assert_int_equal(s.unknown_events, 3);
    const char *un;
    size_t uc;
    assert_int_equal(erg_trace_unknown(t, 0, &un, &uc), ERG_OK);
    assert_string_equal(un, "weird");
    assert_int_equal(uc, 2);
    assert_int_equal(erg_trace_unknown(t, 1, &un, &uc), ERG_OK);
    assert_string_equal(un, "(no category)");
    assert_int_equal(erg_trace_unknown(t, 2, &un, &uc), ERG_ERANGE);

    /* Exact nanoseconds from fractional microseconds. */
    assert_true(t->acts[0].start_ns == INT64_C(4458676983543183));
    assert_true(t->acts[0].dur_ns == 41407);
    assert_string_equal(act_name(t, 0), "k1");
    assert_int_equal(t->acts[0].cat, ERG_TRACE_CAT_KERNEL);
    assert_int_equal(t->acts[1].cat, ERG_TRACE_CAT_COLLECTIVE); /* by name */
    assert_true(t->acts[1].dur_ns == 2636669);
    assert_int_equal(t->acts[2].cat, ERG_TRACE_CAT_COLLECTIVE); /* by args["Collective name"] */
    assert_int_equal(t->acts[3].cat, ERG_TRACE_CAT_MEMCPY);
    assert_int_equal(t->acts[4].cat, ERG_TRACE_CAT_MEMSET);
    assert_int_equal(t->acts[5].cat, ERG_TRACE_CAT_KERNEL);
    assert_true(t->acts[5].start_ns == 1000000 && t->acts[5].dur_ns == 5000); /* 1e3 µs, 0.5e1 µs */

    /* Devices: args.device 0 (the nested "device": 5 is not it), and pid 2 as fallback. */
    assert_int_equal(t->n_devs, 2);
    assert_int_equal(t->acts[0].device, t->acts[3].device);
    assert_string_equal(t->devs[t->acts[0].device].id, "rank3/gpu0");
    assert_string_equal(t->devs[t->acts[0].device].name, "NVIDIA A100-PG509-200");
    assert_string_equal(t->devs[t->acts[4].device].id, "rank3/gpu2");
    assert_string_equal(t->devs[t->acts[4].device].name, "");
    /* Streams: args.stream, else tid. */
    assert_string_equal(erg__strtab_get(&t->misc, t->acts[1].stream), "40");
    assert_string_equal(erg__strtab_get(&t->misc, t->acts[4].stream), "3");
    erg_trace_free(t);
}

static void array_format_and_begin_end_pairs(void **state)
{
    (void)state;
    erg_trace *t = ok_trace("[{\"ph\": \"B\", \"cat\": \"kernel\", \"name\": \"kb\", \"pid\": 0, "
                            "\"tid\": 7, \"ts\": 10},"
                            " {\"ph\": \"B\", \"cat\": \"user_annotation\", \"name\": \"inner\", "
                            "\"pid\": 0, \"tid\": 7, \"ts\": 12},"
                            " {\"ph\": \"E\", \"pid\": 0, \"tid\": 7, \"ts\": 20},"
                            " {\"ph\": \"E\", \"pid\": 0, \"tid\": 7, \"ts\": 25.5},"
                            " {\"ph\": \"E\", \"pid\": 0, \"tid\": 8, \"ts\": 30},"
                            " {\"ph\": \"B\", \"cat\": \"gpu_memcpy\", \"name\": \"open\", "
                            "\"pid\": 0, \"tid\": 9, \"ts\": 40},"
                            " {\"ph\": \"B\", \"cat\": \"kernel\", \"name\": \"ar\", \"pid\": 0, "
                            "\"tid\": 5, \"ts\": 50, \"args\": {\"Collective name\": {\"op\": 1}}},"
                            " {\"ph\": \"E\", \"pid\": 0, \"tid\": 5, \"ts\": 60},"
                            " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kx\", \"pid\": 0, "
                            "\"tid\": 7, \"ts\": 30, \"dur\": 1}]");
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.activities, 3);
    assert_string_equal(act_name(t, 0), "kb");
    assert_true(t->acts[0].start_ns == 10000 && t->acts[0].dur_ns == 15500);
    assert_string_equal(act_name(t, 1), "ar"); /* a collective by args, as a B/E pair */
    assert_int_equal(t->acts[1].cat, ERG_TRACE_CAT_COLLECTIVE);
    assert_true(t->acts[1].dur_ns == 10000);
    assert_string_equal(act_name(t, 2), "kx");
    assert_int_equal(s.unmatched_end, 1);
    assert_int_equal(s.unclosed_begin, 1);
    assert_string_equal(t->devs[0].id, "rank0/gpu0");
    erg_trace_free(t);

    /* The array format may lack its closing bracket, even after a trailing comma. */
    t = ok_trace(
        "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1, \"dur\": 2},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 3, \"dur\": 2},\n");
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.activities, 2);
    erg_trace_free(t);
    /* ... but not in the middle of an event. */
    erg_diag d;
    t = erg_trace_new();
    assert_int_equal(
        read_str(t, "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1, ", &d),
        ERG_EPARSE);
    assert_non_null(strstr(d.detail, "ends early"));
    erg_trace_free(t);
}

static void durations_problems_are_counted_not_fatal(void **state)
{
    (void)state;
    erg_trace *t = ok_trace(
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":-"
        "5},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nodur\",\"pid\":0,\"tid\":7,\"ts\":100},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nots\",\"pid\":0,\"tid\":7,\"dur\":3},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"strdur\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":"
        "\"3\"},"
        "{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"backwards\",\"pid\":0,\"tid\":7,\"ts\":50},"
        "{\"ph\":\"E\",\"pid\":0,\"tid\":7,\"ts\":40},"
        /* out of order on stream 7, and overlapping on stream 7 */
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":10}"
        ","
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":10}"
        ","
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"c\",\"pid\":0,\"tid\":7,\"ts\":205,\"dur\":10}"
        ","
        /* another stream: no overlap with stream 7 counted */
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"d\",\"pid\":0,\"tid\":8,\"ts\":100,\"dur\":"
        "500},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"zero\",\"pid\":0,\"tid\":8,\"ts\":700,\"dur\":"
        "0}"
        "]}");
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.negative_duration, 2);
    assert_int_equal(s.missing_duration, 3);
    assert_int_equal(s.activities, 5);
    assert_int_equal(s.out_of_order, 1);
    assert_int_equal(s.stream_overlaps, 1);
    erg_trace_free(t);
}

/* A dropped GPU event (stats.missing_duration) is named by where it is, not only counted: the
 * first one's file:line:col and what was wrong, with the fast reader and with yajl alone, from a
 * buffer and from a gz file read again for the line. */
static char *write_gz(const char *text, size_t *gz_len);

static void dropped_event_is_located(void **state)
{
    (void)state;
    const char *json = "{\"traceEvents\": [\n"
                       "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"pid\":0,\"tid\":7,"
                       "\"ts\":1,\"dur\":2},\n"
                       "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"strdur\",\"pid\":0,"
                       "\"tid\":7,\"ts\":5,\"dur\":\"3\"},\n"
                       "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nodur\",\"pid\":0,\"tid\":7,"
                       "\"ts\":9}\n"
                       "]}";
    for (int yajl = 0; yajl < 2; yajl++) {
        erg_trace *t = erg_trace_new();
        assert_non_null(t);
        erg__trace_set_yajl_only(t, yajl);
        erg_diag d;
        assert_int_equal(read_str(t, json, &d), ERG_OK);
        erg_trace_stats s;
        erg_trace_get_stats(t, &s);
        assert_int_equal(s.missing_duration, 2);
        const char *where = NULL, *why = NULL;
        assert_int_equal(erg_trace_first_dropped(t, &where, &why), ERG_OK);
        assert_string_equal(where, "t.json:3:3");
        assert_string_equal(why, "kernel \"strdur\": dur is not a number");
        erg_trace_free(t);
    }
    /* a file: the event is found again in it (here in the second 64 KiB chunk, a B without ts) */
    size_t n = 2000;
    char *big = malloc(n * 100 + 256);
    assert_non_null(big);
    size_t k = (size_t)sprintf(big, "[");
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(big + k,
                             "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                             "\"tid\":7,\"ts\":%zu,\"dur\":1}\n",
                             i ? "," : "", i * 10);
    sprintf(big + k, ",{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"late\",\"pid\":0,"
                     "\"tid\":7}]");
    size_t gz_len;
    char *path = write_gz(big, &gz_len);
    erg_trace *t = erg_trace_new();
    erg_diag d;
    assert_int_equal(erg_trace_read_file(t, path, &d), ERG_OK);
    const char *where = NULL, *why = NULL;
    assert_int_equal(erg_trace_first_dropped(t, &where, &why), ERG_OK);
    char want[600];
    snprintf(want, sizeof want, "%s:%zu:2", path, n + 1);
    assert_string_equal(where, want);
    assert_string_equal(why, "kernel \"late\": no ts");
    erg_trace_free(t);
    unlink(path);
    free(big);
    /* nothing dropped: ERG_ENOENT */
    t = ok_trace("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                 "\"ts\":1,\"dur\":2}]");
    assert_int_equal(erg_trace_first_dropped(t, &where, &why), ERG_ENOENT);
    erg_trace_free(t);
}

static void expect_parse_error(const char *json, const char *where, const char *needle)
{
    erg_diag d;
    erg_trace *t = erg_trace_new();
    assert_int_equal(read_str(t, json, &d), ERG_EPARSE);
    if (where)
        assert_string_equal(d.where, where);
    if (!strstr(d.detail, needle))
        fail_msg("detail \"%s\" lacks \"%s\"", d.detail, needle);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.files, 0);
    assert_int_equal(s.activities, 0);
    erg_trace_free(t);
}

static void malformed_input_names_line_column_and_byte(void **state)
{
    (void)state;
    /* The stray comma is byte 32 (from 0), on line 2 column 15. */
    expect_parse_error("{\"traceEvents\": [\n"
                       "  {\"ph\": \"X\", ,\"cat\": \"kernel\"}]}",
                       "t.json:2:15", "byte 32");
    expect_parse_error(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 2", NULL,
        "ends early");
    expect_parse_error("", "t.json", "empty file");
    expect_parse_error("   \n ", NULL, "ends early");
    expect_parse_error("42", "t.json", "not a trace");
    expect_parse_error("{\"traceEvents\": []} {}", NULL, "byte");
}

static void activities_kept_before_an_error_are_dropped(void **state)
{
    (void)state;
    erg_diag d;
    erg_trace *t = ok_trace("{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\","
                            "\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1}]}");
    assert_int_equal(
        read_str(t,
                 "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\","
                 "\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"cat\":\"zz\"},",
                 &d),
        ERG_EPARSE);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.files, 1);
    assert_int_equal(s.activities, 1);
    assert_int_equal(s.unknown_events, 0);
    assert_int_equal(t->n_devs, 1);
    erg_trace_free(t);
}

static char *write_gz(const char *text, size_t *gz_len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/erg_trace_gz_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    gzFile g = gzdopen(fd, "wb");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    assert_int_equal(gzclose(g), Z_OK);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *gz_len = (size_t)ftell(f);
    fclose(f);
    return path;
}

static void gzip_files_stream_and_truncation_is_reported(void **state)
{
    (void)state;
    /* Large enough to span several read chunks. */
    size_t n = 20000;
    char *json = malloc(n * 120 + 64);
    assert_non_null(json);
    size_t k = (size_t)sprintf(json, "{\"traceEvents\": [");
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(json + k,
                             "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%zu\",\"pid\":0,"
                             "\"tid\":7,\"ts\":%zu.5,\"dur\":1.25}",
                             i ? "," : "", i % 7, i * 10);
    sprintf(json + k, "]}");
    size_t gz_len;
    char *path = write_gz(json, &gz_len);
    erg_diag d;
    erg_trace *t = erg_trace_new();
    int st = erg_trace_read_file(t, path, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.activities, n);
    assert_true(s.json_bytes == strlen(json));
    assert_true(t->acts[n - 1].start_ns == (int64_t)((n - 1) * 10000 + 500));
    assert_true(t->acts[n - 1].dur_ns == 1250);
    assert_int_equal(t->names.n, 7);
    erg_trace_free(t);

    /* Cut the compressed file in half: a truncated gzip stream, nothing kept. */
    assert_int_equal(truncate(path, (off_t)(gz_len / 2)), 0);
    t = erg_trace_new();
    assert_int_equal(erg_trace_read_file(t, path, &d), ERG_EPARSE);
    assert_string_equal(d.where, path);
    assert_non_null(strstr(d.detail, "truncated gzip"));
    assert_null(strstr(d.detail, path)); /* the file is named once, in where, not again by zlib */
    assert_non_null(strstr(d.detail, ": unexpected end of file"));
    erg_trace_get_stats(t, &s);
    assert_int_equal(s.activities, 0);
    erg_trace_free(t);
    unlink(path);
    free(json);

    /* A missing file. */
    t = erg_trace_new();
    assert_int_equal(erg_trace_read_file(t, "/nonexistent/trace.json.gz", &d), ERG_ENOENT);
    erg_trace_free(t);
}

/* Every strict prefix of a trace fails cleanly (ASan/UBSan watch), and byte corruptions either
 * parse or fail with ERG_EPARSE, leaving nothing behind. */
static void prefixes_and_corruptions_fail_cleanly(void **state)
{
    (void)state;
    FILE *f = fopen(ERG_TEST_SOURCE_DIR "/tests/trace/data/two_gpus.json", "rb");
    assert_non_null(f);
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 100 && n < sizeof buf);
    size_t end = n;
    while (end > 0 && (buf[end - 1] == '\n' || buf[end - 1] == ' '))
        end--;
    erg_diag d;
    for (size_t len = 0; len < end; len++) {
        erg_trace *t = erg_trace_new();
        int st = erg_trace_read_buffer(t, buf, len, "prefix.json", &d);
        if (st != ERG_EPARSE)
            fail_msg("prefix of %zu bytes: status %d", len, st);
        assert_int_equal(t->n_acts, 0);
        erg_trace_free(t);
    }
    uint64_t x = 12345;
    static const char junk[] = "{}[],:\"\\0-.eE x\x01\xff";
    size_t ok = 0, bad = 0;
    for (int round = 0; round < 2000; round++) {
        static char copy[16384];
        memcpy(copy, buf, n);
        for (int k = 0; k < 3; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            copy[x % n] = junk[(x >> 32) % (sizeof junk - 1)];
        }
        erg_trace *t = erg_trace_new();
        int st = erg_trace_read_buffer(t, copy, n, "corrupt.json", &d);
        if (st == ERG_OK)
            ok++;
        else if (st == ERG_EPARSE && t->n_acts == 0)
            bad++;
        else
            fail_msg("round %d: status %d with %zu activities", round, st, t->n_acts);
        erg_trace_free(t);
    }
    assert_true(ok > 0 && bad > 0);
}

/* A rank already taken fails and leaves the output rank defined (-1), never stale. */
static void rank_clash_leaves_output_defined(void **state)
{
    (void)state;
    erg_trace *t = erg_trace_new();
    assert_non_null(t);
    erg_diag d = {0};
    assert_int_equal(erg__trace_add_file(t, 0, 1, "a.json", &d), ERG_OK);
    int rank = 42;
    assert_int_equal(erg__trace_pick_rank(t, 0, 0, "b.json", &rank, &d), ERG_OK);
    assert_int_equal(rank, 1); /* no distributedInfo: first rank not taken */
    rank = 42;
    assert_true(erg__trace_pick_rank(t, 1, 0, "b.json", &rank, &d) < 0);
    assert_int_equal(rank, -1);
    assert_non_null(strstr(d.detail, "rank 0 was already read"));
    erg_trace_free(t);
}

/* Wrong-kind input says what the file is; a cut array of non-events is a truncation. */
static void wrong_kind_and_cut_arrays_are_named(void **state)
{
    (void)state;
    static const struct {
        const char *json, *says;
    } cases[] = {
        {"{\"erg\": \"schedule/1\", \"devices\": []}",
         "not a Chrome/Kineto trace (it is an erg schedule/1 file: run erg compose on it)"},
        {"{\"erg\": \"rules/1\", \"traceEvents\": []}", "it is an erg rules/1 file)"},
        {"{\"erg\": 3}", "it has an \"erg\" tag"},
        {"{\"schemaVersion\": 1}", "not a Chrome/Kineto trace: a JSON object without traceEvents"},
        {"{}", "a JSON object without traceEvents"},
        {"[1,2", "JSON ends early at byte 4 (truncated file?)"},
        {"[{\"ph\": \"X\"}, [1", "JSON ends early"},
        {"[{\"ph\": \"X\"}, [1]", "JSON ends early"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        erg_trace *t = erg_trace_new();
        assert_non_null(t);
        erg_diag d = {0};
        assert_int_equal(read_str(t, cases[i].json, &d), ERG_EPARSE);
        if (!strstr(d.detail, cases[i].says))
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, d.detail, cases[i].says);
        erg_trace_free(t);
    }
    /* still accepted: an array cut between two events, and an object with empty traceEvents */
    erg_trace *t = erg_trace_new();
    erg_diag d = {0};
    assert_int_equal(read_str(t, "[{\"ph\": \"X\"}, ", &d), ERG_OK);
    assert_int_equal(read_str(t, "{\"traceEvents\": []}", &d), ERG_OK);
    erg_trace_free(t);
}

/* issue 16: ids are kept whole or refused (never cut, never merged at a NUL); a hostile token fails
 * at once; huge timestamps are bad timestamps, not an overflow; many devices stay distinct. */
static void hostile_ids_tokens_and_timestamps(void **state)
{
    (void)state;
    /* two GPU UUIDs that share their first 40 characters: two devices, two device ids */
    const char *u1 = "GPU-8f3c1e2a-0b7d-4c55-9e61-2f4a8b9c0d1e-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0001";
    const char *u2 = "GPU-8f3c1e2a-0b7d-4c55-9e61-2f4a8b9c0d1e-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0002";
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2,"
        "\"args\":{\"device\":\"%s\",\"stream\":1}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2,"
        "\"args\":{\"device\":\"%s\",\"stream\":1}}]}",
        u1, u2);
    erg_trace *t = ok_trace(json);
    assert_int_equal(t->n_devs, 2);
    assert_string_equal(t->devs[0].key, u1);
    assert_string_equal(t->devs[1].key, u2);
    assert_string_not_equal(t->devs[0].id, t->devs[1].id);
    erg_trace_free(t);
    /* an id longer than 127 bytes is refused, not cut */
    char longid[200];
    memset(longid, 'x', 150);
    longid[150] = '\0';
    snprintf(json, sizeof json,
             "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
             "\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"device\":\"%s\"}}]}",
             longid);
    expect_parse_error(json, NULL, "a device id of 150 bytes: ids longer than 127 bytes");
    /* a NUL inside an id would have merged "gpu\0" + anything */
    expect_parse_error(
        "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
        "\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"device\":\"gpu\\u00001\"}}]}",
        NULL, "a device id holds a NUL byte");
    expect_parse_error("{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":"
                       "\"p\\u0000q\",\"tid\":1,\"ts\":1,\"dur\":2}]}",
                       NULL, "a pid id holds a NUL byte");
    /* timestamps beyond ±2^62 ns are bad timestamps (dropped, counted), never an overflow; two
     * within the range but 9.2e18 ns apart (B at -4.6e15 µs, E at +4.6e15 µs) still subtract */
    t = ok_trace("{\"traceEvents\": ["
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"pid\":0,\"tid\":1,"
                 "\"ts\":9000000000000000,\"dur\":1},"
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"pid\":0,\"tid\":1,"
                 "\"ts\":-9.2e15,\"dur\":1},"
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"c\",\"pid\":0,\"tid\":1,"
                 "\"ts\":1e300,\"dur\":1},"
                 "{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"d\",\"pid\":0,\"tid\":1,"
                 "\"ts\":-4.6e15},"
                 "{\"ph\":\"E\",\"pid\":0,\"tid\":1,\"ts\":4.6e15},"
                 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"pid\":0,\"tid\":1,"
                 "\"ts\":4611686018427,\"dur\":1}]}");
    erg_trace_stats st;
    erg_trace_get_stats(t, &st);
    assert_int_equal(st.activities, 2);
    assert_int_equal(st.missing_duration, 3);
    erg_trace_free(t);
    /* a 2 MiB kernel name fails at once, naming the limit */
    size_t big = (2u << 20) + 64;
    char *huge = malloc(big + 256);
    assert_non_null(huge);
    int k = snprintf(huge, 256, "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
    memset(huge + k, 'n', big);
    strcpy(huge + k + big, "\"}]}");
    expect_parse_error(huge, NULL, "a JSON string longer than 1048576 bytes");
    /* and so does a 2 MiB number */
    k = snprintf(huge, 256, "{\"traceEvents\": [{\"ph\":\"X\",\"ts\":");
    memset(huge + k, '7', big);
    strcpy(huge + k + big, "}]}");
    expect_parse_error(huge, NULL, "a JSON number or literal longer than 1048576 bytes");
    free(huge);
    /* 20,000 distinct devices (hashed lookups): each kept apart */
    size_t n = 20000;
    char *many = malloc(n * 160 + 64);
    assert_non_null(many);
    size_t at = (size_t)sprintf(many, "{\"traceEvents\": [");
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(many + at,
                              "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":%zu,"
                              "\"tid\":1,\"ts\":%zu,\"dur\":1}",
                              i ? "," : "", i, i);
    strcpy(many + at, "]}");
    t = ok_trace(many);
    assert_int_equal(t->n_devs, n);
    assert_string_equal(t->devs[n - 1].key, "19999");
    erg_trace_free(t);
    free(many);
}

/* The fast tokenizer (jscan.c) against yajl alone: the same bytes leave the same trace, status and
 * message, whether the fast path reads them or bails out to yajl. */
static void both_readers_agree(const void *buf, size_t len, const char *label)
{
    char why[512];
    if (trace_readers_differ(buf, len, NULL, why, sizeof why))
        fail_msg("%s (from memory): %s", label, why);
    char path[] = "/tmp/erg_trace_jscan_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, len), (ssize_t)len);
    close(fd);
    int d = trace_readers_differ(NULL, 0, path, why, sizeof why);
    unlink(path);
    if (d)
        fail_msg("%s (from a file): %s", label, why);
}

static void fast_reader_agrees_with_yajl_on_odd_json(void **state)
{
    (void)state;
#define EV(name, rest)                                                                             \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":" name ",\"pid\":0,\"tid\":7" rest "}"
#define TE(events) "{\"traceEvents\":[" events "]}"
    static const char *const cases[] = {
        /* escapes, decoded alike */
        TE(EV("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20AC\\u07ff\"",
              ",\"ts\":1,\"dur\":2")),
        TE(EV("\"pair \\ud83d\\ude00\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"lone \\ud800x\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"low \\udc00\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"bad \\x\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"bad \\u12g4\"", ",\"ts\":1,\"dur\":2")),
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":\"g\\u0000\","
        "\"ts\":1,\"dur\":2}]}",
        "{\"trace\\u0045vents\":[" EV("\"k\"", ",\"ts\":1,\"dur\":2") "]}",
        /* UTF-8 as yajl checks it */
        TE(EV("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"\xc0\xaf overlong lead\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"\x80\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"\xc3\x28\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"\xf8\x88\x80\x80\x80\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"tab\there\"", ",\"ts\":1,\"dur\":2")),
        TE(EV("\"del\x7f\"", ",\"ts\":1,\"dur\":2")),
        "{\"traceEvents\":[" EV("\"\xe2\x82", ""),
        /* numbers */
        TE(EV("\"k\"", ",\"ts\":1e3,\"dur\":1.5E+2")),
        TE(EV("\"k\"", ",\"ts\":-0.5,\"dur\":0")),
        TE(EV("\"k\"", ",\"ts\":-0,\"dur\":1.0e-3")),
        TE(EV("\"k\"", ",\"ts\":123456789012345678901234567890,\"dur\":1")),
        TE(EV("\"k\"", ",\"ts\":1.00000000000000000000000000000000000000000000000000000001,"
                       "\"dur\":2.5")),
        TE(EV("\"k\"", ",\"ts\":\"1\",\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":01,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":1.,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":.5,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":-,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":1e,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":+1,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":1,\"dur\":2,\"ts\":3")),
        /* literals and structure */
        TE(EV("\"k\"", ",\"ts\":1,\"dur\":2,\"args\":{\"x\":[true,false,null,[[{}]],{\"a\":[]}]}")),
        TE(EV("\"k\"", ",\"ts\":tru,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":nul,\"dur\":2")),
        TE(EV("\"k\"", ",\"ts\":1,\"dur\":2,\"a\":truex")),
        "{\"traceEvents\":[1,]}",
        "{\"traceEvents\":[],}",
        "{\"traceEvents\" []}",
        "{,}",
        "[,]",
        "{\"traceEvents\":}",
        "{\"traceEvents\":[]} x",
        "{\"traceEvents\":[]}  \n\t\r ",
        "{\"traceEvents\":[]}{}",
        " \v{\"traceEvents\":[\f" EV("\"k\"", ",\"ts\":1,\"dur\":2") "]}",
        "\xef\xbb\xbf{\"traceEvents\":[]}",
        /* truncated array format (a killed tracer) */
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2") ",",
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2"),
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2") ", 1",
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2") ", tru",
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2") ", \"abc",
        "[" EV("\"k\"", ",\"ts\":1,\"dur\":2") "]",
        /* not traces */
        "",
        "   ",
        "42",
        "\"str\"",
        "null",
        "{\"erg\":\"schedule/1\",\"traceEvents\":[]}",
        "{\"other\":1}",
        /* B/E, metadata, ranks */
        "{\"distributedInfo\":{\"rank\":3},\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA "
        "A100\"}],"
        "\"traceEvents\":[{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,"
        "\"ts\":1},{\"ph\":\"E\",\"pid\":0,\"tid\":1,\"ts\":5},{\"ph\":\"E\",\"pid\":0,\"tid\":1,"
        "\"ts\":6},{\"ph\":\"M\",\"name\":\"x\"},{\"ph\":\"X\",\"cat\":\"weird\",\"ts\":1}]}",
    };
#undef EV
#undef TE
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[32];
        snprintf(label, sizeof label, "case %zu", i);
        both_readers_agree(cases[i], strlen(cases[i]), label);
        /* every prefix too: the cuts a killed tracer or a chunk boundary makes */
        size_t n = strlen(cases[i]);
        for (size_t k = 0; k < n; k++) {
            char why[512];
            if (trace_readers_differ(cases[i], k, NULL, why, sizeof why))
                fail_msg("case %zu cut at %zu: %s", i, k, why);
        }
    }
}

/* Tokens that straddle the reader's 256 KiB chunks, long names, escapes and a name over the 1 MiB
 * bound, read from files (plain and gzip) by both readers. */
static void fast_reader_agrees_with_yajl_across_chunks(void **state)
{
    (void)state;
    size_t cap = 6u << 20, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    n += (size_t)sprintf(buf + n, "{\"traceEvents\": [\n");
    for (unsigned i = 0; n < (3u << 20); i++) {
        char name[400];
        size_t len = (i * 37u) % 390u;
        for (size_t k = 0; k < len; k++)
            name[k] = (char)('a' + (k + i) % 26);
        name[len] = '\0';
        if (len > 10 && i % 7 == 0)
            memcpy(name + len / 2, "\\u00e9\\n", 8);
        n += (size_t)sprintf(buf + n,
                             "%s  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, "
                             "\"tid\": \"s%u\", \"ts\": %u.%03u, \"dur\": %u.5e0, \"args\": "
                             "{\"device\": %u, \"stream\": %u, \"x\": [1, -2.5e-3, true, null]}}",
                             i ? ",\n" : "", i % 3 ? "cpu_op" : "kernel", name, i % 4, i % 5,
                             1000000u + i, i % 1000, i % 90, i % 2, 7 + i % 3);
    }
    n += (size_t)sprintf(buf + n, "\n]}\n");
    both_readers_agree(buf, n, "generated 3 MB");
    erg_trace *t = erg_trace_new();
    erg_diag d;
    assert_int_equal(erg_trace_read_buffer(t, buf, n, "g.json", &d), ERG_OK);
    assert_int_equal(t->fast_files, 1); /* read by the fast path, not left to yajl */
    erg_trace_free(t);
    /* gzip: the fast path reads the inflated chunks */
    char gzpath[] = "/tmp/erg_trace_jscan_gz_XXXXXX";
    int fd = mkstemp(gzpath);
    assert_true(fd >= 0);
    gzFile gz = gzdopen(fd, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, buf, (unsigned)n), (int)n);
    gzclose(gz);
    char why[512];
    if (trace_readers_differ(NULL, 0, gzpath, why, sizeof why))
        fail_msg("gzip: %s", why);
    unlink(gzpath);
    /* a 700 kB name (allowed) and a 1.1 MB one (refused by the token bound) */
    for (int big = 0; big < 2; big++) {
        size_t len = big ? (1u << 20) + 1000 : 700000;
        n = (size_t)sprintf(buf, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
        memset(buf + n, 'x', len);
        n += len;
        n += (size_t)sprintf(buf + n, "\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2}]}");
        both_readers_agree(buf, n, big ? "1.1 MB name" : "700 kB name");
    }
    free(buf);
}

/* Skipped events: host X events (skipped once their phase and category are read), flows and
 * other phases (skipped once their phase is read) and the fields erg does not read are passed over
 * without callbacks (jscan.c, fast_skip); whatever is odd in them reads as yajl reads it, whole
 * and cut at every byte. */
static void fast_reader_agrees_with_yajl_on_skipped_events(void **state)
{
    (void)state;
#define HEV(rest) "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"h\"" rest "}"
#define FLOW(rest) "{\"ph\":\"f\",\"id\":1" rest "}"
#define KEV(rest)                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":2" rest  \
    "}"
#define TE(events) "{\"traceEvents\":[" events "," KEV("") "]}"
    static const char *const rests[] = {
        ",\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00e9\"",
        ",\"s\":\"pair \\ud83d\\ude00\"",
        ",\"s\":\"lone \\ud800x\"",
        ",\"s\":\"bad \\x\"",
        ",\"s\":\"bad \\u12g4\"",
        ",\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
        ",\"s\":\"\xc0\xaf\"",
        ",\"s\":\"\x80\"",
        ",\"s\":\"\xc3\x28\"",
        ",\"s\":\"\xf8\x88\x80\x80\x80\"",
        ",\"s\":\"tab\there\"",
        ",\"s\":\"del\x7f\"",
        ",\"x\":1e3,\"y\":1.5E+2,\"z\":-0.5,\"w\":-0",
        ",\"x\":01",
        ",\"x\":1.",
        ",\"x\":.5",
        ",\"x\":-",
        ",\"x\":1e",
        ",\"x\":+1",
        ",\"x\":[true,false,null,[[{}]],{\"a\":[]},{\"b\":{\"c\":[1,\"2\"]}}]",
        ",\"x\":tru",
        ",\"x\":nul",
        ",\"x\":truex",
        ",\"x\":[1,]",
        ",\"x\":{\"a\":1,}",
        ",\"x\":{\"a\" 1}",
        ",\"x\":[1 2]",
        ",\"x\":{1:2}",
        ",\"x\":}",
        ",",
        ",\"x\"",
        ",\"x\":",
        " , \"x\" :\n\t 1 ,\r\n \"y\" : [ ] ",
        ",\"x\":\v1",
        ",\"x\":\f1",
        ",\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2",
        ",\"p\\u0068\":\"X\"",
        ",\"cat\":\"kernel\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2",
        ",\"ca\\u0074\":\"kernel\"",
        ",\"args\":{\"ph\":\"X\",\"cat\":\"kernel\"},\"a\":[{\"ph\":1}]",
        ",\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]"
        "]]]]]"
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    };
    char buf[4096];
    for (size_t i = 0; i < sizeof rests / sizeof rests[0]; i++) {
        for (int kind = 0; kind < 3; kind++) {
            /* a skipped host event, a flow, and the rest as a kernel event's fields */
            int n = kind == 0 ? snprintf(buf, sizeof buf, TE(HEV("%s")), rests[i])
                    : kind == 1
                        ? snprintf(buf, sizeof buf, TE(FLOW("%s")), rests[i])
                        : snprintf(buf, sizeof buf, "{\"traceEvents\":[" KEV("%s") "]}", rests[i]);
            assert_true(n > 0 && (size_t)n < sizeof buf);
            char label[64];
            snprintf(label, sizeof label, "skipped case %zu, kind %d", i, kind);
            both_readers_agree(buf, (size_t)n, label);
            for (size_t k = 0; k < (size_t)n; k++) {
                char why[512];
                if (trace_readers_differ(buf, k, NULL, why, sizeof why))
                    fail_msg("%s cut at %zu: %s", label, k, why);
            }
        }
    }
#undef HEV
#undef FLOW
#undef KEV
#undef TE
}

/* The 16-byte blocks the SSE2 scans read (strings, white space, digits): a quote, an escape, runs
 * of backslashes before a quote or not, a multi-byte character, a control byte, the end of a run of
 * white space or digits, at every offset of a block, in read and in skipped events, with the bytes
 * ending anywhere (the end of a buffer) and across the reader's 256 KiB chunks. */
static void fast_reader_agrees_with_yajl_across_blocks(void **state)
{
    (void)state;
    static const char *const specials[] = {"\\\"",     "\\\\",         "\\u00e9",        "\\n",
                                           "\xc3\xa9", "\xe2\x82\xac", "\\ud83d\\ude00", "\t",
                                           "\x01",     "\\\\\\\"",     "\\\\\\\\\\\\"};
    char buf[2048], name[64];
    for (size_t sp = 0; sp < sizeof specials / sizeof specials[0]; sp++) {
        for (size_t off = 0; off < 34; off++) {
            size_t k = 0;
            for (; k < off; k++)
                name[k] = (char)('a' + k % 26);
            name[k] = '\0';
            char ws[40];
            memset(ws, ' ', off % 20);
            ws[off % 20] = '\0';
            int n = snprintf(buf, sizeof buf,
                             "{\"traceEvents\":[%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s%s"
                             "x\",\"ts\":%s%zu.5,\"dur\":%s1}, {\"ph\":\"s\",\"name\":\"%s%sy\"},"
                             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s%sz\",\"pid\":0,"
                             "\"tid\":%s7,\"ts\":%zu,\"dur\":2,\"args\":{\"q\":\"%s%s\"}}]}",
                             ws, name, specials[sp], ws, off * 1000003, ws, name, specials[sp],
                             name, specials[sp], ws, off * 7919, name, specials[sp]);
            assert_true(n > 0 && (size_t)n < sizeof buf);
            char label[64];
            snprintf(label, sizeof label, "special %zu at offset %zu", sp, off);
            char why[512];
            if (trace_readers_differ(buf, (size_t)n, NULL, why, sizeof why))
                fail_msg("%s: %s", label, why);
            for (size_t cut = 0; cut < (size_t)n; cut++)
                if (trace_readers_differ(buf, cut, NULL, why, sizeof why))
                    fail_msg("%s cut at %zu: %s", label, cut, why);
        }
    }
    /* numbers of every length up to 20 digits, with and without a fraction or an exponent, with a
     * leading zero or a sign, ending anywhere in a block or at the end of the bytes, in a read
     * event (ts, dur), a skipped one and an unread field */
    static const char *const forms[][2] = {{"", ""},   {"", ".5"}, {"", ".25e1"},
                                           {"-", ""},  {"0", ""},  {"", "."},
                                           {"", ".x"}, {"", "E2"}, {"0.", ""}};
    for (size_t fm = 0; fm < sizeof forms / sizeof forms[0]; fm++) {
        for (size_t digits = 1; digits <= 20; digits++) {
            char num[32], text[48];
            for (size_t k = 0; k < digits; k++)
                num[k] = (char)('1' + (k * 7 + digits) % 9);
            num[digits] = '\0';
            snprintf(text, sizeof text, "%s%s%s", forms[fm][0], num, forms[fm][1]);
            for (size_t pad = 0; pad < 16; pad += 5) {
                char ws[20];
                memset(ws, ' ', pad);
                ws[pad] = '\0';
                int n = snprintf(buf, sizeof buf,
                                 "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"ts\":%s%s,"
                                 "\"x\":[%s%s]},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                                 "\"ts\":%s%s,\"dur\":%s,\"u\":%s%s}]}",
                                 ws, text, ws, text, ws, text, text, ws, text);
                assert_true(n > 0 && (size_t)n < sizeof buf);
                char why[512];
                for (size_t cut = 0; cut <= (size_t)n; cut++)
                    if (trace_readers_differ(buf, cut, NULL, why, sizeof why))
                        fail_msg("number \"%s\" after %zu spaces, cut at %zu: %s", text, pad, cut,
                                 why);
            }
        }
    }
    /* host events, flows and kernels whose strings and numbers straddle the 256 KiB chunks at
     * every offset, from a file */
    size_t cap = 2u << 20, n = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    n += (size_t)sprintf(big + n, "{\"traceEvents\": [\n");
    for (unsigned i = 0; n < (1u << 20) + 4096; i++) {
        size_t len = (i * 13u) % 61u;
        for (size_t k = 0; k < len; k++)
            name[k] = (char)('a' + (k + i) % 26);
        name[len] = '\0';
        const char *sp = specials[i % 6]; /* no surrogate, no control byte: read by jscan */
        switch (i % 3) {
        case 0:
            n += (size_t)sprintf(big + n,
                                 "%s {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s%s\", "
                                 "\"pid\": %u, \"ts\": %u.%03u, \"dur\": %u, \"args\": {\"a\": "
                                 "[%u, -1.5e-3, null]}}",
                                 i ? ",\n" : "", name, sp, i, 1000000u + i, i % 1000, i % 50, i);
            break;
        case 1:
            n += (size_t)sprintf(big + n,
                                 "%s {\"ph\": \"f\", \"id\": %u, \"name\": \"%s%s\", \"cat\": "
                                 "\"ac2g\", \"ts\": %u.%u}",
                                 i ? ",\n" : "", i, name, sp, 1000000u + i, i % 7);
            break;
        default:
            n += (size_t)sprintf(big + n,
                                 "%s {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s%s\", "
                                 "\"pid\": 0, \"tid\": %u, \"ts\": %u.%03u, \"dur\": %u.5, "
                                 "\"args\": {\"device\": 0, \"stream\": %u, \"grid\": [%u, 1, "
                                 "1], \"x\": \"%s\"}}",
                                 i ? ",\n" : "", name, sp, i % 4, 1000000u + i, i % 1000, i % 90,
                                 7 + i % 3, i, name);
            break;
        }
    }
    n += (size_t)sprintf(big + n, "\n]}\n");
    both_readers_agree(big, n, "generated 1 MB of mixed events");
    erg_trace *t = erg_trace_new();
    erg_diag d;
    assert_int_equal(erg_trace_read_buffer(t, big, n, "g.json", &d), ERG_OK);
    assert_int_equal(t->fast_files, 1); /* read by the fast path, not left to yajl */
    erg_trace_free(t);
    free(big);
}

/* The keys every Kineto event has, written as Kineto writes them ("pid": 1), are known from their
 * bytes in skipped events (jscan.c, fast_skip): what follows them, odd or wrong, and keys that
 * only start like them, read as yajl reads them, whole and cut at every byte; the well-formed
 * cases are read by the fast path. */
static void fast_reader_agrees_with_yajl_on_known_keys(void **state)
{
    (void)state;
    static const char *const rests[] = {
        ", \"name\": \"n\", \"pid\": 1, \"tid\": \"t\", \"ts\": 3.5, \"dur\": 4, \"id\": 5",
        ", \"pid\":  7, \"tid\":\n\t8, \"ts\": -0, \"dur\": 1e400",
        ", \"pid\": , \"x\": 1",
        ", \"pid\": }",
        ", \"pid\": \"a\\\"b\\u00e9\"",
        ", \"pid\": 01",
        ", \"pid\": 1 \"tid\": 2",
        ", \"pid\": 1,, \"tid\": 2",
        ", \"pid\": 1, }",
        ", \"ts\": tru",
        ", \"ts\": true, \"dur\": null, \"id\": false",
        ", \"ts\": \v1",
        ", \"pidx\": 1, \"pi\": 2, \"p\": 3, \"tsx\": 4, \"t\": 5, \"namex\": 6, \"argsx\": 7",
        ", \"id\": [1, 2], \"bp\": {\"x\": \"y\"}, \"args\": {\"a\": [1, {\"pid\": 2}]}",
        ", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 1, \"ts\": 1, \"dur\": 2",
        ", \"cat\": 1",
        ", \"ph\": \"X\", \"cat\": \"kernel\"",
        ", \"name\": \"x\", \"name\": \"caf\xc3\xa9\", \"name\": \"\\ud800\"",
        ", \"name\": \"\x01\"",
        ", \"args\": {\"ph\": 1, \"cat\": 2}",
    };
#define HEV(rest) "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"h\"" rest "}"
#define FLOW(rest) "{\"ph\": \"f\", \"id\": 1" rest "}"
#define KEV                                                                                        \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "    \
    "\"dur\": 2}"
    char buf[2048];
    for (size_t i = 0; i < sizeof rests / sizeof rests[0]; i++) {
        for (int kind = 0; kind < 2; kind++) {
            int n = kind == 0 ? snprintf(buf, sizeof buf,
                                         "{\"traceEvents\": [" HEV("%s") ", " KEV "]}", rests[i])
                              : snprintf(buf, sizeof buf,
                                         "{\"traceEvents\": [" FLOW("%s") ", " KEV "]}", rests[i]);
            assert_true(n > 0 && (size_t)n < sizeof buf);
            char label[64];
            snprintf(label, sizeof label, "known-key case %zu, kind %d", i, kind);
            both_readers_agree(buf, (size_t)n, label);
            for (size_t k = 0; k < (size_t)n; k++) {
                char why[512];
                if (trace_readers_differ(buf, k, NULL, why, sizeof why))
                    fail_msg("%s cut at %zu: %s", label, k, why);
            }
            if (i < 2 || (i == 13) || (kind == 1 && i == 15)) { /* well-formed: the fast path */
                erg_trace *t = erg_trace_new();
                erg_diag d;
                assert_int_equal(erg_trace_read_buffer(t, buf, (size_t)n, "k.json", &d), ERG_OK);
                assert_int_equal(t->fast_files, 1);
                assert_int_equal(t->n_acts, 1);
                erg_trace_free(t);
            }
        }
    }
#undef HEV
#undef FLOW
#undef KEV
}

/* out_of_order and stream_overlaps (per-stream counting sort, then a sort by start only for the
 * streams whose file order is not that already) against a direct count, on random traces: kernels
 * on a few devices and streams, in and out of order, overlapping or not; and, in a second file of
 * the same trace, a stream whose id is far beyond the file's few activities (the qsort path). */
static void stream_order_counts_match_a_direct_count(void **state)
{
    (void)state;
    uint64_t rng = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + (size_t)(round * 37 % 300);
        size_t cap = 200 + n * 160, len = 0;
        char *buf = malloc(cap);
        assert_non_null(buf);
        long long *dev = malloc(n * sizeof *dev), *str = malloc(n * sizeof *str),
                  *ts = malloc(n * sizeof *ts), *dur = malloc(n * sizeof *dur);
        assert_true(dev && str && ts && dur);
        len += (size_t)sprintf(buf + len, "{\"traceEvents\": [");
        long long clock = 1000;
        for (size_t i = 0; i < n; i++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            unsigned r = (unsigned)(rng >> 33);
            dev[i] = r % 3;
            str[i] = (r >> 2) % (unsigned)(round % 4 + 1);
            clock += (long long)((r >> 5) % 20);
            /* mostly in order; sometimes back in time; sometimes equal starts */
            ts[i] = (r >> 10) % 7 == 0 ? clock - (long long)((r >> 13) % 50) : clock;
            dur[i] = (long long)((r >> 16) % 30);
            len += (size_t)sprintf(buf + len,
                                   "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                                   "\"pid\": %lld, \"tid\": %lld, \"ts\": %lld, \"dur\": %lld}",
                                   i ? ", " : "", dev[i], str[i], ts[i], dur[i]);
        }
        len += (size_t)sprintf(buf + len, "]}");
        assert_true(len < cap);
        /* the direct count: per (device, stream), in file order, then by (start, end) */
        size_t ooo = 0, over = 0;
        for (long long dv = 0; dv < 3; dv++)
            for (long long sv = 0; sv < 4; sv++) {
                long long s[300], e[300];
                size_t m = 0;
                for (size_t i = 0; i < n; i++)
                    if (dev[i] == dv && str[i] == sv) {
                        if (m && ts[i] < s[m - 1])
                            ooo++;
                        s[m] = ts[i];
                        e[m] = ts[i] + dur[i];
                        m++;
                    }
                for (size_t a = 1; a < m; a++) /* insertion sort by (start, end) */
                    for (size_t b = a;
                         b > 0 && (s[b] < s[b - 1] || (s[b] == s[b - 1] && e[b] < e[b - 1])); b--) {
                        long long x = s[b], y = e[b];
                        s[b] = s[b - 1];
                        e[b] = e[b - 1];
                        s[b - 1] = x;
                        e[b - 1] = y;
                    }
                long long end = m ? e[0] : 0;
                for (size_t a = 1; a < m; a++) {
                    if (s[a] < end)
                        over++;
                    if (e[a] > end)
                        end = e[a];
                }
            }
        erg_trace *t = ok_trace(buf);
        erg_trace_stats st;
        erg_trace_get_stats(t, &st);
        assert_int_equal(st.activities, n);
        assert_int_equal(st.out_of_order, ooo);
        assert_int_equal(st.stream_overlaps, over);
        /* a second file: 6000 host streams interned first (B/E stacks by pid and tid), then
         * three kernels on one stream, two overlapping and out of order */
        size_t cap2 = 6000 * 96 + 1024, len2 = 0;
        char *buf2 = malloc(cap2);
        assert_non_null(buf2);
        len2 += (size_t)sprintf(buf2 + len2, "{\"traceEvents\": [");
        for (int i = 0; i < 6000; i++)
            len2 +=
                (size_t)sprintf(buf2 + len2,
                                "{\"ph\": \"B\", \"cat\": \"cpu_op\", \"name\": \"h\", \"pid\": "
                                "1, \"tid\": %d, \"ts\": 1}, ",
                                i);
        len2 += (size_t)sprintf(
            buf2 + len2,
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"pid\": 0, \"tid\": \"late\", "
            "\"ts\": 50, \"dur\": 10}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", "
            "\"pid\": 0, \"tid\": \"late\", \"ts\": 20, \"dur\": 40}, {\"ph\": \"X\", \"cat\": "
            "\"kernel\", \"name\": \"c\", \"pid\": 0, \"tid\": \"late\", \"ts\": 70, \"dur\": "
            "1}]}");
        assert_true(len2 < cap2);
        erg_diag d;
        assert_int_equal(erg_trace_read_buffer(t, buf2, len2, "second.json", &d), ERG_OK);
        erg_trace_get_stats(t, &st);
        assert_true(t->acts[t->n_acts - 1].stream >= 6000); /* beyond 4 n + 4096 */
        assert_int_equal(st.out_of_order, ooo + 1);         /* b after a */
        assert_int_equal(st.stream_overlaps, over + 1);     /* a within b */
        erg_trace_free(t);
        free(buf2);
        free(buf);
        free(dev);
        free(str);
        free(ts);
        free(dur);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kineto_object_format_keeps_gpu_activities),
        cmocka_unit_test(array_format_and_begin_end_pairs),
        cmocka_unit_test(durations_problems_are_counted_not_fatal),
        cmocka_unit_test(malformed_input_names_line_column_and_byte),
        cmocka_unit_test(hostile_ids_tokens_and_timestamps),
        cmocka_unit_test(activities_kept_before_an_error_are_dropped),
        cmocka_unit_test(gzip_files_stream_and_truncation_is_reported),
        cmocka_unit_test(prefixes_and_corruptions_fail_cleanly),
        cmocka_unit_test(rank_clash_leaves_output_defined),
        cmocka_unit_test(wrong_kind_and_cut_arrays_are_named),
        cmocka_unit_test(fast_reader_agrees_with_yajl_on_odd_json),
        cmocka_unit_test(fast_reader_agrees_with_yajl_across_chunks),
        cmocka_unit_test(fast_reader_agrees_with_yajl_on_skipped_events),
        cmocka_unit_test(fast_reader_agrees_with_yajl_across_blocks),
        cmocka_unit_test(dropped_event_is_located),
        cmocka_unit_test(fast_reader_agrees_with_yajl_on_known_keys),
        cmocka_unit_test(stream_order_counts_match_a_direct_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
