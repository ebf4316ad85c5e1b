/* SPDX-License-Identifier: MIT */
/* Private: signature <-> JSON (jansson), shared by the calculus, trace, frontier and measure
 * modules. */
#ifndef ERG_CALCULUS_SIG_JSON_H
#define ERG_CALCULUS_SIG_JSON_H

#include <jansson.h>

#include "erg/signature.h"

/*
 * Decode a signature object. default_static_w is used when "static_power_w" is absent (pass NAN to
 * make it required). file and path name the location in messages ("sched.json",
 * "signatures.attn"). The result passes erg_signature_check. Errors: ERG_EPARSE, ERG_EINVAL.
 */
int erg__signature_from_json(const json_t *obj, double default_static_w, const char *file,
                             const char *path, erg_signature *out, erg_diag *diag);

/* Same, with "static_power_w" optional and left NAN when absent (a signature inside a schedule
 * that takes its static power from the device of each node that runs it). */
int erg__signature_from_json_opt(const json_t *obj, const char *file, const char *path,
                                 erg_signature *out, erg_diag *diag);

/* The members a signature object may have (NULL-terminated): the keys of docs/formats.md plus
 * "flags" (measurement flags, read into erg_signature.flags) and "channels" (written by erg
 * measure --signature; provenance, not read). */
extern const char *const erg__signature_keys[];

/* Whether key (n bytes, not necessarily terminated) is one of erg__signature_keys. */
int erg__signature_key_known(const char *key, size_t n);

/* ERG_OK when every member of obj is a signature key (or "erg" when allow_tag, as in a
 * signature/1 file); otherwise ERG_EPARSE naming "<path>.<member>: unknown member of a
 * signature", or "<path> is an operating set (points): use erg frontier" for "points". */
int erg__signature_check_members(const json_t *obj, int allow_tag, const char *file,
                                 const char *path, erg_diag *diag);

/* Measurement flags as a JSON array of their names (erg_flag_name order); NULL when out of
 * memory. */
json_t *erg__flags_to_json(unsigned flags);

/* Decode "flags": NULL or JSON null → 0; otherwise an array of flag names. Errors (ERG_EPARSE)
 * name "<path>.flags[i]" and the unknown name, with the known ones. */
int erg__flags_from_json(const json_t *v, const char *file, const char *path, unsigned *out,
                         erg_diag *diag);

/* Encode a signature as a new JSON object (no "erg" tag); NULL when out of memory. */
json_t *erg__signature_to_json(const erg_signature *sig);

/* The one reader of signature/1 files (erg_signature_read_file, erg_context_signature_read_file):
 * read path ("-" is stdin), refuse a gzip file or a Chrome/Kineto trace by name, parse, check the
 * tag (signature/1) and that every member is a signature key. On ERG_OK *root is the new object
 * (the caller decrefs it), *name the file's name for messages ("<stdin>" for "-"; path
 * otherwise) and *text, *len the file's text (the caller frees it), for erg__json_diag_locate
 * when a later check fails. Errors: as erg__read_file, ERG_EPARSE (a member's with its
 * file:line:col), ERG_EVERSION. */
int erg__signature_file_load(const char *path, json_t **root, const char **name, char **text,
                             size_t *len, erg_diag *diag);

/* The one writer of signature/1 files: o (an encoded signature, no tag; this takes it over, NULL
 * meaning out of memory) under {"erg": "signature/1"}, whole or not at all ("-" is stdout).
 * Errors: ERG_ENOMEM, those of erg__json_dump_file. */
int erg__signature_file_dump(const char *path, json_t *o, erg_diag *diag);

/* erg_signature_check on a signature whose static power may still be NaN (left to its device:
 * Axiom M1 is checked once the device is known). ERG_OK, or ERG_EINVAL in diag as
 * "file: path: what is wrong". */
int erg__signature_check_pending(const erg_signature *s, const char *file, const char *path,
                                 erg_diag *diag);

#endif
