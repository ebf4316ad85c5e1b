/* SPDX-License-Identifier: MIT */
/* Default paths into a caller's buffer: one rule (core/path.h), one XDG lookup. */
#include "core/path.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erg/error.h"

int erg__path_put(char *buf, size_t *size, const char *fmt, ...)
{
    if (!buf || !size || !fmt)
        return ERG_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return ERG_EINVAL;
    size_t need = (size_t)n + 1;
    if (need > *size) {
        *size = need;
        return ERG_ERANGE;
    }
    va_start(ap, fmt);
    vsnprintf(buf, *size, fmt, ap);
    va_end(ap);
    *size = (size_t)n;
    return ERG_OK;
}

int erg__xdg_path(const char *xdg_var, const char *rel, char *buf, size_t *size)
{
    /* XDG Base Directory Specification 0.8: each variable's default under $HOME */
    static const struct {
        const char *var, *home_default;
    } xdg[] = {{"XDG_DATA_HOME", ".local/share"},
               {"XDG_CONFIG_HOME", ".config"},
               {"XDG_STATE_HOME", ".local/state"},
               {"XDG_CACHE_HOME", ".cache"}};
    const char *home_default = NULL;
    for (size_t i = 0; i < sizeof xdg / sizeof xdg[0]; i++)
        if (xdg_var && strcmp(xdg_var, xdg[i].var) == 0)
            home_default = xdg[i].home_default;
    if (!home_default || !rel)
        return ERG_EINVAL;
    const char *dir = getenv(xdg_var);
    if (dir && dir[0] == '/')
        return erg__path_put(buf, size, "%s/%s", dir, rel);
    const char *home = getenv("HOME");
    if (home && home[0])
        return erg__path_put(buf, size, "%s/%s/%s", home, home_default, rel);
    return ERG_ENOENT;
}
