/* SPDX-License-Identifier: MIT */
/*
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
 * 2014; the constants of Vigna's reference version): the one seeded generator behind erg's
 * hold-out splits, shuffles, synthetic weights, tests and benchmark inputs. Portable integer
 * arithmetic, so a seed gives the same sequence, and a fit the same split, on every host.
 * Internal; header-only so that tests and benchmarks share it.
 */
#ifndef ERG_CORE_SPLITMIX_H
#define ERG_CORE_SPLITMIX_H

#include <stdint.h>

/* Advance *state and return the next 64 random bits. */
static inline uint64_t erg__splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The next double, uniform on [0, 1), from the top 53 bits. */
static inline double erg__splitmix_unit(uint64_t *state)
{
    return (double)(erg__splitmix64(state) >> 11) * 0x1.0p-53;
}

#endif
