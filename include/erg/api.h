/* SPDX-License-Identifier: MIT */
/**
 * erg/api.h - the export and must-use macros of liberg, defined once (libuv's UV_EXTERN model):
 * every public header includes this one.
 * - ERG_API marks a public function: exported from the shared library (default visibility; the
 *   library is built with hidden visibility otherwise).
 * - ERG_NODISCARD marks a fallible function whose status must be looked at: ignoring it is a
 *   compiler warning (gcc and clang: warn_unused_result; an error with -Werror). gcc does not
 *   accept a (void) cast as looking at it: test the status.
 * Conventions every public header follows (one way each, not three):
 * - A fallible function returns an int status (ERG_OK or a negative ERG_E*, erg/error.h) and is
 *   ERG_NODISCARD; a function returning an owned pointer (erg_*_new) is ERG_NODISCARD too.
 * - A writer takes where it writes first, then what it writes, then options, then the
 *   erg_diag: erg_file_write_whole(path, data, len, diag), erg_protocol_write_json(path, r, ...),
 *   erg_op_model_save(path, m, diag), erg_frontier_write_csv(path, f, plan, diag) (the order of
 *   fprintf(stream, ...); "-" is stdout): erg_schedule_write_file(path, sched, diag),
 *   erg_report_write_file(path, report, diag), erg_interaction_graph_write_file(path, g,
 *   confidence, diag), erg_trace_schedule_write_file(path, trace, rules, opts, diag).
 * - A default path goes into the caller's buffer by libuv's rule (uv_os_homedir):
 *   fn(..., char *buf, size_t *size): ERG_OK with the length in *size, or ERG_ERANGE with the
 *   size needed (NUL counted) in *size and buf untouched; XDG lookups follow the XDG Base
 *   Directory specification (erg_store_default_path, erg_calibration_default_path).
 * - Diagnostics about input name the place as FILE:LINE:COL in erg_diag.where; the CLI prints
 *   "erg: FILE:LINE:COL: what is wrong".
 */
#ifndef ERG_API_H
#define ERG_API_H

/**
 * ERG_API: put before every public function's declaration. Expands to default visibility with gcc
 * and clang (liberg is compiled with -fvisibility=hidden, so only ERG_API functions are exported),
 * to dllexport/dllimport on Windows, and to nothing elsewhere. A header included before this one
 * may define it first.
 */
#ifndef ERG_API
#if defined(_WIN32) && defined(ERG_BUILDING_LIBRARY)
#define ERG_API __declspec(dllexport)
#elif defined(_WIN32)
#define ERG_API __declspec(dllimport)
#elif defined(__GNUC__) || defined(__clang__)
#define ERG_API __attribute__((visibility("default")))
#else
#define ERG_API
#endif
#endif

/**
 * ERG_NODISCARD: put before a fallible function's declaration (one that returns an erg status, 0
 * or a negative ERG_E* code): ignoring its result is a compiler warning (warn_unused_result with
 * gcc and clang; nothing elsewhere). gcc does not accept a (void) cast: test the status.
 */
#ifndef ERG_NODISCARD
#if defined(__GNUC__) || defined(__clang__)
#define ERG_NODISCARD __attribute__((warn_unused_result))
#else
#define ERG_NODISCARD
#endif
#endif

#endif
