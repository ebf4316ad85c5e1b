/* SPDX-License-Identifier: MIT */
/* erg predict import: public measured files -> profile files (ops.csv).
 * erg predict eval: compare a target's predictions with public measured files. */
#include <errno.h>
#include <getopt.h>
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
            if (erg_serving_sample_of_row(t, &t->rows[j], &a, tg.ops, &tg.k, prompt, &x, why,
                                          sizeof why))
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

/* The summary lines of file fi (erg_eval_summary): per level, phase and quantity, n, MAPE, R²
 * and the worst rows. 0, or -1 on out of memory. */
static int summarise(const erg_eval *e, size_t fi, unsigned worst)
{
    erg_eval_group *g = NULL;
    size_t ng = 0;
    if (erg_eval_summary(e, fi, worst, &g, &ng) != ERG_OK)
        return -1;
    for (size_t i = 0; i < ng; i++) {
        const erg_eval_row *c = g[i].first;
        char ph[32] = "";
        if (c->phase)
            snprintf(ph, sizeof ph, "phase %s", c->phase);
        printf("  %-34s %-13s  %-28s n %6zu  MAPE %7.3f %%  R2 ", c->level, ph, c->quantity, g[i].n,
               g[i].mape_pct);
        if (isfinite(g[i].r2))
            printf("%.4f\n", g[i].r2);
        else
            printf("-\n");
        for (size_t q = 0; q < g[i].n_worst; q++) {
            const erg_eval_row *x = g[i].worst[q];
            printf("    worst: row %zu measured %.6g predicted %.6g (%+.1f %%)\n", x->row,
                   x->measured, x->predicted, 100.0 * (x->predicted - x->measured) / x->measured);
        }
    }
    free(g);
    return 0;
}

/* Whether skip k of file fi is a row skipped for the reason of skip i. */
static int same_skip(const erg_eval *e, size_t fi, size_t i, size_t k)
{
    return e->skipped[k].file == fi && e->skipped[k].row &&
           strcmp(e->skipped[k].reason, e->skipped[i].reason) == 0;
}

/* The skipped rows and files of file fi, one line per reason: the rows skipped for it as runs
 * of consecutive rows, "<lead><file> rows a-b, c, d-e: <mid><reason>" (one row: "row a"; file
 * NULL: "<lead> rows ..."; the first 24 runs, then how many rows in all); a whole file skipped
 * (row 0): "<lead><file>: <mid><reason>". The rows are in the order they were skipped. */
static void print_skips(FILE *out, const erg_eval *e, size_t fi, const char *file, const char *lead,
                        const char *mid)
{
    if (!file)
        file = "";
    for (size_t i = 0; i < e->n_skipped; i++) {
        if (e->skipped[i].file != fi)
            continue;
        if (!e->skipped[i].row) {
            fprintf(out, "%s%s: %s%s\n", lead, file, mid, e->skipped[i].reason);
            continue;
        }
        int earlier = 0; /* printed with an earlier row of this reason */
        for (size_t k = 0; k < i && !earlier; k++)
            earlier = same_skip(e, fi, i, k);
        if (earlier)
            continue;
        size_t rows = 0, runs = 0;
        for (size_t k = i; k < e->n_skipped; k++)
            rows += (size_t)same_skip(e, fi, i, k);
        fprintf(out, "%s%s %s", lead, file, rows > 1 ? "rows" : "row");
        for (size_t k = i; k < e->n_skipped; k++) {
            if (!same_skip(e, fi, i, k))
                continue;
            size_t j = k; /* the run of consecutive rows from k */
            while (j + 1 < e->n_skipped && same_skip(e, fi, i, j + 1) &&
                   e->skipped[j + 1].row == e->skipped[j].row + 1)
                j++;
            if (runs++ == 24) {
                fprintf(out, ", ... (%zu rows)", rows);
                break;
            }
            fprintf(out, "%s%zu", runs > 1 ? ", " : " ", e->skipped[k].row);
            if (j > k)
                fprintf(out, "-%zu", e->skipped[j].row);
            k = j;
        }
        fprintf(out, ": %s%s\n", mid, e->skipped[i].reason);
    }
}

static size_t compared_rows(const erg_eval *e, size_t fi)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n_rows; i++)
        if (e->rows[i].file == fi &&
            (i == 0 || e->rows[i - 1].file != fi || e->rows[i - 1].row != e->rows[i].row))
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
    erg_eval e;
    memset(&e, 0, sizeof e);
    erg_eval_target et = {tg.dir, tg.ops, tg.has_gpu ? &tg.k : NULL, tg.has_serving ? &tg.m : NULL};
    status = read_all(nfiles, argv + optind, &tabs);
    if (status) {
        erg_op_model_free(m);
        return status;
    }
    for (int i = 0; i < nfiles && status == ERG_EXIT_OK; i++) {
        int rc = erg_eval_file(&e, (size_t)i, tabs[i], &et, has_arch ? &arch : NULL, config, &diag);
        if (rc != ERG_OK)
            status = erg_cli_fail(&diag, rc);
    }
    if (status == ERG_EXIT_OK && e.n_rows == 0) {
        /* nothing compared: an error (exit 2), with every reason, and nothing on stdout */
        fprintf(stderr,
                "erg: predict eval: nothing compared: every row of the %d file%s given was "
                "skipped (target %s):\n",
                nfiles, nfiles > 1 ? "s" : "", dir);
        for (int i = 0; i < nfiles; i++)
            print_skips(stderr, &e, (size_t)i, files[i], "erg: ", "skipped: ");
        status = ERG_EXIT_USAGE;
    } else if (status == ERG_EXIT_OK && json_out) {
        int rc = erg_eval_write_json("-", &e, dir, (const char *const *)files, (size_t)nfiles,
                                     (unsigned)worst, &diag);
        if (rc != ERG_OK)
            status = erg_cli_fail(&diag, rc);
    } else if (status == ERG_EXIT_OK) {
        char head[1400];
        describe_target(&tg, target, head, sizeof head);
        printf("%s\n", head);
        int skipped_files = 0;
        for (int i = 0; i < nfiles; i++) {
            size_t n = compared_rows(&e, (size_t)i);
            printf("file %s (%s, %zu rows): ", files[i], erg_public_format_name(tabs[i]->format),
                   tabs[i]->n);
            if (n)
                printf("%zu rows compared\n", n);
            else {
                printf("nothing compared\n");
                skipped_files++;
            }
            if (summarise(&e, (size_t)i, (unsigned)worst)) {
                status = erg_cli_fail(NULL, ERG_ENOMEM);
                break;
            }
            print_skips(stdout, &e, (size_t)i, NULL, "  skipped", "");
        }
        if (status == ERG_EXIT_OK && skipped_files)
            printf("nothing compared in %d of %d files (the reasons above)\n", skipped_files,
                   nfiles);
        for (size_t i = 0; status == ERG_EXIT_OK && i < e.n_assumptions; i++)
            printf("assumption: %s\n", e.assumptions[i]);
    }
    free_all(nfiles, tabs);
    erg_eval_release(&e);
    erg_op_model_free(m);
    return status;
}
