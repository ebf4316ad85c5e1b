/* SPDX-License-Identifier: MIT */
/* Operating schedules: construction and hashed lookup (no dependency on the rest of the module). */
#include "frontier/opsched.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int erg__fr_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return ERG_OK;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2 / sz)
            return ERG_ENOMEM;
        c *= 2;
    }
    void *p = realloc(*arr, c * sz);
    if (!p)
        return ERG_ENOMEM;
    *arr = p;
    *cap = c;
    return ERG_OK;
}

#define GROW(arr, capf, need) erg__fr_grow((void **)&(arr), &(capf), (need), sizeof *(arr))

erg_opsched *erg_opsched_new(void)
{
    return calloc(1, sizeof(erg_opsched));
}

void erg_opsched_free(erg_opsched *os)
{
    if (!os)
        return;
    free(os->dev);
    for (size_t i = 0; i < os->n_elem; i++)
        free(os->elem[i].pts);
    free(os->elem);
    for (size_t i = 0; i < os->n_group; i++) {
        free(os->group[i].omega);
        free(os->group[i].key);
    }
    free(os->group);
    erg__strmap_free(&os->elem_map);
    erg__strmap_free(&os->dev_map);
    erg__strmap_free(&os->node_map);
    erg__strmap_free(&os->group_map);
    erg__strmap_free(&os->tr_map);
    erg__strmap_free(&os->elemdev_map);
    free(os->tr);
    for (size_t i = 0; i < os->n_expr; i++)
        free(os->expr[i].kids);
    free(os->expr);
    free(os->node);
    free(os->node_ids);
    free(os->node_dev);
    erg__strmap_free(&os->node_dev_map);
    free(os->edge);
    free(os->source);
    free(os);
}

static const char *elem_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->elem[i].name;
}

static const char *elemdev_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->elem[i].device;
}

static const char *dev_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->dev[i].id;
}

static const char *node_key(const void *ctx, uint32_t i)
{
    return erg__fr_node_id(ctx, i);
}

static const char *node_dev_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->node_dev[i];
}

const char *erg__fr_node_id(const erg_opsched *os, size_t k)
{
    return os->node_ids + os->node[k].id;
}

const char *erg__fr_node_device(const erg_opsched *os, size_t k)
{
    return os->node_dev[os->node[k].device];
}

static const char *group_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->group[i].key;
}

static const char *tr_key(const void *ctx, uint32_t i)
{
    return ((const erg_opsched *)ctx)->tr[i].key;
}

static size_t found(uint32_t i)
{
    return i == ERG__STRMAP_NONE ? FR_NONE : (size_t)i;
}

size_t erg__fr_find_element(const erg_opsched *os, const char *name)
{
    return found(erg__strmap_find(&os->elem_map, name, elem_key, os));
}

size_t erg__fr_find_device(const erg_opsched *os, const char *id)
{
    return found(erg__strmap_find(&os->dev_map, id, dev_key, os));
}

size_t erg__fr_find_node(erg_opsched *os, const char *id, int *oom)
{
    *oom = 0;
    while (os->node_map.n < os->n_node)
        if (erg__strmap_insert(&os->node_map, (uint32_t)os->node_map.n, node_key, os) != 0) {
            *oom = 1;
            return FR_NONE;
        }
    return found(erg__strmap_find(&os->node_map, id, node_key, os));
}

const struct fr_transition *erg__fr_find_tr(const erg_opsched *os, int from, int to)
{
    if (from < 0 || to < 0 || from == to || os->n_tr == 0)
        return NULL;
    char key[24];
    snprintf(key, sizeof key, "%d:%d", from, to);
    size_t i = found(erg__strmap_find(&os->tr_map, key, tr_key, os));
    return i == FR_NONE ? NULL : &os->tr[i];
}

/* The group key: device and ω_dev joined by a unit separator (neither holds one: device ids are
 * names, ω_dev is compact JSON, which escapes control characters). */
static char *join_key(const char *device, const char *omega)
{
    size_t a = strlen(device), b = strlen(omega);
    char *k = malloc(a + b + 2);
    if (k) {
        memcpy(k, device, a);
        k[a] = '\x1f';
        memcpy(k + a + 1, omega, b + 1);
    }
    return k;
}

int erg__fr_group(erg_opsched *os, const char *device, const char *omega)
{
    if (!omega)
        omega = "";
    char *key = join_key(device, omega);
    if (!key)
        return -1;
    size_t i = found(erg__strmap_find(&os->group_map, key, group_key, os));
    if (i != FR_NONE) {
        free(key);
        return (int)i;
    }
    if (os->n_group >= (size_t)INT32_MAX || GROW(os->group, os->cap_group, os->n_group + 1)) {
        free(key);
        return -1;
    }
    struct fr_group *g = &os->group[os->n_group];
    memset(g, 0, sizeof *g);
    snprintf(g->device, sizeof g->device, "%s", device);
    g->key = key;
    g->omega = strdup(omega);
    if (!g->omega ||
        erg__strmap_insert(&os->group_map, (uint32_t)os->n_group, group_key, os) != 0) {
        free(g->omega);
        free(key);
        return -1;
    }
    return (int)os->n_group++;
}

double erg__fr_device_static_w(const erg_opsched *os, const char *device)
{
    size_t d = erg__fr_find_device(os, device);
    if (d != FR_NONE)
        return os->dev[d].static_power_w;
    size_t e = found(erg__strmap_find(&os->elemdev_map, device, elemdev_key, os));
    if (e != FR_NONE && os->elem[e].n > 0)
        return os->elem[e].pts[0].sig.static_power_w;
    return 0.0;
}

double erg__fr_device_idle_w(const erg_opsched *os, const char *device)
{
    size_t d = erg__fr_find_device(os, device);
    if (d != FR_NONE && !isnan(os->dev[d].idle_power_w))
        return os->dev[d].idle_power_w;
    return erg__fr_device_static_w(os, device);
}

int erg_opsched_set_idle_power(erg_opsched *os, const char *id, double idle_power_w, erg_diag *diag)
{
    size_t d = os && id ? erg__fr_find_device(os, id) : FR_NONE;
    if (d == FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "idle power of an undeclared device");
    if (!(idle_power_w >= 0) || isinf(idle_power_w))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "device %s: idle_power_w = %g must be finite and >= 0", id,
                            idle_power_w);
    os->dev[d].idle_power_w = idle_power_w;
    return ERG_OK;
}

static int bad_name(const char *s, size_t max)
{
    return !s || !s[0] || strlen(s) >= max;
}

int erg_opsched_add_device(erg_opsched *os, const char *id, double static_power_w, erg_diag *diag)
{
    if (!os || bad_name(id, ERG_SIG_DEVICE_MAX))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "device id must be 1 to %d bytes",
                            ERG_SIG_DEVICE_MAX - 1);
    if (!(static_power_w >= 0) || isinf(static_power_w))
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "device %s: static_power_w = %g must be finite and >= 0", id,
                            static_power_w);
    if (erg__fr_find_device(os, id) != FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "device %s declared twice", id);
    if (GROW(os->dev, os->cap_dev, os->n_dev + 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    struct fr_device *d = &os->dev[os->n_dev];
    memset(d, 0, sizeof *d);
    snprintf(d->id, sizeof d->id, "%s", id);
    d->static_power_w = static_power_w;
    d->idle_power_w = NAN;
    if (erg__strmap_insert(&os->dev_map, (uint32_t)os->n_dev, dev_key, os) != 0)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    os->n_dev++;
    return ERG_OK;
}

int erg_opsched_add_point(erg_opsched *os, const char *element, const erg_signature *sig,
                          const char *omega_device, erg_diag *diag)
{
    if (!os || !sig || bad_name(element, ERG_SIG_NAME_MAX))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "element name must be 1 to %d bytes",
                            ERG_SIG_NAME_MAX - 1);
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(sig, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "element %s: %s", element, sub.detail);
    size_t e = erg__fr_find_element(os, element);
    if (e == FR_NONE) {
        if (GROW(os->elem, os->cap_elem, os->n_elem + 1))
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        e = os->n_elem;
        struct fr_element *el = &os->elem[e];
        memset(el, 0, sizeof *el);
        snprintf(el->name, sizeof el->name, "%s", element);
        snprintf(el->device, sizeof el->device, "%s", sig->device);
        if (erg__strmap_insert(&os->elem_map, (uint32_t)e, elem_key, os) != 0)
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        os->n_elem++;
        if (erg__strmap_find(&os->elemdev_map, el->device, elemdev_key, os) == ERG__STRMAP_NONE &&
            erg__strmap_insert(&os->elemdev_map, (uint32_t)e, elemdev_key, os) != 0)
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    struct fr_element *el = &os->elem[e];
    if (strcmp(el->device, sig->device) != 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "element %s: point on device \"%s\", but the element runs on \"%s\"",
                            element, sig->device, el->device);
    int g = erg__fr_group(os, el->device, omega_device);
    if (g < 0 || GROW(el->pts, el->cap, el->n + 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    el->pts[el->n].sig = *sig;
    el->pts[el->n].group = g;
    el->n++;
    return ERG_OK;
}

int erg_opsched_add_transition(erg_opsched *os, const char *device, const char *from,
                               const char *to, const erg_signature *sig, erg_diag *diag)
{
    if (!os || !sig || bad_name(device, ERG_SIG_DEVICE_MAX))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "transition: bad device");
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(sig, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "transition on %s: %s", device, sub.detail);
    int f = erg__fr_group(os, device, from), t = erg__fr_group(os, device, to);
    if (f < 0 || t < 0 || GROW(os->tr, os->cap_tr, os->n_tr + 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (f == t)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "transition on %s: from and to are the same ω_dev", device);
    if (erg__fr_find_tr(os, f, t))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "transition on %s declared twice", device);
    os->tr[os->n_tr].from = f;
    os->tr[os->n_tr].to = t;
    snprintf(os->tr[os->n_tr].key, sizeof os->tr[0].key, "%d:%d", f, t);
    os->tr[os->n_tr].sig = *sig;
    if (erg__strmap_insert(&os->tr_map, (uint32_t)os->n_tr, tr_key, os) != 0)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    os->n_tr++;
    return ERG_OK;
}

int erg_opsched_expr_leaf(erg_opsched *os, const char *element, size_t *out_id, erg_diag *diag)
{
    if (!os || !element || !out_id)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    size_t e = erg__fr_find_element(os, element);
    if (e == FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown element \"%s\"", element);
    if (GROW(os->expr, os->cap_expr, os->n_expr + 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    os->expr[os->n_expr] = (struct fr_expr){ERG_EXPR_LEAF, e, 0, NULL};
    *out_id = os->n_expr++;
    return ERG_OK;
}

int erg_opsched_expr_op(erg_opsched *os, erg_expr_op op, const size_t *ids, size_t n,
                        size_t *out_id, erg_diag *diag)
{
    if (!os || !ids || !out_id || n == 0 ||
        (op != ERG_EXPR_SEQ && op != ERG_EXPR_PAR && op != ERG_EXPR_MULTI))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "expression operator needs 1 or more operands");
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= os->n_expr)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "unknown expression id %zu", ids[i]);
    size_t *k = malloc(n * sizeof *k);
    if (!k || GROW(os->expr, os->cap_expr, os->n_expr + 1)) {
        free(k);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    memcpy(k, ids, n * sizeof *k);
    os->expr[os->n_expr] = (struct fr_expr){op, FR_NONE, n, k};
    *out_id = os->n_expr++;
    return ERG_OK;
}

int erg_opsched_add_node(erg_opsched *os, const char *id, const char *element, erg_diag *diag)
{
    return erg_opsched_add_node_on(os, id, element, NULL, diag);
}

int erg__fr_append_node(erg_opsched *os, const char *id, size_t len, size_t elem,
                        const char *device)
{
    const char *dev = device && device[0] ? device : os->elem[elem].device;
    uint32_t d = erg__strmap_find(&os->node_dev_map, dev, node_dev_key, os);
    if (d == ERG__STRMAP_NONE) {
        if (GROW(os->node_dev, os->cap_node_dev, os->n_node_dev + 1))
            return ERG_ENOMEM;
        snprintf(os->node_dev[os->n_node_dev], sizeof os->node_dev[0], "%s", dev);
        if (erg__strmap_insert(&os->node_dev_map, (uint32_t)os->n_node_dev, node_dev_key, os))
            return ERG_ENOMEM;
        d = (uint32_t)os->n_node_dev++;
    }
    if (os->n_node >= ERG__STRMAP_NONE - 1 || GROW(os->node, os->cap_node, os->n_node + 1) ||
        erg__fr_grow((void **)&os->node_ids, &os->node_ids_cap, os->node_ids_len + len + 1, 1))
        return ERG_ENOMEM;
    memcpy(os->node_ids + os->node_ids_len, id, len);
    os->node_ids[os->node_ids_len + len] = '\0';
    os->node[os->n_node] = (struct fr_node){os->node_ids_len, elem, d};
    os->node_ids_len += len + 1;
    os->n_node++;
    return ERG_OK;
}

int erg_opsched_add_node_on(erg_opsched *os, const char *id, const char *element,
                            const char *device, erg_diag *diag)
{
    if (!os || bad_name(id, ERG_SIG_NAME_MAX) || !element)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node id must be 1 to %d bytes",
                            ERG_SIG_NAME_MAX - 1);
    size_t e = erg__fr_find_element(os, element);
    if (e == FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node %s: unknown signature \"%s\"", id,
                            element);
    int oom;
    if (erg__fr_find_node(os, id, &oom) != FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node %s declared twice", id);
    if (device && strlen(device) >= ERG_SIG_DEVICE_MAX)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "node %s: device id too long", id);
    if (oom || erg__fr_append_node(os, id, strlen(id), e, device) != ERG_OK ||
        erg__strmap_insert(&os->node_map, (uint32_t)(os->n_node - 1), node_key, os) != 0)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    return ERG_OK;
}

int erg_opsched_add_edge(erg_opsched *os, const char *from, const char *to, erg_diag *diag)
{
    if (!os || !from || !to)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "NULL argument");
    int oom_a, oom_b;
    size_t a = erg__fr_find_node(os, from, &oom_a), b = erg__fr_find_node(os, to, &oom_b);
    if (oom_a || oom_b)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (a == FR_NONE || b == FR_NONE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "edge [%s, %s]: unknown node \"%s\"", from, to,
                            a == FR_NONE ? from : to);
    if (GROW(os->edge, os->cap_edge, os->n_edge + 1))
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    os->edge[os->n_edge][0] = (uint32_t)a;
    os->edge[os->n_edge][1] = (uint32_t)b;
    os->n_edge++;
    return ERG_OK;
}

size_t erg_opsched_n_points(const erg_opsched *os, const char *element)
{
    if (!os || !element)
        return 0;
    size_t e = erg__fr_find_element(os, element);
    return e == FR_NONE ? 0 : os->elem[e].n;
}

void erg_frontier_options_init(erg_frontier_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->epsilon = 0.0;
    opts->dag_method = ERG_DAG_AUTO;
    opts->enum_limit = 1e6;
    opts->lp_deadlines = 200;
}

void erg_frontier_free(erg_frontier *f)
{
    if (!f)
        return;
    free(f->points);
    if (f->element_names)
        for (size_t i = 0; i < f->n_elements; i++)
            free(f->element_names[i]);
    free(f->element_names);
    free(f->choices);
    memset(f, 0, sizeof *f);
}
