/* SPDX-License-Identifier: MIT */
#include "perseus_dag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STAGES 16

int perseus_build(const char *csv_path, double pb, int quantize_ms, int micro, erg_opsched **out)
{
    FILE *f = fopen(csv_path, "r");
    if (!f)
        return 77;
    erg_opsched *os = erg_opsched_new();
    char line[512];
    int stages = 0, rc = 0;
    if (!os || !fgets(line, sizeof line, f)) /* header */
        rc = -1;
    for (int s = 0; s < MAX_STAGES && rc == 0; s++) {
        char id[16];
        snprintf(id, sizeof id, "gpu%d", s);
        rc = erg_opsched_add_device(os, id, pb, NULL) == ERG_OK ? 0 : -1;
    }
    while (rc == 0 && fgets(line, sizeof line, f)) {
        int stage, freq;
        char ins[32];
        double t, e;
        if (sscanf(line, "%d,%31[a-z],%d,%lf,%lf", &stage, ins, &freq, &t, &e) != 5 || stage < 0 ||
            stage >= MAX_STAGES) {
            rc = -1;
            break;
        }
        if (quantize_ms)
            t = floor(t * 1000.0) / 1000.0;
        stages = stage + 1 > stages ? stage + 1 : stages;
        erg_signature sig;
        erg_signature_init(&sig);
        snprintf(sig.device, sizeof sig.device, "gpu%d", stage);
        sig.static_power_w = pb;
        sig.time_s = t;
        sig.dynamic_energy_j = e - pb * t;
        char name[32], od[32];
        snprintf(name, sizeof name, "s%d%c", stage, strcmp(ins, "forward") == 0 ? 'F' : 'B');
        snprintf(od, sizeof od, "{\"sm_mhz\":%d}", freq);
        if (erg_opsched_add_point(os, name, &sig, od, NULL) != ERG_OK)
            rc = -1;
    }
    fclose(f);
    /* 1F1B order per stage, then the pipeline dependencies. */
    for (int s = 0; s < stages && rc == 0; s++) {
        int warm = stages - s - 1 < micro ? stages - s - 1 : micro;
        int fwd = 0, bwd = 0, k = 0;
        char prev[32] = "", id[32], sg[32];
        while (rc == 0 && (fwd < micro || bwd < micro)) {
            int is_f;
            if (fwd < warm)
                is_f = 1;
            else if (fwd >= micro)
                is_f = 0;
            else
                is_f = (k % 2) == 0; /* steady state: F then B */
            if (fwd >= warm && fwd < micro)
                k++;
            int m = is_f ? fwd++ : bwd++;
            snprintf(id, sizeof id, "s%d.%c%d", s, is_f ? 'F' : 'B', m);
            snprintf(sg, sizeof sg, "s%d%c", s, is_f ? 'F' : 'B');
            if (erg_opsched_add_node(os, id, sg, NULL) != ERG_OK ||
                (prev[0] && erg_opsched_add_edge(os, prev, id, NULL) != ERG_OK))
                rc = -1;
            memcpy(prev, id, sizeof prev);
        }
    }
    for (int s = 0; s < stages && rc == 0; s++)
        for (int m = 0; m < micro && rc == 0; m++) {
            char a[32], b[32];
            if (s > 0) {
                snprintf(a, sizeof a, "s%d.F%d", s - 1, m);
                snprintf(b, sizeof b, "s%d.F%d", s, m);
                rc = erg_opsched_add_edge(os, a, b, NULL) == ERG_OK ? 0 : -1;
            }
            if (s < stages - 1) {
                snprintf(a, sizeof a, "s%d.B%d", s + 1, m);
                snprintf(b, sizeof b, "s%d.B%d", s, m);
            } else {
                snprintf(a, sizeof a, "s%d.F%d", s, m);
                snprintf(b, sizeof b, "s%d.B%d", s, m);
            }
            if (rc == 0)
                rc = erg_opsched_add_edge(os, a, b, NULL) == ERG_OK ? 0 : -1;
        }
    if (rc != 0 || stages == 0) {
        erg_opsched_free(os);
        return -1;
    }
    *out = os;
    return 0;
}

int perseus_read_frontier(const char *path, double **t, double **e, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 77;
    char line[256];
    size_t cap = 1024;
    *t = malloc(cap * sizeof **t);
    *e = malloc(cap * sizeof **e);
    *n = 0;
    int rc = (*t && *e && fgets(line, sizeof line, f)) ? 0 : -1;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        if (*n == cap) {
            cap *= 2;
            double *nt = realloc(*t, cap * sizeof *nt);
            if (nt)
                *t = nt;
            double *ne = realloc(*e, cap * sizeof *ne);
            if (ne)
                *e = ne;
            if (!nt || !ne) {
                rc = -1;
                break;
            }
        }
        if (sscanf(line, "%lf,%lf", &(*t)[*n], &(*e)[*n]) != 2)
            rc = -1;
        else
            (*n)++;
    }
    fclose(f);
    return rc;
}
