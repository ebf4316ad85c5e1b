/* SPDX-License-Identifier: MIT */
/* erg check-granularity: granularity consistency (energy-calculus paper Eq. 24, Appendix G): a
 * coarse element's measured signature against the composition of its parts. */
#include "cli.h"
#include "cmd_calculus.h"
#include "erg/calculus.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "Usage: erg check-granularity COARSE.json SCHEDULE.json [--confidence P] [--json]\n\n"
    "Compare a coarse element measured directly (COARSE, a signature/1, e.g. from erg\n"
    "characterize --schedule) with the composition of its parts (SCHEDULE, evaluated at the\n"
    "contexts it realizes where its signatures are characterized; docs/context.md), by Eq. 24 of\n"
    "the energy-calculus paper:\n"
    "    |E_coarse - E_parts| <= sum_i m_i c sd_E_i + c sqrt(sd_E_coarse^2 + sd_E_parts^2)\n"
    "When it holds, refinement and coarsening agree up to measurement error (Appendix G); when it\n"
    "fails, the parts miss an interaction (erg refine finds which).\n\n"
    "  --confidence P  confidence (default 0.95)\n"
    "  --json          print {\"erg\": \"granularity/1\", ...}\n\n"
    "Exit status: 0 consistent, 1 inconsistent, 2 bad input or usage.\n";

static int run(int argc, char **argv)
{
    static const struct option opts[] = {{"confidence", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    double conf = 0.95;
    int json = 0, opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (erg_cli_double("check-granularity", "--confidence", optarg, &conf))
                return ERG_EXIT_USAGE;
            if (!(conf > 0.0 && conf < 1.0))
                return erg_cli_usage("check-granularity",
                                     "--confidence must lie strictly between 0 and 1, got '%s'",
                                     optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("check-granularity", argc, argv, "h", opts);
        }
    }
    if (argc - optind != 2)
        return erg_cli_usage("check-granularity", "expected COARSE.json and SCHEDULE.json");
    erg_diag d;
    erg_diag_clear(&d);
    erg_signature coarse;
    erg_schedule *s = NULL;
    erg_context_set set;
    memset(&set, 0, sizeof set);
    int rc;
    if ((rc = erg_signature_read_file(argv[optind], &coarse, &d)) != ERG_OK ||
        (rc = erg_schedule_read_file(argv[optind + 1], &s, &d)) != ERG_OK) {
        erg_schedule_free(s);
        return erg_cli_fail(&d, rc);
    }
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.confidence = conf;
    erg_report plain;
    erg_context_report cr;
    memset(&cr, 0, sizeof cr);
    const erg_report *parts = NULL;
    if (erg_schedule_node_count(s) > 0) {
        /* the DAG form: at realized contexts, with the schedule's points and correlations */
        if ((rc = erg_context_set_read_schedule(argv[optind + 1], &set, &d)) == ERG_OK) {
            const erg_context_signature **p = calloc(set.n + 1, sizeof *p);
            for (size_t i = 0; p && i < set.n; i++)
                p[i] = &set.sigs[i];
            rc = p ? erg_schedule_compose_context(s, p, set.n, set.corr, set.n_corr, &o, &cr, &d)
                   : erg_diag_set(&d, ERG_ENOMEM, NULL, "out of memory");
            free(p);
        }
        parts = &cr.report;
    } else {
        rc = erg_schedule_compose(s, &o, &plain, &d);
        parts = &plain;
    }
    erg_granularity g;
    if (rc == ERG_OK)
        rc = erg_granularity_check(&coarse, parts, &g, &d);
    int ex = rc == ERG_OK ? (g.consistent ? ERG_EXIT_OK : ERG_EXIT_CHECK) : erg_cli_fail(&d, rc);
    if (rc == ERG_OK) {
        double ec = erg_signature_energy_j(&coarse);
        if (json) {
            int wr = erg_granularity_write_json("-", &coarse, parts, &g, conf, &d);
            if (wr != ERG_OK)
                ex = erg_cli_fail(&d, wr);
        } else {
            char a[48], b[48], df[48], bi[48], ra[48];
            erg_cli_si(a, sizeof a, ec, "J");
            erg_cli_si(b, sizeof b, parts->energy_j, "J");
            erg_cli_si(df, sizeof df, g.difference_j, "J");
            erg_cli_si(bi, sizeof bi, g.bias_j, "J");
            erg_cli_si(ra, sizeof ra, g.random_j, "J");
            printf("coarse %s, parts composed %s: |difference| %s %s bias %s + random %s: %s\n", a,
                   b, df, g.consistent ? "<=" : ">", bi, ra,
                   g.consistent ? "consistent (Eq. 24 holds)"
                                : "INCONSISTENT (Eq. 24 fails: the parts miss an interaction)");
        }
    }
    erg_context_report_free(&cr);
    if (parts == &plain && rc == ERG_OK)
        erg_report_free(&plain);
    erg_context_set_free(&set);
    erg_schedule_free(s);
    return ex;
}

const struct erg_cli_command erg_cli_cmd_check_granularity = {
    "check-granularity", "granularity consistency of a coarse element and its parts (Eq. 24)", run};
