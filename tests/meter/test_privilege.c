/* SPDX-License-Identifier: MIT */
/* Privilege and hostile trees (issue 16): every read stays inside ERG_ROOT (symlinks absolute and
 * relative, ".." above the root), a FIFO or device under the root is never opened blocking, and
 * with elevated privilege (AT_SECURE) ERG_ROOT and ERG_NVML_LIB are refused, not followed. */
#include "meter/backend.h"
#include "meter/fake_tree.h"
#include "support/erg_test.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erg/meter.h"

static char root[256];
static char secret[256]; /* a host file outside the root, standing in for /etc/shadow */

static int setup(void **state)
{
    (void)state;
    fake_io_reset();
    erg__secure_for_tests = -1;
    if (fake_root_new(root, sizeof root) != 0)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(secret, sizeof secret, "%s/erg-secret-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(secret);
    if (fd < 0)
        return -1;
    const char text[] = "root:SECRET-HASH:19000:0:99999:7:::\n";
    ssize_t w = write(fd, text, sizeof text - 1);
    close(fd);
    return w == (ssize_t)(sizeof text - 1) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fake_root_free(root);
    unlink(secret);
    erg__secure_for_tests = -1;
    unsetenv("ERG_ROOT");
    unsetenv("ERG_NVML_LIB");
    return 0;
}

static void link_at(const char *rel, const char *target)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (symlink(target, p) != 0)
        fail_msg("symlink %s -> %s", p, target);
}

/* The layout of real sysfs: /sys/class/hwmon/hwmonN is a relative symlink into /sys/devices
 * (hwloc's and lm-sensors' captured trees), and hwmonN/device points further up. */
static void sysfs_like_hwmon(void)
{
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/name", "ina3221\n");
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/in1_input", "5000\n");
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/curr1_input", "1000\n");
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/in1_label", "VDD_IN\n");
    fake_mkdir(root, "sys/class/hwmon");
    link_at("sys/class/hwmon/hwmon0", "../../devices/platform/ina3221.0/hwmon/hwmon0");
    link_at("sys/devices/platform/ina3221.0/hwmon/hwmon0/device", "../../../ina3221.0");
}

static void open_in_root_both_ways(const char *rel, int want_errno, const char *want_prefix)
{
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(rfd >= 0);
    for (int way = 0; way < 2; way++) {
        errno = 0;
        int fd = way == 0 ? erg__open_in_root(rfd, rel, O_RDONLY | O_CLOEXEC)
                          : erg__open_in_root_walk(rfd, rel, O_RDONLY | O_CLOEXEC);
        if (want_prefix) {
            if (fd < 0)
                fail_msg("%s (%s): %s", rel, way ? "walk" : "openat2", strerror(errno));
            char buf[64] = "";
            ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            assert_true(n > 0);
            assert_memory_equal(buf, want_prefix, strlen(want_prefix));
        } else {
            if (fd >= 0) {
                char buf[64] = "";
                ssize_t n = read(fd, buf, sizeof buf - 1);
                close(fd);
                fail_msg("%s (%s) opened: read %zd bytes '%s'", rel, way ? "walk" : "openat2", n,
                         buf);
            }
            /* openat2 keeps ".." at the root (ENOENT there); the walk refuses it (EXDEV) */
            if (want_errno && !(errno == want_errno || errno == ENOENT || errno == EXDEV))
                fail_msg("%s: errno %d", rel, errno);
        }
    }
    close(rfd);
}

static void symlinks_never_lead_out_of_the_root(void **state)
{
    (void)state;
    sysfs_like_hwmon();
    /* relative links inside the root resolve, through both openat2 and the walk */
    open_in_root_both_ways("sys/class/hwmon/hwmon0/name", 0, "ina3221");
    open_in_root_both_ways("/sys/class/hwmon/hwmon0/../hwmon0/in1_label", 0, "VDD_IN");
    /* an absolute link to a host file is read inside the root (where it does not exist) */
    fake_mkdir(root, "sys/class/evil");
    link_at("sys/class/evil/abs", secret);
    open_in_root_both_ways("sys/class/evil/abs", ENOENT, NULL);
    /* a relative link climbing out, and ".." climbing out */
    char up[600] = "";
    for (int k = 0; k < 20; k++)
        strcat(up, "../");
    char target[900];
    snprintf(target, sizeof target, "%s%s", up, secret + 1);
    link_at("sys/class/evil/rel", target);
    open_in_root_both_ways("sys/class/evil/rel", ENOENT, NULL);
    char dotdot[900];
    snprintf(dotdot, sizeof dotdot, "sys/%s%s", up, secret + 1);
    open_in_root_both_ways(dotdot, ENOENT, NULL);
    /* a directory link out of the root: its files stay out of reach */
    char dir[300];
    snprintf(dir, sizeof dir, "%s", secret);
    *strrchr(dir, '/') = '\0';
    link_at("sys/class/evil/dir", dir);
    char via[400];
    snprintf(via, sizeof via, "sys/class/evil/dir/%s", strrchr(secret, '/') + 1);
    open_in_root_both_ways(via, ENOENT, NULL);
}

/* The probe of issue 16: a label that is a symlink to a host file appeared as a channel label. */
static void a_label_linked_to_a_host_file_is_not_read(void **state)
{
    (void)state;
    sysfs_like_hwmon();
    fake_unlink(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/in1_label");
    link_at("sys/devices/platform/ina3221.0/hwmon/hwmon0/in1_label", secret);
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/in2_input", "5000\n");
    fake_write(root, "sys/devices/platform/ina3221.0/hwmon/hwmon0/curr2_input", "1000\n");
    char up[900] = "";
    for (int k = 0; k < 20; k++)
        strcat(up, "../");
    strcat(up, secret + 1);
    link_at("sys/devices/platform/ina3221.0/hwmon/hwmon0/in2_label", up);
    for (int seam = 0; seam < 2; seam++) {
        erg_meter_options o;
        fake_options(&o, root, "hwmon");
        if (seam)
            o.io = NULL; /* the library's own seam, real clock */
        erg_meter *m = NULL;
        erg_diag d;
        if (erg_meter_open(&o, &m, &d) != ERG_OK)
            fail_msg("open: %s %s", d.where, d.detail);
        assert_int_equal(erg_meter_channel_count(m), 2);
        for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
            erg_channel_info c;
            erg_assert_ok(erg_meter_channel_info(m, i, &c));
            assert_null(strstr(c.label, "SECRET"));
            assert_null(strstr(c.id, "SECRET"));
            assert_null(strstr(c.id, "root:"));
        }
        /* unlabelled rails are named after their attribute */
        assert_true(fake_find(m, "hwmon:ina3221@ina3221.0/rail1") >= 0);
        erg_meter_close(m);
    }
}

static int make_fifo(const char *rel)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    unlink(p);
    return mkfifo(p, 0644);
}

/* issue 16 (Low): a FIFO under ERG_ROOT hung erg meters. Nothing writes to these FIFOs: a
 * blocking open would wait for ever (ctest's timeout would fail the test). */
static void fifos_under_the_root_are_refused_not_waited_on(void **state)
{
    (void)state;
    fake_powercap_2s(root, 0);
    assert_int_equal(make_fifo("sys/class/powercap/intel-rapl:0/energy_uj"), 0);
    assert_int_equal(make_fifo("sys/class/powercap/intel-rapl:1/max_energy_range_uj"), 0);
    sysfs_like_hwmon();
    assert_int_equal(make_fifo("sys/devices/platform/ina3221.0/hwmon/hwmon0/in1_label"), 0);
    fake_proc_stat(root, 100, 900);
    assert_int_equal(make_fifo("proc/stat"), 0);
    erg_meter_options o;
    fake_options(&o, root, "rapl-sysfs,hwmon,estimator");
    erg_meter *m = NULL;
    erg_diag d;
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_OK);
    int i = fake_find(m, "rapl-sysfs:package-0");
    assert_true(i >= 0);
    erg_channel_info c;
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_false(c.usable);
    assert_non_null(strstr(c.reason, "not a regular file"));
    /* a FIFO in place of the range: the range is unknown, the counter itself still read */
    i = fake_find(m, "rapl-sysfs:package-1");
    erg_assert_ok(erg_meter_channel_info(m, (size_t)i, &c));
    assert_true(c.usable);
    assert_true(isnan(c.wrap_j)); /* unknown, never shown as 0 */
    assert_true(fake_find(m, "hwmon:ina3221@ina3221.0/rail1") >= 0);
    erg_backend_info b;
    for (size_t k = 0; k < erg_meter_backend_count(m); k++) {
        erg_assert_ok(erg_meter_backend_info(m, k, &b));
        if (strcmp(b.name, "estimator") == 0)
            assert_int_not_equal(b.state, ERG_BACKEND_FOUND);
    }
    erg_meter_close(m);
}

static void elevated_privilege_refuses_root_and_library_overrides(void **state)
{
    (void)state;
    fake_proc_stat(root, 100, 900);
    erg__secure_for_tests = 1;
    setenv("ERG_ROOT", root, 1);
    erg_meter *m = NULL;
    erg_diag d;
    erg_diag_clear(&d);
    assert_int_equal(erg_meter_open(NULL, &m, &d), ERG_EACCES);
    assert_null(m);
    assert_string_equal(d.where, "ERG_ROOT");
    assert_non_null(strstr(d.detail, "elevated privilege"));
    unsetenv("ERG_ROOT");
    setenv("ERG_NVML_LIB", "/tmp/libevil.so", 1);
    erg_diag_clear(&d);
    assert_int_equal(erg_meter_open(NULL, &m, &d), ERG_EACCES);
    assert_string_equal(d.where, "ERG_NVML_LIB");
    unsetenv("ERG_NVML_LIB");
    /* the overrides are honoured without privilege */
    erg__secure_for_tests = 0;
    setenv("ERG_ROOT", root, 1);
    erg_meter_options o;
    erg_meter_options_init(&o);
    o.backends = "estimator";
    assert_int_equal(erg_meter_open(&o, &m, &d), ERG_OK);
    assert_int_equal(erg_meter_channel_count(m), 1);
    erg_meter_close(m);
    /* erg__getenv hides every variable under privilege (secure_getenv's rule) */
    erg__secure_for_tests = 1;
    assert_null(erg__getenv("ERG_ROOT"));
    erg__secure_for_tests = 0;
    assert_non_null(erg__getenv("ERG_ROOT"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(symlinks_never_lead_out_of_the_root, setup, teardown),
        cmocka_unit_test_setup_teardown(a_label_linked_to_a_host_file_is_not_read, setup, teardown),
        cmocka_unit_test_setup_teardown(fifos_under_the_root_are_refused_not_waited_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(elevated_privilege_refuses_root_and_library_overrides,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
