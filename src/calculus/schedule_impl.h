/* SPDX-License-Identifier: MIT */
/* Private: the layout of erg_schedule, shared by schedule.c (builder, composition) and
 * sched_json.c (schedule/1 reader and writer). */
#ifndef ERG_CALCULUS_SCHEDULE_IMPL_H
#define ERG_CALCULUS_SCHEDULE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "calculus/strmap.h"
#include "erg/calculus.h"

struct erg__device {
    char id[ERG_SIG_DEVICE_MAX];
    double static_power_w;
    double idle_power_w; /* the draw of an idle element; = static_power_w when not given */
};

struct erg__node {
    uint32_t sig;    /* index into signatures */
    uint32_t device; /* index into devices */
    size_t id_off;   /* offset of the id in ids */
    double start_s;  /* fixed start or NAN */
};

enum erg__expr_kind { ERG__EX_SIG, ERG__EX_IDLE, ERG__EX_SEQ, ERG__EX_PAR, ERG__EX_MULTI };

struct erg__expr {
    uint8_t kind;
    uint32_t ref;   /* signature (SIG) or device (IDLE) index */
    uint32_t first; /* first child in expr_kids (SEQ, PAR, MULTI) */
    uint32_t n;     /* number of children */
    double time_s;  /* IDLE */
};

struct erg_schedule {
    struct erg__device *devices;
    size_t n_devices, cap_devices;
    erg__strmap device_map;

    erg_signature *sigs;
    size_t n_sigs, cap_sigs;
    erg__strmap sig_map;

    struct erg__node *nodes;
    size_t n_nodes, cap_nodes;
    erg__strmap node_map;
    char *ids; /* NUL-separated node ids */
    size_t ids_len, ids_cap;

    uint32_t (*edges)[2];
    size_t n_edges, cap_edges;

    struct erg__expr *expr;
    size_t n_expr, cap_expr;
    uint32_t *expr_kids;
    size_t n_kids, cap_kids;
    int has_expr;
    uint32_t expr_root;
};

/* Grow *arr (element size elem) so that it holds at least need elements. 0 or -1 (ENOMEM). */
int erg__grow(void **arr, size_t *cap, size_t need, size_t elem);

uint32_t erg__device_index(const erg_schedule *s, const char *id);
uint32_t erg__sig_index(const erg_schedule *s, const char *name);
const char *erg__node_id(const erg_schedule *s, uint32_t node);

/* Append node (id: len bytes, no NUL inside; sig, device: valid indexes, checked as
 * erg_schedule_add_node checks them; start_s NAN or finite >= 0) without hashing its id: for a
 * reader that checked the ids unique itself. The node map takes it in when a lookup by id first
 * needs it. ERG_OK or ERG_ENOMEM. */
int erg__schedule_append_node(erg_schedule *s, const char *id, size_t len, uint32_t sig,
                              uint32_t device, double start_s);

/* Append an expression node; returns its index or ERG__STRMAP_NONE when out of memory. */
uint32_t erg__expr_add(erg_schedule *s, const struct erg__expr *e);

/* Relative tolerance within which a signature's static power equals its device's (Axiom P2). */
#define ERG__P2_REL 1e-9

/* Whether a signature's static power sig_w (NAN: none stated) agrees with its device's dev_w. */
int erg__static_power_agrees(double sig_w, double dev_w);

/* A test probe of DAG composition (tests only; NULL otherwise): with general set, composition
 * takes its general paths only (the step-by-step walks of max_rec, the radix sort of starts), so
 * that a test can cross-check the fast ones; either way each call adds how often each path ran. */
struct erg__compose_probe {
    int general;
    unsigned long fast_keys, general_keys; /* joins keyed by keys_fast, by the general walks */
    unsigned long bucket_sorts, radix_sorts;
};
extern struct erg__compose_probe *erg__compose_probe;

#endif
