/* SPDX-License-Identifier: MIT */
/* core/path: the one rule for a path into a caller's buffer (libuv's uv_os_homedir) and the one
 * XDG Base Directory lookup, with the cases the rule names: fits, fits exactly, one byte short. */
#include <stdlib.h>
#include <string.h>

#include "core/path.h"
#include "erg/error.h"
#include "erg/measure.h"
#include "support/erg_test.h"

static void put_follows_the_libuv_rule(void **state)
{
    (void)state;
    char buf[16] = "untouched";
    size_t size = sizeof buf;
    assert_int_equal(erg__path_put(buf, &size, "%s/%s", "/a", "b.json"), ERG_OK);
    assert_string_equal(buf, "/a/b.json");
    assert_int_equal(size, 9); /* the length, the NUL not counted */
    size = 10;                 /* exactly enough: 9 bytes and the NUL */
    assert_int_equal(erg__path_put(buf, &size, "%s", "/a/c.json"), ERG_OK);
    assert_int_equal(size, 9);
    strcpy(buf, "untouched");
    size = 9; /* one byte short: nothing written, the size needed given back */
    assert_int_equal(erg__path_put(buf, &size, "%s", "/a/c.json"), ERG_ERANGE);
    assert_int_equal(size, 10);
    assert_string_equal(buf, "untouched");
    assert_int_equal(erg__path_put(NULL, &size, "x"), ERG_EINVAL);
    assert_int_equal(erg__path_put(buf, NULL, "x"), ERG_EINVAL);
}

static void xdg_lookup_follows_the_specification(void **state)
{
    (void)state;
    const char *home0 = getenv("HOME");
    char saved_home[4096] = "";
    if (home0)
        strncpy(saved_home, home0, sizeof saved_home - 1);
    char buf[256];
    size_t size = sizeof buf;
    setenv("XDG_CACHE_HOME", "/c", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(erg__xdg_path("XDG_CACHE_HOME", "erg/calibration.json", buf, &size), ERG_OK);
    assert_string_equal(buf, "/c/erg/calibration.json");
    /* unset or relative (the specification: "consider the path invalid and ignore it"): the
     * specification's default under $HOME */
    setenv("XDG_CACHE_HOME", "cache", 1);
    size = sizeof buf;
    assert_int_equal(erg__xdg_path("XDG_CACHE_HOME", "erg/calibration.json", buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/u/.cache/erg/calibration.json");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_STATE_HOME");
    size = sizeof buf;
    assert_int_equal(erg__xdg_path("XDG_DATA_HOME", "erg/signatures.db", buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/u/.local/share/erg/signatures.db");
    size = sizeof buf;
    assert_int_equal(erg__xdg_path("XDG_CONFIG_HOME", "erg", buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/u/.config/erg");
    size = sizeof buf;
    assert_int_equal(erg__xdg_path("XDG_STATE_HOME", "erg", buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/u/.local/state/erg");
    /* too small: as erg__path_put */
    size = 5;
    assert_int_equal(erg__xdg_path("XDG_STATE_HOME", "erg", buf, &size), ERG_ERANGE);
    assert_int_equal(size, strlen("/home/u/.local/state/erg") + 1);
    /* neither variable: ENOENT; a variable the specification does not have: EINVAL */
    unsetenv("HOME");
    size = sizeof buf;
    assert_int_equal(erg__xdg_path("XDG_DATA_HOME", "erg", buf, &size), ERG_ENOENT);
    assert_int_equal(erg__xdg_path("XDG_RUNTIME_DIR", "erg", buf, &size), ERG_EINVAL);
    /* the public calibration default path goes through it */
    setenv("HOME", "/home/v", 1);
    size = sizeof buf;
    assert_int_equal(erg_calibration_default_path(buf, &size), ERG_OK);
    assert_string_equal(buf, "/home/v/.cache/erg/calibration.json");
    if (saved_home[0])
        setenv("HOME", saved_home, 1);
    else
        unsetenv("HOME");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_follows_the_libuv_rule),
        cmocka_unit_test(xdg_lookup_follows_the_specification),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
