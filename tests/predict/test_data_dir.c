/* SPDX-License-Identifier: MIT */
/* Where the default model and grid are looked up: $ERG_MODEL_DIR / $ERG_GRID_DIR, $ERG_DATA_DIR,
 * the install data dir, the source tree. */
#include "support/erg_test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg/predict.h"

static void clear_env(void)
{
    unsetenv("ERG_DATA_DIR");
    unsetenv("ERG_MODEL_DIR");
    unsetenv("ERG_GRID_DIR");
}

static void default_paths_follow_the_lookup_order(void **state)
{
    (void)state;
    clear_env();
    char buf[PATH_MAX], want[PATH_MAX];
    size_t size;
    /* Nothing set: the build tree finds the source tree's file (unless an erg is installed in
     * the configured prefix, whose copy comes first). */
    size = sizeof buf;
    assert_int_equal(erg_op_model_default_path("a100-llmcompass", buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_non_null(realpath(ERG_TEST_SOURCE_DIR "/models/a100-llmcompass.json", want));
    if (strcmp(buf, want) != 0)
        assert_non_null(strstr(buf, "/erg/models/a100-llmcompass.json"));
    assert_int_equal(access(buf, R_OK), 0);
    size = sizeof buf;
    assert_int_equal(erg_profile_default_grid(ERG_TARGET_CPU, buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_non_null(realpath(ERG_TEST_SOURCE_DIR "/grids/cpu.csv", want));
    if (strcmp(buf, want) != 0)
        assert_non_null(strstr(buf, "/erg/grids/cpu.csv"));
    /* A kind nobody has: where an installed erg would keep it. */
    size = sizeof buf;
    assert_int_equal(erg_op_model_default_path("no-such-kind", buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_non_null(strstr(buf, "/erg/models/no-such-kind.json"));

    /* $ERG_DATA_DIR comes first, and is the answer even where it lacks the file. */
    char dir[] = "/tmp/erg-data-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char models[64], file[128];
    snprintf(models, sizeof models, "%s/models", dir);
    assert_int_equal(mkdir(models, 0700), 0);
    snprintf(file, sizeof file, "%s/a100-llmcompass.json", models);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    setenv("ERG_DATA_DIR", dir, 1);
    size = sizeof buf;
    assert_int_equal(erg_op_model_default_path("a100-llmcompass", buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_string_equal(buf, file);
    snprintf(want, sizeof want, "%s/grids/cpu.csv", dir);
    size = sizeof buf;
    assert_int_equal(erg_profile_default_grid(ERG_TARGET_CPU, buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_string_equal(buf, want);
    snprintf(want, sizeof want, "%s/grids/cuda.csv", dir);
    size = sizeof buf;
    assert_int_equal(erg_profile_default_grid(ERG_TARGET_CUDA, buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_string_equal(buf, want);
    /* $ERG_MODEL_DIR / $ERG_GRID_DIR name the folder itself and come before it. */
    setenv("ERG_MODEL_DIR", "/elsewhere", 1);
    setenv("ERG_GRID_DIR", "/grids-here", 1);
    size = sizeof buf;
    assert_int_equal(erg_op_model_default_path("k", buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_string_equal(buf, "/elsewhere/k.json");
    size = sizeof buf;
    assert_int_equal(erg_profile_default_grid(ERG_TARGET_CPU, buf, &size), ERG_OK);
    assert_int_equal(size, strlen(buf));
    assert_string_equal(buf, "/grids-here/cpu.csv");
    /* libuv's rule: too small a buffer is left as it was, *size says what it needs (NUL too) */
    char small[8] = "unset";
    size = sizeof small;
    assert_int_equal(erg_op_model_default_path("k", small, &size), ERG_ERANGE);
    assert_int_equal(size, strlen("/elsewhere/k.json") + 1);
    assert_string_equal(small, "unset");
    size = strlen("/elsewhere/k.json") + 1; /* exactly enough */
    assert_int_equal(erg_op_model_default_path("k", buf, &size), ERG_OK);
    assert_int_equal(size, strlen("/elsewhere/k.json"));
    size = sizeof buf;
    assert_int_equal(erg_op_model_default_path(NULL, buf, &size), ERG_EINVAL);
    clear_env();
    unlink(file);
    rmdir(models);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_paths_follow_the_lookup_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
