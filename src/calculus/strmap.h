/* SPDX-License-Identifier: MIT */
/*
 * Private: an open-addressing hash map from strings to uint32 indexes, for schedules with up to
 * 2^32 - 2 devices, signatures or nodes. The map stores indexes only; the owner keeps the strings
 * and hands the map a function that returns the key of an index, so that the owner may move its
 * storage (realloc) freely. Lookups and inserts take O(1) expected time (a multiply-xorshift hash
 * over the key's bytes, eight at a time; linear probing; load factor at most 1/2). Each slot keeps
 * 32 bits of its key's hash beside the index, so a probe compares strings only when the hashes
 * agree (one string read per hit, almost none per miss) and growing the table never reads the keys
 * again. A caller that holds a key as bytes and a length (a parser's token) hashes it once with
 * erg__strmap_hashn and probes with the _h functions; a caller that looks many keys up may hash
 * them ahead and erg__strmap_prefetch their slots.
 */
#ifndef ERG_CALCULUS_STRMAP_H
#define ERG_CALCULUS_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef const char *(*erg__strmap_key_fn)(const void *ctx, uint32_t index);

typedef struct erg__strmap {
    uint64_t *slots; /* (32-bit hash << 32) | (index + 1); 0 is empty */
    size_t cap;      /* a power of two, or 0 */
    size_t n;
} erg__strmap;

#define ERG__STRMAP_NONE UINT32_MAX

/* The map's hash of the len bytes at key (which need not end in NUL). */
uint32_t erg__strmap_hashn(const char *key, size_t len);

/* Start loading the slot where a key of hash h is probed first: a hint for a lookup soon after,
 * with no effect on any result. */
void erg__strmap_prefetch(const erg__strmap *map, uint32_t h);

/* The index stored for key (NUL-terminated), or ERG__STRMAP_NONE. */
uint32_t erg__strmap_find(const erg__strmap *map, const char *key, erg__strmap_key_fn keyfn,
                          const void *ctx);

/* The same for the len bytes at key (no NUL among them), whose hash is h
 * (erg__strmap_hashn(key, len)); the stored key must equal them and end there. */
uint32_t erg__strmap_find_h(const erg__strmap *map, const char *key, size_t len, uint32_t h,
                            erg__strmap_key_fn keyfn, const void *ctx);

/* Insert index under key (which keyfn(ctx, index) must return). The key must not be present.
 * Returns 0, or -1 when out of memory (the map is unchanged). */
int erg__strmap_insert(erg__strmap *map, uint32_t index, erg__strmap_key_fn keyfn, const void *ctx);

/* The same for a key whose hash h the caller computed (erg__strmap_hashn). */
int erg__strmap_insert_h(erg__strmap *map, uint32_t index, uint32_t h);

void erg__strmap_free(erg__strmap *map);

#endif
