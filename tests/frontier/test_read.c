/* SPDX-License-Identifier: MIT */
/* schedule/1 with operating sets: reading good files and rejecting bad ones with a location. */
#include "erg/calculus.h"
#include "erg/frontier.h"
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int read_frontier(const char *text, erg_frontier *f, erg_diag *diag)
{
    const char *p = write_tmp("s.json", text);
    erg_opsched *os = NULL;
    erg_diag_clear(diag);
    int rc = erg_opsched_read_file(p, &os, diag);
    if (rc == ERG_OK) {
        rc = erg_opsched_frontier(os, NULL, f, diag);
        erg_opsched_free(os);
    }
    return rc;
}

#define PAR_DOC                                                                                    \
    "{\"erg\": \"schedule/1\", \"devices\": {\"gpu0\": {\"static_power_w\": 10}},\n"               \
    " \"signatures\": {\n"                                                                         \
    "  \"long\": {\"device\": \"gpu0\", \"points\": [\n"                                           \
    "    {\"kappa\": \"k\", \"omega_element\": {\"sm\": 100}, \"time_s\": 1.0, "                   \
    "\"dynamic_energy_j\": 50},\n"                                                                 \
    "    {\"kappa\": \"k\", \"omega_element\": {\"sm\": 60}, \"time_s\": 2.0, "                    \
    "\"dynamic_energy_j\": 30}]},\n"                                                               \
    "  \"short\": {\"device\": \"gpu0\", \"points\": [\n"                                          \
    "    {\"time_s\": 0.2, \"dynamic_energy_j\": 10}, {\"time_s\": 0.4, \"dynamic_energy_j\": "    \
    "6},\n"                                                                                        \
    "    {\"time_s\": 0.9, \"dynamic_energy_j\": 5}]}},\n"                                         \
    " \"expr\": {\"par\": [\"long\", \"short\"]}}\n"

static void reads_an_expression_with_operating_sets(void **state)
{
    (void)state;
    erg_frontier f;
    erg_diag d;
    assert_int_equal(read_frontier(PAR_DOC, &f, &d), ERG_OK);
    assert_int_equal(f.n_points, 2);
    erg_assert_near(f.points[0].energy_j, 65, 1e-12);
    erg_assert_near(f.points[1].energy_j, 55, 1e-12);
    assert_string_equal(f.element_names[0], "long");
    assert_string_equal(f.element_names[1], "short");
    erg_frontier_free(&f);
}

static void reads_a_dag_a_signature_file_and_transitions(void **state)
{
    (void)state;
    erg_signature s;
    erg_signature_init(&s);
    s.static_power_w = 4;
    s.time_s = 0.5;
    s.dynamic_energy_j = 1;
    snprintf(s.device, sizeof s.device, "g1");
    char p[512];
    snprintf(p, sizeof p, "%s/fixed.json", dir);
    assert_int_equal(erg_signature_write_file(p, &s, NULL), ERG_OK);
    erg_frontier f;
    erg_diag d;
    int rc = read_frontier(
        "{\"erg\": \"schedule/1\",\n"
        " \"devices\": {\"g0\": {\"static_power_w\": 2}, \"g1\": {\"static_power_w\": 4}},\n"
        " \"signatures\": {\"fixed\": \"fixed.json\",\n"
        "   \"op\": {\"device\": \"g0\", \"points\": [\n"
        "      {\"omega_device\": {\"f\": 1}, \"time_s\": 1, \"dynamic_energy_j\": 6},\n"
        "      {\"omega_device\": {\"f\": 2}, \"time_s\": 2, \"dynamic_energy_j\": 1}]}},\n"
        " \"transitions\": [{\"device\": \"g0\", \"from\": {\"f\": 1}, \"to\": {\"f\": 2},\n"
        "    \"time_s\": 0.1, \"dynamic_energy_j\": 0.5}],\n"
        " \"nodes\": [{\"id\": \"a\", \"signature\": \"op\"}, {\"id\": \"b\", \"signature\": "
        "\"fixed\"},\n"
        "           {\"id\": \"c\", \"signature\": \"op\"}],\n"
        " \"edges\": [[\"a\", \"c\"], [\"b\", \"c\"]]}\n",
        &f, &d);
    if (rc != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    /* E = (2 + 4)·M + Σ d; a, c ∈ {(1, 6), (2, 1)}, b (0.5, 1):
     * a0 c0: M 2, 6·2 + 13 = 25; a1 c0 / a0 c1: M 3, 18 + 8 = 26; a1 c1: M 4, 24 + 3 = 27. */
    assert_int_equal(f.n_points, 1);
    erg_assert_near(f.points[0].time_s, 2, 1e-12);
    erg_assert_near(f.points[0].energy_j, 25, 1e-12);
    assert_string_equal(f.element_names[2], "c");
    erg_frontier_free(&f);
}

/* A schedule whose elements have one point each has a one-point frontier: the calculus's own
 * composition (erg_schedule_compose, expression and DAG form) of the same file. */
static void single_point_schedules_match_the_calculus(void **state)
{
    (void)state;
    const char *files[] = {"attention-layer.json", "attention-layer-serialized.json",
                           "pipeline-2gpu.json", "pipeline-2gpu-dag.json"};
    const char *src = getenv("ERG_TEST_SOURCE_DIR");
    if (!src)
        src = ERG_TEST_SOURCE_DIR;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/examples/%s", src, files[i]);
        erg_schedule *sc = NULL;
        erg_opsched *os = NULL;
        erg_diag d;
        erg_diag_clear(&d);
        if (erg_schedule_read_file(p, &sc, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        erg_report rep;
        assert_int_equal(erg_schedule_compose(sc, NULL, &rep, &d), ERG_OK);
        if (erg_opsched_read_file(p, &os, &d) != ERG_OK)
            fail_msg("%s: %s", d.where, d.detail);
        erg_frontier f;
        assert_int_equal(erg_opsched_frontier(os, NULL, &f, &d), ERG_OK);
        assert_int_equal(f.n_points, 1);
        erg_assert_rel(f.points[0].energy_j, rep.energy_j, 1e-12);
        erg_assert_rel(f.points[0].time_s, rep.time_s, 1e-12);
        erg_assert_rel(f.points[0].static_energy_j, rep.static_energy_j, 1e-12);
        erg_frontier_free(&f);
        erg_opsched_free(os);
        erg_report_free(&rep);
        erg_schedule_free(sc);
    }
}

/* Idle power in a DAG: gpu0 s = 10, idle 4; gpu1 s = 6 (idle = static). a (gpu0, 1 s or 2 s) and
 * b (node on gpu1 though its signature says gpu0) run in parallel; b takes 3 s.
 * E = 4·M + 6·M + Σ d + (10 − 4)·T_a: a0 (1 s, d 5): 30 + 5 + 2 + 6 = 43; a1 (2 s, d 2): 30 + 2 + 2
 * + 12 = 46. */
static void dag_gaps_are_charged_at_idle_power(void **state)
{
    (void)state;
    erg_frontier f;
    erg_diag d;
    int rc = read_frontier(
        "{\"erg\": \"schedule/1\",\n"
        " \"devices\": {\"gpu0\": {\"static_power_w\": 10, \"idle_power_w\": 4},"
        "   \"gpu1\": {\"static_power_w\": 6}},\n"
        " \"signatures\": {\"A\": {\"device\": \"gpu0\", \"points\": ["
        "   {\"time_s\": 1, \"dynamic_energy_j\": 5}, {\"time_s\": 2, \"dynamic_energy_j\": 2}]},"
        "   \"B\": {\"device\": \"gpu0\", \"static_power_w\": 6, \"time_s\": 3, "
        "\"dynamic_energy_j\": 2}},\n"
        " \"nodes\": [{\"id\": \"a\", \"signature\": \"A\"},"
        "   {\"id\": \"b\", \"signature\": \"B\", \"device\": \"gpu1\", \"start_s\": 0}]}\n",
        &f, &d);
    if (rc != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    assert_int_equal(f.n_points, 1);
    erg_assert_near(f.points[0].time_s, 3, 1e-12);
    erg_assert_near(f.points[0].energy_j, 43, 1e-12);
    erg_assert_near(f.points[0].dynamic_energy_j, 7, 1e-12);
    assert_int_equal(f.choices[0], 0);
    erg_frontier_free(&f);
}

static void expect_error(const char *text, int status, const char *where_part,
                         const char *detail_part)
{
    erg_frontier f;
    erg_diag d;
    int rc = read_frontier(text, &f, &d);
    if (rc == ERG_OK)
        erg_frontier_free(&f);
    if (rc != status)
        fail_msg("status %d, expected %d (%s: %s)", rc, status, d.where, d.detail);
    if (where_part && !strstr(d.where, where_part))
        fail_msg("where \"%s\" lacks \"%s\"", d.where, where_part);
    if (detail_part && !strstr(d.detail, detail_part))
        fail_msg("detail \"%s\" lacks \"%s\"", d.detail, detail_part);
}

static void rejects_bad_operating_sets(void **state)
{
    (void)state;
    /* a typo in a point or a plain signature would drop a figure silently */
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"device\": \"g\", \"points\": ["
        "{\"static_power_w\": 1, \"time_s\": 1, \"dynamic_energy_j\": 1, \"time_var_s\": 1e-6}]}},"
        " \"expr\": \"a\"}",
        ERG_EPARSE, "s.json", "signatures.a.points[0].time_var_s: unknown member");
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"device\": \"g\","
        " \"static_power\": 5, \"static_power_w\": 1, \"time_s\": 1, \"dynamic_energy_j\": 1}},"
        " \"expr\": \"a\"}",
        ERG_EPARSE, "s.json", "signatures.a.static_power: unknown member");
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"device\": \"g\", \"points\": []}},"
        " \"expr\": \"a\"}",
        ERG_EPARSE, "s.json", "signatures.a.points: empty operating set");
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"device\": \"g\", \"points\": ["
        "{\"static_power_w\": 1, \"time_s\": 1, \"dynamic_energy_j\": 1},"
        "{\"static_power_w\": 1, \"time_s\": -1, \"dynamic_energy_j\": 1}]}}, \"expr\": \"a\"}",
        ERG_EPARSE, "s.json", "points[1]");
    expect_error(
        "{\"erg\": \"schedule/1\",\n \"signatures\": {\"a\": {\"device\": \"g\", \"points\": ["
        "{\"static_power_w\": 1, \"time_s\": NaN, \"dynamic_energy_j\": 1}]}}, \"expr\": \"a\"}",
        ERG_EPARSE, "s.json:2:", NULL);
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, \"time_s\": 1,"
        " \"dynamic_energy_j\": 1}}, \"expr\": {\"seq\": [\"a\", \"b\"]}}",
        ERG_EPARSE, "s.json", "expr.seq[1]: unknown signature \"b\"");
    expect_error("{\"erg\": \"schedule/2\", \"signatures\": {}}", ERG_EVERSION, "s.json",
                 "schedule/2");
    expect_error("{\"signatures\": {}}", ERG_EPARSE, "s.json", "missing format tag");
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, \"time_s\": 1,"
        " \"dynamic_energy_j\": 1}}, \"nodes\": [{\"id\": \"x\", \"signature\": \"a\"}],"
        " \"edges\": [[\"x\", \"y\"]]}",
        ERG_EINVAL, "s.json:1:", "edges[0]: edge [\"x\", \"y\"]: no node \"y\"");
    /* one reader for both commands: a repeated id is named as erg compose names it */
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, \"time_s\": 1,"
        " \"dynamic_energy_j\": 1}}, \"nodes\": [{\"id\": \"x\", \"signature\": \"a\"},"
        " {\"id\": \"x\", \"signature\": \"a\"}]}",
        ERG_EINVAL, "s.json:1:", "nodes[1]: node \"x\" is defined twice");
    /* a node after one checked with the same signature is still checked for its id's length */
    {
        char text[1024], longid[140];
        memset(longid, 'q', 130);
        longid[130] = '\0';
        snprintf(text, sizeof text,
                 "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, "
                 "\"time_s\": 1, \"dynamic_energy_j\": 1}}, \"nodes\": [{\"id\": \"x\", "
                 "\"signature\": \"a\"}, {\"id\": \"%s\", \"signature\": \"a\"}]}",
                 longid);
        expect_error(text, ERG_EPARSE, "s.json:1:", "nodes[1]: node id must be 1 to 127 bytes");
    }
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, \"time_s\": 1,"
        " \"dynamic_energy_j\": 1}}}",
        ERG_EPARSE, "s.json", "needs an expr or nodes");
    expect_error(
        "{\"erg\": \"schedule/1\", \"signatures\": {\"a\": {\"static_power_w\": 1, \"time_s\": 1,"
        " \"dynamic_energy_j\": 1}}, \"expr\": \"a\", \"edge\": []}",
        ERG_EPARSE, "s.json:1:", "edge: unknown member of a schedule/1 file");
    /* Times or energies that overflow a double: once selected no point and read past the
     * candidate buffer (found by fuzz_opsched); now refused, naming the element or operator. */
    expect_error("{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},"
                 " \"signatures\": {\"a\": {\"device\": \"g\", \"time_s\": 1e308,"
                 " \"dynamic_energy_j\": 1}}, \"expr\": {\"seq\": [\"a\", \"a\"]}}",
                 ERG_ERANGE, NULL, "expr.seq[0]: element \"a\": a point's energy is not finite");
    expect_error("{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 0}},"
                 " \"signatures\": {\"a\": {\"device\": \"g\", \"points\": [{\"time_s\": 1e308,"
                 " \"dynamic_energy_j\": 1}, {\"time_s\": 1, \"dynamic_energy_j\": 5}]},"
                 " \"b\": {\"device\": \"g\", \"time_s\": 1e308, \"dynamic_energy_j\": 1}},"
                 " \"expr\": {\"multi\": [{\"seq\": [\"a\", \"b\"]}, \"b\"]}}",
                 ERG_ERANGE, NULL, "expr.multi[0]: the seq's time or energy is not finite");
    expect_error("{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},"
                 " \"signatures\": {\"a\": {\"device\": \"g\", \"time_s\": 1e307,"
                 " \"dynamic_energy_j\": 1}}, \"nodes\": [{\"id\": \"x\", \"signature\": \"a\"},"
                 " {\"id\": \"y\", \"signature\": \"a\"}], \"edges\": [[\"x\", \"y\"]]}",
                 ERG_ERANGE, NULL, "node y: the schedule's time or energy up to this node");
    /* ⊕ across devices has no shared ω_dev. */
    expect_error("{\"erg\": \"schedule/1\", \"signatures\": {"
                 "\"a\": {\"device\": \"g0\", \"static_power_w\": 1, \"time_s\": 1, "
                 "\"dynamic_energy_j\": 1},"
                 "\"b\": {\"device\": \"g1\", \"static_power_w\": 1, \"time_s\": 1, "
                 "\"dynamic_energy_j\": 1}},"
                 " \"expr\": {\"par\": [\"a\", \"b\"]}}",
                 ERG_EINVAL, NULL,
                 "expr: ⊕ operands share no device operating point (ω_dev): \"a\" (expr.par[0]) "
                 "at no ω_dev (no omega.device) on g0; \"b\" (expr.par[1]) at no ω_dev (no "
                 "omega.device) on g1;");
    /* Nested: the message names the par's own path, a composite operand by its path, and each
     * operand's ω_dev groups; an operand without omega.device does not match every ω_dev. */
    expect_error(
        "{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 5}},"
        " \"signatures\": {"
        "\"a\": {\"device\": \"g\", \"omega\": {\"device\": {\"mhz\": 1}}, "
        "\"time_s\": 1, \"dynamic_energy_j\": 1},"
        "\"c\": {\"device\": \"g\", \"omega\": {\"device\": {\"mhz\": 2}}, "
        "\"time_s\": 1, \"dynamic_energy_j\": 1},"
        "\"b\": {\"device\": \"g\", \"time_s\": 1, \"dynamic_energy_j\": 1}},"
        " \"expr\": {\"seq\": [\"a\", {\"par\": [{\"seq\": [\"a\", \"a\"]}, \"b\", \"c\"]}]}}",
        ERG_EINVAL, NULL,
        "expr.seq[1]: ⊕ operands share no device operating point (ω_dev): "
        "expr.seq[1].par[0] at {\"mhz\":1} on g; \"b\" (expr.seq[1].par[1]) at no "
        "ω_dev (no omega.device) on g; \"c\" (expr.seq[1].par[2]) at {\"mhz\":2} on g;");
}

/* Frontier errors about a schedule read from a file are placed at the expression or the node they
 * name (hand-counted on these lines; columns are 1-based bytes). */
static void expect_at(const char *text, int status, const char *line_col, const char *detail)
{
    erg_frontier f;
    erg_diag d;
    int rc = read_frontier(text, &f, &d);
    if (rc == ERG_OK)
        erg_frontier_free(&f);
    char want[600];
    snprintf(want, sizeof want, "%s/s.json%s", dir, line_col);
    if (rc != status)
        fail_msg("status %d, expected %d (%s: %s)", rc, status, d.where, d.detail);
    assert_string_equal(d.where, want);
    if (strncmp(d.detail, detail, strlen(detail)) != 0)
        fail_msg("detail \"%s\" does not start \"%s\"", d.detail, detail);
}

#define TWO_GPUS                                                                                   \
    "{\"erg\": \"schedule/1\",\n" /* 1 */                                                          \
    " \"signatures\": {\n"        /* 2 */                                                          \
    "  \"a\": {\"device\": \"g0\", \"static_power_w\": 1, \"time_s\": 1, \"dynamic_energy_j\": "   \
    "1},\n"                                                                                        \
    "  \"b\": {\"device\": \"g1\", \"static_power_w\": 1, \"time_s\": 1, \"dynamic_energy_j\": "   \
    "1}},\n"

static void errors_name_the_expression_or_node(void **state)
{
    (void)state;
    /* line 5 ` "expr": {"par": ["a", "b"]}}`: the par object at 10 */
    expect_at(TWO_GPUS " \"expr\": {\"par\": [\"a\", \"b\"]}}\n", ERG_EINVAL, ":5:10",
              "expr: ⊕ operands share no device operating point (ω_dev): \"a\" (expr.par[0])");
    /* nested: line 6 `   {"par": ["a", "b"]}]}}`: seq[1] at 4 */
    expect_at(TWO_GPUS " \"expr\": {\"seq\": [\"a\",\n   {\"par\": [\"a\", \"b\"]}]}}\n",
              ERG_EINVAL, ":6:4",
              "expr.seq[1]: ⊕ operands share no device operating point (ω_dev): \"a\" "
              "(expr.seq[1].par[0])");
    /* a leaf whose energy overflows: line 5 ` "expr": {"par": ["a", "c"]}}`, "c" at 24 */
    expect_at("{\"erg\": \"schedule/1\",\n \"signatures\": {\n"
              "  \"a\": {\"device\": \"g0\", \"static_power_w\": 1, \"time_s\": 1, "
              "\"dynamic_energy_j\": 1},\n"
              "  \"c\": {\"device\": \"g0\", \"static_power_w\": 1e10, \"time_s\": 1e300, "
              "\"dynamic_energy_j\": 1}},\n"
              " \"expr\": {\"par\": [\"a\", \"c\"]}}\n",
              ERG_ERANGE, ":5:24", "expr.par[1]: element \"c\": a point's energy is not finite");
    /* a DAG node: line 4 `   {"id": "y", "signature": "a"}],`: nodes[1] at 4 */
    expect_at("{\"erg\": \"schedule/1\", \"devices\": {\"g\": {\"static_power_w\": 10}},\n"
              " \"signatures\": {\"a\": {\"device\": \"g\", \"time_s\": 1e307, "
              "\"dynamic_energy_j\": 1}},\n"
              " \"nodes\": [{\"id\": \"x\", \"signature\": \"a\"},\n"
              "   {\"id\": \"y\", \"signature\": \"a\"}],\n"
              " \"edges\": [[\"x\", \"y\"]]}\n",
              ERG_ERANGE, ":4:4", "node y: the schedule's time or energy up to this node");
    /* an error about no expression or node keeps the file alone: epsilon out of range */
    erg_opsched *os = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    const char *p = write_tmp("s.json", TWO_GPUS " \"expr\": \"a\"}\n");
    assert_int_equal(erg_opsched_read_file(p, &os, &d), ERG_OK);
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.epsilon = 11;
    erg_frontier f;
    assert_int_equal(erg_opsched_frontier(os, &o, &f, &d), ERG_EINVAL);
    assert_string_equal(d.where, "");
    erg_opsched_free(os);
}

static void plans_for_deadline_and_budget(void **state)
{
    (void)state;
    erg_frontier f;
    erg_diag d;
    assert_int_equal(read_frontier(PAR_DOC, &f, &d), ERG_OK);
    size_t i;
    assert_int_equal(erg_frontier_plan_deadline(&f, 1.5, &i, &d), ERG_OK);
    assert_int_equal(i, 0);
    assert_int_equal(erg_frontier_plan_deadline(&f, 2.0, &i, &d), ERG_OK);
    assert_int_equal(i, 1);
    assert_int_equal(erg_frontier_plan_deadline(&f, 0.5, &i, &d), ERG_ERANGE);
    assert_non_null(strstr(d.detail, "fastest possible makespan 1 s"));
    assert_int_equal(erg_frontier_plan_budget(&f, 60, &i, &d), ERG_OK);
    assert_int_equal(i, 1);
    assert_int_equal(erg_frontier_plan_budget(&f, 65, &i, &d), ERG_OK);
    assert_int_equal(i, 0);
    assert_int_equal(erg_frontier_plan_budget(&f, 54, &i, &d), ERG_ERANGE);
    assert_non_null(strstr(d.detail, "least energy 55 J"));
    /* frontier/1 round trip through jansson. */
    char p[512];
    snprintf(p, sizeof p, "%s/f.json", dir);
    assert_int_equal(erg_frontier_write_json(p, &f, 1, &d), ERG_OK);
    FILE *fp = fopen(p, "r");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    assert_non_null(strstr(buf, "\"erg\": \"frontier/1\""));
    assert_non_null(strstr(buf, "\"plan\""));
    assert_non_null(strstr(buf, "\"short\": 2"));
    erg_frontier_free(&f);
}

/* Read text as a reference CSV; on success check it has n points equal to t[]/e[]. */
static int read_ref(const char *text, size_t n, const double *t, const double *e, erg_diag *d)
{
    const char *p = write_tmp("ref.csv", text);
    double *rt = (double *)1, *re = (double *)1;
    size_t rn = 99;
    erg_diag_clear(d);
    int rc = erg_frontier_read_reference(p, &rt, &re, &rn, d);
    if (rc != ERG_OK) {
        assert_null(rt);
        assert_null(re);
        assert_int_equal(rn, 0);
        return rc;
    }
    assert_int_equal(rn, n);
    for (size_t i = 0; i < n; i++) {
        erg_assert_near(rt[i], t[i], 0);
        erg_assert_near(re[i], e[i], 0);
    }
    free(rt);
    free(re);
    return rc;
}

/* The where of a failed read_ref must end with ":line:col" (after the path). */
static void assert_at(const erg_diag *d, const char *line_col, const char *detail)
{
    size_t lw = strlen(d->where), lc = strlen(line_col);
    if (lw < lc || strcmp(d->where + lw - lc, line_col) != 0 || !strstr(d->where, "ref.csv"))
        fail_msg("where '%s', expected ...ref.csv%s", d->where, line_col);
    if (!strstr(d->detail, detail))
        fail_msg("detail '%s' lacks '%s'", d->detail, detail);
}

static void reads_reference_csv_by_column_name(void **state)
{
    (void)state;
    erg_diag d;
    const double t[] = {3.456, 3.455}, e[] = {5736.36, 5735.9};
    /* Perseus's names, erg's names, swapped order, extra columns, CRLF, blanks, quotes. */
    assert_int_equal(read_ref("time,energy\n3.456,5736.36\n3.455,5735.9\n", 2, t, e, &d), ERG_OK);
    assert_int_equal(read_ref("energy,time\n5736.36,3.456\n5735.9,3.455", 2, t, e, &d), ERG_OK);
    assert_int_equal(
        read_ref("\"Energy_J\", plan ,TIME_S\r\n5736.36,1,3.456\r\n\r\n5735.9,0,3.455\r\n", 2, t, e,
                 &d),
        ERG_OK);
    /* What erg frontier --csv writes reads back. */
    erg_frontier f;
    assert_int_equal(read_frontier(PAR_DOC, &f, &d), ERG_OK);
    char p[512];
    snprintf(p, sizeof p, "%s/f.csv", dir);
    assert_int_equal(erg_frontier_write_csv(p, &f, 0, &d), ERG_OK);
    double *rt, *re;
    size_t rn;
    assert_int_equal(erg_frontier_read_reference(p, &rt, &re, &rn, &d), ERG_OK);
    assert_int_equal(rn, f.n_points);
    for (size_t i = 0; i < rn; i++) {
        erg_assert_rel(rt[i], f.points[i].time_s, 1e-9);
        erg_assert_rel(re[i], f.points[i].energy_j, 1e-9);
    }
    free(rt);
    free(re);
    erg_frontier_free(&f);
}

static void rejects_bad_reference_csv(void **state)
{
    (void)state;
    erg_diag d;
    assert_int_equal(read_ref("", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":1:1", "empty file");
    assert_int_equal(read_ref("42\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":1:1", "no time column");
    assert_int_equal(read_ref("time_s,power_w\n1,2\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":1:1", "no energy column");
    assert_int_equal(read_ref("3.4,5736\n3.5,5700\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":1:1", "no time column");
    assert_int_equal(read_ref("time,energy,time_s\n1,2,3\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":1:13", "second time column");
    assert_int_equal(read_ref("time,energy\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":2:1", "no data rows");
    assert_int_equal(read_ref("time,energy\n1,2\n3\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":3:1", "1 field, the header has 2");
    assert_int_equal(read_ref("time,energy\n1,2\n3,4,5\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":3:1", "3 fields");
    assert_int_equal(read_ref("time,energy\n1,2\n3.5, 4J\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":3:6", "energy: expected a finite non-negative number, got '4J'");
    assert_int_equal(read_ref("time,energy\nnan,2\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":2:1", "time:");
    assert_int_equal(read_ref("time,energy\n1,-2\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":2:3", "energy:");
    assert_int_equal(read_ref("time,energy\n1,\n", 0, NULL, NULL, &d), ERG_EPARSE);
    assert_at(&d, ":2:3", "got ''");
    double *rt, *re;
    size_t rn;
    char p[512];
    snprintf(p, sizeof p, "%s/absent.csv", dir);
    assert_int_equal(erg_frontier_read_reference(p, &rt, &re, &rn, &d), ERG_ENOENT);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/erg_frontier_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *files[] = {"s.json", "fixed.json", "f.json", "ref.csv", "f.csv"};
    for (size_t i = 0; i < 5; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_an_expression_with_operating_sets),
        cmocka_unit_test(reads_a_dag_a_signature_file_and_transitions),
        cmocka_unit_test(single_point_schedules_match_the_calculus),
        cmocka_unit_test(dag_gaps_are_charged_at_idle_power),
        cmocka_unit_test(rejects_bad_operating_sets),
        cmocka_unit_test(errors_name_the_expression_or_node),
        cmocka_unit_test(plans_for_deadline_and_budget),
        cmocka_unit_test(reads_reference_csv_by_column_name),
        cmocka_unit_test(rejects_bad_reference_csv),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
