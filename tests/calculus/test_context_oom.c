/* SPDX-License-Identifier: MIT */
/* erg_context_signature_add when its storage cannot grow (tests/support/failalloc.c fails the
 * allocation): ERG_ENOMEM and the signature exactly as it was (count, capacity, storage, every
 * point), and the same add succeeds once memory is back. Also the reader: a file with 20 points
 * read with each allocation failed in turn gives ERG_OK with all 20 or ERG_ENOMEM with *out
 * untouched, never a signature short of points. Co-runner names (owned by the signature, any
 * number, any length) the same way: add, replace, copy and read each whole or ERG_ENOMEM with
 * nothing changed and nothing leaked (ASan's leak check in CI). */
#include "support/erg_test.h"
#include "support/erg_tmp.h"
#include "support/failalloc.h"

#include "erg/calculus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void make_point(erg_context_point *p, int i)
{
    erg_context_point_init(p);
    snprintf(p->name, sizeof p->name, "after:e%d", i);
    snprintf(p->after, sizeof p->after, "e%d", i);
    p->static_power_w = 10;
    p->time_s = 1.0 + i / 3.0;
    p->dynamic_energy_j = 2.0 + i / 7.0;
}

/* An empty signature "x" (s = 10 W, T = 1 s). */
static void empty_x(erg_context_signature *cs)
{
    erg_context_signature_init(cs);
    snprintf(cs->null_context.name, sizeof cs->null_context.name, "x");
    cs->null_context.static_power_w = 10;
    cs->null_context.time_s = 1;
}

/* Read f once with every allocation allowed, then with each of those allocations failed in turn:
 * every read gives ERG_OK and a signature that passes check, or ERG_ENOMEM with *out untouched
 * (never a signature short of points). Returns how many reads failed. */
static size_t read_each_failed(const char *f, void (*check)(const erg_context_signature *))
{
    erg_context_signature cs;
    erg_diag d;
    erg_failalloc_arm(0, 0);
    memset(&cs, 0, sizeof cs);
    assert_int_equal(erg_context_signature_read_file(f, &cs, &d), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    check(&cs);
    erg_context_signature_release(&cs);
    size_t failures = 0;
    for (unsigned long n = 1; n <= calls; n++) {
        memset(&cs, 0, sizeof cs);
        erg_failalloc_arm(n, 0);
        int rc = erg_context_signature_read_file(f, &cs, &d);
        erg_failalloc_arm(0, 0);
        if (rc == ERG_OK) {
            check(&cs);
            erg_context_signature_release(&cs);
        } else {
            assert_int_equal(rc, ERG_ENOMEM);
            assert_int_equal(cs.n_points, 0);
            assert_null(cs.points);
            failures++;
        }
    }
    return failures;
}

static void add_enomem_leaves_unchanged(void **state)
{
    (void)state;
    erg_context_signature cs;
    empty_x(&cs);
    erg_diag d;
    erg_context_point p;
    /* the first add allocates: failing it leaves the empty signature empty */
    make_point(&p, 0);
    erg_failalloc_arm(1, 1);
    assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_ENOMEM);
    erg_failalloc_arm(0, 0);
    assert_int_equal(cs.n_points, 0);
    assert_int_equal(cs.capacity, 0);
    assert_null(cs.points);
    /* fill to capacity 16 (allocations allowed), then fail the growth to 32 at the 17th */
    for (int i = 0; i < 16; i++) {
        make_point(&p, i);
        assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_OK);
    }
    assert_int_equal(cs.n_points, 16);
    assert_int_equal(cs.capacity, 16);
    erg_context_signature before = cs;
    erg_context_point *saved = malloc(16 * sizeof *saved);
    assert_non_null(saved);
    memcpy(saved, cs.points, 16 * sizeof *saved);
    make_point(&p, 16);
    erg_failalloc_arm(1, 1);
    assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_ENOMEM);
    assert_int_equal(erg_failalloc_failed(), 1);
    erg_failalloc_arm(0, 0);
    assert_int_equal(d.status, ERG_ENOMEM);
    assert_non_null(strstr(d.detail, "after:e16"));
    assert_int_equal(cs.n_points, 16);
    assert_int_equal(cs.capacity, 16);
    assert_ptr_equal(cs.points, before.points);
    assert_memory_equal(cs.points, saved, 16 * sizeof *saved);
    assert_memory_equal(&cs.null_context, &before.null_context, sizeof cs.null_context);
    /* replacing an existing point needs no allocation: it succeeds even with none left */
    erg_context_point r = cs.points[5];
    r.time_s = 4.5;
    erg_failalloc_arm(1, 1);
    assert_int_equal(erg_context_signature_add(&cs, &r, &d), ERG_OK);
    assert_int_equal(erg_failalloc_calls(), 0);
    erg_failalloc_arm(0, 0);
    assert_true(cs.points[5].time_s == 4.5);
    /* memory back: the 17th point is kept */
    assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_OK);
    assert_int_equal(cs.n_points, 17);
    assert_int_equal(cs.capacity, 32);
    assert_string_equal(cs.points[16].name, "after:e16");
    assert_true(cs.points[16].time_s == 1.0 + 16 / 3.0);
    /* a copy that cannot allocate leaves dst as it was */
    erg_context_signature dst;
    memset(&dst, 0x5a, sizeof dst);
    erg_context_signature dst_before = dst;
    erg_failalloc_arm(1, 1);
    assert_int_equal(erg_context_signature_copy(&dst, &cs), ERG_ENOMEM);
    erg_failalloc_arm(0, 0);
    assert_memory_equal(&dst, &dst_before, sizeof dst);
    free(saved);
    erg_context_signature_release(&cs);
}

static void check_20(const erg_context_signature *cs)
{
    assert_int_equal(cs->n_points, 20);
    assert_true(cs->points[19].time_s == 20.0);
}

static void read_whole_or_enomem(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(erg_tmp_new(dir, sizeof dir, "ctxoom"), 0);
    char text[8192];
    size_t k = (size_t)snprintf(text, sizeof text,
                                "{\"erg\": \"signature/1\", \"name\": \"x\", \"static_power_w\": "
                                "10, \"time_s\": 1, \"dynamic_energy_j\": 2, \"contexts\": [");
    for (int i = 0; i < 20; i++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "%s{\"name\": \"after:e%d\", \"mechanism\": \"cache\", \"after\": "
                              "\"e%d\", \"time_s\": %d, \"dynamic_energy_j\": 1}",
                              i ? ", " : "", i, i, i + 1);
    snprintf(text + k, sizeof text - k, "]}");
    const char *f = erg_tmp_put(dir, "x.json", text);
    size_t failures = read_each_failed(f, check_20);
    assert_true(failures >= 3); /* the growths to 8, 16 and 32 points at least */
    assert_int_equal(erg_tmp_free(dir), 0);
}

/* Co-runner j of point i: 7 names, the fourth 300 bytes long. */
static void co_name(char *buf, size_t size, int i, int j)
{
    int n = snprintf(buf, size, "co%d.%d", i, j);
    if (j == 3)
        for (; n < 300 && (size_t)n + 1 < size; n++)
            buf[n] = (char)('a' + n % 26);
    buf[n] = '\0';
}

enum { NCO = 7 };

static void co_point(erg_context_point *p, int i, char (*buf)[320], const char **np)
{
    erg_context_point_init(p);
    snprintf(p->name, sizeof p->name, "with:%d", i);
    p->mechanism = ERG_MECHANISM_CONTENTION;
    for (int j = 0; j < NCO; j++) {
        co_name(buf[j], sizeof buf[j], i, j);
        np[j] = buf[j];
    }
    p->corunners = np;
    p->n_corunners = NCO;
    p->static_power_w = 10;
    p->time_s = 1.0 + i / 3.0;
    p->dynamic_energy_j = 2.0 + i / 7.0;
}

static void assert_co_point(const erg_context_point *p, int i, double time_s)
{
    char want[320];
    assert_int_equal(p->n_corunners, NCO);
    for (int j = 0; j < NCO; j++) {
        co_name(want, sizeof want, i, j);
        assert_string_equal(p->corunners[j], want);
    }
    assert_true(p->time_s == time_s);
}

static void corunners_enomem(void **state)
{
    (void)state;
    erg_context_signature cs;
    empty_x(&cs);
    erg_diag d;
    char buf[NCO][320];
    const char *np[NCO];
    erg_context_point p;
    for (int i = 0; i < 8; i++) {
        co_point(&p, i, buf, np);
        assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_OK);
    }
    assert_int_equal(cs.capacity, 8);
    erg_context_point saved[8];
    memcpy(saved, cs.points, sizeof saved);
    /* a 9th point: its names (allocation 1), then the growth (allocation 2), each failed */
    co_point(&p, 8, buf, np);
    for (unsigned long n = 1; n <= 2; n++) {
        erg_failalloc_arm(n, 0);
        assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_ENOMEM);
        assert_int_equal(erg_failalloc_failed(), 1);
        erg_failalloc_arm(0, 0);
        assert_int_equal(cs.n_points, 8);
        assert_int_equal(cs.capacity, 8);
        assert_memory_equal(cs.points, saved, sizeof saved);
        for (int i = 0; i < 8; i++)
            assert_co_point(&cs.points[i], i, 1.0 + i / 3.0);
    }
    /* replacing point 2 by name when its new names cannot be allocated keeps the old point */
    co_point(&p, 2, buf, np);
    p.time_s = 7.5;
    erg_failalloc_arm(1, 1);
    assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_ENOMEM);
    erg_failalloc_arm(0, 0);
    assert_co_point(&cs.points[2], 2, 1.0 + 2 / 3.0);
    /* the caller's buffers are copied, not kept: overwrite them and replace for real */
    assert_int_equal(erg_context_signature_add(&cs, &p, &d), ERG_OK);
    memset(buf, 'z', sizeof buf);
    assert_co_point(&cs.points[2], 2, 7.5);
    /* a copy, each allocation failed in turn: ERG_ENOMEM with dst untouched, or a whole copy */
    erg_context_signature dst;
    erg_failalloc_arm(0, 0);
    assert_int_equal(erg_context_signature_copy(&dst, &cs), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    assert_int_equal(calls, 1 + 8); /* the points, then one block of names per point */
    erg_context_signature_release(&dst);
    for (unsigned long n = 1; n <= calls; n++) {
        memset(&dst, 0x5a, sizeof dst);
        erg_context_signature dst_before = dst;
        erg_failalloc_arm(n, 0);
        assert_int_equal(erg_context_signature_copy(&dst, &cs), ERG_ENOMEM);
        erg_failalloc_arm(0, 0);
        assert_memory_equal(&dst, &dst_before, sizeof dst);
    }
    assert_int_equal(erg_context_signature_copy(&dst, &cs), ERG_OK);
    erg_context_signature_release(&cs); /* the copy owns its names */
    for (int i = 0; i < 8; i++)
        assert_co_point(&dst.points[i], i, i == 2 ? 7.5 : 1.0 + i / 3.0);
    erg_context_signature_release(&dst);
}

static void check_co12(const erg_context_signature *cs)
{
    assert_int_equal(cs->n_points, 12);
    for (int i = 0; i < 12; i++)
        assert_co_point(&cs->points[i], i, i + 1.0);
}

static void read_corunners_whole_or_enomem(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(erg_tmp_new(dir, sizeof dir, "ctxoom"), 0);
    static char text[65536];
    size_t k = (size_t)snprintf(text, sizeof text,
                                "{\"erg\": \"signature/1\", \"name\": \"x\", \"static_power_w\": "
                                "10, \"time_s\": 1, \"dynamic_energy_j\": 2, \"contexts\": [");
    for (int i = 0; i < 12; i++) {
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "%s{\"name\": \"with:%d\", \"mechanism\": \"contention\", "
                              "\"time_s\": %d, \"dynamic_energy_j\": 1, \"corunners\": [",
                              i ? ", " : "", i, i + 1);
        for (int j = 0; j < NCO; j++) {
            char nm[320];
            co_name(nm, sizeof nm, i, j);
            k += (size_t)snprintf(text + k, sizeof text - k, "%s\"%s\"", j ? ", " : "", nm);
        }
        k += (size_t)snprintf(text + k, sizeof text - k, "]}");
    }
    snprintf(text + k, sizeof text - k, "]}");
    const char *f = erg_tmp_put(dir, "x.json", text);
    size_t failures = read_each_failed(f, check_co12);
    assert_true(failures >= 12 + 2); /* per point its names' view and block; the growths */
    assert_int_equal(erg_tmp_free(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_enomem_leaves_unchanged),
        cmocka_unit_test(read_whole_or_enomem),
        cmocka_unit_test(corunners_enomem),
        cmocka_unit_test(read_corunners_whole_or_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
