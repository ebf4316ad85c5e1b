/* SPDX-License-Identifier: MIT */
/*
 * The schedule/1 reader on files larger than its 64 KiB read chunk: node ids hashed once into the
 * reader's table, edge endpoints resolved as they pass (or, when "edges" comes before "nodes",
 * once all nodes are known), long ids beside short ones, ids repeated or unknown deep in the file
 * named with their line; the schedule's own node map filled when a lookup by id first needs it;
 * and the string map itself (hash over bytes, lookups of keys that are not NUL-terminated).
 */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "calculus/strmap.h"
#include "erg/calculus.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tmpdir, sizeof tmpdir, "sched_read");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tmpdir);
}

/* A growing text. */
struct text {
    char *p;
    size_t n, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    while (t->n + (size_t)k + 1 > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1 << 16;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

enum { N = 20000 };

/* Node i's id: short ("n17"), or for every seventh node one longer than the reader keeps in its
 * lookup ring (60 bytes and more). */
static const char *id(int i)
{
    static char buf[4][96];
    static int k;
    char *b = buf[k++ % 4];
    if (i % 7 == 3)
        snprintf(b, sizeof buf[0],
                 "a-node-with-a-long-name-to-take-the-other-path-of-the-reader-%d", i);
    else
        snprintf(b, sizeof buf[0], "n%d", i);
    return b;
}

/* A chain of N nodes, one per line after a 3-line head, on device g (10 W static), each 1 s and
 * 2 J dynamic: T = N s, E = 12 N J (one line a node or edge, after a 2-line head). Every fifth node
 * names its device. bad_edge >= 0 makes that edge's target unknown; dup >= 0 gives that node the id
 * of node 3; edges_first puts "edges" before "nodes"; cycle adds an edge from the last node back to
 * node N - 10. */
static const char *chain(const char *name, int edges_first, int bad_edge, int dup, int cycle)
{
    struct text t = {0};
    add(&t, "{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},\n"
            " \"signatures\": {\"k\": {\"device\": \"g\", \"time_s\": 1, \"dynamic_energy_j\": 2}"
            "},\n");
    for (int part = 0; part < 2; part++) {
        if ((part == 0) != (edges_first != 0)) {
            add(&t, " \"nodes\": [\n");
            for (int i = 0; i < N; i++)
                add(&t, "  {\"id\": \"%s\", \"signature\": \"k\"%s}%s\n", id(i == dup ? 3 : i),
                    i % 5 == 0 ? ", \"device\": \"g\"" : "", i + 1 < N ? "," : "");
            add(&t, " ]%s\n", part == 0 ? "," : "}");
        } else {
            add(&t, " \"edges\": [\n");
            for (int i = 0; i + 1 < N; i++)
                add(&t, "  [\"%s\", \"%s\"]%s\n", id(i), i == bad_edge ? "zz" : id(i + 1),
                    i + 2 < N || cycle ? "," : "");
            if (cycle)
                add(&t, "  [\"%s\", \"%s\"]\n", id(N - 1), id(N - 10));
            add(&t, " ]%s\n", part == 0 ? "," : "}");
        }
    }
    const char *p = erg_tmp_put(tmpdir, name, t.p);
    free(t.p);
    return p;
}

static void composes_to_the_chain(const char *path)
{
    erg_schedule *s = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    if (erg_schedule_read_file(path, &s, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    assert_int_equal(erg_schedule_node_count(s), N);
    assert_int_equal(erg_schedule_edge_count(s), N - 1);
    erg_report r;
    if (erg_schedule_compose(s, NULL, &r, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_near(r.time_s, N, 1e-9 * N);
    erg_assert_near(r.energy_j, 12.0 * N, 1e-9 * N);
    erg_report_free(&r);
    erg_schedule_free(s);
}

static void large_files_compose_whichever_member_comes_first(void **state)
{
    (void)state;
    composes_to_the_chain(chain("nodes-first.json", 0, -1, -1, 0));
    composes_to_the_chain(chain("edges-first.json", 1, -1, -1, 0));
}

static void expect(const char *path, int status, const char *where, const char *detail)
{
    erg_schedule *s = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_schedule_read_file(path, &s, &d);
    if (rc == ERG_OK) {
        erg_report r;
        rc = erg_schedule_compose(s, NULL, &r, &d);
        if (rc == ERG_OK)
            erg_report_free(&r);
    }
    erg_schedule_free(s);
    if (rc != status || !strstr(d.where, where) || !strstr(d.detail, detail))
        fail_msg("%s: status %s, \"%s: %s\"; expected %s, \"%s\" and \"%s\"", path,
                 erg_status_name(rc), d.where, d.detail, erg_status_name(status), where, detail);
}

/* Lines: 2 head lines, "nodes": [ on line 3, node i on line 4 + i, " ]," on line N + 4, "edges": [
 * on line N + 5, edge i on line N + 6 + i (nodes first); edges first, edge i on line 4 + i. */
static void errors_deep_in_a_large_file_name_their_line(void **state)
{
    (void)state;
    char where[64], detail[256];
    snprintf(where, sizeof where, "dup.json:%d:3", 4 + 15000);
    snprintf(detail, sizeof detail, "nodes[15000]: node \"%s\" is defined twice", id(3));
    expect(chain("dup.json", 0, -1, 15000, 0), ERG_EINVAL, where, detail);
    snprintf(where, sizeof where, "bad-edge.json:%d:3", N + 6 + 12345);
    snprintf(detail, sizeof detail, "edges[12345]: edge [\"%s\", \"zz\"]: no node \"zz\"",
             id(12345));
    expect(chain("bad-edge.json", 0, 12345, -1, 0), ERG_EINVAL, where, detail);
    /* edges before nodes: the endpoint waits for all nodes, then is named the same way */
    snprintf(where, sizeof where, "bad-edge-first.json:%d:3", 4 + 12345);
    expect(chain("bad-edge-first.json", 1, 12345, -1, 0), ERG_EINVAL, where, detail);
    snprintf(detail, sizeof detail, "nodes[15000]: node \"%s\" is defined twice", id(3));
    expect(chain("dup-first.json", 1, -1, 15000, 0), ERG_EINVAL, "dup-first.json:", detail);
    /* a cycle is named by node ids, wherever the edges stand */
    snprintf(detail, sizeof detail, "cycle: \"%s\" -> \"%s\"", id(N - 10), id(N - 9));
    expect(chain("cycle.json", 0, -1, -1, 1), ERG_ECYCLE, "", detail);
    expect(chain("cycle-first.json", 1, -1, -1, 1), ERG_ECYCLE, "", detail);
}

/* A node whose signature or device differs from the earlier nodes' is checked in full. */
static void each_signature_and_device_is_checked(void **state)
{
    (void)state;
    static const char *const head =
        "{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},\n"
        " \"signatures\": {\"k\": {\"device\": \"g\", \"time_s\": 1, \"dynamic_energy_j\": 2}},\n"
        " \"nodes\": [{\"id\": \"a\", \"signature\": \"k\"}, {\"id\": \"b\", \"signature\": "
        "\"k\"},\n";
    char text[1024];
    snprintf(text, sizeof text, "%s  {\"id\": \"c\", \"signature\": \"k\", \"device\": \"h\"}]}",
             head);
    expect(erg_tmp_put(tmpdir, "dev.json", text), ERG_EINVAL, "dev.json:4:3",
           "nodes[2]: node \"c\" is on undeclared device \"h\"");
    snprintf(text, sizeof text, "%s  {\"id\": \"c\", \"signature\": \"q\"}]}", head);
    expect(erg_tmp_put(tmpdir, "sig.json", text), ERG_EINVAL, "sig.json:4:3",
           "nodes[2]: node \"c\": unknown signature \"q\"");
    snprintf(text, sizeof text, "%s  {\"id\": \"\", \"signature\": \"k\"}]}", head);
    expect(erg_tmp_put(tmpdir, "empty-id.json", text), ERG_EINVAL, "empty-id.json:4:3",
           "nodes[2]: a node needs a non-empty id");
}

/* A NUL can only come from an escape (yajl refuses a raw one): refused in an id and in an edge,
 * while other escapes in ids are decoded and match. */
static void nul_in_ids_is_refused(void **state)
{
    (void)state;
    static const char *const head =
        "{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},\n"
        " \"signatures\": {\"k\": {\"device\": \"g\", \"time_s\": 1, \"dynamic_energy_j\": 2}},\n";
    char text[1024];
    snprintf(text, sizeof text, "%s \"nodes\": [{\"id\": \"a\\u0000b\", \"signature\": \"k\"}]}",
             head);
    expect(erg_tmp_put(tmpdir, "nul-id.json", text), ERG_EPARSE,
           "nul-id.json:3:", "nodes[0].id: contains a NUL character");
    snprintf(text, sizeof text,
             "%s \"nodes\": [{\"id\": \"a\", \"signature\": \"k\"}, {\"id\": \"b\", "
             "\"signature\": \"k\"}],\n \"edges\": [[\"\\u0061\", \"b\\u0000\"]]}",
             head);
    expect(erg_tmp_put(tmpdir, "nul-edge.json", text), ERG_EPARSE,
           "nul-edge.json:4:", "edges[0]: expected [\"from\", \"to\"]");
    snprintf(text, sizeof text,
             "%s \"nodes\": [{\"id\": \"a\", \"signature\": \"k\"}, {\"id\": \"b\", "
             "\"signature\": \"k\"}],\n \"edges\": [[\"\\u0061\", \"b\"]]}",
             head);
    erg_schedule *s = NULL;
    erg_diag d;
    assert_int_equal(erg_schedule_read_file(erg_tmp_put(tmpdir, "esc.json", text), &s, &d), ERG_OK);
    assert_int_equal(erg_schedule_edge_count(s), 1);
    erg_schedule_free(s);
}

/* After a read, lookups by id through the public builder see the file's nodes. */
static void the_builder_finds_the_file_nodes_by_id(void **state)
{
    (void)state;
    erg_schedule *s = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_schedule_read_file(chain("builder.json", 0, -1, -1, 0), &s, &d), ERG_OK);
    assert_int_equal(erg_schedule_add_node(s, id(5), "k", NULL, NAN, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "is defined twice"));
    assert_int_equal(erg_schedule_add_edge(s, id(0), "nope", &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "no node \"nope\""));
    /* a node after the chain, fed by its first and last nodes: T = N + 1 s, E = 12 (N + 1) J */
    assert_int_equal(erg_schedule_add_node(s, "tail", "k", NULL, NAN, &d), ERG_OK);
    assert_int_equal(erg_schedule_add_edge(s, id(N - 1), "tail", &d), ERG_OK);
    assert_int_equal(erg_schedule_add_edge(s, id(0), "tail", &d), ERG_OK);
    erg_report r;
    assert_int_equal(erg_schedule_compose(s, NULL, &r, &d), ERG_OK);
    erg_assert_near(r.time_s, N + 1, 1e-9 * N);
    erg_assert_near(r.energy_j, 12.0 * (N + 1), 1e-9 * N);
    erg_report_free(&r);
    erg_schedule_free(s);
}

struct keys {
    char **k;
};

static const char *key_of(const void *ctx, uint32_t i)
{
    return ((const struct keys *)ctx)->k[i];
}

/* Every key of 0 to 20 bytes over a small alphabet is found, by its NUL-terminated text and by
 * bytes followed by something else; a prefix, an extension or another key is not. */
static void strmap_finds_keys_by_bytes(void **state)
{
    (void)state;
    enum { M = 5000 };
    struct keys ks = {calloc(M, sizeof(char *))};
    erg__strmap map = {0};
    for (uint32_t i = 0; i < M; i++) {
        char b[32];
        size_t len = i % 21;
        for (size_t j = 0; j < len; j++)
            b[j] = (char)('a' + (i * 7 + j * 13 + j * j) % 3);
        snprintf(b + len, sizeof b - len, "%u", i); /* distinct keys of all lengths */
        ks.k[i] = strdup(b);
        assert_int_equal(erg__strmap_find(&map, b, key_of, &ks), ERG__STRMAP_NONE);
        assert_int_equal(erg__strmap_insert(&map, i, key_of, &ks), 0);
    }
    for (uint32_t i = 0; i < M; i++) {
        const char *k = ks.k[i];
        size_t len = strlen(k);
        assert_int_equal(erg__strmap_find(&map, k, key_of, &ks), i);
        char b[40];
        snprintf(b, sizeof b, "%s\"]", k); /* as a parser hands it over */
        assert_int_equal(erg__strmap_find_h(&map, b, len, erg__strmap_hashn(b, len), key_of, &ks),
                         i);
        assert_int_equal(
            erg__strmap_find_h(&map, b, len + 1, erg__strmap_hashn(b, len + 1), key_of, &ks),
            ERG__STRMAP_NONE);
        if (len > 1) {
            uint32_t p =
                erg__strmap_find_h(&map, k, len - 1, erg__strmap_hashn(k, len - 1), key_of, &ks);
            assert_true(p == ERG__STRMAP_NONE || strlen(ks.k[p]) == len - 1);
        }
    }
    /* keys of one length that differ in one byte hash apart (no length is left unmixed) */
    for (size_t len = 1; len <= 24; len++) {
        char a[32], b[32];
        memset(a, 'x', len);
        for (size_t j = 0; j < len; j++) {
            memcpy(b, a, len);
            b[j] = 'y';
            assert_true(erg__strmap_hashn(a, len) != erg__strmap_hashn(b, len));
        }
    }
    for (uint32_t i = 0; i < M; i++)
        free(ks.k[i]);
    free(ks.k);
    erg__strmap_free(&map);
    /* A stored key shorter than the one looked up, in an allocation that ends with it, whose
     * slot carries the longer key's hash: compared without reading past it (ASan checks), and
     * not found, for a short and for a long key. */
    static const char *const longer[] = {"abcdefgh", "abcdefghijklmnopqrstuvwxyz"};
    for (int j = 0; j < 2; j++) {
        char *stored = malloc(3);
        memcpy(stored, "ab", 3);
        struct keys one = {&stored};
        erg__strmap m = {0};
        size_t len = strlen(longer[j]);
        uint32_t h = erg__strmap_hashn(longer[j], len);
        assert_int_equal(erg__strmap_insert_h(&m, 0, h), 0);
        assert_int_equal(erg__strmap_find_h(&m, longer[j], len, h, key_of, &one), ERG__STRMAP_NONE);
        assert_int_equal(erg__strmap_find_h(&m, "ab", 2, h, key_of, &one), 0);
        erg__strmap_free(&m);
        free(stored);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(large_files_compose_whichever_member_comes_first),
        cmocka_unit_test(errors_deep_in_a_large_file_name_their_line),
        cmocka_unit_test(each_signature_and_device_is_checked),
        cmocka_unit_test(nul_in_ids_is_refused),
        cmocka_unit_test(the_builder_finds_the_file_nodes_by_id),
        cmocka_unit_test(strmap_finds_keys_by_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
