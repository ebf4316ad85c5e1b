/* SPDX-License-Identifier: MIT */
/* erg predict import: public measured files -> profile files (ops.csv).
 * erg predict eval: compare a target's predictions with public measured files. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "erg/predict.h"
#include "predict_public.h"

/* ------------------------------------------------------------------ import */

static void import_help(FILE *out)
{
    fprintf(out,
            "Usage: erg predict import MEASURED... --ops OUT.csv [--dtype bfloat16|float16]\n"
            "Reads public measured files (format recognised from the content; .gz read through\n"
            "zlib): aiconfigurator gemm_perf tables (GEMM; the H200 tables carry NVML power:\n"
            "energy_j = power x latency, grade model_based, the energy aiconfigurator itself\n"
            "computes), Vidur mlp.csv (GEMMs of the projections and RMSNorm per token count,\n"
            "TP 1 only, fp16, time only). Writes the level-1 samples as ops.csv (whole or not\n"
            "at all) for 'erg fit ops'. --dtype selects the GEMM rows of an aiconfigurator\n"
            "table (default bfloat16; the others are counted as skipped).\n"
            "Prints per file: format, rows read, samples written, rows skipped.\n"
            "Exit status: 0 written, 2 bad input (unknown format, a bad row: file:line and\n"
            "the column), nothing written.\n");
}

int erg_cli_predict_import(int argc, char **argv)
{
    static const struct option longopts[] = {{"ops", required_argument, NULL, 'o'},
                                             {"dtype", required_argument, NULL, 'd'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *ops_path = NULL, *dtype = "bfloat16";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': ops_path = optarg; break;
        case 'd': dtype = optarg; break;
        case 'h': import_help(stdout); return ERG_EXIT_OK;
        default: return erg_cli_bad_option("predict import", argc, argv, "", longopts);
        }
    }
    if (optind >= argc)
        return erg_cli_usage("predict import", "expected at least one measured file");
    if (!ops_path)
        return erg_cli_usage("predict import", "expected --ops OUT.csv");
    erg_op_sample *s = NULL;
    size_t n = 0;
    int status = ERG_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        erg_diag diag;
        erg_diag_clear(&diag);
        erg_public_table *t = NULL;
        int rc = erg_public_read(argv[i], &t, &diag);
        if (rc) {
            status = erg_cli_fail(&diag, rc);
            break;
        }
        size_t before = n, skipped = 0;
        rc = erg_public_ops(t, dtype, &s, &n, &skipped, &diag);
        if (rc == ERG_EINVAL) {
            erg_public_table_free(t);
            status = erg_cli_usage("predict import", "--dtype: %s", diag.detail);
            break;
        }
        if (rc) {
            status = rc == ERG_ENOTSUP ? (fprintf(stderr, "erg: %s: %s\n", argv[i], diag.detail),
                                          ERG_EXIT_USAGE)
                                       : erg_cli_fail(&diag, rc);
            erg_public_table_free(t);
            break;
        }
        fprintf(stderr, "%s: %s, %zu rows, %zu level-1 samples, %zu rows skipped\n", argv[i],
                erg_public_format_name(t->format), t->n, n - before, skipped);
        erg_public_table_free(t);
    }
    if (status == ERG_EXIT_OK) {
        if (n == 0) {
            fprintf(stderr, "erg: predict import: no level-1 samples of dtype %s; nothing "
                            "written\n",
                    dtype);
            status = ERG_EXIT_USAGE;
        } else {
            erg_diag diag;
            erg_diag_clear(&diag);
            int rc = erg_ops_csv_write(ops_path, s, n, &diag);
            if (rc)
                status = erg_cli_fail(&diag, rc);
        }
    }
    free(s);
    return status;
}

/* ------------------------------------------------------------------ eval */

static void eval_help(FILE *out)
{
    fprintf(out,
            "Usage: erg predict eval --target NAME|DIR [--config CONFIG.json] MEASURED...\n"
            "                        [--json] [--worst N]\n"
            "Compares the target's predictions with public measured files, per file and phase:\n"
            "MAPE and R^2 of time and energy, the N worst rows (default 3) and the assumptions\n"
            "made. Rows erg cannot model are listed as skipped with the reason.\n"
            "--target: a folder models/<NAME>/ (looked up like the committed models) or a path;\n"
            "its ops.json is the level-1 model.\n"
            "Files: aiconfigurator gemm_perf (time_s, energy_j when the table has power),\n"
            "Vidur mlp.csv (time_s of the projection GEMMs and RMSNorms, per op).\n"
            "--json: {\"erg\": \"eval/1\", \"rows\": [{\"file\", \"row\", \"phase\", \"quantity\",\n"
            "\"measured\", \"predicted\"}...], \"summary\": [...], \"skipped\": [...],\n"
            "\"assumptions\": [...]}.\n"
            "Exit status: 0 compared, 2 bad input (unknown target, unknown format, a bad row).\n");
}

struct cmp {
    int file;
    size_t row;
    const char *phase;
    char quantity[40];
    double measured, predicted;
};

struct skip {
    int file;
    size_t row; /* 0: the whole file */
    char reason[200];
};

struct eval {
    struct cmp *c;
    size_t n, cap;
    struct skip *s;
    size_t ns, scap;
    char assumptions[8][240];
    int na;
};

static int add_cmp(struct eval *e, int file, size_t row, const char *phase, const char *q,
                   double measured, double predicted)
{
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 1024;
        struct cmp *p = realloc(e->c, nc * sizeof *p);
        if (!p)
            return -1;
        e->c = p;
        e->cap = nc;
    }
    struct cmp *x = &e->c[e->n++];
    x->file = file;
    x->row = row;
    x->phase = phase;
    snprintf(x->quantity, sizeof x->quantity, "%s", q);
    x->measured = measured;
    x->predicted = predicted;
    return 0;
}

static int add_skip(struct eval *e, int file, size_t row, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_skip(struct eval *e, int file, size_t row, const char *fmt, ...)
{
    if (e->ns == e->scap) {
        size_t nc = e->scap ? e->scap * 2 : 64;
        struct skip *p = realloc(e->s, nc * sizeof *p);
        if (!p)
            return -1;
        e->s = p;
        e->scap = nc;
    }
    struct skip *x = &e->s[e->ns++];
    x->file = file;
    x->row = row;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->reason, sizeof x->reason, fmt, ap);
    va_end(ap);
    return 0;
}

static void add_assumption(struct eval *e, const char *text)
{
    for (int i = 0; i < e->na; i++)
        if (strcmp(e->assumptions[i], text) == 0)
            return;
    if (e->na < 8)
        snprintf(e->assumptions[e->na++], sizeof e->assumptions[0], "%s", text);
}

/* Resolve --target: an existing folder, else models/<NAME>/ beside the committed models. */
static int target_dir(const char *name, char *buf, size_t size)
{
    struct stat st;
    if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(buf, size, "%s", name);
        return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
    }
    char path[1024];
    int len = erg_op_model_default_path(name, path, sizeof path);
    if (len < 0 || (size_t)len >= sizeof path || len < 5)
        return -1;
    path[len - 5] = '\0'; /* strip ".json": models/<NAME> */
    snprintf(buf, size, "%s", path);
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int gemm_row(struct eval *e, int fi, const erg_op_model *m, erg_dtype dt, int64_t mm,
                    int64_t nn, int64_t kk, size_t line, const char *q, double meas_t,
                    double meas_e)
{
    erg_op_dims d = {.op = ERG_OP_GEMM, .dtype = dt, .m = mm, .n = nn, .k = kk};
    erg_op_prediction p;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_op_model_predict(m, &d, &p, &diag) != ERG_OK)
        return add_skip(e, fi, line, "%s", diag.detail);
    char qn[40];
    snprintf(qn, sizeof qn, "%s%stime_s", q, q[0] ? "." : "");
    if (add_cmp(e, fi, line, "n/a", qn, meas_t, p.time_s))
        return -1;
    if (isfinite(meas_e) && isfinite(p.energy_j)) {
        snprintf(qn, sizeof qn, "%s%senergy_j", q, q[0] ? "." : "");
        return add_cmp(e, fi, line, "n/a", qn, meas_e, p.energy_j);
    }
    return 0;
}

/* Level-1 comparisons of one file. Returns 0, or -1 on out of memory. */
static int eval_file(struct eval *e, int fi, const erg_public_table *t, const erg_op_model *m)
{
    if (t->format == ERG_PUBLIC_AIC_GEMM) {
        if (!erg_op_model_has(m, ERG_OP_GEMM))
            return add_skip(e, fi, 0, "the target's level-1 model has no GEMM estimator");
        erg_op_prediction probe;
        erg_op_dims d1 = {.op = ERG_OP_GEMM, .dtype = ERG_DTYPE_BF16, .m = 64, .n = 64, .k = 64};
        erg_dtype want = ERG_DTYPE_BF16;
        if (erg_op_model_predict(m, &d1, &probe, NULL) != ERG_OK)
            want = ERG_DTYPE_FP16;
        size_t other = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            int ok = (want == ERG_DTYPE_BF16 && strcmp(r->dtype, "bfloat16") == 0) ||
                     (want == ERG_DTYPE_FP16 && strcmp(r->dtype, "float16") == 0);
            if (!ok) {
                other++;
                continue;
            }
            if (gemm_row(e, fi, m, want, r->m, r->n, r->k, r->line, "", r->time_s, r->energy_j))
                return -1;
        }
        if (other)
            return add_skip(e, fi, 0, "%zu rows of another dtype than the model's %s", other,
                            erg_dtype_name(want));
        return 0;
    }
    if (t->format == ERG_PUBLIC_VIDUR_MLP) {
        size_t tp = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            if (r->tp != 1) {
                tp++;
                continue;
            }
            int64_t d = r->hidden, hd = r->head_dim;
            struct {
                erg_vidur_op op;
                int64_t mm, nn, kk;
            } g[4] = {{ERG_VIDUR_ATTN_PRE_PROJ, r->tokens, (r->heads + 2 * r->kv_heads) * hd, d},
                      {ERG_VIDUR_ATTN_POST_PROJ, r->tokens, d, r->heads * hd},
                      {ERG_VIDUR_MLP_UP_PROJ, r->tokens, (r->gated ? 2 : 1) * r->inter, d},
                      {ERG_VIDUR_MLP_DOWN_PROJ, r->tokens, d, r->inter}};
            erg_dtype dt = ERG_DTYPE_BF16; /* fp16 and bf16 move the same bytes */
            erg_op_prediction probe;
            erg_op_dims d1 = {.op = ERG_OP_GEMM, .dtype = dt, .m = 64, .n = 64, .k = 64};
            if (erg_op_model_predict(m, &d1, &probe, NULL) != ERG_OK)
                dt = ERG_DTYPE_FP16;
            for (int j = 0; j < 4; j++)
                if (r->op_time_s[g[j].op] > 0 &&
                    gemm_row(e, fi, m, dt, g[j].mm, g[j].nn, g[j].kk, r->line,
                             erg_vidur_op_name(g[j].op), r->op_time_s[g[j].op], NAN))
                    return -1;
            if (r->gated && erg_op_model_has(m, ERG_OP_RMSNORM) &&
                r->op_time_s[ERG_VIDUR_INPUT_LAYERNORM] > 0) {
                erg_op_dims dn = {.op = ERG_OP_RMSNORM, .dtype = ERG_DTYPE_FP16,
                                  .tokens = r->tokens, .d_model = d};
                erg_op_prediction p;
                if (erg_op_model_predict(m, &dn, &p, NULL) == ERG_OK &&
                    add_cmp(e, fi, r->line, "n/a", "input_layernorm.time_s",
                            r->op_time_s[ERG_VIDUR_INPUT_LAYERNORM], p.time_s))
                    return -1;
            }
        }
        if (tp)
            add_skip(e, fi, 0,
                     "%zu rows with tensor parallelism > 1 (Vidur emulates the per-GPU shard; "
                     "level-1 rows are taken at TP 1)",
                     tp);
        add_assumption(e, "Vidur profiles fp16 and aiconfigurator bf16: the same bytes per "
                          "element, compared as one dtype");
        return 0;
    }
    return add_skip(e, fi, 0,
                    "%s: no level-2/3 model in this build to compare with (the file is read; "
                    "blocks and end-to-end predictions come with erg predict model)",
                    erg_public_format_name(t->format));
}

struct stat_acc {
    size_t n;
    double ape, sy, syy, sse;
};

static void summarise(const struct eval *e, int nfiles, char *const *files, int json_out,
                      int worst, json_t *arr)
{
    /* per file, phase, quantity */
    for (int fi = 0; fi < nfiles; fi++) {
        /* distinct (phase, quantity) pairs in order of appearance */
        for (size_t i = 0; i < e->n; i++) {
            const struct cmp *c = &e->c[i];
            if (c->file != fi)
                continue;
            int seen = 0;
            for (size_t j = 0; j < i && !seen; j++)
                seen = e->c[j].file == fi && strcmp(e->c[j].phase, c->phase) == 0 &&
                       strcmp(e->c[j].quantity, c->quantity) == 0;
            if (seen)
                continue;
            struct stat_acc a = {0};
            for (size_t j = i; j < e->n; j++) {
                const struct cmp *x = &e->c[j];
                if (x->file != fi || strcmp(x->phase, c->phase) || strcmp(x->quantity, c->quantity))
                    continue;
                a.n++;
                a.ape += fabs(x->predicted - x->measured) / x->measured;
                a.sy += x->measured;
                a.syy += x->measured * x->measured;
                a.sse += (x->predicted - x->measured) * (x->predicted - x->measured);
            }
            double mape = 100.0 * a.ape / (double)a.n;
            double sst = a.syy - a.sy * a.sy / (double)a.n;
            double r2 = a.n >= 2 && sst > 0 ? 1.0 - a.sse / sst : (double)NAN;
            /* worst rows by relative error */
            size_t idx[16];
            int nw = 0;
            for (size_t j = i; j < e->n; j++) {
                const struct cmp *x = &e->c[j];
                if (x->file != fi || strcmp(x->phase, c->phase) || strcmp(x->quantity, c->quantity))
                    continue;
                double err = fabs(x->predicted - x->measured) / x->measured;
                int pos = nw;
                while (pos > 0 && fabs(e->c[idx[pos - 1]].predicted - e->c[idx[pos - 1]].measured) /
                                          e->c[idx[pos - 1]].measured <
                                      err)
                    pos--;
                if (pos >= worst)
                    continue;
                if (nw < worst)
                    nw++;
                for (int q = nw - 1; q > pos; q--)
                    idx[q] = idx[q - 1];
                idx[pos] = j;
            }
            if (json_out) {
                json_t *w = json_array();
                for (int q = 0; q < nw; q++) {
                    const struct cmp *x = &e->c[idx[q]];
                    json_array_append_new(w, json_pack("{s:I,s:f,s:f}", "row", (json_int_t)x->row,
                                                       "measured", x->measured, "predicted",
                                                       x->predicted));
                }
                json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:o,s:o,s:o}", "file", files[fi], "phase",
                                      c->phase, "quantity", c->quantity, "n", (json_int_t)a.n,
                                      "mape_pct", isfinite(mape) ? json_real(mape) : json_null(),
                                      "r2", isfinite(r2) ? json_real(r2) : json_null(), "worst",
                                      w);
                json_array_append_new(arr, o);
            } else {
                printf("%s  phase %s  %-28s n %6zu  MAPE %7.3f %%  R2 ", files[fi], c->phase,
                       c->quantity, a.n, mape);
                if (isfinite(r2))
                    printf("%.4f\n", r2);
                else
                    printf("-\n");
                for (int q = 0; q < nw; q++) {
                    const struct cmp *x = &e->c[idx[q]];
                    printf("    worst: row %zu measured %.6g predicted %.6g (%+.1f %%)\n", x->row,
                           x->measured, x->predicted,
                           100.0 * (x->predicted - x->measured) / x->measured);
                }
            }
        }
    }
}

int erg_cli_predict_eval(int argc, char **argv)
{
    static const struct option longopts[] = {{"target", required_argument, NULL, 't'},
                                             {"config", required_argument, NULL, 'c'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"worst", required_argument, NULL, 'w'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *target = NULL, *config = NULL;
    int json_out = 0;
    unsigned long worst = 3;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't': target = optarg; break;
        case 'c': config = optarg; break;
        case 'j': json_out = 1; break;
        case 'w':
            if (erg_cli_ulong("predict eval", "--worst", optarg, &worst))
                return ERG_EXIT_USAGE;
            if (worst > 16)
                return erg_cli_usage("predict eval", "--worst: at most 16");
            break;
        case 'h': eval_help(stdout); return ERG_EXIT_OK;
        default: return erg_cli_bad_option("predict eval", argc, argv, "", longopts);
        }
    }
    if (!target)
        return erg_cli_usage("predict eval", "expected --target NAME|DIR");
    if (optind >= argc)
        return erg_cli_usage("predict eval", "expected at least one measured file");
    (void)config;
    char dir[1024];
    if (target_dir(target, dir, sizeof dir))
        return erg_cli_usage("predict eval",
                             "unknown target '%s' (no folder models/%s/ among the committed "
                             "models, and no such folder)",
                             target, target);
    char path[1100];
    snprintf(path, sizeof path, "%s/ops.json", dir);
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_op_model *m = NULL;
    int rc = erg_op_model_load(path, &m, &diag);
    if (rc)
        return erg_cli_fail(&diag, rc);
    int nfiles = argc - optind;
    char *const *files = argv + optind;
    /* read every file first: a bad file is an error before anything is printed */
    erg_public_table **tabs = calloc((size_t)nfiles, sizeof *tabs);
    struct eval e;
    memset(&e, 0, sizeof e);
    int status = ERG_EXIT_OK;
    if (!tabs) {
        erg_op_model_free(m);
        return erg_cli_fail(NULL, ERG_ENOMEM);
    }
    for (int i = 0; i < nfiles && status == ERG_EXIT_OK; i++) {
        erg_diag_clear(&diag);
        rc = erg_public_read(files[i], &tabs[i], &diag);
        if (rc)
            status = erg_cli_fail(&diag, rc);
    }
    for (int i = 0; i < nfiles && status == ERG_EXIT_OK; i++)
        if (eval_file(&e, i, tabs[i], m))
            status = erg_cli_fail(NULL, ERG_ENOMEM);
    if (status == ERG_EXIT_OK) {
        if (json_out) {
            json_t *root = json_object();
            json_t *rows = json_array();
            for (size_t i = 0; i < e.n; i++) {
                const struct cmp *x = &e.c[i];
                json_array_append_new(rows, json_pack("{s:s,s:I,s:s,s:s,s:f,s:f}", "file",
                                                      files[x->file], "row", (json_int_t)x->row,
                                                      "phase", x->phase, "quantity", x->quantity,
                                                      "measured", x->measured, "predicted",
                                                      x->predicted));
            }
            json_object_set_new(root, "erg", json_string("eval/1"));
            json_object_set_new(root, "target", json_string(dir));
            json_object_set_new(root, "rows", rows);
            json_t *sum = json_array();
            summarise(&e, nfiles, files, 1, (int)worst, sum);
            json_object_set_new(root, "summary", sum);
            json_t *sk = json_array();
            for (size_t i = 0; i < e.ns; i++)
                json_array_append_new(sk, json_pack("{s:s,s:I,s:s}", "file", files[e.s[i].file],
                                                    "row", (json_int_t)e.s[i].row, "reason",
                                                    e.s[i].reason));
            json_object_set_new(root, "skipped", sk);
            json_t *as = json_array();
            for (int i = 0; i < e.na; i++)
                json_array_append_new(as, json_string(e.assumptions[i]));
            json_object_set_new(root, "assumptions", as);
            json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
            printf("\n");
            json_decref(root);
        } else {
            printf("target %s (level 1: %s)\n", dir, erg_op_model_target(m));
            summarise(&e, nfiles, files, 0, (int)worst, NULL);
            for (size_t i = 0; i < e.ns; i++) {
                if (e.s[i].row)
                    printf("skipped: %s row %zu: %s\n", files[e.s[i].file], e.s[i].row,
                           e.s[i].reason);
                else
                    printf("skipped: %s: %s\n", files[e.s[i].file], e.s[i].reason);
            }
            for (int i = 0; i < e.na; i++)
                printf("assumption: %s\n", e.assumptions[i]);
        }
    }
    for (int i = 0; i < nfiles; i++)
        erg_public_table_free(tabs[i]);
    free(tabs);
    free(e.c);
    free(e.s);
    erg_op_model_free(m);
    return status;
}
