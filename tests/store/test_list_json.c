/* SPDX-License-Identifier: MIT */
/* store-list/1, written by the library (erg_store_write_list_json, erg_store_write_history_json):
 * the whole text against a hand-written expectation, the history's versions and stored times, and
 * bad paths (issue 13: every format erg writes is the library's). */
#include "support/erg_test.h"
#include "support/erg_tmp.h"

#include "erg/store.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char db[128];

static int setup(void **state)
{
    (void)state;
    if (erg_tmp_new(dir, sizeof dir, "storejson") != 0)
        return -1;
    snprintf(db, sizeof db, "%s/sigs.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return erg_tmp_free(dir);
}

/* s = 60 W, T = t, d = 2.5 J: E = 60·t + 2.5 J */
static erg_signature mk(const char *name, const char *device, double t, unsigned flags)
{
    erg_signature s;
    erg_signature_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    snprintf(s.device, sizeof s.device, "%s", device);
    s.static_power_w = 60;
    s.time_s = t;
    s.dynamic_energy_j = 2.5;
    s.energy_var_j2 = 0.01;
    s.grade = ERG_GRADE_MODEL_BASED;
    s.runs = 5;
    s.flags = flags;
    return s;
}

static void list_and_history(void **state)
{
    (void)state;
    erg_diag d;
    erg_store *st;
    assert_int_equal(erg_store_open(db, ERG_STORE_CREATE, &st, &d), ERG_OK);
    /* the empty store: an empty list */
    const char *p = erg_tmp_path(dir, "list.json");
    assert_int_equal(erg_store_write_list_json(p, st, &d), ERG_OK);
    assert_string_equal(erg_tmp_slurp(p),
                        "{\n  \"erg\": \"store-list/1\",\n  \"signatures\": []\n}\n");
    /* zeta (0.5 s: E = 32.5 J, flags 1 and 4: wrap_corrected, backwards), alpha (0.25 s: 17.5
     * J), then alpha again at 0.125 s (10 J) and 0.0625 s (6.25 J): two earlier versions */
    erg_signature z = mk("zeta", "gpu0", 0.5, ERG_FLAG_WRAP_CORRECTED | ERG_FLAG_BACKWARDS);
    erg_signature a1 = mk("alpha", "", 0.25, 0), a2 = mk("alpha", "", 0.125, 0),
                  a3 = mk("alpha", "", 0.0625, 0);
    double t0 = (double)time(NULL);
    assert_int_equal(erg_store_put(st, &z, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &a1, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &a2, &d), ERG_OK);
    assert_int_equal(erg_store_put(st, &a3, &d), ERG_OK);
    double t1 = (double)time(NULL) + 1;
    assert_int_equal(erg_store_write_list_json(p, st, &d), ERG_OK);
    assert_string_equal(erg_tmp_slurp(p), "{\n"
                                          "  \"erg\": \"store-list/1\",\n"
                                          "  \"signatures\": [\n"
                                          "    {\n"
                                          "      \"name\": \"alpha\",\n"
                                          "      \"device\": \"\",\n"
                                          "      \"energy_j\": 6.25,\n"
                                          "      \"time_s\": 0.0625,\n"
                                          "      \"static_power_w\": 60.0,\n"
                                          "      \"dynamic_energy_j\": 2.5,\n"
                                          "      \"grade\": \"model_based\",\n"
                                          "      \"runs\": 5,\n"
                                          "      \"flags\": []\n"
                                          "    },\n"
                                          "    {\n"
                                          "      \"name\": \"zeta\",\n"
                                          "      \"device\": \"gpu0\",\n"
                                          "      \"energy_j\": 32.5,\n"
                                          "      \"time_s\": 0.5,\n"
                                          "      \"static_power_w\": 60.0,\n"
                                          "      \"dynamic_energy_j\": 2.5,\n"
                                          "      \"grade\": \"model_based\",\n"
                                          "      \"runs\": 5,\n"
                                          "      \"flags\": [\n"
                                          "        \"wrap_corrected\",\n"
                                          "        \"backwards\"\n"
                                          "      ]\n"
                                          "    }\n"
                                          "  ]\n"
                                          "}\n");
    /* history of alpha, newest first: 0.125 s (version 1), 0.25 s (version 2) */
    const char *h = erg_tmp_path(dir, "history.json");
    assert_int_equal(erg_store_write_history_json(h, st, "alpha", &d), ERG_OK);
    json_t *doc = json_load_file(h, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "erg")), "store-list/1");
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "alpha");
    const json_t *sigs = json_object_get(doc, "signatures");
    assert_int_equal(json_array_size(sigs), 2);
    const double want_t[2] = {0.125, 0.25}, want_e[2] = {10.0, 17.5};
    for (size_t i = 0; i < 2; i++) {
        const json_t *e = json_array_get(sigs, i);
        assert_int_equal(json_integer_value(json_object_get(e, "version")), (json_int_t)i + 1);
        erg_assert_near(json_number_value(json_object_get(e, "time_s")), want_t[i], 0);
        erg_assert_near(json_number_value(json_object_get(e, "energy_j")), want_e[i], 0);
        double when = json_number_value(json_object_get(e, "stored_unix_s"));
        assert_true(when >= t0 - 1 && when <= t1);
    }
    /* the keys in order: the list's, then version and stored_unix_s */
    const char *t = erg_tmp_slurp(h);
    assert_non_null(strstr(t, "  \"name\": \"alpha\",\n  \"signatures\": [\n"));
    assert_non_null(strstr(t, "\"flags\": [],\n      \"version\": 1,\n      \"stored_unix_s\": "));
    json_decref(doc);
    /* zeta has no history: an empty list; an unknown name is refused, nothing written */
    assert_int_equal(erg_store_write_history_json(h, st, "zeta", &d), ERG_OK);
    assert_string_equal(erg_tmp_slurp(h), "{\n  \"erg\": \"store-list/1\",\n  \"name\": \"zeta\",\n"
                                          "  \"signatures\": []\n}\n");
    const char *u = erg_tmp_path(dir, "unknown.json");
    assert_int_equal(erg_store_write_history_json(u, st, "nosuch", &d), ERG_ENOENT);
    assert_int_equal(access(u, F_OK), -1);
    /* bad arguments and paths */
    assert_int_equal(erg_store_write_list_json(NULL, st, &d), ERG_EINVAL);
    assert_int_equal(erg_store_write_list_json(p, NULL, &d), ERG_EINVAL);
    assert_int_equal(erg_store_write_history_json(h, st, NULL, &d), ERG_EINVAL);
    assert_int_equal(erg_store_write_list_json(erg_tmp_path(dir, "nodir/l.json"), st, &d),
                     ERG_ENOENT);
    assert_int_equal(access(erg_tmp_path(dir, "nodir"), F_OK), -1);
    assert_int_equal(erg_store_write_list_json(dir, st, &d), ERG_EINVAL);
    /* a failed write leaves the former document as it was */
    if (access("/dev/full", W_OK) == 0)
        assert_int_equal(erg_store_write_list_json("/dev/full", st, &d), ERG_EIO);
    assert_non_null(strstr(erg_tmp_slurp(p), "\"name\": \"zeta\""));
    erg_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_and_history),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
