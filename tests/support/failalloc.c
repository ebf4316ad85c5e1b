/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection for the fault probe (tests/cli/fault_alloc.sh, tests/core/
 * test_failalloc.c). A program linked with this file and
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
 * sends every allocation that erg's own objects make through the counters below. The real
 * allocator stays the sanitizers' when built under them, so leaks after a failure are still
 * reported. jansson's own allocations are counted too only with ERG_FAILALLOC_JANSSON=1: Debian
 * 12's jansson 2.14 itself crashes when an allocation inside json_loadb fails (a write through a
 * bad pointer in its parser, reproduced without erg): fault_alloc.sh counts those crashes apart
 * (the sanitizers' report names libjansson; without them, a handler here says so).
 *
 * Environment (read once, at start):
 *   ERG_FAILALLOC=N      fail the Nth allocation (1-based) and only that one; N+ fails the Nth
 *                        and every later one; 0 or unset counts only
 *   ERG_FAILALLOC_LOG=F  at exit, write "calls K failed J" to F (K allocations seen, J failed)
 * In-process tests use erg_failalloc_arm() and erg_failalloc_calls() instead. */
#define _GNU_SOURCE /* dladdr, REG_RIP */
#include "support/failalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <ucontext.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static unsigned long calls, failed, fail_at;
static int fail_after;
static char log_path[4096];

void erg_failalloc_arm(unsigned long nth, int and_after)
{
    calls = 0;
    failed = 0;
    fail_at = nth;
    fail_after = and_after;
}

unsigned long erg_failalloc_calls(void)
{
    return calls;
}

unsigned long erg_failalloc_failed(void)
{
    return failed;
}

static int should_fail(void)
{
    calls++;
    if (fail_at && (calls == fail_at || (fail_after && calls > fail_at))) {
        failed++;
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t size)
{
    return should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    return should_fail() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
    return should_fail() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return should_fail() ? NULL : __real_strndup(s, n);
}

static void json_free(void *p)
{
    free(p);
}

static void write_log(void)
{
    if (!log_path[0])
        return;
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "calls %lu failed %lu\n", calls, failed);
    if (n > 0 && write(fd, line, (size_t)n) < 0)
        n = 0;
    close(fd);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAILALLOC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FAILALLOC_ASAN 1
#endif

#if !defined(FAILALLOC_ASAN) && (defined(__x86_64__) || defined(__aarch64__))
/* Without the sanitizers, a crash has no report that names the library: a SIGSEGV whose faulting
 * instruction lies in libjansson is said so on stderr (fault_alloc.sh counts it apart), and the
 * process still dies of the signal. */
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    const ucontext_t *uc = ctx;
#if defined(__x86_64__)
    void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
#else
    void *pc = (void *)uc->uc_mcontext.pc;
#endif
    Dl_info info;
    if (dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "libjansson")) {
        static const char msg[] = "failalloc: SIGSEGV inside libjansson\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            (void)0;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

__attribute__((constructor)) static void failalloc_init(void)
{
    const char *j = getenv("ERG_FAILALLOC_JANSSON");
    if (j && strcmp(j, "1") == 0) {
        json_set_alloc_funcs(__wrap_malloc, json_free);
#if !defined(FAILALLOC_ASAN) && (defined(__x86_64__) || defined(__aarch64__))
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
#endif
    }
    const char *log = getenv("ERG_FAILALLOC_LOG");
    if (log && strlen(log) < sizeof log_path) {
        strcpy(log_path, log);
        atexit(write_log);
    }
    const char *n = getenv("ERG_FAILALLOC");
    if (n && *n) {
        char *end;
        unsigned long v = strtoul(n, &end, 10);
        erg_failalloc_arm(v, *end == '+');
    }
}
