/* SPDX-License-Identifier: MIT */
/* erg compare: does one schedule confidently use less energy than another (paper Section 5.2.2)? */
#include "cli.h"
#include "cmd_calculus.h"
#include "erg/measure.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char compare_help[] =
    "Usage: erg compare A.json B.json [--confidence P] [--json]\n\n"
    "A and B are schedule/1, signature/1 or measurement/1 files (the last from 'erg measure\n"
    "--json' or '--export-json'; a measurement of one run carries the meters' floor as its sd, so\n"
    "two single runs are not told apart on noise).\n"
    "Compose two files and compare their prediction intervals E +- c*sd (paper Section\n"
    "5.2.2): one schedule confidently uses less energy only when its interval's upper bound lies\n"
    "below the other's lower bound; otherwise the two cannot be told apart.\n\n"
    "  --confidence P    confidence of the intervals (default 0.95)\n"
    "  --json            print {\"erg\": \"compare/1\", \"a\": {...}, \"b\": {...}, \"verdict\": "
    "...}\n\n"
    "A - B is printed to two digits past the leading digit of the combined sd sqrt(sd_A^2 + "
    "sd_B^2);\n"
    "a difference under 1% of it is noise and one within floating-point rounding (1e-9 of E) "
    "is 0.\n\n"
    "Exit status: 0 one is confidently lower, 1 they cannot be told apart, 2 bad input or usage.\n";

/* One side of the comparison (erg_compose_file): a schedule/1 file, or one element: a
 * signature/1 or a measurement/1 file, composed as a one-node schedule. 0, or the exit status
 * after the message. */
static int load_side(const char *path, const erg_compose_options *co, erg_report *r)
{
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_compose_file(path, co, r, &d);
    return rc == ERG_OK ? 0 : erg_cli_fail(&d, rc);
}

static int run_compare(int argc, char **argv)
{
    static const struct option opts[] = {{"confidence", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    erg_compose_options co;
    erg_compose_options_init(&co);
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (erg_cli_double("compare", "--confidence", optarg, &co.confidence))
                return ERG_EXIT_USAGE;
            if (!(co.confidence > 0.0 && co.confidence < 1.0))
                return erg_cli_usage(
                    "compare", "--confidence must lie strictly between 0 and 1, got '%s'", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(compare_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("compare", argc, argv, "h", opts);
        }
    }
    if (argc - optind != 2)
        return erg_cli_usage("compare", "expected two files, A.json and B.json (schedules, "
                                        "signatures or measurements)");
    const char *pa = argv[optind], *pb = argv[optind + 1];
    erg_report a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int st = load_side(pa, &co, &a);
    if (st != 0)
        return st;
    if ((st = load_side(pb, &co, &b)) != 0) {
        erg_report_free(&a);
        return st;
    }
    /* the verdict and how A - B reads (trial finding 11: "A - B = -4.441e-07 nJ") */
    erg_comparison dd;
    if (erg_report_comparison(&a, &b, &dd) != ERG_OK) { /* cannot fail: a and b are set */
        erg_report_free(&a);
        erg_report_free(&b);
        return erg_cli_fail(NULL, ERG_EINVAL);
    }
    int v = dd.verdict;
    if (json) {
        erg_diag d;
        erg_diag_clear(&d);
        int rc = erg_comparison_write_json("-", pa, &a, pb, &b, &dd, co.confidence, &d);
        if (rc != ERG_OK) {
            erg_report_free(&a);
            erg_report_free(&b);
            return erg_cli_fail(&d, rc);
        }
    } else {
        char x[64], y[64], z[64], w[64];
        printf("A %s\n  E %s +- %s, %.3g%% interval [%s, %s]\n", pa,
               erg_cli_si(x, sizeof x, a.energy_j, "J"),
               erg_cli_si(y, sizeof y, a.energy_sd_j, "J"), 100 * co.confidence,
               erg_cli_si(z, sizeof z, a.interval_j[0], "J"),
               erg_cli_si(w, sizeof w, a.interval_j[1], "J"));
        printf("B %s\n  E %s +- %s, %.3g%% interval [%s, %s]\n", pb,
               erg_cli_si(x, sizeof x, b.energy_j, "J"),
               erg_cli_si(y, sizeof y, b.energy_sd_j, "J"), 100 * co.confidence,
               erg_cli_si(z, sizeof z, b.interval_j[0], "J"),
               erg_cli_si(w, sizeof w, b.interval_j[1], "J"));
        erg_cli_si(y, sizeof y, dd.combined_sd_j, "J");
        if (dd.kind == ERG_DIFFERENCE_ROUNDING)
            printf("A - B = 0 J (equal to within rounding): ");
        else if (dd.kind == ERG_DIFFERENCE_NOISE)
            printf("A - B = 0 J within noise (under 1%% of the combined sd %s): ", y);
        else if (b.energy_j != 0.0)
            printf("A - B = %s (%+.3g%% of B; combined sd %s): ",
                   erg_cli_si_digits(x, sizeof x, dd.difference_j, "J", dd.digits),
                   100.0 * dd.difference_j / fabs(b.energy_j), y);
        else
            printf("A - B = %s (combined sd %s): ",
                   erg_cli_si_digits(x, sizeof x, dd.difference_j, "J", dd.digits), y);
        if (v < 0)
            printf("A confidently uses less energy than B\n");
        else if (v > 0)
            printf("B confidently uses less energy than A\n");
        else
            printf("the intervals overlap: A and B cannot be told apart at this confidence\n");
    }
    erg_report_free(&a);
    erg_report_free(&b);
    return v == 0 ? ERG_EXIT_CHECK : ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_compare = {
    "compare", "tell whether one schedule confidently uses less energy", run_compare};
