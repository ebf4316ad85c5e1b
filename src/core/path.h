/* SPDX-License-Identifier: MIT */
/* Private: default paths into a caller's buffer, under one rule (libuv's uv_os_getenv and
 * uv_os_homedir; STYLE.md, "A path into a caller's buffer"):
 *   int fn(..., char *buf, size_t *size)
 * *size is buf's size in bytes on entry. On success: ERG_OK, buf holds the path and *size its
 * length (the NUL not counted). When the path does not fit: ERG_ERANGE (getcwd(3)'s errno for a
 * buffer too small), buf is left as it was and *size is the size needed, the NUL counted: call
 * again with a buffer that large. Every public default-path function (erg_store_default_path,
 * erg_calibration_default_path, erg_op_model_default_path, erg_profile_default_grid) delegates to
 * these two, so the rule lives here only. */
#ifndef ERG_CORE_PATH_H
#define ERG_CORE_PATH_H

#include <stddef.h>

/* Put the printf-formatted path into buf by the rule above. ERG_EINVAL when buf or size is NULL
 * or the format fails. */
int erg__path_put(char *buf, size_t *size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one XDG Base Directory lookup: "$<xdg_var>/<rel>" when that variable holds an absolute
 * path, else "$HOME/<default>/<rel>" with the specification's default for xdg_var
 * (XDG_DATA_HOME: .local/share, XDG_CONFIG_HOME: .config, XDG_STATE_HOME: .local/state,
 * XDG_CACHE_HOME: .cache). A relative value is ignored, as the specification says. ERG_ENOENT
 * when neither variable gives a path; ERG_EINVAL for another xdg_var; else as erg__path_put. */
int erg__xdg_path(const char *xdg_var, const char *rel, char *buf, size_t *size);

#endif
