/* SPDX-License-Identifier: MIT */
/* erg frontier: the time–energy frontier of a schedule whose elements carry operating sets. */
#include "cli.h"
#include "erg/frontier.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void help(void)
{
    printf(
        "Usage: erg frontier FILE [--deadline T | --budget E] [--json | --csv] [--plot OUT.svg]\n"
        "                        [--epsilon EPS] [--method auto|enumerate|relax] [--lp-deadlines "
        "N]\n"
        "                        [--reference REF.csv] [--choices auto|all|changes|none]\n\n"
        "Time-energy frontier of a schedule/1 FILE whose signatures carry operating sets\n"
        "(\"points\": one signature per implementation and operating point).\n"
        "Expressions (seq/par/multi) are composed exactly by the frontier rules of the energy\n"
        "calculus (Section 6); DAGs (nodes + edges) are enumerated when small, else solved "
        "through\n"
        "the convex relaxation (LP, GLPK) rounded to real points, with the gap reported.\n\n"
        "  --deadline T      also give the least-energy plan that finishes by T seconds\n"
        "  --budget E        also give the fastest plan within E joules\n"
        "  --json            print {\"erg\": \"frontier/1\", \"points\": [...], \"plan\": {...}}\n"
        "  --csv             print the frontier as CSV (one column per element choice)\n"
        "  --plot OUT.svg    draw the frontier (time on x, energy on y), plan marked; the\n"
        "                    extension names the format: .svg, .png or .pdf\n"
        "  --reference CSV   with --plot: overlay another frontier; its header names the columns\n"
        "                    time_s (or time) and energy_j (or energy), other columns ignored\n"
        "  --choices M       table: auto (default: all when at most 8 elements, else changes),\n"
        "                    all (every element on every row), changes (only elements whose\n"
        "                    choice differs from the row above), none\n"
        "  --epsilon EPS     epsilon-approximate sequences: energy within (1+EPS) of exact\n"
        "  --method M        DAG method: auto (default), enumerate, relax\n"
        "  --lp-deadlines N  deadlines on which the DAG relaxation is solved (default 200)\n\n"
        "Exit status: 0 ok, 2 bad input or usage (nothing written).\n");
}

/* How the table shows each row's choice of point per element. */
enum choices_mode { CHOICES_AUTO, CHOICES_ALL, CHOICES_CHANGES, CHOICES_NONE };

/* Up to this many elements, CHOICES_AUTO lists every element's choice on every row. */
#define CHOICES_AUTO_MAX 8
/* At most this many changed elements are named per row in CHOICES_CHANGES. */
#define CHOICES_CHANGES_MAX 6

static void print_choices(const erg_frontier *f, size_t i, enum choices_mode mode)
{
    const size_t ne = f->n_elements, *row = f->choices + i * ne;
    if (mode == CHOICES_ALL || (mode == CHOICES_CHANGES && i == 0 && ne <= CHOICES_AUTO_MAX)) {
        for (size_t k = 0; k < ne; k++)
            printf("%s%s=%zu", k ? " " : "", f->element_names[k], row[k]);
        return;
    }
    if (i == 0) {
        /* counted as erg compose counts them (signatures or DAG nodes), the idle gaps of an
         * expression, which carry choices here too, beside */
        size_t idle = 0;
        for (size_t k = 0; k < ne; k++)
            idle += strncmp(f->element_names[k], "idle@", 5) == 0 &&
                    strchr(f->element_names[k], '#') != NULL;
        if (idle)
            printf("%zu elements + %zu idle", ne - idle, idle);
        else
            printf("%zu elements", ne);
        return;
    }
    const size_t *prev = row - ne;
    size_t changed = 0;
    for (size_t k = 0; k < ne; k++)
        changed += row[k] != prev[k];
    printf("%zu changed%s", changed, changed ? ":" : "");
    size_t shown = 0;
    for (size_t k = 0; k < ne && shown < CHOICES_CHANGES_MAX; k++)
        if (row[k] != prev[k]) {
            printf(" %s=%zu", f->element_names[k], row[k]);
            shown++;
        }
    if (changed > shown)
        printf(" +%zu more", changed - shown);
}

static void print_table(const erg_frontier *f, size_t plan, enum choices_mode mode)
{
    if (mode == CHOICES_AUTO)
        mode = f->n_elements <= CHOICES_AUTO_MAX ? CHOICES_ALL : CHOICES_CHANGES;
    printf("%-3s %12s %14s %14s %14s %12s%s\n", "", "time_s", "energy_j", "static_j", "dynamic_j",
           "gap_j", mode == CHOICES_NONE ? "" : "  choice");
    for (size_t i = 0; i < f->n_points; i++) {
        const erg_frontier_point *p = &f->points[i];
        printf("%-3s %12.6g %14.8g %14.8g %14.8g %12.4g", i == plan ? "*" : "", p->time_s,
               p->energy_j, p->static_energy_j, p->dynamic_energy_j, p->energy_j - p->bound_j);
        if (mode != CHOICES_NONE) {
            printf("  ");
            print_choices(f, i, mode);
        }
        printf("\n");
    }
    const char *m = f->method == ERG_FRONTIER_EXACT    ? "exact"
                    : f->method == ERG_FRONTIER_APPROX ? "epsilon-approximate"
                                                       : "LP relaxation rounded to real points";
    printf("%zu points, %s", f->n_points, m);
    if (f->method == ERG_FRONTIER_APPROX)
        printf(" (epsilon %g: energy within %g%% of the exact frontier)", f->epsilon,
               100 * f->epsilon);
    if (f->method == ERG_FRONTIER_RELAXATION)
        printf(" (largest gap to the relaxation %.6g J)", f->max_gap_j);
    printf("\n");
    if (plan != ERG_FRONTIER_NO_PLAN)
        printf("plan (*): %.6g s, %.8g J\n", f->points[plan].time_s, f->points[plan].energy_j);
    if (mode == CHOICES_CHANGES)
        printf("choice: element=point index, only where it differs from the row above "
               "(--choices all lists every element; --json and --csv always do)\n");
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"deadline", required_argument, NULL, 'd'},
                                             {"budget", required_argument, NULL, 'b'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"csv", no_argument, NULL, 'c'},
                                             {"plot", required_argument, NULL, 'p'},
                                             {"epsilon", required_argument, NULL, 'e'},
                                             {"method", required_argument, NULL, 'm'},
                                             {"lp-deadlines", required_argument, NULL, 'n'},
                                             {"reference", required_argument, NULL, 'r'},
                                             {"choices", required_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    double deadline = NAN, budget = NAN;
    int json = 0, csv = 0;
    const char *plot = NULL, *ref = NULL;
    enum choices_mode choices = CHOICES_AUTO;
    erg_frontier_options opts;
    erg_frontier_options_init(&opts);
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        unsigned long ul;
        switch (c) {
        case 'd':
            if (erg_cli_double("frontier", "--deadline", optarg, &deadline))
                return ERG_EXIT_USAGE;
            break;
        case 'b':
            if (erg_cli_double("frontier", "--budget", optarg, &budget))
                return ERG_EXIT_USAGE;
            break;
        case 'j':
            json = 1;
            break;
        case 'c':
            csv = 1;
            break;
        case 'p':
            plot = optarg;
            break;
        case 'r':
            ref = optarg;
            break;
        case 'C':
            if (strcmp(optarg, "auto") == 0)
                choices = CHOICES_AUTO;
            else if (strcmp(optarg, "all") == 0)
                choices = CHOICES_ALL;
            else if (strcmp(optarg, "changes") == 0)
                choices = CHOICES_CHANGES;
            else if (strcmp(optarg, "none") == 0)
                choices = CHOICES_NONE;
            else
                return erg_cli_usage(
                    "frontier", "--choices must be auto, all, changes or none, got '%s'", optarg);
            break;
        case 'e':
            if (erg_cli_double("frontier", "--epsilon", optarg, &opts.epsilon))
                return ERG_EXIT_USAGE;
            if (opts.epsilon < 0 || opts.epsilon > 10)
                return erg_cli_usage("frontier", "--epsilon must be in [0, 10], got %s", optarg);
            break;
        case 'm':
            if (strcmp(optarg, "auto") == 0)
                opts.dag_method = ERG_DAG_AUTO;
            else if (strcmp(optarg, "enumerate") == 0)
                opts.dag_method = ERG_DAG_ENUMERATE;
            else if (strcmp(optarg, "relax") == 0)
                opts.dag_method = ERG_DAG_RELAX;
            else
                return erg_cli_usage("frontier",
                                     "--method must be auto, enumerate or relax, got '%s'", optarg);
            break;
        case 'n':
            if (erg_cli_ulong("frontier", "--lp-deadlines", optarg, &ul))
                return ERG_EXIT_USAGE;
            if (ul < 2 || ul > 100000)
                return erg_cli_usage("frontier", "--lp-deadlines must be in [2, 100000]");
            opts.lp_deadlines = ul;
            break;
        case 'h':
            help();
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("frontier", argc, argv, "h", longopts);
        }
    }
    if (optind + 1 != argc)
        return erg_cli_usage("frontier", "expected exactly one schedule FILE");
    if (json && csv)
        return erg_cli_usage("frontier", "give --json or --csv, not both");
    if (!isnan(deadline) && !isnan(budget))
        return erg_cli_usage("frontier", "give --deadline or --budget, not both");
    if (!isnan(deadline) && !(deadline > 0))
        return erg_cli_usage("frontier", "--deadline must be positive");
    if (!isnan(budget) && !(budget > 0))
        return erg_cli_usage("frontier", "--budget must be positive");
    if (ref && !plot)
        return erg_cli_usage("frontier", "--reference needs --plot");
    if (plot && strcmp(plot, "-") != 0) {
        /* the format and the folder are checked before the frontier is computed */
        const char *dot = strrchr(plot, '.');
        if (!dot || strchr(dot, '/') ||
            (strcasecmp(dot, ".svg") && strcasecmp(dot, ".png") && strcasecmp(dot, ".pdf")))
            return erg_cli_usage("frontier",
                                 "--plot: the extension names the format: .svg, "
                                 ".png or .pdf, got '%s'",
                                 plot);
        erg_diag pd;
        erg_diag_clear(&pd);
        if (erg_output_check(plot, &pd) != ERG_OK)
            return erg_cli_fail(&pd, pd.status);
    }
    const char *file = argv[optind];
    erg_diag diag;
    erg_diag_clear(&diag);
    /* The reference first: a bad one stops everything before any output. */
    double *rt = NULL, *re = NULL;
    size_t rn = 0;
    int rc = ref ? erg_frontier_read_reference(ref, &rt, &re, &rn, &diag) : ERG_OK;
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    erg_opsched *os = NULL;
    rc = erg_opsched_read_file(file, &os, &diag);
    if (rc != ERG_OK) {
        free(rt);
        free(re);
        return erg_cli_fail(&diag, rc);
    }
    erg_frontier f;
    rc = erg_opsched_frontier(os, &opts, &f, &diag);
    erg_opsched_free(os);
    if (rc != ERG_OK) {
        free(rt);
        free(re);
        if (!diag.where[0])
            snprintf(diag.where, sizeof diag.where, "%s", file);
        return erg_cli_fail(&diag, rc);
    }
    size_t plan = ERG_FRONTIER_NO_PLAN;
    if (!isnan(deadline))
        rc = erg_frontier_plan_deadline(&f, deadline, &plan, &diag);
    else if (!isnan(budget))
        rc = erg_frontier_plan_budget(&f, budget, &plan, &diag);
    if (rc != ERG_OK) {
        snprintf(diag.where, sizeof diag.where, "%s", file);
        free(rt);
        free(re);
        erg_frontier_free(&f);
        return erg_cli_fail(&diag, rc);
    }
    if (plot) {
        rc = erg_frontier_plot_svg(&f, plan, rt, re, rn, plot, &diag);
        if (rc != ERG_OK) {
            free(rt);
            free(re);
            erg_frontier_free(&f);
            return erg_cli_fail(&diag, rc);
        }
    }
    free(rt);
    free(re);
    if (json)
        rc = erg_frontier_write_json("-", &f, plan, &diag);
    else if (csv)
        rc = erg_frontier_write_csv("-", &f, plan, &diag);
    else
        print_table(&f, plan, choices);
    erg_frontier_free(&f);
    if (rc != ERG_OK)
        return erg_cli_fail(&diag, rc);
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_frontier = {
    "frontier", "time-energy frontier of a schedule with operating sets (--deadline, --budget)",
    run};
