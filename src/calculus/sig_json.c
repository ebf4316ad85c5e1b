/* SPDX-License-Identifier: MIT */
#include "calculus/sig_json.h"
#include "calculus/sniff.h"
#include "core/file.h"
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* θ and ω are kept as compact JSON text of an object. */
static int meta_member(const json_t *obj, const char *key, char *buf, size_t size, const char *file,
                       const char *path, erg_diag *diag)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return ERG_OK;
    if (!json_is_object(v))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: expected an object", path, key);
    char *text = erg_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    size_t n = strlen(text);
    if (n >= size) {
        free(text);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: longer than %zu bytes as JSON", path,
                            key, size - 1);
    }
    memcpy(buf, text, n + 1);
    free(text);
    return ERG_OK;
}

json_t *erg__flags_to_json(unsigned flags)
{
    json_t *a = json_array();
    for (unsigned b = 0; a && b < ERG_FLAG_COUNT; b++)
        if ((flags & (1u << b)) && json_array_append_new(a, json_string(erg_flag_name(b)))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

int erg__flags_from_json(const json_t *v, const char *file, const char *path, unsigned *out,
                         erg_diag *diag)
{
    *out = 0;
    if (!v || json_is_null(v))
        return ERG_OK;
    if (!json_is_array(v))
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.flags: expected an array of flag names (e.g. [\"stale\"])", path);
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x)
    {
        unsigned bit;
        if (!json_is_string(x))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.flags[%zu]: expected a flag name", path,
                                i);
        if (erg_flag_parse(json_string_value(x), &bit) != ERG_OK) {
            char known[512];
            erg_flags_text(ERG_FLAG_ALL, ", ", known, sizeof known);
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.flags[%zu]: unknown flag \"%.60s\" (known: %s)", path, i,
                                json_string_value(x), known);
        }
        *out |= bit;
    }
    return ERG_OK;
}

const char *const erg__signature_keys[] = {
    "static_power_w",
    "time_s",
    "dynamic_energy_j",
    "time_var_s2",
    "energy_var_j2",
    "name",
    "device",
    "theta",
    "omega",
    "kappa",
    "grade",
    "runs",
    "flags",
    "channels",
    "contexts",
    "command", /* context points (context.c; docs/context.md) */
    NULL};

int erg__signature_key_known(const char *key, size_t n)
{
    for (const char *const *k = erg__signature_keys; *k; k++)
        if (strlen(*k) == n && memcmp(*k, key, n) == 0)
            return 1;
    return 0;
}

int erg__signature_check_members(const json_t *obj, int allow_tag, const char *file,
                                 const char *path, erg_diag *diag)
{
    const char *key;
    const json_t *v;
    json_object_foreach(erg__json_mut(obj), key, v)
    {
        if (erg__signature_key_known(key, strlen(key)) || (allow_tag && strcmp(key, "erg") == 0))
            continue;
        if (strcmp(key, "points") == 0)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s is an operating set (points): use erg frontier", path);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%.60s: unknown member of a signature", path,
                            key);
    }
    return ERG_OK;
}

static int from_json(const json_t *obj, double default_static_w, int static_optional,
                     const char *file, const char *path, erg_signature *out, erg_diag *diag)
{
    if (!json_is_object(obj))
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected a signature object", path);
    erg_signature s;
    erg_signature_init(&s);
    /* A figure of unstated provenance is never promoted: without "grade" it is an estimate. */
    s.grade = ERG_GRADE_ESTIMATOR;
    s.static_power_w = default_static_w;
    int rc;
    int sflags =
        ERG_JSON_NONNEG | (isnan(default_static_w) && !static_optional ? ERG_JSON_REQUIRED : 0);
    if ((rc = erg__json_number(obj, "static_power_w", sflags, &s.static_power_w, file, path,
                               diag)) ||
        (rc = erg__json_number(obj, "time_s", ERG_JSON_REQUIRED | ERG_JSON_NONNEG, &s.time_s, file,
                               path, diag)) ||
        (rc = erg__json_number(obj, "dynamic_energy_j", ERG_JSON_REQUIRED | ERG_JSON_NONNEG,
                               &s.dynamic_energy_j, file, path, diag)) ||
        (rc = erg__json_number(obj, "time_var_s2", ERG_JSON_NONNEG, &s.time_var_s2, file, path,
                               diag)) ||
        (rc = erg__json_number(obj, "energy_var_j2", ERG_JSON_NONNEG, &s.energy_var_j2, file, path,
                               diag)) ||
        (rc = erg__json_string(obj, "name", 0, s.name, sizeof s.name, file, path, diag)) ||
        (rc = erg__json_string(obj, "device", 0, s.device, sizeof s.device, file, path, diag)) ||
        (rc = erg__json_string(obj, "kappa", 0, s.kappa, sizeof s.kappa, file, path, diag)) ||
        (rc = meta_member(obj, "theta", s.theta, sizeof s.theta, file, path, diag)) ||
        (rc = meta_member(obj, "omega", s.omega, sizeof s.omega, file, path, diag)))
        return rc;
    const json_t *g = json_object_get(obj, "grade");
    if (g && !json_is_null(g)) {
        if (erg_grade_parse(json_string_value(g), &s.grade) != ERG_OK)
            return erg_diag_set(diag, ERG_EPARSE, file,
                                "%s.grade: expected \"hw_shunt\", \"model_based\" or \"estimator\"",
                                path);
    }
    const json_t *r = json_object_get(obj, "runs");
    if (r && !json_is_null(r)) {
        if (!json_is_integer(r) || json_integer_value(r) < 0 || json_integer_value(r) > 1000000000)
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.runs: expected a non-negative integer",
                                path);
        s.runs = (unsigned)json_integer_value(r);
    }
    if ((rc = erg__flags_from_json(json_object_get(obj, "flags"), file, path, &s.flags, diag)))
        return rc;
    if ((rc = erg__signature_check_pending(&s, file, path, diag)) != ERG_OK)
        return rc;
    *out = s;
    return ERG_OK;
}

int erg__signature_from_json(const json_t *obj, double default_static_w, const char *file,
                             const char *path, erg_signature *out, erg_diag *diag)
{
    return from_json(obj, default_static_w, 0, file, path, out, diag);
}

int erg__signature_check_pending(const erg_signature *s, const char *file, const char *path,
                                 erg_diag *diag)
{
    erg_diag sub;
    erg_diag_clear(&sub);
    erg_signature chk = *s;
    if (isnan(chk.static_power_w)) /* left to the device: Axiom M1 is checked once it is known */
        chk.static_power_w = 0.0;
    if (erg_signature_check(&chk, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, file, "%s: %s", path, sub.detail);
    return ERG_OK;
}

int erg__signature_from_json_opt(const json_t *obj, const char *file, const char *path,
                                 erg_signature *out, erg_diag *diag)
{
    return from_json(obj, NAN, 1, file, path, out, diag);
}

static int set_meta(json_t *o, const char *key, const char *text)
{
    if (!text[0])
        return 0;
    json_t *v = json_loads(text, 0, NULL);
    if (!v)
        return -1;
    return json_object_set_new(o, key, v);
}

json_t *erg__signature_to_json(const erg_signature *sig)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    if (sig->name[0])
        bad |= json_object_set_new(o, "name", json_string(sig->name));
    if (sig->device[0])
        bad |= json_object_set_new(o, "device", json_string(sig->device));
    bad |= erg__json_set_number(o, "static_power_w", sig->static_power_w);
    bad |= erg__json_set_number(o, "time_s", sig->time_s);
    bad |= erg__json_set_number(o, "dynamic_energy_j", sig->dynamic_energy_j);
    bad |= erg__json_set_number(o, "time_var_s2", sig->time_var_s2);
    bad |= erg__json_set_number(o, "energy_var_j2", sig->energy_var_j2);
    bad |= json_object_set_new(o, "grade", json_string(erg_grade_name(sig->grade)));
    if (sig->runs)
        bad |= json_object_set_new(o, "runs", json_integer((json_int_t)sig->runs));
    if (sig->flags)
        bad |= json_object_set_new(o, "flags", erg__flags_to_json(sig->flags));
    if (sig->kappa[0])
        bad |= json_object_set_new(o, "kappa", json_string(sig->kappa));
    bad |= set_meta(o, "theta", sig->theta);
    bad |= set_meta(o, "omega", sig->omega);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int erg__signature_file_load(const char *path, json_t **root_out, const char **name_out,
                             char **text, size_t *text_len, erg_diag *diag)
{
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (erg__is_gzip(buf, len)) {
        free(buf);
        return erg_diag_set(diag, ERG_EPARSE, name,
                            "a gzip-compressed file, not a signature/1 file; for a Chrome/Kineto "
                            "trace, " ERG__TRACE_HINT);
    }
    json_t *root;
    rc = erg__json_load_buffer(buf, len, name, &root, diag);
    if (rc != ERG_OK) {
        free(buf);
        return rc;
    }
    rc = erg__json_check_tag(root, "signature", 1, name, diag);
    if (rc != ERG_OK && !json_object_get(root, "erg")) {
        erg__sniff sn;
        if (erg__sniff_json(buf, len, &sn) == 0 && sn.trace)
            rc = erg_diag_set(diag, ERG_EPARSE, name,
                              "a Chrome/Kineto trace, not a signature/1 file: " ERG__TRACE_HINT);
    }
    if (rc == ERG_OK)
        rc = erg__signature_check_members(root, 1, name, "signature", diag);
    if (rc != ERG_OK) {
        erg__json_diag_locate(diag, buf, len, name, "signature");
        free(buf);
        json_decref(root);
        return rc;
    }
    *root_out = root;
    *name_out = name;
    *text = buf;
    *text_len = len;
    return ERG_OK;
}

int erg_signature_read_file(const char *path, erg_signature *out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_signature_read_file: NULL argument");
    json_t *root;
    const char *name;
    char *text;
    size_t len;
    int rc = erg__signature_file_load(path, &root, &name, &text, &len, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__signature_from_json(root, NAN, name, "signature", out, diag);
    if (rc != ERG_OK)
        erg__json_diag_locate(diag, text, len, name, "signature");
    free(text);
    json_decref(root);
    return rc;
}

int erg__signature_file_dump(const char *path, json_t *o, erg_diag *diag)
{
    json_t *root = o ? json_object() : NULL;
    if (!root || json_object_set_new(root, "erg", json_string("signature/1")) ||
        json_object_update(root, o)) {
        json_decref(o);
        json_decref(root);
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot encode the signature");
    }
    json_decref(o);
    int rc = erg__json_dump_file(
        root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), diag);
    json_decref(root);
    return rc;
}

int erg_signature_write_file(const char *path, const erg_signature *sig, erg_diag *diag)
{
    if (!path || !sig)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_signature_write_file: NULL argument");
    return erg__signature_file_dump(path, erg__signature_to_json(sig), diag);
}
