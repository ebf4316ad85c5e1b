/* SPDX-License-Identifier: MIT */
/* erg refine: compose a schedule at the contexts it realizes, test the composition against a
 * measurement (energy-calculus paper Eq. 23), rank the uncharacterized substitutions by how much
 * of the deviation they can explain, characterize the top ones (or print the commands), update
 * the interaction graph and compose again (Section 4.4, "Building the interaction graph"). */
#include "characterize.h"
#include "cli.h"
#include "cmd_calculus.h"
#include "erg/calculus.h"
#include "erg/measure.h"
#include "erg/signature.h"
#include "erg/stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char refine_help[] =
    "Usage: erg refine SCHEDULE.json --measured MEASURED.json [--characterize] [options]\n\n"
    "Compose SCHEDULE (DAG form) with its signatures evaluated at the contexts the schedule\n"
    "realizes wherever they are characterized (docs/context.md), test it against the measured\n"
    "energy (Eq. 23), rank the candidate pairs (the predecessor on the same device, co-runners)\n"
    "by how much of the deviation their uncharacterized substitutions can explain, and print the\n"
    "erg characterize commands for the top ones. With --characterize, run them (each signature\n"
    "names its \"command\"), add the points, compose again and report the deviation before and\n"
    "after.\n\n"
    "MEASURED is the whole schedule measured directly: a signature/1 (erg characterize\n"
    "--schedule; its mean E and the sd of that mean, sd_E/sqrt(runs)) or a measurement/1 (erg\n"
    "measure --json; total energy mean and sd/sqrt(runs)).\n\n"
    "  --characterize      run the characterizations of the top candidates\n"
    "  --top K             candidates to characterize or print (default 3)\n"
    "  --in-place          write the new points into the schedule's signature files\n"
    "  --write-signatures DIR  write every updated signature to DIR/NAME.json\n"
    "  --graph OUT         write the interaction graph after refinement (interactions/1)\n"
    "  --confidence P      confidence (default 0.95)\n"
    "  --json              print {\"erg\": \"refine/1\", ...}\n"
    "  characterization: -r N, --warmup K, --reset CMD, --time wall|cpu|reported,\n"
    "                    --energy meter|cpu-model,\n"
    "                    --static-power W, --backends LIST (as erg characterize)\n\n"
    "Exit status: 0 no deviation (after refinement, when it ran), 1 a deviation remains, 2 bad\n"
    "input or usage, 3 no usable meter.\n";

static void print_report(const char *title, const erg_context_report *r)
{
    const erg_report *p = &r->report;
    char e[48], sd[48], lo[48], hi[48], b[48], nb[48];
    erg_cli_si(e, sizeof e, p->energy_j, "J");
    erg_cli_si(sd, sizeof sd, p->energy_sd_j, "J");
    erg_cli_si(lo, sizeof lo, p->interval_j[0], "J");
    erg_cli_si(hi, sizeof hi, p->interval_j[1], "J");
    erg_cli_si(b, sizeof b, p->bias_bound_j, "J");
    erg_cli_si(nb, sizeof nb, r->null_bias_bound_j, "J");
    printf("%s: E = %s (sd %s, interval [%s, %s] at %.3g), bias bound %s (every pair at the null "
           "context: %s); %zu of %zu nodes at characterized contexts\n",
           title, e, sd, lo, hi, p->confidence, b, nb, r->n_characterized, r->n_nodes);
    if (p->has_deviation) {
        char m[48], msd[48], diff[48];
        erg_cli_si(m, sizeof m, p->measured_j, "J");
        erg_cli_si(msd, sizeof msd, p->measured_sd_j, "J");
        erg_cli_si(diff, sizeof diff, p->measured_j - p->energy_j, "J");
        printf("  measured %s (sd of the mean %s): measured - composed = %s, z = %.2f: %s\n", m,
               msd, diff, p->deviation_z,
               p->deviation_detected ? "DEVIATION (Eq. 23)" : "no deviation");
    }
}

static int compose(const erg_schedule *s, const erg_context_set *set, double conf,
                   const erg_measured *m, erg_context_report *r, erg_diag *d)
{
    const erg_context_signature **ptrs = calloc(set->n + 1, sizeof *ptrs);
    if (!ptrs)
        return erg_diag_set(d, ERG_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < set->n; i++)
        ptrs[i] = &set->sigs[i];
    erg_compose_options o;
    erg_compose_options_init(&o);
    o.confidence = conf;
    int rc = erg_schedule_compose_context(s, ptrs, set->n, set->corr, set->n_corr, &o, r, d);
    free(ptrs);
    if (rc == ERG_OK)
        rc = erg_report_deviation(&r->report, m->energy_j, m->energy_sd_j, d);
    return rc;
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {{"measured", required_argument, NULL, 'm'},
                                         {"characterize", no_argument, NULL, 'C'},
                                         {"top", required_argument, NULL, 'k'},
                                         {"in-place", no_argument, NULL, 'I'},
                                         {"write-signatures", required_argument, NULL, 'W'},
                                         {"graph", required_argument, NULL, 'g'},
                                         {"confidence", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"runs", required_argument, NULL, 'r'},
                                         {"reset", required_argument, NULL, 'R'},
                                         {"warmup", required_argument, NULL, 'U'},
                                         {"time", required_argument, NULL, 't'},
                                         {"energy", required_argument, NULL, 'e'},
                                         {"static-power", required_argument, NULL, 's'},
                                         {"backends", required_argument, NULL, 'b'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *measured_path = NULL, *sig_dir = NULL, *graph = NULL, *backends = NULL;
    int do_char = 0, in_place = 0, json = 0, opt;
    unsigned long top = 3;
    double conf = 0.95;
    struct erg_cli_char ch;
    memset(&ch, 0, sizeof ch);
    ch.runs = 5;
    ch.static_w = NAN;
    ch.grade = ERG_GRADE_HW_SHUNT;
    while ((opt = getopt_long(argc, argv, "r:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'm':
            measured_path = optarg;
            break;
        case 'C':
            do_char = 1;
            break;
        case 'k':
            if (erg_cli_count("refine", "--top", optarg, 1, 64, &top))
                return ERG_EXIT_USAGE;
            break;
        case 'I':
            in_place = 1;
            break;
        case 'W':
            sig_dir = optarg;
            break;
        case 'g':
            graph = optarg;
            break;
        case 'c':
            if (erg_cli_double("refine", "--confidence", optarg, &conf))
                return ERG_EXIT_USAGE;
            if (!(conf > 0.0 && conf < 1.0))
                return erg_cli_usage(
                    "refine", "--confidence must lie strictly between 0 and 1, got '%s'", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'r':
            if (erg_cli_count("refine", "--runs", optarg, 1, 100000, &ch.runs))
                return ERG_EXIT_USAGE;
            break;
        case 'R':
            ch.reset = optarg;
            break;
        case 'U':
            if (erg_cli_count("refine", "--warmup", optarg, 0, 100000, &ch.warmup))
                return ERG_EXIT_USAGE;
            break;
        case 't':
            if (strcmp(optarg, "wall") && strcmp(optarg, "cpu") && strcmp(optarg, "reported"))
                return erg_cli_usage("refine", "--time is wall, cpu or reported, got '%s'", optarg);
            ch.time_cpu = !strcmp(optarg, "cpu");
            ch.time_reported = !strcmp(optarg, "reported");
            break;
        case 'e':
            if (strcmp(optarg, "meter") && strcmp(optarg, "cpu-model"))
                return erg_cli_usage("refine", "--energy is meter or cpu-model, got '%s'", optarg);
            ch.cpu_model = !strcmp(optarg, "cpu-model");
            break;
        case 's':
            if (erg_cli_double("refine", "--static-power", optarg, &ch.static_w))
                return ERG_EXIT_USAGE;
            if (ch.static_w < 0)
                return erg_cli_usage("refine", "--static-power must be >= 0, got '%s'", optarg);
            break;
        case 'b':
            backends = optarg;
            break;
        case 'h':
            fputs(refine_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("refine", argc, argv, "r:h", opts);
        }
    }
    if (argc - optind != 1)
        return erg_cli_usage("refine", "expected one schedule file");
    if (!measured_path)
        return erg_cli_usage("refine", "give the measured energy with --measured FILE");
    if (do_char && !in_place && !sig_dir)
        return erg_cli_usage("refine", "--characterize writes the new points: give --in-place or "
                                       "--write-signatures DIR");
    if (do_char && isnan(ch.static_w) && !ch.cpu_model)
        return erg_cli_usage("refine", "--characterize needs the static power: --static-power W "
                                       "(or --energy cpu-model)");
    const char *path = argv[optind];
    erg_diag d;
    erg_diag_clear(&d);
    erg_schedule *s = NULL;
    erg_context_set set;
    memset(&set, 0, sizeof set);
    erg_measured m;
    int rc;
    if ((rc = erg_schedule_read_file(path, &s, &d)) != ERG_OK ||
        (rc = erg_context_set_read_schedule(path, &set, &d)) != ERG_OK ||
        (rc = erg_measured_read(measured_path, &m, &d)) != ERG_OK) {
        erg_schedule_free(s);
        erg_context_set_free(&set);
        return erg_cli_fail(&d, rc);
    }
    erg_context_report before, after;
    memset(&after, 0, sizeof after);
    erg_refine_point *done = NULL; /* the points measured, for refine/1 */
    size_t n_done = 0;
    if ((rc = compose(s, &set, conf, &m, &before, &d)) != ERG_OK) {
        erg_schedule_free(s);
        erg_context_set_free(&set);
        return erg_cli_fail(&d, rc);
    }
    int ex = 0;
    erg_refine_candidate cand[64];
    size_t nc = 0;
    const erg_context_signature **ptrs = calloc(set.n + 1, sizeof *ptrs);
    for (size_t i = 0; ptrs && i < set.n; i++)
        ptrs[i] = &set.sigs[i];
    if (!ptrs || erg_refine_candidates(&before, ptrs, set.n,
                                       before.report.measured_j - before.report.energy_j, cand, top,
                                       &nc, &d) != ERG_OK) {
        ex = erg_cli_fail(&d, d.status ? d.status : ERG_ENOMEM);
        goto out;
    }
    if (!json) {
        print_report("composed", &before);
        if (nc)
            printf("candidates (uncharacterized substitutions, by the deviation they can "
                   "explain):\n");
    }
    for (size_t i = 0; i < nc; i++) {
        const erg_refine_candidate *c = &cand[i];
        if (!json) {
            char qcmd[ERG_REFINE_COMMAND_MAX];
            size_t qn = sizeof qcmd;
            if (erg_refine_command(c, &set, qcmd, &qn) != ERG_OK) /* cannot: the size holds any */
                qcmd[0] = '\0';
            char ex_j[48], per[48];
            erg_cli_si(ex_j, sizeof ex_j, c->explain_j, "J");
            erg_cli_si(per, sizeof per, c->per_occurrence_j, "J");
            printf("  %zu. %s %s %s: %zu occurrence%s, up to %s per occurrence (%s), explains up "
                   "to %s\n     %s\n",
                   i + 1, c->a, c->runtime ? "<->" : "->", c->b, c->occurrences,
                   c->occurrences == 1 ? "" : "s", per,
                   c->estimated_from_points ? "from its characterized points"
                                            : "its null-context energy: nothing characterized",
                   ex_j, qcmd);
        }
    }
    if (do_char && before.report.deviation_detected && nc) {
        done = calloc(nc, sizeof *done);
        if (!done) {
            ex = erg_cli_fail(NULL, ERG_ENOMEM);
            goto out;
        }
        if ((ex = erg_cli_char_open(&ch, backends)) != 0)
            goto out;
        for (size_t i = 0; i < nc && !ex; i++) {
            const erg_refine_candidate *c = &cand[i];
            erg_context_signature *a = erg_context_set_find(&set, c->a),
                                  *b = erg_context_set_find(&set, c->b);
            if (!a || !b || !a->command[0] || !b->command[0]) {
                fprintf(stderr, "erg: %s: cannot characterize %s %s %s: %s has no \"command\"\n",
                        path, c->a, c->runtime ? "<->" : "->", c->b,
                        !b || !b->command[0] ? c->b : c->a);
                continue;
            }
            const char *ca = c->a, *cb = c->b;
            erg_context_point pb, pa;
            erg_context_point_init(&pb);
            erg_context_point_init(&pa);
            ex = erg_cli_char_point(&ch, b->command, c->runtime ? NULL : a->command,
                                    c->runtime ? a->command : NULL, &pb, &pa);
            if (ex)
                break;
            if (c->runtime) {
                pb.mechanism = pa.mechanism = ERG_MECHANISM_CONTENTION;
                snprintf(pb.name, sizeof pb.name, "with:%s", c->a);
                pb.corunners = &ca; /* erg_context_signature_add copies the names */
                pb.n_corunners = 1;
                snprintf(pa.name, sizeof pa.name, "with:%s", c->b);
                pa.corunners = &cb;
                pa.n_corunners = 1;
            } else {
                snprintf(pb.name, sizeof pb.name, "after:%s", c->a);
                snprintf(pb.after, sizeof pb.after, "%s", c->a);
                if (!strcmp(c->a, c->b))
                    snprintf(pb.cache, sizeof pb.cache, "warm");
            }
            /* points keep the signature's static power (one device, one s) */
            if ((rc = erg_context_signature_add(b, &pb, &d)) != ERG_OK ||
                (c->runtime && a != b && (rc = erg_context_signature_add(a, &pa, &d)) != ERG_OK)) {
                ex = erg_cli_fail(&d, rc);
                break;
            }
            erg_refine_point *rp = &done[n_done++];
            snprintf(rp->signature, sizeof rp->signature, "%s", c->b);
            snprintf(rp->point, sizeof rp->point, "%s", pb.name);
            rp->time_s = pb.time_s;
            rp->energy_j = pb.static_power_w * pb.time_s + pb.dynamic_energy_j;
            rp->null_energy_j = erg_signature_energy_j(&b->null_context);
            if (!json) {
                char e1[48], e0[48];
                erg_cli_si(e1, sizeof e1, rp->energy_j, "J");
                erg_cli_si(e0, sizeof e0, rp->null_energy_j, "J");
                printf("characterized %s at %s: E = %s (null context %s), %u runs\n", c->b, pb.name,
                       e1, e0, pb.runs);
            }
        }
        erg_cli_char_close(&ch);
        if (ex)
            goto out;
        if ((rc = compose(s, &set, conf, &m, &after, &d)) != ERG_OK) {
            ex = erg_cli_fail(&d, rc);
            goto out;
        }
        if (!json)
            print_report("composed again", &after);
        for (size_t i = 0; i < set.n && !ex; i++) {
            char out_path[2048];
            if (in_place && set.paths[i] &&
                (rc = erg_context_signature_write_file(set.paths[i], &set.sigs[i], &d)) != ERG_OK)
                ex = erg_cli_fail(&d, rc);
            if (!ex && sig_dir) {
                snprintf(out_path, sizeof out_path, "%s/%s.json", sig_dir,
                         set.sigs[i].null_context.name);
                if ((rc = erg_context_signature_write_file(out_path, &set.sigs[i], &d)) != ERG_OK)
                    ex = erg_cli_fail(&d, rc);
            }
        }
        if (in_place && !json && !ex)
            printf("updated the schedule's signature files\n");
    }
    if (!ex && graph) {
        erg_interaction_graph g;
        if ((rc = erg_interaction_graph_build(ptrs, set.n, conf, &g, &d)) != ERG_OK ||
            (rc = erg_interaction_graph_write_file(graph, &g, conf, &d)) != ERG_OK)
            ex = erg_cli_fail(&d, rc);
        erg_interaction_graph_free(&g);
    }
    if (!ex) {
        const erg_context_report *last = after.report.has_deviation ? &after : &before;
        if (json) {
            erg_refine_outcome ro = {
                &before, cand, nc, &set, done, n_done, after.report.has_deviation ? &after : NULL};
            if ((rc = erg_refine_write_json("-", &ro, &d)) != ERG_OK) {
                ex = erg_cli_fail(&d, rc);
                goto out;
            }
        }
        ex = last->report.deviation_detected ? ERG_EXIT_CHECK : ERG_EXIT_OK;
    }
out:
    free(done);
    free(ptrs);
    erg_context_report_free(&before);
    erg_context_report_free(&after);
    erg_context_set_free(&set);
    erg_schedule_free(s);
    return ex;
}

const struct erg_cli_command erg_cli_cmd_refine = {
    "refine", "close a deviation: characterize interacting pairs and compose again", run};
