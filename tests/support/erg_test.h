/* SPDX-License-Identifier: MIT */
/* Shared test helpers on top of cmocka 1.1.5 (which lacks assert_double_equal). */
#ifndef ERG_TEST_H
#define ERG_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

/* Fail unless |a − b| ≤ tol, printing both values. */
#define erg_assert_near(a, b, tol)                                                                 \
    do {                                                                                           \
        double erg__a = (a), erg__b = (b), erg__t = (tol);                                         \
        if (!(fabs(erg__a - erg__b) <= erg__t))                                                    \
            fail_msg("%s = %.17g, expected %s = %.17g (tolerance %g)", #a, erg__a, #b, erg__b,     \
                     erg__t);                                                                      \
    } while (0)

/* Fail unless |a − b| ≤ rel·max(|a|, |b|). */
#define erg_assert_rel(a, b, rel)                                                                  \
    do {                                                                                           \
        double erg__a = (a), erg__b = (b), erg__r = (rel);                                         \
        if (!(fabs(erg__a - erg__b) <= erg__r * fmax(fabs(erg__a), fabs(erg__b))))                 \
            fail_msg("%s = %.17g, expected %s = %.17g (relative tolerance %g)", #a, erg__a, #b,    \
                     erg__b, erg__r);                                                              \
    } while (0)

/* Fail unless the erg call expr returns ERG_OK (0), printing the call and the status it gave. */
#define erg_assert_ok(expr)                                                                        \
    do {                                                                                           \
        int erg__rc = (expr);                                                                      \
        if (erg__rc != 0)                                                                          \
            fail_msg("%s returned %d, expected ERG_OK", #expr, erg__rc);                           \
    } while (0)

#endif
