/* SPDX-License-Identifier: MIT */
/* bench_calculus_gen N [DEVICES [WINDOW [SEED]]]: print a random DAG schedule/1 of N elements. */
#include "calculus_dag_gen.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_calculus_gen N [DEVICES [WINDOW [SEED]]] > schedule.json\n");
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10);
    unsigned dev = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 8;
    size_t win = argc > 3 ? strtoull(argv[3], NULL, 10) : 16;
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    if (n == 0 || dev == 0 || win == 0) {
        fprintf(stderr, "bench_calculus_gen: N, DEVICES and WINDOW must be positive\n");
        return 2;
    }
    return erg_bench_write_random_dag(stdout, n, dev, win, seed) == 0 ? 0 : 1;
}
