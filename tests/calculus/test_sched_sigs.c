/* SPDX-License-Identifier: MIT */
/*
 * Signatures inside a schedule/1 file: the reader decodes an inline signature object as it streams
 * (no JSON tree), and hands the whole "signatures" member to jansson as before when any element is
 * not such an object or would be refused. Both ways and erg_signature_read_file must give the same
 * record for a rich signature (co-runner contexts, command, channels, flags, theta, omega, null
 * members); bad members inside a schedule's signature are named with the file, the line and
 * column (counted by hand below) and the JSON path; and a read with each allocation failed in
 * turn gives the same schedule or ERG_ENOMEM, nothing leaked (ASan in CI).
 */
#include "support/erg_test.h"
#include "support/erg_tmp.h"
#include "support/failalloc.h"

#include "calculus/schedule_impl.h"
#include "erg/calculus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tmpdir, sizeof tmpdir, "sched_sigs");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tmpdir);
}

/* The members of a rich signature (docs/context.md's example, with flags, theta, omega, a null
 * member and members erg compose does not read). */
#define RICH                                                                                       \
    "\"name\": \"gemm\", \"device\": \"cpu\", \"static_power_w\": 10, \"time_s\": 1,\n"            \
    " \"dynamic_energy_j\": 5, \"time_var_s2\": null, \"energy_var_j2\": 0.25,\n"                  \
    " \"grade\": \"model_based\", \"runs\": 7, \"flags\": [\"stale\", \"glitch\", \"stale\"],\n"   \
    " \"kappa\": \"kernel\", \"theta\": {\"stream\": \"7\", \"category\": \"ker\\u006eel\",\n"     \
    "   \"n\": [1, 2.5, -3e0, {\"b\": true, \"a\": null}]}, \"omega\": null,\n"                    \
    " \"channels\": [\"package-0\", \"dram\"], \"command\": \"./gemm 256\",\n"                     \
    " \"contexts\": [\n"                                                                           \
    "  {\"name\": \"after:stream\", \"mechanism\": \"cache\", \"after\": \"stream\",\n"            \
    "   \"cache\": \"cold\", \"traffic_bytes\": 67108864, \"time_s\": 1.2,\n"                      \
    "   \"dynamic_energy_j\": 5.5, \"energy_var_j2\": 0.3, \"runs\": 7},\n"                        \
    "  {\"name\": \"with:copy\", \"mechanism\": \"contention\", \"corunners\": [\"copy\"],\n"      \
    "   \"temperature_c\": 61.5, \"time_s\": 1.05, \"dynamic_energy_j\": 5.2}]"

/* A signature with every optional member null and no device: static power left to none. */
#define NULLS                                                                                      \
    "{\"time_s\": 0.5, \"dynamic_energy_j\": 0, \"static_power_w\": null, \"device\": null,\n"     \
    " \"grade\": null, \"runs\": null, \"flags\": null, \"kappa\": null, \"theta\": null,\n"       \
    " \"name\": null, \"time_var_s2\": 1e-4, \"energy_var_j2\": 0}"

static void same_signature(const erg_signature *a, const erg_signature *b)
{
    assert_true(a->static_power_w == b->static_power_w ||
                (isnan(a->static_power_w) && isnan(b->static_power_w)));
    assert_true(a->time_s == b->time_s);
    assert_true(a->dynamic_energy_j == b->dynamic_energy_j);
    assert_true(a->time_var_s2 == b->time_var_s2);
    assert_true(a->energy_var_j2 == b->energy_var_j2);
    assert_int_equal(a->grade, b->grade);
    assert_int_equal(a->runs, b->runs);
    assert_int_equal(a->flags, b->flags);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->kappa, b->kappa);
    assert_string_equal(a->theta, b->theta);
    assert_string_equal(a->omega, b->omega);
}

static const erg_signature *sig_of(const erg_schedule *s, const char *name)
{
    uint32_t i = erg__sig_index(s, name);
    assert_true(i != UINT32_MAX);
    return &s->sigs[i];
}

/* The schedule at path: gemm (z is declared, not used), each compared with the expected records. */
static void check_schedule(const char *path, const erg_signature *gemm, const erg_signature *z)
{
    erg_schedule *s = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    if (erg_schedule_read_file(path, &s, &d) != ERG_OK)
        fail_msg("%s: %s: %s", path, d.where, d.detail);
    assert_int_equal(s->n_sigs, 2);
    assert_string_equal(s->sigs[0].name, "gemm"); /* file order */
    same_signature(sig_of(s, "gemm"), gemm);
    same_signature(sig_of(s, "z"), z);
    erg_schedule_free(s);
}

static const char *schedule_text(const char *gemm, const char *z)
{
    static char text[8192];
    snprintf(text, sizeof text,
             "{\"erg\": \"schedule/1\", \"devices\": {\"cpu\": {\"static_power_w\": 10}},\n"
             " \"signatures\": {\"gemm\": %s,\n \"z\": %s},\n"
             " \"expr\": {\"seq\": [\"gemm\"]}}\n",
             gemm, z);
    return text;
}

static void rich_signature_reads_the_same_every_way(void **state)
{
    (void)state;
    /* the signature/1 file, read alone */
    const char *f = erg_tmp_put(tmpdir, "gemm.json", "{\"erg\": \"signature/1\", " RICH "}\n");
    erg_signature file_sig;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_signature_read_file(f, &file_sig, &d), ERG_OK);
    /* hand-checked: what the rich text says */
    assert_true(file_sig.static_power_w == 10.0 && file_sig.time_s == 1.0);
    assert_true(file_sig.dynamic_energy_j == 5.0 && file_sig.energy_var_j2 == 0.25);
    assert_true(file_sig.time_var_s2 == 0.0);
    assert_int_equal(file_sig.grade, ERG_GRADE_MODEL_BASED);
    assert_int_equal(file_sig.runs, 7);
    unsigned stale, glitch;
    assert_int_equal(erg_flag_parse("stale", &stale), ERG_OK);
    assert_int_equal(erg_flag_parse("glitch", &glitch), ERG_OK);
    assert_int_equal(file_sig.flags, stale | glitch);
    assert_string_equal(file_sig.kappa, "kernel");
    assert_string_equal(file_sig.theta,
                        "{\"category\":\"kernel\",\"n\":[1,2.5,-3.0,{\"a\":null,\"b\":true}],"
                        "\"stream\":\"7\"}");
    assert_string_equal(file_sig.omega, "");
    erg_signature z;
    erg_signature_init(&z);
    z.static_power_w = NAN;
    z.time_s = 0.5;
    z.time_var_s2 = 1e-4;
    z.grade = ERG_GRADE_ESTIMATOR;
    snprintf(z.name, sizeof z.name, "z");

    /* inline: streamed */
    check_schedule(erg_tmp_put(tmpdir, "inline.json", schedule_text("{" RICH "}", NULLS)),
                   &file_sig, &z);
    /* by path: that element through erg_signature_read_file, the other through jansson */
    check_schedule(erg_tmp_put(tmpdir, "path.json", schedule_text("\"gemm.json\"", NULLS)),
                   &file_sig, &z);
    /* the other way round: the inline rich one through jansson beside a path */
    erg_tmp_put(tmpdir, "z.json",
                "{\"erg\": \"signature/1\", \"name\": \"z\", \"time_s\": 0.5, \"static_power_w\": "
                "0, \"dynamic_energy_j\": 0, \"time_var_s2\": 1e-4}");
    erg_signature z0 = z;
    z0.static_power_w = 0.0;
    check_schedule(erg_tmp_put(tmpdir, "mixed.json", schedule_text("{" RICH "}", "\"z.json\"")),
                   &file_sig, &z0);
}

static void expect(const char *name, const char *text, int status, const char *where,
                   const char *detail)
{
    const char *path = erg_tmp_put(tmpdir, name, text);
    erg_schedule *s = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_schedule_read_file(path, &s, &d);
    erg_schedule_free(s);
    size_t nw = strlen(d.where), ne = strlen(where);
    if (rc != status || nw < ne || strcmp(d.where + nw - ne, where) != 0 ||
        strcmp(d.detail, detail) != 0)
        fail_msg("%s: status %s, \"%s: %s\"; expected %s, \"...%s: %s\"", name, erg_status_name(rc),
                 d.where, d.detail, erg_status_name(status), where, detail);
}

/* Line 4 holds signature b, its object opening at column 8 ("  \"b\": {" ). */
static const char *with_b(const char *b)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "{\"erg\": \"schedule/1\", \"devices\": {\"cpu\": {\"static_power_w\": 10}},\n"
             " \"signatures\": {\n"
             "  \"a\": {\"device\": \"cpu\", \"time_s\": 1, \"dynamic_energy_j\": 2},\n"
             "  \"b\": %s,\n"
             "  \"c\": {\"static_power_w\": 3, \"time_s\": 1, \"dynamic_energy_j\": 2}},\n"
             " \"expr\": {\"seq\": [\"a\", \"b\", \"c\"]}}\n",
             b);
    return text;
}

static void bad_signatures_are_named_with_their_place(void **state)
{
    (void)state;
    /* col 8 '{', then "time_s": (9 chars) and a space: the value at col 19 */
    expect("type.json", with_b("{\"time_s\": \"1\", \"dynamic_energy_j\": 2}"), ERG_EPARSE,
           "type.json:4:19", "signatures.b.time_s: expected a number");
    expect("missing.json", with_b("{\"time_s\": 1}"), ERG_EPARSE, "missing.json:4:8",
           "signatures.b.dynamic_energy_j: required number is missing");
    /* after '{' at col 8: "time_s" cols 9-16, ": 1, " to col 21, "dynamic_energy_j" cols 22-39,
     * ": ": the value at col 42 (each later member of b: "key" from col 45) */
    expect("negative.json", with_b("{\"time_s\": 1, \"dynamic_energy_j\": -2}"), ERG_EPARSE,
           "negative.json:4:42", "signatures.b.dynamic_energy_j: must not be negative (got -2)");
    /* "flags" cols 45-51, '[' col 54, "stale" cols 55-61: "nope" at col 64 */
    char detail[600], known[512];
    erg_flags_text(ERG_FLAG_ALL, ", ", known, sizeof known);
    snprintf(detail, sizeof detail, "signatures.b.flags[1]: unknown flag \"nope\" (known: %s)",
             known);
    expect("flag.json",
           with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2, \"flags\": [\"stale\", \"nope\"]}"),
           ERG_EPARSE, "flag.json:4:64", detail);
    expect("grade.json", with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2, \"grade\": \"exact\"}"),
           ERG_EPARSE, "grade.json:4:54",
           "signatures.b.grade: expected \"hw_shunt\", \"model_based\" or \"estimator\"");
    expect("runs.json", with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2, \"runs\": 1.5}"),
           ERG_EPARSE, "runs.json:4:53", "signatures.b.runs: expected a non-negative integer");
    expect("theta.json", with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2, \"theta\": \"x\"}"),
           ERG_EPARSE, "theta.json:4:54", "signatures.b.theta: expected an object");
    expect("path-type.json", with_b("7"), ERG_EPARSE, "path-type.json:4:8",
           "signatures.b: expected a signature object or the path of a signature/1 file");
    /* duplicates: jansson's message, at the "signatures" member (line 2, col 2) */
    expect("dup-key.json", with_b("{\"time_s\": 1, \"time_s\": 2, \"dynamic_energy_j\": 2}"),
           ERG_EPARSE, "dup-key.json:2:2", "signatures: duplicate object key near '\"time_s\"'");
    char text[2048];
    snprintf(text, sizeof text, "%s", with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2}"));
    memcpy(strstr(text, "\"b\": {"), "\"a\"", 3);
    expect("dup-name.json", text, ERG_EPARSE, "dup-name.json:2:2",
           "signatures: duplicate object key near '\"a\"'");
    /* checks that need the device: the streamed path makes them in the jansson path's order */
    expect("undeclared.json",
           with_b("{\"device\": \"gpu\", \"time_s\": 1, \"dynamic_energy_j\": 2}"), ERG_EINVAL,
           "undeclared.json:4:19", "signatures.b.device: undeclared device \"gpu\"");
    expect("m1.json",
           with_b("{\"device\": \"cpu\", \"time_s\": 1, \"dynamic_energy_j\": 2, "
                  "\"time_var_s2\": 1, \"energy_var_j2\": 1}"),
           ERG_EINVAL, "m1.json:4:8",
           "signatures.b: energy_var_j2 (1 J^2) is below static_power_w^2 * time_var_s2 (100 "
           "J^2): the dynamic-energy variance would be negative (Axiom M1)");
    /* an earlier element's device error comes before a later element's type error */
    snprintf(text, sizeof text, "%s", with_b("{\"time_s\": \"1\", \"dynamic_energy_j\": 2}"));
    memcpy(strstr(text, "\"cpu\", \"time_s\": 1"), "\"cpx\"", 5);
    expect("order.json", text, ERG_EINVAL, "order.json:3:19",
           "signatures.a.device: undeclared device \"cpx\"");
    /* nesting as deep as the re-emitted capture allowed: theta's '{' at col 54, "a": then the
     * k-th '[' at col 59 + k; the 125th is at depth 128 (signatures 2, b 3, theta 4), refused
     * once read (col 185) */
    char deep[1024];
    snprintf(deep, sizeof deep,
             "{\"time_s\": 1, \"dynamic_energy_j\": 2, \"theta\": {\"a\": %.130s%.130s}}",
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    expect("deep.json", with_b(deep), ERG_EPARSE, "deep.json:4:185",
           "nested too deeply (an expression may nest 64 levels)");
    /* an unknown member is refused as it streams */
    expect("unknown.json", with_b("{\"time_s\": 1, \"dynamic_energy_j\": 2, \"tau\": 1}"),
           ERG_EPARSE, "unknown.json:4:45", "signatures.b.tau: unknown member of a signature");
}

/* f read with each allocation failed in turn: the same records, or ERG_ENOMEM and nothing. */
static void fail_each_allocation(const char *f)
{
    erg_schedule *s = NULL;
    erg_diag d;
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg_schedule_read_file(f, &s, &d), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    erg_signature gemm = *sig_of(s, "gemm"), z = *sig_of(s, "z");
    erg_schedule_free(s);
    assert_true(calls > 10);
    size_t failures = 0;
    for (unsigned long n = 1; n <= calls; n++) {
        s = NULL;
        erg_diag_clear(&d);
        erg_failalloc_arm(n, 0);
        int rc = erg_schedule_read_file(f, &s, &d);
        erg_failalloc_arm(0, 0);
        if (rc == ERG_OK) {
            same_signature(sig_of(s, "gemm"), &gemm);
            same_signature(sig_of(s, "z"), &z);
            erg_schedule_free(s);
        } else {
            if (rc != ERG_ENOMEM)
                fail_msg("allocation %lu failed: %s: %s: %s", n, erg_status_name(rc), d.where,
                         d.detail);
            assert_null(s);
            failures++;
        }
    }
    assert_true(failures > 0);
}

static void each_failed_allocation_fails_cleanly(void **state)
{
    (void)state;
    /* streamed, then through jansson (a path beside it: "signatures" read again from the text) */
    fail_each_allocation(erg_tmp_put(tmpdir, "oom.json", schedule_text("{" RICH "}", NULLS)));
    erg_tmp_put(tmpdir, "z1.json",
                "{\"erg\": \"signature/1\", \"time_s\": 0.5, \"static_power_w\": 0, "
                "\"dynamic_energy_j\": 0}");
    fail_each_allocation(
        erg_tmp_put(tmpdir, "oom-mixed.json", schedule_text("{" RICH "}", "\"z1.json\"")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rich_signature_reads_the_same_every_way),
        cmocka_unit_test(bad_signatures_are_named_with_their_place),
        cmocka_unit_test(each_failed_allocation_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
