/* SPDX-License-Identifier: MIT */
/*
 * Private to the erg command. Each command lives in src/cli/cmd_<name>.c and defines
 *   const struct erg_cli_command erg_cli_cmd_<name> = {"<name>", "<one-line summary>", run};
 * CMake collects every cmd_*.c into the dispatch table, so adding a command touches no other file.
 * run() gets argv with argv[0] = the command name (getopt_long-ready, optind already reset) and
 * returns the exit status: 0 success, 1 a check failed, 2 bad input or usage, 3 no usable meter.
 */
#ifndef ERG_CLI_H
#define ERG_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "erg/error.h"

struct json_t;
/* Print a JSON document to out like json_dumpf (jansson's flags), with every real in its shortest
 * round-trip form (erg_json_shorten_reals) and no trailing newline. Returns 0, -1 on failure. */
int erg_cli_json_dumpf(const struct json_t *root, FILE *out, size_t flags);

struct erg_cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/* The exec and posix_spawn families take char *const argv[] (for old callers, says POSIX's
 * rationale of exec) and never write through it: this hands them a vector of const strings. The
 * cast goes through uintptr_t, so -Wcast-qual stays meaningful everywhere else. */
static inline char *const *erg_cli_exec_argv(const char *const *argv)
{
    return (char *const *)(uintptr_t)argv;
}

enum { ERG_EXIT_OK = 0, ERG_EXIT_CHECK = 1, ERG_EXIT_USAGE = 2, ERG_EXIT_NOMETER = 3 };

/* Print "erg: <where>: <detail> (<hint>)" for a failed call and return the exit status for it:
 * 3 for ERG_ENODEV/ERG_ENOLIB/ERG_ENOTSUP/ERG_ENOTLIVE, 2 otherwise. */
int erg_cli_fail(const erg_diag *diag, int status);

/* Print "erg <cmd>: <message>" and "Try 'erg <cmd> --help'." on stderr; return 2. */
int erg_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct option;

/* Report the option that getopt_long just rejected (it returned '?' or ':'). main() sets
 * opterr = 0, so getopt itself prints nothing and this is the only message: one line
 * "erg <cmd>: unknown option '--bogus'" (or "option '--mc' needs a value", "option '--json' takes
 * no value", "option '--m' is ambiguous: --measured, --mc", "unknown option '-x'") and
 * "Try 'erg <cmd> --help'.". argc/argv/shortopts/longopts are those given to getopt_long (the
 * offending element is argv[optind - 1] for a long option, optopt for a short one). Returns 2. */
int erg_cli_bad_option(const char *cmd, int argc, char *const argv[], const char *shortopts,
                       const struct option *longopts);

/* Parse a finite double option value; on error print a usage message and return -1. */
int erg_cli_double(const char *cmd, const char *opt, const char *text, double *out);

/* Parse a non-negative integer option value; on error print a usage message and return -1. */
int erg_cli_ulong(const char *cmd, const char *opt, const char *text, unsigned long *out);

/* Parse an integer option value in [lo, hi]; on error (not an integer, or out of range) print
 * one usage message, "OPT expects an integer from LO to HI, got 'TEXT'", the same for every
 * command, and return -1. */
int erg_cli_count(const char *cmd, const char *opt, const char *text, unsigned long lo,
                  unsigned long hi, unsigned long *out);

/* Exec $ERG_PYTHON (default /usr/bin/python3) -m module argv[1..] with the erg Python package on
 * PYTHONPATH and ERG_LIBRARY set (cmd_instrument.c says where both are found). Returns only on
 * failure, with 2 after a message naming cmd. */
int erg_cli_exec_python(const char *cmd, const char *module, int argc, char **argv);

#endif
