/* SPDX-License-Identifier: MIT */
/* erg predict import|eval: public measured data (aiconfigurator, Vidur, ML.ENERGY, BLIS). */
#ifndef ERG_CLI_PREDICT_PUBLIC_H
#define ERG_CLI_PREDICT_PUBLIC_H

/* argv[0] is "import" / "eval"; returns the exit status. */
int erg_cli_predict_import(int argc, char **argv);
int erg_cli_predict_eval(int argc, char **argv);
int erg_cli_predict_fit_serving(int argc, char **argv);

#endif
