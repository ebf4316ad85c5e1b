/* SPDX-License-Identifier: MIT */
/* rules/1: the issue's example verbatim, globs, regex, device scoping, signatures, bad files. */
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/store.h"
#include "erg/trace.h"
#include "trace/trace_internal.h"

static erg_rules *ok_rules(const char *json, const char *base)
{
    erg_diag d;
    erg_rules *r = NULL;
    if (erg_rules_read_buffer(json, strlen(json), "r.json", base, &r, &d) != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    return r;
}

static void issue_example_reads_and_matches_first_rule(void **state)
{
    (void)state;
    /* Exactly the example of issue 4. */
    erg_rules *r =
        ok_rules("{\"erg\": \"rules/1\", \"devices\": [{\"match\": \"NVIDIA A100*\", "
                 "\"static_power_w\": 60, "
                 "\"idle_power_w\": 60}], \"default_device\": {\"static_power_w\": 60}, \"rules\": "
                 "[{\"category\": \"kernel\", \"name\": \"*gemm*\", \"dynamic_power_w\": 200, "
                 "\"dynamic_power_sd_w\": 20}, {\"category\": \"*\", \"name\": \"*\", "
                 "\"dynamic_power_w\": 100}]}",
                 ".");
    assert_int_equal(r->n_devices, 1);
    assert_int_equal(r->n_rules, 2);
    assert_int_equal(erg__rules_match(r, "kernel", "ampere_sgemm_128x64_tn", ""), 0);
    /* a collective kernel is a kernel: the first kernel rule that matches it takes it (issue 11),
     * here "*gemm*"; only an earlier collective rule would come first */
    assert_int_equal(erg__rules_match(r, "collective", "ncclgemm", ""), 0);
    assert_int_equal(erg__rules_match(r, "collective", "ncclAllReduce", ""), 1);
    assert_int_equal(erg__rules_match(r, "kernel", "elementwise", ""), 1);
    erg_assert_near(r->rules[0].dynamic_power_w, 200, 0);
    erg_assert_near(r->rules[0].dynamic_power_sd_w, 20, 0);
    erg_assert_near(r->rules[1].dynamic_power_sd_w, 0, 0);
    assert_int_equal(r->rules[0].grade, ERG_GRADE_ESTIMATOR);
    const erg__dev_rule *dv = erg__rules_device(r, "NVIDIA A100-SXM4-80GB");
    assert_ptr_equal(dv, &r->devices[0]);
    erg_assert_near(dv->idle_power_w, 60, 0);
    dv = erg__rules_device(r, "NVIDIA H100 80GB HBM3");
    assert_ptr_equal(dv, &r->default_device);
    assert_true(isnan(dv->idle_power_w));
    assert_ptr_equal(erg__rules_device(r, ""), &r->default_device);
    erg_rules_free(r);
}

static void regex_device_scope_and_grade(void **state)
{
    (void)state;
    erg_rules *r =
        ok_rules("{\"erg\": \"rules/1.2\", \"note\": \"minor versions are read\", \"rules\": ["
                 "{\"category\": \"kernel\", \"device\": \"*H100*\", \"regex\": \"^sm90_.*gemm\","
                 " \"dynamic_power_w\": 500, \"grade\": \"model_based\", \"source\": \"measured\"},"
                 "{\"category\": \"kernel\", \"regex\": \"gemm|conv\", \"dynamic_power_w\": 300},"
                 "{\"category\": \"gpu_mem*\", \"dynamic_power_w\": 40}]}",
                 ".");
    assert_int_equal(erg__rules_match(r, "kernel", "sm90_xmma_gemm_f16", "NVIDIA H100 SXM"), 0);
    assert_int_equal(r->rules[0].grade, ERG_GRADE_MODEL_BASED);
    assert_int_equal(erg__rules_match(r, "kernel", "sm90_xmma_gemm_f16", "NVIDIA A100"), 1);
    assert_int_equal(erg__rules_match(r, "kernel", "x_sm90_gemm", "NVIDIA H100 SXM"), 1);
    assert_int_equal(erg__rules_match(r, "kernel", "implicit_conv2d", ""), 1);
    assert_int_equal(erg__rules_match(r, "gpu_memset", "Memset (Device)", ""), 2);
    assert_int_equal(erg__rules_match(r, "kernel", "softmax", ""), -1);
    assert_int_equal(erg__rules_match(r, "collective", "nccl", ""), -1);
    assert_null(erg__rules_device(r, "anything")); /* no devices, no default_device */
    erg_rules_free(r);
    /* Bounded repetitions well under the expansion limit are read and match as POSIX says. */
    r = ok_rules(
        "{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"^(ab){3}x+[]a-z{}]?(c|d){2,40}$\","
        " \"dynamic_power_w\": 1}]}",
        ".");
    assert_int_equal(erg__rules_match(r, "kernel", "abababxxcd", ""), 0);
    assert_int_equal(erg__rules_match(r, "kernel", "ababxxcd", ""), -1);
    assert_int_equal(erg__rules_match(r, "kernel", "abababx]cc", ""), 0);
    erg_rules_free(r);
}

static void signature_rules_by_path_and_by_name(void **state)
{
    (void)state;
    char dir[] = "/tmp/erg_rules_XXXXXX";
    assert_non_null(mkdtemp(dir));
    erg_signature sig;
    erg_signature_init(&sig);
    snprintf(sig.name, sizeof sig.name, "attn");
    sig.static_power_w = 60;
    sig.time_s = 0.002;
    sig.dynamic_energy_j = 0.5;
    sig.time_var_s2 = 1e-8;
    sig.energy_var_j2 = 60 * 60 * 1e-8 + 0.01;
    sig.grade = ERG_GRADE_HW_SHUNT;
    sig.runs = 10;
    char path[256];
    snprintf(path, sizeof path, "%s/attn.json", dir);
    erg_diag d;
    assert_int_equal(erg_signature_write_file(path, &sig, &d), ERG_OK);
    erg_rules *r =
        ok_rules("{\"erg\": \"rules/1\", \"rules\": ["
                 "{\"category\": \"kernel\", \"name\": \"*attn*\", \"signature\": \"attn\"},"
                 "{\"category\": \"kernel\", \"name\": \"*\", \"signature\": \"./attn.json\"}]}",
                 dir);
    assert_int_equal(r->rules[0].has_signature, 1);
    erg_assert_near(r->rules[0].sig.dynamic_energy_j, 0.5, 0);
    assert_int_equal(r->rules[0].grade, ERG_GRADE_HW_SHUNT);
    assert_int_equal(r->rules[1].has_signature, 1);
    erg_rules_free(r);

    /* The rule scales d and σ_d with the traced duration: a 4 ms kernel is 2 × the 2 ms signature.
     */
    r = ok_rules("{\"erg\": \"rules/1\", \"default_device\": {\"static_power_w\": 60, \"grade\": "
                 "\"hw_shunt\"}, \"rules\": ["
                 "{\"category\": \"kernel\", \"name\": \"*\", \"signature\": \"attn\"}]}",
                 dir);
    static const char tr[] =
        "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"attn_fwd\","
        "\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":4000}]}";
    erg_trace *t = erg_trace_new();
    assert_int_equal(erg_trace_read_buffer(t, tr, strlen(tr), "t", &d), ERG_OK);
    erg_trace_report rep;
    int st = erg_trace_report_make(t, r, NULL, &rep, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_rel(rep.dynamic_energy_j, 1.0, 1e-12);
    erg_assert_rel(rep.energy_j, 60 * 0.004 + 1.0, 1e-9);
    erg_assert_rel(rep.energy_sd_j, 2 * 0.1, 1e-9); /* σ_d = sqrt(0.01) scaled by 2 */
    assert_int_equal(rep.grade, ERG_GRADE_HW_SHUNT);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    /* A device static power without a grade is an estimate: the composite is only as good. */
    r = ok_rules("{\"erg\": \"rules/1\", \"default_device\": {\"static_power_w\": 60}, \"rules\": ["
                 "{\"category\": \"kernel\", \"name\": \"*\", \"signature\": \"attn\"}]}",
                 dir);
    assert_int_equal(erg_trace_report_make(t, r, NULL, &rep, &d), ERG_OK);
    assert_int_equal(rep.grade, ERG_GRADE_ESTIMATOR);
    erg_assert_rel(rep.energy_j, 60 * 0.004 + 1.0, 1e-9);
    erg_trace_report_free(&rep);
    erg_trace_free(t);
    erg_rules_free(r);

    /* A bare name that is no file is looked up in the signature store ($ERG_STORE). */
    char db[256];
    snprintf(db, sizeof db, "%s/store.db", dir);
    setenv("ERG_STORE", db, 1);
    erg_store *store = NULL;
    assert_int_equal(erg_store_open(db, 1, &store, &d), ERG_OK);
    snprintf(sig.name, sizeof sig.name, "mlp");
    sig.dynamic_energy_j = 0.25;
    assert_int_equal(erg_store_put(store, &sig, &d), ERG_OK);
    erg_store_close(store);
    static const char by_name[] = "{\"erg\": \"rules/1\", \"rules\": ["
                                  "{\"category\": \"kernel\", \"signature\": \"mlp\"}]}";
    /* without a resolver the trace module looks nowhere else (it never opens the store) */
    assert_int_equal(erg_rules_read_buffer(by_name, strlen(by_name), "r.json", dir, &r, &d),
                     ERG_ENOENT);
    assert_non_null(strstr(d.detail, "rules[0].signature"));
    r = NULL;
    assert_int_equal(erg_rules_read_buffer_resolving(by_name, strlen(by_name), "r.json", dir,
                                                     erg_store_signature_resolver, NULL, &r, &d),
                     ERG_OK);
    erg_assert_near(r->rules[0].sig.dynamic_energy_j, 0.25, 0);
    assert_string_equal(r->rules[0].sig.name, "mlp");
    erg_rules_free(r);
    unlink(db);

    /* A missing signature is named in the error. */
    erg_rules *bad = NULL;
    static const char missing[] = "{\"erg\": \"rules/1\", \"rules\": [{\"category\": \"kernel\","
                                  " \"signature\": \"nope\"}]}";
    assert_int_equal(erg_rules_read_buffer_resolving(missing, strlen(missing), "r.json", dir,
                                                     erg_store_signature_resolver, NULL, &bad, &d),
                     ERG_ENOENT);
    assert_non_null(strstr(d.detail, "rules[0].signature"));
    assert_non_null(strstr(d.detail, "nope"));
    assert_null(bad);
    unsetenv("ERG_STORE");
    unlink(path);
    rmdir(dir);
}

static void expect_bad(const char *json, int status, const char *needle)
{
    erg_diag d;
    erg_rules *r = (erg_rules *)(void *)&d;
    assert_int_equal(erg_rules_read_buffer(json, strlen(json), "r.json", ".", &r, &d), status);
    assert_null(r);
    char line[1024];
    erg_diag_format(&d, line, sizeof line);
    if (!strstr(line, needle))
        fail_msg("\"%s\" lacks \"%s\"", line, needle);
}

static void bad_rules_files_are_rejected_with_their_place(void **state)
{
    (void)state;
    expect_bad("{\"rules\": []}", ERG_EPARSE, "missing format tag");
    expect_bad("{\"erg\": \"rules/2\", \"rules\": []}", ERG_EVERSION, "rules/2");
    expect_bad("{\"erg\": \"schedule/1\", \"rules\": []}", ERG_EPARSE, "expected \"rules/1\"");
    expect_bad("{\"erg\": \"rules/1\"}", ERG_EPARSE, "rules: required array");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"name\": \"a\", \"regex\": \"b\", "
               "\"dynamic_power_w\": 1}]}",
               ERG_EPARSE, "rules[0]: give either name or regex");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"name\": \"a\"}]}", ERG_EPARSE,
               "rules[0]: give exactly one of dynamic_power_w and signature");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"name\": \"a\", \"dynamic_power_w\": 1,"
               " \"signature\": \"x\"}]}",
               ERG_EPARSE, "exactly one");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"(\", \"dynamic_power_w\": 1}]}",
               ERG_EINVAL, "rules[0].regex: bad regular expression");
    /* Found by tests/fuzz/fuzz_rules: stacked repetitions made glibc's regcomp take > 3 GB. */
    {
        char json[512] = "{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"nvjet";
        size_t n = strlen(json);
        memset(json + n, '+', 100);
        strcpy(json + n + 100, "|flash\", \"dynamic_power_w\": 1}]}");
        expect_bad(json, ERG_EINVAL, "rules[0].regex: bad regular expression: adjacent repetition");
    }
    /* Also from fuzz_rules: regcomp ran over 10 s on this one (epsilon closures). */
    expect_bad(
        "{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"gemmry??++++++++++rcy++++++?????G\","
        " \"dynamic_power_w\": 1}]}",
        ERG_EINVAL, "adjacent repetition operators");
    {
        /* Nesting without adjacency: 2^13 atoms once expanded. */
        char json[512] = "{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"";
        size_t n = strlen(json);
        memset(json + n, '(', 12);
        strcpy(json + n + 12, "ab+)+)+)+)+)+)+)+)+)+)+)+\", \"dynamic_power_w\": 1}]}");
        expect_bad(json, ERG_EINVAL, "nested repetitions expand to more than 4096 atoms");
    }
    /* issue 16: back-references backtrack exponentially ("((a*)*)*\2\1b": 4 s on 80 chars) */
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"((a*)*)*\\\\2\\\\1b\", "
               "\"dynamic_power_w\": 1}]}",
               ERG_EINVAL, "rules[0].regex: bad regular expression: back-references");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"(ab)\\\\9\", "
               "\"dynamic_power_w\": 1}]}",
               ERG_EINVAL, "back-references");
    {
        /* a backslash-digit inside a bracket expression is two literal characters, and an escaped
         * backslash followed by a digit is a literal backslash then a digit: both accepted */
        erg_rules *ok = NULL;
        erg_diag d;
        const char *good = "{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"x[\\\\1]\\\\\\\\2\", "
                           "\"dynamic_power_w\": 1}]}";
        assert_int_equal(erg_rules_read_buffer(good, strlen(good), "r.json", ".", &ok, &d), ERG_OK);
        erg_rules_free(ok);
    }
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"regex\": \"((a{99}){99}){99}\", "
               "\"dynamic_power_w\": 1}]}",
               ERG_EINVAL, "more than 4096 atoms");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"dynamic_power_w\": -1}]}", ERG_EPARSE,
               "rules[0].dynamic_power_w");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"dynamic_power_w\": \"100\"}]}", ERG_EPARSE,
               "rules[0].dynamic_power_w");
    expect_bad("{\"erg\": \"rules/1\", \"rules\": [{\"dynamic_powr_w\": 100}]}", ERG_EPARSE,
               "rules[0].dynamic_powr_w: unknown member");
    expect_bad(
        "{\"erg\": \"rules/1\", \"rules\": [{\"dynamic_power_w\": 1, \"grade\": \"great\"}]}",
        ERG_EPARSE, "rules[0].grade");
    expect_bad("{\"erg\": \"rules/1\", \"default_device\": {\"static_power_w\": 1, \"grade\": "
               "\"exact\"}, \"rules\": []}",
               ERG_EPARSE, "default_device.grade");
    expect_bad("{\"erg\": \"rules/1\", \"devices\": [{\"static_power_w\": 60}], \"rules\": []}",
               ERG_EPARSE, "devices[0].match");
    expect_bad("{\"erg\": \"rules/1\", \"devices\": [{\"match\": \"*\"}], \"rules\": []}",
               ERG_EPARSE, "devices[0].static_power_w");
    expect_bad("{\"erg\": \"rules/1\", \"default_device\": {\"static_power_w\": 1, "
               "\"idle_power_w\": -2}, \"rules\": []}",
               ERG_EPARSE, "default_device.idle_power_w");
    expect_bad("{\"erg\": \"rules/1\",\n \"rules\": [}", ERG_EPARSE, "r.json:2:");
    /* a check on a decoded value names its line and column (hand-counted), found in the text on
     * the error path; a missing member: the object that lacks it */
#define TWO "{\"erg\": \"rules/1\",\n \"rules\": [\n  {\"name\": \"a\", \"dynamic_power_w\": 1},\n"
    expect_bad(TWO "  {\"regex\": \"(\", \"dynamic_power_w\": 1}]}", ERG_EINVAL,
               "r.json:4:13: rules[1].regex: bad regular expression");
    expect_bad(TWO "  {\"name\": \"b\", \"dynamic_powr_w\": 100}]}", ERG_EPARSE,
               "r.json:4:35: rules[1].dynamic_powr_w: unknown member");
    expect_bad(TWO "  {\"name\": \"b\"}]}", ERG_EPARSE,
               "r.json:4:3: rules[1]: give exactly one of dynamic_power_w and signature");
#undef TWO
    expect_bad("{\"erg\": \"rules/1\",\n \"devices\": [\n   {\"static_power_w\": 60}],\n"
               " \"rules\": []}",
               ERG_EPARSE, "r.json:3:4: devices[0].match: required string is missing");
}

static void default_rules_cover_a100_and_h100(void **state)
{
    (void)state;
    erg_diag d;
    erg_rules *r = NULL;
    int st = erg_rules_default(&r, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    erg_assert_near(erg__rules_device(r, "NVIDIA A100-SXM4-80GB")->static_power_w, 60, 0);
    erg_assert_near(erg__rules_device(r, "NVIDIA A100-PG509-200")->static_power_w, 60, 0);
    erg_assert_near(erg__rules_device(r, "NVIDIA H100 80GB HBM3")->static_power_w, 100, 0);
    erg_assert_near(erg__rules_device(r, "NVIDIA H200")->static_power_w, 100, 0);
    erg_assert_near(erg__rules_device(r, "")->static_power_w, 60, 0);
    const char *gemm = "sm90_xmma_gemm_bf16bf16_bf16f32";
    erg_assert_near(
        r->rules[erg__rules_match(r, "kernel", gemm, "NVIDIA H100 80GB HBM3")].dynamic_power_w, 590,
        0);
    erg_assert_near(
        r->rules[erg__rules_match(r, "kernel", gemm, "NVIDIA A100-SXM4-80GB")].dynamic_power_w, 290,
        0);
    erg_assert_near(
        r->rules[erg__rules_match(r, "kernel", "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
                                  "NVIDIA H100 80GB HBM3")]
            .dynamic_power_w,
        590, 0);
    erg_assert_near(r->rules[erg__rules_match(r, "kernel",
                                              "void flash_fwd_kernel<Flash_fwd_kernel_traits>", "")]
                        .dynamic_power_w,
                    290, 0);
    erg_assert_near(
        r->rules[erg__rules_match(r, "kernel", "gemv2T_kernel_val", "")].dynamic_power_w, 185, 0);
    erg_assert_near(r->rules[erg__rules_match(r, "kernel", "vectorized_elementwise_kernel", "")]
                        .dynamic_power_w,
                    185, 0);
    erg_assert_near(r->rules[erg__rules_match(r, "collective", "ncclKernel", "")].dynamic_power_w,
                    60, 0);
    erg_assert_near(r->rules[erg__rules_match(r, "gpu_memset", "Memset", "")].dynamic_power_w, 50,
                    0);
    /* Every GPU activity category has a rule: nothing is unmatched by default. */
    static const char *const cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "collective"};
    for (size_t i = 0; i < 4; i++)
        assert_true(erg__rules_match(r, cats[i], "x", "Some GPU") >= 0);
    for (size_t i = 0; i < r->n_rules; i++)
        assert_int_equal(r->rules[i].grade, ERG_GRADE_ESTIMATOR);
    erg_rules_free(r);

    /* The shipped file is the compiled-in one. */
    r = NULL;
    st = erg_rules_read_file(ERG_TEST_SOURCE_DIR "/rules/default.json", &r, &d);
    if (st != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
    assert_int_equal(r->n_rules, 8);
    erg_rules_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(issue_example_reads_and_matches_first_rule),
        cmocka_unit_test(regex_device_scope_and_grade),
        cmocka_unit_test(signature_rules_by_path_and_by_name),
        cmocka_unit_test(bad_rules_files_are_rejected_with_their_place),
        cmocka_unit_test(default_rules_cover_a100_and_h100),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
