/* SPDX-License-Identifier: MIT */
/* Private to the frontier module: the operating schedule's representation. */
#ifndef ERG_FRONTIER_OPSCHED_H
#define ERG_FRONTIER_OPSCHED_H

#include <stddef.h>
#include <stdint.h>

#include "calculus/strmap.h"
#include "erg/frontier.h"

#define FR_NONE ((size_t)-1)

struct fr_point {
    erg_signature sig; /* s, T, d at (κ, ω); omega holds {"device":..,"element":..} */
    int group;         /* interned (device, ω_dev) */
};

struct fr_element {
    char name[ERG_SIG_NAME_MAX];
    char device[ERG_SIG_DEVICE_MAX];
    size_t n, cap;
    struct fr_point *pts;
};

struct fr_group {
    char device[ERG_SIG_DEVICE_MAX];
    char *omega; /* compact JSON of ω_dev, "" when none */
    char *key;   /* device, '\x1f', omega: the hash key */
};

struct fr_device {
    char id[ERG_SIG_DEVICE_MAX];
    double static_power_w;
    double idle_power_w; /* draw of an idle device (gaps in a DAG, idle elements) */
};

struct fr_transition {
    int from, to; /* groups on one device */
    char key[24]; /* "from:to": the hash key */
    erg_signature sig;
};

struct fr_expr {
    erg_expr_op op;
    size_t elem; /* leaf: element index */
    size_t n;    /* operands */
    size_t *kids;
};

struct fr_node {
    size_t id; /* offset of its id in node_ids (erg__fr_node_id) */
    size_t elem;
    uint32_t device; /* where it runs, the node's own device else its element's: an index into
                        node_dev (erg__fr_node_device) */
};

struct erg_opsched {
    size_t n_dev, cap_dev;
    struct fr_device *dev;
    size_t n_elem, cap_elem;
    struct fr_element *elem;
    size_t n_group, cap_group;
    struct fr_group *group;
    size_t n_tr, cap_tr;
    struct fr_transition *tr;
    size_t n_expr, cap_expr;
    struct fr_expr *expr;
    size_t n_node, cap_node;
    struct fr_node *node;
    char *node_ids; /* NUL-separated node ids */
    size_t node_ids_len, node_ids_cap;
    char (*node_dev)[ERG_SIG_DEVICE_MAX]; /* the distinct devices nodes run on */
    size_t n_node_dev, cap_node_dev;
    size_t n_edge, cap_edge;
    uint32_t (*edge)[2]; /* node indexes (from, to) */
    /* Hashed names (O(1) lookups, calculus/strmap.h): elements, devices, nodes (nodes 0 ..
     * node_map.n - 1: those erg__fr_append_node adds are hashed when a lookup first needs them),
     * (device, ω_dev) groups, transitions by (from, to), the first element on each device, and
     * node_dev. */
    erg__strmap elem_map, dev_map, node_map, group_map, tr_map, elemdev_map, node_dev_map;
    char *source; /* the schedule/1 file it was read from (erg_opsched_read_file), else NULL:
                     frontier errors about an expression or a node are placed in it */
};

/* Grow *arr (element size sz) so that it holds at least need; ERG_OK or ERG_ENOMEM. */
int erg__fr_grow(void **arr, size_t *cap, size_t need, size_t sz);
size_t erg__fr_find_element(const erg_opsched *os, const char *name);
size_t erg__fr_find_device(const erg_opsched *os, const char *id);
/* The node with this id, or FR_NONE (hashing the ids of appended nodes first: ENOMEM there reads
 * as FR_NONE with *oom set). */
size_t erg__fr_find_node(erg_opsched *os, const char *id, int *oom);
/* Node k's id and the device it runs on. */
const char *erg__fr_node_id(const erg_opsched *os, size_t k);
const char *erg__fr_node_device(const erg_opsched *os, size_t k);
/* Append a node (id: len bytes, 1 <= len < ERG_SIG_NAME_MAX, that no node has; elem: a valid
 * element; device: the node's own device, NULL or "" for its element's, shorter than
 * ERG_SIG_DEVICE_MAX) without hashing its id: for the schedule/1 reader, which checked the ids
 * itself. ERG_OK or ERG_ENOMEM. */
int erg__fr_append_node(erg_opsched *os, const char *id, size_t len, size_t elem,
                        const char *device);
/* The declared transition from group `from` to group `to` (same device), or NULL. */
const struct fr_transition *erg__fr_find_tr(const erg_opsched *os, int from, int to);
/* Intern (device, ω_dev JSON); returns the id or -1 when out of memory. */
int erg__fr_group(erg_opsched *os, const char *device, const char *omega);
/* Static power of a device: declared, else the first point on it, else 0. */
double erg__fr_device_static_w(const erg_opsched *os, const char *device);
/* Idle power of a device: declared idle_power_w, else its static power. */
double erg__fr_device_idle_w(const erg_opsched *os, const char *device);

/* Expression frontier (compose.c) and DAG frontier (dag.c). */
int erg__fr_expr_frontier(const erg_opsched *os, const erg_frontier_options *opts,
                          erg_frontier *out, erg_diag *diag);
int erg__fr_dag_frontier(const erg_opsched *os, const erg_frontier_options *opts, erg_frontier *out,
                         erg_diag *diag);

#endif
