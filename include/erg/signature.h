/* SPDX-License-Identifier: MIT */
/**
 * erg/signature.h - energy signatures and the three composition operators of the energy calculus,
 * in its context-independent form.
 *
 * Source: M. Chowdhury, J.-W. Chung, et al., "Energy Calculus: A Compositional Algebra of Energy in
 * Computational Systems", arXiv 2607.11087 (the "paper" below). A signature (Section 3.2, 4.3)
 * holds static power s (W), time T (s), dynamic energy d (J) and the variances of T and of the
 * total energy E = s·T + d (Axiom P1). E is derived, never stored. Axiom M1: for a directly
 * measured element, static power is exact and var_E = s²·var_T + var_d, so var_d = var_E − s²·var_T
 * must not be negative.
 *
 * Thread safety: erg_signature is a plain value; every function here is reentrant.
 */
#ifndef ERG_SIGNATURE_H
#define ERG_SIGNATURE_H

#include <stddef.h>

#include "erg/error.h"
#include "erg/flags.h"
#include "erg/grade.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Size limits of the text fields of a signature (bytes, with the NUL). */
#define ERG_SIG_NAME_MAX 128
#define ERG_SIG_DEVICE_MAX 64
#define ERG_SIG_META_MAX 256

/**
 * An energy signature in the context-independent form (paper Section 4.3):
 * S_e = (e, θ, κ, ω, φ_null, s, T, d, σ²_T, σ²_E, M).
 *
 * Fields:
 * - static_power_w   s, W, ≥ 0: static power of the hosting device(s) at the operating point.
 *                    For a composite, s' = (E − d')/T' (Property 5.3).
 * - time_s           T, s, ≥ 0: execution time (point value; the mean).
 * - dynamic_energy_j d, J, ≥ 0.
 * - time_var_s2      σ²_T, s², ≥ 0.
 * - energy_var_j2    σ²_E, J², ≥ 0; for a measured element ≥ s²·σ²_T (Axiom M1).
 * - grade            weakest provenance grade of the figures.
 * - runs             number of measured runs behind the figures (0: unknown or composite).
 * - flags            measurement flags (ERG_FLAG_* bits, erg/flags.h) of the measurement behind
 *                    the figures; for a composite the union of its parts' flags. 0: none.
 * - name, device     element name and device id ("" when unknown; "" for a composite that spans
 *                    several devices).
 * - kappa            implementation κ ("" when absent).
 * - theta, omega     workload parameters θ and operating point ω as compact JSON object text
 *                    ("" when absent); ω is {"device": {...}, "element": {...}} when it has parts.
 */
typedef struct erg_signature {
    double static_power_w;
    double time_s;
    double dynamic_energy_j;
    double time_var_s2;
    double energy_var_j2;
    erg_grade grade;
    unsigned runs;
    unsigned flags;
    char name[ERG_SIG_NAME_MAX];
    char device[ERG_SIG_DEVICE_MAX];
    char kappa[ERG_SIG_DEVICE_MAX];
    char theta[ERG_SIG_META_MAX];
    char omega[ERG_SIG_META_MAX];
} erg_signature;

/** Zero every field (grade hw_shunt, empty strings). */
ERG_API void erg_signature_init(erg_signature *sig);

/** Total energy E = s·T + d, J (Axiom P1, paper Eq. 1). */
ERG_API double erg_signature_energy_j(const erg_signature *sig);

/** Static energy s·T, J. */
ERG_API double erg_signature_static_energy_j(const erg_signature *sig);

/** Dynamic-energy variance σ²_d = σ²_E − s²·σ²_T, J² (Axiom M1, paper Section 3.2). May be
 *  negative for a composite whose static power is not constant (a sequence across operating
 *  points); erg_signature_check rejects that for measured signatures. */
ERG_API double erg_signature_dynamic_var_j2(const erg_signature *sig);

/**
 * Validate a signature: every number finite and ≥ 0, and σ²_E ≥ s²·σ²_T up to a relative
 * tolerance of 1e-9 (Axiom M1). Returns ERG_OK or ERG_EINVAL with the offending field in diag
 * (diag->where is left for the caller's location; detail names the field and values).
 */
ERG_API ERG_NODISCARD int erg_signature_check(const erg_signature *sig, erg_diag *diag);

/**
 * An idle element (paper Section 3.3): a device held ready at its static power for time_s seconds,
 * zero dynamic energy, zero variance unless the caller sets time_var_s2 afterwards.
 * device may be NULL. Returns ERG_OK, or ERG_EINVAL for negative or non-finite values.
 */
ERG_API ERG_NODISCARD int erg_signature_idle(const char *device, double static_power_w,
                                             double time_s, erg_signature *out);

/**
 * Sequential composition ⊗ of n ≥ 1 signatures (paper Section 3.3.1; uncertainty Section 5.2,
 * Eq. for σ² of ⊗): E = Σ E_i, T = Σ T_i, d = Σ d_i, σ²_E = Σ σ²_E_i, σ²_T = Σ σ²_T_i,
 * s' = (E − d)/T (s' = s_1 when T = 0). device is the operands' common device, or "" when they
 * differ. grade is the weakest; flags the union of the operands' flags; runs 0; name "".
 * Returns ERG_OK, ERG_EINVAL (n = 0, NULL) or ERG_ERANGE (a composed time, energy or variance is
 * not finite: it overflows a double; the operand where the sums stop being finite is named).
 */
ERG_API ERG_NODISCARD int erg_signature_seq(const erg_signature *ops, size_t n, erg_signature *out,
                                            erg_diag *diag);

/**
 * Same-device parallel composition ⊕ of n ≥ 1 signatures that start together on one device and
 * share its static power s (paper Section 3.3.2, Axiom P2; variance Appendix F):
 *   E = s·max_i T_i + Σ d_i,  T' = max_i T_i (point value: max of means, as the paper does),
 *   σ²_T' = Var(max_i T_i) for independent Gaussian T_i (Clark's form for n = 2, numerical
 *   integration for n > 2, so the n-ary result does not depend on grouping),
 *   σ²_E = Σ σ²_d_i + s²·σ²_T'. grade is the weakest, flags the union of the operands'.
 * Errors: ERG_EINVAL when n = 0, when operands name different non-empty devices, or when their
 * static powers differ by more than 1e-9 relative (operands on one device share one s);
 * ERG_ERANGE when the composed time, energy or variance is not finite (overflow).
 */
ERG_API ERG_NODISCARD int erg_signature_par(const erg_signature *ops, size_t n, erg_signature *out,
                                            erg_diag *diag);

/**
 * Cross-device parallel composition ⊕multi of n ≥ 1 signatures on distinct devices that start
 * together; the shorter ones are padded with idle elements at their device's static power
 * (paper Section 3.3.3):
 *   E = (Σ s_i)·max_i T_i + Σ d_i,  s' = Σ s_i,  T' = max_i T_i,
 *   σ²_T' = Var(max_i T_i),  σ²_E = Σ σ²_d_i + (Σ s_i)²·σ²_T'.
 * grade is the weakest, flags the union of the operands'.
 * Each operand is padded at its own s, which is its device's static power when the operand
 * draws one static power (a measured element, a composite at one operating state). For a
 * composite whose parts ran at different static powers, s is their time average s' (Property
 * 5.3), not a power any device draws: pad it at the state it ends in with
 * erg_signature_multi_end (erg_schedule_compose does; docs/frontier.md, "Padding").
 * Errors: ERG_EINVAL when n = 0 or two operands name the same non-empty device (use ⊕);
 * ERG_ERANGE when the composed time, energy or variance is not finite (overflow).
 */
ERG_API ERG_NODISCARD int erg_signature_multi(const erg_signature *ops, size_t n,
                                              erg_signature *out, erg_diag *diag);

/**
 * ⊕multi with each operand i padded, from its end to the makespan T' = max_i T_i, by an idle
 * element at end_static_w[i] W: the static power of the device in the operating state operand i
 * ends in (paper Section 3.3: an idle element draws the device's static power at its device-wide
 * operating point; DESIGN "Idle elements and padding": for padding after a sequence, the state it
 * ended in, never the averaged s' of a composite). For an operand that draws one static power,
 * end_static_w[i] = s_i and this is erg_signature_multi exactly (bit for bit when every
 * end_static_w[i] == ops[i].static_power_w).
 *   static energy S' = Σ_i (s_i·T_i + end_static_w[i]·(T' − T_i)),  d' = Σ d_i,  s' = S'/T',
 *   σ²_T' = Var(max_i T_i),  σ²_E = Σ σ²_d_i + (Σ_i end_static_w[i])²·σ²_T' (σ²_d_i with the
 *   operand's own s_i: the paper's split, exact for operands of one constant static power).
 * Errors: as erg_signature_multi, and ERG_EINVAL when end_static_w is NULL or an entry is
 * negative or not finite.
 */
ERG_API ERG_NODISCARD int erg_signature_multi_end(const erg_signature *ops,
                                                  const double *end_static_w, size_t n,
                                                  erg_signature *out, erg_diag *diag);

/**
 * Read a standalone signature file ("erg": "signature/1"; keys in docs/formats.md).
 * Errors: ERG_ENOENT/ERG_EIO (file), ERG_EPARSE (syntax with file:line:col, missing or bad
 * field), ERG_EVERSION (unknown major version), ERG_EINVAL (fails erg_signature_check).
 */
ERG_API ERG_NODISCARD int erg_signature_read_file(const char *path, erg_signature *out,
                                                  erg_diag *diag);

/** Write a standalone signature file, whole or not at all ("-" is stdout). */
ERG_API ERG_NODISCARD int erg_signature_write_file(const char *path, const erg_signature *sig,
                                                   erg_diag *diag);

/* ================================================================================================
 * Signatures as functions of context (paper Sections 3.1, 3.2, 3.4, 4.4; docs/context.md).
 *
 * A context signature holds an element's null-context isolation values (an erg_signature) and its
 * values at characterized contexts: entry contexts Φ (the state a predecessor leaves: cache
 * residency, device temperature) and runtime contexts P (the set of co-running elements). In a
 * signature/1 file they are the optional members "contexts" (an array of points) and "command"
 * (the element as a shell command, for re-characterization); readers that want only the null
 * context (erg_signature_read_file, erg compose) ignore them.
 * ============================================================================================= */

/** Interaction mechanisms of paper Table 1 (Section 3.4). */
typedef enum erg_mechanism {
    ERG_MECHANISM_THERMAL = 0,        /**< entry context: device temperature */
    ERG_MECHANISM_CACHE = 1,          /**< entry context: cache / memory residency */
    ERG_MECHANISM_POWER_DELIVERY = 2, /**< entry context: current-draw transients */
    ERG_MECHANISM_CONTENTION = 3      /**< runtime context: shared-resource contention */
} erg_mechanism;

/** "thermal", "cache", "power_delivery", "contention"; NULL for another value. */
ERG_API const char *erg_mechanism_name(erg_mechanism mechanism);

/** Parse a mechanism name. Returns ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_mechanism_parse(const char *name, erg_mechanism *out);

/** Size of a cache-state word ("cold", "warm"), with the NUL. */
#define ERG_CONTEXT_CACHE_MAX 16

/**
 * One characterized context point of an element: the context and the element's measured values
 * there (paper Section 3.2: s(φ, ρ), T(φ, ρ), d(φ, ρ) with their variances).
 * - name: the point's name, unique within its signature ("after:stream", "with:copy").
 * - mechanism: the mechanism the point's protocol isolates (Appendix A: one at a time).
 * - after: entry context: the element whose exit state this is ("" for a generic state such as a
 *   cold cache reached by a flush); in a schedule it matches the predecessor on the same device.
 * - cache: "cold", "warm" or "" (not stated); traffic_bytes: intervening memory traffic between
 *   `after` and the element, bytes (NAN unknown); temperature_c: device temperature observed at
 *   the element's start, °C (NAN unknown).
 * - corunners: runtime context: the names of the n_corunners other elements running
 *   concurrently (ρ minus the element itself, a set: order and repeats carry no meaning); none
 *   for an entry-context point. ρ has no size limit in the paper (Section 3.1), nor here: any
 *   number of names of any length. A point with both `after` and co-runners is a co-run at that
 *   entry context (Section 4.1.3). In a point of an erg_context_signature the names are owned by
 *   the signature (released with it); a point a caller fills for erg_context_signature_add points
 *   corunners at names of its own, which add copies.
 * - static_power_w, time_s, dynamic_energy_j, time_var_s2, energy_var_j2, runs: as in
 *   erg_signature, measured at this context (the same constraints: ≥ 0, Axiom M1).
 */
typedef struct erg_context_point {
    char name[ERG_SIG_NAME_MAX];
    erg_mechanism mechanism;
    char after[ERG_SIG_NAME_MAX];
    char cache[ERG_CONTEXT_CACHE_MAX];
    double traffic_bytes;
    double temperature_c;
    size_t n_corunners;
    const char *const *corunners; /**< n_corunners NUL-terminated names (NULL when none) */
    double static_power_w;
    double time_s;
    double dynamic_energy_j;
    double time_var_s2;
    double energy_var_j2;
    unsigned runs;
} erg_context_point;

/**
 * A signature as a function of context (paper Section 3.2, S_e with Φ and P): null_context holds
 * the null-context isolation values (the context-independent signature of Section 4.3), points
 * the characterized contexts, command the element as a shell command ("" when unknown).
 *
 * Sized at run time: points points to n_points context points in storage for capacity points
 * that the signature owns (NULL when capacity is 0). There is no point limit in the ABI: a
 * signature takes as many points as memory allows (an element characterized after and beside
 * many others keeps every point), and the struct itself is a few kilobytes whatever it holds.
 * Each point's co-runner names are sized at run time too, owned by the signature. Lifetime, as
 * erg_measurement's (erg/meter.h): a zeroed erg_context_signature is valid and empty, and so is one
 * after erg_context_signature_init; erg_context_signature_add grows the storage;
 * erg_context_signature_read_file and erg_store_get_context fill a new one; a plain struct
 * assignment shares the storage (copy with erg_context_signature_copy);
 * erg_context_signature_release frees it.
 */
typedef struct erg_context_signature {
    erg_signature null_context;
    char command[ERG_SIG_META_MAX];
    size_t n_points;
    erg_context_point *points; /**< n_points points, owned (NULL when capacity is 0) */
    size_t capacity;           /**< points the storage holds (≥ n_points) */
} erg_context_signature;

/** Empty context signature: erg_signature_init'ed null context, no points, no command, no
 *  storage. cs's former content is not read nor freed (release a filled one first). */
ERG_API void erg_context_signature_init(erg_context_signature *cs);

/** Free cs's points (their co-runner names included) and make it empty as
 * erg_context_signature_init does (reusable). NULL-safe; a zeroed or initialised signature is
 * released as a no-op. */
ERG_API void erg_context_signature_release(erg_context_signature *cs);

/**
 * Copy src into dst, points and their co-runner names included, in new storage that dst owns. dst's
 * former content is not read nor freed (release a filled one first); dst must not be src. Errors:
 * ERG_EINVAL (NULL argument, dst == src), ERG_ENOMEM (dst unchanged).
 */
ERG_API ERG_NODISCARD int erg_context_signature_copy(erg_context_signature *dst,
                                                     const erg_context_signature *src);

/** A point with every number NAN-free defaults: mechanism cache, traffic and temperature NAN,
 *  values 0, no co-runners, empty strings. */
ERG_API void erg_context_point_init(erg_context_point *pt);

/**
 * Add (or replace, by name) a point, copied into cs's storage, which grows (doubling, from 8
 * points) when full; its co-runner names are copied too (pt's stay the caller's). The point's
 * values must pass erg_signature_check, its name must be non-empty, and its n_corunners names
 * non-NULL and non-empty (as many and as long as memory allows). Errors: ERG_EINVAL (NULL
 * argument, bad point), ERG_ENOMEM (the storage or the names could not be allocated; cs
 * unchanged). On any error cs is unchanged.
 */
ERG_API ERG_NODISCARD int erg_context_signature_add(erg_context_signature *cs,
                                                    const erg_context_point *pt, erg_diag *diag);

/**
 * Index of the point characterized at exactly this context: `after` equal to after (NULL or ""
 * for none) and the same co-runner set as corunners[0..n) (order and repeats ignored); -1 when
 * there is none.
 */
ERG_API int erg_context_signature_find(const erg_context_signature *cs, const char *after,
                                       const char *const *corunners, size_t n);

/** The signature of point i: null_context's metadata with the point's s, T, d, variances, runs.
 *  Errors: ERG_EINVAL (NULL, i out of range). */
ERG_API ERG_NODISCARD int erg_context_point_signature(const erg_context_signature *cs, size_t i,
                                                      erg_signature *out);

/**
 * Read a signature/1 file with its context points ("contexts", "command"; keys in
 * docs/context.md), as many as the file holds. A file without them gives a context signature
 * with no points. *out is written whole on success, with new storage that the caller releases
 * (erg_context_signature_release); its former content is not read nor freed, and it is left
 * unchanged on error. Errors as erg_signature_read_file (ERG_ENOMEM among them), plus
 * ERG_EPARSE naming contexts[i].member for a bad point.
 */
ERG_API ERG_NODISCARD int
erg_context_signature_read_file(const char *path, erg_context_signature *out, erg_diag *diag);

/** Write a signature/1 file with its context points, whole or not at all ("-" is stdout).
 *  Errors as erg_signature_write_file (ERG_EIO, ERG_ENOMEM, ERG_EINVAL). */
ERG_API ERG_NODISCARD int
erg_context_signature_write_file(const char *path, const erg_context_signature *cs, erg_diag *diag);

/* ============================================ end of context signatures ======================= */

#ifdef __cplusplus
}
#endif
#endif
