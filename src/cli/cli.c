/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "erg/stats.h"

#include <errno.h>
#include <jansson.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int erg_cli_fail(const erg_diag *diag, int status)
{
    char buf[1024];
    if (diag && diag->status != ERG_OK) {
        erg_diag_format(diag, buf, sizeof buf);
        fprintf(stderr, "erg: %s\n", buf);
    } else {
        fprintf(stderr, "erg: %s\n", erg_strerror(status));
    }
    switch (status) {
    case ERG_ENODEV:
    case ERG_ENOLIB:
    case ERG_ENOTSUP:
    case ERG_ENOTLIVE:
        return ERG_EXIT_NOMETER;
    default:
        return ERG_EXIT_USAGE;
    }
}

int erg_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "erg %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'erg %s --help'.\n", cmd);
    return ERG_EXIT_USAGE;
}

int erg_cli_double(const char *cmd, const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        erg_cli_usage(cmd, "%s expects a number, got '%s'", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

int erg_cli_ulong(const char *cmd, const char *opt, const char *text, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || text[0] == '-') {
        erg_cli_usage(cmd, "%s expects a non-negative integer, got '%s'", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

int erg_cli_json_dumpf(const struct json_t *root, FILE *out, size_t flags)
{
    char *text = root ? erg_json_dumps(root, flags) : NULL;
    if (!text)
        return -1;
    erg_json_shorten_reals(text);
    int rc = fputs(text, out) < 0 ? -1 : 0;
    free(text);
    return rc;
}

int erg_cli_count(const char *cmd, const char *opt, const char *text, unsigned long lo,
                  unsigned long hi, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || text[0] == '-' || v < lo || v > hi) {
        erg_cli_usage(cmd, "%s expects an integer from %lu to %lu, got '%s'", opt, lo, hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Whether the long option named by arg ("--name" or "--name=value") is one getopt_long rejects:
 * unknown, ambiguous, a missing or an unwanted value; if so the message goes into buf. */
static int long_option_problem(const char *arg, int is_last, const struct option *longopts,
                               char *buf, size_t size)
{
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
        return 0;
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    int has_value = name[n] == '=';
    const struct option *hit = NULL;
    size_t matches = 0;
    for (const struct option *o = longopts; o && o->name; o++) {
        if (strncmp(o->name, name, n) != 0)
            continue;
        if (o->name[n] == '\0') { /* exact match wins */
            hit = o;
            matches = 1;
            break;
        }
        if (hit && hit->has_arg == o->has_arg && hit->flag == o->flag && hit->val == o->val)
            continue; /* same option under two names: glibc does not call that ambiguous */
        if (!hit)
            hit = o;
        matches++;
    }
    if (matches == 0) {
        snprintf(buf, size, "unknown option '--%.*s'", (int)(n < 80 ? n : 80), name);
        return 1;
    }
    if (matches > 1) {
        size_t used = (size_t)snprintf(
            buf, size, "option '--%.*s' is ambiguous:", (int)(n < 80 ? n : 80), name);
        const char *sep = " ";
        for (const struct option *o = longopts; o->name && used < size; o++)
            if (strncmp(o->name, name, n) == 0) {
                used += (size_t)snprintf(buf + used, size - used, "%s--%s", sep, o->name);
                sep = ", ";
            }
        return 1;
    }
    if (hit->has_arg == no_argument && has_value) {
        snprintf(buf, size, "option '--%s' takes no value", hit->name);
        return 1;
    }
    if (hit->has_arg == required_argument && !has_value && is_last) {
        snprintf(buf, size, "option '--%s' needs a value", hit->name);
        return 1;
    }
    return 0;
}

int erg_cli_bad_option(const char *cmd, int argc, char *const argv[], const char *shortopts,
                       const struct option *longopts)
{
    char msg[512];
    int at = optind - 1;
    if (at >= 1 && at < argc && argv[at] &&
        long_option_problem(argv[at], at == argc - 1, longopts, msg, sizeof msg))
        return erg_cli_usage(cmd, "%s", msg);
    int c = optopt;
    if (c > 0 && c < 256 && c != ':' && c != '?') {
        const char *p = shortopts ? strchr(shortopts, c) : NULL;
        if (p && p[1] == ':')
            return erg_cli_usage(cmd, "option '-%c' needs a value", c);
        return erg_cli_usage(cmd, "unknown option '-%c'", c);
    }
    if (at >= 1 && at < argc && argv[at])
        return erg_cli_usage(cmd, "bad option '%s'", argv[at]);
    return erg_cli_usage(cmd, "bad option");
}
