/* SPDX-License-Identifier: MIT */
/**
 * erg/flags.h - measurement flags (core): what went wrong or needs saying about a figure (a
 * corrected wrap-around, missing samples, a baseline above the gross energy, an incomplete
 * total). The meter sets them on readings and totals, the measure module on summaries; they
 * travel with a figure into its signature (erg_signature.flags), through composition (a
 * composite's flags are the union of its parts'), into reports and the signature store. Shared
 * by every module, so they live below all of them (DESIGN's module table: core), like grades.
 */
#ifndef ERG_FLAGS_H
#define ERG_FLAGS_H

#include <stddef.h>

#include "erg/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Reading flags (bit set), carried into JSON and signatures. */
enum {
    ERG_FLAG_WRAP_CORRECTED = 1u << 0,   /**< a wrap-around was corrected */
    ERG_FLAG_AMBIGUOUS_WRAP = 1u << 1,   /**< an interval long enough to hide a wrap: no figure */
    ERG_FLAG_BACKWARDS = 1u << 2,        /**< a decrease that is not a wrap: interval skipped */
    ERG_FLAG_GLITCH = 1u << 3,           /**< a jump that recovered: interval skipped */
    ERG_FLAG_BELOW_RESOLUTION = 1u << 4, /**< window shorter than the update period: no figure */
    ERG_FLAG_STALE = 1u << 5,            /**< missing samples (read errors), or a power reading
                                          *   unchanged for more than 10 s */
    ERG_FLAG_UNIT_SUSPECT = 1u << 6,     /**< readings imply impossible power: no figure */
    ERG_FLAG_DEDUPLICATED = 1u << 7,     /**< mirrors another channel; not summed */
    /** Set by summaries (erg_summarize, erg/measure.h), never by a reading: the mean baseline
     *  (calibrated idle power × time) exceeds the mean gross energy, so the net energy is
     *  negative. The machine drew less than its calibrated idle power: the calibration was taken
     *  under load or in another state (frequency, fans, another machine). Recalibrate at rest. */
    ERG_FLAG_BASELINE_EXCEEDS_GROSS = 1u << 8,
    /** Set on a total (erg_measurement.total_flags), never on a channel: a channel the total
     *  covers (a package, dram, GPU, or the psys or system channel it would use) has no figure in
     *  the window (declined, read error, not live...), so the total is not given (NaN) rather
     *  than a sum that silently leaves it out; total_reason names the channels. */
    ERG_FLAG_INCOMPLETE = 1u << 9
};
/** Number of flag bits (every flag is 1u << i for 0 ≤ i < ERG_FLAG_COUNT). */
#define ERG_FLAG_COUNT 10
/** Every defined flag bit. */
#define ERG_FLAG_ALL ((1u << ERG_FLAG_COUNT) - 1u)

/** Name of flag bit i (0 ≤ i < ERG_FLAG_COUNT): "wrap_corrected", ...; NULL otherwise. */
ERG_API const char *erg_flag_name(unsigned bit_index);

/**
 * Parse a flag name (as erg_flag_name gives it; case-sensitive). Stores the flag's bit
 * (1u << index, not the index) in *bit. Returns ERG_OK, or ERG_EINVAL for an unknown name or NULL.
 */
ERG_API ERG_NODISCARD int erg_flag_parse(const char *name, unsigned *bit);

/**
 * Write the names of the set bits of flags, lowest bit first, separated by sep (e.g. "," or ", "),
 * into buf (snprintf semantics: always NUL-terminated when size > 0). Bits beyond ERG_FLAG_ALL are
 * ignored. Writes "" for 0. Returns the length the full text needs, as snprintf.
 */
ERG_API size_t erg_flags_text(unsigned flags, const char *sep, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
