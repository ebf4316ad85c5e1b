/* SPDX-License-Identifier: MIT */
/*
 * A command as the work of the repetition protocol: spawned in a process group of its own (so
 * that an interruption or a timeout can stop everything it started, as perf stat and hyperfine
 * do), waited for through a pidfd (the wait wakes on exit, on a signal, or at most every 0.25 s to
 * look at the interrupted hook: no busy loop), with its CPU time from wait4.
 */
#define _GNU_SOURCE /* pidfd through syscall(2), wait4 */
#include "erg/measure.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void erg_command_init(erg_command *c, const char *const *argv)
{
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->argv = argv;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Wait up to wait_s (< 0: no limit) for pid; 1 when reaped (st, ru filled), 0 when still
 * running, -1 on error. pidfd < 0: waitpid alone (a signal still interrupts it). */
static int wait_for(pid_t pid, int pidfd, double wait_s, int *st, struct rusage *ru)
{
    if (pidfd >= 0) {
        struct pollfd p = {pidfd, POLLIN, 0};
        /* poll's int milliseconds, rounded up (no spin below 1 ms); a longer wait (a --timeout
         * of 10^7 s) polls in INT_MAX ms slices, its caller loops */
        int ms = wait_s < 0                   ? -1
                 : wait_s >= INT_MAX / 1000.0 ? INT_MAX
                                              : (int)ceil(wait_s * 1000.0);
        int r = poll(&p, 1, ms);
        if (r == 0 || (r < 0 && errno == EINTR))
            return 0;
        if (r < 0)
            return -1;
    }
    for (;;) {
        pid_t w = wait4(pid, st, pidfd >= 0 ? WNOHANG : 0, ru);
        if (w == pid)
            return 1;
        if (w == 0)
            return 0;
        return errno == EINTR ? 0 : -1;
    }
}

/* Stop the group: SIGTERM, then SIGKILL if the leader is still there after 1 s; reap it. */
static void stop_group(pid_t pid, int pidfd, int *st, struct rusage *ru)
{
    kill(-pid, SIGTERM);
    double t0 = mono_s();
    while (mono_s() - t0 < 1.0) {
        int r = wait_for(pid, pidfd, 0.1, st, ru);
        if (r == 1) {
            kill(-pid, SIGKILL); /* whatever of the group is left */
            return;
        }
        if (r < 0)
            break;
    }
    kill(-pid, SIGKILL);
    while (wait4(pid, st, 0, ru) < 0 && errno == EINTR) {
    }
}

int erg_command_run(void *ud, erg_run_outcome *out)
{
    erg_command *c = ud;
    if (!c || !out || !c->argv || !c->argv[0])
        return ERG_EINVAL;
    out->status = -1;
    out->user_cpu_s = out->system_cpu_s = NAN;
    out->flags = 0;
    c->error[0] = '\0';
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    if (c->stdout_to_stderr)
        posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    /* its own process group, default signal dispositions and an empty mask */
    sigset_t def, none;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    /* posix_spawnp takes char *const argv[] and never writes through it (POSIX's rationale of
     * exec); the cast goes through uintptr_t so that -Wcast-qual stays meaningful elsewhere */
    int rc = posix_spawnp(&pid, c->argv[0], &fa, &at, (char *const *)(uintptr_t)c->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        snprintf(c->error, sizeof c->error, "%s: cannot run: %s", c->argv[0], strerror(rc));
        return rc == ENOENT ? ERG_ENOENT : rc == EACCES ? ERG_EACCES : ERG_EIO;
    }
    int pidfd = open_pidfd(pid);
    int st = 0, done = 0, interrupted = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    double t0 = mono_s();
    while (!done) {
        if (c->interrupted && c->interrupted(c->interrupt_ud)) {
            interrupted = 1;
            stop_group(pid, pidfd, &st, &ru);
            break;
        }
        double slice = c->interrupted ? 0.25 : -1.0;
        if (c->timeout_s > 0) {
            double left = c->timeout_s - (mono_s() - t0);
            if (left <= 0) {
                out->flags |= ERG_RUN_TIMED_OUT;
                stop_group(pid, pidfd, &st, &ru);
                break;
            }
            if (slice < 0 || left < slice)
                slice = left;
        }
        int r = wait_for(pid, pidfd, slice, &st, &ru);
        if (r < 0) {
            snprintf(c->error, sizeof c->error, "%s: cannot wait for it: %s", c->argv[0],
                     strerror(errno));
            stop_group(pid, pidfd, &st, &ru);
            if (pidfd >= 0)
                close(pidfd);
            return ERG_EIO;
        }
        done = r == 1;
    }
    if (pidfd >= 0)
        close(pidfd);
    out->user_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    out->system_cpu_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (interrupted)
        return ERG_EINTR;
    if (out->flags & ERG_RUN_TIMED_OUT)
        out->status = 124;
    else if (WIFEXITED(st))
        out->status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        out->status = 128 + WTERMSIG(st);
    /* background children that outlive the command: its process group is not empty */
    if (!(out->flags & ERG_RUN_TIMED_OUT) && (kill(-pid, 0) == 0 || errno == EPERM))
        out->flags |= ERG_RUN_LEFT_CHILDREN;
    return ERG_OK;
}
