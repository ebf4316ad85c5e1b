/* SPDX-License-Identifier: MIT */
/**
 * erg/calculus.h - schedules (expression trees and DAGs of signatures on devices) and what erg
 * reports about them: energy with propagated uncertainty, static and dynamic energy per device,
 * prediction intervals, the Reduction Theorem's bias bound and the deviation test.
 *
 * Source: "Energy Calculus", arXiv 2607.11087, Sections 3.3 (operators, idle elements, DAGs),
 * 4.2 (Reduction Theorem, Eq. 13), 5.2 (uncertainty, deviation test Eq. 23), Appendix F.
 *
 * An erg_schedule is built either from a schedule/1 file or programmatically (devices, named
 * signatures, then nodes and edges of a DAG). It is frozen once composed: erg_schedule_compose
 * does not modify it and may be called concurrently on one schedule.
 *
 * Composition of a DAG (docs/formats.md, "schedule/1"): point values are the critical path over the
 * mean times (max of means at every join, as the paper does); every participating device is held
 * for the whole makespan (gaps are idle elements at its idle power). The makespan variance is
 * propagated in one topological pass by Gaussian moment matching at joins (Clark 1961): each
 * finish is kept relative to an event of a tree of shared events (forks, joins), operands of a join
 * are taken relative to their latest common event and combined bottom-up, and a join hangs below
 * its most likely critical operand. A series-parallel DAG thus gives exactly its expression tree's
 * figures; other correlations are neglected (within a few percent of Monte Carlo on random layered
 * DAGs, tests/calculus/test_properties.c). Energy variance: σ²_E = Σ σ²_d_i + s̄²·Var(makespan),
 * s̄ = static energy / makespan (the ⊕multi form). Time and memory are linear in elements + edges.
 */
#ifndef ERG_CALCULUS_H
#define ERG_CALCULUS_H

#include <stddef.h>
#include <stdint.h>

#include "erg/error.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Opaque schedule. */
typedef struct erg_schedule erg_schedule;

/** A new empty schedule (DAG form). Returns NULL when out of memory. */
ERG_API ERG_NODISCARD erg_schedule *erg_schedule_new(void);

/** Free a schedule. NULL-safe. */
ERG_API void erg_schedule_free(erg_schedule *sched);

/**
 * Read a schedule/1 file (expression or DAG form; docs/formats.md). Signature paths inside it are
 * resolved relative to the file's folder.
 * Errors: ERG_ENOENT/ERG_EIO, ERG_EPARSE (file:line:col for syntax), ERG_EVERSION, ERG_EINVAL
 * (bad values), ERG_ECYCLE (the cycle is named in diag).
 */
ERG_API ERG_NODISCARD int erg_schedule_read_file(const char *path, erg_schedule **out,
                                                 erg_diag *diag);

/** Write the schedule as a schedule/1 file, whole or not at all ("-" is stdout). */
ERG_API ERG_NODISCARD int erg_schedule_write_file(const char *path, const erg_schedule *sched,
                                                  erg_diag *diag);

/**
 * Declare a device. static_power_w (W, ≥ 0) is its static power; idle_power_w (W, ≥ 0, or NAN for
 * "same as static") its draw when idle. Errors: ERG_EINVAL (duplicate id, bad value).
 */
ERG_API ERG_NODISCARD int erg_schedule_add_device(erg_schedule *sched, const char *id,
                                                  double static_power_w, double idle_power_w,
                                                  erg_diag *diag);

/**
 * Add a named signature (copied). A signature whose static_power_w is NAN takes its device's;
 * one that states it must agree (to 1e-9 relative) with its device's when that is declared
 * (Axiom P2: a device has one static power). Errors: ERG_EINVAL (duplicate name, invalid
 * signature, a static power other than its declared device's).
 */
ERG_API ERG_NODISCARD int erg_schedule_add_signature(erg_schedule *sched, const erg_signature *sig,
                                                     erg_diag *diag);

/**
 * Add a DAG node: element id running signature sig_name on device (NULL: the signature's own
 * device). start_s is its start time (s) or NAN to start as early as its edges allow.
 * Errors: ERG_EINVAL (duplicate id, unknown signature, undeclared device, a signature whose
 * static_power_w differs from the node's device's: Axiom P2).
 */
ERG_API ERG_NODISCARD int erg_schedule_add_node(erg_schedule *sched, const char *id,
                                                const char *sig_name, const char *device,
                                                double start_s, erg_diag *diag);

/** Add an edge: node `to` starts after node `from` ends. Errors: ERG_EINVAL (unknown node). */
ERG_API ERG_NODISCARD int erg_schedule_add_edge(erg_schedule *sched, const char *from,
                                                const char *to, erg_diag *diag);

/**
 * Working memory of DAG composition kept between calls (opaque). Composing a DAG of n nodes and m
 * edges takes about 60·n + 8·m bytes of working arrays (adjacency, order, per-node start, variance
 * and tree event); without a workspace erg_schedule_compose allocates them on every call, and the
 * kernel hands out (and zeroes) fresh pages each time. A workspace given in
 * erg_compose_options.workspace keeps them: it grows to the largest DAG composed with it and is
 * reused as it is by later calls, so that composing many schedules (sweeps, benchmarks, a server)
 * touches no new memory. It also keeps the adjacency and topological order of the DAG it last
 * composed, with a copy of its edges (8·m bytes more): a later DAG with the same node count and
 * the same edges in the same order (compared exactly; its signatures, devices and starts may
 * differ) skips building them. The figures are the same bit for bit with or without one. A
 * workspace serves one call at a time: give each thread its own (erg_schedule_compose itself may
 * still run concurrently on one schedule). Expression schedules do not use it. No formula: memory
 * only.
 */
typedef struct erg_compose_workspace erg_compose_workspace;

/** A new, empty workspace (it holds no working memory until a composition uses it); NULL when out
 * of memory. Free it with erg_compose_workspace_free. */
ERG_API ERG_NODISCARD erg_compose_workspace *erg_compose_workspace_new(void);

/** Bytes of working memory the workspace holds now (0 for a new one or NULL). */
ERG_API size_t erg_compose_workspace_bytes(const erg_compose_workspace *ws);

/** Free a workspace and the memory it holds; NULL-safe. No composition may be using it. */
ERG_API void erg_compose_workspace_free(erg_compose_workspace *ws);

/**
 * A schedule of one element: sig's device (sig->device at sig->static_power_w, idle at the same
 * power), the signature, and one DAG node "work" running it. Composed (erg_schedule_compose) it
 * gives the element's own figures, E = s·T + d with σ²_E and T with σ²_T (paper Section 3.3: a
 * schedule of one element is that element), so a signature/1 or measurement/1 file can stand
 * where a schedule is compared (`erg compare`, erg_compose_file). *out is the caller's
 * (erg_schedule_free); NULL on error. Errors: ERG_EINVAL (NULL argument; an invalid signature, as
 * erg_schedule_add_signature says), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_schedule_of_signature(const erg_signature *sig, erg_schedule **out,
                                                    erg_diag *diag);

/** Options of erg_schedule_compose; initialise with erg_compose_options_init. */
typedef struct erg_compose_options {
    double confidence;   /**< P for the interval E ± c·σ and the bias bound; default 0.95 */
    int warm_start;      /**< 1: the composition does not start at the null context (Eq. 13 m_i) */
    uint64_t mc_samples; /**< > 0: also run a Monte Carlo check with this many samples */
    uint64_t mc_seed;    /**< seed of the Monte Carlo generator */
    /** NULL (the default): DAG composition allocates its working memory per call; else it takes
     * it from this workspace (one call at a time; see erg_compose_workspace). Not owned. */
    erg_compose_workspace *workspace;
} erg_compose_options;

/** Defaults: confidence 0.95, cold start (null context), no Monte Carlo, seed 1, no workspace. */
ERG_API void erg_compose_options_init(erg_compose_options *opts);

/** Per-device figures of a composed schedule. */
typedef struct erg_device_report {
    char id[ERG_SIG_DEVICE_MAX];
    double static_energy_j;  /**< static power × makespan, J */
    double dynamic_energy_j; /**< dynamic energy of its elements, J */
    double busy_s;           /**< union of its elements' intervals, s */
    double idle_s;           /**< makespan − busy, s */
} erg_device_report;

/** What erg reports for a schedule (paper Section 5.2). Free with erg_report_free. */
typedef struct erg_report {
    erg_signature total; /**< the composite signature (Property 5.3) */
    double energy_j;     /**< E */
    double energy_sd_j;  /**< σ_E */
    double time_s;       /**< T (makespan) */
    double time_sd_s;    /**< σ_T */
    double static_energy_j, dynamic_energy_j;
    double confidence;    /**< P */
    double interval_j[2]; /**< E ± c·σ_E */
    double bias_bound_j;  /**< Σ m_i·c·σ_E_i (Eq. 13) */
    erg_grade grade;
    unsigned flags; /**< measurement flags (erg/flags.h): the union of the composed elements' */
    size_t n_devices;
    erg_device_report *devices;
    int has_mc;                                                  /**< 1 when opts->mc_samples > 0 */
    double mc_energy_j, mc_energy_sd_j, mc_time_s, mc_time_sd_s; /**< Monte Carlo mean and sd */
    uint64_t mc_samples;
    int has_deviation;                /**< 1 after erg_report_deviation */
    double measured_j, measured_sd_j; /**< the direct measurement and its sd, J */
    double deviation_z;               /**< |E − E_measured| / sqrt(σ_E² + σ_measured²) */
    int deviation_detected;           /**< Eq. 23: z > c */
    size_t n_elements; /**< elements composed (signature leaves or DAG nodes; idle excluded) */
} erg_report;

/** Free what erg_schedule_compose allocated in a report (its devices); NULL-safe, idempotent. */
ERG_API void erg_report_free(erg_report *report);

/**
 * Compose a schedule: evaluate its expression literally, or its DAG with every participating
 * device held at its static power for the whole makespan (gaps are idle elements). Fills out
 * (free it with erg_report_free): E, σ_E, T, σ_T, static and dynamic energy, per-device figures,
 * the interval E ± c·σ_E (c the two-sided Gaussian multiplier of opts->confidence), the weakest
 * grade, the union of the elements' measurement flags (also in total.flags), and the Reduction
 * Theorem's worst-case bias bound Σ m_i·c·σ_E_i (paper Eq. 13): m_i counts
 * an entry-state substitution, dropped for elements that start with the composition unless
 * opts->warm_start, plus an isolation substitution for elements that co-run with others
 * (expression: under a par/multi of two or more operands; DAG: the element's interval overlaps
 * another's). With opts->mc_samples > 0 it also samples times N(T, σ²_T) (truncated at 0) and
 * dynamic energies N(d, σ²_d) and reports the Monte Carlo mean and sd (Appendix F.4). opts may be
 * NULL (defaults). Errors: ERG_EINVAL (par operands on different devices or static powers,
 * overlapping DAG nodes on one device with different static power, a start before a predecessor's
 * end, Axiom M1 with the device's static power, bad confidence), ERG_ECYCLE (the cycle is named),
 * ERG_ERANGE (a composed time, energy or variance is not finite: it overflows a double; the
 * expression path, element or DAG node where it stops being finite is named), ERG_ENOMEM (also
 * when opts->workspace cannot grow: it stays valid, with the memory it had or less).
 */
ERG_API ERG_NODISCARD int erg_schedule_compose(const erg_schedule *sched,
                                               const erg_compose_options *opts, erg_report *out,
                                               erg_diag *diag);

/**
 * Deviation test (paper Section 5.2.2, Eq. 23): a deviation is detected when
 * |E_predicted − E_measured| > c·sqrt(σ²_E_predicted + σ²_E_measured), c the two-sided multiplier
 * of report->confidence. Fills the deviation fields of report.
 * Errors: ERG_EINVAL (measured_j or measured_sd_j negative or not finite).
 */
ERG_API ERG_NODISCARD int erg_report_deviation(erg_report *report, double measured_j,
                                               double measured_sd_j, erg_diag *diag);

/**
 * Interval comparison (paper Section 5.2.2): returns −1 when a's interval lies wholly below b's
 * (a confidently uses less energy), +1 when b's lies wholly below a's, 0 when they overlap and the
 * two cannot be told apart. Intervals closer than ERG_ROUNDING_REL × max(|E_a|, |E_b|) count as
 * overlapping: two zero-variance compositions of the same work summed in another order differ by
 * floating-point rounding only (e.g. 4.4e-16 J of 2.98 J), not in energy.
 */
ERG_API ERG_NODISCARD int erg_report_compare(const erg_report *a, const erg_report *b);

/**
 * Relative tolerance under which two composed energies are equal to within rounding: 1e-9, far
 * above the summation error of 10^6 terms in any order (about 10^6 × 1.1e-16 relative, Higham,
 * Accuracy and Stability of Numerical Algorithms, Section 4.2) and far below any measurable energy
 * difference (1 nJ per J).
 */
#define ERG_ROUNDING_REL 1e-9

/** How the difference E_a − E_b of two compared reports reads (erg compare). */
typedef enum erg_difference_kind {
    ERG_DIFFERENCE_ROUNDING = 0, /**< |E_a − E_b| ≤ ERG_ROUNDING_REL·max(|E_a|, |E_b|): 0 J */
    ERG_DIFFERENCE_NOISE = 1,    /**< under 1 % of the combined sd: 0 J within noise */
    ERG_DIFFERENCE_REAL = 2      /**< a difference worth its digits */
} erg_difference_kind;

/** Outcome of erg_report_comparison (paper Section 5.2.2). */
typedef struct erg_comparison {
    int verdict;              /**< erg_report_compare(a, b): −1 a less, +1 b less, 0 overlap */
    double difference_j;      /**< E_a − E_b, J; exactly 0 when kind is ERG_DIFFERENCE_ROUNDING */
    double combined_sd_j;     /**< sqrt(σ²_E_a + σ²_E_b), J (the two taken as independent) */
    double rounding_j;        /**< ERG_ROUNDING_REL·max(|E_a|, |E_b|), J */
    erg_difference_kind kind; /**< how difference_j reads */
    int digits; /**< significant digits difference_j carries, 2 to 6: two past the leading digit
                     of combined_sd_j, capped where the rounding tolerance begins (6 unless REAL) */
} erg_comparison;

/**
 * Compare two composed reports (paper Section 5.2.2, what `erg compare` prints): the verdict of
 * erg_report_compare, and how the difference E_a − E_b reads. A difference at or below the
 * rounding tolerance ERG_ROUNDING_REL·max(|E_a|, |E_b|) is rounding (difference_j set to 0); one
 * under 1 % of the combined sd sqrt(σ²_E_a + σ²_E_b) is noise; any other is real, with digits =
 * floor(log10 |Δ|) − floor(log10 sd) + 3 (no cap from the sd when it is 0), at most
 * floor(log10 |Δ|) − floor(log10 tolerance), clamped to [2, 6]. Errors: ERG_EINVAL (NULL).
 */
ERG_API ERG_NODISCARD int erg_report_comparison(const erg_report *a, const erg_report *b,
                                                erg_comparison *out);

/**
 * Write the compare/1 document of the comparison c of reports a and b (composed from the files
 * named a_file and b_file at confidence) to path ("-": standard output), whole or not at all (what
 * `erg compare --json` prints; docs/formats.md): {"erg": "compare/1", "a" and "b" (each {"file",
 * "energy_j", "energy_sd_j", "interval_j": [lo, hi], "time_s", "grade"}), "confidence",
 * "difference_j", "combined_sd_j", "verdict": "a_less", "b_less" or "indistinguishable"}, J and
 * s; a non-finite number is null. Errors: ERG_EINVAL (NULL), ERG_ENOMEM, ERG_EIO (nothing
 * half-written; a device, FIFO or symlink at path is never replaced).
 */
ERG_API ERG_NODISCARD int erg_comparison_write_json(const char *path, const char *a_file,
                                                    const erg_report *a, const char *b_file,
                                                    const erg_report *b, const erg_comparison *c,
                                                    double confidence, erg_diag *diag);

/**
 * Write a report as JSON (keys in docs/formats.md: energy_j, energy_sd_j, time_s, time_sd_s,
 * static_energy_j, dynamic_energy_j, interval_j, confidence, bias_bound_j, grade, flags, devices,
 * and deviation / monte_carlo when present), whole or not at all ("-" is stdout).
 */
ERG_API ERG_NODISCARD int erg_report_write_file(const char *path, const erg_report *report,
                                                erg_diag *diag);

/** Outcome of erg_context_insensitive. */
typedef struct erg_insensitivity {
    double delta_s_w, delta_t_s, delta_d_j; /**< |Δs|, |ΔT|, |Δd| between the two contexts */
    double lhs_j;                           /**< Δs·T_ref + ΔT·s_ref + Δs·ΔT + Δd, J */
    double tolerance_j;                     /**< c_α·σ_E of the reference, J */
    int insensitive;                        /**< lhs_j ≤ tolerance_j */
} erg_insensitivity;

/**
 * Context-insensitivity test of one element measured under a reference context (ref: the null
 * context or isolation) and another (other: a realized entry context, Eq. 11, or a co-run, Eq. 12):
 *   |Δs|·T_ref + |ΔT|·s_ref + |Δs|·|ΔT| + |Δd| ≤ c_α·σ_E_ref,
 * c_α the two-sided multiplier for confidence (0 < confidence < 1). Errors: ERG_EINVAL;
 * ERG_ERANGE when the left-hand side of finite figures overflows a double.
 */
ERG_API ERG_NODISCARD int erg_context_insensitive(const erg_signature *ref,
                                                  const erg_signature *other, double confidence,
                                                  erg_insensitivity *out, erg_diag *diag);

/**
 * Write the insensitive/1 document of r, the test at confidence, to path ("-": standard output),
 * whole or not at all (what `erg insensitive --json` prints; docs/context.md): {"erg":
 * "insensitive/1", "delta_s_w", "delta_t_s", "delta_d_j", "lhs_j", "tolerance_j" (J, W, s as in
 * erg_insensitivity), "confidence", "insensitive"}. Errors: ERG_EINVAL (NULL), ERG_ENOMEM,
 * ERG_EIO (nothing half-written).
 */
ERG_API ERG_NODISCARD int erg_insensitivity_write_json(const char *path, const erg_insensitivity *r,
                                                       double confidence, erg_diag *diag);

/* ================================================================================================
 * Context dependence: insensitivity over characterized sets, the interaction graph, composition
 * at realized contexts, correlated noise, refinement and granularity (paper Sections 4.1-4.4,
 * 5.1.1, 5.1.5, 5.2.2, Appendix F.1-F.2, G; docs/context.md).
 * ============================================================================================= */

/** Outcome of an insensitivity test over a set of characterized context points. */
typedef struct erg_set_insensitivity {
    size_t n_tested;              /**< points tested; 0: nothing characterized, insensitive is -1 */
    int insensitive;              /**< 1 every point passes, 0 one fails, -1 not characterized */
    double lhs_j;                 /**< the deciding point's left-hand side (Eq. 11 or 12), J */
    double tolerance_j;           /**< c_α·σ_E of the null context, J */
    char point[ERG_SIG_NAME_MAX]; /**< the deciding point: the first failing one, else the one
                                       closest to failing (largest lhs/tolerance) */
} erg_set_insensitivity;

/**
 * History-insensitivity of an element over its characterized entry contexts (paper Eq. 11): every
 * entry point (no co-runners) whose `after` is other (NULL: every entry point) is tested against
 * the null context with erg_context_insensitive. Errors: ERG_EINVAL (bad confidence, NULL).
 */
ERG_API ERG_NODISCARD int erg_context_history_test(const erg_context_signature *cs,
                                                   const char *other, double confidence,
                                                   erg_set_insensitivity *out, erg_diag *diag);

/**
 * Interference-insensitivity over characterized runtime contexts (paper Eq. 12): every point with
 * co-runners, whose co-runners include other (NULL: every such point), is tested against the
 * isolation values at its entry context (the point with the same `after` and no co-runners, or
 * the null context when `after` is empty). Errors: ERG_EINVAL.
 */
ERG_API ERG_NODISCARD int erg_context_interference_test(const erg_context_signature *cs,
                                                        const char *other, double confidence,
                                                        erg_set_insensitivity *out, erg_diag *diag);

/** The combined verdict of paper Section 4.1.3 for a pair of elements. */
typedef struct erg_pair_verdict {
    erg_set_insensitivity history_a;      /**< a over the entry contexts b leaves (after = b) */
    erg_set_insensitivity history_b;      /**< b over the entry contexts a leaves */
    erg_set_insensitivity interference_a; /**< a co-running with b */
    erg_set_insensitivity interference_b; /**< b co-running with a */
    int history;      /**< mutual history-insensitivity: 1, 0, or -1 (a side not characterized) */
    int interference; /**< mutual interference-insensitivity: 1, 0, or -1 */
    int mutual;       /**< mutual context-insensitivity: 0 when any tested side fails, 1 when
                           every side is characterized and passes, -1 otherwise */
} erg_pair_verdict;

/** Mutual history-, interference- and context-insensitivity of a and b (Sections 4.1.1-4.1.3),
 *  from their characterized points. Errors: ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_context_pair_test(const erg_context_signature *a,
                                                const erg_context_signature *b, double confidence,
                                                erg_pair_verdict *out, erg_diag *diag);

/**
 * Write the insensitive-pair/1 document of verdict v for elements named a and b, tested at
 * confidence, to path ("-": standard output), whole or not at all (what `erg insensitive --pair
 * --json` prints): {"erg": "insensitive-pair/1", "a", "b", "confidence", "history_a",
 * "history_b", "interference_a", "interference_b" (each {"points_tested", "insensitive" (null:
 * not characterized), "lhs_j", "tolerance_j", "point"}), "history", "interference", "mutual"
 * (true, false, or null: a side not characterized)}. Errors: ERG_EINVAL (NULL), ERG_ENOMEM,
 * ERG_EIO (nothing half-written).
 */
ERG_API ERG_NODISCARD int erg_pair_verdict_write_json(const char *path, const char *a,
                                                      const char *b, const erg_pair_verdict *v,
                                                      double confidence, erg_diag *diag);

/** One edge of the interaction graph (paper Section 4.4). */
typedef struct erg_interaction_edge {
    int directed;                /**< 1: from → to (entry context), 0: from ↔ to (co-run) */
    char from[ERG_SIG_NAME_MAX]; /**< the element that leaves state (directed) or co-runs */
    char to[ERG_SIG_NAME_MAX];   /**< the perturbed endpoint whose values the edge carries */
    erg_mechanism mechanism;
    char point[ERG_SIG_NAME_MAX]; /**< the characterized point of `to` */
    double delta_energy_j;        /**< E(point) − E(null context, or isolation), J */
    double lhs_j, tolerance_j;    /**< Eq. 11 (directed) or Eq. 12 (co-run) */
    int sensitive;                /**< lhs_j > tolerance_j */
} erg_interaction_edge;

/** The interaction graph: edges; free with erg_interaction_graph_free. */
typedef struct erg_interaction_graph {
    size_t n_edges;
    erg_interaction_edge *edges;
} erg_interaction_graph;

/**
 * Build the interaction graph of a set of context signatures: a directed edge A → B for every
 * entry point of B with after = A (A ≠ B), an undirected edge for every co-runner A of every
 * runtime point of B (B's values; A's come with A's own points); A = B is a self-loop (one
 * instance leaves state the next is sensitive to). Every characterized pair is an
 * edge; `sensitive` says whether it fails the Reduction Theorem's condition. Errors: ERG_EINVAL,
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_interaction_graph_build(const erg_context_signature *const *sigs,
                                                      size_t n, double confidence,
                                                      erg_interaction_graph *out, erg_diag *diag);

/** Free a graph's edges; NULL-safe, idempotent. */
ERG_API void erg_interaction_graph_free(erg_interaction_graph *g);

/** Write a graph as {"erg": "interactions/1", "confidence", "edges": [...]} (docs/context.md),
 *  whole or not at all ("-" is stdout). */
ERG_API ERG_NODISCARD int erg_interaction_graph_write_file(const char *path,
                                                           const erg_interaction_graph *g,
                                                           double confidence, erg_diag *diag);

/** A correlation group (paper Appendix F.1-F.2): elements whose measurement noise is correlated
 *  (shared instrumentation, shared thermal history). */
typedef struct erg_correlation {
    const char *const *signatures; /**< signature names of the group (≥ 2) */
    size_t n;
    double rho;           /**< correlation coefficient in [-1, 1] of every pair; or NAN when */
    double covariance_j2; /**< ... the group is a pair with this Cov(E_1, E_2), J² */
} erg_correlation;

/** Co-runner signatures an erg_context_node lists (the first ones; n_corunners counts all): a
 *  report's summary, not a limit on matching (a point with any number of co-runners is found). */
#define ERG_CONTEXT_NODE_CORUNNERS 4

/** How one DAG node was evaluated by erg_schedule_compose_context. */
typedef struct erg_context_node {
    char id[ERG_SIG_NAME_MAX];
    char signature[ERG_SIG_NAME_MAX];
    char device[ERG_SIG_DEVICE_MAX];
    char after[ERG_SIG_NAME_MAX]; /**< predecessor's signature on the same device ("" none) */
    char point[ERG_SIG_NAME_MAX]; /**< the characterized point used ("" null context) */
    size_t n_corunners;           /**< nodes overlapping it (any device) */
    char corunners[ERG_CONTEXT_NODE_CORUNNERS][ERG_SIG_NAME_MAX]; /**< their signatures (the first
                                                                     ERG_CONTEXT_NODE_CORUNNERS) */
    int m_entry;     /**< 1: uncharacterized entry-state substitution counted in the bias bound */
    int m_isolation; /**< 1: uncharacterized isolation substitution counted */
    double start_s, finish_s, energy_j, energy_sd_j;
} erg_context_node;

/** What erg_schedule_compose_context reports; free with erg_context_report_free. */
typedef struct erg_context_report {
    erg_report report;        /**< the composition at realized contexts; bias_bound_j counts only
                                   uncharacterized substitutions; energy_sd_j includes 2·Cov */
    double null_bias_bound_j; /**< the bias bound with every pair at the null context (Eq. 13) */
    double covariance_j2;     /**< Σ 2·Cov added to σ²_E by correlation groups */
    size_t n_characterized;   /**< nodes evaluated at a characterized point */
    int iterations;           /**< passes until the realized contexts stopped changing */
    int converged;            /**< 0: contexts still changed after the last pass */
    size_t n_nodes;
    erg_context_node *nodes;
} erg_context_report;

/** Free what erg_schedule_compose_context allocated; NULL-safe, idempotent. */
ERG_API void erg_context_report_free(erg_context_report *r);

/**
 * Compose a DAG schedule using the interaction graph (paper Section 4.4): every node's realized
 * context is found from the mean-time schedule (entry: the signature of the latest node on the
 * same device that ended at or before its start; runtime: the signatures of nodes whose intervals
 * overlap its own), and a node whose signature has a point characterized at exactly that context
 * (erg_context_signature_find; an entry point when only the entry context is characterized) is
 * evaluated there; every other node at the null context. Times move with the substituted values,
 * so contexts are recomputed until they stop changing (at most 16 passes). A point's static power
 * other than its device's enters as dynamic energy, (s_φ − s)·T_φ, so that E is the point's and
 * the device keeps one s (Axiom P2). The bias bound Σ m_i·c·σ_E_i (Eq. 13) counts only the
 * uncharacterized substitutions (entry: not for nodes that start the composition at the null
 * context; isolation: for overlapping nodes without a runtime point). Correlation groups add
 * Σ_{i<j} 2·Cov(E_i, E_j) over the nodes running their signatures (Appendix F.1-F.2; Cov =
 * ρ·σ_i·σ_j or the pair's covariance). sigs may hold signatures the schedule does not use; a
 * schedule signature without a context signature is evaluated at the null context. Its two
 * compositions of the DAG share opts->workspace, or a workspace of the call's own when NULL.
 * Errors: those of erg_schedule_compose; ERG_EINVAL (expression form: use nodes and edges; a
 * correlation naming fewer than two signatures or ρ outside [-1, 1]).
 */
ERG_API ERG_NODISCARD int erg_schedule_compose_context(const erg_schedule *sched,
                                                       const erg_context_signature *const *sigs,
                                                       size_t n_sigs, const erg_correlation *corr,
                                                       size_t n_corr,
                                                       const erg_compose_options *opts,
                                                       erg_context_report *out, erg_diag *diag);

/** A candidate pair for characterization (erg refine). */
typedef struct erg_refine_candidate {
    int runtime;               /**< 0: entry A → B, 1: co-run A ↔ B */
    char a[ERG_SIG_NAME_MAX];  /**< predecessor or co-runner */
    char b[ERG_SIG_NAME_MAX];  /**< the element whose substitution is in question */
    size_t occurrences;        /**< nodes of b realizing this context */
    double per_occurrence_j;   /**< estimated |ΔE| of b at this context, J */
    double explain_j;          /**< occurrences × per_occurrence_j, capped at |deviation| */
    int estimated_from_points; /**< 1: from b's characterized points of the same kind */
} erg_refine_candidate;

/**
 * Rank the uncharacterized substitutions of a context report by how much of a deviation
 * (measured − predicted, J) they can explain: pairs (predecessor → node on one device; co-runner
 * ↔ node), grouped by signature names. Per occurrence, |ΔE| is estimated from the element's
 * characterized points of the same kind (the largest |E(point) − E(null)| among entry points, or
 * among runtime points), else its null-context energy E (no information: a context can change it
 * by a sizeable fraction). Fills up to max candidates, best first, and *n_out.
 * Errors: ERG_EINVAL.
 */
ERG_API ERG_NODISCARD int erg_refine_candidates(const erg_context_report *r,
                                                const erg_context_signature *const *sigs,
                                                size_t n_sigs, double deviation_j,
                                                erg_refine_candidate *out, size_t max,
                                                size_t *n_out, erg_diag *diag);

/** Outcome of the granularity consistency check (paper Eq. 24, Appendix G). */
typedef struct erg_granularity {
    double difference_j; /**< |E_e − Ê_e| */
    double bias_j;       /**< Σ m_i·c·σ_E_i of the composition */
    double random_j;     /**< c·sqrt(σ²_E_e + σ²_Ê_e) */
    double bound_j;      /**< bias_j + random_j */
    int consistent;      /**< difference_j ≤ bound_j: the hypothesis of Appendix G holds */
} erg_granularity;

/**
 * Granularity consistency (paper Eq. 24): a coarse element's measured signature against the
 * composition of its parts, |E_e − Ê_e| ≤ Σ m_i·c·σ_E_i + c·sqrt(σ²_E_e + σ²_Ê_e), c from
 * parts->confidence. Errors: ERG_EINVAL.
 */
ERG_API ERG_NODISCARD int erg_granularity_check(const erg_signature *coarse,
                                                const erg_report *parts, erg_granularity *out,
                                                erg_diag *diag);

/**
 * Write the granularity/1 document of the check g of coarse against the composition parts, at
 * confidence, to path ("-": standard output), whole or not at all (what `erg check-granularity
 * --json` prints; paper Eq. 24): {"erg": "granularity/1", "coarse_energy_j" (E of coarse),
 * "coarse_energy_sd_j" (sqrt of its energy_var_j2), "parts_energy_j", "parts_energy_sd_j",
 * "difference_j", "bias_j", "random_j", "bound_j" (J, as in erg_granularity), "confidence",
 * "consistent"}; a non-finite number is null. Errors: ERG_EINVAL (NULL), ERG_ENOMEM, ERG_EIO
 * (nothing half-written; a device, FIFO or symlink at path is never replaced).
 */
ERG_API ERG_NODISCARD int erg_granularity_write_json(const char *path, const erg_signature *coarse,
                                                     const erg_report *parts,
                                                     const erg_granularity *g, double confidence,
                                                     erg_diag *diag);

/** The context signatures and correlation groups of a schedule/1 file (erg refine). */
typedef struct erg_context_set {
    size_t n;                    /**< signatures, one per schedule signature */
    erg_context_signature *sigs; /**< named by their schedule key; a static power left to the
                                      device is filled from "devices" when it declares one */
    char **paths;                /**< per signature: the signature/1 file it came from (resolved
                                      against the schedule's folder), NULL when inline */
    size_t n_corr;
    erg_correlation *corr; /**< the schedule's "correlations" */
} erg_context_set;

/**
 * Read the signatures of a schedule/1 file with their context points, and its optional
 * "correlations": [{"signatures": [names...], "rho": ρ} or {"signatures": [a, b],
 * "covariance_j2": Cov}] (docs/context.md). The schedule itself is read with
 * erg_schedule_read_file. Errors: ERG_ENOENT/ERG_EIO, ERG_EPARSE (file and JSON path),
 * ERG_EVERSION, ERG_EINVAL, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_context_set_read_schedule(const char *path, erg_context_set *out,
                                                        erg_diag *diag);

/** Free a context set; NULL-safe, idempotent. */
ERG_API void erg_context_set_free(erg_context_set *set);

/** The context signature named name in set, or NULL. */
ERG_API erg_context_signature *erg_context_set_find(const erg_context_set *set, const char *name);

/**
 * The `erg characterize` command line that characterizes candidate c (what `erg refine` prints):
 * "erg characterize --name B --after A='CMD_A' -o B.json -- sh -c 'CMD_B'" (--with for a co-run),
 * the commands of A and B taken from their context signatures in set (each single-quoted for a
 * POSIX shell, a ' written '\''), "CMD_OF_A" / "CMD_OF_B" where set is NULL or the signature is
 * absent or names no command. Written into buf of *size bytes (libuv's rule, as erg's
 * default-path functions): ERG_OK and *size = the length; ERG_ERANGE when it does not fit, buf
 * untouched and *size = the bytes needed (NUL included; never more than ERG_REFINE_COMMAND_MAX).
 * Errors: ERG_EINVAL (NULL c, buf or size).
 */
ERG_API ERG_NODISCARD int erg_refine_command(const erg_refine_candidate *c,
                                             const erg_context_set *set, char *buf, size_t *size);

/** Bytes that always hold an erg_refine_command line (names, commands quoted, NUL). */
#define ERG_REFINE_COMMAND_MAX (4 * ERG_SIG_NAME_MAX + 8 * ERG_SIG_META_MAX + 64)

/** One context point `erg refine --characterize` measured (a "characterized" entry of refine/1). */
typedef struct erg_refine_point {
    char signature[ERG_SIG_NAME_MAX]; /**< the element characterized (the candidate's b) */
    char point[ERG_SIG_NAME_MAX];     /**< the new point's name ("after:A", "with:A") */
    double time_s;                    /**< T at the point, s */
    double energy_j;                  /**< E = s·T + d at the point, J */
    double null_energy_j;             /**< E of the element at the null context, J */
} erg_refine_point;

/** What one `erg refine` run found and did (the content of a refine/1 document). */
typedef struct erg_refine_outcome {
    const erg_context_report *before;       /**< composed with its deviation (Eq. 23) */
    const erg_refine_candidate *candidates; /**< erg_refine_candidates, best first */
    size_t n_candidates;
    const erg_context_set *set;            /**< names the commands (erg_refine_command); may be
                                                NULL */
    const erg_refine_point *characterized; /**< points measured (may be NULL when none) */
    size_t n_characterized;
    const erg_context_report *after; /**< composed again with its deviation; NULL: not run */
} erg_refine_outcome;

/**
 * Write the refine/1 document of o to path ("-": standard output), whole or not at all (what
 * `erg refine --json` prints; paper Section 4.4 and Eq. 23): {"erg": "refine/1", "before",
 * "candidates", "characterized", "after" (only when o->after)}. A report is {"energy_j",
 * "energy_sd_j", "interval_j": [lo, hi], "time_s", "bias_bound_j", "null_bias_bound_j",
 * "covariance_j2", "characterized_nodes", "nodes", "grade", "deviation" (when tested:
 * {"measured_j", "measured_sd_j", "difference_j" = measured − composed, "z", "detected"})}; a
 * candidate {"kind": "entry" or "runtime", "a", "b", "occurrences", "per_occurrence_j",
 * "explain_j", "estimated_from_points", "command"}; a characterized point {"signature", "point",
 * "time_s", "energy_j", "null_energy_j"}; J, J², s; a non-finite number is null. Errors:
 * ERG_EINVAL (NULL path, o or o->before; candidates or points missing for their counts),
 * ERG_ENOMEM, ERG_EIO (nothing half-written; a device, FIFO or symlink at path is never replaced).
 */
ERG_API ERG_NODISCARD int erg_refine_write_json(const char *path, const erg_refine_outcome *o,
                                                erg_diag *diag);

/** Number of DAG nodes of a schedule (0 for the expression form). */
ERG_API size_t erg_schedule_node_count(const erg_schedule *sched);

/** Node i of a schedule: its id, signature name and device id (pointers into the schedule, valid
 *  while it lives; any of them may be NULL). Errors: ERG_EINVAL (i out of range). */
ERG_API ERG_NODISCARD int erg_schedule_node_info(const erg_schedule *sched, size_t i,
                                                 const char **id, const char **signature,
                                                 const char **device);

/** Number of DAG edges of a schedule. */
ERG_API size_t erg_schedule_edge_count(const erg_schedule *sched);

/** Edge k: node indices from → to. Errors: ERG_EINVAL (k out of range). */
ERG_API ERG_NODISCARD int erg_schedule_edge_info(const erg_schedule *sched, size_t k, size_t *from,
                                                 size_t *to);

/* ========================================== end of context dependence ========================= */

#ifdef __cplusplus
}
#endif
#endif
