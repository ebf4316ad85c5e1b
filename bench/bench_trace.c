/* SPDX-License-Identifier: MIT */
/*
 * bench_trace [-J JOBS] FILE... : import the trace files (one per rank) as `erg trace report` does
 * (JOBS files parsed at once; default 1), then make
 * the report with the default rules, and print the import throughput in MB/s of uncompressed JSON,
 * the report time, and the process's peak resident memory (getrusage ru_maxrss), also per JSON
 * event and per GPU activity kept, above the process's resident memory before the first file (the
 * bytes that grow with the trace). Run one process per measurement: peak memory is a high-water
 * mark. bench/bench_trace.sh drives it and compares with simdjson (bench_trace_simdjson) and with
 * Python's json.load of the same files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "erg/trace.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux → MiB */
}

int main(int argc, char **argv)
{
    unsigned jobs = 1;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "-J") == 0) {
        jobs = (unsigned)atoi(argv[2]);
        first = 3;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: %s [-J JOBS] TRACE.json[.gz]...\n", argv[0]);
        return 2;
    }
    erg_diag d;
    double rss0 = peak_rss_mb();
    double t0 = now_s();
    erg_trace *t = erg_trace_new();
    if (erg_trace_read_files(t, (const char *const *)(argv + first), (size_t)(argc - first), jobs,
                             &d) != ERG_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", d.where, d.detail);
        return 2;
    }
    double t1 = now_s();
    double rss_import = peak_rss_mb();
    erg_rules *r = NULL;
    erg_trace_report rep;
    if (erg_rules_default(&r, &d) != ERG_OK ||
        erg_trace_report_make(t, r, NULL, &rep, &d) != ERG_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", d.where, d.detail);
        return 2;
    }
    double t2 = now_s();
    double rss_report = peak_rss_mb(); /* before the breakdown's own schedule below */
    /* What `erg trace import` builds, and composing it (calculus): the report no longer builds a
     * schedule; its totals equal these (tests/trace/test_report.c). */
    erg_schedule *sched = NULL;
    erg_compose_options co;
    erg_compose_options_init(&co);
    erg_report cr;
    if (erg_trace_schedule(t, r, NULL, &sched, &d) != ERG_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", d.where, d.detail);
        return 2;
    }
    double t3 = now_s();
    if (erg_schedule_compose(sched, &co, &cr, &d) != ERG_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", d.where, d.detail);
        return 2;
    }
    double t4 = now_s();
    erg_report_free(&cr);
    erg_schedule_free(sched);
    erg_trace_stats s;
    erg_trace_get_stats(t, &s);
    double mb = (double)s.json_bytes / 1e6;
    printf("jobs %u  files %zu  json %.1f MB  events %zu  gpu_activities %zu\n", jobs, s.files, mb,
           s.events, s.activities);
    double ev = s.events ? (double)s.events : 1.0, acts = s.activities ? (double)s.activities : 1.0;
    printf("import %.3f s  %.1f MB/s  peak_rss_after_import %.1f MiB  (%.1f MiB before reading)\n",
           t1 - t0, mb / (t1 - t0), rss_import, rss0);
    printf("report %.3f s (accounting and totals)  total %.3f s  %.1f MB/s  "
           "peak_rss %.1f MiB  report/import %.2f\n",
           t2 - t1, t2 - t0, mb / (t2 - t0), rss_report, rss_report / rss_import);
    printf("memory above the start: import %.1f B/event %.1f B/activity; report %.1f B/event %.1f "
           "B/activity\n",
           (rss_import - rss0) * 1048576.0 / ev, (rss_import - rss0) * 1048576.0 / acts,
           (rss_report - rss0) * 1048576.0 / ev, (rss_report - rss0) * 1048576.0 / acts);
    printf("  beside it: the schedule import writes %.3f s, erg_schedule_compose on it %.3f s "
           "(separate runs)\n",
           t3 - t2, t4 - t3);
    printf("energy %.6g J ± %.3g J over %.6g s\n", rep.energy_j, rep.energy_sd_j, rep.time_s);
    erg_trace_report_free(&rep);
    erg_rules_free(r);
    erg_trace_free(t);
    return 0;
}
