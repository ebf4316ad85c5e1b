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
ERG_API int erg_monitor_open(erg_meter *m, erg_monitor **out, erg_diag *diag);

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
ERG_API int erg_window_begin(erg_monitor *mon, const char *name, erg_diag *diag);

/**
 * End the window called name: poll, and give the measurement since its begin (per-channel energy,
 * grade, state, flags; the total; time). extra_busy_s: busy time the caller knows of outside this
 * process (GPU time, s) for the per-window liveness test; 0 when none.
 * Returns ERG_OK; ERG_EINVAL (no open window of that name).
 */
ERG_API int erg_window_end(erg_monitor *mon, const char *name, double extra_busy_s,
                           erg_measurement *out, erg_diag *diag);

/** Drop the window called name without a measurement. ERG_OK or ERG_EINVAL. */
ERG_API int erg_window_cancel(erg_monitor *mon, const char *name);

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

/** Name of ERG_CAL_* bit i: "busy", "pinned_at_ceiling", "high_cv"; NULL otherwise. */
ERG_API const char *erg_calibration_flag_name(unsigned bit_index);

/** A calibration (FECoM's stable state). File: {"erg": "calibration/1", ...}. */
typedef struct erg_calibration {
    double duration_s;   /**< time spent at rest, s */
    double window_s;     /**< length of each power window, s */
    double idle_power_w; /**< idle power of the channels a total sums, W */
    unsigned flags;      /**< union of the channels' ERG_CAL_* flags; 0: nothing suspicious */
    size_t n_channels;
    erg_calibration_channel channels[ERG_METER_MAX_CHANNELS];
} erg_calibration;

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
 * duration_s ≥ 2·window_s, window_s ≥ 0.01. Returns ERG_OK, ERG_EINVAL, ERG_ENODEV (no channel
 * gave a figure).
 */
ERG_API int erg_calibrate(erg_meter *m, double duration_s, double window_s, erg_calibration *out,
                          erg_diag *diag);

/** Idle power of channel id in cal, W; NaN when absent. */
ERG_API double erg_calibration_idle_w(const erg_calibration *cal, const char *id);

/** Write a calibration file ("erg": "calibration/1"), whole or not at all. */
ERG_API int erg_calibration_write_file(const char *path, const erg_calibration *cal,
                                       erg_diag *diag);
/** Read a calibration file. ERG_ENOENT, ERG_EPARSE (with file and JSON path), ERG_EVERSION. */
ERG_API int erg_calibration_read_file(const char *path, erg_calibration *cal, erg_diag *diag);

/** Default calibration path: $XDG_CACHE_HOME/erg/calibration.json, else
 *  $HOME/.cache/erg/calibration.json. snprintf semantics; returns -1 when neither is set. */
ERG_API int erg_calibration_default_path(char *buf, size_t size);

/** Options of the stability wait (FECoM 3.5 thresholds by default). */
typedef struct erg_stability_options {
    double cpu_max_c; /**< CPU temperature threshold, °C (default 55) */
    double gpu_max_c; /**< GPU temperature threshold, °C (default 40) */
    double timeout_s; /**< give up after, s (default 120) */
    double sample_s;  /**< power sample window, s (default: calibration's window_s) */
    size_t n_samples; /**< CV over the last n samples (default 20) */
} erg_stability_options;

/** Fill the defaults above. */
ERG_API void erg_stability_options_init(erg_stability_options *o);

/** Outcome of the stability wait. */
typedef struct erg_stability_result {
    int stable; /**< 1 stable, 0 gave up at the timeout */
    double waited_s;
    char reason[ERG_METER_REASON_MAX]; /**< what was still unstable when giving up */
} erg_stability_result;

/**
 * Wait until the machine is stable (FECoM Section 2.3): every temperature below its threshold and,
 * for every calibrated channel, the CV of the last n_samples windowed power samples ≤ the
 * calibrated CV. Gives up after timeout_s with stable = 0 and the reason (this is not an error).
 * Returns ERG_OK or ERG_EINVAL.
 */
ERG_API int erg_wait_stable(erg_meter *m, const erg_calibration *cal,
                            const erg_stability_options *o, erg_stability_result *out,
                            erg_diag *diag);

/** Mean and sample standard deviation (n − 1; 0 for one run); NaN when no value. */
typedef struct erg_mean_sd {
    double mean;
    double sd;
} erg_mean_sd;

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
    int in_total;
} erg_channel_summary;

/** Summary of repeated runs (the runs whose command succeeded). */
typedef struct erg_summary {
    size_t runs; /**< runs summarised */
    erg_mean_sd time_s;
    size_t n_channels;
    erg_channel_summary channels[ERG_METER_MAX_CHANNELS];
    erg_mean_sd total_energy_j, total_baseline_j, total_net_energy_j;
    /** Flags of the total: the union of the summed channels' reading flags, and
     *  ERG_FLAG_BASELINE_EXCEEDS_GROSS when the total's mean baseline exceeds its mean gross
     *  energy (negative net). */
    unsigned total_flags;
    erg_grade total_grade;
    double static_power_w; /**< s: idle power of the summed channels, W (0 if none) */
    char total_ids[ERG_METER_MAX_CHANNELS][ERG_METER_ID_MAX];
    size_t n_total;
} erg_summary;

/**
 * Summarise n ≥ 1 measurements of the same meter. Baseline per run: idle_w × time_s, per
 * channel from cal (ERG_BASELINE_CALIBRATED; channels absent from cal get baseline 0) or for the
 * total from fixed_w (ERG_BASELINE_FIXED_W); net = gross − baseline, not clamped: a mean baseline
 * above the mean gross energy (negative net) sets ERG_FLAG_BASELINE_EXCEEDS_GROSS on the channel
 * or in total_flags, since clamping each run at 0 would bias the mean up and hide the cause (a
 * calibration taken under load or in another state). A channel's state is ok
 * only if it was ok in every run; a total is given only when every run summed the same channels.
 * Returns ERG_OK or ERG_EINVAL.
 */
ERG_API int erg_summarize(const erg_measurement *runs, size_t n, erg_baseline_mode mode,
                          const erg_calibration *cal, double fixed_w, erg_summary *out,
                          erg_diag *diag);

/**
 * The signature/1 of a summary (paper Section 4.3): s = static_power_w, T = mean time,
 * d = max(0, E − s·T) with E the mean gross total (clamped because signature/1 needs d ≥ 0; the
 * summary's total_flags then carry ERG_FLAG_BASELINE_EXCEEDS_GROSS), σ²_T and σ²_E the sample
 * variances over runs;
 * σ²_E is raised to s²·σ²_T where sampling noise left it lower (Axiom M1), and *m1_raised is set.
 * grade = total grade, runs = n. name is copied (may be NULL); device is copied, or when NULL
 * is the device of the summed channels if they share one, else "host".
 * Returns ERG_OK or ERG_EINVAL (no total).
 */
ERG_API int erg_summary_signature(const erg_summary *s, const char *name, const char *device,
                                  erg_signature *out, int *m1_raised, erg_diag *diag);

/**
 * Write sig as a signature/1 file (the keys erg_signature_write_file writes, which
 * erg_signature_read_file and `erg compose` read) with the measurement's provenance added:
 * "flags" (s->total_flags, names as in erg_flag_name) and "channels" (the ids summed). These two
 * keys are provenance for people and tools that read the JSON: erg_signature_read_file and
 * `erg compose` ignore them (signature/1 has no field for them). Written whole or not at all;
 * "-" is stdout.
 * Returns ERG_OK, ERG_EINVAL, ERG_EIO.
 */
ERG_API int erg_summary_write_signature(const char *path, const erg_signature *sig,
                                        const erg_summary *s, erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
