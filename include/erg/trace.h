/* SPDX-License-Identifier: MIT */
/**
 * erg/trace.h - profiler traces (Chrome trace-event JSON as PyTorch's profiler / Kineto writes it)
 * turned into erg schedules and energy reports.
 *
 * A trace is read as a stream (yajl over zlib's gzread, so plain and gzip files are both
 * accepted): memory grows with the GPU activities kept, not with the size of the file. Kept are
 * complete events (ph "X") and begin/end pairs (ph "B"/"E", matched per pid/tid) of the GPU
 * categories kernel, gpu_memcpy and gpu_memset (Kineto's older spellings Kernel, Memcpy, Memset
 * too); a kernel is a collective when args["Collective name"] is present or its name starts with
 * "nccl"/"rccl". Device and stream come from args.device/args.stream, else from pid/tid.
 * Timestamps are microseconds with any fraction and are kept as exact integer nanoseconds.
 * deviceProperties (id → device name) and distributedInfo (rank) are used when present.
 *
 * Several files (one per rank) make one trace: each rank's GPUs are devices of their own
 * ("rank<R>/gpu<D>"), composed cross-device over the job's makespan.
 *
 * Energy of each activity comes from a rules file (rules/1, docs/trace.md): per-device static and
 * idle power by device-name glob, and ordered rules that give a dynamic power (W ± sd) applied to
 * the traced duration, or a signature whose dynamic energy is scaled to the traced duration.
 *
 * Thread safety: the objects here are not locked; a fully read erg_trace and erg_rules may be read
 * by several threads at once (erg_trace_report_make and erg_trace_schedule do not modify them).
 * erg_trace_read_files uses threads of its own; the library keeps no global state.
 */
#ifndef ERG_TRACE_H
#define ERG_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "erg/calculus.h"
#include "erg/error.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Activity categories. ERG_TRACE_CAT_COLLECTIVE is a kernel recognised as a collective. */
typedef enum erg_trace_category {
    ERG_TRACE_CAT_KERNEL = 0,
    ERG_TRACE_CAT_MEMCPY = 1,
    ERG_TRACE_CAT_MEMSET = 2,
    ERG_TRACE_CAT_COLLECTIVE = 3,
    ERG_TRACE_CAT_COUNT = 4
} erg_trace_category;

/** "kernel", "gpu_memcpy", "gpu_memset", "collective" (the names rules match); "unknown" for a
 * value out of range. A static string; never fails. */
ERG_API const char *erg_trace_category_name(erg_trace_category cat);

/** How the files of a multi-rank trace are placed in time. */
typedef enum erg_trace_align {
    ERG_TRACE_ALIGN_NONE = 0,        /**< timestamps as written (one clock for every rank) */
    ERG_TRACE_ALIGN_FIRST_KERNEL = 1 /**< shift each file so its first kernel starts at 0 */
} erg_trace_align;

/** Parse "none" / "first-kernel" into *out. Errors: ERG_EINVAL (other text, NULL). */
ERG_API ERG_NODISCARD int erg_trace_align_parse(const char *text, erg_trace_align *out);

/** Opaque set of imported GPU activities from one or more trace files. */
typedef struct erg_trace erg_trace;

/** A new, empty trace. Returns NULL when out of memory. */
ERG_API ERG_NODISCARD erg_trace *erg_trace_new(void);

/** Free a trace. NULL-safe; never fails. */
ERG_API void erg_trace_free(erg_trace *trace);

/**
 * With on != 0, the files read into trace from now on take ranks in the order they are read
 * (0, 1, ... after the ranks already taken), and their distributedInfo.rank is ignored: this
 * combines traces of separate jobs that each claim rank 0 (e.g. single-GPU runs). With on == 0
 * (the default) distributedInfo.rank decides and two files claiming one rank are refused.
 * Device ids are "rank<R>/gpu<N>" either way. NULL-safe; never fails.
 */
ERG_API void erg_trace_set_rank_from_order(erg_trace *trace, int on);

/**
 * Stream one trace file (one rank) into trace: plain or gzip JSON, "-" for stdin. Either the JSON
 * Object Format ({"traceEvents": [...], ...}) or the JSON Array Format ([...], whose closing
 * bracket may be missing, as the format allows). The rank is distributedInfo.rank, else the first
 * rank not taken from the file's position among those read (0, 1, ...) on.
 * On error nothing of this file is kept (the trace is as before the call).
 * Errors: ERG_ENOENT, ERG_EIO (read error), ERG_EPARSE (empty file, truncated gzip, malformed
 * JSON: diag->where is "file:line:col" and detail gives the byte offset and the text around it),
 * ERG_EINVAL (two files claim one rank), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_trace_read_file(erg_trace *trace, const char *path, erg_diag *diag);

/**
 * Read n trace files (one per rank), parsing up to jobs of them at once in threads of their own
 * (jobs 0: one per online CPU), then adding them in the order given, so that the result is that of
 * erg_trace_read_file on each in turn. On error nothing of these files is kept and diag holds the
 * first error in the order given. Errors: as erg_trace_read_file.
 */
ERG_API ERG_NODISCARD int erg_trace_read_files(erg_trace *trace, const char *const *paths, size_t n,
                                               unsigned jobs, erg_diag *diag);

/** Same as erg_trace_read_file from a memory buffer (plain JSON, len bytes); name is used in
 *  messages. Errors: as erg_trace_read_file, and ERG_EINVAL (buf NULL with len > 0). */
ERG_API ERG_NODISCARD int erg_trace_read_buffer(erg_trace *trace, const void *buf, size_t len,
                                                const char *name, erg_diag *diag);

/** Counts of what reading met; every count is over all files read. */
typedef struct erg_trace_stats {
    size_t files;             /**< files read */
    uint64_t json_bytes;      /**< uncompressed JSON bytes parsed */
    size_t events;            /**< trace events seen (every ph) */
    size_t activities;        /**< GPU activities kept */
    size_t host_events;       /**< known host/CPU-side or metadata events, ignored */
    size_t unknown_events;    /**< events of unknown categories, ignored (see erg_trace_unknown) */
    size_t missing_duration;  /**< GPU "X" events without dur, or without ts: dropped */
    size_t negative_duration; /**< GPU events with dur < 0 (or E before B): dropped */
    size_t unmatched_end;     /**< "E" events with no open "B" on their pid/tid */
    size_t unclosed_begin;    /**< "B" events never closed */
    size_t out_of_order;      /**< GPU activities that start before the previous one on their stream
                                   in file order (they are sorted; informational) */
    size_t stream_overlaps;   /**< GPU activities that start before the previous one on the same
                                   stream ended: a data problem, kept as same-device parallel */
    size_t markers; /**< ROCm barrier packets ("Marker" in category "kernel", Kineto before July
                         2023): waits, not work; ignored */
} erg_trace_stats;

/** Fill *out with the trace's counts. Never fails (does nothing when an argument is NULL). */
ERG_API void erg_trace_get_stats(const erg_trace *trace, erg_trace_stats *out);

/**
 * Where the first GPU event that was dropped for its ts or dur (counted in
 * erg_trace_stats.missing_duration) is: *where "file:line:col" of its opening brace ("file",
 * "event N" when the file cannot be read again, as stdin), *why its category, name and what was
 * wrong (`kernel "k": dur is not a number`, `no ts`, `ts is out of range`, ...). Either pointer
 * may be NULL; the texts stay valid while trace lives. Errors: ERG_EINVAL (trace NULL), ERG_ENOENT
 * (no event was dropped).
 */
ERG_API ERG_NODISCARD int erg_trace_first_dropped(const erg_trace *trace, const char **where,
                                                  const char **why);

/**
 * The i-th unknown category met (in order of first appearance) and its event count; name or count
 * may be NULL. *name stays valid while trace lives. Errors: ERG_ERANGE (i past the end).
 */
ERG_API ERG_NODISCARD int erg_trace_unknown(const erg_trace *trace, size_t i, const char **name,
                                            size_t *count);

/* ---------------------------------------------------------------------------------------------- */

/** Opaque rules set (format rules/1). */
typedef struct erg_rules erg_rules;

/**
 * Read a rules/1 file (docs/trace.md): {"erg": "rules/1", "devices": [{"match", "static_power_w",
 * "idle_power_w", "grade"}], "default_device": {...}, "rules": [{"category", "name" | "regex",
 * "device", "dynamic_power_w", "dynamic_power_sd_w", "grade"} | {"category", "name",
 * "signature"}]}. Globs are fnmatch(3) patterns; "regex" is a POSIX extended regular expression
 * searched in the name. A "signature" is a signature/1 file path (relative to the rules file's
 * folder) or a bare name: "<name>.json" in that folder when it exists, else ERG_ENOENT (the trace
 * module opens no store: erg_rules_read_file_resolving takes a resolver; `erg trace` passes the
 * signature store's, erg_store_signature_resolver). Errors: ERG_ENOENT/ERG_EIO, ERG_EPARSE
 * (syntax with file:line:col, or the JSON path of a bad member), ERG_EVERSION, ERG_EINVAL (a bad
 * regex, a negative power), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_rules_read_file(const char *path, erg_rules **out, erg_diag *diag);

/** Same from a buffer of len bytes; name is used in messages and signature paths resolve against
 *  base_dir ("." when NULL). Errors: as erg_rules_read_file, and ERG_EINVAL (buf or out NULL). */
ERG_API ERG_NODISCARD int erg_rules_read_buffer(const char *buf, size_t len, const char *name,
                                                const char *base_dir, erg_rules **out,
                                                erg_diag *diag);

/**
 * Resolves a bare signature name a rule gives when no "<name>.json" lies beside the rules: fills
 * *out and returns ERG_OK, ERG_ENOENT when it knows no such name (diag may say where it looked), or
 * another status (diag says why). ud is the caller's. (erg_store_signature_resolver is one.)
 */
typedef int (*erg_signature_resolver)(void *ud, const char *name, erg_signature *out,
                                      erg_diag *diag);

/** erg_rules_read_file with a resolver for bare signature names (resolve NULL: none). Errors: as
 *  erg_rules_read_file, and the resolver's. */
ERG_API ERG_NODISCARD int erg_rules_read_file_resolving(const char *path,
                                                        erg_signature_resolver resolve, void *ud,
                                                        erg_rules **out, erg_diag *diag);

/** erg_rules_read_buffer with a resolver for bare signature names (resolve NULL: none). Errors: as
 *  erg_rules_read_buffer, and the resolver's. */
ERG_API ERG_NODISCARD int erg_rules_read_buffer_resolving(const char *buf, size_t len,
                                                          const char *name, const char *base_dir,
                                                          erg_signature_resolver resolve, void *ud,
                                                          erg_rules **out, erg_diag *diag);

/**
 * erg's default rules (rules/default.json, compiled in): NVIDIA A100 and H100 static powers and
 * dynamic powers by kernel class, every number's source beside it; grade estimator.
 * Errors: ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_rules_default(erg_rules **out, erg_diag *diag);

/** Free rules. NULL-safe; never fails. */
ERG_API void erg_rules_free(erg_rules *rules);

/* ---------------------------------------------------------------------------------------------- */

/** Options for erg_trace_schedule and erg_trace_report; initialise with erg_trace_options_init. */
typedef struct erg_trace_options {
    erg_trace_align align; /**< default ERG_TRACE_ALIGN_NONE */
    size_t top_n;          /**< entries in the report's top list; default 10 */
    /** With ERG_TRACE_ALIGN_NONE and two or more files: the largest spread, s, allowed between the
     *  files' first GPU activities (ERG_TRACE_MAX_START_SPREAD_S by default; INFINITY turns the
     *  check off). A larger spread means the files do not share one clock (e.g. traces of
     *  separate jobs, or profilers that write monotonic time since boot), and composing them on
     *  one timeline would make the makespan, and every device's static energy, absurd. */
    double max_start_spread_s;
} erg_trace_options;

/** Default erg_trace_options.max_start_spread_s: 1 hour, s. Ranks of one job traced on one clock
 *  start within seconds of each other; an hour is far above that and far below the 10⁹ s gaps of
 *  clocks with different epochs (Unix time against time since boot). */
#define ERG_TRACE_MAX_START_SPREAD_S 3600.0

/**
 * Set opts to the defaults: align ERG_TRACE_ALIGN_NONE (one clock for all files), top_n 10 (entries
 * in the report's top list), max_start_spread_s ERG_TRACE_MAX_START_SPREAD_S. Call before setting
 * fields, so that fields added later get their defaults. NULL-safe (does nothing); never fails.
 */
ERG_API void erg_trace_options_init(erg_trace_options *opts);

/**
 * Build the schedule of a trace: one device per (rank, GPU) with its static and idle power from
 * rules, one signature and one DAG node per GPU activity at its measured start (s from the first
 * activity over all files), T its traced duration with σ²_T = 0 and d from its rule; activities
 * no rule matches get d = 0 and are reported by erg_trace_report. Overlapping activities on one
 * device are same-device parallel, gaps are idle elements (erg_schedule_compose's DAG semantics).
 * Source: Energy Calculus (Chowdhury, Chung et al.), Section 3.3: idle elements and energy
 * accounting (every device held at its static power over the whole makespan), 3.3.2 same-device
 * parallel ⊕ (static power drawn once), 3.3.3 cross-device ⊕multi, 3.3.4 composition over a DAG.
 * Errors: ERG_EINVAL (no GPU activity; a device that matches no device entry while the rules have
 * no default_device; with ERG_TRACE_ALIGN_NONE, files whose first GPU activities are more than
 * opts->max_start_spread_s apart: the diag gives the spread and suggests first-kernel alignment),
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_trace_schedule(const erg_trace *trace, const erg_rules *rules,
                                             const erg_trace_options *opts, erg_schedule **out,
                                             erg_diag *diag);

/**
 * Write the schedule/1 file of erg_trace_schedule's schedule to path, streamed: the same document
 * erg_schedule_write_file writes for that schedule (byte for byte), but element by element as
 * they are produced, without building the schedule or a JSON tree, so memory stays near the
 * import's (the activities, plus about 40 bytes of working arrays per activity) instead of growing
 * by an 816-byte signature and a JSON tree per activity. Accounting as erg_trace_schedule (Energy
 * Calculus, arXiv 2607.11087, Section 3.3). Everything the schedule would refuse is checked before
 * the first byte is written; the file is written whole or not at all (a temporary beside it,
 * renamed into place), a symlink is followed, never replaced, a character device or FIFO written
 * into, "-" is stdout. Errors: as erg_trace_schedule; ERG_EIO, ERG_EACCES, ERG_ENOENT for the
 * output; ERG_ENOMEM ("cannot encode the schedule") for a name that is not UTF-8.
 */
ERG_API ERG_NODISCARD int erg_trace_schedule_write_file(const char *path, const erg_trace *trace,
                                                        const erg_rules *rules,
                                                        const erg_trace_options *opts,
                                                        erg_diag *diag);

/**
 * Number of the trace's GPU activities that no rule matches (they get d = 0 in the schedule).
 * Errors: as erg_trace_schedule.
 */
ERG_API ERG_NODISCARD int erg_trace_unmatched(const erg_trace *trace, const erg_rules *rules,
                                              size_t *count, erg_diag *diag);

/** Per-device figures. Times in s, energies in J. */
typedef struct erg_trace_device {
    char id[ERG_SIG_DEVICE_MAX]; /**< "rank<R>/gpu<D>" */
    char name[ERG_SIG_NAME_MAX]; /**< from deviceProperties; "" when absent */
    double static_power_w;       /**< from the rules */
    int default_rules;   /**< 1 when no device entry of the rules matches name (an AMD GPU, an
                              unnamed device under the built-in A100/H100 rules): the rules'
                              default_device figures apply */
    double idle_power_w; /**< its draw over idle gaps (the static power when the rules give none) */
    size_t activities;
    double busy_s;               /**< union of its activity intervals */
    double idle_s;               /**< makespan − busy_s */
    double static_energy_j;      /**< static_power_w × busy_s + idle power × idle_s: the device
                                      is held over the whole makespan (= static_power_w ×
                                      makespan when the rules give no idle_power_w) */
    double idle_static_energy_j; /**< idle power × idle_s: the energy its idle time wastes */
    double dynamic_energy_j;
    double compute_s;       /**< union of its non-collective kernel intervals */
    double communication_s; /**< union of its collective intervals */
    double overlap_s;       /**< measure of (compute ∩ communication) */
} erg_trace_device;

/** Per-category or per-name aggregate. energy_j is the dynamic energy of those activities. */
typedef struct erg_trace_group {
    const char *name; /**< category or activity name; valid while the trace lives */
    int category;     /**< erg_trace_category of the activities; -1 when mixed */
    size_t count;
    double time_s;   /**< sum of durations */
    double energy_j; /**< sum of dynamic energies */
} erg_trace_group;

/**
 * The report of a trace (issue 4). energy_j, energy_sd_j, time_s, static_energy_j,
 * dynamic_energy_j, grade and flags equal those of erg_schedule_compose on erg_trace_schedule's
 * schedule (erg_trace_report_make computes them without building it), so `erg trace import` +
 * `erg compose` gives the same totals. Free with erg_trace_report_free.
 */
typedef struct erg_trace_report {
    double energy_j, energy_sd_j;
    double time_s; /**< makespan: first GPU activity to the last, over all files */
    double static_energy_j, dynamic_energy_j;
    double idle_static_energy_j; /**< sum over devices: static energy burned while idle, J */
    erg_grade grade;
    unsigned flags; /**< measurement flags (erg/flags.h): union over the signatures the rules use */
    size_t unmatched; /**< activities no rule matched */
    size_t n_unmatched_names;
    erg_trace_group *unmatched_names; /**< distinct (category, name) of unmatched activities,
                                           most frequent first */
    size_t n_devices;
    erg_trace_device *devices;
    erg_trace_group categories[ERG_TRACE_CAT_COUNT]; /**< by erg_trace_category */
    size_t n_top;
    erg_trace_group *top; /**< names by dynamic energy, largest first, at most top_n */
    double compute_s, communication_s, overlap_s; /**< sums over devices */
    erg_trace_stats stats;
    char rules[256];       /**< where the rules came from: their file, or the built-in defaults */
    double start_spread_s; /**< latest first activity of a file − earliest (after alignment), s:
                                large values with ERG_TRACE_ALIGN_NONE suggest unsynced clocks */
} erg_trace_report;

/**
 * Compute the report: the trace's per-device, per-category and per-name accounting, and from it
 * the totals erg_schedule_compose gives on the schedule erg_trace_schedule makes (Energy Calculus,
 * Section 3.3: E = Σ_dev (s·busy + p_idle·idle) + Σ d_i, σ²_E = Σ σ²_d_i, the weakest grade),
 * without building that schedule, so that the report needs about the import's memory. Idle static
 * energy is p_idle × (makespan − busy time) per device, the idle elements of Section 3.3 (the
 * "energy bloat" of Perseus). Errors: as erg_trace_schedule (ERG_EINVAL: no GPU activity, clocks
 * too far apart, a device without a device entry, a figure that is not finite), ERG_ERANGE (a total
 * overflows a double), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_trace_report_make(const erg_trace *trace, const erg_rules *rules,
                                                const erg_trace_options *opts,
                                                erg_trace_report *out, erg_diag *diag);

/** Free what a report holds (not the struct). NULL-safe; never fails. */
ERG_API void erg_trace_report_free(erg_trace_report *report);

/**
 * The report as one JSON object text (malloc'd, NUL-terminated; free with free()). Keys:
 * energy_j, energy_sd_j, time_s, static_energy_j, dynamic_energy_j, idle_static_energy_j, grade,
 * flags, unmatched, unmatched_names, rules, devices (id → name, static_power_w, activities, busy_s,
 * idle_s, static_energy_j, idle_static_energy_j, dynamic_energy_j, compute_s, communication_s,
 * overlap_s), categories (name → count, time_s, energy_j), top (list of name, category, count,
 * time_s, energy_j), overlap, problems, ignored, files, events, activities (docs/trace.md).
 * trace may be NULL (then ignored.unknown_categories is empty). Errors: ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_trace_report_json(const erg_trace *trace,
                                                const erg_trace_report *report, char **out,
                                                erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
