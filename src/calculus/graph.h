/* SPDX-License-Identifier: MIT */
/*
 * Private: the one graph layer of DAG schedules, used by calculus (DAG composition) and frontier
 * (DAG frontier). Nodes are 0..n-1 (uint32, as erg_schedule's), edges are (from, to) pairs.
 * - adjacency: CSR of successors and predecessors, in edge order;
 * - topological order: Kahn's algorithm, O(n + m);
 * - cycle naming: a cycle among the nodes the order could not reach, as a node list;
 * - series-parallel decomposition: a binary tree of seq/par joins over the nodes, or "not
 *   series-parallel" (Valdes, Tarjan and Lawler 1982, through the inverse line digraph).
 * Names are hashed by calculus/strmap.h; the owner of the nodes keeps them.
 */
#ifndef ERG_CALCULUS_GRAPH_H
#define ERG_CALCULUS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

typedef struct erg__graph {
    uint32_t n;
    size_t m;
    uint32_t *succ_off, *succ; /* successors of v: succ[succ_off[v] .. succ_off[v+1]) */
    uint32_t *pred_off, *pred; /* predecessors, likewise */
    uint32_t *order;           /* topological order: order[0 .. n_ordered) */
    uint32_t n_ordered;        /* = n when the graph is acyclic */
    uint32_t *indeg;           /* Kahn's in-degrees (n + 1 entries): all 0 when the graph is
                                * acyclic, so a zeroed array the owner may take (and free) */
} erg__graph;

/* Build the adjacency and the topological order of n nodes and m edges (edges[k] = {from, to},
 * every index < n). ERG_OK when acyclic, ERG_ECYCLE when not (the adjacency is built and
 * n_ordered < n: erg__graph_cycle names one), ERG_ENOMEM. Free with erg__graph_free either way. */
int erg__graph_init(erg__graph *g, uint32_t n, size_t m, const uint32_t (*edges)[2]);

/* erg__graph_init in arrays the caller provides and keeps: g's succ_off, pred_off, order and indeg
 * point at n + 1 entries each, succ and pred at m + 1 (their contents are overwritten). The same
 * results and codes, without ERG_ENOMEM; g is not freed with erg__graph_free. */
int erg__graph_build(erg__graph *g, uint32_t n, size_t m, const uint32_t (*edges)[2]);

void erg__graph_free(erg__graph *g);

/* A working array of a large graph (bytes; zeroed when zero): at 2 MiB and more, aligned to 2 MiB
 * and marked for transparent huge pages, so that first touching it takes one page fault per 2 MiB
 * rather than per 4 KiB (where the kernel does not back it that way, an ordinary array). Free it
 * with free(). NULL when out of memory. */
void *erg__graph_alloc(size_t bytes, int zero);

/* A cycle of a graph whose order stopped short (n_ordered < n): its nodes in edge direction,
 * starting from its least index, in *cyc (malloc'd; the caller frees) and its length in *len.
 * ERG_OK, ERG_EINVAL when the graph is acyclic, ERG_ENOMEM. */
int erg__graph_cycle(const erg__graph *g, uint32_t **cyc, uint32_t *len);

enum erg__sp_kind { ERG__SP_LEAF, ERG__SP_SEQ, ERG__SP_PAR };

struct erg__sp_node {
    uint8_t kind;
    uint32_t a, b; /* LEAF: a is the graph node; SEQ, PAR: the two operand tree nodes (a first) */
};

typedef struct erg__sp_tree {
    struct erg__sp_node *node;
    size_t n, cap;
    uint32_t root;
} erg__sp_tree;

/* Series-parallel decomposition of an acyclic graph: after dropping transitive edges (only when
 * n <= ERG__SP_REDUCE_MAX: the reduction takes n^2/8 bytes; a larger graph with a transitive
 * edge is reported as not series-parallel, never decomposed wrongly), 0 with the tree in *t when
 * the graph is series-parallel, 1 when it is not, ERG_ENOMEM. O(n + m) expected time beyond the
 * reduction. Free with erg__sp_free. */
#define ERG__SP_REDUCE_MAX 4096u
int erg__graph_sp(const erg__graph *g, erg__sp_tree *t);

void erg__sp_free(erg__sp_tree *t);

#endif
