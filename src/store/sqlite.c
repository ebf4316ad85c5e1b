/* SPDX-License-Identifier: MIT */
/* The signature store over SQLite. Signatures are kept as their signature/1 JSON so the store
 * follows the file format rather than a second schema of its own. */
#include "erg/store.h"

#include "calculus/context_json.h"
#include "calculus/sig_json.h"
#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STORE_FORMAT "erg-store/1"

struct erg_store {
    sqlite3 *db;
    char path[1024];
};

int erg_store_default_path(char *buf, size_t size)
{
    const char *e = getenv("ERG_STORE");
    int n;
    if (e && e[0])
        n = snprintf(buf, size, "%s", e);
    else if ((e = getenv("XDG_DATA_HOME")) && e[0])
        n = snprintf(buf, size, "%s/erg/signatures.db", e);
    else if ((e = getenv("HOME")) && e[0])
        n = snprintf(buf, size, "%s/.local/share/erg/signatures.db", e);
    else
        return ERG_ENOENT;
    return n < 0 || (size_t)n >= size ? ERG_ERANGE : ERG_OK;
}

static int db_fail(erg_store *st, erg_diag *diag, const char *what)
{
    return erg_diag_set(diag, ERG_EIO, st->path, "%s: %s", what, sqlite3_errmsg(st->db));
}

/* mkdir -p of path's folder. */
static int make_parent(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS erg_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS signature(name TEXT PRIMARY KEY, json TEXT NOT NULL,"
    " stored_unix_s REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS history(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " json TEXT NOT NULL, stored_unix_s REAL NOT NULL);"
    "CREATE INDEX IF NOT EXISTS history_name ON history(name);"
    "INSERT OR IGNORE INTO erg_meta VALUES('format', '" STORE_FORMAT "');";

int erg_store_open(const char *path, int create, erg_store **out, erg_diag *diag)
{
    if (!path || !out)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no store path");
    if (access(path, F_OK) != 0) {
        if (!create)
            return erg_diag_set(diag, ERG_ENOENT, path, "no signature store here (create one with 'erg store put')");
        if (make_parent(path) != 0)
            return erg_diag_set(diag, errno == EACCES ? ERG_EACCES : ERG_EIO, path,
                                "cannot create the store's folder: %s", strerror(errno));
    }
    erg_store *st = calloc(1, sizeof *st);
    if (!st)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    snprintf(st->path, sizeof st->path, "%s", path);
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &st->db, flags, NULL);
    if (rc != SQLITE_OK) {
        int status = rc == SQLITE_CANTOPEN ? ERG_EACCES : ERG_EIO;
        erg_diag_set(diag, status, path, "cannot open the store: %s",
                     st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
        sqlite3_close(st->db);
        free(st);
        return status;
    }
    sqlite3_busy_timeout(st->db, 5000);
    /* A file that is not SQLite fails here with SQLITE_NOTADB. */
    char *err = NULL;
    if (sqlite3_exec(st->db, schema, NULL, NULL, &err) != SQLITE_OK) {
        erg_diag_set(diag, ERG_EIO, path, "not a usable erg signature store: %s", err ? err : "?");
        sqlite3_free(err);
        erg_store_close(st);
        return ERG_EIO;
    }
    sqlite3_stmt *q;
    int status = ERG_OK;
    if (sqlite3_prepare_v2(st->db, "SELECT value FROM erg_meta WHERE key='format'", -1, &q, NULL) != SQLITE_OK) {
        status = db_fail(st, diag, "reading the store's format");
    } else {
        if (sqlite3_step(q) == SQLITE_ROW) {
            const char *fmt = (const char *)sqlite3_column_text(q, 0);
            if (!fmt || strncmp(fmt, "erg-store/", 10) != 0)
                status = erg_diag_set(diag, ERG_EIO, path, "not an erg signature store (format '%s')", fmt ? fmt : "");
            else if (strcmp(fmt, STORE_FORMAT) != 0)
                status = erg_diag_set(diag, ERG_EVERSION, path, "store format %s is newer than this erg reads (%s)",
                                      fmt, STORE_FORMAT);
        }
        sqlite3_finalize(q);
    }
    if (status != ERG_OK) {
        erg_store_close(st);
        return status;
    }
    *out = st;
    return ERG_OK;
}

void erg_store_close(erg_store *store)
{
    if (!store)
        return;
    sqlite3_close(store->db);
    free(store);
}

static double now_unix_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int put_json(erg_store *store, const char *name, json_t *o, erg_diag *diag);

int erg_store_put(erg_store *store, const erg_signature *sig, erg_diag *diag)
{
    if (!store || !sig || !sig->name[0])
        return erg_diag_set(diag, ERG_EINVAL, store ? store->path : NULL, "a stored signature needs a name");
    erg_diag sub;
    if (erg_signature_check(sig, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, store->path, "%s: %s", sig->name, sub.detail);
    return put_json(store, sig->name, erg__signature_to_json(sig), diag);
}

/* Store the JSON text of o (consumed) under name, the previous version moving to history. */
static int put_json(erg_store *store, const char *name, json_t *o, erg_diag *diag)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, store->path, "out of memory");
    int status = ERG_OK;
    double t = now_unix_s();
    if (sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        free(text);
        return db_fail(store, diag, "cannot start a transaction");
    }
    sqlite3_stmt *mv = NULL, *up = NULL, *same = NULL;
    /* Storing the very same signature again is a no-op: history keeps versions that differ. */
    if (sqlite3_prepare_v2(store->db, "SELECT 1 FROM signature WHERE name = ?1 AND json = ?2", -1, &same,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(same, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(same, 2, text, -1, SQLITE_STATIC);
        int unchanged = sqlite3_step(same) == SQLITE_ROW;
        sqlite3_finalize(same);
        if (unchanged) {
            sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
            free(text);
            return ERG_OK;
        }
    }
    if (sqlite3_prepare_v2(store->db,
                           "INSERT INTO history(name, json, stored_unix_s) SELECT name, json, stored_unix_s "
                           "FROM signature WHERE name = ?1", -1, &mv, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(store->db, "INSERT OR REPLACE INTO signature VALUES(?1, ?2, ?3)", -1, &up, NULL) !=
            SQLITE_OK) {
        status = db_fail(store, diag, "preparing the write");
    } else {
        sqlite3_bind_text(mv, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(up, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(up, 2, text, -1, SQLITE_STATIC);
        sqlite3_bind_double(up, 3, t);
        if (sqlite3_step(mv) != SQLITE_DONE || sqlite3_step(up) != SQLITE_DONE)
            status = db_fail(store, diag, "writing the signature");
    }
    sqlite3_finalize(mv);
    sqlite3_finalize(up);
    if (sqlite3_exec(store->db, status == ERG_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK &&
        status == ERG_OK)
        status = db_fail(store, diag, "committing the write");
    free(text);
    return status;
}

static int decode_row(erg_store *store, sqlite3_stmt *q, int col, erg_signature *out, erg_diag *diag)
{
    const char *text = (const char *)sqlite3_column_text(q, col);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    if (!o)
        return erg_diag_set(diag, ERG_EIO, store->path, "stored signature is not valid JSON");
    int rc = erg__signature_from_json(o, NAN, store->path, "store", out, diag);
    json_decref(o);
    return rc;
}

int erg_store_get(erg_store *store, const char *name, erg_signature *out, erg_diag *diag)
{
    if (!store || !name || !out)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature WHERE name = ?1", -1, &q, NULL) != SQLITE_OK)
        return db_fail(store, diag, "reading");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    int status;
    if (rc == SQLITE_ROW)
        status = decode_row(store, q, 0, out, diag);
    else if (rc == SQLITE_DONE)
        status = erg_diag_set(diag, ERG_ENOENT, store->path, "no signature named '%s' in the store", name);
    else
        status = db_fail(store, diag, "reading");
    sqlite3_finalize(q);
    return status;
}

int erg_store_remove(erg_store *store, const char *name, erg_diag *diag)
{
    if (!store || !name)
        return ERG_EINVAL;
    sqlite3_stmt *q = NULL, *h = NULL;
    int status = ERG_OK;
    if (sqlite3_prepare_v2(store->db, "DELETE FROM signature WHERE name = ?1", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(store->db, "DELETE FROM history WHERE name = ?1", -1, &h, NULL) != SQLITE_OK) {
        status = db_fail(store, diag, "removing");
    } else {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(h, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE)
            status = db_fail(store, diag, "removing");
        else if (sqlite3_changes(store->db) == 0)
            status = erg_diag_set(diag, ERG_ENOENT, store->path, "no signature named '%s' in the store", name);
        else if (sqlite3_step(h) != SQLITE_DONE)
            status = db_fail(store, diag, "removing history");
    }
    sqlite3_finalize(q);
    sqlite3_finalize(h);
    return status;
}

int erg_store_each(erg_store *store, int (*fn)(void *ud, const erg_signature *sig), void *ud,
                   erg_diag *diag)
{
    if (!store || !fn)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature ORDER BY name", -1, &q, NULL) != SQLITE_OK)
        return db_fail(store, diag, "listing");
    int status = ERG_OK, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        erg_signature s;
        if ((status = decode_row(store, q, 0, &s, diag)) != ERG_OK)
            break;
        if ((status = fn(ud, &s)) != 0)
            break;
    }
    if (status == ERG_OK && rc != SQLITE_DONE)
        status = db_fail(store, diag, "listing");
    sqlite3_finalize(q);
    return status;
}

int erg_store_history(erg_store *store, const char *name, size_t *count, erg_diag *diag)
{
    if (!store || !name || !count)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT count(*) FROM history WHERE name = ?1", -1, &q, NULL) != SQLITE_OK)
        return db_fail(store, diag, "reading history");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int status = ERG_OK;
    if (sqlite3_step(q) == SQLITE_ROW)
        *count = (size_t)sqlite3_column_int64(q, 0);
    else
        status = db_fail(store, diag, "reading history");
    sqlite3_finalize(q);
    return status;
}

int erg_store_history_each(erg_store *store, const char *name,
                           int (*fn)(void *ud, const erg_signature *sig, double stored_unix_s), void *ud,
                           erg_diag *diag)
{
    if (!store || !name || !fn)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json, stored_unix_s FROM history WHERE name = ?1 ORDER BY id DESC", -1,
                           &q, NULL) != SQLITE_OK)
        return db_fail(store, diag, "reading history");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int status = ERG_OK, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        erg_signature s;
        if ((status = decode_row(store, q, 0, &s, diag)) != ERG_OK)
            break;
        if ((status = fn(ud, &s, sqlite3_column_double(q, 1))) != 0)
            break;
    }
    if (status == ERG_OK && rc != SQLITE_DONE)
        status = db_fail(store, diag, "reading history");
    sqlite3_finalize(q);
    return status;
}

/* ---------------------------------------------- signatures with context points (issue 14) --- */

int erg_store_put_context(erg_store *store, const erg_context_signature *cs, erg_diag *diag)
{
    if (!store || !cs || !cs->null_context.name[0])
        return erg_diag_set(diag, ERG_EINVAL, store ? store->path : NULL,
                            "a stored signature needs a name");
    erg_diag sub;
    erg_diag_clear(&sub);
    if (erg_signature_check(&cs->null_context, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, store->path, "%s: %s", cs->null_context.name,
                            sub.detail);
    return put_json(store, cs->null_context.name, erg__context_signature_to_json(cs), diag);
}

int erg_store_get_context(erg_store *store, const char *name, erg_context_signature *out,
                          erg_diag *diag)
{
    if (!store || !name || !out)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature WHERE name = ?1", -1, &q, NULL) != SQLITE_OK)
        return db_fail(store, diag, "reading");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    int status;
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(q, 0);
        json_t *o = text ? json_loads(text, 0, NULL) : NULL;
        status = o ? erg__context_signature_from_json(o, NAN, store->path, "store", out, diag)
                   : erg_diag_set(diag, ERG_EIO, store->path, "stored signature is not valid JSON");
        json_decref(o);
    } else if (rc == SQLITE_DONE) {
        status = erg_diag_set(diag, ERG_ENOENT, store->path, "no signature named '%s' in the store", name);
    } else {
        status = db_fail(store, diag, "reading");
    }
    sqlite3_finalize(q);
    return status;
}

int erg_store_signature_resolver(void *ud, const char *name, erg_signature *out, erg_diag *diag)
{
    if (ud)
        return erg_store_get((erg_store *)ud, name, out, diag);
    char db[4096];
    if (erg_store_default_path(db, sizeof db) != ERG_OK)
        return erg_diag_set(diag, ERG_ENOENT, name,
                            "no such file, and no signature store (set ERG_STORE)");
    erg_store *store = NULL;
    int st = erg_store_open(db, 0, &store, diag);
    if (st == ERG_OK) {
        st = erg_store_get(store, name, out, diag);
        if (st == ERG_ENOENT)
            erg_diag_set(diag, st, db, "\"%s\" is neither a file beside the rules nor in the "
                         "signature store", name);
    } else if (st == ERG_ENOENT) {
        erg_diag_set(diag, st, db, "no such file, and the signature store %s does not exist", db);
    }
    erg_store_close(store);
    return st;
}
