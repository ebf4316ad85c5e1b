/* SPDX-License-Identifier: MIT */
#include "calculus_dag_gen.h"
#include "core/splitmix.h"

int erg_bench_write_random_dag(FILE *out, size_t n, unsigned devices, size_t window, uint64_t seed)
{
    uint64_t st = seed;
    if (devices == 0 || window == 0)
        return -1;
    enum { SIGS = 64 };
    fprintf(out,
            "{\"erg\": \"schedule/1\",\n \"name\": \"random DAG, %zu elements\",\n \"devices\": {",
            n);
    for (unsigned d = 0; d < devices; d++)
        fprintf(out, "%s\"gpu%u\": {\"static_power_w\": %.1f}", d ? ", " : "", d, 50.0 + 5.0 * d);
    fprintf(out, "},\n \"signatures\": {\n");
    for (unsigned d = 0; d < devices; d++)
        for (unsigned k = 0; k < SIGS; k++) {
            double t = 1e-4 + 5e-3 * erg__splitmix_unit(&st),
                   vt = 0.01 * t * t * erg__splitmix_unit(&st);
            double s = 50.0 + 5.0 * d, vd = 1e-4 * erg__splitmix_unit(&st);
            fprintf(out,
                    "  \"k%u@gpu%u\": {\"device\": \"gpu%u\", \"time_s\": %.6g, "
                    "\"dynamic_energy_j\": %.6g, "
                    "\"time_var_s2\": %.6g, \"energy_var_j2\": %.6g}%s\n",
                    k, d, d, t, 200.0 * t * erg__splitmix_unit(&st), vt, s * s * vt + vd,
                    d + 1 == devices && k + 1 == SIGS ? "" : ",");
        }
    fprintf(out, " },\n \"nodes\": [\n");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  {\"id\": \"n%zu\", \"signature\": \"k%u@gpu%u\"}%s\n", i,
                (unsigned)(erg__splitmix64(&st) % SIGS), (unsigned)(i % devices),
                i + 1 == n ? "" : ",");
    fprintf(out, " ],\n \"edges\": [\n");
    int first = 1;
    for (size_t i = 1; i < n; i++) {
        unsigned k = 1 + (unsigned)(erg__splitmix64(&st) % 3);
        size_t w = i < window ? i : window;
        for (unsigned j = 0; j < k; j++) {
            size_t from = i - 1 - (size_t)(erg__splitmix64(&st) % w);
            fprintf(out, "%s  [\"n%zu\", \"n%zu\"]", first ? "" : ",\n", from, i);
            first = 0;
        }
    }
    fprintf(out, "\n ]}\n");
    return ferror(out) ? -1 : 0;
}
