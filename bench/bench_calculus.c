/* SPDX-License-Identifier: MIT */
/*
 * bench_calculus [MAX_ELEMENTS]: for random DAG schedules of 10^4, 10^5 and 10^6 elements (up to
 * MAX_ELEMENTS), print schedule/1 parse throughput (MB/s), composition throughput (elements/s,
 * point values with makespan variance and per-device accounting; and the same composition with a
 * 10-sample Monte Carlo replay, elements/s of the whole call: subtracting the first, cold call's
 * time from it went negative at 10^4 elements), and the peak resident memory of a process that
 * parses and composes it. Each size runs in a child process so that its peak memory is its own.
 */
#include "calculus_dag_gen.h"
#include "erg/calculus.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_size(size_t n, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 1;
    erg_diag d;
    erg_schedule *s = NULL;
    double t0 = now_s();
    if (erg_schedule_read_file(path, &s, &d) != ERG_OK) {
        fprintf(stderr, "read: %s: %s\n", d.where, d.detail);
        return 1;
    }
    double t1 = now_s();
    erg_report r;
    erg_compose_options o;
    erg_compose_options_init(&o);
    if (erg_schedule_compose(s, &o, &r, &d) != ERG_OK) {
        fprintf(stderr, "compose: %s\n", d.detail);
        return 1;
    }
    double t2 = now_s();
    erg_report_free(&r);
    o.mc_samples = 10;
    double t3 = now_s();
    if (erg_schedule_compose(s, &o, &r, &d) != ERG_OK)
        return 1;
    double t4 = now_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%9zu  %8.1f MB  %8.1f MB/s  %10.3g el/s  %10.3g el/s  %9.1f MB   E = %.6g J +- %.3g, T "
           "= %.6g s +- %.3g\n",
           n, (double)st.st_size / 1e6, (double)st.st_size / 1e6 / (t1 - t0), (double)n / (t2 - t1),
           (double)n / (t4 - t3), (double)ru.ru_maxrss / 1024.0, r.energy_j, r.energy_sd_j,
           r.time_s, r.time_sd_s);
    erg_report_free(&r);
    erg_schedule_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    printf("random DAG schedules: 8 devices, 1-3 edges per element from the previous 16\n");
    printf("%9s  %11s  %13s  %13s  %13s  %12s\n", "elements", "file", "parse", "compose",
           "+ MC x10", "peak RSS");
    for (size_t n = 10000; n <= max; n *= 10) {
        char path[] = "/tmp/erg-bench-calculus.XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0)
            return 1;
        FILE *f = fdopen(fd, "w");
        if (!f || erg_bench_write_random_dag(f, n, 8, 16, 7) != 0 || fclose(f) != 0) {
            unlink(path);
            return 1;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int rc = run_size(n, path);
            fflush(stdout);
            _exit(rc);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        unlink(path);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    return 0;
}
