/* SPDX-License-Identifier: MIT */
/*
 * What a model prediction warns about (erg_model_warnings) and the decode step as served
 * (erg_predict_serving_decode). Figures hand-computed from the configs: tiny-llama (fp32)
 * holds 3,283,200 parameters = 13,132,800 bytes and 2 (K, V) x 4 layers x 2 KV heads x 32 x 4
 * bytes = 2,048 KV bytes per cached token (tests/predict/test_levels_cli.sh derives both);
 * Mixtral-8x7B (../shared/data, skipped when absent) 46,702,792,704 parameters (its model card;
 * test_hf_config.c) = 93,405,585,408 bf16 bytes = 86.99 GiB, and 2 x 32 layers x 8 KV heads x
 * 128 x 2 bytes = 131,072 KV bytes per token.
 */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erg/predict.h"

#define TINY_LLAMA ERG_TEST_SOURCE_DIR "/tests/predict/configs/tiny-llama.json"
#define CPU_TARGET ERG_TEST_SOURCE_DIR "/models/cpu"
#define H100_TARGET ERG_TEST_SOURCE_DIR "/models/h100"
#define CONFIGS ERG_TEST_SOURCE_DIR "/../shared/data/hf-configs/"

static char tdir[128];

/* the tiny Llama's fields, then extra members (",\"k\": v" or "") */
static const char *tiny_config(const char *name, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model_type\": \"llama\", \"hidden_size\": 256, \"intermediate_size\": 688, "
             "\"num_attention_heads\": 8, \"num_key_value_heads\": 2, \"num_hidden_layers\": 4, "
             "\"vocab_size\": 1000, \"hidden_act\": \"silu\", \"tie_word_embeddings\": false, "
             "\"torch_dtype\": \"float32\"%s}\n",
             extra);
    return erg_tmp_put(tdir, name, text);
}

/* A target folder: the CPU target's ops.json and a gpu.json of memory_gib (no serving model). */
static const char *small_target(const char *memory_gib)
{
    const char *dir = erg_tmp_path(tdir, "small-mem");
    mkdir(dir, 0755);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cp '%s/ops.json' '%s/'", CPU_TARGET, dir);
    assert_int_equal(system(cmd), 0);
    char text[128];
    snprintf(text, sizeof text, "{\"erg\": \"gpu-target/1\", \"memory_gib\": %s}\n", memory_gib);
    erg_tmp_put(dir, "gpu.json", text);
    return dir;
}

static int setup(void **state)
{
    (void)state;
    return erg_tmp_new(tdir, sizeof tdir, "model-warnings");
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(tdir);
}

static void load(const char *config, const char *target, erg_arch *a, erg_predictor **p)
{
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_arch_from_hf_config(config, a, &d);
    if (rc == ERG_OK && target)
        rc = erg_predictor_open(target, p, &d);
    if (rc != ERG_OK)
        fail_msg("%s: %s", d.where, d.detail);
}

/* Weights + KV cache against 0.016 GiB = 17,179,869.184 bytes: batch 2 x 1000 cached tokens
 * need 13,132,800 + 4,096,000 = 17,228,800 bytes (above); batch 1 15,180,800 (below). The cached
 * tokens: the KV length (decode), the prompt (prefill), the larger of the two (both phases),
 * prompt + output - 1 (a request: its last step attends to every earlier token). */
static void memory_above_the_target_warns_with_the_hand_computed_bytes(void **state)
{
    (void)state;
    erg_arch a;
    erg_predictor *p = NULL;
    load(TINY_LLAMA, small_target("0.016"), &a, &p);
    erg_model_warning w[ERG_MODEL_WARNINGS_MAX];
    size_t n = 99;
    erg_diag d;
    erg_model_query q = {2, 2, 512, 1000, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &q, w, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(w[0].kind, ERG_MODEL_WARNING_MEMORY);
    assert_int_equal(w[0].tokens, 1000);
    erg_assert_near(w[0].weights_bytes, 13132800.0, 1e-6);
    erg_assert_near(w[0].kv_bytes, 4096000.0, 1e-6);
    erg_assert_near(w[0].memory_bytes, 0.016 * 1073741824.0, 1e-6);
    assert_string_equal(w[0].text,
                        "the weights (0.01223 GiB, fp32) and the KV cache (0.003815 GiB, 2 x 1000 "
                        "tokens) need 0.01605 GiB, more than the target's 0.016 GiB of memory: "
                        "this prediction assumes they fit");
    assert_string_equal(w[0].tokens_what, "");
    /* batch 1: 15,180,800 bytes fit */
    q.batch = 1;
    erg_assert_ok(erg_model_warnings(&a, p, &q, w, &n, &d));
    assert_int_equal(n, 0);
    /* a prefill of 2 x 1000 prompt tokens caches as much */
    erg_model_query pre = {1, 2, 1000, 0, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &pre, w, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(w[0].tokens, 1000);
    /* both phases: the larger of prompt 1000 and kv 10 */
    erg_model_query both = {3, 2, 1000, 10, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &both, w, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(w[0].tokens, 1000);
    /* a request of 2 x (600 prompt + 401 output tokens): 1000 cached at its last step; with 1
     * output token (the prefill alone) 600: 13,132,800 + 2 x 600 x 2,048 = 15,590,400, below */
    erg_model_query req = {1, 2, 600, 0, 401};
    erg_assert_ok(erg_model_warnings(&a, p, &req, w, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(w[0].tokens, 1000);
    req.output = 1;
    erg_assert_ok(erg_model_warnings(&a, p, &req, w, &n, &d));
    assert_int_equal(n, 0);
    /* no target (NULL) or a target without memory_gib (the CPU target): no memory check */
    erg_assert_ok(erg_model_warnings(&a, NULL, &q, w, &n, &d));
    assert_int_equal(n, 0);
    erg_predictor_free(p);
    p = NULL;
    load(TINY_LLAMA, CPU_TARGET, &a, &p);
    q.batch = 1000000;
    erg_assert_ok(erg_model_warnings(&a, p, &q, w, &n, &d));
    assert_int_equal(n, 0);
    erg_predictor_free(p);
}

/* max_position_embeddings 512: 513 cached tokens warn, 512 do not; the text names which
 * tokens (the prompt, the KV length, prompt + output - 1). */
static void beyond_max_position_embeddings_warns_and_names_the_tokens(void **state)
{
    (void)state;
    erg_arch a;
    load(tiny_config("pos.json", ", \"max_position_embeddings\": 512"), NULL, &a, NULL);
    assert_int_equal(a.max_positions, 512);
    erg_model_warning w[ERG_MODEL_WARNINGS_MAX];
    size_t n;
    erg_diag d;
    struct {
        erg_model_query q;
        size_t n;
        int64_t tokens;
        const char *what;
    } c[] = {
        {{1, 1, 513, 0, 0}, 1, 513, "the prompt"},
        {{1, 1, 512, 0, 0}, 0, 0, ""},
        {{2, 4, 512, 600, 0}, 1, 600, "the KV length"},
        {{3, 1, 600, 100, 0}, 1, 600, "the prompt"},
        {{3, 1, 100, 600, 0}, 1, 600, "the KV length"},
        {{1, 1, 500, 0, 14}, 1, 513, "prompt + output - 1"},
        {{1, 1, 500, 0, 13}, 0, 0, ""},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        erg_assert_ok(erg_model_warnings(&a, NULL, &c[i].q, w, &n, &d));
        if (n != c[i].n)
            fail_msg("case %zu: %zu warnings, expected %zu", i, n, c[i].n);
        if (!n)
            continue;
        assert_int_equal(w[0].kind, ERG_MODEL_WARNING_POSITIONS);
        assert_int_equal(w[0].tokens, c[i].tokens);
        assert_int_equal(w[0].max_positions, 512);
        assert_string_equal(w[0].tokens_what, c[i].what);
    }
    erg_model_query q = {1, 1, 500, 0, 14};
    erg_assert_ok(erg_model_warnings(&a, NULL, &q, w, &n, &d));
    assert_string_equal(w[0].text,
                        "513 tokens (prompt + output - 1) are more than the config's "
                        "max_position_embeddings 512: the model was not trained for sequences "
                        "this long; this prediction assumes it runs");
}

/* A quantized config: the first warning, the only one a sweep (phases 0) gets; with the memory
 * and position warnings the order is quantized, memory, positions. */
static void quantized_weights_warn_first_and_alone_for_a_sweep(void **state)
{
    (void)state;
    erg_arch a;
    erg_predictor *p = NULL;
    /* erg_tmp_put's path is one static buffer, which small_target overwrites: copy it first */
    char cfg[512];
    snprintf(cfg, sizeof cfg, "%s",
             tiny_config("q.json", ", \"max_position_embeddings\": 512, \"quantization_config\": "
                                   "{\"quant_method\": \"fp8\"}"));
    load(cfg, small_target("0.016"), &a, &p);
    erg_model_warning w[ERG_MODEL_WARNINGS_MAX];
    size_t n;
    erg_diag d;
    erg_model_query sweep = {0, 2, 1000, 1000, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &sweep, w, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(w[0].kind, ERG_MODEL_WARNING_QUANTIZED);
    assert_string_equal(w[0].text,
                        "quantization_config: quant_method \"fp8\": erg has no kernel data for "
                        "quantized weights and models them in fp32, so time, energy and memory "
                        "are those of fp32 weights");
    erg_model_query all = {2, 2, 512, 1000, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &all, w, &n, &d));
    assert_int_equal(n, 3);
    assert_int_equal(w[0].kind, ERG_MODEL_WARNING_QUANTIZED);
    assert_int_equal(w[1].kind, ERG_MODEL_WARNING_MEMORY);
    assert_int_equal(w[2].kind, ERG_MODEL_WARNING_POSITIONS);
    erg_predictor_free(p);
}

/* Bad arguments: ERG_EINVAL, nothing written to *n beyond 0. */
static void bad_arguments_are_einval(void **state)
{
    (void)state;
    erg_arch a;
    load(TINY_LLAMA, NULL, &a, NULL);
    erg_model_warning w[ERG_MODEL_WARNINGS_MAX];
    size_t n = 7;
    erg_diag d;
    erg_model_query q = {1, 1, 512, 0, 0};
    assert_int_equal(erg_model_warnings(NULL, NULL, &q, w, &n, &d), ERG_EINVAL);
    assert_int_equal(erg_model_warnings(&a, NULL, NULL, w, &n, &d), ERG_EINVAL);
    assert_int_equal(erg_model_warnings(&a, NULL, &q, NULL, &n, &d), ERG_EINVAL);
    assert_int_equal(erg_model_warnings(&a, NULL, &q, w, NULL, &d), ERG_EINVAL);
    const erg_model_query bad[] = {
        {1, 0, 512, 0, 0}, {1, 1, 0, 0, 0}, {2, 1, 512, 0, 0}, {1, 1, 512, 0, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 7;
        assert_int_equal(erg_model_warnings(&a, NULL, &bad[i], w, &n, &d), ERG_EINVAL);
        assert_int_equal(n, 0);
    }
}

/* Mixtral-8x7B on the H100 target (80 GiB): batch 8 x 512 both phases: 93,405,585,408 bytes of
 * weights + 8 x 512 x 131,072 = 536,870,912 (0.5 GiB) = 87.49 GiB; a request of 64 outputs
 * caches 575 tokens: 602,931,200 bytes (0.5615 GiB), 87.55 GiB. On the H200 (141 GiB) none. */
static void mixtral_on_h100_is_above_its_80_gib(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    if (erg_arch_from_hf_config(CONFIGS "mixtral-8x7b-v0.1.json", &a, &d) != ERG_OK) {
        skip(); /* ../shared/data absent */
        return;
    }
    erg_predictor *p = NULL;
    erg_assert_ok(erg_predictor_open(H100_TARGET, &p, &d));
    erg_model_warning w[ERG_MODEL_WARNINGS_MAX];
    size_t n;
    erg_model_query q = {3, 8, 512, 512, 0};
    erg_assert_ok(erg_model_warnings(&a, p, &q, w, &n, &d));
    assert_int_equal(n, 1);
    erg_assert_near(w[0].weights_bytes, 93405585408.0, 0.5);
    erg_assert_near(w[0].kv_bytes, 536870912.0, 0.5);
    erg_assert_near(w[0].memory_bytes, 80.0 * 1073741824.0, 0.5);
    assert_string_equal(w[0].text,
                        "the weights (86.99 GiB, bf16) and the KV cache (0.5 GiB, 8 x 512 tokens) "
                        "need 87.49 GiB, more than the target's 80 GiB of memory: this "
                        "prediction assumes they fit");
    erg_model_query r = {1, 8, 512, 0, 64};
    erg_assert_ok(erg_model_warnings(&a, p, &r, w, &n, &d));
    assert_int_equal(n, 1);
    erg_assert_near(w[0].kv_bytes, 602931200.0, 0.5);
    assert_non_null(strstr(w[0].text, "(0.5615 GiB, 8 x 575 tokens) need 87.55 GiB"));
    erg_predictor_free(p);
    p = NULL;
    erg_assert_ok(erg_predictor_open(ERG_TEST_SOURCE_DIR "/models/h200", &p, &d));
    erg_assert_ok(erg_model_warnings(&a, p, &r, w, &n, &d));
    assert_int_equal(n, 0);
    erg_predictor_free(p);
}

/* The decode step as served: Llama-3.1-8B on h100, batch 8 against KV 700, near what ML.ENERGY
 * measured for that configuration (7.32 ms ITL, 0.455 J per output token; docs/predict.md, "As
 * served": the level 3 gives 7.37 ms and 0.432 J, within its held-out errors of 5 % and 9 %);
 * a target without a serving level: ERG_ENOTSUP, NaN figures. */
static void serving_decode_as_ml_energy_measured_or_enotsup(void **state)
{
    (void)state;
    erg_arch a;
    erg_predictor *p = NULL;
    double itl = 0, ept = 0;
    erg_diag d;
    erg_diag_clear(&d);
    load(TINY_LLAMA, CPU_TARGET, &a, &p);
    assert_int_equal(erg_predict_serving_decode(p, TINY_LLAMA, 8, 700, &itl, &ept, &d),
                     ERG_ENOTSUP);
    assert_true(isnan(itl) && isnan(ept));
    assert_int_equal(erg_predict_serving_decode(p, TINY_LLAMA, 0, 700, &itl, &ept, &d), ERG_EINVAL);
    assert_int_equal(erg_predict_serving_decode(NULL, TINY_LLAMA, 8, 700, &itl, &ept, &d),
                     ERG_EINVAL);
    erg_predictor_free(p);
    p = NULL;
    load(TINY_LLAMA, small_target("80"), &a, &p); /* gpu.json without a serving model */
    assert_int_equal(erg_predict_serving_decode(p, TINY_LLAMA, 8, 700, &itl, &ept, &d),
                     ERG_ENOTSUP);
    erg_predictor_free(p);
    p = NULL;
    const char *cfg = CONFIGS "llama-3.1-8b.json";
    if (erg_arch_from_hf_config(cfg, &a, &d) != ERG_OK) {
        skip(); /* ../shared/data absent */
        return;
    }
    erg_assert_ok(erg_predictor_open(H100_TARGET, &p, &d));
    erg_assert_ok(erg_predict_serving_decode(p, cfg, 8, 700, &itl, &ept, &d));
    erg_assert_rel(itl, 7.32e-3, 0.05);
    erg_assert_rel(ept, 0.455, 0.09);
    /* the figures docs/predict.md quotes, to their printed digits */
    erg_assert_near(itl, 7.37e-3, 0.005e-3);
    erg_assert_near(ept, 0.432, 0.0005);
    /* a config the serving reader refuses: its error, the file named */
    const char *bad = erg_tmp_put(tdir, "bad.json", "{\"hidden_size\": 4096}\n");
    assert_int_equal(erg_predict_serving_decode(p, bad, 8, 700, &itl, &ept, &d), ERG_EPARSE);
    assert_non_null(strstr(d.where, "bad.json"));
    erg_predictor_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_above_the_target_warns_with_the_hand_computed_bytes),
        cmocka_unit_test(beyond_max_position_embeddings_warns_and_names_the_tokens),
        cmocka_unit_test(quantized_weights_warn_first_and_alone_for_a_sweep),
        cmocka_unit_test(bad_arguments_are_einval),
        cmocka_unit_test(mixtral_on_h100_is_above_its_80_gib),
        cmocka_unit_test(serving_decode_as_ml_energy_measured_or_enotsup),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
