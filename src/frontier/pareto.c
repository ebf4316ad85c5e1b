/* SPDX-License-Identifier: MIT */
/* Pareto-min of (time, energy) pairs (paper Section 6.1). */
#include "erg/frontier.h"

#include <math.h>
#include <stdlib.h>

struct te {
    double t, e;
    size_t i;
};

static int cmp_te(const void *a, const void *b)
{
    const struct te *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->e != y->e)
        return x->e < y->e ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

int erg_pareto_min(const double *time_s, const double *energy_j, size_t n, size_t *idx_out,
                   size_t *n_out)
{
    if (!n_out || (n > 0 && (!time_s || !energy_j || !idx_out)))
        return ERG_EINVAL;
    *n_out = 0;
    if (n == 0)
        return ERG_OK;
    struct te *v = malloc(n * sizeof *v);
    if (!v)
        return ERG_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!(time_s[i] >= 0) || !(energy_j[i] >= 0) || isinf(time_s[i]) || isinf(energy_j[i])) {
            free(v);
            return ERG_EINVAL;
        }
        v[i] = (struct te){time_s[i], energy_j[i], i};
    }
    qsort(v, n, sizeof *v, cmp_te);
    /* Sorted by time then energy: a point survives iff its energy is strictly below every
     * energy seen at a smaller-or-equal time. */
    size_t k = 0;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (v[i].e < best) {
            best = v[i].e;
            idx_out[k++] = v[i].i;
        }
    }
    free(v);
    *n_out = k;
    return ERG_OK;
}
