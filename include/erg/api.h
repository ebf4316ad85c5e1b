/* SPDX-License-Identifier: MIT */
/**
 * erg/api.h - the export and must-use macros of liberg, defined once (libuv's UV_EXTERN model):
 * every public header includes this one.
 * - ERG_API marks a public function: exported from the shared library (default visibility; the
 *   library is built with hidden visibility otherwise).
 * - ERG_NODISCARD marks a fallible function whose status must be looked at: ignoring it is a
 *   compiler warning (gcc and clang: warn_unused_result; an error with -Werror). gcc does not
 *   accept a (void) cast as looking at it: test the status.
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
