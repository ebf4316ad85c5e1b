/* SPDX-License-Identifier: MIT */
/**
 * erg/serve.h - the fleet exporter: a meter's figures as Prometheus / OpenTelemetry metrics.
 *
 * An exporter (erg_exporter) owns nothing but its accumulators: it reads an open erg_meter every
 * interval (erg_exporter_sample, or its own sampler thread), takes the difference of two meter
 * snapshots (erg_meter_diff, so wrap-around, liveness and plausibility are the meter's), and adds
 * each channel's energy to a cumulative counter that never decreases: an interval the meter gives
 * no figure for (a read error, a counter reset, a wrap it cannot rule out) adds nothing and is
 * counted under its state instead. Each sample renders the exposition text once; a scrape copies
 * it (plus the exporter's own cost), so scrapes never touch the meter and cost the same whatever
 * the number of channels.
 *
 * Metrics (Prometheus text exposition format 0.0.4; names, units and labels in docs/serve.md, with
 * their OpenTelemetry hw.energy / hw.power equivalents and how Kepler and the DCGM exporter name
 * the same quantities):
 *   erg_energy_joules_total{channel,domain,device,grade,scope}   counter, J
 *   erg_power_watts{channel,domain,device,grade,scope}           gauge, W (last interval's mean)
 *   erg_node_energy_joules_total{grade} / erg_node_power_watts{grade}   the meter's total
 *   erg_channel_live{channel}, erg_channel_state{channel,state},
 * erg_channel_flagged_intervals_total erg_meter_errors_total{channel}, erg_exporter_* (its own
 * cost), erg_process_/erg_cgroup_*. A figure that does not exist (a channel never seen live, a
 * denied zone, a last interval with no value) is absent, never 0. scope is "root" for a channel no
 * other channel contains (summing the roots of a node never counts a domain twice), "component" for
 * one contained in another's figure (core in package, a rail in a socket total), "mirror" for a
 * deduplicated copy.
 *
 * Thread safety: erg_exporter_render may be called from any number of threads while the sampler
 * runs; erg_exporter_sample must not run concurrently with itself (the sampler thread is the only
 * caller once erg_exporter_start was called). erg_exporter_free must not race any call.
 */
#ifndef ERG_SERVE_H
#define ERG_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "erg/error.h"
#include "erg/meter.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** What per-process attribution the exporter adds. */
typedef enum erg_attribute {
    ERG_ATTRIBUTE_NONE = 0, /**< node and channel figures only */
    ERG_ATTRIBUTE_PIDS,     /**< erg_process_energy_joules_total{pid,comm} */
    ERG_ATTRIBUTE_CGROUPS   /**< erg_cgroup_energy_joules_total{cgroup} */
} erg_attribute;

/** Options of erg_exporter_new. Initialise with erg_exporter_options_init. */
typedef struct erg_exporter_options {
    /** Seconds between samples (default 1; must be in [0.01, 3600]). The meter's own sampler
     *  keeps polling faster than this when a counter could otherwise wrap unseen. */
    double interval_s;
    /** Per-process or per-cgroup attribution (default none). */
    erg_attribute attribute;
    /** Attribution keeps the attribute_top largest consumers of each interval and adds the rest
     *  to pid="other" / cgroup="other" (default 50; bounds the series a node exports). */
    size_t attribute_top;
    /** Root prefix of /proc for attribution; NULL: $ERG_ROOT, else "/". Ignored, like every
     *  environment override, when the process runs with elevated privilege (AT_SECURE). */
    const char *root;
} erg_exporter_options;

/** Fill defaults: interval 1 s, no attribution, top 50, root NULL. */
ERG_API void erg_exporter_options_init(erg_exporter_options *o);

/** An exporter; opaque. */
typedef struct erg_exporter erg_exporter;

/**
 * Make an exporter over an open meter (borrowed: it must outlive the exporter and must not be
 * closed while the exporter runs). Takes the first snapshot; counters start at 0 J and appear
 * after the first interval that gives them a figure.
 * Returns ERG_OK, ERG_EINVAL (NULL meter or out, interval outside [0.01, 3600], attribute_top 0
 * with attribution on), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_exporter_new(erg_meter *meter, const erg_exporter_options *o,
                                           erg_exporter **out, erg_diag *diag);

/**
 * Take one sample now: snapshot the meter, diff against the previous snapshot, add each channel's
 * energy (J) to its counter, update power gauges (W = J / s over the interval), states, flags and
 * attribution, and render the exposition text. Returns ERG_OK, ERG_EINVAL, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_exporter_sample(erg_exporter *e);

/**
 * Start the sampler thread (one sample every interval_s on CLOCK_MONOTONIC; a sample that starts
 * more than one interval late counts in erg_exporter_missed_samples_total). Returns ERG_OK,
 * ERG_EINVAL (already running), ERG_ENOMEM (thread creation).
 */
ERG_API ERG_NODISCARD int erg_exporter_start(erg_exporter *e);

/** Stop the sampler thread and wait for it. NULL-safe; no-op when not running. */
ERG_API void erg_exporter_stop(erg_exporter *e);

/**
 * A copy of the current exposition text (Prometheus text format 0.0.4, UTF-8, ends with a
 * newline) followed by the exporter's own metrics, in *text (malloc'd, NUL-terminated; free())
 * and its length in *len. scrape_s: the duration of the previous scrape in seconds (exported as
 * erg_exporter_scrape_seconds; NaN: not exported). Thread-safe. Returns ERG_OK, ERG_EINVAL,
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_exporter_render(erg_exporter *e, double scrape_s, char **text,
                                              size_t *len);

/** Cumulative energy of channel id so far, J (NaN when the channel never had a figure or no
 *  channel has that id). For tests and embedding programs; thread-safe. */
ERG_API double erg_exporter_energy_j(erg_exporter *e, const char *channel_id);

/** Samples taken, and samples that started more than one interval late (sampler thread only). */
ERG_API void erg_exporter_counts(erg_exporter *e, uint64_t *samples, uint64_t *missed);

/** Stop the sampler and free. The meter is not closed. NULL-safe. */
ERG_API void erg_exporter_free(erg_exporter *e);

/** An HTTP endpoint serving an exporter; opaque. */
typedef struct erg_http erg_http;

/**
 * Serve e over HTTP (libmicrohttpd, one internal polling thread) on listen, "HOST:PORT" or
 * "[IPv6]:PORT" (a numeric address; port 0 picks a free one, see erg_http_port). Paths: GET or
 * HEAD /metrics (the exposition), / (a short page naming /metrics), anything else 404, methods
 * other than GET/HEAD 405. No request reads a file or runs anything.
 * bearer_token: when non-NULL, every request must carry "Authorization: Bearer <token>" (compared
 * in constant time) or gets 401; NULL: no authentication (the caller decides whether that is
 * acceptable for the address: erg serve refuses to be quiet about it off loopback).
 * Returns ERG_OK, ERG_EINVAL (unparsable listen address; diag names it), ERG_EBUSY (the address
 * is in use; diag says which), ERG_EACCES (a privileged port), ERG_EIO (socket or daemon start),
 * ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_http_start(erg_exporter *e, const char *listen,
                                         const char *bearer_token, erg_http **out, erg_diag *diag);

/** The TCP port the endpoint listens on (the one picked when listen asked for port 0). */
ERG_API unsigned erg_http_port(const erg_http *h);

/** 1 when addr is a listen address erg_http_start accepts ("HOST:PORT" with a numeric IPv4
 *  address, "[IPv6]:PORT", "localhost:PORT"; port 0..65535), else 0. Binds nothing. */
ERG_API int erg_http_is_address(const char *addr);

/** 1 when listen names a loopback address (127.0.0.0/8, ::1, localhost), else 0. */
ERG_API int erg_http_is_loopback(const char *listen);

/** Stop serving and free. NULL-safe. */
ERG_API void erg_http_stop(erg_http *h);

#ifdef __cplusplus
}
#endif
#endif
