/* SPDX-License-Identifier: MIT */
#include "calculus_dag_gen.h"

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
    return (double)(next(s) >> 11) * 0x1.0p-53;
}

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
            double t = 1e-4 + 5e-3 * unit(&st), vt = 0.01 * t * t * unit(&st);
            double s = 50.0 + 5.0 * d, vd = 1e-4 * unit(&st);
            fprintf(out,
                    "  \"k%u@gpu%u\": {\"device\": \"gpu%u\", \"time_s\": %.6g, "
                    "\"dynamic_energy_j\": %.6g, "
                    "\"time_var_s2\": %.6g, \"energy_var_j2\": %.6g}%s\n",
                    k, d, d, t, 200.0 * t * unit(&st), vt, s * s * vt + vd,
                    d + 1 == devices && k + 1 == SIGS ? "" : ",");
        }
    fprintf(out, " },\n \"nodes\": [\n");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  {\"id\": \"n%zu\", \"signature\": \"k%u@gpu%u\"}%s\n", i,
                (unsigned)(next(&st) % SIGS), (unsigned)(i % devices), i + 1 == n ? "" : ",");
    fprintf(out, " ],\n \"edges\": [\n");
    int first = 1;
    for (size_t i = 1; i < n; i++) {
        unsigned k = 1 + (unsigned)(next(&st) % 3);
        size_t w = i < window ? i : window;
        for (unsigned j = 0; j < k; j++) {
            size_t from = i - 1 - (size_t)(next(&st) % w);
            fprintf(out, "%s  [\"n%zu\", \"n%zu\"]", first ? "" : ",\n", from, i);
            first = 0;
        }
    }
    fprintf(out, "\n ]}\n");
    return ferror(out) ? -1 : 0;
}
