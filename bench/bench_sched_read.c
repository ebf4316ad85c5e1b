/* SPDX-License-Identifier: MIT */
/*
 * bench_sched_read [-r ROUNDS] [FILE...]: what reading a schedule/1 costs (issue 13, "Parsing
 * schedules"), side by side on the same file in one process:
 *   yajl      yajl_parse with no callbacks over the file in 64 KiB reads: the tokenizer the
 *             reader streams with, doing nothing with the tokens (the floor for this library);
 *   jansson   json_load_file: the whole document as a jansson tree, nothing checked;
 *   compose   erg_schedule_read_file: what `erg compose` reads (names hashed, ids resolved,
 *             edges checked, the DAG built);
 *   frontier  erg_opsched_read_file: what `erg frontier` reads (the same reader with the
 *             operating-set payload).
 * Rounds alternate the four readers so that the machine's load falls on all of them alike; it
 * prints the median thread CPU time of each as MB/s, and the ratios compose / yajl and frontier /
 * compose (issue 13: reading costs the same for both commands). Without FILE it generates random
 * DAG schedules of 2*10^4 and 10^6 elements (bench_calculus's generator) under /tmp, removed at
 * the end. Thread CPU time, not wall time: the figures hold on a loaded machine.
 */
#include "calculus_dag_gen.h"
#include "erg/calculus.h"
#include "erg/frontier.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* yajl over the file with no callbacks; 0 or -1 on a read or parse error. */
static int read_yajl(const char *path)
{
    static unsigned char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    int rc = h ? 0 : -1;
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (yajl_parse(h, buf, n) != yajl_status_ok)
            rc = -1;
    if (rc == 0 && (ferror(f) || yajl_complete_parse(h) != yajl_status_ok))
        rc = -1;
    if (h)
        yajl_free(h);
    fclose(f);
    return rc;
}

static int read_jansson(const char *path)
{
    json_error_t e;
    json_t *root = json_load_file(path, 0, &e);
    if (!root)
        return -1;
    json_decref(root);
    return 0;
}

static int read_compose(const char *path)
{
    erg_schedule *s = NULL;
    erg_diag d;
    if (erg_schedule_read_file(path, &s, &d) != ERG_OK) {
        fprintf(stderr, "bench_sched_read: %s: %s\n", d.where, d.detail);
        return -1;
    }
    erg_schedule_free(s);
    return 0;
}

static int read_frontier(const char *path)
{
    erg_opsched *s = NULL;
    erg_diag d;
    if (erg_opsched_read_file(path, &s, &d) != ERG_OK) {
        fprintf(stderr, "bench_sched_read: %s: %s\n", d.where, d.detail);
        return -1;
    }
    erg_opsched_free(s);
    return 0;
}

enum { READERS = 4, MAX_ROUNDS = 201 };

static int bench_file(const char *path, int rounds)
{
    static const char *names[READERS] = {"yajl", "jansson", "compose", "frontier"};
    int (*const fn[READERS])(const char *) = {read_yajl, read_jansson, read_compose, read_frontier};
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    double mb = (double)st.st_size / 1e6;
    /* at least `rounds`, and about 50 MB per reader for small files */
    int r = rounds;
    while (r < MAX_ROUNDS && (double)r * mb < 50.0)
        r++;
    static double t[READERS][MAX_ROUNDS];
    for (int k = 0; k < r; k++)
        for (int i = 0; i < READERS; i++) {
            double a = cpu_s();
            if (fn[i](path) != 0) {
                fprintf(stderr, "bench_sched_read: %s cannot read %s\n", names[i], path);
                return -1;
            }
            t[i][k] = cpu_s() - a;
        }
    double med[READERS];
    printf("%s: %.1f MB, medians of %d rounds (thread CPU time)\n", path, mb, r);
    for (int i = 0; i < READERS; i++) {
        med[i] = median(t[i], r);
        printf("  %-9s %9.4f s  %8.1f MB/s\n", names[i], med[i], mb / med[i]);
    }
    printf("  compose / yajl %.2f, compose / jansson %.2f, frontier / compose %.2f\n",
           med[2] / med[0], med[2] / med[1], med[3] / med[2]);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 5, a = 1;
    if (a + 1 < argc && strcmp(argv[a], "-r") == 0) {
        rounds = atoi(argv[a + 1]);
        a += 2;
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_sched_read [-r ROUNDS (1-%d)] [FILE...]\n", MAX_ROUNDS);
        return 2;
    }
    if (a < argc) {
        for (; a < argc; a++)
            if (bench_file(argv[a], rounds) != 0)
                return 1;
        return 0;
    }
    static const size_t sizes[] = {20000, 1000000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char path[] = "/tmp/erg-bench-sched-read.XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0)
            return 1;
        FILE *f = fdopen(fd, "w");
        int bad = !f || erg_bench_write_random_dag(f, sizes[i], 8, 16, 7) != 0;
        if (f && fclose(f) != 0)
            bad = 1;
        printf("random DAG of %zu elements: ", sizes[i]);
        if (bad || bench_file(path, rounds) != 0) {
            unlink(path);
            return 1;
        }
        unlink(path);
    }
    return 0;
}
