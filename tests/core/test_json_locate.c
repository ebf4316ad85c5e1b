/* SPDX-License-Identifier: MIT */
/* erg__json_locate: the line and column of a decoded value in its JSON text (jansson keeps no
 * positions), hand-counted on a pretty-printed document whose strings hold brackets, braces,
 * commas, colons and escaped quotes, where a key also stands as a value and inside a nested
 * object; and erg__json_diag_locate, which turns a reader's "name" + "root.path: ..." message into
 * "name:line:col". */
#include "support/erg_test.h"

#include "core/json.h"

#include <string.h>

/* Columns are 1-based bytes; the line numbers stand beside the lines. */
static const char doc[] =
    "{\"erg\": \"signature/1\",\n"                                /* 1 */
    "  \"name\": \"contexts\",\n"                                 /* 2: "contexts" as a value */
    "  \"meta\": {\"contexts\": [9], \"s\": \"a]}\\\",\"},\n"     /* 3: key in a nested object */
    "  \"contexts\": [\n"                                         /* 4 */
    "    {\"name\": \"p0\", \"corunners\": [\"x,\", \"[y]\"]},\n" /* 5 */
    "    {\"name\": \"p1\",\n"                                    /* 6 */
    "     \"corunners\": [\"a\", \"b\\\"]\", 7]}\n"               /* 7 */
    "  ],\n"                                                      /* 8 */
    "  \"time_s\": -1}\n";                                        /* 9 */

static void at(const char *path, size_t line, size_t col)
{
    size_t l = 0, c = 0;
    if (!erg__json_locate(doc, strlen(doc), path, &l, &c))
        fail_msg("%s: not found", path);
    if (l != line || c != col)
        fail_msg("%s: %zu:%zu, expected %zu:%zu", path, l, c, line, col);
}

static void locate_values(void **state)
{
    (void)state;
    at("", 1, 1);
    at("erg", 1, 9);
    at("name", 2, 11);
    at("meta", 3, 11);
    at("meta.contexts", 3, 24);
    at("meta.s", 3, 34);
    at("contexts", 4, 15);
    at("contexts[0]", 5, 5);
    at("contexts[0].name", 5, 14);
    at("contexts[0].corunners[1]", 5, 40);
    at("contexts[1]", 6, 5);
    /*      "corunners": ["a", "b\"]", 7]}  : 5 spaces, key 6-17, '[' 19, "a" 20-22, "b\"]" 25-30,
     *      7 at 33 */
    at("contexts[1].corunners[0]", 7, 20);
    at("contexts[1].corunners[2]", 7, 33);
    at("time_s", 9, 13);
    size_t l, c;
    assert_int_equal(erg__json_locate(doc, strlen(doc), "contexts[2]", &l, &c), 0);
    assert_int_equal(erg__json_locate(doc, strlen(doc), "contexts[1].runs", &l, &c), 0);
    assert_int_equal(erg__json_locate(doc, strlen(doc), "name.x", &l, &c), 0);
    assert_int_equal(erg__json_locate(doc, strlen(doc), "meta[0]", &l, &c), 0);
    /* a text cut short is not walked past its end */
    assert_int_equal(erg__json_locate(doc, 60, "contexts", &l, &c), 0);
    assert_int_equal(erg__json_locate("[1, 2", 5, "[3]", &l, &c), 0);
}

static void locate_diag(void **state)
{
    (void)state;
    erg_diag d;
    erg_diag_set(&d, ERG_EPARSE, "f.json", "signature.contexts[1].corunners[2]: expected a name");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json:7:33");
    assert_string_equal(d.detail, "signature.contexts[1].corunners[2]: expected a name");
    assert_int_equal(d.status, ERG_EPARSE);
    erg_diag_set(&d, ERG_EPARSE, "f.json", "signature: Axiom M1 does not hold");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json:1:1");
    /* already positioned, another status, another root, a path not in the text: unchanged */
    erg_diag_set(&d, ERG_EPARSE, "f.json:3:4", "signature.time_s: bad");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json:3:4");
    erg_diag_set(&d, ERG_ENOMEM, "f.json", "signature.time_s: out of memory");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json");
    erg_diag_set(&d, ERG_EPARSE, "f.json", "signatures.time_s: bad");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json");
    erg_diag_set(&d, ERG_EPARSE, "f.json", "signature.runs: bad");
    erg__json_diag_locate(&d, doc, strlen(doc), "f.json", "signature");
    assert_string_equal(d.where, "f.json");
}

/* erg__json_diag_place: the path from the root; a path naming no value gives its nearest
 * enclosing value; EINVAL is placed too (undeclared names), ENOMEM and placed ones are not. */
static void place_diag(void **state)
{
    (void)state;
    static const char t[] = "{\n \"a\": {\"b\": 1},\n \"c\": [true,\n  {\"d.e\": 2}]}";
    erg_diag d;
    erg_diag_set(&d, ERG_EPARSE, "f.json", "a.b: must not be 1");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json:2:13");
    assert_string_equal(d.detail, "a.b: must not be 1");
    erg_diag_set(&d, ERG_EPARSE, "f.json", "a.x: required number is missing");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json:2:7");
    erg_diag_set(&d, ERG_EINVAL, "f.json", "c[1].d.e: undeclared device");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json:4:3");
    assert_int_equal(d.status, ERG_EINVAL);
    erg_diag_set(&d, ERG_EPARSE, "f.json", "z.b: bad");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json");
    /* a member the root object lacks: the root object; not a member name, or a root that is no
     * object: unchanged */
    erg_diag_set(&d, ERG_EPARSE, "f.json", "hidden_size: required field is missing");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json:1:1");
    static const char sp[] = "\n  {\"a\": 1}";
    erg_diag_set(&d, ERG_EPARSE, "f.json", "b: required field is missing");
    erg__json_diag_place(&d, sp, strlen(sp), "f.json");
    assert_string_equal(d.where, "f.json:2:3");
    erg_diag_set(&d, ERG_EVERSION, "f.json", "gpu-target/2: this erg reads gpu-target/1");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json");
    erg_diag_set(&d, ERG_EPARSE, "f.json", "b: required field is missing");
    erg__json_diag_place(&d, "[1]", 3, "f.json");
    assert_string_equal(d.where, "f.json");
    erg_diag_set(&d, ERG_ENOMEM, "f.json", "a.b: out of memory");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json");
    erg_diag_set(&d, ERG_EPARSE, "f.json:1:1", "a.b: bad");
    erg__json_diag_place(&d, t, strlen(t), "f.json");
    assert_string_equal(d.where, "f.json:1:1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(locate_values),
        cmocka_unit_test(locate_diag),
        cmocka_unit_test(place_diag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
