/* SPDX-License-Identifier: MIT */
/* The frontier of an operating schedule: dispatch to the expression rules (compose.c) or the DAG
 * methods (dag.c), and choosing a plan on a frontier. The files form no cycle: opsched.c (the
 * representation) <- compose.c <- dag.c <- frontier.c. */
#include "core/diag.h"
#include "core/file.h"
#include "core/json.h"
#include "frontier/opsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An error about a schedule read from a file, which names an expression by its JSON path
 * ("expr.seq[1]: ⊕ operands ...") or a DAG node by its id ("node y: ..."), gets the file, line
 * and column of that expression or of the node's entry in "nodes". jansson keeps no positions:
 * the file is read again, on the error path only. Other errors (options, a whole-DAG limit) keep
 * no place. */
static int place(const erg_opsched *os, int rc, erg_diag *diag)
{
    if (rc == ERG_OK || rc == ERG_ENOMEM || !diag || !os->source || diag->where[0])
        return rc;
    const char *d = diag->detail;
    if (strncmp(d, "node ", 5) != 0) {
        if (strncmp(d, "expr", 4) == 0 && strchr(".[:", d[4])) {
            snprintf(diag->where, sizeof diag->where, "%s", os->source);
            erg__json_diag_place_file(diag, os->source);
        }
        return rc;
    }
    size_t k = 0; /* the node whose id the message names (ids are unique) */
    for (; k < os->n_node; k++) {
        const char *id = erg__fr_node_id(os, k);
        size_t n = strlen(id);
        if (strncmp(d + 5, id, n) == 0 && d[5 + n] == ':' && d[6 + n] == ' ')
            break;
    }
    char *text;
    size_t len, line, col;
    erg_diag rd;
    erg_diag_clear(&rd);
    if (k == os->n_node || erg__read_file(os->source, &text, &len, &rd) != ERG_OK)
        return rc;
    char path[48], detail[sizeof diag->detail];
    snprintf(path, sizeof path, "nodes[%zu]", k);
    if (erg__json_locate(text, len, path, &line, &col)) {
        memcpy(detail, diag->detail, sizeof detail);
        (void)erg__diag_at(diag, diag->status, os->source, line, col, "%s", detail);
    }
    free(text);
    return rc;
}

static int frontier(const erg_opsched *os, const erg_frontier_options *opts, erg_frontier *out,
                    erg_diag *diag);

int erg_opsched_frontier(const erg_opsched *os, const erg_frontier_options *opts, erg_frontier *out,
                         erg_diag *diag)
{
    if (!os || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    return place(os, frontier(os, opts, out, diag), diag);
}

static int frontier(const erg_opsched *os, const erg_frontier_options *opts, erg_frontier *out,
                    erg_diag *diag)
{
    if (!os || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    memset(out, 0, sizeof *out);
    erg_frontier_options def;
    if (!opts) {
        erg_frontier_options_init(&def);
        opts = &def;
    }
    if (!(opts->epsilon >= 0) || opts->epsilon > 10)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "epsilon = %g must be in [0, 10]",
                            opts->epsilon);
    for (size_t i = 0; i < os->n_elem; i++)
        if (os->elem[i].n == 0)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "element %s has an empty operating set",
                                os->elem[i].name);
    if (os->n_node > 0)
        return erg__fr_dag_frontier(os, opts, out, diag);
    if (os->n_expr > 0)
        return erg__fr_expr_frontier(os, opts, out, diag);
    return erg_diag_set(diag, ERG_EINVAL, NULL, "the schedule has neither an expression nor nodes");
}

int erg_frontier_plan_deadline(const erg_frontier *f, double deadline_s, size_t *idx,
                               erg_diag *diag)
{
    if (!f || !idx || f->n_points == 0 || isnan(deadline_s))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no frontier or no deadline");
    if (deadline_s < f->points[0].time_s)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "deadline %.9g s is below the fastest possible makespan %.9g s",
                            deadline_s, f->points[0].time_s);
    /* Energy decreases along the frontier, so the latest point that meets the deadline. */
    size_t k = 0;
    while (k + 1 < f->n_points && f->points[k + 1].time_s <= deadline_s)
        k++;
    *idx = k;
    return ERG_OK;
}

int erg_frontier_plan_budget(const erg_frontier *f, double budget_j, size_t *idx, erg_diag *diag)
{
    if (!f || !idx || f->n_points == 0 || isnan(budget_j))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no frontier or no budget");
    const erg_frontier_point *last = &f->points[f->n_points - 1];
    if (budget_j < last->energy_j)
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "budget %.9g J is below the least energy %.9g J (at makespan %.9g s)",
                            budget_j, last->energy_j, last->time_s);
    size_t k = 0;
    while (f->points[k].energy_j > budget_j)
        k++;
    *idx = k;
    return ERG_OK;
}
