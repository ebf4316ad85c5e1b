/* SPDX-License-Identifier: MIT */
/* Random DAG schedules (schedule/1 JSON) for the calculus benchmarks. */
#ifndef ERG_BENCH_CALCULUS_DAG_GEN_H
#define ERG_BENCH_CALCULUS_DAG_GEN_H

#include <stdint.h>
#include <stdio.h>

/*
 * Write a random DAG schedule of n elements on `devices` devices to out: 64 distinct signatures per
 * device (kernels repeat, as in a trace), element i on device i mod devices, and 1 to 3 edges into
 * each element from the previous `window` elements (so the DAG is acyclic, with about 2n edges).
 * Deterministic for a given seed. Returns 0 or -1 on a write error.
 */
int erg_bench_write_random_dag(FILE *out, size_t n, unsigned devices, size_t window, uint64_t seed);

#endif
