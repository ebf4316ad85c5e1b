/* SPDX-License-Identifier: MIT */
#include "erg/error.h"
#include "erg/version.h"

#include "core/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *erg_version(void)
{
    return ERG_VERSION_STRING;
}

const char *erg_strerror(int status)
{
    if (status == ERG_OK)
        return "success";
    switch (status) {
#define X(n, v, s)                                                                                 \
    case ERG_##n:                                                                                  \
        return s;
        ERG_STATUS_MAP(X)
#undef X
    default:
        return "unknown status";
    }
}

const char *erg_status_name(int status)
{
    if (status == ERG_OK)
        return "ERG_OK";
    switch (status) {
#define X(n, v, s)                                                                                 \
    case ERG_##n:                                                                                  \
        return "ERG_" #n;
        ERG_STATUS_MAP(X)
#undef X
    default:
        return "ERG_UNKNOWN";
    }
}

void erg_diag_clear(erg_diag *diag)
{
    if (!diag)
        return;
    diag->status = ERG_OK;
    diag->where[0] = '\0';
    diag->detail[0] = '\0';
}

int erg_diag_set(erg_diag *diag, int status, const char *where, const char *fmt, ...)
{
    if (!diag)
        return status;
    diag->status = status;
    snprintf(diag->where, sizeof diag->where, "%s", where ? where : "");
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag->detail, sizeof diag->detail, fmt, ap);
        va_end(ap);
    } else {
        diag->detail[0] = '\0';
    }
    return status;
}

int erg__diag_at(erg_diag *diag, int status, const char *file, size_t line, size_t col,
                 const char *fmt, ...)
{
    if (!diag)
        return status;
    char where[sizeof diag->where];
    if (line && col)
        snprintf(where, sizeof where, "%s:%zu:%zu", file ? file : "", line, col);
    else if (line)
        snprintf(where, sizeof where, "%s:%zu", file ? file : "", line);
    else
        snprintf(where, sizeof where, "%s", file ? file : "");
    diag->status = status;
    memcpy(diag->where, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->detail, sizeof diag->detail, fmt, ap);
    va_end(ap);
    return status;
}

int erg_diag_format(const erg_diag *diag, char *buf, size_t size)
{
    if (!diag)
        return snprintf(buf, size, "%s", "unknown error");
    const char *what = diag->detail[0] ? diag->detail : erg_strerror(diag->status);
    if (diag->where[0])
        return snprintf(buf, size, "%s: %s", diag->where, what);
    return snprintf(buf, size, "%s", what);
}
