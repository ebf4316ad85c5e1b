/* SPDX-License-Identifier: MIT */
#include "core/jwrite.h"
#include "erg/stats.h"

#include "core/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERG__JW_BUF (64u * 1024u)

int erg__jw_init(erg__jw *w, erg__jw_sink sink, void *ctx)
{
    memset(w, 0, sizeof *w);
    w->sink = sink;
    w->ctx = ctx;
    w->buf = malloc(ERG__JW_BUF);
    if (!w->buf)
        w->err = ENOMEM;
    return w->err;
}

static void flush(erg__jw *w)
{
    if (w->n && !w->err)
        w->err = w->sink(w->ctx, w->buf, w->n);
    w->n = 0;
}

int erg__jw_finish(erg__jw *w)
{
    if (w->buf)
        flush(w);
    free(w->buf);
    w->buf = NULL;
    return w->err;
}

static void put(erg__jw *w, const char *s, size_t len)
{
    if (w->err)
        return;
    if (w->n + len > ERG__JW_BUF) {
        flush(w);
        if (len > ERG__JW_BUF) {
            if (!w->err)
                w->err = w->sink(w->ctx, s, len);
            return;
        }
    }
    memcpy(w->buf + w->n, s, len);
    w->n += len;
}

static void indent(erg__jw *w, int depth)
{
    static const char spaces[] = "                                                                ";
    put(w, "\n", 1);
    size_t n = 2 * (size_t)depth;
    while (n > 0) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        put(w, spaces, k);
        n -= k;
    }
}

/* Before a value: a key's value follows it directly; a value in an array (or the top-level one)
 * is put on its own line after a comma, as jansson's dump_indent does. */
static void before_value(erg__jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0)
        return;
    if (w->items[w->depth]++)
        put(w, ",", 1);
    indent(w, w->depth);
}

static void open_container(erg__jw *w, char c)
{
    before_value(w);
    if (w->depth >= ERG__JW_DEPTH_MAX) {
        if (!w->err)
            w->err = EINVAL;
        return;
    }
    put(w, &c, 1);
    w->items[++w->depth] = 0;
}

static void close_container(erg__jw *w, char c)
{
    if (w->depth <= 0 || w->after_key) {
        if (!w->err)
            w->err = EINVAL;
        return;
    }
    if (w->items[w->depth])
        indent(w, w->depth - 1);
    put(w, &c, 1);
    w->depth--;
}

void erg__jw_begin_object(erg__jw *w)
{
    open_container(w, '{');
}

void erg__jw_end_object(erg__jw *w)
{
    close_container(w, '}');
}

void erg__jw_begin_array(erg__jw *w)
{
    open_container(w, '[');
}

void erg__jw_end_array(erg__jw *w)
{
    close_container(w, ']');
}

int erg__utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            cp = c & 0x07;
        } else {
            return 0; /* a continuation byte, an overlong lead (C0, C1) or beyond U+10FFFF */
        }
        if (len - i < n)
            return 0;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n;
    }
    return 1;
}

/* A JSON string as jansson's dump_string writes it without JSON_ENSURE_ASCII or
 * JSON_ESCAPE_SLASH: '"', '\\' and control characters escaped, the rest as it is. */
static void put_string(erg__jw *w, const char *s)
{
    size_t len = strlen(s);
    if (!erg__utf8_valid(s, len)) {
        if (!w->err)
            w->err = EILSEQ;
        return;
    }
    put(w, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(w, s + run, i - run);
        run = i + 1;
        char esc[8];
        const char *t = esc;
        switch (c) {
        case '"':
            t = "\\\"";
            break;
        case '\\':
            t = "\\\\";
            break;
        case '\b':
            t = "\\b";
            break;
        case '\f':
            t = "\\f";
            break;
        case '\n':
            t = "\\n";
            break;
        case '\r':
            t = "\\r";
            break;
        case '\t':
            t = "\\t";
            break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", c);
            break;
        }
        put(w, t, strlen(t));
    }
    put(w, s + run, len - run);
    put(w, "\"", 1);
}

void erg__jw_key(erg__jw *w, const char *key)
{
    if (w->depth <= 0 || w->after_key) {
        if (!w->err)
            w->err = EINVAL;
        return;
    }
    if (w->items[w->depth]++)
        put(w, ",", 1);
    indent(w, w->depth);
    put_string(w, key);
    put(w, ": ", 2);
    w->after_key = 1;
}

void erg__jw_string(erg__jw *w, const char *s)
{
    before_value(w);
    put_string(w, s);
}

void erg__jw_real(erg__jw *w, double v)
{
    before_value(w);
    if (!isfinite(v)) {
        put(w, "null", 4);
        return;
    }
    /* jansson's jsonp_dtostr layout, with the shortest digits that read back as v (what
     * erg_json_shorten_reals makes of a dumped tree, so both files stay the same bytes) */
    char b[64];
    int n = erg_format_double(v, b, sizeof b);
    if (n < 0 || (size_t)n >= sizeof b - 3) {
        if (!w->err)
            w->err = EINVAL;
        return;
    }
    size_t len = (size_t)n;
    char *comma = strchr(b, ','); /* a locale's decimal comma */
    if (comma)
        *comma = '.';
    if (!strchr(b, '.') && !strchr(b, 'e')) {
        b[len++] = '.';
        b[len++] = '0';
        b[len] = '\0';
    }
    char *start = strchr(b, 'e');
    if (start) {
        start++;
        char *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - b) + 1);
            len -= (size_t)(end - start);
        }
    }
    put(w, b, len);
}

void erg__jw_integer(erg__jw *w, json_int_t v)
{
    before_value(w);
    char b[32];
    int n = snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, v);
    put(w, b, (size_t)n);
}

void erg__jw_json(erg__jw *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        erg__jw_begin_object(w);
        const char *k;
        json_t *x;
        json_object_foreach(erg__json_mut(v), k, x)
        {
            erg__jw_key(w, k);
            erg__jw_json(w, x);
        }
        erg__jw_end_object(w);
        break;
    }
    case JSON_ARRAY: {
        erg__jw_begin_array(w);
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) erg__jw_json(w, x);
        erg__jw_end_array(w);
        break;
    }
    case JSON_STRING:
        erg__jw_string(w, json_string_value(v));
        break;
    case JSON_INTEGER:
        erg__jw_integer(w, json_integer_value(v));
        break;
    case JSON_REAL:
        erg__jw_real(w, json_real_value(v));
        break;
    case JSON_TRUE:
        before_value(w);
        put(w, "true", 4);
        break;
    case JSON_FALSE:
        before_value(w);
        put(w, "false", 5);
        break;
    default:
        before_value(w);
        put(w, "null", 4);
        break;
    }
}

void erg__jw_newline(erg__jw *w)
{
    put(w, "\n", 1);
}
