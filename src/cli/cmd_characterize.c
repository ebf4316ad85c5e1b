/* SPDX-License-Identifier: MIT */
/* erg characterize: measure an element (a shell command) from the null context and under each
 * requested context, one mechanism at a time (energy-calculus paper Section 3.4, Table 1): cold vs
 * warm cache, thermal state after a heating load, co-running with another element. Writes a
 * signature/1 with its context points. With --schedule, runs a whole DAG schedule of commands as
 * one composite element (the coarse measurement of erg refine and erg check-granularity). */
#define _DEFAULT_SOURCE /* wait4 */
#include "characterize.h"
#include "cli.h"
#include "erg/calculus.h"
#include "erg/measure.h"
#include "erg/signature.h"
#include "erg/stats.h"
#include "meter_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char characterize_help[] =
    "Usage: erg characterize --name NAME -o OUT.json [options] [contexts] -- CMD ARGS...\n"
    "       erg characterize --schedule SCHEDULE.json -o OUT.json [options]\n\n"
    "Measure an element, a shell command, at the null context and under each requested context,\n"
    "one mechanism at a time (energy-calculus paper Section 3.4, Table 1; Appendix A), and write\n"
    "its signature/1 with the context points (docs/context.md). Before every measured run the\n"
    "--reset protocol realizes the null context (e.g. an evicting workload, a cool-down); then a\n"
    "context's prelude runs unmeasured, then the element is measured.\n\n"
    "Contexts (each repeatable; NAME names the other element as schedules do):\n"
    "  --after NAME=CMD    entry context after CMD ran (mechanism cache)\n"
    "  --cold NAME=CMD     after an evicting workload CMD (cache cold)\n"
    "  --warm              after the element itself (cache warm)\n"
    "  --heat NAME=CMD     after a heating load CMD (mechanism thermal; temperature recorded\n"
    "                      from hwmon/NVML where present)\n"
    "  --with NAME=CMD     co-running with CMD on the same device (mechanism contention); both\n"
    "                      endpoints' values are measured, the co-runner's into --corunner-out\n"
    "  --traffic-bytes B   intervening memory traffic of the --after/--cold workloads, bytes\n\n"
    "Options:\n"
    "  -r, --runs N        measured runs per context (default 5)\n"
    "  --warmup K          unmeasured runs of the element first (default 0)\n"
    "  --cooldown S        rest before every measured run, s (default 0)\n"
    "  --reset CMD         null-context protocol before every measured run (default none)\n"
    "  --device ID         device id in the signature (default cpu)\n"
    "  --time wall|cpu|reported\n"
    "                      T is wall time (default), the element's CPU time (user + system: on a\n"
    "                      machine shared with other work it stands for the time on an idle\n"
    "                      machine), or the time the element reports itself (a kernel's own\n"
    "                      timer: it writes \"time_s=T\" to the file $ERG_ELEMENT_REPORT names)\n"
    "  --energy meter|cpu-model\n"
    "                      meter (default): the total of erg's meters over each run (a co-run's\n"
    "                      dynamic energy is split by CPU time); cpu-model: the estimator's model\n"
    "                      on the element's own CPU time, s·T + (P_full - P_idle)/n_cpu x CPU s\n"
    "                      ($ERG_ESTIMATOR_IDLE_W, $ERG_ESTIMATOR_FULL_W; grade estimator)\n"
    "  --static-power W    s; default the calibration's idle power (meter) or P_idle (cpu-model)\n"
    "  --calibration FILE  calibration file (default as erg measure)\n"
    "  --backends LIST     meter backends (see 'erg meters')\n"
    "  --corunner-out F    write the co-runners' points (signature/1 of each, merged into F when\n"
    "                      it exists) -- with one --with\n"
    "  --schedule FILE     run the DAG of FILE (nodes start when their predecessors end; every\n"
    "                      signature names its \"command\") and write it as one composite element\n"
    "  --name NAME         element name; -o OUT.json output (\"-\": stdout); -q quiet\n\n"
    "Exit status: 0 ok, 1 a command failed, 2 bad usage or input, 3 no usable meter.\n";

/* ------------------------------------------------------------------ running commands --------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run cmd under /bin/sh, stdout to /dev/null; with report, ERG_ELEMENT_REPORT=report in its
 * environment (where an element that times itself writes "time_s=T"). */
static pid_t spawn_report(const char *cmd, const char *report)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    const char *const argv[] = {"sh", "-c", cmd, NULL};
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **envp = calloc(ne + 2, sizeof *envp);
    char var[1100];
    if (!envp) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "ERG_ELEMENT_REPORT=", 19) != 0)
            envp[k++] = environ[i];
    if (report) {
        snprintf(var, sizeof var, "ERG_ELEMENT_REPORT=%s", report);
        unlink(report);
        envp[k++] = var;
    }
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, erg_cli_exec_argv(argv), envp);
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "erg: cannot run /bin/sh: %s\n", strerror(rc));
        return -1;
    }
    return pid;
}

/* Wait for pid; *cpu_s its user + system time; returns its exit status (128+signal), -1. */
static int wait_child(pid_t pid, double *cpu_s)
{
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    if (cpu_s)
        *cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

static pid_t spawn_sh(const char *cmd)
{
    return spawn_report(cmd, NULL);
}

/* The time an element reported in its ERG_ELEMENT_REPORT file, s; NAN (with a message) when none.
 */
static double reported_time(const char *report, const char *cmd)
{
    FILE *f = fopen(report, "r");
    double t = NAN;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "time_s=", 7) == 0) {
                char *end;
                t = strtod(line + 7, &end);
                if (end == line + 7 || !(t >= 0) || !isfinite(t))
                    t = NAN;
            }
        fclose(f);
        unlink(report);
    }
    if (isnan(t))
        fprintf(stderr,
                "erg: '%s' reported no time: with --time reported an element writes "
                "\"time_s=SECONDS\" to the file named by $ERG_ELEMENT_REPORT\n",
                cmd);
    return t;
}

static int run_sh(const char *cmd)
{
    pid_t p = spawn_sh(cmd);
    if (p < 0)
        return -1;
    int rc = wait_child(p, NULL);
    if (rc != 0)
        fprintf(stderr, "erg: '%s' failed (status %d)\n", cmd, rc);
    return rc;
}

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static double temperature_c(struct erg_cli_char *c)
{
    if (!c->meter)
        return NAN;
    erg_temperature t[16];
    size_t n = 0;
    if (erg_meter_temperatures(c->meter, t, 16, &n) != ERG_OK || n == 0)
        return NAN;
    double m = -HUGE_VAL;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, t[i].temp_c);
    return m;
}

/* ------------------------------------------------------------------ the engine ---------------- */

static double env_w(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double x = v ? strtod(v, &end) : dflt;
    return v && (end == v || *end || !(x >= 0)) ? dflt : x;
}

int erg_cli_char_open(struct erg_cli_char *c, const char *backends)
{
    const char *tmp = getenv("TMPDIR");
    for (int k = 0; k < 2; k++)
        snprintf(c->report[k], sizeof c->report[k], "%s/erg-element-%ld-%d.report",
                 tmp && tmp[0] ? tmp : "/tmp", (long)getpid(), k);
    if (c->cpu_model) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        double idle = env_w("ERG_ESTIMATOR_IDLE_W", 10.0),
               full = env_w("ERG_ESTIMATOR_FULL_W", 65.0);
        if (isnan(c->static_w))
            c->static_w = idle;
        c->dyn_w_per_cpu = fmax(0.0, full - idle) / (double)(ncpu > 0 ? ncpu : 1);
        c->grade = ERG_GRADE_ESTIMATOR;
        erg_meter_options o; /* temperatures only, where present */
        erg_meter_options_init(&o);
        o.backends = "hwmon,nvml";
        if (erg_meter_open(&o, &c->meter, NULL) != ERG_OK)
            c->meter = NULL;
        return 0;
    }
    int ex = erg_cli_meter_open(backends, &c->meter);
    if (ex)
        return ex;
    if (erg_meter_sampler_start(c->meter, 0.05) != ERG_OK) {
        fprintf(stderr, "erg: cannot start the sampler thread\n");
        return ERG_EXIT_NOMETER;
    }
    erg_diag d;
    if (erg_monitor_open(c->meter, &c->mon, &d) != ERG_OK)
        return erg_cli_fail(&d, d.status);
    return 0;
}

void erg_cli_char_close(struct erg_cli_char *c)
{
    erg_monitor_close(c->mon);
    c->mon = NULL;
    if (c->meter)
        erg_meter_sampler_stop(c->meter);
    erg_meter_close(c->meter);
    c->meter = NULL;
}

struct sample {
    double time_s, energy_j, temp_c;
};

static int run_once(struct erg_cli_char *c, const char *cmd, const char *prelude, const char *corun,
                    struct sample *se, struct sample *sc)
{
    if (c->reset && run_sh(c->reset) != 0)
        return ERG_EXIT_CHECK;
    if (prelude && run_sh(prelude) != 0)
        return ERG_EXIT_CHECK;
    sleep_s(c->cooldown_s);
    se->temp_c = temperature_c(c);
    if (sc)
        sc->temp_c = se->temp_c;
    /* a window that cannot begin gives no energy figure (NaN below), never an uninitialised one */
    int began = c->mon && erg_window_begin(c->mon, "characterize", NULL) == ERG_OK;
    double t0 = now_s();
    pid_t pe = spawn_report(cmd, c->time_reported ? c->report[0] : NULL),
          pc = corun ? spawn_report(corun, c->time_reported ? c->report[1] : NULL) : 0;
    if (pe < 0 || pc < 0) {
        if (pe > 0)
            wait_child(pe, NULL);
        if (pc > 0)
            wait_child(pc, NULL);
        if (began && erg_window_cancel(c->mon, "characterize") != ERG_OK)
            fprintf(stderr, "erg: warning: the measurement window could not be dropped\n");
        return ERG_EXIT_USAGE;
    }
    double cpu_e = 0, cpu_c = 0, wall_e, wall_c = 0;
    int re, rcor = 0;
    if (!corun) {
        re = wait_child(pe, &cpu_e);
        wall_e = now_s() - t0;
    } else {
        /* whichever ends first */
        int st;
        struct rusage ru;
        pid_t first;
        while ((first = wait4(-1, &st, 0, &ru)) < 0 && errno == EINTR) {
        }
        double t1 = now_s() - t0;
        double cpu1 = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                      (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
        int r1 = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        double cpu2;
        pid_t second = first == pe ? pc : pe;
        int r2 = wait_child(second, &cpu2);
        double t2 = now_s() - t0;
        if (first == pe) {
            re = r1, cpu_e = cpu1, wall_e = t1, rcor = r2, cpu_c = cpu2, wall_c = t2;
        } else {
            rcor = r1, cpu_c = cpu1, wall_c = t1, re = r2, cpu_e = cpu2, wall_e = t2;
        }
    }
    double wall_w = now_s() - t0;
    double ew = NAN;
    erg_measurement m = {0};
    if (began && erg_window_end(c->mon, "characterize", 0, &m, NULL) == ERG_OK) {
        ew = m.total_energy_j;
        c->grade = erg_grade_weakest(c->grade, m.total_grade);
        c->flags |= m.total_flags;
    }
    erg_measurement_release(&m);
    if (re != 0 || rcor != 0) {
        fprintf(stderr, "erg: '%s' failed (status %d)\n", re ? cmd : corun, re ? re : rcor);
        return ERG_EXIT_CHECK;
    }
    if (c->time_reported) {
        /* the element's own timer: its time, and for the cpu-model its busy CPU time */
        wall_e = cpu_e = reported_time(c->report[0], cmd);
        if (corun)
            wall_c = cpu_c = reported_time(c->report[1], corun);
        if (isnan(cpu_e) || isnan(cpu_c))
            return ERG_EXIT_USAGE;
    }
    if (c->mon && !isfinite(ew)) {
        fprintf(stderr, "erg: no total energy from the meters for this run (see 'erg meters')\n");
        return ERG_EXIT_NOMETER;
    }
    double s = c->static_w;
    se->time_s = c->time_cpu ? cpu_e : wall_e; /* reported: both are the report */
    if (c->cpu_model) {
        se->energy_j = s * se->time_s + c->dyn_w_per_cpu * cpu_e;
        if (sc) {
            sc->time_s = c->time_cpu ? cpu_c : wall_c;
            sc->energy_j = s * sc->time_s + c->dyn_w_per_cpu * cpu_c;
        }
        return 0;
    }
    double dw = ew - s * wall_w; /* the window's dynamic energy */
    if (!sc) {
        se->energy_j = c->time_cpu || c->time_reported ? s * se->time_s + dw : ew;
        return 0;
    }
    double share = cpu_e + cpu_c > 0 ? cpu_e / (cpu_e + cpu_c) : 0.5;
    se->energy_j = s * se->time_s + dw * share;
    sc->time_s = c->time_cpu ? cpu_c : wall_c;
    sc->energy_j = s * sc->time_s + dw * (1.0 - share);
    return 0;
}

static void to_point(const struct erg_cli_char *c, const struct sample *v, size_t n,
                     erg_context_point *p)
{
    erg_running rt = {0}, re = {0}, rtc = {0};
    for (size_t k = 0; k < n; k++) {
        erg_running_add(&rt, v[k].time_s);
        erg_running_add(&re, v[k].energy_j);
        if (!isnan(v[k].temp_c))
            erg_running_add(&rtc, v[k].temp_c);
    }
    double s = c->static_w;
    p->static_power_w = s;
    p->time_s = rt.mean;
    p->time_var_s2 = n > 1 ? erg_running_var(&rt) : 0.0;
    p->dynamic_energy_j = fmax(0.0, re.mean - s * rt.mean);
    p->energy_var_j2 = fmax(n > 1 ? erg_running_var(&re) : 0.0, s * s * p->time_var_s2);
    p->runs = (unsigned)n;
    p->temperature_c = rtc.n ? rtc.mean : (double)NAN;
}

int erg_cli_char_point(struct erg_cli_char *c, const char *cmd, const char *prelude,
                       const char *corun, erg_context_point *pe, erg_context_point *pc)
{
    for (unsigned long k = 0; k < c->warmup; k++)
        if (run_sh(cmd) != 0)
            return ERG_EXIT_CHECK;
    struct sample *ve = calloc(c->runs, sizeof *ve), *vc = calloc(c->runs, sizeof *vc);
    if (!ve || !vc) {
        free(ve);
        free(vc);
        fprintf(stderr, "erg: out of memory\n");
        return ERG_EXIT_USAGE;
    }
    int ex = 0;
    for (unsigned long k = 0; k < c->runs && !ex; k++)
        ex = run_once(c, cmd, prelude, corun, &ve[k], corun ? &vc[k] : NULL);
    if (!ex) {
        to_point(c, ve, c->runs, pe);
        if (corun && pc)
            to_point(c, vc, c->runs, pc);
    }
    free(ve);
    free(vc);
    return ex;
}

/* ------------------------------------------------------------------ the command --------------- */

/* Contexts one command line characterizes (input validation only: a signature file takes any
 * number of points, and points characterized by other runs merge into a co-runner's file). */
#define MAX_CTX 64

struct ctx_req {
    char kind; /* 'a' after, 'c' cold, 'w' warm, 'h' heat, 'x' with */
    char name[ERG_SIG_NAME_MAX];
    const char *cmd;
};

/* Split NAME=CMD. */
static int name_cmd(const char *opt, const char *arg, struct ctx_req *r)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof r->name)
        return erg_cli_usage("characterize", "%s expects NAME=CMD, got '%s'", opt, arg);
    snprintf(r->name, sizeof r->name, "%.*s", (int)(eq - arg), arg);
    r->cmd = eq + 1;
    return 0;
}

/* Join argv into one shell command, quoting each word. */
static int join_argv(char **argv, int argc, char *buf, size_t size)
{
    size_t k = 0;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        int plain = *w != '\0';
        for (const char *p = w; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%",
                        *p))
                plain = 0;
        if (k && k < size)
            buf[k++] = ' ';
        if (plain) {
            for (const char *p = w; *p && k < size; p++)
                buf[k++] = *p;
        } else {
            if (k < size)
                buf[k++] = '\'';
            for (const char *p = w; *p && k + 4 < size; p++) {
                if (*p == '\'') {
                    memcpy(buf + k, "'\\''", 4);
                    k += 4;
                } else {
                    buf[k++] = *p;
                }
            }
            if (k < size)
                buf[k++] = '\'';
        }
    }
    if (k >= size)
        return -1;
    buf[k] = '\0';
    return 0;
}

static double point_energy(const erg_context_point *p)
{
    return p->static_power_w * p->time_s + p->dynamic_energy_j;
}

static int run_schedule(struct erg_cli_char *c, const char *path, const char *name, const char *out,
                        int quiet);

static int run(int argc, char **argv)
{
    static const struct option opts[] = {{"name", required_argument, NULL, 'n'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"runs", required_argument, NULL, 'r'},
                                         {"warmup", required_argument, NULL, 'W'},
                                         {"cooldown", required_argument, NULL, 'C'},
                                         {"reset", required_argument, NULL, 'R'},
                                         {"after", required_argument, NULL, 'a'},
                                         {"cold", required_argument, NULL, 'c'},
                                         {"warm", no_argument, NULL, 'w'},
                                         {"heat", required_argument, NULL, 'H'},
                                         {"with", required_argument, NULL, 'x'},
                                         {"traffic-bytes", required_argument, NULL, 'B'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"time", required_argument, NULL, 't'},
                                         {"energy", required_argument, NULL, 'e'},
                                         {"static-power", required_argument, NULL, 's'},
                                         {"calibration", required_argument, NULL, 'k'},
                                         {"backends", required_argument, NULL, 'b'},
                                         {"corunner-out", required_argument, NULL, 'X'},
                                         {"schedule", required_argument, NULL, 'S'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct erg_cli_char c;
    memset(&c, 0, sizeof c);
    c.runs = 5;
    c.static_w = NAN;
    c.grade = ERG_GRADE_HW_SHUNT;
    const char *name = NULL, *out = NULL, *device = "cpu", *cal_path = NULL, *backends = NULL,
               *co_out = NULL, *sched = NULL;
    double traffic = NAN;
    int quiet = 0, opt;
    struct ctx_req req[MAX_CTX];
    size_t nreq = 0;
    while ((opt = getopt_long(argc, argv, "n:o:r:qh", opts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            name = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'r':
        case 'W':
            if (erg_cli_count("characterize", opt == 'r' ? "--runs" : "--warmup", optarg,
                              opt == 'r' ? 1 : 0, 100000, opt == 'r' ? &c.runs : &c.warmup))
                return ERG_EXIT_USAGE;
            break;
        case 'C':
        case 'B':
        case 's': {
            double v;
            const char *on = opt == 'C'   ? "--cooldown"
                             : opt == 'B' ? "--traffic-bytes"
                                          : "--static-power";
            if (erg_cli_double("characterize", on, optarg, &v))
                return ERG_EXIT_USAGE;
            if (v < 0)
                return erg_cli_usage("characterize", "%s must be >= 0, got '%s'", on, optarg);
            /* sleep_s casts it to time_t */
            if (opt == 'C' && v > 86400)
                return erg_cli_usage("characterize", "--cooldown must be at most 86400 s, got '%s'",
                                     optarg);
            if (opt == 'C')
                c.cooldown_s = v;
            else if (opt == 'B')
                traffic = v;
            else
                c.static_w = v;
            break;
        }
        case 'R':
            c.reset = optarg;
            break;
        case 'a':
        case 'c':
        case 'H':
        case 'x':
        case 'w':
            if (nreq == MAX_CTX - 1)
                return erg_cli_usage("characterize", "at most %d contexts per command line",
                                     MAX_CTX - 1);
            memset(&req[nreq], 0, sizeof req[nreq]);
            req[nreq].kind = opt == 'H' ? 'h' : (char)opt;
            if (opt != 'w' && name_cmd(opt == 'a'   ? "--after"
                                       : opt == 'c' ? "--cold"
                                       : opt == 'H' ? "--heat"
                                                    : "--with",
                                       optarg, &req[nreq]))
                return ERG_EXIT_USAGE;
            nreq++;
            break;
        case 'd':
            device = optarg;
            break;
        case 't':
            if (strcmp(optarg, "wall") && strcmp(optarg, "cpu") && strcmp(optarg, "reported"))
                return erg_cli_usage("characterize", "--time is wall, cpu or reported, got '%s'",
                                     optarg);
            c.time_cpu = !strcmp(optarg, "cpu");
            c.time_reported = !strcmp(optarg, "reported");
            break;
        case 'e':
            if (strcmp(optarg, "meter") && strcmp(optarg, "cpu-model"))
                return erg_cli_usage("characterize", "--energy is meter or cpu-model, got '%s'",
                                     optarg);
            c.cpu_model = !strcmp(optarg, "cpu-model");
            break;
        case 'k':
            cal_path = optarg;
            break;
        case 'b':
            backends = optarg;
            break;
        case 'X':
            co_out = optarg;
            break;
        case 'S':
            sched = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            fputs(characterize_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("characterize", argc, argv, "n:o:r:qh", opts);
        }
    }
    if (!out)
        return erg_cli_usage("characterize", "give the output file with -o OUT.json");
    if (sched && (optind < argc || nreq))
        return erg_cli_usage("characterize",
                             "--schedule runs the schedule's own commands: no CMD, no contexts");
    if (!sched && optind >= argc)
        return erg_cli_usage("characterize", "give the element's command after --");
    if (!sched && !name)
        return erg_cli_usage("characterize", "give the element's name with --name");
    size_t nwith = 0;
    for (size_t i = 0; i < nreq; i++)
        nwith += req[i].kind == 'x';
    if (co_out && nwith != 1)
        return erg_cli_usage("characterize", "--corunner-out goes with exactly one --with");
    erg_diag d;
    erg_diag_clear(&d);
    /* the output paths are checked before any run: a folder or an unwritable place found after
     * minutes of runs would lose them */
    const char *outs[] = {out, co_out};
    for (size_t i = 0; i < 2; i++)
        if (outs[i] && erg_output_check(outs[i], &d) != ERG_OK) {
            fprintf(stderr, "erg: %s: cannot write the signature there: %s\n", outs[i], d.detail);
            return ERG_EXIT_USAGE;
        }
    if (isnan(c.static_w) && !c.cpu_model) {
        char defpath[1024];
        if (!cal_path &&
            erg_calibration_default_path(defpath, &(size_t){sizeof defpath}) == ERG_OK &&
            access(defpath, R_OK) == 0)
            cal_path = defpath;
        if (!cal_path) {
            fprintf(stderr, "erg: the static power s is unknown: give --static-power W, run 'erg "
                            "calibrate' at rest first, or give --calibration FILE\n");
            return ERG_EXIT_USAGE;
        }
        erg_calibration *cal = NULL;
        int rc = erg_calibration_read_file(cal_path, &cal, &d);
        if (rc != ERG_OK)
            return erg_cli_fail(&d, rc);
        c.static_w = cal->idle_power_w;
        erg_calibration_free(cal);
    }
    int ex = erg_cli_char_open(&c, backends);
    if (ex) {
        erg_cli_char_close(&c);
        return ex;
    }
    if (sched) {
        ex = run_schedule(&c, sched, name, out, quiet);
        erg_cli_char_close(&c);
        return ex;
    }
    char cmd[ERG_SIG_META_MAX];
    if (join_argv(argv + optind, argc - optind, cmd, sizeof cmd)) {
        erg_cli_char_close(&c);
        return erg_cli_usage("characterize", "the command is longer than %d bytes",
                             ERG_SIG_META_MAX - 1);
    }
    erg_context_signature *cs = malloc(sizeof *cs), *co = malloc(sizeof *co);
    if (!cs || !co) {
        free(cs);
        free(co);
        erg_cli_char_close(&c);
        return erg_cli_fail(NULL, ERG_ENOMEM);
    }
    erg_context_signature_init(cs);
    snprintf(cs->command, sizeof cs->command, "%s", cmd);
    erg_signature *ns = &cs->null_context;
    snprintf(ns->name, sizeof ns->name, "%s", name);
    snprintf(ns->device, sizeof ns->device, "%s", device);
    /* null context */
    erg_context_point p0, pc;
    erg_context_point_init(&p0);
    ex = erg_cli_char_point(&c, cmd, NULL, NULL, &p0, NULL);
    if (!ex) {
        ns->static_power_w = p0.static_power_w;
        ns->time_s = p0.time_s;
        ns->dynamic_energy_j = p0.dynamic_energy_j;
        ns->time_var_s2 = p0.time_var_s2;
        ns->energy_var_j2 = p0.energy_var_j2;
        ns->runs = p0.runs;
        if (!quiet)
            fprintf(stderr, "%-24s T = %.6g s (sd %.3g), E = %.6g J (sd %.3g)\n", "null context",
                    p0.time_s, sqrt(p0.time_var_s2), point_energy(&p0), sqrt(p0.energy_var_j2));
    }
    erg_context_signature_init(co);
    for (size_t i = 0; !ex && i < nreq; i++) {
        const struct ctx_req *r = &req[i];
        const char *r_name = r->name;
        erg_context_point p;
        erg_context_point_init(&p);
        erg_context_point_init(&pc);
        const char *prelude = r->kind == 'w' ? cmd : r->kind == 'x' ? NULL : r->cmd;
        ex = erg_cli_char_point(&c, cmd, prelude, r->kind == 'x' ? r->cmd : NULL, &p, &pc);
        if (ex)
            break;
        switch (r->kind) {
        case 'a':
        case 'c':
            snprintf(p.name, sizeof p.name, "after:%s", r->name);
            snprintf(p.after, sizeof p.after, "%s", r->name);
            if (r->kind == 'c')
                snprintf(p.cache, sizeof p.cache, "cold");
            p.traffic_bytes = traffic;
            break;
        case 'w':
            snprintf(p.name, sizeof p.name, "warm");
            snprintf(p.after, sizeof p.after, "%s", name);
            snprintf(p.cache, sizeof p.cache, "warm");
            break;
        case 'h':
            p.mechanism = ERG_MECHANISM_THERMAL;
            snprintf(p.name, sizeof p.name, "heat:%s", r->name);
            snprintf(p.after, sizeof p.after, "%s", r->name);
            break;
        default:
            p.mechanism = pc.mechanism = ERG_MECHANISM_CONTENTION;
            snprintf(p.name, sizeof p.name, "with:%s", r->name);
            p.corunners = &r_name; /* erg_context_signature_add copies the names */
            p.n_corunners = 1;
            snprintf(pc.name, sizeof pc.name, "with:%s", name);
            pc.corunners = &name;
            pc.n_corunners = 1;
            if (co_out) {
                snprintf(co->null_context.name, sizeof co->null_context.name, "%s", r->name);
                co->null_context.static_power_w = c.static_w;
                snprintf(co->null_context.device, sizeof co->null_context.device, "%s", device);
                snprintf(co->command, sizeof co->command, "%s", r->cmd);
                if (erg_context_signature_add(co, &pc, &d) != ERG_OK) {
                    ex = erg_cli_fail(&d, d.status);
                    break;
                }
            }
            break;
        }
        if (ex)
            break;
        if (erg_context_signature_add(cs, &p, &d) != ERG_OK) {
            ex = erg_cli_fail(&d, d.status);
            break;
        }
        if (!quiet) {
            erg_signature ps;
            erg_insensitivity t;
            erg_signature ref = *ns;
            erg_diag td;
            erg_diag_clear(&td);
            /* a test that cannot be made (ERG_ERANGE: its left-hand side overflows) says so
             * instead of printing a verdict from an unset result */
            int trc = erg_context_point_signature(cs, cs->n_points - 1, &ps);
            if (trc == ERG_OK)
                trc = erg_context_insensitive(&ref, &ps, 0.95, &t, &td);
            char verdict[sizeof td.detail + 32];
            snprintf(verdict, sizeof verdict, "%s%s",
                     trc != ERG_OK   ? "not tested: "
                     : t.insensitive ? "insensitive (Eq. 11/12 at 0.95)"
                                     : "SENSITIVE",
                     trc != ERG_OK ? (td.detail[0] ? td.detail : erg_strerror(trc)) : "");
            fprintf(stderr, "%-24s T = %.6g s (sd %.3g), E = %.6g J (sd %.3g), dE = %+.4g J: %s\n",
                    p.name, p.time_s, sqrt(p.time_var_s2), point_energy(&p), sqrt(p.energy_var_j2),
                    point_energy(&p) - point_energy(&p0), verdict);
        }
    }
    ns->grade = c.grade;
    ns->flags = c.flags;
    if (!ex && (ex = erg_context_signature_write_file(out, cs, &d)) != ERG_OK)
        ex = erg_cli_fail(&d, ex);
    if (!ex && co_out) {
        /* the co-runner's point goes into its own signature file: merged when it exists */
        erg_context_signature *old = malloc(sizeof *old);
        if (old && erg_context_signature_read_file(co_out, old, NULL) == ERG_OK) {
            /* a point the file cannot take (ERG_ENOMEM) fails the command: it is never dropped
             * silently, and the file is left as it was */
            for (size_t i = 0; !ex && i < co->n_points; i++)
                if (erg_context_signature_add(old, &co->points[i], &d) != ERG_OK) {
                    snprintf(d.where, sizeof d.where, "%s", co_out);
                    ex = erg_cli_fail(&d, d.status);
                }
            erg_context_signature_release(co);
            *co = *old; /* old's points move to co */
        } else {
            /* no file yet: its null context is unknown here; measure it */
            erg_context_point q;
            erg_context_point_init(&q);
            const char *cc = co->command;
            ex = erg_cli_char_point(&c, cc, NULL, NULL, &q, NULL);
            co->null_context.time_s = q.time_s;
            co->null_context.dynamic_energy_j = q.dynamic_energy_j;
            co->null_context.time_var_s2 = q.time_var_s2;
            co->null_context.energy_var_j2 = q.energy_var_j2;
            co->null_context.runs = q.runs;
            co->null_context.grade = c.grade;
            co->null_context.flags = c.flags;
        }
        free(old);
        if (!ex && (ex = erg_context_signature_write_file(co_out, co, &d)) != ERG_OK)
            ex = erg_cli_fail(&d, ex);
    }
    erg_context_signature_release(cs);
    erg_context_signature_release(co);
    free(cs);
    free(co);
    erg_cli_char_close(&c);
    return ex;
}

/* ------------------------------------------------------------------ a whole schedule ---------- */

static int run_schedule(struct erg_cli_char *c, const char *path, const char *name, const char *out,
                        int quiet)
{
    erg_diag d;
    erg_diag_clear(&d);
    erg_schedule *s = NULL;
    erg_context_set set;
    memset(&set, 0, sizeof set);
    int rc = erg_schedule_read_file(path, &s, &d);
    if (rc == ERG_OK)
        rc = erg_context_set_read_schedule(path, &set, &d);
    if (rc != ERG_OK) {
        erg_schedule_free(s);
        return erg_cli_fail(&d, rc);
    }
    size_t n = erg_schedule_node_count(s), ne = erg_schedule_edge_count(s);
    int ex = 0;
    if (n == 0) {
        fprintf(stderr, "erg: %s: --schedule runs the DAG form (nodes and edges)\n", path);
        ex = ERG_EXIT_USAGE;
    }
    const char **cmds = calloc(n + 1, sizeof *cmds);
    size_t *indeg = calloc(n + 1, sizeof *indeg), *left = calloc(n + 1, sizeof *left);
    pid_t *pid = calloc(n + 1, sizeof *pid);
    double *fin = calloc(n + 1, sizeof *fin), *cpu = calloc(n + 1, sizeof *cpu),
           *dur = calloc(n + 1, sizeof *dur);
    struct sample *v = calloc(c->runs, sizeof *v);
    if (!ex && (!cmds || !indeg || !left || !pid || !fin || !cpu || !dur || !v)) {
        fprintf(stderr, "erg: out of memory\n");
        ex = ERG_EXIT_USAGE;
    }
    for (size_t i = 0; !ex && i < n; i++) {
        const char *id = NULL, *sig = NULL;
        if (erg_schedule_node_info(s, i, &id, &sig, NULL) != ERG_OK) /* i < n: cannot fail */
            sig = NULL;
        const erg_context_signature *cs = sig ? erg_context_set_find(&set, sig) : NULL;
        if (!cs || !cs->command[0]) {
            fprintf(stderr,
                    "erg: %s: node \"%s\": signature \"%s\" has no \"command\" to run "
                    "(characterize it with erg characterize)\n",
                    path, id ? id : "?", sig ? sig : "?");
            ex = ERG_EXIT_USAGE;
        }
        cmds[i] = cs ? cs->command : NULL;
    }
    for (size_t k = 0; !ex && k < ne; k++) {
        size_t a, b;
        if (erg_schedule_edge_info(s, k, &a, &b) == ERG_OK) /* k < ne: always */
            indeg[b]++;
    }
    struct sample warm;
    for (unsigned long it = 0; !ex && it < c->warmup + c->runs; it++) {
        /* the first --warmup runs of the whole schedule are measured and dropped */
        unsigned long run = it >= c->warmup ? it - c->warmup : 0;
        struct sample *vr = it >= c->warmup ? &v[run] : &warm;
        if (c->reset && run_sh(c->reset) != 0) {
            ex = ERG_EXIT_CHECK;
            break;
        }
        sleep_s(c->cooldown_s);
        vr->temp_c = temperature_c(c);
        memcpy(left, indeg, n * sizeof *left);
        /* no window, no energy figure (NaN), never an uninitialised one */
        int began = c->mon && erg_window_begin(c->mon, "schedule", NULL) == ERG_OK;
        double t0 = now_s(), dyn = 0.0;
        size_t done = 0, running = 0;
        for (size_t i = 0; i < n; i++)
            pid[i] = 0;
        while (!ex && done < n) {
            for (size_t i = 0; i < n; i++)
                if (!pid[i] && left[i] == 0) {
                    char rp[1100];
                    snprintf(rp, sizeof rp, "%s.%zu", c->report[0], i);
                    pid[i] = spawn_report(cmds[i], c->time_reported ? rp : NULL);
                    if (pid[i] < 0) {
                        ex = ERG_EXIT_USAGE;
                        break;
                    }
                    running++;
                    left[i] = (size_t)-1;
                }
            if (ex || !running)
                break;
            int st;
            struct rusage ru;
            pid_t p;
            while ((p = wait4(-1, &st, 0, &ru)) < 0 && errno == EINTR) {
            }
            if (p < 0)
                break;
            running--;
            size_t i;
            for (i = 0; i < n && pid[i] != p; i++) {
            }
            if (i == n)
                continue;
            cpu[i] = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                     (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
            fin[i] = now_s() - t0;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "erg: '%s' failed\n", cmds[i]);
                ex = ERG_EXIT_CHECK;
            } else if (c->time_reported) {
                char rp[1100];
                snprintf(rp, sizeof rp, "%s.%zu", c->report[0], i);
                cpu[i] = reported_time(rp, cmds[i]);
                if (isnan(cpu[i]))
                    ex = ERG_EXIT_USAGE;
            }
            done++;
            dyn += c->dyn_w_per_cpu * cpu[i];
            for (size_t k = 0; k < ne; k++) {
                size_t a, b;
                if (erg_schedule_edge_info(s, k, &a, &b) == ERG_OK && a == i)
                    left[b]--;
            }
        }
        while (running > 0) { /* after a failure: reap what still runs */
            int st;
            if (wait(&st) < 0 && errno != EINTR)
                break;
            running--;
        }
        double wall = now_s() - t0, ew = NAN;
        erg_measurement m = {0};
        if (began && erg_window_end(c->mon, "schedule", 0, &m, NULL) == ERG_OK) {
            ew = m.total_energy_j;
            c->grade = erg_grade_weakest(c->grade, m.total_grade);
            c->flags |= m.total_flags;
        }
        erg_measurement_release(&m);
        if (ex)
            break;
        /* makespan: wall time, or the critical path over the nodes' CPU times */
        double t = wall;
        if (c->time_cpu || c->time_reported) {
            /* longest path: nodes in an order where every edge goes forward (repeat relax) */
            for (size_t i = 0; i < n; i++)
                dur[i] = cpu[i];
            for (size_t pass = 0; pass < n; pass++) {
                int changed = 0;
                for (size_t k = 0; k < ne; k++) {
                    size_t a, b;
                    if (erg_schedule_edge_info(s, k, &a, &b) != ERG_OK) /* k < ne: never */
                        continue;
                    if (dur[a] + cpu[b] > dur[b] + 1e-15) {
                        dur[b] = dur[a] + cpu[b];
                        changed = 1;
                    }
                }
                if (!changed)
                    break;
            }
            t = 0;
            for (size_t i = 0; i < n; i++)
                t = fmax(t, dur[i]);
        }
        vr->time_s = t;
        if (c->cpu_model)
            vr->energy_j = c->static_w * t + dyn;
        else if (!isfinite(ew)) {
            fprintf(stderr, "erg: no total energy from the meters for this run\n");
            ex = ERG_EXIT_NOMETER;
        } else
            vr->energy_j =
                c->time_cpu || c->time_reported ? c->static_w * t + (ew - c->static_w * wall) : ew;
    }
    if (!ex) {
        erg_context_signature *cs = malloc(sizeof *cs);
        if (!cs) {
            ex = erg_cli_fail(NULL, ERG_ENOMEM);
        } else {
            erg_context_signature_init(cs);
            erg_context_point p;
            erg_context_point_init(&p);
            to_point(c, v, c->runs, &p);
            erg_signature *ns = &cs->null_context;
            if (name)
                snprintf(ns->name, sizeof ns->name, "%s", name);
            else {
                const char *b = strrchr(path, '/');
                snprintf(ns->name, sizeof ns->name, "%s", b ? b + 1 : path);
            }
            ns->static_power_w = p.static_power_w;
            ns->time_s = p.time_s;
            ns->dynamic_energy_j = p.dynamic_energy_j;
            ns->time_var_s2 = p.time_var_s2;
            ns->energy_var_j2 = p.energy_var_j2;
            ns->runs = p.runs;
            ns->grade = c->grade;
            ns->flags = c->flags;
            if (!quiet)
                fprintf(stderr,
                        "schedule %s: T = %.6g s (sd %.3g), E = %.6g J (sd %.3g), %lu runs\n", path,
                        p.time_s, sqrt(p.time_var_s2), point_energy(&p), sqrt(p.energy_var_j2),
                        c->runs);
            if ((rc = erg_context_signature_write_file(out, cs, &d)) != ERG_OK)
                ex = erg_cli_fail(&d, rc);
            erg_context_signature_release(cs);
            free(cs);
        }
    }
    free(cmds);
    free(indeg);
    free(left);
    free(pid);
    free(fin);
    free(cpu);
    free(dur);
    free(v);
    erg_context_set_free(&set);
    erg_schedule_free(s);
    return ex;
}

const struct erg_cli_command erg_cli_cmd_characterize = {
    "characterize", "measure an element at the null context and under chosen contexts", run};
