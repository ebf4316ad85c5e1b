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
            "       erg predict import VIDUR_MLP... [ATTENTION_TABLES...] --blocks OUT.csv\n"
            "       erg predict import TABLES... --kernels OUT.json\n"
            "       erg predict import GEMM_TABLES... --gemm-map OUT.json [--level1 OPS.json]\n"
            "Reads public measured files (format recognised from the content; .gz read through\n"
            "zlib; docs/predict.md, \"Public measured data\").\n"
            "--ops: level-1 samples as ops.csv (whole or not at all) for 'erg fit ops':\n"
            "aiconfigurator gemm_perf tables (GEMM rows of --dtype, default bfloat16, the others\n"
            "counted as skipped; the H200 tables carry NVML power: energy_j = power x latency,\n"
            "grade model_based, the energy aiconfigurator itself computes; other tables are\n"
            "time only), Vidur mlp.csv (GEMMs of the projections and RMSNorm per token count,\n"
            "TP 1 only, fp16, time only). Prints per file: format, rows, samples, skipped.\n"
            "--blocks: level-2 rows (blocks.csv, the \"Profile files\" format) for 'erg fit\n"
            "blocks': per Vidur row at TP 1 an ffn, a norm and an embedding block (prefill,\n"
            "batch 1, prompt = tokens), and attention blocks where an aiconfigurator attention\n"
            "table of the same GPU has the same heads, KV heads and head_dim; time only.\n"
            "--kernels: fits the kernel models of a GPU target (decode attention, fused MoE,\n"
            "all-reduce; docs/predict.md, \"GPU targets\") on aiconfigurator tables and writes\n"
            "them as gpu-target/1 JSON; prints each model's held-out MAPE.\n"
            "--gemm-map: the measured-shape map of the GEMM estimator of --level1 (default:\n"
            "ops.json beside OUT): per cell of (log2 m, log2 n, log2 k) / 0.5 the median\n"
            "measured / estimated time and the median power of the rows (training rows only).\n"
            "Exit status: 0 written, 2 bad input (unknown format, a bad row: file:line and\n"
            "the column), nothing written.\n");
}

/* Read every file first: a bad file is an error before anything is written. */
static int read_all(int n, char **files, erg_public_table ***out)
{
    erg_public_table **t = calloc((size_t)n, sizeof *t);
    if (!t)
        return erg_cli_fail(NULL, ERG_ENOMEM);
    for (int i = 0; i < n; i++) {
        erg_diag diag;
        erg_diag_clear(&diag);
        int rc = erg_public_read(files[i], &t[i], &diag);
        if (rc) {
            for (int j = 0; j < i; j++)
                erg_public_table_free(t[j]);
            free(t);
            return erg_cli_fail(&diag, rc);
        }
    }
    *out = t;
    return ERG_EXIT_OK;
}

static void free_all(int n, erg_public_table **t)
{
    if (!t)
        return;
    for (int i = 0; i < n; i++)
        erg_public_table_free(t[i]);
    free(t);
}

static int import_kernels(int n, char **files, const char *out)
{
    erg_public_table **t = NULL;
    int status = read_all(n, files, &t);
    if (status)
        return status;
    erg_gpu_kernels k;
    erg_diag diag;
    erg_diag_clear(&diag);
    int rc = erg_gpu_kernels_fit((const erg_public_table *const *)t, (size_t)n, &k, &diag);
    free_all(n, t);
    if (rc)
        return erg_cli_fail(&diag, rc);
    fprintf(stderr, "kernels of %s:\n", k.device);
    if (k.has_attn)
        fprintf(stderr, "  decode attention: %zu rows, held-out MAPE %.2f %%\n", k.attn_n,
                k.attn_mape_pct);
    if (k.has_attn_prefill)
        fprintf(stderr, "  prefill attention: %zu rows, held-out MAPE %.2f %%\n", k.attn_prefill_n,
                k.attn_prefill_mape_pct);
    if (k.has_moe)
        fprintf(stderr, "  fused MoE: %zu rows, held-out MAPE %.2f %%\n", k.moe_n, k.moe_mape_pct);
    static const char *const ename[3] = {"decode attention", "prefill attention", "fused MoE"};
    for (int g = 0; g < 3; g++)
        if (k.has_energy[g])
            fprintf(stderr, "  %s energy (NVML power x latency): held-out MAPE %.2f %%\n", ename[g],
                    k.energy_mape_pct[g]);
    static const int gpus[3] = {2, 4, 8};
    for (int g = 0; g < 3; g++)
        if (k.has_allreduce[g])
            fprintf(stderr, "  all-reduce on %d GPUs: %zu rows, held-out MAPE %.2f %%\n", gpus[g],
                    k.allreduce_n[g], k.allreduce_mape_pct[g]);
    rc = erg_gpu_target_save(out, &k, NULL, &diag);
    return rc ? erg_cli_fail(&diag, rc) : ERG_EXIT_OK;
}

static int import_gemm_map(int n, char **files, const char *out, const char *level1)
{
    char ops[1100];
    if (level1)
        snprintf(ops, sizeof ops, "%s", level1);
    else {
        const char *slash = strrchr(out, '/');
        if (slash)
            snprintf(ops, sizeof ops, "%.*s/ops.json", (int)(slash - out), out);
        else
            snprintf(ops, sizeof ops, "ops.json");
    }
    erg_public_table **t = NULL;
    int status = read_all(n, files, &t);
    if (status)
        return status;
    erg_diag diag;
    erg_diag_clear(&diag);
    size_t cells = 0, rows = 0;
    int rc = erg_gemm_map_write(out, ops, (const erg_public_table *const *)t, (size_t)n, &cells,
                                &rows, &diag);
    free_all(n, t);
    if (rc)
        return erg_cli_fail(&diag, rc);
    fprintf(stderr, "gemm map of %s: %zu cells from %zu rows; wrote %s\n", ops, cells, rows, out);
    return ERG_EXIT_OK;
}

static int import_blocks(int n, char **files, const char *out)
{
    erg_public_table **t = NULL;
    int status = read_all(n, files, &t);
    if (status)
        return status;
    size_t rows = 0, attn = 0;
    erg_diag diag;
    erg_diag_clear(&diag);
    int rc = erg_public_blocks_write(out, (const erg_public_table *const *)t, (size_t)n, &rows,
                                     &attn, &diag);
    free_all(n, t);
    if (rc)
        return erg_cli_fail(&diag, rc);
    fprintf(stderr, "blocks: %zu Vidur rows (ffn, norm, embedding each), %zu attention blocks\n",
            rows, attn);
    return ERG_EXIT_OK;
}

int erg_cli_predict_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"ops", required_argument, NULL, 'o'},      {"kernels", required_argument, NULL, 'k'},
        {"blocks", required_argument, NULL, 'b'},   {"dtype", required_argument, NULL, 'd'},
        {"gemm-map", required_argument, NULL, 'g'}, {"level1", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    const char *ops_path = NULL, *kernels_path = NULL, *blocks_path = NULL, *dtype = "bfloat16";
    const char *map_path = NULL, *level1 = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            ops_path = optarg;
            break;
        case 'k':
            kernels_path = optarg;
            break;
        case 'b':
            blocks_path = optarg;
            break;
        case 'd':
            dtype = optarg;
            break;
        case 'g':
            map_path = optarg;
            break;
        case 'l':
            level1 = optarg;
            break;
        case 'h':
            import_help(stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("predict import", argc, argv, "", longopts);
        }
    }
    if (optind >= argc)
        return erg_cli_usage("predict import", "expected at least one measured file");
    if (!!kernels_path + !!ops_path + !!blocks_path + !!map_path > 1)
        return erg_cli_usage("predict import",
                             "--ops, --kernels, --blocks and --gemm-map are separate runs");
    if (level1 && !map_path)
        return erg_cli_usage("predict import", "--level1 goes with --gemm-map");
    if (map_path)
        return import_gemm_map(argc - optind, argv + optind, map_path, level1);
    if (blocks_path)
        return import_blocks(argc - optind, argv + optind, blocks_path);
    if (kernels_path)
        return import_kernels(argc - optind, argv + optind, kernels_path);
    if (!ops_path)
        return erg_cli_usage("predict import",
                             "expected --ops OUT.csv, --blocks OUT.csv or --kernels OUT.json");
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
            status = rc == ERG_ENOTSUP
                         ? (fprintf(stderr, "erg: %s: %s\n", argv[i], diag.detail), ERG_EXIT_USAGE)
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
            fprintf(stderr,
                    "erg: predict import: no level-1 samples of dtype %s; nothing "
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

/* ------------------------------------------------------------------ serving (ML.ENERGY) */

/* Does the ML.ENERGY GPU name (e.g. "H100") name the kernels' device ("NVIDIA H100 80GB HBM3")? */
static int same_gpu(const char *mle, const char *device)
{
    if (!mle[0] || !device[0])
        return 0;
    const char *p = strstr(device, mle);
    if (!p)
        return 0;
    char next = p[strlen(mle)];
    return next == '\0' || next == ' ' || next == '-';
}

/* The sample of configuration r, or a reason (returns 1) why erg cannot model it. */
static int serving_row(const erg_public_table *t, const erg_public_row *r,
                       const erg_serving_arch *a, const erg_op_model *ops, const erg_gpu_kernels *k,
                       double prompt, erg_serving_sample *out, char *why, size_t why_size)
{
    if (!same_gpu(r->device, k->device)) {
        snprintf(why, why_size,
                 "%s x%lld: the target's kernel data are of %s (no kernel data "
                 "for this GPU)",
                 r->device, (long long)r->gpus, k->device[0] ? k->device : "?");
        return 1;
    }
    if (strcmp(t->rows[0].dtype, "bfloat16") != 0) {
        snprintf(why, why_size, "%s weights: the kernel tables and the level-1 model are bf16",
                 r->dtype);
        return 1;
    }
    if (r->ep > 1 || (r->tp > 0 && r->gpus > r->tp)) {
        snprintf(why, why_size,
                 "%lld GPUs with expert parallelism %lld / data parallelism: no "
                 "all-to-all tables",
                 (long long)r->gpus, (long long)r->ep);
        return 1;
    }
    double kv = prompt + (isfinite(r->avg_output_len) ? r->avg_output_len / 2.0 : 0.0);
    erg_diag diag;
    erg_diag_clear(&diag);
    memset(out, 0, sizeof *out);
    if (erg_serving_step(ops, k, a, r->avg_batch, kv, (int)(r->tp > 0 ? r->tp : 1), &out->terms,
                         &diag) != ERG_OK) {
        snprintf(why, why_size, "%.250s", diag.detail);
        return 1;
    }
    out->batch = r->avg_batch;
    out->gpus = (double)r->gpus;
    out->itl_s = r->time_s;
    out->energy_per_token_j = r->energy_j;
    out->power_w = r->power_w;
    out->throughput_tok_s = r->throughput_tok_s;
    return 0;
}

struct target {
    char dir[1024];
    erg_op_model *ops;
    erg_gpu_kernels k;
    erg_serving_model m;
    int has_gpu, has_serving;
};

/* Resolve --target: an existing folder, else models/<NAME>/ beside the committed models. */
static int target_dir(const char *name, char *buf, size_t size)
{
    struct stat st;
    if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(buf, size, "%s", name);
        return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
    }
    char path[1024], kind[300];
    snprintf(kind, sizeof kind, "%.250s/ops", name); /* models/<NAME>/ops.json */
    size_t len = sizeof path;
    if (erg_op_model_default_path(kind, path, &len) != ERG_OK || len < 9)
        return -1;
    path[len - 9] = '\0'; /* strip "/ops.json": models/<NAME> */
    snprintf(buf, size, "%s", path);
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int target_load(const char *cmd, const char *name, struct target *t)
{
    memset(t, 0, sizeof *t);
    if (target_dir(name, t->dir, sizeof t->dir))
        return erg_cli_usage(cmd,
                             "unknown target '%s' (no folder models/%s/ among the committed "
                             "models, and no such folder)",
                             name, name);
    char path[1100];
    snprintf(path, sizeof path, "%s/ops.json", t->dir);
    erg_diag diag;
    erg_diag_clear(&diag);
    int rc = erg_op_model_load(path, &t->ops, &diag);
    if (rc)
        return erg_cli_fail(&diag, rc);
    snprintf(path, sizeof path, "%s/gpu.json", t->dir);
    struct stat st;
    if (stat(path, &st) == 0) {
        rc = erg_gpu_target_load(path, &t->k, &t->m, &t->has_serving, &diag);
        if (rc) {
            erg_op_model_free(t->ops);
            t->ops = NULL;
            return erg_cli_fail(&diag, rc);
        }
        t->has_gpu = 1;
    }
    return ERG_EXIT_OK;
}

static void fit_serving_help(FILE *out)
{
    fprintf(out,
            "Usage: erg predict fit-serving --target NAME|DIR [--prompt-tokens N] [-o OUT]\n"
            "                               MLENERGY.json=CONFIG.json...\n"
            "Fits the serving level 3 of a GPU target (docs/predict.md, \"GPU targets\") on\n"
            "ML.ENERGY v3 files, each paired with the HF config.json of its architecture: the\n"
            "median inter-token latency from the decode step's level-1 and kernel terms, the\n"
            "per-GPU power, energy per output token. The KV length of a steady-state step is\n"
            "assumed to be --prompt-tokens (default 512; ML.ENERGY gives no prompt lengths)\n"
            "plus half the configuration's average output length. Writes the target's gpu.json\n"
            "(kernels kept, serving replaced; -o writes elsewhere). Configurations erg cannot\n"
            "model (other GPUs, expert parallelism, non-bf16 weights) are listed as skipped.\n"
            "Exit status: 0 written, 2 bad input.\n");
}

int erg_cli_predict_fit_serving(int argc, char **argv)
{
    static const struct option longopts[] = {{"target", required_argument, NULL, 't'},
                                             {"prompt-tokens", required_argument, NULL, 'p'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *target = NULL, *outp = NULL;
    double prompt = 512;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            target = optarg;
            break;
        case 'o':
            outp = optarg;
            break;
        case 'p':
            if (erg_cli_double("predict fit-serving", "--prompt-tokens", optarg, &prompt))
                return ERG_EXIT_USAGE;
            if (prompt < 0)
                return erg_cli_usage("predict fit-serving", "--prompt-tokens must be >= 0");
            break;
        case 'h':
            fit_serving_help(stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("predict fit-serving", argc, argv, "o:", longopts);
        }
    }
    if (!target)
        return erg_cli_usage("predict fit-serving", "expected --target NAME|DIR");
    if (optind >= argc)
        return erg_cli_usage("predict fit-serving", "expected MLENERGY.json=CONFIG.json pairs");
    struct target tg;
    int status = target_load("predict fit-serving", target, &tg);
    if (status)
        return status;
    if (!tg.has_gpu) {
        erg_op_model_free(tg.ops);
        return erg_cli_usage("predict fit-serving",
                             "target %s has no gpu.json (erg predict import --kernels)", tg.dir);
    }
    erg_serving_sample *smp = NULL;
    size_t n = 0, cap = 0;
    for (int i = optind; i < argc && status == ERG_EXIT_OK; i++) {
        char file[1024];
        snprintf(file, sizeof file, "%s", argv[i]);
        char *eq = strchr(file, '=');
        if (!eq) {
            status = erg_cli_usage("predict fit-serving",
                                   "'%s': expected MLENERGY.json=CONFIG.json", argv[i]);
            break;
        }
        *eq = '\0';
        erg_diag diag;
        erg_diag_clear(&diag);
        erg_serving_arch a;
        int rc = erg_serving_arch_read(eq + 1, &a, &diag);
        erg_public_table *t = NULL;
        if (!rc)
            rc = erg_public_read(file, &t, &diag);
        if (!rc && t->format != ERG_PUBLIC_MLENERGY_V3)
            rc = erg_diag_set(&diag, ERG_EPARSE, file, "a %s file, not ML.ENERGY v3",
                              erg_public_format_name(t->format));
        if (rc) {
            erg_public_table_free(t);
            status = erg_cli_fail(&diag, rc);
            break;
        }
        size_t used = 0;
        for (size_t j = 0; j < t->n; j++) {
            erg_serving_sample x;
            char why[256];
            if (serving_row(t, &t->rows[j], &a, tg.ops, &tg.k, prompt, &x, why, sizeof why))
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                erg_serving_sample *p = realloc(smp, cap * sizeof *p);
                if (!p) {
                    status = erg_cli_fail(NULL, ERG_ENOMEM);
                    break;
                }
                smp = p;
            }
            smp[n++] = x;
            used++;
        }
        fprintf(stderr, "%s: %zu of %zu configurations used\n", file, used, t->n);
        erg_public_table_free(t);
    }
    if (status == ERG_EXIT_OK) {
        erg_diag diag;
        erg_diag_clear(&diag);
        int rc = erg_serving_fit(smp, n, prompt, &tg.m, &diag);
        if (!rc) {
            char path[1100];
            if (outp)
                snprintf(path, sizeof path, "%s", outp);
            else
                snprintf(path, sizeof path, "%s/gpu.json", tg.dir);
            rc = erg_gpu_target_save(path, &tg.k, &tg.m, &diag);
            if (!rc)
                fprintf(stderr,
                        "serving fit on %zu configurations: training MAPE ITL %.2f %%, energy "
                        "per token %.2f %%; wrote %s\n",
                        n, tg.m.itl_mape_pct, tg.m.energy_mape_pct, path);
        }
        if (rc)
            status = erg_cli_fail(&diag, rc);
    }
    free(smp);
    erg_op_model_free(tg.ops);
    return status;
}

/* ------------------------------------------------------------------ eval */

static void eval_help(FILE *out)
{
    fprintf(
        out,
        "Usage: erg predict eval --target NAME|DIR [--config CONFIG.json] MEASURED...\n"
        "                        [--json] [--worst N]\n"
        "Compares the target's predictions with public measured files, per file, phase and\n"
        "quantity: MAPE and R^2, the N worst rows (default 3) and the assumptions made.\n"
        "Rows erg cannot model are listed as skipped with the reason.\n"
        "--target: a folder models/<NAME>/ (looked up like the committed models) or a path;\n"
        "ops.json is its level-1 model, gpu.json its kernel and serving models.\n"
        "Files: aiconfigurator gemm_perf (time_s, and energy_j where the table has power),\n"
        "generation_attention_perf and moe_perf (time_s of the kernel models), Vidur mlp.csv\n"
        "(time_s of the projection GEMMs and RMSNorms, per op), ML.ENERGY v3 with --config\n"
        "(decode itl_s and energy_per_token_j per configuration; other GPUs, expert\n"
        "parallelism and non-bf16 weights skipped), BLIS traces with --config (per request\n"
        "prefill time_s and decode itl_s from the target's erg predict model levels).\n"
        "--json: {\"erg\": \"eval/1\", \"rows\": [{\"file\", \"row\", \"phase\", \"quantity\",\n"
        "\"measured\", \"predicted\"}...], \"summary\": [...], \"skipped\": [...],\n"
        "\"assumptions\": [...]}.\n"
        "Text: the target and what it holds, then per file its format, rows and what was\n"
        "compared: per level (the model that predicted it), phase (where a row has one) and\n"
        "quantity, and the skipped rows with the reason. JSON rows have phase null where a\n"
        "row has no phase (GEMM, fused MoE, Vidur ops).\n"
        "Exit status: 0 compared, 2 bad input (unknown target, unknown format, a bad row,\n"
        "a bad config) or nothing compared (every row of every file skipped: each reason\n"
        "on stderr, nothing on stdout).\n");
}

struct cmp {
    int file;
    size_t row;
    const char *level; /* which model predicted it: "level 1 (GEMM estimator)", ... */
    const char *phase; /* "prefill", "decode", or NULL where a row has no phase */
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

static int add_cmp(struct eval *e, int file, size_t row, const char *level, const char *phase,
                   const char *q, double measured, double predicted)
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
    x->level = level;
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

#define LEVEL_GEMM "level 1 (GEMM estimator)"

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
    if (add_cmp(e, fi, line, LEVEL_GEMM, NULL, qn, meas_t, p.time_s))
        return -1;
    if (isfinite(meas_e) && isfinite(p.energy_j)) {
        snprintf(qn, sizeof qn, "%s%senergy_j", q, q[0] ? "." : "");
        return add_cmp(e, fi, line, LEVEL_GEMM, NULL, qn, meas_e, p.energy_j);
    }
    return 0;
}

/* Level-1 comparisons of one file. Returns 0, or -1 on out of memory. */
static int eval_file(struct eval *e, int fi, const erg_public_table *t, const struct target *tg,
                     const erg_serving_arch *arch, const char *config)
{
    const erg_op_model *m = tg->ops;
    if (t->format == ERG_PUBLIC_MLENERGY_V3) {
        if (!tg->has_serving)
            return add_skip(e, fi, 0,
                            "the target has no serving model (gpu.json: erg predict "
                            "fit-serving)");
        if (!arch)
            return add_skip(e, fi, 0,
                            "no --config: the architecture of %s is needed (give its "
                            "HuggingFace config.json with --config)",
                            t->model_id[0] ? t->model_id : "this file");
        char as[240];
        snprintf(as, sizeof as,
                 "steady-state decode step: KV length = %g assumed prompt tokens + half the "
                 "configuration's avg_output_len; batch = avg_batch_size",
                 tg->m.prompt_tokens);
        add_assumption(e, as);
        add_assumption(e, "energy per output token = predicted per-GPU power x GPUs x ITL / "
                          "(batch x phi); power linear in the step's bytes/ITL and FLOPs/ITL, "
                          "capped at the highest trained power; phi(batch) = fitted throughput "
                          "/ (batch / ITL), linear in ln batch");
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            erg_serving_sample x;
            char why[256];
            if (serving_row(t, r, arch, m, &tg->k, tg->m.prompt_tokens, &x, why, sizeof why)) {
                if (add_skip(e, fi, r->line, "%s", why))
                    return -1;
                continue;
            }
            double itl, ept;
            erg_serving_predict(&tg->m, &x.terms, x.batch, x.gpus, &itl, &ept);
            if (add_cmp(e, fi, r->line, "level 3 (serving)", "decode", "itl_s", r->time_s, itl) ||
                add_cmp(e, fi, r->line, "level 3 (serving)", "decode", "energy_per_token_j",
                        r->energy_j, ept))
                return -1;
        }
        return 0;
    }
    if (t->format == ERG_PUBLIC_AIC_GENERATION_ATTENTION || t->format == ERG_PUBLIC_AIC_MOE ||
        t->format == ERG_PUBLIC_AIC_CONTEXT_ATTENTION) {
        int attn = t->format != ERG_PUBLIC_AIC_MOE;
        int pre = t->format == ERG_PUBLIC_AIC_CONTEXT_ATTENTION;
        const char *level = pre    ? "level 1 (prefill-attention kernel)"
                            : attn ? "level 1 (decode-attention kernel)"
                                   : "level 1 (fused-MoE kernel)";
        if (!tg->has_gpu || !(pre ? tg->k.has_attn_prefill : attn ? tg->k.has_attn : tg->k.has_moe))
            return add_skip(e, fi, 0, "the target has no %s kernel model (gpu.json)",
                            pre    ? "prefill-attention"
                            : attn ? "decode-attention"
                                   : "fused-MoE");
        size_t other = 0;
        for (size_t i = 0; i < t->n; i++) {
            const erg_public_row *r = &t->rows[i];
            double p;
            if (attn) {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, "bfloat16") || r->window) {
                    other++;
                    continue;
                }
                if (pre)
                    p = erg_gpu_attn_prefill_s(&tg->k, (double)r->batch, (double)r->isl, r->heads,
                                               r->kv_heads, r->head_dim, 0);
                else
                    p = erg_gpu_attn_decode_s(&tg->k, (double)r->batch, (double)r->kv, r->heads,
                                              r->kv_heads, r->head_dim);
                if (r->energy_j > 0 && tg->k.has_energy[pre]) {
                    double pe = erg_gpu_attn_energy_j(
                        &tg->k, pre ? ERG_PHASE_PREFILL : ERG_PHASE_DECODE, (double)r->batch,
                        pre ? (double)r->isl : (double)r->kv, r->heads, r->kv_heads, r->head_dim,
                        0);
                    if (add_cmp(e, fi, r->line, level, pre ? "prefill" : "decode", "energy_j",
                                r->energy_j, pe))
                        return -1;
                }
            } else {
                if (strcmp(r->dtype, "bfloat16") || strcmp(r->variant, ERG_GPU_MOE_ROUTING) ||
                    r->ep != 1) {
                    other++;
                    continue;
                }
                p = erg_gpu_moe_s(&tg->k, (double)r->tokens, r->hidden, r->inter, r->topk,
                                  r->experts, r->tp);
                if (r->energy_j > 0 && tg->k.has_energy[2] &&
                    add_cmp(e, fi, r->line, level, NULL, "energy_j", r->energy_j,
                            erg_gpu_moe_energy_j(&tg->k, (double)r->tokens, r->hidden, r->inter,
                                                 r->topk, r->experts, r->tp)))
                    return -1;
            }
            if (add_cmp(e, fi, r->line, level,
                        pre    ? "prefill"
                        : attn ? "decode"
                               : NULL,
                        "time_s", r->time_s, p))
                return -1;
        }
        if (other)
            return add_skip(e, fi, 0, "%zu rows outside the kernel model (not bf16, %s)", other,
                            attn ? "fp8 KV cache or a sliding window"
                                 : "routing other than " ERG_GPU_MOE_ROUTING
                                   " or expert parallelism");
        return 0;
    }
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
                erg_op_dims dn = {.op = ERG_OP_RMSNORM,
                                  .dtype = ERG_DTYPE_FP16,
                                  .tokens = r->tokens,
                                  .d_model = d};
                erg_op_prediction p;
                if (erg_op_model_predict(m, &dn, &p, NULL) == ERG_OK &&
                    add_cmp(e, fi, r->line, "level 1 (RMSNorm estimator)", NULL,
                            "input_layernorm.time_s", r->op_time_s[ERG_VIDUR_INPUT_LAYERNORM],
                            p.time_s))
                    return -1;
            }
        }
        if (tp && add_skip(e, fi, 0,
                           "%zu rows with tensor parallelism > 1 (Vidur emulates the per-GPU "
                           "shard; level-1 rows are taken at TP 1)",
                           tp))
            return -1;
        add_assumption(e, "Vidur profiles fp16 and aiconfigurator bf16: the same bytes per "
                          "element, compared as one dtype");
        return 0;
    }
    if (t->format == ERG_PUBLIC_BLIS_TRACES) {
        if (!config)
            return add_skip(e, fi, 0,
                            "no --config: the architecture of the traced model is "
                            "needed (give its HuggingFace config.json with --config)");
        erg_diag diag;
        erg_diag_clear(&diag);
        erg_arch a;
        erg_predictor *p = NULL;
        if (erg_arch_from_hf_config(config, &a, &diag) != ERG_OK ||
            erg_predictor_open(tg->dir, &p, &diag) != ERG_OK) {
            erg_predictor_free(p);
            return add_skip(e, fi, 0, "%.180s", diag.detail);
        }
        add_assumption(e, "BLIS requests: one sequence per forward (the server's concurrent "
                          "batch is not in the trace); decode KV = prompt + completion / 2; "
                          "decode time per token = time_in_model_decode / (completion - 1)");
        static const char *const whole[3] = {"level 1 (whole model)", "levels 1-2 (whole model)",
                                             "levels 1-3 (whole model)"};
        int lv = erg_predictor_level(p);
        const char *level = whole[lv >= 1 && lv <= 3 ? lv - 1 : 0];
        int rc = 0;
        for (size_t i = 0; i < t->n && !rc; i++) {
            const erg_public_row *r = &t->rows[i];
            erg_phase_spec ph = {.phase = ERG_PHASE_PREFILL, .batch = 1, .prompt = r->isl};
            erg_model_prediction mp;
            /* a request that is not compared says why: a skipped line per phase */
            if (!(r->isl > 0) || !(r->prefill_s > 0))
                rc = add_skip(e, fi, r->line, "prefill: %s",
                              r->isl > 0 ? "no time_in_model_prefill (0 s)" : "no prompt tokens");
            else if (erg_predict_model(p, &a, &ph, &mp, &diag) == ERG_OK)
                rc = add_cmp(e, fi, r->line, level, "prefill", "time_s", r->prefill_s,
                             mp.total.time_s);
            else
                rc = add_skip(e, fi, r->line, "prefill: %.180s", diag.detail);
            if (rc)
                break;
            if (r->tokens < 2 || !(r->decode_s > 0)) {
                rc = add_skip(e, fi, r->line, "decode: %s",
                              r->tokens < 2 ? "fewer than 2 completion tokens (no decode step)"
                                            : "no time_in_model_decode (0 s)");
                continue;
            }
            erg_phase_spec pd = {
                .phase = ERG_PHASE_DECODE, .batch = 1, .kv = r->isl + r->tokens / 2};
            if (erg_predict_model(p, &a, &pd, &mp, &diag) == ERG_OK)
                rc = add_cmp(e, fi, r->line, level, "decode", "itl_s",
                             r->decode_s / (double)(r->tokens - 1), mp.total.time_s);
            else
                rc = add_skip(e, fi, r->line, "decode: %.180s", diag.detail);
        }
        erg_predictor_free(p);
        return rc;
    }
    return add_skip(e, fi, 0,
                    "%s: not a file erg predict eval compares (collective tables feed the "
                    "all-reduce kernel models: erg predict import --kernels)",
                    erg_public_format_name(t->format));
}

struct stat_acc {
    size_t n;
    double ape, sy, syy, sse;
};

/* Two comparisons of one file belong to one summary line: same level, phase and quantity. */
static int same_group(const struct cmp *a, const struct cmp *b)
{
    if (a->file != b->file || strcmp(a->level, b->level) || strcmp(a->quantity, b->quantity))
        return 0;
    if (!a->phase || !b->phase)
        return !a->phase && !b->phase;
    return strcmp(a->phase, b->phase) == 0;
}

static double rel_err(const struct cmp *x)
{
    return fabs(x->predicted - x->measured) / x->measured;
}

/* Per level, phase and quantity of file fi: n, MAPE, R² and the worst rows; as JSON objects
 * appended to arr, or as text lines. */
static void summarise(const struct eval *e, int fi, const char *file, int json_out, int worst,
                      json_t *arr)
{
    for (size_t i = 0; i < e->n; i++) {
        const struct cmp *c = &e->c[i];
        if (c->file != fi)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_group(&e->c[j], c);
        if (seen)
            continue;
        struct stat_acc a = {0};
        size_t idx[16];
        int nw = 0;
        for (size_t j = i; j < e->n; j++) {
            const struct cmp *x = &e->c[j];
            if (!same_group(x, c))
                continue;
            a.n++;
            a.ape += rel_err(x);
            a.sy += x->measured;
            a.syy += x->measured * x->measured;
            a.sse += (x->predicted - x->measured) * (x->predicted - x->measured);
            /* the worst rows by relative error, largest first */
            int pos = nw;
            while (pos > 0 && rel_err(&e->c[idx[pos - 1]]) < rel_err(x))
                pos--;
            if (pos >= worst)
                continue;
            if (nw < worst)
                nw++;
            for (int q = nw - 1; q > pos; q--)
                idx[q] = idx[q - 1];
            idx[pos] = j;
        }
        double mape = 100.0 * a.ape / (double)a.n;
        double sst = a.syy - a.sy * a.sy / (double)a.n;
        double r2 = a.n >= 2 && sst > 0 ? 1.0 - a.sse / sst : (double)NAN;
        if (json_out) {
            json_t *w = json_array();
            for (int q = 0; q < nw; q++) {
                const struct cmp *x = &e->c[idx[q]];
                json_array_append_new(w, json_pack("{s:I,s:f,s:f}", "row", (json_int_t)x->row,
                                                   "measured", x->measured, "predicted",
                                                   x->predicted));
            }
            json_t *o = json_pack("{s:s,s:s,s:o,s:s,s:I,s:o,s:o,s:o}", "file", file, "level",
                                  c->level, "phase", c->phase ? json_string(c->phase) : json_null(),
                                  "quantity", c->quantity, "n", (json_int_t)a.n, "mape_pct",
                                  isfinite(mape) ? json_real(mape) : json_null(), "r2",
                                  isfinite(r2) ? json_real(r2) : json_null(), "worst", w);
            json_array_append_new(arr, o);
            continue;
        }
        char ph[32] = "";
        if (c->phase)
            snprintf(ph, sizeof ph, "phase %s", c->phase);
        printf("  %-34s %-13s  %-28s n %6zu  MAPE %7.3f %%  R2 ", c->level, ph, c->quantity, a.n,
               mape);
        if (isfinite(r2))
            printf("%.4f\n", r2);
        else
            printf("-\n");
        for (int q = 0; q < nw; q++) {
            const struct cmp *x = &e->c[idx[q]];
            printf("    worst: row %zu measured %.6g predicted %.6g (%+.1f %%)\n", x->row,
                   x->measured, x->predicted, 100.0 * (x->predicted - x->measured) / x->measured);
        }
    }
}

/* The skipped rows and files of file fi, one line per run of consecutive rows skipped for one
 * reason: "<lead><file>[ rows a-b]: <mid><reason>" (file NULL: "<lead>[ rows a-b]: ..."). */
static void print_skips(FILE *out, const struct eval *e, int fi, const char *file, const char *lead,
                        const char *mid)
{
    const char *sp = " ";
    if (!file)
        file = "";
    for (size_t i = 0; i < e->ns; i++) {
        if (e->s[i].file != fi)
            continue;
        size_t j = i;
        while (e->s[i].row && j + 1 < e->ns && e->s[j + 1].file == fi &&
               e->s[j + 1].row == e->s[j].row + 1 &&
               strcmp(e->s[j + 1].reason, e->s[i].reason) == 0)
            j++;
        if (j > i)
            fprintf(out, "%s%s%srows %zu-%zu: %s%s\n", lead, file, sp, e->s[i].row, e->s[j].row,
                    mid, e->s[i].reason);
        else if (e->s[i].row)
            fprintf(out, "%s%s%srow %zu: %s%s\n", lead, file, sp, e->s[i].row, mid, e->s[i].reason);
        else
            fprintf(out, "%s%s: %s%s\n", lead, file, mid, e->s[i].reason);
        i = j;
    }
}

static size_t compared_rows(const struct eval *e, int fi)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->c[i].file == fi &&
            (i == 0 || e->c[i - 1].file != fi || e->c[i - 1].row != e->c[i].row))
            n++;
    return n;
}

/* What the target holds, for the report's first line. */
static void describe_target(const struct target *tg, const char *name, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "target %s: %s; level 1 ops.json (fitted for %s)", name,
                                tg->dir, erg_op_model_target(tg->ops));
    if (k < size && tg->has_gpu)
        k += (size_t)snprintf(buf + k, size - k, ", kernel models gpu.json (%s)", tg->k.device);
    if (k < size && tg->has_serving)
        snprintf(buf + k, size - k, ", level 3 serving model gpu.json");
}

int erg_cli_predict_eval(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"target", required_argument, NULL, 't'}, {"config", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},         {"worst", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *target = NULL, *config = NULL;
    int json_out = 0;
    unsigned long worst = 3;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            target = optarg;
            break;
        case 'c':
            config = optarg;
            break;
        case 'j':
            json_out = 1;
            break;
        case 'w':
            if (erg_cli_count("predict eval", "--worst", optarg, 0, 16, &worst))
                return ERG_EXIT_USAGE;
            break;
        case 'h':
            eval_help(stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("predict eval", argc, argv, "", longopts);
        }
    }
    if (!target)
        return erg_cli_usage("predict eval", "expected --target NAME|DIR");
    if (optind >= argc)
        return erg_cli_usage("predict eval", "expected at least one measured file");
    struct target tg;
    int status = target_load("predict eval", target, &tg);
    if (status)
        return status;
    erg_serving_arch arch;
    erg_diag diag;
    erg_diag_clear(&diag);
    int has_arch = 0;
    if (config) {
        erg_arch hf; /* the config as erg predict model reads it: its errors are errors here */
        int rc = erg_arch_from_hf_config(config, &hf, &diag);
        if (!rc)
            rc = erg_serving_arch_read(config, &arch, &diag);
        if (rc) {
            erg_op_model_free(tg.ops);
            return erg_cli_fail(&diag, rc);
        }
        has_arch = 1;
    }
    erg_op_model *m = tg.ops;
    const char *dir = tg.dir;
    int nfiles = argc - optind;
    char *const *files = argv + optind;
    /* read every file first: a bad file is an error before anything is printed */
    erg_public_table **tabs = NULL;
    struct eval e;
    memset(&e, 0, sizeof e);
    status = read_all(nfiles, argv + optind, &tabs);
    if (status) {
        erg_op_model_free(m);
        return status;
    }
    for (int i = 0; i < nfiles && status == ERG_EXIT_OK; i++)
        if (eval_file(&e, i, tabs[i], &tg, has_arch ? &arch : NULL, config))
            status = erg_cli_fail(NULL, ERG_ENOMEM);
    if (status == ERG_EXIT_OK && e.n == 0) {
        /* nothing compared: an error (exit 2), with every reason, and nothing on stdout */
        fprintf(stderr,
                "erg: predict eval: nothing compared: every row of the %d file%s given was "
                "skipped (target %s):\n",
                nfiles, nfiles > 1 ? "s" : "", dir);
        for (int i = 0; i < nfiles; i++)
            print_skips(stderr, &e, i, files[i], "erg: ", "skipped: ");
        status = ERG_EXIT_USAGE;
    } else if (status == ERG_EXIT_OK && json_out) {
        json_t *root = json_object();
        json_t *rows = json_array();
        for (size_t i = 0; i < e.n; i++) {
            const struct cmp *x = &e.c[i];
            json_array_append_new(
                rows, json_pack("{s:s,s:I,s:o,s:s,s:f,s:f}", "file", files[x->file], "row",
                                (json_int_t)x->row, "phase",
                                x->phase ? json_string(x->phase) : json_null(), "quantity",
                                x->quantity, "measured", x->measured, "predicted", x->predicted));
        }
        json_object_set_new(root, "erg", json_string("eval/1"));
        json_object_set_new(root, "target", json_string(dir));
        json_object_set_new(root, "rows", rows);
        json_t *sum = json_array();
        for (int i = 0; i < nfiles; i++)
            summarise(&e, i, files[i], 1, (int)worst, sum);
        json_object_set_new(root, "summary", sum);
        json_t *sk = json_array();
        for (size_t i = 0; i < e.ns; i++)
            json_array_append_new(sk, json_pack("{s:s,s:I,s:s}", "file", files[e.s[i].file], "row",
                                                (json_int_t)e.s[i].row, "reason", e.s[i].reason));
        json_object_set_new(root, "skipped", sk);
        json_t *as = json_array();
        for (int i = 0; i < e.na; i++)
            json_array_append_new(as, json_string(e.assumptions[i]));
        json_object_set_new(root, "assumptions", as);
        erg_cli_json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
        printf("\n");
        json_decref(root);
    } else if (status == ERG_EXIT_OK) {
        char head[1400];
        describe_target(&tg, target, head, sizeof head);
        printf("%s\n", head);
        int skipped_files = 0;
        for (int i = 0; i < nfiles; i++) {
            size_t n = compared_rows(&e, i);
            printf("file %s (%s, %zu rows): ", files[i], erg_public_format_name(tabs[i]->format),
                   tabs[i]->n);
            if (n)
                printf("%zu rows compared\n", n);
            else {
                printf("nothing compared\n");
                skipped_files++;
            }
            summarise(&e, i, files[i], 0, (int)worst, NULL);
            print_skips(stdout, &e, i, NULL, "  skipped", "");
        }
        if (skipped_files)
            printf("nothing compared in %d of %d files (the reasons above)\n", skipped_files,
                   nfiles);
        for (int i = 0; i < e.na; i++)
            printf("assumption: %s\n", e.assumptions[i]);
    }
    free_all(nfiles, tabs);
    free(e.c);
    free(e.s);
    erg_op_model_free(m);
    return status;
}
