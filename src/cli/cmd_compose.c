/* SPDX-License-Identifier: MIT */
/* erg compose: the energy of a schedule with its uncertainty (energy-calculus paper, Section 5.2).
 */
#include "cli.h"
#include "cmd_calculus.h"
#include "erg/stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char compose_help[] =
    "Usage: erg compose SCHEDULE.json [--json] [--confidence P] [--measured J [--measured-sd J]]\n"
    "                   [--mc N [--seed S]] [--warm-start]\n\n"
    "Compose a schedule/1 file (an expression of seq/par/multi/idle over signatures, or a DAG of\n"
    "nodes and edges) with the energy calculus and print its energy E with standard deviation, "
    "the\n"
    "prediction interval E +- c*sd, time, static and dynamic energy (per device too), the weakest\n"
    "provenance grade and the Reduction Theorem's worst-case bias bound (Eq. 13).\n\n"
    "  --json            print the report as JSON instead of a table\n"
    "  --confidence P    confidence of the interval and of the bias bound (default 0.95)\n"
    "  --measured J      a direct measurement of the whole schedule: run the deviation test\n"
    "                    (Eq. 23) and exit 1 when a deviation is detected\n"
    "  --measured-sd J   standard deviation of that measurement (default 0)\n"
    "  --mc N            also draw N Monte Carlo samples (Appendix F.4) and report their mean and "
    "sd\n"
    "  --seed S          seed of the Monte Carlo generator (default 1)\n"
    "  --warm-start      the schedule does not start at the null context: every element carries "
    "its\n"
    "                    entry-state substitution in the bias bound\n\n"
    "Exit status: 0 ok, 1 deviation detected, 2 bad input or usage.\n";

static const char *si(char *buf, size_t size, double v, const char *unit, int digits)
{
    static const struct {
        double f;
        const char *p;
    } pre[] = {{1e9, "G"},  {1e6, "M"},  {1e3, "k"}, {1.0, ""},
               {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
    double a = fabs(v);
    if (!isfinite(v)) {
        snprintf(buf, size, "%g %s", v, unit);
        return buf;
    }
    if (a == 0.0) {
        snprintf(buf, size, "0 %s", unit);
        return buf;
    }
    size_t i = 0;
    while (i + 1 < sizeof pre / sizeof pre[0] && a < pre[i].f * 0.9995)
        i++;
    if (digits <= 0) {
        snprintf(buf, size, "%.4g %s%s", v / pre[i].f, pre[i].p, unit);
    } else {
        /* fixed decimals, so that 100 reads "100" and not "1e+02" at two digits */
        int decimals = digits - 1 - (int)floor(log10(a / pre[i].f));
        snprintf(buf, size, "%.*f %s%s", decimals > 0 ? decimals : 0, v / pre[i].f, pre[i].p, unit);
    }
    return buf;
}

const char *erg_cli_si(char *buf, size_t size, double v, const char *unit)
{
    return si(buf, size, v, unit, 0);
}

const char *erg_cli_si_digits(char *buf, size_t size, double v, const char *unit, int digits)
{
    return si(buf, size, v, unit, digits < 1 ? 1 : digits);
}

void erg_cli_print_report(FILE *out, const char *title, const erg_report *r)
{
    char a[64], b[64], c[64];
    double mult = erg_two_sided_multiplier(r->confidence);
    fprintf(out, "%s\n", title);
    fprintf(out, "  elements            %zu\n", r->n_elements);
    fprintf(out, "  energy E            %s  +- %s (1 sd)\n",
            erg_cli_si(a, sizeof a, r->energy_j, "J"),
            erg_cli_si(b, sizeof b, r->energy_sd_j, "J"));
    fprintf(out, "  interval (%4.1f%%)    [%s, %s]  (E +- %.3f sd)\n", 100.0 * r->confidence,
            erg_cli_si(a, sizeof a, r->interval_j[0], "J"),
            erg_cli_si(b, sizeof b, r->interval_j[1], "J"), mult);
    fprintf(out, "  time T (makespan)   %s  +- %s\n", erg_cli_si(a, sizeof a, r->time_s, "s"),
            erg_cli_si(b, sizeof b, r->time_sd_s, "s"));
    fprintf(out, "  static energy       %s  (%.1f%% of E)\n",
            erg_cli_si(a, sizeof a, r->static_energy_j, "J"),
            r->energy_j > 0.0 ? 100.0 * r->static_energy_j / r->energy_j : 0.0);
    fprintf(out, "  dynamic energy      %s\n", erg_cli_si(a, sizeof a, r->dynamic_energy_j, "J"));
    fprintf(out, "  grade               %s (weakest part)\n", erg_grade_name(r->grade));
    if (r->flags) {
        char fl[512];
        erg_flags_text(r->flags, ", ", fl, sizeof fl);
        fprintf(out, "  flags               %s (measurement flags of the parts)\n", fl);
    }
    fprintf(out, "  bias bound (Eq. 13) %s  (sum of m_i*c*sd_Ei)\n",
            erg_cli_si(a, sizeof a, r->bias_bound_j, "J"));
    fprintf(out, "    worst case: the most E can shift because elements were measured alone, "
                 "not in this context\n");
    if (r->has_mc) {
        char d[64];
        fprintf(out, "  Monte Carlo         E %s +- %s, T %s +- %s (%llu samples)\n",
                erg_cli_si(a, sizeof a, r->mc_energy_j, "J"),
                erg_cli_si(b, sizeof b, r->mc_energy_sd_j, "J"),
                erg_cli_si(c, sizeof c, r->mc_time_s, "s"),
                erg_cli_si(d, sizeof d, r->mc_time_sd_s, "s"), (unsigned long long)r->mc_samples);
    }
    if (r->has_deviation)
        fprintf(out, "  deviation (Eq. 23)  measured %s +- %s, z = %.3f: %s\n",
                erg_cli_si(a, sizeof a, r->measured_j, "J"),
                erg_cli_si(b, sizeof b, r->measured_sd_j, "J"), r->deviation_z,
                r->deviation_detected ? "DEVIATION DETECTED" : "consistent");
    if (r->n_devices) {
        fprintf(out, "  %-18s %14s %14s %12s %12s\n", "device", "static", "dynamic", "busy",
                "idle");
        for (size_t i = 0; i < r->n_devices; i++) {
            const erg_device_report *d = &r->devices[i];
            char e[64], f[64];
            fprintf(out, "  %-18s %14s %14s %12s %12s\n", d->id,
                    erg_cli_si(a, sizeof a, d->static_energy_j, "J"),
                    erg_cli_si(b, sizeof b, d->dynamic_energy_j, "J"),
                    erg_cli_si(e, sizeof e, d->busy_s, "s"),
                    erg_cli_si(f, sizeof f, d->idle_s, "s"));
        }
    }
}

int erg_cli_compose_file(const char *path, const erg_compose_options *opts, erg_report *r)
{
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_schedule *s = NULL;
    int rc = erg_schedule_read_file(path, &s, &diag);
    if (rc == ERG_OK) {
        rc = erg_schedule_compose(s, opts, r, &diag);
        if (rc != ERG_OK && !diag.where[0])
            snprintf(diag.where, sizeof diag.where, "%s", path);
    }
    erg_schedule_free(s);
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    return 0;
}

static int run_compose(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"confidence", required_argument, NULL, 'c'},
                                         {"measured", required_argument, NULL, 'm'},
                                         {"measured-sd", required_argument, NULL, 's'},
                                         {"mc", required_argument, NULL, 'n'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"warm-start", no_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    erg_compose_options co;
    erg_compose_options_init(&co);
    int json = 0, has_meas = 0, has_sd = 0, c;
    double meas = 0.0, meas_sd = 0.0;
    unsigned long ul;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'c':
            if (erg_cli_double("compose", "--confidence", optarg, &co.confidence))
                return ERG_EXIT_USAGE;
            if (!(co.confidence > 0.0 && co.confidence < 1.0))
                return erg_cli_usage(
                    "compose", "--confidence must lie strictly between 0 and 1, got '%s'", optarg);
            break;
        case 'm':
            if (erg_cli_double("compose", "--measured", optarg, &meas))
                return ERG_EXIT_USAGE;
            has_meas = 1;
            break;
        case 's':
            if (erg_cli_double("compose", "--measured-sd", optarg, &meas_sd))
                return ERG_EXIT_USAGE;
            has_sd = 1;
            break;
        case 'n':
            if (erg_cli_ulong("compose", "--mc", optarg, &ul))
                return ERG_EXIT_USAGE;
            co.mc_samples = ul;
            break;
        case 'S':
            if (erg_cli_ulong("compose", "--seed", optarg, &ul))
                return ERG_EXIT_USAGE;
            co.mc_seed = ul;
            break;
        case 'w':
            co.warm_start = 1;
            break;
        case 'h':
            fputs(compose_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("compose", argc, argv, "h", opts);
        }
    }
    if (optind + 1 != argc)
        return erg_cli_usage("compose", optind == argc ? "missing SCHEDULE.json"
                                                       : "expected one SCHEDULE.json");
    if (has_sd && !has_meas)
        return erg_cli_usage("compose", "--measured-sd needs --measured");
    if (has_meas && (meas < 0.0 || meas_sd < 0.0))
        return erg_cli_usage("compose", "--measured and --measured-sd must not be negative");
    const char *path = argv[optind];
    erg_report r;
    memset(&r, 0, sizeof r);
    int st = erg_cli_compose_file(path, &co, &r);
    if (st != 0)
        return st;
    if (has_meas) {
        erg_diag diag;
        erg_diag_clear(&diag);
        if (erg_report_deviation(&r, meas, meas_sd, &diag) != ERG_OK) {
            erg_report_free(&r);
            return erg_cli_fail(&diag, diag.status);
        }
    }
    if (json) {
        erg_diag diag;
        erg_diag_clear(&diag);
        if (erg_report_write_file("-", &r, &diag) != ERG_OK) {
            erg_report_free(&r);
            return erg_cli_fail(&diag, diag.status);
        }
    } else {
        char title[600];
        snprintf(title, sizeof title, "erg compose %s", path);
        erg_cli_print_report(stdout, title, &r);
    }
    int detected = r.has_deviation && r.deviation_detected;
    erg_report_free(&r);
    return detected ? ERG_EXIT_CHECK : ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_compose = {
    "compose", "compose a schedule's energy with uncertainty", run_compose};
