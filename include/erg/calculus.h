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

#ifndef ERG_API
#define ERG_API __attribute__((visibility("default")))
#endif

/** Opaque schedule. */
typedef struct erg_schedule erg_schedule;

/** A new empty schedule (DAG form). Returns NULL when out of memory. */
ERG_API erg_schedule *erg_schedule_new(void);

/** Free a schedule. NULL-safe. */
ERG_API void erg_schedule_free(erg_schedule *sched);

/**
 * Read a schedule/1 file (expression or DAG form; docs/formats.md). Signature paths inside it are
 * resolved relative to the file's folder.
 * Errors: ERG_ENOENT/ERG_EIO, ERG_EPARSE (file:line:col for syntax), ERG_EVERSION, ERG_EINVAL
 * (bad values), ERG_ECYCLE (the cycle is named in diag).
 */
ERG_API int erg_schedule_read_file(const char *path, erg_schedule **out, erg_diag *diag);

/** Write the schedule as a schedule/1 file, whole or not at all ("-" is stdout). */
ERG_API int erg_schedule_write_file(const erg_schedule *sched, const char *path, erg_diag *diag);

/**
 * Declare a device. static_power_w (W, ≥ 0) is its static power; idle_power_w (W, ≥ 0, or NAN for
 * "same as static") its draw when idle. Errors: ERG_EINVAL (duplicate id, bad value).
 */
ERG_API int erg_schedule_add_device(erg_schedule *sched, const char *id, double static_power_w,
                                    double idle_power_w, erg_diag *diag);

/**
 * Add a named signature (copied). A signature whose static_power_w is NAN takes its device's;
 * one that states it must agree (to 1e-9 relative) with its device's when that is declared
 * (Axiom P2: a device has one static power). Errors: ERG_EINVAL (duplicate name, invalid
 * signature, a static power other than its declared device's).
 */
ERG_API int erg_schedule_add_signature(erg_schedule *sched, const erg_signature *sig,
                                       erg_diag *diag);

/**
 * Add a DAG node: element id running signature sig_name on device (NULL: the signature's own
 * device). start_s is its start time (s) or NAN to start as early as its edges allow.
 * Errors: ERG_EINVAL (duplicate id, unknown signature, undeclared device, a signature whose
 * static_power_w differs from the node's device's: Axiom P2).
 */
ERG_API int erg_schedule_add_node(erg_schedule *sched, const char *id, const char *sig_name,
                                  const char *device, double start_s, erg_diag *diag);

/** Add an edge: node `to` starts after node `from` ends. Errors: ERG_EINVAL (unknown node). */
ERG_API int erg_schedule_add_edge(erg_schedule *sched, const char *from, const char *to,
                                  erg_diag *diag);

/** Options of erg_schedule_compose; initialise with erg_compose_options_init. */
typedef struct erg_compose_options {
    double confidence;   /**< P for the interval E ± c·σ and the bias bound; default 0.95 */
    int warm_start;      /**< 1: the composition does not start at the null context (Eq. 13 m_i) */
    uint64_t mc_samples; /**< > 0: also run a Monte Carlo check with this many samples */
    uint64_t mc_seed;    /**< seed of the Monte Carlo generator */
} erg_compose_options;

/** Defaults: confidence 0.95, cold start (null context), no Monte Carlo, seed 1. */
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
 * grade, and the Reduction Theorem's worst-case bias bound Σ m_i·c·σ_E_i (paper Eq. 13): m_i counts
 * an entry-state substitution, dropped for elements that start with the composition unless
 * opts->warm_start, plus an isolation substitution for elements that co-run with others
 * (expression: under a par/multi of two or more operands; DAG: the element's interval overlaps
 * another's). With opts->mc_samples > 0 it also samples times N(T, σ²_T) (truncated at 0) and
 * dynamic energies N(d, σ²_d) and reports the Monte Carlo mean and sd (Appendix F.4). opts may be
 * NULL (defaults). Errors: ERG_EINVAL (par operands on different devices or static powers,
 * overlapping DAG nodes on one device with different static power, a start before a predecessor's
 * end, Axiom M1 with the device's static power, bad confidence), ERG_ECYCLE (the cycle is named),
 * ERG_ERANGE (a composed time, energy or variance is not finite: it overflows a double; the
 * expression path, element or DAG node where it stops being finite is named), ERG_ENOMEM.
 */
ERG_API int erg_schedule_compose(const erg_schedule *sched, const erg_compose_options *opts,
                                 erg_report *out, erg_diag *diag);

/**
 * Deviation test (paper Section 5.2.2, Eq. 23): a deviation is detected when
 * |E_predicted − E_measured| > c·sqrt(σ²_E_predicted + σ²_E_measured), c the two-sided multiplier
 * of report->confidence. Fills the deviation fields of report.
 * Errors: ERG_EINVAL (measured_j or measured_sd_j negative or not finite).
 */
ERG_API int erg_report_deviation(erg_report *report, double measured_j, double measured_sd_j,
                                 erg_diag *diag);

/**
 * Interval comparison (paper Section 5.2.2): returns −1 when a's interval lies wholly below b's
 * (a confidently uses less energy), +1 when b's lies wholly below a's, 0 when they overlap and the
 * two cannot be told apart. Intervals closer than ERG_ROUNDING_REL × max(|E_a|, |E_b|) count as
 * overlapping: two zero-variance compositions of the same work summed in another order differ by
 * floating-point rounding only (e.g. 4.4e-16 J of 2.98 J), not in energy.
 */
ERG_API int erg_report_compare(const erg_report *a, const erg_report *b);

/**
 * Relative tolerance under which two composed energies are equal to within rounding: 1e-9, far
 * above the summation error of 10^6 terms in any order (about 10^6 × 1.1e-16 relative, Higham,
 * Accuracy and Stability of Numerical Algorithms, Section 4.2) and far below any measurable energy
 * difference (1 nJ per J).
 */
#define ERG_ROUNDING_REL 1e-9

/**
 * Write a report as JSON (keys in docs/formats.md: energy_j, energy_sd_j, time_s, time_sd_s,
 * static_energy_j, dynamic_energy_j, interval_j, confidence, bias_bound_j, grade, devices, and
 * deviation / monte_carlo when present), whole or not at all ("-" is stdout).
 */
ERG_API int erg_report_write_file(const erg_report *report, const char *path, erg_diag *diag);

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
 * c_α the two-sided multiplier for confidence (0 < confidence < 1). Errors: ERG_EINVAL.
 */
ERG_API int erg_context_insensitive(const erg_signature *ref, const erg_signature *other,
                                    double confidence, erg_insensitivity *out, erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
