/* SPDX-License-Identifier: MIT */
/* erg insensitive: the context-insensitivity test of one element under two contexts (Eq. 11/12). */
#include "cli.h"
#include "erg/calculus.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>

static const char insensitive_help[] =
    "Usage: erg insensitive REF.json OTHER.json [--confidence P] [--json]\n"
    "       erg insensitive --pair A.json B.json [--confidence P] [--json]\n\n"
    "Apply the context-insensitivity test (energy-calculus paper Eq. 11 for entry contexts, Eq. "
    "12\n"
    "for runtime contexts) to one element measured under a reference context (REF: the null "
    "context\n"
    "or isolation) and under another (OTHER: after a given predecessor, or co-running). Both are\n"
    "signature/1 files. The element is insensitive when\n"
    "    |ds|*T_ref + |dT|*s_ref + |ds|*|dT| + |dd| <= c*sd_E_ref\n"
    "with c the two-sided Gaussian multiplier of the confidence.\n\n"
    "With --pair, A and B are two elements' signatures with their context points\n"
    "(docs/context.md): each is tested over the entry contexts the other leaves (Eq. 11) and\n"
    "co-running with the other (Eq. 12), and the combined verdict of Section 4.1.3 is printed\n"
    "with the deciding point and numbers of each side; a side with no characterized point is\n"
    "not characterized, and the pair then is not known to be insensitive (exit 1).\n\n"
    "  --pair            the pair verdict of two context signatures\n"
    "  --confidence P    confidence (default 0.95)\n"
    "  --json            print {\"erg\": \"insensitive/1\", ...}\n\n"
    "Exit status: 0 insensitive, 1 sensitive, 2 bad input or usage.\n";

static const char *verdict(int v)
{
    return v == 1 ? "insensitive" : v == 0 ? "SENSITIVE" : "not characterized";
}

static void side_text(const char *what, const erg_set_insensitivity *x)
{
    if (x->insensitive < 0)
        printf("  %-34s not characterized\n", what);
    else
        printf("  %-34s %s: %s, %.6g J %s %.6g J (%zu point%s)\n", what, verdict(x->insensitive),
               x->point, x->lhs_j, x->insensitive ? "<=" : ">", x->tolerance_j, x->n_tested,
               x->n_tested == 1 ? "" : "s");
}

/* The combined verdict of Section 4.1.3 for two context signatures. */
static int run_pair(const char *pa, const char *pb, double conf, int json)
{
    erg_context_signature *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (a)
        erg_context_signature_init(a);
    if (b)
        erg_context_signature_init(b);
    erg_diag d;
    erg_diag_clear(&d);
    int rc = !a || !b ? erg_diag_set(&d, ERG_ENOMEM, NULL, "out of memory") : ERG_OK;
    erg_pair_verdict v;
    if (rc == ERG_OK && (rc = erg_context_signature_read_file(pa, a, &d)) == ERG_OK &&
        (rc = erg_context_signature_read_file(pb, b, &d)) == ERG_OK)
        rc = erg_context_pair_test(a, b, conf, &v, &d);
    if (rc != ERG_OK) {
        erg_context_signature_release(a);
        erg_context_signature_release(b);
        free(a);
        free(b);
        return erg_cli_fail(&d, rc);
    }
    const char *na = a->null_context.name, *nb = b->null_context.name;
    int ex = v.mutual == 1 ? ERG_EXIT_OK : ERG_EXIT_CHECK;
    if (json) {
        if ((rc = erg_pair_verdict_write_json("-", na, nb, &v, conf, &d)) != ERG_OK)
            ex = erg_cli_fail(&d, rc);
    } else {
        char w[ERG_SIG_NAME_MAX * 2 + 32];
        printf("%s and %s at confidence %.3g:\n", na, nb, conf);
        snprintf(w, sizeof w, "%s after %s (Eq. 11)", na, nb);
        side_text(w, &v.history_a);
        snprintf(w, sizeof w, "%s after %s (Eq. 11)", nb, na);
        side_text(w, &v.history_b);
        snprintf(w, sizeof w, "%s with %s (Eq. 12)", na, nb);
        side_text(w, &v.interference_a);
        snprintf(w, sizeof w, "%s with %s (Eq. 12)", nb, na);
        side_text(w, &v.interference_b);
        printf("mutually history-insensitive: %s; interference-insensitive: %s; "
               "context-insensitive (Section 4.1.3): %s\n",
               verdict(v.history), verdict(v.interference), verdict(v.mutual));
    }
    erg_context_signature_release(a);
    erg_context_signature_release(b);
    free(a);
    free(b);
    return ex;
}

static int run_insensitive(int argc, char **argv)
{
    static const struct option opts[] = {{"confidence", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"pair", no_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    double conf = 0.95;
    int json = 0, pair = 0, c;
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
        case 'p':
            pair = 1;
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
                             pair ? "--pair expects two signature files, A.json and B.json"
                                  : "expected two signature files, REF.json and OTHER.json");
    if (pair)
        return run_pair(argv[optind], argv[optind + 1], conf, json);
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
        if ((rc = erg_insensitivity_write_json("-", &r, conf, &d)) != ERG_OK)
            return erg_cli_fail(&d, rc);
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
