/* SPDX-License-Identifier: MIT */
/* erg_context_signature_add when its storage cannot grow (tests/support/failalloc.c fails the
 * allocation): ERG_ENOMEM and the signature exactly as it was (count, capacity, storage, every
 * point), and the same add succeeds once memory is back. Also the reader: a file with 20 points
 * read with each allocation failed in turn gives ERG_OK with all 20 or ERG_ENOMEM with *out
 * untouched, never a signature short of points. */
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

static void add_enomem_leaves_unchanged(void **state)
{
    (void)state;
    erg_context_signature cs;
    erg_context_signature_init(&cs);
    snprintf(cs.null_context.name, sizeof cs.null_context.name, "x");
    cs.null_context.static_power_w = 10;
    cs.null_context.time_s = 1;
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
    erg_context_signature cs;
    erg_diag d;
    erg_failalloc_arm(0, 0);
    memset(&cs, 0, sizeof cs);
    assert_int_equal(erg_context_signature_read_file(f, &cs, &d), ERG_OK);
    unsigned long calls = erg_failalloc_calls();
    assert_int_equal(cs.n_points, 20);
    erg_context_signature_release(&cs);
    size_t failures = 0;
    for (unsigned long n = 1; n <= calls; n++) {
        memset(&cs, 0, sizeof cs);
        erg_failalloc_arm(n, 0);
        int rc = erg_context_signature_read_file(f, &cs, &d);
        erg_failalloc_arm(0, 0);
        if (rc == ERG_OK) {
            assert_int_equal(cs.n_points, 20);
            assert_true(cs.points[19].time_s == 20.0);
            erg_context_signature_release(&cs);
        } else {
            assert_int_equal(rc, ERG_ENOMEM);
            assert_int_equal(cs.n_points, 0);
            assert_null(cs.points);
            failures++;
        }
    }
    assert_true(failures >= 3); /* the growths to 8, 16 and 32 points at least */
    assert_int_equal(erg_tmp_free(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_enomem_leaves_unchanged),
        cmocka_unit_test(read_whole_or_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
