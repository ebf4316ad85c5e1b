/* SPDX-License-Identifier: MIT */
/* erg_meter_open when memory runs out (tests/support/failalloc.c fails each allocation in turn):
 * it either opens the very meter it opens with memory to spare, every channel of every backend,
 * or fails with ERG_ENOMEM; never a meter short of a backend (which measured less energy without
 * a word) and never "no backend found any channel" (exit 3, as if the host had no counters). */
#include "meter/fake_tree.h"
#include "support/erg_test.h"
#include "support/failalloc.h"

#include <stdlib.h>
#include <string.h>

#include "erg/meter.h"

static void open_is_whole_or_enomem(void **state)
{
    (void)state;
    char root[256];
    fake_io_reset();
    assert_int_equal(fake_root_new(root, sizeof root), 0);
    fake_powercap_2s(root, 1);
    fake_proc_stat(root, 100, 100);
    static const char *const lists[] = {"rapl-sysfs,estimator", "rapl-sysfs"};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        erg_meter_options o;
        fake_options(&o, root, lists[l]);
        erg_meter *m = NULL;
        erg_diag d;
        erg_failalloc_arm(0, 0);
        assert_int_equal(erg_meter_open(&o, &m, &d), ERG_OK);
        unsigned long calls = erg_failalloc_calls();
        size_t channels = erg_meter_channel_count(m);
        assert_true(channels >= 6); /* 2 packages, core, uncore, 2 dram, psys */
        int pkg = fake_find(m, "rapl-sysfs:package-0");
        assert_true(pkg >= 0);
        erg_meter_close(m);
        size_t failures = 0;
        for (unsigned long n = 1; n <= calls; n++) {
            erg_failalloc_arm(n, 0);
            m = NULL;
            int rc = erg_meter_open(&o, &m, &d);
            erg_failalloc_arm(0, 0);
            if (rc == ERG_OK) {
                assert_int_equal(erg_meter_channel_count(m), channels);
                assert_int_equal(fake_find(m, "rapl-sysfs:package-0"), pkg);
                erg_meter_close(m);
            } else {
                if (rc != ERG_ENOMEM)
                    fail_msg("allocation %lu of %lu failed: %s (%s: %s), not ERG_ENOMEM", n, calls,
                             erg_status_name(rc), d.where, d.detail);
                assert_null(m);
                failures++;
            }
        }
        assert_true(failures > 0);
    }
    fake_root_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(open_is_whole_or_enomem)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
