/* SPDX-License-Identifier: MIT */
#include "core/json.h"
#include "core/diag.h"
#include "core/file.h"
#include "erg/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int erg__json_load_buffer(const char *buf, size_t len, const char *name, json_t **out,
                          erg_diag *diag)
{
    json_error_t err;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        char where[256];
        snprintf(where, sizeof where, "%s:%d:%d", name, err.line, err.column);
        return erg_diag_set(diag, ERG_EPARSE, where, "malformed JSON: %s", err.text);
    }
    *out = root;
    return ERG_OK;
}

int erg__json_load_file(const char *path, json_t **out, erg_diag *diag)
{
    char *buf;
    size_t len;
    int rc = erg__read_file(path, &buf, &len, diag);
    if (rc != ERG_OK)
        return rc;
    rc = erg__json_load_buffer(buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, out, diag);
    free(buf);
    return rc;
}

int erg__json_check_tag(const json_t *root, const char *kind, int required, const char *file,
                        erg_diag *diag)
{
    if (!json_is_object(root))
        return erg_diag_set(diag, ERG_EPARSE, file, "expected a JSON object at the top level");
    const json_t *tag = json_object_get(root, "erg");
    if (!tag) {
        if (required)
            return erg_diag_set(diag, ERG_EPARSE, file, "missing format tag \"erg\": \"%s/1\"",
                                kind);
        return ERG_OK;
    }
    const char *t = json_string_value(tag);
    size_t kl = strlen(kind);
    if (!t || strncmp(t, kind, kl) != 0 || t[kl] != '/')
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "format tag \"erg\" is %s%s%s, expected \"%s/1\"", t ? "\"" : "",
                            t ? t : "not a string", t ? "\"" : "", kind);
    const char *ver = t + kl + 1;
    char *end;
    long major = strtol(ver, &end, 10);
    if (end == ver || (*end != '\0' && *end != '.'))
        return erg_diag_set(diag, ERG_EPARSE, file, "format tag \"%s\" has no version number", t);
    if (major != 1)
        return erg_diag_set(diag, ERG_EVERSION, file,
                            "unknown format version \"%s\" (this erg reads %s/1)", t, kind);
    return ERG_OK;
}

static void member_path(char *buf, size_t size, const char *path, const char *key)
{
    if (path && path[0])
        snprintf(buf, size, "%s.%s", path, key);
    else
        snprintf(buf, size, "%s", key);
}

int erg__json_number(const json_t *obj, const char *key, int flags, double *out, const char *file,
                     const char *path, erg_diag *diag)
{
    char mp[256];
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (flags & ERG_JSON_REQUIRED) {
            member_path(mp, sizeof mp, path, key);
            return erg_diag_set(diag, ERG_EPARSE, file, "%s: required number is missing", mp);
        }
        return ERG_OK;
    }
    if (!json_is_number(v)) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected a number", mp);
    }
    double d = json_number_value(v);
    if (!isfinite(d)) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: value is not finite", mp);
    }
    if ((flags & ERG_JSON_NONNEG) && d < 0.0) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must not be negative (got %g)", mp, d);
    }
    if ((flags & ERG_JSON_POSITIVE) && !(d > 0.0)) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: must be positive (got %g)", mp, d);
    }
    *out = d;
    return ERG_OK;
}

int erg__json_count(const json_t *obj, const char *key, int flags, json_int_t max, json_int_t *out,
                    const char *file, const char *path, erg_diag *diag)
{
    char mp[256];
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (flags & ERG_JSON_REQUIRED) {
            member_path(mp, sizeof mp, path, key);
            return erg_diag_set(diag, ERG_EPARSE, file, "%s: required count is missing", mp);
        }
        return ERG_OK;
    }
    json_int_t lo = (flags & ERG_JSON_POSITIVE) ? 1 : 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > max) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected a whole number in [%lld, %lld]",
                            mp, (long long)lo, (long long)max);
    }
    *out = json_integer_value(v);
    return ERG_OK;
}

int erg__json_string(const json_t *obj, const char *key, int flags, char *buf, size_t size,
                     const char *file, const char *path, erg_diag *diag)
{
    char mp[256];
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (flags & ERG_JSON_REQUIRED) {
            member_path(mp, sizeof mp, path, key);
            return erg_diag_set(diag, ERG_EPARSE, file, "%s: required string is missing", mp);
        }
        return ERG_OK;
    }
    const char *s = json_string_value(v);
    if (!s) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: expected a string", mp);
    }
    if (strlen(s) >= size) {
        member_path(mp, sizeof mp, path, key);
        return erg_diag_set(diag, ERG_EPARSE, file, "%s: string longer than %zu bytes", mp,
                            size - 1);
    }
    memcpy(buf, s, strlen(s) + 1);
    return ERG_OK;
}

/* The text json_dump_callback hands over, in a growing buffer; after one failed allocation every
 * later call fails too, so a failure whose status jansson drops still fails the whole dump. */
struct dump_buf {
    char *p;
    size_t n, cap;
    int failed;
};

static int dump_append(const char *text, size_t size, void *data)
{
    struct dump_buf *b = data;
    if (b->failed)
        return -1;
    if (size >= b->cap - b->n || !b->p) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n <= size) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return -1;
            }
            cap *= 2;
        }
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = 1;
            return -1;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, text, size);
    b->n += size;
    b->p[b->n] = '\0';
    return 0;
}

char *erg_json_dumps(const json_t *root, size_t flags)
{
    struct dump_buf b = {0};
    if (!root || json_dump_callback(root, dump_append, &b, flags) != 0 || b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

int erg__json_dump_file(const json_t *root, const char *path, size_t flags, erg_diag *diag)
{
    char *text = erg_json_dumps(root, flags);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, path, "cannot serialise JSON");
    erg_json_shorten_reals(text);
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    int rc = erg__write_file_atomic(path, withnl, n + 1, diag);
    free(withnl);
    return rc;
}

int erg__json_set_number(json_t *obj, const char *key, double v)
{
    return json_object_set_new(obj, key, isfinite(v) ? json_real(v) : json_null());
}

/* ---------------------------------------------- positions of decoded values (erg__json_locate) */

static size_t loc_ws(const char *t, size_t n, size_t i)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* The index just past the string that starts at t[i] == '"' (n when it does not end). */
static size_t loc_string_end(const char *t, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return n;
}

/* The index just past the value that starts at t[i] (n when it does not end). */
static size_t loc_value_end(const char *t, size_t n, size_t i)
{
    if (i >= n)
        return n;
    if (t[i] == '"')
        return loc_string_end(t, n, i);
    if (t[i] == '{' || t[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            if (t[i] == '"') {
                i = loc_string_end(t, n, i);
                continue;
            }
            if (t[i] == '{' || t[i] == '[')
                depth++;
            else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && !strchr(",]} \t\r\n", t[i]))
        i++;
    return i;
}

int erg__json_locate(const char *text, size_t len, const char *path, size_t *line, size_t *col)
{
    size_t i = loc_ws(text, len, 0);
    const char *p = path;
    while (*p) {
        if (*p == '.')
            p++;
        if (*p == '[') {
            char *end;
            unsigned long long want = strtoull(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || i >= len || text[i] != '[')
                return 0;
            p = end + 1;
            i = loc_ws(text, len, i + 1);
            for (unsigned long long k = 0; k < want; k++) {
                i = loc_ws(text, len, loc_value_end(text, len, i));
                if (i >= len || text[i] != ',')
                    return 0;
                i = loc_ws(text, len, i + 1);
            }
            if (i >= len || text[i] == ']')
                return 0;
            continue;
        }
        size_t klen = strcspn(p, ".[");
        if (!klen || i >= len || text[i] != '{')
            return 0;
        i = loc_ws(text, len, i + 1);
        for (;;) {
            if (i >= len || text[i] != '"')
                return 0;
            size_t kend = loc_string_end(text, len, i);
            int match = kend - i == klen + 2 && memcmp(text + i + 1, p, klen) == 0;
            i = loc_ws(text, len, kend);
            if (i >= len || text[i] != ':')
                return 0;
            i = loc_ws(text, len, i + 1);
            if (match)
                break;
            i = loc_ws(text, len, loc_value_end(text, len, i));
            if (i >= len || text[i] != ',')
                return 0;
            i = loc_ws(text, len, i + 1);
        }
        p += klen;
    }
    if (i >= len)
        return 0;
    size_t ln = 1, start = 0;
    for (size_t k = 0; k < i; k++)
        if (text[k] == '\n') {
            ln++;
            start = k + 1;
        }
    *line = ln;
    *col = i - start + 1;
    return 1;
}

void erg__json_diag_locate(erg_diag *diag, const char *text, size_t len, const char *name,
                           const char *root)
{
    size_t rl = strlen(root);
    if (!diag || diag->status != ERG_EPARSE || strcmp(diag->where, name) != 0 ||
        strncmp(diag->detail, root, rl) != 0 || !strchr(".[:", diag->detail[rl]))
        return;
    const char *rest = diag->detail + rl, *colon = strstr(rest, ": ");
    char path[sizeof diag->detail];
    size_t pl = colon ? (size_t)(colon - rest) : 0;
    if (!colon || pl >= sizeof path)
        return;
    memcpy(path, rest, pl);
    path[pl] = '\0';
    size_t line, col;
    if (!erg__json_locate(text, len, path, &line, &col))
        return;
    char detail[sizeof diag->detail];
    memcpy(detail, diag->detail, sizeof detail);
    erg__diag_at(diag, ERG_EPARSE, name, line, col, "%s", detail);
}

void erg__json_diag_place(erg_diag *diag, const char *text, size_t len, const char *name)
{
    if (!diag || diag->status == ERG_OK || diag->status == ERG_ENOMEM || !text ||
        strcmp(diag->where, name) != 0)
        return;
    const char *colon = strstr(diag->detail, ": ");
    char path[sizeof diag->detail];
    size_t pl = colon ? (size_t)(colon - diag->detail) : 0;
    if (!pl || pl >= sizeof path)
        return;
    memcpy(path, diag->detail, pl);
    path[pl] = '\0';
    size_t line, col;
    int cuts = 0;
    while (!erg__json_locate(text, len, path, &line, &col)) {
        char *cut = NULL;
        for (char *c = path; *c; c++)
            if (*c == '.' || *c == '[')
                cut = c;
        if (cut == path)
            return;
        if (!cut) {
            if (cuts)
                return;
            /* one member name that the root object lacks: the root is the object that lacks
             * it (a name with other bytes, "gpu-target/2", is not taken for a member) */
            if (path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789_-")] != '\0' ||
                !erg__json_locate(text, len, "", &line, &col) || text[loc_ws(text, len, 0)] != '{')
                return;
            break;
        }
        *cut = '\0';
        cuts++;
    }
    char detail[sizeof diag->detail];
    memcpy(detail, diag->detail, sizeof detail);
    erg__diag_at(diag, diag->status, name, line, col, "%s", detail);
}

void erg__json_diag_place_file(erg_diag *diag, const char *path)
{
    if (!diag || diag->status == ERG_OK || !path || strcmp(path, "-") == 0 ||
        strcmp(diag->where, path) != 0)
        return;
    char *buf;
    size_t len;
    erg_diag d;
    erg_diag_clear(&d);
    if (erg__read_file(path, &buf, &len, &d) != ERG_OK)
        return;
    erg__json_diag_place(diag, buf, len, path);
    free(buf);
}
