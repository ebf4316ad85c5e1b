/* SPDX-License-Identifier: MIT */
/* erg calibrate: the stable state (FECoM Section 2.3): per-channel idle power and the coefficient
 * of variation of windowed power at rest, written to a calibration file. */
#include "cli.h"
#include "erg/measure.h"
#include "erg/meter.h"
#include "meter_cli.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char calibrate_help[] =
    "Usage: erg calibrate [--duration S] [--window S] [--out FILE] [--json] [--backends LIST]\n\n"
    "Measure the machine at rest (run nothing else meanwhile): for every usable channel, the idle\n"
    "power (mean of windowed power) and the coefficient of variation sigma/mu of windowed power\n"
    "(FECoM's stable state, Section 2.3). 'erg measure' uses the file for its baseline (idle power "
    "x\n"
    "time), for --stable (CV of the last 20 samples <= the calibrated CV) and for the static power "
    "s\n"
    "of --signature.\n\n"
    "  --duration S   time at rest, s (default 10; FECoM used about 10 minutes)\n"
    "  --window S     power window, s (default 0.5, FECoM's sampling interval)\n"
    "  --out FILE     calibration file (default $XDG_CACHE_HOME/erg/calibration.json, else\n"
    "                 ~/.cache/erg/calibration.json); written whole or not at all\n"
    "  --json         print the calibration (calibration/1) on stdout as well\n"
    "  --backends LIST  comma-separated backends to use (default $ERG_BACKENDS, else all)\n\n"
    "A machine that is not at rest is noticed: an estimator channel whose mean CPU utilisation\n"
    "exceeds 10 % (flag busy; pinned_at_ceiling when it sat at its full-load power, where a CV of\n"
    "0 means saturation), or any channel whose CV exceeds 0.20 (high_cv), is flagged in the file\n"
    "(\"not_at_rest\": true, \"flags\", \"warning\") and a warning goes to stderr; 'erg measure'\n"
    "repeats it whenever it uses the file. A steady load on a hardware counter has a low CV and\n"
    "cannot be told from rest: keep the machine idle.\n\n"
    "On a terminal, progress goes to stderr. SIGINT or SIGTERM stops it: nothing is written, exit\n"
    "130 or 143.\n\n"
    "Exit status: 0 ok (also when flagged: the file is written, with its flags), 2 bad usage or\n"
    "unwritable file, 3 no meter gave a figure, 130/143 interrupted.\n";

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

static void progress(void *ud, double done_s, double total_s)
{
    int *shown = ud;
    fprintf(stderr, "\r\033[Kerg: calibrating at rest: %.1f of %.1f s", done_s, total_s);
    fflush(stderr);
    *shown = 1;
}

/* mkdir -p of the folder that holds path. */
static void make_parent(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf)
        return;
    *slash = '\0';
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"duration", required_argument, NULL, 'd'},
                                             {"window", required_argument, NULL, 'w'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"backends", required_argument, NULL, 'b'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    double duration_s = 10, window_s = 0.5;
    const char *out = NULL, *backends = NULL;
    int json = 0, c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (erg_cli_double("calibrate", "--duration", optarg, &duration_s))
                return ERG_EXIT_USAGE;
            break;
        case 'w':
            if (erg_cli_double("calibrate", "--window", optarg, &window_s))
                return ERG_EXIT_USAGE;
            break;
        case 'o':
            out = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'b':
            backends = optarg;
            break;
        case 'h':
            fputs(calibrate_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("calibrate", argc, argv, ":o:h", longopts);
        }
    }
    if (optind < argc)
        return erg_cli_usage("calibrate", "unexpected argument '%s'", argv[optind]);
    if (!(window_s >= 0.01 && window_s <= 60))
        return erg_cli_usage("calibrate", "--window must be 0.01 to 60 s");
    if (!(duration_s >= 2 * window_s && duration_s <= 86400))
        return erg_cli_usage("calibrate", "--duration must be at least two windows (and <= 1 day)");
    char defpath[1024];
    if (!out) {
        int st = erg_calibration_default_path(defpath, &(size_t){sizeof defpath});
        if (st == ERG_ENOENT)
            return erg_cli_usage("calibrate", "no $XDG_CACHE_HOME or $HOME: give --out FILE");
        if (st != ERG_OK)
            return erg_cli_usage("calibrate", "the default calibration path is too long: give "
                                              "--out FILE");
        out = defpath;
        make_parent(out);
    }
    erg_meter *m;
    int ex = erg_cli_meter_open(backends, &m);
    if (ex)
        return ex;
    erg_calibration *cal = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    /* the output must be writable before the calibration's duration is spent on it */
    int rc = erg_output_check(out, &d);
    if (rc != ERG_OK) {
        erg_meter_close(m);
        return erg_cli_fail(&d, rc);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int shown = 0;
    erg_calibrate_hooks hooks = {NULL, NULL, interrupted, NULL};
    if (isatty(STDERR_FILENO) && !getenv("ERG_NO_PROGRESS")) {
        hooks.progress = progress;
        hooks.progress_ud = &shown;
    }
    rc = erg_meter_sampler_start(m, 0);
    if (rc == ERG_OK)
        rc = erg_calibrate_with(m, duration_s, window_s, &hooks, &cal, &d);
    erg_meter_sampler_stop(m);
    if (shown)
        fputs("\r\033[K", stderr);
    if (rc == ERG_EINTR) {
        fprintf(stderr, "erg: %s: nothing written\n", d.detail);
        erg_meter_close(m);
        return 128 + (got_signal ? got_signal : SIGINT);
    }
    if (rc == ERG_OK)
        rc = erg_calibration_write_file(out, cal, &d);
    if (rc != ERG_OK) {
        erg_meter_close(m);
        erg_calibration_free(cal);
        return erg_cli_fail(&d, rc);
    }
    if (json) {
        rc = erg_calibration_write_file("-", cal,
                                        &d); /* stdout can fail: a closed pipe, full disk */
        if (rc != ERG_OK) {
            erg_meter_close(m);
            erg_calibration_free(cal);
            return erg_cli_fail(&d, rc);
        }
    } else {
        printf("Calibrated %.1f s at rest in %.2f s windows; written to %s\n", cal->duration_s,
               cal->window_s, out);
        printf("  %-34s %-8s %12s %8s %6s  %s\n", "channel", "domain", "idle (W)", "CV", "util",
               "flags");
        for (size_t i = 0; i < cal->n_channels; i++) {
            const erg_calibration_channel *ch = &cal->channels[i];
            char util[16] = "-", fl[64] = "";
            if (isfinite(ch->utilisation))
                snprintf(util, sizeof util, "%.0f%%", 100 * ch->utilisation);
            for (unsigned b = 0, n = 0; b < ERG_CAL_FLAG_COUNT; b++)
                if (ch->flags & (1u << b))
                    n += (unsigned)snprintf(fl + n, sizeof fl - n, "%s%s", n ? "," : "",
                                            erg_calibration_flag_name(b));
            printf("  %-34s %-8s %12.4f %8.4f %6s  %s\n", ch->id, erg_domain_name(ch->domain),
                   ch->idle_power_w, ch->cv, util, fl[0] ? fl : "-");
        }
        printf("Idle power of the summed channels: %.4f W\n", cal->idle_power_w);
        if (!erg_meter_has_hardware(m))
            printf("Note: no hardware energy counter is usable here: these are estimates.\n");
    }
    if (cal->flags) {
        char why[2048];
        erg_calibration_describe(cal, why, sizeof why);
        fprintf(stderr, "erg: warning: %s\n", why);
    }
    erg_meter_close(m);
    erg_calibration_free(cal);
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_calibrate = {
    "calibrate", "measure idle power and its variation at rest (stable state)", run};
