/* SPDX-License-Identifier: MIT */
/*
 * Private: the one schedule/1 reader, shared by calculus (erg_schedule_read_file) and frontier
 * (erg_opsched_read_file). It streams the file (yajl): checks the format tag, takes "nodes" and
 * "edges" element by element (errors name file:line:column), decodes "signatures" as it streams
 * when the builder takes decoded signatures (the signature hook; jansson otherwise, and for any
 * member that would be refused), the other small members ("devices", "expr", "transitions")
 * with jansson, and hands every part to a builder. The element payload (a signature, or an
 * operating set of points) is the builder's: the reader names it and resolves nothing inside it.
 * Node ids are the reader's: it hashes each once, refuses a repeated one ("nodes[i]: node \"a\" is
 * defined twice") and an edge to an unknown one ("edges[k]: edge [\"a\", \"b\"]: no node \"b\""),
 * and hands the edges over as node numbers. Order of the calls: devices, elements, transitions,
 * then the expression bottom-up (root last) or the nodes and then the edges.
 */
#ifndef ERG_CALCULUS_SCHED_READ_H
#define ERG_CALCULUS_SCHED_READ_H

#include <jansson.h>
#include <stdint.h>

#include "erg/error.h"
#include "erg/signature.h"

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
    /* nodes[i], called for i = 0, 1, ... in file order once the other members are in: id (len
     * bytes, NUL-terminated; the reader has checked that no earlier node has it), the signature
     * name, the device name or NULL, start_s or NAN. sig_key and dev_key (NONE: no device) are
     * small numbers, one per distinct name in the file, so that a builder may keep what it
     * looked up for a name. */
    int (*node)(void *ctx, const char *id, size_t len, const char *sig, uint32_t sig_key,
                const char *device, uint32_t dev_key, double start_s, erg_diag *sub);
    /* All edges at once, after the nodes: edges[k] = {from, to}, node numbers in the order of
     * node(); the array (malloc'd, room for cap pairs) is the builder's from then on, whether it
     * succeeds or not. Not called when there are no edges. */
    int (*edges)(void *ctx, uint32_t (*edges)[2], size_t n, size_t cap, erg_diag *sub);
    /* Optional (NULL: every element goes through element()): signatures.<name> = an object the
     * reader decoded while streaming, without a JSON tree, as erg__signature_from_json_opt does
     * (static_power_w NAN when absent; not yet checked with erg_signature_check, which needs the
     * device's static power). The reader calls it, in file order and in place of element(),
     * only when every element of "signatures" is such an object that decodes cleanly; otherwise
     * all of them go through element() as before, so that the messages are the same. Not used
     * with ERG__SB_OPERATING_SETS. */
    int (*signature)(void *ctx, const char *name, const erg_signature *sig, const char *file,
                     const char *jpath, erg_diag *diag);
};

/* Read path ("-": standard input) into builder b. ERG_OK, or the first error (ERG_EPARSE,
 * ERG_EVERSION, ERG_EINVAL, ERG_EIO, ERG_ENOMEM, or a hook's status) in diag. */
int erg__sched_read(const char *path, const struct erg__sched_builder *b, erg_diag *diag);

/* The file a signature path names: p itself when absolute, else dir/p. */
void erg__sched_signature_path(const char *dir, const char *p, char *full, size_t size);

#endif
