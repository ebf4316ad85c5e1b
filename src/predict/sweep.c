/* SPDX-License-Identifier: MIT */
/* A design-space sweep of whole-model predictions (HYMELL Section 4; `erg predict sweep`):
 * every combination of the swept ranges, predicted per phase, each point that the architecture
 * cannot have or erg cannot size handed back with the reason. Library logic (issue 13): the CLI
 * only parses the ranges and prints what the callbacks give it. */
#include "erg/predict.h"

#include <stdio.h>
#include <string.h>

int erg_phase_tokens_check(int phases, int64_t batch, int64_t prompt, int64_t kv, int64_t output,
                           char *why, size_t size)
{
    const int64_t max = (int64_t)1 << 40;
    if (batch < 1 || prompt < 1 || kv < 1 || output < 0) {
        snprintf(why, size, "batch, prompt and kv must be positive, output not negative");
        return ERG_EINVAL;
    }
    if ((phases & 1) && batch > max / prompt) {
        snprintf(why, size, "--batch %lld x --prompt %lld is more than 2^40 tokens",
                 (long long)batch, (long long)prompt);
        return ERG_EINVAL;
    }
    if ((phases & 2) && batch > max / kv) {
        snprintf(why, size, "--batch %lld x --kv %lld is more than 2^40 cached tokens",
                 (long long)batch, (long long)kv);
        return ERG_EINVAL;
    }
    if (output > 0 && (prompt > max - output || batch > max / (prompt + output))) {
        snprintf(why, size,
                 "--batch %lld x (--prompt %lld + --output %lld) is more than 2^40 tokens",
                 (long long)batch, (long long)prompt, (long long)output);
        return ERG_EINVAL;
    }
    return ERG_OK;
}

int erg_predict_sweep(const erg_predictor *p, const erg_arch *base, const erg_phase_spec *spec,
                      int phases, int kv_set, const erg_sweep_range *r, size_t n,
                      erg_sweep_row_fn row, erg_sweep_skip_fn skip, void *ctx, size_t *rows,
                      erg_diag *diag)
{
    if (rows)
        *rows = 0;
    if (!p || !base || !spec || !r || !row || n < 1 || n > ERG_SWEEP_MAX_KEYS || phases < 1 ||
        phases > 3)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "erg_predict_sweep: NULL argument, not 1-16 ranges or no phase");
    size_t points = 1;
    for (size_t i = 0; i < n; i++) {
        if (r[i].lo < 1 || r[i].hi < r[i].lo || r[i].step < 1)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "erg_predict_sweep: range %s: expected 0 < lo <= hi, step > 0",
                                r[i].key);
        points *= (size_t)((r[i].hi - r[i].lo) / r[i].step + 1);
        if (points > ERG_SWEEP_MAX_POINTS)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_predict_sweep: more than 10^7 points");
    }
    int64_t cur[ERG_SWEEP_MAX_KEYS];
    for (size_t i = 0; i < n; i++)
        cur[i] = r[i].lo;
    size_t made = 0;
    for (size_t pt = 0; pt < points; pt++) {
        erg_arch a = *base;
        int64_t batch = spec->batch, prompt = spec->prompt, kv = spec->kv;
        erg_diag pd;
        erg_diag_clear(&pd);
        int bad = 0;
        for (size_t i = 0; i < n && !bad; i++) {
            if (strcmp(r[i].key, "batch") == 0)
                batch = cur[i];
            else if (strcmp(r[i].key, "prompt") == 0) {
                prompt = cur[i];
                if (!kv_set)
                    kv = cur[i];
            } else if (strcmp(r[i].key, "kv") == 0)
                kv = cur[i];
            else
                bad = erg_arch_set(&a, r[i].key, cur[i], &pd) != ERG_OK;
        }
        if (!bad && erg_phase_tokens_check(phases, batch, prompt, kv, 0, pd.detail,
                                           sizeof pd.detail) != ERG_OK)
            bad = 1;
        if (!bad)
            bad = erg_arch_check(&a, &pd) != ERG_OK;
        for (int ph = 0; ph < 2 && !bad; ph++) {
            if (!(phases & (1 << ph)))
                continue;
            erg_phase_spec s = {(erg_phase)ph, batch, ph == ERG_PHASE_PREFILL ? prompt : 0,
                                ph == ERG_PHASE_DECODE ? kv : 0, spec->logits_all};
            erg_model_prediction m;
            if (erg_predict_model(p, &a, &s, &m, &pd) != ERG_OK) {
                bad = 1;
                break;
            }
            int rc = row(ctx, cur, &m);
            if (rc != ERG_OK) {
                if (rows)
                    *rows = made;
                return erg_diag_set(diag, rc, NULL, "the sweep's row callback failed");
            }
            made++;
        }
        if (bad && skip) {
            int rc = skip(ctx, cur, pd.detail);
            if (rc != ERG_OK) {
                if (rows)
                    *rows = made;
                return erg_diag_set(diag, rc, NULL, "the sweep's skip callback failed");
            }
        }
        for (size_t i = n; i-- > 0;) { /* odometer */
            cur[i] += r[i].step;
            if (cur[i] <= r[i].hi)
                break;
            cur[i] = r[i].lo;
        }
    }
    if (rows)
        *rows = made;
    return ERG_OK;
}
