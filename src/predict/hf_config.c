/* SPDX-License-Identifier: MIT */
/* HuggingFace config.json → erg_arch: the families of docs/predict.md ("Architectures") and the
 * common alternate field names; what erg cannot model is refused by name, never mis-modelled. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/file.h"
#include "core/json.h"
#include "erg/predict.h"

/* Families erg knows: whether their FFN is gated, and their quirks are handled below. */
static const struct family {
    const char *type;
    int gated;
} families[] = {
    {"llama", 1},     {"mistral", 1},  {"mixtral", 1},   {"qwen", 1},     {"qwen2", 1},
    {"qwen2_moe", 1}, {"qwen3", 1},    {"qwen3_moe", 1}, {"gemma", 1},    {"gemma2", 1},
    {"phi", 0},       {"phi3", 1},     {"gpt_oss", 1},   {"olmoe", 1},    {"olmo", 1},
    {"olmo2", 1},     {"deepseek", 1}, {"gpt2", 0},      {"gpt_neox", 0}, {"starcoder2", 0},
};

/* Fields that mean an architecture erg cannot model yet (any family): refused by name. */
static const struct refused {
    const char *field;
    const char *what;
} refused[] = {
    {"kv_lora_rank", "multi-head latent attention (MLA)"},
    {"q_lora_rank", "multi-head latent attention (MLA)"},
    {"linear_attn_config", "linear attention"},
    {"full_attention_interval", "hybrid linear attention"},
    {"layers_block_type", "hybrid state-space layers"},
    {"ssm_cfg", "state-space layers"},
    {"mamba_d_state", "state-space layers"},
    {"state_size", "state-space layers"},
    {"attn_layer_period", "hybrid state-space layers"},
};

/* Fields every family may carry that erg reads or may safely ignore; an unknown model_type is
 * accepted only when each of its fields is listed here (or read by a family above). */
static const char *const known_fields[] = {"_name_or_path",
                                           "architectures",
                                           "model_type",
                                           "transformers_version",
                                           "torch_dtype",
                                           "dtype",
                                           "use_cache",
                                           "bos_token_id",
                                           "eos_token_id",
                                           "pad_token_id",
                                           "initializer_range",
                                           "max_position_embeddings",
                                           "rope_theta",
                                           "rope_scaling",
                                           "rope_parameters",
                                           "rms_norm_eps",
                                           "layer_norm_eps",
                                           "layer_norm_epsilon",
                                           "attention_dropout",
                                           "hidden_dropout",
                                           "embd_pdrop",
                                           "resid_pdrop",
                                           "attn_pdrop",
                                           "attention_bias",
                                           "mlp_bias",
                                           "pretraining_tp",
                                           "tie_word_embeddings",
                                           "hidden_size",
                                           "n_embd",
                                           "d_model",
                                           "num_attention_heads",
                                           "n_head",
                                           "n_heads",
                                           "num_heads",
                                           "num_hidden_layers",
                                           "n_layer",
                                           "n_layers",
                                           "num_layers",
                                           "vocab_size",
                                           "padded_vocab_size",
                                           "intermediate_size",
                                           "n_inner",
                                           "ffn_hidden_size",
                                           "ffn_dim",
                                           "num_key_value_heads",
                                           "num_kv_heads",
                                           "n_head_kv",
                                           "multi_query_group_num",
                                           "head_dim",
                                           "kv_channels",
                                           "hidden_act",
                                           "hidden_activation",
                                           "activation_function",
                                           "num_local_experts",
                                           "num_experts",
                                           "n_routed_experts",
                                           "moe_num_experts",
                                           "num_experts_per_tok",
                                           "experts_per_token",
                                           "moe_top_k",
                                           "moe_intermediate_size",
                                           "shared_expert_intermediate_size",
                                           "n_shared_experts",
                                           "sliding_window",
                                           "use_sliding_window",
                                           "max_window_layers",
                                           "layer_types",
                                           "partial_rotary_factor",
                                           "rotary_pct",
                                           "rotary_dim",
                                           "router_aux_loss_coef",
                                           "output_router_logits",
                                           "norm_topk_prob",
                                           "decoder_sparse_step",
                                           "mlp_only_layers",
                                           "first_k_dense_replace",
                                           "moe_layer_freq",
                                           "qk_layernorm",
                                           "clip_qkv",
                                           "quantization_config",
                                           "bf16",
                                           "fp16",
                                           "fp32",
                                           "seq_length",
                                           "no_bias",
                                           "attn_logit_softcapping",
                                           "final_logit_softcapping",
                                           "query_pre_attn_scalar",
                                           "cache_implementation",
                                           "swiglu_limit",
                                           "initial_context_length",
                                           "experts_per_token",
                                           "original_max_position_embeddings",
                                           "scale_attn_weights",
                                           "emb_dropout_prob",
                                           "attn_dropout_prob",
                                           "rotary_emb_base",
                                           "use_flash_attn",
                                           "id2label",
                                           "label2id",
                                           "tokenizer_class",
                                           "auto_map",
                                           "sliding_window_pattern"};

static int known_field(const char *k)
{
    for (size_t i = 0; i < sizeof known_fields / sizeof *known_fields; i++)
        if (strcmp(k, known_fields[i]) == 0)
            return 1;
    return 0;
}

/* The first present, non-null field of a NULL-terminated list of names; *which its name. */
static const json_t *field(const json_t *o, const char *const *names, const char **which)
{
    for (; *names; names++) {
        const json_t *v = json_object_get(o, *names);
        if (v && !json_is_null(v)) {
            *which = *names;
            return v;
        }
    }
    return NULL;
}

/* What a JSON value is, for messages ("a string", "a list", ...). */
static const char *json_kind(const json_t *v)
{
    return json_is_string(v)    ? "a string"
           : json_is_boolean(v) ? "a boolean"
           : json_is_array(v)   ? "a list"
           : json_is_object(v)  ? "an object"
           : json_is_number(v)  ? "a number"
                                : "null";
}

/* Sizes above this are refused: a layer, width or vocabulary of 10^15 is no model erg can cost
 * (parameters, FLOPs and bytes would leave the range the work lists compute in). */
#define MAX_SIZE 1e15

/* A positive integer field found under one of names; absent: *out unchanged and *found 0.
 * Present but not a positive integer of at most MAX_SIZE: ERG_EPARSE naming it. */
static int int_field(const json_t *o, const char *const *names, int64_t *out, int *found,
                     const char *file, erg_diag *diag)
{
    const char *which = NULL;
    const json_t *v = field(o, names, &which);
    if (found)
        *found = v != NULL;
    if (!v)
        return ERG_OK;
    if (!json_is_number(v))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be a positive integer (got %s)",
                            which, json_kind(v));
    double x = json_number_value(v);
    if (!(x > 0) || x != floor(x))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be a positive integer (got %g)",
                            which, x);
    if (x > MAX_SIZE)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s: %g is too large (at most 10^15 is modelled)", which, x);
    *out = (int64_t)x;
    return ERG_OK;
}

static int required(const json_t *o, const char *const *names, int64_t *out, const char *file,
                    erg_diag *diag)
{
    int found = 0;
    int rc = int_field(o, names, out, &found, file, diag);
    if (rc == ERG_OK && !found)
        return erg_diag_set(diag, ERG_EPARSE, file, "missing required field %s", names[0]);
    return rc;
}

/* A boolean field: absent or null gives dflt; true or false its value; anything else (a string
 * "yes", a number) is ERG_EPARSE naming it, never read as the default. */
static int bool_field(const json_t *o, const char *name, int dflt, int *out, const char *file,
                      erg_diag *diag)
{
    const json_t *v = json_object_get(o, name);
    if (v && !json_is_null(v) && !json_is_boolean(v))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be true or false (got %s)", name,
                            json_kind(v));
    *out = v && json_is_boolean(v) ? json_is_true(v) : dflt;
    return ERG_OK;
}

static const struct family *family_of(const char *type)
{
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(type, families[i].type) == 0)
            return &families[i];
    return NULL;
}

static int in_int_list(const json_t *list, int64_t i)
{
    size_t k;
    const json_t *v;
    if (!json_is_array(list))
        return 0;
    json_array_foreach(list, k, v) if (json_is_integer(v) && json_integer_value(v) == i) return 1;
    return 0;
}

static int parse(const json_t *o, const char *file, const char *name, erg_arch *out, erg_diag *diag)
{
    if (!json_is_object(o))
        return erg_diag_set(diag, ERG_EPARSE, file, "not a config.json: expected a JSON object");
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        const json_t *v = json_object_get(o, refused[i].field);
        if (v && !json_is_null(v) && !(json_is_integer(v) && json_integer_value(v) == 0))
            return erg_diag_set(diag, ERG_ENOTSUP, file,
                                "%s: %s is not modelled by erg yet (refused rather than "
                                "mis-modelled)",
                                refused[i].field, refused[i].what);
    }
    erg_arch a;
    memset(&a, 0, sizeof a);
    const json_t *mt = json_object_get(o, "model_type");
    const char *type = json_string_value(mt);
    if (mt && !json_is_null(mt) && !type)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "model_type: must be a string such as \"llama\" (got %s)",
                            json_kind(mt));
    if (!type)
        return erg_diag_set(diag, ERG_EPARSE, file, "missing required field model_type");
    snprintf(a.family, sizeof a.family, "%s", type);
    snprintf(a.name, sizeof a.name, "%s", name ? name : "");
    const struct family *fam = family_of(type);
    if (!fam) {
        const char *k;
        const json_t *v;
        json_object_foreach(erg__json_mut(o), k, v) if (!known_field(k)) return erg_diag_set(
            diag, ERG_ENOTSUP, file,
            "%s: unknown field of model_type \"%s\", a family erg does not know (refused "
            "rather than mis-modelled)",
            k, type);
    }
    static const char *const n_hidden[] = {"hidden_size", "n_embd", "d_model", NULL};
    static const char *const n_heads[] = {"num_attention_heads", "n_head", "n_heads", "num_heads",
                                          NULL};
    static const char *const n_layers[] = {"num_hidden_layers", "n_layer", "n_layers", "num_layers",
                                           NULL};
    static const char *const n_vocab[] = {"vocab_size", "padded_vocab_size", NULL};
    static const char *const n_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv",
                                       "multi_query_group_num", NULL};
    static const char *const n_hd[] = {"head_dim", "kv_channels", NULL};
    static const char *const n_ff[] = {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim",
                                       NULL};
    static const char *const n_exp[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                        "moe_num_experts", NULL};
    static const char *const n_topk[] = {"num_experts_per_tok", "experts_per_token", "moe_top_k",
                                         NULL};
    static const char *const n_moe_ff[] = {"moe_intermediate_size", NULL};
    static const char *const n_shared_ff[] = {"shared_expert_intermediate_size", NULL};
    static const char *const n_shared[] = {"n_shared_experts", NULL};
    static const char *const n_window[] = {"sliding_window", NULL};
    int rc, sliding_q = 0, sliding_m = 1, tied = 1;
    /* use_sliding_window defaults to false on Qwen (sliding only when asked), true elsewhere */
    if ((rc = bool_field(o, "use_sliding_window", 0, &sliding_q, file, diag)) ||
        (rc = bool_field(o, "use_sliding_window", 1, &sliding_m, file, diag)) ||
        (rc = bool_field(o, "tie_word_embeddings", 1, &tied, file, diag)))
        return rc;
    if ((rc = required(o, n_hidden, &a.d_model, file, diag)) ||
        (rc = required(o, n_heads, &a.n_heads, file, diag)) ||
        (rc = required(o, n_layers, &a.n_layers, file, diag)) ||
        (rc = required(o, n_vocab, &a.vocab, file, diag)))
        return rc;
    int have_kv = 0, have_hd = 0, have_ff = 0;
    a.n_kv_heads = a.n_heads;
    if ((rc = int_field(o, n_kv, &a.n_kv_heads, &have_kv, file, diag)) ||
        (rc = int_field(o, n_hd, &a.head_dim, &have_hd, file, diag)) ||
        (rc = int_field(o, n_ff, &a.d_ff, &have_ff, file, diag)))
        return rc;
    if (!have_hd) {
        if (a.d_model % a.n_heads != 0)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "num_attention_heads: %lld heads do not divide hidden_size %lld "
                                "(and no head_dim is given)",
                                (long long)a.n_heads, (long long)a.d_model);
        a.head_dim = a.d_model / a.n_heads;
    }
    if (a.n_heads % a.n_kv_heads != 0)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "num_key_value_heads: %lld KV heads do not divide %lld attention heads",
                            (long long)a.n_kv_heads, (long long)a.n_heads);
    if (!have_ff && strcmp(type, "gpt2") == 0) /* GPT-2: n_inner null means 4·d */
        a.d_ff = 4 * a.d_model, have_ff = 1;
    if (!have_ff)
        return erg_diag_set(diag, ERG_EPARSE, file, "missing required field intermediate_size");
    if (strcmp(type, "qwen") == 0) { /* Qwen v1: intermediate_size is w1 + w2, twice the width */
        if (a.d_ff % 2)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "intermediate_size: Qwen v1 counts both halves of the gated FFN, "
                                "so it must be even (got %lld)",
                                (long long)a.d_ff);
        a.d_ff /= 2;
        a.fused_qkv = 1;
    }
    if (strcmp(type, "phi3") == 0)
        a.fused_qkv = 1;
    /* activation and gating */
    a.act = ERG_ACT_SILU;
    const char *actf = NULL;
    static const char *const n_act[] = {"hidden_activation", "hidden_act", "activation_function",
                                        NULL};
    const json_t *av = field(o, n_act, &actf);
    if (av) {
        if (!json_is_string(av) || erg_act_parse(json_string_value(av), &a.act) != ERG_OK)
            return erg_diag_set(diag, ERG_ENOTSUP, file,
                                "%s: activation %s%s%s is not one erg knows (silu, gelu, "
                                "gelu_new, gelu_pytorch_tanh, relu)",
                                actf, json_is_string(av) ? "\"" : "",
                                json_is_string(av) ? json_string_value(av) : "(not a string)",
                                json_is_string(av) ? "\"" : "");
    }
    a.gated = fam ? fam->gated : a.act == ERG_ACT_SILU;
    /* mixture of experts */
    int have_exp = 0;
    if ((rc = int_field(o, n_exp, &a.n_experts, &have_exp, file, diag)))
        return rc;
    int64_t moe_layers = 0;
    if (have_exp) {
        int have_k = 0;
        if ((rc = int_field(o, n_topk, &a.top_k, &have_k, file, diag)))
            return rc;
        if (!have_k)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "missing required field num_experts_per_tok (a MoE model with "
                                "%lld experts)",
                                (long long)a.n_experts);
        if (a.top_k > a.n_experts)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "num_experts_per_tok: top-k %lld is above the %lld experts",
                                (long long)a.top_k, (long long)a.n_experts);
        a.d_ff_expert = a.d_ff;
        if ((rc = int_field(o, n_moe_ff, &a.d_ff_expert, NULL, file, diag)))
            return rc;
        int have_sh = 0;
        if ((rc = int_field(o, n_shared_ff, &a.d_ff_shared, &have_sh, file, diag)))
            return rc;
        if (have_sh)
            a.n_shared = 1;
        int64_t nsh = 0;
        int have_nsh = 0;
        if ((rc = int_field(o, n_shared, &nsh, &have_nsh, file, diag)))
            return rc;
        if (have_nsh && !have_sh) { /* DeepSeek: shared experts as wide as routed ones */
            a.n_shared = nsh;
            a.d_ff_shared = a.d_ff_expert;
        }
        int64_t step = 1, first_dense = 0, freq = 1;
        static const char *const n_step[] = {"decoder_sparse_step", NULL};
        static const char *const n_first[] = {"first_k_dense_replace", NULL};
        static const char *const n_freq[] = {"moe_layer_freq", NULL};
        const char *w;
        const json_t *fd = field(o, n_first, &w);
        if (fd && json_is_integer(fd) && json_integer_value(fd) >= 0)
            first_dense = json_integer_value(fd);
        else if ((rc = int_field(o, n_first, &first_dense, NULL, file, diag)))
            return rc;
        if ((rc = int_field(o, n_step, &step, NULL, file, diag)) ||
            (rc = int_field(o, n_freq, &freq, NULL, file, diag)))
            return rc;
        const json_t *only = json_object_get(o, "mlp_only_layers");
        for (int64_t i = 0; i < a.n_layers; i++) {
            int moe = (i + 1) % step == 0 && i >= first_dense && (i - first_dense) % freq == 0 &&
                      !in_int_list(only, i);
            moe_layers += moe;
        }
    }
    /* sliding-window attention: which layers */
    int64_t window = 0;
    int have_win = 0;
    const json_t *wv = json_object_get(o, "sliding_window");
    if (wv && json_is_boolean(wv)) /* some configs say false */
        have_win = 0;
    else if ((rc = int_field(o, n_window, &window, &have_win, file, diag)))
        return rc;
    int64_t sliding = 0;
    const json_t *lt = json_object_get(o, "layer_types");
    if (lt && !json_is_null(lt)) {
        if (!json_is_array(lt) || (int64_t)json_array_size(lt) != a.n_layers)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "layer_types: expected a list of %lld layer types",
                                (long long)a.n_layers);
        size_t i;
        const json_t *v;
        json_array_foreach(lt, i, v)
        {
            const char *t = json_string_value(v);
            if (t && strcmp(t, "sliding_attention") == 0)
                sliding++;
            else if (!t || strcmp(t, "full_attention") != 0)
                return erg_diag_set(diag, ERG_ENOTSUP, file,
                                    "layer_types[%zu]: layer type %s%s%s is not modelled "
                                    "(sliding_attention, full_attention)",
                                    i, t ? "\"" : "", t ? t : "(not a string)", t ? "\"" : "");
        }
    } else if (have_win) {
        if (strcmp(type, "gemma2") == 0)
            sliding = (a.n_layers + 1) / 2; /* even layers slide, odd ones are global */
        else if (strncmp(type, "qwen2", 5) == 0 || strncmp(type, "qwen3", 5) == 0) {
            if (sliding_q) {
                int64_t from = a.n_layers;
                const json_t *mw = json_object_get(o, "max_window_layers");
                if (mw && !json_is_null(mw) && !json_is_integer(mw))
                    return erg_diag_set(diag, ERG_EPARSE, file,
                                        "max_window_layers: must be an integer (got %s)",
                                        json_kind(mw));
                if (mw && json_is_integer(mw))
                    from = json_integer_value(mw);
                sliding = from < a.n_layers ? a.n_layers - (from < 0 ? 0 : from) : 0;
            }
        } else if (sliding_m)
            sliding = a.n_layers; /* Mistral, Phi-3: every layer */
    }
    if (sliding > 0 && window <= 0)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "sliding_window: sliding layers need a positive window");
    a.window = sliding > 0 ? window : 0;
    /* layer kinds: sliding and MoE layers are assumed spread independently, which is exact for
     * every family above (one of the two is all-or-nothing or alternation with all-MoE). */
    int64_t moe_sliding = a.n_layers ? moe_layers * sliding / a.n_layers : 0;
    a.layers[ERG_LAYER_SLIDING_MOE] = moe_sliding;
    a.layers[ERG_LAYER_FULL_MOE] = moe_layers - moe_sliding;
    a.layers[ERG_LAYER_SLIDING_DENSE] = sliding - moe_sliding;
    a.layers[ERG_LAYER_FULL_DENSE] = a.n_layers - moe_layers - sliding + moe_sliding;
    if (moe_layers == 0) {
        a.n_experts = a.top_k = a.d_ff_expert = a.n_shared = a.d_ff_shared = 0;
    }
    a.norms_per_layer = strcmp(type, "gemma2") == 0 ? 4 : 2;
    a.tied_embeddings = tied;
    a.rotary_fraction = 1;
    const char *rf_name = "partial_rotary_factor";
    const json_t *rf = json_object_get(o, rf_name);
    if (!rf || json_is_null(rf))
        rf = json_object_get(o, rf_name = "rotary_pct");
    if (rf && !json_is_null(rf) && !json_is_number(rf))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be a number in (0, 1] (got %s)",
                            rf_name, json_kind(rf));
    if (rf && json_is_number(rf)) {
        double f = json_number_value(rf);
        if (!(f > 0 && f <= 1))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be in (0, 1] (got %g)", rf_name,
                                f);
        a.rotary_fraction = f;
    }
    static const char *const n_positions[] = {"max_position_embeddings", NULL};
    if ((rc = int_field(o, n_positions, &a.max_positions, NULL, file, diag)))
        return rc;
    a.dtype = ERG_DTYPE_BF16;
    const json_t *dt = json_object_get(o, "torch_dtype");
    if (!dt || json_is_null(dt))
        dt = json_object_get(o, "dtype");
    if (dt && !json_is_null(dt)) {
        const char *ds = json_string_value(dt);
        if (!ds)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "torch_dtype: expected a string (\"bfloat16\", \"float16\", "
                                "\"float32\")");
        const char *n = strncmp(ds, "torch.", 6) == 0 ? ds + 6 : ds;
        if (strcmp(n, "float16") == 0)
            a.dtype = ERG_DTYPE_FP16;
        else if (strcmp(n, "float32") == 0)
            a.dtype = ERG_DTYPE_FP32;
        else if (strcmp(n, "bfloat16") != 0)
            return erg_diag_set(diag, ERG_ENOTSUP, file,
                                "torch_dtype: \"%.40s\" is not a dtype erg models (bfloat16, "
                                "float16, float32; refused rather than modelled as bf16)",
                                ds);
    }
    const json_t *qc = json_object_get(o, "quantization_config");
    if (json_is_object(qc)) {
        const json_t *qm = json_object_get(qc, "quant_method");
        if (qm && !json_is_string(qm))
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "quantization_config: quant_method must be a string");
        snprintf(a.quant_method, sizeof a.quant_method, "%s",
                 qm ? json_string_value(qm) : "unnamed");
    }
    erg_diag d2;
    erg_diag_clear(&d2);
    if (erg_arch_check(&a, &d2) != ERG_OK)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s", d2.detail);
    *out = a;
    return ERG_OK;
}

/* "dir/llama-3.1-8b.json" → "llama-3.1-8b"; "dir/llama/config.json" → "llama" */
static void stem(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "config.json") == 0 && base > path + 1) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        snprintf(buf, size, "%.*s", (int)(end - start), start);
        return;
    }
    const char *dot = strrchr(base, '.');
    size_t n = dot && strcmp(dot, ".json") == 0 ? (size_t)(dot - base) : strlen(base);
    snprintf(buf, size, "%.*s", (int)n, base);
}

/* A config error that names a field first ("hidden_size: ...") gets that value's position in the
 * text (erg__json_locate, as jansson keeps no positions): "config.json:3:20: hidden_size: ...". An
 * absent field gets the position of the object that lacks it, the document's (config.json is one
 * object): "config.json:1:1: missing required ...". */
static void locate_field(const char *text, size_t len, const char *file, int rc, erg_diag *diag)
{
    if (!diag)
        return;
    char path[128] = ""; /* "": the document */
    if (strncmp(diag->detail, "missing required field ", 23) != 0) {
        size_t n = strcspn(diag->detail, ": \"");
        if (n == 0 || n >= sizeof path || diag->detail[n] != ':')
            return;
        memcpy(path, diag->detail, n);
        path[n] = '\0';
    }
    size_t line, col;
    if (!erg__json_locate(text, len, path, &line, &col))
        return;
    char detail[sizeof diag->detail];
    memcpy(detail, diag->detail, sizeof detail);
    (void)erg__diag_at(diag, rc, file, line, col, "%s", detail);
}

int erg_arch_from_hf_json(const char *text, size_t len, const char *name, erg_arch *out,
                          erg_diag *diag)
{
    if (!text || !out)
        return erg_diag_set(diag, ERG_EINVAL, name, "no text or no output");
    json_t *root = NULL;
    int rc = erg__json_load_buffer(text, len, name ? name : "config.json", &root, diag);
    if (rc != ERG_OK)
        return rc;
    char st[96];
    stem(name ? name : "", st, sizeof st);
    rc = parse(root, name ? name : "config.json", st, out, diag);
    json_decref(root);
    if (rc != ERG_OK)
        locate_field(text, len, name ? name : "config.json", rc, diag);
    return rc;
}

int erg_arch_from_hf_config(const char *path, erg_arch *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no path or no output");
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg_arch_from_hf_json(buf, len, path, out, diag);
    free(buf);
    return rc;
}
