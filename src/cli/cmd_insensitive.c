/* SPDX-License-Identifier: MIT */
/* erg insensitive: the context-insensitivity test of one element under two contexts (Eq. 11/12). */
#include "cli.h"
#include "erg/calculus.h"

#include <getopt.h>
#include <jansson.h>

static const char insensitive_help[] =
    "Usage: erg insensitive REF.json OTHER.json [--confidence P] [--json]\n\n"
    "Apply the context-insensitivity test (energy-calculus paper Eq. 11 for entry contexts, Eq. "
    "12\n"
    "for runtime contexts) to one element measured under a reference context (REF: the null "
    "context\n"
    "or isolation) and under another (OTHER: after a given predecessor, or co-running). Both are\n"
    "signature/1 files. The element is insensitive when\n"
    "    |ds|*T_ref + |dT|*s_ref + |ds|*|dT| + |dd| <= c*sd_E_ref\n"
    "with c the two-sided Gaussian multiplier of the confidence.\n\n"
    "  --confidence P    confidence (default 0.95)\n"
    "  --json            print {\"erg\": \"insensitive/1\", ...}\n\n"
    "Exit status: 0 insensitive, 1 sensitive, 2 bad input or usage.\n";

static int run_insensitive(int argc, char **argv)
{
    static const struct option opts[] = {{"confidence", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    double conf = 0.95;
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (erg_cli_double("insensitive", "--confidence", optarg, &conf))
                return ERG_EXIT_USAGE;
            if (!(conf > 0.0 && conf < 1.0))
                return erg_cli_usage("insensitive",
                                     "--confidence must lie strictly between 0 and 1, got '%s'",
                                     optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(insensitive_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("insensitive", argc, argv, "h", opts);
        }
    }
    if (argc - optind != 2)
        return erg_cli_usage("insensitive",
                             "expected two signature files, REF.json and OTHER.json");
    erg_signature ref, oth;
    erg_diag d;
    erg_diag_clear(&d);
    int rc;
    if ((rc = erg_signature_read_file(argv[optind], &ref, &d)) != ERG_OK ||
        (rc = erg_signature_read_file(argv[optind + 1], &oth, &d)) != ERG_OK)
        return erg_cli_fail(&d, rc);
    erg_insensitivity r;
    if ((rc = erg_context_insensitive(&ref, &oth, conf, &r, &d)) != ERG_OK)
        return erg_cli_fail(&d, rc);
    if (json) {
        json_t *o = json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b}", "erg", "insensitive/1",
                              "delta_s_w", r.delta_s_w, "delta_t_s", r.delta_t_s, "delta_d_j",
                              r.delta_d_j, "lhs_j", r.lhs_j, "tolerance_j", r.tolerance_j,
                              "confidence", conf, "insensitive", r.insensitive);
        if (!o || json_dumpf(o, stdout,
                             JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) != 0) {
            json_decref(o);
            fprintf(stderr, "erg: cannot write the result\n");
            return ERG_EXIT_USAGE;
        }
        fputc('\n', stdout);
        json_decref(o);
    } else {
        printf("|ds| = %.6g W, |dT| = %.6g s, |dd| = %.6g J\n", r.delta_s_w, r.delta_t_s,
               r.delta_d_j);
        printf("bound %.6g J %s tolerance c*sd_E = %.6g J (confidence %.3g): %s\n", r.lhs_j,
               r.insensitive ? "<=" : ">", r.tolerance_j, conf,
               r.insensitive ? "context-insensitive"
                             : "context-SENSITIVE (characterize as a composite)");
    }
    return r.insensitive ? ERG_EXIT_OK : ERG_EXIT_CHECK;
}

const struct erg_cli_command erg_cli_cmd_insensitive = {
    "insensitive", "context-insensitivity test of an element under two contexts", run_insensitive};
