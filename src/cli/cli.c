/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

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
