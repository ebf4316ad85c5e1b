/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: schedule/1 with operating sets, read and composed into a frontier (expression
 * rules, DAG enumeration, series-parallel rules and the LP relaxation), then a plan is chosen. The
 * enumeration and LP sizes are kept small so that every input runs in milliseconds. */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/frontier.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("frontier.json", data, size);
    if (!path)
        return 0;
    erg_opsched *os = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_opsched_read_file(path, &os, &diag) != ERG_OK)
        return 0;
    erg_frontier_options o;
    erg_frontier_options_init(&o);
    o.enum_limit = 4096;
    o.lp_deadlines = 8;
    o.epsilon = size % 3 == 0 ? 0.0 : size % 3 == 1 ? 0.01 : 0.5;
    erg_frontier f;
    if (erg_opsched_frontier(os, &o, &f, &diag) == ERG_OK) {
        size_t i;
        if (f.n_points > 0) {
            /* the slowest point meets its own makespan, the fastest its own energy */
            if (erg_frontier_plan_deadline(&f, f.points[f.n_points - 1].time_s, &i, &diag) !=
                    ERG_OK ||
                erg_frontier_plan_budget(&f, f.points[0].energy_j, &i, &diag) != ERG_OK)
                abort();
        }
        for (size_t k = 0; k < f.n_points * f.n_elements; k++)
            if (f.choices[k] > (size_t)1 << 40)
                abort(); /* a choice index is a point index: never garbage */
        erg_frontier_free(&f);
    }
    erg_opsched_free(os);
    return 0;
}
