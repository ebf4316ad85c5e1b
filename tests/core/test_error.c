/* SPDX-License-Identifier: MIT */
#include "support/erg_test.h"

#include "core/file.h"
#include "core/json.h"
#include "erg/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void status_names_and_messages(void **state)
{
    (void)state;
    assert_string_equal(erg_status_name(ERG_EPARSE), "ERG_EPARSE");
    assert_string_equal(erg_strerror(ERG_EACCES), "permission denied");
    assert_string_equal(erg_strerror(12345), "unknown status");
    assert_int_equal(ERG_EACCES, -EACCES);
}

static void diag_formats_where_and_detail(void **state)
{
    (void)state;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_diag_set(&d, ERG_EPARSE, "a.json:3:7", "bad %s", "thing"), ERG_EPARSE);
    char buf[128];
    erg_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "a.json:3:7: bad thing");
    assert_int_equal(erg_diag_set(NULL, ERG_EIO, NULL, NULL), ERG_EIO);
}

static void json_syntax_error_names_line_and_column(void **state)
{
    (void)state;
    const char *text = "{\n  \"a\": 1,\n  \"b\": ]\n}\n";
    json_t *root = NULL;
    erg_diag d;
    assert_int_equal(erg__json_load_buffer(text, strlen(text), "x.json", &root, &d), ERG_EPARSE);
    assert_string_equal(d.where, "x.json:3:8");
    assert_null(root);
}

static void json_tag_versions(void **state)
{
    (void)state;
    erg_diag d;
    json_t *ok = json_pack("{s:s}", "erg", "signature/1");
    json_t *minor = json_pack("{s:s}", "erg", "signature/1.2");
    json_t *v2 = json_pack("{s:s}", "erg", "signature/2");
    json_t *other = json_pack("{s:s}", "erg", "schedule/1");
    json_t *none = json_object();
    assert_int_equal(erg__json_check_tag(ok, "signature", 1, "f", &d), ERG_OK);
    assert_int_equal(erg__json_check_tag(minor, "signature", 1, "f", &d), ERG_OK);
    assert_int_equal(erg__json_check_tag(v2, "signature", 1, "f", &d), ERG_EVERSION);
    assert_non_null(strstr(d.detail, "signature/2"));
    assert_int_equal(erg__json_check_tag(other, "signature", 1, "f", &d), ERG_EPARSE);
    assert_int_equal(erg__json_check_tag(none, "signature", 1, "f", &d), ERG_EPARSE);
    assert_int_equal(erg__json_check_tag(none, "signature", 0, "f", &d), ERG_OK);
    json_decref(ok);
    json_decref(minor);
    json_decref(v2);
    json_decref(other);
    json_decref(none);
}

static void json_numbers_are_checked(void **state)
{
    (void)state;
    erg_diag d;
    json_t *o = json_pack("{s:f,s:s,s:f}", "a", 1.5, "b", "x", "c", -2.0);
    double v = 7;
    assert_int_equal(erg__json_number(o, "a", ERG_JSON_REQUIRED, &v, "f", "p", &d), ERG_OK);
    erg_assert_near(v, 1.5, 0);
    assert_int_equal(erg__json_number(o, "b", 0, &v, "f", "p", &d), ERG_EPARSE);
    assert_string_equal(d.detail, "p.b: expected a number");
    assert_int_equal(erg__json_number(o, "c", ERG_JSON_NONNEG, &v, "f", "p", &d), ERG_EPARSE);
    assert_int_equal(erg__json_number(o, "zz", ERG_JSON_REQUIRED, &v, "f", "p", &d), ERG_EPARSE);
    v = 3;
    assert_int_equal(erg__json_number(o, "zz", 0, &v, "f", "p", &d), ERG_OK);
    erg_assert_near(v, 3, 0);
    json_decref(o);
}

static void atomic_write_replaces_whole_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/erg-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    assert_int_equal(erg__write_file_atomic(path, "hello\n", 6, NULL), ERG_OK);
    char *buf;
    size_t len;
    assert_int_equal(erg__read_file(path, &buf, &len, NULL), ERG_OK);
    assert_int_equal(len, 6);
    assert_string_equal(buf, "hello\n");
    free(buf);
    erg_diag d;
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
    assert_int_equal(erg__write_file_atomic(bad, "x", 1, &d), ERG_ENOENT);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_names_and_messages),
        cmocka_unit_test(diag_formats_where_and_detail),
        cmocka_unit_test(json_syntax_error_names_line_and_column),
        cmocka_unit_test(json_tag_versions),
        cmocka_unit_test(json_numbers_are_checked),
        cmocka_unit_test(atomic_write_replaces_whole_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
