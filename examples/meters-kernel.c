/* SPDX-License-Identifier: MIT */
/*
 * The bundled workload of the main job: a small compute kernel (naive double-precision matrix
 * multiply, C = A·B, repeated) that `erg measure` runs to characterize a signature.
 * Usage: erg-kernel [N (default 256)] [REPEATS (default 4)]; prints a checksum so the work is kept.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 256;
    long reps = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
    if (n < 1 || n > 4096 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: erg-kernel [N 1..4096] [REPEATS 1..1000]\n");
        return 2;
    }
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "erg-kernel: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < nn; i++) {
        a[i] = (double)(i % 7) * 0.5;
        b[i] = (double)(i % 5) * 0.25;
    }
    double sum = 0;
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++) {
                double s = 0;
                for (long k = 0; k < n; k++)
                    s += a[i * n + k] * b[k * n + j];
                c[i * n + j] = s;
            }
        sum += c[(r * 7) % (long)nn];
    }
    printf("erg-kernel: n=%ld reps=%ld checksum=%.6g\n", n, reps, sum);
    free(a);
    free(b);
    free(c);
    return 0;
}
