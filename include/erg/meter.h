/* SPDX-License-Identifier: MIT */
/**
 * erg/meter.h - energy meters: counter backends, grades, liveness, wrap-around, the sampler.
 *
 * A meter (erg_meter) opens every backend it knows (RAPL through powercap sysfs, RAPL MSRs, NVML
 * loaded with dlopen, hwmon, and the utilisation estimator as the labelled last resort) and
 * exposes their channels: one energy figure source each, with its domain, device, provenance
 * grade, resolution and wrap range. Every host path is read under a root prefix (ERG_ROOT, default
 * "/") so tests can build fake trees; NVML is loaded from ERG_NVML_LIB when set.
 *
 * Readings are taken by polls (a sampler thread, or erg_meter_poll). Each poll corrects wrap-around
 * per channel on the raw unsigned ticks, with the channel's own modulus, before anything is summed,
 * integrates power-only sources with hold semantics, and counts anomalies. A snapshot
 * (erg_meter_snapshot_take) records the accumulated state; the difference of two snapshots
 * (erg_meter_diff) is a measurement: per-channel energy with grade, state, reason and flags, and a
 * total that never counts a domain twice (psys ⊃ package ⊃ core/uncore; a device seen through two
 * backends counted once). Windows that begin and end by name are in erg/measure.h.
 *
 * Grades follow the JouleClaw notes (MEASURED_ENERGY.md): hw_shunt only for an energy counter
 * seen live in the window; model_based for vendor power readings integrated over time; estimator
 * for the utilisation model.
 *
 * Thread safety: an erg_meter may be used from several threads; polls, snapshots and the sampler
 * are serialised by a mutex inside the meter. erg_meter_close must not race any other call.
 */
#ifndef ERG_METER_H
#define ERG_METER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "erg/error.h"
#include "erg/flags.h"
#include "erg/grade.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Size of channel id, device and label strings (bytes with the NUL). */
#define ERG_METER_ID_MAX 64
/** Size of reason strings (bytes with the NUL). */
#define ERG_METER_REASON_MAX 256

/** Energy domains. psys ⊃ package ⊃ core, uncore; dram is beside package; system holds all. */
typedef enum erg_domain {
    ERG_DOMAIN_PACKAGE = 0,
    ERG_DOMAIN_CORE,
    ERG_DOMAIN_UNCORE,
    ERG_DOMAIN_DRAM,
    ERG_DOMAIN_PSYS,
    ERG_DOMAIN_GPU,
    ERG_DOMAIN_SYSTEM
} erg_domain;

/** "package", "core", "uncore", "dram", "psys", "gpu", "system". */
ERG_API const char *erg_domain_name(erg_domain domain);

/**
 * I/O seam (SQLite's aSyscall): every file access and every clock read of the meter goes through
 * these, so tests can inject EACCES, EIO, short reads and a scripted clock (CI runs as root, so
 * permissions cannot be tested with chmod). A NULL member means the libc call. Calls return what
 * the libc call returns and set errno the same way. now_ns returns CLOCK_MONOTONIC in ns.
 * path in openat is relative to dirfd (the root); ud is passed back unchanged.
 */
typedef struct erg_io {
    int (*openat)(void *ud, int dirfd, const char *path, int flags);
    ssize_t (*pread)(void *ud, int fd, void *buf, size_t size, off_t offset);
    int (*close)(void *ud, int fd);
    uint64_t (*now_ns)(void *ud);
    void *ud;
} erg_io;

/** Options of erg_meter_open. Initialise with erg_meter_options_init, then set fields. */
typedef struct erg_meter_options {
    /** Root prefix of host paths; NULL: $ERG_ROOT, else "/". */
    const char *root;
    /** NVML library to dlopen; NULL: $ERG_NVML_LIB, else "libnvidia-ml.so.1". */
    const char *nvml_path;
    /** Comma-separated backends to try ("rapl-sysfs,nvml"); NULL: $ERG_BACKENDS, else all. */
    const char *backends;
    /** Sampler period, s (default 0.1; <= 0: the default). The sampler polls faster when a
     *  counter could wrap. NaN or above ERG_METER_MAX_PERIOD_S: erg_meter_open fails with
     *  ERG_EINVAL. */
    double sampler_period_s;
    /** Estimator: whole-CPU power at idle and at full load, W (defaults 10 and 65; see
     *  erg_meter_options_init). $ERG_ESTIMATOR_IDLE_W / $ERG_ESTIMATOR_FULL_W override; a value
     *  that is not a number >= 0 makes erg_meter_open fail with ERG_EINVAL naming the variable. */
    double estimator_idle_w;
    double estimator_full_w;
    /** I/O seam; NULL: libc. The pointed-to struct must outlive the meter. */
    const erg_io *io;
    /** Optional log callback (level 0 info, 1 warning); the library is silent by default. */
    void (*log)(void *ud, int level, const char *msg);
    void *log_ud;
} erg_meter_options;

/** Fill defaults: root/nvml_path/backends NULL, sampler 0.1 s, estimator 10 W idle, 65 W full
 *  load (a typical single-socket desktop or small-server CPU; override for yours), io NULL. */
ERG_API void erg_meter_options_init(erg_meter_options *opts);

/** An open meter; opaque. */
typedef struct erg_meter erg_meter;

/**
 * Open a meter: try every backend, collect channels, deduplicate, build the hierarchy and take
 * the first reading (a counter has no value until two readings). Backends that find nothing are
 * recorded with a reason (erg_meter_backend_info); this is not an error. The estimator is always
 * present unless excluded by opts->backends.
 * Returns ERG_OK; ERG_EINVAL (bad options; a name in opts->backends or $ERG_BACKENDS that is not
 * one of rapl-sysfs, rapl-msr, nvml, hwmon, estimator, named in diag with the known ones; empty
 * items are ignored; $ERG_ESTIMATOR_IDLE_W or $ERG_ESTIMATOR_FULL_W set to anything but a
 * number >= 0, the variable named in diag->where; estimator idle above full load); ERG_ENOENT (root
 * does not exist, named in diag); ERG_ENOMEM; ERG_ENODEV when no backend gave any channel at all
 * (diag gives each tried backend's state and reason).
 */
ERG_API ERG_NODISCARD int erg_meter_open(const erg_meter_options *opts, erg_meter **out,
                                         erg_diag *diag);

/** Stop the sampler, close every backend, free. NULL-safe. */
ERG_API void erg_meter_close(erg_meter *m);

/** State of a backend after erg_meter_open. */
typedef enum erg_backend_state {
    ERG_BACKEND_FOUND = 0, /**< opened; at least one channel */
    ERG_BACKEND_ABSENT,    /**< nothing there (no zones, no library, no device) */
    ERG_BACKEND_DENIED,    /**< present but permission denied (reason names the remedy) */
    ERG_BACKEND_ERROR,     /**< present but failed (reason says how) */
    ERG_BACKEND_SKIPPED    /**< excluded by options / $ERG_BACKENDS */
} erg_backend_state;

/** "found", "absent", "denied", "error", "skipped". */
ERG_API const char *erg_backend_state_name(erg_backend_state state);

/** A backend as tried by erg_meter_open. */
typedef struct erg_backend_info {
    char name[32]; /**< "rapl-sysfs", "rapl-msr", "nvml", "hwmon", "estimator" */
    erg_backend_state state;
    char reason[ERG_METER_REASON_MAX]; /**< why absent/denied/error; "" when found */
    size_t n_channels;                 /**< channels it contributed (usable or declined) */
} erg_backend_info;

/** Number of backends tried. */
ERG_API size_t erg_meter_backend_count(const erg_meter *m);
/** Backend i (0 ≤ i < count). ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_meter_backend_info(const erg_meter *m, size_t i,
                                                 erg_backend_info *out);

/** How a channel obtains energy. */
typedef enum erg_channel_kind {
    ERG_KIND_COUNTER = 0, /**< a hardware energy counter (ticks × joules_per_tick) */
    ERG_KIND_POWER,       /**< a power reading integrated with hold semantics */
    ERG_KIND_ESTIMATE     /**< modelled power over each interval (the estimator) */
} erg_channel_kind;

/**
 * A channel: one source of energy figures.
 * id: stable name "<backend>:<device>[/<domain>]" ("rapl-sysfs:package-0/dram", "nvml:gpu-0").
 * device: the device it belongs to ("package-0", "gpu-0", "cpu"); label: vendor name or UUID.
 * resolution_j: energy of one tick (J); for power channels the energy of one tick over
 * min_interval_s. wrap_j: the modulus of the counter in J (0 when none or unknown).
 * wrap_j is NaN when the counter wraps at a modulus that could not be read (max_energy_range_uj
 * missing), so that an unknown range is never shown as 0 (a decrease is then never a wrap).
 * min_interval_s: the counter's update period (shorter windows are below_resolution).
 * max_power_w: the plausibility bound (a reading implying more is flagged).
 * parent: index of the channel whose domain contains this one (psys ⊃ package ⊃ core), or -1.
 * usable: 0 when declined at open (reason says why); live: 1 seen moving under load, 0 seen
 * frozen, -1 not yet judged (see erg_meter_probe_liveness). deduplicated: 1 when it mirrors
 * another channel (same domain and device, or identical readings) and is never summed.
 */
typedef struct erg_channel_info {
    char id[ERG_METER_ID_MAX];
    char backend[32];
    erg_domain domain;
    char device[ERG_METER_ID_MAX];
    char label[ERG_METER_ID_MAX];
    erg_grade grade;
    erg_channel_kind kind;
    double resolution_j;
    double wrap_j;
    double min_interval_s;
    double max_power_w;
    int parent;
    int usable;
    int live;
    int deduplicated;
    char reason[ERG_METER_REASON_MAX];
    /** ERG_KIND_ESTIMATE only: the model's power at idle and at full load, W, so that a power
     *  figure maps back to utilisation u = (P − model_idle_w) / (model_full_w − model_idle_w)
     *  (Fan, Weber, Barroso, ISCA 2007, Eq. 1); both 0 for other kinds. */
    double model_idle_w;
    double model_full_w;
} erg_channel_info;

/** The meter's clock in seconds: CLOCK_MONOTONIC, or the now_ns of the I/O seam the meter was
 *  opened with (erg_io), so that windows and the repetition protocol (erg_protocol_run's
 *  min_window_s) time work on the clock that stamps the meter's readings. Never fails. */
ERG_API double erg_meter_now_s(const erg_meter *m);

/** Number of channels (usable and declined). */
ERG_API size_t erg_meter_channel_count(const erg_meter *m);
/** Channel i. ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_meter_channel_info(const erg_meter *m, size_t i,
                                                 erg_channel_info *out);

/** 1 when some usable channel of m gives hardware figures (grade hw_shunt or model_based), 0
 *  when only the estimator (or nothing) is usable, or m is NULL. Never fails. */
ERG_API int erg_meter_has_hardware(const erg_meter *m);

/**
 * What every reader of m's figures must be told about where they come from, in buf (size bytes,
 * snprintf's rule: the return is the full length; "" and 0 when m has a hardware channel): that
 * figures come from the estimator (CPU utilisation model) and are estimates, or that no channel
 * is usable and nothing can be measured. Never fails.
 */
ERG_API size_t erg_meter_note(const erg_meter *m, char *buf, size_t size);

/**
 * The ids of the package and DRAM channels that a CPU total needs and that were declined for
 * lack of permission (RAPL energy_uj is root-only on patched kernels, CVE-2020-8694), ", "
 * separated, in buf (snprintf's rule: the full length is returned; "" and 0 when none). While any
 * is declined, totals over the CPU are null and flagged incomplete. Never fails.
 */
ERG_API size_t erg_meter_declined_totals(const erg_meter *m, char *buf, size_t size);

/**
 * Write the meters/1 document of m to path ("-": standard output), whole or not at all (what
 * `erg meters --json` prints; members in docs/meters.md): {"erg": "meters/1", "backends":
 * [{"name", "state", "reason"}], "channels": [{"id", "backend", "domain", "device", "label",
 * "grade", "kind", "usable", "live" (null: not judged), "resolution_j", "wrap_j" (null: no
 * wrap known), "min_interval_s", "deduplicated", "parent", "reason"}], "hardware" (as
 * erg_meter_has_hardware), "note" (erg_meter_note, when there is one), "incomplete":
 * {"declined", "note"} (erg_meter_declined_totals, when any)}. Liveness is reported as the
 * meter holds it: probe first with erg_meter_probe_liveness. Errors: ERG_EINVAL (NULL),
 * ERG_ENOMEM, ERG_EIO (path cannot be written; nothing is left half-written).
 */
ERG_API ERG_NODISCARD int erg_meter_write_json(const char *path, const erg_meter *m,
                                               erg_diag *diag);

/**
 * Judge liveness under load: poll, spin in the calling thread until it has used busy_s seconds
 * of CPU time (giving up after 20·busy_s of wall time on a loaded machine), poll again. A CPU-side
 * counter (package, core, dram, psys, system) that did not move is marked not live and declined
 * ("frozen"), never giving a hw_shunt figure; one that moved is marked live. GPU counters and
 * uncore are not judged here (no GPU load is made). busy_s in [0.01, 5].
 * Returns ERG_OK, ERG_EINVAL, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_meter_probe_liveness(erg_meter *m, double busy_s, erg_diag *diag);

/** Read every channel now (what the sampler does each period). ERG_OK; never fails for a channel
 *  error, which is recorded on the channel. Thread-safe. */
ERG_API ERG_NODISCARD int erg_meter_poll(erg_meter *m);

/** Longest sampler period, s (a day): erg_meter_sampler_start and erg_meter_options refuse more. */
#define ERG_METER_MAX_PERIOD_S 86400.0

/**
 * Start the sampler thread: it polls every period_s seconds (≤ 0: the option's period), or
 * faster when a counter could otherwise wrap twice unseen (half its wrap time at max power).
 * A poll that overruns its period is followed at once by the next. CLOCK_MONOTONIC throughout.
 * Returns ERG_OK, ERG_EINVAL (already running, or period_s NaN or above ERG_METER_MAX_PERIOD_S),
 * ERG_ENOMEM/ERG_EIO (thread creation).
 */
ERG_API ERG_NODISCARD int erg_meter_sampler_start(erg_meter *m, double period_s);
/** Stop the sampler thread and wait for it. NULL-safe; no-op when not running. */
ERG_API void erg_meter_sampler_stop(erg_meter *m);
/** The period the sampler actually uses, s (after the wrap clamp); 0 when not running. */
ERG_API double erg_meter_sampler_period_s(const erg_meter *m);

/* Reading flags (ERG_FLAG_*, erg_flag_name) are declared in erg/flags.h (core), included above. */

/** State of one channel's figure in a measurement. Only ERG_READING_OK has an energy figure. */
typedef enum erg_reading_state {
    ERG_READING_OK = 0,
    ERG_READING_DECLINED,         /**< declined at open (denied, absent domain, MIG, frozen) */
    ERG_READING_NOT_LIVE,         /**< did not move although the work used ≥ 10 ms CPU time (GPU
                                   *   counters: the GPU's NVML utilisation integrated over the window,
                                   *   plus busy time the caller reports); uncore, which may idle at 0 W
                                   *   under CPU load, is exempt */
    ERG_READING_BELOW_RESOLUTION, /**< window shorter than the counter's update period */
    ERG_READING_AMBIGUOUS,        /**< a wrap may be hidden; not guessed */
    ERG_READING_UNIT_SUSPECT,     /**< implausible power; not reported */
    ERG_READING_ERROR,            /**< read failed at an end, or a fatal device error inside */
    ERG_READING_NO_DATA           /**< fewer than two readings in the window */
} erg_reading_state;

/** "ok", "declined", "not_live", "below_resolution", "ambiguous", "unit_suspect", "error",
 *  "no_data". */
ERG_API const char *erg_reading_state_name(erg_reading_state state);

/** One channel's figure over a window. energy_j is NaN unless state is ERG_READING_OK. */
typedef struct erg_channel_reading {
    char id[ERG_METER_ID_MAX];
    erg_domain domain;
    char device[ERG_METER_ID_MAX];
    erg_grade grade;
    erg_reading_state state;
    char reason[ERG_METER_REASON_MAX];
    unsigned flags;
    double energy_j;
    int in_total; /**< 1 when summed into the total */
} erg_channel_reading;

/**
 * A measurement: the difference of two snapshots.
 * time_s: CLOCK_MONOTONIC elapsed time; cpu_s: CPU time used by this process and its reaped
 * children in the window (the liveness criterion). total_energy_j: sum over the channels with
 * in_total (never a domain twice); NaN when no channel could be summed, or when a channel the
 * total covers has no figure (total_flags has ERG_FLAG_INCOMPLETE and total_reason names the
 * missing channels: a total covers what it claims or gives none). total_grade: weakest grade
 * summed (ERG_GRADE_ESTIMATOR when none). total_reason: "" when the total is complete.
 *
 * Sized at run time: channels points to n_channels readings, one per channel of the meter, in
 * storage for capacity readings that the measurement owns. There is no channel limit in the ABI
 * (a machine with hundreds of hwmon inputs or GPUs is measured whole, never truncated), and the
 * struct is a few hundred bytes whatever the meter. Lifetime: a zeroed erg_measurement
 * (`erg_measurement r = {0};`) is valid and empty; erg_meter_diff (and erg_window_end) size it on
 * first use and reuse its storage afterwards (no allocation per window once sized); copy one with
 * erg_measurement_copy (a plain struct assignment shares the storage); erg_measurement_release
 * frees it. Chosen over an opaque type (hwloc) because callers, Python's ctypes among them, read
 * the readings in place as an array, and over a caller-passed capacity (libuv's buffers) because a
 * meter's channel count is known only at run time and every caller would repeat the size query;
 * it is the layout erg_summary already has (erg/measure.h).
 */
typedef struct erg_measurement {
    double time_s;
    double cpu_s;
    size_t n_channels;
    erg_channel_reading *channels; /**< n_channels readings, owned */
    size_t capacity;               /**< readings the storage holds (≥ n_channels) */
    double total_energy_j;
    erg_grade total_grade;
    size_t n_total;
    unsigned total_flags;                    /**< ERG_FLAG_INCOMPLETE, or 0 */
    char total_reason[ERG_METER_REASON_MAX]; /**< why there is no total; "" when there is one */
} erg_measurement;

/** A snapshot of the meter's accumulated state; opaque, from erg_meter_snapshot_new. */
typedef struct erg_meter_snapshot erg_meter_snapshot;

/** Allocate a snapshot sized for m. Returns NULL on ENOMEM. */
ERG_API ERG_NODISCARD erg_meter_snapshot *erg_meter_snapshot_new(const erg_meter *m);
/** Free a snapshot. NULL-safe. */
ERG_API void erg_meter_snapshot_free(erg_meter_snapshot *s);

/** Poll and record the accumulated state into s (no allocation). ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_meter_snapshot_take(erg_meter *m, erg_meter_snapshot *s);

/**
 * The measurement between snapshots a (earlier) and b (later): per-channel energy with grade,
 * state, reason and flags, and the total. Liveness: a CPU-side counter that did not move while
 * cpu_s + extra_busy_s ≥ 0.01 s, or a GPU counter that did not move while the GPU's busy time
 * (NVML utilisation integrated over the window) + extra_busy_s ≥ 0.01 s, is
 * ERG_READING_NOT_LIVE. extra_busy_s: busy time the caller knows of (GPU time, work in other
 * processes), s.
 * out is a zeroed or earlier-filled erg_measurement; its storage grows to the meter's channel
 * count when short (erg_measurement_release frees it).
 * Returns ERG_OK, ERG_EINVAL (snapshots from another meter, b before a), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_meter_diff(const erg_meter *m, const erg_meter_snapshot *a,
                                         const erg_meter_snapshot *b, double extra_busy_s,
                                         erg_measurement *out);

/**
 * Copy src into dst, readings included (dst's storage reused, grown when short). dst is a zeroed
 * or earlier-filled erg_measurement, never one sharing src's storage. Returns ERG_OK, ERG_EINVAL
 * (NULL argument), ERG_ENOMEM (dst unchanged).
 */
ERG_API ERG_NODISCARD int erg_measurement_copy(erg_measurement *dst, const erg_measurement *src);

/** Free r's readings and zero r (it is then empty and reusable). NULL-safe. */
ERG_API void erg_measurement_release(erg_measurement *r);

/** A temperature for the stability protocol. */
typedef struct erg_temperature {
    char id[ERG_METER_ID_MAX]; /**< "hwmon:coretemp/Package id 0", "thermal:x86_pkg_temp",
                                  "nvml:gpu-0" */
    int is_gpu;
    double temp_c;
} erg_temperature;

/** Read up to max temperatures of the CPU and GPU dies (hwmon temp*_input of coretemp's package,
 *  k10temp's and zenpower's Tdie/Tccd (Tctl without Tdie), amdgpu's edge; the processor's thermal
 *  zones; NVML GPU temperature), never a board's other sensors (docs/meters.md).
 *  *n gets how many were written. ERG_OK or ERG_EINVAL. */
ERG_API ERG_NODISCARD int erg_meter_temperatures(erg_meter *m, erg_temperature *out, size_t max,
                                                 size_t *n);

#ifdef __cplusplus
}
#endif
#endif
