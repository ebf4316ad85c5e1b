/* SPDX-License-Identifier: MIT */
/* Private to the erg command: HYMELL levels 2 and 3 (erg predict model|sweep, erg fit
 * blocks|model). Each takes argv with argv[0] the subcommand and returns the exit status. */
#ifndef ERG_CLI_PREDICT_LEVELS_H
#define ERG_CLI_PREDICT_LEVELS_H

int erg_cli_predict_model(int argc, char **argv);
int erg_cli_predict_sweep(int argc, char **argv);
int erg_cli_fit_blocks(int argc, char **argv);
int erg_cli_fit_model(int argc, char **argv);

#endif
