/* SPDX-License-Identifier: MIT */
/*
 * Private streaming JSON writer: elements are written as they are produced, so a document of
 * 10^6 elements needs no tree in memory. The text is jansson's json_dumps with
 * JSON_INDENT(2) | JSON_REAL_PRECISION(17) after erg_json_shorten_reals, byte for byte (objects
 * keep the order written; reals as the shortest round-trip digits (erg_format_double) with ".0"
 * added to integral values and the exponent's '+' and leading zeros dropped; non-finite reals as
 * null, as erg__json_set_number writes them), so that a streamed file and one dumped from a tree
 * are the same file (tests/trace/test_report.c compares them).
 */
#ifndef ERG_CORE_JWRITE_H
#define ERG_CORE_JWRITE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Where the text goes: returns 0 or an errno value. */
typedef int (*erg__jw_sink)(void *ctx, const char *data, size_t len);

#define ERG__JW_DEPTH_MAX 64

typedef struct erg__jw {
    erg__jw_sink sink;
    void *ctx;
    char *buf; /* ERG__JW_BUF bytes, flushed to sink when full */
    size_t n;
    int depth;                           /* open containers */
    size_t items[ERG__JW_DEPTH_MAX + 1]; /* members written in each open container */
    int after_key;                       /* a key was written, its value comes next */
    int err; /* first error: the sink's errno, EILSEQ (a string that is not UTF-8), EINVAL
              * (misuse: too deep, a value where a key is due), ENOMEM */
} erg__jw;

/* Start a document. ENOMEM or 0. */
int erg__jw_init(erg__jw *w, erg__jw_sink sink, void *ctx);
/* Flush what is buffered and free the buffer; returns w->err (0 when everything was written). */
int erg__jw_finish(erg__jw *w);

void erg__jw_begin_object(erg__jw *w);
void erg__jw_end_object(erg__jw *w);
void erg__jw_begin_array(erg__jw *w);
void erg__jw_end_array(erg__jw *w);
/* A member's key inside an object; its value follows. */
void erg__jw_key(erg__jw *w, const char *key);
void erg__jw_string(erg__jw *w, const char *s);
/* A real as erg writes json_real (shortest round-trip digits); null when not finite. */
void erg__jw_real(erg__jw *w, double v);
void erg__jw_integer(erg__jw *w, json_int_t v);
/* A jansson value, written as json_dumps would write it at this depth. */
void erg__jw_json(erg__jw *w, const json_t *v);

/* A line break after the top-level value (erg__json_dump_file ends its files with one). */
void erg__jw_newline(erg__jw *w);

/* Whether s[0, len) is UTF-8 as jansson accepts it in json_string (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
int erg__utf8_valid(const char *s, size_t len);

#endif
