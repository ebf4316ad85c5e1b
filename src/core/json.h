/* SPDX-License-Identifier: MIT */
/*
 * Private JSON helpers over jansson, shared by every module that reads or writes erg files.
 * Every reader reports problems as "<file>:<line>:<col>" in erg_diag.where. jansson keeps no
 * position for decoded values, so checks after parsing name the file and the JSON path
 * ("signatures.attn.time_s"); a reader that still holds the text turns that into the value's
 * line and column with erg__json_diag_locate (the signature/1 readers do).
 */
#ifndef ERG_CORE_JSON_H
#define ERG_CORE_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "erg/error.h"
#include "erg/stats.h" /* erg_json_dumps: every JSON text erg writes */

#include <stdint.h>

/* jansson's iteration macros take a json_t *; a reader holds const json_t *. The cast goes
 * through uintptr_t so that -Wcast-qual (on for the modules that follow it) stays quiet: the
 * iteration only reads. */
static inline json_t *erg__json_mut(const json_t *v)
{
    return (json_t *)(uintptr_t)v;
}

/* Load a JSON document from path ("-" reads stdin). On a syntax error, diag->where is
 * "path:line:col" and diag->detail jansson's text. Returns ERG_OK, ERG_ENOENT, ERG_EIO, ERG_EPARSE.
 */
int erg__json_load_file(const char *path, json_t **out, erg_diag *diag);

/* Same, from a buffer; name is used in messages. */
int erg__json_load_buffer(const char *buf, size_t len, const char *name, json_t **out,
                          erg_diag *diag);

/* Check the "erg" tag: must be "<kind>/<major>" with major == 1 (or a minor "1.x").
 * Missing tag with required=0 is accepted. ERG_EPARSE / ERG_EVERSION. */
int erg__json_check_tag(const json_t *root, const char *kind, int required, const char *file,
                        erg_diag *diag);

/* Read a number member. flags: ERG_JSON_REQUIRED, ERG_JSON_NONNEG, ERG_JSON_POSITIVE.
 * Absent and optional: *out unchanged, returns ERG_OK. Not a number, NaN/Inf (JSON cannot hold
 * them, but strings like "NaN" are rejected as not numbers), negative when forbidden: ERG_EPARSE
 * naming file and path.key. */
enum { ERG_JSON_REQUIRED = 1, ERG_JSON_NONNEG = 2, ERG_JSON_POSITIVE = 4 };
int erg__json_number(const json_t *obj, const char *key, int flags, double *out, const char *file,
                     const char *path, erg_diag *diag);

/* Read a whole-number member in [0, max] (ERG_JSON_POSITIVE: [1, max]), for counts that become
 * unsigned or size_t. Absent and optional: *out unchanged, returns ERG_OK. Not an integer (2.5,
 * "3"), negative or above max: ERG_EPARSE naming file and path.key (never a wrapped count). */
int erg__json_count(const json_t *obj, const char *key, int flags, json_int_t max, json_int_t *out,
                    const char *file, const char *path, erg_diag *diag);

/* Read a string member into buf (size bytes). Absent and optional: buf unchanged. Too long or not
 * a string: ERG_EPARSE. */
int erg__json_string(const json_t *obj, const char *key, int flags, char *buf, size_t size,
                     const char *file, const char *path, erg_diag *diag);

/* Write a JSON document to path whole or not at all (temporary file + rename). path "-" writes
 * stdout. flags are jansson's dump flags; a trailing newline is added. */
int erg__json_dump_file(const json_t *root, const char *path, size_t flags, erg_diag *diag);

/* Where the value at path lies in the JSON text, which jansson does not keep for decoded values:
 * path is member names and [i] indices ("contexts[2].corunners[1]"; "" the root value); *line
 * and *col (1-based, the column in bytes) are its first character's. Returns 1 when found, 0
 * when not (no such value, or the text is not well-formed where the walk goes). Reads the text
 * only; meant for the error path, after a check on the decoded value failed. */
int erg__json_locate(const char *text, size_t len, const char *path, size_t *line, size_t *col);

/* A reader's check failed with diag = ERG_EPARSE, where = name (no position yet) and detail
 * "<root><path>: what is wrong" (root: the label the reader gave the document, e.g. "signature",
 * followed by '.', '[' or ':'): set where to "name:line:col" of that value in text, the detail
 * kept. Nothing changes when the value is not found or diag is another error. */
void erg__json_diag_locate(erg_diag *diag, const char *text, size_t len, const char *name,
                           const char *root);

/* A reader's check failed with where = name (no position yet) and detail "<path>: what is wrong",
 * path from the document's root ("ops.gemm.fit[2]"): set where to "name:line:col" of the value
 * path names in text, or of its nearest enclosing value when it names none (a missing member, a
 * key holding '.'; a missing member of the root, "hidden_size: ...", gives the root object). The
 * detail is kept. Nothing changes when no part of the path is found ("z.b" with no "z"), the
 * first part is not a member name (letters, digits, '_', '-'), or diag is out of memory or
 * already has a position. For the error path only. */
void erg__json_diag_place(erg_diag *diag, const char *text, size_t len, const char *name);

/* erg__json_diag_place on the file at path, read again (readers that keep no text: the good
 * file's reading is unchanged). Standard input ("-", gone by now) and unreadable files are left
 * without a position. */
void erg__json_diag_place_file(erg_diag *diag, const char *path);

/* Add a number member, writing non-finite values as null (JSON has no NaN). Returns 0/-1. */
int erg__json_set_number(json_t *obj, const char *key, double v);

#endif
