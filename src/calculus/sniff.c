/* SPDX-License-Identifier: MIT */
/* Kind of a JSON file from its top level, for tag-first error messages (see sniff.h). */
#include "calculus/sniff.h"

#include <string.h>
#include <yajl/yajl_parse.h>

struct sn {
    erg__sniff *out;
    yajl_handle h;
    int depth;
    int top_array;
    int elements; /* top-level array elements started */
    int in_first; /* inside the first element (an object) of a top-level array */
    int want_tag; /* the next value at depth 1 is the "erg" member's */
};

static int value(struct sn *s, int is_string, const unsigned char *v, size_t n)
{
    if (s->depth == 1 && s->top_array)
        s->elements++;
    if (s->depth == 1 && s->want_tag) {
        s->want_tag = 0;
        s->out->tag_kind = is_string ? 1 : 2;
        if (is_string) {
            size_t k = n < sizeof s->out->tag - 1 ? n : sizeof s->out->tag - 1;
            memcpy(s->out->tag, v, k);
            s->out->tag[k] = '\0';
            if (memchr(s->out->tag, '\0', k))
                s->out->tag_kind = 2;
        }
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return value(ctx, 0, NULL, 0);
}

static int cb_bool(void *ctx, int b)
{
    (void)b;
    return value(ctx, 0, NULL, 0);
}

static int cb_number(void *ctx, const char *v, size_t n)
{
    (void)v;
    (void)n;
    return value(ctx, 0, NULL, 0);
}

static int cb_string(void *ctx, const unsigned char *v, size_t n)
{
    return value(ctx, 1, v, n);
}

static int start(struct sn *s, int is_map)
{
    if (s->depth == 0) {
        s->top_array = !is_map;
        s->out->top_object = is_map;
    } else if (s->depth == 1 && s->top_array && s->elements == 0 && is_map)
        s->in_first = 1;
    if (s->depth == 1)
        value(s, 0, NULL, 0); /* counts the element, or records a non-string tag */
    s->depth++;
    return 1;
}

static int cb_start_map(void *ctx)
{
    return start(ctx, 1);
}

static int cb_start_array(void *ctx)
{
    return start(ctx, 0);
}

static int cb_end(void *ctx)
{
    struct sn *s = ctx;
    s->depth--;
    if (s->depth == 1)
        s->in_first = 0;
    return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
    struct sn *s = ctx;
    if (s->depth == 1 && !s->top_array) {
        s->want_tag = n == 3 && memcmp(k, "erg", 3) == 0;
        if (s->want_tag) {
            size_t at = yajl_get_bytes_consumed(s->h);
            s->out->tag_off = at >= n + 2 ? at - n - 2 : 0;
        }
        if (n == 11 && memcmp(k, "traceEvents", 11) == 0)
            s->out->trace = 1;
    } else if (s->depth == 2 && s->in_first && n == 2 && memcmp(k, "ph", 2) == 0) {
        s->out->trace = 1;
    }
    return 1;
}

static const yajl_callbacks callbacks = {cb_null,   cb_bool,        NULL,         NULL,
                                         cb_number, cb_string,      cb_start_map, cb_key,
                                         cb_end,    cb_start_array, cb_end};

int erg__is_gzip(const char *buf, size_t len)
{
    return len >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b;
}

int erg__sniff_json(const char *buf, size_t len, erg__sniff *out)
{
    memset(out, 0, sizeof *out);
    struct sn s;
    memset(&s, 0, sizeof s);
    s.out = out;
    s.h = yajl_alloc(&callbacks, NULL, &s);
    if (!s.h)
        return -1;
    yajl_status st = yajl_parse(s.h, (const unsigned char *)buf, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(s.h);
    out->complete = st == yajl_status_ok && len > 0;
    yajl_free(s.h);
    return 0;
}
