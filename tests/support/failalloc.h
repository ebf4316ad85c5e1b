/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection (tests/support/failalloc.c says how it is linked). */
#ifndef ERG_TEST_FAILALLOC_H
#define ERG_TEST_FAILALLOC_H

/* Restart the count; fail the nth allocation from now (1-based; 0: none), and every later one
 * when and_after is nonzero. */
void erg_failalloc_arm(unsigned long nth, int and_after);
/* Allocations seen since the last erg_failalloc_arm (failed ones included). */
unsigned long erg_failalloc_calls(void);
/* Allocations failed since the last erg_failalloc_arm. */
unsigned long erg_failalloc_failed(void);

#endif
