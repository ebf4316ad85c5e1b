/* SPDX-License-Identifier: MIT */
/* erg's JSON writers when memory runs out: every allocation jansson makes while a document is
 * dumped is failed in turn; the text is then either absent or exactly the text of a dump that
 * did not fail, never a corrupt one (jansson 2.14's json_dumps drops the failure of an object
 * key's append and returned e.g. {"time_s:0.5} here), and a file written is whole or absent. */
#include "support/erg_test.h"
#include "support/erg_tmp.h"
#include "support/failalloc.h"

#include "core/json.h"
#include "erg/stats.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void *__wrap_malloc(size_t size);

static void jfree(void *p)
{
    free(p);
}

/* A signature-like document: keys, strings, reals, integers, nested objects and arrays. */
static json_t *document(void)
{
    erg_failalloc_arm(0, 0);
    json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:f, s:i, s:{s:{s:i}}, s:[f, f, f]}", "name",
                          "softmax", "device", "a100", "static_power_w", 66.0, "time_s", 0.00135,
                          "dynamic_energy_j", 0.104, "runs", 100, "omega", "device", "sm_clock_mhz",
                          1410, "samples", 1.5, 2.5, 3.5);
    assert_non_null(o);
    return o;
}

static void dumps_is_whole_or_null_under_every_failure(void **state)
{
    (void)state;
    json_t *o = document();
    static const size_t flags[] = {JSON_COMPACT | JSON_REAL_PRECISION(17), JSON_INDENT(2),
                                   JSON_INDENT(1) | JSON_SORT_KEYS};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        erg_failalloc_arm(0, 0);
        char *good = erg_json_dumps(o, flags[f]);
        assert_non_null(good);
        unsigned long calls = erg_failalloc_calls();
        assert_true(calls > 0);
        char *ref = json_dumps(o, flags[f]);
        assert_string_equal(good, ref);
        free(ref);
        size_t nulls = 0;
        for (unsigned long n = 1; n <= calls + 1; n++) {
            erg_failalloc_arm(n, 0);
            char *text = erg_json_dumps(o, flags[f]);
            if (text)
                assert_string_equal(text, good);
            else
                nulls++;
            free(text);
        }
        erg_failalloc_arm(0, 0);
        assert_true(nulls > 0);
        free(good);
    }
    json_decref(o);
}

static void dump_file_is_whole_or_absent_under_every_failure(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_int_equal(erg_tmp_new(dir, sizeof dir, "json-oom"), 0);
    snprintf(path, sizeof path, "%s/out.json", dir);
    json_t *o = document();
    erg_diag d;
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg__json_dump_file(o, path, JSON_INDENT(1), &d), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    char *good = erg_json_dumps(o, JSON_INDENT(1));
    assert_non_null(good);
    for (unsigned long n = 1; n <= calls; n++) {
        remove(path);
        erg_failalloc_arm(n, 0);
        int rc = erg__json_dump_file(o, path, JSON_INDENT(1), &d);
        erg_failalloc_arm(0, 0);
        struct stat st;
        if (rc != ERG_OK) {
            assert_int_equal(rc, ERG_ENOMEM);
            assert_int_equal(stat(path, &st), -1);
            continue;
        }
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        char buf[1024];
        size_t len = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[len] = '\0';
        assert_int_equal(len, strlen(good) + 1);
        assert_memory_equal(buf, good, strlen(good));
    }
    free(good);
    json_decref(o);
    erg_tmp_free(dir);
}

int main(void)
{
    /* jansson's allocations go through the failure injection too. */
    json_set_alloc_funcs(__wrap_malloc, jfree);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dumps_is_whole_or_null_under_every_failure),
        cmocka_unit_test(dump_file_is_whole_or_absent_under_every_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
