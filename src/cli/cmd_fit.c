/* SPDX-License-Identifier: MIT */
/* erg fit ops: fit HYMELL's level-1 estimators to ops.csv and report Tables 1-3. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "erg/stats.h"
#include "erg/predict.h"
#include "predict_levels.h"

static void help(FILE *out)
{
    fprintf(out,
            "Usage: erg fit ops OPS.csv -o MODEL.json [--paper-thresholds] [--test-fraction F]\n"
            "                   [--seed S] [--target-kind KIND] [--target-desc TEXT]\n"
            "                   [--gemm-form paper|cpu-cache] [--json]\n\n"
            "Fit the regime-split estimators of HYMELL Sections 3.1-3.3 (RMSNorm, softmax, GEMM)\n"
            "by least squares in scaled features, hold out a seeded random split (default 0.2,\n"
            "seed 42), and print MAPE and R^2 of time and energy per op and regime, as in the\n"
            "paper's Tables 1-3, next to a roofline baseline measured from the same data.\n"
            "Thresholds are chosen from the data unless --paper-thresholds; the search refuses\n"
            "splits that leave a regime almost empty or contradict its meaning (docs/predict.md).\n"
            "--gemm-form cpu-cache fits GEMM with the cache-aware CPU form (compute, weights\n"
            "from cache or from memory, input and output traffic, call overhead; one fit)\n"
            "instead of the paper's regime polynomial (docs/predict.md, \"A CPU GEMM form\").\n"
            "--json prints the tables as \"erg\": \"fit-report/1\" JSON.\n"
            "Exit status: 0 fitted and written, 2 bad input (usage, ops.csv, too few samples).\n");
}

static void cell(double v, int pct)
{
    if (isfinite(v))
        printf(pct ? " %9.3f" : " %9.4f", v);
    else
        printf(" %9s", "-");
}

static void print_tables(const erg_op_model *m)
{
    static const char *const titles[ERG_OP_COUNT] = {"RMSNorm estimator (Table 1 layout)",
                                                     "Softmax estimator (Table 2 layout)",
                                                     "GEMM estimator (Table 3 layout)"};
    erg_op_thresholds th;
    int chosen[ERG_OP_COUNT];
    erg_op_model_thresholds(m, &th, chosen);
    double bw, pw;
    erg_op_model_roofline(m, NULL, &bw, &pw);
    int energy = 0;
    for (unsigned op = 0; op < ERG_OP_COUNT; op++)
        energy |= erg_op_model_has(m, (erg_op)op) == 2;
    printf("target %s, energy grade %s\n", erg_op_model_target(m),
           energy ? erg_grade_name(erg_op_model_grade(m)) : "none (time-only data)");
    printf("roofline: bandwidth %.4g B/s (all ops)", bw);
    if (isfinite(pw))
        printf(", mean power %.4g W", pw);
    printf(" (measured on the training rows)\n\n");
    for (unsigned op = 0; op < ERG_OP_COUNT; op++) {
        if (!erg_op_model_has(m, (erg_op)op))
            continue;
        printf("%s; thresholds %s: ", titles[op],
               chosen[op] == 1   ? "chosen from the data"
               : chosen[op] == 2 ? "of the paper (kept by the data search)"
                                 : "of the paper");
        if (op == ERG_OP_RMSNORM)
            printf("N*d < %.4g\n", th.rms_nd);
        else if (op == ERG_OP_SOFTMAX)
            printf("N < %.4g\n", th.softmax_n);
        else
            printf("F_launch %.4g, AI_low %.4g, AI_mid %.4g, AI_high %.4g\n", th.gemm_f,
                   th.gemm_ai[0], th.gemm_ai[1], th.gemm_ai[2]);
        erg_op_bounds b;
        if (erg_op_model_bounds(m, (erg_op)op, &b) == ERG_OK) {
            printf(
                "bounds: peak %.4g FLOP/s, launch floor %.4g s, eta %.3g, trained work %.4g..%.4g",
                b.peak_flop_s, b.launch_time_s, b.eta, b.work_lo, b.work_hi);
            if (isfinite(b.power_med_w))
                printf(", power %.4g/%.4g/%.4g W (min/median/max)", b.power_lo_w, b.power_med_w,
                       b.power_hi_w);
            printf("\n");
        }
        printf("%-14s %5s %5s | %9s %9s %9s %9s | %9s %9s %9s %9s\n", "", "", "", "HYMELL", "", "",
               "", "roofline", "", "", "");
        printf("%-14s %5s %5s | %9s %9s %9s %9s | %9s %9s %9s %9s\n", "Regime", "train", "test",
               "T MAPE%", "T R2", "E MAPE%", "E R2", "T MAPE%", "T R2", "E MAPE%", "E R2");
        unsigned nreg = erg_op_regime_count((erg_op)op);
        for (unsigned r = 0; r <= nreg; r++) {
            unsigned rr = r == nreg ? ERG_OP_MAX_REGIMES : r;
            erg_op_validation v;
            if (erg_op_model_validation(m, (erg_op)op, rr, &v) != ERG_OK)
                continue;
            char name[32];
            snprintf(name, sizeof name, "%s%s", erg_op_regime_name((erg_op)op, rr),
                     r < nreg && v.fallback ? "*" : "");
            printf("%-14s %5u %5u |", name, v.n_train, v.n_test);
            cell(v.time_mape_pct, 1);
            cell(v.time_r2, 0);
            cell(v.energy_mape_pct, 1);
            cell(v.energy_r2, 0);
            printf(" |");
            cell(v.roof_time_mape_pct, 1);
            cell(v.roof_time_r2, 0);
            cell(v.roof_energy_mape_pct, 1);
            cell(v.roof_energy_r2, 0);
            printf("\n");
        }
        printf("\n");
    }
    const char *notes = erg_op_model_notes(m);
    if (notes[0])
        printf("notes (* = regime falls back):\n%s", notes);
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout);
        return ERG_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "blocks") == 0)
        return erg_cli_fit_blocks(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "model") == 0)
        return erg_cli_fit_model(argc - 1, argv + 1);
    if (argc < 2 || strcmp(argv[1], "ops") != 0)
        return erg_cli_usage("fit", "expected 'ops', 'blocks' or 'model' (erg fit ops OPS.csv "
                                    "-o MODEL.json)");
    argc--;
    argv++;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"paper-thresholds", no_argument, NULL, 'P'},
                                         {"test-fraction", required_argument, NULL, 'f'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"target-kind", required_argument, NULL, 'k'},
                                         {"target-desc", required_argument, NULL, 'd'},
                                         {"gemm-form", required_argument, NULL, 'G'},
                                         {"json", no_argument, NULL, 'J'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    erg_fit_options fo;
    erg_fit_options_init(&fo);
    const char *out_path = NULL;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        unsigned long ul;
        switch (c) {
        case 'o':
            out_path = optarg;
            break;
        case 'P':
            fo.choose_thresholds = 0;
            break;
        case 'f':
            if (erg_cli_double("fit", "--test-fraction", optarg, &fo.test_fraction) != 0)
                return ERG_EXIT_USAGE;
            if (!(fo.test_fraction >= 0 && fo.test_fraction < 1))
                return erg_cli_usage("fit", "--test-fraction must be in [0, 1)");
            break;
        case 's':
            if (erg_cli_ulong("fit", "--seed", optarg, &ul) != 0)
                return ERG_EXIT_USAGE;
            fo.seed = ul;
            break;
        case 'k':
            fo.target_kind = optarg;
            break;
        case 'd':
            fo.target_desc = optarg;
            break;
        case 'G':
            if (strcmp(optarg, "paper") == 0)
                fo.gemm_form = ERG_GEMM_FORM_PAPER;
            else if (strcmp(optarg, "cpu-cache") == 0)
                fo.gemm_form = ERG_GEMM_FORM_CACHE;
            else
                return erg_cli_usage("fit", "--gemm-form: expected paper or cpu-cache");
            break;
        case 'J':
            json = 1;
            break;
        case 'h':
            help(stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("fit", argc, argv, "o:h", opts);
        }
    }
    if (optind + 1 != argc)
        return erg_cli_usage("fit", "expected one OPS.csv argument");
    if (!out_path)
        return erg_cli_usage("fit", "missing -o MODEL.json");
    const char *csv = argv[optind];
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_op_sample *s = NULL;
    size_t n = 0;
    int rc = erg_ops_csv_read(csv, 0, &s, &n, &diag);
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    erg_op_model *m = NULL;
    rc = erg_op_model_fit(s, n, &fo, &m, &diag);
    free(s);
    if (rc != ERG_OK) {
        if (!diag.where[0])
            snprintf(diag.where, sizeof diag.where, "%s", csv);
        return erg_cli_fail(&diag, rc);
    }
    rc = erg_op_model_save(out_path, m, &diag);
    if (rc != ERG_OK) {
        erg_op_model_free(m);
        return erg_cli_fail(&diag, rc);
    }
    if (json) {
        erg_fit_report r = {.level = 1, .model_path = out_path, .ops = m};
        rc = erg_fit_report_write_json("-", &r, &diag);
    } else
        print_tables(m);
    erg_op_model_free(m);
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_fit = {
    "fit", "fit HYMELL op, block and end-to-end models to profiles (model/1)", run};
