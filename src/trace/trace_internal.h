/* SPDX-License-Identifier: MIT */
/* Private to the trace module: the imported trace, the string interner and the rules set. */
#ifndef ERG_TRACE_INTERNAL_H
#define ERG_TRACE_INTERNAL_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "erg/trace.h"

/* ---- string interner: each distinct string gets a dense uint32 id; strings live in an arena ----
 */
typedef struct erg__strtab {
    uint32_t *slots; /* open addressing; UINT32_MAX is empty */
    size_t cap;      /* power of two */
    char **str;      /* id → NUL-terminated string */
    uint32_t *len;   /* id → length */
    uint32_t *hash;  /* id → hash */
    size_t n, n_cap;
    char *chunk; /* current arena chunk */
    size_t chunk_used, chunk_cap;
    char **chunks; /* every chunk, to free */
    size_t n_chunks, chunks_cap;
} erg__strtab;

#define ERG__NOID UINT32_MAX

void erg__strtab_init(erg__strtab *t);
void erg__strtab_free(erg__strtab *t);
/* Id of s[0..len), adding it when new; ERG__NOID when out of memory. */
uint32_t erg__strtab_intern(erg__strtab *t, const char *s, size_t len);
/* Id of s or ERG__NOID when absent (never adds). */
uint32_t erg__strtab_find(const erg__strtab *t, const char *s, size_t len);
static inline const char *erg__strtab_get(const erg__strtab *t, uint32_t id)
{
    return t->str[id];
}

/* ---- the imported trace ---- */
/* Longest pid, tid, device or stream id kept whole (bytes with the NUL): a longer one is refused,
 * never cut (two GPUs whose UUIDs share a 31-byte prefix once became one device). */
#define ERG__KEY_MAX 128
/* Longest JSON string or number the reader accepts (bytes): a kernel name is a few kB at most; a
 * longer token is refused at once instead of being buffered (yajl re-scans a token that spans
 * chunks, so a 128 MiB name took 15 s, and a 1.5 MB .gz holding a 1.5 GiB name half an hour). */
#define ERG__TOKEN_MAX (1u << 20)
typedef struct erg__act {
    int64_t start_ns; /* as written in the file (µs × 1000), before alignment */
    int64_t dur_ns;
    uint32_t name;   /* id in trace->names */
    uint32_t device; /* index in trace->devs */
    uint32_t stream; /* id in trace->misc (stream text) */
    uint8_t cat;     /* erg_trace_category */
} erg__act;

typedef struct erg__dev {
    unsigned file; /* index of the file that declared it */
    int rank;
    char key[ERG__KEY_MAX];      /* device text within the file (args.device or pid) */
    char id[ERG_SIG_DEVICE_MAX]; /* "rank<R>/gpu<D>" */
    char name[ERG_SIG_NAME_MAX]; /* from deviceProperties, "" when absent */
} erg__dev;

typedef struct erg__unknown {
    uint32_t name; /* id in trace->misc */
    size_t count;
} erg__unknown;

struct erg_trace {
    erg__strtab names;    /* activity names */
    erg__strtab misc;     /* streams, pid/tid keys, unknown category names */
    erg__strtab devkeys;  /* "<file>\x1e<key>" of every device, hashed */
    uint32_t *dev_of_key; /* device index of each devkeys id */
    size_t dev_of_key_cap;
    erg__act *acts;
    size_t n_acts, acts_cap;
    erg__dev *devs;
    size_t n_devs, devs_cap;
    int *file_rank;               /* rank of each file */
    unsigned char *file_has_rank; /* 1 when distributedInfo gave it */
    char first_file[256];         /* name of the first file read, for messages */
    size_t n_files, files_cap;
    erg__unknown *unknown;
    size_t n_unknown, unknown_cap;
    erg_trace_stats stats;
    int rank_from_order; /* files take ranks 0..n-1 in the order read, distributedInfo ignored */
    int yajl_only;       /* tests: no fast tokenizer (erg__trace_set_yajl_only) */
    size_t fast_files;   /* files the fast tokenizer read to the end without bailing out (tests) */
    /* the first GPU event dropped for its ts/dur (erg_trace_first_dropped): "file:line:col" and
     * what was wrong; drop_where[0] == 0 when none was */
    char drop_where[320];
    char drop_why[160];
};

/* The rank of a new file: has_rank, rank from its distributedInfo (refused when taken: ERG_EINVAL),
 * else the first rank not taken from the file's position on (parse.c). */
int erg__trace_pick_rank(const struct erg_trace *tr, int has_rank, int rank, const char *file,
                         int *out, erg_diag *diag);
/* Set a device's rank and its id "rank<R>/gpu<D>" from its key. */
void erg__dev_set_id(erg__dev *d, int rank);
/* Append a file (rank, whether distributedInfo gave it, name) to tr. ERG_ENOMEM. */
int erg__trace_add_file(struct erg_trace *tr, int rank, int has_rank, const char *file,
                        erg_diag *diag);

/* Post-process the activities [first, n_acts) of one file: count out-of-order starts and
 * overlaps on one stream (parse.c). */
void erg__trace_check_streams(struct erg_trace *tr, size_t first);

/* ---- the fast JSON tokenizer (jscan.c) ----
 * Calls yajl's callbacks as yajl would, for a subset of the JSON text yajl accepts; anything else
 * makes it bail out (ERG__JSCAN_BAIL), and the caller then reads the whole file with yajl, whose
 * verdict stands. */
typedef struct erg__jscan erg__jscan;
enum { ERG__JSCAN_OK = 0, ERG__JSCAN_BAIL = 1 };
/* NULL when out of memory. */
erg__jscan *erg__jscan_new(const yajl_callbacks *cb, void *ctx);
void erg__jscan_free(erg__jscan *s);
/* Tokenize buf[0, len). *used is how many bytes were consumed: the rest (an unfinished token, at
 * most ERG__TOKEN_MAX + 2 bytes) must be given again at the start of the next call, followed by
 * the bytes after it. eof: no more bytes follow (then the document must be complete). */
int erg__jscan_feed(erg__jscan *s, const unsigned char *buf, size_t len, int eof, size_t *used);
/* From a callback inside an object: no more callbacks until that object ends (its end_map is
 * still called); used for events whose remaining fields cannot matter. A "ph" key in the rest of
 * that object makes the tokenizer bail out, and so does a "cat" key when watch_cat (the event's
 * category was read and decided the skip). */
void erg__jscan_skip_object(erg__jscan *s, int watch_cat);
/* From a map-key callback: the value of that key needs no callbacks (a field erg does not read);
 * the tokenizer may then check it and move past it without calling back. It calls back as usual
 * when it cannot (at the end of the bytes, or on anything it leaves to its general path). */
void erg__jscan_skip_value(erg__jscan *s);
/* Whether the top-level value is complete. */
int erg__jscan_complete(const erg__jscan *s);
/* Read every file with yajl only (tests compare the two readers). */
void erg__trace_set_yajl_only(struct erg_trace *tr, int on);

/* ---- rules ---- */
typedef struct erg__dev_rule {
    char *match;                         /* glob on the device name */
    double static_power_w, idle_power_w; /* idle NAN when absent */
    erg_grade grade;                     /* of these figures; default estimator */
} erg__dev_rule;

typedef struct erg__rule {
    char *category; /* glob */
    char *name;     /* glob, or NULL when regex is used */
    int has_regex;
    regex_t regex;
    char *device; /* glob on the device name, NULL = any */
    int has_signature;
    double dynamic_power_w, dynamic_power_sd_w; /* power rules */
    erg_signature sig;                          /* signature rules */
    erg_grade grade;
} erg__rule;

struct erg_rules {
    char name[256]; /* the file read, or "rules/default.json (built in)" */
    erg__dev_rule *devices;
    size_t n_devices;
    int has_default;
    erg__dev_rule default_device;
    erg__rule *rules;
    size_t n_rules;
};

/* Index of the first rule matching (category name, activity name, device name) or -1. */
long erg__rules_match(const struct erg_rules *rules, const char *category, const char *name,
                      const char *device_name);

/* The device entry for a device name ("" when unknown): a matching entry, else default_device,
 * else NULL. */
const erg__dev_rule *erg__rules_device(const struct erg_rules *rules, const char *device_name);

#endif
