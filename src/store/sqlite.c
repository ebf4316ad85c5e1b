/* SPDX-License-Identifier: MIT */
/* The signature store over SQLite. Signatures are kept as their signature/1 JSON so the store
 * follows the file format rather than a second schema of its own. */
#include "erg/store.h"

#include "calculus/context_json.h"
#include "calculus/sig_json.h"
#include "core/json.h"
#include "core/path.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* erg-store/2 added the "flags" column (the measurement flags' names, comma-separated, "" for
 * none) to signature and history; an erg-store/1 file is read as it is and migrated on the first
 * open for writing (migrate_v1). */
#define STORE_FORMAT "erg-store/2"
#define STORE_FORMAT_V1 "erg-store/1"

struct erg_store {
    sqlite3 *db;
    char path[1024];
    double timeout_s;                            /* how long a lock is waited for */
    void (*waiting)(void *ud, const char *path); /* told once when a wait passes 1 s */
    void *waiting_ud;
    int told;
    int depth; /* 1 inside erg_store_begin .. erg_store_end */
};

int erg_store_default_path(char *buf, size_t *size)
{
    const char *e = getenv("ERG_STORE");
    if (e && e[0])
        return erg__path_put(buf, size, "%s", e);
    return erg__xdg_path("XDG_DATA_HOME", "erg/signatures.db", buf, size);
}

static int db_fail(erg_store *st, erg_diag *diag, const char *what)
{
    int code = sqlite3_errcode(st->db);
    if (code == SQLITE_READONLY)
        return erg_diag_set(diag, ERG_EACCES, st->path, "%s: the store is open read-only", what);
    if (code == SQLITE_BUSY)
        return erg_diag_set(diag, ERG_EBUSY, st->path,
                            "%s: the store is busy (another process holds its lock)", what);
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
    " stored_unix_s REAL NOT NULL, flags TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS history(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " json TEXT NOT NULL, stored_unix_s REAL NOT NULL, flags TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX IF NOT EXISTS history_name ON history(name);"
    "INSERT OR IGNORE INTO erg_meta VALUES('format', '" STORE_FORMAT "');";

/* erg-store/1 → erg-store/2: add the flags columns, in one transaction with the format tag, so
 * a store is either wholly old or wholly new. Rows written by erg-store/1 come from signatures
 * whose JSON never held "flags" (the writer of that version did not write them), so '' (none) is
 * their true value. Returns ERG_OK or a diagnostic (busy, read-only, I/O). */
static const char migrate_v1_sql[] =
    "ALTER TABLE signature ADD COLUMN flags TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE history ADD COLUMN flags TEXT NOT NULL DEFAULT '';"
    "UPDATE erg_meta SET value = '" STORE_FORMAT "' WHERE key = 'format';";

static int busy_fail(erg_store *st, erg_diag *diag);

static int migrate_v1(erg_store *st, erg_diag *diag)
{
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return sqlite3_errcode(st->db) == SQLITE_BUSY ? busy_fail(st, diag)
                                                      : db_fail(st, diag, "upgrading the store");
    /* another process may have upgraded it between our look and our lock */
    sqlite3_stmt *q;
    int again = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT value FROM erg_meta WHERE key='format'", -1, &q, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW) {
            const char *fmt = (const char *)sqlite3_column_text(q, 0);
            again = fmt && strcmp(fmt, STORE_FORMAT_V1) != 0;
        }
        sqlite3_finalize(q);
    }
    char *err = NULL;
    if (!again && sqlite3_exec(st->db, migrate_v1_sql, NULL, NULL, &err) != SQLITE_OK) {
        int status = sqlite3_errcode(st->db) == SQLITE_BUSY
                         ? busy_fail(st, diag)
                         : erg_diag_set(diag, ERG_EIO, st->path,
                                        "upgrading the store from " STORE_FORMAT_V1
                                        " to " STORE_FORMAT ": %s",
                                        err ? err : "?");
        sqlite3_free(err);
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return status;
    }
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int status = db_fail(st, diag, "upgrading the store");
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return status;
    }
    return ERG_OK;
}

/* Wait for a lock held by another process: sleep in short steps until the store's timeout, telling
 * the caller once (after the first second) that it waits. SQLite calls this with the number of
 * times it was called for this lock; returning 0 gives up (SQLITE_BUSY). */
static int busy_wait(void *ud, int count)
{
    erg_store *st = ud;
    double waited_s = (double)count * 0.01;
    if (waited_s >= st->timeout_s)
        return 0;
    if (waited_s >= 1.0 && !st->told && st->waiting) {
        st->told = 1;
        st->waiting(st->waiting_ud, st->path);
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    return 1;
}

static int busy_fail(erg_store *st, erg_diag *diag)
{
    return erg_diag_set(diag, ERG_EBUSY, st->path,
                        "the store is busy: another process held its lock for more than %g s "
                        "(try again when it is done)",
                        st->timeout_s);
}

/* Does the open database hold erg's tables? 1 yes, 0 no (some other SQLite database, or an empty
 * one), negative on a read error. */
static int has_erg_tables(erg_store *st)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
                           "name IN ('erg_meta','signature','history')",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(q), n = -1;
    if (rc == SQLITE_ROW)
        n = sqlite3_column_int(q, 0);
    else if (rc == SQLITE_BUSY)
        n = -2;
    sqlite3_finalize(q);
    return n < 0 ? n : n == 3;
}

int erg_store_open(const char *path, int mode, erg_store **out, erg_diag *diag)
{
    return erg_store_open_wait(path, mode, 10.0, NULL, NULL, out, diag);
}

int erg_store_open_wait(const char *path, int mode, double timeout_s,
                        void (*waiting)(void *ud, const char *path), void *ud, erg_store **out,
                        erg_diag *diag)
{
    if (!path || !out || mode < ERG_STORE_READONLY || mode > ERG_STORE_READWRITE)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no store path, or an unknown mode");
    *out = NULL;
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (!exists) {
        if (mode != ERG_STORE_CREATE)
            return erg_diag_set(diag, ERG_ENOENT, path,
                                "no signature store here (create one with 'erg store put')");
        if (make_parent(path) != 0)
            return erg_diag_set(diag, errno == EACCES ? ERG_EACCES : ERG_EIO, path,
                                "cannot create the store's folder: %s", strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        return erg_diag_set(diag, ERG_EINVAL, path,
                            "not a regular file (a store is a SQLite file)");
    } else if (sb.st_size == 0) {
        return erg_diag_set(diag, ERG_EINVAL, path,
                            "an empty file, not an erg signature store (left unchanged; remove it "
                            "to create a store there)");
    }
    erg_store *st = calloc(1, sizeof *st);
    if (!st)
        return erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    snprintf(st->path, sizeof st->path, "%s", path);
    st->timeout_s = timeout_s >= 0 && isfinite(timeout_s) ? timeout_s : 10.0;
    st->waiting = waiting;
    st->waiting_ud = ud;
    int flags = mode == ERG_STORE_READONLY ? SQLITE_OPEN_READONLY
                : mode == ERG_STORE_CREATE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                           : SQLITE_OPEN_READWRITE;
    int rc = sqlite3_open_v2(path, &st->db, flags, NULL);
    if (rc != SQLITE_OK) {
        int status = rc == SQLITE_CANTOPEN ? ERG_EACCES : ERG_EIO;
        erg_diag_set(diag, status, path, "cannot open the store: %s",
                     st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
        sqlite3_close(st->db);
        free(st);
        return status;
    }
    sqlite3_busy_handler(st->db, busy_wait, st);
    /* Never change a database that is not already a store: look before any write. A file that is
     * not SQLite at all fails here with SQLITE_NOTADB. */
    int have = exists ? has_erg_tables(st) : 0;
    int status = ERG_OK;
    if (have == -2) {
        status = busy_fail(st, diag);
    } else if (have < 0) {
        status = erg_diag_set(diag, ERG_EIO, path, "not a usable erg signature store: %s",
                              sqlite3_errmsg(st->db));
    } else if (!have && exists) {
        status = erg_diag_set(diag, ERG_EINVAL, path,
                              "a SQLite database without erg's tables, not an erg signature store "
                              "(left unchanged)");
    } else if (!have) { /* a new file: make the schema */
        char *err = NULL;
        if (sqlite3_exec(st->db, schema, NULL, NULL, &err) != SQLITE_OK) {
            status = sqlite3_errcode(st->db) == SQLITE_BUSY
                         ? busy_fail(st, diag)
                         : erg_diag_set(diag, ERG_EIO, path, "cannot create the store: %s",
                                        err ? err : "?");
            sqlite3_free(err);
        }
    }
    sqlite3_stmt *q;
    int old_format = 0;
    if (status == ERG_OK &&
        sqlite3_prepare_v2(st->db, "SELECT value FROM erg_meta WHERE key='format'", -1, &q, NULL) !=
            SQLITE_OK) {
        status = db_fail(st, diag, "reading the store's format");
    } else if (status == ERG_OK) {
        int r = sqlite3_step(q);
        if (r == SQLITE_ROW) {
            const char *fmt = (const char *)sqlite3_column_text(q, 0);
            if (!fmt || strncmp(fmt, "erg-store/", 10) != 0)
                status = erg_diag_set(diag, ERG_EINVAL, path,
                                      "not an erg signature store (format '%s')", fmt ? fmt : "");
            else if (strcmp(fmt, STORE_FORMAT_V1) == 0)
                old_format = 1; /* read as it is; upgraded below when opened for writing */
            else if (strcmp(fmt, STORE_FORMAT) != 0)
                status = erg_diag_set(diag, ERG_EVERSION, path,
                                      "store format %s is newer than this erg reads (%s)", fmt,
                                      STORE_FORMAT);
        } else if (r == SQLITE_BUSY) {
            status = busy_fail(st, diag);
        } else {
            status = erg_diag_set(diag, ERG_EINVAL, path, "not an erg signature store (no format)");
        }
        sqlite3_finalize(q);
    }
    if (status == ERG_OK && old_format && mode != ERG_STORE_READONLY)
        status = migrate_v1(st, diag);
    if (status != ERG_OK) {
        erg_store_close(st);
        return status;
    }
    *out = st;
    return ERG_OK;
}

void erg_store_set_wait(erg_store *store, double timeout_s,
                        void (*waiting)(void *ud, const char *path), void *ud)
{
    if (!store)
        return;
    if (timeout_s >= 0 && isfinite(timeout_s))
        store->timeout_s = timeout_s;
    store->waiting = waiting;
    store->waiting_ud = ud;
    store->told = 0;
}

/* Start a write: BEGIN IMMEDIATE outside a transaction (the write lock at once, so two writers
 * never deadlock upgrading), a savepoint inside one (erg_store_begin's). */
static int write_begin(erg_store *st, erg_diag *diag)
{
    const char *sql = sqlite3_get_autocommit(st->db) ? "BEGIN IMMEDIATE" : "SAVEPOINT erg_write";
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK)
        return ERG_OK;
    if (sqlite3_errcode(st->db) == SQLITE_BUSY)
        return busy_fail(st, diag);
    if (sqlite3_errcode(st->db) == SQLITE_READONLY)
        return erg_diag_set(diag, ERG_EACCES, st->path, "the store is read-only here");
    return db_fail(st, diag, "cannot start a transaction");
}

static int write_end(erg_store *st, int status, erg_diag *diag)
{
    int outer = st->depth == 0;
    const char *sql = outer ? (status == ERG_OK ? "COMMIT" : "ROLLBACK")
                            : (status == ERG_OK ? "RELEASE erg_write"
                                                : "ROLLBACK TO erg_write; RELEASE erg_write");
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK && status == ERG_OK) {
        status = sqlite3_errcode(st->db) == SQLITE_BUSY ? busy_fail(st, diag)
                                                        : db_fail(st, diag, "committing the write");
        if (outer)
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return status;
}

int erg_store_begin(erg_store *store, erg_diag *diag)
{
    if (!store || store->depth)
        return erg_diag_set(diag, ERG_EINVAL, store ? store->path : NULL,
                            "no store, or a transaction is already open");
    if (sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return sqlite3_errcode(store->db) == SQLITE_BUSY ? busy_fail(store, diag)
               : sqlite3_errcode(store->db) == SQLITE_READONLY
                   ? erg_diag_set(diag, ERG_EACCES, store->path, "the store is read-only here")
                   : db_fail(store, diag, "cannot start a transaction");
    store->depth = 1;
    return ERG_OK;
}

int erg_store_end(erg_store *store, int commit, erg_diag *diag)
{
    if (!store || !store->depth)
        return erg_diag_set(diag, ERG_EINVAL, store ? store->path : NULL, "no open transaction");
    store->depth = 0;
    if (!commit) {
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return ERG_OK;
    }
    return write_end(store, ERG_OK, diag);
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

static int put_json(erg_store *store, const char *name, unsigned flags, json_t *o, erg_diag *diag);

int erg_store_put(erg_store *store, const erg_signature *sig, erg_diag *diag)
{
    if (!store || !sig || !sig->name[0])
        return erg_diag_set(diag, ERG_EINVAL, store ? store->path : NULL,
                            "a stored signature needs a name");
    erg_diag sub;
    if (erg_signature_check(sig, &sub) != ERG_OK)
        return erg_diag_set(diag, ERG_EINVAL, store->path, "%s: %s", sig->name, sub.detail);
    return put_json(store, sig->name, sig->flags, erg__signature_to_json(sig), diag);
}

/* Store the JSON text of o (consumed) under name, the previous version moving to history; the
 * flags column holds the names of flags (comma-separated) for queries in SQL. */
static int put_json(erg_store *store, const char *name, unsigned flags, json_t *o, erg_diag *diag)
{
    char flags_text[512];
    erg_flags_text(flags, ",", flags_text, sizeof flags_text);
    char *text = o ? erg_json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!text)
        return erg_diag_set(diag, ERG_ENOMEM, store->path, "out of memory");
    int status = ERG_OK;
    double t = now_unix_s();
    if ((status = write_begin(store, diag)) != ERG_OK) {
        free(text);
        return status;
    }
    sqlite3_stmt *mv = NULL, *up = NULL, *same = NULL;
    /* Storing the very same signature again is a no-op: history keeps versions that differ. */
    if (sqlite3_prepare_v2(store->db, "SELECT 1 FROM signature WHERE name = ?1 AND json = ?2", -1,
                           &same, NULL) == SQLITE_OK) {
        sqlite3_bind_text(same, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(same, 2, text, -1, SQLITE_STATIC);
        int unchanged = sqlite3_step(same) == SQLITE_ROW;
        sqlite3_finalize(same);
        if (unchanged) {
            free(text);
            return write_end(store, ERG_OK, diag);
        }
    }
    if (sqlite3_prepare_v2(
            store->db,
            "INSERT INTO history(name, json, stored_unix_s, flags) SELECT name, json, "
            "stored_unix_s, flags FROM signature WHERE name = ?1",
            -1, &mv, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(store->db,
                           "INSERT OR REPLACE INTO signature(name, json, stored_unix_s, flags) "
                           "VALUES(?1, ?2, ?3, ?4)",
                           -1, &up, NULL) != SQLITE_OK) {
        status = db_fail(store, diag, "preparing the write");
    } else {
        sqlite3_bind_text(mv, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(up, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(up, 2, text, -1, SQLITE_STATIC);
        sqlite3_bind_double(up, 3, t);
        sqlite3_bind_text(up, 4, flags_text, -1, SQLITE_STATIC);
        if (sqlite3_step(mv) != SQLITE_DONE || sqlite3_step(up) != SQLITE_DONE)
            status = db_fail(store, diag, "writing the signature");
    }
    sqlite3_finalize(mv);
    sqlite3_finalize(up);
    status = write_end(store, status, diag);
    free(text);
    return status;
}

static int decode_row(erg_store *store, sqlite3_stmt *q, int col, erg_signature *out,
                      erg_diag *diag)
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
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature WHERE name = ?1", -1, &q, NULL) !=
        SQLITE_OK)
        return db_fail(store, diag, "reading");
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    int status;
    if (rc == SQLITE_ROW)
        status = decode_row(store, q, 0, out, diag);
    else if (rc == SQLITE_DONE)
        status = erg_diag_set(diag, ERG_ENOENT, store->path, "no signature named '%s' in the store",
                              name);
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
    int status =
        write_begin(store, diag); /* the signature and its history go together or not at all */
    if (status != ERG_OK)
        return status;
    if (sqlite3_prepare_v2(store->db, "DELETE FROM signature WHERE name = ?1", -1, &q, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(store->db, "DELETE FROM history WHERE name = ?1", -1, &h, NULL) !=
            SQLITE_OK) {
        status = db_fail(store, diag, "removing");
    } else {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(h, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE)
            status = db_fail(store, diag, "removing");
        else if (sqlite3_changes(store->db) == 0)
            status = erg_diag_set(diag, ERG_ENOENT, store->path,
                                  "no signature named '%s' in the store", name);
        else if (sqlite3_step(h) != SQLITE_DONE)
            status = db_fail(store, diag, "removing history");
    }
    sqlite3_finalize(q);
    sqlite3_finalize(h);
    return write_end(store, status, diag);
}

int erg_store_each(erg_store *store, int (*fn)(void *ud, const erg_signature *sig), void *ud,
                   erg_diag *diag)
{
    if (!store || !fn)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature ORDER BY name", -1, &q, NULL) !=
        SQLITE_OK)
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
    if (sqlite3_prepare_v2(store->db, "SELECT count(*) FROM history WHERE name = ?1", -1, &q,
                           NULL) != SQLITE_OK)
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
                           int (*fn)(void *ud, const erg_signature *sig, double stored_unix_s),
                           void *ud, erg_diag *diag)
{
    if (!store || !name || !fn)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(
            store->db, "SELECT json, stored_unix_s FROM history WHERE name = ?1 ORDER BY id DESC",
            -1, &q, NULL) != SQLITE_OK)
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
    return put_json(store, cs->null_context.name, cs->null_context.flags,
                    erg__context_signature_to_json(cs), diag);
}

int erg_store_get_context(erg_store *store, const char *name, erg_context_signature *out,
                          erg_diag *diag)
{
    if (!store || !name || !out)
        return ERG_EINVAL;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(store->db, "SELECT json FROM signature WHERE name = ?1", -1, &q, NULL) !=
        SQLITE_OK)
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
        status = erg_diag_set(diag, ERG_ENOENT, store->path, "no signature named '%s' in the store",
                              name);
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
    size_t db_size = sizeof db;
    if (erg_store_default_path(db, &db_size) != ERG_OK)
        return erg_diag_set(diag, ERG_ENOENT, name,
                            "no such file, and no signature store (set ERG_STORE)");
    erg_store *store = NULL;
    int st = erg_store_open(db, ERG_STORE_READONLY, &store, diag);
    if (st == ERG_OK) {
        st = erg_store_get(store, name, out, diag);
        if (st == ERG_ENOENT)
            erg_diag_set(diag, st, db,
                         "\"%s\" is neither a file beside the rules nor in the "
                         "signature store",
                         name);
    } else if (st == ERG_ENOENT) {
        erg_diag_set(diag, st, db, "no such file, and the signature store %s does not exist", db);
    }
    erg_store_close(store);
    return st;
}
