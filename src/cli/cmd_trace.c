/* SPDX-License-Identifier: MIT */
/* erg trace import|report: profiler traces (Chrome trace-event / Kineto JSON) to schedules and
 * energy reports. The work is in liberg (erg/trace.h); this file parses options and prints. */
#include "cli.h"
#include "erg/calculus.h"
#include "erg/store.h"
#include "erg/trace.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: erg trace import FILE... -o SCHEDULE.json [--rules R] [--align MODE]\n"
        "                        [--rank-from-order]\n"
        "       erg trace report FILE... [--rules R] [--align MODE] [--json] [--top N]\n"
        "                        [--rank-from-order]\n\n"
        "Read PyTorch-profiler / Kineto (Chrome trace-event) JSON files, plain or .gz, one per\n"
        "rank, and turn their GPU activities into an erg schedule (import, for erg compose) or\n"
        "an energy report (report).\n\n"
        "  -o, --output FILE   schedule/1 file to write (import; '-' is stdout)\n"
        "  -r, --rules FILE    rules/1 file (default: erg's built-in A100/H100 rules,\n"
        "                      grade estimator)\n"
        "  -a, --align MODE    none (default: one clock for all files; files starting more\n"
        "                      than 1 h apart are refused) or first-kernel\n"
        "                      (shift each file so its first kernel starts at 0)\n"
        "  -j, --json          report as one JSON object\n"
        "  -n, --top N         kernels in the top list (default 10)\n"
        "  -J, --jobs N        files parsed at once (default: one per CPU)\n"
        "  -R, --rank-from-order  ranks 0..n-1 in the order the files are given, overriding\n"
        "                      their distributedInfo (combine traces of separate jobs)\n"
        "  -h, --help          this help\n\n"
        "Exit status: 0 success, 2 unreadable or unusable input (nothing written).\n");
}

struct opts {
    const char *output, *rules;
    erg_trace_options topts;
    int json, rank_from_order;
    unsigned jobs; /* 0: one per CPU */
};

static int parse(const char *cmd, int argc, char **argv, struct opts *o, int *first_file)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"rules", required_argument, NULL, 'r'},
                                             {"align", required_argument, NULL, 'a'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"top", required_argument, NULL, 'n'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"jobs", required_argument, NULL, 'J'},
                                             {"rank-from-order", no_argument, NULL, 'R'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    erg_trace_options_init(&o->topts);
    optind = 1;
    opterr = 0;
    int ch;
    static const char shortopts[] = ":o:r:a:jn:J:Rh";
    while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        unsigned long n;
        switch (ch) {
        case 'o':
            o->output = optarg;
            break;
        case 'r':
            o->rules = optarg;
            break;
        case 'a':
            if (erg_trace_align_parse(optarg, &o->topts.align) != ERG_OK)
                return erg_cli_usage(cmd, "--align expects none or first-kernel, got '%s'", optarg);
            break;
        case 'j':
            o->json = 1;
            break;
        case 'R':
            o->rank_from_order = 1;
            break;
        case 'n':
            if (erg_cli_ulong(cmd, "--top", optarg, &n) != 0)
                return ERG_EXIT_USAGE;
            o->topts.top_n = n;
            break;
        case 'J':
            if (erg_cli_ulong(cmd, "--jobs", optarg, &n) != 0)
                return ERG_EXIT_USAGE;
            o->jobs = n > 1024 ? 1024 : (unsigned)n;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default: /* '?' or ':' */
            return erg_cli_bad_option(cmd, argc, argv, shortopts, longopts);
        }
    }
    if (optind >= argc)
        return erg_cli_usage(cmd, "no trace file given");
    *first_file = optind;
    return 0;
}

/* Read rules and every trace file; print the error and return the exit status on failure. */
static int load(int argc, char **argv, int first, const struct opts *o, erg_trace **trace,
                erg_rules **rules)
{
    erg_diag diag;
    erg_diag_clear(&diag);
    *trace = NULL;
    *rules = NULL;
    int st = o->rules ? erg_rules_read_file_resolving(o->rules, erg_store_signature_resolver, NULL,
                                                      rules, &diag)
                      : erg_rules_default(rules, &diag);
    if (st != ERG_OK)
        return erg_cli_fail(&diag, st);
    *trace = erg_trace_new();
    if (!*trace) {
        erg_rules_free(*rules);
        *rules = NULL;
        return erg_cli_fail(NULL, ERG_ENOMEM);
    }
    erg_trace_set_rank_from_order(*trace, o->rank_from_order);
    st = erg_trace_read_files(*trace, (const char *const *)(argv + first), (size_t)(argc - first),
                              o->jobs, &diag);
    if (st != ERG_OK) {
        erg_trace_free(*trace);
        erg_rules_free(*rules);
        *trace = NULL;
        *rules = NULL;
        return erg_cli_fail(&diag, st);
    }
    return 0;
}

static void warn_problems(const erg_trace *t, const erg_trace_stats *s)
{
    const char *where, *why;
    if (s->missing_duration && erg_trace_first_dropped(t, &where, &why) == ERG_OK)
        fprintf(stderr,
                "erg trace: warning: %zu GPU events without a usable ts or dur were dropped; the "
                "first: %s: %s\n",
                s->missing_duration, where, why);
    else if (s->missing_duration)
        fprintf(stderr, "erg trace: warning: %zu GPU events without ts or dur were dropped\n",
                s->missing_duration);
    if (s->negative_duration)
        fprintf(stderr,
                "erg trace: warning: %zu GPU events with a negative duration were dropped\n",
                s->negative_duration);
    if (s->unmatched_end || s->unclosed_begin)
        fprintf(stderr, "erg trace: warning: %zu E events without a B, %zu B events never closed\n",
                s->unmatched_end, s->unclosed_begin);
    if (s->stream_overlaps)
        fprintf(stderr,
                "erg trace: warning: %zu GPU activities overlap the previous one on their stream "
                "(a data problem; kept as same-device parallel)\n",
                s->stream_overlaps);
    if (s->unknown_events)
        fprintf(stderr, "erg trace: note: %zu events of unknown categories were ignored\n",
                s->unknown_events);
}

static int run_import(int argc, char **argv)
{
    struct opts o;
    int first;
    int rc = parse("trace import", argc, argv, &o, &first);
    if (rc != 0)
        return rc < 0 ? ERG_EXIT_OK : rc;
    if (!o.output)
        return erg_cli_usage("trace import", "-o SCHEDULE.json is required");
    erg_trace *trace;
    erg_rules *rules;
    rc = load(argc, argv, first, &o, &trace, &rules);
    if (rc != 0)
        return rc;
    erg_diag diag;
    erg_diag_clear(&diag);
    int st = erg_trace_schedule_write_file(o.output, trace, rules, &o.topts, &diag);
    if (st != ERG_OK) {
        rc = erg_cli_fail(&diag, st);
    } else {
        erg_trace_stats s;
        erg_trace_get_stats(trace, &s);
        warn_problems(trace, &s);
        size_t unmatched = 0;
        if (erg_trace_unmatched(trace, rules, &unmatched, &diag) == ERG_OK && unmatched)
            fprintf(stderr,
                    "erg trace: warning: %zu GPU activities match no rule and have no dynamic "
                    "energy in the schedule ('erg trace report' lists them)\n",
                    unmatched);
        fprintf(stderr, "erg trace import: %zu GPU activities from %zu file%s written to %s\n",
                s.activities, s.files, s.files == 1 ? "" : "s", o.output);
    }
    erg_trace_free(trace);
    erg_rules_free(rules);
    return rc;
}

static void print_table(const erg_trace_report *r, const erg_trace *trace, const char *rules)
{
    const erg_trace_stats *s = &r->stats;
    printf("%zu GPU activities from %zu file%s on %zu device%s, grade %s\n", s->activities,
           s->files, s->files == 1 ? "" : "s", r->n_devices, r->n_devices == 1 ? "" : "s",
           erg_grade_name(r->grade));
    if (r->flags) {
        char fl[512];
        erg_flags_text(r->flags, ", ", fl, sizeof fl);
        printf("flags    %s (measurement flags of the signatures the rules use)\n", fl);
    }
    if (rules)
        printf("rules    %s\n", r->rules);
    else
        printf("rules    erg's built-in A100/H100 defaults (rules/default.json): estimates from\n"
               "         datasheets, the energy-calculus paper and ML.ENERGY averages, not "
               "measurements\n");
    printf("energy   %.6g J ± %.3g J over %.6g s (static %.6g J, dynamic %.6g J)\n", r->energy_j,
           r->energy_sd_j, r->time_s, r->static_energy_j, r->dynamic_energy_j);
    printf("idle     %.6g J of static energy burned while devices were idle (%.1f%% of E)\n\n",
           r->idle_static_energy_j,
           r->energy_j > 0 ? 100.0 * r->idle_static_energy_j / r->energy_j : 0.0);
    printf("%-14s %-26s %10s %10s %10s %13s %11s\n", "device", "name", "busy_s", "idle_s",
           "static_J", "idle_static_J", "dynamic_J");
    for (size_t k = 0; k < r->n_devices; k++) {
        const erg_trace_device *d = &r->devices[k];
        printf("%-14s %-26.26s %10.6g %10.6g %10.6g %13.6g %11.6g\n", d->id,
               d->name[0] ? d->name : "-", d->busy_s, d->idle_s, d->static_energy_j,
               d->idle_static_energy_j, d->dynamic_energy_j);
    }
    for (size_t k = 0; k < r->n_devices; k++) {
        const erg_trace_device *d = &r->devices[k];
        if (d->default_rules)
            printf("note: %s (%s) matches no device entry of the rules: it takes their "
                   "default_device figures (static %.6g W)%s\n",
                   d->id, d->name[0] ? d->name : "no deviceProperties", d->static_power_w,
                   rules ? "" : ", the A100's: give --rules with this device's figures");
    }
    printf("\n%-12s %8s %12s %12s\n", "category", "count", "time_s", "dynamic_J");
    for (int c = 0; c < ERG_TRACE_CAT_COUNT; c++)
        printf("%-12s %8zu %12.6g %12.6g\n", r->categories[c].name, r->categories[c].count,
               r->categories[c].time_s, r->categories[c].energy_j);
    if (r->n_top) {
        printf("\ntop %zu by dynamic energy:\n%12s %8s %12s  %s\n", r->n_top, "dynamic_J", "count",
               "time_s", "name");
        for (size_t k = 0; k < r->n_top; k++)
            printf("%12.6g %8zu %12.6g  %.100s\n", r->top[k].energy_j, r->top[k].count,
                   r->top[k].time_s, r->top[k].name);
    }
    printf("\noverlap: compute %.6g s, communication %.6g s, overlapped %.6g s", r->compute_s,
           r->communication_s, r->overlap_s);
    if (r->communication_s > 0)
        printf(" (%.1f%% of communication)", 100.0 * r->overlap_s / r->communication_s);
    printf("\n");
    if (r->unmatched) {
        printf("\nunmatched: %zu activities match no rule (dynamic energy 0):\n", r->unmatched);
        for (size_t k = 0; k < r->n_unmatched_names && k < 10; k++)
            printf(
                "%8zu  %s %.100s\n", r->unmatched_names[k].count,
                r->unmatched_names[k].category < 0
                    ? "mixed"
                    : erg_trace_category_name((erg_trace_category)r->unmatched_names[k].category),
                r->unmatched_names[k].name);
        if (r->n_unmatched_names > 10)
            printf("     ...  %zu more names (--json lists all)\n", r->n_unmatched_names - 10);
    }
    printf("\nproblems: %zu missing ts/dur, %zu negative dur, %zu unmatched E, %zu unclosed B, "
           "%zu overlaps on one stream, %zu out of order\n",
           s->missing_duration, s->negative_duration, s->unmatched_end, s->unclosed_begin,
           s->stream_overlaps, s->out_of_order);
    const char *dw, *dy;
    if (s->missing_duration && erg_trace_first_dropped(trace, &dw, &dy) == ERG_OK)
        printf("  first missing ts/dur: %s: %s\n", dw, dy);
    printf("ignored: %zu host/metadata events, %zu of unknown categories", s->host_events,
           s->unknown_events);
    if (s->markers)
        printf(", %zu ROCm barrier markers", s->markers);
    const char *un;
    size_t uc;
    for (size_t k = 0; erg_trace_unknown(trace, k, &un, &uc) == ERG_OK; k++)
        printf("%s%s %zu", k ? ", " : " (", un, uc);
    printf("%s\n", erg_trace_unknown(trace, 0, NULL, NULL) == ERG_OK ? ")" : "");
}

static int run_report(int argc, char **argv)
{
    struct opts o;
    int first;
    int rc = parse("trace report", argc, argv, &o, &first);
    if (rc != 0)
        return rc < 0 ? ERG_EXIT_OK : rc;
    if (o.output)
        return erg_cli_usage("trace report", "-o is for 'erg trace import'");
    erg_trace *trace;
    erg_rules *rules;
    rc = load(argc, argv, first, &o, &trace, &rules);
    if (rc != 0)
        return rc;
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_trace_report rep;
    int st = erg_trace_report_make(trace, rules, &o.topts, &rep, &diag);
    if (st == ERG_OK && o.topts.align == ERG_TRACE_ALIGN_NONE && rep.start_spread_s > 60)
        fprintf(stderr,
                "erg trace: warning: the files' first GPU activities are %.6g s apart: if their "
                "clocks differ, try --align first-kernel\n",
                rep.start_spread_s);
    if (st != ERG_OK) {
        rc = erg_cli_fail(&diag, st);
    } else if (o.json) {
        char *text;
        st = erg_trace_report_json(trace, &rep, &text, &diag);
        if (st != ERG_OK) {
            rc = erg_cli_fail(&diag, st);
        } else {
            printf("%s\n", text);
            free(text);
        }
        erg_trace_report_free(&rep);
    } else {
        print_table(&rep, trace, o.rules);
        erg_trace_report_free(&rep);
    }
    erg_trace_free(trace);
    erg_rules_free(rules);
    return rc;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return ERG_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return ERG_EXIT_OK;
    }
    if (strcmp(argv[1], "import") == 0)
        return run_import(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return run_report(argc - 1, argv + 1);
    return erg_cli_usage("trace", "unknown subcommand '%s' (import or report)", argv[1]);
}

const struct erg_cli_command erg_cli_cmd_trace = {
    "trace", "profiler traces (Kineto/Chrome JSON) to schedules and energy reports", run};
