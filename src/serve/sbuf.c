/* SPDX-License-Identifier: MIT */
/* A growable text buffer and the Prometheus label escape (serve_internal.h): the lowest layer of
 * src/serve, used by the exporter's rendering and the attribution's (attrib.c). */
#include "serve_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int erg__sbuf_printf(erg__sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return -1;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int k = vsnprintf(b->buf ? b->buf + b->len : NULL, b->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = 1;
            return -1;
        }
        if (b->buf && (size_t)k < room) {
            b->len += (size_t)k;
            return 0;
        }
        size_t need = b->len + (size_t)k + 1;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return -1;
        }
        b->buf = nb;
        b->cap = cap;
    }
}

/* A label value in the text format: backslash, double quote and line feed escaped; other control
 * characters (which no metric consumer wants in a label) become '?'. */
void erg__sbuf_label(erg__sbuf *b, const char *v)
{
    char tmp[2 * 256 + 1];
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)v; *p && j + 3 < sizeof tmp; p++) {
        if (*p == '\\' || *p == '"') {
            tmp[j++] = '\\';
            tmp[j++] = (char)*p;
        } else if (*p == '\n') {
            tmp[j++] = '\\';
            tmp[j++] = 'n';
        } else if (*p < 0x20 || *p == 0x7f) {
            tmp[j++] = '?';
        } else {
            tmp[j++] = (char)*p;
        }
    }
    tmp[j] = '\0';
    erg__sbuf_printf(b, "\"%s\"", tmp);
}
