/* SPDX-License-Identifier: MIT */
/**
 * erg/measure.h - measuring work: named windows, repetitions, stable state, baseline subtraction.
 *
 * Windows follow the style users know from Zeus (ZeusMonitor.begin_window / end_window): a window
 * begins and ends by name, windows may nest and overlap, and each end returns per-channel energy,
 * time and grade (an erg_measurement, erg/meter.h). On top of windows:
 * - calibration: the stable state of FECoM (Rajput et al., "FECoM", Section 2.3): per-channel idle
 *   power and the coefficient of variation σ/μ of windowed power at rest;
 * - the stability wait (FECoM 2.3, 3.5): temperatures below thresholds and the CV of the last 20
 *   power samples at most the calibrated CV;
 * - summaries over repeated runs: gross energy, baseline (idle power × time, FECoM 2.4's stable
 *   energy), net energy, each mean ± sd, and the signature/1 of the run (s = calibrated idle power
 *   of the summed channels, d = E − s·T; energy calculus paper Section 4.3).
 *
 * Thread safety: an erg_monitor is not locked; use one per thread (the meter under it may be
 * shared). Summaries and calibrations are plain values.
 */
#ifndef ERG_MEASURE_H
#define ERG_MEASURE_H

#include <stddef.h>

#include "erg/calculus.h"
#include "erg/error.h"
#include "erg/meter.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Most windows open at once on one monitor. */
#define ERG_MONITOR_MAX_WINDOWS 64

/** Named windows over a meter; opaque. */
typedef struct erg_monitor erg_monitor;

/**
 * Open a monitor over m (borrowed: m must outlive the monitor). Returns ERG_OK, ERG_EINVAL,
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_monitor_open(erg_meter *m, erg_monitor **out, erg_diag *diag);

/** Close a monitor; open windows are discarded. NULL-safe. */
ERG_API void erg_monitor_close(erg_monitor *mon);

/**
 * Begin the window called name (1..63 bytes): poll every channel and record a snapshot.
 * Windows may nest and overlap; names must be distinct among open windows. Without the sampler
 * (erg_meter_sampler_start), a window longer than a counter's wrap time at its maximum power
 * (RAPL: about 262 kJ / 1 kW ≈ 4 minutes; 32-bit MSRs much less) is reported ambiguous, and
 * power-only channels are integrated from the two end samples only: start the sampler for long
 * windows or power sources.
 * Returns ERG_OK; ERG_EINVAL (bad name, a window of that name already open, too many windows:
 * diag says which).
 */
ERG_API ERG_NODISCARD int erg_window_begin(erg_monitor *mon, const char *name, erg_diag *diag);

/**
 * End the window called name: poll, and give the measurement since its begin (per-channel energy,
 * grade, state, flags; the total; time). extra_busy_s: busy time the caller knows of outside this
 * process (GPU time, s) for the per-window liveness test; 0 when none.
 * Returns ERG_OK; ERG_EINVAL (no open window of that name).
 */
ERG_API ERG_NODISCARD int erg_window_end(erg_monitor *mon, const char *name, double extra_busy_s,
                                         erg_measurement *out, erg_diag *diag);

/** Drop the window called name without a measurement. ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_window_cancel(erg_monitor *mon, const char *name);

/** Calibration of one channel at rest. */
typedef struct erg_calibration_channel {
    char id[ERG_METER_ID_MAX];
    erg_domain domain;
    char device[ERG_METER_ID_MAX];
    double idle_power_w; /**< mean power at rest, W */
    double cv;           /**< coefficient of variation σ/μ of windowed power at rest */
    size_t samples;      /**< windows behind the figures */
    /** Estimator channels: mean CPU utilisation in [0, 1] during calibration, from the model
     *  u = (P − P_idle) / (P_full − P_idle); NaN for other channels. */
    double utilisation;
    unsigned flags; /**< ERG_CAL_* bits: signs that the machine was not at rest */
} erg_calibration_channel;

/** Signs, found by erg_calibrate, that the machine was not at rest (calibration/1 "flags"). */
enum {
    /** An estimator channel's mean utilisation exceeded ERG_CAL_MAX_UTILISATION. */
    ERG_CAL_BUSY = 1u << 0,
    /** An estimator channel sat at its full-load ceiling (mean u ≥ 0.95, CV below 0.01): its
     *  CV of about 0 is not calm but saturation. */
    ERG_CAL_PINNED_AT_CEILING = 1u << 1,
    /** A channel's CV exceeded ERG_CAL_MAX_CV: power moved more than it does at rest. */
    ERG_CAL_HIGH_CV = 1u << 2
};
#define ERG_CAL_FLAG_COUNT 3
/** Mean estimator utilisation above which a calibration is flagged busy (10 %). */
#define ERG_CAL_MAX_UTILISATION 0.10
/** CV of windowed power above which a calibration is flagged high_cv (0.20). */
#define ERG_CAL_MAX_CV 0.20
/** Longest calibration erg_calibrate accepts, s (a week). */
#define ERG_CAL_MAX_DURATION_S 604800.0

/** Name of ERG_CAL_* bit i: "busy", "pinned_at_ceiling", "high_cv"; NULL otherwise. */
ERG_API const char *erg_calibration_flag_name(unsigned bit_index);

/**
 * A calibration (FECoM's stable state). File: {"erg": "calibration/1", ...}. Sized at run time:
 * channels points to n_channels records owned by the calibration (erg_calibration_new,
 * erg_calibrate and erg_calibration_read_file allocate it; erg_calibration_free releases it), so
 * no channel limit is part of the ABI.
 */
typedef struct erg_calibration {
    double duration_s;   /**< time spent at rest, s */
    double window_s;     /**< length of each power window, s */
    double idle_power_w; /**< idle power of the channels a total sums, W */
    unsigned flags;      /**< union of the channels' ERG_CAL_* flags; 0: nothing suspicious */
    size_t n_channels;
    erg_calibration_channel *channels; /**< n_channels records, owned */
} erg_calibration;

/**
 * A zeroed calibration with room for n_channels channels (n_channels set; every channel's
 * utilisation NaN), for callers that build one by hand. NULL when out of memory. Free with
 * erg_calibration_free.
 */
ERG_API ERG_NODISCARD erg_calibration *erg_calibration_new(size_t n_channels);

/** Free a calibration and its channels. NULL-safe. */
ERG_API void erg_calibration_free(erg_calibration *cal);

/**
 * Say in sentences why cal looks taken on a machine not at rest (one clause per flagged channel,
 * then the remedy), into buf (snprintf semantics). Writes "" and returns 0 when cal->flags is 0.
 * Returns the length that the full text needs.
 */
ERG_API int erg_calibration_describe(const erg_calibration *cal, char *buf, size_t size);

/**
 * Calibrate at rest: for duration_s seconds, take the power of every usable channel over
 * consecutive windows of window_s seconds (sleeping in between), then per channel the mean (idle
 * power) and σ/μ (sample sd, n − 1). Channels with fewer than 2 good windows are left out.
 * A machine not at rest is noticed, not refused: estimator channels get their mean utilisation
 * and ERG_CAL_BUSY above ERG_CAL_MAX_UTILISATION (ERG_CAL_PINNED_AT_CEILING when saturated), any
 * channel ERG_CAL_HIGH_CV above ERG_CAL_MAX_CV; out->flags is their union (a steady load on a
 * hardware counter has a low CV and cannot be told from rest).
 * 2·window_s ≤ duration_s ≤ ERG_CAL_MAX_DURATION_S, window_s ≥ 0.01. *out gets a new calibration
 * (erg_calibration_free). Returns ERG_OK, ERG_EINVAL, ERG_ENOMEM, ERG_ENODEV (no channel gave a
 * figure; *out NULL).
 */
ERG_API ERG_NODISCARD int erg_calibrate(erg_meter *m, double duration_s, double window_s,
                                        erg_calibration **out, erg_diag *diag);

/** Hooks of erg_calibrate_with (all optional). */
typedef struct erg_calibrate_hooks {
    /** Called after each window with the time spent and the duration asked for, s. */
    void (*progress)(void *ud, double done_s, double total_s);
    void *progress_ud;
    /** Polled after each window; nonzero stops the calibration (ERG_EINTR, nothing returned). */
    int (*interrupted)(void *ud);
    void *interrupt_ud;
} erg_calibrate_hooks;

/**
 * erg_calibrate with progress and interruption hooks (hooks may be NULL). Returns what
 * erg_calibrate returns, and ERG_EINTR (*out NULL) when the interrupted hook said stop.
 */
ERG_API ERG_NODISCARD int erg_calibrate_with(erg_meter *m, double duration_s, double window_s,
                                             const erg_calibrate_hooks *hooks,
                                             erg_calibration **out, erg_diag *diag);

/** Idle power of channel id in cal, W; NaN when absent. */
ERG_API double erg_calibration_idle_w(const erg_calibration *cal, const char *id);

/** Write a calibration file ("erg": "calibration/1"), whole or not at all ("-": stdout). */
ERG_API ERG_NODISCARD int erg_calibration_write_file(const char *path, const erg_calibration *cal,
                                                     erg_diag *diag);
/** Read a calibration file into a new calibration *out (erg_calibration_free; NULL on failure).
 *  ERG_OK, ERG_ENOENT, ERG_EPARSE (with file and JSON path), ERG_EVERSION, ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_calibration_read_file(const char *path, erg_calibration **out,
                                                    erg_diag *diag);

/**
 * Default calibration path: $XDG_CACHE_HOME/erg/calibration.json (an absolute value), else
 * $HOME/.cache/erg/calibration.json, into buf of *size bytes (libuv's uv_os_homedir rule, as every
 * erg default-path function): ERG_OK and *size = the path's length; ERG_ERANGE when it does not
 * fit, buf untouched and *size = the bytes needed (NUL included); ERG_ENOENT when neither
 * variable is set; ERG_EINVAL for a NULL argument.
 */
ERG_API ERG_NODISCARD int erg_calibration_default_path(char *buf, size_t *size);

/** Options of the stability wait (FECoM 3.5 thresholds by default). */
typedef struct erg_stability_options {
    double cpu_max_c; /**< CPU temperature threshold, °C (default 55) */
    double gpu_max_c; /**< GPU temperature threshold, °C (default 40) */
    double timeout_s; /**< give up after, s (default 120) */
    double sample_s;  /**< power sample window, s (default: calibration's window_s) */
    size_t n_samples; /**< CV over the last n samples (default 20) */
    /** Optional: called after every sample window with the time waited (s) and what is still
     *  unstable (a sentence; "" once stable). NULL: silent. */
    void (*progress)(void *ud, double waited_s, const char *waiting_for);
    void *progress_ud;
    /** Optional: polled after every sample window; nonzero stops the wait (ERG_EINTR). */
    int (*interrupted)(void *ud);
    void *interrupt_ud;
} erg_stability_options;

/** Fill the defaults above (hooks NULL). */
ERG_API void erg_stability_options_init(erg_stability_options *o);

/** Outcome of the stability wait. */
typedef struct erg_stability_result {
    int stable; /**< 1 stable, 0 gave up at the timeout */
    /** 1 when nothing but estimator channels were compared and no temperature sensor exists:
     *  "stable" then means a steady modelled CPU load, not a thermal or electrical steady state
     *  (no power counter and no sensor says so). */
    int estimator_only;
    double waited_s;
    /** What the wait waited for (the thresholds and the calibrated CVs it compares with). */
    char waiting_for[ERG_METER_REASON_MAX];
    char reason[ERG_METER_REASON_MAX]; /**< what was still unstable when giving up */
} erg_stability_result;

/**
 * Wait until the machine is stable (FECoM Section 2.3): every temperature below its threshold and,
 * for every calibrated channel, the CV of the last n_samples windowed power samples not
 * significantly above the calibrated CV: a one-sided F-test of the variance ratio at 5 %, i.e.
 * CV ≤ CV_cal · sqrt(F_0.95(n − 1, m − 1)) with m the calibration's windows (χ²/(n − 1) when the
 * calibration does not say m). A CV estimated from n samples scatters by about 1/sqrt(2(n − 1))
 * of itself, so comparing it with CV_cal without a tolerance fails about half the waits on a
 * machine exactly as calm as at calibration. A calibrated CV of 0 (a quantized or modelled
 * channel) is floored at the channel's counter resolution over one window. Gives up after timeout_s
 * with stable = 0 and the reason (this is not an error). out->waiting_for says what is compared
 * with what, for people. Returns ERG_OK, ERG_EINVAL, ERG_ENOMEM, ERG_EINTR (the interrupted hook
 * said stop; out->waited_s set).
 */
ERG_API ERG_NODISCARD int erg_wait_stable(erg_meter *m, const erg_calibration *cal,
                                          const erg_stability_options *o, erg_stability_result *out,
                                          erg_diag *diag);

/**
 * Statistics of one figure over runs, as hyperfine gives them: mean, sample standard deviation
 * (n − 1), median, min and max. One run has an unknown variance, not zero: sd is NaN then
 * (erg_summary's floors say what a single run's figure is good to). Every member is NaN when
 * there is no value.
 */
typedef struct erg_mean_sd {
    double mean;
    double sd;
    double median;
    double min;
    double max;
} erg_mean_sd;

/** Statistics of x[0..n) (n may be 0: all NaN). x is not modified. */
ERG_API erg_mean_sd erg_mean_sd_of(const double *x, size_t n);

/** Baseline subtraction modes of erg_summarize. */
typedef enum erg_baseline_mode {
    ERG_BASELINE_NONE = 0,   /**< baseline 0 */
    ERG_BASELINE_CALIBRATED, /**< per-channel idle power from a calibration × time */
    ERG_BASELINE_FIXED_W     /**< a fixed power for the total × time */
} erg_baseline_mode;

/** Per-channel summary over runs. */
typedef struct erg_channel_summary {
    char id[ERG_METER_ID_MAX];
    erg_domain domain;
    char device[ERG_METER_ID_MAX];
    erg_grade grade;
    erg_reading_state state; /**< ok only when every successful run was ok */
    char reason[ERG_METER_REASON_MAX];
    unsigned flags; /**< union over runs */
    erg_mean_sd energy_j, baseline_j, net_energy_j;
    int in_total; /**< 1 when summed into the total */
} erg_channel_summary;

/**
 * Summary of repeated runs (the runs whose work succeeded). Sized at run time: channels points to
 * n_channels records owned by the summary (erg_summarize allocates; erg_summary_free releases).
 * The total sums the channels with in_total (n_total of them; none when n_total is 0).
 */
typedef struct erg_summary {
    size_t runs; /**< runs summarised */
    erg_mean_sd time_s;
    size_t n_channels;
    erg_channel_summary *channels; /**< n_channels records, owned */
    erg_mean_sd total_energy_j, total_baseline_j, total_net_energy_j;
    /** Flags of the total: the union of the summed channels' reading flags, and
     *  ERG_FLAG_BASELINE_EXCEEDS_GROSS when the total's mean baseline exceeds its mean gross
     *  energy (negative net). */
    unsigned total_flags;
    erg_grade total_grade;
    /** s: the static power, W: with ERG_BASELINE_FIXED_W the fixed power; otherwise the
     *  calibrated idle power of the summed channels (0 if none). */
    double static_power_w;
    size_t n_total;
    /** Floors of one run's uncertainty from the meters (0 when unknown; set by
     *  erg_summary_set_floors or erg_protocol_run): the total's energy sd floor, J, and the time
     *  sd floor, s. See erg_summary_set_floors. */
    double energy_floor_j;
    double time_floor_s;
    /** Why there is no total ("" when there is one): a run's measurement had none (its
     *  total_reason, e.g. ERG_FLAG_INCOMPLETE: a channel the total covers gave no figure, which
     *  total_flags then carries), or the runs summed different channels. */
    char total_reason[ERG_METER_REASON_MAX];
} erg_summary;

/**
 * Summarise n ≥ 1 measurements of the same meter into a new summary *out (erg_summary_free).
 * Baseline per run: idle_w × time_s, per channel from cal (ERG_BASELINE_CALIBRATED; channels
 * absent from cal get baseline 0) or for the total from fixed_w (ERG_BASELINE_FIXED_W, which also
 * makes the static power s = fixed_w, calibration or not); net = gross − baseline, not clamped: a
 * mean baseline above the mean gross energy (negative net) sets ERG_FLAG_BASELINE_EXCEEDS_GROSS on
 * the channel or in total_flags, since clamping each run at 0 would bias the mean up and hide the
 * cause (a calibration taken under load or in another state). A channel's state is ok only if it
 * was ok in every run; a total is given only when every run summed the same channels.
 * Returns ERG_OK, ERG_EINVAL, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_summarize(const erg_measurement *runs, size_t n,
                                        erg_baseline_mode mode, const erg_calibration *cal,
                                        double fixed_w, erg_summary **out, erg_diag *diag);

/** Free a summary and its channels. NULL-safe. */
ERG_API void erg_summary_free(erg_summary *s);

/**
 * Set the single-run floors of s from the meter m the runs were taken with: a window's edges
 * each fall somewhere inside a counter update, so one run's energy is uncertain by up to one
 * update period's energy plus one tick at each edge. For every summed channel
 * u = resolution_j + P·min_interval_s (P its mean power over the runs); the two edges are taken
 * as independent and uniform on [0, u], so var = u²/6 per channel, summed over channels:
 * energy_floor_j = √Σ u²/6. time_floor_s = t/√6 with t the longest update period among them (the
 * window the energy belongs to is known to one update). Returns ERG_OK or ERG_EINVAL.
 */
ERG_API ERG_NODISCARD int erg_summary_set_floors(erg_summary *s, const erg_meter *m);

/**
 * The signature/1 of a summary (paper Section 4.3): s = static_power_w, T = mean time,
 * d = max(0, E − s·T) with E the mean gross total (clamped because signature/1 needs d ≥ 0; the
 * summary's total_flags then carry ERG_FLAG_BASELINE_EXCEEDS_GROSS), σ²_T and σ²_E the sample
 * variances over runs, each raised to its floor (energy_floor_j², time_floor_s²): one run has no
 * sample variance, so its variances are the floors, never 0 (a comparison cannot be confident
 * from a single run);
 * σ²_E is raised to s²·σ²_T where sampling noise left it lower (Axiom M1), and *m1_raised is set.
 * grade = total grade, flags = total_flags (erg/flags.h), runs = n. name is copied (may be NULL);
 * device is copied, or when NULL is the device of the summed channels if they share one, else
 * "host". Returns ERG_OK or ERG_EINVAL (no total).
 */
ERG_API ERG_NODISCARD int erg_summary_signature(const erg_summary *s, const char *name,
                                                const char *device, erg_signature *out,
                                                int *m1_raised, erg_diag *diag);

/**
 * Write sig as a signature/1 file (the keys erg_signature_write_file writes, which
 * erg_signature_read_file and `erg compose` read) with the measurement's provenance added:
 * "flags" (always, the union of sig->flags and s->total_flags, names as in erg_flag_name; read back
 * into erg_signature.flags) and "channels" (the ids summed: provenance for people and tools that
 * read the JSON, ignored by the readers). Written whole or not at all; "-" is stdout.
 * Returns ERG_OK, ERG_EINVAL, ERG_EIO (a failed write, a full disk included).
 */
ERG_API ERG_NODISCARD int erg_summary_write_signature(const char *path, const erg_signature *sig,
                                                      const erg_summary *s, erg_diag *diag);

/* ------------------------------------------------------------------------------------------ */
/* The repetition protocol of `erg measure`, for any caller (the CLI runs a command; the Python
 * package runs a callable). */

/** What one repetition of the work reports (erg_run_fn). */
typedef struct erg_run_outcome {
    /** Exit status of the work: 0 succeeded; > 0 failed (the run is reported, not averaged in);
     *  124 when a timeout stopped it; 128 + signal when a signal ended it. */
    int status;
    /** CPU time of the work, user and system, s; NaN when the work cannot tell (then the
     *  protocol takes its children's CPU time, getrusage(RUSAGE_CHILDREN), over the window). */
    double user_cpu_s;
    double system_cpu_s;
    unsigned flags; /**< ERG_RUN_* bits */
} erg_run_outcome;

/** Bits of erg_run_outcome.flags and erg_run_record.flags. */
enum {
    /** The work ran past its timeout and was stopped (status 124). */
    ERG_RUN_TIMED_OUT = 1u << 0,
    /** Processes the work started were still running when it ended (background children that
     *  outlive the command): their energy after the window is not measured, their CPU time not
     *  counted, and they may disturb the next run. */
    ERG_RUN_LEFT_CHILDREN = 1u << 1
};

/**
 * One repetition of the work. ud is the caller's (erg_protocol_options.run_ud). Fill *out and
 * return ERG_OK (the outcome's status says whether the work succeeded); ERG_EINTR to stop the
 * protocol (interrupted); any other negative status when the work cannot run at all (the
 * protocol stops and reports it).
 */
typedef int (*erg_run_fn)(void *ud, erg_run_outcome *out);

/** Phases reported to the progress hook. */
typedef enum erg_protocol_phase {
    ERG_PHASE_STABLE = 0, /**< waiting for the stable state */
    ERG_PHASE_WARMUP,     /**< unmeasured warm-up runs */
    ERG_PHASE_RUN         /**< measured runs */
} erg_protocol_phase;

/** A progress report. */
typedef struct erg_protocol_progress {
    erg_protocol_phase phase;
    size_t done;      /**< runs finished in this phase */
    size_t total;     /**< runs in this phase (0 for the stability wait) */
    double elapsed_s; /**< since the protocol began, s */
    /** Last run's mean time and gross total energy so far (NaN before the first); for the
     *  stability wait, what it still waits for. */
    double last_time_s;
    double last_energy_j;
    const char *detail; /**< a sentence or "" */
} erg_protocol_progress;

/** Options of erg_protocol_run. Initialise with erg_protocol_options_init, then set fields. */
typedef struct erg_protocol_options {
    size_t runs;       /**< measured runs (default 5), 1..100000 */
    size_t warmup;     /**< unmeasured runs first (default 0) */
    double cooldown_s; /**< rest between measured runs, s (default 0) */
    /** Short work: repeat the work inside one window until the window lasts at least this long,
     *  s, then divide energy, time and CPU time by the repetitions (FECoM and HYMELL repeat to
     *  ≥ 10 s). 0 (default): one repetition per window. */
    double min_window_s;
    size_t max_repetitions; /**< cap on repetitions per window (default 1000000) */
    /** Wait for the stable state first (needs calibration); stability holds its options. */
    int stable;
    erg_stability_options stability;
    erg_baseline_mode baseline; /**< default ERG_BASELINE_NONE */
    double baseline_w;          /**< ERG_BASELINE_FIXED_W: the power, W (also the static power) */
    const erg_calibration *calibration; /**< borrowed; NULL when none */
    /** Name of the calibration's file, for messages only (may be NULL). */
    const char *calibration_path;
    /** Before the first run, wait (at most this long, s; default 1) until the measuring process
     *  itself is quiet: its own CPU use over 20 ms below 2 % (threads that libraries start
     *  at load, such as a BLAS server thread spinning on sched_yield, would otherwise be in the
     *  first windows). 0: no wait. */
    double settle_max_s;
    /** Busy time outside this process per window, s, for liveness (erg_window_end). */
    double extra_busy_s;
    /** Root of host paths for /proc/stat (attribution); NULL: $ERG_ROOT, else "/". */
    const char *root;
    /** Power timeline: every timeline_period_s seconds during measured runs, the power of each
     *  channel (erg_protocol_write_timeline). 0 (default): none. ≥ 0.001. */
    double timeline_period_s;
    /** The work's command line, NULL-terminated, copied into the result for measurement/1's
     *  "command" (provenance only; may be NULL). */
    const char *const *command;
    erg_run_fn run; /**< required */
    void *run_ud;
    /** Optional progress hook, called after each run and stability sample. */
    void (*progress)(void *ud, const erg_protocol_progress *p);
    void *progress_ud;
    /** Optional: polled between runs and repetitions; nonzero stops the protocol (ERG_EINTR). */
    int (*interrupted)(void *ud);
    void *interrupt_ud;
} erg_protocol_options;

/** Fill defaults: 5 runs, no warm-up, no cooldown, no repetition, no stability wait (its
 *  options at their defaults), no baseline, no timeline, settle at most 1 s, hooks NULL. */
ERG_API void erg_protocol_options_init(erg_protocol_options *o);

/** What one attempted measured run gave (failed runs included). */
typedef struct erg_run_record {
    int status;         /**< the work's exit status (erg_run_outcome.status) */
    unsigned flags;     /**< ERG_RUN_* */
    size_t repetitions; /**< repetitions of the work in the window */
    double time_s;      /**< per repetition, s */
    double energy_j;    /**< gross total per repetition, J; NaN when no total */
    erg_grade grade;    /**< the total's grade (valid when has_total) */
    int has_total;
    double user_cpu_s; /**< the work's CPU time per repetition, s */
    double system_cpu_s;
    /** CPU time of the measuring process itself over the window (its sampler thread and the
     *  protocol; getrusage(RUSAGE_SELF)), per repetition, s. With a callable run in-process this
     *  includes the work. */
    double erg_cpu_s;
    /** CPU time of the whole machine over the window (busy jiffies of /proc/stat), s; NaN
     *  when /proc/stat cannot be read. */
    double machine_cpu_s;
    int begin_failed; /**< 1 when the window could not begin or end: no figure (not a run) */
} erg_run_record;

/**
 * Per-process attribution (graded estimator, as Scaphandre and Kepler do): the work's share of
 * the machine's CPU time over the successful windows, share = Σ(user + system) / Σ machine busy
 * CPU time (/proc/stat), capped at 1, and attributed_energy_j = share × the total's mean net
 * energy (Scaphandre: host power × the process's share of CPU time; Kepler splits dynamic power
 * by the same ratio). NaN when unknown.
 */
typedef struct erg_attribution {
    double cpu_share;
    double attributed_energy_j;
    erg_grade grade; /**< always ERG_GRADE_ESTIMATOR */
} erg_attribution;

/** The result of erg_protocol_run; owned by the caller (erg_protocol_result_free). */
typedef struct erg_protocol_result {
    /** ERG_OK every run done; ERG_EINTR interrupted (the runs completed are here); another
     *  negative status: the run callback could not run the work (stop_detail says why). */
    int stop_status;
    char stop_detail[ERG_METER_REASON_MAX];
    size_t runs_requested;
    size_t runs_attempted; /**< per_run records */
    size_t runs_ok;        /**< runs with status 0 and a window: those summarised */
    erg_run_record *per_run;
    /** Over the successful runs; NULL when none. Its floors are set from the meter. */
    erg_summary *summary;
    /** The work's and erg's own CPU time per repetition over the successful runs, s. */
    erg_mean_sd user_cpu_s, system_cpu_s, erg_cpu_s;
    erg_attribution attribution;
    /** The settling wait before the first run: how long it took, s, and the measuring process's
     *  own CPU use over its last 20 ms, as a fraction of one CPU. */
    double settle_s;
    double settle_self_cpu;
    int stability_checked; /**< 1 when the stability wait ran */
    erg_stability_result stability;
    erg_baseline_mode baseline;
    double baseline_power_w; /**< the power subtracted from the total, W */
    unsigned run_flags;      /**< union of the runs' ERG_RUN_* flags */
    size_t n_warnings;
    char **warnings;               /**< sentences for people, n_warnings of them */
    char **command;                /**< copy of options.command (NULL-terminated) or NULL */
    struct erg_timeline *timeline; /**< opaque; NULL when no timeline was taken */
} erg_protocol_result;

/** "calibration", "fixed" or "none". */
ERG_API const char *erg_baseline_source_name(erg_baseline_mode mode);

/**
 * Run the protocol on meter m: optionally wait for the stable state, run the warm-up, then the
 * measured runs, each inside one window (repeating the work until min_window_s when set); a run
 * whose window cannot begin or end is recorded with begin_failed and no figure, never stored as a
 * measurement. Summarise the successful runs with the baseline, set the single-run floors, the
 * CPU-time statistics and the attribution, and collect warnings. The sampler must be running for
 * long windows or power channels (erg_meter_sampler_start); the protocol does not start it.
 * Stops early on the interrupted hook or an ERG_EINTR from the run callback (stop_status
 * ERG_EINTR, the completed runs summarised), or when the run callback cannot run the work.
 * *out gets the result whenever the return is ERG_OK, even when stopped early.
 * Returns ERG_OK; ERG_EINVAL (bad options: diag says which); ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_protocol_run(erg_meter *m, const erg_protocol_options *o,
                                           erg_protocol_result **out, erg_diag *diag);

/** Free a result. NULL-safe. */
ERG_API void erg_protocol_result_free(erg_protocol_result *r);

/**
 * The signature of a result (erg_summary_signature on its summary, floors included). name NULL:
 * the command's first word, else "work". Returns ERG_OK or ERG_EINVAL (no successful run, no
 * total).
 */
ERG_API ERG_NODISCARD int erg_protocol_signature(const erg_protocol_result *r, const char *name,
                                                 erg_signature *out, int *m1_raised,
                                                 erg_diag *diag);

/**
 * Write r as a measurement/1 JSON document to path ("-": stdout), whole or not at all: command,
 * runs, per-run records, statistics per channel and of the total, CPU times, baseline,
 * attribution, scope ("machine"), stability, warnings. sig, when not NULL, is the signature
 * written beside it (its m1_raised note). Returns ERG_OK, ERG_EINVAL, ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_protocol_write_json(const char *path, const erg_protocol_result *r,
                                                  int m1_raised, erg_diag *diag);

/**
 * Write r as CSV ("-": stdout), whole or not at all: a header
 * id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,energy_j_sd,
 * baseline_j_mean,baseline_j_sd,net_energy_j_mean,net_energy_j_sd,in_total,energy_j_median,
 * energy_j_min,energy_j_max, a row per channel, and a last row "total". flags are ';'-separated
 * names; empty cells for unknown figures. Returns ERG_OK, ERG_EINVAL, ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_protocol_write_csv(const char *path, const erg_protocol_result *r,
                                                 erg_diag *diag);

/**
 * Write the power timeline of r (taken when timeline_period_s > 0) as CSV, whole or not at all:
 * header "t_s,run,<channel id>_w,...", one row per timeline sample (t_s since the first measured
 * run began, s; run 1-based; each usable channel's mean power over the sample, W, empty when the
 * channel gave no figure). Returns ERG_OK, ERG_EINVAL (no timeline), ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_protocol_write_timeline(const char *path,
                                                      const erg_protocol_result *r, erg_diag *diag);

/**
 * The power timeline of r (taken when timeline_period_s > 0), borrowed from r (valid until
 * erg_protocol_result_free): *n_rows samples of *n_cols channels; t_s[i] is the sample's time
 * since the first measured run began (s), run[i] its run (1-based), power_w[i·n_cols + j] channel
 * j's mean power over the sample (W; NaN when it gave no figure). Channel ids:
 * erg_protocol_timeline_channel. Returns ERG_OK or ERG_EINVAL (no timeline, NULL argument).
 */
ERG_API ERG_NODISCARD int erg_protocol_timeline(const erg_protocol_result *r, size_t *n_rows,
                                                size_t *n_cols, const double **t_s,
                                                const size_t **run, const double **power_w);

/** Id of timeline channel j ("rapl-sysfs:package-0"), borrowed from r; NULL when out of range. */
ERG_API const char *erg_protocol_timeline_channel(const erg_protocol_result *r, size_t j);

/**
 * Draw the power timeline of r (taken when timeline_period_s > 0) as a plot and write it to path
 * whole or not at all: one line per channel that gave figures, time since the first measured run
 * (s) on x, mean power (W) on y. The format is named by path's extension: .svg, .png or .pdf.
 * cairo (libcairo.so.2) is loaded on the first plot, not with liberg. Returns ERG_OK, ERG_EINVAL
 * (no timeline sample, an unknown extension, NULL argument), ERG_ENOLIB (cairo cannot be loaded;
 * diag names the library and its Debian package), ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_protocol_plot_timeline(const erg_protocol_result *r, const char *path,
                                                     erg_diag *diag);

/**
 * Read a measurement/1 file and give the signature it describes: s = the baseline power, T and
 * E from the total's mean and sd with the single-run floors it records, grade and runs; the name
 * from the file's command. So `erg compare` takes measurement files beside signatures.
 * Returns ERG_OK, ERG_ENOENT, ERG_EPARSE (file and JSON path), ERG_EVERSION, ERG_EINVAL (no
 * total in the file).
 */
ERG_API ERG_NODISCARD int erg_measurement_read_signature(const char *path, erg_signature *out,
                                                         erg_diag *diag);

/* ------------------------------------------------------------------------------------------ */
/* Work measured directly, as an operand: a signature/1 or measurement/1 file where the calculus
 * expects a schedule (`erg compare`) or a measured energy (`erg refine --measured`). */

/**
 * Read the signature a file of work measured directly describes: a signature/1 (as
 * erg_signature_read_file; `erg characterize`) or a measurement/1 (as
 * erg_measurement_read_signature; `erg measure --json` or `--export-json`), told apart by its
 * "erg" tag. Errors: ERG_ENOENT, ERG_EIO, ERG_EPARSE (a syntax error at file:line:col; a file
 * that is neither: "expected a signature/1 ... or a measurement/1 ..."), and those of the two
 * readers (ERG_EVERSION, ERG_EINVAL, ERG_EPARSE naming the member).
 */
ERG_API ERG_NODISCARD int erg_measured_read_signature(const char *path, erg_signature *out,
                                                      erg_diag *diag);

/** A whole piece of work measured directly, as the mean of its runs (erg_measured_read). */
typedef struct erg_measured {
    double energy_j;    /**< mean total energy E = s·T + d (J) */
    double energy_sd_j; /**< sd of that mean, sqrt(σ²_E / runs) (J) */
    unsigned long runs; /**< runs it is the mean of (a file that says 0: 1) */
} erg_measured;

/**
 * Read the measured energy of a signature/1 or measurement/1 file (erg_measured_read_signature)
 * as the mean of its runs and the sd of that mean, sd_E / sqrt(runs): the measured side of the
 * deviation test (energy-calculus paper Eq. 23) that `erg refine --measured` runs. Errors: those
 * of erg_measured_read_signature; ERG_EINVAL (NULL argument).
 */
ERG_API ERG_NODISCARD int erg_measured_read(const char *path, erg_measured *out, erg_diag *diag);

/**
 * Compose the file at path into *out (what `erg compare` does with each side): a schedule/1
 * (erg_schedule_read_file, erg_schedule_compose), or a signature/1 or measurement/1 file
 * (erg_measured_read_signature) as a schedule of that one element (erg_schedule_of_signature).
 * opts may be NULL (defaults). On an error without a place of its own, diag->where is path.
 * *out is freed with erg_report_free. Errors: those of the readers and of erg_schedule_compose.
 */
ERG_API ERG_NODISCARD int erg_compose_file(const char *path, const erg_compose_options *opts,
                                           erg_report *out, erg_diag *diag);

/* ------------------------------------------------------------------------------------------ */
/* A command as the work (what `erg measure -- CMD` runs). */

/**
 * A command to run as the work: pass erg_command_run as erg_protocol_options.run and a pointer
 * to this as run_ud. Each run spawns argv (PATH searched) in a process group of its own and
 * waits for it; its CPU time comes from wait4. Initialise with erg_command_init.
 */
typedef struct erg_command {
    const char *const *argv; /**< NULL-terminated; borrowed */
    int stdout_to_stderr;    /**< 1: the command's stdout goes to stderr */
    double timeout_s;        /**< per run, s; 0: none. At the timeout the group gets SIGTERM,
                              *   then SIGKILL after 1 s; status 124, ERG_RUN_TIMED_OUT */
    /** Optional: polled while waiting (at least every 0.25 s and on every signal); nonzero
     *  kills the command's whole process group (SIGTERM, then SIGKILL after 1 s), reaps it and
     *  makes erg_command_run return ERG_EINTR. */
    int (*interrupted)(void *ud);
    void *interrupt_ud;
    char error[ERG_METER_REASON_MAX]; /**< why the command could not run */
} erg_command;

/** Zero c and set argv. */
ERG_API void erg_command_init(erg_command *c, const char *const *argv);

/**
 * Run the command once (an erg_run_fn; ud is an erg_command *): status, CPU times of the command
 * and the children it waited for, ERG_RUN_LEFT_CHILDREN when processes of its group outlive it.
 * Returns ERG_OK; ERG_EINTR (interrupted: the group was killed); ERG_ENOENT/ERG_EACCES/ERG_EIO
 * when the command cannot start (c->error says why).
 */
ERG_API ERG_NODISCARD int erg_command_run(void *ud, erg_run_outcome *out);

#ifdef __cplusplus
}
#endif
#endif
