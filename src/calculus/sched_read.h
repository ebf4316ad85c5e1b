/* SPDX-License-Identifier: MIT */
/*
 * Private: the one schedule/1 reader, shared by calculus (erg_schedule_read_file) and frontier
 * (erg_opsched_read_file). It streams the file (yajl): checks the format tag, takes "nodes" and
 * "edges" element by element (errors name file:line:column), decodes the small members
 * ("devices", "signatures", "expr", "transitions") with jansson, and hands every part to a
 * builder. The element payload (a signature, or an operating set of points) is the builder's:
 * the reader names it and resolves nothing inside it. Order of the calls: devices, elements,
 * transitions, then the expression bottom-up (root last) or the nodes and then the edges.
 */
#ifndef ERG_CALCULUS_SCHED_READ_H
#define ERG_CALCULUS_SCHED_READ_H

#include <jansson.h>
#include <stdint.h>

#include "erg/error.h"

enum erg__sched_op { ERG__SCHED_SEQ, ERG__SCHED_PAR, ERG__SCHED_MULTI };

/* Builder flags. */
#define ERG__SB_DEVICES_OPTIONAL 1u /* "devices" may be absent (operating schedules) */
#define ERG__SB_OPERATING_SETS 2u   /* a signature may hold "points": not refused while streaming */

/* Hooks return ERG_OK or a status. Those given file and jpath (the JSON path, "signatures.a",
 * "expr.seq[1]") set the diagnostic themselves; those given sub fill it with a detail that the
 * reader prefixes with the place (file:line:col and the JSON path). */
struct erg__sched_builder {
    void *ctx;
    unsigned flags;
    int (*device)(void *ctx, const char *id, double static_power_w, double idle_power_w,
                  erg_diag *sub);
    /* signatures.<name> = value (an object, or the path of a signature/1 file: dir is the
     * folder a relative path is taken from). */
    int (*element)(void *ctx, const char *name, const json_t *value, const char *dir,
                   const char *file, const char *jpath, erg_diag *diag);
    /* The "transitions" member; NULL: the reader refuses it (they belong to operating sets). */
    int (*transitions)(void *ctx, const json_t *value, const char *file, erg_diag *diag);
    int (*leaf)(void *ctx, const char *name, const char *file, const char *jpath, uint32_t *id,
                erg_diag *diag);
    int (*idle)(void *ctx, const char *device, double time_s, const char *file, const char *jpath,
                uint32_t *id, erg_diag *diag);
    int (*op)(void *ctx, enum erg__sched_op op, const uint32_t *kids, uint32_t n, uint32_t *id,
              const char *file, erg_diag *diag);
    int (*root)(void *ctx, uint32_t id);
    int (*node)(void *ctx, const char *id, const char *sig, const char *device, double start_s,
                erg_diag *sub);
    int (*edge)(void *ctx, const char *from, const char *to, erg_diag *sub);
    /* Optional (NULL: none): the edge (from, to) comes soon; a hint to start loading what its
     * lookup needs (the reader calls it EDGE_HINT_AHEAD edges before edge()). */
    void (*edge_hint)(void *ctx, const char *from, const char *to);
};

/* Read path ("-": standard input) into builder b. ERG_OK, or the first error (ERG_EPARSE,
 * ERG_EVERSION, ERG_EINVAL, ERG_EIO, ERG_ENOMEM, or a hook's status) in diag. */
int erg__sched_read(const char *path, const struct erg__sched_builder *b, erg_diag *diag);

/* The file a signature path names: p itself when absolute, else dir/p. */
void erg__sched_signature_path(const char *dir, const char *p, char *full, size_t size);

#endif
