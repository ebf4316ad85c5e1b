/* SPDX-License-Identifier: MIT */
/* erg profile ops: run the op profiler (HYMELL Section 5.1 protocol) over a grid into ops.csv.
 * erg profile blocks|models: run the PyTorch profiler script (profile_torch.py) into a folder. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
        "Progress goes to stderr; the rows measured so far are kept in ops.csv.partial (rewritten\n"
        "whole after each configuration), so an interrupted run loses at most one configuration;\n"
        "ops.csv is written at the end and the partial file removed.\n"
        "Exit status: 0 written, 2 bad input (usage, grid file), 3 no usable meter or target.\n"
        "\n"
        "Usage: erg profile blocks|models|all [--target cpu|cuda] [--plan full|small|smoke]\n"
        "                       [--min-time S] [--threads N] [--no-meter] [--quiet] -o DIR\n\n"
        "Real PyTorch attention, FFN, MoE, norm, embedding and LM-head blocks (blocks.csv) or\n"
        "whole decoder models built from HF-style configs with random weights (models.csv,\n"
        "configs/*.json), prefill and decode with a KV cache; 'all' also writes ops.csv (the\n"
        "torch kernels as level-1 ops). Runs profile_torch.py with $ERG_PYTHON (default\n"
        "/usr/bin/python3); the script is found as $ERG_PROFILE_SCRIPT, the installed\n"
        "share/erg/scripts/profile_torch.py, or the source tree. Energy: erg's meter read through\n"
        "liberg (--target cpu; the estimator where there are no counters, grade 'estimator'),\n"
        "NVML's energy counter (--target cuda). The full plan is about 1,240 configurations,\n"
        "about 25 minutes of CPU time (much more wall time on a loaded machine; "
        "docs/profile.md).\n");
}

/* Progress on stderr and a checkpoint of the rows measured so far: after each configuration
 * "<out>.partial" is rewritten (whole, through a temporary file) so that an interrupted run keeps
 * what it measured; the run's end writes <out> and removes the partial file. */
struct progress {
    int quiet;
    const char *partial;      /* NULL: no checkpoint (output to stdout) */
    const erg_op_sample *out; /* rows 0..done-1 are filled when the callback runs */
    double start_s;           /* CLOCK_MONOTONIC at the start */
    int partial_failed;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whole seconds as "1h02m", "3m05s" or "42s". */
static void fmt_duration(double s, char *buf, size_t size)
{
    long t = s > 0 && s < 1e9 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

static void on_progress(void *ud, size_t done, size_t total, const erg_op_sample *s)
{
    struct progress *p = ud;
    if (p->partial && !p->partial_failed) {
        erg_diag d;
        erg_diag_clear(&d);
        if (erg_ops_csv_write(p->partial, p->out, done, &d) != ERG_OK) {
            char buf[512];
            erg_diag_format(&d, buf, sizeof buf);
            fprintf(stderr, "erg profile: warning: no checkpoint of the rows so far: %s\n", buf);
            p->partial_failed = 1;
        }
    }
    if (p->quiet)
        return;
    char dims[128];
    const erg_op_dims *d = &s->dims;
    if (d->op == ERG_OP_GEMM)
        snprintf(dims, sizeof dims, "m=%lld n=%lld k=%lld", (long long)d->m, (long long)d->n,
                 (long long)d->k);
    else if (d->d_model > 0)
        snprintf(dims, sizeof dims, "tokens=%lld d_model=%lld", (long long)d->tokens,
                 (long long)d->d_model);
    else
        snprintf(dims, sizeof dims, "tokens=%lld", (long long)d->tokens);
    double el = now_s() - p->start_s;
    char el_buf[32], left_buf[32];
    fmt_duration(el, el_buf, sizeof el_buf);
    fmt_duration(done ? el / (double)done * (double)(total - done) : 0, left_buf, sizeof left_buf);
    fprintf(stderr, "[%zu/%zu, %s elapsed, about %s left] %-7s %s  %.4g s x %llu\n", done, total,
            el_buf, left_buf, erg_op_name(d->op), dims, s->time_s, (unsigned long long)s->reps);
}

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* <dir of the running program>/<rel>/<file> into buf when readable; 1 if so */
static int beside_exe(const char *rel, const char *file, char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    int n = snprintf(buf, size, "%s/%s/%s", exe, rel, file);
    return n > 0 && (size_t)n < size && readable(buf);
}

/* The profiler script: $ERG_PROFILE_SCRIPT, the installed data dir (relative to the program,
 * then the configured prefix), the source tree. NULL when none is readable. */
static const char *find_script(char *buf, size_t size)
{
    const char *env = getenv("ERG_PROFILE_SCRIPT");
    if (env && *env)
        return env;
    if (beside_exe(ERG_CLI_BIN_TO_DATA "/erg/scripts", "profile_torch.py", buf, size))
        return buf;
    snprintf(buf, size, "%s", ERG_CLI_INSTALL_DATA_DIR "/erg/scripts/profile_torch.py");
    if (readable(buf))
        return buf;
    snprintf(buf, size, "%s", ERG_CLI_SOURCE_DIR "/src/predict/profile_torch.py");
    if (readable(buf))
        return buf;
    return NULL;
}

/* liberg.so for the script's meter binding ($ERG_LIB is read by the script itself): beside the
 * installed program, the build tree, the configured prefix. NULL: let the script look. */
static const char *find_liberg(char *buf, size_t size)
{
    if (getenv("ERG_LIB"))
        return NULL;
    if (beside_exe(ERG_CLI_BIN_TO_LIB, "liberg.so." ERG_CLI_SOVERSION, buf, size))
        return buf;
    snprintf(buf, size, "%s", ERG_CLI_BUILD_LIB);
    if (readable(buf))
        return buf;
    snprintf(buf, size, "%s", ERG_CLI_INSTALL_LIB_DIR "/liberg.so." ERG_CLI_SOVERSION);
    if (readable(buf))
        return buf;
    return NULL;
}

/* The options erg profile ops and erg profile blocks|models|all share, as given (NULL, 0: not). */
struct shared_opts {
    const char *min_time, *threads, *out;
    double min_time_s;
    int threads_n, quiet, no_meter;
};

enum { OPT_DONE = -1, OPT_OWN = -2, OPT_TAKEN = -3 };

/* Take getopt's c when it is a shared option (--min-time, --threads, -o, -q, --no-meter, -h) or
 * none at all: OPT_TAKEN, or the exit status when the command ends here (help, a bad value, an
 * unknown option); OPT_OWN when c is one of the subcommand's own. */
static int shared_option(int c, int argc, char **argv, const struct option *opts,
                         struct shared_opts *so)
{
    unsigned long ul;
    switch (c) {
    case 'm':
        if (erg_cli_double("profile", "--min-time", optarg, &so->min_time_s) != 0)
            return ERG_EXIT_USAGE;
        if (so->min_time_s < 0 || so->min_time_s > 86400)
            return erg_cli_usage("profile", "--min-time must be 0 to 86400 s");
        so->min_time = optarg;
        return OPT_TAKEN;
    case 'j':
        if (erg_cli_count("profile", "--threads", optarg, 1, 1024, &ul) != 0)
            return ERG_EXIT_USAGE;
        so->threads = optarg;
        so->threads_n = (int)ul;
        return OPT_TAKEN;
    case 'o':
        so->out = optarg;
        return OPT_TAKEN;
    case 'q':
        so->quiet = 1;
        return OPT_TAKEN;
    case 'N':
        so->no_meter = 1;
        return OPT_TAKEN;
    case 'h':
        help(stdout);
        return ERG_EXIT_OK;
    case '?':
    case ':':
        return erg_cli_bad_option("profile", argc, argv, "o:qh", opts);
    default:
        return OPT_OWN;
    }
}

/* getopt_long over opts (the caller resets optind), taking the shared options itself: OPT_OWN
 * with *c one of the subcommand's own options; OPT_DONE at the end of a valid command line (no
 * operand, -o given; what names what -o takes); otherwise the exit status (help printed, a bad
 * value, an unknown option, an operand, no -o). */
static int next_option(int argc, char **argv, const struct option *opts, const char *what,
                       struct shared_opts *so, int *c)
{
    while ((*c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        int rc = shared_option(*c, argc, argv, opts, so);
        if (rc != OPT_TAKEN)
            return rc;
    }
    if (optind != argc)
        return erg_cli_usage("profile", "unexpected argument '%s'", argv[optind]);
    if (!so->out)
        return erg_cli_usage("profile", "missing -o %s", what);
    return OPT_DONE;
}

/* erg profile blocks|models|all: check the options, then exec the script */
static int run_torch(int argc, char **argv)
{
    const char *what = argv[1];
    argc--;
    argv++;
    static const struct option opts[] = {{"target", required_argument, NULL, 't'},
                                         {"plan", required_argument, NULL, 'P'},
                                         {"min-time", required_argument, NULL, 'm'},
                                         {"threads", required_argument, NULL, 'j'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"no-meter", no_argument, NULL, 'N'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *target = "cpu", *plan = NULL;
    struct shared_opts so = {0};
    int c, rc;
    optind = 1;
    while ((rc = next_option(argc, argv, opts, "DIR", &so, &c)) == OPT_OWN) {
        switch (c) {
        case 't':
            if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0)
                return erg_cli_usage("profile", "--target expects cpu or cuda, got '%s'", optarg);
            target = optarg;
            break;
        case 'P':
            if (strcmp(optarg, "full") != 0 && strcmp(optarg, "small") != 0 &&
                strcmp(optarg, "smoke") != 0)
                return erg_cli_usage("profile", "--plan expects full, small or smoke, got '%s'",
                                     optarg);
            plan = optarg;
            break;
        }
    }
    if (rc != OPT_DONE)
        return rc;
    const char *min_time = so.min_time, *threads = so.threads, *out = so.out;
    int quiet = so.quiet, no_meter = so.no_meter;
    char script_buf[PATH_MAX + 64], lib_buf[PATH_MAX + 64];
    const char *script = find_script(script_buf, sizeof script_buf);
    if (!script) {
        fprintf(stderr, "erg: profile %s: profile_torch.py not found (set $ERG_PROFILE_SCRIPT)\n",
                what);
        return ERG_EXIT_NOMETER;
    }
    const char *python = getenv("ERG_PYTHON");
    if (!python || !*python)
        python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    const char *lib =
        no_meter || strcmp(target, "cpu") != 0 ? NULL : find_liberg(lib_buf, sizeof lib_buf);
    const char *av[24];
    int n = 0;
    av[n++] = python;
    av[n++] = script;
    av[n++] = what;
    av[n++] = "-o";
    av[n++] = out;
    av[n++] = "--device";
    av[n++] = target;
    if (plan) {
        av[n++] = "--plan";
        av[n++] = plan;
    }
    if (min_time) {
        av[n++] = "--min-time";
        av[n++] = min_time;
    }
    if (threads) {
        av[n++] = "--threads";
        av[n++] = threads;
    }
    if (no_meter)
        av[n++] = "--no-energy";
    if (quiet)
        av[n++] = "--quiet";
    if (lib) {
        av[n++] = "--erg-lib";
        av[n++] = lib;
    }
    av[n] = NULL;
    fflush(NULL);
    execvp(python, erg_cli_exec_argv(av));
    fprintf(stderr, "erg: profile %s: cannot run %s: %s (set $ERG_PYTHON)\n", what, python,
            strerror(errno));
    return ERG_EXIT_NOMETER;
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout);
        return ERG_EXIT_OK;
    }
    if (argc >= 2 && (strcmp(argv[1], "blocks") == 0 || strcmp(argv[1], "models") == 0 ||
                      strcmp(argv[1], "all") == 0))
        return run_torch(argc, argv);
    if (argc < 2 || strcmp(argv[1], "ops") != 0)
        return erg_cli_usage("profile",
                             "expected 'ops', 'blocks', 'models' or 'all' (erg profile ops ...)");
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
    const char *grid_path = NULL;
    char grid_buf[1024];
    struct progress pr = {0};
    struct shared_opts so = {0};
    int c, rc;
    optind = 1;
    while ((rc = next_option(argc, argv, opts, "ops.csv", &so, &c)) == OPT_OWN) {
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
        case 'p':
            if (erg_cli_double("profile", "--est-power-w", optarg, &o.est_power_w) != 0)
                return ERG_EXIT_USAGE;
            if (!(o.est_power_w > 0))
                return erg_cli_usage("profile", "--est-power-w must be positive");
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
        }
    }
    if (rc != OPT_DONE)
        return rc;
    const char *out_path = so.out;
    int no_meter = so.no_meter;
    pr.quiet = so.quiet;
    if (so.min_time)
        o.min_time_s = so.min_time_s;
    if (so.threads)
        o.threads = so.threads_n;
    if (o.clock == ERG_PROFILE_CLOCK_THREAD_CPU && o.threads != 1)
        return erg_cli_usage("profile", "--clock thread needs --threads 1");
    erg_diag diag;
    erg_diag_clear(&diag);
    if (o.target == ERG_TARGET_CUDA) {
        rc = erg_profile_ops(&o, NULL, 0, NULL, NULL, &diag);
        return erg_cli_fail(&diag, rc);
    }
    if (!grid_path) {
        if (erg_profile_default_grid(o.target, grid_buf, &(size_t){sizeof grid_buf}) != ERG_OK) {
            fprintf(stderr, "erg profile: no default grid path (too long): give --grid\n");
            return ERG_EXIT_USAGE;
        }
        grid_path = grid_buf;
    }
    erg_op_sample *grid = NULL;
    size_t n = 0;
    rc = erg_ops_csv_read(grid_path, 1, &grid, &n, &diag);
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
    /* refuse an output that cannot be written before the run, not after it */
    char partial[4096] = "";
    int to_file = strcmp(out_path, "-") != 0;
    if (to_file && snprintf(partial, sizeof partial, "%s.partial", out_path) >= (int)sizeof partial)
        rc = erg_diag_set(&diag, ERG_EINVAL, out_path, "path too long");
    if (rc == ERG_OK)
        rc = erg_output_check(out_path, &diag);
    if (rc == ERG_OK && to_file)
        rc = erg_output_check(partial, &diag);
    if (rc != ERG_OK) {
        free(dims);
        free(out);
        return erg_cli_fail(&diag, rc);
    }
    pr.partial = to_file ? partial : NULL;
    pr.out = out;
    pr.start_s = now_s();
    if (pr.partial && !pr.quiet)
        fprintf(stderr,
                "erg profile: %zu configurations; each row goes into %s as it is measured "
                "(kept if the run stops), %s is written at the end\n",
                n, pr.partial, out_path);
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
            erg_monitor_open(meter, &mon, &diag) != ERG_OK ||
            erg_profile_energy_monitor(mon, &ew) != ERG_OK) {
            erg_monitor_close(mon);
            erg_meter_close(meter);
            free(dims);
            free(out);
            fprintf(stderr, "erg: cannot start the meter's sampler or monitor\n");
            return ERG_EXIT_NOMETER;
        }
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
        if (pr.partial && done > 0 && !pr.partial_failed)
            fprintf(stderr, "erg profile: the %zu configurations measured before are in %s\n", done,
                    pr.partial);
    } else {
        rc = erg_ops_csv_write(out_path, out, done, &diag);
        if (rc != ERG_OK)
            status = erg_cli_fail(&diag, rc);
        else if (pr.partial && unlink(pr.partial) != 0 && errno != ENOENT)
            fprintf(stderr, "erg profile: warning: cannot remove %s: %s\n", pr.partial,
                    strerror(errno));
        if (rc == ERG_OK && !pr.quiet)
            fprintf(stderr, "erg: wrote %zu configurations to %s (energy grade: %s)\n", done,
                    out_path, done ? erg_grade_name(out[0].grade) : "-");
    }
    free(dims);
    free(out);
    return status;
}

const struct erg_cli_command erg_cli_cmd_profile = {
    "profile",
    "profile primitive ops (RMSNorm, softmax, GEMM) into ops.csv; torch blocks and models", run};
