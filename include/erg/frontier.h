/* SPDX-License-Identifier: MIT */
/**
 * erg/frontier.h - operating sets and time–energy frontiers (Pareto sets) of schedules.
 *
 * Source: "Energy Calculus", arXiv 2607.11087 (the "paper"), Section 6: operating sets and
 * frontiers (6.1), frontier composition under ⊗ (Property 6.1, proof H.1) and under ⊕ / ⊕multi
 * with slack (6.2.2, H.2); transition elements (6.1); DAG schedules (6.2, general composition;
 * the discrete time–cost trade-off problem, De et al. 1997, is NP-hard).
 *
 * An operating schedule (erg_opsched) is a schedule/1 document whose elements carry operating sets:
 * every element lists its points, each an implementation κ at an operating point ω = (ω_dev,
 * ω_elem) with its signature there (static power s, time T, dynamic energy d). A point's total
 * energy is E = s·T + d (Axiom P1). The frontier is the set of Pareto-minimal (T, E) points of the
 * whole schedule, each with the choice of point per element that attains it.
 *
 * Composition rules (expression form, evaluated literally like erg_signature_seq/par/multi):
 * - ⊗: Pareto-min of the Minkowski sum of the operands' point sets (Property 6.1). When two
 *   consecutive parts of a sequence run on one device at different ω_dev, a declared transition
 *   element e_{ω→ω'} is inserted (Section 6.1); undeclared transitions cost nothing.
 * - ⊕ (one device): operands share ω_dev and its static power s. At makespan T* the composite
 *   energy is s·T* + Σ_i min{ d_i : point of operand i at that ω_dev with T_i ≤ T* } (Section
 *   6.2.2). Points off an operand's own (T, E) frontier but on its (T, d) frontier survive.
 * - ⊕multi: every device is held for the whole makespan T*; an operand i that ends at T_i < T*
 *   is padded by an idle element at e_i, the static power of the state it ends in (its last
 *   element's ω_dev; DESIGN "Idle elements and padding", erg_signature_multi_end), so at T* it
 *   chooses the point minimising E_i + e_i·(T* − T_i) among those with T_i ≤ T*.
 * Intermediate point sets keep every point that an enclosing operator may still use: (T, E) at the
 * top, (T, d) per ω_dev group inside a ⊕ operand, and inside a ⊕multi operand (T, E, e) with the
 * time difference charged at the most the padding can cost. The padded cost is linear in T*, so
 * the result is exact for expression trees (series-parallel schedules), sequences of mixed static
 * power inside ⊕multi included (docs/frontier.md, "Padding").
 *
 * DAG form (nodes + edges): every device is held for the whole makespan M, at its static power
 * while its nodes run and at its idle power p in the gaps (schedule/1 DAG semantics), so E = Σ_dev
 * p_dev·M + Σ_nodes (d_node + (s_dev − p_dev)·T_node) (= (Σ s)·M + Σ d when p = s). A device runs
 * its nodes in declaration order; between consecutive ones at different ω_dev a declared transition
 * delays the second by T_tr and adds d_tr + (s_tr − p_dev)·T_tr (Section 6.1). Series-parallel
 * DAGs (after transitive reduction; Valdes, Tarjan and Lawler 1982) are solved exactly at any size
 * by the ⊗/⊕ rules; other small DAGs by enumeration; larger ones through the convex relaxation
 * (each node's lower convex hull of (T, d), minimum energy for a deadline as a linear program
 * solved with GLPK), rounded back to real points, with the gap to the relaxation reported per
 * point.
 *
 * Thread safety: an erg_opsched is not locked; erg_opsched_frontier only reads it, so it may be
 * called concurrently on one frozen erg_opsched. erg_frontier is a plain value.
 */
#ifndef ERG_FRONTIER_H
#define ERG_FRONTIER_H

#include <stddef.h>

#include "erg/error.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/**
 * Indices of the Pareto-minimal points of n (time, energy) pairs (paper Section 6.1, definition of
 * the frontier): a point is kept unless another has time ≤ and energy ≤ with one of them strictly
 * smaller; of exact duplicates the first is kept. time_s in s, energy_j in J (any consistent units
 * work: only comparisons are made). idx_out (capacity n) receives the kept indices sorted by time
 * ascending (energy then strictly decreasing); *n_out their count. O(n log n).
 * Errors: ERG_EINVAL (NULL with n > 0, a NaN or negative value), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_pareto_min(const double *time_s, const double *energy_j, size_t n,
                                         size_t *idx_out, size_t *n_out);

/** One point of a frontier. energy_j = static_energy_j + dynamic_energy_j. */
typedef struct erg_frontier_point {
    double time_s;           /**< makespan T, s */
    double energy_j;         /**< total energy E, J */
    double static_energy_j;  /**< static part (s·T terms, idle included), J */
    double dynamic_energy_j; /**< dynamic part Σ d, J */
    double bound_j;          /**< lower bound on E at this time: the LP relaxation's optimum for
                                  DAG frontiers (gap = energy_j − bound_j ≥ 0), E/(1+ε) for an
                                  ε-approximate frontier, energy_j for an exact one */
} erg_frontier_point;

/** How a frontier was obtained. */
typedef enum erg_frontier_method {
    ERG_FRONTIER_EXACT = 0,  /**< exact composition rules or exhaustive enumeration */
    ERG_FRONTIER_APPROX = 1, /**< ε-approximate ⊗ (energy within (1+ε) of the exact frontier) */
    ERG_FRONTIER_RELAXATION = 2 /**< convex relaxation (LP) rounded to real points */
} erg_frontier_method;

/**
 * A frontier: n_points points sorted by time ascending with strictly decreasing energy, ending at
 * the energy-minimising makespan; and, per point, the point index chosen for every element:
 * choices[i * n_elements + k] is the index, in element k's operating set, of the point chosen at
 * frontier point i. Free the members with erg_frontier_free.
 */
typedef struct erg_frontier {
    size_t n_points;
    erg_frontier_point *points;
    size_t n_elements;
    char **element_names; /**< n_elements names: expression leaves (a name used twice gets "#2"),
                               or DAG node ids */
    size_t *choices;      /**< n_points × n_elements */
    erg_frontier_method method;
    double epsilon;   /**< ε of an approximate frontier, else 0 */
    double max_gap_j; /**< largest energy_j − bound_j over the points, J */
} erg_frontier;

/** Free the members of a frontier and zero it. NULL-safe; never fails (no formula involved). */
ERG_API void erg_frontier_free(erg_frontier *frontier);

/** Operating schedule: elements with operating sets, composed by an expression or a DAG. */
typedef struct erg_opsched erg_opsched;

/**
 * New empty operating schedule (no devices, elements, expression or nodes). Returns NULL when out
 * of memory (its only failure; no diag). Free with erg_opsched_free.
 */
ERG_API ERG_NODISCARD erg_opsched *erg_opsched_new(void);

/** Free an operating schedule and everything it owns. NULL-safe; never fails. */
ERG_API void erg_opsched_free(erg_opsched *os);

/**
 * Read a schedule/1 file whose signatures may carry operating sets (docs/frontier.md):
 * "signatures": name → signature object, path of a signature file, or
 *   {"device": D, "points": [{"kappa", "omega_device": {...}, "omega_element": {...},
 *    "static_power_w", "time_s", "dynamic_energy_j", "time_var_s2", "energy_var_j2"}, ...]};
 * "transitions": [{"device", "from": ω_dev, "to": ω_dev, "time_s", "dynamic_energy_j",
 *   "static_power_w"}] (optional); then "expr" or "nodes" + "edges" as in schedule/1.
 * A point's static power defaults to its device's "static_power_w". Units: static_power_w in W,
 * time_s in s, dynamic_energy_j in J, time_var_s2 in s², energy_var_j2 in J². Operating sets and
 * transition elements: paper Section 6.1; the schedule/1 format: docs/formats.md and
 * docs/frontier.md. On error *out is NULL and nothing is allocated.
 * Errors: ERG_EINVAL (NULL argument); ERG_ENOENT/ERG_EIO; ERG_EPARSE with file:line:col (syntax)
 * or file and JSON path (empty operating set, NaN/negative value, unknown name); ERG_EVERSION;
 * ERG_ECYCLE; ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_read_file(const char *path, erg_opsched **out,
                                                erg_diag *diag);

/**
 * Declare device `id` with its static power static_power_w (W, finite, ≥ 0): the power s it draws
 * whenever it is held, which ⊕ operands on it share (paper Axioms P1–P2, Section 3; E = s·T + d).
 * Errors: ERG_EINVAL (NULL or over-long id, duplicate, NaN/negative power), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_device(erg_opsched *os, const char *id,
                                                 double static_power_w, erg_diag *diag);

/**
 * Set a declared device's idle power idle_power_w (W, finite, ≥ 0; default its static power): what
 * it draws in the gaps of a DAG and in idle elements (schedule/1 "idle_power_w"; idle elements,
 * paper Section 3.3). A DAG's energy is then Σ_dev p·M + Σ_nodes (d + (s − p)·T).
 * Errors: ERG_EINVAL (unknown device, NaN/negative power).
 */
ERG_API ERG_NODISCARD int erg_opsched_set_idle_power(erg_opsched *os, const char *id,
                                                     double idle_power_w, erg_diag *diag);

/**
 * Add a point (κ, ω) to the operating set of element `element` (created on first use, on
 * sig->device; paper Section 6.1). The point's signature sig gives static power (W), time (s),
 * dynamic energy (J) and variances (s², J²); its energy is s·T + d (Axiom P1). omega_device is the
 * device-wide operating point as compact JSON ("" or NULL when there is none), compared as a
 * string: points of ⊕ operands must have equal omega_device to be combined (Section 6.2.2), and
 * transitions are looked up by it. The signature is copied.
 * Errors: ERG_EINVAL (NULL argument, over-long name, sig failing erg_signature_check, a device
 * other than the element's), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_point(erg_opsched *os, const char *element,
                                                const erg_signature *sig, const char *omega_device,
                                                erg_diag *diag);

/**
 * Declare a transition element e_{from→to} on device (paper Section 6.1): from and to are ω_dev as
 * compact JSON, as in erg_opsched_add_point. sig gives the switch's time (s), dynamic energy (J)
 * and static power (W). Expression form: when a ⊗ runs something at `from` directly followed by
 * something at `to` on that device, the transition is composed between them (T and E add). DAG
 * form: between consecutive nodes of the device (declaration order) at `from` then `to`, the
 * second starts ≥ T_tr after the first ends and d_tr + (s_tr − p_dev)·T_tr is added; only exact
 * enumeration charges it (see erg_opsched_frontier). Undeclared switches cost nothing.
 * Errors: ERG_EINVAL (bad device, sig failing erg_signature_check, from = to, declared twice),
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_transition(erg_opsched *os, const char *device,
                                                     const char *from, const char *to,
                                                     const erg_signature *sig, erg_diag *diag);

/**
 * Expression operators: a leaf, ⊗ (seq), ⊕ on one device (par), ⊕multi (multi); Section 3.3.
 * (Named erg_expr_op so that this header and erg/predict.h, whose erg_op lists primitive ops,
 * can be included together.)
 */
typedef enum erg_expr_op {
    ERG_EXPR_LEAF = 0, /**< one element's operating set */
    ERG_EXPR_SEQ,      /**< ⊗: sequence */
    ERG_EXPR_PAR,      /**< ⊕: parallel on one device, shared ω_dev */
    ERG_EXPR_MULTI     /**< ⊕multi: parallel across devices */
} erg_expr_op;

/**
 * Add an expression leaf for element `element` (the expression is built bottom-up; paper Section
 * 3.3). Each leaf is its own choice, named after the element ("#2", "#3"... for later uses);
 * *out_id receives its id. The last expression built is the root. No units (structure only).
 * Errors: ERG_EINVAL (NULL argument, unknown element), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_expr_leaf(erg_opsched *os, const char *element,
                                                size_t *out_id, erg_diag *diag);
/**
 * Combine n ≥ 1 earlier expression ids (ids[0..n)) with op (⊗, ⊕ or ⊕multi; paper Section 3.3,
 * frontier rules Property 6.1 and Section 6.2.2); *out_id receives the new id, which becomes the
 * root. No units (structure only).
 * Errors: ERG_EINVAL (NULL argument, unknown id, n = 0, op not an operator), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_expr_op(erg_opsched *os, erg_expr_op op, const size_t *ids,
                                              size_t n, size_t *out_id, erg_diag *diag);

/**
 * DAG form (paper Section 3.3, DAG schedules; Section 6.2 for their frontier): add node `id`
 * running element's operating set, on the element's device. Each node is its own choice of
 * point. A schedule is in DAG form once it has a node; the order of the calls is each device's
 * node order (where transitions are charged). No units (structure only).
 * Errors: ERG_EINVAL (NULL argument, over-long or duplicate id, unknown element), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_node(erg_opsched *os, const char *id, const char *element,
                                               erg_diag *diag);
/**
 * As erg_opsched_add_node, on `device` (NULL or "": the element's device), like a schedule/1
 * node's "device": the node's time and dynamic energy are its points', its static power and idle
 * power the device's (E accounting of the DAG form above).
 * Errors: ERG_EINVAL (as erg_opsched_add_node, or an over-long device id), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_node_on(erg_opsched *os, const char *id,
                                                  const char *element, const char *device,
                                                  erg_diag *diag);
/**
 * Add a precedence edge: node `to` starts no earlier than node `from` ends (paper Section 3.3,
 * DAG schedules). Cycles are detected by erg_opsched_frontier (ERG_ECYCLE). No units.
 * Errors: ERG_EINVAL (NULL argument, unknown node), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_opsched_add_edge(erg_opsched *os, const char *from, const char *to,
                                               erg_diag *diag);

/** DAG solution methods. */
typedef enum erg_dag_method {
    ERG_DAG_AUTO = 0,  /**< series-parallel DAG: exact operator rules (ε applies); otherwise
                            enumeration when Π|points| ≤ enum_limit, else the relaxation */
    ERG_DAG_ENUMERATE, /**< exhaustive enumeration (exact; refused above enum_limit) */
    ERG_DAG_RELAX      /**< LP relaxation rounded to real points */
} erg_dag_method;

/** Options of erg_opsched_frontier; initialise with erg_frontier_options_init. */
typedef struct erg_frontier_options {
    double epsilon; /**< > 0: ε-approximate ⊗ chains (energy error ≤ ε relative); 0 exact */
    erg_dag_method dag_method;
    double enum_limit;   /**< largest number of choice combinations enumerated; default 1e6 */
    size_t lp_deadlines; /**< deadlines on which the LP is solved; default 200 */
} erg_frontier_options;

/**
 * Set opts to the defaults: epsilon 0 (exact), dag_method ERG_DAG_AUTO, enum_limit 1e6
 * combinations, lp_deadlines 200. NULL-safe; never fails. No formula involved.
 */
ERG_API void erg_frontier_options_init(erg_frontier_options *opts);

/**
 * Compute the (T, E) frontier of an operating schedule, T in s and E in J with its static and
 * dynamic parts, and the choice per element (expression leaf or DAG node) of every point; opts
 * NULL means the defaults. Expression form: the operator rules (paper Property 6.1 for ⊗, Section
 * 6.2.2 for ⊕ / ⊕multi and slack; ε-approximate ⊗ when opts->epsilon > 0, energy ≤ (1+ε)·exact).
 * DAG form: series-parallel DAGs by the same rules (Valdes, Tarjan and Lawler 1982), small ones by
 * enumeration, others by the convex relaxation (LP with GLPK) rounded to real points, bound_j the
 * LP's lower bound (discrete time–cost trade-off, De et al. 1997). A DAG where a declared
 * transition can apply between consecutive nodes of a device is enumerated (exact); the
 * relaxation and the series-parallel rules cannot carry that two-node cost, so it is refused when
 * above enum_limit or with ERG_DAG_RELAX. *out is filled only on success (free it with
 * erg_frontier_free).
 * Errors: ERG_EINVAL (NULL argument, epsilon outside [0, 10], an empty operating set, no expression
 * or nodes, ⊕ operands without a shared ω_dev or with different static powers, ERG_DAG_ENUMERATE
 * above enum_limit, transitions with ERG_DAG_RELAX or above enum_limit), ERG_ECYCLE (a cycle, or
 * edges contradicting a device's declared node order when transitions apply), ERG_ERANGE (a point's
 * or a composed time or energy is not finite: it overflows a double; the element, the operator's
 * JSON path or the DAG node is named), ERG_ENOMEM, ERG_EIO (GLPK failure). For a schedule read by
 * erg_opsched_read_file, an error about an expression or a node has diag->where "file:line:col"
 * of that expression or of the node's entry in "nodes" (the file is read again on the error path
 * only); other errors leave where empty.
 */
ERG_API ERG_NODISCARD int erg_opsched_frontier(const erg_opsched *os,
                                               const erg_frontier_options *opts, erg_frontier *out,
                                               erg_diag *diag);

/** Number of points in an element's operating set (Section 6.1); 0 for an unknown element or
 *  NULL arguments. Never fails. */
ERG_API size_t erg_opsched_n_points(const erg_opsched *os, const char *element);

/**
 * *idx receives the index of the least-energy frontier point whose time is ≤ deadline_s (s): on a
 * Pareto frontier sorted by time that is the last point with T ≤ deadline (Section 6.1).
 * Errors: ERG_ERANGE when the deadline is below the fastest point (diag names the fastest
 * makespan in s), ERG_EINVAL (NULL argument, empty frontier, NaN deadline).
 */
ERG_API ERG_NODISCARD int erg_frontier_plan_deadline(const erg_frontier *f, double deadline_s,
                                                     size_t *idx, erg_diag *diag);

/**
 * *idx receives the index of the fastest frontier point whose energy is ≤ budget_j (J): the first
 * point with E ≤ budget, energies decreasing along the frontier (Section 6.1).
 * Errors: ERG_ERANGE when the budget is below the least energy (diag names it in J), ERG_EINVAL
 * (NULL argument, empty frontier, NaN budget).
 */
ERG_API ERG_NODISCARD int erg_frontier_plan_budget(const erg_frontier *f, double budget_j,
                                                   size_t *idx, erg_diag *diag);

/** No plan (for the writers below): plan_idx value meaning "write no plan". */
#define ERG_FRONTIER_NO_PLAN ((size_t)-1)

/**
 * Write "erg": "frontier/1" JSON: {"erg", "method", "epsilon", "max_gap_j", "points": [{"time_s",
 * "energy_j", "static_energy_j", "dynamic_energy_j", "bound_j", "choice": {element: index}}],
 * and "plan" (same keys) when plan_idx is not ERG_FRONTIER_NO_PLAN}; time_s in s, energies in J,
 * choice values are point indices. Written whole or not at all (atomic rename; "-" is stdout).
 * Format: docs/frontier.md (issue 5's frontier/1); no formula is applied.
 * Errors: ERG_EIO, ERG_ENOENT or ERG_EACCES (cannot write; diag names the path), ERG_ENOMEM,
 * ERG_EINVAL (NULL argument, plan_idx out of range).
 */
ERG_API ERG_NODISCARD int erg_frontier_write_json(const char *path, const erg_frontier *f,
                                                  size_t plan_idx, erg_diag *diag);

/**
 * Write CSV: header time_s,energy_j,static_energy_j,dynamic_energy_j,bound_j,plan,<element>...,
 * then one row per point (s, J, J, J, J, 0/1, point indices); the plan column is 1 on the plan's
 * row. Written whole or not at all ("-" is stdout); no formula is applied.
 * Errors: ERG_EIO, ERG_ENOENT or ERG_EACCES (cannot write; diag names the path), ERG_ENOMEM,
 * ERG_EINVAL (NULL argument, plan_idx out of range).
 */
ERG_API ERG_NODISCARD int erg_frontier_write_csv(const char *path, const erg_frontier *f,
                                                 size_t plan_idx, erg_diag *diag);

/**
 * Read a reference frontier (another tool's, or an earlier `erg frontier --csv`) from a CSV file
 * for erg_frontier_plot_svg. The first line is a header; the time column is the one named
 * "time_s" or "time", the energy column "energy_j" or "energy" (case-insensitive, blanks and
 * double quotes around a name ignored, any column order, other columns ignored). Every other
 * non-blank line must have as many comma-separated fields as the header, with a finite,
 * non-negative number (s, J) in both columns. On success *time_s and *energy_j (malloc'd, n
 * values each, in file order; free them) and *n ≥ 1.
 * Errors: ERG_ENOENT/ERG_EIO; ERG_EPARSE with "file:line:col" (empty file, a header without a
 * time or an energy column or with two, a row with the wrong number of fields or a bad number,
 * no data rows); ERG_ENOMEM; ERG_EINVAL (NULL argument). Nothing is allocated on error.
 */
ERG_API ERG_NODISCARD int erg_frontier_read_reference(const char *path, double **time_s,
                                                      double **energy_j, size_t *n, erg_diag *diag);

/**
 * Draw the frontier with cairo in the format path's extension names: .svg, .png or .pdf (case
 * ignored; "-" writes SVG to stdout; any other extension is ERG_EINVAL, said before drawing).
 * Time (s) on x, energy (J) on y, the points joined as a
 * staircase, the plan (if any) marked in red, and an optional reference curve (ref_n points,
 * e.g. another tool's frontier, times in s and energies in J; 0 for none) in grey. Written whole
 * or not at all; no formula is applied.
 * Errors: ERG_EIO (cairo or file failure, with the path), ERG_EINVAL (NULL argument, empty
 * frontier, plan_idx out of range, ref_n > 0 with NULL arrays).
 */
ERG_API ERG_NODISCARD int erg_frontier_plot_svg(const erg_frontier *f, size_t plan_idx,
                                                const double *ref_time_s,
                                                const double *ref_energy_j, size_t ref_n,
                                                const char *path, erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
