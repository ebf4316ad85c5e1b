/* SPDX-License-Identifier: MIT */
/*
 * bench_calculus [MAX_ELEMENTS]: for random DAG schedules of 10^4, 10^5 and 10^6 elements (up to
 * MAX_ELEMENTS), side by side on this machine:
 *   parse     schedule/1 read throughput (MB/s of thread CPU time);
 *   cold      erg_schedule_compose (point values, makespan variance, per-device accounting, bias
 *             bound) without a workspace: every call allocates its working arrays, and the kernel
 *             hands it fresh pages; elements per second of thread CPU time (best of 3);
 *   warm      the same calls in one erg_compose_workspace that an earlier call has filled: the
 *             working arrays are reused, their pages already touched, and so are the adjacency
 *             and topological order of the DAG (the workspace keeps them, with a copy of the
 *             edges it compares exactly), as the loop is handed its arrays and adjacency ready
 *             (best of 3, after that first call);
 *   loop      a plain C loop doing the same arithmetic on the same DAG (arrays prepared beforehand,
 *             nodes in index order, which is topological here): start = max of the predecessors'
 *             finishes, Var(start) by Clark's pairwise max (erg_max2_normal) at every join,
 *             Var(finish) = Var(start) + σ²_T, the makespan the same over the sinks, and the
 *             energy sums Σ s·T + d, Σ σ²_d (best of 3);
 *   ratio     compose time / loop time, cold and warm;
 *   B/el      bytes per element that composition adds at its peak (a cold call): the process's
 *             resident high-water mark during the call (reset through /proc/self/clear_refs just
 *             before) minus its resident size before, divided by the elements;
 *   ws        bytes per element the workspace holds (erg_compose_workspace_bytes);
 *   sched     bytes per element of the parsed schedule (resident size after minus before);
 *   + MC x10  the same composition with a 10-sample Monte Carlo replay, elements/s of the call.
 * Thread CPU time, not wall time: the figures hold on a loaded machine. Each size runs in a child
 * process so that its memory figures are its own.
 */
#include "calculus/schedule_impl.h"
#include "calculus_dag_gen.h"
#include "erg/calculus.h"
#include "erg/stats.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A "Vm...:" line of /proc/self/status, in bytes (0 when unreadable). */
static double vm_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0.0;
    char line[256];
    double kb = 0.0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            kb = strtod(line + n + 1, NULL);
            break;
        }
    fclose(f);
    return kb * 1024.0;
}

/* Reset the resident high-water mark to the current resident size (Linux >= 4.0). */
static void reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* The reference: the same arithmetic as DAG composition, as a plain loop over flat arrays. */
struct ref {
    size_t n;
    uint32_t *pred_off, *pred;
    unsigned char *sink;
    double *t, *tv, *e, *dv; /* per node: T, σ²_T, s·T + d, σ²_d */
    double *fin, *vt;
};

static int ref_init(struct ref *r, const erg_schedule *s)
{
    size_t n = s->n_nodes, m = s->n_edges;
    memset(r, 0, sizeof *r);
    r->n = n;
    r->pred_off = calloc(n + 1, sizeof *r->pred_off);
    r->pred = malloc((m + 1) * sizeof *r->pred);
    r->sink = calloc(n, 1);
    r->t = malloc(n * sizeof *r->t);
    r->tv = malloc(n * sizeof *r->tv);
    r->e = malloc(n * sizeof *r->e);
    r->dv = malloc(n * sizeof *r->dv);
    r->fin = malloc(n * sizeof *r->fin);
    r->vt = malloc(n * sizeof *r->vt);
    if (!r->pred_off || !r->pred || !r->sink || !r->t || !r->tv || !r->e || !r->dv || !r->fin ||
        !r->vt)
        return -1;
    for (size_t i = 0; i < n; i++)
        r->sink[i] = 1;
    for (size_t k = 0; k < m; k++) {
        if (s->edges[k][0] >= s->edges[k][1])
            return -1; /* the generator's edges go forward: index order is topological */
        r->pred_off[s->edges[k][1] + 1]++;
        r->sink[s->edges[k][0]] = 0;
    }
    for (size_t i = 0; i < n; i++)
        r->pred_off[i + 1] += r->pred_off[i];
    uint32_t *cur = malloc((n + 1) * sizeof *cur);
    if (!cur)
        return -1;
    memcpy(cur, r->pred_off, n * sizeof *cur);
    for (size_t k = 0; k < m; k++)
        r->pred[cur[s->edges[k][1]]++] = s->edges[k][0];
    free(cur);
    for (size_t i = 0; i < n; i++) {
        const erg_signature *g = &s->sigs[s->nodes[i].sig];
        double w = isnan(g->static_power_w) ? s->devices[s->nodes[i].device].static_power_w
                                            : g->static_power_w;
        r->t[i] = g->time_s;
        r->tv[i] = g->time_var_s2;
        r->e[i] = w * g->time_s + g->dynamic_energy_j;
        r->dv[i] = fmax(0.0, g->energy_var_j2 - w * w * g->time_var_s2);
    }
    return 0;
}

static void ref_free(struct ref *r)
{
    free(r->pred_off);
    free(r->pred);
    free(r->sink);
    free(r->t);
    free(r->tv);
    free(r->e);
    free(r->dv);
    free(r->fin);
    free(r->vt);
}

static double ref_run(struct ref *r, double *var_t, double *energy_j, double *var_d)
{
    double e = 0.0, dv = 0.0;
    for (size_t v = 0; v < r->n; v++) {
        double st = 0.0, sv = 0.0;
        uint32_t q = r->pred_off[v], end = r->pred_off[v + 1];
        if (q < end) { /* point value: the latest finish; variance: Clark's max */
            double cm = r->fin[r->pred[q]];
            st = cm;
            sv = r->vt[r->pred[q]];
            for (q++; q < end; q++) {
                double f = r->fin[r->pred[q]];
                st = f > st ? f : st;
                erg_max2_normal(cm, sv, f, r->vt[r->pred[q]], &cm, &sv);
            }
        }
        r->fin[v] = st + r->t[v];
        r->vt[v] = sv + r->tv[v];
        e += r->e[v];
        dv += r->dv[v];
    }
    double mk = -HUGE_VAL, cm = 0.0, mv = 0.0;
    for (size_t v = 0; v < r->n; v++)
        if (r->sink[v]) {
            if (mk == -HUGE_VAL) {
                mk = cm = r->fin[v];
                mv = r->vt[v];
            } else {
                mk = r->fin[v] > mk ? r->fin[v] : mk;
                erg_max2_normal(cm, mv, r->fin[v], r->vt[v], &cm, &mv);
            }
        }
    *var_t = mv;
    *energy_j = e;
    *var_d = dv;
    return mk;
}

static int run_size(size_t n, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 1;
    erg_diag d;
    erg_schedule *s = NULL;
    malloc_trim(0);
    double rss0 = vm_bytes("VmRSS");
    double t0 = cpu_s();
    if (erg_schedule_read_file(path, &s, &d) != ERG_OK) {
        fprintf(stderr, "read: %s: %s\n", d.where, d.detail);
        return 1;
    }
    double t_parse = cpu_s() - t0;
    malloc_trim(0);
    double rss1 = vm_bytes("VmRSS");
    erg_report r;
    erg_compose_options o;
    erg_compose_options_init(&o);
    /* Memory: the first call, from a trimmed heap. */
    reset_hwm();
    double before = vm_bytes("VmRSS");
    if (erg_schedule_compose(s, &o, &r, &d) != ERG_OK) {
        fprintf(stderr, "compose: %s\n", d.detail);
        return 1;
    }
    double hwm = vm_bytes("VmHWM");
    erg_report_free(&r);
    double t_comp = HUGE_VAL, t_warm = HUGE_VAL;
    for (int rep = 0; rep < 3; rep++) {
        double a = cpu_s();
        if (erg_schedule_compose(s, &o, &r, &d) != ERG_OK)
            return 1;
        double b = cpu_s();
        t_comp = fmin(t_comp, b - a);
        erg_report_free(&r);
    }
    erg_compose_workspace *ws = erg_compose_workspace_new();
    if (!ws)
        return 1;
    o.workspace = ws;
    for (int rep = 0; rep < 4; rep++) { /* the first call sizes the workspace */
        double a = cpu_s();
        if (erg_schedule_compose(s, &o, &r, &d) != ERG_OK)
            return 1;
        double b = cpu_s();
        if (rep > 0)
            t_warm = fmin(t_warm, b - a);
        if (rep < 3)
            erg_report_free(&r);
    }
    double ws_bytes = (double)erg_compose_workspace_bytes(ws);
    o.workspace = NULL;
    erg_compose_workspace_free(ws);
    struct ref rf;
    if (ref_init(&rf, s) != 0) {
        fprintf(stderr, "reference: out of memory or edges not in index order\n");
        return 1;
    }
    double t_ref = HUGE_VAL, ref_t = 0.0, ref_vt = 0.0, ref_e = 0.0, ref_vd = 0.0;
    for (int rep = 0; rep < 3; rep++) {
        double a = cpu_s();
        ref_t = ref_run(&rf, &ref_vt, &ref_e, &ref_vd);
        double b = cpu_s();
        t_ref = fmin(t_ref, b - a);
    }
    ref_free(&rf);
    erg_report rm;
    o.mc_samples = 10;
    double t3 = cpu_s();
    if (erg_schedule_compose(s, &o, &rm, &d) != ERG_OK)
        return 1;
    double t_mc = cpu_s() - t3;
    erg_report_free(&rm);
    printf("%9zu  %7.1f MB  %7.1f MB/s  %9.3g el/s  %9.3g el/s  %9.3g el/s  %5.2f x  %5.2f x  "
           "%4.0f B  %4.0f B  %4.0f B  %9.3g el/s\n",
           n, (double)st.st_size / 1e6, (double)st.st_size / 1e6 / t_parse, (double)n / t_comp,
           (double)n / t_warm, (double)n / t_ref, t_comp / t_ref, t_warm / t_ref,
           (hwm - before) / (double)n, ws_bytes / (double)n, (rss1 - rss0) / (double)n,
           (double)n / t_mc);
    printf("%9s  compose: E = %.9g J +- %.4g, T = %.9g s +- %.4g;  loop: sum E_i = %.9g J, sum "
           "var_d = %.4g J^2, T = %.9g s +- %.4g\n",
           "", r.energy_j, r.energy_sd_j, r.time_s, r.time_sd_s, ref_e, ref_vd, ref_t,
           sqrt(ref_vt));
    erg_report_free(&r);
    erg_schedule_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    printf("random DAG schedules: 8 devices, 1-3 edges per element from the previous 16; "
           "thread CPU time\n");
    printf("compose cold: no workspace (fresh memory every call); warm: one reused "
           "erg_compose_workspace\n");
    printf("%9s  %10s  %12s  %14s  %14s  %14s  %7s  %7s  %6s  %6s  %6s  %14s\n", "elements", "file",
           "parse", "compose cold", "compose warm", "plain loop", "cold/lp", "warm/lp", "B/el",
           "ws", "sched", "+ MC x10");
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
