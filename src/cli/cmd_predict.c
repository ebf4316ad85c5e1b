/* SPDX-License-Identifier: MIT */
/* erg predict op: time and energy of one primitive op from a level-1 model (HYMELL 3.1-3.3). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "erg/stats.h"
#include "erg/predict.h"
#include "predict_levels.h"
#include "predict_public.h"

static void help(FILE *out, int overview)
{
    if (overview)
        fprintf(
            out,
            "Usage: erg predict op gemm|rmsnorm|softmax ...   one primitive op (level 1; below)\n"
            "       erg predict model CONFIG.json --target NAME|DIR ...   a whole LLM from its\n"
            "                 HuggingFace config.json, per phase (levels 1-3)\n"
            "       erg predict sweep CONFIG.json --target NAME|DIR --set KEY=A:B:STEP ...\n"
            "                 design-space sweeps of the architecture, batch and lengths\n"
            "       erg predict eval --target NAME|DIR [--config CONFIG.json] MEASURED...\n"
            "                 predictions against public measured files (MAPE, R^2)\n"
            "       erg predict import MEASURED... --ops|--blocks|--kernels|--gemm-map OUT\n"
            "                 public measured files as profiles and kernel models\n"
            "       erg predict fit-serving --target DIR MLENERGY.json=CONFIG.json...\n"
            "                 the serving level 3 of a GPU target (ML.ENERGY)\n"
            "Each takes --help. docs/predict.md describes them.\n\n");
    fprintf(
        out,
        "Usage: erg predict op gemm --m M --n N --k K [OPTIONS]\n"
        "       erg predict op rmsnorm --tokens N --d-model D [OPTIONS]\n"
        "       erg predict op softmax --tokens N [OPTIONS]   (or --m R --n C, row-wise)\n"
        "Options: --dtype fp32|bf16|fp16 (default: the dtype the model's estimator for the op\n"
        "was fitted on, e.g. fp32 for the CPU model, fp16 for models/a100-llmcompass.json; a\n"
        "model is fitted for one dtype, so an explicit other dtype is refused, exit 2),\n"
        "--model FILE (default: models/<this machine's kind>.json, looked up in\n"
        "$ERG_MODEL_DIR (the folder itself),\n"
        "$ERG_DATA_DIR/models, the installed share/erg/models, the source tree), --json\n"
        "(\"model\" names the file used).\n"
        "Dimensions are positive integers (at most 2^40).\n"
        "Prints time_s, energy_j, the regime, the method, the model's held-out MAPE for that\n"
        "regime and the grade of the model's energy data. Inside the fitted range the regime's\n"
        "estimator answers, kept inside the roofline envelope measured in training (floor:\n"
        "roofline time at the best measured FLOP/s and bandwidth, and the fixed cost per\n"
        "call; top: the worst efficiency seen). Outside the range (\"extrapolated\") the\n"
        "op's calibrated roofline answers (method \"roofline\"), anchored at the nearest\n"
        "trained configuration, with the power bounded by the powers observed. A warning on\n"
        "stderr says which bound or range applied.\n"
        "--signature FILE also writes the prediction as a signature/1 file for the energy\n"
        "calculus (s = --static-power-w W, default 0; variances from the held-out error).\n"
        "Exit status: 0 predicted, 2 bad input (usage, model file, op or dtype the model\n"
        "lacks).\n");
}

static int dim_opt(const char *opt, const char *text, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v <= 0 || v > (1ll << 40)) {
        erg_cli_usage("predict", "%s expects a positive integer (at most 2^40), got '%s'", opt,
                      text);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* No committed model was fitted on this machine's CPU: say how to fit one and how long the
 * default grid takes. Each configuration runs for the profiler's --min-time (1 s by default)
 * after a warm-up, so the grid's row count bounds the time from below on any machine. */
static void no_model_hint(const char *kind, const char *desc)
{
    char grid[1024];
    size_t rows = 0;
    erg_profile_options po;
    erg_profile_options_init(&po);
    if (erg_profile_default_grid(ERG_TARGET_CPU, grid, &(size_t){sizeof grid}) == ERG_OK) {
        erg_op_sample *s = NULL;
        if (erg_ops_csv_read(grid, 1, &s, &rows, NULL) != ERG_OK)
            rows = 0;
        free(s);
    }
    fprintf(stderr, "erg: no committed model was fitted on this machine (%s: %s)\n", kind, desc);
    fprintf(stderr,
            "erg: fit one for it:\n"
            "    erg profile ops --target cpu -o ops.csv\n"
            "    erg fit ops ops.csv -o %s.json\n"
            "    erg predict op ... --model %s.json   (or put it in $ERG_MODEL_DIR)\n",
            kind, kind);
    if (rows > 0)
        fprintf(stderr,
                "erg: the default grid (%s) has %zu configurations; each runs for --min-time "
                "(%.3g s) after a warm-up, so profiling takes at least %.0f min here (coarser and "
                "quicker: --grid with grids/cpu-reduced.csv)\n",
                grid, rows, po.min_time_s, ceil((double)rows * po.min_time_s / 60.0));
    fprintf(stderr, "erg: or pass --model with a model fitted on another machine (its figures "
                    "are that machine's, and erg says so)\n");
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout, 1);
        return ERG_EXIT_OK;
    }
    if (argc == 3 && strcmp(argv[1], "op") == 0 &&
        (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        help(stdout, 0);
        return ERG_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "model") == 0)
        return erg_cli_predict_model(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "sweep") == 0)
        return erg_cli_predict_sweep(argc - 1, argv + 1);
    /* public measured data: src/cli/predict_public.c */
    if (argc >= 2 && strcmp(argv[1], "eval") == 0)
        return erg_cli_predict_eval(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return erg_cli_predict_import(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "fit-serving") == 0)
        return erg_cli_predict_fit_serving(argc - 1, argv + 1);
    if (argc < 3 || strcmp(argv[1], "op") != 0)
        return erg_cli_usage("predict",
                             "expected 'op OPNAME', 'model CONFIG.json', 'sweep CONFIG.json', "
                             "'eval', 'import' or 'fit-serving' (erg predict op gemm --m ...)");
    erg_op_dims d;
    memset(&d, 0, sizeof d);
    if (erg_op_parse(argv[2], &d.op) != ERG_OK)
        return erg_cli_usage("predict", "unknown op '%s' (expected gemm, rmsnorm or softmax)",
                             argv[2]);
    argc -= 2;
    argv += 2;
    static const struct option opts[] = {{"m", required_argument, NULL, 'm'},
                                         {"n", required_argument, NULL, 'n'},
                                         {"k", required_argument, NULL, 'k'},
                                         {"tokens", required_argument, NULL, 't'},
                                         {"d-model", required_argument, NULL, 'd'},
                                         {"dtype", required_argument, NULL, 'y'},
                                         {"model", required_argument, NULL, 'M'},
                                         {"json", no_argument, NULL, 'J'},
                                         {"signature", required_argument, NULL, 'S'},
                                         {"static-power-w", required_argument, NULL, 'P'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *model_path = NULL, *sig_path = NULL;
    double static_w = 0;
    int json = 0, c, have_dtype = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (dim_opt("--m", optarg, &d.m))
                return ERG_EXIT_USAGE;
            break;
        case 'n':
            if (dim_opt("--n", optarg, &d.n))
                return ERG_EXIT_USAGE;
            break;
        case 'k':
            if (dim_opt("--k", optarg, &d.k))
                return ERG_EXIT_USAGE;
            break;
        case 't':
            if (dim_opt("--tokens", optarg, &d.tokens))
                return ERG_EXIT_USAGE;
            break;
        case 'd':
            if (dim_opt("--d-model", optarg, &d.d_model))
                return ERG_EXIT_USAGE;
            break;
        case 'y':
            if (erg_dtype_parse(optarg, &d.dtype) != ERG_OK)
                return erg_cli_usage("predict", "--dtype expects fp32, bf16 or fp16, got '%s'",
                                     optarg);
            have_dtype = 1;
            break;
        case 'M':
            model_path = optarg;
            break;
        case 'J':
            json = 1;
            break;
        case 'S':
            sig_path = optarg;
            break;
        case 'P':
            if (erg_cli_double("predict", "--static-power-w", optarg, &static_w) != 0)
                return ERG_EXIT_USAGE;
            if (static_w < 0)
                return erg_cli_usage("predict", "--static-power-w must not be negative");
            break;
        case 'h':
            help(stdout, 0);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("predict", argc, argv, "h", opts);
        }
    }
    if (optind != argc)
        return erg_cli_usage("predict", "unexpected argument '%s'", argv[optind]);
    /* only the dimensions of this op */
    int bad = (d.op == ERG_OP_GEMM && (d.tokens || d.d_model)) ||
              (d.op == ERG_OP_RMSNORM && (d.m || d.n || d.k)) ||
              (d.op == ERG_OP_SOFTMAX && (d.k || d.d_model || (d.tokens && (d.m || d.n))));
    if (bad)
        return erg_cli_usage("predict",
                             "option not used by %s (gemm: --m --n --k; rmsnorm: "
                             "--tokens --d-model; softmax: --tokens, or --m --n)",
                             erg_op_name(d.op));
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_op_dims_check(&d, &diag) != ERG_OK)
        return erg_cli_usage("predict", "%s", diag.detail);
    char kind[128], desc[256], path[1024];
    erg_target_identity(kind, sizeof kind, desc, sizeof desc);
    if (!model_path) {
        if (erg_op_model_default_path(kind, path, &(size_t){sizeof path}) != ERG_OK) {
            fprintf(stderr,
                    "erg predict: no default model path for '%s' (too long): give --model\n", kind);
            return ERG_EXIT_USAGE;
        }
        model_path = path;
    }
    erg_op_model *m = NULL;
    int rc = erg_op_model_load(model_path, &m, &diag);
    if (rc != ERG_OK) {
        if (rc == ERG_ENOENT && model_path == path)
            no_model_hint(kind, desc);
        return erg_cli_fail(&diag, rc);
    }
    if (strcmp(erg_op_model_target(m), kind) != 0 && !json)
        fprintf(stderr, "erg: note: %s was fitted for %s, not this machine (%s)\n", model_path,
                erg_op_model_target(m), kind);
    if (!have_dtype) { /* the dtype the model's estimator was fitted on */
        for (unsigned t = 0; t < 3; t++) {
            d.dtype = (erg_dtype)t;
            erg_op_prediction probe;
            if (erg_op_model_predict(m, &d, &probe, NULL) != ERG_ENOTSUP)
                break;
        }
    }
    erg_op_prediction p;
    rc = erg_op_model_predict(m, &d, &p, &diag);
    if (rc != ERG_OK) {
        snprintf(diag.where, sizeof diag.where, "%.200s", model_path);
        rc = erg_cli_fail(&diag, rc);
        erg_op_model_free(m);
        return rc == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : rc;
    }
    if (sig_path) {
        erg_signature sig;
        rc = erg_op_model_signature(m, &d, static_w, &sig, &diag);
        if (rc == ERG_OK)
            rc = erg_signature_write_file(sig_path, &sig, &diag);
        if (rc != ERG_OK) {
            erg_op_model_free(m);
            rc = erg_cli_fail(&diag, rc);
            return rc == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : rc;
        }
    }
    if (p.extrapolated)
        fprintf(stderr,
                "erg: warning: %s: %s, the range %s was fitted on; the regime fit is not used, "
                "the calibrated roofline answers\n",
                erg_op_name(d.op), p.why, model_path);
    if (p.time_bounded)
        fprintf(stderr,
                "erg: warning: %s: the %s fit left the roofline envelope measured in training "
                "(floor %.3g s: roofline at the best measured rates, or the fixed cost per call; "
                "top: the worst efficiency seen); the envelope answers\n",
                erg_op_name(d.op), erg_op_regime_name(d.op, p.regime), p.floor_time_s);
    if (p.energy_bounded)
        fprintf(stderr,
                "erg: warning: %s: the energy fit implies a power outside the range observed in "
                "training; energy = %.3g W (bounded) x time\n",
                erg_op_name(d.op), p.power_w);
    const char *grade = erg_op_model_has(m, d.op) == 2 ? erg_grade_name(p.grade) : "none";
    const char *method = p.method == ERG_PREDICT_ROOFLINE ? "roofline" : "fit";
    double t_pct, e_pct;
    erg_op_prediction_held_out(m, d.op, &p, &t_pct, &e_pct);
    if (json) {
        rc = erg_op_prediction_write_json("-", m, model_path, &d, &p, &diag);
        if (rc != ERG_OK) {
            erg_op_model_free(m);
            return erg_cli_fail(&diag, rc);
        }
    } else {
        printf("%s %s: time %.6g s, energy ", erg_op_name(d.op), erg_dtype_name(d.dtype), p.time_s);
        if (isfinite(p.energy_j))
            printf("%.6g J (%.3g W, grade %s)", p.energy_j, p.power_w, grade);
        else
            printf("- (the model has no energy for %s)", erg_op_name(d.op));
        printf(", regime %s%s, method %s\n", erg_op_regime_name(d.op, p.regime),
               p.fallback ? " (thin regime: fallback fit)" : "", method);
        printf("held-out MAPE of the %s%s: time ", method,
               p.method == ERG_PREDICT_ROOFLINE ? "" : " in this regime");
        if (isfinite(t_pct))
            printf("%.3g %%", t_pct);
        else
            printf("-");
        if (isfinite(p.energy_j)) {
            if (isfinite(e_pct))
                printf(", energy %.3g %% (grade %s)", e_pct, grade);
            else
                printf(", energy - (grade %s)", grade);
        }
        printf("\n");
    }
    erg_op_model_free(m);
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_predict = {
    "predict", "predict time and energy of an op or a whole LLM (HYMELL levels 1-3)", run};
