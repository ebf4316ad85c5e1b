/* SPDX-License-Identifier: MIT */
/* HF config.json import: the shared configs (skipped when absent), fixtures, and bad input. */
#include "support/erg_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erg/predict.h"

#define CONFIGS ERG_TEST_SOURCE_DIR "/../shared/data/hf-configs/"
#define FIXTURES ERG_TEST_SOURCE_DIR "/tests/predict/configs/"

static int load(const char *name, erg_arch *a)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", CONFIGS, name);
    if (access(path, R_OK) != 0)
        return -1;
    erg_diag d;
    int rc = erg_arch_from_hf_config(path, a, &d);
    if (rc != ERG_OK)
        fail_msg("%s: %s: %s", name, d.where, d.detail);
    return 0;
}

#define LOAD_OR_SKIP(name, a)                                                                      \
    do {                                                                                           \
        if (load(name, a) != 0) {                                                                  \
            skip();                                                                                \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Parameter counts computed by hand from the published sizes (and equal to the model cards:
 * Llama 3.1 8B 8,030,261,248; Mixtral 8x7B 46,702,792,704 total; Gemma 2 2B 2,614,341,888). */
static void llama_3_1_8b(void **state)
{
    (void)state;
    erg_arch a;
    LOAD_OR_SKIP("llama-3.1-8b.json", &a);
    assert_string_equal(a.family, "llama");
    assert_string_equal(a.name, "llama-3.1-8b");
    assert_int_equal(a.n_layers, 32);
    assert_int_equal(a.layers[ERG_LAYER_FULL_DENSE], 32);
    assert_int_equal(a.d_model, 4096);
    assert_int_equal(a.n_heads, 32);
    assert_int_equal(a.n_kv_heads, 8);
    assert_int_equal(a.head_dim, 128);
    assert_int_equal(a.d_ff, 14336);
    assert_int_equal(a.gated, 1);
    assert_int_equal(a.act, ERG_ACT_SILU);
    assert_int_equal(a.dtype, ERG_DTYPE_BF16);
    assert_int_equal(a.window, 0);
    assert_int_equal(a.max_positions, 131072);
    /* per layer: attention 4096·4096·2 + 2·4096·1024 = 41,943,040; FFN 3·4096·14336 =
     * 176,160,768; two norms 8,192 → 218,112,000 × 32 = 6,979,584,000; embedding and LM head
     * 2 · 128256 · 4096 = 1,050,673,152; final norm 4,096 */
    double active;
    erg_assert_near(erg_arch_params(&a, &active), 8030261248.0, 0.5);
    erg_assert_near(active, 8030261248.0, 0.5);
}

static void mixtral_moe(void **state)
{
    (void)state;
    erg_arch a;
    LOAD_OR_SKIP("mixtral-8x7b-v0.1.json", &a);
    assert_int_equal(a.n_experts, 8);
    assert_int_equal(a.top_k, 2);
    assert_int_equal(a.d_ff_expert, 14336);
    assert_int_equal(a.n_shared, 0);
    assert_int_equal(a.layers[ERG_LAYER_FULL_MOE], 32);
    assert_int_equal(a.window, 0); /* sliding_window: null */
    /* per layer: attention 41,943,040 + router 32,768 + 8 · 176,160,768 + norms 8,192 =
     * 1,451,270,144 × 32 + 2 · 32000 · 4096 + 4096; active: 2 experts instead of 8 */
    double active;
    erg_assert_near(erg_arch_params(&a, &active), 46702792704.0, 0.5);
    erg_assert_near(active, 32.0 * (41943040 + 32768 + 2 * 176160768.0 + 8192) + 262144000 + 4096,
                    0.5);
}

static void gemma2_alternates(void **state)
{
    (void)state;
    erg_arch a;
    LOAD_OR_SKIP("gemma-2-2b.json", &a);
    assert_int_equal(a.head_dim, 256); /* 8 · 256 = 2048 ≠ 2304: head_dim is given */
    assert_int_equal(a.layers[ERG_LAYER_SLIDING_DENSE], 13);
    assert_int_equal(a.layers[ERG_LAYER_FULL_DENSE], 13);
    assert_int_equal(a.window, 4096);
    assert_int_equal(a.norms_per_layer, 4);
    assert_int_equal(a.act, ERG_ACT_GELU_TANH);
    assert_int_equal(a.gated, 1);
    assert_int_equal(a.dtype, ERG_DTYPE_FP16);
    /* tied: attention 2304·2048·2 + 2·2304·1024 = 14,155,776, FFN 3·2304·9216 = 63,700,992,
     * 4 norms 9,216 → 77,865,984 × 26 + 256000 · 2304 + 2304 */
    erg_assert_near(erg_arch_params(&a, NULL), 2614341888.0, 0.5);
}

static void qwen_families(void **state)
{
    (void)state;
    erg_arch a;
    LOAD_OR_SKIP("qwen-72b.json", &a);
    assert_int_equal(a.d_ff, 24576); /* intermediate_size 49152 counts both gated halves */
    assert_int_equal(a.head_dim, 128);
    assert_int_equal(a.n_kv_heads, 64);
    assert_int_equal(a.fused_qkv, 1);
    LOAD_OR_SKIP("qwen1.5-moe-a2.7b.json", &a);
    assert_int_equal(a.n_experts, 60);
    assert_int_equal(a.top_k, 4);
    assert_int_equal(a.d_ff_expert, 1408);
    assert_int_equal(a.n_shared, 1);
    assert_int_equal(a.d_ff_shared, 5632);
    assert_int_equal(a.layers[ERG_LAYER_FULL_MOE], 24);
    assert_int_equal(a.window, 0); /* use_sliding_window: false */
    LOAD_OR_SKIP("qwen3-30b-a3b.json", &a);
    assert_int_equal(a.n_experts, 128);
    assert_int_equal(a.top_k, 8);
    assert_int_equal(a.d_ff_expert, 768);
    assert_int_equal(a.n_kv_heads, 4);
    assert_int_equal(a.head_dim, 128);
    LOAD_OR_SKIP("qwen3-8b.json", &a);
    assert_int_equal(a.n_experts, 0);
    assert_int_equal(a.d_ff, 12288);
}

static void phi2_gptoss_mistral(void **state)
{
    (void)state;
    erg_arch a;
    LOAD_OR_SKIP("phi-2.json", &a);
    assert_int_equal(a.gated, 0);
    assert_int_equal(a.act, ERG_ACT_GELU_TANH);
    erg_assert_near(a.rotary_fraction, 0.4, 1e-12);
    assert_int_equal(a.d_ff, 10240);
    LOAD_OR_SKIP("gpt-oss-20b.json", &a);
    assert_int_equal(a.n_experts, 32);
    assert_int_equal(a.top_k, 4);
    assert_int_equal(a.window, 128);
    assert_int_equal(a.layers[ERG_LAYER_SLIDING_MOE], 12);
    assert_int_equal(a.layers[ERG_LAYER_FULL_MOE], 12);
    assert_int_equal(a.head_dim, 64);
    LOAD_OR_SKIP("mistral-7b-v0.1.json", &a);
    assert_int_equal(a.layers[ERG_LAYER_SLIDING_DENSE], 32);
    assert_int_equal(a.window, 4096);
}

static void every_shared_config_loads(void **state)
{
    (void)state;
    static const char *const names[] = {"gemma-2-2b.json",
                                        "gpt-oss-20b.json",
                                        "llama-2-70b-hf.json",
                                        "llama-2-7b-hf.json",
                                        "llama-3.1-70b-instruct.json",
                                        "llama-3.1-8b.json",
                                        "llama-3.2-1b.json",
                                        "llama-3.2-3b.json",
                                        "mistral-7b-v0.1.json",
                                        "mixtral-8x7b-v0.1.json",
                                        "phi-2.json",
                                        "qwen-72b.json",
                                        "qwen1.5-moe-a2.7b.json",
                                        "qwen3-235b-a22b.json",
                                        "qwen3-30b-a3b.json",
                                        "qwen3-32b.json",
                                        "qwen3-8b.json"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        erg_arch a;
        LOAD_OR_SKIP(names[i], &a);
        assert_int_equal(erg_arch_check(&a, NULL), ERG_OK);
    }
}

/* Bad input: the message names the field. */
static void expect(const char *json, int status, const char *field)
{
    erg_arch a;
    memset(&a, 0x5a, sizeof a);
    erg_arch keep = a;
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_arch_from_hf_json(json, strlen(json), "cfg.json", &a, &d);
    if (rc != status)
        fail_msg("status %d, expected %d for %s (%s)", rc, status, json, d.detail);
    if (rc == ERG_OK)
        return;
    /* a message that starts with a field present in the text is placed at its value (these
     * documents are one line: column = offset + 1); one about an absent field names the object
     * that lacks it (the document's opening brace) */
    char want[300] = "cfg.json", key[130];
    size_t n = strcspn(d.detail, ": \"");
    if (strncmp(d.detail, "missing required field ", 23) == 0) {
        snprintf(want, sizeof want, "cfg.json:1:%zu", (size_t)(strchr(json, '{') - json) + 1);
    } else if (n > 0 && n < 128 && d.detail[n] == ':') {
        snprintf(key, sizeof key, "\"%.*s\"", (int)n, d.detail);
        const char *at = strstr(json, key);
        if (at) { /* the value: past the name, the colon and the blanks around it */
            at += strlen(key);
            at += strspn(at, " ");
            if (*at == ':')
                at += 1 + strspn(at + 1, " ");
            snprintf(want, sizeof want, "cfg.json:1:%zu", (size_t)(at - json) + 1);
        }
    }
    assert_string_equal(d.where, want);
    if (!strstr(d.detail, field))
        fail_msg("'%s' does not name %s", d.detail, field);
    assert_memory_equal(&a, &keep, sizeof a); /* nothing written on error */
}

#define BASE "\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"vocab_size\": 100"

static void bad_configs_name_the_field(void **state)
{
    (void)state;
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": "
           "128}",
           ERG_OK, "");
    expect("{" BASE ", \"num_attention_heads\": 4, \"intermediate_size\": 128}", ERG_EPARSE,
           "hidden_size");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4}", ERG_EPARSE,
           "intermediate_size");
    expect("{" BASE ", \"hidden_size\": 0, \"num_attention_heads\": 4, \"intermediate_size\": 8}",
           ERG_EPARSE, "hidden_size: must be a positive integer (got 0)");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": -4, \"intermediate_size\": "
           "8}",
           ERG_EPARSE, "num_attention_heads");
    expect("{" BASE ", \"hidden_size\": \"64\", \"num_attention_heads\": 4, "
           "\"intermediate_size\": 8}",
           ERG_EPARSE, "hidden_size: must be a positive integer (got a string)");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 5, \"intermediate_size\": 8}",
           ERG_EPARSE, "num_attention_heads: 5 heads do not divide hidden_size 64");
    /* head_dim given: heads need not divide the hidden size (Gemma 2) */
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 5, \"head_dim\": 16, "
           "\"intermediate_size\": 8}",
           ERG_OK, "");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": "
           "3, \"intermediate_size\": 8}",
           ERG_EPARSE, "num_key_value_heads");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"num_local_experts\": 4, \"num_experts_per_tok\": 5}",
           ERG_EPARSE, "num_experts_per_tok: top-k 5 is above the 4 experts");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"num_experts\": 4}",
           ERG_EPARSE, "num_experts_per_tok");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"kv_lora_rank\": 512, \"q_lora_rank\": null}",
           ERG_ENOTSUP, "kv_lora_rank: multi-head latent attention");
    expect("{\"model_type\": \"mystery\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
           "\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 8, "
           "\"wibble_gates\": 3}",
           ERG_ENOTSUP, "wibble_gates: unknown field of model_type \"mystery\"");
    /* an unknown family with only fields erg knows is modelled (gated because silu) */
    expect("{\"model_type\": \"mystery\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
           "\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 8, "
           "\"hidden_act\": \"silu\"}",
           ERG_OK, "");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"hidden_act\": \"tanhshrink\"}",
           ERG_ENOTSUP, "hidden_act");
    expect("{\"hidden_size\": 64}", ERG_EPARSE, "model_type");
    expect("[1, 2]", ERG_EPARSE, "expected a JSON object");
    expect("{\"model_type\": \"qwen\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
           "\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 9}",
           ERG_EPARSE, "intermediate_size");
    expect("{\"model_type\": \"gpt_oss\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
           "\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 8, "
           "\"layer_types\": [\"full_attention\"]}",
           ERG_EPARSE, "layer_types");
    /* a dtype erg does not model is refused, never read as bf16 */
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"torch_dtype\": \"int3\"}",
           ERG_ENOTSUP, "torch_dtype: \"int3\" is not a dtype erg models");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"torch_dtype\": \"float8_e4m3fn\"}",
           ERG_ENOTSUP, "torch_dtype");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"torch_dtype\": 16}",
           ERG_EPARSE, "torch_dtype: expected a string");
    expect("{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8, "
           "\"quantization_config\": {\"quant_method\": 4}}",
           ERG_EPARSE, "quantization_config: quant_method");
    /* wrong types are named, never read as the default: a string "yes" used to leave the LM
     * head tied (7.5 B parameters for Llama 3.1 8B instead of 8.03 B) */
#define DENSE BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 8"
    expect("{" DENSE ", \"tie_word_embeddings\": \"yes\"}", ERG_EPARSE,
           "tie_word_embeddings: must be true or false (got a string)");
    expect("{" DENSE ", \"tie_word_embeddings\": 0}", ERG_EPARSE,
           "tie_word_embeddings: must be true or false (got a number)");
    expect("{" DENSE ", \"tie_word_embeddings\": null}", ERG_OK, "");
    expect("{" DENSE ", \"sliding_window\": 16, \"use_sliding_window\": \"false\"}", ERG_EPARSE,
           "use_sliding_window: must be true or false (got a string)");
    expect("{\"model_type\": \"qwen2\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
           "\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 8, "
           "\"sliding_window\": 16, \"use_sliding_window\": true, \"max_window_layers\": \"1\"}",
           ERG_EPARSE, "max_window_layers: must be an integer (got a string)");
    expect("{" DENSE ", \"partial_rotary_factor\": \"0.5\"}", ERG_EPARSE,
           "partial_rotary_factor: must be a number in (0, 1] (got a string)");
    expect("{" DENSE ", \"rotary_pct\": 2}", ERG_EPARSE, "rotary_pct: must be in (0, 1] (got 2)");
    /* model_type present but not a string is not "missing" */
    expect("{\"model_type\": 7, \"hidden_size\": 64}", ERG_EPARSE,
           "model_type: must be a string such as \"llama\" (got a number)");
    /* too large is said as such, not as "not a positive integer" */
    expect("{" BASE ", \"hidden_size\": 9007199254740992, \"num_attention_heads\": 4, "
           "\"intermediate_size\": 8}",
           ERG_EPARSE, "hidden_size: 9.0072e+15 is too large (at most 10^15 is modelled)");
    expect("{" DENSE ", \"max_position_embeddings\": \"4k\"}", ERG_EPARSE,
           "max_position_embeddings: must be a positive integer (got a string)");
#undef DENSE
}

/* The position of a bad field's value, hand-counted: line 5, column 26 of a pretty-printed config
 * (the name at 3-23, ':' at 24); the same name earlier as a string value and inside a nested
 * object is not taken for it. */
static void bad_fields_are_placed_at_their_line_and_column(void **state)
{
    (void)state;
    static const char text[] =
        "{\n"
        "  \"model_type\": \"llama\", \"note\": \"tie_word_embeddings\",\n"
        "  \"quantization_config\": {\"tie_word_embeddings\": true},\n"
        "  \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": "
        "2, \"vocab_size\": 100, \"intermediate_size\": 8,\n"
        "  \"tie_word_embeddings\": \"yes\"\n"
        "}\n";
    erg_arch a;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_arch_from_hf_json(text, strlen(text), "config.json", &a, &d), ERG_EPARSE);
    assert_string_equal(d.where, "config.json:5:26");
    assert_string_equal(d.detail, "tie_word_embeddings: must be true or false (got a string)");
    /* an absent required field is named at the object that lacks it (the document's) */
    static const char absent[] = "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 64\n}\n";
    erg_diag_clear(&d);
    assert_int_equal(erg_arch_from_hf_json(absent, strlen(absent), "config.json", &a, &d),
                     ERG_EPARSE);
    assert_string_equal(d.where, "config.json:1:1");
    assert_string_equal(d.detail, "missing required field num_attention_heads");
    static const char indented[] = "\n\n  {\"model_type\": \"llama\", \"num_hidden_layers\": 2, "
                                   "\"hidden_size\": 64, \"num_attention_heads\": 4, "
                                   "\"vocab_size\": 10}";
    erg_diag_clear(&d);
    assert_int_equal(erg_arch_from_hf_json(indented, strlen(indented), "config.json", &a, &d),
                     ERG_EPARSE);
    assert_string_equal(d.where, "config.json:3:3");
    assert_string_equal(d.detail, "missing required field intermediate_size");
}

/* The dtype names HF writes, and quantized weights: kept, so that erg can say it models them in
 * torch_dtype (no kernel data for mxfp4, fp8, ...). */
static void dtypes_and_quantization(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        erg_dtype dtype;
    } names[] = {{"\"bfloat16\"", ERG_DTYPE_BF16},       {"\"float16\"", ERG_DTYPE_FP16},
                 {"\"float32\"", ERG_DTYPE_FP32},        {"\"torch.float16\"", ERG_DTYPE_FP16},
                 {"\"torch.bfloat16\"", ERG_DTYPE_BF16}, {"null", ERG_DTYPE_BF16}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, "
                 "\"intermediate_size\": 8, \"torch_dtype\": %s}",
                 names[i].text);
        erg_arch a;
        erg_diag d;
        erg_diag_clear(&d);
        if (erg_arch_from_hf_json(json, strlen(json), "cfg.json", &a, &d) != ERG_OK)
            fail_msg("%s: %s", names[i].text, d.detail);
        assert_int_equal(a.dtype, names[i].dtype);
        assert_string_equal(a.quant_method, "");
    }
    const char *q = "{" BASE ", \"hidden_size\": 64, \"num_attention_heads\": 4, "
                    "\"intermediate_size\": 8, \"quantization_config\": {\"quant_method\": "
                    "\"mxfp4\"}}";
    erg_arch a;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_arch_from_hf_json(q, strlen(q), "cfg.json", &a, &d), ERG_OK);
    assert_string_equal(a.quant_method, "mxfp4");
    assert_int_equal(a.dtype, ERG_DTYPE_BF16);
    erg_arch g;
    LOAD_OR_SKIP("gpt-oss-20b.json", &g);
    assert_string_equal(g.quant_method, "mxfp4");
}

static void fixtures_and_file_errors(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    assert_int_equal(erg_arch_from_hf_config(FIXTURES "tiny-moe.json", &a, &d), ERG_OK);
    assert_string_equal(a.name, "tiny-moe");
    assert_int_equal(a.d_ff_shared, 512);
    assert_int_equal(a.dtype, ERG_DTYPE_FP32);
    assert_int_equal(erg_arch_from_hf_config(FIXTURES "mla.json", &a, &d), ERG_ENOTSUP);
    assert_non_null(strstr(d.where, "mla.json"));
    assert_non_null(strstr(d.detail, "kv_lora_rank"));
    assert_int_equal(erg_arch_from_hf_config(FIXTURES "bad-kv-heads.json", &a, &d), ERG_EPARSE);
    assert_non_null(strstr(d.detail, "num_key_value_heads: 3 KV heads do not divide 8"));
    assert_int_equal(erg_arch_from_hf_config(FIXTURES "no-such.json", &a, &d), ERG_ENOENT);
}

static void sweep_edits(void **state)
{
    (void)state;
    erg_arch a;
    erg_diag d;
    assert_int_equal(erg_arch_from_hf_config(FIXTURES "tiny-llama.json", &a, &d), ERG_OK);
    assert_int_equal(erg_arch_set(&a, "d_model", 4096, &d), ERG_OK);
    assert_int_equal(a.head_dim, 512); /* head_dim followed d_model / n_heads */
    assert_int_equal(erg_arch_set(&a, "heads", 64, &d), ERG_OK);
    assert_int_equal(a.n_heads, 64);
    assert_int_equal(a.n_kv_heads, 64);
    assert_int_equal(a.head_dim, 64);
    assert_int_equal(erg_arch_set(&a, "heads", 3, &d), ERG_EINVAL);
    assert_int_equal(erg_arch_set(&a, "n_layers", 10, &d), ERG_OK);
    assert_int_equal(a.layers[ERG_LAYER_FULL_DENSE], 10);
    assert_int_equal(erg_arch_set(&a, "bogus", 1, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "bogus"));
    assert_int_equal(erg_arch_set(&a, "n_kv_heads", 7, &d), ERG_OK);
    assert_int_equal(erg_arch_check(&a, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "n_kv_heads"));
    erg_arch g;
    if (load("gemma-2-2b.json", &g) == 0) { /* the alternation survives a layer change */
        assert_int_equal(erg_arch_set(&g, "n_layers", 10, &d), ERG_OK);
        assert_int_equal(g.layers[ERG_LAYER_SLIDING_DENSE], 5);
        assert_int_equal(g.layers[ERG_LAYER_FULL_DENSE], 5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama_3_1_8b),
        cmocka_unit_test(mixtral_moe),
        cmocka_unit_test(gemma2_alternates),
        cmocka_unit_test(qwen_families),
        cmocka_unit_test(phi2_gptoss_mistral),
        cmocka_unit_test(every_shared_config_loads),
        cmocka_unit_test(bad_configs_name_the_field),
        cmocka_unit_test(bad_fields_are_placed_at_their_line_and_column),
        cmocka_unit_test(dtypes_and_quantization),
        cmocka_unit_test(fixtures_and_file_errors),
        cmocka_unit_test(sweep_edits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
