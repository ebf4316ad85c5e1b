/* SPDX-License-Identifier: MIT */
/* Private: what kind of file was given where an erg file is expected, so that a signature, a
 * model or a Chrome/Kineto trace given to `erg compose` is named as such ("format tag ... expected
 * schedule/1", "convert it with erg trace import") instead of failing at its first member. */
#ifndef ERG_CALCULUS_SNIFF_H
#define ERG_CALCULUS_SNIFF_H

#include <stddef.h>

/* The remedy for a trace given where an erg file is expected. */
#define ERG__TRACE_HINT "convert it first with `erg trace import TRACE -o SCHEDULE.json`"

/* What a JSON text declares at its top level. */
typedef struct erg__sniff {
    int complete;   /* the whole text is well-formed JSON */
    int top_object; /* its top level is an object */
    int tag_kind;   /* 0 no top-level "erg" member, 1 a string, 2 another JSON value */
    char tag[64];   /* the string (truncated to 63 bytes) when tag_kind == 1 */
    size_t tag_off; /* byte offset of the "erg" key */
    int trace;      /* looks like a Chrome trace: a top-level "traceEvents" member, or a
                       top-level array whose first element is an object with "ph" */
} erg__sniff;

/* Whether buf starts with the gzip magic bytes 1f 8b (RFC 1952, Section 2.3.1). */
int erg__is_gzip(const char *buf, size_t len);

/* Scan a JSON text (yajl, no allocation beyond the parser) and fill out; on malformed JSON what
 * was seen before the error is kept and out->complete is 0. Returns 0, or -1 out of memory. */
int erg__sniff_json(const char *buf, size_t len, erg__sniff *out);

#endif
