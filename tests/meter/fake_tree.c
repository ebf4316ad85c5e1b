/* SPDX-License-Identifier: MIT */
#include "meter/fake_tree.h"
#include "meter/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t fake_now_ns = 1000000000u;
const char *fake_fail_open_suffix;
int fake_fail_open_errno = EACCES;
const char *fake_fail_pread_suffix;
int fake_fail_pread_count;
unsigned fake_msr_stride = 1;
static int fail_fds[256];
static int msr_fds[256];

void fake_io_reset(void)
{
    fake_now_ns = 1000000000u;
    fake_fail_open_suffix = NULL;
    fake_fail_open_errno = EACCES;
    fake_fail_pread_suffix = NULL;
    fake_fail_pread_count = 0;
    fake_msr_stride = 1;
    memset(fail_fds, 0, sizeof fail_fds);
    memset(msr_fds, 0, sizeof msr_fds);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int f_openat(void *ud, int dirfd, const char *path, int flags)
{
    (void)ud;
    /* as the kernel does: only a file that exists can be denied */
    if (fake_fail_open_suffix && ends_with(path, fake_fail_open_suffix) &&
        faccessat(dirfd, path, F_OK, 0) == 0) {
        errno = fake_fail_open_errno;
        return -1;
    }
    int fd = erg__open_in_root(dirfd, path, flags); /* what the default seam does */
    if (fd >= 0 && fd < 256) {
        fail_fds[fd] = fake_fail_pread_suffix && ends_with(path, fake_fail_pread_suffix);
        msr_fds[fd] = ends_with(path, "/msr");
    }
    return fd;
}

static ssize_t f_pread(void *ud, int fd, void *buf, size_t size, off_t off)
{
    (void)ud;
    if (fd >= 0 && fd < 256 && fail_fds[fd] && fake_fail_pread_count > 0) {
        fake_fail_pread_count--;
        errno = EIO;
        return -1;
    }
    if (fd >= 0 && fd < 256 && msr_fds[fd])
        off *= (off_t)fake_msr_stride;
    return pread(fd, buf, size, off);
}

static uint64_t f_now(void *ud)
{
    (void)ud;
    return fake_now_ns;
}

const erg_io fake_io = {f_openat, f_pread, NULL, f_now, NULL};

int fake_root_new(char *buf, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, size, "%s/erg-fake-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void fake_root_free(const char *root)
{
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char fake_root[256];

int fake_setup(void **state)
{
    (void)state;
    fake_io_reset();
    return fake_root_new(fake_root, sizeof fake_root);
}

int fake_teardown(void **state)
{
    (void)state;
    fake_root_free(fake_root);
    return 0;
}

void fake_root_renew(void)
{
    fake_root_free(fake_root);
    if (fake_root_new(fake_root, sizeof fake_root) != 0)
        abort();
}

void fake_mkdir(const char *root, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%.500s/%.500s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

void fake_write(const char *root, const char *rel, const char *fmt, ...)
{
    char p[1024], dir[1024];
    snprintf(p, sizeof p, "%.500s/%.500s", root, rel);
    snprintf(dir, sizeof dir, "%.1000s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        fake_mkdir(root, dir);
    }
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
    close(fd);
}

void fake_write_u64(const char *root, const char *rel, uint64_t v)
{
    fake_write(root, rel, "%llu\n", (unsigned long long)v);
}

void fake_unlink(const char *root, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%.500s/%.500s", root, rel);
    unlink(p);
}

void fake_options(erg_meter_options *o, const char *root, const char *backends)
{
    erg_meter_options_init(o);
    o->root = root;
    o->backends = backends;
    o->io = &fake_io;
}

static void zone(const char *root, const char *dir, const char *name, uint64_t v)
{
    char rel[256];
    snprintf(rel, sizeof rel, "sys/class/powercap/%s/name", dir);
    fake_write(root, rel, "%s\n", name);
    snprintf(rel, sizeof rel, "sys/class/powercap/%s/max_energy_range_uj", dir);
    fake_write(root, rel, "262143328850\n");
    snprintf(rel, sizeof rel, "sys/class/powercap/%s/energy_uj", dir);
    fake_write_u64(root, rel, v);
}

void fake_powercap_2s(const char *root, int with_psys)
{
    zone(root, "intel-rapl:0", "package-0", 1000000);
    zone(root, "intel-rapl:0:0", "core", 2000000);
    zone(root, "intel-rapl:0:1", "uncore", 3000000);
    zone(root, "intel-rapl:0:2", "dram", 4000000);
    zone(root, "intel-rapl:1", "package-1", 5000000);
    zone(root, "intel-rapl:1:0", "dram", 6000000);
    if (with_psys)
        zone(root, "intel-rapl:2", "psys", 7000000);
}

void fake_proc_stat(const char *root, uint64_t busy, uint64_t idle)
{
    fake_write(root, "proc/stat",
               "cpu  %llu 0 0 %llu 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\nintr 0\n",
               (unsigned long long)busy, (unsigned long long)idle);
}

int fake_find(const erg_meter *m, const char *id)
{
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info c;
        if (erg_meter_channel_info(m, i, &c) == ERG_OK && strcmp(c.id, id) == 0)
            return (int)i;
    }
    return -1;
}

erg_meter *fake_open(const char *root, const char *backends)
{
    erg_meter_options o;
    fake_options(&o, root, backends);
    erg_meter *m = NULL;
    erg_diag d;
    if (erg_meter_open(&o, &m, &d) != ERG_OK) {
        /* bench programs link this file too, without cmocka: a failed open aborts, which the
         * running test reports as a failure */
        fprintf(stderr, "erg_meter_open(%s): %s: %s\n", backends, d.where, d.detail);
        abort();
    }
    return m;
}
