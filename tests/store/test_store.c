/* SPDX-License-Identifier: MIT */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "erg/store.h"

#include <stdlib.h>
#include <string.h>
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
    assert_int_equal(erg_store_history_each(st, "gemm", hist_cb, &(struct hist){seen, &nseen}, &d), ERG_OK);
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
    fputs("this is not SQLite, just text that is long enough to be read as a header ...............\n", f);
    fclose(f);
    erg_store *st;
    erg_diag d;
    assert_int_equal(erg_store_open(path, 1, &st, &d), ERG_EIO);
    assert_string_equal(d.where, path);
}

static void default_path_follows_environment(void **state)
{
    (void)state;
    char buf[256];
    setenv("ERG_STORE", "/x/y.db", 1);
    assert_int_equal(erg_store_default_path(buf, sizeof buf), ERG_OK);
    assert_string_equal(buf, "/x/y.db");
    unsetenv("ERG_STORE");
    setenv("XDG_DATA_HOME", "/data", 1);
    assert_int_equal(erg_store_default_path(buf, sizeof buf), ERG_OK);
    assert_string_equal(buf, "/data/erg/signatures.db");
    assert_int_equal(erg_store_default_path(buf, 4), ERG_ERANGE);
    unsetenv("XDG_DATA_HOME");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_get_replace_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(rejects_invalid_signatures, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_file_that_is_not_a_store, setup, teardown),
        cmocka_unit_test(default_path_follows_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
