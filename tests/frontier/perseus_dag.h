/* SPDX-License-Identifier: MIT */
/* Build the 1F1B pipeline DAG of Perseus's GPT-3 175B stage profile as an erg_opsched (shared by
 * the Perseus test and bench/bench_frontier.c; the same DAG as examples/perseus-gpt3). */
#ifndef ERG_TEST_PERSEUS_DAG_H
#define ERG_TEST_PERSEUS_DAG_H

#include "erg/frontier.h"

/* Path of the profile relative to the source tree. */
#define PERSEUS_PROFILE "../shared/data/energy/perseus_stage_profile_gpt3-175b_a100_bf16.csv"
#define PERSEUS_FRONTIER "../shared/data/energy/perseus_frontier_gpt3-175b_a100_mb12.csv"

/* Returns 0, 77 when the CSV is absent, -1 on a parse or build error. Every GPU is declared with
 * static power p_blocking_w; a point's dynamic energy is E − P_b·T. quantize_ms floors durations
 * to whole milliseconds (Perseus's optimiser does). */
int perseus_build(const char *csv_path, double p_blocking_w, int quantize_ms, int microbatches,
                  erg_opsched **out);

/* Read a "time,energy" CSV (header line first) into malloc'd arrays; 0, 77 absent, -1 error. */
int perseus_read_frontier(const char *path, double **t, double **e, size_t *n);

#endif
