/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection for the fault probe (tests/cli/fault_alloc.sh, tests/core/
 * test_failalloc.c). A program linked with this file and
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
 * sends every allocation that erg's own objects make through the counters below. The real
 * allocator stays the sanitizers' when built under them, so leaks after a failure are still
 * reported. jansson's own allocations are counted too only with ERG_FAILALLOC_JANSSON=1, except
 * in the erg_failalloc binary those inside its loaders: Debian 12's jansson 2.14 itself crashes
 * when an allocation inside json_loadb fails (a write through a bad pointer in its parser,
 * reproduced without erg; see json_malloc). fault_alloc.sh counts any crash still found inside
 * jansson apart (the sanitizers' report names libjansson; without them, a handler here says so).
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
#include <execinfo.h>
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

/* jansson 2.14's parser writes through a bad pointer when an allocation inside it fails (json_loadb
 * and the other loaders; reproduced without erg), and where that write lands depends on the run's
 * address-space layout: a SIGSEGV, a glibc abort in a later free, or a wrong parse error. Nothing
 * erg does can make that run clean, so in the probe binary (built with FAILALLOC_WRAP_JSON_LOAD and
 * -Wl,--wrap=json_loadb,...) jansson's allocations inside a loader are never failed (nor counted);
 * the documents erg builds and dumps still are. */
static int in_json_load;

static void *json_malloc(size_t size)
{
    return in_json_load ? __real_malloc(size) : __wrap_malloc(size);
}

#ifdef FAILALLOC_WRAP_JSON_LOAD
json_t *__real_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *__real_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__real_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__real_json_loadf(FILE *input, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__wrap_json_loadf(FILE *input, size_t flags, json_error_t *error);

json_t *__wrap_json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error)
{
    in_json_load++;
    json_t *j = __real_json_loadb(buffer, buflen, flags, error);
    in_json_load--;
    return j;
}

json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error)
{
    in_json_load++;
    json_t *j = __real_json_loads(input, flags, error);
    in_json_load--;
    return j;
}

json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error)
{
    in_json_load++;
    json_t *j = __real_json_load_file(path, flags, error);
    in_json_load--;
    return j;
}

json_t *__wrap_json_loadf(FILE *input, size_t flags, json_error_t *error)
{
    in_json_load++;
    json_t *j = __real_json_loadf(input, flags, error);
    in_json_load--;
    return j;
}
#endif

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
/* Without the sanitizers, a crash has no report that names the library. jansson's bad write
 * lands where the address-space layout (different in every run) puts it: a SIGSEGV in jansson,
 * or in a libc string function it called, or a heap whose bookkeeping it broke, so that glibc
 * aborts in a free jansson makes ("free(): invalid pointer", an assertion in its lexer). A
 * SIGSEGV or SIGABRT whose faulting instruction or any frame on the stack lies in libjansson is
 * said so on stderr (fault_alloc.sh counts it apart), and the process still dies of the signal.
 * backtrace() was called once at start, so its unwinder is loaded and the handler allocates
 * nothing. */
static int in_jansson(const void *pc)
{
    Dl_info info;
    return dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "libjansson");
}

static void on_crash(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    const ucontext_t *uc = ctx;
#if defined(__x86_64__)
    void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
#else
    void *pc = (void *)uc->uc_mcontext.pc;
#endif
    int hit = in_jansson(pc);
    void *frames[64];
    int n = hit ? 0 : backtrace(frames, 64);
    for (int i = 0; i < n && !hit; i++)
        hit = in_jansson(frames[i]);
    if (hit) {
        static const char segv[] = "failalloc: SIGSEGV inside libjansson\n",
                          abrt[] = "failalloc: SIGABRT inside libjansson\n";
        const char *msg = sig == SIGSEGV ? segv : abrt;
        if (write(2, msg, sizeof segv - 1) < 0)
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
        json_set_alloc_funcs(json_malloc, json_free);
#if !defined(FAILALLOC_ASAN) && (defined(__x86_64__) || defined(__aarch64__))
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_crash;
        sa.sa_flags = SA_SIGINFO;
        void *warm[1];
        (void)backtrace(warm, 1); /* loads the unwinder now, not in on_crash */
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGABRT, &sa, NULL);
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
