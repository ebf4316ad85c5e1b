/* SPDX-License-Identifier: MIT */
/* erg report: per-API energy from call records (python -m erg.report; see cmd_instrument.c). */
#include "cli.h"

static int run(int argc, char **argv)
{
    return erg_cli_exec_python("report", "erg.report", argc, argv);
}

const struct erg_cli_command erg_cli_cmd_report = {
    "report", "per-API energy of a program from erg call records (FECoM RQ1, RQ2)", run};
