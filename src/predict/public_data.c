/* SPDX-License-Identifier: MIT */
/* Readers of third-party measured files: aiconfigurator kernel tables (CSV or CSV.gz), Vidur
 * mlp.csv, ML.ENERGY v3 model JSON, BLIS request traces. Errors name file, line and field. */
#include "erg/predict.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/csv.h"
#include "core/diag.h"
#include "core/file.h"
#include "core/json.h"

static const char *const format_names[ERG_PUBLIC_FORMAT_COUNT] = {"aic-gemm",
                                                                  "aic-context-attention",
                                                                  "aic-generation-attention",
                                                                  "aic-moe",
                                                                  "aic-collective",
                                                                  "vidur-mlp",
                                                                  "mlenergy-v3",
                                                                  "blis-traces"};

const char *erg_public_format_name(erg_public_format f)
{
    return (unsigned)f < ERG_PUBLIC_FORMAT_COUNT ? format_names[f] : "?";
}

static const char *const vidur_names[ERG_VIDUR_OP_COUNT] = {
    "emb",         "input_layernorm", "attn_pre_proj",
    "attn_rope",   "attn_post_proj",  "post_attention_layernorm",
    "mlp_up_proj", "mlp_act",         "mlp_down_proj",
    "add"};

const char *erg_vidur_op_name(erg_vidur_op op)
{
    return (unsigned)op < ERG_VIDUR_OP_COUNT ? vidur_names[op] : "?";
}

void erg_public_table_free(erg_public_table *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}

static void row_init(erg_public_row *r)
{
    memset(r, 0, sizeof *r);
    r->time_s = r->power_w = r->energy_j = NAN;
    for (int i = 0; i < ERG_VIDUR_OP_COUNT; i++)
        r->op_time_s[i] = NAN;
    r->avg_batch = r->avg_output_len = r->throughput_tok_s = NAN;
    r->prefill_s = r->decode_s = r->queue_s = r->ttft_s = NAN;
}

static int push_row(erg_public_table *t, size_t *cap, const erg_public_row *r, erg_diag *diag)
{
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        erg_public_row *p = realloc(t->rows, nc * sizeof *p);
        if (!p)
            return erg_diag_set(diag, ERG_ENOMEM, t->path, "out of memory reading rows");
        t->rows = p;
        *cap = nc;
    }
    t->rows[t->n++] = *r;
    return ERG_OK;
}

/* ------------------------------------------------------------------ line reading (zlib) */

struct lines {
    gzFile gz;
    char *buf;
    size_t cap;
    size_t line;
};

/* Next line into l->buf without its newline; 1 read, 0 end of file, <0 error. */
static int next_line(struct lines *l, const char *path, erg_diag *diag)
{
    size_t len = 0;
    for (;;) {
        if (l->cap - len < 4096) {
            size_t nc = l->cap ? l->cap * 2 : 8192;
            char *p = realloc(l->buf, nc);
            if (!p)
                return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory reading a line");
            l->buf = p;
            l->cap = nc;
        }
        if (!gzgets(l->gz, l->buf + len, (int)(l->cap - len))) {
            int err = 0;
            const char *msg = gzerror(l->gz, &err);
            if (err != Z_OK && err != Z_BUF_ERROR)
                return erg_diag_set(diag, ERG_EIO, path, "cannot decompress: %s", msg);
            if (len == 0)
                return 0;
            break;
        }
        len += strlen(l->buf + len);
        if (len > 0 && l->buf[len - 1] == '\n')
            break;
        if (gzeof(l->gz))
            break;
    }
    while (len > 0 && (l->buf[len - 1] == '\n' || l->buf[len - 1] == '\r'))
        l->buf[--len] = '\0';
    l->line++;
    return 1;
}

#define MAX_COLS 128

/* One line of a CSV file split into cells: cell[i] the NUL-terminated cell i, col[i] the 1-based
 * byte column where it starts (errors name it: "file:line:col: column 'm': ..."). */
struct csv_line {
    char *cell[MAX_COLS + 1];
    size_t col[MAX_COLS + 1];
    const char *path;
    size_t line;
};

/* Split at commas in place with erg's one CSV splitter (core/csv.h: blanks trimmed). More than
 * MAX_COLS: the count, only MAX_COLS stored. */
static size_t split(char *s, struct csv_line *L)
{
    struct erg__csv_cell c[MAX_COLS];
    size_t n = erg__csv_split_inplace(s, c, MAX_COLS);
    for (size_t i = 0; i < n && i < MAX_COLS; i++) {
        L->cell[i] = s + (c[i].s - s); /* the cell, inside the writable line */
        L->col[i] = c[i].col;
    }
    return n;
}

/* ------------------------------------------------------------------ CSV schemas */

enum field {
    F_OP_NAME,
    F_FRAMEWORK,
    F_DEVICE,
    F_KERNEL_SOURCE,
    F_GEMM_DTYPE,
    F_M,
    F_N,
    F_K,
    F_LATENCY,
    F_POWER,
    F_BATCH,
    F_ISL,
    F_HEADS,
    F_KV_HEADS,
    F_HEAD_DIM,
    F_ATTN_DTYPE,
    F_KV_DTYPE,
    F_STEP,
    F_WINDOW,
    F_MOE_DTYPE,
    F_TOKENS,
    F_HIDDEN,
    F_INTER,
    F_TOPK,
    F_EXPERTS,
    F_MOE_TP,
    F_MOE_EP,
    F_DISTRIBUTION,
    F_NCCL_DTYPE,
    F_AR_DTYPE,
    F_GPUS,
    F_MSG,
    F_BACKEND,
    /* vidur */
    F_V_HEAD,
    F_V_KV_HEAD,
    F_V_EMBD,
    F_V_EXPANDED,
    F_V_VOCAB,
    F_V_GATED,
    F_V_TOKENS,
    F_V_TP,
    F_COUNT
};

static const char *const field_names[F_COUNT] = {"op_name",
                                                 "framework",
                                                 "device",
                                                 "kernel_source",
                                                 "gemm_dtype",
                                                 "m",
                                                 "n",
                                                 "k",
                                                 "latency",
                                                 "power",
                                                 "batch_size",
                                                 "isl",
                                                 "num_heads",
                                                 "num_key_value_heads",
                                                 "head_dim",
                                                 "attn_dtype",
                                                 "kv_cache_dtype",
                                                 "step",
                                                 "window_size",
                                                 "moe_dtype",
                                                 "num_tokens",
                                                 "hidden_size",
                                                 "inter_size",
                                                 "topk",
                                                 "num_experts",
                                                 "moe_tp_size",
                                                 "moe_ep_size",
                                                 "distribution",
                                                 "nccl_dtype",
                                                 "allreduce_dtype",
                                                 "num_gpus",
                                                 "message_size",
                                                 "backend",
                                                 "n_head",
                                                 "n_kv_head",
                                                 "n_embd",
                                                 "n_expanded_embd",
                                                 "vocab_size",
                                                 "use_gated_mlp",
                                                 "num_tokens",
                                                 "num_tensor_parallel_workers"};

/* Required fields per CSV format (F_COUNT ends the list). Optional ones are looked up too. */
static const enum field req_gemm[] = {F_OP_NAME, F_DEVICE, F_GEMM_DTYPE, F_M,
                                      F_N,       F_K,      F_LATENCY,    F_COUNT};
static const enum field req_ctx[] = {F_OP_NAME,  F_DEVICE,   F_BATCH,    F_ISL,
                                     F_HEADS,    F_KV_HEADS, F_HEAD_DIM, F_ATTN_DTYPE,
                                     F_KV_DTYPE, F_STEP,     F_LATENCY,  F_COUNT};
static const enum field req_moe[] = {F_OP_NAME,      F_DEVICE,  F_MOE_DTYPE, F_TOKENS, F_HIDDEN,
                                     F_INTER,        F_TOPK,    F_EXPERTS,   F_MOE_TP, F_MOE_EP,
                                     F_DISTRIBUTION, F_LATENCY, F_COUNT};
static const enum field req_coll[] = {F_OP_NAME, F_DEVICE, F_GPUS, F_MSG, F_LATENCY, F_COUNT};
static const enum field req_vidur[] = {F_V_HEAD,  F_V_KV_HEAD, F_V_EMBD, F_V_EXPANDED, F_V_VOCAB,
                                       F_V_GATED, F_V_TOKENS,  F_V_TP,   F_COUNT};

struct csv_map {
    int col[F_COUNT];                     /* -1: absent */
    int vidur_median[ERG_VIDUR_OP_COUNT]; /* column of time_stats.<op>.median */
    size_t ncols;
};

static int find_col(char *const *cells, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cells[i], name) == 0)
            return (int)i;
    return -1;
}

/* Recognise the format from the header cells; -1 when unknown. */
static int csv_format(char *const *cells, size_t n)
{
    if (find_col(cells, n, "time_stats.mlp_up_proj.median") >= 0 &&
        find_col(cells, n, "num_tokens") >= 0)
        return ERG_PUBLIC_VIDUR_MLP;
    if (find_col(cells, n, "op_name") < 0 || find_col(cells, n, "latency") < 0)
        return -1;
    if (find_col(cells, n, "gemm_dtype") >= 0)
        return ERG_PUBLIC_AIC_GEMM;
    if (find_col(cells, n, "attn_dtype") >= 0 && find_col(cells, n, "step") >= 0)
        return -2; /* attention: context or generation, decided by op_name of the rows */
    if (find_col(cells, n, "moe_dtype") >= 0)
        return ERG_PUBLIC_AIC_MOE;
    if (find_col(cells, n, "message_size") >= 0)
        return ERG_PUBLIC_AIC_COLLECTIVE;
    return -1;
}

static int bad(erg_diag *diag, const char *path, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(erg_diag *diag, const char *path, size_t line, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return erg__diag_at(diag, ERG_EPARSE, path, line, 0, "%s", what);
}

/* An error at cell c of the line: "file:line:col: column 'NAME': ...". */
static int bad_at(erg_diag *diag, const struct csv_line *L, int c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad_at(erg_diag *diag, const struct csv_line *L, int c, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return erg__diag_at(diag, ERG_EPARSE, L->path, L->line, L->col[c], "%s", what);
}

static int cell_int(const struct csv_line *L, const struct csv_map *m, enum field f, int64_t *out,
                    erg_diag *diag)
{
    if (m->col[f] < 0) {
        *out = 0;
        return ERG_OK;
    }
    const char *s = L->cell[m->col[f]];
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* "4096" and "4096.0" alike */
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v != floor(v) ||
        fabs(v) > 9.0e15)
        return bad_at(diag, L, m->col[f], "column '%s': expected an integer, got '%s'",
                      field_names[f], s);
    if (v < 0)
        return bad_at(diag, L, m->col[f], "column '%s': must not be negative, got '%s'",
                      field_names[f], s);
    *out = (int64_t)v;
    return ERG_OK;
}

/* The first of fields (F_COUNT ends the list) whose integer in r is 0: an error naming it, or
 * ERG_OK when none is. */
static int need_positive(const struct csv_line *L, const struct csv_map *m, const enum field *f,
                         const int64_t *const *v, erg_diag *diag)
{
    for (size_t i = 0; f[i] != F_COUNT; i++)
        if (*v[i] == 0)
            return bad_at(diag, L, m->col[f[i]] >= 0 ? m->col[f[i]] : 0,
                          "column '%s': must be positive, got '%s'", field_names[f[i]],
                          m->col[f[i]] >= 0 ? L->cell[m->col[f[i]]] : "");
    return ERG_OK;
}

static int parse_pos(const struct csv_line *L, int c, double *out, const char *name, int allow_zero,
                     erg_diag *diag)
{
    const char *s = L->cell[c];
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return bad_at(diag, L, c, "column '%s': expected a number, got '%s'", name, s);
    if (v < 0 || (!allow_zero && v == 0))
        return bad_at(diag, L, c, "column '%s': must be %s, got '%s'", name,
                      allow_zero ? "non-negative" : "positive", s);
    *out = v;
    return ERG_OK;
}

static void cell_str(const struct csv_line *L, const struct csv_map *m, enum field f, char *dst,
                     size_t size)
{
    snprintf(dst, size, "%s", m->col[f] >= 0 ? L->cell[m->col[f]] : "");
}

static int parse_aic_row(erg_public_format fmt, const struct csv_line *L, const struct csv_map *m,
                         erg_public_row *r, erg_diag *diag)
{
    int rc;
    row_init(r);
    r->line = L->line;
    cell_str(L, m, F_OP_NAME, r->op, sizeof r->op);
    cell_str(L, m, F_DEVICE, r->device, sizeof r->device);
    double lat_ms;
    if ((rc = parse_pos(L, m->col[F_LATENCY], &lat_ms, "latency", 0, diag)))
        return rc;
    r->time_s = lat_ms * 1e-3;
    if (m->col[F_POWER] >= 0) {
        if ((rc = parse_pos(L, m->col[F_POWER], &r->power_w, "power", 0, diag)))
            return rc;
        r->energy_j = r->power_w * r->time_s;
    }
    switch (fmt) {
    case ERG_PUBLIC_AIC_GEMM: {
        cell_str(L, m, F_GEMM_DTYPE, r->dtype, sizeof r->dtype);
        cell_str(L, m, F_KERNEL_SOURCE, r->variant, sizeof r->variant);
        if ((rc = cell_int(L, m, F_M, &r->m, diag)) || (rc = cell_int(L, m, F_N, &r->n, diag)) ||
            (rc = cell_int(L, m, F_K, &r->k, diag)))
            return rc;
        static const enum field pos[] = {F_M, F_N, F_K, F_COUNT};
        const int64_t *v[] = {&r->m, &r->n, &r->k};
        if ((rc = need_positive(L, m, pos, v, diag))) /* a GEMM needs positive sizes */
            return rc;
        break;
    }
    case ERG_PUBLIC_AIC_CONTEXT_ATTENTION:
    case ERG_PUBLIC_AIC_GENERATION_ATTENTION: {
        cell_str(L, m, F_ATTN_DTYPE, r->dtype, sizeof r->dtype);
        cell_str(L, m, F_KV_DTYPE, r->variant, sizeof r->variant);
        if ((rc = cell_int(L, m, F_BATCH, &r->batch, diag)) ||
            (rc = cell_int(L, m, F_ISL, &r->isl, diag)) ||
            (rc = cell_int(L, m, F_HEADS, &r->heads, diag)) ||
            (rc = cell_int(L, m, F_KV_HEADS, &r->kv_heads, diag)) ||
            (rc = cell_int(L, m, F_HEAD_DIM, &r->head_dim, diag)) ||
            (rc = cell_int(L, m, F_STEP, &r->kv, diag)) ||
            (rc = cell_int(L, m, F_WINDOW, &r->window, diag)))
            return rc;
        static const enum field pos[] = {F_BATCH, F_ISL, F_HEADS, F_KV_HEADS, F_HEAD_DIM, F_COUNT};
        const int64_t *v[] = {&r->batch, &r->isl, &r->heads, &r->kv_heads, &r->head_dim};
        if ((rc = need_positive(L, m, pos, v, diag)))
            return rc;
        if (r->heads % r->kv_heads)
            return bad_at(diag, L, m->col[F_KV_HEADS],
                          "column 'num_key_value_heads': %lld does not divide num_heads %lld",
                          (long long)r->kv_heads, (long long)r->heads);
        break;
    }
    case ERG_PUBLIC_AIC_MOE:
        cell_str(L, m, F_MOE_DTYPE, r->dtype, sizeof r->dtype);
        cell_str(L, m, F_DISTRIBUTION, r->variant, sizeof r->variant);
        if ((rc = cell_int(L, m, F_TOKENS, &r->tokens, diag)) ||
            (rc = cell_int(L, m, F_HIDDEN, &r->hidden, diag)) ||
            (rc = cell_int(L, m, F_INTER, &r->inter, diag)) ||
            (rc = cell_int(L, m, F_TOPK, &r->topk, diag)) ||
            (rc = cell_int(L, m, F_EXPERTS, &r->experts, diag)) ||
            (rc = cell_int(L, m, F_MOE_TP, &r->tp, diag)) ||
            (rc = cell_int(L, m, F_MOE_EP, &r->ep, diag)))
            return rc;
        if (r->topk > r->experts)
            return bad_at(diag, L, m->col[F_TOPK], "column 'topk': %lld is above num_experts %lld",
                          (long long)r->topk, (long long)r->experts);
        break;
    case ERG_PUBLIC_AIC_COLLECTIVE:
        if (m->col[F_NCCL_DTYPE] >= 0)
            cell_str(L, m, F_NCCL_DTYPE, r->dtype, sizeof r->dtype);
        else
            cell_str(L, m, F_AR_DTYPE, r->dtype, sizeof r->dtype);
        if (m->col[F_BACKEND] >= 0)
            cell_str(L, m, F_BACKEND, r->variant, sizeof r->variant);
        else
            cell_str(L, m, F_KERNEL_SOURCE, r->variant, sizeof r->variant);
        if ((rc = cell_int(L, m, F_GPUS, &r->gpus, diag)) ||
            (rc = cell_int(L, m, F_MSG, &r->message_bytes, diag)))
            return rc;
        break;
    default:
        break;
    }
    return ERG_OK;
}

static int parse_vidur_row(const struct csv_line *L, const struct csv_map *m, erg_public_row *r,
                           erg_diag *diag)
{
    int rc;
    row_init(r);
    r->line = L->line;
    snprintf(r->op, sizeof r->op, "layer");
    snprintf(r->dtype, sizeof r->dtype, "float16");
    if ((rc = cell_int(L, m, F_V_HEAD, &r->heads, diag)) ||
        (rc = cell_int(L, m, F_V_KV_HEAD, &r->kv_heads, diag)) ||
        (rc = cell_int(L, m, F_V_EMBD, &r->hidden, diag)) ||
        (rc = cell_int(L, m, F_V_EXPANDED, &r->inter, diag)) ||
        (rc = cell_int(L, m, F_V_VOCAB, &r->vocab, diag)) ||
        (rc = cell_int(L, m, F_V_TOKENS, &r->tokens, diag)) ||
        (rc = cell_int(L, m, F_V_TP, &r->tp, diag)))
        return rc;
    const char *g = L->cell[m->col[F_V_GATED]];
    if (strcmp(g, "True") == 0 || strcmp(g, "true") == 0 || strcmp(g, "1") == 0)
        r->gated = 1;
    else if (strcmp(g, "False") == 0 || strcmp(g, "false") == 0 || strcmp(g, "0") == 0)
        r->gated = 0;
    else
        return bad_at(diag, L, m->col[F_V_GATED],
                      "column 'use_gated_mlp': expected True or False, got '%s'", g);
    static const enum field pos[] = {F_V_HEAD,   F_V_KV_HEAD, F_V_EMBD, F_V_EXPANDED,
                                     F_V_TOKENS, F_V_TP,      F_COUNT};
    const int64_t *v[] = {&r->heads, &r->kv_heads, &r->hidden, &r->inter, &r->tokens, &r->tp};
    if ((rc = need_positive(L, m, pos, v, diag)))
        return rc;
    if (r->heads % r->kv_heads)
        return bad_at(diag, L, m->col[F_V_KV_HEAD],
                      "column 'n_kv_head': %lld does not divide n_head %lld",
                      (long long)r->kv_heads, (long long)r->heads);
    if (r->hidden % r->heads)
        return bad_at(diag, L, m->col[F_V_HEAD],
                      "column 'n_head': %lld does not divide n_embd %lld", (long long)r->heads,
                      (long long)r->hidden);
    r->head_dim = r->hidden / r->heads;
    double sum = 0;
    for (int i = 0; i < ERG_VIDUR_OP_COUNT; i++) {
        if (m->vidur_median[i] < 0)
            continue;
        char name[96];
        snprintf(name, sizeof name, "time_stats.%s.median", vidur_names[i]);
        double ms;
        if ((rc = parse_pos(L, m->vidur_median[i], &ms, name, 1, diag)))
            return rc;
        r->op_time_s[i] = ms * 1e-3;
        sum += r->op_time_s[i];
    }
    r->time_s = sum;
    return ERG_OK;
}

static int read_csv(struct lines *l, const char *path, erg_public_table *t, erg_diag *diag)
{
    struct csv_line L = {.path = path, .line = 1};
    int rc; /* the header is in l->buf already */
    size_t nh = split(l->buf, &L);
    if (nh > MAX_COLS)
        return bad(diag, path, 1, "more than %d columns: not a known public format", MAX_COLS);
    int fmt = csv_format(L.cell, nh);
    if (fmt == -1) {
        char first[64];
        snprintf(first, sizeof first, "%s", L.cell[0]);
        return bad(diag, path, 1,
                   "not a known public format (a CSV header starting '%s'; expected an "
                   "aiconfigurator table with op_name,...,latency or a Vidur mlp.csv)",
                   first);
    }
    struct csv_map map;
    map.ncols = nh;
    for (int f = 0; f < F_COUNT; f++)
        map.col[f] = -1;
    const enum field *req;
    int vidur = fmt == ERG_PUBLIC_VIDUR_MLP;
    for (int f = vidur ? F_V_HEAD : 0; f < (vidur ? F_COUNT : F_V_HEAD); f++)
        map.col[f] = find_col(L.cell, nh, field_names[f]);
    for (int i = 0; i < ERG_VIDUR_OP_COUNT; i++) {
        char name[96];
        snprintf(name, sizeof name, "time_stats.%s.median", vidur_names[i]);
        map.vidur_median[i] = vidur ? find_col(L.cell, nh, name) : -1;
    }
    switch (fmt) {
    case ERG_PUBLIC_AIC_GEMM:
        req = req_gemm;
        break;
    case -2:
        req = req_ctx;
        break;
    case ERG_PUBLIC_AIC_MOE:
        req = req_moe;
        break;
    case ERG_PUBLIC_AIC_COLLECTIVE:
        req = req_coll;
        break;
    default:
        req = req_vidur;
        break;
    }
    for (const enum field *f = req; *f != F_COUNT; f++)
        if (map.col[*f] < 0)
            return bad(diag, path, 1, "header: column '%s' is missing (%s table)", field_names[*f],
                       fmt == -2 ? "aiconfigurator attention"
                                 : erg_public_format_name((erg_public_format)fmt));
    if (vidur && (map.vidur_median[ERG_VIDUR_MLP_UP_PROJ] < 0 ||
                  map.vidur_median[ERG_VIDUR_MLP_DOWN_PROJ] < 0 ||
                  map.vidur_median[ERG_VIDUR_ATTN_PRE_PROJ] < 0))
        return bad(diag, path, 1,
                   "header: Vidur mlp.csv needs time_stats.{attn_pre_proj,mlp_up_proj,"
                   "mlp_down_proj}.median");
    if (fmt == ERG_PUBLIC_AIC_COLLECTIVE && map.col[F_NCCL_DTYPE] < 0 && map.col[F_AR_DTYPE] < 0)
        return bad(diag, path, 1, "header: column 'nccl_dtype' or 'allreduce_dtype' is missing");
    t->format = fmt == -2 ? ERG_PUBLIC_AIC_CONTEXT_ATTENTION : (erg_public_format)fmt;
    size_t cap = 0;
    while ((rc = next_line(l, path, diag)) > 0) {
        if (l->buf[0] == '\0' || l->buf[0] == '#')
            continue;
        L.line = l->line;
        size_t nc = split(l->buf, &L);
        if (nc != nh)
            return bad(diag, path, l->line, "%zu cells where the header has %zu columns", nc, nh);
        erg_public_row r;
        if (vidur)
            rc = parse_vidur_row(&L, &map, &r, diag);
        else
            rc = parse_aic_row(t->format, &L, &map, &r, diag);
        if (rc)
            return rc;
        if (fmt == -2) {
            erg_public_format rf;
            if (strcmp(r.op, "context_attention") == 0)
                rf = ERG_PUBLIC_AIC_CONTEXT_ATTENTION;
            else if (strcmp(r.op, "generation_attention") == 0)
                rf = ERG_PUBLIC_AIC_GENERATION_ATTENTION;
            else
                return bad_at(diag, &L, map.col[F_OP_NAME],
                              "column 'op_name': '%s' is not context_attention or "
                              "generation_attention",
                              r.op);
            if (t->n == 0)
                t->format = rf;
            else if (rf != t->format)
                return bad_at(diag, &L, map.col[F_OP_NAME],
                              "column 'op_name': '%s' in a %s table (one kind per file)", r.op,
                              erg_public_format_name(t->format));
        }
        if ((rc = push_row(t, &cap, &r, diag)))
            return rc;
    }
    if (rc < 0)
        return rc;
    if (t->n == 0)
        return bad(diag, path, l->line, "no data rows after the header");
    return ERG_OK;
}

/* ------------------------------------------------------------------ JSON formats */

/* A member that is a non-negative number (absent or null: NAN, an error when required). Errors
 * name the JSON path, which erg_public_read turns into the value's line and column. */
static int jnum(const json_t *o, const char *key, double *out, int required, const char *path,
                const char *ctx, erg_diag *diag)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = NAN;
        if (!required)
            return ERG_OK;
        return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s: required number is missing", ctx, key);
    }
    if (!json_is_number(v))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s: expected a number", ctx, key);
    if (!(json_number_value(v) >= 0))
        return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s: must not be negative (got %g)", ctx,
                            key, json_number_value(v));
    *out = json_number_value(v);
    return ERG_OK;
}

/* v must be above lo (at least 1 when lo is 1: a GPU count), else an error naming ctx.key. */
static int jpositive(double v, double lo, const char *key, const char *path, const char *ctx,
                     erg_diag *diag)
{
    if (lo >= 1 ? v >= lo : v > lo)
        return ERG_OK;
    return erg_diag_set(diag, ERG_EPARSE, path, "%s.%s: must be %s (got %g)", ctx, key,
                        lo >= 1 ? "at least 1" : "positive", v);
}

static int read_mlenergy(const json_t *root, const char *path, erg_public_table *t, erg_diag *diag)
{
    t->format = ERG_PUBLIC_MLENERGY_V3;
    const json_t *id = json_object_get(root, "model_id");
    snprintf(t->model_id, sizeof t->model_id, "%s",
             json_is_string(id) ? json_string_value(id) : "");
    const json_t *prec = json_object_get(root, "weight_precision");
    const json_t *cfgs = json_object_get(root, "configurations");
    if (!json_is_array(cfgs) || json_array_size(cfgs) == 0)
        return erg_diag_set(diag, ERG_EPARSE, path,
                            "configurations: expected a non-empty array (an ML.ENERGY file)");
    size_t cap = 0, i;
    const json_t *c;
    json_array_foreach(erg__json_mut(cfgs), i, c)
    {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "configurations[%zu]", i);
        if (!json_is_object(c))
            return erg_diag_set(diag, ERG_EPARSE, path, "%s: expected an object", ctx);
        erg_public_row r;
        row_init(&r);
        r.line = i + 1;
        snprintf(r.op, sizeof r.op, "serving");
        snprintf(r.dtype, sizeof r.dtype, "%s",
                 json_is_string(prec) ? json_string_value(prec) : "");
        const json_t *g = json_object_get(c, "gpu_model");
        if (!g)
            return erg_diag_set(diag, ERG_EPARSE, path, "%s.gpu_model: required string is missing",
                                ctx);
        if (!json_is_string(g))
            return erg_diag_set(diag, ERG_EPARSE, path, "%s.gpu_model: expected a string", ctx);
        snprintf(r.device, sizeof r.device, "%s", json_string_value(g));
        double gpus, seqs, itl, ept, pw, tp = 1, ep = 1;
        int rc;
        if ((rc = jnum(c, "num_gpus", &gpus, 1, path, ctx, diag)) ||
            (rc = jnum(c, "max_num_seqs", &seqs, 1, path, ctx, diag)) ||
            (rc = jnum(c, "avg_batch_size", &r.avg_batch, 1, path, ctx, diag)) ||
            (rc = jnum(c, "median_itl_ms", &itl, 1, path, ctx, diag)) ||
            (rc = jnum(c, "energy_per_token_joules", &ept, 1, path, ctx, diag)) ||
            (rc = jnum(c, "avg_power_watts", &pw, 0, path, ctx, diag)) ||
            (rc = jnum(c, "avg_output_len", &r.avg_output_len, 0, path, ctx, diag)) ||
            (rc = jnum(c, "output_throughput_tokens_per_sec", &r.throughput_tok_s, 0, path, ctx,
                       diag)))
            return rc;
        const json_t *par = json_object_get(c, "parallelization");
        if (json_is_object(par)) {
            char pctx[96];
            snprintf(pctx, sizeof pctx, "%s.parallelization", ctx);
            double v;
            if ((rc = jnum(par, "tensor_parallel", &v, 0, path, pctx, diag)))
                return rc;
            if (isfinite(v))
                tp = v;
            if ((rc = jnum(par, "expert_parallel", &v, 0, path, pctx, diag)))
                return rc;
            if (isfinite(v))
                ep = v;
        }
        if ((rc = jpositive(gpus, 1, "num_gpus", path, ctx, diag)) ||
            (rc = jpositive(r.avg_batch, 0, "avg_batch_size", path, ctx, diag)) ||
            (rc = jpositive(itl, 0, "median_itl_ms", path, ctx, diag)) ||
            (rc = jpositive(ept, 0, "energy_per_token_joules", path, ctx, diag)))
            return rc;
        r.gpus = (int64_t)gpus;
        r.tp = (int64_t)tp;
        r.ep = (int64_t)ep;
        r.batch = (int64_t)seqs;
        r.time_s = itl * 1e-3;
        r.energy_j = ept;
        r.power_w = pw;
        if ((rc = push_row(t, &cap, &r, diag)))
            return rc;
    }
    return ERG_OK;
}

/* One line of BLIS traces: its text (the error path finds a value's column in it, as jansson
 * keeps no positions), the file and the line number. */
struct blis_at {
    const char *text;
    size_t len;
    const char *path;
    size_t line;
};

/* An error at the value jpath names in the line ("file:line:col"; the line alone when the walk
 * does not find it). */
static int blis_bad(erg_diag *diag, const struct blis_at *at, const char *jpath, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));
static int blis_bad(erg_diag *diag, const struct blis_at *at, const char *jpath, const char *fmt,
                    ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t ln, col;
    if (!erg__json_locate(at->text, at->len, jpath, &ln, &col) || ln != 1)
        col = 0;
    return erg__diag_at(diag, ERG_EPARSE, at->path, at->line, col, "%s", what);
}

/* The value of the attribute named key (doubleValue, else intValue) and its JSON path below the
 * span's (vpath); NULL when absent. */
static const json_t *attr_value(const json_t *attrs, const char *key, const char *span, char *vpath,
                                size_t vsize)
{
    size_t i;
    const json_t *a;
    json_array_foreach(erg__json_mut(attrs), i, a)
    {
        const json_t *k = json_object_get(a, "key");
        if (json_is_string(k) && strcmp(json_string_value(k), key) == 0) {
            const json_t *v = json_object_get(a, "value");
            snprintf(vpath, vsize, "%s.attributes[%zu].value", span, i);
            if (!json_is_object(v))
                return NULL;
            const json_t *d = json_object_get(v, "doubleValue");
            snprintf(vpath, vsize, "%s.attributes[%zu].value.%s", span, i,
                     d ? "doubleValue" : "intValue");
            return d ? d : json_object_get(v, "intValue");
        }
    }
    snprintf(vpath, vsize, "%s.attributes", span);
    return NULL;
}

/* OTLP numbers: doubleValue is a number, intValue a decimal string (or a number). vpath: the
 * value's JSON path in the line, for the checks that follow. */
static int attr_num(const json_t *attrs, const char *key, double *out, const char *span,
                    char *vpath, size_t vsize, const struct blis_at *at, erg_diag *diag)
{
    const json_t *v = attr_value(attrs, key, span, vpath, vsize);
    if (!v)
        return blis_bad(diag, at, vpath, "llm_request span: attribute '%s' is missing", key);
    double x;
    if (json_is_number(v))
        x = json_number_value(v);
    else if (json_is_string(v)) {
        char *end;
        x = strtod(json_string_value(v), &end);
        if (end == json_string_value(v) || *end)
            return blis_bad(diag, at, vpath, "attribute '%s': expected a number, got '%s'", key,
                            json_string_value(v));
    } else
        return blis_bad(diag, at, vpath, "attribute '%s': expected a number", key);
    if (!isfinite(x) || x < 0)
        return blis_bad(diag, at, vpath, "attribute '%s' must be a non-negative number", key);
    *out = x;
    return ERG_OK;
}

static int blis_line(const json_t *root, const struct blis_at *at, erg_public_table *t, size_t *cap,
                     erg_diag *diag)
{
    const json_t *rs = json_object_get(root, "resourceSpans");
    if (!json_is_array(rs))
        return blis_bad(diag, at, rs ? "resourceSpans" : "",
                        "BLIS traces: 'resourceSpans' must be an array");
    size_t i, j, k;
    const json_t *r, *ss, *sp;
    json_array_foreach(erg__json_mut(rs), i, r)
    {
        const json_t *scopes = json_object_get(r, "scopeSpans");
        json_array_foreach(erg__json_mut(scopes), j, ss)
        {
            const json_t *spans = json_object_get(ss, "spans");
            json_array_foreach(erg__json_mut(spans), k, sp)
            {
                const json_t *name = json_object_get(sp, "name");
                if (!json_is_string(name) || strcmp(json_string_value(name), "llm_request"))
                    continue;
                char span[128], vp[224], vc[224];
                snprintf(span, sizeof span, "resourceSpans[%zu].scopeSpans[%zu].spans[%zu]", i, j,
                         k);
                const json_t *attrs = json_object_get(sp, "attributes");
                if (!json_is_array(attrs))
                    return blis_bad(diag, at, span, "llm_request span without 'attributes'");
                erg_public_row row;
                row_init(&row);
                row.line = t->n + 1; /* the request's index: a line may hold several spans */
                snprintf(row.op, sizeof row.op, "request");
                double p, c;
                int rc;
                if ((rc = attr_num(attrs, "gen_ai.usage.prompt_tokens", &p, span, vp, sizeof vp, at,
                                   diag)) ||
                    (rc = attr_num(attrs, "gen_ai.usage.completion_tokens", &c, span, vc, sizeof vc,
                                   at, diag)))
                    return rc;
                /* token counts: whole numbers erg can size work with (a double beyond 2^63
                 * would not even convert) */
                if (!(p >= 0 && p <= 0x1p53 && p == floor(p)))
                    return blis_bad(diag, at, vp,
                                    "gen_ai.usage.prompt_tokens: %g is not a token count (a "
                                    "whole number from 0 to 2^53)",
                                    p);
                if (!(c >= 0 && c <= 0x1p53 && c == floor(c)))
                    return blis_bad(diag, at, vc,
                                    "gen_ai.usage.completion_tokens: %g is not a token count (a "
                                    "whole number from 0 to 2^53)",
                                    c);
                char ap[224];
                if ((rc = attr_num(attrs, "gen_ai.latency.time_in_model_prefill", &row.prefill_s,
                                   span, ap, sizeof ap, at, diag)) ||
                    (rc = attr_num(attrs, "gen_ai.latency.time_in_model_decode", &row.decode_s,
                                   span, ap, sizeof ap, at, diag)) ||
                    (rc = attr_num(attrs, "gen_ai.latency.time_in_queue", &row.queue_s, span, ap,
                                   sizeof ap, at, diag)) ||
                    (rc = attr_num(attrs, "gen_ai.latency.time_to_first_token", &row.ttft_s, span,
                                   ap, sizeof ap, at, diag)) ||
                    (rc = attr_num(attrs, "gen_ai.latency.e2e", &row.time_s, span, ap, sizeof ap,
                                   at, diag)))
                    return rc;
                row.isl = (int64_t)p;
                row.tokens = (int64_t)c;
                if ((rc = push_row(t, cap, &row, diag)))
                    return rc;
            }
        }
    }
    return ERG_OK;
}

static int read_blis(struct lines *l, const char *path, erg_public_table *t, erg_diag *diag)
{
    t->format = ERG_PUBLIC_BLIS_TRACES;
    size_t cap = 0;
    int rc;
    do {
        if (l->buf[0] == '\0')
            continue;
        json_error_t je;
        json_t *root = json_loads(l->buf, 0, &je);
        if (!root)
            return erg__diag_at(diag, ERG_EPARSE, path, l->line,
                                je.column > 0 ? (size_t)je.column : 0, "not JSON: %s", je.text);
        const struct blis_at at = {l->buf, strlen(l->buf), path, l->line};
        rc = blis_line(root, &at, t, &cap, diag);
        json_decref(root);
        if (rc)
            return rc;
    } while ((rc = next_line(l, path, diag)) > 0);
    if (rc < 0)
        return rc;
    if (t->n == 0)
        return bad(diag, path, l->line, "BLIS traces without any llm_request span");
    return ERG_OK;
}

/* ------------------------------------------------------------------ entry point */

int erg_public_read(const char *path, erg_public_table **out, erg_diag *diag)
{
    if (!out || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_public_read: NULL argument");
    *out = NULL;
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        int e = errno;
        return erg_diag_set(diag,
                            e == ENOENT   ? ERG_ENOENT
                            : e == EACCES ? ERG_EACCES
                                          : ERG_EIO,
                            path, "cannot open: %s", strerror(e));
    }
    fclose(probe);
    erg_public_table *t = calloc(1, sizeof *t);
    if (!t)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    snprintf(t->path, sizeof t->path, "%s", path);
    struct lines l = {0};
    l.gz = gzopen(path, "rb");
    int rc;
    if (!l.gz) {
        rc = erg_diag_set(diag, ERG_EIO, path, "cannot open: %s", strerror(errno));
        goto out;
    }
    rc = next_line(&l, path, diag);
    if (rc <= 0) {
        if (rc == 0)
            rc = bad(diag, path, 1, "empty file: not a known public format");
        goto out;
    }
    const char *p = l.buf;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '{' && strstr(l.buf, "\"resourceSpans\"")) {
        rc = read_blis(&l, path, t, diag);
    } else if (*p == '{' || *p == '[') {
        /* a whole JSON document (ML.ENERGY is pretty-printed or on one line) */
        gzclose(l.gz);
        l.gz = NULL;
        char *text = NULL;
        size_t len = 0;
        rc = erg__read_file(path, &text, &len, diag);
        if (rc)
            goto out;
        json_error_t je;
        json_t *root = json_loadb(text, len, 0, &je);
        if (!root) {
            free(text);
            rc = erg__diag_at(diag, ERG_EPARSE, path, je.line > 0 ? (size_t)je.line : 1,
                              je.column > 0 ? (size_t)je.column : 0, "not JSON: %s", je.text);
            goto out;
        }
        if (json_is_object(root) && json_object_get(root, "configurations") &&
            json_object_get(root, "model_id")) {
            rc = read_mlenergy(root, path, t, diag);
            if (rc) /* the error path only: the value's line and column in the text */
                erg__json_diag_place(diag, text, len, path);
        } else {
            json_t *tag = json_is_object(root) ? json_object_get(root, "erg") : NULL;
            rc = bad(diag, path, 1,
                     "not a known public format: JSON%s%s%s (expected an ML.ENERGY v3 model "
                     "file with model_id and configurations, or BLIS traces)",
                     tag && json_is_string(tag) ? " (\"erg\": \"" : "",
                     tag && json_is_string(tag) ? json_string_value(tag) : "",
                     tag && json_is_string(tag) ? "\")" : "");
        }
        free(text);
        json_decref(root);
    } else {
        rc = read_csv(&l, path, t, diag);
    }
out:
    if (l.gz)
        gzclose(l.gz);
    free(l.buf);
    if (rc) {
        erg_public_table_free(t);
        return rc;
    }
    *out = t;
    return ERG_OK;
}

/* ------------------------------------------------------------------ level-1 samples */

static int push_sample(erg_op_sample **s, size_t *n, size_t *cap, const erg_op_sample *x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        erg_op_sample *p = realloc(*s, nc * sizeof *p);
        if (!p)
            return ERG_ENOMEM;
        *s = p;
        *cap = nc;
    }
    (*s)[(*n)++] = *x;
    return ERG_OK;
}

static int dtype_of(const char *name, erg_dtype *out)
{
    if (strcmp(name, "bfloat16") == 0 || strcmp(name, "bf16") == 0)
        *out = ERG_DTYPE_BF16;
    else if (strcmp(name, "float16") == 0 || strcmp(name, "fp16") == 0 || strcmp(name, "half") == 0)
        *out = ERG_DTYPE_FP16;
    else if (strcmp(name, "float32") == 0 || strcmp(name, "fp32") == 0)
        *out = ERG_DTYPE_FP32;
    else
        return ERG_EINVAL;
    return ERG_OK;
}

int erg_public_ops(const erg_public_table *t, const char *dtype, erg_op_sample **s, size_t *n,
                   size_t *skipped, erg_diag *diag)
{
    if (!t || !s || !n)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_public_ops: NULL argument");
    size_t cap = *n, skip = 0;
    erg_dtype want = ERG_DTYPE_BF16;
    if (dtype && dtype_of(dtype, &want))
        return erg_diag_set(diag, ERG_EINVAL, t->path, "dtype '%s' is not one erg models", dtype);
    erg_op_sample x;
    if (t->format == ERG_PUBLIC_AIC_GEMM) {
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            erg_dtype d;
            if (dtype_of(r->dtype, &d) || d != want) {
                skip++;
                continue;
            }
            memset(&x, 0, sizeof x);
            x.dims.op = ERG_OP_GEMM;
            x.dims.dtype = d;
            x.dims.m = r->m;
            x.dims.n = r->n;
            x.dims.k = r->k;
            snprintf(x.kappa, sizeof x.kappa, "aic-%s", r->variant[0] ? r->variant : "gemm");
            x.reps = 1;
            x.time_s = r->time_s;
            x.time_sd_s = NAN;
            x.energy_j = r->energy_j;
            x.energy_sd_j = NAN;
            x.has_grade = isfinite(r->energy_j);
            x.grade = ERG_GRADE_MODEL_BASED;
            if (push_sample(s, n, &cap, &x))
                return erg_diag_set(diag, ERG_ENOMEM, t->path, "out of memory");
        }
    } else if (t->format == ERG_PUBLIC_VIDUR_MLP) {
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            if (r->tp != 1) {
                skip++;
                continue;
            }
            int64_t d = r->hidden, hd = r->head_dim;
            struct {
                erg_vidur_op op;
                int64_t m, nn, k;
            } g[4] = {{ERG_VIDUR_ATTN_PRE_PROJ, r->tokens, (r->heads + 2 * r->kv_heads) * hd, d},
                      {ERG_VIDUR_ATTN_POST_PROJ, r->tokens, d, r->heads * hd},
                      {ERG_VIDUR_MLP_UP_PROJ, r->tokens, (r->gated ? 2 : 1) * r->inter, d},
                      {ERG_VIDUR_MLP_DOWN_PROJ, r->tokens, d, r->inter}};
            for (int j = 0; j < 4; j++) {
                double tm = r->op_time_s[g[j].op];
                if (!(tm > 0))
                    continue;
                memset(&x, 0, sizeof x);
                x.dims.op = ERG_OP_GEMM;
                x.dims.dtype = ERG_DTYPE_FP16;
                x.dims.m = g[j].m;
                x.dims.n = g[j].nn;
                x.dims.k = g[j].k;
                snprintf(x.kappa, sizeof x.kappa, "vidur-%s", vidur_names[g[j].op]);
                x.reps = 20;
                x.time_s = tm;
                x.time_sd_s = x.energy_j = x.energy_sd_j = NAN;
                if (push_sample(s, n, &cap, &x))
                    return erg_diag_set(diag, ERG_ENOMEM, t->path, "out of memory");
            }
            if (!r->gated)
                continue; /* LayerNorm (phi-2) is not RMSNorm */
            erg_vidur_op norms[2] = {ERG_VIDUR_INPUT_LAYERNORM, ERG_VIDUR_POST_ATTENTION_LAYERNORM};
            for (int j = 0; j < 2; j++) {
                double tm = r->op_time_s[norms[j]];
                if (!(tm > 0))
                    continue;
                memset(&x, 0, sizeof x);
                x.dims.op = ERG_OP_RMSNORM;
                x.dims.dtype = ERG_DTYPE_FP16;
                x.dims.tokens = r->tokens;
                x.dims.d_model = d;
                snprintf(x.kappa, sizeof x.kappa, "vidur-rmsnorm");
                x.reps = 20;
                x.time_s = tm;
                x.time_sd_s = x.energy_j = x.energy_sd_j = NAN;
                if (push_sample(s, n, &cap, &x))
                    return erg_diag_set(diag, ERG_ENOMEM, t->path, "out of memory");
            }
        }
    } else {
        return erg_diag_set(
            diag, ERG_ENOTSUP, t->path,
            "a file of format %s has no level-1 op rows (GEMM: aiconfigurator gemm_perf; "
            "GEMM and RMSNorm: Vidur mlp.csv)",
            erg_public_format_name(t->format));
    }
    if (skipped)
        *skipped += skip;
    return ERG_OK;
}

/* ------------------------------------------------------------------ blocks.csv */

struct sbuf {
    char *p;
    size_t n, cap;
};

static int sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_printf(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            return -1;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return 0;
        }
        size_t nc = b->cap ? b->cap * 2 : 1 << 16;
        while (nc < b->n + (size_t)k + 1)
            nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q)
            return -1;
        b->p = q;
        b->cap = nc;
    }
}

static void vidur_arch(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = strncmp(base, "vidur_", 6) == 0 ? strchr(base + 6, '_') : NULL;
    snprintf(out, size, "%.90s", p ? p + 1 : base);
    char *e = strstr(out, "_mlp.csv");
    if (e)
        *e = '\0';
}

/* arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,head_dim,d_ff,ffn_act,
 * gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,dtype,threads,reps,time_s,
 * time_sd_s,energy_j,energy_sd_j,grade */
static int block_row(struct sbuf *b, const char *arch, const char *block, const char *phase,
                     int64_t batch, int64_t prompt, int64_t kv, int64_t tokens,
                     const erg_public_row *r, double time_s)
{
    return sb_printf(b,
                     "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%s,%d,,,,,,%lld,fp16,,"
                     "20,%.9g,,,,\n",
                     arch, block, phase, (long long)batch, (long long)prompt, (long long)kv,
                     (long long)tokens, (long long)r->hidden, (long long)r->heads,
                     (long long)r->kv_heads, (long long)r->head_dim, (long long)r->inter,
                     r->gated ? "silu" : "gelu", r->gated, (long long)r->vocab, time_s);
}

int erg_public_blocks_write(const char *path, const erg_public_table *const *t, size_t n,
                            size_t *vidur_rows, size_t *attention_blocks, erg_diag *diag)
{
    if ((n && !t) || !path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_public_blocks_write: NULL argument");
    struct sbuf b = {0};
    int oom = sb_printf(&b, "arch,block,phase,batch,prompt,kv,tokens,d_model,n_heads,n_kv_heads,"
                            "head_dim,d_ff,ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,"
                            "window,vocab,dtype,threads,reps,time_s,time_sd_s,energy_j,"
                            "energy_sd_j,grade\n");
    size_t rows = 0, attn = 0;
    for (size_t i = 0; i < n && !oom; i++) {
        if (t[i]->format != ERG_PUBLIC_VIDUR_MLP)
            continue;
        char arch[96];
        vidur_arch(t[i]->path, arch, sizeof arch);
        for (size_t j = 0; j < t[i]->n && !oom; j++) {
            const erg_public_row *r = &t[i]->rows[j];
            if (r->tp != 1)
                continue;
            const double *o = r->op_time_s;
            double ffn = o[ERG_VIDUR_MLP_UP_PROJ] + o[ERG_VIDUR_MLP_DOWN_PROJ] +
                         (isfinite(o[ERG_VIDUR_MLP_ACT]) ? o[ERG_VIDUR_MLP_ACT] : 0);
            oom |= block_row(&b, arch, "ffn", "prefill", 1, r->tokens, 0, r->tokens, r, ffn);
            if (isfinite(o[ERG_VIDUR_INPUT_LAYERNORM]))
                oom |= block_row(&b, arch, "norm", "prefill", 1, r->tokens, 0, r->tokens, r,
                                 o[ERG_VIDUR_INPUT_LAYERNORM]);
            if (isfinite(o[ERG_VIDUR_EMB]))
                oom |= block_row(&b, arch, "embedding", "prefill", 1, r->tokens, 0, r->tokens, r,
                                 o[ERG_VIDUR_EMB]);
            rows += 1;
            double proj = o[ERG_VIDUR_ATTN_PRE_PROJ] + o[ERG_VIDUR_ATTN_POST_PROJ] +
                          (isfinite(o[ERG_VIDUR_ATTN_ROPE]) ? o[ERG_VIDUR_ATTN_ROPE] : 0);
            /* attention: Vidur's projections and RoPE + the attention kernel measured by
             * aiconfigurator on the same GPU (exact matches of heads, KV heads, head_dim and
             * tokens; bf16, full attention) */
            for (size_t q = 0; q < n && !oom; q++) {
                erg_public_format f = t[q]->format;
                if (f != ERG_PUBLIC_AIC_CONTEXT_ATTENTION &&
                    f != ERG_PUBLIC_AIC_GENERATION_ATTENTION)
                    continue;
                for (size_t z = 0; z < t[q]->n && !oom; z++) {
                    const erg_public_row *a = &t[q]->rows[z];
                    if (a->heads != r->heads || a->kv_heads != r->kv_heads ||
                        a->head_dim != r->head_dim || a->window || strcmp(a->dtype, "bfloat16") ||
                        strcmp(a->variant, "bfloat16"))
                        continue;
                    if (f == ERG_PUBLIC_AIC_CONTEXT_ATTENTION && a->batch == 1 &&
                        a->isl == r->tokens) {
                        oom |= block_row(&b, arch, "attention", "prefill", 1, r->tokens, 0,
                                         r->tokens, r, proj + a->time_s);
                        attn++;
                    } else if (f == ERG_PUBLIC_AIC_GENERATION_ATTENTION && a->batch == r->tokens) {
                        oom |= block_row(&b, arch, "attention", "decode", a->batch, 0, a->kv,
                                         a->batch, r, proj + a->time_s);
                        attn++;
                    }
                }
            }
        }
    }
    if (vidur_rows)
        *vidur_rows = rows;
    if (attention_blocks)
        *attention_blocks = attn;
    if (oom) {
        free(b.p);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    if (rows == 0) {
        free(b.p);
        return erg_diag_set(diag, ERG_EINVAL, path,
                            "no Vidur mlp.csv row at TP 1 among the files: nothing written");
    }
    int rc = erg__write_file_atomic(path, b.p, b.n, diag);
    free(b.p);
    return rc;
}
