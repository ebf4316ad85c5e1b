/* SPDX-License-Identifier: MIT */
/* erg profile ops: run the op profiler (HYMELL Section 5.1 protocol) over a grid into ops.csv. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "erg/measure.h"
#include "erg/predict.h"
#include "meter_cli.h"

static void help(FILE *out)
{
    fprintf(
        out,
        "Usage: erg profile ops [--target cpu|cuda] [--grid FILE] [--min-time S] [--threads N]\n"
        "                       [--clock monotonic|thread] [--no-meter [--est-power-w W]]\n"
        "                       [--quiet] -o ops.csv\n\n"
        "Time (CLOCK_MONOTONIC) and energy of RMSNorm, causal softmax and GEMM (OpenBLAS) for\n"
        "every configuration of the grid. Each configuration repeats until its cumulative time\n"
        "passes --min-time (default 1 s; HYMELL used 10 s), rotating pre-generated input sets.\n"
        "Energy comes from erg's meters (a window per batch of repetitions); without energy\n"
        "counters that is the meter's estimator and the grade column says 'estimator'.\n"
        "--no-meter uses a constant-power estimate instead (--est-power-w, default 15 W).\n"
        "--clock thread times batches by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which\n"
        "a shared machine does not inflate; it needs --threads 1 (the default).\n"
        "The default grid is grids/<target>.csv, looked up in $ERG_GRID_DIR (the folder\n"
        "itself), $ERG_DATA_DIR/grids, the installed share/erg/grids, the source tree.\n"
        "--target cuda is an extension point that this build does not implement (exit 3).\n"
        "time_sd_s/energy_sd_j: the run-to-run sd of the per-execution cost (robust spread\n"
        "of the batches' per-execution means; docs/predict.md).\n"
        "Exit status: 0 written, 2 bad input (usage, grid file), 3 no usable meter or target.\n");
}

struct progress {
    int quiet;
};

static void on_progress(void *ud, size_t done, size_t total, const erg_op_sample *s)
{
    const struct progress *p = ud;
    if (p->quiet)
        return;
    fprintf(stderr, "[%zu/%zu] %-7s m=%lld n=%lld k=%lld tokens=%lld d_model=%lld  %.4g s x %llu\n",
            done, total, erg_op_name(s->dims.op), (long long)s->dims.m, (long long)s->dims.n,
            (long long)s->dims.k, (long long)s->dims.tokens, (long long)s->dims.d_model, s->time_s,
            (unsigned long long)s->reps);
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout);
        return ERG_EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "ops") != 0)
        return erg_cli_usage("profile", "expected 'ops' (erg profile ops ...)");
    argc--;
    argv++;
    static const struct option opts[] = {{"target", required_argument, NULL, 't'},
                                         {"grid", required_argument, NULL, 'g'},
                                         {"min-time", required_argument, NULL, 'm'},
                                         {"threads", required_argument, NULL, 'j'},
                                         {"est-power-w", required_argument, NULL, 'p'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"no-meter", no_argument, NULL, 'N'},
                                         {"clock", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    erg_profile_options o;
    erg_profile_options_init(&o);
    const char *grid_path = NULL, *out_path = NULL;
    char grid_buf[1024];
    struct progress pr = {0};
    int c, no_meter = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        unsigned long ul;
        switch (c) {
        case 't':
            if (strcmp(optarg, "cpu") == 0)
                o.target = ERG_TARGET_CPU;
            else if (strcmp(optarg, "cuda") == 0)
                o.target = ERG_TARGET_CUDA;
            else
                return erg_cli_usage("profile", "--target expects cpu or cuda, got '%s'", optarg);
            break;
        case 'g':
            grid_path = optarg;
            break;
        case 'm':
            if (erg_cli_double("profile", "--min-time", optarg, &o.min_time_s) != 0)
                return ERG_EXIT_USAGE;
            if (o.min_time_s < 0)
                return erg_cli_usage("profile", "--min-time must not be negative");
            break;
        case 'j':
            if (erg_cli_ulong("profile", "--threads", optarg, &ul) != 0)
                return ERG_EXIT_USAGE;
            if (ul < 1 || ul > 1024)
                return erg_cli_usage("profile", "--threads must be in 1..1024");
            o.threads = (int)ul;
            break;
        case 'p':
            if (erg_cli_double("profile", "--est-power-w", optarg, &o.est_power_w) != 0)
                return ERG_EXIT_USAGE;
            if (!(o.est_power_w > 0))
                return erg_cli_usage("profile", "--est-power-w must be positive");
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'q':
            pr.quiet = 1;
            break;
        case 'N':
            no_meter = 1;
            break;
        case 'c':
            if (strcmp(optarg, "monotonic") == 0)
                o.clock = ERG_PROFILE_CLOCK_MONOTONIC;
            else if (strcmp(optarg, "thread") == 0)
                o.clock = ERG_PROFILE_CLOCK_THREAD_CPU;
            else
                return erg_cli_usage("profile", "--clock expects monotonic or thread, got '%s'",
                                     optarg);
            break;
        case 'h':
            help(stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("profile", argc, argv, "o:qh", opts);
        }
    }
    if (optind != argc)
        return erg_cli_usage("profile", "unexpected argument '%s'", argv[optind]);
    if (!out_path)
        return erg_cli_usage("profile", "missing -o ops.csv");
    if (o.clock == ERG_PROFILE_CLOCK_THREAD_CPU && o.threads != 1)
        return erg_cli_usage("profile", "--clock thread needs --threads 1");
    erg_diag diag;
    erg_diag_clear(&diag);
    if (o.target == ERG_TARGET_CUDA) {
        int rc = erg_profile_ops(&o, NULL, 0, NULL, NULL, &diag);
        return erg_cli_fail(&diag, rc);
    }
    if (!grid_path) {
        erg_profile_default_grid(o.target, grid_buf, sizeof grid_buf);
        grid_path = grid_buf;
    }
    erg_op_sample *grid = NULL;
    size_t n = 0;
    int rc = erg_ops_csv_read(grid_path, 1, &grid, &n, &diag);
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    if (n == 0) {
        free(grid);
        fprintf(stderr, "erg: %s: the grid has no configurations\n", grid_path);
        return ERG_EXIT_USAGE;
    }
    erg_op_dims *dims = malloc(n * sizeof *dims);
    erg_op_sample *out = malloc(n * sizeof *out);
    if (!dims || !out) {
        free(grid);
        free(dims);
        free(out);
        fprintf(stderr, "erg: out of memory\n");
        return ERG_EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++)
        dims[i] = grid[i].dims;
    free(grid);
    o.progress = on_progress;
    o.progress_ud = &pr;
    erg_meter *meter = NULL;
    erg_monitor *mon = NULL;
    erg_energy_window ew;
    if (!no_meter) {
        int ex = erg_cli_meter_open(NULL, &meter);
        if (ex) {
            free(dims);
            free(out);
            return ex;
        }
        if (erg_meter_sampler_start(meter, 0.1) != ERG_OK ||
            erg_monitor_open(meter, &mon, &diag) != ERG_OK) {
            erg_meter_close(meter);
            free(dims);
            free(out);
            fprintf(stderr, "erg: cannot start the meter's sampler or monitor\n");
            return ERG_EXIT_NOMETER;
        }
        erg_profile_energy_monitor(mon, &ew);
        o.energy = &ew;
    }
    size_t done = 0;
    rc = erg_profile_ops(&o, dims, n, out, &done, &diag);
    erg_monitor_close(mon);
    if (meter) {
        erg_meter_sampler_stop(meter);
        erg_meter_close(meter);
    }
    int status = ERG_EXIT_OK;
    if (rc != ERG_OK) {
        char where[sizeof diag.where];
        snprintf(where, sizeof where, "%.120s: %.120s", grid_path, diag.where);
        memcpy(diag.where, where, sizeof where);
        status = erg_cli_fail(&diag, rc);
    } else {
        rc = erg_ops_csv_write(out_path, out, done, &diag);
        if (rc != ERG_OK)
            status = erg_cli_fail(&diag, rc);
        else if (!pr.quiet)
            fprintf(stderr, "erg: wrote %zu configurations to %s (energy grade: %s)\n", done,
                    out_path, done ? erg_grade_name(out[0].grade) : "-");
    }
    free(dims);
    free(out);
    return status;
}

const struct erg_cli_command erg_cli_cmd_profile = {
    "profile", "profile primitive ops (RMSNorm, softmax, GEMM) into ops.csv", run};
