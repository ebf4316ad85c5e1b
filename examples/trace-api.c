/* SPDX-License-Identifier: MIT */
/*
 * The trace API from C: read rank files, make the report with erg's default rules (or a rules
 * file), print a few figures and the JSON. Build against an erg build tree, for example:
 *   cc -std=c17 -Iinclude -Ibuild/include examples/trace-api.c build/liberg.a \
 *      $(pkg-config --libs jansson gsl yajl zlib sqlite3) -lm -o /tmp/trace-api
 *   /tmp/trace-api ../shared/data/traces/hta_nccl_2xa100_rank0.json.gz
 */
#include <stdio.h>
#include <stdlib.h>

#include <erg/trace.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TRACE.json[.gz]...\n", argv[0]);
        return 2;
    }
    erg_diag d;
    erg_trace *t = erg_trace_new();
    for (int i = 1; i < argc; i++)
        if (erg_trace_read_file(t, argv[i], &d) != ERG_OK) {
            fprintf(stderr, "%s: %s\n", d.where, d.detail);
            return 2;
        }
    erg_rules *rules = NULL;
    erg_trace_report rep;
    erg_trace_options opts;
    erg_trace_options_init(&opts);
    opts.top_n = 3;
    if (erg_rules_default(&rules, &d) != ERG_OK ||
        erg_trace_report_make(t, rules, &opts, &rep, &d) != ERG_OK) {
        fprintf(stderr, "%s: %s\n", d.where, d.detail);
        return 2;
    }
    printf("E = %.4g J ± %.2g J over %.4g s (%s)\n", rep.energy_j, rep.energy_sd_j, rep.time_s,
           erg_grade_name(rep.grade));
    for (size_t k = 0; k < rep.n_devices; k++)
        printf("%s: busy %.4g s, idle %.4g s burning %.4g J of static energy\n", rep.devices[k].id,
               rep.devices[k].busy_s, rep.devices[k].idle_s, rep.devices[k].idle_static_energy_j);
    char *json = NULL;
    if (erg_trace_report_json(t, &rep, &json, &d) == ERG_OK) {
        printf("%.300s...\n", json);
        free(json);
    }
    erg_trace_report_free(&rep);
    erg_rules_free(rules);
    erg_trace_free(t);
    return 0;
}
