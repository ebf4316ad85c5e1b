/* SPDX-License-Identifier: MIT */
/* What a model prediction cannot check and assumes (quantized weights modelled in the config's
 * dtype, weights and KV cache above the target's memory, sequences beyond the trained length),
 * and the decode step as served by the target's serving level 3 (docs/predict.md, "Memory" and
 * "As served"). Was src/cli/predict_model.c's: the library owns it so that C and Python callers
 * get the warnings `erg predict model` prints. */
#include "erg/predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0

static void warning_init(erg_model_warning *w, erg_model_warning_kind kind)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->tokens_what = "";
}

int erg_model_warnings(const erg_arch *a, const erg_predictor *p, const erg_model_query *q,
                       erg_model_warning *out, size_t *n, erg_diag *diag)
{
    if (!a || !q || !out || !n)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "model_warnings: NULL argument");
    *n = 0;
    if (((q->phases & 3) && q->batch < 1) || ((q->phases & 1) && q->prompt < 1) ||
        ((q->phases & 2) && q->kv < 1) || q->output < 0 || (q->output > 0 && q->prompt < 1))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "model_warnings: batch, prompt and kv must be at least 1 for the "
                            "phases asked, output at least 0");
    size_t k = 0;
    if (a->quant_method[0]) {
        erg_model_warning *w = &out[k++];
        warning_init(w, ERG_MODEL_WARNING_QUANTIZED);
        snprintf(w->text, sizeof w->text,
                 "quantization_config: quant_method \"%s\": erg has no kernel data for quantized "
                 "weights and models them in %s, so time, energy and memory are those of %s "
                 "weights",
                 a->quant_method, erg_dtype_name(a->dtype), erg_dtype_name(a->dtype));
    }
    if (!(q->phases & 3)) {
        *n = k;
        return ERG_OK;
    }
    /* the cached tokens a sequence holds at the end: the decode's KV length, the prompt for a
     * prefill (both phases: the larger); a request's last step attends to every earlier token */
    int64_t cached = (q->phases & 2) ? q->kv : q->prompt;
    if ((q->phases & 3) == 3 && q->prompt > cached)
        cached = q->prompt;
    if (q->output > 0)
        cached = q->prompt + q->output - 1;
    double mem = p ? erg_predictor_memory_bytes(p) : (double)NAN, kv_bytes = 0.0;
    double need = erg_arch_memory_bytes(a, q->batch, cached, &kv_bytes);
    if (isfinite(mem) && need > mem) {
        erg_model_warning *w = &out[k++];
        warning_init(w, ERG_MODEL_WARNING_MEMORY);
        w->tokens = cached;
        w->weights_bytes = need - kv_bytes;
        w->kv_bytes = kv_bytes;
        w->memory_bytes = mem;
        snprintf(w->text, sizeof w->text,
                 "the weights (%.4g GiB, %s) and the KV cache (%.4g GiB, %lld x %lld tokens) "
                 "need %.4g GiB, more than the target's %.4g GiB of memory: this prediction "
                 "assumes they fit",
                 w->weights_bytes / GIB, erg_dtype_name(a->dtype), kv_bytes / GIB,
                 (long long)q->batch, (long long)cached, need / GIB, mem / GIB);
    }
    /* longer than the model was trained for: RoPE scaling may stretch it, erg cannot tell */
    if (a->max_positions > 0 && cached > a->max_positions) {
        erg_model_warning *w = &out[k++];
        warning_init(w, ERG_MODEL_WARNING_POSITIONS);
        w->tokens = cached;
        w->max_positions = a->max_positions;
        w->tokens_what = q->output > 0                        ? "prompt + output - 1"
                         : (q->phases & 2) && cached == q->kv ? "the KV length"
                                                              : "the prompt";
        snprintf(w->text, sizeof w->text,
                 "%lld tokens (%s) are more than the config's max_position_embeddings %lld: the "
                 "model was not trained for sequences this long; this prediction assumes it runs",
                 (long long)cached, w->tokens_what, (long long)a->max_positions);
    }
    *n = k;
    return ERG_OK;
}

int erg_predict_serving_decode(const erg_predictor *p, const char *config, int64_t batch,
                               int64_t kv, double *itl_s, double *energy_per_token_j,
                               erg_diag *diag)
{
    if (!p || !config || !itl_s || !energy_per_token_j || batch < 1 || kv < 1)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "predict_serving_decode: NULL argument, or batch or kv below 1");
    *itl_s = *energy_per_token_j = (double)NAN;
    char path[1200];
    snprintf(path, sizeof path, "%s/gpu.json", erg_predictor_dir(p));
    erg_gpu_kernels k;
    erg_serving_model sm;
    erg_serving_arch sa;
    erg_serving_terms t;
    int has = 0;
    int rc = erg_gpu_target_load(path, &k, &sm, &has, diag);
    if (rc == ERG_ENOENT)
        return erg_diag_set(diag, ERG_ENOTSUP, erg_predictor_dir(p),
                            "the target has no gpu.json: no serving level 3");
    if (rc != ERG_OK)
        return rc;
    if (!has)
        return erg_diag_set(diag, ERG_ENOTSUP, path, "the target has no serving level 3");
    if ((rc = erg_serving_arch_read(config, &sa, diag)) != ERG_OK ||
        (rc = erg_serving_step(erg_predictor_ops(p), &k, &sa, (double)batch, (double)kv, 1, &t,
                               diag)) != ERG_OK)
        return rc;
    double itl, ept;
    erg_serving_predict(&sm, &t, (double)batch, 1, &itl, &ept);
    if (!isfinite(itl) || !isfinite(ept))
        return erg_diag_set(diag, ERG_ENOTSUP, path,
                            "the serving level 3 gives no finite figure for batch %lld, KV %lld",
                            (long long)batch, (long long)kv);
    *itl_s = itl;
    *energy_per_token_j = ept;
    return ERG_OK;
}
