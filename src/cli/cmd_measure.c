/* SPDX-License-Identifier: MIT */
/* erg measure: parse the options, run the library's repetition protocol (erg_protocol_run) on the
 * command, print what it gives. The protocol, the files and the statistics are the library's. */
#include "cli.h"
#include "erg/measure.h"
#include "erg/meter.h"
#include "erg/signature.h"
#include "erg/stats.h"
#include "meter_cli.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char measure_help[] =
    "Usage: erg measure [-r N] [--warmup K] [--cooldown S] [--min-window S] [--timeout S]\n"
    "                   [--stable [--stable-timeout S]] [--baseline auto|none|W]\n"
    "                   [--calibration FILE] [--signature OUT.json] [--name NAME]\n"
    "                   [--json|--csv] [--export-json FILE] [--export-csv FILE]\n"
    "                   [--timeline FILE.csv] [--plot FILE.svg|png|pdf] [--period S]\n"
    "                   [--backends LIST] [--min-grade G]\n"
    "                   -- CMD ARGS...\n\n"
    "Run CMD N times, each inside a measurement window, and report per channel and in total the\n"
    "gross energy, the baseline (idle power x time) and the net energy, as mean ± sd (with\n"
    "median, min and max) over the runs whose command succeeded, the time, the command's user\n"
    "and system CPU time and erg's own, with the provenance grade, the state and the flags of\n"
    "every channel. A failing command is reported, not averaged in. Totals never count a domain\n"
    "twice. Figures are machine-wide: every process on the host is in them; the command's share\n"
    "of the machine's CPU time attributes part of the net energy to it (graded estimator).\n\n"
    "  -r, --runs N        runs to measure (default 5, at most 1000)\n"
    "  --warmup K          unmeasured runs first (default 0)\n"
    "  --cooldown S        rest between runs, s (default 0)\n"
    "  --min-window S      repeat CMD inside each window until it lasts S seconds, then divide\n"
    "                      (for work shorter than a counter's update period; says how many)\n"
    "  --timeout S         stop a run after S seconds (status 124; the run counts as failed)\n"
    "  --stable            first wait for the stable state (FECoM): temperatures below 55 °C "
    "(CPU)\n"
    "                      and 40 °C (GPU), CV of the last 20 power samples <= the calibrated CV;\n"
    "                      says what it waits for, and why it gives up after --stable-timeout\n"
    "  --stable-timeout S  longest wait for the stable state, s (default 120)\n"
    "  --baseline MODE     auto: idle power from the calibration file when there is one, else "
    "none;\n"
    "                      none; or a power in W subtracted from the total, which is then also\n"
    "                      the signature's static power s (default auto)\n"
    "  --calibration FILE  calibration file (default $XDG_CACHE_HOME/erg/calibration.json, "
    "else\n"
    "                      ~/.cache/erg/calibration.json, where 'erg calibrate' writes)\n"
    "  --signature OUT     write the run as a signature/1 file (s = calibrated idle power; "
    "without a\n"
    "                      calibration erg refuses, since s would be unknown: calibrate, give\n"
    "                      --calibration, or state s with --baseline W, --baseline 0 for s = 0)\n"
    "  --name NAME         element name in the signature (default: the command)\n"
    "  --json | --csv      machine-readable output (measurement/1); the command's stdout then "
    "goes\n"
    "                      to stderr so stdout holds one document\n"
    "  --export-json FILE  also write the measurement/1 document to FILE\n"
    "  --export-csv FILE   also write the CSV table to FILE\n"
    "  --timeline FILE     write each channel's power over time (CSV, one row per --period)\n"
    "  --plot FILE         draw that timeline; the extension names the format (svg, png, pdf)\n"
    "  --period S          sampler period, s (default 0.1)\n"
    "  --backends LIST     comma-separated backends to use (see 'erg meters'; unknown: exit 2)\n"
    "  --min-grade G       exit 3 unless the total is at least hw_shunt|model_based|estimator\n\n";

static const char measure_help2[] =
    "One run has an unknown variance, not 0: its sd is shown as '?', and a signature from it\n"
    "carries the meters' floor (resolution and update period) so that comparisons are not\n"
    "confident from a single run.\n"
    "Net energy is not clamped: a baseline above the gross energy (net < 0) is flagged\n"
    "baseline_exceeds_gross with a warning (the machine drew less than its calibrated idle power:\n"
    "the calibration was taken under load or in another state; recalibrate at rest). A "
    "calibration\n"
    "flagged not at rest by 'erg calibrate' is warned about whenever it is used.\n"
    "CSV columns: id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,...; "
    "flags\n"
    "are ';'-separated names, empty when none; the last row is the total.\n"
    "SIGINT or SIGTERM stops the runs, kills CMD's process group, reports the runs completed and\n"
    "exits 130 or 143.\n\n"
    "Exit status: 0 ok, 1 some run of CMD failed, 2 bad usage or input, 3 no usable meter,\n"
    "130/143 interrupted.\n";

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

static int interrupted(void *ud)
{
    (void)ud;
    return got_signal != 0;
}

struct opts {
    unsigned long runs, warmup;
    double cooldown_s, stable_timeout_s, period_s, min_window_s, timeout_s;
    int stable, json, csv;
    erg_baseline_mode mode;
    int baseline_auto;
    double fixed_w;
    const char *cal_path, *sig_path, *name, *backends, *min_grade;
    const char *export_json, *export_csv, *timeline, *plot;
    erg_grade min_grade_g; /* parsed --min-grade, valid when min_grade is set */
};

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {{"runs", required_argument, NULL, 'r'},
                                             {"warmup", required_argument, NULL, 'w'},
                                             {"cooldown", required_argument, NULL, 'c'},
                                             {"min-window", required_argument, NULL, 'm'},
                                             {"timeout", required_argument, NULL, 't'},
                                             {"stable", no_argument, NULL, 's'},
                                             {"stable-timeout", required_argument, NULL, 'T'},
                                             {"baseline", required_argument, NULL, 'b'},
                                             {"calibration", required_argument, NULL, 'C'},
                                             {"signature", required_argument, NULL, 'S'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"csv", no_argument, NULL, 'v'},
                                             {"export-json", required_argument, NULL, 'J'},
                                             {"export-csv", required_argument, NULL, 'V'},
                                             {"timeline", required_argument, NULL, 'L'},
                                             {"plot", required_argument, NULL, 'P'},
                                             {"period", required_argument, NULL, 'p'},
                                             {"backends", required_argument, NULL, 'B'},
                                             {"min-grade", required_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->runs = 5;
    o->stable_timeout_s = 120;
    o->period_s = 0.1;
    o->baseline_auto = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (erg_cli_count("measure", "--runs", optarg, 1, 1000, &o->runs))
                return ERG_EXIT_USAGE;
            break;
        case 'w':
            if (erg_cli_ulong("measure", "--warmup", optarg, &o->warmup))
                return ERG_EXIT_USAGE;
            break;
        case 'c':
            if (erg_cli_double("measure", "--cooldown", optarg, &o->cooldown_s))
                return ERG_EXIT_USAGE;
            if (o->cooldown_s < 0)
                return erg_cli_usage("measure", "--cooldown must be >= 0");
            break;
        case 'm':
            if (erg_cli_double("measure", "--min-window", optarg, &o->min_window_s))
                return ERG_EXIT_USAGE;
            if (!(o->min_window_s >= 0 && o->min_window_s <= 3600))
                return erg_cli_usage("measure", "--min-window must be 0 to 3600 s");
            break;
        case 't':
            if (erg_cli_double("measure", "--timeout", optarg, &o->timeout_s))
                return ERG_EXIT_USAGE;
            if (!(o->timeout_s > 0))
                return erg_cli_usage("measure", "--timeout must be > 0 s");
            break;
        case 'T':
            if (erg_cli_double("measure", "--stable-timeout", optarg, &o->stable_timeout_s))
                return ERG_EXIT_USAGE;
            if (!(o->stable_timeout_s >= 0))
                return erg_cli_usage("measure", "--stable-timeout must be >= 0 s");
            break;
        case 's':
            o->stable = 1;
            break;
        case 'b':
            o->baseline_auto = 0;
            if (strcmp(optarg, "auto") == 0) {
                o->baseline_auto = 1;
            } else if (strcmp(optarg, "none") == 0) {
                o->mode = ERG_BASELINE_NONE;
            } else {
                char *end;
                o->fixed_w = strtod(optarg, &end);
                if (end == optarg || *end != '\0' || !isfinite(o->fixed_w))
                    return erg_cli_usage("measure",
                                         "--baseline expects auto, none or a power in W, got '%s'",
                                         optarg);
                if (o->fixed_w < 0)
                    return erg_cli_usage("measure", "--baseline power must be >= 0 W");
                o->mode = ERG_BASELINE_FIXED_W;
            }
            break;
        case 'C':
            o->cal_path = optarg;
            break;
        case 'S':
            o->sig_path = optarg;
            break;
        case 'n':
            o->name = optarg;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'v':
            o->csv = 1;
            break;
        case 'J':
            o->export_json = optarg;
            break;
        case 'V':
            o->export_csv = optarg;
            break;
        case 'L':
            o->timeline = optarg;
            break;
        case 'P':
            o->plot = optarg;
            break;
        case 'p':
            if (erg_cli_double("measure", "--period", optarg, &o->period_s))
                return ERG_EXIT_USAGE;
            if (!(o->period_s >= 0.001 && o->period_s <= 10))
                return erg_cli_usage("measure", "--period must be 0.001 to 10 s");
            break;
        case 'B':
            o->backends = optarg;
            break;
        case 'g':
            /* checked here, with every other option, before anything runs */
            if (erg_grade_parse(optarg, &o->min_grade_g) != ERG_OK)
                return erg_cli_usage("measure",
                                     "--min-grade: unknown grade '%s' (hw_shunt, model_based or "
                                     "estimator)",
                                     optarg);
            o->min_grade = optarg;
            break;
        case 'h':
            fputs(measure_help, stdout);
            fputs(measure_help2, stdout);
            return -1;
        default:
            return erg_cli_bad_option("measure", argc, argv, "+:r:h", longopts);
        }
    }
    if (o->json && o->csv)
        return erg_cli_usage("measure", "--json and --csv exclude each other");
    if (optind >= argc)
        return erg_cli_usage("measure", "no command given (erg measure [OPTIONS] -- CMD ARGS...)");
    return 0;
}

/* Print s left-aligned in width display columns (UTF-8 aware: '±' is one column). */
static void cell(const char *s, int width)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        cols += (*p & 0xC0) != 0x80;
    fputs(s, stdout);
    for (; cols < width; cols++)
        putchar(' ');
}

/* Progress on a terminal (stderr), one line rewritten in place. */
struct progress {
    int on, shown;
};

static void progress(void *ud, const erg_protocol_progress *p)
{
    struct progress *pr = ud;
    if (!pr->on)
        return;
    char e[64] = "";
    if (isfinite(p->last_energy_j))
        snprintf(e, sizeof e, ", last %.4g J in %.4g s", p->last_energy_j, p->last_time_s);
    if (p->phase == ERG_PHASE_STABLE)
        fprintf(stderr, "\r\033[Kerg: waiting for the stable state (%.0f s): %.150s", p->elapsed_s,
                p->detail[0] ? p->detail : "stable");
    else
        fprintf(stderr, "\r\033[Kerg: %s %zu/%zu (%.1f s%s)",
                p->phase == ERG_PHASE_WARMUP ? "warm-up" : "run", p->done, p->total, p->elapsed_s,
                e);
    fflush(stderr);
    pr->shown = 1;
}

static void print_text(const erg_protocol_result *r, char **cmd)
{
    const erg_summary *s = r->summary;
    char a[96], b[96];
    printf("Command:");
    for (char **x = cmd; *x; x++)
        printf(" %s", *x);
    printf("\nRuns: %zu of %zu succeeded", r->runs_ok, r->runs_attempted);
    if (r->stop_status == ERG_EINTR)
        printf(" (interrupted: %zu of %zu requested were run)", r->runs_attempted,
               r->runs_requested);
    for (size_t k = 0; k < r->runs_attempted; k++)
        if (r->per_run[k].status != 0)
            printf("; run %zu exited %d%s", k + 1, r->per_run[k].status,
                   r->per_run[k].flags & ERG_RUN_TIMED_OUT ? " (timed out)" : "");
    size_t reps = r->runs_attempted ? r->per_run[0].repetitions : 0;
    if (reps > 1)
        printf("; %zu repetitions in the first window (figures are per repetition)", reps);
    printf("\n");
    if (r->stability_checked)
        printf("Stable state: %s%s (waited %.1f s for %s)\n",
               r->stability.stable ? "reached" : r->stability.reason,
               r->stability.stable && r->stability.estimator_only
                   ? " by the estimator's modelled load only"
                   : "",
               r->stability.waited_s, r->stability.waiting_for);
    if (s) {
        erg_format_mean_sd(s->time_s.mean, s->time_s.sd, a, sizeof a);
        printf("Time:     %s s   [median %.4g, min %.4g, max %.4g]\n", a, s->time_s.median,
               s->time_s.min, s->time_s.max);
        erg_format_mean_sd(r->user_cpu_s.mean, r->user_cpu_s.sd, a, sizeof a);
        erg_format_mean_sd(r->system_cpu_s.mean, r->system_cpu_s.sd, b, sizeof b);
        printf("CPU:      user %s s, system %s s; erg itself %.3g s per run\n", a, b,
               r->erg_cpu_s.mean);
        printf("Baseline: %s", erg_baseline_source_name(r->baseline));
        if (r->baseline != ERG_BASELINE_NONE)
            printf(" (%.4g W)", r->baseline_power_w);
        printf("\n");
        printf("Scope:    machine-wide (every process on the host is in these figures)");
        if (isfinite(r->attribution.cpu_share)) {
            printf("; the command's share of the machine's CPU time is %.3g %%",
                   100 * r->attribution.cpu_share);
            if (isfinite(r->attribution.attributed_energy_j))
                printf(", about %.4g J of the net energy (estimator)",
                       r->attribution.attributed_energy_j);
        } else {
            printf("; no per-process share (the machine's CPU time did not move in /proc/stat)");
        }
        printf("\n\n  ");
        static const int w[] = {34, 8, 12, 17, 24, 24};
        cell("channel", w[0]);
        cell(" domain", w[1] + 1);
        cell(" grade", w[2] + 1);
        cell(" state", w[3] + 1);
        cell(" energy (J)", w[4] + 1);
        cell(" net (J)", w[5] + 1);
        printf(" flags / reason\n");
        for (size_t i = 0; i < s->n_channels; i++) {
            const erg_channel_summary *c = &s->channels[i];
            char fl[160];
            erg_cli_flags_text(c->flags, fl, sizeof fl);
            snprintf(a, sizeof a, "-");
            snprintf(b, sizeof b, "-");
            if (c->state == ERG_READING_OK) {
                erg_format_mean_sd(c->energy_j.mean, c->energy_j.sd, a, sizeof a);
                erg_format_mean_sd(c->net_energy_j.mean, c->net_energy_j.sd, b, sizeof b);
            }
            printf("  ");
            cell(c->id, w[0]);
            putchar(' ');
            cell(erg_domain_name(c->domain), w[1]);
            putchar(' ');
            cell(erg_grade_name(c->grade), w[2]);
            putchar(' ');
            cell(erg_reading_state_name(c->state), w[3]);
            putchar(' ');
            cell(a, w[4]);
            putchar(' ');
            cell(b, w[5]);
            printf(" %s%s%s%s\n", fl, c->reason[0] ? " " : "", c->reason,
                   c->in_total ? " [in total]" : "");
        }
        if (s->n_total) {
            char fl[200], g[96], bl[96], n[96];
            erg_cli_flags_text(s->total_flags, fl, sizeof fl);
            erg_format_mean_sd(s->total_energy_j.mean, s->total_energy_j.sd, g, sizeof g);
            erg_format_mean_sd(s->total_baseline_j.mean, s->total_baseline_j.sd, bl, sizeof bl);
            erg_format_mean_sd(s->total_net_energy_j.mean, s->total_net_energy_j.sd, n, sizeof n);
            printf("\nTotal: %s J gross, %s J baseline, %s J net (%s)%s%s\n", g, bl, n,
                   erg_grade_name(s->total_grade), s->total_flags ? " flags: " : "",
                   s->total_flags ? fl : "");
            printf("       gross energy median %.4g, min %.4g, max %.4g J\n",
                   s->total_energy_j.median, s->total_energy_j.min, s->total_energy_j.max);
        } else {
            printf("\nTotal: no figure (%s)\n",
                   s->total_reason[0] ? s->total_reason : "no channel gave one in every run");
        }
        if (s->n_total && s->runs == 1)
            printf("Note: one run: its variance is unknown, not 0 (sd '?'); a signature or a "
                   "comparison uses the meters' floor instead (resolution and update period: "
                   "%.3g J, %.3g s); run -r 5 or more for a measured spread.\n",
                   s->energy_floor_j, s->time_floor_s);
        if (s->n_total && s->total_grade == ERG_GRADE_ESTIMATOR)
            printf("Note: the total rests on the estimator (no live hardware counter for the "
                   "CPU): it is an estimate.\n");
    }
    for (size_t k = 0; k < r->n_warnings; k++)
        printf("Warning: %s\n", r->warnings[k]);
}

/* The plot's format from its extension: 0 svg, 1 png, 2 pdf, -1 none of them. */
static int plot_format(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return -1;
    return strcasecmp(dot, ".svg") == 0   ? 0
           : strcasecmp(dot, ".png") == 0 ? 1
           : strcasecmp(dot, ".pdf") == 0 ? 2
                                          : -1;
}

/* Every output path is checked before the runs are spent on it. */
static int check_outputs(const struct opts *o)
{
    if (o->plot && plot_format(o->plot) < 0) {
        fprintf(stderr, "erg: %s: the plot's extension names its format: .svg, .png or .pdf\n",
                o->plot);
        return ERG_EXIT_USAGE;
    }
    const char *paths[] = {o->sig_path, o->export_json, o->export_csv, o->timeline, o->plot};
    const char *what[] = {"signature", "measurement", "CSV", "timeline", "plot"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        erg_diag d;
        erg_diag_clear(&d);
        if (paths[i] && erg_output_check(paths[i], &d) != ERG_OK) {
            fprintf(stderr, "erg: %s: cannot write the %s there: %s\n", paths[i], what[i],
                    d.detail);
            return ERG_EXIT_USAGE;
        }
    }
    return 0;
}

static int run(int argc, char **argv)
{
    struct opts o;
    int ex = parse(argc, argv, &o);
    if (ex)
        return ex < 0 ? ERG_EXIT_OK : ex;
    char **cmd = argv + optind;
    erg_diag d;
    erg_diag_clear(&d);
    erg_calibration *cal = NULL;
    erg_meter *m = NULL;
    erg_protocol_result *res = NULL;
    int rc = ERG_EXIT_OK;
    char defpath[1024];
    const char *cal_path = o.cal_path;
    int have_default = erg_calibration_default_path(defpath, &(size_t){sizeof defpath}) == ERG_OK;
    if (!cal_path && have_default && access(defpath, R_OK) == 0)
        cal_path = defpath;
    if (cal_path && (o.baseline_auto || o.stable || o.sig_path || o.cal_path)) {
        int r = erg_calibration_read_file(cal_path, &cal, &d);
        if (r != ERG_OK)
            return erg_cli_fail(&d, r);
    }
    if (o.sig_path && !cal && o.mode != ERG_BASELINE_FIXED_W) {
        /* s would be unknown: a signature with s = 0 puts idle power into d, and every
         * composition of it (parallel, frontier) is then wrong; refuse before running anything */
        fprintf(stderr,
                "erg: --signature needs the static power s, and there is no calibration (looked "
                "for %s): run 'erg calibrate' at rest first, give --calibration FILE, or state s "
                "with --baseline W (--baseline 0 for s = 0 W)\n",
                have_default ? defpath : "$XDG_CACHE_HOME or $HOME: neither set, or too long");
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    if ((rc = check_outputs(&o)))
        goto out;
    if (o.stable && !cal) {
        fprintf(stderr, "erg: --stable needs a calibration: run 'erg calibrate' first, or give "
                        "--calibration FILE\n");
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    if (o.baseline_auto)
        o.mode = cal ? ERG_BASELINE_CALIBRATED : ERG_BASELINE_NONE;
    if ((ex = erg_cli_meter_open(o.backends, &m))) {
        rc = ex;
        goto out;
    }
    int usable = 0;
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info ci;
        usable += erg_meter_channel_info(m, i, &ci) == ERG_OK && ci.usable;
    }
    if (!usable) {
        fprintf(stderr, "erg: no usable meter: every channel was declined (see 'erg meters')\n");
        rc = ERG_EXIT_NOMETER;
        goto out;
    }
    /* SIGINT/SIGTERM stop the runs (no SA_RESTART: the wait for the command wakes at once) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (erg_meter_sampler_start(m, o.period_s) != ERG_OK) {
        fprintf(stderr, "erg: cannot start the sampler thread\n");
        rc = ERG_EXIT_NOMETER;
        goto out;
    }
    erg_command c;
    erg_command_init(&c, (const char *const *)cmd);
    c.stdout_to_stderr = o.json || o.csv;
    c.timeout_s = o.timeout_s;
    c.interrupted = interrupted;
    struct progress pr = {isatty(STDERR_FILENO) && !getenv("ERG_NO_PROGRESS"), 0};
    erg_protocol_options po;
    erg_protocol_options_init(&po);
    po.runs = o.runs;
    po.warmup = o.warmup;
    po.cooldown_s = o.cooldown_s;
    po.min_window_s = o.min_window_s;
    po.stable = o.stable;
    po.stability.timeout_s = o.stable_timeout_s;
    po.baseline = o.mode;
    po.baseline_w = o.fixed_w;
    po.calibration = cal;
    po.calibration_path = cal_path;
    po.timeline_period_s = o.timeline || o.plot ? o.period_s : 0.0;
    po.command = (const char *const *)cmd;
    po.run = erg_command_run;
    po.run_ud = &c;
    po.progress = progress;
    po.progress_ud = &pr;
    po.interrupted = interrupted;
    int r = erg_protocol_run(m, &po, &res, &d);
    erg_meter_sampler_stop(m);
    if (pr.shown)
        fputs("\r\033[K", stderr);
    if (r != ERG_OK) {
        rc = erg_cli_fail(&d, r);
        goto out;
    }
    if (res->stop_status != ERG_OK && res->stop_status != ERG_EINTR) {
        /* the command could not run at all */
        fprintf(stderr, "erg: %s\n", c.error[0] ? c.error : erg_strerror(res->stop_status));
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    if (res->stability_checked && !res->stability.stable && res->stop_status == ERG_OK)
        fprintf(stderr, "erg: not stable: %s; measuring anyway\n", res->stability.reason);
    /* the report first: a signature or export that cannot be written (a full disk) must not
     * lose the runs */
    erg_signature sig;
    int m1 = 0, have_sig = 0;
    if (o.sig_path && res->summary && res->stop_status == ERG_OK) {
        if (erg_protocol_signature(res, o.name, &sig, &m1, &d) == ERG_OK)
            have_sig = 1;
        else
            fprintf(stderr, "erg: no signature written: %s\n", d.detail);
    }
    int src = ERG_OK; /* stdout can fail (a closed pipe, a full disk): say so, exit 1 */
    if (o.json)
        src = erg_protocol_write_json("-", res, m1, &d);
    else if (o.csv)
        src = erg_protocol_write_csv("-", res, &d);
    else
        print_text(res, cmd);
    if (src != ERG_OK)
        rc = erg_cli_fail(&d, src);
    if (o.csv)
        for (size_t k = 0; k < res->n_warnings; k++)
            fprintf(stderr, "erg: warning: %s\n", res->warnings[k]);
    fflush(stdout);
    int wrc = ERG_OK;
    if (o.export_json && (wrc = erg_protocol_write_json(o.export_json, res, m1, &d)) != ERG_OK)
        rc = erg_cli_fail(&d, wrc);
    if (o.export_csv && (wrc = erg_protocol_write_csv(o.export_csv, res, &d)) != ERG_OK)
        rc = erg_cli_fail(&d, wrc);
    if (o.timeline && (wrc = erg_protocol_write_timeline(o.timeline, res, &d)) != ERG_OK)
        rc = erg_cli_fail(&d, wrc);
    if (o.plot && (wrc = erg_protocol_plot_timeline(res, o.plot, &d)) != ERG_OK)
        rc = erg_cli_fail(&d, wrc);
    if (o.sig_path) {
        if (!res->summary && res->stop_status == ERG_OK)
            fprintf(stderr, "erg: every run failed: no signature written\n");
        else if (res->stop_status == ERG_EINTR)
            fprintf(stderr, "erg: interrupted: no signature written\n");
        else if (!have_sig && rc == ERG_EXIT_OK)
            rc = ERG_EXIT_NOMETER;
        else if (have_sig &&
                 (wrc = erg_summary_write_signature(o.sig_path, &sig, res->summary, &d)) != ERG_OK)
            rc = erg_cli_fail(&d, wrc);
    }
    if (res->stop_status == ERG_EINTR) {
        rc = 128 + (got_signal ? got_signal : SIGINT);
        goto out;
    }
    for (size_t k = 0; k < res->runs_attempted; k++)
        if (res->per_run[k].status != 0 && rc == ERG_EXIT_OK)
            rc = ERG_EXIT_CHECK;
    if (rc == ERG_EXIT_OK && o.min_grade) {
        const erg_summary *s = res->summary;
        if (!s || !s->n_total || s->total_grade > o.min_grade_g) {
            fprintf(stderr, "erg: total grade %s is below the required %s\n",
                    s && s->n_total ? erg_grade_name(s->total_grade) : "none", o.min_grade);
            rc = ERG_EXIT_NOMETER;
        }
    }
out:
    erg_protocol_result_free(res);
    erg_meter_close(m);
    erg_calibration_free(cal);
    return rc;
}

const struct erg_cli_command erg_cli_cmd_measure = {
    "measure", "run a command and measure its energy (gross, baseline, net)", run};
