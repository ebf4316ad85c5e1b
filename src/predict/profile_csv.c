/* SPDX-License-Identifier: MIT */
/* The profile files of levels 2 and 3: blocks.csv and models.csv (docs/predict.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "erg/predict.h"
#include "core/csv.h"

enum bcol {
    B_ARCH,
    B_BLOCK,
    B_PHASE,
    B_BATCH,
    B_PROMPT,
    B_KV,
    B_TOKENS,
    B_DMODEL,
    B_HEADS,
    B_KVHEADS,
    B_HEADDIM,
    B_DFF,
    B_ACT,
    B_GATED,
    B_EXPERTS,
    B_TOPK,
    B_SHARED,
    B_DFFSH,
    B_WINDOW,
    B_VOCAB,
    B_DTYPE,
    B_THREADS,
    B_REPS,
    B_TIME,
    B_TIMESD,
    B_ENERGY,
    B_ENERGYSD,
    B_GRADE,
    B_COUNT
};
static const char *const bnames[B_COUNT] = {
    "arch",      "block",   "phase",      "batch",       "prompt",   "kv",          "tokens",
    "d_model",   "n_heads", "n_kv_heads", "head_dim",    "d_ff",     "ffn_act",     "gated",
    "n_experts", "top_k",   "n_shared",   "d_ff_shared", "window",   "vocab",       "dtype",
    "threads",   "reps",    "time_s",     "time_sd_s",   "energy_j", "energy_sd_j", "grade"};
static const int breq[B_COUNT] = {
    [B_ARCH] = 1, [B_BLOCK] = 1, [B_PHASE] = 1, [B_BATCH] = 1, [B_DMODEL] = 1, [B_TIME] = 1};

enum mcol {
    M_ARCH,
    M_CONFIG,
    M_PHASE,
    M_BATCH,
    M_PROMPT,
    M_KV,
    M_TOKENS,
    M_DTYPE,
    M_THREADS,
    M_REPS,
    M_TIME,
    M_TIMESD,
    M_ENERGY,
    M_ENERGYSD,
    M_GRADE,
    M_COUNT
};
static const char *const mnames[M_COUNT] = {
    "arch",    "config", "phase",  "batch",     "prompt",   "kv",          "tokens", "dtype",
    "threads", "reps",   "time_s", "time_sd_s", "energy_j", "energy_sd_j", "grade"};
static const int mreq[M_COUNT] = {
    [M_ARCH] = 1, [M_CONFIG] = 1, [M_PHASE] = 1, [M_BATCH] = 1, [M_TIME] = 1};

struct growing {
    void *v;
    size_t n, cap, size;
};

static void *grow(struct growing *g)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        void *v = realloc(g->v, cap * g->size);
        if (!v)
            return NULL;
        g->v = v;
        g->cap = cap;
    }
    void *p = (char *)g->v + g->n++ * g->size;
    memset(p, 0, g->size);
    return p;
}

/* arch, phase, measurements and grade: the columns both files share (indices passed in). */
struct common_cols {
    size_t arch, phase, dtype, threads, reps, time, time_sd, energy, energy_sd, grade;
};

static int common(const struct erg__csv_row *r, const char *const *names,
                  const struct common_cols *c, char *arch, size_t arch_size, erg_phase *phase,
                  erg_dtype *dtype, int *have_dtype, int *threads, uint64_t *reps, double *t,
                  double *tsd, double *e, double *esd, erg_grade *grade, int *has_grade,
                  erg_diag *diag)
{
    int rc, present;
    if (!r->cell[c->arch][0])
        return erg__csv_error(diag, r, c->arch, names[c->arch], "a family name is required");
    snprintf(arch, arch_size, "%s", r->cell[c->arch]);
    if (erg_phase_parse(r->cell[c->phase], phase) != ERG_OK)
        return erg__csv_error(diag, r, c->phase, names[c->phase],
                              "unknown phase '%s' (prefill, decode)", r->cell[c->phase]);
    *have_dtype = r->cell[c->dtype][0] != '\0';
    if (*have_dtype && erg_dtype_parse(r->cell[c->dtype], dtype) != ERG_OK)
        return erg__csv_error(diag, r, c->dtype, names[c->dtype],
                              "unknown dtype '%s' (fp32, bf16, fp16)", r->cell[c->dtype]);
    int64_t v;
    if ((rc = erg__csv_int(r, c->threads, names[c->threads], &v, NULL, diag)))
        return rc;
    if (v > 1024) /* erg profile's --threads range; 4294967297 was cast to int 1 */
        return erg__csv_error(diag, r, c->threads, names[c->threads],
                              "expected at most 1024 threads, got '%s'", r->cell[c->threads]);
    *threads = (int)v;
    if ((rc = erg__csv_int(r, c->reps, names[c->reps], &v, NULL, diag)))
        return rc;
    *reps = (uint64_t)v;
    if ((rc = erg__csv_num(r, c->time, names[c->time], t, NULL, diag)) ||
        (rc = erg__csv_num(r, c->time_sd, names[c->time_sd], tsd, NULL, diag)) ||
        (rc = erg__csv_num(r, c->energy, names[c->energy], e, &present, diag)) ||
        (rc = erg__csv_num(r, c->energy_sd, names[c->energy_sd], esd, NULL, diag)))
        return rc;
    if (!(*t > 0))
        return erg__csv_error(diag, r, c->time, names[c->time], "must be positive, got '%s'",
                              r->cell[c->time]);
    if (present && !(*e > 0))
        return erg__csv_error(diag, r, c->energy, names[c->energy],
                              "must be positive (leave the cell empty when not measured)");
    *has_grade = 0;
    if (r->cell[c->grade][0]) {
        if (erg_grade_parse(r->cell[c->grade], grade) != ERG_OK)
            return erg__csv_error(diag, r, c->grade, names[c->grade],
                                  "unknown grade '%s' (hw_shunt, model_based, estimator)",
                                  r->cell[c->grade]);
        *has_grade = 1;
    } else if (present)
        return erg__csv_error(diag, r, c->grade, names[c->grade],
                              "energy_j is given, so its grade is required");
    return ERG_OK;
}

static const struct common_cols bcommon = {B_ARCH, B_PHASE,  B_DTYPE,  B_THREADS,  B_REPS,
                                           B_TIME, B_TIMESD, B_ENERGY, B_ENERGYSD, B_GRADE};
static const struct common_cols mcommon = {M_ARCH, M_PHASE,  M_DTYPE,  M_THREADS,  M_REPS,
                                           M_TIME, M_TIMESD, M_ENERGY, M_ENERGYSD, M_GRADE};

static int block_row(void *ud, const struct erg__csv_row *r, erg_diag *diag)
{
    erg_block_sample *s = grow(ud);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, r->path, "out of memory");
    erg_block_spec *b = &s->spec;
    int rc, have_dtype;
    s->spec.dtype = ERG_DTYPE_FP32;
    if (erg_block_parse(r->cell[B_BLOCK], &b->block) != ERG_OK)
        return erg__csv_error(diag, r, B_BLOCK, "block",
                              "unknown block '%s' (attention, ffn, moe, norm, embedding, lm_head)",
                              r->cell[B_BLOCK]);
    if ((rc = common(r, bnames, &bcommon, s->arch, sizeof s->arch, &b->phase, &b->dtype,
                     &have_dtype, &s->threads, &s->reps, &s->time_s, &s->time_sd_s, &s->energy_j,
                     &s->energy_sd_j, &s->grade, &s->has_grade, diag)))
        return rc;
    if (!have_dtype)
        return erg__csv_error(diag, r, B_DTYPE, "dtype", "a dtype is required");
    struct {
        size_t c;
        int64_t *v;
    } ints[] = {{B_BATCH, &b->batch},      {B_PROMPT, &b->prompt},   {B_KV, &b->kv},
                {B_DMODEL, &b->d_model},   {B_HEADS, &b->n_heads},   {B_KVHEADS, &b->n_kv_heads},
                {B_HEADDIM, &b->head_dim}, {B_DFF, &b->d_ff},        {B_EXPERTS, &b->n_experts},
                {B_TOPK, &b->top_k},       {B_SHARED, &b->n_shared}, {B_DFFSH, &b->d_ff_shared},
                {B_WINDOW, &b->window},    {B_VOCAB, &b->vocab}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if ((rc = erg__csv_int(r, ints[i].c, bnames[ints[i].c], ints[i].v, NULL, diag)))
            return rc;
    if (b->block == ERG_BLOCK_ATTENTION && b->n_heads && !b->n_kv_heads)
        b->n_kv_heads = b->n_heads; /* MHA when the column is empty */
    if (b->block == ERG_BLOCK_ATTENTION && b->n_heads && !b->head_dim &&
        b->d_model % b->n_heads == 0)
        b->head_dim = b->d_model / b->n_heads;
    b->act = ERG_ACT_SILU;
    if (r->cell[B_ACT][0] && erg_act_parse(r->cell[B_ACT], &b->act) != ERG_OK)
        return erg__csv_error(diag, r, B_ACT, "ffn_act",
                              "unknown activation '%s' (silu, gelu, gelu_tanh, relu)",
                              r->cell[B_ACT]);
    int64_t g = 0;
    int have_g = 0;
    if ((rc = erg__csv_int(r, B_GATED, "gated", &g, &have_g, diag)))
        return rc;
    if (g > 1)
        return erg__csv_error(diag, r, B_GATED, "gated", "expected 0 or 1, got '%s'",
                              r->cell[B_GATED]);
    b->gated = have_g ? (int)g : 1;
    erg_diag d2;
    erg_diag_clear(&d2);
    if (erg_block_spec_check(b, &d2) != ERG_OK)
        return erg__csv_error(diag, r, B_BLOCK, "block", "%s", d2.detail);
    int64_t tokens;
    int have_t;
    if ((rc = erg__csv_int(r, B_TOKENS, "tokens", &tokens, &have_t, diag)))
        return rc;
    if (have_t && tokens != erg_block_tokens(b))
        return erg__csv_error(diag, r, B_TOKENS, "tokens", "%lld is not %s (%lld)",
                              (long long)tokens,
                              b->phase == ERG_PHASE_PREFILL ? "batch × prompt" : "batch",
                              (long long)erg_block_tokens(b));
    return ERG_OK;
}

int erg_blocks_csv_read(const char *path, erg_block_sample **out, size_t *n, erg_diag *diag)
{
    if (!path || !out || !n)
        return erg_diag_set(diag, ERG_EINVAL, path, "no path or no output");
    struct growing g = {NULL, 0, 0, sizeof(erg_block_sample)};
    int rc = erg__csv_read(path, bnames, breq, B_COUNT, "a blocks CSV (arch,block,phase,...)",
                           block_row, &g, diag);
    if (rc == ERG_OK && g.n == 0)
        rc = erg_diag_set(diag, ERG_EPARSE, path, "no rows");
    if (rc != ERG_OK) {
        free(g.v);
        return rc;
    }
    *out = g.v;
    *n = g.n;
    return ERG_OK;
}

static void cell_i(FILE *f, int64_t v, int last)
{
    if (v > 0)
        fprintf(f, "%lld", (long long)v);
    fputc(last ? '\n' : ',', f);
}

static void cell_d(FILE *f, double v, int last)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    fputc(last ? '\n' : ',', f);
}

int erg_blocks_csv_write(const char *path, const erg_block_sample *s, size_t n, erg_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    for (int i = 0; i < B_COUNT; i++)
        fprintf(f, "%s%c", bnames[i], i + 1 < B_COUNT ? ',' : '\n');
    for (size_t i = 0; i < n; i++) {
        const erg_block_spec *b = &s[i].spec;
        int ffn = b->block == ERG_BLOCK_FFN || b->block == ERG_BLOCK_MOE;
        fprintf(f, "%s,%s,%s,", s[i].arch, erg_block_name(b->block), erg_phase_name(b->phase));
        cell_i(f, b->batch, 0);
        cell_i(f, b->prompt, 0);
        cell_i(f, b->kv, 0);
        cell_i(f, erg_block_tokens(b), 0);
        cell_i(f, b->d_model, 0);
        cell_i(f, b->n_heads, 0);
        cell_i(f, b->n_kv_heads, 0);
        cell_i(f, b->head_dim, 0);
        cell_i(f, b->d_ff, 0);
        fprintf(f, "%s,", ffn ? erg_act_name(b->act) : "");
        fprintf(f, "%s,", ffn ? (b->gated ? "1" : "0") : "");
        cell_i(f, b->n_experts, 0);
        cell_i(f, b->top_k, 0);
        cell_i(f, b->n_shared, 0);
        cell_i(f, b->d_ff_shared, 0);
        cell_i(f, b->window, 0);
        cell_i(f, b->vocab, 0);
        fprintf(f, "%s,", erg_dtype_name(b->dtype));
        cell_i(f, s[i].threads, 0);
        cell_i(f, (int64_t)s[i].reps, 0);
        cell_d(f, s[i].time_s, 0);
        cell_d(f, s[i].time_sd_s, 0);
        cell_d(f, s[i].energy_j, 0);
        cell_d(f, s[i].energy_sd_j, 0);
        fprintf(f, "%s\n", s[i].has_grade ? erg_grade_name(s[i].grade) : "");
    }
    if (fclose(f) != 0) {
        free(text);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    int rc = erg__write_file_atomic(path, text, len, diag);
    free(text);
    return rc;
}

struct mctx {
    struct growing g;
    char dir[4096];
};

static int model_row(void *ud, const struct erg__csv_row *r, erg_diag *diag)
{
    struct mctx *ctx = ud;
    erg_model_sample *s = grow(&ctx->g);
    if (!s)
        return erg_diag_set(diag, ERG_ENOMEM, r->path, "out of memory");
    int rc, have_dtype;
    erg_dtype dtype = ERG_DTYPE_BF16;
    if ((rc = common(r, mnames, &mcommon, s->arch, sizeof s->arch, &s->phase.phase, &dtype,
                     &have_dtype, &s->threads, &s->reps, &s->time_s, &s->time_sd_s, &s->energy_j,
                     &s->energy_sd_j, &s->grade, &s->has_grade, diag)))
        return rc;
    const char *cfg = r->cell[M_CONFIG];
    if (!cfg[0])
        return erg__csv_error(diag, r, M_CONFIG, "config", "a config.json path is required");
    snprintf(s->config, sizeof s->config, "%s", cfg);
    /* the same config as an earlier row: reuse it */
    erg_model_sample *all = ctx->g.v;
    int found = 0;
    for (size_t i = 0; i + 1 < ctx->g.n && !found; i++)
        if (strcmp(all[i].config, cfg) == 0) {
            s->model = all[i].model;
            found = 1;
        }
    if (!found) {
        char path[4700];
        if (cfg[0] == '/')
            snprintf(path, sizeof path, "%s", cfg);
        else
            snprintf(path, sizeof path, "%s/%s", ctx->dir, cfg);
        erg_diag d2;
        erg_diag_clear(&d2);
        rc = erg_arch_from_hf_config(path, &s->model, &d2);
        if (rc != ERG_OK)
            return erg__csv_error(diag, r, M_CONFIG, "config", "%s: %s", d2.where, d2.detail);
    }
    if (have_dtype)
        s->model.dtype = dtype;
    int64_t v;
    if ((rc = erg__csv_int(r, M_BATCH, "batch", &s->phase.batch, NULL, diag)) ||
        (rc = erg__csv_int(r, M_PROMPT, "prompt", &s->phase.prompt, NULL, diag)) ||
        (rc = erg__csv_int(r, M_KV, "kv", &s->phase.kv, NULL, diag)))
        return rc;
    s->phase.logits_all = 1;
    if (s->phase.batch <= 0)
        return erg__csv_error(diag, r, M_BATCH, "batch", "must be a positive integer");
    if (s->phase.phase == ERG_PHASE_PREFILL && s->phase.prompt <= 0)
        return erg__csv_error(diag, r, M_PROMPT, "prompt",
                              "prefill needs a positive prompt length");
    if (s->phase.phase == ERG_PHASE_DECODE && s->phase.kv <= 0)
        return erg__csv_error(diag, r, M_KV, "kv", "decode needs a positive KV-cache length");
    int have_t;
    if ((rc = erg__csv_int(r, M_TOKENS, "tokens", &v, &have_t, diag)))
        return rc;
    int64_t want =
        s->phase.phase == ERG_PHASE_PREFILL ? s->phase.batch * s->phase.prompt : s->phase.batch;
    if (have_t && v != want)
        return erg__csv_error(diag, r, M_TOKENS, "tokens", "%lld is not %s (%lld)", (long long)v,
                              s->phase.phase == ERG_PHASE_PREFILL ? "batch × prompt" : "batch",
                              (long long)want);
    return ERG_OK;
}

int erg_models_csv_read(const char *path, erg_model_sample **out, size_t *n, erg_diag *diag)
{
    if (!path || !out || !n)
        return erg_diag_set(diag, ERG_EINVAL, path, "no path or no output");
    struct mctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    ctx->g.size = sizeof(erg_model_sample);
    erg__dirname(path, ctx->dir, sizeof ctx->dir);
    int rc = erg__csv_read(path, mnames, mreq, M_COUNT, "a models CSV (arch,config,phase,...)",
                           model_row, ctx, diag);
    if (rc == ERG_OK && ctx->g.n == 0)
        rc = erg_diag_set(diag, ERG_EPARSE, path, "no rows");
    if (rc != ERG_OK)
        free(ctx->g.v);
    else {
        *out = ctx->g.v;
        *n = ctx->g.n;
    }
    free(ctx);
    return rc;
}
