/* SPDX-License-Identifier: MIT */
/* A CPU "device" for the context example (docs/context.md, examples/context/refine-cpu.sh).
 *
 * Kernels on a GPU share its memory and caches across launches; processes on a CPU do not (a new
 * process maps new pages, and its start-up costs more than a cache miss). So the kernels here run
 * inside one long-lived process, the device, and each element is a small client that launches one
 * kernel and waits for it, as a host thread launches a GPU kernel:
 *
 *   ctx_device serve DIR &                 start the device (DIR/requests is its queue)
 *   ctx_device launch DIR KERNEL [ARG]     run one kernel, print its time
 *   ctx_device stop DIR
 *
 * Kernels (buffers live in the device for its whole life, like device memory):
 *   gemm    C (256 x 256) += A (256 x 1) B (1 x 256), C's 64-byte blocks visited in a fixed
 *           random order (as a blocked GEMM's tiles are, with no prefetcher to hide misses): bound
 *           by the latency of fetching C (512 KiB), so it is fast when C is cache-resident (after
 *           itself) and slow after an evicting workload
 *   stream  ARG MiB (default 64) read and written: evicts the caches
 * gemm and stream run on CPU 0, so that the state one leaves is the state the next finds.
 *   membw   ARG passes over a private 48 MiB buffer: memory-bound; two at once contend
 * Each launch runs its kernel on a thread of its own (two launches at once run concurrently) and
 * measures the kernel's thread CPU time, which on a machine shared with other work stands for its
 * time on an idle core. The client writes "time_s=T" to $ERG_ELEMENT_REPORT when that is set (what
 * erg characterize --time reported reads) and to stdout. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GEMM_N 256
#define GEMM_K 1
#define STREAM_MAX_MIB 1024
#define MEMBW_DOUBLES ((size_t)48 << 17)

static double *gemm_c, *gemm_a, *gemm_b, *stream_x;
static pthread_mutex_t gemm_lock = PTHREAD_MUTEX_INITIALIZER;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned *gemm_order; /* a random order of C's 64-byte blocks */

static void k_gemm(void)
{
    pthread_mutex_lock(&gemm_lock);
    const size_t blocks = (size_t)GEMM_N * GEMM_N / 8;
    for (size_t q = 0; q < blocks; q++) {
        size_t blk = gemm_order[q], i = blk * 8 / GEMM_N, j0 = blk * 8 % GEMM_N;
        double *ci = gemm_c + i * GEMM_N + j0;
        for (long p = 0; p < GEMM_K; p++) {
            double aip = gemm_a[i * GEMM_K + (size_t)p];
            const double *bp = gemm_b + (size_t)p * GEMM_N + j0;
            for (int j = 0; j < 8; j++)
                ci[j] = 0.5 * ci[j] + aip * bp[j];
        }
    }
    pthread_mutex_unlock(&gemm_lock);
}

static volatile double sink;

static void k_stream(long mib)
{
    double s = 0;
    size_t n = (size_t)(mib > 0 && mib <= STREAM_MAX_MIB ? mib : 64) << 17;
    for (size_t i = 0; i < n; i++) {
        stream_x[i] = 0.5 * stream_x[i] + 1.0;
        s += stream_x[i];
    }
    sink = s;
}

static void k_membw(long passes)
{
    double *x = malloc(MEMBW_DOUBLES * sizeof *x);
    if (!x)
        return;
    for (size_t i = 0; i < MEMBW_DOUBLES; i++)
        x[i] = (double)(i & 1023);
    double s[8] = {0};
    for (long p = 0; p < passes; p++)
        for (size_t i = 0; i < MEMBW_DOUBLES; i += 8)
            for (int k = 0; k < 8; k++)
                s[k] += x[i + (size_t)k];
    sink = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
    free(x);
}

struct job {
    char kernel[32];
    long arg;
    char reply[512];
};

static void *worker(void *p)
{
    struct job *j = p;
    int ok = 1;
    if (!strcmp(j->kernel, "gemm") || !strcmp(j->kernel, "stream")) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    double t0 = thread_cpu_s();
    if (!strcmp(j->kernel, "gemm"))
        k_gemm();
    else if (!strcmp(j->kernel, "stream"))
        k_stream(j->arg);
    else if (!strcmp(j->kernel, "membw"))
        k_membw(j->arg > 0 ? j->arg : 1);
    else
        ok = 0;
    double t = thread_cpu_s() - t0;
    FILE *f = fopen(j->reply, "w");
    if (f) {
        if (ok)
            fprintf(f, "time_s=%.9f\n", t);
        else
            fprintf(f, "error=unknown kernel %s\n", j->kernel);
        fclose(f);
    }
    free(j);
    return NULL;
}

static int serve(const char *dir)
{
    char q[512];
    snprintf(q, sizeof q, "%s/requests", dir);
    unlink(q);
    if (mkfifo(q, 0600) != 0) {
        perror(q);
        return 1;
    }
    gemm_c = calloc((size_t)GEMM_N * GEMM_N, sizeof *gemm_c);
    gemm_a = malloc((size_t)GEMM_N * GEMM_K * sizeof *gemm_a);
    gemm_b = malloc((size_t)GEMM_N * GEMM_K * sizeof *gemm_b);
    stream_x = malloc(((size_t)STREAM_MAX_MIB << 17) * sizeof *stream_x);
    if (!gemm_c || !gemm_a || !gemm_b || !stream_x)
        return 1;
    for (long i = 0; i < GEMM_N * GEMM_K; i++) {
        gemm_a[i] = 1.0 / (double)(i + 1);
        gemm_b[i] = 1.0 / (double)(i + 2);
    }
    for (size_t i = 0; i < (size_t)STREAM_MAX_MIB << 17; i++)
        stream_x[i] = (double)(i & 1023);
    const size_t blocks = (size_t)GEMM_N * GEMM_N / 8;
    gemm_order = malloc(blocks * sizeof *gemm_order);
    if (!gemm_order)
        return 1;
    unsigned long long r = 88172645463325252ULL; /* xorshift64: a fixed random order */
    for (size_t i = 0; i < blocks; i++)
        gemm_order[i] = (unsigned)i;
    for (size_t i = blocks - 1; i > 0; i--) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = (size_t)(r % (i + 1));
        unsigned t = gemm_order[i];
        gemm_order[i] = gemm_order[k];
        gemm_order[k] = t;
    }
    /* opened read-write, the queue always has a writer: no end of file between clients, so a
     * request written while the device would reopen it is never lost */
    int qfd = open(q, O_RDWR);
    FILE *f = qfd >= 0 ? fdopen(qfd, "r") : NULL;
    if (!f)
        return 1;
    char line[700];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "stop", 4))
            break;
        struct job *j = calloc(1, sizeof *j);
        if (!j)
            continue;
        if (sscanf(line, "%31s %ld %511s", j->kernel, &j->arg, j->reply) != 3) {
            free(j);
            continue;
        }
        pthread_t t;
        if (pthread_create(&t, NULL, worker, j) == 0)
            pthread_detach(t);
        else
            free(j);
    }
    fclose(f);
    unlink(q);
    return 0;
}

static int launch(const char *dir, const char *kernel, long arg)
{
    char q[512], reply[512], done[600];
    snprintf(q, sizeof q, "%s/requests", dir);
    snprintf(reply, sizeof reply, "%s/reply.%ld", dir, (long)getpid());
    snprintf(done, sizeof done, "%s", reply);
    unlink(reply);
    int fd = open(q, O_WRONLY);
    if (fd < 0) {
        fprintf(stderr, "ctx_device: no device at %s (start 'ctx_device serve %s')\n", dir, dir);
        return 1;
    }
    char msg[700];
    int n = snprintf(msg, sizeof msg, "%s %ld %s\n", kernel, arg, reply);
    if (write(fd, msg, (size_t)n) != n) {
        close(fd);
        return 1;
    }
    close(fd);
    /* wait for the reply file (the device writes it whole when the kernel ends) */
    char text[128] = "";
    for (int tries = 0; tries < 600000; tries++) {
        FILE *f = fopen(reply, "r");
        if (f) {
            size_t got = fread(text, 1, sizeof text - 1, f);
            fclose(f);
            text[got] = '\0';
            if (strchr(text, '\n'))
                break;
        }
        struct timespec ts = {0, 100000}; /* 0.1 ms */
        nanosleep(&ts, NULL);
    }
    unlink(reply);
    if (strncmp(text, "time_s=", 7) != 0) {
        fprintf(stderr, "ctx_device: %s", text[0] ? text : "no reply\n");
        return 1;
    }
    fputs(text, stdout);
    const char *rep = getenv("ERG_ELEMENT_REPORT");
    if (rep && rep[0]) {
        FILE *f = fopen(rep, "w");
        if (!f)
            return 1;
        fputs(text, f);
        fclose(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "serve"))
        return serve(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "launch"))
        return launch(argv[2], argv[3], argc > 4 ? atol(argv[4]) : 0);
    if (argc >= 3 && !strcmp(argv[1], "stop")) {
        char q[512];
        snprintf(q, sizeof q, "%s/requests", argv[2]);
        int fd = open(q, O_WRONLY);
        if (fd < 0)
            return 1;
        int ok = write(fd, "stop\n", 5) == 5;
        close(fd);
        return !ok;
    }
    fprintf(stderr, "usage: ctx_device serve DIR | launch DIR KERNEL [ARG] | stop DIR\n");
    return 2;
}
