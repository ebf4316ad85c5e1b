/* SPDX-License-Identifier: MIT */
/**
 * erg/predict.h - HYMELL level 1: the primitive-operation profiler and the regime-split
 * analytical estimators of the time and energy of RMSNorm, causal softmax and GEMM
 * (HYMELL: Shokoufa, Sadeghi, Kamal, Pedram, "Multi-Level Modeling of Large Language Model
 * Inference Latency and Energy via Hybrid Analytical-Machine-Learning Predictors",
 * arXiv:2608.06723; Sections 3.1-3.3 and 5.1; Tables 1-3).
 *
 * Flow: a grid of operation configurations (erg_op_dims) is profiled on a target with the
 * paper's protocol (erg_profile_ops) into samples (erg_op_sample, one ops.csv row each); samples
 * are fitted into an erg_op_model (erg_op_model_fit), which is saved as "erg": "model/1" JSON and
 * answers erg_op_model_predict().
 *
 * Units: seconds, joules, bytes, FLOPs. Dimensions are element counts; 0 means "unused".
 *
 * Thread safety: an erg_op_model is immutable after fit/load and may be read (predict) from any
 * number of threads. Profiling runs kernels on the calling thread (plus OpenBLAS's own threads).
 */
#ifndef ERG_PREDICT_H
#define ERG_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "erg/error.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** The primitive operations of HYMELL level 1. */
typedef enum erg_op {
    ERG_OP_RMSNORM = 0, /**< RMSNorm over N tokens × d_model (Section 3.1). */
    ERG_OP_SOFTMAX = 1, /**< causal softmax of an N × N score matrix, one head (Section 3.2). */
    ERG_OP_GEMM = 2     /**< C(M×N) = A(M×K) · B(K×N) (Section 3.3). */
} erg_op;
#define ERG_OP_COUNT 3

/** Name of op: "rmsnorm", "softmax", "gemm" (the ops.csv `op` column). Never fails: "?" for a
 *  value outside erg_op; the string is static. */
ERG_API const char *erg_op_name(erg_op op);
/** Parse an op name (exactly as erg_op_name writes it) into *out. Errors: ERG_EINVAL for any
 *  other string (*out unchanged). */
ERG_API ERG_NODISCARD int erg_op_parse(const char *name, erg_op *out);

/** Element types. */
typedef enum erg_dtype { ERG_DTYPE_FP32 = 0, ERG_DTYPE_BF16 = 1, ERG_DTYPE_FP16 = 2 } erg_dtype;
/** Name of an element type: "fp32", "bf16", "fp16" (the ops.csv `dtype` column). Never fails:
 *  "?" for a value outside erg_dtype; the string is static. */
ERG_API const char *erg_dtype_name(erg_dtype t);
/** Parse a dtype name (as erg_dtype_name writes it) into *out. Errors: ERG_EINVAL for any
 *  other string. */
ERG_API ERG_NODISCARD int erg_dtype_parse(const char *name, erg_dtype *out);
/** Bytes per element b of HYMELL Section 3.3 (B_in = (M+N)K·b, B_out = MN·b): 4 for fp32,
 *  2 for bf16 and fp16. Never fails (2 for an unknown value). */
ERG_API unsigned erg_dtype_bytes(erg_dtype t);

/**
 * One configuration of one operation; unused dimensions are 0.
 * - rmsnorm: tokens (N), d_model (d).
 * - softmax: tokens (N) for the causal N × N matrix; or m rows × n columns for a plain row-wise
 *   softmax (tokens 0), as in the LLMCompass data. The causal case is m = n = N.
 * - gemm: m, n, k (C is m × n, the reduction runs over k).
 */
typedef struct erg_op_dims {
    erg_op op;
    erg_dtype dtype;
    int64_t m, n, k, tokens, d_model;
} erg_op_dims;

/** Check that the dimensions (element counts) op needs are positive (rmsnorm: tokens, d_model;
 * softmax: tokens, or m and n; gemm: m, n, k) and none is negative; dimensions the op does not
 * use are ignored (the CLI rejects them). Errors: ERG_EINVAL with diag (may be NULL) naming the
 * op and what is missing; d NULL, an unknown op or dtype are ERG_EINVAL too. */
ERG_API ERG_NODISCARD int erg_op_dims_check(const erg_op_dims *d, erg_diag *diag);

/**
 * One measured configuration: one row of ops.csv. time_s and energy_j are per execution (totals
 * divided by reps), on one time base (energy = the windows' mean power × time on the profiling
 * clock). time_sd_s and energy_sd_j are the run-to-run sd of the per-execution cost: the robust
 * (1.4826·MAD) spread across batches of each batch's per-execution mean, not scaled by √batch
 * (see erg_profile_ops). energy_j and energy_sd_j are NaN when the data has no energy (time-only
 * data such as LLMCompass); grade is then meaningless and has_grade 0.
 */
typedef struct erg_op_sample {
    erg_op_dims dims;
    char kappa[64]; /**< implementation κ, e.g. "openblas-0.3.21-sgemm-Zen-t1" */
    uint64_t reps;
    double time_s, time_sd_s;
    double energy_j, energy_sd_j;
    erg_grade grade;
    int has_grade;
} erg_op_sample;

/* ---------------------------------------------------------------- ops.csv and grid files */

/**
 * Read ops.csv (grid = 0) or a grid file (grid = 1). The header names the columns
 * `op,kappa,m,n,k,tokens,d_model,dtype,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade` (a grid
 * file: the columns up to dtype); columns may come in any order, unknown ones are an error. Empty
 * cells mean "unused" (dimensions) or "absent" (energy: NaN). Lines starting with '#' and blank
 * lines are skipped. On success *out is a malloc'd array of *n samples (free()). Errors:
 * ERG_ENOENT/ERG_EIO (file), ERG_EPARSE with diag->where "path:line:col" for a missing column,
 * a non-numeric or negative value, an unknown op/dtype/grade, or dimensions the op lacks.
 */
ERG_API ERG_NODISCARD int erg_ops_csv_read(const char *path, int grid, erg_op_sample **out,
                                           size_t *n, erg_diag *diag);

/** Write n samples as ops.csv (columns as erg_ops_csv_read lists them; times in s, energies in
 * J, NaN energy as empty cells, %.9g), whole or not at all: a temporary file renamed over path
 * ("-" writes stdout). Errors: ERG_EIO (cannot create, write or rename; diag names path),
 * ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_ops_csv_write(const char *path, const erg_op_sample *s, size_t n,
                                            erg_diag *diag);

/* ---------------------------------------------------------------- profiler */

/**
 * Energy of a code region: the profiler's one seam to erg's meters. begin() is called before a
 * batch of kernel executions and end() after it, with the batch's CLOCK_MONOTONIC duration;
 * end() returns the batch's energy (J) and its grade. When erg_profile_options.energy is NULL the
 * profiler uses its built-in estimator (static power model: est_power_w × time, grade
 * "estimator"), which is what a machine without counters gets.
 */
typedef struct erg_energy_window {
    void *ud;
    int (*begin)(void *ud, erg_diag *diag);
    int (*end)(void *ud, double elapsed_s, double *energy_j, erg_grade *grade, erg_diag *diag);
} erg_energy_window;

struct erg_monitor;

/**
 * An energy window over erg's meters (erg/measure.h): begin() opens the monitor window
 * "erg-profile-batch", end() closes it and returns the measurement's total_energy_j and
 * total_grade (on a machine without counters the meter's estimator, graded "estimator").
 * mon is borrowed and must outlive *out. Returns ERG_OK or ERG_EINVAL. end() fails with
 * ERG_ENODEV when no channel could be summed into a total.
 */
ERG_API ERG_NODISCARD int erg_profile_energy_monitor(struct erg_monitor *mon,
                                                     erg_energy_window *out);

/** Where the kernels run. Only ERG_TARGET_CPU is built; CUDA is the documented extension point. */
typedef enum erg_target { ERG_TARGET_CPU = 0, ERG_TARGET_CUDA = 1 } erg_target;

/** The clock batches are timed with. */
typedef enum erg_profile_clock {
    ERG_PROFILE_CLOCK_MONOTONIC = 0, /**< wall time, CLOCK_MONOTONIC (HYMELL's protocol; default) */
    ERG_PROFILE_CLOCK_THREAD_CPU = 1 /**< CPU time of the calling thread, CLOCK_THREAD_CPUTIME_ID:
                                          robust on a shared machine (time spent descheduled is
                                          not counted); only with threads = 1, as every kernel
                                          then runs on the calling thread */
} erg_profile_clock;

/** Profiler options; initialise with erg_profile_options_init() so new fields get defaults. */
typedef struct erg_profile_options {
    erg_target target;   /**< default ERG_TARGET_CPU */
    double min_time_s;   /**< cumulative kernel time per configuration (default 1 s; paper 10 s;
                              at most 86400) */
    unsigned batches;    /**< batches the repetitions are split into, for the sd (default 20) */
    double min_window_s; /**< shortest batch (energy window), s (default 0.02: above RAPL's
                              1 ms and the meter estimator's 10 ms update period); a
                              shorter batch is discarded and the batch size grown; at
                              most 86400 */
    unsigned min_weight_sets; /**< pre-generated input sets rotated across runs (default 2) */
    size_t rotate_bytes;      /**< more sets until their footprint reaches this (default 64 MiB) */
    unsigned max_weight_sets; /**< cap (default 64) */
    size_t
        max_set_bytes; /**< skip (ERG_ERANGE) a configuration whose one set exceeds this (1 GiB) */
    int threads;       /**< OpenBLAS threads (default 1; our own kernels are single-threaded) */
    erg_profile_clock clock; /**< default ERG_PROFILE_CLOCK_MONOTONIC */
    double est_power_w;      /**< power of the built-in estimator (default 15 W, one busy core) */
    const erg_energy_window *energy; /**< NULL: the built-in estimator */
    /** Optional clock replacing o->clock (tests, external timers): seconds, monotone; NULL: the
     *  system clock. Energy windows are wall time (CLOCK_MONOTONIC) and their energy is scaled
     *  to this clock's batch time as with the thread clock. */
    double (*now_s)(void *ud);
    void *now_ud;
    /** Optional progress callback after each configuration. */
    void (*progress)(void *ud, size_t done, size_t total, const erg_op_sample *s);
    void *progress_ud;
} erg_profile_options;

/** Fill o with the defaults documented on each field (min_time_s 1 s, batches 20, min_window_s
 *  0.02 s, 2..64 input sets up to 64 MiB, 1 thread, CLOCK_MONOTONIC, 15 W estimator).
 *  Never fails. */
ERG_API void erg_profile_options_init(erg_profile_options *o);

/**
 * Profile each configuration of grid (n entries; kappa of the grid rows is ignored) and write one
 * sample per configuration into out (caller-allocated, n entries). Protocol (HYMELL Section 5.1):
 * one or two warm-up executions, then repetitions in batches (each at least min_window_s) until
 * the cumulative time reaches min_time_s and two batches ran, rotating the pre-generated input
 * sets; time by CLOCK_MONOTONIC (or the thread's CPU clock, o->clock), energy by the energy
 * window around each batch; totals divided by repetitions. Energy and time share one time
 * base: with the thread clock each batch's window energy is scaled by (thread time / wall time),
 * i.e. energy = the window's mean power × the thread's time. sds: the robust (1.4826·MAD) spread
 * across batches of the per-execution batch means, not scaled by √b. Kernels: RMSNorm and causal
 * softmax are erg's own C loops (κ "erg-c", "erg-c-causal", "erg-c-rows"); GEMM is OpenBLAS
 * cblas_sgemm (fp32) or cblas_sbgemm (bf16, only when the linked OpenBLAS exports it). Errors:
 * ERG_EINVAL (bad dims), ERG_ENOTSUP (target cuda, dtype the target lacks), ERG_ENOMEM, ERG_ERANGE
 * (a set too large), or the energy window's status. *done (may be NULL) is the number of samples
 * written.
 */
ERG_API ERG_NODISCARD int erg_profile_ops(const erg_profile_options *o, const erg_op_dims *grid,
                                          size_t n, erg_op_sample *out, size_t *done,
                                          erg_diag *diag);

/** 1 when target can run op in dtype, else 0 (never an error): the CPU runs fp32 for every op,
 *  and bf16 GEMM only when the linked OpenBLAS exports cblas_sbgemm (built with BUILD_BFLOAT16;
 *  Debian 12's is not); the CUDA target runs nothing in this build. */
ERG_API int erg_profile_supports(erg_target target, erg_op op, erg_dtype dtype);

/**
 * Path of the default grid file of a target, grids/<target>.csv (target "cpu" or "cuda"), looked
 * up in order: $ERG_GRID_DIR/<target>.csv when set (that folder, whether or not the file is
 * there); $ERG_DATA_DIR/grids/ when set (likewise); then the first readable of the install data
 * dir relative to the running program (<bindir>/../share/erg/grids: a relocated prefix), the
 * configured ${datadir}/erg/grids and the source tree's grids/ (the build tree); none readable:
 * the configured install path. Into buf of *size bytes (libuv's uv_os_homedir rule, as every erg
 * default-path function): ERG_OK and *size = the path's length; ERG_ERANGE when it does not
 * fit, buf untouched and *size = the bytes needed (NUL included). The file is not opened.
 */
ERG_API ERG_NODISCARD int erg_profile_default_grid(erg_target target, char *buf, size_t *size);

/**
 * Identity of this machine's CPU target: kind (file-name safe, e.g. "cpu-amd-epyc"; names the
 * committed model models/<kind>.json) and a longer description (CPU model, OpenBLAS version and
 * core). Reads <$ERG_ROOT>/proc/cpuinfo (ERG_ROOT: a test root, default ""). Never fails: falls
 * back to "cpu-unknown"; both strings are truncated to their sizes and terminated.
 */
ERG_API void erg_target_identity(char *kind, size_t kind_size, char *desc, size_t desc_size);

/* ---------------------------------------------------------------- estimators */

/** Regimes of each op, in order of their split variable (Sections 3.1-3.3). */
#define ERG_OP_MAX_REGIMES 5
/** Number of regimes of op (HYMELL Sections 3.1-3.3): 2 (rmsnorm, softmax) or 5 (gemm); 0 for an
 *  unknown op. */
ERG_API unsigned erg_op_regime_count(erg_op op);
/** Name of regime r of op, in split order: rmsnorm and softmax "launch_bound", "memory_bound";
 * gemm "launch_bound", "memory_bound", "balanced_mem", "balanced_comp", "compute_bound"
 * (Section 3.3); r = ERG_OP_MAX_REGIMES gives "average"; "?" for anything else. Static string. */
ERG_API const char *erg_op_regime_name(erg_op op, unsigned r);

/** Number of features (terms, bias included) of op's estimator: 6 (rmsnorm, Section 3.1), 4
 *  (softmax, 3.2), 11 (gemm, 3.3); 0 for an unknown op. */
ERG_API unsigned erg_op_feature_count(erg_op op);
#define ERG_OP_MAX_FEATURES 11

/**
 * Raw features of a configuration, in the order of the paper's coefficients from the highest index
 * down to the bias (x[last] = 1):
 * - rmsnorm (Section 3.1): N·d, N·log2 d, d, N, log2 d, 1.
 * - softmax (Section 3.2): R·C, R, log2 C, 1 with R rows and C columns (N², N, log2 N, 1 causal).
 * - gemm (Section 3.3): PF·F, PF·B_in, AI·B_in, F, PF, AI, B_out, B_in, log10 F, 1/PF, 1 with
 *   F = 2MNK, B_in = (M+N)K·b, B_out = MN·b, AI = F/(B_in+B_out), PF = MN/K.
 * Units: FLOPs and bytes as above, the logs of element counts. x has room for
 * ERG_OP_MAX_FEATURES. Returns the count (erg_op_feature_count), 0 for dims that
 * erg_op_dims_check rejects (x untouched then).
 */
ERG_API unsigned erg_op_features(const erg_op_dims *d, double *x);

/**
 * Split variable of op for the regime choice (HYMELL Sections 3.1-3.3): N·d elements (rmsnorm,
 * vs th_RMS), √(R·C) rows (= N causal; softmax, vs th_Softmax), F = 2MNK FLOPs (gemm, vs
 * F_launch; the AI splits use erg_gemm_ai). Returns 0 for dims that erg_op_dims_check rejects.
 */
ERG_API double erg_op_split_value(const erg_op_dims *d);
/** Arithmetic intensity AI = F/(B_in + B_out) of a GEMM in FLOP/byte, with F = 2MNK,
 *  B_in = (M+N)K·b, B_out = MN·b (HYMELL Section 3.3). Returns 0 for a non-GEMM or bad dims. */
ERG_API double erg_gemm_ai(const erg_op_dims *d);

/** Regime thresholds (Sections 3.1-3.3, 5.2). */
typedef struct erg_op_thresholds {
    double rms_nd;     /**< th_RMS on N·d (paper 2.5e6) */
    double softmax_n;  /**< th_Softmax on N (paper 1024) */
    double gemm_f;     /**< F_launch in FLOPs (paper 8.39e6) */
    double gemm_ai[3]; /**< AI_low, AI_mid, AI_high in FLOP/byte (paper 81.92, 166.05, 288.91) */
} erg_op_thresholds;

/** Fill t with the paper's thresholds (HYMELL Section 5.2, H100 NVL, bf16): th_RMS = 2.5·10⁶
 *  elements, th_Softmax = 1024 tokens, F_launch = 8.39·10⁶ FLOPs, AI = 81.92 / 166.05 / 288.91
 *  FLOP/byte. Never fails. */
ERG_API void erg_op_thresholds_paper(erg_op_thresholds *t);

/** Regime of a configuration under thresholds t (index into erg_op_regime_name): the split
 *  value (erg_op_split_value) below the op's threshold is regime 0; a GEMM at or above F_launch
 *  is 1..4 by AI against AI_low, AI_mid, AI_high (Sections 3.1-3.3). Never fails: 0 for bad
 *  dims. */
ERG_API unsigned erg_op_regime(const erg_op_dims *d, const erg_op_thresholds *t);

/* ---------------------------------------------------------------- fitting and the model */

/** A fitted level-1 model (opaque, immutable after fit or load). */
typedef struct erg_op_model erg_op_model;

/** Fit options; initialise with erg_fit_options_init(). */
typedef struct erg_fit_options {
    double test_fraction;  /**< held-out share, random and seeded (default 0.2) */
    uint64_t seed;         /**< split seed (default 42) */
    int choose_thresholds; /**< 1: choose thresholds from the training data (default); 0: keep
                                the initial ones */
    const erg_op_thresholds *thresholds; /**< initial thresholds (NULL: the paper's) */
    unsigned min_points;     /**< a regime with fewer training points than max(this, features+1)
                                  falls back to its neighbour (default 0: features + 1) */
    const char *target_kind; /**< identity stored in the model (default: this machine's) */
    const char *target_desc;
    int gemm_form; /**< ERG_GEMM_FORM_PAPER (default): HYMELL's 11 GEMM terms per regime;
                        ERG_GEMM_FORM_CACHE: the CPU form (erg_gemm_cache_features), one fit */
} erg_fit_options;

/** GEMM estimator forms (erg_fit_options.gemm_form). */
#define ERG_GEMM_FORM_PAPER 0
#define ERG_GEMM_FORM_CACHE 1
/** Features of the cache-aware CPU GEMM form. */
#define ERG_GEMM_CACHE_FEATURES 6

/**
 * Features of the cache-aware CPU GEMM form (docs/predict.md, "A CPU GEMM form"): with b the
 * dtype's bytes and the footprint B = (MK + NK + MN)·b of one execution, x = {2MNK,
 * NK·b·[B ≤ cache_bytes], NK·b·[B > cache_bytes], MK·b, MN·b, 1}: compute, the weight matrix
 * read from cache or streamed from memory (the two bandwidths), the input and output traffic,
 * the call overhead. It replaces HYMELL Section 3.3's regime polynomial where one BLAS kernel
 * runs at near-constant efficiency and the cache level of the weights, not the arithmetic
 * intensity, decides the time (a CPU). x holds ERG_GEMM_CACHE_FEATURES values; returns that
 * count, 0 for dimensions erg_op_dims_check refuses or another op.
 */
ERG_API unsigned erg_gemm_cache_features(const erg_op_dims *d, double cache_bytes, double *x);

/** Fill o with the defaults documented on each field (20 % held out, seed 42, thresholds chosen
 *  from the data starting at the paper's, min_points features + 1, this machine's identity).
 *  Never fails. */
ERG_API void erg_fit_options_init(erg_fit_options *o);

/**
 * Fit HYMELL's level-1 estimators to samples (any mix of ops; an op with no samples is left out).
 * For each op and regime, time and (when every sample of that op has energy) energy are fitted by
 * least squares with GSL in scaled features: rows are divided by the measured value, so the fit
 * minimises the squared relative error that MAPE measures, and columns by their 2-norm, so the
 * system is well conditioned; of truncated SVD (gsl_multifit_linear_tsvd) and Tikhonov with λ by
 * generalised cross-validation (gsl_multifit_linear_gcv) the lower GCV score is kept.
 * Thresholds: the initial ones (o->thresholds, default the paper's), or chosen from the training
 * data by a coordinate search over candidate splits minimising the AIC of the piecewise fit. A
 * regime with too few training points uses its nearest neighbour's coefficients (or one pooled
 * fit) and records that in the notes. Validation: MAPE and R² of time and energy per op and
 * regime on the held-out split, and the same for a roofline baseline whose peak FLOP/s and
 * bandwidth (and mean power, for energy) are measured from the training data.
 * Errors: ERG_EINVAL (no samples, bad options), ERG_EPARSE (a sample with non-positive time),
 * ERG_ESINGULAR, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_op_model_fit(const erg_op_sample *s, size_t n,
                                           const erg_fit_options *o, erg_op_model **out,
                                           erg_diag *diag);

/** Free a model from erg_op_model_fit or erg_op_model_load. NULL-safe; never fails. */
ERG_API void erg_op_model_free(erg_op_model *m);

/**
 * Save m as "erg": "model/1" JSON (layout: docs/predict.md, "model/1 file"; seconds, joules,
 * FLOP/s, bytes/s, watts; non-finite figures as null), whole or not at all: a temporary file
 * renamed over path ("-" writes stdout). Coefficients are written with 17 significant digits,
 * so erg_op_model_load gives back the same predictions. Errors: ERG_EIO (cannot create, write or
 * rename; diag names path and the system's reason), ERG_ENOMEM (serialising).
 */
ERG_API ERG_NODISCARD int erg_op_model_save(const char *path, const erg_op_model *m,
                                            erg_diag *diag);

/**
 * Load a "model/1" JSON file written by erg_op_model_save into *out (free with
 * erg_op_model_free; *out is NULL on error). Errors: ERG_ENOENT (no such file), ERG_EACCES,
 * ERG_EIO (unreadable), ERG_EPARSE (not JSON, with file:line:col; not a level-1 op model; a
 * missing or malformed member: unknown op, feature list not the op's, coefficient arrays of the
 * wrong length, a fallback that leads nowhere, bounds out of order; diag names the file and the
 * JSON path), ERG_EVERSION (model/2 or later), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_op_model_load(const char *path, erg_op_model **out, erg_diag *diag);

/** The target kind a model was fitted for ("cpu-amd-epyc", "a100-llmcompass"); owned by m.
 *  Never fails. */
ERG_API const char *erg_op_model_target(const erg_op_model *m);
/** Grade of the energy data the model was fitted on (the weakest grade of its samples;
 *  ERG_GRADE_ESTIMATOR on a machine without counters, and for a time-only model). Never fails. */
ERG_API erg_grade erg_op_model_grade(const erg_op_model *m);
/** 0 when m has no estimator for op (or op is unknown), 1 when it has a time estimator only,
 *  2 when it has time and energy. Never fails. */
ERG_API int erg_op_model_has(const erg_op_model *m, erg_op op);

/** Slack of the bounds on an in-range fit: its time may exceed the envelope's top (launch +
 *  worst efficiency seen × roofline), and its power the observed power range, by this factor
 *  before it counts as implausible (points between training rows are not training rows). */
#define ERG_PREDICT_SLACK 1.25

/** How a prediction was made (erg_op_prediction.method). */
typedef enum erg_predict_method {
    ERG_PREDICT_FIT = 0,     /**< the regime's fitted estimator (Sections 3.1-3.3) */
    ERG_PREDICT_ROOFLINE = 1 /**< the op's calibrated roofline with a launch floor
                                  (docs/predict.md, "Bounds"): T = t0 + η·max(F/peak,
                                  bytes/bandwidth), E = the op's median observed power × T */
} erg_predict_method;

/** One prediction. time_s and energy_j are always finite and positive (energy_j NaN when the
 *  model has no energy for the op). */
typedef struct erg_op_prediction {
    double time_s;
    double energy_j; /**< NaN when the model has no energy for the op */
    unsigned regime;
    int fallback;       /**< 1 when the regime had too few points and uses a neighbour's fit */
    int extrapolated;   /**< 1 when the configuration lies outside the op's training range (a
                             dimension, the work F / N·d / √(R·C), or a GEMM's arithmetic
                             intensity): the polynomial is not used, method is the roofline */
    int time_bounded;   /**< 1 when the regime fit left the roofline envelope measured in
                             training: below the floor (roofline at the best rates, or the launch
                             floor) or not finite, the floor answers; above its top (launch +
                             worst efficiency × roofline, × ERG_PREDICT_SLACK), the top does */
    int energy_bounded; /**< 1 when the energy fit implied a power outside the range observed in
                             training (widened by ERG_PREDICT_SLACK): energy = the power clamped
                             into that band × time. The roofline method uses the observed
                             range itself. */
    erg_predict_method method;
    double floor_time_s; /**< the physical floor: max(roofline lower bound, launch floor t0) */
    double power_w;      /**< energy_j / time_s (NaN without energy) */
    char why[160];       /**< when extrapolated: which quantity left which range ("" else) */
    erg_grade grade;
} erg_op_prediction;

/**
 * Predict time and energy of one configuration. No allocation, no I/O: millions per second.
 * Inside the training range the regime's estimator answers, kept inside the roofline envelope
 * measured in training (floor: max of the roofline time at the op's best observed FLOP/s and
 * bandwidth and the launch floor t0; top: t0 + the worst efficiency seen × roofline time), with
 * its implied power bounded by the powers observed.
 * Outside the range (extrapolated) the op's calibrated roofline answers instead: a polynomial in
 * F, PF, AI... has no business beyond its data (Section 3.3's GEMM terms grow as F·MN/K).
 * Errors: ERG_EINVAL (bad dims), ERG_ENOTSUP (the model has no estimator for the op or the dtype),
 * ERG_ERANGE (a model file without bounds, written by an older erg, predicts a non-positive
 * time: refit it; or the predicted time or energy is not finite, named by the op).
 */
ERG_API ERG_NODISCARD int erg_op_model_predict(const erg_op_model *m, const erg_op_dims *d,
                                               erg_op_prediction *out, erg_diag *diag);

/**
 * A prediction as an energy signature (erg/signature.h), so that level-1 estimates compose with
 * the energy calculus (⊗, ⊕) into blocks and models: T = predicted time, d = E − s·T with s =
 * static_power_w (the device's static power at its operating point, e.g. a calibration's idle
 * power; 0 puts all energy in d), and variances from the regime's held-out error: a relative sd
 * of MAPE·√(π/2) (the mean absolute value of a normal error is σ·√(2/π)), σ²_E raised to s²·σ²_T
 * if needed (Axiom M1). grade: the model's; runs 0; name the op; kappa the fitted κ; device the
 * model's target; theta the op's own dimensions as JSON: {m, n, k, dtype} for GEMM, {tokens,
 * d_model, dtype} for RMSNorm, {tokens, dtype} (causal) or {m, n, dtype} (row-wise) for softmax.
 * Errors: those of erg_op_model_predict,
 * ERG_ENOTSUP (the model has no energy for the op), ERG_ERANGE (s·T exceeds the predicted E),
 * ERG_EINVAL (static_power_w negative or not finite).
 */
ERG_API ERG_NODISCARD int erg_op_model_signature(const erg_op_model *m, const erg_op_dims *d,
                                                 double static_power_w, erg_signature *out,
                                                 erg_diag *diag);

/** Held-out figures of one op and regime (regime = ERG_OP_MAX_REGIMES for the op's average row). */
typedef struct erg_op_validation {
    unsigned n_train, n_test;
    double time_mape_pct, time_r2, energy_mape_pct, energy_r2; /**< NaN when not computable */
    double roof_time_mape_pct, roof_time_r2, roof_energy_mape_pct, roof_energy_r2;
    double threshold_lo, threshold_hi; /**< the regime's split-variable interval */
    int fallback;                      /**< regime uses neighbour fallback_to */
    unsigned fallback_to;
} erg_op_validation;

/** Held-out validation figures of op and regime r into *out (MAPE in %, R² unitless, NaN when not
 *  computable; layout of HYMELL Tables 1-3); r = ERG_OP_MAX_REGIMES gives the mean of the
 *  regime rows, the paper's "Average" row. Errors: ERG_EINVAL when the model lacks the op or r
 *  is not one of its regimes. */
ERG_API ERG_NODISCARD int erg_op_model_validation(const erg_op_model *m, erg_op op, unsigned r,
                                                  erg_op_validation *out);

/**
 * The held-out MAPE (%) of what answered prediction p of op with m (erg_op_model_predict): the
 * regime's estimator, or the calibrated roofline when p->method is ERG_PREDICT_ROOFLINE; a
 * regime without held-out points (or one that borrows a neighbour's fit) gives the mean of the
 * regime rows (HYMELL Tables 1-3's "Average"). NaN where m holds no such figure (a NULL m or p
 * too). Either out pointer may be NULL. Never fails.
 */
ERG_API void erg_op_prediction_held_out(const erg_op_model *m, erg_op op,
                                        const erg_op_prediction *p, double *time_mape_pct,
                                        double *energy_mape_pct);

/**
 * Write the prediction/1 document of prediction p of configuration d with m, loaded from
 * model_path, to path ("-": standard output), whole or not at all (what `erg predict op ...
 * --json` prints; docs/predict.md): {"erg": "prediction/1", "op", "dtype", "time_s", "energy_j"
 * (null: the model has no energy for the op), "power_w", "regime", "method" ("fit" or
 * "roofline"), "grade" ("none" without energy), "model", "extrapolated", "why", "time_bounded",
 * "energy_bounded", "floor_time_s", "fallback", "held_out_time_mape_pct",
 * "held_out_energy_mape_pct" (erg_op_prediction_held_out; null: none), "target"}.
 * Errors: ERG_EINVAL (NULL, unknown op or dtype), ERG_ENOMEM, ERG_EIO (nothing half-written).
 */
ERG_API ERG_NODISCARD int erg_op_prediction_write_json(const char *path, const erg_op_model *m,
                                                       const char *model_path, const erg_op_dims *d,
                                                       const erg_op_prediction *p, erg_diag *diag);

/** Notes of the fit (fallbacks, skipped ops, time-only ops, threshold choices), one per line;
 *  "" when none. Owned by m. Never fails. */
ERG_API const char *erg_op_model_notes(const erg_op_model *m);

/** Machine-wide roofline figures measured from the training data (Williams, Waterman, Patterson,
 *  "Roofline", CACM 2009): peak FLOP/s (largest F/t of the GEMM rows), bandwidth in bytes/s
 *  (largest bytes/t of any row; bytes as in docs/predict.md) and mean power in W (mean E/t; NaN
 *  without energy). 0 when not measurable (no GEMM rows for the peak). Any pointer may be NULL.
 *  Never fails. The validation's roofline baseline uses each op's own bounds
 *  (erg_op_model_bounds). */
ERG_API void erg_op_model_roofline(const erg_op_model *m, double *peak_flop_s,
                                   double *bandwidth_bytes_s, double *mean_power_w);

/** Fixed cost in seconds of one eager framework call on the target, what each of a block's
 *  erg_block_work.eager_calls costs at level 1: for ops profiled through eager PyTorch (κ
 *  "torch-..."), the smallest measured time of a GEMM training row (one F.linear call of the
 *  least work: dispatch, allocation and Python around it; 3.2 µs on the CPU target); 0 for
 *  other profiles (measured kernels, fused attention) and models fitted before it existed.
 *  Never fails (0 for NULL). */
ERG_API double erg_op_model_call_time_s(const erg_op_model *m);

/** Physical bounds of one op, measured on its training rows (docs/predict.md, "Bounds"). */
typedef struct erg_op_bounds {
    double peak_flop_s;       /**< largest FLOP/s of the op's training rows */
    double bandwidth_bytes_s; /**< largest bytes/s of any training row (all ops) */
    double launch_time_s;     /**< fixed cost of a call t0: the intercept of t = t0 + s·roofline
                                   (relative least squares over the half of the training rows
                                   with the least work), clamped into [0, smallest time] */
    double eta;               /**< roofline efficiency of large work: median (t − t0) /
                                   roofline time over the quarter of rows with the most work
                                   (≥ 1) */
    double eta_hi;            /**< worst efficiency seen: max (t − launch) / roofline time; the
                                   envelope's top is launch + eta_hi · roofline time */
    double work_lo, work_hi;  /**< trained range of the split value (F, N·d, √(R·C)) */
    double ai_lo, ai_hi;      /**< trained range of a GEMM's arithmetic intensity (else 0) */
    double power_lo_w, power_med_w, power_hi_w; /**< E/t over the training rows (NaN: none) */
} erg_op_bounds;

/** Copy the bounds of op into *out (units on each field; how they are measured:
 *  docs/predict.md, "Bounds"). Errors: ERG_EINVAL when the model lacks the op, ERG_ENOENT when
 *  its file predates the bounds (refit). */
ERG_API ERG_NODISCARD int erg_op_model_bounds(const erg_op_model *m, erg_op op, erg_op_bounds *out);

/** Copy a model's thresholds into *t (units as in erg_op_thresholds) and, per op in
 *  chosen[ERG_OP_COUNT] (may be NULL), where they come from: 0 the paper's (Section 5.2),
 *  1 chosen from the data (AIC search, erg_op_model_fit), 2 the data search ran and kept the
 *  paper's. Never fails. */
ERG_API void erg_op_model_thresholds(const erg_op_model *m, erg_op_thresholds *t, int *chosen);

/**
 * Path of the default model of a target kind (erg_target_identity), models/<kind>.json, looked
 * up in order: $ERG_MODEL_DIR/<kind>.json when set (that folder, whether or not the file is
 * there); $ERG_DATA_DIR/models/ when set (likewise); then the first readable of the install data
 * dir relative to the running program (<bindir>/../share/erg/models: a relocated prefix), the
 * configured ${datadir}/erg/models and the source tree's models/ (the build tree); none
 * readable: the configured install path. Into buf of *size bytes (libuv's uv_os_homedir rule, as
 * every erg default-path function): ERG_OK and *size = the path's length; ERG_ERANGE when it
 * does not fit, buf untouched and *size = the bytes needed (NUL included); ERG_EINVAL when kind
 * is NULL or too long (250 bytes or more). The file is not opened: erg_op_model_load reports
 * ERG_ENOENT.
 */
ERG_API ERG_NODISCARD int erg_op_model_default_path(const char *kind, char *buf, size_t *size);

/* ---------------------------------------------------------------- architectures (HF config.json)
 */

/** FFN activation functions (HF `hidden_act` / `hidden_activation` / `activation_function`). */
typedef enum erg_act {
    ERG_ACT_SILU = 0,      /**< "silu", "swish" (Llama, Mistral, Qwen, gpt-oss) */
    ERG_ACT_GELU = 1,      /**< "gelu" (exact) */
    ERG_ACT_GELU_TANH = 2, /**< "gelu_new", "gelu_pytorch_tanh", "gelu_fast" (phi-2, Gemma 2) */
    ERG_ACT_RELU = 3       /**< "relu" */
} erg_act;
/** Name of an activation as the profile files write it: "silu", "gelu", "gelu_tanh", "relu";
 *  "?" for a value outside erg_act. Static string; never fails. */
ERG_API const char *erg_act_name(erg_act a);
/** Parse an activation: erg's names (erg_act_name) and HF's ("swish", "gelu_new",
 *  "gelu_pytorch_tanh", "gelu_fast", "quick_gelu" as gelu). Errors: ERG_EINVAL (*out unchanged). */
ERG_API ERG_NODISCARD int erg_act_parse(const char *name, erg_act *out);

/** Layer kinds of a decoder: attention over the whole cache or a sliding window, FFN dense or
 *  MoE. Index into erg_arch.layers: ERG_LAYER_FULL_DENSE + 1·sliding + 2·moe. */
enum {
    ERG_LAYER_FULL_DENSE = 0,
    ERG_LAYER_SLIDING_DENSE = 1,
    ERG_LAYER_FULL_MOE = 2,
    ERG_LAYER_SLIDING_MOE = 3,
    ERG_LAYER_KINDS = 4
};

/**
 * A decoder-only transformer as erg models it (HYMELL Sections 3.4-3.6): sizes are element
 * counts, 0 where not applicable. A fixed-size value (no allocation), so sweeps copy and edit it.
 * - attention: n_heads query heads of head_dim, n_kv_heads key/value heads (GQA when fewer,
 *   MHA when equal); window > 0 is the sliding window (tokens) of the layers counted as
 *   sliding in `layers`.
 * - FFN: dense layers have d_ff (gated: gate and up projections d_model → d_ff, then down
 *   d_ff → d_model; not gated: up and down); MoE layers route each token to top_k of n_experts
 *   experts of width d_ff_expert (gated like the dense FFN) through a router d_model →
 *   n_experts, plus n_shared shared experts of width d_ff_shared each, run on every token.
 * - norms_per_layer RMSNorm/LayerNorm ops per layer (2; Gemma 2: 4), plus one final norm.
 * - embedding: vocab rows of d_model, read by a gather; LM head d_model → vocab.
 */
typedef struct erg_arch {
    char family[32];                 /**< HF model_type ("llama", "qwen2_moe", ...) */
    char name[96];                   /**< the config file's stem ("llama-3.1-8b"), or "" */
    int64_t layers[ERG_LAYER_KINDS]; /**< number of layers of each kind; the sum is n_layers */
    int64_t n_layers, d_model, n_heads, n_kv_heads, head_dim, vocab;
    int64_t d_ff; /**< dense FFN width (also the width a MoE model's dense layers use) */
    int gated;    /**< 1: gated FFN (SwiGLU/GeGLU), 0: up, activation, down */
    erg_act act;
    int64_t n_experts, top_k, d_ff_expert, n_shared, d_ff_shared;
    int64_t window;         /**< sliding window in tokens (0: none) */
    int norms_per_layer;    /**< 2, or 4 with Gemma 2's post-norms */
    int tied_embeddings;    /**< the LM head reuses the embedding matrix */
    int fused_qkv;          /**< one QKV projection (Phi-3, Qwen v1): same FLOPs, one GEMM */
    double rotary_fraction; /**< share of head_dim rotated by RoPE (phi-2: 0.4), 1 otherwise */
    erg_dtype dtype;        /**< the config's torch_dtype (bf16 when absent) */
    /** quantization_config.quant_method ("mxfp4", "fp8", ...), "" when the config has none:
     *  erg has no kernel data for quantized weights and models them in dtype (its callers say
     *  so: `erg predict model` warns) */
    char quant_method[32];
    /** max_position_embeddings: the longest sequence (prompt plus generated tokens) the model
     *  was trained for, 0 when the config does not say; `erg predict model` warns beyond it */
    int64_t max_positions;
} erg_arch;

/** Total parameters of a (weights in elements: attention, FFN or all experts, norms' gains,
 *  embedding and an untied LM head), and the parameters a token activates (top_k of the
 *  experts) into *active (may be NULL). Never fails (0 for a NULL arch). */
ERG_API double erg_arch_params(const erg_arch *a, double *active);

/** Bytes a forward of a holds in device memory, at least: the weights (erg_arch_params ×
 *  erg_dtype_bytes(dtype)) plus the KV cache of batch sequences of tokens cached tokens each
 *  (2 × n_kv_heads × head_dim × dtype bytes per token and layer, K and V; a sliding-window
 *  layer holds at most window tokens); the KV part alone into *kv_bytes (may be NULL).
 *  Activations and workspace are not counted. Never fails: 0 for a NULL arch. */
ERG_API double erg_arch_memory_bytes(const erg_arch *a, int64_t batch, int64_t tokens,
                                     double *kv_bytes);

/**
 * Read a HuggingFace config.json into *out. Families: llama (Llama 2, 3.x), mistral, mixtral,
 * qwen (v1: intermediate_size is twice the FFN width, kv_channels the head size), qwen2,
 * qwen2_moe (Qwen1.5-MoE: moe_intermediate_size per expert, shared_expert_intermediate_size,
 * decoder_sparse_step, mlp_only_layers), qwen3, qwen3_moe, gemma2 (head_dim, alternating
 * sliding/global layers, four norms per layer), phi (phi-2: non-gated GELU, partial rotary),
 * phi3 (fused qkv and gate/up, sliding window), gpt_oss (layer_types, experts_per_token),
 * olmoe, deepseek (MoE without MLA: n_routed_experts, n_shared_experts, first_k_dense_replace),
 * and alternate names (n_embd, n_head, n_layer, n_inner, num_local_experts, num_experts,
 * n_routed_experts, ffn_hidden_size, ...).
 * Refused with ERG_ENOTSUP and the field named: multi-head latent attention (kv_lora_rank or
 * q_lora_rank set), linear or state-space attention fields, and an unknown model_type with a
 * field erg does not know. Bad input (ERG_EPARSE, diag->where the file, detail the field):
 * not JSON or not an object, a missing required field (hidden size, heads, layers, vocab, FFN
 * width), a size that is not a positive integer, heads that do not divide the hidden size when
 * head_dim is not given, KV heads that do not divide the heads, top-k above the expert count, a
 * torch_dtype (or dtype) that is not a string, a boolean field (tie_word_embeddings,
 * use_sliding_window) that is not true, false or null, a model_type that is not a string. A
 * torch_dtype other than bfloat16, float16 or float32 (an optional "torch." prefix allowed) is
 * refused with ERG_ENOTSUP, never read as bf16. Also ERG_ENOENT / ERG_EIO for the file, ERG_ENOMEM.
 * *out is written only on success.
 */
ERG_API ERG_NODISCARD int erg_arch_from_hf_config(const char *path, erg_arch *out, erg_diag *diag);

/** Same as erg_arch_from_hf_config from a JSON text of len bytes; name is used in messages and
 *  as erg_arch.name. Errors as erg_arch_from_hf_config. */
ERG_API ERG_NODISCARD int erg_arch_from_hf_json(const char *text, size_t len, const char *name,
                                                erg_arch *out, erg_diag *diag);

/** Check an architecture's invariants (positive sizes, layer counts summing to n_layers, KV heads
 *  dividing heads, top_k ≤ n_experts, MoE layers only with experts, sliding layers only with a
 *  window). Errors: ERG_EINVAL with diag->detail naming the field (erg_arch field names). */
ERG_API ERG_NODISCARD int erg_arch_check(const erg_arch *a, erg_diag *diag);

/**
 * Set one named size of an architecture, for design-space sweeps: d_model, n_heads, n_kv_heads,
 * head_dim, d_ff, d_ff_expert, n_layers (keeping the sliding/MoE shares of the layers), n_experts,
 * top_k, n_shared, d_ff_shared, window, vocab; and "heads" = n_heads = n_kv_heads (MHA) with
 * head_dim = d_model / heads (HYMELL Section 4, Figure 3). Setting d_model or n_heads also
 * rescales head_dim = d_model / n_heads when head_dim was d_model / n_heads before. The result is
 * not checked (erg_arch_check). Errors: ERG_EINVAL for an unknown key (diag names it) or a value
 * below 0.
 */
ERG_API ERG_NODISCARD int erg_arch_set(erg_arch *a, const char *key, int64_t value, erg_diag *diag);

/* ---------------------------------------------------------------- work lists (HYMELL 3.4-3.6) */

/** Blocks of a decoder layer and the model around it (the profile files' `block` column). */
typedef enum erg_block {
    ERG_BLOCK_ATTENTION = 0, /**< QKV projections, QK^T, softmax, ·V, output projection (3.4) */
    ERG_BLOCK_FFN = 1,       /**< dense FFN, gated or not (3.5) */
    ERG_BLOCK_MOE = 2,       /**< router, top-k experts, shared experts (3.5) */
    ERG_BLOCK_NORM = 3,      /**< one RMSNorm over the tokens (3.1) */
    ERG_BLOCK_EMBEDDING = 4, /**< token embedding gather */
    ERG_BLOCK_LM_HEAD = 5    /**< d_model → vocab projection */
} erg_block;
#define ERG_BLOCK_COUNT 6
/** Name of a block: "attention", "ffn", "moe", "norm", "embedding", "lm_head"; "?" otherwise.
 *  Static string; never fails. */
ERG_API const char *erg_block_name(erg_block b);
/** Parse a block name (as erg_block_name writes it). Errors: ERG_EINVAL (*out unchanged). */
ERG_API ERG_NODISCARD int erg_block_parse(const char *name, erg_block *out);

/** Inference phases. */
typedef enum erg_phase {
    ERG_PHASE_PREFILL = 0, /**< the prompt: batch × prompt tokens at once */
    ERG_PHASE_DECODE = 1   /**< one new token per sequence against kv cached tokens */
} erg_phase;
/** "prefill" or "decode"; "?" otherwise. Static string; never fails. */
ERG_API const char *erg_phase_name(erg_phase p);
/** Parse "prefill" or "decode". Errors: ERG_EINVAL (*out unchanged). */
ERG_API ERG_NODISCARD int erg_phase_parse(const char *name, erg_phase *out);

/**
 * One block instance: a blocks.csv row's configuration (docs/predict.md, "profile files"). Sizes
 * are element counts, 0 where not applicable. prefill: batch sequences of prompt tokens (kv 0);
 * decode: batch sequences of one new token each against kv cached tokens (prompt 0). The
 * attention of decode reads min(kv, window) cached positions (window 0: all). For a MoE block,
 * d_ff is the width of one expert; n_shared shared experts of d_ff_shared each run on every token.
 */
typedef struct erg_block_spec {
    erg_block block;
    erg_phase phase;
    int64_t batch, prompt, kv;
    int64_t d_model, n_heads, n_kv_heads, head_dim, d_ff;
    erg_act act;
    int gated;
    int64_t n_experts, top_k, n_shared, d_ff_shared, window, vocab;
    erg_dtype dtype;
} erg_block_spec;

/** Tokens a block processes: batch × prompt (prefill) or batch (decode); 0 for a bad spec. */
ERG_API int64_t erg_block_tokens(const erg_block_spec *s);

/** Check that the sizes the block needs are positive (every block: batch, d_model; prefill:
 *  prompt; decode: kv; attention: heads, kv heads dividing heads, head_dim; ffn: d_ff; moe:
 *  d_ff, n_experts, 1 ≤ top_k ≤ n_experts, d_ff_shared when n_shared; lm_head and embedding:
 *  vocab) and none is negative. Errors: ERG_EINVAL, diag->detail naming the field. */
ERG_API ERG_NODISCARD int erg_block_spec_check(const erg_block_spec *s, erg_diag *diag);

/** One level-1 operation of a block, run `count` times (e.g. QK^T once per sequence and head). */
typedef struct erg_work_op {
    erg_op_dims dims;
    double count;
    char role[16]; /**< "q_proj", "k_proj", "v_proj", "qk", "softmax", "pv", "o_proj", "gate",
                        "up", "down", "router", "expert_gate", "expert_up", "expert_down",
                        "shared_gate", "shared_up", "shared_down", "rmsnorm", "lm_head" */
} erg_work_op;

#define ERG_BLOCK_MAX_OPS 16
/**
 * The work of one block (HYMELL Sections 3.4-3.5): its level-1 ops with counts, and the
 * element-wise work that level 1 has no estimator for (RoPE, masking and scaling of the scores,
 * the KV-cache write, activation and gating, the residual add, top-k routing and the weighted
 * sum of the experts, the embedding gather), as FLOPs and bytes moved (dtype bytes per element).
 */
typedef struct erg_block_work {
    erg_block_spec spec;
    size_t n_ops;
    erg_work_op ops[ERG_BLOCK_MAX_OPS];
    double gemm_flops;        /**< Σ count · 2MNK over the GEMMs */
    double gemm_bytes;        /**< Σ count · (B_in + B_out) over the GEMMs */
    double elementwise_flops; /**< FLOPs outside the level-1 ops */
    double elementwise_bytes; /**< bytes read and written outside the level-1 ops */
    double kv_copy_bytes;     /**< bytes read and written by eager attention's KV copies (the
                                   decode step's cache concatenation, GQA's repeat_kv), not in
                                   elementwise_bytes: a fused kernel does not make them */
    double kv_copy_footprint; /**< bytes of the tensors those copies produce (cache residency) */
    double eager_calls;       /**< framework calls an eager (HF-style PyTorch) block runs besides
                                   its level-1 ops' own (views, transposes, RoPE's slices and
                                   products, the cache concatenation, repeat_kv, the scale, the
                                   activation and gating product, MoE routing and each active
                                   expert's gather and scatter, the residual add); each costs the
                                   target's per-call time (erg_op_model_call_time_s) */
} erg_block_work;

/**
 * The ops of one block (HYMELL Sections 3.4-3.5), tokens T = erg_block_tokens:
 * - attention: q, k, v projections (T × d_model → heads · head_dim), the output projection;
 *   prefill: per sequence and head QK^T (prompt × head_dim · head_dim × P') and ·V
 *   (prompt × P' · P' × head_dim) with P' = min(prompt, window), and a causal softmax over the
 *   prompt (a row-wise prompt × window one when the window is shorter); decode: per sequence and
 *   head (what eager PyTorch runs after repeat_kv) the new token against L' = min(kv, window)
 *   cached keys, QK^T (1 × head_dim · head_dim × L') and ·V (1 × L' · L' × head_dim), so L' is
 *   a GEMM dimension, and one row-wise softmax of (batch · heads) × L'; kv_copy_bytes: decode
 *   concatenates the new K and V onto the cache (HF DynamicCache: the whole cache read and
 *   written, 2 · batch · kv_heads · (2L' + 1) · head_dim elements), and GQA (kv_heads < heads)
 *   expands K and V to every head (repeat_kv: read kv_heads, write heads copies of the keys);
 * - ffn: gate and up (gated) or up, then down;
 * - moe: router T × d_model → n_experts; the T · top_k routed tokens spread over the
 *   A = E · (1 − (1 − top_k / E)^T) experts they are expected to touch under uniform routing
 *   (E = n_experts; tokens that pick the same expert share its weights), each a gated (or not)
 *   FFN of d_ff over round(T · top_k / A) tokens (at least 1); n_shared shared experts of
 *   d_ff_shared over all T tokens;
 * - norm: one RMSNorm T × d_model; lm_head: T × d_model → vocab; embedding: no level-1 op.
 * Errors: those of erg_block_spec_check.
 */
ERG_API ERG_NODISCARD int erg_block_work_build(const erg_block_spec *s, erg_block_work *out,
                                               erg_diag *diag);

/** A phase of a whole-model forward: batch sequences; prefill of prompt tokens each, or one
 *  decode step against kv cached tokens. logits_all: 1 computes the LM head for every prompt
 *  position (a HF forward), 0 only for the last (what generate() and serving engines do);
 *  decode always computes one position per sequence. */
typedef struct erg_phase_spec {
    erg_phase phase;
    int64_t batch, prompt, kv;
    int logits_all;
} erg_phase_spec;

#define ERG_MODEL_MAX_BLOCKS 8
/** One kind of block of a model and how many times one forward runs it. */
typedef struct erg_model_block {
    char name[24]; /**< "embedding", "norm", "attention", "attention_sliding", "ffn", "moe",
                        "lm_head" */
    erg_block_spec spec;
    int64_t count; /**< instances per forward (e.g. n_layers attention blocks) */
} erg_model_block;

/** The blocks of a whole-model forward in execution order (embedding, the layers' norms,
 *  attention and FFN/MoE kinds, lm_head). */
typedef struct erg_model_work {
    erg_arch arch;
    erg_phase_spec phase;
    size_t n_blocks;
    erg_model_block blocks[ERG_MODEL_MAX_BLOCKS];
} erg_model_work;

/**
 * The work list of one phase of an architecture (HYMELL Section 3.6): embedding ×1; norm ×
 * (norms_per_layer · n_layers + 1 final); attention × the full-attention layers and
 * attention_sliding × the sliding ones (the window in the spec); ffn × the dense layers, moe ×
 * the MoE layers; lm_head ×1 over batch · prompt tokens (prefill with logits_all), else batch.
 * Errors: ERG_EINVAL (erg_arch_check, or a phase without batch, prompt (prefill) or kv
 * (decode) ≥ 1), ERG_ERANGE (batch · prompt or batch · kv above 2^40 tokens), diag naming the
 * field.
 */
ERG_API ERG_NODISCARD int erg_model_work_build(const erg_arch *a, const erg_phase_spec *p,
                                               erg_model_work *out, erg_diag *diag);

/** Σ count · 2MNK of the GEMMs of a whole-model work list (FLOPs). Errors: ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_model_work_gemm_flops(const erg_model_work *w, double *flops,
                                                    erg_diag *diag);

/* ---------------------------------------------------------------- profile files */

/** One measured block: a row of blocks.csv (docs/predict.md, "Profile files"). time_s and
 *  energy_j per execution; energy_j and energy_sd_j NaN when not measured (has_grade 0 then);
 *  time_sd_s NaN when absent. */
typedef struct erg_block_sample {
    char arch[64]; /**< family used for leave-one-architecture-out grouping */
    erg_block_spec spec;
    int threads; /**< 0 when absent */
    uint64_t reps;
    double time_s, time_sd_s, energy_j, energy_sd_j;
    erg_grade grade;
    int has_grade;
} erg_block_sample;

/**
 * Read blocks.csv: the header names the columns `arch,block,phase,batch,prompt,kv,tokens,d_model,
 * n_heads,n_kv_heads,head_dim,d_ff,ffn_act,gated,n_experts,top_k,n_shared,d_ff_shared,window,vocab,
 * dtype,threads,reps,time_s,time_sd_s,energy_j,energy_sd_j,grade` in any order (an unknown column
 * is an error); `#` lines and blank lines are skipped; empty cells are "not applicable" (sizes)
 * or "not measured" (energy). Each row is checked with erg_block_spec_check, and `tokens`, when
 * given, must equal batch × prompt (prefill) or batch (decode). *out is a malloc'd array of *n
 * samples (free()). Errors: ERG_ENOENT/ERG_EIO (file), ERG_EPARSE with diag->where
 * "path:line:col" naming the column and what is wrong (a missing required column, a value that
 * is not a non-negative number, an unknown block/phase/dtype/activation/grade, energy 0, a spec
 * erg_block_spec_check refuses), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_blocks_csv_read(const char *path, erg_block_sample **out, size_t *n,
                                              erg_diag *diag);

/** Write n samples as blocks.csv (the columns erg_blocks_csv_read lists, %.9g, NaN as empty),
 *  whole or not at all ("-": stdout). Errors: ERG_EIO (diag names path), ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_blocks_csv_write(const char *path, const erg_block_sample *s,
                                               size_t n, erg_diag *diag);

/** One measured whole-model forward: a row of models.csv, with its config already read. */
typedef struct erg_model_sample {
    char arch[64];    /**< family used for leave-one-architecture-out grouping */
    char config[512]; /**< the config path as written in the CSV (relative to it) */
    erg_arch model;   /**< that config, read with erg_arch_from_hf_config (dtype: the row's) */
    erg_phase_spec phase;
    int threads;
    uint64_t reps;
    double time_s, time_sd_s, energy_j, energy_sd_j; /**< NaN where not measured */
    erg_grade grade;
    int has_grade;
} erg_model_sample;

/**
 * Read models.csv: columns `arch,config,phase,batch,prompt,kv,tokens,dtype,threads,reps,time_s,
 * time_sd_s,energy_j,energy_sd_j,grade` (any order). Each row's config is read once per distinct
 * path (relative to the CSV's folder) with erg_arch_from_hf_config; the row's dtype replaces the
 * config's. The phase's LM head runs over every position (logits_all 1: a HF forward). Errors:
 * as erg_blocks_csv_read, plus a config's own errors (diag names the config and the CSV line).
 */
ERG_API ERG_NODISCARD int erg_models_csv_read(const char *path, erg_model_sample **out, size_t *n,
                                              erg_diag *diag);

/* ---------------------------------------------------------------- level 1 of a block */

/** A time and energy estimate with its uncertainty; energy_j and energy_var_j2 NaN when the
 *  target has no energy. */
typedef struct erg_estimate {
    double time_s, energy_j;
    double time_var_s2, energy_var_j2;
    int level; /**< the HYMELL level that answered: 1 (sum of ops), 2 (block MLP), 3 (model) */
} erg_estimate;

/**
 * Level-1 estimate of one block: Σ count · erg_op_model_predict over the block's ops
 * (erg_block_work_build), plus the element-wise work costed by the model's roofline
 * (max(FLOPs / peak, bytes / bandwidth) × the mean power) and the eager calls around the ops
 * (erg_block_work.eager_calls × erg_op_model_call_time_s, at the mean power; none when the
 * target's fused attention kernel answers). An op the model has no estimator for
 * is costed by the roofline likewise. The KV copies of eager attention (kv_copy_bytes) cost the
 * GEMM fit's cached or streamed byte cost by their footprint (a cache-form GEMM model), else
 * bandwidth; none when the model's measured fused attention kernel answers the core. Under a
 * cache-form GEMM model a GEMM whose operands fit the cache is charged the streamed-byte cost
 * for its weight matrix when the block's GEMM operands together do not fit (QK^T and ·V: their
 * own instances). Variances from the ops' held-out MAPE as in
 * erg_op_model_signature (relative sd MAPE·√(π/2)), summed over the ops as independent.
 * Errors: those of erg_block_spec_check, ERG_ENOTSUP (the model has neither the op nor a
 * roofline), ERG_EINVAL.
 */
ERG_API ERG_NODISCARD int erg_block_level1(const erg_op_model *m, const erg_block_spec *s,
                                           erg_estimate *out, erg_diag *diag);

/* ---------------------------------------------------------------- levels 2 and 3 */

/** MLP options of the level-2 and level-3 fits; initialise with erg_mlp_options_init(). */
typedef struct erg_mlp_options {
    unsigned hidden_layers; /**< default 2 */
    unsigned width;         /**< hidden units per layer, ≤ 64 (default 16) */
    unsigned max_epochs;    /**< RPROP epochs at most (default 600; early stopping on a seeded
                                 20 % validation share keeps the best) */
    uint64_t seed;          /**< initial weights and splits (default 42): fits are reproducible */
    int cross_validate;     /**< 1 (default): leave-one-architecture-out figures (one extra fit
                                 per architecture); 0: none (the figures are NaN) */
} erg_mlp_options;

/** Fill o with the documented defaults. Never fails. */
ERG_API void erg_mlp_options_init(erg_mlp_options *o);

/** Held-out accuracy of a level-2 or level-3 model (leave-one-architecture-out: each row is
 *  predicted by a fit that saw no row of its architecture), MAPE in %, R² unitless, NaN when not
 *  computable; the same figures of the plain level-1 sum (level 2) or of the sum of the blocks
 *  (level 3) beside them. */
typedef struct erg_accuracy {
    size_t n;
    double time_mape_pct, time_r2, energy_mape_pct, energy_r2;
    double base_time_mape_pct, base_energy_mape_pct;
} erg_accuracy;

/** A level-2 model: one MLP correction per block kind (opaque, immutable after fit or load). */
typedef struct erg_block_model erg_block_model;

/**
 * Fit HYMELL level 2 (Sections 3.4-3.5): per block kind with rows, an MLP on the level-1
 * prediction (log time and log energy of erg_block_level1) and the block's architecture
 * parameters (log tokens, kv, d_model, heads, KV heads, head_dim, d_ff, experts, top-k, shared
 * width, window; phase, gated) predicting log(measured / level 1) of time and energy. Inputs and
 * targets are standardised on the training rows. A kind with fewer than 8 rows or one
 * architecture gets a constant correction (the mean log ratio). Held-out accuracy:
 * leave-one-architecture-out (o->cross_validate); the sd of the held-out log residuals is the
 * relative uncertainty of each prediction. Deterministic for a given seed.
 * Errors: ERG_EINVAL (no rows, no level-1 model), ERG_EPARSE (a row with non-positive time),
 * the errors of erg_block_level1, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_block_model_fit(const erg_op_model *l1, const erg_block_sample *s,
                                              size_t n, const erg_mlp_options *o,
                                              erg_block_model **out, erg_diag *diag);

/** Save as "erg": "model/1", kind "hymell-level2-blocks" (docs/predict.md), whole or not at all.
 *  Errors: ERG_EIO, ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_block_model_save(const char *path, const erg_block_model *m,
                                               erg_diag *diag);
/** Load a level-2 model file. Errors: ERG_ENOENT, ERG_EIO, ERG_EPARSE (not JSON, another kind,
 *  an unknown block, a feature list that is not erg's, malformed MLP arrays; diag names file and
 *  JSON path), ERG_EVERSION (model/2 or later), ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_block_model_load(const char *path, erg_block_model **out,
                                               erg_diag *diag);
/** Free a level-2 model. NULL-safe. */
ERG_API void erg_block_model_free(erg_block_model *m);

/** 1 when m has a correction for block b (fitted on its rows), else 0. Never fails. */
ERG_API int erg_block_model_has(const erg_block_model *m, erg_block b);

/** What corrects level 1 of block kind b in one phase (ERG_PHASE_PREFILL or ERG_PHASE_DECODE):
 *  *use "shared" (the correction fitted on both phases' rows), "own" (one fitted on that phase's
 *  rows only) or "none" (level 1 as it is), chosen by the lowest leave-one-architecture-out MAPE
 *  (time and energy) on the phase's rows, as level 3 chooses per group (erg_e2e_model_group);
 *  mape_pct (may be NULL) receives the three options' held-out MAPE in that order, NaN where not
 *  tried (one architecture, one phase, --no-cv, a file without "phases"). Errors: ERG_EINVAL
 *  (bad arguments, no correction for b). */
ERG_API ERG_NODISCARD int erg_block_model_phase(const erg_block_model *m, erg_block b, int phase,
                                                const char **use, double mape_pct[3]);

/**
 * Level-2 estimate of a block: the level-1 estimate (erg_block_level1 with l1) times the MLP's
 * correction exp(ŷ) for time and energy; variances (σ·T)² with σ the held-out sd of the log
 * residuals of that block kind. A block kind m has no correction for answers at level 1.
 * No allocation. Errors: those of erg_block_level1.
 */
ERG_API ERG_NODISCARD int erg_block_model_predict(const erg_block_model *m, const erg_op_model *l1,
                                                  const erg_block_spec *s, erg_estimate *out,
                                                  erg_diag *diag);

/** Held-out accuracy of block kind b over the rows of phase (ERG_PHASE_PREFILL/DECODE), or all
 *  its rows with phase -1 (HYMELL Tables 4 and 5). Errors: ERG_EINVAL (b not fitted). */
ERG_API ERG_NODISCARD int erg_block_model_accuracy(const erg_block_model *m, erg_block b, int phase,
                                                   erg_accuracy *out);

/** A level-3 model: the end-to-end MLP (opaque, immutable after fit or load). */
typedef struct erg_e2e_model erg_e2e_model;

/**
 * Fit HYMELL level 3 (Section 3.6): an MLP on log targets — the log of the measured time and
 * energy over the sum of the model's block estimates (level 2 with l2, level 1 without) — from
 * the block sums (log time and energy of the attention, FFN/MoE and norm parts) and global
 * features (log d_model, layers, tokens, batch, prompt, kv, vocab; phase; MoE experts and top-k).
 * Accuracy leave-one-architecture-out as in erg_block_model_fit. Errors: ERG_EINVAL, ERG_EPARSE
 * (non-positive time), the errors of the block estimates, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_e2e_model_fit(const erg_op_model *l1, const erg_block_model *l2,
                                            const erg_model_sample *s, size_t n,
                                            const erg_mlp_options *o, erg_e2e_model **out,
                                            erg_diag *diag);
/** One row of a level-3 fit with its held-out prediction (by a fit that saw no row of its
 *  architecture; NaN when there was no hold-out), for per-sequence tables (HYMELL Table 7). */
typedef struct erg_e2e_heldout_row {
    char arch[64];
    erg_phase_spec phase;
    double time_s, energy_j;                     /**< measured (energy NaN when not) */
    double predicted_time_s, predicted_energy_j; /**< held out */
} erg_e2e_heldout_row;

/** The rows of the fit that made m, in the order given, with their held-out predictions; 0 and
 *  *rows NULL for a loaded model (the rows are not saved). Owned by m. Never fails. */
ERG_API size_t erg_e2e_model_heldout(const erg_e2e_model *m, const erg_e2e_heldout_row **rows);

/** Save as "erg": "model/1", kind "hymell-level3-e2e". Errors: ERG_EIO, ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_e2e_model_save(const char *path, const erg_e2e_model *m,
                                             erg_diag *diag);
/** Load a level-3 model file. Errors as erg_block_model_load. */
ERG_API ERG_NODISCARD int erg_e2e_model_load(const char *path, erg_e2e_model **out, erg_diag *diag);
/** Free a level-3 model. NULL-safe. */
ERG_API void erg_e2e_model_free(erg_e2e_model *m);
/** Held-out accuracy over the rows of phase (or -1: all) and moe (1: MoE models, 0: dense, -1:
 *  both): HYMELL Table 6's rows. Errors: ERG_EINVAL (no such rows). */
ERG_API ERG_NODISCARD int erg_e2e_model_accuracy(const erg_e2e_model *m, int phase, int moe,
                                                 erg_accuracy *out);

/** What corrects the block sums of one phase (ERG_PHASE_PREFILL or ERG_PHASE_DECODE) of dense
 *  (moe 0) or MoE (moe 1) models, HYMELL Table 6's rows: *use "shared" (the correction fitted on
 *  every row), "own" (one fitted on that group's rows only) or "none" (the block sum as it is),
 *  chosen by the lowest held-out MAPE (time and energy) on the group's rows;
 *  mape_pct (may be NULL) receives the three options' held-out MAPE in that order, NaN where not
 *  tried (one architecture, --no-cv, a loaded model). Errors: ERG_EINVAL (bad arguments). */
ERG_API ERG_NODISCARD int erg_e2e_model_group(const erg_e2e_model *m, int phase, int moe,
                                              const char **use, double mape_pct[3]);

/** Nested held-out accuracy of levels 2 and 3 (erg_levels_nested_accuracy): per block kind and
 *  phase (HYMELL Tables 4-5; base: level 1) and per phase and dense/MoE (Table 6; base: the
 *  block sum of that fold's level 2). An empty cell has n 0 and NaN figures. */
typedef struct erg_nested_accuracy {
    size_t n_folds;                          /**< architectures held out, one fit each */
    erg_accuracy blocks[ERG_BLOCK_COUNT][2]; /**< [block kind][phase: prefill, decode] */
    erg_accuracy e2e[2][2];                  /**< [phase: prefill, decode][moe: 0 dense, 1 MoE] */
} erg_nested_accuracy;

/**
 * Nested leave-one-architecture-out accuracy of levels 2 and 3: for each architecture a (named
 * by the rows' arch), the whole fit is repeated on the rows of the other architectures —
 * erg_block_model_fit on the block rows, then erg_e2e_model_fit on the model rows with that
 * level-2 model, each with its own candidate and per-phase/per-group choice made by
 * leave-one-architecture-out inside the remaining architectures — and predicts a's block rows
 * (level 2) and model rows (levels 2 and 3). No choice ever sees a row of the architecture it is
 * scored on, so these figures are honest where erg_block_model_accuracy and
 * erg_e2e_model_accuracy are slightly optimistic (their candidate choice uses the folds that
 * report them; docs/predict.md, "Which model"). Cost: one level-2 and one level-3 fit per
 * architecture. bs (nb rows) may be empty: the blocks answer at level 1. Rows of an architecture
 * only one of the two sets has are predicted likewise. Deterministic for a given seed.
 * Errors: ERG_EINVAL (no model rows, no level-1 model, fewer than three architectures), the
 * errors of erg_block_model_fit and erg_e2e_model_fit, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_levels_nested_accuracy(const erg_op_model *l1,
                                                     const erg_block_sample *bs, size_t nb,
                                                     const erg_model_sample *ms, size_t nm,
                                                     const erg_mlp_options *o,
                                                     erg_nested_accuracy *out, erg_diag *diag);

/* ---------------------------------------------------------------- whole-model predictions */

/** A target: its level-1, and optionally level-2 and level-3, models (opaque, immutable). */
typedef struct erg_predictor erg_predictor;

/**
 * Open a target: a folder (a path containing '/' or an existing folder) or a name looked up as
 * models/NAME/ like erg_op_model_default_path ($ERG_MODEL_DIR/NAME, $ERG_DATA_DIR/models/NAME,
 * the installed share/erg/models/NAME, the source tree). The folder holds ops.json (level 1,
 * required), blocks.json (level 2) and e2e.json (level 3), each optional beyond level 1, and
 * optionally gpu.json's memory_gib (erg_predictor_memory_bytes).
 * Errors: ERG_ENOENT (no such target: diag names it, where it was looked for and the targets
 * there, erg_predict_targets), the load
 * errors of the files, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_predictor_open(const char *target, erg_predictor **out,
                                             erg_diag *diag);
/** Free a predictor. NULL-safe. */
ERG_API void erg_predictor_free(erg_predictor *p);
/** The folder the predictor was read from. Owned by p; never fails. */
ERG_API const char *erg_predictor_dir(const erg_predictor *p);
/** The highest level the target has: 1, 2 or 3. Never fails. */
ERG_API int erg_predictor_level(const erg_predictor *p);
/** The target's level-1 model (owned by p). Never fails. */
ERG_API const erg_op_model *erg_predictor_ops(const erg_predictor *p);
/** Memory of one device of the target in bytes: memory_gib × 2^30 from the target's gpu.json
 *  (optional: the vendor's capacity, e.g. 141 for an H200), NaN when the target gives none (CPU
 *  targets). erg_predictor_open refuses a memory_gib that is not a positive number (ERG_EPARSE).
 *  Never fails. */
ERG_API double erg_predictor_memory_bytes(const erg_predictor *p);
/** The names of the targets erg_predictor_open finds by name: the folders NAME/ holding
 *  ops.json in $ERG_MODEL_DIR when set, else in $ERG_DATA_DIR/models when set, else in the
 *  installed share/erg/models (beside the program, then the configured prefix) and the source
 *  tree's models/; sorted, without repeats, ", "-separated into buf of size bytes
 *  ("a100, cpu, h100, h200"; "" when none; cut at a whole name when buf is short). Returns how
 *  many there are (at most 64 listed). Never fails. */
ERG_API size_t erg_predict_targets(char *buf, size_t size);

/** One block kind of a whole-model prediction. */
typedef struct erg_model_block_estimate {
    char name[24]; /**< as erg_model_block.name */
    erg_block_spec spec;
    int64_t count;     /**< instances per forward */
    erg_estimate each; /**< one instance, level-3 factor applied */
} erg_model_block_estimate;

/** A whole-model prediction of one phase: per block kind and in total. */
typedef struct erg_model_prediction {
    erg_phase_spec phase;
    size_t n_blocks;
    erg_model_block_estimate blocks[ERG_MODEL_MAX_BLOCKS];
    double blocks_time_s, blocks_energy_j; /**< Σ count · block estimate, before level 3 */
    double time_factor, energy_factor;     /**< level 3's correction exp(ŷ) (1 without) */
    double model_time_var_s2, model_energy_var_j2; /**< level 3's own uncertainty of the
                                                        total, (σ₃·T)², beside the blocks' */
    erg_estimate total; /**< Σ count · each; variances Σ count² · var (the instances of one
                             block kind share one error, kinds are independent) + the model's */
    erg_grade grade;    /**< the level-1 model's energy grade */
} erg_model_prediction;

/**
 * Predict one phase of an architecture on a target (HYMELL levels 1-3): the work list
 * (erg_model_work_build), each block kind at the highest level the target has (2, else 1), then
 * the level-3 correction of the total, applied as a factor to every block so that the blocks
 * still sum to the total (a schedule of the blocks composes to it). No allocation; microseconds.
 * Errors: those of erg_model_work_build and erg_block_level1.
 */
ERG_API ERG_NODISCARD int erg_predict_model(const erg_predictor *p, const erg_arch *a,
                                            const erg_phase_spec *ph, erg_model_prediction *out,
                                            erg_diag *diag);

/**
 * Write whole-model predictions (n phases, in order) as a schedule/1 for the energy calculus:
 * one device "target" of static power static_power_w (W); per phase a signature per block kind
 * (T = the block's time, d = E - s·T, the block's variances, σ²_E raised to s²·σ²_T (Axiom M1)),
 * a "shared_error" element of zero time carrying Σ (count² − count) · var (the error that the
 * instances of a block kind share, which the calculus would add as independent) and, when
 * level 3 answered, a "model_error" element of zero time carrying the level-3 variance; the
 * expression is ⊗ of the phases, each ⊗ of embedding, the layers (each ⊗ of its norms,
 * attention and FFN or MoE blocks), the final norm, the LM head and the two error elements, so
 * that `erg compose` gives the predictions' summed time, energy and variances. name (may be
 * NULL) titles it. Written whole or not at all. Errors: ERG_EINVAL (no energy, s·T above a
 * block's energy, bad arguments), ERG_EIO, ERG_ENOMEM; diag->where names path.
 */
ERG_API ERG_NODISCARD int erg_model_schedule_write(const char *path, const erg_arch *a,
                                                   const erg_model_prediction *p, size_t n,
                                                   double static_power_w, const char *name,
                                                   erg_diag *diag);

/* ---------------------------------------------------------------- public measured data */

/**
 * Formats of third-party measured files erg reads (docs/predict.md, "Public measured data"):
 * NVIDIA aiconfigurator kernel tables (CSV, optionally gzip-compressed; latency in ms, and in the
 * H200 tables the mean NVML power in W), Vidur per-layer operator profiles (`mlp.csv`, medians in
 * ms), ML.ENERGY Benchmark v3 model JSON (steady-state serving per configuration) and BLIS vLLM
 * request traces (OpenTelemetry `llm_request` spans, one JSON object per line).
 */
typedef enum erg_public_format {
    ERG_PUBLIC_AIC_GEMM = 0,                 /**< aiconfigurator gemm_perf */
    ERG_PUBLIC_AIC_CONTEXT_ATTENTION = 1,    /**< context_attention_perf (prefill) */
    ERG_PUBLIC_AIC_GENERATION_ATTENTION = 2, /**< generation_attention_perf (decode) */
    ERG_PUBLIC_AIC_MOE = 3,                  /**< moe_perf (vLLM fused MoE) */
    ERG_PUBLIC_AIC_COLLECTIVE = 4,           /**< nccl_perf and custom_allreduce_perf */
    ERG_PUBLIC_VIDUR_MLP = 5,                /**< Vidur data/profiling/compute/.../mlp.csv */
    ERG_PUBLIC_MLENERGY_V3 = 6,              /**< ML.ENERGY leaderboard v3 model JSON */
    ERG_PUBLIC_BLIS_TRACES = 7               /**< BLIS ground-truth traces.json */
} erg_public_format;
#define ERG_PUBLIC_FORMAT_COUNT 8

/** Name of a format ("aic-gemm", "aic-context-attention", "aic-generation-attention",
 *  "aic-moe", "aic-collective", "vidur-mlp", "mlenergy-v3", "blis-traces"); "?" otherwise.
 *  Static string; never fails. */
ERG_API const char *erg_public_format_name(erg_public_format f);

/** Vidur's per-layer operators (columns `time_stats.<op>.median`), in file order. */
typedef enum erg_vidur_op {
    ERG_VIDUR_EMB = 0,
    ERG_VIDUR_INPUT_LAYERNORM,
    ERG_VIDUR_ATTN_PRE_PROJ,
    ERG_VIDUR_ATTN_ROPE,
    ERG_VIDUR_ATTN_POST_PROJ,
    ERG_VIDUR_POST_ATTENTION_LAYERNORM,
    ERG_VIDUR_MLP_UP_PROJ,
    ERG_VIDUR_MLP_ACT,
    ERG_VIDUR_MLP_DOWN_PROJ,
    ERG_VIDUR_ADD
} erg_vidur_op;
#define ERG_VIDUR_OP_COUNT 10
/** Vidur's name of op ("emb", "input_layernorm", ..., "add"); "?" otherwise. Never fails. */
ERG_API const char *erg_vidur_op_name(erg_vidur_op op);

/**
 * One measured row of a public file, format-neutral: the fields a format lacks are 0 (integers)
 * or NaN (measurements). Sizes are element counts, times seconds, energies joules, powers watts.
 * - aic gemm: m, n, k, dtype (`gemm_dtype`); time_s = latency; power_w, energy_j = power × time
 *   (H200 tables; NaN elsewhere: aiconfigurator's own energy is this product).
 * - aic attention: batch, isl (prompt length; 1 in decode), kv (the KV history `step` in decode,
 *   0 in prefill), heads and kv_heads (per GPU), head_dim, window (0 = full attention), dtype
 *   (`attn_dtype`), variant = `kv_cache_dtype`.
 * - aic moe: tokens, hidden, inter (per expert), topk, experts, tp, ep, dtype, variant = the
 *   routing `distribution`.
 * - aic collective: op ("all_reduce", ...), gpus, message_bytes, dtype, variant = backend or
 *   kernel source.
 * - vidur: heads, kv_heads, hidden (`n_embd`), inter (`n_expanded_embd`), vocab, gated, tokens,
 *   tp; op_time_s[] the medians (NaN when the file lacks the column: phi-2 has no
 *   post_attention_layernorm); time_s their sum; dtype "float16" (Vidur profiles fp16).
 * - mlenergy: device (`gpu_model`), gpus, tp, ep, batch = max_num_seqs, avg_batch, time_s =
 *   median_itl_ms / 1000, energy_j = energy_per_token_joules, power_w = avg_power_watts (all
 *   GPUs), avg_output_len, throughput; dtype = the file's weight_precision.
 * - blis: isl = prompt tokens, tokens = completion tokens, prefill_s, decode_s, queue_s,
 *   ttft_s, time_s = e2e latency.
 */
typedef struct erg_public_row {
    size_t line;      /**< 1-based line (CSV), configuration index + 1 (ML.ENERGY), request
                           index + 1 (BLIS: a line may hold several spans) */
    char op[32];      /**< aic `op_name`; "layer" (Vidur); "serving" (ML.ENERGY); "request" */
    char dtype[24];   /**< element type as the file names it ("bfloat16", "fp8", "float16") */
    char device[48];  /**< GPU as the file names it ("NVIDIA H200", "H100") */
    char variant[32]; /**< format-specific qualifier (see above) */
    int64_t m, n, k;
    int64_t batch, isl, kv, heads, kv_heads, head_dim, window;
    int64_t tokens, hidden, inter, topk, experts, tp, ep, gpus, message_bytes, vocab;
    int gated;
    double time_s, power_w, energy_j;
    double op_time_s[ERG_VIDUR_OP_COUNT];
    double avg_batch, avg_output_len, throughput_tok_s;
    double prefill_s, decode_s, queue_s, ttft_s;
} erg_public_row;

/** A public file read whole. */
typedef struct erg_public_table {
    erg_public_format format;
    char path[512];
    char model_id[128]; /**< ML.ENERGY `model_id`; "" otherwise */
    erg_public_row *rows;
    size_t n;
} erg_public_table;

/**
 * Read a public measured file (format recognised from its content: a CSV header, optionally
 * gzip-compressed, read through zlib; or JSON) into *out (free with erg_public_table_free).
 * Columns are found by name, so their order does not matter; a column the format needs and the
 * file lacks, a cell that is not a number where one is needed, or a negative size is an error.
 * Errors: ERG_ENOENT, ERG_EACCES, ERG_EIO (the file); ERG_EPARSE with diag->where
 * "path:line" (CSV: the line; ML.ENERGY: "configurations[i]") naming the column or member and
 * what is wrong, or "not a known public format" naming what the file looked like;
 * ERG_ENOMEM. *out is NULL on error.
 */
ERG_API ERG_NODISCARD int erg_public_read(const char *path, erg_public_table **out, erg_diag *diag);

/** Free a table from erg_public_read. NULL-safe; never fails. */
ERG_API void erg_public_table_free(erg_public_table *t);

/**
 * Level-1 samples (ops.csv rows) from a table, appended to *s (realloc'd; *n updated):
 * - aic gemm: one GEMM per row of dtype `dtype` ("bfloat16" selects bf16; rows of other types
 *   are counted in *skipped); energy = NVML power × latency, grade model_based (vendor power
 *   readings integrated over time), or NaN for tables without power;
 * - vidur: per row with tp == 1 the GEMMs of attn_pre_proj (m = tokens, n = (H + 2·KV)·d/H,
 *   k = d), attn_post_proj (tokens, d, d), mlp_up_proj (tokens, 2·ffn gated or ffn, d) and
 *   mlp_down_proj (tokens, d, ffn) and, for gated (RMSNorm) models, RMSNorm of tokens × d from
 *   input_layernorm and post_attention_layernorm (phi-2's LayerNorm is not RMSNorm: skipped);
 *   fp16, time only.
 * kappa names the source ("aic-<framework>-<kernel_source>", "vidur-<op>"). Other formats give no
 * level-1 rows (ERG_ENOTSUP). Errors: ERG_ENOMEM, ERG_EINVAL (dtype unknown to erg).
 */
ERG_API ERG_NODISCARD int erg_public_ops(const erg_public_table *t, const char *dtype,
                                         erg_op_sample **s, size_t *n, size_t *skipped,
                                         erg_diag *diag);

/**
 * Write blocks.csv (docs/predict.md, "Profile files"), whole or not at all, from Vidur mlp.csv
 * tables (rows at TP 1; arch = the file name's model part, "llama-2-7b-hf"): per row an `ffn`
 * block (mlp_up_proj + mlp_act + mlp_down_proj), a `norm` block (input_layernorm) and an
 * `embedding` block (emb), phase prefill with batch 1 and prompt = tokens = num_tokens (these
 * ops do not depend on the KV length); and `attention` blocks where an aiconfigurator attention
 * table among t (same GPU: the caller's choice) has a bf16, full-attention row with the same
 * heads, KV heads and head_dim: prefill (context_attention at batch 1, isl = num_tokens) and
 * decode (generation_attention at batch = num_tokens, kv = its step), time = Vidur's
 * attn_pre_proj + attn_rope + attn_post_proj + the kernel's latency. fp16, time only (energy
 * empty). *vidur_rows and *attention_blocks (may be NULL) count what was written. Errors:
 * ERG_EINVAL (no Vidur row at TP 1), ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_public_blocks_write(const char *path,
                                                  const erg_public_table *const *t, size_t n,
                                                  size_t *vidur_rows, size_t *attention_blocks,
                                                  erg_diag *diag);

/* ---------------------------------------------------------------- GPU targets from public data */

/** The routing of the aiconfigurator moe_perf rows the fused-MoE model is fitted on (and
 *  that erg predict eval compares it with). */
#define ERG_GPU_MOE_ROUTING "power_law_1.01"

/**
 * Kernel models of a GPU target, fitted on aiconfigurator's tables (docs/predict.md, "GPU
 * targets"): each a linear model in physical work, fitted by relative least squares (rows
 * divided by the measured time, so the fit minimises the squared relative error MAPE measures):
 * - decode attention (generation_attention, bf16 KV cache, full attention):
 *   t = c0 + c1·B_kv + c2·B·h + c3·B + c4·B·h_kv + c5·L, with B_kv = 2·B·h_kv·d_h·L·2 bytes of
 *   K and V read (batch B, KV length L, h query and h_kv KV heads of size d_h);
 * - fused MoE (moe_perf, bf16, EP 1, the skewed "power_law_1.01" routing rows: a trained router
 *   is not uniform, and on the H100 those rows are 10–45 % faster than the balanced ones at
 *   8–64 tokens): t = c0 + c1·B_w + c2·F + c3·A + c4·T·k, with B_w = A·3·d·f/tp·2 bytes of the
 *   A active experts and F = 6·T·k·d·f/tp FLOPs; A = E·(1 − (1 − k/E)^T), the experts T tokens
 *   routed at random activate on average, in the fit and the prediction alike (the skew is in
 *   the coefficients);
 * - prefill attention (context_attention, flash attention, bf16 KV cache, full attention):
 *   t = c0 + c1·F + c2·F·d_h/128 + c3·S + c4·B_qkvo + c5·B·h·⌈N/128⌉, with S = B·h·(N·N' −
 *   N'²/2) causal scores (N' = min(N, window)), F = 4·d_h·S FLOPs (QK^T and ·V), B_qkvo =
 *   B·N·(2h + 2h_kv)·d_h·2 bytes and B·h·⌈N/128⌉ query tiles: the per-score softmax work (S)
 *   makes many small heads dear, the F·d_h term large heads (smaller tiles), so the cost of a
 *   fixed d_model is U-shaped in the heads, as measured;
 * - all-reduce (custom_allreduce graph mode, else NCCL), per GPU count 2, 4, 8:
 *   t = c0 + c1·bytes.
 * Where the table has NVML power (H200), the energy of a call is E = P·t̂ with t̂ the kernel's
 * predicted time and its power P = q0 + q1·u + q2·u² + q3·u³ + q4·x1 + q5·x2, u = ln(t̂/100 µs),
 * x1, x2 = log2(head_dim/128), log2(heads/kv_heads) (attention) or log2(top-k), log2(experts)
 * (MoE), kept within the measured power range, fitted by relative least squares on the
 * measured power (attn_e, attn_prefill_e, moe_e; has_energy): NVML's power of a loop of short
 * kernels includes launch gaps and rises with the kernel's length. Its held-out MAPE is of
 * the energy (power × latency) with the time model refitted on the training split. Times in
 * seconds; held-out MAPE on a seeded 20 % split (splitmix64, seed 42).
 */
typedef struct erg_gpu_kernels {
    char device[48];
    int has_attn, has_moe, has_allreduce[3]; /**< [0]: 2 GPUs, [1]: 4, [2]: 8 */
    double attn[6], moe[5], allreduce[3][2];
    double attn_mape_pct, moe_mape_pct, allreduce_mape_pct[3]; /**< held-out, NaN: none */
    size_t attn_n, moe_n, allreduce_n[3];                      /**< rows fitted */
    int has_attn_prefill;                                      /**< prefill attention fitted */
    double attn_prefill[6], attn_prefill_mape_pct;
    size_t attn_prefill_n;
    double attn_prefill_min_s; /**< smallest measured prefill time: predictions never go below */
    int has_energy[3]; /**< energy models: [0] decode attention, [1] prefill attention, [2] MoE */
    double attn_e[6], attn_prefill_e[6], moe_e[6]; /**< power coefficients q0..q5 */
    double energy_mape_pct[3]; /**< held-out energy MAPE of the three, NaN: none */
    double power_w[3][2];      /**< lowest and highest measured power (W) of the three */
} erg_gpu_kernels;

/** Fit the kernel models from aiconfigurator tables (any mix of formats; tables of other kinds
 *  are ignored) into *out. A model without rows is left out (has_* 0). Errors: ERG_EINVAL
 *  (no usable row at all), ERG_ESINGULAR, ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_gpu_kernels_fit(const erg_public_table *const *tabs, size_t n,
                                              erg_gpu_kernels *out, erg_diag *diag);
/** Decode attention time (s) of batch B against KV length L with h query and h_kv KV heads
 *  (per GPU) of size d_h; NaN without a model. Never fails. */
ERG_API double erg_gpu_attn_decode_s(const erg_gpu_kernels *k, double batch, double kv,
                                     int64_t heads, int64_t kv_heads, int64_t head_dim);
/** Prefill (flash) attention time (s) of batch B prompts of N tokens with h query and h_kv KV
 *  heads (per GPU) of size d_h, causal, window ≤ 0 for full attention; at least the smallest
 *  measured time; NaN without a model. Never fails. */
ERG_API double erg_gpu_attn_prefill_s(const erg_gpu_kernels *k, double batch, double prompt,
                                      int64_t heads, int64_t kv_heads, int64_t head_dim,
                                      int64_t window);
/** Energy (J) of one prefill (phase ERG_PHASE_PREFILL: prompt = N) or decode (ERG_PHASE_DECODE:
 *  prompt = the KV length L) attention call from the kernel's power model times the call's
 *  predicted time, the power kept between the lowest and highest measured (power_w); NaN
 *  without an energy model (time-only tables). Never fails. */
ERG_API double erg_gpu_attn_energy_j(const erg_gpu_kernels *k, erg_phase phase, double batch,
                                     double prompt, int64_t heads, int64_t kv_heads,
                                     int64_t head_dim, int64_t window);
/** Fused-MoE time (s) of T tokens, hidden d, expert width f, top-k of E experts, TP tp; NaN
 *  without a model. Never fails. */
ERG_API double erg_gpu_moe_s(const erg_gpu_kernels *k, double tokens, int64_t d, int64_t f,
                             int64_t top_k, int64_t experts, int64_t tp);
/** Fused-MoE energy (J) of the call erg_gpu_moe_s times: P(t̂)·t̂ (erg_gpu_kernels); NaN
 *  without an energy model (time-only tables). Never fails. */
ERG_API double erg_gpu_moe_energy_j(const erg_gpu_kernels *k, double tokens, int64_t d, int64_t f,
                                    int64_t top_k, int64_t experts, int64_t tp);
/** All-reduce time (s) of bytes over gpus (2, 4 or 8); 0 for one GPU; NaN without a model
 *  for that count. Never fails. */
ERG_API double erg_gpu_allreduce_s(const erg_gpu_kernels *k, int gpus, double bytes);

/** The architecture fields a serving step needs (from a HuggingFace config.json). */
typedef struct erg_serving_arch {
    char name[96];
    int64_t layers, d_model, n_heads, n_kv_heads, head_dim, vocab, d_ff;
    int64_t n_experts, top_k, d_ff_expert;
    int64_t n_shared, d_ff_shared; /**< shared experts (always run) and their FFN width */
} erg_serving_arch;

/** Read the fields of erg_serving_arch from a config.json (hidden_size, num_attention_heads,
 *  num_key_value_heads (default: heads), head_dim (default d/h), num_hidden_layers,
 *  vocab_size, intermediate_size, num_experts | num_local_experts, num_experts_per_tok |
 *  experts_per_token, moe_intermediate_size (default intermediate_size),
 *  shared_expert_intermediate_size (one shared expert, Qwen-MoE) | n_shared_experts (as wide as
 *  a routed expert, DeepSeek)). Errors: ERG_ENOENT,
 *  ERG_EIO, ERG_EPARSE naming the file, the line and column of the field and the field (not a
 *  positive integer, KV heads that do not divide heads, top-k above the experts; a missing one
 *  at the document: "config.json:1:1: num_hidden_layers: required field is missing"),
 *  ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_serving_arch_read(const char *path, erg_serving_arch *out,
                                                erg_diag *diag);

/** Level-1 and kernel terms of one steady-state decode step (seconds, per GPU). */
typedef struct erg_serving_terms {
    double gemm_s; /**< QKV and O projections, dense FFN GEMMs of all layers and the LM head */
    double moe_s;  /**< fused MoE of all layers (0 for a dense model) */
    double attn_s; /**< decode attention of all layers */
    double comm_s; /**< two all-reduces per layer under tensor parallelism */
    double layers;
    /** bytes one GPU reads in the step: its share of the weights the step touches (attention,
     *  dense FFN or the router, shared experts and the experts the batch activates,
     *  E·(1 − (1 − k/E)^B) on average; LM head) and of the KV cache (bf16) */
    double bytes;
    /** FLOPs one GPU runs in the step: 2 per weight per token of those GEMMs (MoE: only the
     *  top-k experts of each token) and 4·L·h·d_h per sequence for attention */
    double flops;
} erg_serving_terms;

/**
 * The terms of one decode step of a batch of B sequences (B real: an average batch is
 * rounded to the nearest integer ≥ 1 for the GEMM rows) against KV length L under tensor
 * parallelism tp (heads, FFN and vocabulary split tp ways): projections and FFN GEMMs (MoE:
 * the router B × d → E and the shared experts' gated FFNs) by the level-1 model ops (bf16),
 * attention and the routed experts by the kernel models, all-reduce of B·d·2 bytes
 * twice per layer (HYMELL Sections 3.4–3.6 with the GPU kernels in place of GEMM + softmax).
 * Errors: ERG_ENOTSUP (a kernel model or op the target lacks, tp without an all-reduce model),
 * ERG_EINVAL (tp does not divide the heads or KV heads), those of erg_op_model_predict.
 */
ERG_API ERG_NODISCARD int erg_serving_step(const erg_op_model *ops, const erg_gpu_kernels *k,
                                           const erg_serving_arch *a, double batch, double kv,
                                           int tp, erg_serving_terms *out, erg_diag *diag);

/**
 * Level 3 for steady-state serving (ML.ENERGY): median inter-token latency
 * ITL = c0·gemm + c1·moe + c2·attn + c3·comm + c4·layers; the per-GPU power linear in the
 * step's achieved rates, P = p0 + p1·bytes/ITL + p2·flops/ITL (ITL the predicted one), at most
 * power_max_w, the highest per-GPU power of the training rows (rows within 2 % of it are at the
 * board's limit and left out of the power fit); energy per output token =
 * P·gpus·ITL / (B·φ(B)), φ(B) = min(1, f0 + f1·ln B) the ratio of the measured output
 * throughput to B/ITL (steps that also run prefill chunks: more of them at large batches).
 * A power linear in activity is what averages over a step's kernels (a mean of per-kernel
 * powers weighted by time is linear in the mean rates), and it sees that a MoE step reads
 * sparse expert weights and runs few FLOPs per token, where the former P = p0 + p1·ln B fitted
 * on dense models put a MoE at a dense model's power (docs/predict.md, "The serving level 3").
 * Fitted by relative least squares.
 */
typedef struct erg_serving_model {
    double itl[5];
    double power[3];      /**< p0 (W), p1 (W per B/s), p2 (W per FLOP/s) */
    double power_max_w;   /**< the cap of P (W per GPU) */
    double phi[2];        /**< f0, f1 of φ(B) */
    double prompt_tokens; /**< assumed prompt length: L = prompt + avg_output_len / 2 */
    size_t n_train;
    double itl_mape_pct, energy_mape_pct; /**< on the training rows */
} erg_serving_model;

/** One measured serving configuration with its terms. */
typedef struct erg_serving_sample {
    erg_serving_terms terms;
    double batch, gpus, itl_s, energy_per_token_j, power_w, throughput_tok_s;
} erg_serving_sample;

/** Fit an erg_serving_model on n samples (n ≥ 6). Errors: ERG_EINVAL (too few samples),
 *  ERG_ESINGULAR. */
ERG_API ERG_NODISCARD int erg_serving_fit(const erg_serving_sample *s, size_t n,
                                          double prompt_tokens, erg_serving_model *out,
                                          erg_diag *diag);
/** Predict ITL (s) and energy per output token (J) of a configuration from its terms.
 *  Never fails; NaN when m is unfitted. */
ERG_API void erg_serving_predict(const erg_serving_model *m, const erg_serving_terms *t,
                                 double batch, double gpus, double *itl_s,
                                 double *energy_per_token_j);

/**
 * The measured-shape GEMM map of a GPU target (docs/predict.md, "GPU targets"): per cell of
 * (log2 m, log2 n, log2 k) at a step of 1/2, the median ratio of the measured time to the
 * level-1 GEMM estimator of ops_path (a model/1 file) and the median NVML power over the
 * aiconfigurator gemm_perf rows of t in that cell (the estimator's dtype, inside its trained
 * range); written to out as "erg": "gemm-map/1" JSON, whole or not at all. A target folder with
 * gemm-map.json beside ops.json predicts a GEMM inside a cell as the estimator's time × the
 * cell's ratio and, where the model has energy, the cell's power × that time (kept within the
 * slack of the observed power range); elsewhere the estimator alone. Pass only training rows:
 * a map built on rows is no accuracy figure for them. *cells and *rows (may be NULL): cells
 * written, rows used. Errors: those of erg_op_model_load; ERG_EINVAL (no GEMM estimator, no
 * usable row); ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_gemm_map_write(const char *out, const char *ops_path,
                                             const erg_public_table *const *t, size_t n,
                                             size_t *cells, size_t *rows, erg_diag *diag);

/** Save kernels and serving model (either may be NULL) as "erg": "gpu-target/1" JSON, whole or
 *  not at all. Errors: ERG_EIO, ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_gpu_target_save(const char *path, const erg_gpu_kernels *k,
                                              const erg_serving_model *m, erg_diag *diag);
/** Load a "gpu-target/1" file; *has_serving says whether it holds a serving model. Errors:
 *  ERG_ENOENT, ERG_EIO, ERG_EPARSE, ERG_EVERSION, with where "file:line:col" of the bad value
 *  (a missing member: of the object that lacks it) and detail its JSON path and what is wrong
 *  ("gpu.json:12:7: serving.power_max_w: must be positive (got -3)"); on error *k and *m are
 *  zeroed. */
ERG_API ERG_NODISCARD int erg_gpu_target_load(const char *path, erg_gpu_kernels *k,
                                              erg_serving_model *m, int *has_serving,
                                              erg_diag *diag);

/* ---------------------------------------------------------------- documents of the CLI's reports
 * The JSON documents `erg fit --json`, `erg predict model --json`, `erg predict sweep --json` and
 * `erg predict eval --json` print (docs/formats.md): written by the library, the CLI only parses
 * its options and prints. Each writer writes to path ("-": standard output) whole or not at all
 * (a temporary beside the file, renamed into place; a symlink is followed, a device or FIFO
 * written into, never replaced). */

/** Mean of the held-out accuracies of the n rows whose n is not 0 (HYMELL Tables 4-6's
 *  "Average"), each figure over the rows where it is finite (NaN when none); avg->n is the sum
 *  of the rows' n. Never fails (a NULL rows with n 0 gives NaN figures). */
ERG_API void erg_accuracy_average(const erg_accuracy *rows, size_t n, erg_accuracy *avg);

/** What a fit-report/1 document reports (erg_fit_report_write_json): the fit of one level. */
typedef struct erg_fit_report {
    int level;                         /**< 1 (ops), 2 (blocks) or 3 (end to end) */
    const char *model_path;            /**< where the fitted model was saved ("model") */
    const erg_op_model *ops;           /**< level 1: the fitted model */
    const erg_block_model *blocks;     /**< level 2: the fitted model */
    const erg_e2e_model *e2e;          /**< level 3: the fitted model */
    size_t rows;                       /**< levels 2 and 3: the profile rows fitted on */
    int blocks_level;                  /**< level 3: 2 when a level-2 model corrected the blocks,
                                            else 1 */
    const erg_nested_accuracy *nested; /**< level 3: nested accuracy, or NULL when not run */
} erg_fit_report;

/**
 * Write the fit-report/1 document of r (what `erg fit ops|blocks|model ... --json` prints;
 * docs/predict.md). Level 1, indented by 2: {"erg": "fit-report/1", "model", "target", "grade"
 * (null: no op has energy), "ops": {OP: {REGIME or "Average": {"n_train", "n_test",
 * "time_mape_pct", "time_r2", "energy_mape_pct", "energy_r2", "roofline_time_mape_pct",
 * "roofline_time_r2", "roofline_energy_mape_pct", "roofline_energy_r2", "fallback"}}}, "notes"}
 * (erg_op_model_validation; HYMELL Tables 1-3). Level 2, on one line: {"erg", "level": 2,
 * "model", "rows", "heldout": {BLOCK: {"prefill"|"decode"|"all": ACC}}} for each fitted block
 * kind and phase with rows (erg_block_model_accuracy; Tables 4-5). Level 3, on one line: {"erg",
 * "level": 3, "model", "rows", "blocks_level", "heldout": {"Prefill (Dense)", "Decode (Dense)",
 * "Prefill (MoE)", "Decode (MoE)" (those with rows), "Average": ACC} (erg_e2e_model_accuracy,
 * erg_accuracy_average; Table 6), "nested" (only with r->nested): {"folds", "blocks": {BLOCK:
 * {PHASE: ACC}}, "e2e": {... as "heldout"}}}. ACC is {"n", "time_mape_pct", "time_r2",
 * "energy_mape_pct", "energy_r2", "base_time_mape_pct", "base_energy_mape_pct"} (MAPE in %, R²
 * unitless, null where not computable). Reals with 6 significant digits.
 * Errors: ERG_EINVAL (NULL, a level other than 1-3, its model NULL), ERG_ENOMEM, ERG_EIO
 * (nothing half-written).
 */
ERG_API ERG_NODISCARD int erg_fit_report_write_json(const char *path, const erg_fit_report *r,
                                                    erg_diag *diag);

/** A whole request (erg_predict_request): the prefill of batch sequences of prompt tokens, then
 *  the output - 1 decode steps that generate the other output tokens. Seconds and joules;
 *  energy NaN on a time-only target. */
typedef struct erg_model_request {
    int64_t batch, prompt, output; /**< sequences, prompt tokens, output tokens per sequence */
    int64_t steps;                 /**< decode steps: output - 1 */
    double prefill_time_s, decode_time_s, time_s, time_sd_s;
    double prefill_energy_j, decode_energy_j, energy_j, energy_sd_j;
    erg_grade grade; /**< the prefill's energy grade */
} erg_model_request;

/**
 * Predict a whole request (what `erg predict model --output N` reports): the prefill prediction
 * prefill (erg_predict_model of an ERG_PHASE_PREFILL spec: its batch, prompt and logits_all are
 * the request's), then decode step i = 1 .. output - 1 against KV length prompt + i, each with
 * erg_predict_model. Time and energy add up; the steps share one model's error (the same
 * estimators on nearly the same work), so their standard deviations add linearly, and that sum
 * and the prefill's add in quadrature. output at least 1 (1: the prefill alone, no step).
 * Errors: ERG_EINVAL (NULL, not a prefill, output < 1), erg_predict_model's, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_predict_request(const erg_predictor *p, const erg_arch *a,
                                              const erg_model_prediction *prefill, int64_t output,
                                              erg_model_request *out, erg_diag *diag);

/** The sizes of a model prediction (what `erg predict model` is asked): the phases predicted
 *  (bit 0 prefill of batch × prompt tokens, bit 1 decode of one token per sequence against kv
 *  cached tokens; 0: none, only the architecture's own warnings), and output > 0 for a whole
 *  request of output tokens per sequence (erg_predict_request: prefill, then output − 1 decode
 *  steps up to KV length prompt + output − 1), 0 otherwise. Tokens, per sequence. */
typedef struct erg_model_query {
    int phases;
    int64_t batch, prompt, kv, output;
} erg_model_query;

/** What a warning of erg_model_warnings is about. */
typedef enum erg_model_warning_kind {
    /** quantization_config present: erg has no kernel data for quantized weights and models
     *  them in the config's torch_dtype */
    ERG_MODEL_WARNING_QUANTIZED = 1,
    /** weights plus KV cache above the target's memory (gpu.json memory_gib) */
    ERG_MODEL_WARNING_MEMORY = 2,
    /** more cached tokens than the config's max_position_embeddings */
    ERG_MODEL_WARNING_POSITIONS = 3
} erg_model_warning_kind;

/** Most warnings erg_model_warnings gives (one of each kind), and the size of their text. */
#define ERG_MODEL_WARNINGS_MAX 3
#define ERG_MODEL_WARNING_TEXT_MAX 512

/** One warning about a model prediction: the prediction is still made (it assumes what the
 *  warning says it cannot check); the figures it rests on, and its text. */
typedef struct erg_model_warning {
    erg_model_warning_kind kind;
    /** MEMORY and POSITIONS: the cached tokens per sequence counted: the KV length (decode), the
     *  prompt (prefill; both phases: the larger), prompt + output − 1 (a request) */
    int64_t tokens;
    /** POSITIONS: which of them ("the KV length", "the prompt", "prompt + output - 1");
     *  static string, "" for the other kinds */
    const char *tokens_what;
    int64_t max_positions; /**< POSITIONS: the config's max_position_embeddings */
    double weights_bytes;  /**< MEMORY: the weights (erg_arch_params × dtype bytes), bytes */
    double kv_bytes;       /**< MEMORY: the KV cache of batch × tokens, bytes */
    double memory_bytes;   /**< MEMORY: the target's memory (erg_predictor_memory_bytes) */
    char text[ERG_MODEL_WARNING_TEXT_MAX]; /**< one line, as `erg predict model` prints it after
                                            *   "erg: warning: " (--json: "warnings") */
} erg_model_warning;

/**
 * The warnings of a model prediction of a on target p (may be NULL: no memory check) with the
 * sizes of q, in this order, at most one of each kind: quantized weights (a->quant_method set;
 * the only one with q->phases 0, as a sweep, whose sizes vary, prints); the weights plus the KV
 * cache of q->batch sequences of the cached tokens (erg_arch_memory_bytes) above the target's
 * memory (erg_predictor_memory_bytes, when the target gives one; GiB = 2^30 bytes in the text:
 * Mixtral-8x7B on h100, batch 8, prompt 512, both phases: 86.99 GiB of bf16 weights and 0.5 GiB
 * of KV cache need 87.49 GiB, more than 80 GiB); the cached tokens above a->max_positions (when
 * the config gives it; RoPE scaling may stretch a model past it, erg cannot tell). out holds
 * ERG_MODEL_WARNINGS_MAX records; *n is set to those written. The prediction itself is never
 * refused for these (docs/predict.md, "Memory"). Errors: ERG_EINVAL (NULL a, q, out or n; a size
 * below 1 for a phase of q->phases, output below 0). Thread-safe.
 */
ERG_API ERG_NODISCARD int erg_model_warnings(const erg_arch *a, const erg_predictor *p,
                                             const erg_model_query *q, erg_model_warning *out,
                                             size_t *n, erg_diag *diag);

/**
 * The decode step of batch sequences against kv cached tokens as served (`erg predict model`'s
 * "as served" line; docs/predict.md, "As served"): the target's serving level 3 (gpu.json's
 * serving model, fitted on ML.ENERGY's steady-state vLLM serving: the h100 target) on one GPU,
 * erg_serving_step of the architecture read from the HF config at config (erg_serving_arch_read)
 * with the target's level-1 ops, then erg_serving_predict: the median inter-token latency
 * *itl_s (s) and the energy per output token *energy_per_token_j (J; ML.ENERGY's total energy
 * over output tokens, so the served prompts' prefill chunks are in it: no figure to add to a
 * prefill or to multiply into an isolated request's energy). Errors: ERG_ENOTSUP (the target has
 * no gpu.json or no serving model, lacks a kernel or op the step needs, or the model gives no
 * finite figure), those of erg_gpu_target_load and erg_serving_arch_read (ERG_ENOENT, ERG_EPARSE
 * naming the file and field), ERG_EINVAL (NULL, batch or kv below 1). Thread-safe.
 */
ERG_API ERG_NODISCARD int erg_predict_serving_decode(const erg_predictor *p, const char *config,
                                                     int64_t batch, int64_t kv, double *itl_s,
                                                     double *energy_per_token_j, erg_diag *diag);

/** What a model-prediction/1 document reports (erg_model_prediction_write_json). */
typedef struct erg_model_report {
    const char *config;                 /**< the HF config.json path, as given */
    const erg_arch *arch;               /**< read from it */
    const erg_predictor *target;        /**< the target predicted on */
    const erg_model_prediction *phases; /**< n_phases predictions, in order */
    size_t n_phases;
    int has_serving; /**< the target's serving level 3 answered the decode step */
    double serving_itl_s, serving_energy_per_token_j; /**< its figures (s, J per token) */
    const erg_model_request *request;                 /**< --output's request, or NULL */
    const char *const *warnings;                      /**< n_warnings lines */
    size_t n_warnings;
    const char *schedule; /**< the schedule/1 written beside it, or NULL */
} erg_model_report;

/**
 * Write the model-prediction/1 document of r (what `erg predict model --json` prints;
 * docs/predict.md): {"erg": "model-prediction/1", "config", "arch", "family", "params",
 * "active_params" (erg_arch_params), "target" (its folder), "target_level", "phases": [{"phase",
 * "batch", "prompt", "kv", "time_s", "energy_j", "time_sd_s", "energy_sd_j", "level",
 * "blocks_time_s", "blocks_energy_j", "time_factor", "energy_factor", "grade" (null without
 * energy), "blocks": [{"name", "block", "count", "level", "time_s_each", "energy_j_each",
 * "time_s", "energy_j"}], decode only: "serving": {"itl_s", "energy_per_token_j"} or null}],
 * "request" (only with r->request): {"batch", "prompt", "output", "decode_steps", "time_s",
 * "time_sd_s", "energy_j", "energy_sd_j", "prefill_time_s", "decode_time_s",
 * "prefill_energy_j", "decode_energy_j", "time_per_output_token_s" (null without a step),
 * "energy_per_output_token_j", "grade"}, "warnings": [...], "schedule" (only with r->schedule)}.
 * Seconds, joules; a figure that is not finite (no energy) is null. On one line, reals with 9
 * significant digits (HYMELL Sections 3.4-3.6). Errors: ERG_EINVAL (NULL arguments), ERG_ENOMEM,
 * ERG_EIO (nothing half-written).
 */
ERG_API ERG_NODISCARD int
erg_model_prediction_write_json(const char *path, const erg_model_report *r, erg_diag *diag);

/** The first attention block and the first FFN or MoE block of m, one instance each (what a
 *  design-space sweep reports beside the total, HYMELL Section 4). Returns a bit set: 1 when m
 *  has an attention block, 2 when it has an FFN or MoE block; an absent one is zeroed (time 0,
 *  energy 0). Either out pointer may be NULL. Never fails (NULL m: 0). */
ERG_API int erg_model_prediction_first_blocks(const erg_model_prediction *m,
                                              erg_estimate *attention, erg_estimate *ffn);

/** Most swept values of a sweep (erg_predict_sweep) and most points (their product). */
#define ERG_SWEEP_MAX_KEYS 16
#define ERG_SWEEP_MAX_POINTS 10000000

/**
 * Whether a phase's tokens fit the sizes erg computes with: batch × prompt (the prefill's
 * tokens, phases bit 0), batch × kv (the decode's cached tokens, bit 1) and, with output > 0,
 * batch × (prompt + output) (a whole request, erg_predict_request) at most 2^40. ERG_OK, or
 * ERG_EINVAL with why (size bytes) naming the sizes as `erg predict` spells them ("--batch 2 x
 * --kv 1099511627776 is more than 2^40 cached tokens"); batch, prompt or kv below 1, or output
 * below 0, are ERG_EINVAL too. Beyond 2^40 the work overflows (as a --prompt alone may not pass
 * 2^40).
 */
ERG_API ERG_NODISCARD int erg_phase_tokens_check(int phases, int64_t batch, int64_t prompt,
                                                 int64_t kv, int64_t output, char *why,
                                                 size_t size);

/** One swept value: key from lo to hi by step (positive integers; one value: lo = hi). key is an
 *  erg_arch_set key (d_model, n_heads, ..., and heads: n_heads = n_kv_heads, head_dim = d_model
 *  / heads) or batch, prompt, kv. */
typedef struct erg_sweep_range {
    char key[32];
    int64_t lo, hi, step;
} erg_sweep_range;

/** A predicted point and phase of a sweep: values holds the swept values in the ranges' order.
 *  Return ERG_OK to go on; any other status stops the sweep, which returns it. */
typedef int (*erg_sweep_row_fn)(void *ctx, const int64_t *values, const erg_model_prediction *m);
/** A point the sweep could not predict (reason: erg_arch_set's, erg_arch_check's,
 *  erg_phase_tokens_check's or erg_predict_model's detail). Return as erg_sweep_row_fn. */
typedef int (*erg_sweep_skip_fn)(void *ctx, const int64_t *values, const char *reason);

/**
 * A design-space sweep (HYMELL Section 4; `erg predict sweep`): every combination of the n
 * ranges r (the last varying fastest, as an odometer), each the architecture base with the
 * swept keys set and spec's batch, prompt and kv replaced by swept ones (a swept prompt also
 * sets kv unless kv_set), then for each phase of phases (bit 0 prefill: spec's batch × prompt;
 * bit 1 decode: against kv; logits_all as spec's) erg_predict_model on p, handed to row. A point
 * whose keys the architecture cannot have (heads not dividing d_model, ...), whose tokens pass
 * 2^40 (erg_phase_tokens_check) or whose prediction fails goes to skip (may be NULL) with the
 * reason, after the rows of its phases that were predicted. *rows (may be NULL): the rows
 * handed to row. Errors: ERG_EINVAL (NULL, n outside 1-16, no phase, a range not 0 < lo <= hi
 * with step > 0, more than 10^7 points), or what a callback returned.
 */
ERG_API ERG_NODISCARD int erg_predict_sweep(const erg_predictor *p, const erg_arch *base,
                                            const erg_phase_spec *spec, int phases, int kv_set,
                                            const erg_sweep_range *r, size_t n,
                                            erg_sweep_row_fn row, erg_sweep_skip_fn skip, void *ctx,
                                            size_t *rows, erg_diag *diag);

/** A model-sweep/1 document being written (erg_model_sweep_open). */
typedef struct erg_model_sweep_writer erg_model_sweep_writer;

/**
 * Start the model-sweep/1 document of a design-space sweep (what `erg predict sweep --json`
 * prints; HYMELL Section 4) at path ("-": standard output): {"erg": "model-sweep/1", "config",
 * "target", "keys": [...], "rows": [ROW...], "skipped": [SKIP...]} on one line, rows streamed as
 * they come (a sweep may have 10^7 points), the skipped points kept until erg_model_sweep_close.
 * keys: n_keys (1-16) names of the swept values (--set's KEYs). A file appears whole at
 * erg_model_sweep_close or not at all; nothing reaches path (standard output included) before
 * the first row, so a sweep abandoned without rows (erg_model_sweep_abort) writes nothing. Errors:
 * ERG_EINVAL (NULL, n_keys outside 1-16), ERG_ENOMEM, ERG_EIO (the path cannot be written: a
 * folder, no such folder, no permission).
 */
ERG_API ERG_NODISCARD int erg_model_sweep_open(const char *path, const char *config,
                                               const char *target, const char *const *keys,
                                               size_t n_keys, erg_model_sweep_writer **out,
                                               erg_diag *diag);
/** Append the row of one point (values: the n_keys swept values, in keys' order) and phase of
 *  prediction m: {KEY..., "phase", "time_s", "energy_j", "attention_time_s",
 *  "attention_energy_j", "ffn_time_s", "ffn_energy_j"} (erg_model_prediction_first_blocks; null
 *  without such a block or without energy), reals with 9 significant digits. Errors: ERG_EINVAL
 *  (NULL), ERG_ENOMEM, ERG_EIO (a failed write, kept for erg_model_sweep_close). */
ERG_API ERG_NODISCARD int erg_model_sweep_row(erg_model_sweep_writer *w, const int64_t *values,
                                              const erg_model_prediction *m);
/** Record a skipped point: {KEY..., "reason"}. Errors: ERG_EINVAL (NULL), ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_model_sweep_skip(erg_model_sweep_writer *w, const int64_t *values,
                                               const char *reason);
/** End the document (the skipped points, the closing brace, a line break), put the file in
 *  place and free w. Errors: ERG_ENOMEM, ERG_EIO (this or an earlier write failed: the file is
 *  not written). NULL w: ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_model_sweep_close(erg_model_sweep_writer *w, erg_diag *diag);
/** Abandon the document: a file is not written (what was already streamed to standard output,
 *  a device or FIFO stays there); frees w. NULL-safe. */
ERG_API void erg_model_sweep_abort(erg_model_sweep_writer *w);

/* ---------------------------------------------------------------- evaluation against public data
 */

/**
 * The serving sample of ML.ENERGY v3 row r of table t (erg_public_read) on a GPU target: the
 * decode step's terms (erg_serving_step of ops and k for architecture a at batch avg_batch_size,
 * KV length prompt_tokens + avg_output_len / 2, tensor parallelism tp) beside the row's measured
 * ITL (s), energy per output token (J), power (W) and throughput (tokens/s). Returns 0 with *out
 * filled, or 1 with why (why_size bytes) saying why erg cannot model the row: another GPU than
 * k->device names, weights other than bf16, expert or data parallelism, or the step's own error.
 * Never fails otherwise.
 */
ERG_API int erg_serving_sample_of_row(const erg_public_table *t, const erg_public_row *r,
                                      const erg_serving_arch *a, const erg_op_model *ops,
                                      const erg_gpu_kernels *k, double prompt_tokens,
                                      erg_serving_sample *out, char *why, size_t why_size);

/** A target as `erg predict eval` compares it: its folder and the models read from it. */
typedef struct erg_eval_target {
    const char *dir;                  /**< the folder (erg_predictor_open reads it for traces) */
    const erg_op_model *ops;          /**< ops.json: level 1 (required) */
    const erg_gpu_kernels *kernels;   /**< gpu.json's kernel models, or NULL */
    const erg_serving_model *serving; /**< gpu.json's serving model (level 3), or NULL */
} erg_eval_target;

/** One comparison of a measured figure with the target's prediction. */
typedef struct erg_eval_row {
    size_t file;       /**< index of the file among those compared */
    size_t row;        /**< the row in that file (1-based, as erg_public_row.line) */
    const char *level; /**< which model predicted it ("level 1 (GEMM estimator)", ...; static) */
    const char *phase; /**< "prefill", "decode", or NULL where a row has no phase (static) */
    char quantity[40]; /**< "time_s", "itl_s", "energy_per_token_j", "up_proj.time_s", ... */
    double measured, predicted; /**< in the quantity's unit (s, J) */
} erg_eval_row;

/** A row (row >= 1) or a whole file (row 0) that could not be compared, and why. */
typedef struct erg_eval_skip {
    size_t file, row;
    char reason[200];
} erg_eval_skip;

#define ERG_EVAL_MAX_ASSUMPTIONS 8

/** The comparisons of `erg predict eval`: rows and skips in the order made, and the assumptions
 *  made (each once). Zero it before the first erg_eval_file; erg_eval_release frees it. */
typedef struct erg_eval {
    erg_eval_row *rows;
    size_t n_rows, cap_rows;
    erg_eval_skip *skipped;
    size_t n_skipped, cap_skipped;
    char assumptions[ERG_EVAL_MAX_ASSUMPTIONS][240];
    size_t n_assumptions;
} erg_eval;

/**
 * Compare the target's predictions with public measured table t, file number file, appending
 * to e (docs/predict.md, "erg predict eval"): aiconfigurator gemm_perf (time_s, and energy_j
 * where the table has power: the level-1 GEMM estimator), generation_attention, context_attention
 * and moe_perf (time_s and energy_j of the kernel models), Vidur mlp.csv (time_s of the
 * projection GEMMs and RMSNorms, at tensor parallelism 1), ML.ENERGY v3 with arch (decode itl_s
 * and energy_per_token_j of the serving model, erg_serving_sample_of_row, erg_serving_predict),
 * BLIS traces with config (the HF config.json path: per request prefill time_s and decode
 * itl_s of erg_predict_model on the target's folder, one sequence per forward). Rows or files
 * erg cannot model are appended to e->skipped with the reason; the assumptions made to
 * e->assumptions. arch and config may be NULL (those files are then skipped).
 * Errors: ERG_EINVAL (NULL e, t or tg), ERG_ENOMEM (e keeps what was appended).
 */
ERG_API ERG_NODISCARD int erg_eval_file(erg_eval *e, size_t file, const erg_public_table *t,
                                        const erg_eval_target *tg, const erg_serving_arch *arch,
                                        const char *config, erg_diag *diag);
/** Free what e holds and zero it. NULL-safe. */
ERG_API void erg_eval_release(erg_eval *e);

#define ERG_EVAL_MAX_WORST 16

/** One summary line of a file: the comparisons of one level, phase and quantity. */
typedef struct erg_eval_group {
    const erg_eval_row *first; /**< its first comparison: level, phase, quantity */
    size_t n;                  /**< comparisons */
    double mape_pct;           /**< mean |predicted - measured| / measured x 100 */
    double r2;                 /**< 1 - SSE / SST of the measured values; NaN: n < 2 or SST 0 */
    const erg_eval_row *worst[ERG_EVAL_MAX_WORST]; /**< largest relative error first */
    size_t n_worst;
} erg_eval_group;

/**
 * The summary of file number file in e: one group per level, phase and quantity, in the order
 * of their first comparison, each with n, MAPE (%), R² and its worst rows (at most worst,
 * 0-16; ties keep the earlier row first). *out (malloc'd, free it) holds *n groups; NULL and 0
 * when the file has no comparison. Errors: ERG_EINVAL (NULL, worst above 16), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_eval_summary(const erg_eval *e, size_t file, unsigned worst,
                                           erg_eval_group **out, size_t *n);

/**
 * Write the eval/1 document of e (what `erg predict eval --json` prints; docs/predict.md):
 * {"erg": "eval/1", "target": target_dir, "rows": [{"file", "row", "phase" (null: none),
 * "quantity", "measured", "predicted"}...], "summary": [{"file", "level", "phase", "quantity",
 * "n", "mape_pct", "r2" (null: not computable), "worst": [{"row", "measured", "predicted"}]}...]
 * (erg_eval_summary of each file in turn, worst rows each), "skipped": [{"file", "row" (0: the
 * whole file), "reason"}...], "assumptions": [...]}; files[i] names file i (n_files of them).
 * Indented by 1, reals with 9 significant digits, a figure that is not finite null.
 * Errors: ERG_EINVAL (NULL, a file index of e not below n_files, worst above 16), ERG_ENOMEM,
 * ERG_EIO (nothing half-written).
 */
ERG_API ERG_NODISCARD int erg_eval_write_json(const char *path, const erg_eval *e,
                                              const char *target_dir, const char *const *files,
                                              size_t n_files, unsigned worst, erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
