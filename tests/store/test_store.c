/* SPDX-License-Identifier: MIT */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "erg/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char db[128];

static int setup(void **state)
{
    (void)state;
    if (erg_tmp_new(dir, sizeof dir, "store") != 0)
        return -1;
    snprintf(db, sizeof db, "%s/sub/sigs.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(dir);
}

static erg_signature mk(const char *name, double t)
{
    erg_signature s;
    erg_signature_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    snprintf(s.device, sizeof s.device, "gpu0");
    s.static_power_w = 60;
    s.time_s = t;
    s.dynamic_energy_j = 2.5;
    s.time_var_s2 = 1e-6;
    s.energy_var_j2 = 3600e-6 + 0.01;
    s.grade = ERG_GRADE_MODEL_BASED;
    s.runs = 5;
    return s;
}

static int count_cb(void *ud, const erg_signature *s)
{
    char *names = ud;
    strcat(names, s->name);
    strcat(names, ",");
    return 0;
}

struct hist {
    double *times;
    size_t *n;
};

static int hist_cb(void *ud, const erg_signature *s, double stored_unix_s)
{
    struct hist *h = ud;
    if (!(stored_unix_s > 1.6e9))
        return -1;
    h->times[(*h->n)++] = s->time_s;
    return 0;
}

static void put_get_replace_remove(void **state)
{
    (void)state;
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(db, 0, &st, &d), ERG_ENOENT);
    assert_int_equal(erg_store_open(db, 1, &st, &d), ERG_OK);
    erg_signature a = mk("gemm", 0.5), b = mk("attn", 0.25), r;
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &b, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_OK);
    erg_assert_near(r.time_s, 0.5, 0);
    erg_assert_near(r.energy_var_j2, a.energy_var_j2, 0);
    assert_int_equal(r.grade, ERG_GRADE_MODEL_BASED);
    assert_int_equal(r.runs, 5);

    /* The same signature again: no new version. */
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    size_t h0 = 99;
    assert_int_equal(erg_store_history(st, "gemm", &h0, &d), ERG_OK);
    assert_int_equal(h0, 0);
    a.time_s = 0.75;
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_OK);
    erg_assert_near(r.time_s, 0.75, 0);
    size_t h = 99;
    assert_int_equal(erg_store_history(st, "gemm", &h, &d), ERG_OK);
    assert_int_equal(h, 1);

    /* history_each walks earlier versions, newest first. */
    a.time_s = 0.875;
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    double seen[4];
    size_t nseen = 0;
    assert_int_equal(erg_store_history_each(st, "gemm", hist_cb, &(struct hist){seen, &nseen}, &d),
                     ERG_OK);
    assert_int_equal(nseen, 2);
    erg_assert_near(seen[0], 0.75, 0);
    erg_assert_near(seen[1], 0.5, 0);

    char names[64] = "";
    assert_int_equal(erg_store_each(st, count_cb, names, &d), ERG_OK);
    assert_string_equal(names, "attn,gemm,");

    assert_int_equal(erg_store_remove(st, "gemm", &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_ENOENT);
    assert_non_null(strstr(d.detail, "gemm"));
    assert_int_equal(erg_store_remove(st, "gemm", &d), ERG_ENOENT);
    assert_int_equal(erg_store_history(st, "gemm", &h, &d), ERG_OK);
    assert_int_equal(h, 0);
    erg_store_close(st);

    /* Reopen: the data persisted. */
    assert_int_equal(erg_store_open(db, 0, &st, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "attn", &r, &d), ERG_OK);
    erg_assert_near(r.time_s, 0.25, 0);
    erg_store_close(st);
}

static void rejects_invalid_signatures(void **state)
{
    (void)state;
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(db, 1, &st, &d), ERG_OK);
    erg_signature s = mk("", 1);
    assert_int_equal(erg_store_put(st, &s, &d), ERG_EINVAL);
    s = mk("bad", 1);
    s.energy_var_j2 = 0; /* below s^2 var_T: Axiom M1 */
    assert_int_equal(erg_store_put(st, &s, &d), ERG_EINVAL);
    assert_int_equal(erg_store_get(st, "bad", &s, &d), ERG_ENOENT);
    erg_store_close(st);
}

static void refuses_a_file_that_is_not_a_store(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/not-a-db", dir);
    FILE *f = fopen(path, "w");
    fputs("this is not SQLite, just text that is long enough to be read as a header "
          "...............\n",
          f);
    fclose(f);
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(path, 1, &st, &d), ERG_EIO);
    assert_string_equal(d.where, path);
}

/* bytes of a file, to check it was left unchanged */
static size_t slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

static void foreign_and_empty_files_are_refused_unchanged(void **state)
{
    (void)state;
    char path[160], before[8192], after[8192];
    erg_store *st = NULL;
    erg_diag d;
    /* a SQLite database of another program */
    snprintf(path, sizeof path, "%s/other.db", dir);
    sqlite3 *o;
    assert_int_equal(sqlite3_open(path, &o), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(o, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(o);
    size_t n0 = slurp(path, before, sizeof before);
    assert_true(n0 > 0);
    for (int mode = ERG_STORE_READONLY; mode <= ERG_STORE_READWRITE; mode++) {
        assert_int_equal(erg_store_open(path, mode, &st, &d), ERG_EINVAL);
        assert_non_null(strstr(d.detail, "without erg's tables"));
        assert_null(st);
    }
    assert_int_equal(slurp(path, after, sizeof after), n0);
    assert_memory_equal(before, after, n0);
    /* an empty file */
    snprintf(path, sizeof path, "%s/empty.db", dir);
    fclose(fopen(path, "w"));
    assert_int_equal(erg_store_open(path, ERG_STORE_CREATE, &st, &d), ERG_EINVAL);
    assert_non_null(strstr(d.detail, "an empty file"));
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    /* a folder */
    assert_int_equal(erg_store_open(dir, ERG_STORE_READONLY, &st, &d), ERG_EINVAL);
    assert_int_equal(erg_store_open(dir, 7, &st, &d), ERG_EINVAL);
}

static void reads_never_write_and_writes_group(void **state)
{
    (void)state;
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(db, ERG_STORE_CREATE, &st, &d), ERG_OK);
    erg_signature a = mk("a", 1), b = mk("b", 2);
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    erg_store_close(st);
    static char before[65536], after[65536];
    size_t n0 = slurp(db, before, sizeof before);
    /* read-only: a write is refused, the file unchanged */
    assert_int_equal(erg_store_open(db, ERG_STORE_READONLY, &st, &d), ERG_OK);
    erg_signature got;
    assert_int_equal(erg_store_get(st, "a", &got, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &b, &d), ERG_EACCES);
    assert_int_equal(erg_store_remove(st, "a", &d), ERG_EACCES);
    erg_store_close(st);
    assert_int_equal(slurp(db, after, sizeof after), n0);
    assert_memory_equal(before, after, n0);
    /* a group rolled back stores nothing; committed stores all */
    assert_int_equal(erg_store_open(db, ERG_STORE_READWRITE, &st, &d), ERG_OK);
    assert_int_equal(erg_store_begin(st, &d), ERG_OK);
    assert_int_equal(erg_store_begin(st, &d), ERG_EINVAL);
    assert_int_equal(erg_store_put(st, &b, &d), ERG_OK);
    erg_signature a2 = mk("a", 3);
    assert_int_equal(erg_store_put(st, &a2, &d), ERG_OK);
    assert_int_equal(erg_store_end(st, 0, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "b", &got, &d), ERG_ENOENT);
    assert_int_equal(erg_store_get(st, "a", &got, &d), ERG_OK);
    erg_assert_near(got.time_s, 1.0, 0);
    assert_int_equal(erg_store_begin(st, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &b, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &a2, &d), ERG_OK);
    assert_int_equal(erg_store_end(st, 1, &d), ERG_OK);
    assert_int_equal(erg_store_end(st, 1, &d), ERG_EINVAL);
    assert_int_equal(erg_store_get(st, "b", &got, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "a", &got, &d), ERG_OK);
    erg_assert_near(got.time_s, 3.0, 0);
    size_t h = 0;
    assert_int_equal(erg_store_history(st, "a", &h, &d), ERG_OK);
    assert_int_equal(h, 1);
    erg_store_close(st);
}

static int told;
static void on_wait(void *ud, const char *path)
{
    (void)ud;
    (void)path;
    told++;
}

static void a_locked_store_waits_then_says_busy(void **state)
{
    (void)state;
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(db, ERG_STORE_CREATE, &st, &d), ERG_OK);
    /* another connection holds the write lock */
    sqlite3 *o;
    assert_int_equal(sqlite3_open(db, &o), SQLITE_OK);
    assert_int_equal(sqlite3_exec(o, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    told = 0;
    erg_store_set_wait(st, 1.3, on_wait, NULL);
    erg_signature a = mk("a", 1);
    assert_int_equal(erg_store_put(st, &a, &d), ERG_EBUSY);
    assert_non_null(strstr(d.detail, "busy"));
    assert_int_equal(told, 1); /* told once, after the first second */
    sqlite3_exec(o, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(o);
    /* released: the same write goes through */
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    erg_store_close(st);
}

static void default_path_follows_environment(void **state)
{
    (void)state;
    char buf[256], saved_home[4096] = "";
    if (getenv("HOME"))
        strncpy(saved_home, getenv("HOME"), sizeof saved_home - 1);
    size_t size = sizeof buf;
    setenv("ERG_STORE", "/x/y.db", 1);
    assert_int_equal(erg_store_default_path(buf, &size), ERG_OK);
    assert_string_equal(buf, "/x/y.db");
    assert_int_equal(size, 7);
    unsetenv("ERG_STORE");
    setenv("XDG_DATA_HOME", "/data", 1);
    size = sizeof buf;
    assert_int_equal(erg_store_default_path(buf, &size), ERG_OK);
    assert_string_equal(buf, "/data/erg/signatures.db");
    size = 4; /* too small: *size is what it needs, the NUL counted */
    assert_int_equal(erg_store_default_path(buf, &size), ERG_ERANGE);
    assert_int_equal(size, strlen("/data/erg/signatures.db") + 1);
    /* a relative XDG_DATA_HOME is ignored (XDG Base Directory spec): $HOME/.local/share */
    setenv("XDG_DATA_HOME", "relative/data", 1);
    setenv("HOME", "/home/u", 1);
    size = sizeof buf;
    assert_int_equal(erg_store_default_path(buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/u/.local/share/erg/signatures.db");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    size = sizeof buf;
    assert_int_equal(erg_store_default_path(buf, &size), ERG_ENOENT);
    if (saved_home[0])
        setenv("HOME", saved_home, 1);
}

/* One text value of a query on the store file (through SQLite itself), into buf. */
static const char *sql_text(const char *path, const char *sql, char *buf, size_t size)
{
    sqlite3 *o;
    sqlite3_stmt *q;
    buf[0] = '\0';
    assert_int_equal(sqlite3_open_v2(path, &o, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(o, sql, -1, &q, NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(o);
    return buf;
}

static int flags_cb(void *ud, const erg_signature *s)
{
    *(unsigned *)ud |= s->flags;
    return 0;
}

static int hist_flags_cb(void *ud, const erg_signature *s, double stored_unix_s)
{
    (void)stored_unix_s;
    *(unsigned *)ud = s->flags;
    return 0;
}

/* Measurement flags are stored with the signature (its JSON and the "flags" column, names
 * comma-separated) and come back from get, each and history. */
static void flags_are_stored_and_read_back(void **state)
{
    (void)state;
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(db, ERG_STORE_CREATE, &st, &d), ERG_OK);
    erg_signature a = mk("attn", 0.5), b = mk("mlp", 1.0), r;
    a.flags = ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE;
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &b, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "attn", &r, &d), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE);
    assert_int_equal(erg_store_get(st, "mlp", &r, &d), ERG_OK);
    assert_int_equal(r.flags, 0);
    unsigned all = 0;
    assert_int_equal(erg_store_each(st, flags_cb, &all, &d), ERG_OK);
    assert_int_equal(all, ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE);
    /* a new version without flags: the flagged one moves to the history, flags and all */
    a.flags = 0;
    a.time_s = 0.6;
    assert_int_equal(erg_store_put(st, &a, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "attn", &r, &d), ERG_OK);
    assert_int_equal(r.flags, 0);
    unsigned old = 0;
    assert_int_equal(erg_store_history_each(st, "attn", hist_flags_cb, &old, &d), ERG_OK);
    assert_int_equal(old, ERG_FLAG_STALE | ERG_FLAG_INCOMPLETE);
    erg_store_close(st);
    char buf[256];
    assert_string_equal(
        sql_text(db, "SELECT flags FROM history WHERE name='attn'", buf, sizeof buf),
        "stale,incomplete");
    assert_string_equal(
        sql_text(db, "SELECT flags FROM signature WHERE name='attn'", buf, sizeof buf), "");
    assert_string_equal(
        sql_text(db, "SELECT value FROM erg_meta WHERE key='format'", buf, sizeof buf),
        "erg-store/2");
}

/* A store written by an earlier erg (erg-store/1: no flags column) opens read-only as it is, its
 * file unchanged; opened for writing it is upgraded in place (the column added, '' for the old
 * rows) and keeps every signature and its history; a newer format is refused. */
static void an_old_format_store_is_read_then_upgraded(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/v1.db", dir);
    sqlite3 *o;
    assert_int_equal(sqlite3_open(path, &o), SQLITE_OK);
    /* erg-store/1's schema and rows, as the erg of that version wrote them */
    assert_int_equal(
        sqlite3_exec(
            o,
            "CREATE TABLE erg_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE signature(name TEXT PRIMARY KEY, json TEXT NOT NULL,"
            " stored_unix_s REAL NOT NULL);"
            "CREATE TABLE history(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " json TEXT NOT NULL, stored_unix_s REAL NOT NULL);"
            "CREATE INDEX history_name ON history(name);"
            "INSERT INTO erg_meta VALUES('format', 'erg-store/1');"
            "INSERT INTO signature VALUES('gemm', '{\"name\":\"gemm\",\"device\":\"cpu\","
            "\"static_power_w\":10.0,\"time_s\":2.0,\"dynamic_energy_j\":30.0,"
            "\"time_var_s2\":0.0,\"energy_var_j2\":0.0,\"grade\":\"hw_shunt\",\"runs\":3}',"
            " 1700000000.0);"
            "INSERT INTO history(name, json, stored_unix_s) VALUES('gemm', "
            "'{\"name\":\"gemm\",\"device\":\"cpu\",\"static_power_w\":10.0,\"time_s\":3.0,"
            "\"dynamic_energy_j\":40.0,\"grade\":\"hw_shunt\"}', 1600000000.0);",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(o);
    static char before[1 << 16], after[1 << 16];
    size_t nb = slurp(path, before, sizeof before);
    assert_true(nb > 0);

    erg_store *st;
    erg_diag d;
    erg_signature r;
    assert_int_equal(erg_store_open(path, ERG_STORE_READONLY, &st, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_OK);
    erg_assert_near(erg_signature_energy_j(&r), 10.0 * 2.0 + 30.0, 1e-12);
    assert_int_equal(r.runs, 3);
    assert_int_equal(r.flags, 0);
    size_t nh = 0;
    assert_int_equal(erg_store_history(st, "gemm", &nh, &d), ERG_OK);
    assert_int_equal(nh, 1);
    erg_store_close(st);
    assert_int_equal(slurp(path, after, sizeof after), nb); /* read-only: not a byte changed */
    assert_memory_equal(before, after, nb);

    assert_int_equal(erg_store_open(path, ERG_STORE_READWRITE, &st, &d), ERG_OK);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_OK);
    erg_assert_near(r.time_s, 2.0, 0);
    erg_signature n = mk("gemm", 2.5);
    n.flags = ERG_FLAG_WRAP_CORRECTED;
    assert_int_equal(erg_store_put(st, &n, &d), ERG_OK);
    assert_int_equal(erg_store_history(st, "gemm", &nh, &d), ERG_OK);
    assert_int_equal(nh, 2);
    assert_int_equal(erg_store_get(st, "gemm", &r, &d), ERG_OK);
    assert_int_equal(r.flags, ERG_FLAG_WRAP_CORRECTED);
    erg_store_close(st);
    char buf[256];
    assert_string_equal(
        sql_text(path, "SELECT value FROM erg_meta WHERE key='format'", buf, sizeof buf),
        "erg-store/2");
    assert_string_equal(
        sql_text(path, "SELECT flags FROM signature WHERE name='gemm'", buf, sizeof buf),
        "wrap_corrected");
    assert_string_equal(
        sql_text(path, "SELECT group_concat(quote(flags)) FROM history", buf, sizeof buf),
        "'',''"); /* the old rows: no flags */
    /* reopening the upgraded store changes nothing more */
    assert_int_equal(erg_store_open(path, ERG_STORE_READWRITE, &st, &d), ERG_OK);
    erg_store_close(st);

    /* a store from a newer erg is refused by name, not misread */
    assert_int_equal(sqlite3_open(path, &o), SQLITE_OK);
    assert_int_equal(sqlite3_exec(o, "UPDATE erg_meta SET value='erg-store/3' WHERE key='format'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(o);
    erg_diag_clear(&d);
    assert_int_equal(erg_store_open(path, ERG_STORE_READONLY, &st, &d), ERG_EVERSION);
    assert_non_null(strstr(d.detail, "erg-store/3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_get_replace_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(rejects_invalid_signatures, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_file_that_is_not_a_store, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_and_empty_files_are_refused_unchanged, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reads_never_write_and_writes_group, setup, teardown),
        cmocka_unit_test_setup_teardown(a_locked_store_waits_then_says_busy, setup, teardown),
        cmocka_unit_test(default_path_follows_environment),
        cmocka_unit_test_setup_teardown(flags_are_stored_and_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(an_old_format_store_is_read_then_upgraded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
