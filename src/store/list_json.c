/* SPDX-License-Identifier: MIT */
/* The store-list/1 document (what `erg store list --json` and `erg store history NAME --json`
 * print), written by the library (issue 13: every format erg writes is the library's). */
#include "core/json.h"
#include "erg/flags.h"
#include "erg/grade.h"
#include "erg/signature.h"
#include "erg/store.h"

#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

struct walk {
    json_t *arr;
    size_t seen;
};

static int num(json_t *o, const char *key, double v)
{
    return erg__json_set_number(o, key, v);
}

/* One entry, or NULL when out of memory. */
static json_t *entry(const erg_signature *s)
{
    json_t *fl = json_array();
    for (unsigned b = 0; fl && b < ERG_FLAG_COUNT; b++)
        if ((s->flags & (1u << b)) && json_array_append_new(fl, json_string(erg_flag_name(b)))) {
            json_decref(fl);
            fl = NULL;
        }
    json_t *o = fl ? json_object() : NULL;
    int bad = !o || json_object_set_new(o, "name", json_string(s->name)) ||
              json_object_set_new(o, "device", json_string(s->device)) ||
              num(o, "energy_j", erg_signature_energy_j(s)) || num(o, "time_s", s->time_s) ||
              num(o, "static_power_w", s->static_power_w) ||
              num(o, "dynamic_energy_j", s->dynamic_energy_j) ||
              json_object_set_new(o, "grade", json_string(erg_grade_name(s->grade))) ||
              json_object_set_new(o, "runs", json_integer((json_int_t)s->runs));
    if (bad) {
        json_decref(fl);
        json_decref(o);
        return NULL;
    }
    if (json_object_set_new(o, "flags", fl)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int list_one(void *ud, const erg_signature *s)
{
    struct walk *w = ud;
    return json_array_append_new(w->arr, entry(s)) ? ERG_ENOMEM : 0; /* takes it, even failing */
}

static int history_one(void *ud, const erg_signature *s, double stored_unix_s)
{
    struct walk *w = ud;
    json_t *e = entry(s);
    w->seen++;
    if (!e || json_object_set_new(e, "version", json_integer((json_int_t)w->seen)) ||
        num(e, "stored_unix_s", stored_unix_s)) {
        json_decref(e);
        return ERG_ENOMEM;
    }
    return json_array_append_new(w->arr, e) ? ERG_ENOMEM : 0;
}

/* {"erg": "store-list/1", ["name",] "signatures": arr}, taking arr; NULL when out of memory. */
static json_t *document(const char *name, json_t *arr)
{
    json_t *root = json_object();
    if (!root || json_object_set_new(root, "erg", json_string("store-list/1")) ||
        (name && json_object_set_new(root, "name", json_string(name)))) {
        json_decref(root);
        json_decref(arr);
        return NULL;
    }
    if (json_object_set_new(root, "signatures", arr)) { /* takes arr, even failing */
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Finish: rc from the walk (ERG_ENOMEM from a callback carries no diagnostic yet). */
static int finish(json_t *root, int rc, const char *path, erg_diag *diag)
{
    if (rc == ERG_ENOMEM || (rc == ERG_OK && !root))
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    else if (rc == ERG_OK)
        rc = erg__json_dump_file(root, path, FLAGS, diag);
    json_decref(root);
    return rc;
}

int erg_store_write_list_json(const char *path, erg_store *store, erg_diag *diag)
{
    if (!path || !store)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_store_write_list_json: NULL argument");
    struct walk w = {json_array(), 0};
    if (!w.arr)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    int rc = erg_store_each(store, list_one, &w, diag);
    return finish(document(NULL, w.arr), rc, path, diag);
}

int erg_store_write_history_json(const char *path, erg_store *store, const char *name,
                                 erg_diag *diag)
{
    if (!path || !store || !name)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_store_write_history_json: NULL argument");
    erg_signature cur;
    int rc = erg_store_get(store, name, &cur, diag);
    if (rc != ERG_OK)
        return rc;
    struct walk w = {json_array(), 0};
    if (!w.arr)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    rc = erg_store_history_each(store, name, history_one, &w, diag);
    return finish(document(name, w.arr), rc, path, diag);
}
