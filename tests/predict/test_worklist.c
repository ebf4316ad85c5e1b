/* SPDX-License-Identifier: MIT */
/* Work lists per phase (HYMELL 3.4-3.6): FLOPs and dimensions computed by hand. */
#include "support/erg_test.h"

#include <math.h>
#include <string.h>

#include "erg/predict.h"

/* Llama-3.1-8B's sizes, written out so the test needs no data file. */
static erg_arch llama8b(void)
{
    erg_arch a;
    memset(&a, 0, sizeof a);
    strcpy(a.family, "llama");
    a.n_layers = a.layers[ERG_LAYER_FULL_DENSE] = 32;
    a.d_model = 4096;
    a.n_heads = 32;
    a.n_kv_heads = 8;
    a.head_dim = 128;
    a.d_ff = 14336;
    a.vocab = 128256;
    a.gated = 1;
    a.norms_per_layer = 2;
    a.dtype = ERG_DTYPE_BF16;
    return a;
}

static const erg_model_block *find(const erg_model_work *w, const char *name)
{
    for (size_t i = 0; i < w->n_blocks; i++)
        if (strcmp(w->blocks[i].name, name) == 0)
            return &w->blocks[i];
    return NULL;
}

static const erg_work_op *role(const erg_block_work *w, const char *r)
{
    for (size_t i = 0; i < w->n_ops; i++)
        if (strcmp(w->ops[i].role, r) == 0)
            return &w->ops[i];
    return NULL;
}

static void llama_prefill_gemm_flops_by_hand(void **state)
{
    (void)state;
    erg_arch a = llama8b();
    erg_phase_spec p = {ERG_PHASE_PREFILL, 1, 1024, 0, 1};
    erg_model_work w;
    erg_diag d;
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_OK);
    const erg_model_block *att = find(&w, "attention"), *ffn = find(&w, "ffn");
    assert_non_null(att);
    assert_non_null(ffn);
    assert_int_equal(att->count, 32);
    assert_int_equal(find(&w, "norm")->count, 65);
    assert_null(find(&w, "moe"));
    assert_null(find(&w, "attention_sliding"));
    erg_block_work bw;
    assert_int_equal(erg_block_work_build(&att->spec, &bw, &d), ERG_OK);
    /* q and o: 2·1024·4096·4096 = 34,359,738,368 each; k and v: 2·1024·1024·4096 =
     * 8,589,934,592 each; QK^T and ·V: 32 heads × 2·1024·1024·128 = 8,589,934,592 each */
    erg_assert_near(bw.gemm_flops, 103079215104.0, 1);
    const erg_work_op *qk = role(&bw, "qk");
    assert_int_equal(qk->dims.m, 1024);
    assert_int_equal(qk->dims.n, 1024);
    assert_int_equal(qk->dims.k, 128);
    erg_assert_near(qk->count, 32, 0);
    const erg_work_op *sm = role(&bw, "softmax");
    assert_int_equal(sm->dims.op, ERG_OP_SOFTMAX);
    assert_int_equal(sm->dims.tokens, 1024); /* causal N × N */
    assert_int_equal(erg_block_work_build(&ffn->spec, &bw, &d), ERG_OK);
    /* gate, up, down: 3 · 2·1024·4096·14336 = 360,777,252,864 */
    erg_assert_near(bw.gemm_flops, 360777252864.0, 1);
    /* bytes of the down projection in bf16: (1024 + 4096)·14336·2 + 1024·4096·2 */
    const erg_work_op *down = role(&bw, "down");
    assert_int_equal(down->dims.m, 1024);
    assert_int_equal(down->dims.n, 4096);
    assert_int_equal(down->dims.k, 14336);
    double total;
    assert_int_equal(erg_model_work_gemm_flops(&w, &total, &d), ERG_OK);
    /* 32 layers + LM head over every position: 2·1024·4096·128256 = 1,075,940,392,... */
    erg_assert_near(total, 32.0 * (103079215104.0 + 360777252864.0) + 2.0 * 1024 * 4096 * 128256,
                    1e3);
    p.logits_all = 0; /* only the last position's logits */
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_OK);
    assert_int_equal(erg_block_tokens(&find(&w, "lm_head")->spec), 1);
}

static void llama_decode_kv_is_a_gemm_dimension(void **state)
{
    (void)state;
    erg_arch a = llama8b();
    erg_phase_spec p = {ERG_PHASE_DECODE, 4, 0, 2048, 1};
    erg_model_work w;
    erg_diag d;
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_OK);
    erg_block_work bw;
    assert_int_equal(erg_block_work_build(&find(&w, "attention")->spec, &bw, &d), ERG_OK);
    const erg_work_op *qk = role(&bw, "qk"), *pv = role(&bw, "pv"), *q = role(&bw, "q_proj");
    /* eager GQA: repeat_kv copies the 8 KV heads' 2048 cached keys to all 32 heads, and the
     * batched matmuls run per sequence and head with the one new query */
    assert_int_equal(qk->dims.m, 1);
    assert_int_equal(qk->dims.n, 2048);
    assert_int_equal(qk->dims.k, 128);
    erg_assert_near(qk->count, 4.0 * 32, 0);
    assert_int_equal(pv->dims.m, 1);
    assert_int_equal(pv->dims.n, 128);
    assert_int_equal(pv->dims.k, 2048);
    /* the copies (bf16): torch.cat of K and V reads 2048 and writes 2049 positions of
     * 4 sequences × 8 KV heads × 128; repeat_kv reads the 8 and writes 32 heads' 2048 keys */
    double pos = 4.0 * 8 * 128 * 2;
    double rep = 4.0 * 2048 * 128 * 2;
    erg_assert_near(bw.kv_copy_bytes, 2 * pos * (2048 + 2049) + 2 * rep * (8 + 32), 0);
    erg_assert_near(bw.kv_copy_footprint, 2 * pos * 2049 + 2 * rep * 32, 0);
    /* eager calls besides the GEMMs and the softmax: views and transposes 6, RoPE 14, the
     * scale and k.transpose 2, the context's transpose and reshape 2, the residual 1, the two
     * torch.cat 2, repeat_kv 6 (torch's dispatcher counts 26 + 6 such calls in
     * profile_torch.py's decode attention, the residual aside) */
    erg_assert_near(bw.eager_calls, 25 + 2 + 6, 0);
    assert_int_equal(q->dims.m, 4); /* one new token per sequence */
    const erg_work_op *sm = role(&bw, "softmax");
    assert_int_equal(sm->dims.m, 4 * 32);
    assert_int_equal(sm->dims.n, 2048);
    /* q, o: 2·4·4096·4096 each; k, v: 2·4·4096·1024 each; qk, pv: 128 heads × 2·1·2048·128 */
    erg_assert_near(bw.gemm_flops,
                    2 * (2.0 * 4 * 4096 * 4096) + 2 * (2.0 * 4 * 4096 * 1024) +
                        2 * (128 * 2.0 * 1 * 2048 * 128),
                    1);
    /* MHA (Llama 2 7B's 32 / 32): no repeat_kv, the cache concatenation only */
    erg_block_spec mha = find(&w, "attention")->spec;
    mha.n_kv_heads = 32;
    assert_int_equal(erg_block_work_build(&mha, &bw, &d), ERG_OK);
    erg_assert_near(bw.kv_copy_bytes, 2 * (4.0 * 32 * 128 * 2) * (2048 + 2049), 0);
    erg_assert_near(bw.eager_calls, 25 + 2, 0);
    /* prefill: no cache to concatenate, repeat_kv of the prompt's keys (GQA only) */
    erg_block_spec pre = find(&w, "attention")->spec;
    pre.phase = ERG_PHASE_PREFILL;
    pre.prompt = 100;
    pre.kv = 0;
    assert_int_equal(erg_block_work_build(&pre, &bw, &d), ERG_OK);
    erg_assert_near(bw.kv_copy_bytes, 2 * (4.0 * 100 * 128 * 2) * (8 + 32), 0);
    pre.n_kv_heads = 32;
    assert_int_equal(erg_block_work_build(&pre, &bw, &d), ERG_OK);
    erg_assert_near(bw.kv_copy_bytes, 0, 0);
    erg_assert_near(bw.eager_calls, 25, 0); /* the mask's add is in the softmax op's profile */
    /* a missing KV length is refused, naming it */
    p.kv = 0;
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "kv"));
    p.kv = 10;
    p.batch = 0;
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "batch"));
}

static void sliding_window_caps_the_kv(void **state)
{
    (void)state;
    erg_arch a = llama8b();
    a.layers[ERG_LAYER_FULL_DENSE] = 16;
    a.layers[ERG_LAYER_SLIDING_DENSE] = 16;
    a.window = 4096;
    erg_phase_spec p = {ERG_PHASE_DECODE, 1, 0, 10000, 1};
    erg_model_work w;
    erg_diag d;
    assert_int_equal(erg_model_work_build(&a, &p, &w, &d), ERG_OK);
    const erg_model_block *full = find(&w, "attention"), *slide = find(&w, "attention_sliding");
    assert_int_equal(full->count, 16);
    assert_int_equal(slide->count, 16);
    erg_block_work bw;
    assert_int_equal(erg_block_work_build(&slide->spec, &bw, &d), ERG_OK);
    assert_int_equal(role(&bw, "qk")->dims.n, 4096); /* min(10000, 4096) */
    assert_int_equal(erg_block_work_build(&full->spec, &bw, &d), ERG_OK);
    assert_int_equal(role(&bw, "qk")->dims.n, 10000);
    erg_phase_spec pf = {ERG_PHASE_PREFILL, 1, 8192, 0, 1};
    assert_int_equal(erg_model_work_build(&a, &pf, &w, &d), ERG_OK);
    assert_int_equal(erg_block_work_build(&find(&w, "attention_sliding")->spec, &bw, &d), ERG_OK);
    const erg_work_op *qk = role(&bw, "qk"), *sm = role(&bw, "softmax");
    assert_int_equal(qk->dims.m, 8192);
    assert_int_equal(qk->dims.n, 4096);
    assert_int_equal(sm->dims.m, 8192); /* row-wise 8192 × 4096, no longer causal N × N */
    assert_int_equal(sm->dims.n, 4096);
    assert_int_equal(sm->dims.tokens, 0);
}

static void moe_router_experts_and_shared(void **state)
{
    (void)state;
    erg_block_spec s;
    memset(&s, 0, sizeof s);
    s.block = ERG_BLOCK_MOE;
    s.phase = ERG_PHASE_DECODE;
    s.batch = 1;
    s.kv = 100;
    s.d_model = 4096;
    s.d_ff = 14336;
    s.gated = 1;
    s.n_experts = 8;
    s.top_k = 2;
    s.dtype = ERG_DTYPE_BF16;
    erg_block_work bw;
    erg_diag d;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    /* one token: router 2·1·8·4096; 2 active experts of 1 token: 2 · 3 · 2·1·14336·4096 */
    erg_assert_near(bw.gemm_flops, 2.0 * 8 * 4096 + 2 * 3 * 2.0 * 14336 * 4096, 1);
    const erg_work_op *up = role(&bw, "expert_up");
    assert_int_equal(up->dims.m, 1);
    erg_assert_near(up->count, 2, 1e-12);
    /* 4 tokens (8 routed) share experts: uniform routing touches 8 · (1 − (6/8)^4) = 5.46875
     * experts on average (not min(8, 8) = 8), each over round(8 / 5.46875) = 1 token */
    s.batch = 4;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    up = role(&bw, "expert_up");
    erg_assert_near(up->count, 5.46875, 1e-12);
    assert_int_equal(up->dims.m, 1);
    /* eager calls: routing 14, per active expert 7 + its activation and product 2, the
     * residual 1 (Qwen3-MoE-like, 16 experts, top-4, one token: torch's dispatcher counts 51
     * calls besides the linears in profile_torch.py's moe: 15 + 4 · 9) */
    erg_assert_near(bw.eager_calls, 14 + 9 * 5.46875 + 1, 1e-12);
    /* 16 tokens, 32 routed: 8 · (1 − 0.75^16) = 7.919... experts of round(4.04) = 4 tokens */
    s.batch = 16;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    up = role(&bw, "expert_up");
    erg_assert_near(up->count, 8 * (1 - pow(0.75, 16)), 1e-12);
    assert_int_equal(up->dims.m, 4);
    s.batch = 1;
    /* prefill of 512 tokens: 1024 routed tokens over all 8 experts, 128 each */
    s.phase = ERG_PHASE_PREFILL;
    s.prompt = 512;
    s.kv = 0;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    up = role(&bw, "expert_up");
    assert_int_equal(up->dims.m, 128);
    erg_assert_near(up->count, 8, 1e-9); /* 8 · (1 − 0.75^512) */
    assert_null(role(&bw, "shared_up"));
    /* Qwen1.5-MoE-like shared expert: every token through a 5632-wide gated FFN */
    s.n_shared = 1;
    s.d_ff_shared = 5632;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    const erg_work_op *sh = role(&bw, "shared_down");
    assert_non_null(sh);
    assert_int_equal(sh->dims.m, 512);
    assert_int_equal(sh->dims.k, 5632);
    /* bad specs name the field */
    s.top_k = 9;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "top_k 9 is above n_experts 8"));
    s.top_k = 2;
    s.d_ff_shared = 0;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "d_ff_shared"));
}

static void ungated_ffn_and_other_blocks(void **state)
{
    (void)state;
    erg_block_spec s;
    memset(&s, 0, sizeof s);
    s.block = ERG_BLOCK_FFN;
    s.phase = ERG_PHASE_PREFILL;
    s.batch = 2;
    s.prompt = 100;
    s.d_model = 2560;
    s.d_ff = 10240;
    s.dtype = ERG_DTYPE_FP32;
    erg_block_work bw;
    erg_diag d;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    assert_int_equal(bw.n_ops, 2); /* phi-2: up and down only */
    assert_null(role(&bw, "gate"));
    erg_assert_near(bw.gemm_flops, 2 * (2.0 * 200 * 2560 * 10240), 1);
    /* fp32 bytes: up (200 + 10240)·2560·4 + 200·10240·4, down (200 + 2560)·10240·4 + 200·2560·4 */
    erg_assert_near(bw.gemm_bytes,
                    (200.0 + 10240) * 2560 * 4 + 200.0 * 10240 * 4 + (200.0 + 2560) * 10240 * 4 +
                        200.0 * 2560 * 4,
                    1);
    erg_assert_near(bw.eager_calls, 2, 0); /* the GELU and the residual add */
    s.gated = 1;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    erg_assert_near(bw.eager_calls, 3, 0); /* the activation, the gating product, the residual */
    s.gated = 0;
    s.block = ERG_BLOCK_NORM;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    erg_assert_near(bw.eager_calls, 0, 0); /* the RMSNorm op's profile has its own calls */
    assert_int_equal(bw.n_ops, 1);
    assert_int_equal(bw.ops[0].dims.op, ERG_OP_RMSNORM);
    assert_int_equal(bw.ops[0].dims.tokens, 200);
    s.block = ERG_BLOCK_EMBEDDING;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_EINVAL); /* no vocab */
    s.vocab = 51200;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_OK);
    assert_int_equal(bw.n_ops, 0);
    erg_assert_near(bw.elementwise_bytes, 2.0 * 200 * 2560 * 4, 0);
    s.block = ERG_BLOCK_ATTENTION;
    s.n_heads = 32;
    s.n_kv_heads = 5;
    s.head_dim = 80;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "n_kv_heads 5 does not divide n_heads 32"));
    s.prompt = 0;
    assert_int_equal(erg_block_work_build(&s, &bw, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "prompt"));
    erg_block b;
    assert_int_equal(erg_block_parse("lm_head", &b), ERG_OK);
    assert_int_equal(b, ERG_BLOCK_LM_HEAD);
    assert_int_equal(erg_block_parse("mlp", &b), ERG_EINVAL);
    erg_phase ph;
    assert_int_equal(erg_phase_parse("decode", &ph), ERG_OK);
    assert_int_equal(erg_phase_parse("generate", &ph), ERG_EINVAL);
}

static void gemma_like_model_blocks(void **state)
{
    (void)state;
    erg_arch a = llama8b();
    a.norms_per_layer = 4;
    a.n_layers = 26;
    a.layers[ERG_LAYER_FULL_DENSE] = 13;
    a.layers[ERG_LAYER_SLIDING_DENSE] = 13;
    a.window = 4096;
    erg_phase_spec p = {ERG_PHASE_PREFILL, 1, 512, 0, 1};
    erg_model_work w;
    assert_int_equal(erg_model_work_build(&a, &p, &w, NULL), ERG_OK);
    assert_int_equal(find(&w, "norm")->count, 4 * 26 + 1);
    assert_int_equal(find(&w, "attention")->count, 13);
    assert_int_equal(find(&w, "attention_sliding")->count, 13);
    assert_int_equal(find(&w, "attention_sliding")->spec.window, 4096);
    assert_int_equal(find(&w, "attention")->spec.window, 0);
    /* a window no shorter than the prompt changes nothing */
    erg_block_work s1, s2;
    assert_int_equal(erg_block_work_build(&find(&w, "attention")->spec, &s1, NULL), ERG_OK);
    assert_int_equal(erg_block_work_build(&find(&w, "attention_sliding")->spec, &s2, NULL), ERG_OK);
    erg_assert_near(s1.gemm_flops, s2.gemm_flops, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama_prefill_gemm_flops_by_hand),
        cmocka_unit_test(llama_decode_kv_is_a_gemm_dimension),
        cmocka_unit_test(sliding_window_caps_the_kv),
        cmocka_unit_test(moe_router_experts_and_shared),
        cmocka_unit_test(ungated_ffn_and_other_blocks),
        cmocka_unit_test(gemma_like_model_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
