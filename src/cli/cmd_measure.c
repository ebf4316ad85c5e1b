/* SPDX-License-Identifier: MIT */
/* erg measure: run a command N times inside measurement windows and report gross, baseline and
 * net energy per channel and in total, mean ± sd, with grades and flags; optionally write the
 * run's signature/1. */
#include "cli.h"
#include "erg/measure.h"
#include "erg/meter.h"
#include "erg/signature.h"
#include "meter_cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char measure_help[] =
    "Usage: erg measure [-r N] [--warmup K] [--cooldown S] [--stable [--stable-timeout S]]\n"
    "                   [--baseline auto|none|W] [--calibration FILE] [--signature OUT.json]\n"
    "                   [--name NAME] [--json|--csv] [--period S] [--backends LIST]\n"
    "                   [--min-grade G] -- CMD ARGS...\n\n"
    "Run CMD N times, each inside a measurement window, and report per channel and in total the\n"
    "gross energy, the baseline (idle power x time) and the net energy, each as mean ± sd over "
    "the\n"
    "runs whose command succeeded, with the provenance grade, the state and the flags of every\n"
    "channel. A failing command is reported, not averaged in. Totals never count a domain "
    "twice.\n\n"
    "  -r, --runs N        runs to measure (default 5)\n"
    "  --warmup K          unmeasured runs first (default 0)\n"
    "  --cooldown S        rest between runs, s (default 0)\n"
    "  --stable            first wait for the stable state (FECoM): temperatures below 55 °C "
    "(CPU)\n"
    "                      and 40 °C (GPU), CV of the last 20 power samples <= the calibrated CV;\n"
    "                      gives up after --stable-timeout S and says so\n"
    "  --stable-timeout S  longest wait for the stable state, s (default 120)\n"
    "  --baseline MODE     auto: idle power from the calibration file when there is one, else "
    "none;\n"
    "                      none; or a power in W subtracted from the total (default auto)\n"
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
    "  --period S          sampler period, s (default 0.1)\n"
    "  --backends LIST     comma-separated backends to use (see 'erg meters'; unknown: exit 2)\n"
    "  --min-grade G       exit 3 unless the total is at least hw_shunt|model_based|estimator\n\n"
    "Net energy is not clamped: a baseline above the gross energy (net < 0) is flagged\n"
    "baseline_exceeds_gross with a warning (the machine drew less than its calibrated idle power:\n"
    "the calibration was taken under load or in another state; recalibrate at rest). A calibration\n"
    "flagged not at rest by 'erg calibrate' is warned about whenever it is used.\n"
    "CSV columns: id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,...; flags\n"
    "are ';'-separated names, empty when none; the last row is the total.\n\n"
    "Exit status: 0 ok, 1 some run of CMD failed, 2 bad usage or input, 3 no usable meter.\n";

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Run argv; return its exit status (128+signal when killed), or -1 when it cannot start. */
static int run_child(char **argv, int stdout_to_stderr)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (stdout_to_stderr)
        posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "erg: %s: cannot run: %s\n", argv[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

/* Warnings of a measurement: sentences for people (text: after the total; --json: "warnings";
 * --csv: stderr). */
#define MAX_WARNINGS 6
struct warnings {
    size_t n;
    char text[MAX_WARNINGS][2048];
};

__attribute__((format(printf, 2, 3))) static void warn_add(struct warnings *w, const char *fmt,
                                                           ...)
{
    if (w->n == MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text[w->n++], sizeof w->text[0], fmt, ap);
    va_end(ap);
}

/* CSV flags: ';'-separated names, empty when none. */
static void csv_flags(unsigned flags, char *buf, size_t size)
{
    erg_cli_flags_text(flags, buf, size);
    if (strcmp(buf, "-") == 0)
        buf[0] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = ';';
}

static json_t *msd(erg_mean_sd v)
{
    return json_pack("{s:o, s:o}", "mean", erg_cli_num(v.mean), "sd", erg_cli_num(v.sd));
}

struct opts {
    unsigned long runs, warmup;
    double cooldown_s, stable_timeout_s, period_s;
    int stable, json, csv;
    erg_baseline_mode mode;
    int baseline_auto;
    double fixed_w;
    const char *cal_path, *sig_path, *name, *backends, *min_grade;
    erg_grade min_grade_g; /* parsed --min-grade, valid when min_grade is set */
};

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {{"runs", required_argument, NULL, 'r'},
                                             {"warmup", required_argument, NULL, 'w'},
                                             {"cooldown", required_argument, NULL, 'c'},
                                             {"stable", no_argument, NULL, 's'},
                                             {"stable-timeout", required_argument, NULL, 'T'},
                                             {"baseline", required_argument, NULL, 'b'},
                                             {"calibration", required_argument, NULL, 'C'},
                                             {"signature", required_argument, NULL, 'S'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"csv", no_argument, NULL, 'v'},
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
            if (erg_cli_ulong("measure", "--runs", optarg, &o->runs) || o->runs < 1 ||
                o->runs > 1000)
                return o->runs < 1 || o->runs > 1000
                           ? erg_cli_usage("measure", "--runs must be 1 to 1000")
                           : ERG_EXIT_USAGE;
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

static void print_text(const struct opts *o, const erg_summary *s, char **cmd, const int *status,
                       size_t nruns, const char *baseline_src, const erg_stability_result *st,
                       const struct warnings *w)
{
    printf("Command:");
    for (char **a = cmd; *a; a++)
        printf(" %s", *a);
    printf("\nRuns: %zu of %zu succeeded", s->runs, nruns);
    for (size_t k = 0; k < nruns; k++)
        if (status[k] != 0)
            printf("; run %zu exited %d", k + 1, status[k]);
    printf("\n");
    if (st)
        printf("Stable state: %s\n", st->stable ? "reached" : st->reason);
    if (!s->runs) {
        for (size_t k = 0; k < w->n; k++)
            printf("Warning: %s\n", w->text[k]);
        return;
    }
    printf("Time: %.6g ± %.3g s   Baseline: %s\n\n", s->time_s.mean, s->time_s.sd, baseline_src);
    printf("  %-34s %-8s %-12s %-17s %-22s %-22s %s\n", "channel", "domain", "grade", "state",
           "energy (J)", "net (J)", "flags / reason");
    for (size_t i = 0; i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        char fl[160], e[40] = "-", n[40] = "-";
        erg_cli_flags_text(c->flags, fl, sizeof fl);
        if (c->state == ERG_READING_OK) {
            snprintf(e, sizeof e, "%.6g ± %.3g", c->energy_j.mean, c->energy_j.sd);
            snprintf(n, sizeof n, "%.6g ± %.3g", c->net_energy_j.mean, c->net_energy_j.sd);
        }
        printf("  %-34s %-8s %-12s %-17s %-22s %-22s %s%s%s%s\n", c->id, erg_domain_name(c->domain),
               erg_grade_name(c->grade), erg_reading_state_name(c->state), e, n, fl,
               c->reason[0] ? " " : "", c->reason, c->in_total ? " [in total]" : "");
    }
    if (s->n_total) {
        char fl[200];
        erg_cli_flags_text(s->total_flags, fl, sizeof fl);
        printf("\nTotal: %.6g ± %.3g J gross, %.6g ± %.3g J baseline, %.6g ± %.3g J net (%s)%s%s\n",
               s->total_energy_j.mean, s->total_energy_j.sd, s->total_baseline_j.mean,
               s->total_baseline_j.sd, s->total_net_energy_j.mean, s->total_net_energy_j.sd,
               erg_grade_name(s->total_grade), s->total_flags ? " flags: " : "",
               s->total_flags ? fl : "");
    }
    else
        printf("\nTotal: no figure (no channel gave one in every run)\n");
    if (s->n_total && s->total_grade == ERG_GRADE_ESTIMATOR)
        printf("Note: the total rests on the estimator (no live hardware counter for the CPU): it "
               "is an estimate.\n");
    for (size_t k = 0; k < w->n; k++)
        printf("Warning: %s\n", w->text[k]);
    (void)o;
}

static void print_csv(const erg_summary *s, const struct warnings *w)
{
    printf("id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,energy_j_sd,"
           "baseline_j_mean,baseline_j_sd,net_energy_j_mean,net_energy_j_sd,in_total\n");
    for (size_t i = 0; i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        char fl[200];
        csv_flags(c->flags, fl, sizeof fl);
        printf("%s,%s,%s,%s,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", c->id,
               erg_domain_name(c->domain), c->device, erg_grade_name(c->grade),
               erg_reading_state_name(c->state), fl, s->time_s.mean, s->time_s.sd,
               c->energy_j.mean, c->energy_j.sd, c->baseline_j.mean, c->baseline_j.sd,
               c->net_energy_j.mean, c->net_energy_j.sd, c->in_total);
    }
    char fl[200];
    csv_flags(s->total_flags, fl, sizeof fl);
    printf("total,,,%s,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,1\n",
           erg_grade_name(s->total_grade), s->n_total ? "ok" : "no_data", fl, s->time_s.mean,
           s->time_s.sd, s->total_energy_j.mean, s->total_energy_j.sd, s->total_baseline_j.mean,
           s->total_baseline_j.sd, s->total_net_energy_j.mean, s->total_net_energy_j.sd);
    for (size_t k = 0; k < w->n; k++)
        fprintf(stderr, "erg: warning: %s\n", w->text[k]);
}

/* What each attempted run gave, failed runs included (the summary holds the successful ones). */
struct run_rec {
    double time_s, total_energy_j;
    erg_grade grade;
    size_t n_total;
};

static json_t *to_json(const erg_summary *s, char **cmd, const int *status,
                       const struct run_rec *rec, size_t nruns, const char *baseline_src,
                       double baseline_w, const erg_stability_result *st, int m1_raised,
                       const struct warnings *w)
{
    json_t *root = json_object(), *ca = json_array(), *argv = json_array(), *sts = json_array();
    json_object_set_new(root, "erg", json_string("measurement/1"));
    for (char **a = cmd; *a; a++)
        json_array_append_new(argv, json_string(*a));
    json_object_set_new(root, "command", argv);
    json_object_set_new(root, "runs", json_integer((json_int_t)s->runs));
    json_object_set_new(root, "runs_attempted", json_integer((json_int_t)nruns));
    int first_fail = 0;
    for (size_t k = 0; k < nruns; k++) {
        json_array_append_new(sts, json_integer(status[k]));
        if (status[k] != 0 && first_fail == 0)
            first_fail = status[k];
    }
    json_object_set_new(root, "exit_status", json_integer(first_fail));
    json_object_set_new(root, "exit_statuses", sts);
    json_t *per = json_array();
    for (size_t k = 0; k < nruns; k++)
        json_array_append_new(
            per,
            json_pack("{s:i, s:o, s:o, s:o}", "exit_status", status[k], "time_s",
                      erg_cli_num(rec[k].time_s), "energy_j", erg_cli_num(rec[k].total_energy_j),
                      "grade",
                      rec[k].n_total ? json_string(erg_grade_name(rec[k].grade)) : json_null()));
    json_object_set_new(root, "per_run", per);
    json_object_set_new(root, "time_s", msd(s->time_s));
    for (size_t i = 0; i < s->n_channels; i++) {
        const erg_channel_summary *c = &s->channels[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(c->id));
        json_object_set_new(o, "domain", json_string(erg_domain_name(c->domain)));
        json_object_set_new(o, "device", json_string(c->device));
        json_object_set_new(o, "grade", json_string(erg_grade_name(c->grade)));
        json_object_set_new(o, "state", json_string(erg_reading_state_name(c->state)));
        json_object_set_new(o, "reason", json_string(c->reason));
        json_object_set_new(o, "flags", erg_cli_flags_json(c->flags));
        json_object_set_new(o, "energy_j", msd(c->energy_j));
        json_object_set_new(o, "baseline_j", msd(c->baseline_j));
        json_object_set_new(o, "net_energy_j", msd(c->net_energy_j));
        json_object_set_new(o, "in_total", json_boolean(c->in_total));
        json_array_append_new(ca, o);
    }
    json_object_set_new(root, "channels", ca);
    json_t *tot = json_object(), *ids = json_array();
    json_object_set_new(tot, "energy_j", msd(s->total_energy_j));
    json_object_set_new(tot, "baseline_j", msd(s->total_baseline_j));
    json_object_set_new(tot, "net_energy_j", msd(s->total_net_energy_j));
    json_object_set_new(tot, "flags", erg_cli_flags_json(s->total_flags));
    json_object_set_new(tot, "grade",
                        s->n_total ? json_string(erg_grade_name(s->total_grade)) : json_null());
    for (size_t i = 0; i < s->n_total; i++)
        json_array_append_new(ids, json_string(s->total_ids[i]));
    json_object_set_new(tot, "channels", ids);
    json_object_set_new(root, "total", tot);
    json_object_set_new(
        root, "baseline",
        json_pack("{s:s, s:o}", "source", baseline_src, "power_w", erg_cli_num(baseline_w)));
    if (st)
        json_object_set_new(root, "stable",
                            json_pack("{s:b, s:f, s:s}", "reached", st->stable, "waited_s",
                                      st->waited_s, "reason", st->reason));
    if (s->n_total && s->total_grade == ERG_GRADE_ESTIMATOR)
        json_object_set_new(root, "note",
                            json_string("the total rests on the estimator (no live "
                                        "hardware counter for the CPU): it is an "
                                        "estimate"));
    json_t *wa = json_array();
    for (size_t k = 0; k < w->n; k++)
        json_array_append_new(wa, json_string(w->text[k]));
    json_object_set_new(root, "warnings", wa);
    if (m1_raised)
        json_object_set_new(root, "signature_note",
                            json_string("var_E raised to s^2 var_T (Axiom M1)"));
    return root;
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
    /* calibration */
    erg_calibration *cal = calloc(1, sizeof *cal);
    erg_measurement *runs = calloc(o.runs, sizeof *runs);
    int *status = calloc(o.runs, sizeof *status);
    struct run_rec *rec = calloc(o.runs, sizeof *rec);
    erg_summary *sum = calloc(1, sizeof *sum);
    struct warnings *warn = calloc(1, sizeof *warn);
    erg_meter *m = NULL;
    erg_monitor *mon = NULL;
    int have_cal = 0, rc = ERG_EXIT_OK;
    if (!cal || !runs || !status || !sum || !rec || !warn) {
        fprintf(stderr, "erg: out of memory\n");
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    char defpath[1024];
    const char *cal_path = o.cal_path;
    int have_default = erg_calibration_default_path(defpath, sizeof defpath) > 0;
    if (!cal_path && have_default && access(defpath, R_OK) == 0)
        cal_path = defpath;
    if (cal_path && (o.baseline_auto || o.stable || o.sig_path || o.cal_path)) {
        int r = erg_calibration_read_file(cal_path, cal, &d);
        if (r != ERG_OK) {
            rc = erg_cli_fail(&d, r);
            goto out;
        }
        have_cal = 1;
        if (cal->flags) {
            char why[1800];
            erg_calibration_describe(cal, why, sizeof why);
            warn_add(warn, "calibration %s: %s", cal_path, why);
        }
    }
    if (o.sig_path && !have_cal && o.mode != ERG_BASELINE_FIXED_W) {
        /* s would be unknown: a signature with s = 0 puts idle power into d, and every
         * composition of it (parallel, frontier) is then wrong; refuse before running anything */
        fprintf(stderr,
                "erg: --signature needs the static power s, and there is no calibration (looked "
                "for %s): run 'erg calibrate' at rest first, give --calibration FILE, or state s "
                "with --baseline W (--baseline 0 for s = 0 W)\n",
                have_default ? defpath : "$XDG_CACHE_HOME or $HOME, neither set");
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    if (o.sig_path && strcmp(o.sig_path, "-") != 0) {
        /* the folder the signature goes to must exist before N runs are spent on it */
        char dir[1024];
        const char *slash = strrchr(o.sig_path, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == o.sig_path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - o.sig_path), o.sig_path);
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(dir, W_OK) != 0) {
            int e = errno;
            fprintf(stderr, "erg: %s: cannot write the signature there: %s: %s\n", o.sig_path,
                    dir, stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode) ? "not a folder" : strerror(e));
            rc = ERG_EXIT_USAGE;
            goto out;
        }
    }
    if (o.stable && !have_cal) {
        fprintf(stderr, "erg: --stable needs a calibration: run 'erg calibrate' first, or give "
                        "--calibration FILE\n");
        rc = ERG_EXIT_USAGE;
        goto out;
    }
    if (o.baseline_auto)
        o.mode = have_cal ? ERG_BASELINE_CALIBRATED : ERG_BASELINE_NONE;
    if ((ex = erg_cli_meter_open(o.backends, &m))) {
        rc = ex;
        goto out;
    }
    int usable = 0;
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info ci;
        erg_meter_channel_info(m, i, &ci);
        usable += ci.usable;
    }
    if (!usable) {
        fprintf(stderr, "erg: no usable meter: every channel was declined (see 'erg meters')\n");
        rc = ERG_EXIT_NOMETER;
        goto out;
    }
    if (erg_meter_sampler_start(m, o.period_s) != ERG_OK) {
        fprintf(stderr, "erg: cannot start the sampler thread\n");
        rc = ERG_EXIT_NOMETER;
        goto out;
    }
    erg_stability_result st, *stp = NULL;
    if (o.stable) {
        erg_stability_options so;
        erg_stability_options_init(&so);
        so.timeout_s = o.stable_timeout_s;
        erg_wait_stable(m, cal, &so, &st, NULL);
        stp = &st;
        if (!st.stable)
            fprintf(stderr, "erg: not stable: %s; measuring anyway\n", st.reason);
    }
    int quiet = o.json || o.csv;
    for (unsigned long k = 0; k < o.warmup; k++)
        if (run_child(cmd, quiet) < 0) {
            rc = ERG_EXIT_USAGE;
            goto out;
        }
    if (erg_monitor_open(m, &mon, &d) != ERG_OK) {
        rc = erg_cli_fail(&d, d.status);
        goto out;
    }
    size_t nok = 0;
    for (unsigned long k = 0; k < o.runs; k++) {
        if (k > 0)
            sleep_s(o.cooldown_s);
        erg_window_begin(mon, "run", NULL);
        status[k] = run_child(cmd, quiet);
        erg_measurement r;
        erg_window_end(mon, "run", 0, &r, NULL);
        rec[k] = (struct run_rec){r.time_s, r.total_energy_j, r.total_grade, r.n_total};
        if (status[k] < 0) {
            rc = ERG_EXIT_USAGE;
            goto out;
        }
        if (status[k] == 0)
            runs[nok++] = r;
    }
    erg_meter_sampler_stop(m);
    const char *src = o.mode == ERG_BASELINE_CALIBRATED ? "calibration"
                      : o.mode == ERG_BASELINE_FIXED_W  ? "fixed"
                                                        : "none";
    double base_w = o.mode == ERG_BASELINE_CALIBRATED ? cal->idle_power_w
                    : o.mode == ERG_BASELINE_FIXED_W  ? o.fixed_w
                                                      : 0.0;
    if (nok) {
        if (erg_summarize(runs, nok, o.mode, have_cal ? cal : NULL, o.fixed_w, sum, &d) != ERG_OK) {
            rc = erg_cli_fail(&d, d.status);
            goto out;
        }
    } else {
        memset(sum, 0, sizeof *sum);
        sum->time_s = sum->total_energy_j = sum->total_baseline_j = sum->total_net_energy_j =
            (erg_mean_sd){NAN, NAN};
    }
    if (nok && sum->n_total && o.mode == ERG_BASELINE_CALIBRATED)
        for (size_t i = 0; i < sum->n_total; i++)
            if (!isfinite(erg_calibration_idle_w(cal, sum->total_ids[i])))
                warn_add(warn,
                         "the calibration has no idle power for %s, which the total sums: its "
                         "baseline and static power count as 0 W; calibrate with the same "
                         "backends",
                         sum->total_ids[i]);
    if (nok && sum->n_total && (sum->total_flags & ERG_FLAG_BASELINE_EXCEEDS_GROSS))
        warn_add(warn,
                 "baseline_exceeds_gross: the baseline (%.4g J = %.4g W x %.4g s) exceeds the "
                 "gross energy (%.4g J), so the net energy %.4g J is negative: the machine drew "
                 "less than its calibrated idle power, so the load or state changed since "
                 "calibration (or it was calibrated while busy). Net figures are reported "
                 "unclamped%s; recalibrate at rest with 'erg calibrate'.",
                 sum->total_baseline_j.mean,
                 sum->time_s.mean > 0 ? sum->total_baseline_j.mean / sum->time_s.mean : (double)NAN,
                 sum->time_s.mean, sum->total_energy_j.mean, sum->total_net_energy_j.mean,
                 o.sig_path ? "; the signature's dynamic energy d is clamped at 0" : "");
    int m1 = 0;
    if (o.sig_path) {
        erg_signature sig;
        char name[ERG_SIG_NAME_MAX];
        snprintf(name, sizeof name, "%s", o.name ? o.name : cmd[0]);
        if (!nok) {
            fprintf(stderr, "erg: every run failed: no signature written\n");
        } else if (erg_summary_signature(sum, name, NULL, &sig, &m1, &d) != ERG_OK) {
            fprintf(stderr, "erg: no signature written: %s\n", d.detail);
            if (rc == ERG_EXIT_OK)
                rc = ERG_EXIT_NOMETER;
        } else if (erg_summary_write_signature(o.sig_path, &sig, sum, &d) != ERG_OK) {
            rc = erg_cli_fail(&d, d.status);
            goto out;
        }
    }
    if (o.json)
        erg_cli_print_json(to_json(sum, cmd, status, rec, o.runs, src, base_w, stp, m1, warn));
    else if (o.csv)
        print_csv(sum, warn);
    else
        print_text(&o, sum, cmd, status, o.runs, src, stp, warn);
    for (unsigned long k = 0; k < o.runs; k++)
        if (status[k] != 0 && rc == ERG_EXIT_OK)
            rc = ERG_EXIT_CHECK;
    if (rc == ERG_EXIT_OK && o.min_grade) {
        if (!sum->n_total || sum->total_grade > o.min_grade_g) {
            fprintf(stderr, "erg: total grade %s is below the required %s\n",
                    sum->n_total ? erg_grade_name(sum->total_grade) : "none", o.min_grade);
            rc = ERG_EXIT_NOMETER;
        }
    }
out:
    erg_monitor_close(mon);
    erg_meter_close(m);
    free(cal);
    free(runs);
    free(status);
    free(rec);
    free(sum);
    free(warn);
    return rc;
}

const struct erg_cli_command erg_cli_cmd_measure = {
    "measure", "run a command and measure its energy (gross, baseline, net)", run};
