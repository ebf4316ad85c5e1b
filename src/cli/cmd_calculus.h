/* SPDX-License-Identifier: MIT */
/* Private to the erg command: printing of calculus reports, shared by compose and compare. */
#ifndef ERG_CLI_CMD_CALCULUS_H
#define ERG_CLI_CMD_CALCULUS_H

#include <stdio.h>

#include "erg/calculus.h"

/* A value with an SI prefix chosen for readability: "518.400 mJ". buf of size bytes. */
const char *erg_cli_si(char *buf, size_t size, double value, const char *unit);

/* The same with digits significant digits (at least 1), trailing zeros kept: "100 mJ",
 * "332.4 mJ", "123.00 uJ". */
const char *erg_cli_si_digits(char *buf, size_t size, double value, const char *unit, int digits);

/* The human-readable table of a report. */
void erg_cli_print_report(FILE *out, const char *title, const erg_report *r);

/* Read and compose a schedule file; on failure print the one-line message and return the exit
 * status (2), else 0. */
int erg_cli_compose_file(const char *path, const erg_compose_options *opts, erg_report *r);

#endif
